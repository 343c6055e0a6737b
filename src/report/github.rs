//! GitHub Actions workflow commands: `::error file=F,line=L,col=C,title=CODE::message`, so each
//! diagnostic is annotated on the line of the offending key in the pull request. Any command's
//! diagnostics, alike.
//!
//! Annotations are capped by the runner (10 errors and 10 warnings per step are shown), so
//! [`step_summary`] also renders every finding as a Markdown table for the job's summary page
//! (`$GITHUB_STEP_SUMMARY`; the binary appends it there).
//!
//! Messages, paths and titles quote inputs (a token's text, a path name), so each goes through
//! the display filter ([`crate::display::shown`]: no ESC, BEL or line break of an input reaches
//! the log) and is then escaped as the runner expects, so text can never end an annotation and
//! start a workflow command of its own. The step summary escapes Markdown and HTML, so a
//! backtick, a link or an image in an input is shown as text.

use std::io::{self, Write};

use super::human::plain_summary;
use super::{RenderOptions, Report};
use crate::diagnostic::{Diagnostic, Severity};
use crate::display::shown;

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
            props.push(format!("file={}", escape_property(&shown(file))));
            if let Some(span) = f.span {
                props.push(format!("line={},col={}", span.line, span.column));
            }
        }
        props.push(format!("title={}", escape_property(&shown(&title))));
        writeln!(
            out,
            "::{command} {}::{}",
            props.join(","),
            escape_data(&shown(&f.full_message()))
        )?;
    }
    writeln!(
        out,
        "dflash-check {}: {}",
        report.command(),
        shown(&plain_summary(report, options))
    )
}

/// Appends `table` to the step summary file `path` (`$GITHUB_STEP_SUMMARY`). The runner creates
/// the file; a missing directory, an unwritable file, or one that is not a regular file (a FIFO
/// would block the job forever, a device would swallow the summary) is an error, as a gate
/// must not pass on output it lost. The file is opened without blocking (`O_NONBLOCK`) and its
/// type checked on the open handle too, so nothing swapped in after the first look can hang it.
pub fn append_step_summary(path: &std::path::Path, table: &str) -> crate::Result<()> {
    use std::io::ErrorKind;
    let not_regular = || io::Error::new(ErrorKind::InvalidInput, "it is not a regular file");
    let check = |m: std::fs::Metadata| {
        if m.is_file() {
            Ok(())
        } else {
            Err(not_regular())
        }
    };
    let append = || -> io::Result<()> {
        match std::fs::metadata(path) {
            Ok(m) => check(m)?,
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let mut open = std::fs::OpenOptions::new();
        open.append(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut open, libc::O_NONBLOCK);
        let mut file = open.open(path)?;
        check(file.metadata()?)?;
        file.write_all(table.as_bytes())
    };
    append().map_err(|e| {
        crate::Error::new(format!(
            "cannot append the step summary to `{}` (GITHUB_STEP_SUMMARY): {e}",
            path.display()
        ))
        .with_hint("point GITHUB_STEP_SUMMARY at a writable regular file, or unset it")
    })
}

/// Rows past this are counted, not listed: GitHub refuses a step summary over 1 MiB.
const SUMMARY_ROWS: usize = 500;

/// Text for the step summary: shown through the display filter (no line break, so one finding
/// stays one row; no ESC or BEL), then every character Markdown or HTML could act on as a
/// numeric character reference: `|` cannot split the row, a backtick cannot close a code span,
/// `<` cannot open a tag, `[` and `]` cannot make a link or an image, `*` and `~` cannot
/// emphasise, `$` cannot start math. The reader sees the characters themselves. A quoted
/// error's hint keeps its line, as `<br>hint: `.
fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut parts = s.split(crate::display::HINT_BREAK);
    out.push_str(&cell_part(parts.next().unwrap_or_default()));
    for part in parts {
        out.push_str("<br>hint: ");
        out.push_str(&cell_part(part));
    }
    out
}

fn cell_part(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in shown(s).chars() {
        match c {
            '\\' | '`' | '*' | '[' | ']' | '<' | '>' | '&' | '|' | '~' | '$' => {
                out.push_str(&format!("&#{};", c as u32));
            }
            c => out.push(c),
        }
    }
    out
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
        "### dflash-check {command}: {} {}\n\n",
        if fails { "❌" } else { "✅" },
        cell(summary),
    );
    if diagnostics.is_empty() {
        md.push_str("No findings.\n\n");
        return md;
    }
    md.push_str("| severity | code | file | path | message |\n|---|---|---|---|---|\n");
    for d in diagnostics.iter().take(SUMMARY_ROWS) {
        // `<code>`, not a code span: inside backticks no escape works, so a backtick in a
        // path would close the span; character references work inside `<code>`.
        let place = match (&d.file, d.span) {
            (Some(f), Some(span)) => format!("<code>{}:{}</code>", cell(f), span.line),
            (Some(f), None) => format!("<code>{}</code>", cell(f)),
            (None, _) => String::new(),
        };
        let path = if d.path.is_empty() {
            String::new()
        } else {
            format!("<code>{}</code>", cell(&d.path))
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
        };
        let d = Diagnostic::new(CheckCode::ConfigUnreadable, &INFO, "a.b", "x | y\nz")
            .file("m/config.json")
            .span(3, 5);
        let md = table("check", "FAIL: 1 error, 0 warnings, 0 info", true, &[d]);
        assert!(md.starts_with("### dflash-check check: ❌ FAIL: 1 error, 0 warnings, 0 info\n"));
        assert!(md.contains(
            "| error | `config-unreadable` | <code>m/config.json:3</code> | <code>a.b</code> | x &#124; y&#92;nz |\n"
        ), "{md}");
        assert_eq!(
            table("lint", "OK: 0 errors, 0 warnings, 0 info", false, &[]),
            "### dflash-check lint: ✅ OK: 0 errors, 0 warnings, 0 info\n\nNo findings.\n\n"
        );
    }

    /// Input text cannot forge a workflow command in an annotation, nor Markdown, HTML, links
    /// or images in the step summary (issue 32).
    #[test]
    fn hostile_text_stays_text() {
        use crate::diagnostic::codes::CheckCode;
        use crate::diagnostic::CodeInfo;
        static INFO: CodeInfo = CodeInfo {
            severity: Severity::Error,
            summary: "s",
            explanation: "e",
        };
        let hostile = "x\n::error file=README.md::INJECTED \u{1b}]0;t\u{7} `a` ![i](http://e/x.png) [l](http://e) <img src=x> | $y$";
        let d =
            Diagnostic::new(CheckCode::ConfigUnreadable, &INFO, "a`b", hostile).file("m/`x`.json");
        let md = table(
            "check",
            "FAIL: 1 error, 0 warnings, 0 info",
            true,
            std::slice::from_ref(&d),
        );
        for bad in [
            "\n::", "`a`", "![", "](", "<img", "| $", "\u{1b}", "\u{7}", "`x`",
        ] {
            assert!(!md.contains(bad), "{bad:?} in {md}");
        }
        assert!(md.contains("&#96;a&#96;"), "{md}");
        struct One(Diagnostic);
        impl Report for One {
            fn command(&self) -> &'static str {
                "check"
            }
            fn diagnostics(&self) -> std::borrow::Cow<'_, [Diagnostic]> {
                std::borrow::Cow::Borrowed(std::slice::from_ref(&self.0))
            }
            fn json_body(&self) -> serde_json::Value {
                serde_json::Value::Null
            }
            fn header(&self, _: crate::report::Painter) -> Vec<String> {
                Vec::new()
            }
        }
        let options = RenderOptions {
            painter: crate::report::Painter { enabled: false },
            deny_warnings: false,
            fails: true,
        };
        let mut out = Vec::new();
        write(&mut out, &One(d), &options).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        for l in text.lines() {
            assert!(
                l.starts_with("::error ") || l.starts_with("dflash-check "),
                "{l}"
            );
            assert!(!l.contains('\u{1b}') && !l.contains('\u{7}'), "{l}");
        }
    }
}
