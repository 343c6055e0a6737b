//! `fix`'s report: human and JSON output of a [`FixReport`]. The JSON fields are documented in
//! docs/fix.md.

use std::io::{self, Write};

use super::style::Painter;
use crate::diagnostic::codes::DiffCode;
use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::{self as fixing, Action, FixReport};

/// The reminder every real write ends with.
pub const RESTART_REMINDER: &str = "A running vLLM or SGLang server read the old config at startup: restart it to pick up the change.";

/// `fix` renders in every format; its diagnostics are its edits (errors for a dry run that
/// would change the file, info for edits written).
impl super::Report for FixReport {
    fn command(&self) -> &'static str {
        "fix"
    }

    fn diagnostics(&self) -> Vec<Diagnostic> {
        let severity = if self.dry_run {
            Severity::Error
        } else {
            Severity::Info
        };
        self.edits
            .iter()
            .map(|e| {
                let code = DiffCode::Changed;
                Diagnostic::new(
                    code,
                    crate::diff::info(code),
                    e.path.clone(),
                    format!(
                        "{}: {} → {}",
                        if self.dry_run {
                            "would change"
                        } else {
                            "changed"
                        },
                        e.old_display,
                        e.new_display
                    ),
                )
                .severity(severity)
                .file(self.path.clone())
            })
            .collect()
    }

    fn write_human(&self, out: &mut dyn Write, options: &super::RenderOptions) -> io::Result<()> {
        write_human(out, self, options.painter)
    }

    /// The lists (an edit, a checked field or a kept key per key of the file) and the unified
    /// diff are placeholders here: [`Report::write_json_entry`] writes them from the report
    /// (190,000 edits and checked fields cost 180 MB as `Value`s).
    ///
    /// [`Report::write_json_entry`]: super::Report::write_json_entry
    fn json_body(&self) -> serde_json::Value {
        let head = FixReport {
            path: self.path.clone(),
            authority: self.authority.clone(),
            mode: self.mode,
            dry_run: self.dry_run,
            changed: self.changed,
            written: self.written,
            edits: Vec::new(),
            kept_local_only: Vec::new(),
            remaining_errors: Vec::new(),
            backup: self.backup.clone(),
            replaced_symlink: self.replaced_symlink,
            verified: self.verified,
            checked_fields: Vec::new(),
            unified_diff: None,
            notes: self.notes.clone(),
        };
        let mut body = serde_json::to_value(head).unwrap_or_default();
        body["restart_required"] = self.written.into();
        body
    }

    fn write_json_entry(
        &self,
        key: &str,
        map: &mut super::JsonMap<'_, '_>,
    ) -> Option<serde_json::Result<()>> {
        use serde::ser::SerializeMap;
        Some(match key {
            "edits" => map.serialize_entry(key, &self.edits),
            "kept_local_only" => map.serialize_entry(key, &self.kept_local_only),
            "remaining_errors" => map.serialize_entry(key, &self.remaining_errors),
            "checked_fields" => map.serialize_entry(key, &self.checked_fields),
            "unified_diff" => map.serialize_entry(key, &self.unified_diff),
            _ => return None,
        })
    }
}

/// The keys this run kept that `diff` still counts as errors, and the flag that removes them.
fn write_remaining(out: &mut dyn Write, report: &FixReport, p: Painter) -> io::Result<()> {
    if report.remaining_errors.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "{}: {} key(s) only in this file are error-level differences from the authority ({}); \
         `diff` still fails. Remove them with --prune (or --exact).",
        p.red("FAIL"),
        report.remaining_errors.len(),
        report.remaining_errors.join(", ")
    )
}

pub fn write_human(out: &mut dyn Write, report: &FixReport, p: Painter) -> io::Result<()> {
    writeln!(out, "{} {}", p.bold("dflash-check fix"), report.path)?;
    writeln!(out, "  against     {}", report.authority.description)?;
    writeln!(out, "  provenance  {}", report.authority.provenance)?;
    let mode = match report.mode {
        fixing::Mode::Minimal => "minimal edits (keys only in this file are kept)",
        fixing::Mode::Prune => "minimal edits, keys only in this file removed (--prune)",
        fixing::Mode::Exact => "the authority's bytes, verbatim (--exact)",
    };
    writeln!(out, "  mode        {mode}")?;
    writeln!(out)?;

    if !report.changed {
        if report.remaining_errors.is_empty() {
            writeln!(
                out,
                "{}: the file already matches the authority; nothing written.",
                p.green("OK")
            )?;
        } else {
            writeln!(
                out,
                "{}: nothing written, and the file does not match the authority.",
                p.red("NOT FIXED")
            )?;
        }
        for k in &report.kept_local_only {
            writeln!(
                out,
                "  kept    {k}  (only in this file; --prune removes it)"
            )?;
        }
        write_remaining(out, report, p)?;
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
        write_remaining(out, report, p)?;
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
    if !report.remaining_errors.is_empty() {
        write_remaining(out, report, p)?;
        writeln!(out)?;
        writeln!(out, "{}", p.bold(RESTART_REMINDER))?;
        return Ok(());
    }
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
