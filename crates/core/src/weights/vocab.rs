//! Rules about the vocabulary maps: a reduced draft vocabulary with no `d2t`, a `d2t` or `t2d`
//! of another length. (A DFlash `d2t` no vocabulary needs is `weights-unexpected-tensor`'s.)

use serde_json::json;

use super::cx::{Cx, Need, Rule, KNOWN_LAYOUTS};
use super::text::shape_text;
use super::WeightsCode;
use crate::diagnostic::{CodeInfo, Severity};

pub(super) const RULES: &[Rule] = &[D2T_MISSING, D2T_LENGTH, T2D_LENGTH];

/// How messages name the vocabulary the draft one is compared with.
pub(super) fn target_vocab_text(cx: &Cx) -> &'static str {
    if cx.v.target.is_some() {
        "the target's vocabulary"
    } else {
        "vocab_size"
    }
}

const D2T_MISSING: Rule = Rule {
    code: WeightsCode::D2tMissing,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "draft_vocab_size differs from the target vocabulary and the weights have no d2t",
        explanation: "A drafter with a reduced vocabulary predicts draft ids that the `d2t` tensor (draft to \
target offsets) maps to target ids. vLLM allocates `draft_id_to_target_id` as zeros and keeps them when the \
checkpoint has no `d2t`: every draft id is read as the same-numbered target id and acceptance collapses, with \
no error. Ship the d2t tensor the drafter was trained with, or set draft_vocab_size to the target vocabulary.",
    },
    applies: KNOWN_LAYOUTS,
    needs: &[Need::DraftVocab, Need::TargetVocab],
    check: d2t_missing,
};

/// A `d2t` the index puts in a missing shard is `weights-shard-missing`'s.
fn d2t_missing(cx: &mut Cx) {
    let v = cx.v;
    let Some(l) = &v.layout else { return };
    if v.names.by_name.contains_key("d2t") || l.map_needed() != Some(true) {
        return;
    }
    let s = &l.sizes;
    let message = format!(
        "the draft vocabulary ({} {}) differs from {} ({}), and no shard holds `d2t`: each drafted id is read \
         as the same-numbered target id (vLLM keeps its draft-to-target map at zero, SGLang builds none), so \
         every drafted id becomes the wrong token and acceptance collapses with no error",
        if s.draft_vocab_explicit {
            "draft_vocab_size"
        } else {
            "vocab_size, no draft_vocab_size"
        },
        s.draft_vocab.unwrap_or(0),
        target_vocab_text(cx),
        l.target_vocab.unwrap_or(0)
    );
    let d = cx.diag("d2t", &v.whole_file(), message);
    cx.push(d.expected(json!([s.draft_vocab])));
}

const D2T_LENGTH: Rule = Rule {
    code: WeightsCode::D2tLength,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the d2t tensor's length differs from draft_vocab_size",
        explanation:
            "`d2t` holds one offset per draft id: shape [draft_vocab_size]. vLLM loads it into a \
parameter of that shape, so another length fails to load.",
    },
    applies: KNOWN_LAYOUTS,
    needs: &[Need::DraftVocab],
    check: d2t_length,
};

fn d2t_length(cx: &mut Cx) {
    let want = cx.v.layout.as_ref().and_then(|l| l.sizes.draft_vocab);
    wrong_length(cx, "d2t", want, |dv| {
        format!("draft_vocab_size is {dv}: it must hold one offset per draft id")
    });
}

/// A vocabulary map the file holds whose shape is not `[want]`: "`NAME` is SHAPE but WHY".
fn wrong_length(cx: &mut Cx, name: &str, want: Option<u64>, why: impl Fn(u64) -> String) {
    let v = cx.v;
    let Some(t) = v.names.by_name.get(name) else {
        return;
    };
    let Some(want) = want.filter(|w| t.shape != [*w]) else {
        return;
    };
    let message = format!("`{}` is {} but {}", t.name, shape_text(&t.shape), why(want));
    let d = cx.diag(&t.name, &v.file_of(t), message);
    cx.push(d.expected(json!([want])));
}

const T2D_LENGTH: Rule = Rule {
    code: WeightsCode::T2dLength,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the t2d tensor's length differs from the target vocabulary",
        explanation: "`t2d` marks, per target id, whether it is in the draft vocabulary: shape [target \
vocab_size]. vLLM and SGLang skip it at load, so a wrong length breaks nothing directly, but it says the \
mapping was built for another vocabulary (and then `d2t` probably was too).",
    },
    applies: KNOWN_LAYOUTS,
    needs: &[Need::TargetVocab],
    check: t2d_length,
};

fn t2d_length(cx: &mut Cx) {
    let want = cx.v.layout.as_ref().and_then(|l| l.target_vocab);
    let vocab = target_vocab_text(cx);
    wrong_length(cx, "t2d", want, |tv| {
        format!("{vocab} is {tv}: the mapping was built for another vocabulary")
    });
}
