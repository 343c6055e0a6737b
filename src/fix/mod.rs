//! `fix`: make a drafter config agree with its authority, safely.
//!
//! [`edit`] plans the minimal text edits (or `--exact` takes the authority's bytes), [`write`]
//! backs the file up and replaces it atomically, and [`run`] ties them together: plan, show
//! (dry run) or write, re-read from disk, compare again, and restore the original if the
//! re-read file does not match. The write, the re-read and any restore happen under an
//! advisory lock beside the file ([`write::lock`]), so concurrent runs apply one after the
//! other or fail. The result is a serialisable [`FixReport`]; [`render`] prints it.

pub mod edit;
pub mod write;

use serde::Serialize;

use crate::analysis::TargetContext;
use crate::config::{self, ConfigFile, MAX_CONFIG_BYTES};
use crate::diff::{self, DiffKind};
use crate::json::{Document, Node, Path};
use crate::source::Authority;
use crate::tokens::DecodedToken;
use crate::{Error, Result};

pub use edit::{Action, Edit};

/// The fields the incident got wrong: always read back and shown after a fix.
pub const KEY_FIELDS: &[&str] = &[
    "dflash_config.target_layer_ids",
    "dflash_config.mask_token_id",
    "layer_types",
    "sliding_window",
    "use_sliding_window",
    "bos_token_id",
];

/// How the new content is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Edit only the values that differ; keep keys only the file has.
    Minimal,
    /// Minimal edits, and remove keys only the file has.
    Prune,
    /// Write the authority's bytes verbatim.
    Exact,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Minimal => "minimal",
            Mode::Prune => "prune",
            Mode::Exact => "exact",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct FixOptions {
    pub mode: Mode,
    pub dry_run: bool,
    pub backup: bool,
}

/// The authority, as the report names it.
#[derive(Debug, Clone, Serialize)]
pub struct AuthorityRef {
    pub kind: &'static str,
    pub id: String,
    pub revision: Option<String>,
    pub sha: Option<String>,
    #[serde(skip)]
    pub description: String,
    #[serde(skip)]
    pub provenance: String,
}

/// One edit, as reported.
#[derive(Debug, Clone, Serialize)]
pub struct EditOutput {
    pub path: String,
    pub action: Action,
    pub old: Option<serde_json::Value>,
    pub new: Option<serde_json::Value>,
    #[serde(skip)]
    pub old_display: String,
    #[serde(skip)]
    pub new_display: String,
    /// The code `diff` gives the same difference (`changed`, `type`, `only-authority`,
    /// `only-local`), so an edit is reported under one code in every command.
    #[serde(skip)]
    pub code: crate::diagnostic::codes::DiffCode,
    /// The severity `diff` gives it: the field's (`diff::severity_of`).
    #[serde(skip)]
    pub severity: crate::diagnostic::Severity,
}

/// A field read back from the file after the fix.
#[derive(Debug, Clone, Serialize)]
pub struct CheckedField {
    pub path: String,
    pub present: bool,
    pub value: serde_json::Value,
    pub tokens: Vec<DecodedToken>,
    /// Whether this fix changed it.
    pub fixed: bool,
    #[serde(skip)]
    pub display: String,
}

/// Everything `fix` did or would do.
#[derive(Debug, Clone, Serialize)]
pub struct FixReport {
    pub path: String,
    pub authority: AuthorityRef,
    pub mode: Mode,
    pub dry_run: bool,
    /// Whether the content differs (dry run: would differ) from the authority-fixed version.
    pub changed: bool,
    /// Whether the file on disk was replaced.
    pub written: bool,
    pub edits: Vec<EditOutput>,
    pub kept_local_only: Vec<String>,
    /// Keys kept only in this file that `diff` counts as errors (unknown keys, critical
    /// fields): the file still fails `diff`, so `fix` does not call it fixed.
    pub remaining_errors: Vec<String>,
    pub backup: Option<String>,
    pub replaced_symlink: bool,
    /// The file was re-read from disk and matches the authority (false for a dry run).
    pub verified: bool,
    pub checked_fields: Vec<CheckedField>,
    /// The unified diff of the change (dry run only).
    pub unified_diff: Option<String>,
    pub notes: Vec<String>,
}

impl FixReport {
    /// Whether the gate fails: a dry run that found something to change, or an error-level
    /// difference that this mode leaves in place (keys only in this file, without --prune).
    pub fn fails(&self) -> bool {
        (self.dry_run && self.changed) || !self.remaining_errors.is_empty()
    }
}

/// The fixed text, as `opts.mode` makes it: its bytes, the edits, the keys kept only in this
/// file, and the new text's tree when the planner parsed and checked it already.
type Planned = (Vec<u8>, Vec<edit::Edit>, Vec<Path>, Option<Node>);

/// Fixes `local` against `authority`. Errors leave the file as it was (restored if needed).
pub fn run(
    local: &ConfigFile,
    authority: &Authority,
    target: &TargetContext,
    opts: &FixOptions,
) -> Result<FixReport> {
    let original = local.doc.text.as_bytes();
    let state = write::inspect(&local.path)?;
    let (new_bytes, edits, kept, planned) = plan_text(local, authority, opts)?;
    let changed = new_bytes.as_slice() != original;
    let mut report = FixReport {
        path: local.path.display().to_string(),
        authority: AuthorityRef {
            kind: authority.kind.as_str(),
            id: authority.id.clone(),
            revision: authority.revision.clone(),
            sha: authority.sha.clone(),
            description: authority.describe(),
            provenance: authority.provenance.clone(),
        },
        mode: opts.mode,
        dry_run: opts.dry_run,
        changed,
        written: false,
        edits: edits.iter().map(|e| edit_output(e, target)).collect(),
        kept_local_only: kept.iter().map(ToString::to_string).collect(),
        remaining_errors: kept
            .iter()
            .filter(|p| crate::diff::severity_of(p) == crate::diagnostic::Severity::Error)
            .map(ToString::to_string)
            .collect(),
        backup: None,
        replaced_symlink: false,
        verified: false,
        checked_fields: Vec::new(),
        unified_diff: None,
        notes: Vec::new(),
    };
    let edited: Vec<Path> = edits.iter().map(|e| e.path.clone()).collect();
    if opts.dry_run {
        dry_run(&mut report, &state, original, &new_bytes);
        let parsed;
        let root = match &planned {
            Some(root) => root,
            None => {
                parsed = Document::parse_bytes(&new_bytes).map_err(|e| {
                    Error::new(format!("internal error: the fixed text is not JSON ({e})"))
                })?;
                &parsed.root
            }
        };
        report.checked_fields = checked_fields(root, target, &edited);
        return Ok(report);
    }
    if !changed {
        report.verified = true;
        report.checked_fields = checked_fields(local.root(), target, &[]);
        return Ok(report);
    }
    write::check_writable(&state)?;
    // Held until the report is built: another run waits, then finds the file changed since it
    // read it and fails instead of writing over this run's fix (or restoring over it).
    let _lock = write::lock(&local.path)?;
    let written = write_noted(&mut report, &state, &new_bytes, original, opts)?;
    match verify(&state, &new_bytes, authority, planned) {
        Ok(root) => {
            report.verified = true;
            report.checked_fields = checked_fields(&root, target, &edited);
            Ok(report)
        }
        Err(why) => Err(restore_after(
            &report.path,
            &why,
            &state,
            original,
            &new_bytes,
            &written,
        )),
    }
}

/// The fixed text for `opts.mode`: the authority's bytes (`--exact`), or the planner's
/// minimal edit of the file (with `--prune`, keys only in this file removed too).
fn plan_text(local: &ConfigFile, authority: &Authority, opts: &FixOptions) -> Result<Planned> {
    Ok(match opts.mode {
        Mode::Exact => (
            authority.bytes.to_vec(),
            exact_edits(local, authority),
            vec![],
            None,
        ),
        Mode::Minimal | Mode::Prune => {
            let plan = edit::plan(
                &local.doc,
                authority.config.root(),
                opts.mode == Mode::Prune,
            )?;
            (
                plan.text.into_bytes(),
                plan.edits,
                plan.kept_local_only,
                Some(plan.root),
            )
        }
    })
}

/// A dry run that would change the file: the unified diff, and what writing would meet (a
/// symbolic link replaced, a file that cannot be written).
fn dry_run(report: &mut FixReport, state: &write::FileState, original: &[u8], new_bytes: &[u8]) {
    if !report.changed {
        return;
    }
    let old = String::from_utf8_lossy(original);
    let new = String::from_utf8_lossy(new_bytes);
    report.unified_diff = Some(unified_diff(&report.path, &old, &new));
    if let Some(t) = &state.symlink_target {
        report.notes.push(format!(
            "`{}` is a symbolic link to `{}`; fix will replace the link with a regular file and leave the target alone",
            report.path,
            t.display()
        ));
    }
    if let Err(e) = write::check_writable(state) {
        report.notes.push(e.message);
    }
}

/// Replaces the file (with a backup if asked) and notes what else changed: a symbolic link
/// now a regular file, other hard links still showing the old content.
fn write_noted(
    report: &mut FixReport,
    state: &write::FileState,
    new_bytes: &[u8],
    original: &[u8],
    opts: &FixOptions,
) -> Result<write::Written> {
    let written = write::replace(state, new_bytes, original, opts.backup)?;
    report.written = true;
    report.backup = written.backup.as_ref().map(|b| b.display().to_string());
    report.notes.extend(written.notes.iter().cloned());
    if let Some(t) = &state.symlink_target {
        report.replaced_symlink = true;
        report.notes.push(format!(
            "`{}` was a symbolic link to `{}`; it is now a regular file and the link's target is unchanged",
            report.path,
            t.display()
        ));
    }
    if state.nlink > 1 && state.symlink_target.is_none() {
        report.notes.push(format!(
            "`{}` had {} hard links; the other names still show the old content",
            report.path, state.nlink
        ));
    }
    Ok(written)
}

/// A write that failed verification: the original restored (and the backup, now useless,
/// removed), or where the original is if restoring failed too.
fn restore_after(
    path: &str,
    why: &str,
    state: &write::FileState,
    original: &[u8],
    new_bytes: &[u8],
    written: &write::Written,
) -> Error {
    let restored = write::restore(state, original, new_bytes);
    let mut msg = format!("verification failed after writing `{path}`: {why}");
    match restored {
        Ok(()) => {
            if let Some(b) = &written.backup {
                let _ = std::fs::remove_file(b);
            }
            msg.push_str("; the original was restored");
        }
        Err(e) => {
            msg.push_str(&format!("; restoring the original failed too ({e})"));
            if let Some(b) = &written.backup {
                msg.push_str(&format!(" — the original is in `{}`", b.display()));
            }
        }
    }
    Error::new(msg).with_hint("run `dflash-check diff` on the file to see its state")
}

/// Re-reads the file from disk and checks it against the authority. The minimal edit's text
/// was parsed and compared with the authority by the planner (`planned`, its tree): the file
/// reading back byte for byte as that text is the same check, without a second parse and
/// comparison (which cost as much memory as the file's tree again). `--exact`'s text is the
/// authority's bytes, never parsed on their own: they are parsed and compared here.
fn verify(
    state: &write::FileState,
    expected: &[u8],
    authority: &Authority,
    planned: Option<Node>,
) -> std::result::Result<Node, String> {
    write::fail_point("verify").map_err(|e| e.to_string())?;
    let bytes = config::read_capped(&state.path, MAX_CONFIG_BYTES).map_err(|e| e.message)?;
    if bytes != expected {
        return Err("the file read back differs from what was written".into());
    }
    if let Some(root) = planned {
        return Ok(root);
    }
    let doc = Document::parse_bytes(&bytes).map_err(|e| format!("the file is not JSON: {e}"))?;
    let left = edit::residual(&doc.root, authority.config.root(), &[]);
    if let Some(d) = left.first() {
        return Err(format!(
            "`{}` still differs from the authority ({})",
            d.local_path.as_ref().unwrap_or(&d.path),
            d.kind.as_str()
        ));
    }
    Ok(doc.root)
}

/// `--exact` replaces the whole file; its edits are the differences, for the report.
fn exact_edits(local: &ConfigFile, authority: &Authority) -> Vec<Edit> {
    diff::compare(local.root(), authority.config.root())
        .into_iter()
        .filter_map(|d| {
            let (action, path) = match d.kind {
                DiffKind::Changed | DiffKind::Type => (Action::Set, d.local_path.clone()?),
                DiffKind::OnlyAuthority => (Action::Add, d.authority_path.clone()?),
                DiffKind::OnlyLocal => (Action::Remove, d.local_path.clone()?),
                DiffKind::OutOfRange | DiffKind::Layout => return None,
            };
            Some(Edit {
                path,
                action,
                old: d.local,
                new: d.authority,
                kind: d.kind,
            })
        })
        .collect()
}

fn tokens_of(path: &Path, node: Option<&Node>, target: &TargetContext) -> Vec<DecodedToken> {
    if diff::is_token_field(path) && target.hint.is_none() {
        crate::diff::decode_node(&target.tokens, node)
    } else {
        Vec::new()
    }
}

fn edit_output(e: &Edit, target: &TargetContext) -> EditOutput {
    let display = |n: Option<&Node>| crate::text::short_value(n, &tokens_of(&e.path, n, target));
    EditOutput {
        path: e.path.to_string(),
        action: e.action,
        old: e.old.as_ref().map(Node::to_serde),
        new: e.new.as_ref().map(Node::to_serde),
        old_display: display(e.old.as_ref()),
        new_display: display(e.new.as_ref()),
        code: e.kind.code(),
        severity: crate::diff::severity_of(&e.path),
    }
}

/// The incident's key fields plus every edited field, as the file now has them.
fn checked_fields(root: &Node, target: &TargetContext, edited: &[Path]) -> Vec<CheckedField> {
    // Sets and a lookup cache: a fix of n keys checks n fields, each in constant time.
    let mut paths: Vec<Path> = KEY_FIELDS.iter().map(|p| Path::parse(p)).collect();
    let mut listed: std::collections::HashSet<&Path> = std::collections::HashSet::new();
    let key_fields = paths.clone();
    listed.extend(key_fields.iter());
    for p in edited {
        if listed.insert(p) {
            paths.push(p.clone());
        }
    }
    let edited: std::collections::HashSet<&Path> = edited.iter().collect();
    let mut lookup = crate::json::Lookup::default();
    paths
        .into_iter()
        .filter_map(|p| {
            let node = lookup.path(root, &p);
            let fixed = edited.contains(&p);
            if node.is_none() && !fixed {
                return None;
            }
            let tokens = tokens_of(&p, node, target);
            Some(CheckedField {
                path: p.to_string(),
                present: node.is_some(),
                value: node.map_or(serde_json::Value::Null, Node::to_serde),
                display: crate::text::short_value(node, &tokens),
                tokens,
                fixed,
            })
        })
        .collect()
}

/// A unified diff of the change, both sides labelled with the file path.
pub fn unified_diff(label: &str, old: &str, new: &str) -> String {
    // Myers' diff costs lines × edits: adding 190,000 keys took a minute. Past the deadline
    // `similar` stops looking for the smallest diff and reports the rest as one replacement,
    // still a correct diff; a config of normal size finishes in microseconds, far before it.
    similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(200))
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(label, label)
        .to_string()
}
