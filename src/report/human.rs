//! The one human layout, for every command: a header block (`dflash-check COMMAND SUBJECT`,
//! then `  key  value` lines), one line per finding (`severity[code] where: message (expected
//! …)`, its `  --> file:line:column` and any notes indented under it), the report's own
//! sections (a table, the fix line, the ranked causes), and one summary line in one wording:
//! `FAIL: 2 errors, 1 warning, 0 info`, `OK: …`, `OK (1 unverified): …`, `NOTHING CHECKED: …`,
//! then `; ` and what the command adds. Blocks are separated by one blank line.
//!
//! The status follows `check`'s rule: `OK` only for what was verified; a run that verified
//! less says so in the status itself, so a reader of the last line alone is not misled.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::style::Painter;
use super::{plural, RenderOptions, Report};
use crate::diagnostic::{Code, Diagnostic, Summary};

/// The status word of the summary line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The gate fails (exit 1).
    Fail,
    /// Everything checked passed.
    Ok,
    /// Passed, but not everything could be verified: `OK (…)` says what (`1 unverified`,
    /// `no threshold`).
    Unverified(String),
    /// Nothing was there to check.
    NothingChecked,
}

impl Status {
    /// `Fail` or `Ok`, as the caller decided.
    pub fn of(fails: bool) -> Status {
        if fails {
            Status::Fail
        } else {
            Status::Ok
        }
    }

    fn painted(&self, p: Painter) -> String {
        match self {
            Status::Fail => p.red("FAIL").into_owned(),
            Status::Ok => p.green("OK").into_owned(),
            Status::Unverified(what) => p.yellow(&format!("OK ({what})")).into_owned(),
            Status::NothingChecked => p.yellow("NOTHING CHECKED").into_owned(),
        }
    }
}

/// The summary line: a status, and what the command says after the counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub status: Status,
    /// `this drafter does not match its authority`, `3 drafters checked`, …
    pub detail: Option<String>,
}

impl Verdict {
    pub fn new(status: Status) -> Verdict {
        Verdict {
            status,
            detail: None,
        }
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Verdict {
        self.detail = Some(detail.into());
        self
    }
}

/// `2 errors`, `1 warning`: a count and its noun, plural when not one.
pub fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", plural(n))
}

/// Writes `report`'s human page. Every line goes through the display filter
/// ([`Painter::shown`]) here, where it is written, so no report's part can print an input's
/// control characters: one line of the page is one line of output (or two, for a finding that
/// quotes an error with its `  hint: ` line).
pub fn write(report: &dyn Report, options: &RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    let p = options.painter;
    let mut line = |text: &str| writeln!(out, "{}", p.shown(text));
    for l in report.header(p) {
        line(&l)?;
    }
    report.for_each_human_finding(&mut |i, f| {
        if i == 0 {
            line("")?;
        }
        for l in finding_lines(p, f) {
            line(&l)?;
        }
        for note in report.finding_notes(i, f) {
            line(&format!("  {note}"))?;
        }
        Ok(())
    })?;
    for section in report.sections(options) {
        if section.is_empty() {
            continue;
        }
        line("")?;
        for l in section {
            line(&l)?;
        }
    }
    line("")?;
    line(&summary_line(
        &report.verdict(options),
        &counts(report),
        options,
    ))
}

/// The report's counts: its own when it keeps them, else those of its diagnostics.
fn counts(report: &dyn Report) -> Summary {
    report
        .summary()
        .unwrap_or_else(|| Summary::of(report.diagnostics().iter()))
}

/// The report's summary line without colours, for the formats that quote it (GitHub's log line
/// and step summary heading).
pub fn plain_summary(report: &dyn Report, options: &RenderOptions) -> String {
    let plain = RenderOptions {
        painter: Painter { enabled: false },
        ..*options
    };
    summary_line(&report.verdict(&plain), &counts(report), &plain)
}

/// `FAIL: 2 errors, 1 warning, 0 info (warnings denied); detail`: the last line of every
/// command's human output.
pub fn summary_line(verdict: &Verdict, s: &Summary, options: &RenderOptions) -> String {
    let denied = if options.deny_warnings && s.warnings > 0 {
        " (warnings denied)"
    } else {
        ""
    };
    let detail = verdict
        .detail
        .as_ref()
        .map_or(String::new(), |d| format!("; {d}"));
    format!(
        "{}: {}, {}, {} info{denied}{detail}",
        verdict.status.painted(options.painter),
        count(s.errors, "error"),
        count(s.warnings, "warning"),
        s.infos
    )
}

/// A finding's lines: `severity[code] where: message (expected …)`, then `  --> file:line:col`
/// when it is about a file.
pub fn finding_lines(p: Painter, f: &Diagnostic) -> Vec<String> {
    let mut lines = Vec::with_capacity(3);
    lines.push(finding_line(p, f));
    if let Some(file) = &f.file {
        // One string written in place at its final size (a format per part cost three
        // allocations a finding, a `format!` grew its string again).
        let arrow = p.dim("-->");
        let mut at = String::with_capacity(3 + arrow.len() + file.len() + 24);
        at.push_str("  ");
        at.push_str(&arrow);
        at.push(' ');
        at.push_str(file);
        if let Some(s) = f.span {
            let _ = write!(at, ":{}:{}", s.line, s.column);
        }
        lines.push(at);
    }
    if let Some(r) = &f.releases {
        lines.push(format!("  {} releases: {r}", p.dim("=")));
    }
    lines
}

/// `severity[code] where: message (expected …)`. A difference's message already names the
/// authority's value, so its `expected` (there for machines) is not repeated; a message that
/// already starts with its path (check's, written for one-line renderers) is not prefixed twice.
pub fn finding_line(p: Painter, f: &Diagnostic) -> String {
    let named = f
        .message
        .strip_prefix(f.path.as_str())
        .is_some_and(|rest| rest.starts_with(": "));
    let level = p.level(f.severity);
    // Written in place at about its final size (a `format!` of the parts grew its string two
    // or three times: reallocations were a tenth of `check`'s instructions, issue 44).
    let mut line = String::with_capacity(level.len() + f.path.len() + f.message.len() + 48);
    let _ = write!(line, "{level}[{}]", f.code);
    if !(f.path.is_empty() || named) {
        line.push(' ');
        line.push_str(&f.path);
        line.push(':');
    }
    line.push(' ');
    line.push_str(&f.message);
    match (&f.expected, f.code) {
        (Some(e), code) if !matches!(code, Code::Diff(_)) => {
            let _ = write!(line, " (expected {})", e.to_string().replace(',', ", "));
        }
        _ => {}
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::codes::LintCode;

    fn options(fails: bool, deny_warnings: bool) -> RenderOptions {
        RenderOptions {
            painter: Painter { enabled: false },
            deny_warnings,
            fails,
        }
    }

    /// One wording for every status, with plurals and the detail after the counts.
    #[test]
    fn summary_lines() {
        let s = Summary {
            errors: 2,
            warnings: 1,
            infos: 0,
        };
        assert_eq!(
            summary_line(&Verdict::new(Status::Fail), &s, &options(true, false)),
            "FAIL: 2 errors, 1 warning, 0 info"
        );
        let clean = Summary::default();
        assert_eq!(
            summary_line(
                &Verdict::new(Status::Unverified("1 unverified".into()))
                    .detail("1 drafter checked"),
                &clean,
                &options(false, false)
            ),
            "OK (1 unverified): 0 errors, 0 warnings, 0 info; 1 drafter checked"
        );
        let warned = Summary {
            errors: 0,
            warnings: 1,
            infos: 1,
        };
        assert_eq!(
            summary_line(&Verdict::new(Status::Fail), &warned, &options(true, true)),
            "FAIL: 0 errors, 1 warning, 1 info (warnings denied)"
        );
        assert_eq!(
            summary_line(
                &Verdict::new(Status::NothingChecked),
                &clean,
                &options(false, false)
            ),
            "NOTHING CHECKED: 0 errors, 0 warnings, 0 info"
        );
    }

    /// A finding: severity, code, where, message, expected; its location under it.
    #[test]
    fn finding_layout() {
        let code = LintCode::ALL[0];
        let d = Diagnostic::new(code, crate::rules::info(code), "a.b", "is wrong")
            .expected(serde_json::json!([1, 2]))
            .file("x/config.json")
            .span(3, 5);
        let lines = finding_lines(Painter { enabled: false }, &d);
        assert_eq!(
            lines,
            vec![
                format!(
                    "{}[{}] a.b: is wrong (expected [1, 2])",
                    d.severity.as_str(),
                    d.code
                ),
                "  --> x/config.json:3:5".to_string()
            ]
        );
    }
}
