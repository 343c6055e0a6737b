//! The machine-readable report, schema version [`SCHEMA_VERSION`](super::SCHEMA_VERSION).
//! Built from its own serialisable types so the wire format does not follow every change of
//! the internal model; `docs/json-schema.md` documents it.

use std::io::{self, Write};

use serde::Serialize;

use crate::analysis::{DiffReport, InputWarning, Summary};
use crate::tokens::DecodedToken;

use super::SCHEMA_VERSION;

#[derive(Serialize)]
pub struct DiffOutput<'a> {
    pub schema_version: u32,
    pub command: &'static str,
    pub local: LocalOutput,
    pub authority: AuthorityOutput<'a>,
    pub tokens: TokensOutput,
    /// Inputs the user did not name that could not be had (the answer went on without them).
    pub warnings: &'a [InputWarning],
    pub differences: Vec<DifferenceOutput>,
    pub summary: SummaryOutput,
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

#[derive(Serialize)]
pub struct SummaryOutput {
    #[serde(flatten)]
    pub counts: Summary,
    pub fails: bool,
    pub exit_code: u8,
    pub fix_command: Option<String>,
}

pub fn diff_output<'a>(report: &'a DiffReport, strict: bool) -> DiffOutput<'a> {
    let a = &report.authority;
    let fails = report.fails(strict);
    DiffOutput {
        schema_version: SCHEMA_VERSION,
        command: "diff",
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
        },
        warnings: &report.target.warnings,
        differences: report
            .differences
            .iter()
            .map(|d| DifferenceOutput {
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
            })
            .collect(),
        summary: SummaryOutput {
            counts: report.summary,
            fails,
            exit_code: if fails {
                crate::exit::FINDINGS
            } else {
                crate::exit::CLEAN
            },
            fix_command: fails.then(|| super::human::fix_command(report)),
        },
    }
}

pub fn write_diff(out: &mut dyn Write, report: &DiffReport, strict: bool) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &diff_output(report, strict))?;
    writeln!(out)
}
