//! Settings of the DFlash variants that engines validate: DFlash2's paired conv/selector
//! settings, Domino's projector fields, and the RoPE style the draft layers are built with.

use super::{positive_int, Applies, ByEngine, Ctx, Engine, Family, LintCode, ReleaseRow, Rule};
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{Node, Path};

pub(super) const RULES: &[Rule] = &[
    CONV_SELECTOR_PAIR,
    CONV_SELECTOR_TOP_LEVEL,
    DFLASH2_SETTINGS_VLLM,
    DOMINO_CONFIG,
    ROPE_NEOX_STYLE,
    SAMPLE_FROM_ANCHOR_DFLASH,
    BLOCK_SIZE_TOO_SMALL,
    DSPARK_EXPORT_LAYOUT,
    DSPARK_PROJECTOR_TYPE,
    DSPARK_MARKOV,
];

/// The rules here whose severity follows the engine and its version.
pub(super) const BY_ENGINE: &[(LintCode, &ByEngine)] = &[
    (
        LintCode::Dflash2SettingsVllm,
        &DFLASH2_SETTINGS_VLLM_BY_ENGINE,
    ),
    (
        LintCode::SampleFromAnchorDflash,
        &SAMPLE_FROM_ANCHOR_DFLASH_BY_ENGINE,
    ),
    (LintCode::DsparkExportLayout, &DSPARK_EXPORT_LAYOUT_QWEN3),
    (
        LintCode::DsparkExportLayout,
        &DSPARK_EXPORT_LAYOUT_BY_ENGINE,
    ),
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
`conv_group_size`) and selector (`selector_rank`, `selector_top_k`) settings from `dflash_config` only, an absent \
key counting as 0, and raises ValueError when one of a pair is non-zero and the other is not (\"DFLASH grouped \
convolution needs conv_kernel_size and conv_group_size together\", \"DFLASH selector needs rank and top_k \
together\"). Set both, as the published DFlash2 config does. (Keys at the top level are not read: see \
conv-selector-top-level.)",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: paired_fields,
};

const CONV_SELECTOR_FIELDS: [(&str, &str); 2] = [
    ("conv_kernel_size", "conv_group_size"),
    ("selector_rank", "selector_top_k"),
];

/// Whether SGLang counts a `dflash_config` setting as set: `bool(value)` of the parsed integer,
/// with an absent key read as 0. (A value of the wrong type is field-type's.)
fn nonzero_setting(cx: &Ctx, key: &str) -> bool {
    cx.dflash_config()
        .and_then(|d| d.get(key))
        .is_some_and(|n| !n.is_null() && n.as_u64() != Some(0))
}

fn paired_fields(cx: &mut Ctx) {
    for (a, b) in CONV_SELECTOR_FIELDS {
        let (set, unset) = match (nonzero_setting(cx, a), nonzero_setting(cx, b)) {
            (true, false) => (a, b),
            (false, true) => (b, a),
            _ => continue,
        };
        let path = Path::key("dflash_config").child(set);
        cx.emit(
            &path,
            format!(
                "`{path}` is set but `dflash_config.{unset}` is not (absent or 0): SGLang raises ValueError \
                 (they must be set together); set both"
            ),
        );
    }
}

const CONV_SELECTOR_TOP_LEVEL: Rule = Rule {
    code: LintCode::ConvSelectorTopLevel,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a DFlash2 convolution/selector setting at the top level, where SGLang does not read it",
        explanation: "SGLang's parse_dflash_draft_config reads `conv_kernel_size`, `conv_group_size`, \
`selector_rank` and `selector_top_k` only under `dflash_config`. A key written at the top level (and not under \
`dflash_config`) is ignored: SGLang runs the drafter without its convolution or selector, quietly, and a drafter \
trained with them drafts from a different model than the one that was trained. No engine refuses it, so a warning: \
move the key under `dflash_config`.",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: conv_selector_top_level,
};

fn conv_selector_top_level(cx: &mut Ctx) {
    for (a, b) in CONV_SELECTOR_FIELDS {
        for key in [a, b] {
            let nested = cx.dflash_config().is_some_and(|d| d.get(key).is_some());
            // A null or 0 is what SGLang assumes anyway: nothing is lost.
            let top = cx
                .root
                .get(key)
                .filter(|n| !n.is_null() && n.as_u64() != Some(0));
            if nested || top.is_none() {
                continue;
            }
            let what = if key.starts_with("conv") {
                "convolution"
            } else {
                "selector"
            };
            cx.emit(
                &Path::key(key),
                format!(
                    "`{key}` is at the top level: SGLang reads it only under `dflash_config`, so it is ignored \
                     and the drafter runs without its {what}; move it to `dflash_config.{key}`"
                ),
            );
        }
    }
}

const DFLASH2_SETTINGS_VLLM: Rule = Rule {
    code: LintCode::Dflash2SettingsVllm,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a DFlash2DraftModel whose dflash_config lacks a convolution/selector setting, or whose conv_group_size \
does not divide hidden_size: vLLM cannot build it",
        explanation: "vLLM serves DFlash2DraftModel from v0.28.0 (method dflash; read at 0.28.0 and 0.34.0). Its \
model reads `conv_kernel_size`, `conv_group_size`, `selector_rank` and `selector_top_k` from `dflash_config` by \
subscript, with no default: a key that is absent there (at the top level, say) fails the load with a KeyError, \
and the grouped convolution raises ValueError unless conv_group_size divides hidden_size (a 0 divides by zero). \
SGLang reads an absent setting as 0 (that part off) and is not judged here (conv-selector-pair is its rule). vLLM \
up to 0.27 does not register the architecture at all. An error under --engine vllm (0.28 and later, and without a \
version); a warning without an engine, since SGLang loads such a drafter.",
    },
    applies: Applies::Only(&[Family::Dflash2]),
    needs: &[],
    check: dflash2_settings_vllm,
};

const DFLASH2_SETTINGS_VLLM_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 27),
            None,
            "does not register DFlash2DraftModel (added in 0.28.0)",
        ),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 28),
            Some(Severity::Error),
            "reads the four settings from dflash_config without a default (KeyError) and needs conv_group_size to \
             divide hidden_size (read at 0.28.0 and 0.34.0)",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            None,
            "reads an absent setting as 0 (conv-selector-pair judges the pairs)",
        ),
    ],
};

/// What vLLM's DFlash2 model needs of `dflash_config` to build its layers.
fn dflash2_settings_vllm(cx: &mut Ctx) {
    let dflash2 = crate::config::architectures(cx.root)
        .iter()
        .any(|a| a == "DFlash2DraftModel");
    if !dflash2 {
        return;
    }
    let missing: Vec<&str> = CONV_SELECTOR_FIELDS
        .iter()
        .flat_map(|(a, b)| [*a, *b])
        .filter(|k| {
            cx.dflash_config()
                .and_then(|d| d.get(k))
                .is_none_or(Node::is_null)
        })
        .collect();
    if !missing.is_empty() {
        let keys = missing.join("`, `dflash_config.");
        cx.emit_by_engine(
            &Path::key("dflash_config"),
            format!(
                "`dflash_config.{keys}` absent: vLLM's DFlash2 model (0.28 and later) reads all four convolution and \
                 selector settings from dflash_config without a default and fails to load with a KeyError; set them \
                 there"
            ),
        );
    }
    let group = cx
        .dflash_config()
        .and_then(|d| d.get("conv_group_size"))
        .and_then(Node::as_u64);
    let hidden = cx.root.get("hidden_size").and_then(Node::as_u64);
    if let (Some(g), Some(h)) = (group, hidden) {
        if g == 0 || h % g != 0 {
            cx.emit_by_engine(
                &Path::key("dflash_config").child("conv_group_size"),
                format!(
                    "`dflash_config.conv_group_size` is {g}, which does not divide hidden_size {h}: vLLM's DFlash2 \
                     grouped convolution raises ValueError (0.28 and later)"
                ),
            );
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
        explanation: "Anchor sampling belongs to DSpark drafters (architectures DSparkDraftModel / \
Qwen3DSparkModel, vLLM method dspark). vLLM's V2-runner DFlash speculator refuses it from v0.27 on \
(\"sample_from_anchor=True is not supported for DFlash\"); up to v0.26 it does not read the key and runs the \
drafter with the anchor as the bonus token, so an anchor-sampling drafter drafts in a layout it was not trained for \
(a warning there). SGLang reads sample_from_anchor only for DSpark drafters (a warning). Without an engine, an \
error: the newest vLLM refuses it. The V1-runner DFlash proposer does not read the key either.",
    },
    applies: Applies::Only(&[Family::Dflash, Family::Dflash2, Family::Domino]),
    needs: &[],
    check: sample_from_anchor_dflash,
};

const SAMPLE_FROM_ANCHOR_DFLASH_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::since(
            Engine::Vllm,
            (0, 27),
            Some(Severity::Error),
            "the V2-runner DFlash speculator raises ValueError (read at 0.27.1 and 0.34.0)",
        ),
        ReleaseRow::until(
            Engine::Vllm,
            (0, 26),
            Some(Severity::Warning),
            "not read: the anchor is the bonus token",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Warning),
            "read for DSpark drafters only",
        ),
    ],
};

fn sample_from_anchor_dflash(cx: &mut Ctx) {
    let Some(node) = cx.dflash_config().and_then(|d| d.get("sample_from_anchor")) else {
        return;
    };
    if node.as_bool() != Some(true) {
        return;
    }
    let refused = cx.engine_severity() == Some(Severity::Error);
    let what = if refused {
        "vLLM's DFlash speculator refuses it (v0.27 and later)"
    } else {
        "this engine does not read it for DFlash, so the drafter runs with the anchor as the bonus token"
    };
    cx.emit_by_engine(
        &Path::key("dflash_config").child("sample_from_anchor"),
        format!(
            "`dflash_config.sample_from_anchor` is true: {what}; anchor-sampling drafters are DSpark drafters \
             (architectures DSparkDraftModel, method dspark)"
        ),
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

const DSPARK_EXPORT_LAYOUT_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Info),
    rows: &[
        // Read in the v0.25.1, v0.26.0, v0.27.1 and v0.28.0 releases.
        ReleaseRow::until(
            Engine::Vllm,
            (0, 28),
            Some(Severity::Error),
            "loads DSparkDraftModel as DeepSeek-V4's DSpark head and fails on the fields a dense drafter lacks",
        ),
        // Read in v0.29.0 to v0.34.0: model_type qwen3 is mapped to Qwen3DSparkModel (the case
        // below when markov_rank is at the top level); other model types still load as
        // DeepSeek-V4's head.
        ReleaseRow::since(
            Engine::Vllm,
            (0, 29),
            Some(Severity::Error),
            "loads a DSparkDraftModel of another model type than qwen3 as DeepSeek-V4's DSpark head",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Info),
            "its standalone DSpark loader reads the Markov settings at the top level",
        ),
    ],
};

/// A Qwen3 DSpark drafter under its training architecture's name with its Markov settings at
/// the top level: vLLM up to 0.28 loads it as DeepSeek-V4's head; from 0.29 it serves model type
/// qwen3 as Qwen3DSparkModel, which reads them there.
const DSPARK_EXPORT_LAYOUT_QWEN3: ByEngine = ByEngine {
    case: Some("model_type qwen3 with markov_rank at the top level"),
    no_engine: Some(Severity::Info),
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 28),
            Some(Severity::Error),
            "loads DSparkDraftModel as DeepSeek-V4's DSpark head and fails on the fields a dense drafter lacks",
        ),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 29),
            None,
            "serves model_type qwen3 as Qwen3DSparkModel, which reads markov_rank at the top level",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Info),
            "its standalone DSpark loader reads the Markov settings at the top level",
        ),
    ],
};

const DSPARK_EXPORT_LAYOUT: Rule = Rule {
    code: LintCode::DsparkExportLayout,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "a DSpark drafter in SpecForge's training layout (DSparkDraftModel; Markov settings only under dflash_config)",
        explanation: "SGLang's standalone DSpark loader reads `markov_rank` / `markov_head_type` at the top level \
with architectures Qwen3DSparkModel; SpecForge's normalize_dflash_export.py rewrites an exported config that way \
before serving. vLLM (v0.25.1 to v0.28.0 read) registers DSparkDraftModel as DeepSeek-V4's DSpark head: \
with method dspark and neither Qwen3DSparkModel nor Gemma4DSparkModel in architectures it rewrites model_type to \
deepseek_v4 and builds that head, which reads DeepSeek-V4 fields (hc_mult, hc_eps, dspark_target_layer_ids) a \
dense drafter's config does not have: the load fails. From v0.29.0 (read up to v0.34.0) a DSparkDraftModel config \
with model_type qwen3 is served as Qwen3DSparkModel, which reads `markov_rank` at the top level: it loads when \
the Markov settings are there, and fails when they are only under dflash_config (the training layout); other \
model types still load as DeepSeek-V4's head. So a DSparkDraftModel config whose model_type is not deepseek_v4 is \
an error with --engine vllm at every release read, except a qwen3 one with `markov_rank` at the top level from \
vLLM 0.29 on (and with --engine vllm alone, the newest release). Without an engine or under SGLang, the nested \
Markov layout is worth knowing: info.",
    },
    applies: Applies::Only(&[Family::Dspark]),
    needs: &[],
    check: dspark_export_layout,
};

fn dspark_export_layout(cx: &mut Ctx) {
    let training_arch = crate::config::architectures(cx.root)
        .iter()
        .any(|a| a == "DSparkDraftModel");
    if !training_arch {
        return;
    }
    let nested_only = ["markov_rank", "markov_head_type"].iter().any(|k| {
        cx.dflash_config().is_some_and(|d| d.get(k).is_some()) && cx.root.get(k).is_none()
    });
    // A dense drafter's model type: vLLM would take it for DeepSeek-V4's DSpark head.
    let dense = cx
        .root
        .get("model_type")
        .and_then(Node::as_str)
        .filter(|t| *t != "deepseek_v4");
    let top_level_markov = cx.root.get("markov_rank").is_some_and(|n| !n.is_null());
    // From vLLM 0.29 a qwen3 config is served as Qwen3DSparkModel, which loads when markov_rank
    // is at the top level: that case has rows of its own.
    let table = |t: &str| {
        if t == "qwen3" && top_level_markov {
            &DSPARK_EXPORT_LAYOUT_QWEN3
        } else {
            &DSPARK_EXPORT_LAYOUT_BY_ENGINE
        }
    };
    // Where the engine refuses the layout (an error: vLLM's rows); otherwise the layout's
    // portability note below.
    let refused = |t: &str| {
        cx.judge(table(t))
            .is_some_and(|j| j.severity == Severity::Error)
    };
    match dense {
        Some(t) if refused(t) => {
            let why = if t == "qwen3" {
                "vLLM up to 0.28 loads DSparkDraftModel as DeepSeek-V4's DSpark head (model_type rewritten to \
                 deepseek_v4), which needs hc_mult and the other DeepSeek-V4 fields this config lacks; from 0.29 \
                 it serves model_type qwen3 as Qwen3DSparkModel, which reads markov_rank at the top level, where \
                 this config does not have it: the load fails either way"
            } else {
                "vLLM loads DSparkDraftModel as DeepSeek-V4's DSpark head (model_type rewritten to deepseek_v4), \
                 which needs hc_mult and the other DeepSeek-V4 fields this config lacks, and the load fails (read \
                 at 0.25.1 to 0.34.0)"
            };
            cx.emit_judged(
                table(t),
                &Path::key("architectures"),
                format!(
                    "architectures DSparkDraftModel with model_type {t}: {why}; serve the exported layout \
                     (SpecForge's normalize_dflash_export.py: Qwen3DSparkModel, Markov settings at the top level)"
                ),
            );
        }
        _ if nested_only => {
            cx.emit_as(
                Severity::Info,
                &Path::key("dflash_config"),
                "Markov settings only under dflash_config with architectures DSparkDraftModel: SpecForge's training \
                 layout; SGLang's standalone DSpark loader reads them at the top level (SpecForge's \
                 normalize_dflash_export.py rewrites the config so)"
                    .to_string(),
            );
        }
        _ => {}
    }
}

const DSPARK_PROJECTOR_TYPE: Rule = Rule {
    code: LintCode::DsparkProjectorType,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a DSpark drafter whose dflash_config.projector_type is not `dspark`",
        explanation: "SpecForge's DSparkDraftModel fills in `dflash_config.projector_type` = `dspark` when it is \
absent and raises ValueError (\"DSparkDraftModel requires dflash_config.projector_type='dspark'\") when it is \
anything else, so the drafter cannot be built, trained or exported. A config that names a DSpark architecture but \
another projector (`domino`, `dflash`) mixes two families: SGLang picks Domino's code path by projector_type \
alone. Write `dspark`, or drop the key.",
    },
    applies: Applies::Only(&[Family::Dspark]),
    needs: &[],
    check: dspark_projector_type,
};

fn dspark_projector_type(cx: &mut Ctx) {
    let Some(node) = cx.dflash_config().and_then(|d| d.get("projector_type")) else {
        return;
    };
    // SpecForge tests `is None`: a JSON null means "absent" there.
    if node.is_null() || node.as_str() == Some("dspark") {
        return;
    }
    let path = Path::key("dflash_config").child("projector_type");
    cx.emit(
        &path,
        format!(
            "`{path}` is {} in a DSpark drafter: SpecForge's DSparkDraftModel raises \
             \"DSparkDraftModel requires dflash_config.projector_type='dspark'\"",
            super::describe(node)
        ),
    )
    .expected = Some("dspark".into());
}

const DSPARK_MARKOV: Rule = Rule {
    code: LintCode::DsparkMarkov,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "DSpark Markov head or attention settings that SpecForge refuses, or no Markov head at all",
        explanation: "DSpark corrects each drafted token with a low-rank Markov head (`markov_rank`, \
`markov_head_type`), read at the top level (SGLang's standalone DSpark loader) or under `dflash_config` \
(SpecForge). Errors, where SpecForge cannot build the drafter: a positive markov_rank with a markov_head_type other \
than vanilla, gated or rnn (build_markov_head raises \"Unsupported markov_head_type\"); \
`confidence_head_with_markov` true without a positive markov_rank; the two places disagreeing \
(normalize_dflash_export.py raises \"DSpark config conflict\"); `dflash_config.attention_mode` other than gqa or \
mha (default gqa), gqa with num_key_value_heads >= num_attention_heads, mha with them unequal, or \
num_key_value_heads not dividing num_attention_heads (DSparkDraftModel raises). A warning when markov_rank is \
absent or 0: SpecForge then trains a drafter without a Markov head, but its normalize_dflash_export.py refuses to \
export one for SGLang (\"DSpark export requires a positive integer markov_rank\") and vLLM refuses it for \
Qwen3-Omni; every published DSpark template sets 256. The rank and head type are read where SGLang 0.5.23's \
parse_dspark_draft_config reads them (the top level, `dspark_<key>`, `dflash_config`, `dspark_config`, \
`text_config`). A DSpark head embedded in a DeepSeek-V4 config (`dspark_*` keys) without a positive rank is an \
error: SGLang's DeepSeek-V4 DSpark model raises \"DSpark V4 draft requires markov_rank > 0\" and vLLM's builds its \
Markov head from config.dspark_markov_rank. The head-count clauses are SpecForge's DSparkDraftModel's and apply only \
to heads it builds: not to embedded DeepSeek-V4 heads nor to other trainers' MLA heads (`kv_lora_rank`). (A \
negative or non-integer markov_rank is field-type's.)",
    },
    applies: Applies::Only(&[Family::Dspark]),
    needs: &[],
    check: dspark_markov,
};

/// A DSpark setting, from the top level or DeepSeek-V4's embedded `dspark_<key>`, else
/// `dflash_config`, `dspark_config` or `text_config` — every place SGLang 0.5.23's
/// parse_dspark_draft_config reads it (nulls count as absent).
fn dspark_setting<'a>(cx: &Ctx<'a>, key: &str) -> Option<(Path, &'a Node)> {
    let embedded = format!("dspark_{key}");
    let found = [key, embedded.as_str()].into_iter().find_map(|k| {
        cx.root
            .get(k)
            .filter(|n| !n.is_null())
            .map(|n| (Path::key(k), n))
    });
    found.or_else(|| {
        ["dflash_config", "dspark_config", "text_config"]
            .into_iter()
            .find_map(|outer| {
                cx.root
                    .get(outer)
                    .and_then(|d| d.get(key))
                    .filter(|n| !n.is_null())
                    .map(|n| (Path::key(outer).child(key), n))
            })
    })
}

/// An MLA head (`kv_lora_rank`, DeepSeek style): SpecForge's GQA/MHA head-count rule is about
/// its own attention and says nothing about it.
fn mla_head(cx: &Ctx) -> bool {
    cx.root.get("kv_lora_rank").is_some_and(|n| !n.is_null())
}

fn dspark_markov(cx: &mut Ctx) {
    markov_conflicts(cx);
    let rank = dspark_setting(cx, "markov_rank");
    // A negative or non-integer rank is field-type's: nothing more to say about the head.
    let rank_is_integer = rank.as_ref().is_none_or(|(_, n)| n.as_u64().is_some());
    if rank_is_integer {
        match rank.as_ref().and_then(|(_, n)| n.as_u64()) {
            Some(r) if r > 0 => markov_head_type(cx),
            _ => no_markov_head(cx, rank.map(|(p, _)| p)),
        }
    }
    // The head-count clause is SpecForge's DSparkDraftModel's (dspark.py): a DeepSeek-V4
    // head embedded in its target, or another trainer's MLA head, is not built by it.
    if !cx.embedded_dspark() && !mla_head(cx) {
        attention_mode(cx);
    }
}

/// `markov_rank` absent or 0: no Markov head.
fn no_markov_head(cx: &mut Ctx, at: Option<Path>) {
    let default = if cx.embedded_dspark() {
        "dspark_markov_rank"
    } else {
        "markov_rank"
    };
    let path = at.unwrap_or_else(|| Path::key(default));
    let with_markov = cx
        .dflash_config()
        .and_then(|d| d.get("confidence_head_with_markov"))
        .and_then(Node::as_bool)
        == Some(true);
    if cx.embedded_dspark() {
        // DeepSeek-V4's DSpark head: both engines build its Markov head from the rank and refuse
        // the checkpoint without one; SpecForge and the standalone loader are not involved.
        cx.emit(
            &path,
            "no positive `dspark_markov_rank` for the DSpark head embedded in this DeepSeek-V4 config: SGLang \
             raises \"DSpark V4 draft requires markov_rank > 0\" and vLLM's DeepSeek-V4 DSpark head reads \
             config.dspark_markov_rank to build its Markov head; write the rank the head was trained with"
                .to_string(),
        );
    } else if with_markov {
        cx.emit(
            &path,
            "no positive `markov_rank` but `dflash_config.confidence_head_with_markov` is true: SpecForge raises \
             \"confidence_head_with_markov=True requires markov_rank > 0\""
                .to_string(),
        );
    } else {
        cx.emit_as(
            Severity::Warning,
            &path,
            "no Markov head (`markov_rank` absent or 0): SGLang's standalone DSpark loader needs a positive \
             markov_rank (SpecForge's normalize_dflash_export.py refuses to export without one); vLLM refuses it \
             for Qwen3-Omni"
                .to_string(),
        );
    }
}

/// The same Markov setting at the top level and under `dflash_config`, with different values.
fn markov_conflicts(cx: &mut Ctx) {
    for key in ["markov_rank", "markov_head_type"] {
        let top = cx.root.get(key).filter(|n| !n.is_null());
        let nested = cx
            .dflash_config()
            .and_then(|d| d.get(key))
            .filter(|n| !n.is_null());
        if let (Some(t), Some(n)) = (top, nested) {
            // Python's `!=`: 256 == 256.0.
            let same = match (t.as_number(), n.as_number()) {
                (Some(a), Some(b)) => a.same_value(b),
                _ => t.to_serde() == n.to_serde(),
            };
            if !same {
                cx.emit(
                    &Path::key(key),
                    format!(
                        "`{key}` is {} at the top level but {} in `dflash_config`: SpecForge trains with the \
                         `dflash_config` value, SGLang's DSpark loader reads the top level, and SpecForge's \
                         normalize_dflash_export.py raises \"DSpark config conflict\"",
                        super::describe(t),
                        super::describe(n)
                    ),
                );
            }
        }
    }
}

fn markov_head_type(cx: &mut Ctx) {
    // Absent: SpecForge builds the vanilla head.
    let Some((path, node)) = dspark_setting(cx, "markov_head_type") else {
        return;
    };
    let known = ["vanilla", "gated", "rnn"];
    match node.as_str() {
        Some(t) if known.contains(&t.to_ascii_lowercase().as_str()) => {}
        _ => {
            cx.emit(
                &path,
                format!(
                    "`{path}` is {}: SpecForge's build_markov_head raises \"Unsupported markov_head_type\" \
                     (vanilla, gated or rnn)",
                    super::describe(node)
                ),
            );
        }
    }
}

/// `dflash_config.attention_mode` against the head counts, as DSparkDraftModel checks them.
fn attention_mode(cx: &mut Ctx) {
    let heads = cx
        .root
        .get("num_attention_heads")
        .and_then(|n| positive_int(n).ok());
    let kv = cx
        .root
        .get("num_key_value_heads")
        .and_then(|n| positive_int(n).ok());
    let at = Path::key("dflash_config").child("attention_mode");
    // SpecForge: str(dflash_config.get("attention_mode", "gqa")).lower(); an explicit null
    // becomes "none", which it refuses.
    let mode = match cx.dflash_config().and_then(|d| d.get("attention_mode")) {
        None => "gqa".to_string(),
        Some(n) => match n.as_str() {
            Some(s) => s.to_ascii_lowercase(),
            None => {
                cx.emit(
                    &at,
                    format!(
                        "`{at}` is {}: SpecForge's DSparkDraftModel requires 'gqa' or 'mha'",
                        super::describe(n)
                    ),
                );
                return;
            }
        },
    };
    if mode != "gqa" && mode != "mha" {
        cx.emit(
            &at,
            format!(
                "`{at}` is {}: SpecForge's DSparkDraftModel requires 'gqa' or 'mha'",
                crate::json::quote(&mode)
            ),
        );
        return;
    }
    let (Some(heads), Some(kv)) = (heads, kv) else {
        return;
    };
    let kv_path = Path::key("num_key_value_heads");
    if heads % kv != 0 {
        cx.emit(
            &kv_path,
            format!(
                "num_key_value_heads {kv} does not divide num_attention_heads {heads}: SpecForge's DSparkDraftModel \
                 raises \"DSpark requires num_key_value_heads to divide num_attention_heads\""
            ),
        );
    } else if mode == "gqa" && kv >= heads {
        cx.emit(
            &kv_path,
            format!(
                "attention_mode is gqa (the default) but num_key_value_heads {kv} >= num_attention_heads {heads}: \
                 SpecForge's DSparkDraftModel raises; set `dflash_config.attention_mode` to \"mha\" if the drafter \
                 was trained with equal head counts"
            ),
        );
    } else if mode == "mha" && kv != heads {
        cx.emit(
            &kv_path,
            format!(
                "attention_mode is mha but num_key_value_heads {kv} != num_attention_heads {heads}: SpecForge's \
                 DSparkDraftModel raises \"DSpark MHA opt-in requires num_key_value_heads == num_attention_heads\""
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::config;
    use crate::rules::{lint, LintOptions};
    use crate::target::TargetContext;

    /// `(code, severity, path)` of every finding of the DSpark and DFlash2 rules on `text`.
    fn found(text: &str) -> Vec<(String, String, String)> {
        let cfg = config::parse(std::path::Path::new("config.json"), text.as_bytes()).unwrap();
        let report = lint(&cfg, &LintOptions::default(), &TargetContext::none()).unwrap();
        report
            .findings
            .iter()
            .filter(|d| {
                let c = d.code.as_str();
                // dspark-export-layout (an info about SpecForge's layout) and the export-default
                // rule about sample_from_anchor (rules::export) are not under test here.
                c != "dspark-export-layout"
                    && c != "dspark-sample-from-anchor-implicit"
                    && (c.starts_with("dspark-")
                        || c.starts_with("conv-selector")
                        || c == "field-type")
            })
            .map(|d| {
                (
                    d.code.as_str().to_string(),
                    d.severity.as_str().to_string(),
                    d.path.clone(),
                )
            })
            .collect()
    }

    fn f(code: &str, severity: &str, path: &str) -> (String, String, String) {
        (code.into(), severity.into(), path.into())
    }

    /// The Qwen3-8B DSpark template's settings, which SpecForge accepts.
    const DSPARK: &str = r#""architectures": ["DSparkDraftModel"], "block_size": 7, "num_attention_heads": 32,
        "num_key_value_heads": 8"#;

    /// SpecForge's own template fires nothing; a DSpark architecture with another projector,
    /// a bad head type, a missing rank and bad head counts each fire, with SpecForge's severity.
    #[test]
    fn dspark_settings_follow_specforge() {
        let ok = format!(
            r#"{{{DSPARK}, "dflash_config": {{"attention_mode": "gqa", "markov_head_type": "vanilla",
            "markov_rank": 256, "projector_type": "dspark", "confidence_head_with_markov": true}}}}"#
        );
        assert_eq!(found(&ok), vec![]);
        let domino = format!(
            r#"{{{DSPARK}, "markov_rank": 256, "dflash_config": {{"projector_type": "domino"}}}}"#
        );
        assert_eq!(
            found(&domino),
            vec![f(
                "dspark-projector-type",
                "error",
                "dflash_config.projector_type"
            )]
        );
        let null_projector = format!(
            r#"{{{DSPARK}, "markov_rank": 256, "dflash_config": {{"projector_type": null}}}}"#
        );
        assert_eq!(found(&null_projector), vec![]);
        let head = format!(r#"{{{DSPARK}, "markov_rank": 256, "markov_head_type": "LSTM"}}"#);
        assert_eq!(
            found(&head),
            vec![f("dspark-markov", "error", "markov_head_type")]
        );
        // Case is ignored, as SpecForge lowercases it.
        let upper = format!(r#"{{{DSPARK}, "markov_rank": 256, "markov_head_type": "Gated"}}"#);
        assert_eq!(found(&upper), vec![]);
        // No rank: SpecForge trains without a Markov head, the export for SGLang refuses.
        assert_eq!(
            found(&format!("{{{DSPARK}}}")),
            vec![f("dspark-markov", "warning", "markov_rank")]
        );
        // A head type with no rank is ignored by SpecForge: only the missing head is said.
        let zero = format!(
            r#"{{{DSPARK}, "dflash_config": {{"markov_rank": 0, "markov_head_type": "lstm"}}}}"#
        );
        assert_eq!(
            found(&zero),
            vec![f("dspark-markov", "warning", "dflash_config.markov_rank")]
        );
        let with_markov =
            format!(r#"{{{DSPARK}, "dflash_config": {{"confidence_head_with_markov": true}}}}"#);
        assert_eq!(
            found(&with_markov),
            vec![f("dspark-markov", "error", "markov_rank")]
        );
        let negative = format!(r#"{{{DSPARK}, "markov_rank": -1}}"#);
        assert_eq!(
            found(&negative),
            vec![f("field-type", "error", "markov_rank")]
        );
        let conflict =
            format!(r#"{{{DSPARK}, "markov_rank": 128, "dflash_config": {{"markov_rank": 256}}}}"#);
        assert_eq!(
            found(&conflict),
            vec![f("dspark-markov", "error", "markov_rank")]
        );
    }

    /// Issue 32: SpecForge's head-count clause is not applied to heads SpecForge does not build
    /// (another trainer's MLA head, DeepSeek-V4's embedded head), and the Markov rank is read
    /// where SGLang reads it before "no Markov head" is said.
    #[test]
    fn dspark_rules_of_specforge_stay_with_specforge_heads() {
        // MLA: 32 heads and 32 KV heads (DeepSeek style), no attention_mode.
        let mla = r#"{"architectures": ["DSparkDraftModel"], "markov_rank": 256, "num_attention_heads": 32,
            "num_key_value_heads": 32, "kv_lora_rank": 512, "q_lora_rank": 1536}"#;
        assert_eq!(found(mla), vec![]);
        let embedded = |extra: &str| {
            format!(
                r#"{{"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4",
                "num_attention_heads": 64, "num_key_value_heads": 64, "dspark_block_size": 5,
                "dspark_target_layer_ids": [40, 41, 42]{extra}}}"#
            )
        };
        assert_eq!(found(&embedded(r#", "dspark_markov_rank": 256"#)), vec![]);
        // SGLang 0.5.23 also reads the rank from dspark_config and text_config.
        assert_eq!(
            found(&embedded(r#", "dspark_config": {"markov_rank": 256}"#)),
            vec![]
        );
        assert_eq!(
            found(&embedded(r#", "text_config": {"markov_rank": 256}"#)),
            vec![]
        );
        // No rank anywhere: both engines refuse the embedded head (not SpecForge's warning).
        assert_eq!(
            found(&embedded("")),
            vec![f("dspark-markov", "error", "dspark_markov_rank")]
        );
    }

    /// DSparkDraftModel's attention checks: gqa needs fewer KV heads, mha equal ones, and the
    /// KV heads must divide the heads.
    #[test]
    fn dspark_attention_mode_follows_the_head_counts() {
        let cfg = |mode: &str, heads: u64, kv: u64| {
            format!(
                r#"{{"architectures": ["DSparkDraftModel"], "markov_rank": 256, "num_attention_heads": {heads},
                "num_key_value_heads": {kv}, "dflash_config": {{{mode}}}}}"#
            )
        };
        assert_eq!(found(&cfg("", 32, 8)), vec![]);
        assert_eq!(found(&cfg(r#""attention_mode": "MHA""#, 32, 32)), vec![]);
        let kv = f("dspark-markov", "error", "num_key_value_heads");
        assert_eq!(found(&cfg("", 32, 32)), vec![kv.clone()]);
        assert_eq!(
            found(&cfg(r#""attention_mode": "mha""#, 32, 8)),
            vec![kv.clone()]
        );
        assert_eq!(found(&cfg("", 32, 12)), vec![kv]);
        assert_eq!(
            found(&cfg(r#""attention_mode": "mqa""#, 32, 8)),
            vec![f("dspark-markov", "error", "dflash_config.attention_mode")]
        );
        assert_eq!(
            found(&cfg(r#""attention_mode": null"#, 32, 8)),
            vec![f("dspark-markov", "error", "dflash_config.attention_mode")]
        );
    }

    /// SGLang reads the conv/selector pairs from dflash_config only, 0 meaning unset; a key at
    /// the top level is ignored, which is a warning of its own.
    #[test]
    fn conv_selector_pairs_are_read_where_sglang_reads_them() {
        let base = r#""architectures": ["DFlash2DraftModel"], "block_size": 16"#;
        let both = format!(
            r#"{{{base}, "dflash_config": {{"conv_kernel_size": 4, "conv_group_size": 4}}}}"#
        );
        assert_eq!(found(&both), vec![]);
        let zero =
            format!(r#"{{{base}, "dflash_config": {{"selector_rank": 0, "selector_top_k": 8}}}}"#);
        assert_eq!(
            found(&zero),
            vec![f(
                "conv-selector-pair",
                "error",
                "dflash_config.selector_top_k"
            )]
        );
        let top = format!(
            r#"{{{base}, "conv_kernel_size": 4, "dflash_config": {{"conv_group_size": 4}}}}"#
        );
        assert_eq!(
            found(&top),
            vec![
                f(
                    "conv-selector-pair",
                    "error",
                    "dflash_config.conv_group_size"
                ),
                f("conv-selector-top-level", "warning", "conv_kernel_size"),
            ]
        );
        let both_top = format!(
            r#"{{{base}, "selector_rank": 64, "selector_top_k": 8, "conv_group_size": 0}}"#
        );
        assert_eq!(
            found(&both_top),
            vec![
                f("conv-selector-top-level", "warning", "selector_rank"),
                f("conv-selector-top-level", "warning", "selector_top_k"),
            ]
        );
    }
}
