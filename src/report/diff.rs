//! `diff`'s report. Human: what was compared against, then one finding per difference (errors
//! first; the message names both values with decoded tokens, a note under it the kind of
//! difference), the notes on unusual ids, the exact command that repairs the file, the verdict. JSON: the authority, the tokens' source and every difference
//! with both values, beside the diagnostics of the envelope.

use std::borrow::Cow;

use serde::Serialize;

use crate::analysis::{AmbiguousDiff, DiffReport, InputWarning, ReportedDifference};
use crate::diff::DiffKind;
use crate::json::Node;
use crate::tokens::{DecodedToken, TokenClass};

use super::human::count;
use super::style::Painter;
use super::{RenderOptions, Status, Verdict};
use crate::diagnostic::{Diagnostic, Summary};

/// The header lines: what was compared with what.
pub fn header(report: &DiffReport, p: Painter) -> Vec<String> {
    let a = &report.authority;
    let mut lines = vec![
        format!(
            "{} {}",
            p.bold("dflash-check diff"),
            report.local.path.display()
        ),
        format!("  against     {}", a.describe()),
    ];
    if let Some(why) = &a.matched_by {
        lines.push(format!("  matched by  {why}"));
    }
    lines.push(format!("  provenance  {}", a.provenance));
    let tokens = &report.target.tokens;
    match &report.target.hint {
        Some(hint) => lines.push(format!("  tokens      {}", p.yellow(hint))),
        None => lines.push(format!("  tokens      {}", tokens.source)),
    }
    if let Some(facts) = &report.target.facts {
        if let Some(vocab) = facts.vocab_size {
            let from = facts
                .origins
                .get("vocab_size")
                .map_or(String::new(), |path| format!("{path} in "));
            lines.push(format!("  vocab       {vocab} ({from}{})", facts.source));
        }
    }
    for w in &report.target.warnings {
        lines.push(format!("  {}     {w}", p.yellow("warning")));
    }
    lines
}

/// Notes on ids that are not plain tokens, once each, as a section.
fn notes_section(report: &DiffReport) -> Vec<String> {
    token_notes(report)
        .into_iter()
        .map(|n| format!("note: {n}"))
        .collect()
}

/// A difference's own note under its finding line: the JSON types that differ, the row that
/// does not exist, the authority's other location.
fn difference_notes(d: &ReportedDifference) -> Vec<String> {
    let mut notes = Vec::new();
    // The finding names the canonical path; say where this file has it when elsewhere.
    if let Some(real) = &d.diff.local_path {
        if *real != d.diff.path {
            notes.push(format!("this file has it at {real}"));
        }
    }
    let note = kind_note(d);
    if !note.is_empty() {
        notes.push(note);
    }
    notes
}

/// The ambiguous diff's header: the drafter, why no single authority, the hint.
fn ambiguous_header(report: &AmbiguousDiff, p: Painter) -> Vec<String> {
    let a = &report.ambiguity;
    let mut lines = vec![
        format!(
            "{} {}",
            p.bold("dflash-check diff"),
            report.local.path.display()
        ),
        format!(
            "  against     no single authority: the drafter {}",
            a.describe()
        ),
    ];
    if let Some((snap, why)) = &a.hint {
        lines.push(format!(
            "  hint        the {why} suggests {} (a hint, not evidence)",
            snap.repo
        ));
    }
    if let Some(first) = report.reports.first() {
        match &first.target.hint {
            Some(hint) => lines.push(format!("  tokens      {}", p.yellow(hint))),
            None => lines.push(format!("  tokens      {}", first.target.tokens.source)),
        }
    }
    lines
}

/// Each candidate with its target and counts, then the flag that picks one.
fn candidates_section(report: &AmbiguousDiff, p: Painter) -> Vec<String> {
    let mut lines = vec!["candidates (the findings above say against which):".to_string()];
    for r in &report.reports {
        let s = r.summary;
        lines.push(format!(
            "  against {}, for target {}: {}, {}",
            r.authority.describe(),
            target_of(&r.authority.id),
            count(s.errors, "error"),
            count(s.warnings, "warning")
        ));
    }
    lines.push(format!(
        "Pick its authority: {}",
        p.bold(&report.ambiguity.pick_flags())
    ));
    lines
}

fn target_of(repo: &str) -> &'static str {
    crate::source::builtin::Snapshot::find(repo).map_or("?", |s| s.target.repo)
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
            format!("type: {} vs {}", label(l), label(a))
        }
        DiffKind::OutOfRange => "no embedding row for this id".into(),
        DiffKind::OnlyAuthority | DiffKind::OnlyLocal if d.diff.note.is_some() => {
            d.diff.note.clone().unwrap_or_default()
        }
        _ => {
            if let (Some(l), Some(a)) = (&d.diff.local_path, &d.diff.authority_path) {
                if l != a {
                    return format!("the authority has it at {a}");
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

    /// The differences (in their order: their notes are found by place), then the config's
    /// own findings.
    fn diagnostics(&self) -> Cow<'_, [Diagnostic]> {
        let mut all = DiffReport::diagnostics(self);
        all.extend(self.config_findings.iter().cloned());
        Cow::Owned(all)
    }

    fn fails(&self, deny_warnings: bool) -> bool {
        DiffReport::fails(self, deny_warnings)
    }

    fn header(&self, p: Painter) -> Vec<String> {
        header(self, p)
    }

    fn finding_notes(&self, index: usize, _finding: &Diagnostic) -> Vec<String> {
        self.differences
            .get(index)
            .map_or_else(Vec::new, difference_notes)
    }

    fn sections(&self, options: &RenderOptions) -> Vec<Vec<String>> {
        let fix = if options.fails {
            vec![format!(
                "To repair it: {}",
                options.painter.bold(&self.fix_command())
            )]
        } else {
            Vec::new()
        };
        vec![notes_section(self), fix]
    }

    fn verdict(&self, options: &RenderOptions) -> Verdict {
        let verdict = Verdict::new(Status::of(options.fails));
        if options.fails && self.differences.is_empty() {
            verdict.detail("identical to the authority, but a number in it is NaN or infinite")
        } else if options.fails {
            verdict.detail("this drafter does not match its authority")
        } else if self.differences.is_empty() {
            verdict.detail("identical to the authority")
        } else {
            verdict
        }
    }

    /// Without the differences' items: [`Report::write_json_entry`] writes them one by one.
    fn json_body(&self) -> serde_json::Value {
        serde_json::to_value(diff_output_head(self)).unwrap_or_default()
    }

    fn write_json_entry(
        &self,
        key: &str,
        map: &mut super::JsonMap<'_, '_, '_>,
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

    fn diagnostics(&self) -> Cow<'_, [Diagnostic]> {
        Cow::Owned(AmbiguousDiff::diagnostics(self))
    }

    /// Each differing field counted once over the candidates (the findings list it once per
    /// candidate, each naming its candidate).
    fn summary(&self) -> Option<Summary> {
        Some(self.field_summary().0)
    }

    /// Equal to none of several candidates: not the published config of any of them.
    fn fails(&self, _deny_warnings: bool) -> bool {
        true
    }

    fn header(&self, p: Painter) -> Vec<String> {
        ambiguous_header(self, p)
    }

    /// Its diagnostics are the `authority-ambiguous` error, then each candidate's differences
    /// in order: the `index`-th finding's notes are its difference's.
    fn finding_notes(&self, index: usize, _finding: &Diagnostic) -> Vec<String> {
        self.reports
            .iter()
            .flat_map(|r| &r.differences)
            .nth(index.wrapping_sub(1))
            .map_or_else(Vec::new, difference_notes)
    }

    fn sections(&self, options: &RenderOptions) -> Vec<Vec<String>> {
        let mut notes: Vec<String> = Vec::new();
        for n in self.reports.iter().flat_map(notes_section) {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        vec![notes, candidates_section(self, options.painter)]
    }

    fn verdict(&self, _options: &RenderOptions) -> Verdict {
        let (_, fields) = self.field_summary();
        Verdict::new(Status::Fail).detail(format!(
            "{} differ from one candidate or more, each counted once; the drafter equals none of the {} published configs of its shape; no fix is suggested against a guess",
            count(fields, "field"),
            self.ambiguity.candidates.len()
        ))
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
