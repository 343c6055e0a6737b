//! SARIF 2.1.0 for code scanning: one run, every rule (lint and check codes) with its
//! descriptions and help, results with physical locations relative to the repository root.

use std::io::{self, Write};

use serde_json::{json, Value};

use crate::check::{CheckReport, CHECK_CODES};
use crate::rules::{self, Severity};

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// (id, default level, short, full, help) of every code a result may carry.
fn all_rules() -> Vec<(String, Severity, String, String, String)> {
    let mut out: Vec<_> = CHECK_CODES
        .iter()
        .map(|(code, sev, text)| (code.to_string(), *sev, text.to_string(), text.to_string(), format!("{text} Run `dflash-check diff` on the drafter for the details and `dflash-check fix` to repair it.")))
        .collect();
    out.extend(rules::all_rules().into_iter().map(|r| {
        (
            r.code.to_string(),
            r.severity,
            r.summary.to_string(),
            format!("{} Source: {}", r.summary, r.source),
            format!(
                "{}\n\nSource: {}\n\nMore: dflash-check explain {}",
                r.explanation, r.source, r.code
            ),
        )
    }));
    out
}

pub fn sarif(report: &CheckReport) -> Value {
    let rules = all_rules();
    let index = |code: &str| rules.iter().position(|r| r.0 == code);
    let rules_json: Vec<Value> = rules
        .iter()
        .map(|(id, sev, short, full, help)| {
            json!({
                "id": id,
                "name": id,
                "shortDescription": {"text": short},
                "fullDescription": {"text": full},
                "help": {"text": help},
                "defaultConfiguration": {"level": level(*sev)},
            })
        })
        .collect();
    let mut results = Vec::new();
    for d in &report.drafters {
        for f in &d.findings {
            let mut result = json!({
                "ruleId": f.code,
                "level": level(f.level),
                "message": {"text": f.message},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": d.file, "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": f.line.max(1), "startColumn": f.column.max(1)},
                    },
                    "logicalLocations": if f.path.is_empty() { json!([]) } else { json!([{"fullyQualifiedName": f.path, "kind": "member"}]) },
                }],
            });
            if let Some(i) = index(&f.code) {
                result["ruleIndex"] = json!(i);
            }
            results.push(result);
        }
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "dflash-check",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules_json,
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The repository root (where dflash-check.toml lives, or the working directory)."}}},
            "results": results,
        }],
    })
}

pub fn write(out: &mut dyn Write, report: &CheckReport) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &sarif(report))?;
    writeln!(out)
}
