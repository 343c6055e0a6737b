//! SARIF 2.1.0 for code scanning: one run, every code of every family with its descriptions
//! and help (from the registry), results with physical locations relative to the repository
//! root ([`super::location`]: found from a subfolder too; each URI percent-encoded). Any
//! command's diagnostics, alike.
//!
//! What keeps GitHub's alerts stable: each result's `partialFingerprints` is
//! [`Diagnostic::fingerprint`] (code, repository path, JSON pointer — never the line, so an
//! alert survives edits above it and a dismissed one stays dismissed), and the run's
//! `automationDetails.id` names the command (`dflash-check/lint/`), so uploads of `lint` and
//! `check` are separate categories and one does not close the other's alerts.

use std::io::{self, Write};

use serde_json::{json, Value};

use super::location::{is_absolute, uri_path, RepoBase};
use crate::diagnostic::{Code, CodeInfo, Diagnostic, Severity};
use crate::registry;

/// The key of the fingerprint in `partialFingerprints`; `v1` changes if its inputs ever do.
pub const FINGERPRINT: &str = "dflashCheck/v1";

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The rule's help as GitHub renders it beside an alert: the explanation, the cited source, the
/// evidence (evidence/evidence.toml) and the command that says more.
fn help_markdown(code: Code, info: &CodeInfo) -> String {
    format!(
        "**{}** ({})\n\n{}\n\n**Source:** {}\n\n{}More: `dflash-check explain {}`",
        info.summary,
        info.severity,
        info.explanation,
        crate::evidence::source_text(code.as_str()),
        evidence_help(code.as_str()),
        code.as_str()
    )
}

/// The rule's evidence (evidence/evidence.toml) for its help text, followed by a blank line.
fn evidence_help(code: &str) -> String {
    let text = crate::evidence::describe(code);
    if text.is_empty() {
        text
    } else {
        text + "\n"
    }
}

/// The SARIF log of `command`'s (`lint`, `check`, …) diagnostics, paths relative to the
/// repository the command runs in.
pub fn sarif(command: &str, diagnostics: &[Diagnostic]) -> Value {
    sarif_in(command, diagnostics, &RepoBase::discover())
}

/// The SARIF log, paths relative to `base`'s root.
pub fn sarif_in(command: &str, diagnostics: &[Diagnostic], base: &RepoBase) -> Value {
    let codes = Code::all();
    let rules_json: Vec<Value> = codes
        .iter()
        .map(|&code| {
            let info = registry::info(code);
            json!({
                "id": code.as_str(),
                "name": code.as_str(),
                "shortDescription": {"text": info.summary},
                "fullDescription": {"text": format!("{} Source: {}", info.summary, crate::evidence::source_text(code.as_str()))},
                "help": {
                    "text": format!(
                        "{}\n\nSource: {}\n\n{}More: dflash-check explain {}",
                        info.explanation,
                        crate::evidence::source_text(code.as_str()),
                        evidence_help(code.as_str()),
                        code.as_str()
                    ),
                    "markdown": help_markdown(code, info),
                },
                "defaultConfiguration": {"level": level(info.severity)},
                "properties": {"family": code.family()},
            })
        })
        .collect();
    let results: Vec<Value> = diagnostics
        .iter()
        .map(|f| {
            let mut location = json!({
                "logicalLocations": if f.path.is_empty() {
                    json!([])
                } else {
                    json!([{"fullyQualifiedName": f.path, "kind": "member"}])
                },
            });
            if let Some(path) = base.path(f) {
                let (line, column) = f.span.map_or((1, 1), |s| (s.line, s.column));
                // A file outside the repository is named by its absolute `file:` URI.
                let artifact = if is_absolute(&path) {
                    json!({"uri": format!("file://{}", uri_path(&path))})
                } else {
                    json!({"uri": uri_path(&path), "uriBaseId": "%SRCROOT%"})
                };
                location["physicalLocation"] = json!({
                    "artifactLocation": artifact,
                    "region": {"startLine": line.max(1), "startColumn": column.max(1)},
                });
            }
            let mut result = json!({
                "ruleId": f.code.as_str(),
                "level": level(f.severity),
                "message": {"text": f.full_message()},
                "locations": [location],
                "partialFingerprints": {FINGERPRINT: f.fingerprint()},
            });
            if let Some(i) = codes.iter().position(|c| *c == f.code) {
                result["ruleIndex"] = json!(i);
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "dflash-check",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules_json,
            }},
            "automationDetails": {"id": format!("dflash-check/{command}/")},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The repository root: GITHUB_WORKSPACE or CI_PROJECT_DIR when set, else the nearest folder holding .git, else the working directory."}}},
            "results": results,
        }],
    })
}

/// Writes the SARIF log; `engine` is `Some` for commands whose verdict depends on the engine,
/// recorded in the run's property bag (`properties.engine`, `properties.version`).
/// Writes any report as a SARIF log: its findings, and for an engine-dependent command the
/// engine its verdict assumed (the run's properties).
pub fn write(out: &mut dyn Write, report: &dyn super::Report) -> io::Result<()> {
    let mut log = sarif(report.command(), &report.diagnostics());
    if report.engine_dependent() {
        let engine = report.engine();
        let assumed = super::assumed_json(engine);
        log["runs"][0]["properties"] = json!({
            "engine": assumed["engine"],
            "version": assumed["version"],
        });
    }
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)
}
