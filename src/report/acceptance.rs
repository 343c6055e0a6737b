//! The acceptance report for people (the measurement and acceptance length in the header, the
//! findings, a per-position bar chart in Unicode blocks, the commands to run next, and the
//! threshold's verdict on the summary line) and for machines (JSON, `command: "acceptance"`,
//! with the skipped rules as lint lists them).

use std::borrow::Cow;

use serde_json::json;

use super::style::Painter;
use super::{RenderOptions, Report, Status, Verdict as HumanVerdict};
use crate::acceptance::compute::Shape;
use crate::acceptance::text::{fmt2, pct};
use crate::acceptance::verdict::{AcceptanceReport, Measurement, Verdict};
use crate::acceptance::{Need, NEAR_ZERO};
use crate::diagnostic::rule::NeedKind;
use crate::diagnostic::Diagnostic;

/// Bar width, in character cells, of an acceptance of 100%.
pub const BAR_WIDTH: usize = 32;

/// A bar of `value` (0..=1) over `width` cells, in eighth-cell steps.
pub fn bar(value: f64, width: usize) -> String {
    const PARTIAL: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    let v = if value.is_finite() {
        value.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let eighths = (v * width as f64 * 8.0).round() as usize;
    let full = eighths / 8;
    let mut s = "█".repeat(full);
    s.push_str(PARTIAL[eighths % 8]);
    let cells = full + usize::from(eighths % 8 > 0);
    s.push_str(&" ".repeat(width.saturating_sub(cells)));
    s
}

/// The header: the server, its engine and model, the window, the acceptance length.
fn header(r: &AcceptanceReport, p: Painter) -> Vec<String> {
    let m = &r.measurement;
    let mut lines = vec![format!("{} {}", p.bold("dflash-check acceptance"), r.url)];
    let model = match &r.model_name {
        Some(name) if r.models.len() > 1 => {
            format!("model {name} (of {})", r.models.join(", "))
        }
        Some(name) => format!("model {name}"),
        None => "model (no model_name label)".to_string(),
    };
    let window = &r.window;
    match m {
        Measurement::Counters(w) => {
            let engines = match w.engines.len() {
                0 | 1 => String::new(),
                n => format!(", summed over {n} engines"),
            };
            lines.push(format!("  engine   vLLM, {model}{engines}"));
            lines.push(format!(
                "  window   {} s: {} drafts, {} draft tokens, {} accepted",
                secs(window.measured_secs),
                count(w.drafts),
                count(w.draft_tokens),
                count(w.accepted_tokens)
            ));
        }
        Measurement::Gauges(w) => {
            lines.push(format!("  engine   SGLang, {model}"));
            let tokens = w
                .generation_tokens
                .map(|t| format!(", {} tokens generated", count(t)))
                .unwrap_or_default();
            lines.push(format!(
                "  window   {} s: {} samples of {} series{tokens}",
                secs(window.measured_secs),
                w.scrapes,
                w.series
            ));
        }
    }
    let al = m.acceptance_length();
    let of = match m.max_acceptance_length() {
        Some(max) => format!(" of {max} (K={})", max - 1),
        None => String::new(),
    };
    let rate = m
        .draft_acceptance_rate()
        .map(|r| format!("; draft-token acceptance {}", pct(r)))
        .unwrap_or_default();
    let spread = match m {
        Measurement::Gauges(w) => format!(
            " (mean; min {}, max {})",
            fmt2(w.accept_length.min),
            fmt2(w.accept_length.max)
        ),
        Measurement::Counters(_) => String::new(),
    };
    lines.push(format!(
        "  acceptance length {}{of}{spread}{rate}",
        p.bold(&fmt2(al))
    ));
    lines
}

/// The per-position chart (or why there is none).
fn chart(r: &AcceptanceReport, p: Painter) -> Vec<String> {
    match &r.measurement {
        Measurement::Counters(w) if !w.per_position.is_empty() => {
            let mut lines = vec![
                "per-position acceptance (share of drafts accepted at least this far)".to_string(),
            ];
            let width = w.per_position.len().to_string().len().max(2);
            for pos in &w.per_position {
                let bad = match r.shape {
                    Shape::FirstPositionLow { .. } => true,
                    Shape::Cliff { position, .. } => pos.position >= position,
                    Shape::Gradual => false,
                };
                let b = bar(pos.acceptance, BAR_WIDTH);
                let b = if bad { p.red(&b) } else { p.green(&b) };
                let value = format!("{:>6}", pct(pos.acceptance));
                let value = if bad && pos.acceptance < NEAR_ZERO {
                    p.red(&value).into_owned()
                } else {
                    value
                };
                lines.push(format!("  {:>width$} │{b}│ {value}", pos.position));
            }
            lines
        }
        Measurement::Counters(_) => vec![format!(
            "per-position acceptance: not exported (no vllm:spec_decode_num_accepted_tokens_per_pos){}",
            not_checked(r, Need::PerPosition)
        )],
        Measurement::Gauges(_) => vec![format!(
            "per-position acceptance: SGLang exports none; acceptance length is the gauge's mean{}",
            not_checked(r, Need::PerPosition)
        )],
    }
}

/// `; not checked: acceptance-cliff` for the rules skipped for want of `need`.
fn not_checked(r: &AcceptanceReport, need: Need) -> String {
    let codes: Vec<&str> = r
        .skipped
        .iter()
        .filter(|s| s.needs.contains(&need))
        .map(|s| s.code.as_str())
        .collect();
    if codes.is_empty() {
        String::new()
    } else {
        format!("; not checked: {}", codes.join(", "))
    }
}

/// The rules not checked that no other line names (the chart names those that lack
/// per-position counters, the verdict those that lack a threshold).
fn unlisted_skipped(r: &AcceptanceReport, p: Painter) -> Vec<String> {
    r.skipped
        .iter()
        .filter(|s| {
            !s.needs
                .iter()
                .all(|n| matches!(n, Need::PerPosition | Need::Threshold))
        })
        .map(|s| {
            let needs: Vec<&str> = s.needs.iter().map(|n| n.describe()).collect();
            format!(
                "{} {}: needs {}",
                p.dim("not checked"),
                s.code.as_str(),
                needs.join("; ")
            )
        })
        .collect()
}

/// The commands to run next.
fn next_steps(r: &AcceptanceReport) -> Vec<String> {
    r.next_steps
        .iter()
        .enumerate()
        .map(|(i, cmd)| {
            let label = if i == 0 { "next:" } else { "     " };
            format!("{label} {cmd}")
        })
        .collect()
}

/// The threshold's verdict: `acceptance length 1.12 < 5.00 (source)`, or no threshold.
fn verdict(r: &AcceptanceReport, options: &RenderOptions) -> HumanVerdict {
    let al = r.measurement.acceptance_length();
    match (&r.verdict, &r.threshold) {
        (Verdict::Fail, Some(t)) => HumanVerdict::new(Status::of(options.fails)).detail(format!(
            "acceptance length {} < {} ({})",
            fmt2(al),
            fmt2(t.value),
            t.source
        )),
        (Verdict::Pass, Some(t)) => HumanVerdict::new(Status::of(options.fails)).detail(format!(
            "acceptance length {} ≥ {} ({})",
            fmt2(al),
            fmt2(t.value),
            t.source
        )),
        _ if options.fails => HumanVerdict::new(Status::Fail),
        _ => HumanVerdict::new(Status::Unverified("no threshold".into()))
            .detail(format!("acceptance length {} not judged", fmt2(al))),
    }
}

/// `acceptance` renders in every format.
impl Report for AcceptanceReport {
    fn command(&self) -> &'static str {
        "acceptance"
    }

    fn diagnostics(&self) -> Cow<'_, [Diagnostic]> {
        Cow::Borrowed(&self.diagnostics)
    }

    /// Below the threshold (an error); with `--deny warnings`, a warning too (a cliff, a low
    /// first position above the threshold).
    fn fails(&self, deny_warnings: bool) -> bool {
        AcceptanceReport::fails(self) || self.summary().fails(deny_warnings)
    }

    fn header(&self, p: Painter) -> Vec<String> {
        header(self, p)
    }

    fn sections(&self, options: &RenderOptions) -> Vec<Vec<String>> {
        vec![
            chart(self, options.painter),
            unlisted_skipped(self, options.painter),
            next_steps(self),
        ]
    }

    fn verdict(&self, options: &RenderOptions) -> HumanVerdict {
        verdict(self, options)
    }

    fn json_body(&self) -> serde_json::Value {
        json_body(self)
    }
}

/// The JSON fields of the report (the envelope adds the diagnostics and summary).
fn json_body(r: &AcceptanceReport) -> serde_json::Value {
    let m = &r.measurement;
    let (per_position, counts, sglang) = match m {
        Measurement::Counters(w) => (
            json!(w.per_position),
            json!({
                "drafts": w.drafts,
                "draft_tokens": w.draft_tokens,
                "accepted_tokens": w.accepted_tokens,
                "engines": w.engines,
            }),
            serde_json::Value::Null,
        ),
        Measurement::Gauges(w) => (
            json!([]),
            serde_json::Value::Null,
            json!({
                "scrapes": w.scrapes,
                "series": w.series,
                "accept_length": w.accept_length,
                "accept_rate": w.accept_rate,
                "generation_tokens": w.generation_tokens,
                "static_gauge": w.static_gauge,
            }),
        ),
    };
    let num_speculative_tokens = match m {
        Measurement::Counters(w) => json!(w.num_speculative_tokens),
        Measurement::Gauges(_) => serde_json::Value::Null,
    };
    json!({
        "url": r.url,
        "engine": m.engine(),
        "model_name": r.model_name,
        "models": r.models,
        "window": r.window,
        "acceptance_length": m.acceptance_length(),
        "max_acceptance_length": m.max_acceptance_length(),
        "num_speculative_tokens": num_speculative_tokens,
        "draft_acceptance_rate": m.draft_acceptance_rate(),
        "per_position": per_position,
        "counts": counts,
        "sglang": sglang,
        "shape": r.shape,
        "threshold": r.threshold,
        "verdict": r.verdict,
        "snapshots": r.snapshots,
        "next_steps": r.next_steps,
        "skipped": r.skipped,
    })
}

fn secs(s: f64) -> String {
    format!("{s:.1}")
}

/// A count without a spurious `.0`.
fn count(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acceptance::compute::{CounterWindow, GaugeWindow, Stats};

    /// A report on `measurement` without a threshold, for a served model that names no target.
    fn report(measurement: Measurement) -> AcceptanceReport {
        let window = crate::acceptance::Window {
            requested_secs: 10.0,
            measured_secs: 10.0,
            scrapes: 2,
        };
        let url = "http://127.0.0.1:8000/metrics".to_string();
        AcceptanceReport::build(
            url,
            Some("m".into()),
            vec!["m".into()],
            window,
            measurement,
            None,
            crate::family::Family::Dflash,
        )
    }

    fn plain() -> Painter {
        Painter { enabled: false }
    }

    /// The rules skipped for want of a fact are listed: on the chart's line (the cliff, without
    /// per-position counters), on a line of their own otherwise (a single sample of SGLang's
    /// gauge), and in the JSON's `skipped`; the verdict says there is no threshold.
    #[test]
    fn skipped_rules_are_listed() {
        let r = report(Measurement::Counters(CounterWindow {
            engine: crate::engine::Engine::Vllm,
            drafts: 100.0,
            draft_tokens: 300.0,
            accepted_tokens: 150.0,
            num_speculative_tokens: Some(3),
            acceptance_length: 2.5,
            draft_acceptance_rate: Some(0.5),
            per_position: vec![],
            engines: vec![],
        }));
        let chart_lines = chart(&r, plain());
        assert!(
            chart_lines[0].ends_with("not exported (no vllm:spec_decode_num_accepted_tokens_per_pos); not checked: acceptance-cliff"),
            "{chart_lines:?}"
        );
        assert!(unlisted_skipped(&r, plain()).is_empty());
        assert_eq!(
            json_body(&r)["skipped"],
            json!([
                {"code": "acceptance-cliff", "needs": ["per_position"]},
                {"code": "acceptance-below-threshold", "needs": ["threshold"]},
            ])
        );
        let r = report(Measurement::Gauges(GaugeWindow {
            engine: crate::engine::Engine::Sglang,
            scrapes: 2,
            series: 2,
            accept_length: Stats {
                mean: 3.0,
                min: 3.0,
                max: 3.0,
                samples: 1,
            },
            accept_rate: None,
            generation_tokens: None,
            static_gauge: false,
        }));
        assert!(chart(&r, plain())[0].ends_with("gauge's mean; not checked: acceptance-cliff"));
        assert_eq!(
            unlisted_skipped(&r, plain()),
            vec![format!(
                "not checked acceptance-gauge-static: needs {}",
                Need::GaugeSamples.describe()
            )]
        );
        assert_eq!(
            json_body(&r)["skipped"][2]["needs"],
            json!(["gauge_samples"])
        );
    }

    /// Bars are proportional in eighth-cell steps and always `width` cells wide.
    #[test]
    fn bars() {
        assert_eq!(bar(1.0, 4), "████");
        assert_eq!(bar(0.0, 4), "    ");
        assert_eq!(bar(0.5, 4), "██  ");
        assert_eq!(bar(0.0625, 4), "▎   ");
        assert_eq!(bar(2.0, 4), "████");
        assert_eq!(bar(f64::NAN, 4), "    ");
        for v in [0.01, 0.33, 0.99] {
            assert_eq!(bar(v, 32).chars().count(), 32);
        }
    }
}
