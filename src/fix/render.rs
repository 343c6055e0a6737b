//! Human and JSON output of a [`FixReport`]. The JSON fields are documented in docs/fix.md.

use std::io::{self, Write};

use serde::Serialize;

use super::{Action, FixReport};
use crate::report::human::Painter;
use crate::report::SCHEMA_VERSION;

/// The reminder every real write ends with.
pub const RESTART_REMINDER: &str = "A running vLLM or SGLang server read the old config at startup: restart it to pick up the change.";

#[derive(Serialize)]
struct JsonOutput<'a> {
    schema_version: u32,
    command: &'static str,
    #[serde(flatten)]
    report: &'a FixReport,
    exit_code: u8,
    restart_required: bool,
}

/// The exit code for a report (errors never reach here: they exit 2).
pub fn exit_code(report: &FixReport) -> u8 {
    if report.dry_run && report.changed {
        crate::exit::FINDINGS
    } else {
        crate::exit::CLEAN
    }
}

pub fn write_json(out: &mut dyn Write, report: &FixReport) -> io::Result<()> {
    serde_json::to_writer_pretty(
        &mut *out,
        &JsonOutput {
            schema_version: SCHEMA_VERSION,
            command: "fix",
            report,
            exit_code: exit_code(report),
            restart_required: report.written,
        },
    )?;
    writeln!(out)
}

pub fn write_human(out: &mut dyn Write, report: &FixReport, p: Painter) -> io::Result<()> {
    writeln!(out, "{} {}", p.bold("dflash-check fix"), report.path)?;
    writeln!(out, "  against     {}", report.authority.description)?;
    writeln!(out, "  provenance  {}", report.authority.provenance)?;
    let mode = match report.mode {
        super::Mode::Minimal => "minimal edits (keys only in this file are kept)",
        super::Mode::Prune => "minimal edits, keys only in this file removed (--prune)",
        super::Mode::Exact => "the authority's bytes, verbatim (--exact)",
    };
    writeln!(out, "  mode        {mode}")?;
    writeln!(out)?;

    if !report.changed {
        writeln!(
            out,
            "{}: the file already matches the authority; nothing written.",
            p.green("OK")
        )?;
        for k in &report.kept_local_only {
            writeln!(
                out,
                "  kept    {k}  (only in this file; --prune removes it)"
            )?;
        }
        return Ok(());
    }

    let w = report
        .edits
        .iter()
        .map(|e| e.path.chars().count())
        .chain(report.kept_local_only.iter().map(|k| k.chars().count()))
        .max()
        .unwrap_or(0)
        .min(40);
    for e in &report.edits {
        let line = match e.action {
            Action::Set => format!("{}  →  {}", e.old_display, e.new_display),
            Action::Add => format!("(absent)  →  {}", e.new_display),
            Action::Remove => format!("{}  →  (removed)", e.old_display),
        };
        writeln!(out, "  {:<6}  {:<w$}  {line}", e.action.as_str(), e.path)?;
    }
    for k in &report.kept_local_only {
        writeln!(
            out,
            "  {:<6}  {k:<w$}  only in this file; kept (--prune removes it)",
            "keep"
        )?;
    }
    writeln!(out)?;

    if report.dry_run {
        if let Some(d) = &report.unified_diff {
            out.write_all(d.as_bytes())?;
            if !d.ends_with('\n') {
                writeln!(out)?;
            }
            writeln!(out)?;
        }
        for n in &report.notes {
            writeln!(out, "  note: {n}")?;
        }
        writeln!(
            out,
            "{}: {} edit(s) would be made; nothing was written. Run without --dry-run to apply.",
            p.yellow("DRY RUN"),
            report.edits.len()
        )?;
        return Ok(());
    }

    writeln!(
        out,
        "{} {} ({} edit(s)).",
        p.green("Wrote"),
        report.path,
        report.edits.len()
    )?;
    match &report.backup {
        Some(b) => writeln!(out, "  backup      {b}")?,
        None => writeln!(out, "  backup      none (--no-backup)")?,
    }
    for n in &report.notes {
        writeln!(out, "  note: {n}")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{}: re-read from disk; it matches the authority{}.",
        p.green("Verified"),
        if report.kept_local_only.is_empty() {
            String::new()
        } else {
            format!(
                " (plus {} key(s) only in this file)",
                report.kept_local_only.len()
            )
        }
    )?;
    let fw = report
        .checked_fields
        .iter()
        .map(|f| f.path.chars().count())
        .max()
        .unwrap_or(0);
    for f in &report.checked_fields {
        writeln!(
            out,
            "  {:<fw$}  {}{}",
            f.path,
            f.display,
            if f.fixed { "   (fixed)" } else { "" }
        )?;
    }
    writeln!(out)?;
    writeln!(out, "{}", p.bold(RESTART_REMINDER))?;
    Ok(())
}
