//! Target layer ids: which target decoder layers feed a block drafter. Wrong ids crash nothing
//! in most engines; the drafter reads the wrong hidden states and acceptance collapses.

use std::rc::Rc;

use serde_json::json;

use super::{
    find, id_list, list_text, positive_int, Applies, ByEngine, Ctx, Engine, Family, LintCode, Need,
    ReleaseRow, Rule,
};
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{Node, Path};

/// The rules here whose severity follows the engine.
pub(super) const BY_ENGINE: &[(LintCode, &ByEngine)] = &[
    (
        LintCode::TargetLayerIdsDuplicate,
        &TARGET_LAYER_IDS_DUPLICATE_BY_ENGINE,
    ),
    (LintCode::TargetLayerIdsMissing, &MISSING_NOT_THREE_LAYERS),
    (LintCode::TargetLayerIdsMissing, &MISSING_DFLASH2),
    (LintCode::TargetLayerIdsLastLayer, &LAST_LAYER_QWEN3_5),
    (LintCode::TargetLayerIdsLastLayer, &LAST_LAYER_OTHER),
];

pub(super) const RULES: &[Rule] = &[
    TARGET_LAYER_IDS_MISSING,
    TARGET_LAYER_IDS_OUT_OF_RANGE,
    TARGET_LAYER_IDS_LAST_LAYER,
    TARGET_LAYER_IDS_ORDER,
    TARGET_LAYER_IDS_DUPLICATE,
    TARGET_LAYER_IDS_FORMULA,
    AUX_IDS_TARGET_LAYER_IDS_MISMATCH,
    NUM_TARGET_LAYERS_MISMATCH,
    FC_WIDTH,
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

/// The layer-id list of a block drafter, as DFlash ids (speculators' hidden-state indices
/// shifted back by one), with its path and the list as written.
pub(super) struct LayerIds {
    path: Path,
    /// DFlash ids: 0-based target layers whose output feeds the drafter.
    ids: Vec<u64>,
    /// As written in the file.
    raw: Vec<u64>,
    /// 1 for speculators' `aux_hidden_state_layer_ids` (hidden-state index = id + 1), else 0.
    offset: u64,
}

/// Where the list lives, by family.
fn locate<'a>(cx: &Ctx<'a>) -> Option<(Path, &'a Node)> {
    if cx.detection.name == Family::Speculators {
        find(
            cx.root,
            &[
                &["aux_hidden_state_layer_ids"],
                &["speculators_config", "aux_hidden_state_layer_ids"],
                &["dflash_config", "target_layer_ids"],
            ],
        )
    } else {
        find(
            cx.root,
            &[
                &["dflash_config", "target_layer_ids"],
                &["target_layer_ids"],
                &["dspark_target_layer_ids"],
            ],
        )
    }
}

/// Whether the located list is `null` where the engine reads `null` as "absent" (the engine
/// table's capability: SGLang 0.5.23's parse_dflash_draft_config takes a None list as missing
/// and falls back to build_target_layer_ids, as for a missing key); vLLM's DFlash model calls
/// `len()` on it (a TypeError), so without an engine or under vLLM a null stays a wrong type.
fn null_read_as_absent(cx: &Ctx, node: &Node) -> bool {
    node.is_null()
        && cx.release().is_some_and(|r| {
            crate::engine::Capabilities::of(r, crate::engine::What::NullLayerIdsAbsent)
                == crate::engine::Holds::Yes
        })
        && cx.detection.name != Family::Speculators
}

/// The list, or `None` when it is absent or unusable (its type is reported once, by the
/// out-of-range rule, which owns reading it).
/// Read once per lint run and shared by the rules that use it (seven rules each located and
/// copied it again, issue 44).
fn layer_ids(cx: &Ctx) -> Option<Rc<LayerIds>> {
    cx.layer_ids
        .get_or_init(|| read_layer_ids(cx).map(Rc::new))
        .clone()
}

fn read_layer_ids(cx: &Ctx) -> Option<LayerIds> {
    let (path, node) = locate(cx)?;
    let raw = id_list(node).ok()?;
    let offset = u64::from(path.last_key() == Some("aux_hidden_state_layer_ids"));
    if offset == 1 && raw.contains(&0) {
        return None;
    }
    Some(LayerIds {
        ids: raw.iter().map(|i| i - offset).collect(),
        raw,
        path,
        offset,
    })
}

const TARGET_LAYER_IDS_MISSING: Rule = Rule {
    code: LintCode::TargetLayerIdsMissing,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "no target layer ids: the reference refuses, engines fall back to defaults of their own",
        explanation: "Block drafters name the target layers they read in `dflash_config.target_layer_ids` \
(speculators: `aux_hidden_state_layer_ids`). The tap list is a training-time choice no loader can recompute. Without \
it: z-lab's reference refuses the config since its newer model.py (\"Draft config must define \
dflash_config.target_layer_ids.\"; before, it fell back to build_target_layer_ids); SGLang (resolve_target_layer_ids) \
still falls back to build_target_layer_ids(num_target_layers, num_hidden_layers), right only for drafters trained \
with z-lab's default — DFlash2 drafters never are, and the fallback then loads cleanly and collapses acceptance \
silently (sglang issue 37475: formula [1, 16, 31, 46, 61] against the trained [5, 19, 33, 47, 61]); vLLM captures \
the target's EAGLE-3 default layers (2, n // 2, n - 3) while fc expects one feature per draft layer, so \
combine_hidden_states raises ValueError for any drafter without exactly 3 layers. Severity by engine: --engine vllm \
an error unless the drafter has 3 layers; --engine sglang an error for DFlash2, a warning otherwise (the fallback is \
right for z-lab-trained DFlash drafters); no engine the most cautious of these (an error when either engine fails \
or collapses). A `null` list is missing under --engine sglang (SGLang 0.5.23's parse_dflash_draft_config takes \
None as absent), and a wrong type (field-type, an error) otherwise: vLLM's DFlash model calls len() on it. Open PRs \
z-lab/dflash#157 and sglang#37476 make the key required.",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: target_layer_ids_missing,
};

fn target_layer_ids_missing(cx: &mut Ctx) {
    let located = locate(cx);
    if located
        .as_ref()
        .is_some_and(|(_, n)| !null_read_as_absent(cx, n))
    {
        return;
    }
    let path = match located {
        Some((p, _)) => p,
        None if cx.detection.name == Family::Speculators => Path::key("aux_hidden_state_layer_ids"),
        None => Path::key("dflash_config").child("target_layer_ids"),
    };
    let state = if path.lookup(cx.root).is_some() {
        "null (SGLang reads it as missing)"
    } else {
        "missing"
    };
    let draft_layers = cx
        .root
        .get("num_hidden_layers")
        .and_then(|n| positive_int(n).ok());
    let vllm_fails = draft_layers != Some(3);
    let sglang_collapses = cx.detection.name == Family::Dflash2;
    // The cases that apply, each with what every engine does in it; the worst verdict wins.
    let cases: Vec<&ByEngine> = [
        (vllm_fails, &MISSING_NOT_THREE_LAYERS),
        (sglang_collapses, &MISSING_DFLASH2),
    ]
    .into_iter()
    .filter_map(|(applies, case)| applies.then_some(case))
    .collect();
    let fails = vllm_fails;
    let sglang = if sglang_collapses {
        "SGLang falls back to build_target_layer_ids(num_target_layers, num_hidden_layers), which DFlash2 drafters \
         never follow: weights load and acceptance collapses silently (sglang#37475)"
    } else {
        "SGLang falls back to build_target_layer_ids(num_target_layers, num_hidden_layers), right only for drafters \
         trained with z-lab's default"
    };
    let vllm = if fails {
        "raises ValueError in combine_hidden_states (fc expects one feature per draft layer)"
    } else {
        "fails unless the drafter has exactly 3 layers"
    };
    let message = format!(
        "`{path}` is {state}: z-lab's newer reference refuses the config; {sglang}; vLLM captures its \
         EAGLE-3 default layers and {vllm}; write the ids the drafter was trained with"
    );
    match cx.worst(&cases) {
        Some((case, _)) => {
            cx.emit_judged(case, &path, message);
        }
        None => {
            cx.emit_as(Severity::Warning, &path, message);
        }
    }
}

/// Target layer ids missing, for a drafter that has other than 3 layers.
const MISSING_NOT_THREE_LAYERS: ByEngine = ByEngine {
    case: Some("the drafter has other than 3 layers"),
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Error),
            "captures its EAGLE-3 default layers (3 features) while fc expects one per draft layer: ValueError in combine_hidden_states",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Warning),
            "falls back to build_target_layer_ids, right only for drafters trained with z-lab's default",
        ),
    ],
};

/// Target layer ids missing, for a DFlash2 drafter.
const MISSING_DFLASH2: ByEngine = ByEngine {
    case: Some("the drafter is DFlash2"),
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Warning),
            "captures its EAGLE-3 default layers: fails unless the drafter has exactly 3 layers (the case above)",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "falls back to build_target_layer_ids, which DFlash2 drafters never follow: acceptance collapses silently (sglang#37475)",
        ),
    ],
};

const TARGET_LAYER_IDS_OUT_OF_RANGE: Rule = Rule {
    code: LintCode::TargetLayerIdsOutOfRange,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a target layer id is not a layer of the target model",
        explanation: "Every id must be < the target's num_hidden_layers (text_config.num_hidden_layers for \
multimodal targets). SGLang's resolve_target_layer_ids raises \"out-of-range layer id\"; vLLM's capture loop \
(`if idx in self.aux_hidden_state_layers`) never captures the id, and the missing feature raises ValueError in \
combine_hidden_states. The list's type is checked here too (a list of non-negative integers).",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: target_layer_ids_out_of_range,
};

fn target_layer_ids_out_of_range(cx: &mut Ctx) {
    let Some((path, node)) = locate(cx).filter(|(_, n)| !null_read_as_absent(cx, n)) else {
        return;
    };
    // This rule owns the list's type: report it once, here.
    let raw = match id_list(node) {
        Ok(ids) => ids,
        Err(what) => {
            cx.emit_type(
                &path,
                format!(
                    "`{path}` is {what}; it must be a non-empty list of non-negative integer layer indices"
                ),
            );
            return;
        }
    };
    if path.last_key() == Some("aux_hidden_state_layer_ids") && raw.contains(&0) {
        cx.emit_type(
            &path,
            format!("`{path}` holds 0; speculators aux ids are DFlash target layer ids + 1, so they start at 1"),
        );
        return;
    }
    let Some(n) = cx.target_layers() else {
        cx.skip();
        return;
    };
    let Some(ids) = layer_ids(cx) else { return };
    for (i, &id) in ids.ids.iter().enumerate() {
        if id >= n {
            cx.emit(
                &ids.path.index(i),
                format!(
                    "layer id {} is out of range: the target has {n} layers (0..={})",
                    id + ids.offset,
                    n - 1 + ids.offset
                ),
            );
        }
    }
}

const TARGET_LAYER_IDS_LAST_LAYER: Rule = Rule {
    code: LintCode::TargetLayerIdsLastLayer,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a target layer id is the target's last layer (SGLang's Qwen3.5 path crashes on it)",
        explanation: "Engines that capture \"the input of layer i\" use id + 1; for the last layer that is the \
layer count. SGLang's Qwen3.5/3.6 model (qwen3_5.py set_dflash_layers_to_capture) raises IndexError on it \
(sglang#32204, 2026-07-23; fix PR #32206 open then; NeMo-Automodel#3083 agrees). Other SGLang model paths were not \
checked. vLLM captures after each layer, so the last layer's output is reachable there, and it serves \
XiaomiMiMo/MiMo-V2.5-Pro-FP4-DFlash (vLLM PR 46104). So: nothing with --engine vllm; an error with \
--engine sglang on a Qwen3.5/3.6 target, a warning on other SGLang targets and without an engine (the cautious \
statement: the crash is real on one SGLang path); nothing for speculators-format configs, whose converter handles \
the last layer on purpose (--include-last-layer). z-lab's default ids stop at n - 3.",
    },
    applies: Applies::BlockDrafters,
    needs: &[Need::TargetLayers],
    check: target_layer_ids_last_layer,
};

/// The last layer as a tap, on a Qwen3.5/3.6 target: SGLang's Qwen3.5 path raises IndexError.
const LAST_LAYER_QWEN3_5: ByEngine = ByEngine {
    case: Some("the target is a Qwen3.5/3.6 model"),
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            None,
            "captures after each layer: the last layer's output is reachable",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "qwen3_5.py set_dflash_layers_to_capture raises IndexError (sglang#32204)",
        ),
    ],
};

/// The last layer as a tap, on another target: SGLang's other model paths were not checked.
const LAST_LAYER_OTHER: ByEngine = ByEngine {
    case: Some("the target is not a Qwen3.5/3.6 model"),
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            None,
            "captures after each layer: the last layer's output is reachable",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Warning),
            "its other model paths were not checked for the crash of the Qwen3.5 path",
        ),
    ],
};

fn target_layer_ids_last_layer(cx: &mut Ctx) {
    if cx.detection.name == Family::Speculators {
        return;
    }
    let (Some(n), Some(ids)) = (cx.target_layers(), layer_ids(cx)) else {
        return;
    };
    let case = if cx.facts.is_some_and(|f| f.is_qwen3_5()) {
        &LAST_LAYER_QWEN3_5
    } else {
        &LAST_LAYER_OTHER
    };
    for (i, &id) in ids.ids.iter().enumerate() {
        if id + 1 == n {
            cx.emit_judged(
                case,
                &ids.path.index(i),
                format!(
                    "layer id {id} is the target's last layer ({n} layers): SGLang's Qwen3.5 path captures id + 1 \
                     and raises IndexError (sglang#32204); z-lab's default ids stop at {}",
                    n.saturating_sub(3)
                ),
            );
        }
    }
}

const TARGET_LAYER_IDS_ORDER: Rule = Rule {
    code: LintCode::TargetLayerIdsOrder,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "target layer ids are not in ascending order",
        explanation: "Every published list is strictly increasing. z-lab's reference concatenates the hidden \
states in list order (model.py:44), while vLLM and SGLang capture inside the layer loop and so always feed them in \
ascending order: a reordered list means the engines and the reference feed different features; a duplicate is \
captured once by the engines (target-layer-ids-duplicate). A likely mistake, not an engine check: a warning.",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: target_layer_ids_order,
};

fn target_layer_ids_order(cx: &mut Ctx) {
    let Some(ids) = layer_ids(cx) else { return };
    let mut sorted = ids.ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    // Duplicates are the duplicate rule's; this one is about order.
    if sorted.len() == ids.ids.len() && !ids.ids.windows(2).all(|w| w[0] < w[1]) {
        cx.emit(
            &ids.path,
            format!(
                "{} is not in ascending order: vLLM and SGLang feed the features ascending, the z-lab \
                 reference in list order",
                list_text(&ids.raw)
            ),
        );
    }
}

const TARGET_LAYER_IDS_DUPLICATE: Rule = Rule {
    code: LintCode::TargetLayerIdsDuplicate,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a target layer id is listed twice",
        explanation: "vLLM and SGLang size fc for one feature per listed id but capture each layer once (a \
membership test inside the target's layer loop), so a duplicate leaves fc short of input: vLLM raises \"DFlash \
drafter expects … concatenated aux hidden features\", SGLang \"DFLASH target_hidden feature dim mismatch\".",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: target_layer_ids_duplicate,
};

const TARGET_LAYER_IDS_DUPLICATE_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Error),
            "captures the layer once but sizes fc for every id: raises at the first step",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "captures the layer once but sizes fc for every id: raises a feature dim mismatch",
        ),
    ],
};

fn target_layer_ids_duplicate(cx: &mut Ctx) {
    let Some(ids) = layer_ids(cx) else { return };
    let mut seen = std::collections::BTreeSet::new();
    let Some(severity) = cx.engine_severity() else {
        return;
    };
    for (i, id) in ids.ids.iter().enumerate() {
        if !seen.insert(*id) {
            cx.emit_as(
                severity,
                &ids.path.index(i),
                format!(
                    "layer id {} is listed twice: vLLM and SGLang capture it once but size fc for {} \
                     features and raise at the first step",
                    id + ids.offset,
                    ids.ids.len()
                ),
            );
        }
    }
}

const TARGET_LAYER_IDS_FORMULA: Rule = Rule {
    code: LintCode::TargetLayerIdsFormula,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "target layer ids differ from the family's convention (z-lab's build_target_layer_ids)",
        explanation: "z-lab's build_target_layer_ids(n, k): k == 1 gives [n / 2]; otherwise round(1 + i * (n - 4) \
/ (k - 1)) for i in 0..k (Python round: half to even), evenly spaced from 1 to n - 3. Every published z-lab DFlash \
list matches it (36 layers: [1, 9, 17, 25, 33]; 64: [1, 16, 31, 46, 61]). Other trainers do not always: SpecForge's \
DSpark templates use the formula, the formula + 1 ([2, 17, 32, 47, 62] for Qwen3.6-27B) or lists of their own; its \
Qwen3.5-4B Domino uses [3, 11, 19, 27, 31]; MiMo and DFlash2 drafters choose their own. A different list is how a \
hand-written config shows itself, but only the published config can settle it, and no engine enforces the formula: \
a warning for DFlash, info for DFlash2, DSpark, Domino and the speculators format. The layer count is the target's, \
or without a target the config's own record of it: num_target_layers, or target_num_hidden_layers in TorchSpec's \
layout (where num_target_layers counts the taps; a num_target_layers equal to the number of ids and not above \
every id is such a count and is not used).",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: target_layer_ids_formula,
};

fn target_layer_ids_formula(cx: &mut Ctx) {
    let Some(ids) = layer_ids(cx) else { return };
    let n = cx.target_layers().or_else(|| own_depth_of(cx.root, &ids));
    let Some(n) = n else {
        cx.skip();
        return;
    };
    let family = cx.detection.name;
    let expected = build_target_layer_ids(n, ids.ids.len());
    if expected == ids.ids {
        return;
    }
    // The convention is z-lab's DFlash's own: other trainers choose their ids.
    let severity = if family == Family::Dflash {
        Severity::Warning
    } else {
        Severity::Info
    };
    let shown: Vec<u64> = expected.iter().map(|i| i + ids.offset).collect();
    let convention = format!("z-lab's build_target_layer_ids({n}, {})", ids.ids.len());
    cx.emit_as(
        severity,
        &ids.path,
        format!(
            "{} differs from {convention} = {}; published z-lab drafters use those ids, other trainers \
             sometimes choose their own: only the published config can settle it",
            list_text(&ids.raw),
            list_text(&shown)
        ),
    )
    .expected = Some(json!(shown));
}

const AUX_IDS_TARGET_LAYER_IDS_MISMATCH: Rule = Rule {
    code: LintCode::AuxIdsTargetLayerIdsMismatch,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "eagle_aux_hidden_state_layer_ids and dflash_config.target_layer_ids + 1 disagree",
        explanation: "vLLM reads `eagle_aux_hidden_state_layer_ids` as-is when a DFlash config has it, and \
otherwise `dflash_config.target_layer_ids` + 1 (hidden-state indices); z-lab's reference and SGLang read \
target_layer_ids. When both are present they must agree (aux == ids + 1), or vLLM feeds other layers than the \
other engines (sglang#25454 lost ~0.10 acceptance length to exactly this off-by-one).",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: aux_layer_ids_disagree,
};

fn aux_layer_ids_disagree(cx: &mut Ctx) {
    let Some(aux_node) = cx.root.get("eagle_aux_hidden_state_layer_ids") else {
        return;
    };
    let Some(ids_node) = Path::key("dflash_config")
        .child("target_layer_ids")
        .lookup(cx.root)
    else {
        return;
    };
    let (Ok(aux), Ok(ids)) = (id_list(aux_node), id_list(ids_node)) else {
        return;
    };
    let plus_one: Vec<u64> = ids.iter().map(|i| i + 1).collect();
    if aux != plus_one {
        let path = Path::key("eagle_aux_hidden_state_layer_ids");
        cx.emit(
            &path,
            format!(
                "`eagle_aux_hidden_state_layer_ids` is {} but dflash_config.target_layer_ids + 1 is {}: vLLM reads \
                 the first, z-lab's reference and SGLang the second",
                list_text(&aux),
                list_text(&plus_one)
            ),
        )
        .expected = Some(json!(plus_one));
    }
}

/// TorchSpec's layout: `num_target_layers` counts the taps and the target's depth is
/// `target_num_hidden_layers` (lightseekorg/TorchSpec torchspec/config/*_draft_config.json).
const TORCHSPEC_DEPTH: &str = "target_num_hidden_layers";

/// Where the config records its target's depth, and the value: `target_num_hidden_layers` in
/// TorchSpec's layout, else `num_target_layers` (z-lab's layout).
fn own_target_depth(root: &Node) -> Option<(&'static str, u64)> {
    [TORCHSPEC_DEPTH, "num_target_layers"]
        .into_iter()
        .find_map(|k| root.get(k).map(|n| (k, n)))
        .and_then(|(k, n)| positive_int(n).ok().map(|v| (k, v)))
}

/// Whether `value` is a count of taps rather than of layers: it equals the number of ids and
/// some id is not below it (TorchSpec writes num_target_layers so; a depth is above every id).
fn counts_taps(value: u64, ids: &LayerIds) -> bool {
    value == ids.ids.len() as u64 && ids.ids.iter().any(|&id| id >= value)
}

/// The config's own record of its target's depth, unless it counts taps.
fn own_depth_of(root: &Node, ids: &LayerIds) -> Option<u64> {
    own_target_depth(root)
        .map(|(_, n)| n)
        .filter(|&n| !counts_taps(n, ids))
}

const NUM_TARGET_LAYERS_MISMATCH: Rule = Rule {
    code: LintCode::NumTargetLayersMismatch,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the config's record of the target's layer count differs from the target's",
        explanation: "num_target_layers is the target model's decoder-layer count (text_config.num_hidden_layers \
for Qwen3.5/3.6) in z-lab's layout. TorchSpec's layout uses it for the number of taps and records the depth as \
target_num_hidden_layers, which is then the field compared; without it, a num_target_layers equal to the number of \
ids and not above every id is read as TorchSpec's tap count and not compared. vLLM and SGLang compare neither with the served target \
(z-lab's reference used num_target_layers only for the default layer ids), so a different value suggests the drafter was \
built for another target — a heuristic, so a warning. mlx-vlm from 0.6.16 compares it for DFlash2 and DSpark drafters \
(validate_dflash_target) and, when it differs, drops the drafter and generates autoregressively: no error, no speed-up, \
a warning there too.",
    },
    applies: Applies::All,
    needs: &[Need::TargetLayers],
    check: num_target_layers_mismatch,
};

fn num_target_layers_mismatch(cx: &mut Ctx) {
    let key = if cx.root.get(TORCHSPEC_DEPTH).is_some() {
        TORCHSPEC_DEPTH
    } else {
        "num_target_layers"
    };
    let Some(node) = cx.root.get(key) else {
        return;
    };
    let path = Path::key(key);
    let value = match positive_int(node) {
        Ok(v) => v,
        Err(what) => {
            cx.emit_type(
                &path,
                format!(
                    "`{path}` is {what}; it must be the target's layer count, a positive integer"
                ),
            );
            return;
        }
    };
    // TorchSpec's num_target_layers counts taps: not a depth to compare.
    let taps =
        key == "num_target_layers" && layer_ids(cx).is_some_and(|ids| counts_taps(value, &ids));
    let Some(n) = cx.target_layers().filter(|&n| n != value && !taps) else {
        return;
    };
    // mlx-vlm checks this pair for DFlash2 and DSpark drafters (validate_dflash_target,
    // speculative/drafters/compatibility.py, 0.6.16 to 0.7.10) and, when it differs, drops the
    // drafter and generates autoregressively (server and generate alike): no speed-up, no error.
    let validated = [Family::Dflash2, Family::Dspark].contains(&cx.detection.effective().family);
    let consequence = if validated {
        ": mlx-vlm (0.6.16 on) finds this DFlash2 or DSpark drafter incompatible (\"target layer-count \
         mismatch\") and generates without it; elsewhere the drafter may have been built for another target"
    } else {
        ": the drafter may have been built for another target"
    };
    cx.emit(
        &path,
        format!("{key} is {value} but the target has {n} layers{consequence}"),
    )
    .expected = Some(json!(n));
}

const FC_WIDTH: Rule = Rule {
    code: LintCode::FcWidth,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "len(target_layer_ids) differs from num_hidden_layers: the fc input width follows the ids",
        explanation: "The drafter's fc projection takes len(target_layer_ids) × (target_hidden_size or \
hidden_size) inputs (z-lab model.py:317; vLLM _get_dflash_fc_input_size). The number of ids need not equal the \
number of draft layers (Qwen3.6-35B-A3B's new revision: 6 layers, 8 ids), but the weights must have been trained \
with exactly this many ids, or loading fails with a shape mismatch (`dflash-check weights` checks the fc tensor).",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: fc_width,
};

fn fc_width(cx: &mut Ctx) {
    // In a DeepSeek-V4 config num_hidden_layers is the target's, not the DSpark head's.
    if cx.embedded_dspark() {
        return;
    }
    let Some(ids) = layer_ids(cx) else { return };
    let Some(layers) = cx
        .root
        .get("num_hidden_layers")
        .and_then(|n| positive_int(n).ok())
    else {
        return;
    };
    let k = ids.ids.len() as u64;
    if layers == k {
        return;
    }
    let hidden = find(
        cx.root,
        &[
            &["target_hidden_size"],
            &["dflash_config", "target_hidden_size"],
        ],
    )
    .and_then(|(_, n)| positive_int(n).ok())
    .or_else(|| {
        cx.root
            .get("hidden_size")
            .and_then(|n| positive_int(n).ok())
    });
    let width = hidden.map_or(String::new(), |h| format!(" = {k} × {h} = {}", k * h));
    cx.emit(
        &ids.path,
        format!(
            "{k} target layer ids for {layers} draft layers: the fc projection takes len(ids) × hidden{width} \
             inputs; legitimate if the weights were trained with {k} ids"
        ),
    );
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
