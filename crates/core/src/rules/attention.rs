//! Attention layout of the draft layers: `layer_types`, `sliding_window`, `use_sliding_window`,
//! and MiMo-style `dflash_config.use_swa` / `swa_window_size`. Running sliding layers as full
//! attention crashes nothing and collapses acceptance past about 2k tokens of context.

use super::{positive_int, Applies, ByEngine, Ctx, Engine, Family, LintCode, ReleaseRow, Rule};
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{Node, Path};

/// The rules here whose severity follows the engine and its version.
pub(super) const BY_ENGINE: &[(LintCode, &ByEngine)] = &[
    (LintCode::LayerTypesUnknown, &LAYER_TYPES_UNKNOWN_BY_ENGINE),
    (LintCode::DflashUseSwa, &DFLASH_USE_SWA_BY_ENGINE),
    (LintCode::SlidingWindowMissing, &SWA_WINDOW_SIZE_ONLY),
    (
        LintCode::UseSlidingWindowInconsistent,
        &WINDOW_FROM_SWA_WINDOW_SIZE,
    ),
];

pub(super) const RULES: &[Rule] = &[
    LAYER_TYPES_MISSING,
    LAYER_TYPES_LENGTH,
    LAYER_TYPES_UNKNOWN,
    SLIDING_WINDOW_MISSING,
    DFLASH_USE_SWA,
    USE_SLIDING_WINDOW_INCONSISTENT,
];

const KNOWN: &[&str] = &["full_attention", "sliding_attention"];

/// The object holding the layer settings (speculators nests them) and its path.
fn base<'a>(cx: &Ctx<'a>) -> (&'a Node, Path) {
    match cx.root.get("transformer_layer_config") {
        Some(t) if cx.detection.name == Family::Speculators && t.as_object().is_some() => {
            (t, Path::key("transformer_layer_config"))
        }
        _ => (cx.root, Path::root()),
    }
}

/// `dflash_config.use_swa`, when true: vLLM then runs every draft layer as sliding attention.
fn use_swa(cx: &Ctx) -> bool {
    cx.dflash_config()
        .and_then(|d| d.get("use_swa"))
        .and_then(Node::as_bool)
        == Some(true)
}

/// The window a sliding layer gets: `sliding_window`, else `dflash_config.swa_window_size`
/// (both engines accept either).
fn window<'a>(cx: &Ctx<'a>, base: &'a Node, base_path: &Path) -> Option<(Path, &'a Node)> {
    base.get("sliding_window")
        .filter(|n| !n.is_null())
        .map(|n| (base_path.child("sliding_window"), n))
        .or_else(|| {
            cx.dflash_config()
                .and_then(|d| d.get("swa_window_size"))
                .filter(|n| !n.is_null())
                .map(|n| (Path::key("dflash_config").child("swa_window_size"), n))
        })
}

/// Counts of (sliding, full) entries in `layer_types`, when it is a list.
pub(super) fn counts(types: &Node) -> Option<(usize, usize)> {
    let items = types.as_array()?;
    let sliding = items
        .iter()
        .filter(|n| n.as_str() == Some("sliding_attention"))
        .count();
    let full = items
        .iter()
        .filter(|n| n.as_str() == Some("full_attention"))
        .count();
    Some((sliding, full))
}

pub(super) fn layer_types(base: &Node) -> Option<&Node> {
    base.get("layer_types").filter(|n| !n.is_null())
}

const LAYER_TYPES_MISSING: Rule = Rule {
    code: LintCode::LayerTypesMissing,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "layer_types is absent: loaders silently derive it",
        explanation: "Without `layer_types`, transformers derives it from use_sliding_window, sliding_window and \
max_window_layers (sliding from layer max_window_layers on); with z-lab's max_window_layers == num_hidden_layers \
that silently means all full attention. If the drafter was trained with sliding layers (z-lab/Qwen3.6-27B-DFlash: \
4 sliding + 1 full), acceptance collapses past about 2k tokens of context (AEON-7/Qwen3.6-27B-DFlash#6). vLLM and \
SGLang read only layer_types, so they run all layers full; configs with `dflash_config.use_swa` run every layer \
sliding in vLLM and full in SGLang. Write the list explicitly. (Not said for a DSpark head embedded in a \
DeepSeek-V4 checkpoint: it is built from the target's own attention settings.)",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: layer_types_missing,
};

fn layer_types_missing(cx: &mut Ctx) {
    let (base, base_path) = base(cx);
    // A DSpark head inside a DeepSeek-V4 checkpoint is built from the target's own attention
    // settings: a DFlash-style layer_types list does not apply to it.
    if layer_types(base).is_some() || cx.embedded_dspark() {
        return;
    }
    let path = base_path.child("layer_types");
    if use_swa(cx) {
        cx.emit(
            &path,
            "`layer_types` is absent: vLLM runs every draft layer with a sliding window (dflash_config.use_swa), \
             SGLang and SpecForge run them all as full attention (they read only layer_types); engines run \
             different drafters"
                .to_string(),
        );
        return;
    }
    let layers = base
        .get("num_hidden_layers")
        .and_then(|n| positive_int(n).ok());
    let use_sw = base.get("use_sliding_window").and_then(Node::as_bool);
    let max_window = base
        .get("max_window_layers")
        .and_then(|n| positive_int(n).ok());
    let derived = match (use_sw, layers, max_window) {
        (Some(true), Some(l), Some(m)) if m < l => {
            format!("{m} × full_attention then {} × sliding_attention", l - m)
        }
        (Some(true), Some(_), None) => "sliding layers from max_window_layers on".to_string(),
        _ => "all full_attention".to_string(),
    };
    let message = if use_sw == Some(true) {
        format!(
            "`layer_types` is absent: transformers derives it from use_sliding_window and max_window_layers \
             (here {derived}), but vLLM and SGLang run all layers as full attention"
        )
    } else {
        "`layer_types` is absent: every engine runs all layers as full attention; if the drafter was trained \
         with sliding layers, acceptance collapses past the window"
            .to_string()
    };
    cx.emit(&path, message);
}

const LAYER_TYPES_LENGTH: Rule = Rule {
    code: LintCode::LayerTypesLength,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "len(layer_types) differs from num_hidden_layers",
        explanation: "layer_types has one entry per draft layer. SpecForge's DFlash config check refuses a \
different length; engines that build layer i from layer_types[i] index past a short list or ignore the tail of a \
long one.",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: layer_types_length,
};

fn layer_types_length(cx: &mut Ctx) {
    let (base, base_path) = base(cx);
    let Some(types) = layer_types(base) else {
        return;
    };
    let path = base_path.child("layer_types");
    let Some(items) = types.as_array() else {
        cx.emit_type(
            &path,
            format!(
                "`{path}` is {}; it must be a list with one entry per draft layer",
                super::describe(types)
            ),
        );
        return;
    };
    let layers = base
        .get("num_hidden_layers")
        .and_then(|n| positive_int(n).ok());
    if let Some(l) = layers.filter(|&l| l != items.len() as u64) {
        cx.emit(
            &path,
            format!(
                "`{path}` has {} entries but num_hidden_layers is {l}",
                items.len()
            ),
        );
    }
}

const LAYER_TYPES_UNKNOWN: Rule = Rule {
    code: LintCode::LayerTypesUnknown,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a layer_types entry is neither full_attention nor sliding_attention",
        explanation: "The only values DFlash loaders know are `full_attention` and `sliding_attention`. \
SpecForge's config check refuses anything else, so no drafter with such a value was trained there. vLLM does not \
refuse it: _resolve_layer_attention tests `layer_types[i] == \"sliding_attention\"` and runs every other value as \
full attention, so a layer meant as something else runs as full attention, silently. SGLang's DFlash model \
refuses it in its newer versions (\"Unsupported DFLASH draft layer type\"; at 7f151c5 it did not read layer_types \
at all). An error without an engine and with --engine sglang, a warning with --engine vllm (it loads and runs the \
layer as full attention).",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: layer_types_unknown,
};

const LAYER_TYPES_UNKNOWN_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "raises ValueError for an unsupported layer type (read at 0.5.23)",
        ),
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Warning),
            "runs an unknown value as full attention",
        ),
    ],
};

fn layer_types_unknown(cx: &mut Ctx) {
    let (base, base_path) = base(cx);
    let Some(items) = layer_types(base).and_then(Node::as_array) else {
        return;
    };
    let Some(severity) = cx.engine_severity() else {
        return;
    };
    let path = base_path.child("layer_types");
    for (i, item) in items.iter().enumerate() {
        if !item.as_str().is_some_and(|s| KNOWN.contains(&s)) {
            cx.emit_as(
                severity,
                &path.index(i),
                format!(
                    "`{}` is {}; the known values are {} (SpecForge refuses others, vLLM runs them as full \
                     attention)",
                    path.index(i),
                    super::describe(item),
                    KNOWN.join(" and ")
                ),
            );
        }
    }
}

const SLIDING_WINDOW_MISSING: Rule = Rule {
    code: LintCode::SlidingWindowMissing,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "sliding layers without a positive window",
        explanation: "A sliding layer needs its window: `sliding_window`, or `dflash_config.swa_window_size`, \
which both engines also accept. vLLM's _resolve_layer_attention and SGLang's \
get_dflash_attention_sliding_window_size raise ValueError without one, and SpecForge requires it positive. \
z-lab/Qwen3.6-27B-DFlash uses 2048.",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: sliding_window_missing,
};

/// Sliding layers whose window is only `dflash_config.swa_window_size`: what each engine reads.
const SWA_WINDOW_SIZE_ONLY: ByEngine = ByEngine {
    case: Some("the window is only `dflash_config.swa_window_size` (no `sliding_window`)"),
    // llama.cpp reads GGUF metadata, not config.json: the statement for every engine that does.
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(Engine::Vllm, None, "reads swa_window_size"),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "reads only sliding_window and raises ValueError",
        ),
    ],
};

fn sliding_window_missing(cx: &mut Ctx) {
    let (base, base_path) = base(cx);
    let sliding = layer_types(base).and_then(counts).map_or(0, |(s, _)| s);
    let swa = use_swa(cx);
    if sliding == 0 && !swa {
        return;
    }
    let why = if swa {
        "`dflash_config.use_swa` is true (every layer sliding in vLLM)".to_string()
    } else {
        format!("{sliding} sliding_attention layers")
    };
    match window(cx, base, &base_path) {
        None => {
            cx.emit(
                &base_path.child("sliding_window"),
                format!(
                    "{why} but neither `sliding_window` nor `dflash_config.swa_window_size` is set: vLLM and \
                     SGLang raise ValueError"
                ),
            );
        }
        Some((path, node)) => {
            if let Err(what) = positive_int(node) {
                cx.emit(
                    &path,
                    format!("{why} but `{path}` is {what}; it must be a positive window size"),
                );
            } else if !swa && path.last_key() == Some("swa_window_size") {
                // vLLM reads swa_window_size; SGLang reads only sliding_window.
                cx.emit_judged(
                    &SWA_WINDOW_SIZE_ONLY,
                    &base_path.child("sliding_window"),
                    format!(
                        "{why} and only `dflash_config.swa_window_size`: vLLM reads it, SGLang reads only \
                         `sliding_window` and raises ValueError"
                    ),
                );
            }
        }
    };
}

const DFLASH_USE_SWA: Rule = Rule {
    code: LintCode::DflashUseSwa,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "dflash_config.use_swa makes every layer sliding in vLLM, but layer_types lists full layers",
        explanation: "MiMo-style drafters set `dflash_config.use_swa` (with `swa_window_size`). vLLM's DFlash model \
then runs every draft layer as sliding attention when layer_types lists no sliding layer, even layers it calls \
full_attention, while loaders that read layer_types run those layers full: the engines run different drafters. \
NVIDIA Model-Optimizer exports SWA drafters exactly so on purpose (PR 1960: use_swa + swa_window_size with layer_types \
left all full_attention, to match vLLM's _resolve_layer_attention), so for vLLM the layout is right: info with \
--engine vllm, a portability warning otherwise (SGLang and the z-lab reference read layer_types). For other engines \
make layer_types say sliding_attention for every layer, as the drafter was trained.",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: use_swa_rule,
};

fn use_swa_rule(cx: &mut Ctx) {
    if let Some(node) = cx.dflash_config().and_then(|d| d.get("use_swa")) {
        if node.as_bool().is_none() && !node.is_null() {
            let path = Path::key("dflash_config").child("use_swa");
            cx.emit_type(
                &path,
                format!(
                    "`{path}` is {}; it must be a boolean",
                    super::describe(node)
                ),
            );
            return;
        }
    }
    if !use_swa(cx) {
        return;
    }
    let (base, base_path) = base(cx);
    let Some((_, full)) = layer_types(base).and_then(counts) else {
        return;
    };
    if full > 0 {
        cx.emit_by_engine(
            &base_path.child("layer_types"),
            format!(
                "`dflash_config.use_swa` is true, so vLLM runs all layers sliding, but layer_types lists {full} \
                 full_attention layers that other loaders run full (Model-Optimizer exports this layout for vLLM on \
                 purpose)"
            ),
        );
    }
}

const USE_SLIDING_WINDOW_INCONSISTENT: Rule = Rule {
    code: LintCode::UseSlidingWindowInconsistent,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "use_sliding_window disagrees with layer_types",
        explanation: "vLLM's and SGLang's DFlash paths read layer_types and sliding_window, not \
use_sliding_window, but they read them from the config object transformers builds, and transformers' Qwen2, \
Qwen3 and Qwen3-MoE config classes set sliding_window to None when use_sliding_window is false (and derive \
layer_types from the flag when the list is absent). So a `qwen2`/`qwen3`/`qwen3_moe` drafter with \
use_sliding_window false and sliding_attention layers has no window: vLLM raises \"DFlash sliding attention \
requires a window size\" unless dflash_config.swa_window_size gives one, SGLang raises \"DFLASH \
sliding_attention layers require config.sliding_window\", and z-lab's reference (transformers) runs those \
layers as full attention: an error (info under --engine vllm when swa_window_size is set). Other model types keep \
sliding_window, so there the flag only makes readers disagree (info), as does a true flag with every layer full. \
The published configs keep them consistent (Qwen3.6-27B: true with 4 sliding layers; Qwen3.5-27B: false, all \
full).",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: use_sliding_window_inconsistent,
};

/// A drafter whose config class drops `sliding_window`, with `dflash_config.swa_window_size`
/// set: vLLM takes the window from it, SGLang does not.
const WINDOW_FROM_SWA_WINDOW_SIZE: ByEngine = ByEngine {
    case: Some("the config class drops sliding_window and dflash_config.swa_window_size is set"),
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Info),
            "takes dflash_config.swa_window_size before sliding_window",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "reads only sliding_window and raises ValueError",
        ),
    ],
};

/// Model types whose transformers config class drops `sliding_window` when `use_sliding_window`
/// is false (transformers 5.25.0: configuration_qwen2.py, configuration_qwen3.py,
/// configuration_qwen3_moe.py), so the engines, which read the config through it, see no window.
const DROPS_WINDOW_WITHOUT_FLAG: &[&str] = &["qwen2", "qwen3", "qwen3_moe"];

fn use_sliding_window_inconsistent(cx: &mut Ctx) {
    let (base, base_path) = base(cx);
    let Some(use_sw) = base.get("use_sliding_window").and_then(Node::as_bool) else {
        return;
    };
    let Some((sliding, full)) = layer_types(base).and_then(counts) else {
        return;
    };
    let path = base_path.child("use_sliding_window");
    if !use_sw && sliding > 0 {
        let model_type = base
            .get("model_type")
            .and_then(Node::as_str)
            .filter(|t| DROPS_WINDOW_WITHOUT_FLAG.contains(t));
        let (severity, message) = match model_type {
            Some(t) => {
                // vLLM takes dflash_config.swa_window_size before sliding_window; SGLang does not.
                let vllm_window = cx
                    .dflash_config()
                    .is_some_and(|d| d.get("swa_window_size").is_some_and(|n| !n.is_null()));
                let severity = if vllm_window {
                    cx.judge(&WINDOW_FROM_SWA_WINDOW_SIZE)
                        .map_or(Severity::Error, |j| j.severity)
                } else {
                    Severity::Error
                };
                (
                    severity,
                    format!(
                        "use_sliding_window is false but layer_types has {sliding} sliding_attention layers: \
                         transformers' {t} config then drops sliding_window, so vLLM and SGLang find no window \
                         for those layers and refuse the drafter (z-lab's reference runs them as full attention)"
                    ),
                )
            }
            None => (
                Severity::Info,
                format!(
                    "use_sliding_window is false but layer_types has {sliding} sliding_attention layers: readers \
                     that derive attention from the flag run them as full attention"
                ),
            ),
        };
        cx.emit_as(severity, &path, message).expected = Some(true.into());
    } else if use_sw && sliding == 0 && full > 0 && !use_swa(cx) {
        cx.emit_as(
            Severity::Info,
            &path,
            "use_sliding_window is true but every layer_types entry is full_attention".to_string(),
        )
        .expected = Some(false.into());
    }
}

const DFLASH_USE_SWA_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Info),
            "runs every layer sliding, as the export intends",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Warning),
            "follows layer_types: the full layers run full",
        ),
    ],
};
