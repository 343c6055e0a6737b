//! The diff's rules: how each kind of difference is classified, and the two kinds found beside
//! the walk (a layout spelled differently, token ids with no embedding row on both sides).
//!
//! The walk in `diff` finds where the two configs differ; it does not judge. Each kind of
//! difference is a [`Rule`] here, with its code's documentation, run by the one rule engine:
//! the four walk kinds (`changed`, `type`, `only-local`, `only-authority`) take the severity of
//! the field they are at — [`severity_of`]: metadata, training-only keys and fields no engine
//! reads are warnings, every other field (including keys the tool has never seen) is an error —
//! and `layout` and `out-of-range` look for their differences themselves. `out-of-range` needs
//! the target's tokens; without them it is skipped (a bare `compare` does not look for it).

use serde::Serialize;

use super::token_fields::{has_id_past_u64, has_negative_id, token_fields, token_ids};
use super::{severity_of, Canonical, DiffKind, Difference};
use crate::config::Layout;
use crate::diagnostic::codes::DiffCode;
use crate::diagnostic::rule::{Everywhere, NeedKind, RuleFamily};
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{Node, Path};
use crate::tokens::TokenTable;

/// The diff's family of rules.
pub struct DiffRules;

/// A diff rule.
pub type Rule = crate::diagnostic::rule::Rule<DiffRules>;

/// What the diff's rules see: both configs as written and in the canonical layout, the target's
/// tokens when known, and the differences found so far (which they classify and add to).
pub struct Comparison<'a> {
    pub local: &'a Node,
    pub authority: &'a Node,
    pub local_canonical: &'a Canonical<'a>,
    pub authority_canonical: &'a Canonical<'a>,
    pub tokens: Option<&'a TokenTable>,
    pub differences: Vec<Difference>,
}

/// What a diff rule can need beyond the two configs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffNeed {
    /// The target's token table (`--target DIR` or `--tokenizer DIR`, or the built-in table).
    TargetTokens,
}

impl NeedKind for DiffNeed {
    fn describe(self) -> &'static str {
        match self {
            DiffNeed::TargetTokens => "the target's tokens (diff decodes ids with them)",
        }
    }
}

impl RuleFamily for DiffRules {
    type Cx<'a> = Comparison<'a>;
    type Code = DiffCode;
    type Scope = Everywhere;
    type Need = DiffNeed;

    fn in_scope(_: &Comparison<'_>, _: Everywhere) -> bool {
        true
    }

    fn has(cx: &Comparison<'_>, need: DiffNeed) -> bool {
        match need {
            DiffNeed::TargetTokens => cx.tokens.is_some(),
        }
    }

    /// Diff rules classify differences rather than emit diagnostics (the report turns each
    /// difference into one), so there is no running rule to remember.
    fn enter(_: &mut Comparison<'_>, _: &'static Rule) {}
}

/// Every diff rule, in the order the differences are reported before sorting: the walk's
/// kinds, then the layout line, then ids out of range on both sides.
pub static RULES: &[Rule] = &[
    CHANGED,
    TYPE_CHANGED,
    ONLY_LOCAL,
    ONLY_AUTHORITY,
    LAYOUT,
    OUT_OF_RANGE,
];

/// Gives every difference of `kind` the severity of the field it is at; a key one side lacks
/// whose value on the other side is the default that side's loader uses is info.
fn classify(cx: &mut Comparison<'_>, kind: DiffKind) {
    let (local, authority) = (cx.local, cx.authority);
    // The side without the key loads with its own model_type's class default. Looked up once
    // per kind, not per difference: a lookup walks the object's keys, and a config of 95,000
    // keys has as many differences (bench/shapes.sh; fix's linear-time test).
    let lacking = match kind {
        DiffKind::OnlyAuthority => local,
        _ => authority,
    };
    let model_type = match kind {
        DiffKind::OnlyAuthority | DiffKind::OnlyLocal => lacking
            .get("model_type")
            .or_else(|| local.get("model_type"))
            .or_else(|| authority.get("model_type"))
            .and_then(Node::as_str),
        _ => None,
    };
    for d in cx.differences.iter_mut().filter(|d| d.kind == kind) {
        d.severity = severity_of(&d.path);
        let present = match kind {
            DiffKind::OnlyAuthority => d.authority.as_ref(),
            DiffKind::OnlyLocal => d.local.as_ref(),
            _ => continue,
        };
        let (Some(value), Some(key), true) = (present, d.path.last_key(), d.path.0.len() == 1)
        else {
            continue;
        };
        if super::defaults::equals_default(model_type, key, value) {
            d.severity = Severity::Info;
            d.note = Some(format!(
                "{} is transformers' default for model_type `{}`: a config without the key is read as {}",
                value.to_compact(),
                model_type.unwrap_or_default(),
                value.to_compact()
            ));
        }
    }
}

const CHANGED: Rule = Rule {
    code: DiffCode::Changed,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a field has a different value than in the authority",
        explanation:
            "Both sides have the field with different values. Critical fields (everything but \
known metadata and training-only keys) change what the drafter computes.",
    },
    applies: Everywhere,
    needs: &[],
    check: |cx| classify(cx, DiffKind::Changed),
};

const TYPE_CHANGED: Rule = Rule {
    code: DiffCode::TypeChanged,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a field has a different JSON type than in the authority (\"248070\" vs 248070)",
        explanation:
            "Loaders read typed values: a string where an integer belongs fails or is ignored.",
    },
    applies: Everywhere,
    needs: &[],
    check: |cx| classify(cx, DiffKind::Type),
};

const ONLY_LOCAL: Rule = Rule {
    code: DiffCode::OnlyLocal,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "only the local file has the field",
        explanation: "A key the authority does not have; loaders may read it. When the local value is the default \
the authority's loader uses (transformers 5.25.0's config class for its model_type: attention_bias, \
attention_dropout, initializer_range, mlp_bias for qwen3, qwen3_moe and llama), the loaders read the same value: \
info.",
    },
    applies: Everywhere,
    needs: &[],
    check: |cx| classify(cx, DiffKind::OnlyLocal),
};

const ONLY_AUTHORITY: Rule = Rule {
    code: DiffCode::OnlyAuthority,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "only the authority has the field",
        explanation: "A key the local file lacks; loaders fall back to a default for it. When the authority's \
value is that default (transformers 5.25.0's config class for the local model_type: attention_bias, \
attention_dropout, initializer_range, mlp_bias for qwen3, qwen3_moe and llama), the loaders read the same value: \
info, not an error.",
    },
    applies: Everywhere,
    needs: &[],
    check: |cx| classify(cx, DiffKind::OnlyAuthority),
};

const LAYOUT: Rule = Rule {
    code: DiffCode::Layout,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "same values, different layout (flat vs nested)",
        explanation: "Loaders that read one layout only fall back to defaults on the other.",
    },
    applies: Everywhere,
    needs: &[],
    check: layout,
};

/// One informational line when a layout field is spelled differently on the two sides and its
/// value agrees (a value that differs is already reported at the field).
fn layout(cx: &mut Comparison<'_>) {
    let differing: std::collections::HashSet<&str> = cx
        .differences
        .iter()
        .filter_map(|d| d.path.first_key())
        .collect();
    let mut parts = Vec::new();
    let sides = cx
        .local_canonical
        .layouts
        .iter()
        .zip(&cx.authority_canonical.layouts);
    for ((name, l), (_, a)) in sides {
        if l != a && *l != Layout::Absent && *a != Layout::Absent && !differing.contains(name) {
            parts.push(format!(
                "{name}: local {}, authority {}",
                l.as_str(),
                a.as_str()
            ));
        }
    }
    if parts.is_empty() {
        return;
    }
    cx.differences.push(Difference {
        path: Path::root(),
        kind: DiffKind::Layout,
        severity: LAYOUT.info.severity,
        local_path: None,
        authority_path: None,
        local: None,
        authority: None,
        note: Some(format!(
            "same values, different layout ({}); loaders that read one layout only may miss them",
            parts.join("; ")
        )),
    });
}

const OUT_OF_RANGE: Rule = Rule {
    code: DiffCode::OutOfRange,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a token id has no embedding row in the target, even if both sides agree",
        explanation: "An id at or past the target's vocab_size indexes past the embedding: SGLang refuses a \
mask id outside the target vocabulary. A negative id has no row either (only -1 in pad/bos/eos means \"none\"). \
An id in a field no engine reads for a drafter (bos/eos/pad) is a warning.",
    },
    applies: Everywhere,
    needs: &[DiffNeed::TargetTokens],
    check: out_of_range,
};

/// Token ids with no embedding row, even where both sides agree on them (a field that differs
/// is reported at the field already).
fn out_of_range(cx: &mut Comparison<'_>) {
    let Some(tokens) = cx.tokens else {
        return;
    };
    let mut found = Vec::new();
    for (path, node) in token_fields(cx.local) {
        let negative = has_negative_id(&path, node);
        let bad = negative
            || has_id_past_u64(node)
            || token_ids(node)
                .into_iter()
                .any(|id| tokens.decode(id).is_out_of_range());
        let already = cx
            .differences
            .iter()
            .any(|d| d.local_path.as_ref() == Some(&path));
        if !bad || already {
            continue;
        }
        let note = if negative {
            "a negative id has no embedding row (engines index the embedding with it; only \
             -1 in pad/bos/eos means \"none\"), on both sides"
        } else {
            "the id has no embedding row in the target, on both sides"
        };
        let auth_node = path.lookup(cx.authority);
        found.push(Difference {
            path: path.clone(),
            kind: DiffKind::OutOfRange,
            // An id no engine reads (a drafter's bos/eos/pad) is a warning even out of range;
            // the mask id and other read ids are errors.
            severity: severity_of(&path),
            local_path: Some(path.clone()),
            authority_path: auth_node.map(|_| path.clone()),
            local: Some(node.clone()),
            authority: auth_node.cloned(),
            note: Some(note.into()),
        });
    }
    cx.differences.extend(found);
}

/// `authority-ambiguous` is raised by the authority choice, not by a comparison: the tool's
/// own judgement, documented here with the other diff codes.
pub static AMBIGUOUS: CodeInfo = CodeInfo {
    severity: Severity::Error,
    summary: "several published configs have the drafter's shape and it equals none of them",
    explanation: "With no authority named, the drafter is matched to the built-in snapshots by its \
fingerprint (hidden_size, num_target_layers, vocab_size, architecture). When several match, they are narrowed by \
the target's identity (--target, a pin) and then by exact equality in every field that matters; the folder name is \
only a hint. A drafter equal to none of several candidates is reported against each and fails: it is not the \
published config of any of them (the incident this tool exists for is such a drafter, and is closer to the wrong \
candidate than to its real authority). Name the target or the authority to get one comparison and its fix.",
};
