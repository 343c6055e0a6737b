//! `doctor`'s report: one screen. What was measured and where the drafter, target and authority
//! came from; then the causes, most likely first, each with the findings that show it (in the
//! one finding format) and its repair; what was ruled out; the restart; the summary line. JSON: the same, structured.

use std::borrow::Cow;

use serde_json::json;

use super::human::{count, finding_line};
use super::{Painter, RenderOptions, Report, Status, Verdict};
use crate::diagnostic::Diagnostic;
use crate::doctor::DoctorReport;

/// Findings shown per cause in human output (JSON has them all).
const SHOWN_PER_CAUSE: usize = 4;

impl Report for DoctorReport {
    fn command(&self) -> &'static str {
        "doctor"
    }

    fn diagnostics(&self) -> Cow<'_, [Diagnostic]> {
        Cow::Owned(DoctorReport::diagnostics(self))
    }

    /// A cause that explains the symptom, or an error; with `--deny warnings`, any warning.
    fn fails(&self, deny_warnings: bool) -> bool {
        DoctorReport::fails(self)
            || crate::diagnostic::Summary::of(&self.diagnostics()).fails(deny_warnings)
    }

    fn header(&self, p: Painter) -> Vec<String> {
        let mut lines = vec![p.bold("dflash-check doctor").into_owned()];
        if let Some(a) = &self.acceptance_summary {
            lines.push(format!("  measured   {a}"));
        }
        lines.push(format!(
            "  symptom    {}",
            self.symptom.describe(self.mtp_head)
        ));
        lines.push(format!(
            "  engine     {}",
            super::engine_line(self.engine().as_ref())
        ));
        let l = &self.located;
        let line = |what: &Option<String>, from: &Option<String>| match (what, from) {
            (Some(w), Some(f)) => format!("{w}  (from {f})"),
            (Some(w), None) => w.clone(),
            _ => "unknown".to_string(),
        };
        lines.push(format!(
            "  drafter    {}",
            line(&l.drafter, &l.drafter_from)
        ));
        lines.push(format!("  target     {}", line(&l.target, &l.target_from)));
        if let Some(a) = &l.authority {
            lines.push(format!("  authority  {a}"));
            if let Some(why) = &l.authority_chosen_by {
                lines.push(format!("             chosen by {why}"));
            }
        }
        lines
    }

    /// The findings are listed inside their causes.
    fn human_findings(&self) -> Cow<'_, [Diagnostic]> {
        Cow::Borrowed(&[])
    }

    fn sections(&self, options: &RenderOptions) -> Vec<Vec<String>> {
        let mut rest: Vec<String> = Vec::new();
        if !self.ruled_out.is_empty() {
            rest.push(format!("Ruled out: {}", self.ruled_out.join(", ")));
        }
        for n in &self.not_checked {
            rest.push(format!("Not checked: {}", one_line(n, 150)));
        }
        if let Some(r) = &self.restart {
            rest.push(format!("Then: {r}"));
        }
        vec![causes(self, options.painter), rest]
    }

    fn verdict(&self, options: &RenderOptions) -> Verdict {
        Verdict::new(Status::of(options.fails)).detail(count(self.causes.len(), "cause"))
    }

    fn engine_dependent(&self) -> bool {
        true
    }

    /// The engine the server's metrics came from (the one the lint ran for), when measured.
    fn engine(&self) -> Option<crate::rules::EngineRelease> {
        self.acceptance
            .as_ref()
            .map(|a| a.measurement.engine().into())
    }

    fn json_body(&self) -> serde_json::Value {
        json!({
            "symptom": self.symptom,
            "acceptance": self.acceptance_summary,
            "server": self.server,
            "located": self.located,
            "causes": self.causes,
            "ruled_out": self.ruled_out,
            "not_checked": self.not_checked,
            "restart": self.restart,
        })
    }
}

/// The causes, most likely first, each with its findings (one line each, as every command
/// writes them) and its repair.
fn causes(report: &DoctorReport, p: Painter) -> Vec<String> {
    if report.causes.is_empty() {
        return vec![
            "No cause found in the drafter, its target, its weights or the launch.".into(),
        ];
    }
    let mut lines = vec!["Causes, most likely first:".to_string()];
    // The same repair (one `fix` line repairs every field that differs) is printed once.
    let mut repairs_seen: Vec<(&String, usize)> = Vec::new();
    for (i, c) in report.causes.iter().enumerate() {
        let tag = if c.explains_symptom {
            " — explains the symptom"
        } else {
            ""
        };
        lines.push(format!("{:>2}. {}{tag}", i + 1, p.bold(c.title)));
        for f in c.findings.iter().take(SHOWN_PER_CAUSE) {
            let mut short = f.clone();
            short.message = one_line(&f.message, 110);
            short.expected = None;
            lines.push(format!("      {}", finding_line(p, &short)));
        }
        if c.findings.len() > SHOWN_PER_CAUSE {
            lines.push(format!(
                "      … {} more (--format json lists them)",
                c.findings.len() - SHOWN_PER_CAUSE
            ));
        }
        for r in &c.repair {
            match repairs_seen.iter().find(|(seen, _)| *seen == r) {
                Some((_, n)) => lines.push(format!("      repair: the same as {n}.")),
                None => {
                    lines.push(format!("      repair: {}", p.bold(r)));
                    repairs_seen.push((r, i + 1));
                }
            }
        }
    }
    lines
}

/// The first line of `s`, at most about `max` characters, cut at the last word boundary before
/// it (never inside a word, a flag or a path: issue 32); a single word longer than that is cut
/// where it must be.
fn one_line(s: &str, max: usize) -> String {
    let first = s.lines().next().unwrap_or("");
    if first.chars().count() <= max {
        return first.to_string();
    }
    let cut: String = first.chars().take(max - 1).collect();
    let at_word = cut
        .rfind(' ')
        .filter(|&i| i > max / 2)
        .map_or(cut.as_str(), |i| cut[..i].trim_end_matches([',', ';', ':']));
    format!("{at_word} …")
}
