//! The threshold rules: the verdict against `--min-acceptance-length` or the break-even point
//! (`acceptance-below-threshold`, the gate's only error), and the note when no threshold is
//! known (`acceptance-no-threshold`).

use super::cx::{Applies, Cx, Need, Rule};
use super::text::fmt2;
use super::verdict::{self, Measurement, Threshold, Verdict};
use super::AcceptanceCode;
use crate::diagnostic::{CodeInfo, Severity};

/// Pass at or above the threshold, fail below it, no verdict without one.
pub fn verdict(m: &Measurement, threshold: Option<&Threshold>) -> Verdict {
    match threshold {
        Some(t) if m.acceptance_length() < t.value => Verdict::Fail,
        Some(_) => Verdict::Pass,
        None => Verdict::NoThreshold,
    }
}

pub(super) const BELOW_THRESHOLD: Rule = Rule {
    code: AcceptanceCode::BelowThreshold,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the measured acceptance length is below the threshold",
        explanation: "The acceptance length (1 + accepted draft tokens per draft, the bonus token included, as vLLM logs it) over the window is below --min-acceptance-length or, without it, below the break-even point where speculative decoding is slower than none: 1 + c for DFlash (one drafter forward drafts the whole block) and 1 + K·c for EAGLE-style drafters (one forward per drafted token), c being the cost of one drafter forward relative to one target forward (default 0.15 for DFlash, 0.05 for EAGLE; --draft-cost-ratio, --draft-family; derivation in docs/acceptance.md). The per-position shape, when the engine exports it, names the likely cause (acceptance-cliff, acceptance-first-position-low).",
    },
    applies: Applies::Every,
    needs: &[Need::Threshold],
    check: below_threshold,
};

fn below_threshold(cx: &mut Cx) {
    let Some(t) = cx.threshold else {
        return;
    };
    if verdict(cx.measurement, Some(t)) != Verdict::Fail {
        return;
    }
    let al = fmt2(cx.measurement.acceptance_length());
    let of_max = verdict::of_max(cx.measurement);
    let message = match t.source.strip_prefix("break-even ") {
        Some(formula) => format!(
            "acceptance length {al} is below the break-even point {} where speculative decoding is slower than none ({formula}; {of_max}; --min-acceptance-length overrides)",
            fmt2(t.value),
        ),
        None => format!(
            "acceptance length {al} is below {} {} ({of_max})",
            t.source,
            fmt2(t.value),
        ),
    };
    let path = verdict::length_metric(cx.engine());
    cx.emit(path, message).expected = Some(serde_json::json!(t.value));
    if cx.next_steps.is_empty() {
        // Below the bar without a signature: the config checks still apply.
        cx.config_checks_next(false);
    }
}

pub(super) const NO_THRESHOLD: Rule = Rule {
    code: AcceptanceCode::NoThreshold,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "no acceptance threshold is known, so there is no verdict",
        explanation: "No --min-acceptance-length was given and the break-even point cannot be computed: an EAGLE-style drafter's break-even 1 + K·c needs K, which SGLang does not export. The numbers are reported; pass --min-acceptance-length X (for example the acceptance length the drafter's model card reports for a similar workload) to gate on them.",
    },
    applies: Applies::Every,
    needs: &[],
    check: no_threshold,
};

fn no_threshold(cx: &mut Cx) {
    if cx.threshold.is_some() {
        return;
    }
    let snap_note = match cx.snapshots {
        [] => String::new(),
        list => {
            let many = list.len() > 1;
            format!(
                "; the built-in snapshot{} {} match{} the served model but record{} no expected acceptance length",
                if many { "s" } else { "" },
                list.join(", "),
                if many { "" } else { "es" },
                if many { "" } else { "s" },
            )
        }
    };
    let path = verdict::length_metric(cx.engine());
    cx.emit(path, format!("no threshold: pass --min-acceptance-length X to gate on the acceptance length{snap_note}"));
}
