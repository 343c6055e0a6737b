//! EAGLE-3 heads (and P-EAGLE): the auxiliary hidden-state layers they read, where vLLM looks
//! for them, how many its fc accepts, and the reduced draft vocabulary.

use serde_json::json;

use super::{
    find, id_list, list_text, positive_int, Applies, ByEngine, Ctx, Engine, Family, LintCode, Need,
    ReleaseRow, Rule,
};
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{Node, Path};

/// The rules here whose severity follows the engine and its version.
pub(super) const BY_ENGINE: &[(LintCode, &ByEngine)] = &[
    (
        LintCode::EagleAuxLayerIdsCount,
        &EAGLE_AUX_LAYER_IDS_COUNT_BY_ENGINE,
    ),
    (
        LintCode::EagleMaxPositionShort,
        &EAGLE_MAX_POSITION_SHORT_BY_ENGINE,
    ),
    (
        LintCode::EagleAuxLayerIdsNested,
        &EAGLE_AUX_LAYER_IDS_NESTED_BY_ENGINE,
    ),
    (
        LintCode::ParallelDraftingTokenMissing,
        &PARALLEL_DRAFTING_ON,
    ),
    (
        LintCode::PeagleParallelDraftingOff,
        &PEAGLE_PARALLEL_DRAFTING_OFF_BY_ENGINE,
    ),
];

pub(super) const RULES: &[Rule] = &[
    EAGLE_AUX_LAYER_IDS_MISSING,
    EAGLE_AUX_LAYER_IDS_NESTED,
    EAGLE_AUX_LAYER_IDS_OUT_OF_RANGE,
    EAGLE_AUX_LAYER_IDS_COUNT,
    DRAFT_VOCAB_SIZE_MISMATCH,
    TARGET_HIDDEN_SIZE_NULL,
    PARALLEL_DRAFTING_TOKEN_MISSING,
    PEAGLE_PARALLEL_DRAFTING_OFF,
    EAGLE_MAX_POSITION_SHORT,
];

/// Where vLLM reads the aux ids: the top-level key, or `eagle_config.layer_ids` (from v0.27; not
/// read at v0.26.0); speculators configs use `aux_hidden_state_layer_ids`. A `null` is no list:
/// vLLM reads the ids with `if not layer_ids` (falling back to its default layers), its
/// speculators loader copies them only when truthy, and SGLang takes `None` as "default".
fn read_by_vllm(root: &Node) -> Option<(Path, &Node)> {
    present(
        root,
        &[
            &["eagle_aux_hidden_state_layer_ids"],
            &["eagle_config", "layer_ids"],
            &["aux_hidden_state_layer_ids"],
            &["speculators_config", "aux_hidden_state_layer_ids"],
        ],
    )
}

/// The first of `paths` whose value is not `null`.
fn present<'a>(root: &'a Node, paths: &[&[&str]]) -> Option<(Path, &'a Node)> {
    paths
        .iter()
        .find_map(|keys| find(root, &[*keys]).filter(|(_, n)| !n.is_null()))
}

const NESTED: &[&str] = &["eagle_config", "eagle_aux_hidden_state_layer_ids"];

/// The aux ids wherever they are, the nested spelling last.
fn any_ids(root: &Node) -> Option<(Path, &Node)> {
    read_by_vllm(root).or_else(|| present(root, &[NESTED]))
}

const EAGLE_AUX_LAYER_IDS_MISSING: Rule = Rule {
    code: LintCode::EagleAuxLayerIdsMissing,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "no eagle_aux_hidden_state_layer_ids: vLLM falls back to default layers",
        explanation: "EAGLE-3 heads read target layers named by `eagle_aux_hidden_state_layer_ids`. Without it \
vLLM uses the target model's default layers (2, n / 2, n - 3 for most models) and says so only in an info log \
(\"Using Eagle3 auxiliary layers from model\", v0.26.0; no warning) — right for heads trained with those defaults \
(SpecForge's default), wrong otherwise: vLLM PR 50170 measured 1.2% acceptance for \
nvidia/Llama-3.3-70B-Instruct-Eagle3, which omits them. A warning, since the defaults \
may be the trained layers. A `null` list is the same as none: vLLM reads the ids with `if not layer_ids` (v0.26.0 \
eagle3_utils.py, gpu_model_runner.py) and its speculators loader copies them only when truthy (algos.py), so both \
fall back to the default layers; SGLang takes None as \"default\" too. For speculators-format heads the finding is \
info: the speculators library writes null by default and trains on [2, n // 2, n - 3] (resolve_target_layer_ids), \
the layers vLLM falls back to. Nothing is said for heads with `eagle_config.use_aux_hidden_state: false`: they read no \
auxiliary states at all (vLLM's EAGLE-3 and DFlash heads read the flag from `eagle_config` and build no fc without \
them), so no ids are expected.",
    },
    applies: Applies::EagleHeads,
    needs: &[],
    check: eagle_aux_layer_ids_missing,
};

/// `eagle_config.use_aux_hidden_state: false`: the head reads no auxiliary hidden states, so it
/// has no aux layer ids to name (vLLM reads the flag from `eagle_config` only).
fn uses_no_aux_states(root: &Node) -> bool {
    Path::key("eagle_config")
        .child("use_aux_hidden_state")
        .lookup(root)
        .and_then(Node::as_bool)
        == Some(false)
}

fn eagle_aux_layer_ids_missing(cx: &mut Ctx) {
    if any_ids(cx.root).is_some() || uses_no_aux_states(cx.root) {
        return;
    }
    let path = Path::key("eagle_aux_hidden_state_layer_ids");
    let written = if path.lookup(cx.root).is_some() {
        "`eagle_aux_hidden_state_layer_ids` is null"
    } else {
        "no `eagle_aux_hidden_state_layer_ids`"
    };
    // The speculators library writes null for "default layers" and trains on
    // [2, n // 2, n - 3] (models/utils.py resolve_target_layer_ids), the layers vLLM falls
    // back to: the ids the head was trained with, so worth knowing, not a likely mistake.
    if cx.detection.name == Family::Speculators {
        cx.emit_as(
            Severity::Info,
            &path,
            format!(
                "{written}: the speculators format's default, trained on the layers [2, n // 2, n - 3] that vLLM \
                 also falls back to (its speculators loader copies the ids only when set)"
            ),
        );
        return;
    }
    cx.emit(
        &path,
        format!(
            "{written}: vLLM falls back to the target model's default layers (2, n / 2, n - 3 for most models), \
             saying so only in an info log; acceptance collapses unless the head was trained with them"
        ),
    );
}

const EAGLE_AUX_LAYER_IDS_NESTED: Rule = Rule {
    code: LintCode::EagleAuxLayerIdsNested,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "aux layer ids only under eagle_config.eagle_aux_hidden_state_layer_ids, where vLLM does not read them",
        explanation: "vLLM's get_eagle3_aux_layers_from_config reads the top-level \
`eagle_aux_hidden_state_layer_ids` (else a DFlash/DSpark drafter's target_layer_ids + 1; from v0.27 also \
`eagle_config.layer_ids`, not read at v0.26.0), never `eagle_config.eagle_aux_hidden_state_layer_ids`: ids written \
only there are ignored and vLLM falls back to its default layers. SGLang and SpecForge read the nested \
key (no finding with --engine sglang). For vLLM, copy the list to the top level — in vLLM's input-of-layer \
convention, which may be SpecForge's output-of-layer ids + 1: check.",
    },
    applies: Applies::EagleHeads,
    needs: &[],
    check: eagle_aux_layer_ids_nested,
};

/// Who reads the aux ids only nested: vLLM does not (it falls back to its default layers);
/// SGLang and SpecForge do.
const EAGLE_AUX_LAYER_IDS_NESTED_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Warning),
            "reads the top-level key or eagle_config.layer_ids, not the nested one: it falls back to its default layers",
        ),
        ReleaseRow::any_version(Engine::Sglang, None, "reads the nested key"),
    ],
};

fn eagle_aux_layer_ids_nested(cx: &mut Ctx) {
    // Speculators configs have their own key.
    if read_by_vllm(cx.root).is_some() || cx.detection.name == Family::Speculators {
        return;
    }
    if let Some((path, node)) = present(cx.root, &[NESTED]) {
        let shown = id_list(node).map_or_else(|_| node.to_compact(), |ids| list_text(&ids));
        cx.emit_by_engine(
            &path,
            format!(
                "the aux layer ids {shown} are only at `{path}`, which vLLM does not read: it falls back to its \
                 default layers; SGLang reads them there; for vLLM copy them to the top level (check the +1 \
                 convention)"
            ),
        );
    }
}

const EAGLE_AUX_LAYER_IDS_OUT_OF_RANGE: Rule = Rule {
    code: LintCode::EagleAuxLayerIdsOutOfRange,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "an EAGLE-3 aux layer id is above the target's layer count",
        explanation: "EAGLE-3 aux ids name hidden-state boundaries: id i is the residual stream entering layer i, \
and id n (the target's layer count) is the output of the last layer. SGLang serves GPT-OSS EAGLE-3 heads tapping \
[24, 30, 36] on the 36-layer target (sglang PR 32334, merged: it captures the final boundary), vLLM models built \
on EagleModelMixin capture after each layer so n is reachable (vLLM PR 46788 moves DeepSeek onto it; before it, \
DeepSeek's loop captured nothing for n), and llama.cpp PR 25794 reads the final layer's output for \
nvidia/gpt-oss-120b-Eagle3-v3. So an id equal to n is legitimate, reported as info (a model still on an older \
capture loop captures nothing there); an id above n is a boundary that does not exist: nothing captures it and the \
head gets fewer features than its fc expects — an error. The ids' meaning differs by model (MiniMax is off by one, \
vllm#43671). The list's type is checked here too.",
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
    for (i, &id) in ids.iter().enumerate() {
        if id > n {
            cx.emit(
                &path.index(i),
                format!(
                    "aux layer id {id} is out of range: the target has {n} layers, so the boundaries are 0..={n} \
                     ({n} = the last layer's output)"
                ),
            );
        } else if id == n {
            cx.emit_as(
                Severity::Info,
                &path.index(i),
                format!(
                    "aux layer id {id} is the output of the target's last layer ({n} layers): SGLang's GPT-OSS path \
                     and vLLM models on EagleModelMixin capture it; a model on an older capture loop captures nothing"
                ),
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
    },
    applies: Applies::EagleHeads,
    needs: &[],
    check: eagle_aux_layer_ids_count,
};

const EAGLE_AUX_LAYER_IDS_COUNT_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Error),
            "the Llama EAGLE-3 fc takes 3 x hidden inputs: the weight does not load",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Warning),
            "other counts may be accepted",
        ),
    ],
};

fn eagle_aux_layer_ids_count(cx: &mut Ctx) {
    let Some((path, node)) = any_ids(cx.root) else {
        return;
    };
    let Ok(ids) = id_list(node) else { return };
    if ids.len() == 3 {
        return;
    }
    cx.emit_by_engine(
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
    },
    applies: Applies::EagleHeads,
    needs: &[],
    check: draft_vocab_size_mismatch,
};

fn draft_vocab_size_mismatch(cx: &mut Ctx) {
    let Some((path, node)) = find(cx.root, &[&["draft_vocab_size"], &["truncated_vocab_size"]])
    else {
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

const TARGET_HIDDEN_SIZE_NULL: Rule = Rule {
    code: LintCode::TargetHiddenSizeNull,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "target_hidden_size is null in an EAGLE-3 head: vLLM and SpecForge compute null × 3",
        explanation: "vLLM's Llama EAGLE-3 head (and SpecForge's EAGLE-3 and P-EAGLE heads) test only whether \
the config has `target_hidden_size` and then build fc for target_hidden_size × 3: a null value raises TypeError at \
load. Remove the key (the head then uses hidden_size) or write the target's hidden size. DFlash-family configs are \
not affected (vLLM's DFlash uses `target_hidden_size or hidden_size`), nor speculators-format configs (its adapter \
skips a null).",
    },
    applies: Applies::Only(&[Family::Eagle3, Family::Peagle]),
    needs: &[],
    check: target_hidden_size_null,
};

fn target_hidden_size_null(cx: &mut Ctx) {
    if cx.root.get("target_hidden_size").is_some_and(Node::is_null) {
        cx.emit(
            &Path::key("target_hidden_size"),
            "`target_hidden_size` is null: vLLM's and SpecForge's EAGLE-3 heads test only that the key exists and \
             compute null × 3 (TypeError at load); remove the key or write the target's hidden size"
                .to_string(),
        );
    }
}

/// The parallel-drafting token of a P-EAGLE head, where vLLM looks for it.
fn parallel_drafting_token(root: &Node) -> Option<Path> {
    find(
        root,
        &[
            &["pard_token"],
            &["ptd_token_id"],
            &["mask_token_id"],
            &["dflash_config", "mask_token_id"],
        ],
    )
    .filter(|(_, n)| !n.is_null())
    .map(|(p, _)| p)
}

/// Whether the speculative config asks vLLM for parallel drafting.
fn parallel_drafting(cx: &Ctx) -> Option<bool> {
    cx.options.speculative_config.as_ref().map(|s| {
        s.get("parallel_drafting")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false)
    })
}

const PARALLEL_DRAFTING_TOKEN_MISSING: Rule = Rule {
    code: LintCode::ParallelDraftingTokenMissing,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a P-EAGLE head without its parallel-drafting token (pard_token / ptd_token_id)",
        explanation: "P-EAGLE drafts several positions in one pass, filling them with a parallel-drafting token. \
vLLM's P-EAGLE speculator needs `pard_token` or `ptd_token_id` in config.json (the V1 proposer also accepts \
mask_token_id) and refuses to start without it when parallel drafting is on. SpecForge's P-EAGLE template resolves \
the id at training time and does not write it: add the id the head was trained with. An error with --engine vllm \
and parallel drafting (or no --speculative-config to say otherwise), a warning otherwise.",
    },
    applies: Applies::Only(&[Family::Peagle]),
    needs: &[],
    check: parallel_drafting_token_missing,
};

/// A P-EAGLE head without its token, served with parallel drafting on (or nothing said
/// otherwise): vLLM's P-EAGLE speculator refuses to start.
const PARALLEL_DRAFTING_ON: ByEngine = ByEngine {
    case: Some("parallel drafting is on (or the speculative config does not say)"),
    no_engine: Some(Severity::Warning),
    rows: &[ReleaseRow::any_version(
        Engine::Vllm,
        Some(Severity::Error),
        "its P-EAGLE speculator needs pard_token or ptd_token_id and refuses to start without it",
    )],
};

fn parallel_drafting_token_missing(cx: &mut Ctx) {
    if parallel_drafting_token(cx.root).is_some() {
        return;
    }
    let message = "no parallel-drafting token: vLLM's P-EAGLE speculator needs `pard_token` or `ptd_token_id` \
                   in config.json and refuses to start without it; add the id the head was trained with"
        .to_string();
    if parallel_drafting(cx) == Some(false) {
        cx.emit_as(Severity::Warning, &Path::key("pard_token"), message);
    } else {
        cx.emit_judged(&PARALLEL_DRAFTING_ON, &Path::key("pard_token"), message);
    }
}

const PEAGLE_PARALLEL_DRAFTING_OFF: Rule = Rule {
    code: LintCode::PeagleParallelDraftingOff,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a P-EAGLE head served without parallel_drafting: true",
        explanation: "vLLM runs a P-EAGLE head with parallel drafting only when --speculative-config says \
\"parallel_drafting\": true (P-EAGLE = method eagle3 + parallel drafting); otherwise it drafts sequentially like \
EAGLE-3 and skips the head's mask_hidden weight.",
    },
    applies: Applies::Only(&[Family::Peagle]),
    needs: &[Need::Engine],
    check: peagle_parallel_drafting_off,
};

/// Who drafts a P-EAGLE head sequentially when the speculative config does not turn parallel
/// drafting on: vLLM (P-EAGLE is its method eagle3 with parallel drafting).
const PEAGLE_PARALLEL_DRAFTING_OFF_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: None,
    rows: &[ReleaseRow::any_version(
        Engine::Vllm,
        Some(Severity::Warning),
        "drafts sequentially, like EAGLE-3, and skips the head's mask_hidden weight",
    )],
};

fn peagle_parallel_drafting_off(cx: &mut Ctx) {
    if parallel_drafting(cx) == Some(false) {
        cx.emit_by_engine(
            &Path::root(),
            "--speculative-config does not set \"parallel_drafting\": true: vLLM drafts sequentially with this \
             P-EAGLE head, like EAGLE-3"
                .to_string(),
        );
    }
}

const EAGLE_MAX_POSITION_SHORT_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 26),
            Some(Severity::Error),
            "sizes the draft's rotary cache by it: a device-side assert past that length (vllm#48894)",
        ),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 27),
            Some(Severity::Info),
            "raises it to the target's max_model_len (read at 0.27.1 and 0.34.0; 0.34.0 caps max_model_len to the \
             draft's instead when its RoPE type uses the length)",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "0.5.23 builds the draft at the target's context length and raises ValueError unless \
             SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1; acceptance collapsed past it (sglang#6783)",
        ),
    ],
};

const EAGLE_MAX_POSITION_SHORT: Rule = Rule {
    code: LintCode::EagleMaxPositionShort,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the EAGLE head's max_position_embeddings is below the target's",
        explanation: "Under SGLang, EAGLE-3 heads with a short max_position_embeddings do worse than no \
speculation past that length (sglang#6783); SpecForge PR #271 raised its Qwen3-8B template from 2048 to 40960 for \
\"extremely low\" acceptance. vLLM up to v0.26 sizes the draft's rotary cache by it and feeds positions up to \
the target's max_model_len: past the draft's length the cache gather fails a device-side assert under \
torch.compile and reads garbage in eager mode (vllm#48894): an error with --engine vllm@0.26 or older. vLLM v0.27 \
raises the value to the target's max_model_len: info with --engine vllm (the newest). SGLang 0.5.23 builds the \
EAGLE draft worker with the target's context length (eagle_worker_v2.py: \"the draft runs at absolute target \
positions\"), and ModelConfig raises ValueError when that exceeds the length derived from the draft's \
max_position_embeddings (\"Target model's context_length ... is greater than the derived context_length\") unless \
SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1, which then overrides the draft's value: an error with --engine sglang \
(the server does not start as launched; sglang#6783 is the acceptance collapse of a release that ran it as is).",
    },
    applies: Applies::EagleHeads,
    needs: &[],
    check: eagle_max_position_short,
};

fn eagle_max_position_short(cx: &mut Ctx) {
    let (Some(reach), Some(d)) = (
        super::positions::Reach::of(cx),
        super::positions::draft_positions(cx),
    ) else {
        return;
    };
    if d < reach.tokens {
        let n = reach.tokens;
        let Some(diag) = cx.emit_by_engine(
            &Path::key("max_position_embeddings"),
            format!(
                "max_position_embeddings {d} is below {}: SGLang 0.5.23 refuses to start the draft at the target's \
                 context length unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 (older releases collapsed \
                 acceptance past it, sglang#6783); vLLM up to v0.26 crashes past it (vllm#48894), v0.27 raises it \
                 to the target's max_model_len; set `max_position_embeddings` to {n}",
                reach.named
            ),
        ) else {
            return;
        };
        diag.expected = Some(json!(n));
    }
}
