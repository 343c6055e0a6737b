//! text -> a finding of `check` whose file, JSON path and message are the input (split at its
//! first two NULs) -> the `--format github` annotations and the `$GITHUB_STEP_SUMMARY` table.
//! Invariants: no panic; the annotations are one workflow command per finding and the summary
//! line, whatever the text (no forged `::` line); the step summary holds one table row for the
//! finding with its five cells, no raw control character, and nothing Markdown or HTML acts
//! on: no backtick but the code's own span, no tag but `<code>` and `<br>`, no `[`, `]`, `|`
//! of the input. Seeds: the hostile strings of tests/hostile_text.rs (fuzz/run.sh).
#![no_main]

use std::borrow::Cow;

use dflash_check::diagnostic::codes::CheckCode;
use dflash_check::diagnostic::{CodeInfo, Diagnostic, Severity};
use dflash_check::report::{github, Painter, RenderOptions, Report};
use libfuzzer_sys::fuzz_target;

static INFO: CodeInfo = CodeInfo {
    severity: Severity::Error,
    summary: "s",
    explanation: "e",
};

struct One(Diagnostic);

impl Report for One {
    fn command(&self) -> &'static str {
        "check"
    }
    fn diagnostics(&self) -> Cow<'_, [Diagnostic]> {
        Cow::Borrowed(std::slice::from_ref(&self.0))
    }
    fn json_body(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    fn header(&self, _: Painter) -> Vec<String> {
        Vec::new()
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\0');
    let (file, path, message) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let finding = Diagnostic::new(CheckCode::ConfigUnreadable, &INFO, path, message)
        .file(file)
        .span(1, 1);
    let report = One(finding);
    let options = RenderOptions {
        painter: Painter { enabled: false },
        deny_warnings: false,
        fails: true,
    };
    let mut out = Vec::new();
    github::write(&mut out, &report, &options).unwrap();
    let annotations = String::from_utf8(out).unwrap();
    assert_eq!(annotations.lines().count(), 2, "{annotations:?}");
    for line in annotations.lines() {
        assert!(
            line.starts_with("::error file=") || line.starts_with("dflash-check check: "),
            "{line:?}"
        );
        assert!(!line.chars().any(char::is_control), "{line:?}");
    }
    let md = github::step_summary(&report, &options);
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| error |")).collect();
    assert_eq!(rows.len(), 1, "{md:?}");
    let row = rows[0];
    assert_eq!(row.matches('|').count(), 6, "{row:?}");
    assert_eq!(row.matches('`').count(), 2, "{row:?}");
    let tags = row
        .replace("<code>", "")
        .replace("</code>", "")
        .replace("<br>", "");
    assert!(!tags.contains(['<', '>', '[', ']']), "{row:?}");
    assert!(!md.chars().any(|c| c != '\n' && c.is_control()), "{md:?}");
});
