//! EAGLE-3 heads (and P-EAGLE): the auxiliary hidden-state layers they read, where vLLM looks
//! for them, how many its fc accepts, and the reduced draft vocabulary.

use serde_json::json;

use super::{find, id_list, list_text, positive_int, Applies, Ctx, Engine, LintCode, Rule};
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{Node, Path};

pub(super) const RULES: &[Rule] = &[
    EAGLE_AUX_LAYER_IDS_MISSING,
    EAGLE_AUX_LAYER_IDS_NESTED,
    EAGLE_AUX_LAYER_IDS_OUT_OF_RANGE,
    EAGLE_AUX_LAYER_IDS_COUNT,
    DRAFT_VOCAB_SIZE_MISMATCH,
];

/// Where vLLM reads the aux ids: the top-level key, or `eagle_config.layer_ids`; speculators
/// configs use `aux_hidden_state_layer_ids`.
fn read_by_vllm<'a>(root: &'a Node) -> Option<(Path, &'a Node)> {
    find(
        root,
        &[
            &["eagle_aux_hidden_state_layer_ids"],
            &["eagle_config", "layer_ids"],
            &["aux_hidden_state_layer_ids"],
            &["speculators_config", "aux_hidden_state_layer_ids"],
        ],
    )
}

const NESTED: &[&str] = &["eagle_config", "eagle_aux_hidden_state_layer_ids"];

/// The aux ids wherever they are, the nested spelling last.
fn any_ids<'a>(root: &'a Node) -> Option<(Path, &'a Node)> {
    read_by_vllm(root).or_else(|| find(root, &[NESTED]))
}

const EAGLE_AUX_LAYER_IDS_MISSING: Rule = Rule {
    code: LintCode::EagleAuxLayerIdsMissing,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "no eagle_aux_hidden_state_layer_ids: vLLM falls back to default layers",
        explanation: "EAGLE-3 heads read target layers named by `eagle_aux_hidden_state_layer_ids`. Without it \
vLLM uses the target's default (2, n / 2, n - 3) and logs \"Acceptance will be low if the draft was trained on \
other layers\" — right for heads trained with those defaults (SpecForge's default), wrong otherwise: vLLM PR 50170 \
measured 1.2% acceptance for nvidia/Llama-3.3-70B-Instruct-Eagle3, which omits them. A warning, since the defaults \
may be the trained layers.",
        source: "vllm-project/vllm vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py@0cfdd2e; vllm-project/vllm PR 50170",
    },
    applies: Applies::EagleHeads,
    needs: &[],
    check: eagle_aux_layer_ids_missing,
};

fn eagle_aux_layer_ids_missing(cx: &mut Ctx) {
    if any_ids(cx.root).is_some() {
        return;
    }
    cx.emit(
        &Path::key("eagle_aux_hidden_state_layer_ids"),
        "no `eagle_aux_hidden_state_layer_ids`: vLLM falls back to its default layers (2, n / 2, n - 3) and warns \
         \"Acceptance will be low\" unless the head was trained with them"
            .to_string(),
    );
}

const EAGLE_AUX_LAYER_IDS_NESTED: Rule = Rule {
    code: LintCode::EagleAuxLayerIdsNested,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "aux layer ids only under eagle_config.eagle_aux_hidden_state_layer_ids, where vLLM does not read them",
        explanation: "vLLM's get_eagle3_aux_layers_from_config reads the top-level \
`eagle_aux_hidden_state_layer_ids` (or `eagle_config.layer_ids`), not `eagle_config.eagle_aux_hidden_state_layer_ids`: \
ids written only there are ignored and vLLM falls back to its default layers. Move (or copy) them to the top level.",
        source: "vllm-project/vllm vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py@0cfdd2e (get_eagle3_aux_layers_from_config)",
    },
    applies: Applies::EagleHeads,
    needs: &[],
    check: eagle_aux_layer_ids_nested,
};

fn eagle_aux_layer_ids_nested(cx: &mut Ctx) {
    if read_by_vllm(cx.root).is_some() {
        return;
    }
    if let Some((path, node)) = find(cx.root, &[NESTED]) {
        let shown = id_list(node).map_or_else(|_| node.to_compact(), |ids| list_text(&ids));
        cx.emit(
            &path,
            format!(
                "the aux layer ids {shown} are only at `{path}`, which vLLM does not read: it falls back to its \
                 default layers; put them at the top level as `eagle_aux_hidden_state_layer_ids`"
            ),
        );
    }
}

const EAGLE_AUX_LAYER_IDS_OUT_OF_RANGE: Rule = Rule {
    code: LintCode::EagleAuxLayerIdsOutOfRange,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "an EAGLE-3 aux layer id is not a layer of the target",
        explanation: "Every aux layer id must be < the target's num_hidden_layers: vLLM's capture loop never \
captures a larger id and the missing feature fails the first draft step. The ids mean \"input of layer idx\", which \
differs by model (MiniMax is off by one, vllm#43671). The list's type is checked here too.",
        source: "vllm-project/vllm vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py@0cfdd2e; vllm-project/vllm#43671",
    },
    applies: Applies::EagleHeads,
    needs: &[],
    check: eagle_aux_layer_ids_out_of_range,
};

fn eagle_aux_layer_ids_out_of_range(cx: &mut Ctx) {
    let Some((path, node)) = any_ids(cx.root) else {
        return;
    };
    let ids = match id_list(node) {
        Ok(ids) => ids,
        Err(what) => {
            cx.emit_type(
                &path,
                format!("`{path}` is {what}; it must be a non-empty list of layer indices"),
            );
            return;
        }
    };
    let Some(n) = cx.target_layers() else {
        cx.skip();
        return;
    };
    for (i, id) in ids.iter().enumerate() {
        if *id >= n {
            cx.emit(
                &path.index(i),
                format!("aux layer id {id} is out of range: the target has {n} layers"),
            );
        }
    }
}

const EAGLE_AUX_LAYER_IDS_COUNT: Rule = Rule {
    code: LintCode::EagleAuxLayerIdsCount,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "not 3 aux layer ids: vLLM's EAGLE-3 fc takes exactly 3 target layers",
        explanation: "vLLM's Llama EAGLE-3 head (llama_eagle3.py) builds its fc for 3 × target hidden size \
inputs, a hard-coded 3; a head trained on another number of layers has an fc weight of another width and fails to \
load there (speculators#1065, vllm#54526 report a config with a different count). An error with --engine vllm, a \
warning otherwise (other engines may accept other counts).",
        source: "vllm-project/vllm vllm/model_executor/models/llama_eagle3.py (fc = 3 × hidden); vllm-project/speculators#1065; vllm-project/vllm#54526",
    },
    applies: Applies::EagleHeads,
    needs: &[],
    check: eagle_aux_layer_ids_count,
};

fn eagle_aux_layer_ids_count(cx: &mut Ctx) {
    let Some((path, node)) = any_ids(cx.root) else {
        return;
    };
    let Ok(ids) = id_list(node) else { return };
    if ids.len() == 3 {
        return;
    }
    let severity = if cx.engine() == Some(Engine::Vllm) {
        Severity::Error
    } else {
        Severity::Warning
    };
    cx.emit_as(
        severity,
        &path,
        format!(
            "{} aux layer ids: vLLM's EAGLE-3 fc takes 3 × target hidden inputs, so a head trained on {} layers \
             does not load there",
            ids.len(),
            ids.len()
        ),
    );
}

const DRAFT_VOCAB_SIZE_MISMATCH: Rule = Rule {
    code: LintCode::DraftVocabSizeMismatch,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "draft_vocab_size differs from the target vocabulary: a d2t mapping must ship with the weights",
        explanation: "EAGLE-3 heads may predict over a reduced vocabulary (SpecForge templates: 32000). Then the \
checkpoint must carry the `d2t` (draft-to-target) tensor: vLLM's llama_eagle3 creates draft_id_to_target_id and, \
when the checkpoint has none, keeps zeros, so every drafted id maps to the wrong token (NeMo-Automodel#2447: \
\"acceptance rate collapsed\"). `dflash-check weights` checks that the tensor ships.",
        source: "vllm-project/vllm vllm/model_executor/models/llama_eagle3.py (draft_id_to_target_id); NVIDIA-NeMo/Automodel#2447",
    },
    applies: Applies::EagleHeads,
    needs: &[],
    check: draft_vocab_size_mismatch,
};

fn draft_vocab_size_mismatch(cx: &mut Ctx) {
    let Some((path, node)) = find(
        cx.root,
        &[&["draft_vocab_size"], &["truncated_vocab_size"]],
    ) else {
        return;
    };
    let d = match positive_int(node) {
        Ok(d) => d,
        Err(what) => {
            cx.emit_type(
                &path,
                format!("`{path}` is {what}; it must be a positive integer"),
            );
            return;
        }
    };
    let target = cx
        .facts
        .and_then(|f| f.vocab_size)
        .or_else(|| cx.root.get("vocab_size").and_then(|n| positive_int(n).ok()));
    if let Some(t) = target.filter(|&t| t != d) {
        cx.emit(
            &path,
            format!(
                "`{path}` {d} differs from the target vocabulary {t}: the checkpoint must ship a d2t mapping"
            ),
        )
        .expected = Some(json!(t));
    }
}
