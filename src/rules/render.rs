//! Renderers for lint reports and rule explanations. They write to any `io::Write`.

use std::io::{self, Write};

use serde_json::json;

use super::{all_rules, LintReport, Rule};
use crate::report::human::Painter;

/// One line per finding, `error[code] path: message (expected …)`, its file:line, then a summary.
pub fn write_human(
    out: &mut dyn Write,
    report: &LintReport,
    deny_warnings: bool,
    p: Painter,
) -> io::Result<()> {
    let evidence = report.family.evidence.join(", ");
    writeln!(
        out,
        "{} {}  ({} drafter: {evidence})",
        p.bold("lint"),
        report.path,
        report.family.name.as_str()
    )?;
    writeln!(
        out,
        "target: {}; tokens: {}",
        report.target.source, report.target.tokens
    )?;
    writeln!(out)?;
    for f in &report.findings {
        let expected = f
            .expected
            .as_ref()
            .map_or(String::new(), |e| format!(" (expected {e})"));
        let expected = expected.replace(',', ", ");
        writeln!(
            out,
            "{}[{}] {}: {}{expected}",
            p.level(f.severity),
            f.code,
            f.path,
            f.message
        )?;
        writeln!(
            out,
            "  {} {}:{}:{}",
            p.dim("-->"),
            report.path,
            f.line,
            f.column
        )?;
    }
    if !report.findings.is_empty() {
        writeln!(out)?;
    }
    if !report.skipped.is_empty() {
        writeln!(
            out,
            "skipped (no target facts; pass --target DIR): {}",
            report.skipped.join(", ")
        )?;
    }
    let s = report.summary;
    let verdict = if report.fails(deny_warnings) {
        p.red("FAIL")
    } else {
        p.green("ok")
    };
    writeln!(
        out,
        "{verdict}: {} error{}, {} warning{}, {} info{}",
        s.errors,
        plural(s.errors),
        s.warnings,
        plural(s.warnings),
        s.infos,
        if deny_warnings && s.warnings > 0 {
            " (warnings denied)"
        } else {
            ""
        }
    )?;
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The report as JSON (`schema_version`, `command: "lint"`, ...).
pub fn write_json(out: &mut dyn Write, report: &LintReport, deny_warnings: bool) -> io::Result<()> {
    let value = json!({
        "schema_version": crate::report::SCHEMA_VERSION,
        "command": "lint",
        "path": report.path,
        "family": report.family,
        "target": report.target,
        "findings": report.findings,
        "skipped": report.skipped,
        "summary": report.summary,
        "deny_warnings": deny_warnings,
        "fails": report.fails(deny_warnings),
    });
    serde_json::to_writer_pretty(&mut *out, &value)?;
    writeln!(out)
}

/// The list of rule codes with their severities and summaries.
pub fn write_rule_list(out: &mut dyn Write) -> io::Result<()> {
    let rules = all_rules();
    let width = rules.iter().map(|r| r.code.len()).max().unwrap_or(0);
    for r in rules {
        writeln!(
            out,
            "{:<width$}  {:<7}  {}",
            r.code,
            r.severity.as_str(),
            r.summary
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Run `dflash-check explain CODE` for the details of one rule."
    )
}

/// The full explanation of one rule.
pub fn write_explanation(out: &mut dyn Write, r: &Rule) -> io::Result<()> {
    writeln!(out, "{} ({})", r.code, r.severity.as_str())?;
    writeln!(out, "{}", r.summary)?;
    writeln!(out)?;
    writeln!(out, "{}", r.explanation)?;
    writeln!(out)?;
    let needs = match r.needs {
        super::Needs::Config => "the drafter config alone",
        super::Needs::Target => {
            "the target model's facts (--target DIR, or a built-in known target)"
        }
        super::Needs::Engine => {
            "engine launch parameters (--engine, --speculative-config, --num-draft-tokens)"
        }
    };
    writeln!(out, "Needs: {needs}")?;
    writeln!(out, "Source: {}", r.source)
}
