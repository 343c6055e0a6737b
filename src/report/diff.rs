//! `diff`'s report. Human: what was compared against, then the differences (errors first) as
//! aligned `path  local → authority` lines with decoded tokens, then a summary and the exact
//! command that repairs the file. JSON: the authority, the tokens' source and every difference
//! with both values, beside the diagnostics of the envelope.

use std::io::{self, Write};

use serde::Serialize;

use crate::analysis::{AmbiguousDiff, DiffReport, InputWarning, ReportedDifference};
use crate::diff::DiffKind;
use crate::json::Node;
use crate::tokens::{DecodedToken, TokenClass};

use super::style::Painter;
use crate::text::{short_ids, short_value};

/// Writes the header lines: what was compared with what.
pub fn write_header(out: &mut dyn Write, report: &DiffReport, p: Painter) -> io::Result<()> {
    let a = &report.authority;
    writeln!(
        out,
        "{} {}",
        p.bold("dflash-check diff"),
        report.local.path.display()
    )?;
    writeln!(out, "  against     {}", a.describe())?;
    if let Some(why) = &a.matched_by {
        writeln!(out, "  matched by  {why}")?;
    }
    writeln!(out, "  provenance  {}", a.provenance)?;
    let tokens = &report.target.tokens;
    match &report.target.hint {
        Some(hint) => writeln!(out, "  tokens      {}", p.yellow(hint))?,
        None => writeln!(out, "  tokens      {}", tokens.source)?,
    }
    if let Some(facts) = &report.target.facts {
        if let Some(vocab) = facts.vocab_size {
            let from = facts
                .origins
                .get("vocab_size")
                .map_or(String::new(), |path| format!("{path} in "));
            writeln!(out, "  vocab       {vocab} ({from}{})", facts.source)?;
        }
    }
    for w in &report.target.warnings {
        writeln!(out, "  {}     {w}", p.yellow("warning"))?;
    }
    Ok(())
}

/// Writes the whole diff report.
pub fn write_diff(
    out: &mut dyn Write,
    report: &DiffReport,
    fails: bool,
    p: Painter,
) -> io::Result<()> {
    write_header(out, report, p)?;
    writeln!(out)?;
    if write_rows(out, report, p)? {
        writeln!(out)?;
    }
    let s = report.summary;
    if fails {
        writeln!(
            out,
            "{}: {} error(s), {} warning(s){}; this drafter does not match its authority.",
            p.red("FAIL"),
            s.errors,
            s.warnings,
            if s.infos > 0 {
                format!(", {} info", s.infos)
            } else {
                String::new()
            }
        )?;
        writeln!(out, "To repair it: {}", p.bold(&report.fix_command()))?;
    } else if s.warnings > 0 || s.infos > 0 {
        writeln!(
            out,
            "{}: no error-level difference ({} warning(s), {} info).",
            p.green("OK"),
            s.warnings,
            s.infos
        )?;
    } else {
        writeln!(out, "{}: identical to the authority.", p.green("OK"))?;
    }
    Ok(())
}

/// One aligned `severity  path  local  →  authority` line per difference, then the notes on
/// ids that are not plain tokens. Returns whether anything was written.
fn write_rows(out: &mut dyn Write, report: &DiffReport, p: Painter) -> io::Result<bool> {
    let rows: Vec<(String, String, String, &ReportedDifference)> = report
        .differences
        .iter()
        .map(|d| {
            let (path, left, right) = columns(d);
            (path, left, right, d)
        })
        .collect();
    let path_w = rows
        .iter()
        .map(|r| r.0.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    let left_w = rows
        .iter()
        .map(|r| r.1.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    for (path, left, right, d) in &rows {
        if d.diff.kind == DiffKind::Layout {
            writeln!(
                out,
                "{}  {:<path_w$}  {}",
                p.severity(d.diff.severity),
                path,
                p.dim(right)
            )?;
            continue;
        }
        writeln!(
            out,
            "{}  {:<path_w$}  {:<left_w$}  →  {}{}",
            p.severity(d.diff.severity),
            path,
            left,
            right,
            kind_note(d)
        )?;
    }
    let notes = token_notes(report);
    if !notes.is_empty() {
        writeln!(out)?;
        for n in notes {
            writeln!(out, "  note: {n}")?;
        }
    }
    Ok(!rows.is_empty())
}

/// The drafter against every candidate: a header, one section per candidate, and a verdict
/// that names the flag picking one instead of a `fix` line.
pub fn write_ambiguous(out: &mut dyn Write, report: &AmbiguousDiff, p: Painter) -> io::Result<()> {
    let a = &report.ambiguity;
    writeln!(
        out,
        "{} {}",
        p.bold("dflash-check diff"),
        report.local.path.display()
    )?;
    writeln!(
        out,
        "  against     no single authority: the drafter {}",
        a.describe()
    )?;
    if let Some((snap, why)) = &a.hint {
        writeln!(
            out,
            "  hint        the {why} suggests {} (a hint, not evidence)",
            snap.repo
        )?;
    }
    if let Some(first) = report.reports.first() {
        match &first.target.hint {
            Some(hint) => writeln!(out, "  tokens      {}", p.yellow(hint))?,
            None => writeln!(out, "  tokens      {}", first.target.tokens.source)?,
        }
    }
    for r in &report.reports {
        let s = r.summary;
        writeln!(out)?;
        writeln!(
            out,
            "{} {}, for target {}: {} error(s), {} warning(s)",
            p.bold("against"),
            r.authority.describe(),
            target_of(&r.authority.id),
            s.errors,
            s.warnings
        )?;
        write_rows(out, r, p)?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{}: the drafter equals none of the {} published configs of its shape; no fix is suggested against a guess.",
        p.red("FAIL"),
        a.candidates.len()
    )?;
    writeln!(out, "Pick its authority: {}", p.bold(&a.pick_flags()))
}

fn target_of(repo: &str) -> &'static str {
    crate::source::builtin::Snapshot::find(repo).map_or("?", |s| s.target.repo)
}

fn columns(d: &ReportedDifference) -> (String, String, String) {
    if d.diff.kind == DiffKind::Layout {
        return (
            "layout".into(),
            String::new(),
            d.diff.note.clone().unwrap_or_default(),
        );
    }
    let mut path = d.diff.path.to_string();
    // Name the real location when it differs from the canonical one.
    let real = d
        .diff
        .local_path
        .as_ref()
        .or(d.diff.authority_path.as_ref());
    if let Some(real) = real {
        if *real != d.diff.path {
            path = real.to_string();
        }
    }
    let (left, right) = if crate::diff::is_token_field(&d.diff.path) {
        (
            short_ids(d.diff.local.as_ref(), &d.local_tokens),
            short_ids(d.diff.authority.as_ref(), &d.authority_tokens),
        )
    } else {
        (
            short_value(d.diff.local.as_ref(), &d.local_tokens),
            short_value(d.diff.authority.as_ref(), &d.authority_tokens),
        )
    };
    (path, left, right)
}

/// `integer` or `float` for a number, `list of floats` / `list of integers` for a list of
/// numbers (any float makes it a list of floats), as Python's json reads them.
fn number_label(n: &Node) -> &'static str {
    let float = |n: &Node| n.as_number().is_some_and(|x| !x.is_integer_literal());
    match n.as_array() {
        Some(items) if items.iter().any(float) => "list of floats",
        Some(_) => "list of integers",
        None if float(n) => "float",
        None => "integer",
    }
}

fn kind_note(d: &ReportedDifference) -> String {
    match d.diff.kind {
        DiffKind::Type => {
            let (l, a) = (d.diff.local.as_ref(), d.diff.authority.as_ref());
            let numeric = |n: Option<&Node>| {
                n.is_some_and(|n| {
                    n.as_number().is_some()
                        || n.as_array().is_some_and(|xs| {
                            !xs.is_empty() && xs.iter().all(|x| x.as_number().is_some())
                        })
                })
            };
            let both_numbers = numeric(l) && numeric(a);
            let label = |n: Option<&Node>| match n {
                None => "absent",
                Some(n) if both_numbers => number_label(n),
                Some(n) => n.type_name(),
            };
            format!("   (type: {} vs {})", label(l), label(a))
        }
        DiffKind::OutOfRange => "   (no embedding row for this id)".into(),
        _ => {
            if let (Some(l), Some(a)) = (&d.diff.local_path, &d.diff.authority_path) {
                if l != a {
                    return format!("   (authority has it at {a})");
                }
            }
            String::new()
        }
    }
}

/// Longer explanations for ids that are not plain tokens, once each.
fn token_notes(report: &DiffReport) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for d in &report.differences {
        for t in d.local_tokens.iter().chain(&d.authority_tokens) {
            if needs_note(t) {
                let n = t.to_string();
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
    }
    notes
}

fn needs_note(t: &DecodedToken) -> bool {
    matches!(
        t.class,
        TokenClass::UnusedRow { .. }
            | TokenClass::OutOfRange { .. }
            | TokenClass::BeyondTokenizer { .. }
    )
}

#[derive(Serialize)]
pub struct DiffOutput<'a> {
    pub local: LocalOutput,
    pub authority: AuthorityOutput<'a>,
    pub tokens: TokensOutput,
    /// Inputs the user did not name that could not be had (the answer went on without them).
    pub warnings: &'a [InputWarning],
    pub differences: Vec<DifferenceOutput>,
    /// The command that repairs the file, when anything fails.
    pub fix_command: Option<String>,
}

#[derive(Serialize)]
pub struct LocalOutput {
    pub path: String,
}

#[derive(Serialize)]
pub struct AuthorityOutput<'a> {
    pub kind: &'static str,
    pub id: &'a str,
    pub revision: Option<&'a str>,
    pub sha: Option<&'a str>,
    pub provenance: &'a str,
    pub matched_by: Option<&'a str>,
}

#[derive(Serialize)]
pub struct TokensOutput {
    pub source: Option<String>,
    /// `tokenizer`, `builtin` or `none`.
    pub decoded_with: &'static str,
    pub tokenizer_len: Option<u64>,
    pub vocab_size: Option<u64>,
    /// The JSON path of the target's config that vocab_size was read from
    /// (`text_config.vocab_size`); absent for built-in facts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vocab_size_from: Option<String>,
}

#[derive(Serialize)]
pub struct DifferenceOutput {
    pub path: String,
    pub kind: &'static str,
    pub severity: &'static str,
    pub local_path: Option<String>,
    pub authority_path: Option<String>,
    /// The value; absent side is `null` with `*_present: false`.
    pub local: serde_json::Value,
    pub local_present: bool,
    pub authority: serde_json::Value,
    pub authority_present: bool,
    pub local_token: Vec<DecodedToken>,
    pub authority_token: Vec<DecodedToken>,
    pub note: Option<String>,
}

pub fn diff_output(report: &DiffReport) -> DiffOutput<'_> {
    DiffOutput {
        differences: report.differences.iter().map(difference_output).collect(),
        ..diff_output_head(report)
    }
}

/// Everything of [`diff_output`] but the differences (left empty).
fn diff_output_head(report: &DiffReport) -> DiffOutput<'_> {
    let a = &report.authority;
    let fails = report.fails(false);
    DiffOutput {
        local: LocalOutput {
            path: report.local.path.display().to_string(),
        },
        authority: AuthorityOutput {
            kind: a.kind.as_str(),
            id: &a.id,
            revision: a.revision.as_deref(),
            sha: a.sha.as_deref(),
            provenance: &a.provenance,
            matched_by: a.matched_by.as_deref(),
        },
        tokens: TokensOutput {
            source: report
                .target
                .hint
                .is_none()
                .then(|| report.target.tokens.source.clone()),
            decoded_with: report.target.decoded_with.as_str(),
            tokenizer_len: report.target.tokens.tokenizer_len,
            vocab_size: report.target.tokens.vocab_size,
            vocab_size_from: report
                .target
                .facts
                .as_ref()
                .and_then(|f| f.origins.get("vocab_size").cloned()),
        },
        warnings: &report.target.warnings,
        differences: Vec::new(),
        fix_command: fails.then(|| report.fix_command()),
    }
}

/// One difference as JSON.
fn difference_output(d: &ReportedDifference) -> DifferenceOutput {
    DifferenceOutput {
        path: d.diff.path.to_string(),
        kind: d.diff.kind.as_str(),
        severity: d.diff.severity.as_str(),
        local_path: d.diff.local_path.as_ref().map(ToString::to_string),
        authority_path: d.diff.authority_path.as_ref().map(ToString::to_string),
        local: d
            .diff
            .local
            .as_ref()
            .map_or(serde_json::Value::Null, |n| n.to_serde()),
        local_present: d.diff.local.is_some(),
        authority: d
            .diff
            .authority
            .as_ref()
            .map_or(serde_json::Value::Null, |n| n.to_serde()),
        authority_present: d.diff.authority.is_some(),
        local_token: d.local_tokens.clone(),
        authority_token: d.authority_tokens.clone(),
        note: d.diff.note.clone(),
    }
}

/// `diff` renders in every format.
impl super::Report for DiffReport {
    fn command(&self) -> &'static str {
        "diff"
    }

    fn diagnostics(&self) -> Vec<crate::diagnostic::Diagnostic> {
        DiffReport::diagnostics(self)
    }

    fn write_human(&self, out: &mut dyn Write, options: &super::RenderOptions) -> io::Result<()> {
        write_diff(out, self, options.fails, options.painter)
    }

    /// Without the differences' items: [`Report::write_json_entry`] writes them one by one.
    fn json_body(&self) -> serde_json::Value {
        serde_json::to_value(diff_output_head(self)).unwrap_or_default()
    }

    fn write_json_entry(
        &self,
        key: &str,
        map: &mut super::JsonMap<'_, '_>,
    ) -> Option<serde_json::Result<()>> {
        use serde::ser::SerializeMap;
        /// The differences, each turned into its output form as it is written.
        struct Differences<'a>(&'a [ReportedDifference]);
        impl Serialize for Differences<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.iter().map(difference_output))
            }
        }
        (key == "differences").then(|| map.serialize_entry(key, &Differences(&self.differences)))
    }
}

/// The ambiguous diff renders in every format: its diagnostics are each candidate's, prefixed
/// with the candidate, plus one `authority-ambiguous` error at the top of the file.
impl super::Report for AmbiguousDiff {
    fn command(&self) -> &'static str {
        "diff"
    }

    fn diagnostics(&self) -> Vec<crate::diagnostic::Diagnostic> {
        AmbiguousDiff::diagnostics(self)
    }

    fn write_human(&self, out: &mut dyn Write, options: &super::RenderOptions) -> io::Result<()> {
        write_ambiguous(out, self, options.painter)
    }

    fn json_body(&self) -> serde_json::Value {
        let candidates: Vec<serde_json::Value> = self
            .reports
            .iter()
            .map(|r| serde_json::to_value(diff_output(r)).unwrap_or_default())
            .collect();
        serde_json::json!({
            "local": {"path": self.local.path.display().to_string()},
            "authority": null,
            "ambiguous": {
                "why": self.ambiguity.describe(),
                "hint": self.ambiguity.hint.as_ref().map(|(s, why)| format!("the {why} suggests {}", s.repo)),
                "pick_with": self.ambiguity.pick_flags(),
                "candidates": candidates,
            },
            "fix_command": null,
        })
    }
}
