//! Settings of the DFlash variants that engines validate: DFlash2's paired conv/selector
//! settings, Domino's projector fields, and the RoPE style the draft layers are built with.

use super::{positive_int, Applies, Ctx, Engine, Family, LintCode, Rule};
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{Node, Path};

pub(super) const RULES: &[Rule] = &[
    CONV_SELECTOR_PAIR,
    DOMINO_CONFIG,
    ROPE_NEOX_STYLE,
    SAMPLE_FROM_ANCHOR_DFLASH,
    BLOCK_SIZE_TOO_SMALL,
    DSPARK_EXPORT_LAYOUT,
];

/// A key of `dflash_config`, or of the top level, with its path.
fn dflash_field<'a>(cx: &Ctx<'a>, key: &str) -> Option<(Path, &'a Node)> {
    cx.dflash_config()
        .and_then(|d| d.get(key))
        .map(|n| (Path::key("dflash_config").child(key), n))
        .or_else(|| cx.root.get(key).map(|n| (Path::key(key), n)))
        .filter(|(_, n)| !n.is_null())
}

const CONV_SELECTOR_PAIR: Rule = Rule {
    code: LintCode::ConvSelectorPair,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "conv_kernel_size/conv_group_size or selector_rank/selector_top_k set without its partner",
        explanation: "SGLang's parse_dflash_draft_config reads DFlash2's convolution (`conv_kernel_size`, \
`conv_group_size`) and selector (`selector_rank`, `selector_top_k`) settings in pairs and raises ValueError when \
one of a pair is set without the other. Set both, as the published DFlash2 config does.",
        source: "sgl-project/sglang python/sglang/srt/speculative/dflash_utils.py@00731f0 (parse_dflash_draft_config)",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: paired_fields,
};

fn paired_fields(cx: &mut Ctx) {
    for (a, b) in [
        ("conv_kernel_size", "conv_group_size"),
        ("selector_rank", "selector_top_k"),
    ] {
        match (dflash_field(cx, a), dflash_field(cx, b)) {
            (Some((path, _)), None) => {
                cx.emit(
                    &path,
                    format!("`{path}` is set but `{b}` is not: SGLang raises ValueError; set both"),
                );
            }
            (None, Some((path, _))) => {
                cx.emit(
                    &path,
                    format!("`{path}` is set but `{a}` is not: SGLang raises ValueError; set both"),
                );
            }
            _ => {}
        }
    }
}

const DOMINO_CONFIG: Rule = Rule {
    code: LintCode::DominoConfig,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a Domino drafter without the projector settings SGLang requires",
        explanation: "SGLang serves Domino drafters (`projector_type: domino`) only with `pure_draft_prefix_len` = \
1, positive `gru_hidden_dim` and `emb_dim`, a boolean `shift_label`, and block_size > 1, in `dflash_config`; it \
raises ValueError otherwise. SpecForge's template (configs/qwen3-8b-domino.json) has all of them.",
        source: "sgl-project/sglang python/sglang/srt/speculative/dflash_utils.py@00731f0 (Domino settings); sgl-project/SpecForge configs/qwen3-8b-domino.json@a6b6b02",
    },
    applies: Applies::Only(&[Family::Domino]),
    needs: &[],
    check: domino_fields,
};

fn domino_fields(cx: &mut Ctx) {
    let at = |k: &str| Path::key("dflash_config").child(k);
    match dflash_field(cx, "pure_draft_prefix_len") {
        None => {
            cx.emit(
                &at("pure_draft_prefix_len"),
                "`dflash_config.pure_draft_prefix_len` is missing: SGLang requires 1".to_string(),
            )
            .expected = Some(1.into());
        }
        Some((path, n)) if n.as_u64() != Some(1) => {
            cx.emit(
                &path,
                format!("`{path}` is {}: SGLang requires 1", super::describe(n)),
            )
            .expected = Some(1.into());
        }
        Some(_) => {}
    }
    for key in ["gru_hidden_dim", "emb_dim"] {
        match dflash_field(cx, key) {
            None => {
                cx.emit(
                    &at(key),
                    format!("`dflash_config.{key}` is missing: SGLang requires a positive integer"),
                );
            }
            Some((path, n)) => {
                if let Err(what) = positive_int(n) {
                    cx.emit(
                        &path,
                        format!("`{path}` is {what}: SGLang requires a positive integer"),
                    );
                }
            }
        }
    }
    match dflash_field(cx, "shift_label") {
        Some((_, n)) if n.as_bool().is_some() => {}
        Some((path, n)) => {
            cx.emit(
                &path,
                format!(
                    "`{path}` is {}: SGLang requires a boolean",
                    super::describe(n)
                ),
            );
        }
        None => {
            cx.emit(
                &at("shift_label"),
                "`dflash_config.shift_label` is missing: SGLang requires a boolean".to_string(),
            );
        }
    }
    if let Some((path, 1)) = cx.block_size() {
        cx.emit(
            &path,
            format!("`{path}` is 1: Domino drafts blocks, SGLang requires block_size > 1"),
        );
    }
}

const ROPE_NEOX_STYLE: Rule = Rule {
    code: LintCode::RopeNeoxStyle,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "is_neox_style is false or not a boolean: a RoPE style mismatch is silent",
        explanation: "vLLM builds the draft layers' rotary embedding with the config's `is_neox_style` (default \
true, the style of Qwen and Llama targets). Its DFlash model notes that a mismatch \"is silent -- acceptance \
collapses and nothing errors\" (vLLM PR 54373 measured 1.03 against 7.78). The tool cannot know the trained style, \
so a false value is a warning to confirm against training, not an error.",
        source: "vllm-project/vllm vllm/model_executor/models/qwen3_dflash.py@036a00d (is_neox_style); vllm-project/vllm PR 54373",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: rope_neox_style,
};

fn rope_neox_style(cx: &mut Ctx) {
    let Some((path, node)) = dflash_field(cx, "is_neox_style") else {
        return;
    };
    match node.as_bool() {
        Some(true) => {}
        Some(false) => {
            cx.emit(
                &path,
                format!(
                    "`{path}` is false: vLLM builds GPT-J-style RoPE for the draft layers; if the drafter was \
                     trained with the target's (neox) style, acceptance collapses silently"
                ),
            );
        }
        None => {
            cx.emit(
                &path,
                format!(
                    "`{path}` is {}; it must be a boolean",
                    super::describe(node)
                ),
            );
        }
    }
}

const SAMPLE_FROM_ANCHOR_DFLASH: Rule = Rule {
    code: LintCode::SampleFromAnchorDflash,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "dflash_config.sample_from_anchor is true in a DFlash (not DSpark) drafter",
        explanation: "Anchor sampling belongs to DSpark drafters. vLLM's DFlash speculator refuses it \
(\"sample_from_anchor=True is not supported for DFlash\"); an anchor-sampling drafter is a DSpark drafter \
(architectures DSparkDraftModel / Qwen3DSparkModel, vLLM method dspark). A warning with --engine sglang (not read \
there). Read at vLLM's V2-runner DFlash speculator; the V1 proposer was not checked.",
        source: "vllm-project/vllm vllm/v1/worker/gpu/spec_decode/dflash/speculator.py@0074614 (DFlashSpeculator.__init__)",
    },
    applies: Applies::Only(&[Family::Dflash, Family::Dflash2, Family::Domino]),
    needs: &[],
    check: sample_from_anchor_dflash,
};

fn sample_from_anchor_dflash(cx: &mut Ctx) {
    let Some(node) = cx.dflash_config().and_then(|d| d.get("sample_from_anchor")) else {
        return;
    };
    if node.as_bool() != Some(true) {
        return;
    }
    let severity = if cx.engine() == Some(Engine::Sglang) {
        Severity::Warning
    } else {
        Severity::Error
    };
    cx.emit_as(
        severity,
        &Path::key("dflash_config").child("sample_from_anchor"),
        "`dflash_config.sample_from_anchor` is true: vLLM's DFlash speculator refuses it; anchor-sampling \
         drafters are DSpark drafters (architectures DSparkDraftModel, method dspark)"
            .to_string(),
    );
}

const BLOCK_SIZE_TOO_SMALL: Rule = Rule {
    code: LintCode::BlockSizeTooSmall,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "block_size below 2: nothing is drafted",
        explanation: "A block of one position drafts nothing: the z-lab reference drafts only when \
block_size > 1, and SpecForge refuses to train a DFlash-family drafter with block_size < 2. (Domino: SGLang \
refuses it, reported by domino-config.)",
        source: "z-lab/dflash dflash/model.py@44947fb:98; sgl-project/SpecForge specforge/algorithms/model_providers.py@a6b6b02:214-226",
    },
    applies: Applies::Only(&[Family::Dflash, Family::Dflash2, Family::Dspark]),
    needs: &[],
    check: block_size_too_small,
};

fn block_size_too_small(cx: &mut Ctx) {
    if let Some((path, 1)) = cx.block_size() {
        cx.emit(
            &path,
            format!("`{path}` is 1: the z-lab reference drafts nothing and SpecForge refuses to train it"),
        );
    }
}

const DSPARK_EXPORT_LAYOUT: Rule = Rule {
    code: LintCode::DsparkExportLayout,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "a DSpark drafter in SpecForge's training layout (Markov settings only under dflash_config)",
        explanation: "SGLang's standalone DSpark loader reads `markov_rank` / `markov_head_type` at the top level \
with architectures Qwen3DSparkModel; SpecForge's normalize_dflash_export.py rewrites an exported config that way \
before serving. vLLM maps DSparkDraftModel + model_type qwen3 to Qwen3DSparkModel itself. Worth knowing before \
serving the file as it is under SGLang.",
        source: "sgl-project/SpecForge scripts/gates/normalize_dflash_export.py@a6b6b02 (_normalize_dspark); vllm-project/vllm vllm/config/speculative.py@002e77c",
    },
    applies: Applies::Only(&[Family::Dspark]),
    needs: &[],
    check: dspark_export_layout,
};

fn dspark_export_layout(cx: &mut Ctx) {
    let training_arch = crate::config::architectures(cx.root)
        .iter()
        .any(|a| a == "DSparkDraftModel");
    let nested_only = ["markov_rank", "markov_head_type"].iter().any(|k| {
        cx.dflash_config().is_some_and(|d| d.get(k).is_some()) && cx.root.get(k).is_none()
    });
    if training_arch && nested_only {
        cx.emit(
            &Path::key("dflash_config"),
            "Markov settings only under dflash_config with architectures DSparkDraftModel: SpecForge's training \
             layout; SGLang's standalone DSpark loader reads them at the top level (SpecForge's \
             normalize_dflash_export.py rewrites the config so)"
                .to_string(),
        );
    }
}
