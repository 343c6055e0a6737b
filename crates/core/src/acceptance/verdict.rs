//! What a measured window is: what was measured ([`Measurement`], over a [`Window`]), the
//! threshold it is held to (given, or the break-even point of the drafter's family), and the
//! [`Verdict`]. Data types only: the report is built by running the family's rules over them
//! in `build` ([`AcceptanceReport::build`](super::AcceptanceReport::build)). Pure: no I/O.

use serde::Serialize;

use super::compute::{CounterWindow, GaugeWindow};
use crate::engine::Engine;
use crate::family::{Family, Forwards};

/// What was measured over the window.
/// Counters (a difference of two scrapes) or gauges (samples), as the engine exports them; each
/// window names its engine, serialised first (`{"engine": "vllm", …}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Measurement {
    Counters(CounterWindow),
    Gauges(GaugeWindow),
}

impl Measurement {
    pub fn engine(&self) -> Engine {
        match self {
            Measurement::Counters(w) => w.engine,
            Measurement::Gauges(w) => w.engine,
        }
    }

    /// vLLM: 1 + Δaccepted/Δdrafts; SGLang: the mean of the sampled gauge.
    pub fn acceptance_length(&self) -> f64 {
        match self {
            Measurement::Counters(w) => w.acceptance_length,
            Measurement::Gauges(w) => w.accept_length.mean,
        }
    }

    /// The most the acceptance length can be (K + 1), when K is known.
    pub fn max_acceptance_length(&self) -> Option<u32> {
        match self {
            Measurement::Counters(w) => w.num_speculative_tokens.map(|k| k.saturating_add(1)),
            Measurement::Gauges(_) => None,
        }
    }

    /// The draft-token acceptance rate (vLLM: Δaccepted/Δdraft_tokens; SGLang: the mean gauge).
    pub fn draft_acceptance_rate(&self) -> Option<f64> {
        match self {
            Measurement::Counters(w) => w.draft_acceptance_rate,
            Measurement::Gauges(w) => w.accept_rate.map(|s| s.mean),
        }
    }
}

/// The acceptance length the server must reach, and where that number came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Threshold {
    pub value: f64,
    /// `--min-acceptance-length`, or the break-even point (`break-even: 1 + c = 1.15, …`).
    pub source: String,
    /// The drafter's own profile, when the threshold is its acceptance length × (1 − tolerance)
    /// (`acceptance --drafter DIR`, `doctor`): what `acceptance-below-profile` compares per
    /// position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileBar>,
}

/// What a drafter's `speculation_profile.json` promises, as the acceptance rules compare it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileBar {
    /// The profile file.
    pub file: String,
    /// Its acceptance length (per step, the bonus token included).
    pub mean_accept_length: f64,
    /// `--profile-tolerance`: the live acceptance may be this fraction below the profile.
    pub tolerance: f64,
    /// P(the first i+1 drafts accepted), per position: what vLLM's per-position counters
    /// measure (accepted at position i / drafts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marginal_accept_rates: Option<Vec<f64>>,
    /// The K it was measured at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_speculative_tokens: Option<u64>,
    /// `measurement_conditions`, compact (dataset, concurrency, engine, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measurement_conditions: Option<String>,
}

/// The acceptance length below which speculative decoding is slower than none. One step
/// costs a target forward T plus the drafting D and yields tau tokens; decoding alone yields
/// one token per T, so speculation pays only when tau > (T + D) / T = 1 + D/T. D/T = c for a
/// block drafter (one forward drafts all K tokens) and K·c for an autoregressive one, with the
/// family's default c (its row's cost model). `None` when K is needed and unknown (SGLang
/// exports no per-position counters), or the family has no cost model.
pub fn break_even(family: Family, cost_ratio: Option<f64>, k: Option<u32>) -> Option<Threshold> {
    // The family's cost model (family table): how it drafts and its default c.
    let cost = family.spec().rules.acceptance?;
    let c = cost_ratio.unwrap_or(cost.default_cost_ratio);
    let given = if cost_ratio.is_some() {
        "--draft-cost-ratio"
    } else {
        "default"
    };
    let name = family.spec().display;
    let (value, formula) = match cost.forwards {
        Forwards::PerBlock => (
            1.0 + c,
            format!("1 + c, c = {c} ({given}; {name}: one drafter forward per step)"),
        ),
        Forwards::PerToken => {
            let k = k?;
            (
                1.0 + f64::from(k) * c,
                format!(
                    "1 + K·c, K = {k}, c = {c} ({given}; {name}: one drafter forward per drafted token)"
                ),
            )
        }
    };
    Some(Threshold {
        profile: None,
        value,
        source: format!("break-even {formula}"),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// At or above the threshold.
    Pass,
    /// Below the threshold: exit 1.
    Fail,
    /// No threshold known: the numbers only.
    NoThreshold,
}

/// The window's timing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Window {
    pub requested_secs: f64,
    /// From the end of the first scrape to the end of the last.
    pub measured_secs: f64,
    pub scrapes: usize,
}

/// The series the acceptance length is measured from (the engine table's metrics row).
pub(super) fn length_metric(engine: Engine) -> &'static str {
    engine.spec().metrics.map_or("", |m| m.length)
}

/// `of 16` when K is known.
pub(super) fn of_max(m: &Measurement) -> String {
    match m.max_acceptance_length() {
        Some(max) => format!("of at most {max}"),
        None => "K unknown: SGLang exports no per-position counters".to_string(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::acceptance::build::snapshots_for_model;
    use crate::acceptance::compute::{PositionAcceptance, Stats};
    use crate::acceptance::next::shell_word;
    use crate::acceptance::AcceptanceReport;

    pub(crate) fn vllm(per_pos: &[f64]) -> Measurement {
        let drafts = 1000.0;
        let accepted: f64 = per_pos.iter().map(|p| p * drafts).sum();
        Measurement::Counters(CounterWindow {
            engine: crate::engine::Engine::Vllm,
            drafts,
            draft_tokens: drafts * per_pos.len() as f64,
            accepted_tokens: accepted,
            num_speculative_tokens: Some(per_pos.len() as u32),
            acceptance_length: 1.0 + accepted / drafts,
            draft_acceptance_rate: Some(accepted / (drafts * per_pos.len() as f64)),
            per_position: per_pos
                .iter()
                .enumerate()
                .map(|(i, &a)| PositionAcceptance {
                    position: i as u32 + 1,
                    accepted: a * drafts,
                    acceptance: a,
                })
                .collect(),
            engines: vec!["0".into()],
        })
    }

    /// A report on `m` for the served `model`, against `min` when given.
    pub(crate) fn report(m: Measurement, min: Option<f64>, model: &str) -> AcceptanceReport {
        AcceptanceReport::build(
            "http://127.0.0.1:8000/metrics".into(),
            Some(model.into()),
            vec![model.into()],
            Window {
                requested_secs: 10.0,
                measured_secs: 10.0,
                scrapes: 2,
            },
            m,
            min.map(|value| Threshold {
                profile: None,
                value,
                source: "--min-acceptance-length".into(),
            }),
            Family::Dflash,
        )
    }

    fn codes(r: &AcceptanceReport) -> Vec<&'static str> {
        r.diagnostics.iter().map(|d| d.code.as_str()).collect()
    }

    /// The incident's 1.12 of 16 against a threshold: fail (exit 1), first position named,
    /// and the diff command uses the built-in snapshot for the served target.
    #[test]
    fn incident_collapse_fails_with_first_position_cause() {
        let mut p = vec![0.09, 0.02, 0.01];
        p.resize(15, 0.0);
        let r = report(vllm(&p), Some(5.0), "Qwen/Qwen3.6-27B");
        assert_eq!(r.verdict, Verdict::Fail);
        assert!(r.fails());
        assert_eq!(
            codes(&r),
            vec![
                "acceptance-below-threshold",
                "acceptance-first-position-low"
            ]
        );
        assert!((r.measurement.acceptance_length() - 1.12).abs() < 1e-9);
        assert_eq!(r.measurement.max_acceptance_length(), Some(16));
        assert_eq!(
            r.next_steps[0],
            "dflash-check diff DRAFTER_DIR --snapshot z-lab/Qwen3.6-27B-DFlash --target hf://Qwen/Qwen3.6-27B"
        );
    }

    /// A cliff is named as the cause, with lint first; without a threshold the exit is 0 and an
    /// info says no threshold is known (and which snapshot matched without recording one).
    #[test]
    fn cliff_without_threshold_is_exit_0_with_cause() {
        let mut p = vec![0.85, 0.72, 0.6, 0.45, 0.004];
        p.resize(15, 0.0);
        let r = report(vllm(&p), None, "Qwen/Qwen3.6-27B");
        assert_eq!(r.verdict, Verdict::NoThreshold);
        assert!(!r.fails());
        assert_eq!(
            codes(&r),
            vec!["acceptance-cliff", "acceptance-no-threshold"]
        );
        assert!(r.diagnostics[0].message.contains("position 5"));
        assert!(r.diagnostics[1]
            .message
            .contains("z-lab/Qwen3.6-27B-DFlash matches the served model but records no expected"));
        assert!(r.next_steps[0].starts_with(
            "dflash-check lint DRAFTER_DIR --target hf://Qwen/Qwen3.6-27B --engine vllm"
        ));
    }

    /// A healthy drafter at/above the threshold passes with no diagnostics and no next steps;
    /// an alias model name leaves TARGET as a placeholder.
    #[test]
    fn healthy_passes() {
        let p: Vec<f64> = (0..15).map(|k| 0.92 * 0.86f64.powi(k)).collect();
        let r = report(vllm(&p), Some(5.0), "qwen");
        assert_eq!(r.verdict, Verdict::Pass);
        assert!(r.diagnostics.is_empty());
        assert!(r.next_steps.is_empty());
        let at = r.measurement.acceptance_length();
        let r = report(vllm(&p), Some(at), "qwen");
        assert_eq!(r.verdict, Verdict::Pass, "at the threshold passes");
        let r = report(vllm(&p), Some(at + 0.01), "qwen");
        assert_eq!(r.verdict, Verdict::Fail);
        assert!(r.next_steps[0].contains("--target TARGET"));
    }

    /// SGLang: a mean of 1.05 infers the first-position cause without per-position counters.
    #[test]
    fn sglang_low_length_infers_first_position() {
        let m = Measurement::Gauges(GaugeWindow {
            engine: crate::engine::Engine::Sglang,
            scrapes: 3,
            series: 1,
            accept_length: Stats {
                mean: 1.05,
                min: 1.0,
                max: 1.1,
                samples: 3,
            },
            accept_rate: None,
            generation_tokens: Some(100.0),
            static_gauge: false,
        });
        let r = report(m, Some(2.0), "m");
        assert_eq!(
            codes(&r),
            vec![
                "acceptance-below-threshold",
                "acceptance-first-position-low"
            ]
        );
        assert!(r.diagnostics[1].message.contains("bounds position 1"));
        assert!(r.next_steps.iter().any(|c| c.contains("--engine sglang")));
    }

    /// Served-model names match snapshots by repo id or by the last path component.
    #[test]
    fn snapshot_matching() {
        assert_eq!(
            snapshots_for_model("/models/Qwen3.6-27B"),
            vec!["z-lab/Qwen3.6-27B-DFlash"]
        );
        assert_eq!(
            snapshots_for_model("qwen/qwen3-8b"),
            vec!["z-lab/Qwen3-8B-DFlash-b16"]
        );
        assert!(snapshots_for_model("my-alias").is_empty());
        assert_eq!(shell_word("a b"), "'a b'");
    }

    /// Break-even: 1 + c for DFlash whatever K is, 1 + K·c for EAGLE (none without K); the
    /// incident's 1.12 is below DFlash's default 1.15.
    #[test]
    fn break_even_points() {
        let t = break_even(Family::Dflash, None, Some(15)).unwrap();
        assert!((t.value - 1.15).abs() < 1e-12);
        assert!(t
            .source
            .starts_with("break-even 1 + c, c = 0.15 (default; DFlash"));
        assert_eq!(
            break_even(Family::Dflash, Some(0.3), None).unwrap().value,
            1.3
        );
        let e = break_even(Family::Eagle3, None, Some(15)).unwrap();
        assert!((e.value - 1.75).abs() < 1e-12, "{}", e.value);
        assert!(break_even(Family::Eagle3, None, None).is_none());
        // Every family's cost model is its row's: block drafters as DFlash, MTP heads as
        // EAGLE-3; P-EAGLE and the speculators format have none.
        for f in [Family::Dflash2, Family::Dspark, Family::Domino] {
            let t = break_even(f, None, Some(15)).unwrap();
            assert!((t.value - 1.15).abs() < 1e-12, "{f:?}");
        }
        let m = break_even(Family::Mtp, None, Some(15)).unwrap();
        assert!(
            (m.value - 1.75).abs() < 1e-12
                && m.source
                    .contains("MTP: one drafter forward per drafted token")
        );
        assert!(break_even(Family::Peagle, None, Some(15)).is_none());
        assert!(break_even(Family::Speculators, None, Some(15)).is_none());
        let mut p = vec![0.09, 0.02, 0.01];
        p.resize(15, 0.0);
        let r = AcceptanceReport::build(
            "u".into(),
            None,
            vec![],
            Window {
                requested_secs: 1.0,
                measured_secs: 1.0,
                scrapes: 2,
            },
            vllm(&p),
            break_even(Family::Dflash, None, Some(15)),
            Family::Dflash,
        );
        assert_eq!(r.verdict, Verdict::Fail);
        assert!(r.diagnostics[0]
            .message
            .contains("below the break-even point 1.15"));
    }
}
