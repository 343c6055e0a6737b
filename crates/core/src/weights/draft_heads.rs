//! A DFlash drafter that ships an embedding or an output head of its own, where the engine's
//! drafter loader has no parameter for them. vLLM loads both (a reduced-vocabulary head, a
//! trained embedding); dflash-mlx, which oMLX loads DFlash drafters through, refuses a
//! draft-owned `lm_head` outright (`_raise_if_unsupported_draft_lm_head`, 0.1.6 to 0.1.8: "this
//! runtime projects draft hidden states through the target … and does not load a draft lm_head
//! yet"), and its `DFlashDraftModel` (layers, norm, fc, hidden_norm) has no `embed_tokens`, so
//! mlx-lm's strict load refuses that tensor ("Received N parameters not in model"). oMLX then
//! serves the model without its drafter: a warning there, nothing elsewhere.

use super::cx::{Cx, Rule, DFLASH_LAYOUTS};
use super::WeightsCode;
use crate::diagnostic::{CodeInfo, Severity};
use crate::engine::releases::{ByEngine, ReleaseRow};
use crate::engine::Engine;

pub(super) const RULES: &[Rule] = &[DRAFT_HEAD_REFUSED];

pub(super) const DRAFT_HEAD_REFUSED_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    // vLLM and SGLang load a DFlash drafter's own embedding and head: nothing without an engine.
    no_engine: None,
    rows: &[ReleaseRow::any_version(
        Engine::Omlx,
        Some(Severity::Warning),
        "loads DFlash drafters through dflash-mlx, which refuses a draft-owned lm_head and whose draft model \
has no embed_tokens (strict load): the drafter fails to load and the model is served without it",
    )],
};

const DRAFT_HEAD_REFUSED: Rule = Rule {
    code: WeightsCode::DraftHeadRefused,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a DFlash drafter's own lm_head or embed_tokens, which the engine's drafter loader refuses",
        explanation: "dflash-mlx (the loader oMLX uses for DFlash drafters) projects draft hidden states through \
the target's head and embeds through the target's embedding: a checkpoint with `lm_head.*` tensors is refused \
before loading (\"contains draft-owned lm_head weights … does not load a draft lm_head yet\", runtime/loading.py, \
0.1.6 to 0.1.8), and `embed_tokens.*` has no parameter in its DFlashDraftModel, so mlx-lm's strict load raises \
\"Received N parameters not in model\". oMLX catches the failure and serves the model without its drafter. A \
warning under oMLX; vLLM and SGLang load both tensors, so nothing is said without an engine. Export the drafter \
without them (z-lab's DFlash checkpoints hold only layers, norm, fc and hidden_norm).",
    },
    applies: DFLASH_LAYOUTS,
    needs: &[],
    check: draft_head_refused,
};

/// One finding per kind of tensor (the head, the embedding), at its first tensor.
fn draft_head_refused(cx: &mut Cx) {
    let Some(judged) = DRAFT_HEAD_REFUSED_BY_ENGINE.judge(cx.v.engine.as_ref()) else {
        return;
    };
    let v = cx.v;
    for (kind, what) in [
        ("lm_head.", "a draft-owned lm_head: dflash-mlx refuses the checkpoint before loading it"),
        (
            "embed_tokens.",
            "an embedding of its own: dflash-mlx's draft model has no embed_tokens, so the strict load refuses it",
        ),
    ] {
        let found: Vec<_> = v
            .names
            .by_name
            .iter()
            .filter(|(canon, _)| canon.starts_with(kind))
            .map(|(_, t)| *t)
            .collect();
        let Some(t) = found.first() else {
            continue;
        };
        let (first, file) = (t.name.as_str(), v.file_of(t));
        let message = format!(
            "`{first}`{}: {what}, and oMLX serves the model without its drafter; export the drafter without it",
            if found.len() > 1 {
                format!(" and {} more", found.len() - 1)
            } else {
                String::new()
            }
        );
        cx.emit_as(judged.severity, first, &file, message);
    }
}
