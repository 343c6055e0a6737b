//! `fix`'s report: human and JSON output of a [`FixReport`]. Its findings are its edits (one
//! line each); the keys kept, the unified diff of a dry run, the write and its verification are sections. The
//! JSON fields are documented in docs/fix.md.

use std::borrow::Cow;

use super::style::Painter;
use super::{Status, Verdict};
use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::{self as fixing, FixReport};

/// The reminder every real write ends with.
pub const RESTART_REMINDER: &str = "A running vLLM or SGLang server read the old config at startup: restart it to pick up the change.";

/// `fix` renders in every format; its diagnostics are its edits (errors for a dry run that
/// would change the file, info for edits written).
impl super::Report for FixReport {
    fn command(&self) -> &'static str {
        "fix"
    }

    /// A dry run's edits carry the code and severity `diff` gives the same differences (one
    /// code and one severity per finding in every command; the dry run still exits 1 when it
    /// would write, whatever the severities: `FixReport::fails`); written edits are info.
    fn diagnostics(&self) -> Cow<'_, [Diagnostic]> {
        self.edits
            .iter()
            .map(|e| {
                let code = e.code;
                let severity = if self.dry_run {
                    e.severity
                } else {
                    Severity::Info
                };
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

    fn fails(&self, _deny_warnings: bool) -> bool {
        FixReport::fails(self)
    }

    fn header(&self, p: Painter) -> Vec<String> {
        header(self, p)
    }

    /// A dry run's edits, without the file each is in: the header names it, and an edit has no
    /// line. Edits written are not findings to act on: the page lists them as edits
    /// ([`edits_written`]), never as `info[changed]` (issue 45).
    fn human_findings(&self) -> Cow<'_, [Diagnostic]> {
        if !self.dry_run {
            return Cow::Owned(Vec::new());
        }
        let mut edits = self.diagnostics().into_owned();
        for e in &mut edits {
            e.file = None;
        }
        Cow::Owned(edits)
    }

    fn sections(&self, options: &super::RenderOptions) -> Vec<Vec<String>> {
        sections(self, options.painter)
    }

    fn verdict(&self, options: &super::RenderOptions) -> Verdict {
        verdict(self, options)
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
        map: &mut super::JsonMap<'_, '_, '_>,
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
fn remaining(report: &FixReport) -> Vec<String> {
    if report.remaining_errors.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "error-level differences from the authority only in this file (kept): {}; `diff` still \
         fails. Remove them with --prune (or --exact).",
        report.remaining_errors.join(", ")
    )]
}

fn header(report: &FixReport, p: Painter) -> Vec<String> {
    let mode = match report.mode {
        fixing::Mode::Minimal => "minimal edits (keys only in this file are kept)",
        fixing::Mode::Prune => "minimal edits, keys only in this file removed (--prune)",
        fixing::Mode::Exact => "the authority's bytes, verbatim (--exact)",
    };
    vec![
        format!("{} {}", p.bold("dflash-check fix"), report.path),
        format!("  against     {}", report.authority.description),
        format!("  provenance  {}", report.authority.provenance),
        format!("  mode        {mode}"),
    ]
}

/// The keys kept, the unified diff (dry run), the write and its backup,
/// the notes, the keys that still fail, the verification, the restart reminder.
/// `Edited:` and one line per edit written: what it did to which field, old → new.
fn edits_written(report: &FixReport) -> Vec<String> {
    let width = report
        .edits
        .iter()
        .map(|e| edit_verb(e.action).len())
        .max()
        .unwrap_or(0);
    let mut lines = vec!["Edited:".to_string()];
    lines.extend(report.edits.iter().map(|e| {
        format!(
            "  {:width$}  {}: {} → {}",
            edit_verb(e.action),
            e.path,
            e.old_display,
            e.new_display
        )
    }));
    lines.push(String::new());
    lines
}

fn edit_verb(action: fixing::Action) -> &'static str {
    match action {
        fixing::Action::Set => "set",
        fixing::Action::Add => "added",
        fixing::Action::Remove => "removed",
    }
}

fn sections(report: &FixReport, p: Painter) -> Vec<Vec<String>> {
    let kept: Vec<String> = report
        .kept_local_only
        .iter()
        .map(|k| format!("kept {k}: only in this file (--prune removes it)"))
        .collect();
    let notes: Vec<String> = report.notes.iter().map(|n| format!("note: {n}")).collect();
    if !report.changed {
        return vec![kept, remaining(report)];
    }
    if report.dry_run {
        let diff = report
            .unified_diff
            .as_ref()
            .map_or_else(Vec::new, |d| d.lines().map(str::to_string).collect());
        return vec![kept, diff, notes, remaining(report)];
    }
    let mut wrote = edits_written(report);
    wrote.push(format!(
        "{} {} ({}).",
        p.green("Wrote"),
        report.path,
        super::human::count(report.edits.len(), "edit")
    ));
    wrote.push(match &report.backup {
        Some(b) => format!("  backup      {b}"),
        None => "  backup      none (--no-backup)".to_string(),
    });
    wrote.extend(notes);
    let mut verified = Vec::new();
    if report.remaining_errors.is_empty() {
        verified.push(format!(
            "{}: re-read from disk; it matches the authority{}.",
            p.green("Verified"),
            if report.kept_local_only.is_empty() {
                String::new()
            } else {
                format!(
                    " (plus {} only in this file)",
                    super::human::count(report.kept_local_only.len(), "key")
                )
            }
        ));
        let fw = report
            .checked_fields
            .iter()
            .map(|f| f.path.chars().count())
            .max()
            .unwrap_or(0);
        verified.extend(report.checked_fields.iter().map(|f| {
            format!(
                "  {:<fw$}  {}{}",
                f.path,
                f.display,
                if f.fixed { "   (fixed)" } else { "" }
            )
        }));
    }
    vec![
        kept,
        wrote,
        remaining(report),
        verified,
        vec![p.bold(RESTART_REMINDER).into_owned()],
    ]
}

/// `OK` when the file matches (already, or once written and re-read), `FAIL` when it does not
/// or a dry run would change it; the detail says which.
fn verdict(report: &FixReport, options: &super::RenderOptions) -> Verdict {
    let status = Status::of(options.fails);
    let detail = if !report.changed {
        if report.remaining_errors.is_empty() {
            "the file already matches the authority; nothing written".to_string()
        } else {
            "not fixed: nothing written, and the file does not match the authority".to_string()
        }
    } else if report.dry_run {
        format!(
            "dry run: {} would be made, nothing written; run without --dry-run to apply",
            super::human::count(report.edits.len(), "edit")
        )
    } else if report.remaining_errors.is_empty() {
        format!(
            "{} written and verified",
            super::human::count(report.edits.len(), "edit")
        )
    } else {
        format!(
            "{} written; the file still does not match the authority",
            super::human::count(report.edits.len(), "edit")
        )
    };
    Verdict::new(status).detail(detail)
}
