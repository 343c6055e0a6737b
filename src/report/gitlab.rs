//! GitLab Code Quality JSON (the `codequality` report artifact), so findings show in a merge
//! request's widget and diff: an array of `{description, check_name, fingerprint, severity,
//! location: {path, lines: {begin}}}`. Any command's diagnostics, alike.
//!
//! The fingerprint is the one SARIF uses ([`Diagnostic::fingerprint`]: code, repository path,
//! JSON pointer), so GitLab matches a finding across pipelines even when lines shift. Severity:
//! error → `critical` (the engine refuses to load, crashes or acceptance collapses), warning →
//! `major`, info → `info`; GitLab's `minor` and `blocker` are not used. A finding about an
//! input that is not a file (a pasted launch command, a server URL) has an empty
//! `location.path` and line 1.

use std::io::{self, Write};

use serde_json::{json, Value};

use super::location::RepoBase;
use super::Report;
use crate::diagnostic::{Diagnostic, Severity};

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "critical",
        Severity::Warning => "major",
        Severity::Info => "info",
    }
}

/// The Code Quality report of `diagnostics`, paths relative to the repository root
/// ([`super::location`]), so a run from a subfolder points at the right files.
pub fn gitlab(diagnostics: &[Diagnostic]) -> Value {
    gitlab_in(diagnostics, &RepoBase::discover())
}

pub fn gitlab_in(diagnostics: &[Diagnostic], base: &RepoBase) -> Value {
    let issues: Vec<Value> = diagnostics
        .iter()
        .map(|d| {
            let description = if d.path.is_empty() {
                d.full_message()
            } else {
                format!("{}: {}", d.path, d.full_message())
            };
            json!({
                "description": description,
                "check_name": d.code.as_str(),
                "fingerprint": d.fingerprint(),
                "severity": severity(d.severity),
                "location": {
                    "path": base.path(d).unwrap_or_default(),
                    "lines": {"begin": d.span.map_or(1, |s| s.line.max(1))},
                },
            })
        })
        .collect();
    Value::Array(issues)
}

/// Writes any report's findings as a Code Quality report.
pub fn write(out: &mut dyn Write, report: &dyn Report) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &gitlab(&report.diagnostics()))?;
    writeln!(out)
}
