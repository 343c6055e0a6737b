//! The acceptance report for people (a summary line, a per-position bar chart in Unicode
//! blocks, the findings, the rules not checked, the verdict and the commands to run next) and
//! for machines (JSON, `command: "acceptance"`, with the skipped rules as lint lists them).

use std::io::{self, Write};

use serde_json::json;

use super::style::Painter;
use super::{RenderOptions, Report};
use crate::acceptance::compute::Shape;
use crate::acceptance::rules::{Need, NEAR_ZERO};
use crate::acceptance::verdict::{fmt2, pct, AcceptanceReport, Measurement, Verdict};
use crate::diagnostic::rule::NeedKind;
use crate::diagnostic::{Diagnostic, Severity};

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

fn severity(p: Painter, s: Severity) -> String {
    let label = format!("{:<7}", s.as_str());
    match s {
        Severity::Error => p.red(&label),
        Severity::Warning => p.yellow(&label),
        Severity::Info => p.dim(&label),
    }
}

/// The human report.
pub fn write_human(out: &mut dyn Write, r: &AcceptanceReport, p: Painter) -> io::Result<()> {
    let m = &r.measurement;
    writeln!(out, "{} {}", p.bold("dflash-check acceptance"), r.url)?;
    let model = match &r.model_name {
        Some(name) if r.models.len() > 1 => {
            format!("model {name} (of {})", r.models.join(", "))
        }
        Some(name) => format!("model {name}"),
        None => "model (no model_name label)".to_string(),
    };
    let window = &r.window;
    match m {
        Measurement::Vllm(w) => {
            let engines = match w.engines.len() {
                0 | 1 => String::new(),
                n => format!(", summed over {n} engines"),
            };
            writeln!(out, "  engine   vLLM, {model}{engines}")?;
            writeln!(
                out,
                "  window   {} s: {} drafts, {} draft tokens, {} accepted",
                secs(window.measured_secs),
                count(w.drafts),
                count(w.draft_tokens),
                count(w.accepted_tokens)
            )?;
        }
        Measurement::Sglang(w) => {
            writeln!(out, "  engine   SGLang, {model}")?;
            let tokens = w
                .generation_tokens
                .map(|t| format!(", {} tokens generated", count(t)))
                .unwrap_or_default();
            writeln!(
                out,
                "  window   {} s: {} samples of {} series{tokens}",
                secs(window.measured_secs),
                w.scrapes,
                w.series
            )?;
        }
    }
    writeln!(out)?;
    let al = m.acceptance_length();
    let of = match m.max_acceptance_length() {
        Some(max) => format!(" of {max} (K={})", max - 1),
        None => String::new(),
    };
    let rate = m
        .draft_acceptance_rate()
        .map(|r| format!("   draft-token acceptance {}", pct(r)))
        .unwrap_or_default();
    let spread = match m {
        Measurement::Sglang(w) => format!(
            " (mean; min {}, max {})",
            fmt2(w.accept_length.min),
            fmt2(w.accept_length.max)
        ),
        Measurement::Vllm(_) => String::new(),
    };
    writeln!(
        out,
        "  {} {}{of}{spread}{rate}",
        p.bold("acceptance length"),
        p.bold(&fmt2(al))
    )?;
    writeln!(out)?;
    write_per_position(out, r, p)?;
    write_findings(out, r, p)?;
    write_verdict(out, r, p)?;
    Ok(())
}

/// The per-position bar chart, or the line saying it is not exported (and which rules that
/// leaves unchecked).
fn write_per_position(out: &mut dyn Write, r: &AcceptanceReport, p: Painter) -> io::Result<()> {
    match &r.measurement {
        Measurement::Vllm(w) if !w.per_position.is_empty() => {
            writeln!(
                out,
                "  per-position acceptance (share of drafts accepted at least this far)"
            )?;
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
                    p.red(&value)
                } else {
                    value
                };
                writeln!(out, "  {:>width$} │{b}│ {value}", pos.position)?;
            }
            writeln!(out)?;
        }
        Measurement::Vllm(_) => {
            writeln!(
                out,
                "  per-position acceptance: not exported (no vllm:spec_decode_num_accepted_tokens_per_pos){}",
                not_checked(r, Need::PerPosition)
            )?;
            writeln!(out)?;
        }
        Measurement::Sglang(_) => {
            writeln!(
                out,
                "  per-position acceptance: SGLang exports none; acceptance length is the gauge's mean{}",
                not_checked(r, Need::PerPosition)
            )?;
            writeln!(out)?;
        }
    }
    Ok(())
}

/// The findings, then the rules not checked that no other line names (the per-position line
/// names those that lack per-position counters, the verdict those that lack a threshold).
fn write_findings(out: &mut dyn Write, r: &AcceptanceReport, p: Painter) -> io::Result<()> {
    let unlisted: Vec<_> = r
        .skipped
        .iter()
        .filter(|s| {
            !s.needs
                .iter()
                .all(|n| matches!(n, Need::PerPosition | Need::Threshold))
        })
        .collect();
    if r.diagnostics.is_empty() && unlisted.is_empty() {
        return Ok(());
    }
    let cw = r
        .diagnostics
        .iter()
        .map(|d| d.code.as_str().len())
        .max()
        .unwrap_or(0);
    for d in &r.diagnostics {
        writeln!(
            out,
            "  {} {:<cw$}  {}",
            severity(p, d.severity),
            d.code.as_str(),
            d.message
        )?;
    }
    for s in unlisted {
        let needs: Vec<&str> = s.needs.iter().map(|n| n.describe()).collect();
        writeln!(
            out,
            "  {} {}: needs {}",
            p.dim("not checked"),
            s.code.as_str(),
            needs.join("; ")
        )?;
    }
    writeln!(out)
}

/// The verdict against the threshold, and the commands to run next.
fn write_verdict(out: &mut dyn Write, r: &AcceptanceReport, p: Painter) -> io::Result<()> {
    let al = fmt2(r.measurement.acceptance_length());
    let verdict = match (&r.verdict, &r.threshold) {
        (Verdict::Fail, Some(t)) => format!(
            "{}: {} < {} ({})",
            p.red("FAIL"),
            al,
            fmt2(t.value),
            t.source
        ),
        (Verdict::Pass, Some(t)) => format!(
            "{}: {} ≥ {} ({})",
            p.green("ok"),
            al,
            fmt2(t.value),
            t.source
        ),
        _ => format!("{}: no threshold", p.dim("no verdict")),
    };
    writeln!(out, "  verdict  {verdict}")?;
    for (i, cmd) in r.next_steps.iter().enumerate() {
        let label = if i == 0 { "next    " } else { "        " };
        writeln!(out, "  {label} {cmd}")?;
    }
    Ok(())
}

/// `acceptance` renders in every format.
impl Report for AcceptanceReport {
    fn command(&self) -> &'static str {
        "acceptance"
    }

    fn diagnostics(&self) -> Vec<Diagnostic> {
        self.diagnostics.clone()
    }

    fn write_human(&self, out: &mut dyn Write, options: &RenderOptions) -> io::Result<()> {
        write_human(out, self, options.painter)
    }

    fn json_body(&self) -> serde_json::Value {
        json_body(self)
    }
}

/// The JSON fields of the report (the envelope adds the diagnostics and summary).
fn json_body(r: &AcceptanceReport) -> serde_json::Value {
    let m = &r.measurement;
    let (per_position, counts, sglang) = match m {
        Measurement::Vllm(w) => (
            json!(w.per_position),
            json!({
                "drafts": w.drafts,
                "draft_tokens": w.draft_tokens,
                "accepted_tokens": w.accepted_tokens,
                "engines": w.engines,
            }),
            serde_json::Value::Null,
        ),
        Measurement::Sglang(w) => (
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
        Measurement::Vllm(w) => json!(w.num_speculative_tokens),
        Measurement::Sglang(_) => serde_json::Value::Null,
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
    use crate::acceptance::compute::{SglangWindow, Stats, VllmWindow};

    /// A report on `measurement` without a threshold, for a served model that names no target.
    fn report(measurement: Measurement) -> AcceptanceReport {
        crate::acceptance::verdict::tests::report(measurement, None, "m")
    }

    fn human(r: &AcceptanceReport) -> String {
        let mut out = Vec::new();
        write_human(&mut out, r, Painter { enabled: false }).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The rules skipped for want of a fact are listed: on the per-position line (the cliff,
    /// without per-position counters), by the verdict (no threshold), on a line of their own
    /// otherwise (a single sample of SGLang's gauge), and in the JSON's `skipped`.
    #[test]
    fn skipped_rules_are_listed() {
        let r = report(Measurement::Vllm(VllmWindow {
            drafts: 100.0,
            draft_tokens: 300.0,
            accepted_tokens: 150.0,
            num_speculative_tokens: Some(3),
            acceptance_length: 2.5,
            draft_acceptance_rate: Some(0.5),
            per_position: vec![],
            engines: vec![],
        }));
        let text = human(&r);
        assert!(
            text.contains("not exported (no vllm:spec_decode_num_accepted_tokens_per_pos); not checked: acceptance-cliff\n"),
            "{text}"
        );
        assert!(text.contains("no verdict: no threshold"), "{text}");
        assert!(!text.contains("not checked acceptance-"), "{text}");
        assert_eq!(
            json_body(&r)["skipped"],
            json!([
                {"code": "acceptance-cliff", "needs": ["per_position"]},
                {"code": "acceptance-below-threshold", "needs": ["threshold"]},
            ])
        );
        let r = report(Measurement::Sglang(SglangWindow {
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
        let text = human(&r);
        assert!(
            text.contains("gauge's mean; not checked: acceptance-cliff\n"),
            "{text}"
        );
        assert!(
            text.contains("  not checked acceptance-gauge-static: needs two samples of sglang:spec_accept_length"),
            "{text}"
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
