//! Attention layout of the draft layers: `layer_types`, `sliding_window`, `use_sliding_window`.
//! Running sliding layers as full attention crashes nothing and collapses acceptance past about
//! 2k tokens of context.

use super::{positive_int, Ctx, Engine, Family, Needs, Rule, Severity};
use crate::json::{Node, Path};

pub const RULES: &[Rule] = &[
    Rule {
        code: "layer-types-missing",
        severity: Severity::Warning,
        needs: Needs::Config,
        summary: "layer_types is absent: loaders silently derive it",
        explanation: "Without `layer_types`, transformers derives it from use_sliding_window, sliding_window and \
max_window_layers (sliding from layer max_window_layers on); with z-lab's max_window_layers == num_hidden_layers \
that silently means all full attention. If the drafter was trained with sliding layers (z-lab/Qwen3.6-27B-DFlash: \
4 sliding + 1 full), acceptance collapses past about 2k tokens of context. Write the list explicitly.",
        source: "transformers Qwen3Config; vLLM PR 40898; ik_llama.cpp PR 2021",
    },
    Rule {
        code: "layer-types-length",
        severity: Severity::Error,
        needs: Needs::Config,
        summary: "len(layer_types) differs from num_hidden_layers",
        explanation: "layer_types has one entry per draft layer. SpecForge refuses a different length; other \
loaders index past the list or ignore its tail.",
        source: "sgl-project/SpecForge specforge/modeling/draft/dflash.py",
    },
    Rule {
        code: "layer-types-unknown",
        severity: Severity::Error,
        needs: Needs::Config,
        summary: "a layer_types entry is neither full_attention nor sliding_attention",
        explanation: "The only values loaders know are `full_attention` and `sliding_attention` (SpecForge \
enforces it); anything else is rejected or treated as full attention depending on the engine.",
        source: "sgl-project/SpecForge specforge/modeling/draft/dflash.py; transformers layer_types validation",
    },
    Rule {
        code: "sliding-window-missing",
        severity: Severity::Error,
        needs: Needs::Config,
        summary: "a sliding_attention layer without a positive sliding_window",
        explanation: "A sliding layer needs its window: vLLM and SGLang refuse a sliding layer without \
`sliding_window`, and SpecForge requires it positive. z-lab/Qwen3.6-27B-DFlash uses 2048.",
        source: "vLLM qwen3_dflash.py; SGLang dflash; SpecForge config checks",
    },
    Rule {
        code: "use-sliding-window-inconsistent",
        severity: Severity::Warning,
        needs: Needs::Config,
        summary: "use_sliding_window disagrees with layer_types",
        explanation: "Loaders that ignore layer_types decide from use_sliding_window; when it says false while \
layer_types has sliding layers (or true while all layers are full), engines run different attention. The \
published configs keep them consistent (Qwen3.6-27B: true with 4 sliding layers; Qwen3.5-27B: false, all full).",
        source: "transformers Qwen3Config; vLLM PR 40898",
    },
    Rule {
        code: "mixed-attention-vllm",
        severity: Severity::Warning,
        needs: Needs::Engine,
        summary: "mixed sliding/full draft layers under vLLM need VLLM_USE_V2_MODEL_RUNNER=1",
        explanation: "vLLM serves DFlash drafters that mix sliding and full attention layers only with the V2 \
model runner; set VLLM_USE_V2_MODEL_RUNNER=1 in the server's environment.",
        source: "vllm-project/vllm vllm/model_executor/models/qwen3_dflash.py",
    },
];

const KNOWN: &[&str] = &["full_attention", "sliding_attention"];

pub(crate) fn check(cx: &mut Ctx) {
    if !cx.detection.dflash_like() {
        return;
    }
    let (base, base_path) = match cx.root.get("transformer_layer_config") {
        Some(t) if cx.detection.name == Family::Speculators && t.as_object().is_some() => {
            (t, Path::key("transformer_layer_config"))
        }
        _ => (cx.root, Path::root()),
    };
    let at = |k: &str| base_path.child(k);
    let layers = base
        .get("num_hidden_layers")
        .and_then(|n| positive_int(n).ok());
    let use_sw = base.get("use_sliding_window").and_then(Node::as_bool);

    let Some(types_node) = base.get("layer_types").filter(|n| !n.is_null()) else {
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
        cx.emit(
            "layer-types-missing",
            &at("layer_types"),
            format!(
                "`layer_types` is absent: loaders derive it from use_sliding_window and max_window_layers, \
                 here {derived}; if the drafter was trained with sliding layers, acceptance collapses on long \
                 contexts"
            ),
            None,
        );
        return;
    };
    let path = at("layer_types");
    let Some(items) = types_node.as_array() else {
        cx.emit(
            "field-type",
            &path,
            format!(
                "`{path}` is {}; it must be a list with one entry per draft layer",
                super::describe(types_node)
            ),
            None,
        );
        return;
    };
    if let Some(l) = layers {
        if items.len() as u64 != l {
            cx.emit(
                "layer-types-length",
                &path,
                format!(
                    "`{path}` has {} entries but num_hidden_layers is {l}",
                    items.len()
                ),
                None,
            );
        }
    }
    let mut sliding = 0usize;
    let mut full = 0usize;
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some("sliding_attention") => sliding += 1,
            Some("full_attention") => full += 1,
            _ => cx.emit(
                "layer-types-unknown",
                &path.index(i),
                format!(
                    "`{}` is {}; the known values are {}",
                    path.index(i),
                    super::describe(item),
                    KNOWN.join(" and ")
                ),
                None,
            ),
        }
    }

    if sliding > 0 {
        let sw_path = at("sliding_window");
        match base.get("sliding_window") {
            None => cx.emit(
                "sliding-window-missing",
                &sw_path,
                format!("{sliding} sliding_attention layers but `sliding_window` is absent: vLLM and SGLang refuse it"),
                None,
            ),
            Some(n) => {
                if let Err(what) = positive_int(n) {
                    cx.emit(
                        "sliding-window-missing",
                        &sw_path,
                        format!(
                            "{sliding} sliding_attention layers but `sliding_window` is {what}; it must be a \
                             positive window size"
                        ),
                        None,
                    );
                }
            }
        }
    }

    let sw_flag_path = at("use_sliding_window");
    match use_sw {
        Some(false) if sliding > 0 => cx.emit(
            "use-sliding-window-inconsistent",
            &sw_flag_path,
            format!(
                "use_sliding_window is false but layer_types has {sliding} sliding_attention layers: loaders \
                 that read the flag run them as full attention"
            ),
            Some(serde_json::Value::Bool(true)),
        ),
        Some(true) if sliding == 0 && full > 0 => cx.emit(
            "use-sliding-window-inconsistent",
            &sw_flag_path,
            "use_sliding_window is true but every layer_types entry is full_attention".to_string(),
            Some(serde_json::Value::Bool(false)),
        ),
        _ => {}
    }

    if sliding > 0 && full > 0 && cx.engine() == Some(Engine::Vllm) {
        cx.emit(
            "mixed-attention-vllm",
            &path,
            format!(
                "{sliding} sliding and {full} full attention layers: vLLM needs VLLM_USE_V2_MODEL_RUNNER=1 \
                 for mixed drafters"
            ),
            None,
        );
    }
}
