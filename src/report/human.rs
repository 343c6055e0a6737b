//! The human-readable report: what was compared against, then the differences (critical
//! first) as aligned `path  local → authority` lines with decoded tokens, then a summary and
//! the exact command that repairs the file.

use std::io::{self, Write};

use crate::analysis::{DiffReport, ReportedDifference};
use crate::diff::{DiffKind, Severity};
use crate::json::Node;
use crate::tokens::{DecodedToken, TokenClass};

use super::{short_ids, short_value};

/// ANSI styling, on or off.
#[derive(Debug, Clone, Copy)]
pub struct Painter {
    pub enabled: bool,
}

impl Painter {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
    pub fn bold(&self, t: &str) -> String {
        self.paint("1", t)
    }
    pub fn dim(&self, t: &str) -> String {
        self.paint("2", t)
    }
    pub fn red(&self, t: &str) -> String {
        self.paint("1;31", t)
    }
    pub fn yellow(&self, t: &str) -> String {
        self.paint("33", t)
    }
    pub fn green(&self, t: &str) -> String {
        self.paint("32", t)
    }
    /// `error` / `warning` / `info` of a lint or check finding, coloured.
    pub fn level(&self, s: crate::rules::Severity) -> String {
        match s {
            crate::rules::Severity::Error => self.red("error"),
            crate::rules::Severity::Warning => self.yellow("warning"),
            crate::rules::Severity::Info => self.dim("info"),
        }
    }

    pub fn severity(&self, s: Severity) -> String {
        let label = format!("{:<8}", s.as_str());
        match s {
            Severity::Critical => self.red(&label),
            Severity::Minor => self.yellow(&label),
            Severity::Info => self.dim(&label),
        }
    }
}

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
    for w in &report.target.warnings {
        writeln!(out, "  {}     {w}", p.yellow("warning"))?;
    }
    Ok(())
}

/// Writes the whole diff report.
pub fn write_diff(
    out: &mut dyn Write,
    report: &DiffReport,
    strict: bool,
    p: Painter,
) -> io::Result<()> {
    write_header(out, report, p)?;
    writeln!(out)?;
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
    if !rows.is_empty() {
        writeln!(out)?;
    }
    let s = report.summary;
    if report.fails(strict) {
        writeln!(
            out,
            "{}: {} critical, {} minor difference(s){}; this drafter does not match its authority.",
            p.red("FAIL"),
            s.critical,
            s.minor,
            if s.info > 0 {
                format!(", {} info", s.info)
            } else {
                String::new()
            }
        )?;
        writeln!(out, "To repair it: {}", p.bold(&fix_command(report)))?;
    } else if s.minor > 0 || s.info > 0 {
        writeln!(
            out,
            "{}: no critical difference ({} minor, {} info).",
            p.green("OK"),
            s.minor,
            s.info
        )?;
    } else {
        writeln!(out, "{}: identical to the authority.", p.green("OK"))?;
    }
    Ok(())
}

/// `dflash-check fix <file> <authority args>` for this report.
pub fn fix_command(report: &DiffReport) -> String {
    let mut parts = vec![
        "dflash-check".to_string(),
        "fix".to_string(),
        shell_quote(&report.local.dir().display().to_string()),
    ];
    parts.extend(report.authority.cli_args.iter().map(|a| shell_quote(a)));
    parts.join(" ")
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./@:=+,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
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
