//! The per-position rules: the shape of the acceptance curve names the likely cause — position
//! 1 already rarely accepted (`acceptance-first-position-low`: mask id, target layers, a
//! drafter for another target) or a cliff to ~0 after a few healthy positions
//! (`acceptance-cliff`: sliding-window layers run as full attention). The shape detectors sit
//! beside the rule that reports them; [`shape`] is what the report and `doctor` show.

use super::compute::{PositionAcceptance, Shape, VLLM_PER_POS};
use super::cx::{Applies, Cx, Need, Rule};
use super::text::{fmt2, fmt3, pct};
use super::verdict::{self, Measurement};
use super::AcceptanceCode;
use crate::diagnostic::{CodeInfo, Severity};

impl Measurement {
    /// The likely cause the acceptance points at ([`shape`]).
    pub fn shape(&self) -> Shape {
        shape(self)
    }
}

/// The likely cause the per-position acceptance (or, without it, the acceptance length)
/// points at, as the cause rules below judge it: position 1 first (a drafter whose first guess
/// is wrong has no later positions to judge), then a cliff.
pub fn shape(m: &Measurement) -> Shape {
    match m {
        Measurement::Counters(w) if !w.per_position.is_empty() => {
            shape_of_positions(&w.per_position)
        }
        _ => shape_from_length(m.acceptance_length()),
    }
}

/// The shape of a per-position acceptance curve (position 1 first).
pub fn shape_of_positions(per_position: &[PositionAcceptance]) -> Shape {
    first_position_measured(per_position)
        .or_else(|| cliff_at(per_position))
        .unwrap_or(Shape::Gradual)
}

/// Without per-position counters (SGLang): only position 1 can be bounded.
pub fn shape_from_length(acceptance_length: f64) -> Shape {
    first_position_bounded(acceptance_length).unwrap_or(Shape::Gradual)
}

/// Position 1 accepted less often than this: the drafter's first guess is already wrong.
pub const FIRST_POSITION_LOW: f64 = 0.2;

fn first_position_measured(per_position: &[PositionAcceptance]) -> Option<Shape> {
    let first = per_position.first()?;
    (first.acceptance < FIRST_POSITION_LOW).then_some(Shape::FirstPositionLow {
        value: first.acceptance,
        measured: true,
    })
}

/// Acceptance length − 1 is the sum of the per-position acceptances, each at most position
/// 1's, so a length under 1 + [`FIRST_POSITION_LOW`] bounds position 1 below it too.
fn first_position_bounded(acceptance_length: f64) -> Option<Shape> {
    let bound = acceptance_length - 1.0;
    (bound < FIRST_POSITION_LOW).then_some(Shape::FirstPositionLow {
        value: bound.max(0.0),
        measured: false,
    })
}

pub(super) const FIRST_POSITION_LOW_RULE: Rule = Rule {
    code: AcceptanceCode::FirstPositionLow,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "position 1 is already rarely accepted: the drafter's first guess is wrong",
        explanation: "Even the first draft token is rarely accepted, so the drafter is not predicting this target at all. Typical causes: a wrong mask_token_id (a token that aliases real text, or one outside the target's embedding), wrong target_layer_ids (off by one between conventions, or the loader's default list), a drafter trained for another target, or an engine path that breaks drafting (vLLM's V2 runner for DFlash). For SGLang, which exports no per-position counters, position 1 is bounded by the acceptance length − 1. Compare the drafter with its authority (`dflash-check diff`) and lint it against the target (`dflash-check lint`). For an MTP head inside the target (`--draft-family mtp`, or a launch that serves one in `doctor`) the causes are the head's: its tensors dropped by the exporter or built quantized where the exclude list does not match the engine's module names, or K past the head's depth; `dflash-check weights TARGET` and `lint TARGET` check them.",
    },
    applies: Applies::Every,
    needs: &[],
    check: first_position_low,
};

fn first_position_low(cx: &mut Cx) {
    let Shape::FirstPositionLow { value, measured } = cx.shape else {
        return;
    };
    let (what, path) = if measured {
        (
            format!("position 1 is accepted in only {} of drafts", pct(value)),
            format!("{VLLM_PER_POS}{{position=\"0\"}}"),
        )
    } else {
        (
            format!(
                "acceptance length {} bounds position 1 below {} of drafts",
                fmt2(cx.measurement.acceptance_length()),
                pct(value)
            ),
            verdict::length_metric(cx.engine()).to_string(),
        )
    };
    let cause = if cx.head_in_target() {
        "the MTP head's first guess is already wrong (its tensors dropped or built quantized against the exclude \
         list, the head's depth below K, or a head for another checkpoint)"
    } else {
        "the drafter's first guess is already wrong (mask_token_id, target_layer_ids, or a drafter for another target)"
    };
    cx.emit(path, format!("{what}: {cause}"));
    cx.config_checks_next(true);
}

/// Per-position acceptance below this is "about zero".
pub const NEAR_ZERO: f64 = 0.02;
/// A cliff: acceptance at least this high at the position before the first near-zero one (a
/// drafter that decays gradually reaches ~0 only from low values; one whose later positions
/// are broken drops there from a healthy value).
pub const CLIFF_BEFORE_MIN: f64 = 0.2;

/// The first near-zero position, when the one before it was healthy.
fn cliff_at(per_position: &[PositionAcceptance]) -> Option<Shape> {
    let pair = per_position
        .windows(2)
        .find(|pair| pair[1].acceptance < NEAR_ZERO)?;
    let (prev, cur) = (&pair[0], &pair[1]);
    (prev.acceptance >= CLIFF_BEFORE_MIN).then_some(Shape::Cliff {
        position: cur.position,
        before: prev.acceptance,
        at: cur.acceptance,
    })
}

pub(super) const CLIFF: Rule = Rule {
    code: AcceptanceCode::Cliff,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "per-position acceptance falls to ~0 after the first few positions",
        explanation: "The first draft positions are accepted at healthy rates and then acceptance drops to about zero at one position and stays there. A drafter that is simply weak decays gradually; a cliff means the later positions are computed wrongly. The reported cause is sliding-window draft layers run as full attention, or with the wrong window: the engine or the config ignores layer_types/sliding_window (vLLM gained DFlash sliding-window attention in PR 40898; its mixed sliding/full layers need VLLM_USE_V2_MODEL_RUNNER=1). Check the drafter's layer_types, sliding_window and use_sliding_window with `dflash-check lint` and `dflash-check diff`, and the engine version and runner.",
    },
    applies: Applies::Every,
    needs: &[Need::PerPosition],
    check: cliff,
};

fn cliff(cx: &mut Cx) {
    let Shape::Cliff {
        position,
        before,
        at,
    } = cx.shape
    else {
        return;
    };
    cx.emit(
        format!("{VLLM_PER_POS}{{position=\"{}\"}}", position - 1),
        format!(
            "per-position acceptance falls from {} at position {} to {} at position {} and stays near 0: sliding-window draft layers run as full attention, or with the wrong window",
            fmt3(before),
            position - 1,
            fmt3(at),
            position
        ),
    );
    cx.config_checks_next(false);
}
