//! The acceptance family of rules: what a measured window says about the drafter.
//!
//! Each code is a [`Rule`] declared beside the function that raises it, with its documentation
//! and the facts it cannot judge without ([`Need`]): a threshold to fail against, vLLM's
//! per-position counters to see a cliff, two samples of SGLang's gauge to see it stand still.
//! [`AcceptanceReport::build`](super::AcceptanceReport::build) runs [`RULES`] through the shared
//! engine ([`crate::diagnostic::rule::run`]); the rules it skips are listed where the report
//! already says what it could not measure (the per-position line, the verdict) and in the JSON's
//! `skipped`. The shape detectors that name the likely cause sit beside the rule that reports
//! them. Values no engine can export are not rules: they are errors of the reading (exit 2,
//! [`compute`](super::compute)).

use serde::Serialize;

use super::compute::{PositionAcceptance, Shape, VLLM_PER_POS};
use super::verdict::{self, fmt2, fmt3, pct, Measurement, Threshold, Verdict};
use super::{AcceptanceCode, ServerEngine};
use crate::diagnostic::rule::{self, Describe, NeedKind, RuleFamily};
use crate::diagnostic::{CodeInfo, Diagnostic, Severity};

/// The acceptance family of rules: they judge one measured window ([`Cx`]).
pub struct Acceptance;

/// An acceptance rule: its code, its documentation, where it applies, what it needs, its check.
pub type Rule = rule::Rule<Acceptance>;

/// A rule that did not run, and the facts it lacked.
pub type Skipped = rule::Skipped<AcceptanceCode, Need>;

/// A fact a rule cannot judge without. Rules whose needs are unmet are skipped and listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// An acceptance length to fail below: `--min-acceptance-length`, or the break-even point
    /// (which an EAGLE-style drafter cannot have without K).
    Threshold,
    /// Accepted tokens per draft position (vLLM's per-position counters; SGLang has none).
    PerPosition,
    /// Two non-zero samples of SGLang's gauge, or its token counter proving traffic: with one
    /// sample and no counter nothing says whether the gauge moved.
    GaugeSamples,
}

impl NeedKind for Need {
    fn describe(self) -> &'static str {
        match self {
            Need::Threshold => "a threshold (--min-acceptance-length, or K for an EAGLE drafter's break-even point)",
            Need::PerPosition => "per-position counters (vLLM's vllm:spec_decode_num_accepted_tokens_per_pos)",
            Need::GaugeSamples => "two samples of sglang:spec_accept_length in the window, or sglang:generation_tokens_total (a longer --window)",
        }
    }
}

/// Which serving engines a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    Every,
    Only(ServerEngine),
}

impl Describe for Applies {
    fn describe(self) -> String {
        match self {
            Applies::Every => "every engine".to_string(),
            Applies::Only(engine) => engine.name().to_string(),
        }
    }
}

/// What a rule sees (the window, its shape, the threshold) and where it reports.
pub struct Cx<'a> {
    /// The running rule, set by the engine ([`RuleFamily::enter`]): what `emit` reports as.
    rule: &'static Rule,
    pub measurement: &'a Measurement,
    pub shape: Shape,
    pub threshold: Option<&'a Threshold>,
    /// Built-in snapshots of drafters for the served model.
    pub snapshots: &'a [String],
    /// The served model, when its name is usable as `--target`.
    pub target: Option<&'a str>,
    pub diagnostics: Vec<Diagnostic>,
    /// The `dflash-check` commands that check the likely cause, in the order to run them.
    pub next_steps: Vec<String>,
}

impl<'a> Cx<'a> {
    pub fn new(
        measurement: &'a Measurement,
        threshold: Option<&'a Threshold>,
        snapshots: &'a [String],
        target: Option<&'a str>,
    ) -> Cx<'a> {
        Cx {
            // Replaced by the engine before each check runs.
            rule: &RULES[0],
            measurement,
            shape: shape(measurement),
            threshold,
            snapshots,
            target,
            diagnostics: Vec::new(),
            next_steps: Vec::new(),
        }
    }

    fn engine(&self) -> ServerEngine {
        self.measurement.engine()
    }

    /// Reports a finding of the running rule about the series `path`.
    fn emit(&mut self, path: impl Into<String>, message: String) -> &mut Diagnostic {
        let r = self.rule;
        self.diagnostics
            .push(Diagnostic::new(r.code, &r.info, path, message));
        self.diagnostics.last_mut().expect("just pushed")
    }

    /// Suggests linting the drafter against the served target and engine.
    fn lint_next(&mut self) {
        let step = verdict::lint_command(self.engine(), self.target);
        self.next_steps.push(step);
    }

    /// Suggests comparing the drafter with its authority (the matching snapshot, else the Hub).
    fn diff_next(&mut self) {
        let step = verdict::diff_command(self.snapshots, self.target);
        self.next_steps.push(step);
    }
}

impl RuleFamily for Acceptance {
    type Cx<'a> = Cx<'a>;
    type Code = AcceptanceCode;
    type Scope = Applies;
    type Need = Need;

    fn in_scope(cx: &Cx<'_>, scope: Applies) -> bool {
        match scope {
            Applies::Every => true,
            Applies::Only(engine) => cx.engine() == engine,
        }
    }

    fn has(cx: &Cx<'_>, need: Need) -> bool {
        match (need, cx.measurement) {
            (Need::Threshold, _) => cx.threshold.is_some(),
            (Need::PerPosition, Measurement::Vllm(w)) => !w.per_position.is_empty(),
            (Need::PerPosition, Measurement::Sglang(_)) => false,
            (Need::GaugeSamples, Measurement::Sglang(w)) => {
                w.accept_length.samples > 1 || w.generation_tokens.is_some()
            }
            (Need::GaugeSamples, Measurement::Vllm(_)) => true,
        }
    }

    fn enter(cx: &mut Cx<'_>, rule: &'static Rule) {
        cx.rule = rule;
    }
}

/// Every rule, in the order they run: the causes first, so that the threshold rule knows
/// whether one was named.
pub const RULES: &[Rule] = &[
    FIRST_POSITION_LOW_RULE,
    CLIFF,
    BELOW_THRESHOLD,
    NO_THRESHOLD,
    STATIC_GAUGE,
];

/// The rule that raises `code`.
pub fn rule(code: AcceptanceCode) -> &'static Rule {
    rule::find(RULES, code).expect("every acceptance code has a rule (tested)")
}

/// The likely cause the per-position acceptance (or, without it, the acceptance length)
/// points at, as the cause rules below judge it: position 1 first (a drafter whose first guess
/// is wrong has no later positions to judge), then a cliff.
pub fn shape(m: &Measurement) -> Shape {
    match m {
        Measurement::Vllm(w) if !w.per_position.is_empty() => shape_of_positions(&w.per_position),
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

/// vLLM's definition of the numbers this check computes.
const VLLM_METRICS_SOURCE: &str = "vllm-project/vllm:vllm/v1/spec_decode/metrics.py@016a8587edb04ae53c913a1da9355a07dc0ca4ae (SpecDecodingProm: mean acceptance length = 1 + accepted / drafts, per-position = accepted_per_pos / drafts)";

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

const FIRST_POSITION_LOW_RULE: Rule = Rule {
    code: AcceptanceCode::FirstPositionLow,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "position 1 is already rarely accepted: the drafter's first guess is wrong",
        explanation: "Even the first draft token is rarely accepted, so the drafter is not predicting this target at all. Typical causes: a wrong mask_token_id (a token that aliases real text, or one outside the target's embedding), wrong target_layer_ids (off by one between conventions, or the loader's default list), a drafter trained for another target, or an engine path that breaks drafting (vLLM's V2 runner for DFlash). For SGLang, which exports no per-position counters, position 1 is bounded by the acceptance length − 1. Compare the drafter with its authority (`dflash-check diff`) and lint it against the target (`dflash-check lint`).",
        source: "sgl-project/sglang#25454 (aux layer ids off by one between conventions); NVIDIA-NeMo/Automodel#2461 (mask id fallback: acceptance quietly degrades); NVIDIA/Model-Optimizer#1621 (mask id must exist in the target embedding); vllm-project/vllm#49559 (DFlash on the V2 runner: acceptance close to 0%)",
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
    cx.emit(path, format!("{what}: the drafter's first guess is already wrong (mask_token_id, target_layer_ids, or a drafter for another target)"));
    cx.diff_next();
    cx.lint_next();
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

const CLIFF: Rule = Rule {
    code: AcceptanceCode::Cliff,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "per-position acceptance falls to ~0 after the first few positions",
        explanation: "The first draft positions are accepted at healthy rates and then acceptance drops to about zero at one position and stays there. A drafter that is simply weak decays gradually; a cliff means the later positions are computed wrongly. The reported cause is sliding-window draft layers run as full attention, or with the wrong window: the engine or the config ignores layer_types/sliding_window (vLLM gained DFlash sliding-window attention in PR 40898; its mixed sliding/full layers need VLLM_USE_V2_MODEL_RUNNER=1). Check the drafter's layer_types, sliding_window and use_sliding_window with `dflash-check lint` and `dflash-check diff`, and the engine version and runner.",
        source: "vllm-project/vllm#40898 (sliding-window attention for DFlash drafters); z-lab/dflash#126 (maintainer: SWA layers forced to full attention lower the acceptance length); AEON-7 Qwen3.6-27B DFlash drafter report #6 (per-position acceptance falls to 0.000 after position ~4-5 with 4 of 5 SWA layers run as full attention)",
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
    cx.lint_next();
    cx.diff_next();
}

/// Pass at or above the threshold, fail below it, no verdict without one.
pub fn verdict(m: &Measurement, threshold: Option<&Threshold>) -> Verdict {
    match threshold {
        Some(t) if m.acceptance_length() < t.value => Verdict::Fail,
        Some(_) => Verdict::Pass,
        None => Verdict::NoThreshold,
    }
}

const BELOW_THRESHOLD: Rule = Rule {
    code: AcceptanceCode::BelowThreshold,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the measured acceptance length is below the threshold",
        explanation: "The acceptance length (1 + accepted draft tokens per draft, the bonus token included, as vLLM logs it) over the window is below --min-acceptance-length or, without it, below the break-even point where speculative decoding is slower than none: 1 + c for DFlash (one drafter forward drafts the whole block) and 1 + K·c for EAGLE-style drafters (one forward per drafted token), c being the cost of one drafter forward relative to one target forward (default 0.15 for DFlash, 0.05 for EAGLE; --draft-cost-ratio, --draft-family; derivation in docs/acceptance.md). The per-position shape, when the engine exports it, names the likely cause (acceptance-cliff, acceptance-first-position-low).",
        source: VLLM_METRICS_SOURCE,
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
        cx.lint_next();
        cx.diff_next();
    }
}

const NO_THRESHOLD: Rule = Rule {
    code: AcceptanceCode::NoThreshold,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "no acceptance threshold is known, so there is no verdict",
        explanation: "No --min-acceptance-length was given and the break-even point cannot be computed: an EAGLE-style drafter's break-even 1 + K·c needs K, which SGLang does not export. The numbers are reported; pass --min-acceptance-length X (for example the acceptance length the drafter's model card reports for a similar workload) to gate on them.",
        source: VLLM_METRICS_SOURCE,
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

const STATIC_GAUGE: Rule = Rule {
    code: AcceptanceCode::StaticGauge,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "SGLang's acceptance gauge did not change during the window",
        explanation: "sglang:spec_accept_length holds the value of the most recent batch. It had the same value in every sample and the server exports no generated-token counter to show traffic, so the number may describe a batch from before the window. Measure again under traffic or with a longer --window.",
        source: "sgl-project/sglang:python/sglang/srt/metrics/collector.py@00ae9c1590d2d0bb6c0bfff39e312c34ae3dd538 (spec_accept_length: Gauge, multiprocess_mode=\"mostrecent\"); sglang==0.5.23 sglang/srt/observability/metrics_collector.py (the same gauge, set to the latest value)",
    },
    applies: Applies::Only(ServerEngine::Sglang),
    needs: &[Need::GaugeSamples],
    check: static_gauge,
};

fn static_gauge(cx: &mut Cx) {
    let Measurement::Sglang(w) = cx.measurement else {
        return;
    };
    if !w.static_gauge {
        return;
    }
    let gauge = super::compute::SGLANG_ACCEPT_LENGTH;
    cx.emit(
        gauge,
        format!(
            "{gauge} was {} in all {} samples and no token counter shows traffic: it may be the last batch before the window",
            fmt2(w.accept_length.mean),
            w.accept_length.samples
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acceptance::compute::{SglangWindow, Stats};
    use crate::diagnostic::Code;

    fn positions(values: &[f64]) -> Vec<PositionAcceptance> {
        values
            .iter()
            .enumerate()
            .map(|(i, &a)| PositionAcceptance {
                position: i as u32 + 1,
                accepted: a,
                acceptance: a,
            })
            .collect()
    }

    /// The three shapes: a cliff after position 4, position 1 near zero, and a healthy
    /// geometric decay that reaches small values gradually (not a cliff).
    #[test]
    fn shapes() {
        let cliff = positions(&[0.85, 0.72, 0.6, 0.45, 0.004, 0.001, 0.0]);
        assert_eq!(
            shape_of_positions(&cliff),
            Shape::Cliff {
                position: 5,
                before: 0.45,
                at: 0.004
            }
        );
        let collapse = positions(&[0.09, 0.02, 0.01, 0.0]);
        assert!(matches!(
            shape_of_positions(&collapse),
            Shape::FirstPositionLow { measured: true, .. }
        ));
        // Position 1 first: a low first position with a later drop is not called a cliff.
        let both = positions(&[0.15, 0.5, 0.001]);
        assert!(matches!(
            shape_of_positions(&both),
            Shape::FirstPositionLow { .. }
        ));
        let healthy: Vec<f64> = (0..15).map(|k| 0.92 * 0.86f64.powi(k)).collect();
        assert_eq!(shape_of_positions(&positions(&healthy)), Shape::Gradual);
        let fast_decay: Vec<f64> = (0..15).map(|k| 0.9 * 0.6f64.powi(k)).collect();
        assert_eq!(shape_of_positions(&positions(&fast_decay)), Shape::Gradual);
        assert_eq!(shape_of_positions(&[]), Shape::Gradual);
        assert!(matches!(
            shape_from_length(1.12),
            Shape::FirstPositionLow {
                measured: false,
                ..
            }
        ));
        assert_eq!(shape_from_length(3.2), Shape::Gradual);
    }

    /// Every code of the family has exactly one rule, so `info` never fails.
    #[test]
    fn every_code_has_one_rule() {
        for code in AcceptanceCode::ALL {
            assert_eq!(
                RULES.iter().filter(|r| r.code == *code).count(),
                1,
                "{code:?}"
            );
        }
    }

    fn sglang(samples: usize, generation_tokens: Option<f64>) -> Measurement {
        Measurement::Sglang(SglangWindow {
            scrapes: 2,
            series: 1,
            accept_length: Stats {
                mean: 3.0,
                min: 3.0,
                max: 3.0,
                samples,
            },
            accept_rate: None,
            generation_tokens,
            static_gauge: generation_tokens.is_none() && samples > 1,
        })
    }

    /// The engine lists what it could not judge: without a threshold the gate, on SGLang the
    /// cliff (no per-position counters), and the static gauge with a single sample and no
    /// token counter; a static gauge over two samples is reported.
    #[test]
    fn unmet_needs_are_listed() {
        let m = sglang(1, None);
        let mut cx = Cx::new(&m, None, &[], None);
        let skipped = rule::run(RULES, &mut cx);
        let listed: Vec<(AcceptanceCode, Vec<Need>)> =
            skipped.into_iter().map(|s| (s.code, s.needs)).collect();
        assert_eq!(
            listed,
            vec![
                (AcceptanceCode::Cliff, vec![Need::PerPosition]),
                (AcceptanceCode::BelowThreshold, vec![Need::Threshold]),
                (AcceptanceCode::StaticGauge, vec![Need::GaugeSamples]),
            ]
        );
        let codes: Vec<_> = cx.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, vec![Code::from(AcceptanceCode::NoThreshold)]);

        let m = sglang(2, None);
        let mut cx = Cx::new(&m, None, &[], None);
        let skipped = rule::run(RULES, &mut cx);
        assert!(skipped
            .iter()
            .all(|s| s.code != AcceptanceCode::StaticGauge));
        assert!(cx
            .diagnostics
            .iter()
            .any(|d| d.code == Code::from(AcceptanceCode::StaticGauge)));
        // A token counter proves traffic: the gauge rule has its answer with one sample.
        let m = sglang(1, Some(10.0));
        assert!(Acceptance::has(
            &Cx::new(&m, None, &[], None),
            Need::GaugeSamples
        ));
    }
}
