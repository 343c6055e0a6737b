//! EAGLE-3 heads: the auxiliary hidden-state layers they read and their reduced draft vocabulary.

use serde_json::json;

use super::{find, id_list, positive_int, Ctx, Needs, Rule, Severity};
use crate::json::Path;

pub const RULES: &[Rule] = &[
    Rule {
        code: "eagle-aux-layer-ids-missing",
        severity: Severity::Warning,
        needs: Needs::Config,
        summary: "no eagle_aux_hidden_state_layer_ids: vLLM falls back to default layers",
        explanation: "EAGLE-3 heads read three target layers named by `eagle_aux_hidden_state_layer_ids` (top \
level or under `eagle_config`). Without it vLLM uses its default (2, n / 2, n - 3) and logs \"Acceptance will be \
low\" unless the head was trained with those defaults (SpecForge's default). Write the training layers explicitly.",
        source: "vllm-project/vllm vllm/model_executor/models/llama_eagle3.py; SpecForge configs",
    },
    Rule {
        code: "eagle-aux-layer-ids-out-of-range",
        severity: Severity::Error,
        needs: Needs::Target,
        summary: "an EAGLE-3 aux layer id is not a layer of the target",
        explanation: "Every aux layer id must be < the target's num_hidden_layers; larger ids capture nothing \
and the engine fails at load or at the first step.",
        source: "vllm-project/vllm llama_eagle3.py",
    },
    Rule {
        code: "draft-vocab-size-mismatch",
        severity: Severity::Info,
        needs: Needs::Config,
        summary: "draft_vocab_size differs from the target vocabulary: a d2t mapping must ship with the weights",
        explanation: "EAGLE-3 heads may predict over a reduced vocabulary (SpecForge templates: 32000). Then the \
checkpoint must carry the `d2t` (draft-to-target) mapping tensor, or every drafted id is wrong.",
        source: "sgl-project/SpecForge EAGLE-3 templates; vLLM llama_eagle3.py (d2t)",
    },
];

pub(crate) fn check(cx: &mut Ctx) {
    if !cx.detection.eagle_like() {
        return;
    }
    let root = cx.root;
    match find(
        root,
        &[
            &["eagle_aux_hidden_state_layer_ids"],
            &["eagle_config", "eagle_aux_hidden_state_layer_ids"],
            &["aux_hidden_state_layer_ids"],
        ],
    ) {
        None => cx.emit(
            "eagle-aux-layer-ids-missing",
            &Path::key("eagle_aux_hidden_state_layer_ids"),
            "no `eagle_aux_hidden_state_layer_ids` (nor `eagle_config.eagle_aux_hidden_state_layer_ids`): vLLM \
             falls back to its default layers and warns \"Acceptance will be low\" unless the head was trained \
             with them"
                .to_string(),
            None,
        ),
        Some((path, node)) => match id_list(node) {
            Err(what) => cx.emit(
                "field-type",
                &path,
                format!("`{path}` is {what}; it must be a non-empty list of layer indices"),
                None,
            ),
            Ok(ids) => {
                if let Some(n) = cx.target_layers(&["eagle-aux-layer-ids-out-of-range"]) {
                    for (i, id) in ids.iter().enumerate() {
                        if *id >= n {
                            cx.emit(
                                "eagle-aux-layer-ids-out-of-range",
                                &path.index(i),
                                format!("aux layer id {id} is out of range: the target has {n} layers"),
                                None,
                            );
                        }
                    }
                }
            }
        },
    }

    if let Some(node) = root.get("draft_vocab_size") {
        let path = Path::key("draft_vocab_size");
        match positive_int(node) {
            Err(what) => cx.emit(
                "field-type",
                &path,
                format!("`draft_vocab_size` is {what}; it must be a positive integer"),
                None,
            ),
            Ok(d) => {
                let target = cx
                    .facts
                    .and_then(|f| f.vocab_size)
                    .or_else(|| root.get("vocab_size").and_then(|n| positive_int(n).ok()));
                if let Some(t) = target.filter(|&t| t != d) {
                    cx.emit(
                        "draft-vocab-size-mismatch",
                        &path,
                        format!(
                            "draft_vocab_size {d} differs from the target vocabulary {t}: the checkpoint must \
                             ship a d2t mapping"
                        ),
                        Some(json!(t)),
                    );
                }
            }
        }
    }
}
