//! `check` for people (per drafter, then a total) and as versioned JSON.

use std::io::{self, Write};

use serde::Serialize;

use crate::check::{CheckReport, DrafterCheck};
use crate::rules::Severity;

use super::human::Painter;
use super::SCHEMA_VERSION;

pub fn write_human(
    out: &mut dyn Write,
    report: &CheckReport,
    deny_warnings: bool,
    p: Painter,
) -> io::Result<()> {
    if let Some(pins) = &report.pins {
        writeln!(out, "pins: {pins}")?;
    }
    for d in &report.drafters {
        write_drafter(out, d, p)?;
    }
    if !report.skipped.is_empty() {
        writeln!(out, "not drafters (skipped): {}", report.skipped.join(", "))?;
    }
    let (e, w, i) = (
        report.count(Severity::Error),
        report.count(Severity::Warning),
        report.count(Severity::Info),
    );
    let verdict = if report.fails(deny_warnings) {
        p.red("FAIL")
    } else {
        p.green("OK")
    };
    writeln!(
        out,
        "{verdict}: {} drafter(s) checked: {e} error(s), {w} warning(s), {i} info",
        report.drafters.len()
    )
}

fn write_drafter(out: &mut dyn Write, d: &DrafterCheck, p: Painter) -> io::Result<()> {
    let against = match &d.authority {
        Some(a) => format!(
            "against {} {}{} ({})",
            a.kind,
            a.id,
            a.sha.as_ref().map(|s| format!("@{s}")).unwrap_or_default(),
            a.chosen_by
        ),
        None => "no authority: lint only".into(),
    };
    let family = d.family.as_deref().unwrap_or("?");
    writeln!(out, "{}  [{family}] {against}", p.bold(&d.file))?;
    for f in &d.findings {
        writeln!(
            out,
            "  {}[{}] {}:{}:{} {}",
            p.level(f.level),
            f.code,
            d.file,
            f.line,
            f.column,
            f.message
        )?;
    }
    if d.findings.is_empty() {
        writeln!(out, "  {}", p.green("clean"))?;
    }
    Ok(())
}

#[derive(Serialize)]
struct CheckOutput<'a> {
    schema_version: u32,
    command: &'static str,
    #[serde(flatten)]
    report: &'a CheckReport,
    summary: Summary,
}

#[derive(Serialize)]
struct Summary {
    drafters: usize,
    errors: usize,
    warnings: usize,
    infos: usize,
    fails: bool,
    exit_code: u8,
}

pub fn write_json(
    out: &mut dyn Write,
    report: &CheckReport,
    deny_warnings: bool,
) -> io::Result<()> {
    let fails = report.fails(deny_warnings);
    let output = CheckOutput {
        schema_version: SCHEMA_VERSION,
        command: "check",
        report,
        summary: Summary {
            drafters: report.drafters.len(),
            errors: report.count(Severity::Error),
            warnings: report.count(Severity::Warning),
            infos: report.count(Severity::Info),
            fails,
            exit_code: if fails {
                crate::exit::FINDINGS
            } else {
                crate::exit::CLEAN
            },
        },
    };
    serde_json::to_writer_pretty(&mut *out, &output)?;
    writeln!(out)
}
