//! Target layer ids: which target decoder layers feed the drafter. Wrong ids crash nothing;
//! the drafter reads the wrong hidden states and acceptance collapses.

use serde_json::json;

use super::{find, id_list, positive_int, Ctx, Family, Needs, Rule, Severity};
use crate::json::{Node, Path};

pub const RULES: &[Rule] = &[
    Rule {
        code: "target-layer-ids-missing",
        severity: Severity::Warning,
        needs: Needs::Config,
        summary: "no target layer ids: loaders fall back to a default list",
        explanation: "DFlash drafters name the target layers they read in `dflash_config.target_layer_ids` \
(speculators: `aux_hidden_state_layer_ids`). Without it, z-lab's model.py computes \
build_target_layer_ids(num_target_layers, num_hidden_layers), which is right only for drafters trained with the \
z-lab default. Copy the list from the published config.",
        source: "z-lab/dflash dflash/model.py (build_target_layer_ids); vLLM qwen3_dflash.py",
    },
    Rule {
        code: "target-layer-ids-out-of-range",
        severity: Severity::Error,
        needs: Needs::Target,
        summary: "a target layer id is not a layer of the target model",
        explanation: "Every id must be < the target's num_hidden_layers (text_config.num_hidden_layers for \
multimodal targets). A larger id indexes past the target's hidden states: engines crash at load or capture nothing.",
        source: "z-lab/dflash dflash/model.py (hidden_states[id + 1])",
    },
    Rule {
        code: "target-layer-ids-last-layer",
        severity: Severity::Warning,
        needs: Needs::Target,
        summary: "a target layer id is the target's last layer (SGLang crashes on it)",
        explanation: "Engines that capture \"the input of layer i\" use id + 1; for the last layer that is the \
layer count, which SGLang does not capture and crashes on. z-lab's default ids stop at n - 3. A warning in general, \
an error with --engine sglang.",
        source: "sgl-project/sglang issue 32204",
    },
    Rule {
        code: "target-layer-ids-order",
        severity: Severity::Warning,
        needs: Needs::Config,
        summary: "target layer ids are not strictly increasing",
        explanation: "Every published list is strictly increasing; the drafter's fc layer concatenates the \
hidden states in this order, so a reordered or duplicated list feeds features in an order the weights were not \
trained on.",
        source: "z-lab/dflash build_target_layer_ids; vLLM PR 48524",
    },
    Rule {
        code: "target-layer-ids-formula",
        severity: Severity::Warning,
        needs: Needs::Config,
        summary: "target layer ids differ from z-lab's build_target_layer_ids",
        explanation: "z-lab's build_target_layer_ids(n, k): k == 1 gives [n / 2]; otherwise \
round(1 + i * (n - 4) / (k - 1)) for i in 0..k (Python round: half to even), evenly spaced from 1 to n - 3. Every \
published z-lab DFlash list matches it (36 layers: [1, 9, 17, 25, 33]; 64: [1, 16, 31, 46, 61]). A different list \
is how a hand-written config shows itself, but only the published config can settle it: third-party drafters (MiMo, \
speculators conversions) choose other ids on purpose. A warning for DFlash, info for DFlash2 and the speculators \
format, which do not follow the formula. The layer count is the target's, or num_target_layers without a target.",
        source: "z-lab/dflash dflash/model.py (build_target_layer_ids); every z-lab DFlash config on the Hub",
    },
    Rule {
        code: "num-target-layers-mismatch",
        severity: Severity::Error,
        needs: Needs::Target,
        summary: "num_target_layers differs from the target's layer count",
        explanation: "num_target_layers is the target model's decoder-layer count (text_config.num_hidden_layers \
for Qwen3.5/3.6). A different value means the drafter was built for another target.",
        source: "z-lab/dflash dflash/model.py; speculators DFlash converter",
    },
    Rule {
        code: "fc-width",
        severity: Severity::Info,
        needs: Needs::Config,
        summary: "len(target_layer_ids) differs from num_hidden_layers: the fc input width follows the ids",
        explanation: "The drafter's fc projection takes len(target_layer_ids) * hidden_size inputs. The number of \
ids need not equal the number of draft layers (Qwen3.6-35B-A3B's new revision: 6 layers, 8 ids), but the weights \
must have been trained with exactly this many ids, or loading fails with a shape mismatch.",
        source: "vllm-project/vllm PR 48524",
    },
];

/// z-lab's `build_target_layer_ids(num_target_layers, num_draft_layers)`, with Python's
/// round-half-to-even.
pub fn build_target_layer_ids(num_target_layers: u64, k: usize) -> Vec<u64> {
    match k {
        0 => vec![],
        1 => vec![num_target_layers / 2],
        _ => {
            let n = num_target_layers as f64;
            (0..k)
                .map(|i| {
                    let v = 1.0 + i as f64 * (n - 4.0) / (k as f64 - 1.0);
                    v.round_ties_even().max(0.0) as u64
                })
                .collect()
        }
    }
}

fn list_text(ids: &[u64]) -> String {
    let items: Vec<String> = ids.iter().map(u64::to_string).collect();
    format!("[{}]", items.join(", "))
}

pub(crate) fn check(cx: &mut Ctx) {
    let root = cx.root;
    if let Some((path, node)) = root
        .get("num_target_layers")
        .map(|n| (Path::key("num_target_layers"), n))
    {
        check_num_target_layers(cx, &path, node);
    }
    if !cx.detection.dflash_like() {
        return;
    }
    let speculators = cx.detection.name == Family::Speculators;
    let found = if speculators {
        find(
            root,
            &[
                &["aux_hidden_state_layer_ids"],
                &["speculators_config", "aux_hidden_state_layer_ids"],
                &["dflash_config", "target_layer_ids"],
            ],
        )
    } else {
        find(
            root,
            &[
                &["dflash_config", "target_layer_ids"],
                &["target_layer_ids"],
            ],
        )
    };
    let Some((path, node)) = found else {
        let path = if speculators {
            Path::key("aux_hidden_state_layer_ids")
        } else {
            Path::key("dflash_config").child("target_layer_ids")
        };
        cx.emit(
            "target-layer-ids-missing",
            &path,
            format!(
                "`{path}` is missing: loaders fall back to build_target_layer_ids(num_target_layers, \
                 num_hidden_layers), right only for drafters trained with z-lab's default"
            ),
            None,
        );
        return;
    };
    let raw = match id_list(node) {
        Ok(ids) => ids,
        Err(what) => {
            cx.emit(
                "field-type",
                &path,
                format!("`{path}` is {what}; it must be a non-empty list of non-negative integer layer indices"),
                None,
            );
            return;
        }
    };
    // speculators stores hidden-state indices: DFlash id + 1.
    let ids: Vec<u64> = if speculators && path.last_key() == Some("aux_hidden_state_layer_ids") {
        if raw.contains(&0) {
            cx.emit(
                "field-type",
                &path,
                format!("`{path}` holds 0; speculators aux ids are DFlash target layer ids + 1, so they start at 1"),
                None,
            );
            return;
        }
        raw.iter().map(|i| i - 1).collect()
    } else {
        raw.clone()
    };
    let shown = list_text(&raw);

    if !ids.windows(2).all(|w| w[0] < w[1]) {
        cx.emit(
            "target-layer-ids-order",
            &path,
            format!("{shown} is not strictly increasing (duplicates or out of order)"),
            None,
        );
    }

    let target_n = cx.target_layers(&[
        "target-layer-ids-out-of-range",
        "target-layer-ids-last-layer",
    ]);
    if let Some(n) = target_n {
        let offset =
            u64::from(speculators && path.last_key() == Some("aux_hidden_state_layer_ids"));
        for (i, &id) in ids.iter().enumerate() {
            let p = path.index(i);
            if id >= n {
                cx.emit(
                    "target-layer-ids-out-of-range",
                    &p,
                    format!(
                        "layer id {} is out of range: the target has {n} layers (0..={})",
                        id + offset,
                        n - 1 + offset
                    ),
                    None,
                );
            } else if id + 1 == n {
                let severity = if cx.engine() == Some(super::Engine::Sglang) {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                cx.emit_as(
                    "target-layer-ids-last-layer",
                    severity,
                    &p,
                    format!(
                        "layer id {} is the target's last layer ({n} layers): SGLang captures id + 1 and \
                         crashes on it (sglang issue 32204); z-lab's default ids stop at {}",
                        id + offset,
                        n.saturating_sub(3)
                    ),
                    None,
                );
            }
        }
    }

    // The formula, with the target's layer count, or the drafter's own num_target_layers.
    let n = target_n.or_else(|| {
        root.get("num_target_layers")
            .and_then(|n| positive_int(n).ok())
    });
    match n {
        Some(n) => {
            let expected = build_target_layer_ids(n, ids.len());
            if expected != ids {
                let severity = if cx.detection.name == Family::Dflash {
                    Severity::Warning
                } else {
                    Severity::Info
                };
                let expected_shown: Vec<u64> =
                    if speculators && path.last_key() == Some("aux_hidden_state_layer_ids") {
                        expected.iter().map(|i| i + 1).collect()
                    } else {
                        expected.clone()
                    };
                cx.emit_as(
                    "target-layer-ids-formula",
                    severity,
                    &path,
                    format!(
                        "{shown} differs from z-lab's build_target_layer_ids({n}, {}) = {}; every \
                         published z-lab DFlash drafter uses those ids, but only the published config can \
                         settle it (third-party drafters such as MiMo choose other ids on purpose)",
                        ids.len(),
                        list_text(&expected_shown)
                    ),
                    Some(json!(expected_shown)),
                );
            }
        }
        None => {
            cx.skipped.insert("target-layer-ids-formula");
        }
    }

    // fc width.
    let draft_layers = root
        .get("num_hidden_layers")
        .and_then(|n| positive_int(n).ok());
    if let Some(layers) = draft_layers {
        if layers != ids.len() as u64 {
            let hidden = root.get("hidden_size").and_then(|n| positive_int(n).ok());
            let width = hidden.map_or(String::new(), |h| {
                format!(" = {} × {h} = {}", ids.len(), ids.len() as u64 * h)
            });
            cx.emit(
                "fc-width",
                &path,
                format!(
                    "{} target layer ids for {layers} draft layers: the fc projection takes len(ids) × \
                     hidden_size{width} inputs; legitimate if the weights were trained with {} ids",
                    ids.len(),
                    ids.len()
                ),
                None,
            );
        }
    }
}

fn check_num_target_layers(cx: &mut Ctx, path: &Path, node: &Node) {
    let value = match positive_int(node) {
        Ok(v) => v,
        Err(what) => {
            cx.emit(
                "field-type",
                path,
                format!(
                    "`{path}` is {what}; it must be the target's layer count, a positive integer"
                ),
                None,
            );
            return;
        }
    };
    if let Some(n) = cx.target_layers(&["num-target-layers-mismatch"]) {
        if n != value {
            cx.emit(
                "num-target-layers-mismatch",
                path,
                format!(
                    "num_target_layers is {value} but the target has {n} layers: the drafter was built for \
                     another target"
                ),
                Some(json!(n)),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every published z-lab list (36, 64, 40, 40×8, 32, 24 layers), and the half-to-even case.
    #[test]
    fn formula_matches_every_published_list() {
        let cases: &[(u64, &[u64])] = &[
            (36, &[1, 9, 17, 25, 33]),
            (64, &[1, 16, 31, 46, 61]),
            (40, &[1, 10, 19, 28, 37]),
            (40, &[1, 6, 11, 16, 22, 27, 32, 37]),
            (32, &[1, 8, 15, 22, 29]),
            (24, &[1, 6, 11, 16, 21]),
            (78, &[1, 20, 38, 56, 75]),
        ];
        for (n, ids) in cases {
            assert_eq!(build_target_layer_ids(*n, ids.len()), *ids, "n = {n}");
        }
        assert_eq!(build_target_layer_ids(64, 1), vec![32]);
        assert_eq!(build_target_layer_ids(64, 0), Vec::<u64>::new());
    }

    /// Half-up rounding would give 57 at n = 78; Python gives 56.
    #[test]
    fn formula_rounds_half_to_even() {
        assert_eq!(build_target_layer_ids(78, 5)[3], 56);
    }
}
