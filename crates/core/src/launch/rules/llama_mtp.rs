//! llama.cpp's `draft-mtp` with a separate MTP draft GGUF (`-md mtp.gguf`, what
//! `convert_hf_to_gguf.py --mtp` writes) whose vocabulary is not the target's. llama.cpp
//! compares a draft's vocabulary with the target's only in its `draft-simple` implementation
//! (`common_speculative_are_compatible`, common/speculative.cpp at 0c1e570); the `draft-mtp`
//! implementation asserts the two widths agree and nothing else, so a head of another model
//! with the right hidden size loads and drafts ids that mean other text, or ids past its own
//! vocabulary (pocketpal-ai#876 paired draft and target on width alone; FIELD row 12).
//!
//! The comparison is the vocabulary module's (token count and the text of every id), made by
//! the `dflash-check` crate from the two local GGUF headers and handed over on the draft's
//! [`GgufModel::vocabulary`].

use super::llama::GgufModel;
use super::{Cx, Need, Rule, LLAMA_CPP};
use crate::diagnostic::{CodeInfo, Severity};
use crate::launch::LaunchCode;
use crate::vocab::compare::{Difference, TextDiff};

pub(super) const LLAMA_MTP_DRAFT_VOCAB: Rule = Rule {
    code: LaunchCode::LlamaMtpDraftVocab,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "--spec-type draft-mtp with an MTP draft GGUF whose vocabulary is not the target's",
        explanation: "llama.cpp runs a separate MTP draft (`-md`, an MTP-only GGUF) with the target's token ids, and \
checks the draft's vocabulary against the target's only for draft-simple (common_speculative_are_compatible, \
common/speculative.cpp at 0c1e570): the draft-mtp implementation asserts equal widths (`n_embd`) and nothing more. \
A head converted from another model of the same width loads; with fewer tokens the target's ids past its \
vocabulary fail the draft batch (`invalid token`), with other text at the same ids it drafts other words and \
acceptance collapses (pocketpal-ai#876). An error when the token counts, the tokenizer model or the text of \
ordinary ids differ; a warning when only added or special tokens differ. Use the MTP GGUF converted from the \
target's own checkpoint.",
    },
    applies: LLAMA_CPP,
    needs: &[Need::DraftGguf],
    check: mtp_draft_vocab,
};

/// Whether the line runs the draft as `draft-mtp`: the type written, or inferred from the
/// draft's metadata when none is.
fn runs_as_mtp(cx: &Cx, draft: &GgufModel) -> bool {
    let types = &cx.launch().llama.types;
    types.iter().any(|t| t == "draft-mtp")
        || (types.is_empty() && draft.inferred_type == Some("draft-mtp"))
}

fn first_ids(d: &TextDiff) -> String {
    let show = |t: &Option<String>| t.as_deref().map_or("(none)".into(), |t| format!("{t:?}"));
    let ids: Vec<String> = d
        .first
        .iter()
        .map(|(id, here, there)| format!("{id} {} here, {} in the target", show(here), show(there)))
        .collect();
    ids.join("; ")
}

fn mtp_draft_vocab(cx: &mut Cx) {
    let Some(draft) = cx.input.draft_gguf else {
        return;
    };
    if cx.launch().drafter.is_none() || !runs_as_mtp(cx, draft) {
        return;
    }
    let Some(cmp) = draft.vocabulary.as_ref() else {
        return;
    };
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for d in &cmp.differences {
        match d {
            Difference::Size { here, target } => {
                errors.push(format!("{here} tokens here, {target} in the target"))
            }
            Difference::Model { here, target } => errors.push(format!(
                "tokenizer model {} here, {} in the target",
                here.as_deref().unwrap_or("(none)"),
                target.as_deref().unwrap_or("(none)")
            )),
            Difference::Text(t) => {
                errors.push(format!("{} ids have other text: {}", t.count, first_ids(t)))
            }
            Difference::Added(t) => warnings.push(format!(
                "{} added or special tokens differ: {}",
                t.count,
                first_ids(t)
            )),
            _ => {}
        }
    }
    let (severity, what) = match (errors.is_empty(), warnings.is_empty()) {
        (true, true) => return,
        (false, _) => (Severity::Error, [errors, warnings].concat()),
        (true, false) => (Severity::Warning, warnings),
    };
    let d = cx.emit(
        crate::engine::llama_cpp::SPEC_TYPE,
        (Some(crate::engine::llama_cpp::SPEC_TYPE), "draft-mtp"),
        format!(
            "the MTP draft {} (-md) runs with the target's ids, and its vocabulary is not the target {}'s: {}. \
             llama.cpp checks vocabularies for draft-simple only, so draft-mtp loads this head and drafts other \
             tokens; use the MTP GGUF converted from the target's own checkpoint",
            draft.file,
            cmp.target,
            what.join("; ")
        ),
        None,
    );
    d.severity = severity;
}
