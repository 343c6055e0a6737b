//! GitHub Actions workflow commands: `::error file=F,line=L,col=C,title=CODE::message`, so each
//! diagnostic is annotated on the line of the offending key in the pull request. Any command's
//! diagnostics, alike.
//!
//! Annotations are capped by the runner (10 errors and 10 warnings per step are shown), so
//! [`step_summary`] also renders every finding as a Markdown table for the job's summary page
//! (`$GITHUB_STEP_SUMMARY`; the binary appends it there).

use std::io::{self, Write};

use super::human::plain_summary;
use super::{RenderOptions, Report};
use crate::diagnostic::{Diagnostic, Severity};

/// Escapes a message (`%`, CR, LF), as the runner's parser expects.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value: as data, plus `:` and `,`.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Writes any report's findings as annotations, then its summary line (the one every command's
/// human output ends with).
pub fn write(out: &mut dyn Write, report: &dyn Report, options: &RenderOptions) -> io::Result<()> {
    for f in report.diagnostics().iter() {
        let command = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let title = if f.path.is_empty() {
            f.code.to_string()
        } else {
            format!("{} ({})", f.code, f.path)
        };
        let mut props = Vec::new();
        if let Some(file) = &f.file {
            props.push(format!("file={}", escape_property(file)));
            if let Some(span) = f.span {
                props.push(format!("line={},col={}", span.line, span.column));
            }
        }
        props.push(format!("title={}", escape_property(&title)));
        writeln!(
            out,
            "::{command} {}::{}",
            props.join(","),
            escape_data(&f.message)
        )?;
    }
    writeln!(
        out,
        "dflash-check {}: {}",
        report.command(),
        plain_summary(report, options)
    )
}

/// Rows past this are counted, not listed: GitHub refuses a step summary over 1 MiB.
const SUMMARY_ROWS: usize = 500;

/// A table cell: no line breaks, `|` escaped, so one finding stays one row.
fn cell(s: &str) -> String {
    s.replace('\r', "")
        .replace('\n', "<br>")
        .replace('|', "\\|")
}

/// The Markdown step summary of any report: a heading with its summary line (the one every
/// command's human output ends with), then one row per finding (severity, code, where,
/// message).
pub fn step_summary(report: &dyn Report, options: &RenderOptions) -> String {
    table(
        report.command(),
        &plain_summary(report, options),
        options.fails,
        &report.diagnostics(),
    )
}

fn table(command: &str, summary: &str, fails: bool, diagnostics: &[Diagnostic]) -> String {
    let mut md = format!(
        "### dflash-check {command}: {} {summary}\n\n",
        if fails { "❌" } else { "✅" },
    );
    if diagnostics.is_empty() {
        md.push_str("No findings.\n\n");
        return md;
    }
    md.push_str("| severity | code | file | path | message |\n|---|---|---|---|---|\n");
    for d in diagnostics.iter().take(SUMMARY_ROWS) {
        let place = match (&d.file, d.span) {
            (Some(f), Some(span)) => format!("`{}:{}`", cell(f), span.line),
            (Some(f), None) => format!("`{}`", cell(f)),
            (None, _) => String::new(),
        };
        let path = if d.path.is_empty() {
            String::new()
        } else {
            format!("`{}`", cell(&d.path))
        };
        md.push_str(&format!(
            "| {} | `{}` | {place} | {path} | {} |\n",
            d.severity,
            d.code,
            cell(&d.message)
        ));
    }
    if diagnostics.len() > SUMMARY_ROWS {
        md.push_str(&format!(
            "\n… and {} more (see the job log).\n",
            diagnostics.len() - SUMMARY_ROWS
        ));
    }
    md.push('\n');
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_the_runner_expects() {
        assert_eq!(escape_data("50% a\nb\r"), "50%25 a%0Ab%0D");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }

    #[test]
    fn step_summary_keeps_one_finding_per_row() {
        use crate::diagnostic::codes::CheckCode;
        use crate::diagnostic::CodeInfo;
        static INFO: CodeInfo = CodeInfo {
            severity: Severity::Error,
            summary: "s",
            explanation: "e",
            source: "src",
        };
        let d = Diagnostic::new(CheckCode::ConfigUnreadable, &INFO, "a.b", "x | y\nz")
            .file("m/config.json")
            .span(3, 5);
        let md = table("check", "FAIL: 1 error, 0 warnings, 0 info", true, &[d]);
        assert!(md.starts_with("### dflash-check check: ❌ FAIL: 1 error, 0 warnings, 0 info\n"));
        assert!(md.contains(
            "| error | `config-unreadable` | `m/config.json:3` | `a.b` | x \\| y<br>z |\n"
        ));
        assert_eq!(
            table("lint", "OK: 0 errors, 0 warnings, 0 info", false, &[]),
            "### dflash-check lint: ✅ OK: 0 errors, 0 warnings, 0 info\n\nNo findings.\n\n"
        );
    }
}
