//! The acceptance family's rule list: what a measured window says about the drafter.
//!
//! Each code is a [`Rule`] declared beside the function that raises it, in a topical file:
//! `position` (the per-position shape: position 1 low, a cliff), `threshold` (below the
//! threshold, no threshold) and `gauge` (SGLang's gauge standing still), with its documentation
//! and the facts it cannot judge without ([`Need`](super::Need)): a threshold to fail against, vLLM's
//! per-position counters to see a cliff, two samples of SGLang's gauge to see it stand still.
//! [`AcceptanceReport::build`](super::AcceptanceReport::build) runs [`RULES`] through the shared
//! engine ([`crate::diagnostic::rule::run`]); the rules it skips are listed where the report
//! already says what it could not measure (the per-position line, the verdict) and in the JSON's
//! `skipped`. Values no engine can export are not rules: they are errors of the reading (exit 2,
//! [`compute`](super::compute)).

use super::cx::{Cx, Rule};
use super::position::{self, shape};
use super::verdict::{Measurement, Threshold};
use super::{gauge, profile, threshold, AcceptanceCode};
use crate::diagnostic::rule;

/// Every rule, in the order they run: the causes first, so that the threshold rule knows
/// whether one was named.
pub const RULES: &[Rule] = &[
    position::FIRST_POSITION_LOW_RULE,
    position::CLIFF,
    threshold::BELOW_THRESHOLD,
    threshold::NO_THRESHOLD,
    gauge::STATIC_GAUGE,
    profile::BELOW_PROFILE,
];

/// The rule that raises `code`.
pub fn rule(code: AcceptanceCode) -> &'static Rule {
    rule::find(RULES, code).expect("every acceptance code has a rule (tested)")
}

impl<'a> Cx<'a> {
    /// A context for `measurement`, before the engine runs the first rule.
    pub fn new(
        measurement: &'a Measurement,
        threshold: Option<&'a Threshold>,
        snapshots: &'a [String],
        target: Option<&'a str>,
        family: crate::family::Family,
    ) -> Cx<'a> {
        Cx {
            // Replaced by the engine before each check runs.
            rule: &RULES[0],
            measurement,
            shape: shape(measurement),
            threshold,
            snapshots,
            target,
            family,
            diagnostics: Vec::new(),
            next_steps: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acceptance::compute::{GaugeWindow, PositionAcceptance, Shape, Stats};
    use crate::acceptance::cx::{Acceptance, Need};
    use crate::acceptance::position::{shape_from_length, shape_of_positions};
    use crate::diagnostic::rule::RuleFamily;
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
        Measurement::Gauges(GaugeWindow {
            engine: crate::engine::Engine::Sglang,
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
        let mut cx = Cx::new(&m, None, &[], None, crate::family::Family::Dflash);
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
        let mut cx = Cx::new(&m, None, &[], None, crate::family::Family::Dflash);
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
            &Cx::new(&m, None, &[], None, crate::family::Family::Dflash),
            Need::GaugeSamples
        ));
    }
}
