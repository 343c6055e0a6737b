//! Positions: a drafter's rotary embedding against its target's. The engines build the draft's
//! rotary embedding from the draft's own config (vLLM's DFlash and EAGLE-3 models pass the
//! draft config's `rope_parameters` to `get_rope`), so the config must say what the drafter was
//! trained with; a base or a scaling that differs from the target's is most often a config
//! copied from another model or a converter that dropped the scaling. Trainers have also
//! ignored the config's base (SpecForge#265), so a difference can be what was trained: the
//! measured effect is an acceptance loss, not a collapse, and the rule warns.

use serde_json::json;

use super::{Applies, Ctx, LintCode, Rule};
use crate::config::{field, RopeFacts};
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::Path;

pub(super) const RULES: &[Rule] = &[DRAFT_ROPE_MISMATCH];

const DRAFT_ROPE_MISMATCH: Rule = Rule {
    code: LintCode::DraftRopeMismatch,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the drafter's rotary embedding (rope_theta, rope scaling type or factor) differs from the target's",
        explanation: "Engines build the draft's rotary embedding from the draft's own config: vLLM 0.34.0's DFlash \
model passes the draft config's rope_parameters to get_rope (qwen3_dflash.py), as its EAGLE-3 model does; nothing \
compares them with the target's. A drafter is trained on the target's positions, so a base or a scaling that \
differs from the target's is usually a config copied from another model or a converter that lost the scaling \
(speculators#574). Reported effects are an acceptance and accuracy loss rather than a collapse (vllm-ascend#6612 \
for a speculators EAGLE-3 head whose rope_theta differs; sfllm#32 measured 2.39 against 2.50 accepted tokens for \
two bases), and some trainers ignored the config's base (SpecForge#265), so a difference can be what was trained: \
a warning. Compared only where both configs state the value (a draft without rope_theta gets its loader's \
default, which this tool does not guess).",
    },
    applies: Applies::All,
    needs: &[],
    check: draft_rope_mismatch,
};

fn draft_rope_mismatch(cx: &mut Ctx) {
    let Some(target) = cx.facts.and_then(|f| f.rope.clone()) else {
        return;
    };
    let Some(draft) = RopeFacts::read(cx.root) else {
        return;
    };
    if let (Some(d), Some(t)) = (draft.theta, target.theta) {
        if !same(d, t) {
            let path = field(cx.root, "rope_theta")
                .map(|(p, _)| p)
                .unwrap_or_else(|| Path::key("rope_theta"));
            let d = cx.emit(
                &path,
                format!(
                    "rope_theta is {d} and the target's is {t}: the engine rotates the draft's positions with \
                     {d}; if the drafter was trained with the target's base, set `{path}` to {t} (keep {d} only if \
                     training used it)"
                ),
            );
            // A whole base as the integer configs write (`1000000`, not `1000000.0`).
            d.expected = Some(if t.fract() == 0.0 && t.abs() < 1e15 {
                json!(t as i64)
            } else {
                json!(t)
            });
        }
    }
    if draft.scaling != target.scaling || !same_factor(draft.factor, target.factor) {
        let path = ["rope_scaling", "rope_parameters"]
            .into_iter()
            .find(|k| cx.root.get(k).is_some())
            .map(Path::key)
            .unwrap_or_else(|| Path::key("rope_scaling"));
        cx.emit(
            &path,
            format!(
                "the draft's RoPE scaling is {} and the target's is {}: past the original context the draft's \
                 positions no longer match the target's; give `{path}` the target's scaling (type and factor) \
                 unless the drafter was trained without it",
                scaling(&draft),
                scaling(&target)
            ),
        );
    }
}

/// Bases compare by value with a relative tolerance (`1e6` and `1000000.0` are one base).
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

fn same_factor(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// A scaling as a message shows it: `none`, `yarn with factor 4`, `llama3`.
fn scaling(r: &RopeFacts) -> String {
    match (&r.scaling, r.factor) {
        (None, _) => "none".to_string(),
        (Some(kind), Some(f)) => format!("{kind} with factor {f}"),
        (Some(kind), None) => kind.clone(),
    }
}
