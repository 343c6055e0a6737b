//! Rules about an MTP (next-n) head inside a target checkpoint: the layers its config declares
//! are in the index, and each MTP linear module is stored the way the config's
//! `quantization_config` makes the engine build it.
//!
//! Quantizers drop MTP heads: transformers saves only the sub-modules the model class declares,
//! and the MTP layers are not among them (auto-round#1526, llm-compressor#3118), and
//! Model-Optimizer exported 0 of 15 `mtp.*` tensors from a Hub id (Model-Optimizer#2427) — while
//! the config still declares the head. And a head kept in BF16 inside a quantized checkpoint
//! loads only if the config's exclude list names it in the form the engine's quant method
//! matches (`quant_exclude`). The rules run for any config that declares a head
//! (`family::embedded::declared`), from the index's names and the headers' dtypes
//! (`mtp_head`). [`by_engine`] holds what each engine does, for `explain` and docs/rules.md.

use super::cx::{Applies, Cx, Rule};
use super::eh_proj::EhProj;
use super::int4_exclude::{Build, Int4};
use super::mtp_head::{MtpHead, MtpModule};
use super::quant_exclude::{Exclusions, Method, Verdict};
use super::WeightsCode;
use crate::config::ConfigFile;
use crate::diagnostic::{CodeInfo, Severity};
use crate::engine::ANY_PATCH;
use crate::family::embedded;
use crate::rules::{ByEngine, Engine, ReleaseRow};
use crate::Result;

pub(super) const RULES: &[Rule] = &[
    MTP_MISSING,
    MTP_UNQUANTIZED,
    MTP_UNQUANTIZED_ONE_ENGINE,
    MTP_QUANT_EXCLUDED,
    MTP_NORM_SHIFT,
];

/// The quantizers known to drop MTP heads, for messages.
const DROPPERS: &str = "Model-Optimizer exported 0 of 15 `mtp.*` tensors from a Hub id \
(Model-Optimizer#2427); auto-round (before #1526) and llm-compressor (before #3118) save only \
the sub-modules transformers declares, without the MTP layers; a REAP expert-pruned \
Qwen3.5-35B-A3B was published with its MTP layer declared and none of its tensors \
(bryce-hoehn/Qwen3.5-18B-REAP-A3B-Coding)";

/// What the weights rules refuse to judge, as an error (exit 2): a config whose MTP depth keys
/// disagree or are not numbers, or whose exclude list is not a list of names or is over the
/// caps. Only for a config that declares a head, so other configs never fail here.
pub fn check_inputs(config: &ConfigFile) -> Result<()> {
    // An error already placed (in the hf_quant_config.json beside the config) keeps its file.
    let at = |mut e: crate::Error| {
        if e.file.is_some() {
            return e;
        }
        e.message = format!("`{}`: {}", config.path.display(), e.message);
        e.at(&config.path, None)
    };
    if embedded::declared(config.root()).map_err(at)?.is_some() {
        Exclusions::of_config(config).map_err(at)?;
    }
    Ok(())
}

/// The head the config declares, as the headers hold it (found once, in the view).
fn head<'v>(cx: &Cx<'v>) -> Option<&'v MtpHead> {
    cx.v.mtp.as_ref()
}

const MTP_MISSING_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Error),
            "refuses to load a DeepSeek-style MTP layer without weights (\"MTP speculative decoding layer N weights \
missing from checkpoint\", deepseek_mtp.py, read at 0.25.1 and 0.27.1); before vllm#35548 it served such \
checkpoints at 0 % acceptance",
        ),
        ReleaseRow::any_version(
            Engine::MlxLm,
            None,
            "builds no MTP head at any release read (0.28.4 to 0.32.2): every model's `sanitize` drops the \
`mtp.*` keys, so the declared depth is never read",
        ),
        ReleaseRow::any_version(
            Engine::Omlx,
            Some(Severity::Warning),
            "attaches no MTP module to a checkpoint that holds no MTP tensor (`_checkpoint_has_mtp_weights`, \
utils/model_loading.py, \"the conservative choice: skip MTPModule attachment\", after omlx#1426), so \
`mtp_enabled` serves the model without MTP; before omlx#1147 (May 2026, older than the 0.5 line) an oQ MoE \
checkpoint saved so crashed at load with KeyError in `_stack_per_expert`",
        ),
    ],
};

const MTP_MISSING: Rule = Rule {
    code: WeightsCode::MtpMissing,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the config declares an MTP head (num_nextn_predict_layers / mtp_num_hidden_layers) but the checkpoint holds no tensors for one of its layers",
        explanation: "A target config that declares an MTP (next-n) head makes the engine build it for MTP speculative \
decoding, from the tensors at decoder index num_hidden_layers + j (`model.layers.61.*` in DeepSeek-V3, GLM) or under \
`mtp.layers.j.*` (Qwen3-Next, Qwen3.5/3.6) or `model.mtp_layers.j.*` (MiMo): the family's own spelling, read from \
the engines' MTP loaders (a config of no known family is read with the first two). Quantizers drop them: Model-Optimizer exported 0 of 15 `mtp.*` tensors \
from a Hub id (Model-Optimizer#2427), auto-round and llm-compressor saved only the sub-modules transformers declares \
(auto-round#1526, llm-compressor#3118). vLLM refuses a DeepSeek-style checkpoint without them (\"weights missing \
from checkpoint. The checkpoint may have been quantized without including the MTP layers\") and served them at \
0 % acceptance before it learnt to (vllm#35548); oMLX crashes (omlx#1147). Read from the index's names (and the \
single file's header), never tensor data. Re-export with the MTP layers kept, or set the depth to 0 and serve \
without MTP.",
    },
    applies: Applies::Any,
    needs: &[],
    check: mtp_missing,
};

fn mtp_missing(cx: &mut Cx) {
    let Some(h) = head(cx) else { return };
    let missing = h.missing();
    let Some(&first) = missing.first() else {
        return;
    };
    // An engine that builds no MTP head (mlx-lm) does not miss one.
    let Some(judged) = MTP_MISSING_BY_ENGINE.judge(cx.v.engine.as_ref()) else {
        return;
    };
    let d = &h.declared;
    let layers = super::text::ranges(&missing);
    let whole = cx.v.whole_file();
    // A family that stacks several layers a step says how many it looks for.
    let stacked = match d.naming.layers_per_step {
        Some((_, key)) if d.physical != d.depth => {
            format!(
                " ({} layers stored: one per character of `{key}` a step)",
                d.physical
            )
        }
        _ => String::new(),
    };
    cx.emit_as(
        judged.severity,
        &d.key,
        &whole,
        format!(
            "`{}` is {}{stacked} but the checkpoint names no tensor of MTP layer{} {layers} (looked for {}; \
             {} MTP tensor{} in all): vLLM refuses a DeepSeek-style checkpoint without its MTP layers \
             (\"weights missing from checkpoint\") and served such checkpoints at 0 % acceptance \
             before (vllm#35548); {DROPPERS}. Re-export keeping the MTP layers, or set `{}` to 0 and \
             serve without MTP",
            d.key,
            d.depth,
            if missing.len() == 1 { "" } else { "s" },
            h.spellings(first),
            h.tensors,
            if h.tensors == 1 { "" } else { "s" },
            d.key,
        ),
    );
}

const MTP_UNQUANTIZED_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow {
            engine: Engine::Vllm,
            since: Some((0, 27, 0)),
            until: None,
            severity: Some(Severity::Error),
            does: "builds the quantized layer for every module its quant method does not exclude \
(compressed-tensors and quark: exact names or `re:`; ModelOpt: exact, contained or wildcard; fp8: exact; read at \
0.34.0: AWQ contained names, GPTQ `-:` regexes), so a BF16 weight meets a quantized parameter: a shape mismatch \
at load (vllm#53414), a KeyError in deepseek_mtp.py's loader; read at 0.27.1, where `mtp.fc` under ModelOpt NVFP4 \
is forced unquantized (not reported)",
        },
        ReleaseRow {
            engine: Engine::Sglang,
            since: None,
            until: None,
            severity: Some(Severity::Error),
            does: "BF16 MTP weights under a compressed-tensors NVFP4 config excluding them by `re:^mtp.*` fail to \
load (sglang#36786); a quark exclude keyed by a prefix the module path never has crashes at load (sglang#29781); \
read at 0.5.23 for AWQ and GPTQ: an unexcluded BF16 MTP module gets quantized parameters and the DeepSeek-style \
loader indexes them by the BF16 name (KeyError)",
        },
    ],
};

const MTP_UNQUANTIZED: Rule = Rule {
    code: WeightsCode::MtpUnquantized,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "an MTP module stored in BF16 in a quantized checkpoint, not excluded by quantization_config in the form its quant method matches",
        explanation: "The MTP head is built with the target's quantization_config. A module the config's exclude list \
does not exclude gets the quantized layer; if the checkpoint stores it unquantized (BF16, no scale or packed weight \
beside it) the load fails or the head drafts garbage. Whether an entry excludes a module depends on the method: \
in vLLM 0.27.1, compressed-tensors (`ignore`) and quark (`exclude`) take exact names or `re:` regexes matched at \
the start (a prefix such as `mtp` or `model.layers.61` matches nothing); ModelOpt (`exclude_modules`, or `ignore` \
in config.json) takes exact names, names contained in the module's, and fnmatch wildcards, but no `re:`; fp8 \
(`ignored_layers` / `modules_to_not_convert`) exact names. Reported: vLLM's shape mismatch for a BF16 `mtp.fc` \
under compressed-tensors (vllm#53414), SGLang's load failure for BF16 MTP weights excluded by `re:^mtp.*` \
(sglang#36786) and its crash on a quark `eh_proj` exclude that never matched (sglang#29781). A module is judged \
only when the trunk's layers store the same module quantized (or it is `fc` / `eh_proj` in a quantized \
checkpoint), so modules engines keep in full precision (routers, norms, embeddings) are not; names are matched \
as the checkpoint spells them (an engine that renames MTP modules may match otherwise); `mtp.fc` under ModelOpt \
is left out (vLLM 0.27.1 forces it unquantized). AWQ and GPTQ, read in vLLM 0.34.0 and SGLang 0.5.23, are \
judged only where both engines build the same: AWQ's `modules_to_not_convert` excludes a module whose name contains \
an entry (`mtp` does, `mtp.*` and `re:^mtp.*` never do), and vLLM fills an empty list from the dtypes for linear \
modules but never a MoE's experts; GPTQ's `dynamic` excludes by a `-:` regex matched at the start, the first \
matching key deciding, which SGLang's gptq_marlin ignores for experts, while vLLM also reads \
`modules_in_block_to_quantize` and builds a Qwen3.5 head unquantized for any `-:` key containing `mtp`; SGLang \
names DeepSeek's MTP layer `model.decoder.*` and builds Qwen3.5's `mtp.fc` as a plain linear. A module the engines \
treat differently is not reported. Under quark, SGLang's Qwen3.5 MTP class builds the whole head BF16 when an exclude \
entry starts `mtp.` (0.5.12 to 0.5.20) or when one names `mlp.experts` (0.5.21 on; qwen3_5_mtp.py): such a head loads \
there, and the verdict follows the release (weights/quark_head.rs). vLLM's quark handling, read in every wheel 0.25.1 \
to 0.34.0 (weights/quark_nextn.rs): module by module as above at every release, but a DeepSeek-style NextN `eh_proj` \
is a plain nn.Linear whatever the list says (a BF16 one loads; GLM-4.5's in SGLang too, DeepSeek's and GLM-5 DSA's \
SGLang quantizes from 0.5.11: weights-mtp-unquantized-one-engine), and up to 0.25 an excluded MoE fails: named whole it gets a linear \
method its constructor refuses, its experts named one by one match nothing and stay quantized (ROCm/vllm#1022); \
from 0.26.0 both build it unquantized (vllm#46757): an error with `--engine vllm@0.25`. Under quark both engines \
match a MoE's routed experts by the MoE's name (`….mlp.experts`), so a `re:` matching only the experts' names \
leaves them quantized. Fix the exclude list in the method's \
form, or quantize the head with the rest.",
    },
    applies: Applies::Any,
    needs: &[],
    check: mtp_unquantized,
};

/// Whether `m` is judged: the trunk stores its kind quantized, or it is the MTP input
/// projection of a checkpoint whose trunk is quantized.
fn judged(h: &MtpHead, m: &MtpModule, ex: &Exclusions) -> bool {
    if ex.method == Method::ModelOpt && m.name.ends_with("mtp.fc") {
        // vLLM 0.27.1's qwen3_5_mtp.py builds `mtp.fc` unquantized under modelopt_fp4.
        return false;
    }
    h.trunk_quantized.contains(&m.kind)
        || (h.trunk_is_quantized && (m.kind == "fc" || m.kind == "eh_proj"))
}

/// The checkpoint's prefix of MTP module `m`'s layer when the head sits among the decoder
/// layers (`model.layers.61.` in DeepSeek-V3 and GLM), which SGLang builds under another name.
fn layer_prefix(h: &MtpHead, m: &MtpModule) -> Option<String> {
    let n = h.declared.num_hidden_layers?.saturating_add(m.layer?);
    let p = format!("model.layers.{n}.");
    m.name.starts_with(&p).then_some(p)
}

/// One finding per MTP layer (and one for the shared modules): the first module, and how many.
fn per_layer<'h, T>(
    mods: impl Iterator<Item = (&'h MtpModule, T)>,
) -> Vec<(&'h MtpModule, T, usize)> {
    let mut out: Vec<(&MtpModule, T, usize)> = Vec::new();
    for (m, detail) in mods {
        match out.iter_mut().find(|(f, _, _)| f.layer == m.layer) {
            Some(entry) => entry.2 += 1,
            None => out.push((m, detail, 1)),
        }
    }
    out
}

fn mtp_unquantized(cx: &mut Cx) {
    let Some(h) = head(cx) else { return };
    let Some(ex) = cx.v.exclusions.as_ref() else {
        return;
    };
    let found = per_layer(
        h.modules
            .iter()
            .filter(|m| !m.quantized() && judged(h, m, ex))
            .filter(|m| ex.verdict_at(&m.name, layer_prefix(h, m).as_deref()) == Verdict::Quantized)
            // A NextN `eh_proj` vLLM builds plain under quark: SGLang's side is the one-engine rule's.
            .filter(|m| super::eh_proj::eh_proj(cx, ex, m, layer_prefix(h, m).as_deref()).is_none())
            // A shard whose fused module an entry names: judged by release ([`fused_entry_unquantized`]).
            .filter(|m| super::fused_entries::case(cx, ex, &m.name).is_none())
            .map(|m| {
                let stored = match (&m.dtype, m.contradicts()) {
                    (Some(d), true) => format!(
                        "is stored as {d} by its header although {} sits beside it",
                        m.parts.join(", ")
                    ),
                    (Some(d), false) => format!("is stored as {d}, with no scale or packed weight"),
                    (None, _) => "has no scale or packed weight in the index".to_string(),
                };
                (m, stored)
            }),
    );
    // An entry meant for the head that excludes none of its modules: the form is wrong.
    let used: Vec<String> = h
        .modules
        .iter()
        .filter_map(
            |m| match ex.verdict_at(&m.name, layer_prefix(h, m).as_deref()) {
                Verdict::Excluded(e) => Some(e),
                _ => None,
            },
        )
        .collect();
    let hint = match ex.mtp_like.iter().find(|e| !used.contains(e)) {
        Some(e) => format!(
            "; `{e}` in `{}` is meant for the head but {} matches {}",
            ex.key,
            ex.method.name(),
            ex.method.matching()
        ),
        None => String::new(),
    };
    let whole_head = super::quark_head::head_bf16(cx, ex);
    quark_experts_excluded(cx, h, ex);
    fused_entry_unquantized(cx, h, ex);
    for (m, stored, count) in found {
        // SGLang's Qwen3.5 class may build the whole head BF16 for the list's `mtp.` entries.
        let severity = match &whole_head {
            Some(head) => match super::quark_head::verdict(cx, head, false) {
                Some(s) => s,
                None => continue,
            },
            None => Severity::Error,
        };
        let whole = match &whole_head {
            Some(head) => format!(
                " (SGLang 0.5.12 to 0.5.20 builds this head BF16 whole for `{}`, and 0.5.21 and later for an \
                 `mtp.` entry naming `mlp.experts`: it loads there)",
                head.entry
            ),
            None => String::new(),
        };
        let file = cx.v.headers.display_of(&m.shard);
        let others = match count {
            1 => String::new(),
            n => format!(
                " (and {} more module{} of this MTP layer)",
                n - 1,
                if n == 2 { "" } else { "s" }
            ),
        };
        let (engine, remedy) = remedy(ex, &m.name, layer_prefix(h, m).as_deref());
        let what = match ex.method {
            Method::Int4(_) => {
                "the unquantized weight meets quantized parameters: a KeyError at load (vLLM 0.34.0's \
                 deepseek_mtp.py, SGLang 0.5.23's deepseek_weight_loader.py), or for Qwen3.5 in \
                 SGLang the weights skipped and the head drafting from uninitialised ones"
            }
            _ => "a load failure or shape mismatch (vllm#53414, sglang#36786, sglang#29781)",
        };
        cx.emit_as(
            severity,
            &m.name,
            &file,
            format!(
                "MTP module `{}` {stored}{others}, but `{}` ({}) does not exclude it, so {engine} \
                 a quantized layer for it: {what}{whole}{hint}; {remedy}",
                m.name,
                ex.key,
                ex.method.name(),
            ),
        );
    }
}

/// quark, BF16 routed experts of the head the list excludes: vLLM up to 0.25 fails on them whether
/// the MoE is named whole (an AssertionError building it) or its experts one by one (quantized);
/// SGLang up to 0.5.20 builds the MoE quantized when only its experts are named (the release that
/// serves the line, and the family, pick the table: [`super::quark_nextn::ExpertsExcluded`]).
fn quark_experts_excluded(cx: &mut Cx, h: &MtpHead, ex: &Exclusions) {
    let found = per_layer(
        h.modules
            .iter()
            .filter(|m| !m.quantized() && judged(h, m, ex))
            .filter_map(|m| ex.quark_moe_excluded(&m.name).map(|moe| (m, moe))),
    );
    for (m, (moe, whole), count) in found {
        let layer_excluded = layer_prefix(h, m)
            .is_some_and(|p| ex.verdict(p.trim_end_matches('.')) != Verdict::Quantized);
        let case = super::quark_nextn::ExpertsExcluded::of(cx, whole, layer_excluded);
        let Some(severity) = case.verdict(cx) else {
            continue;
        };
        let key = &ex.key;
        let after = if whole {
            format!(
                " and `{key}` excludes its MoE `{moe}`, but vLLM up to 0.25 returns a linear method for an excluded \
                 MoE, which its RoutedExperts constructor refuses (an AssertionError); vLLM 0.26.0 and later build an \
                 excluded MoE unquantized (vllm#46757), as SGLang does at every release read; serve with vLLM 0.26 \
                 or later"
            )
        } else {
            let (sglang, sglang_fixed) = case.sglang_named();
            format!(
                " and `{key}` excludes it only by naming the experts one by one, but vLLM up to 0.25 matches quark's \
                 list against the MoE's own name `{moe}`, and {sglang}: the experts are built quantized and their \
                 BF16 weights fail to load (\"The size of tensor a (256) must match the size of tensor b (512)\", \
                 ROCm/vllm#1022 on amd/GLM-5.2-MXFP4; vLLM 0.26.0 and later exclude the MoE for such an entry, \
                 vllm#46757); add the MoE's own name, `{moe}`, to `{key}`, or serve with vLLM 0.26{sglang_fixed} or \
                 later"
            )
        };
        emit_unquantized(cx, severity, m, count, &after);
    }
}

/// BF16 shards (`q_proj`, `gate_proj`, …) the list does not name, whose fused module
/// (`qkv_proj`, `gate_up_proj`) an entry names: vLLM from 0.30 and SGLang's quark from 0.5.21
/// build it unquantized, earlier releases quantized ([`super::fused_entries`]).
fn fused_entry_unquantized(cx: &mut Cx, h: &MtpHead, ex: &Exclusions) {
    let found = per_layer(
        h.modules
            .iter()
            .filter(|m| !m.quantized() && judged(h, m, ex))
            .filter_map(|m| super::fused_entries::case(cx, ex, &m.name).map(|c| (m, c))),
    );
    for (m, (fused, rows, sglang), count) in found {
        let Some(severity) = rows.judge(cx.v.engine.as_ref()).map(|j| j.severity) else {
            continue;
        };
        let after = format!(
            " and `{}` names only its fused module `{}` (`{}`): vLLM up to 0.29 matches the shards' names only and \
             builds the layer quantized, vLLM 0.30 and later match the fused name first; {sglang}; name the shards \
             themselves in `{}` (as the checkpoint stores them), which every release matches",
            ex.key, fused.fused, fused.entry, ex.key,
        );
        emit_unquantized(cx, severity, m, count, &after);
    }
}

/// Who builds the quantized layer, and the fix, in the method's terms.
fn remedy(ex: &Exclusions, module: &str, layer_prefix: Option<&str>) -> (&'static str, String) {
    let rest = "or quantize the head with the rest";
    // Where SGLang builds the module under another name, an entry must match both names.
    if let (Some(sglang), Some(prefix)) = (ex.sglang_name(module, layer_prefix), layer_prefix) {
        let both = match ex.method {
            Method::Int4(Int4::Awq) => format!(
                "add entries contained in both names, `{}` (vLLM's, `{module}`) and `model.decoder.` \
                 (SGLang's, `{sglang}`), to `{}`, {rest}",
                prefix.trim_end_matches('.'),
                ex.key
            ),
            Method::Int4(Int4::Gptq) if !module.contains(".experts.") => format!(
                "add a `-:` key to `{}` matching both names from their start, `-:model\\.({}|decoder)\\.` \
                 (vLLM builds `{module}`, SGLang `{sglang}`), before any `+:` key that matches them, {rest}",
                ex.key,
                prefix
                    .trim_start_matches("model.")
                    .trim_end_matches('.')
                    .replace('.', "\\.")
            ),
            _ => String::new(),
        };
        if !both.is_empty() {
            return ("vLLM and SGLang both build", both);
        }
    }
    match ex.method {
        Method::Int4(Int4::Awq) => {
            let filled = if ex.len == 0 {
                " (vLLM fills an empty list from the checkpoint's dtypes, which names each expert, \
                 never the MoE's `…experts` module it builds; SGLang fills nothing)"
            } else {
                ""
            };
            (
                "vLLM and SGLang both build",
                format!(
                    "add `{module}` or a part of its name (`mtp`) to `{}`{filled}, {rest}",
                    ex.key
                ),
            )
        }
        Method::Int4(Int4::Gptq) => (
            "vLLM and SGLang both build",
            if module.contains(".experts.") {
                format!(
                    "a `-:` key of `{}` matching it would exclude it in vLLM, but SGLang's \
                     gptq_marlin quantizes a MoE's experts whatever `dynamic` says: quantize the \
                     head with the rest",
                    ex.key
                )
            } else {
                format!(
                    "add a `-:` key to `{}` whose regex matches `{module}` from its start \
                     (`-:.*mtp.*`), before any `+:` key that matches it, {rest}",
                    ex.key
                )
            },
        ),
        _ => (
            "the engine builds",
            format!(
                "add `{module}` to `{}` in the form {} matches, {rest}",
                ex.key,
                ex.method.name()
            ),
        ),
    }
}

const MTP_UNQUANTIZED_ONE_ENGINE: Rule = Rule {
    code: WeightsCode::MtpUnquantizedOneEngine,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "an MTP module stored in BF16 that one engine (or release) builds quantized and another does not",
        explanation: "AWQ and GPTQ exclude lists are matched differently by vLLM 0.34.0 and SGLang 0.5.23 (see \
weights-mtp-unquantized), so an MTP module stored unquantized can load under one engine and fail under the other: \
SGLang names DeepSeek's MTP layer `model.decoder.*`, so an AWQ entry `model.layers.61` excludes it in vLLM only; \
vLLM fills an empty AWQ `modules_to_not_convert` or an absent GPTQ `modules_in_block_to_quantize` from the \
checkpoint's dtypes and SGLang fills nothing; SGLang's gptq_marlin quantizes a MoE's experts whatever `dynamic` \
says; SGLang builds Qwen3.5's `mtp.fc` as a plain linear, vLLM with the quant config. Where the module is quantized \
its BF16 weight meets quantized parameters: a KeyError at load (vLLM's deepseek_mtp.py, SGLang's \
deepseek_weight_loader.py) or, for Qwen3.5 in SGLang, the weights skipped. compressed-tensors: a Qwen3.5 head \
whose `ignore` lists its q/k/v and gate/up projections one by one loads under vLLM (every release read) and SGLang \
0.5.21+, but SGLang 0.5.10–0.5.20 gives its MTP class no packed_modules_mapping, matches the fused `qkv_proj` / \
`gate_up_proj` whole, builds them quantized and skips the BF16 shards: accept length 1.0 (sglang#35887), an error \
at those releases. A warning without an engine, as the deployment's engine and release decide: the message names \
the one that fails. quark on a GLM-5 DSA checkpoint whose NextN layer is excluded entry by entry under its checkpoint \
names (`model.layers.78.eh_proj`): SGLang 0.5.11–0.5.15 builds the layer as `model.eh_proj` and `model.decoder.*` and \
matches the entries as written, so the excluded modules get quantized layers and their BF16 weights fail the \
loader's shape assertion (sglang#29781); 0.5.16 remaps them (sglang#30265). compressed-tensors MXFP4 (its format, or \
4-bit float weights in symmetric groups of 32) with the head's routed experts excluded and stored BF16: SGLang 0.5.17 \
and later return their MXFP4 MoE method before reading `ignore`, so the experts are built MXFP4 and the BF16 weights \
fail to load (sglang#36786, open; vLLM honours the list). quark on a DeepSeek-V3/V3.2 or GLM-5 DSA checkpoint \
whose NextN `eh_proj` is stored BF16 and not excluded: vLLM builds it as a plain nn.Linear at every release read \
(0.25.1 to 0.34.0) and loads it, SGLang 0.5.10 too, but SGLang 0.5.11 and later build it under the quark config as \
`model.eh_proj` and the BF16 weight fails the loader's shape assertion (deepseek_nextn.py). Exclude it in a form both \
match, or quantize the head with the rest.",
    },
    applies: Applies::Any,
    needs: &[],
    check: mtp_unquantized_one_engine,
};

/// Why an engine builds a float module unquantized, or `None` when it quantizes it.
fn unquantized_because(build: &Build) -> Option<String> {
    match build {
        Build::Plain(why) => Some(why.to_string()),
        Build::Excluded(entry) => Some(format!("`{entry}` excludes it")),
        Build::ByDtype => Some("it fills its list from the checkpoint's dtypes".to_string()),
        Build::Quantized | Build::Open => None,
    }
}

/// ` (and N more of this MTP layer)` for a finding that stands for `count` modules.
fn more_of_layer(count: usize) -> String {
    match count {
        0 | 1 => String::new(),
        n => format!(" (and {} more of this MTP layer)", n - 1),
    }
}

/// SGLang's fused MTP projections under compressed-tensors (sglang#35887): what each release
/// builds for a head whose `ignore` lists q/k/v and gate/up one by one.
const FUSED_BY_ENGINE: ByEngine = ByEngine {
    case: Some("compressed-tensors, the MTP head's q/k/v or gate/up projections excluded one by one"),
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow {
            engine: Engine::Sglang,
            since: None,
            until: Some((0, 5, 20)),
            severity: Some(Severity::Error),
            does: "gives Qwen3_5ForCausalLMMTP no packed_modules_mapping, so the fused qkv_proj / gate_up_proj is \
matched whole, built quantized, and the BF16 shards skipped by load_weights (accept length 1.0, sglang#35887)",
        },
        ReleaseRow {
            engine: Engine::Sglang,
            since: Some((0, 5, 21)),
            until: None,
            severity: None,
            does: "expands the fused names to their shards (packed_modules_mapping on the MTP class) and builds them \
unquantized",
        },
    ],
};

/// SGLang's GLM-5 DSA NextN layer under quark (sglang#29781, fixed by #30265 in 0.5.16): what each
/// release builds for a layer excluded entry by entry under its checkpoint names.
const NEXTN_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, a GLM-5 DSA NextN layer excluded by its checkpoint names (`model.layers.N.*`)"),
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow {
            engine: Engine::Sglang,
            since: Some((0, 5, 11)),
            until: Some((0, 5, 15)),
            severity: Some(Severity::Error),
            does: "builds the NextN layer as model.eh_proj and model.decoder.* and matches the exclude entries as \
written: the excluded modules get quantized layers and their BF16 weights fail ReplicatedLinear.weight_loader's \
shape assertion (sglang#29781)",
        },
        ReleaseRow {
            engine: Engine::Sglang,
            since: Some((0, 5, 16)),
            until: None,
            severity: None,
            does: "remaps each model.layers.N. entry to the runtime name (GlmMoeDsaForCausalLMNextN, sglang#30265)",
        },
    ],
};

/// SGLang's GLM-4.5 NextN layer under quark: built as `model.decoder.*` with no name mapper and
/// no whole-layer rule at any release read (glm4_moe_nextn.py, 0.5.10 to 0.5.23).
const NEXTN_GLM45_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, a GLM-4.5 NextN layer excluded by its checkpoint names (`model.layers.N.*`)"),
    no_engine: Some(Severity::Warning),
    rows: &[ReleaseRow::any_version(
        Engine::Sglang,
        Some(Severity::Error),
        "builds the NextN layer as model.decoder.* (glm4_moe_nextn.py, no name mapper at any release read, 0.5.10 \
to 0.5.23) and matches the exclude entries as written: the excluded modules get quantized layers and their BF16 \
weights do not fit",
    )],
};

/// A GLM NextN layer's modules excluded only by their checkpoint names: SGLang builds them
/// quantized under its own names, GLM-5 DSA's at 0.5.11-0.5.15 ([`NEXTN_BY_ENGINE`]), GLM-4.5's
/// at every release ([`NEXTN_GLM45_BY_ENGINE`]).
fn nextn_unremapped(cx: &mut Cx, h: &MtpHead, ex: &Exclusions) {
    let architectures = crate::config::architectures(cx.v.config.root());
    let (rows, whole_layer_rule) = match architectures.first().map(String::as_str) {
        Some("GlmMoeDsaForCausalLM") => (&NEXTN_BY_ENGINE, true),
        Some("Glm4MoeForCausalLM") => (&NEXTN_GLM45_BY_ENGINE, false),
        _ => return,
    };
    let found = per_layer(
        h.modules
            .iter()
            .filter(|m| !m.quantized() && judged(h, m, ex))
            // GLM-4.5's `eh_proj` is a plain nn.Linear in SGLang: nothing to exclude.
            .filter(|m| {
                super::eh_proj::eh_proj(cx, ex, m, layer_prefix(h, m).as_deref())
                    != Some(EhProj::Plain)
            })
            .filter_map(|m| {
                let prefix = layer_prefix(h, m)?;
                ex.sglang_nextn_unremapped(&m.name, &prefix, whole_layer_rule)
                    .map(|runtime| (m, runtime))
            }),
    );
    for (m, runtime, count) in found {
        let layer = layer_prefix(h, m).unwrap_or_default();
        // SGLang matches a MoE by its own name: the entry to add for an expert is its MoE's.
        let entry = match runtime.find(".experts.") {
            Some(at) => &runtime[..at + ".experts".len()],
            None => runtime.as_str(),
        };
        let rest = if whole_layer_rule {
            format!(
                "and `{}` excludes it by its checkpoint name, but SGLang 0.5.11-0.5.15 builds it as `{runtime}` and \
                 matches the entries as written: a quantized layer whose BF16 weight fails the loader's shape \
                 assertion (sglang#29781); vLLM and SGLang 0.5.16+ remap the entry; exclude the whole layer (`{}`) as \
                 well, or serve with SGLang 0.5.16 or later",
                ex.key,
                layer.trim_end_matches('.'),
            )
        } else {
            format!(
                "and `{}` excludes it by its checkpoint name, but SGLang builds a GLM-4.5 NextN layer as \
                 `model.decoder.*` and never remaps the entries (glm4_moe_nextn.py, 0.5.10 to 0.5.23; GLM-5 DSA's \
                 class does from 0.5.16, sglang#30265): it builds `{runtime}` quantized and the BF16 weight does not \
                 fit; add SGLang's name, `{entry}`, to `{}` as well (vLLM matches the checkpoint's)",
                ex.key, ex.key,
            )
        };
        emit_sglang_case(cx, rows, m, count, rest);
    }
}

/// A NextN `eh_proj` stored BF16 that the list leaves quantized, where vLLM builds it plain and
/// SGLang quantizes it: DeepSeek-V3/V3.2 and GLM-5 DSA under quark from 0.5.11 (as
/// `model.eh_proj`), Bailing 2.5 under any method but ModelOpt FP4 (by the checkpoint's name).
fn sglang_eh_proj(cx: &mut Cx, h: &MtpHead, ex: &Exclusions) {
    let found: Vec<(&MtpModule, String, EhProj)> = h
        .modules
        .iter()
        .filter(|m| !m.quantized() && judged(h, m, ex))
        .filter(|m| ex.verdict(&m.name) == Verdict::Quantized)
        .filter_map(|m| {
            let prefix = layer_prefix(h, m)?;
            let kind = super::eh_proj::eh_proj(cx, ex, m, Some(&prefix))?;
            let sglang_quantizes = match kind {
                EhProj::SglangQuark => super::eh_proj::sglang_quantizes_eh_proj(ex, &prefix),
                EhProj::SglangQuantized => true,
                EhProj::Plain => false,
            };
            sglang_quantizes.then_some((m, prefix, kind))
        })
        .collect();
    for (m, prefix, kind) in found {
        let (rows, rest) = if kind == EhProj::SglangQuark {
            (
                &super::eh_proj::EH_PROJ_BY_ENGINE,
                format!(
                    "and `{}` does not name it: vLLM builds a NextN `eh_proj` as a plain nn.Linear at every release \
                     (0.25.1 to 0.34.0), so it loads there, but SGLang 0.5.11 and later build it under the quark \
                     config as `model.eh_proj`: a quantized layer whose BF16 weight fails the loader's shape \
                     assertion (deepseek_nextn.py); add SGLang's name for it, `model.eh_proj`, to `{}` (the \
                     checkpoint's, `{prefix}eh_proj`, is remapped to it only for GLM-5 DSA from 0.5.16), or serve \
                     with vLLM",
                    ex.key, ex.key,
                ),
            )
        } else {
            (
                &super::eh_proj::BAILING_EH_PROJ_BY_ENGINE,
                format!(
                    "and `{}` does not name it: vLLM builds a Bailing 2.5 NextN `eh_proj` as a plain nn.Linear at \
                     every release (0.25.1 to 0.34.0, bailing_moe_mtp.py), so it loads there, but SGLang builds it \
                     under the {} config by this name (bailing_moe_nextn.py, 0.5.10 to 0.5.23): a quantized layer \
                     for the BF16 weight; add `{}` to `{}`, or serve with vLLM",
                    ex.key,
                    ex.method.name(),
                    m.name,
                    ex.key,
                ),
            )
        };
        emit_sglang_case(cx, rows, m, 1, rest);
    }
}

/// A NextN `eh_proj` stored quantized that the list keeps quantized, where an engine builds it
/// as a plain nn.Linear whatever the list says (its scales have nowhere to go): both engines
/// for DeepSeek-style targets under every method but quark and for GLM-4.5, vLLM for the rest.
/// AWQ and GPTQ say so through the list's own verdict ([`Verdict::Plain`]).
fn plain_eh_proj_quantized(cx: &mut Cx, h: &MtpHead, ex: &Exclusions) {
    if matches!(ex.method, Method::Int4(_)) {
        return;
    }
    let found: Vec<(&MtpModule, EhProj)> = h
        .modules
        .iter()
        .filter(|m| m.quantized())
        .filter(|m| ex.verdict_at(&m.name, layer_prefix(h, m).as_deref()) == Verdict::Quantized)
        .filter_map(|m| {
            let prefix = layer_prefix(h, m)?;
            Some((m, super::eh_proj::eh_proj(cx, ex, m, Some(&prefix))?))
        })
        .collect();
    for (m, kind) in found {
        let Some(severity) = kind
            .quantized_table()
            .judge(cx.v.engine.as_ref())
            .map(|j| j.severity)
        else {
            continue;
        };
        let sglang = match kind {
            EhProj::Plain => "SGLang builds it plain too",
            EhProj::SglangQuark => {
                "SGLang builds it under the quark config from 0.5.11 (plain before)"
            }
            EhProj::SglangQuantized => "SGLang builds it under the quant config",
        };
        let file = cx.v.headers.display_of(&m.shard);
        let stored = m.dtype.clone().unwrap_or_else(|| m.parts.join(" + "));
        cx.emit_as(
            severity,
            &m.name,
            &file,
            format!(
                "MTP module `{}` is stored quantized ({stored}), but vLLM builds a NextN `eh_proj` as a plain \
                 nn.Linear at every release read (0.25.1 to 0.34.0), whatever `{}` says: its scale has no parameter \
                 to load into (`params_dict[name]`, a KeyError) and a packed weight does not fit; {sglang}; store \
                 `eh_proj` unquantized (BF16), as the engines' own checkpoints do",
                m.name, ex.key,
            ),
        );
    }
}

/// One finding of an SGLang-only case (`rows`) about MTP module `m` (and `count - 1` more of its
/// layer), `rest` saying why: a warning without an engine, the rows' severity for SGLang's
/// release, nothing for another engine or a release the rows clear.
fn emit_sglang_case(cx: &mut Cx, rows: &ByEngine, m: &MtpModule, count: usize, rest: String) {
    let severity = match &cx.v.engine {
        None => Severity::Warning,
        Some(e) if e.engine.serves_as(Engine::Sglang) => match rows.judge(Some(e)) {
            Some(j) => j.severity,
            None => return,
        },
        Some(_) => return,
    };
    emit_unquantized(cx, severity, m, count, &format!(" {rest}"));
}

/// `MTP module `NAME` is stored unquantized (and N more of this MTP layer)` + `after`, at `m`'s
/// shard: the one shape of every one-engine finding.
fn emit_unquantized(cx: &mut Cx, severity: Severity, m: &MtpModule, count: usize, after: &str) {
    let file = cx.v.headers.display_of(&m.shard);
    let others = more_of_layer(count);
    cx.emit_as(
        severity,
        &m.name,
        &file,
        format!(
            "MTP module `{}` is stored unquantized{others}{after}",
            m.name
        ),
    );
}

/// SGLang's MXFP4 MoE method for an MTP head's experts under compressed-tensors (sglang#36786).
const MXFP4_EXPERTS_BY_ENGINE: ByEngine = ByEngine {
    case: Some("compressed-tensors MXFP4, the MTP head's routed experts excluded and stored BF16"),
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow {
            engine: Engine::Sglang,
            since: None,
            until: Some((0, 5, 16)),
            severity: None,
            does: "reads `ignore` for a MoE's experts (get_moe_scheme) and builds excluded ones unquantized",
        },
        ReleaseRow {
            engine: Engine::Sglang,
            since: Some((0, 5, 17)),
            until: None,
            severity: Some(Severity::Error),
            does: "returns its MXFP4 MoE method for every MoE of an MXFP4 config before reading `ignore` (its NPU \
backend excepted from 0.5.21): BF16 expert weights meet MXFP4 parameters at load (sglang#36786, open)",
        },
    ],
};

/// An MXFP4 compressed-tensors head whose experts `ignore` excludes and the checkpoint stores
/// BF16: vLLM (and SGLang up to 0.5.16) build them unquantized; SGLang 0.5.17+ MXFP4.
fn mxfp4_experts_forced(cx: &mut Cx, h: &MtpHead, ex: &Exclusions) {
    let found = per_layer(
        h.modules
            .iter()
            .filter(|m| !m.quantized() && judged(h, m, ex))
            .filter(|m| ex.sglang_mxfp4_expert_forced(&m.name))
            .map(|m| (m, ())),
    );
    for (m, (), count) in found {
        let rest = format!(
            "and `{}` excludes it, but the config is MXFP4 and SGLang 0.5.17 and later build every MoE of it MXFP4 \
             before reading the list: the BF16 expert weights meet MXFP4 parameters at load (sglang#36786, open; \
             SGLang's NPU backend excepted from 0.5.21); vLLM and SGLang up to 0.5.16 honour the list; store the \
             head's experts MXFP4, or serve with vLLM",
            ex.key
        );
        emit_sglang_case(cx, &MXFP4_EXPERTS_BY_ENGINE, m, count, rest);
    }
}

/// A Qwen3.5 head whose projections compressed-tensors excludes one by one: vLLM and SGLang
/// from 0.5.21 build them unquantized; SGLang up to 0.5.20 quantized, skipping the weights.
fn fused_projections_skipped(cx: &mut Cx, h: &MtpHead, ex: &Exclusions) {
    let found = per_layer(
        h.modules
            .iter()
            .filter(|m| !m.quantized() && judged(h, m, ex))
            .filter_map(|m| ex.sglang_fused_unexcluded(&m.name).map(|fused| (m, fused))),
    );
    for (m, _, count) in found {
        // Every fused name of this layer, for the fix.
        let mut fused: Vec<String> = h
            .modules
            .iter()
            .filter(|o| o.layer == m.layer && !o.quantized() && judged(h, o, ex))
            .filter_map(|o| ex.sglang_fused_unexcluded(&o.name))
            .collect();
        fused.dedup();
        let fused = fused
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(" and ");
        let rest = format!(
            "and `{}` excludes it by name, but SGLang up to 0.5.20 builds the fused {fused} and matches those names \
             whole: a quantized layer, the BF16 shards skipped at load and the head drafting from uninitialised \
             weights (accept length 1.0, sglang#35887); vLLM and SGLang 0.5.21+ expand the fused names and load them; \
             add {fused} (or a `re:` covering them) to `{}`, or serve with SGLang 0.5.21 or later",
            ex.key, ex.key,
        );
        emit_sglang_case(cx, &FUSED_BY_ENGINE, m, count, rest);
    }
}

fn mtp_unquantized_one_engine(cx: &mut Cx) {
    let Some(h) = head(cx) else { return };
    let Some(ex) = cx.v.exclusions.as_ref() else {
        return;
    };
    fused_projections_skipped(cx, h, ex);
    nextn_unremapped(cx, h, ex);
    mxfp4_experts_forced(cx, h, ex);
    sglang_eh_proj(cx, h, ex);
    let found = per_layer(h.modules.iter().filter(|m| !m.quantized() && judged(h, m, ex)).filter_map(|m| {
        let prefix = layer_prefix(h, m);
        let (v, s) = ex.builds(&m.name, prefix.as_deref())?;
        let fails_under = match (&v, &s) {
            (Build::Quantized, _) => Engine::Vllm,
            _ => Engine::Sglang,
        };
        let detail = match (&v, &s) {
            (Build::Quantized, s) => {
                let why = unquantized_because(s)?;
                format!("SGLang 0.5.23 builds it unquantized ({why}) but vLLM 0.34.0 builds a quantized layer: it fails \
                         under vLLM (its loader finds no parameter for the BF16 weight: a KeyError in deepseek_mtp.py, \
                         a ValueError from Qwen3.5's and Qwen3-Next's weight loader)")
            }
            (v, Build::Quantized) => {
                let why = unquantized_because(v)?;
                let name = match ex.sglang_name(&m.name, prefix.as_deref()) {
                    Some(n) => format!(" under its SGLang name `{n}`"),
                    None => String::new(),
                };
                format!("vLLM 0.34.0 builds it unquantized ({why}) but SGLang 0.5.23 builds a quantized layer{name}: it \
                         fails under SGLang (a KeyError in its DeepSeek/GLM and Qwen3-Next loaders; Qwen3.5's skips the \
                         weight and drafts from uninitialised parameters)")
            }
            _ => return None,
        };
        Some((m, (detail, fails_under)))
    }));
    for (m, (detail, fails_under), count) in found {
        // With the engine known: an error where it is the one that fails, nothing where not.
        let severity = match &cx.v.engine {
            None => Severity::Warning,
            Some(e) if e.engine.serves_as(fails_under) => Severity::Error,
            Some(_) => continue,
        };
        let after = format!(
            "; under `{}` ({}) {detail}; {}",
            ex.key,
            ex.method.name(),
            remedy(ex, &m.name, layer_prefix(h, m).as_deref()).1,
        );
        emit_unquantized(cx, severity, m, count, &after);
    }
}

const MTP_QUANT_EXCLUDED: Rule = Rule {
    code: WeightsCode::MtpQuantExcluded,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "an MTP module stored quantized that quantization_config excludes from quantization",
        explanation: "An excluded module gets an unquantized layer (vLLM 0.27.1's fp8 and quark methods return \
UnquantizedLinearMethod for a skipped layer), which has no parameter for the packed weight or the scales the \
checkpoint stores: the load fails, or the scales are dropped and the head drafts from raw FP8/integer values. A \
warning: no public report of this direction was found. One engine does it to a head no entry excludes module by \
module: under quark, SGLang's Qwen3.5 MTP class builds the whole head BF16 for any `mtp.` entry from 0.5.12 to 0.5.20 \
(from 0.5.12 for one naming `mlp.experts`), so a head that stores its experts quantized (MXFP4) fails there, as \
0.5.21's qwen3_5_mtp.py says (\"MXFP4 checkpoint shards no longer fit\"): an error at those releases. Remove the \
entry, or store the head unquantized.",
    },
    applies: Applies::Any,
    needs: &[],
    check: mtp_quant_excluded,
};

fn mtp_quant_excluded(cx: &mut Cx) {
    let Some(h) = head(cx) else { return };
    let Some(ex) = cx.v.exclusions.as_ref() else {
        return;
    };
    let found = per_layer(h.modules.iter().filter(|m| m.quantized()).filter_map(|m| {
        match ex.verdict_at(&m.name, layer_prefix(h, m).as_deref()) {
            Verdict::Excluded(entry) => Some((
                m,
                format!(
                    "`{entry}` in `{}` excludes it under {}: the engine builds an unquantized layer",
                    ex.key,
                    ex.method.name()
                ),
            )),
            Verdict::Plain(why) => Some((
                m,
                format!("{why} (and the other engine too), whatever `{}` says", ex.key),
            )),
            _ => None,
        }
    }));
    for (m, why, count) in found {
        let file = cx.v.headers.display_of(&m.shard);
        let stored = m.dtype.clone().unwrap_or_else(|| m.parts.join(" + "));
        cx.emit(
            &m.name,
            &file,
            format!(
                "MTP module `{}` is stored quantized ({stored}){} but {why}, with no place for its \
                 scales; remove the entry or store the module unquantized",
                m.name,
                if count > 1 { format!(" with {} more of its layer", count - 1) } else { String::new() },
            ),
        );
    }
    quark_whole_head_quantized(cx, h, ex);
    plain_eh_proj_quantized(cx, h, ex);
}

/// quark, a Qwen3.5 head with `mtp.` entries: the modules it stores quantized and the list keeps
/// quantized, which SGLang builds BF16 with the rest of the head (0.5.12–0.5.20 for any such
/// entry, from 0.5.12 for one naming the experts).
fn quark_whole_head_quantized(cx: &mut Cx, h: &MtpHead, ex: &Exclusions) {
    let Some(head) = super::quark_head::head_bf16(cx, ex) else {
        return;
    };
    let Some(severity) = super::quark_head::verdict(cx, &head, true) else {
        return;
    };
    let found = per_layer(
        h.modules
            .iter()
            .filter(|m| m.quantized())
            .filter(|m| ex.verdict_at(&m.name, layer_prefix(h, m).as_deref()) == Verdict::Quantized)
            .map(|m| (m, ())),
    );
    for (m, (), count) in found {
        let file = cx.v.headers.display_of(&m.shard);
        let stored = m.dtype.clone().unwrap_or_else(|| m.parts.join(" + "));
        let when = match &head.experts_entry {
            Some(e) => format!("from 0.5.12, for `{e}`"),
            None => format!("0.5.12 to 0.5.20, for `{}`", head.entry),
        };
        cx.emit_as(
            severity,
            &m.name,
            &file,
            format!(
                "MTP module `{}` is stored quantized ({stored}){}, and `{}` (quark) keeps it quantized module by \
                 module, but SGLang's Qwen3.5 MTP class builds the whole head BF16 ({when}): its quantized weights do \
                 not fit (vLLM loads it); drop the head's `mtp.` entries and exclude its BF16 modules by name, or \
                 serve with SGLang 0.5.21 or later",
                m.name,
                if count > 1 { format!(" with {} more of its layer", count - 1) } else { String::new() },
                ex.key,
            ),
        );
    }
}

const MTP_NORM_SHIFT_BY_ENGINE: ByEngine = ByEngine {
    case: Some("a qwen3_5 / qwen3_5_moe checkpoint in MLX's layout that holds `mtp.*` tensors"),
    // Without mlx-lm: worth knowing, since the checkpoint is one only MLX engines load.
    no_engine: Some(Severity::Info),
    rows: &[
        ReleaseRow::until_release(
            Engine::MlxLm,
            (0, 30, 6),
            None,
            "has no qwen3_5 model (added in 0.30.7): the checkpoint does not load at all",
        ),
        ReleaseRow {
            engine: Engine::MlxLm,
            since: Some((0, 30, 7)),
            until: Some((0, 31, ANY_PATCH)),
            severity: Some(Severity::Error),
            does: "qwen3_5's `sanitize` shifts every trunk RMSNorm by +1.0 when any key holds `mtp.` \
(`should_shift_norm_weights = has_mtp_weights or has_unsanitized_conv1d`), read in 0.30.7, 0.31.1, 0.31.2 and \
0.31.3: a converted checkpoint's norms are shifted twice, the output corrupted, MTP acceptance 0–6 % (MTPLX#306)",
        },
        ReleaseRow::since(
            Engine::MlxLm,
            (0, 32),
            None,
            "shifts only when conv1d is still in Hugging Face's layout (`has_unsanitized_conv1d`), read in \
0.32.0 to 0.32.2",
        ),
        ReleaseRow::any_version(
            Engine::MlxVlm,
            None,
            "drops the `mtp.*` keys before it decides to shift (`should_shift_norm_weights` after the filter), \
read in 0.6.10 to 0.7.10: a converted checkpoint's norms are shifted once",
        ),
    ],
};

const MTP_NORM_SHIFT: Rule = Rule {
    code: WeightsCode::MtpNormShift,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "an MLX-converted Qwen3.5/3.6 checkpoint keeps `mtp.*` tensors: mlx-lm 0.30.7–0.31 shifts its trunk norms twice",
        explanation: "Qwen3.5 and Qwen3.6 (`qwen3_5`, `qwen3_5_moe`) store their RMSNorm gains as deltas from 1.0; \
mlx-lm's `sanitize` adds 1.0 when it loads a Hugging Face export, and a checkpoint it converts is saved shifted, with \
its conv1d weights moved to MLX's layout (last dimension 1). From 0.30.7 (its first qwen3_5) to 0.31.3 the shift is \
also triggered by the mere presence of a key holding `mtp.` (`should_shift_norm_weights = has_mtp_weights or \
has_unsanitized_conv1d`), so a converted checkpoint that kept its MTP head (MTP-enabled MLX quants) gets 1.0 added \
to every trunk norm a second time: the output is corrupted and MTP acceptance falls to 0–6 % (MTPLX#306; \
mlx-lm#1442 reports garbage output). 0.32.0 shifts only for an unconverted conv1d. The checkpoint is in MLX's \
layout when a conv1d weight's header says so or, with no shard read, when the config carries MLX's `quantization`; \
a Hugging Face export (conv1d not moved) is shifted once, correctly, and not reported. An error at the releases \
that shift twice; info without an engine. Serve with mlx-lm 0.32.0 or later, or save the checkpoint without its \
`mtp.*` tensors.",
    },
    applies: Applies::Any,
    needs: &[],
    check: mtp_norm_shift,
};

/// The model types whose module is mlx-lm's `qwen3_5.py` (`qwen3_5_moe` wraps it).
const NORM_SHIFT_MODEL_TYPES: &[&str] = &["qwen3_5", "qwen3_5_moe"];

fn mtp_norm_shift(cx: &mut Cx) {
    let root = cx.v.config.root();
    let model_type = root.get("model_type").and_then(|t| t.as_str());
    if !model_type.is_some_and(|t| NORM_SHIFT_MODEL_TYPES.contains(&t)) {
        return;
    }
    let Some(layout) = mlx_layout(cx) else { return };
    let h = cx.v.headers;
    // mlx-lm's test: any key holding `mtp.` (the index's names, else the file's).
    let names: Vec<&str> = match &h.index {
        Some(index) => index
            .tensor_names()
            .filter(|n| n.contains("mtp."))
            .collect(),
        None => h
            .tensors()
            .map(|t| t.name.as_str())
            .filter(|n| n.contains("mtp."))
            .collect(),
    };
    let Some(first) = names.first().copied() else {
        return;
    };
    let Some(judged) = MTP_NORM_SHIFT_BY_ENGINE.judge(cx.v.engine.as_ref()) else {
        return;
    };
    let message = format!(
        "{} `mtp.*` tensor{} (`{first}`{}) in a checkpoint in MLX's layout ({layout}): mlx-lm 0.30.7 to 0.31.3 \
         take any `mtp.` key for a Hugging Face export and add 1.0 to every trunk RMSNorm the conversion already \
         shifted: the output is corrupted and MTP acceptance falls to 0–6 % (MTPLX#306, mlx-lm#1442). Serve it \
         with mlx-lm 0.32.0 or later (which shifts only for an unconverted conv1d), or save it without the \
         `mtp.*` tensors",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        if names.len() > 1 { ", …" } else { "" },
    );
    let whole = cx.v.whole_file();
    let mut d = cx.diag(first, &whole, message).severity(judged.severity);
    d.releases = judged.releases;
    cx.push(d);
}

/// Why the checkpoint is in MLX's layout (conv1d moved, norms already shifted), or `None`
/// when it is a Hugging Face export or the files do not say.
fn mlx_layout(cx: &Cx) -> Option<String> {
    let conv =
        cx.v.headers
            .tensors()
            .find(|t| t.name.ends_with("conv1d.weight") && t.shape.len() == 3);
    if let Some(t) = conv {
        // mlx-lm's own test: a last dimension of 1 is its layout, anything else is HF's.
        return (t.shape.last() == Some(&1))
            .then(|| format!("`{}` is stored {:?}", t.name, t.shape));
    }
    let q = cx.v.config.root().get("quantization")?;
    (q.get("bits").is_some() || q.get("group_size").is_some())
        .then(|| "the config's `quantization`, which MLX's converters write".to_string())
}

/// The severities by engine and version of `code`'s rule, when it declares them.
pub fn by_engine(code: WeightsCode) -> Vec<&'static ByEngine> {
    match code {
        WeightsCode::MtpMissing => vec![&MTP_MISSING_BY_ENGINE],
        WeightsCode::MtpUnquantized => vec![
            &MTP_UNQUANTIZED_BY_ENGINE,
            &super::quark_head::BF16_MODULE_BY_ENGINE,
            &super::quark_head::BF16_MODULE_EXPERTS_BY_ENGINE,
            &super::quark_nextn::EXPERTS_MOE_EXCLUDED_BY_ENGINE,
            &super::fused_entries::QUARK_QWEN35_BY_ENGINE,
            &super::fused_entries::CT_REGEX_QWEN35_BY_ENGINE,
            &super::quark_nextn::EXPERTS_NAMED_BY_ENGINE,
            &super::quark_nextn::EXPERTS_NAMED_QWEN35_BY_ENGINE,
            &super::quark_nextn::EXPERTS_NAMED_GLM_DSA_BY_ENGINE,
            &super::quark_nextn::EXPERTS_NAMED_LAYER_EXCLUDED_BY_ENGINE,
            &super::quark_nextn::EXPERTS_NAMED_GLM45_BY_ENGINE,
        ],
        WeightsCode::MtpQuantExcluded => vec![
            &super::eh_proj::QUANTIZED_BY_ENGINE,
            &super::eh_proj::QUANTIZED_QUARK_BY_ENGINE,
            &super::eh_proj::QUANTIZED_BAILING_BY_ENGINE,
            &super::quark_head::QUANTIZED_MODULE_BY_ENGINE,
            &super::quark_head::QUANTIZED_MODULE_EXPERTS_BY_ENGINE,
        ],
        WeightsCode::MtpUnquantizedOneEngine => {
            vec![
                &FUSED_BY_ENGINE,
                &NEXTN_BY_ENGINE,
                &NEXTN_GLM45_BY_ENGINE,
                &MXFP4_EXPERTS_BY_ENGINE,
                &super::eh_proj::EH_PROJ_BY_ENGINE,
                &super::eh_proj::BAILING_EH_PROJ_BY_ENGINE,
            ]
        }
        WeightsCode::MtpNormShift => vec![&MTP_NORM_SHIFT_BY_ENGINE],
        WeightsCode::DraftHeadRefused => vec![&super::draft_heads::DRAFT_HEAD_REFUSED_BY_ENGINE],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The in-process cost of a real-size target index (BENCHMARKS.md, "MTP heads in a target's
    /// index"): `DFLASH_MTP_INDEX=DIR` (bench/mtp_index.py's output), run with `cargo test
    /// --release -p dflash-check-core --lib -- --ignored real_size_index --nocapture`.
    #[test]
    #[ignore = "a benchmark: needs DFLASH_MTP_INDEX"]
    fn real_size_index_read_and_checked() {
        let Some(dir) = std::env::var_os("DFLASH_MTP_INDEX").map(std::path::PathBuf::from) else {
            return;
        };
        let bytes = std::fs::read(dir.join("model.safetensors.index.json")).unwrap();
        let config = crate::config::load(&dir.join("config.json")).unwrap();
        let mut best = [f64::MAX; 3];
        for _ in 0..20 {
            let t = std::time::Instant::now();
            let index = crate::weights::index::parse("i.json", bytes.clone()).unwrap();
            let parsed = t.elapsed().as_secs_f64();
            let headers = crate::weights::WeightsHeaders {
                source: "d".into(),
                missing_shards: index.shards.clone(),
                index: Some(index),
                shards: vec![],
                requests: 0,
                body_bytes: 0,
                map_data: Vec::new(),
            };
            let t = std::time::Instant::now();
            let declared = embedded::declared(config.root()).unwrap().unwrap();
            let head = MtpHead::of(declared, &headers);
            let ex = Exclusions::read(config.root()).unwrap().unwrap();
            let excluded = head
                .modules
                .iter()
                .filter(|m| {
                    ex.verdict_at(&m.name, layer_prefix(&head, m).as_deref()) != Verdict::Quantized
                })
                .count();
            let mtp = t.elapsed().as_secs_f64();
            let t = std::time::Instant::now();
            let checked = crate::weights::run(&config, &headers, None);
            let all = t.elapsed().as_secs_f64();
            assert!(head.missing().is_empty() && excluded < head.modules.len());
            assert!(!checked.diagnostics.is_empty());
            for (b, x) in best.iter_mut().zip([parsed, mtp, all]) {
                *b = b.min(x);
            }
        }
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "index parse {:.1} ms, MTP head + exclusions {:.1} ms, every weights rule {:.1} ms (best of 20)",
            best[0] * 1e3,
            best[1] * 1e3,
            best[2] * 1e3
        );
    }
}
