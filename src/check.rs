//! The CI gate: every drafter config under some paths, checked in one run.
//!
//! `check` finds each `config.json` (directories recursed, hidden folders such as `.git`
//! skipped, files taken as given), keeps the ones that are drafters, compares each with its
//! pinned authority (`dflash-check.toml`) or a matching built-in snapshot, lints it, and turns
//! everything into located findings (file, line, column, stable code) for the human, JSON,
//! GitHub and SARIF renderers. One bad drafter never stops the others: a drafter that cannot be
//! read or whose authority cannot be had becomes an error finding of its own.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::analysis::{self, AuthorityChoice, DiffReport, TargetChoice};
use crate::config::{self, ConfigFile};
use crate::diagnostic::{CodeInfo, Severity as DSeverity};
use crate::diff::{DiffKind, Severity as DiffSeverity};
use crate::hub::{HubSettings, RepoRef};
use crate::pins::{LoadedPins, Pin};
use crate::rules::{self, family, LintOptions, Severity};
use crate::source::builtin;
use crate::{Error, Result};

crate::declare_codes! {
    /// Codes of the findings `check` makes itself (lint's come from the rule registry).
    pub enum CheckCode {
        AuthorityMismatch => "authority-mismatch", CodeInfo {
            severity: DSeverity::Error,
            summary: "a critical field differs from the drafter's authoritative config",
            explanation: "A field that changes what the drafter computes differs from the pinned Hub commit, file \
or built-in snapshot the drafter is checked against. Run `dflash-check diff` for the field-by-field view and \
`dflash-check fix` to make the file agree.",
            source: "dflash-check: the authority is the drafter repo's config.json at the pinned commit",
        },
        AuthorityMetadataMismatch => "authority-metadata-mismatch", CodeInfo {
            severity: DSeverity::Warning,
            summary: "a metadata field (transformers_version, dtype, ...) differs from the authority",
            explanation: "Metadata fields do not change what the drafter computes, but a difference says the file \
is not the published one.",
            source: "dflash-check: metadata fields listed in src/diff.rs",
        },
        AuthorityLayout => "authority-layout", CodeInfo {
            severity: DSeverity::Info,
            summary: "same values as the authority, in the other config layout (flat vs nested)",
            explanation: "The values agree, but one side uses the flat (transformers 4.57) layout and the other the \
nested (transformers 5) one; loaders that read one layout only fall back to defaults.",
            source: "bstnxbt/dflash-mlx PR 46; z-lab/dflash PR 150",
        },
        AuthorityTokenOutOfRange => "authority-token-out-of-range", CodeInfo {
            severity: DSeverity::Error,
            summary: "a token id has no embedding row in the target, on both sides of the comparison",
            explanation: "Both the file and its authority hold a token id that is not a row of the target's \
embedding: SGLang refuses such a mask id at load.",
            source: "sgl-project/sglang python/sglang/srt/speculative/dflash_worker.py@7f151c5 (_resolve_mask_token_id)",
        },
        AuthorityUnavailable => "authority-unavailable", CodeInfo {
            severity: DSeverity::Error,
            summary: "the pinned authority or target could not be read (Hub failure, missing file)",
            explanation: "A pin names an authority that could not be had; the gate cannot vouch for the drafter.",
            source: "dflash-check",
        },
        ConfigUnreadable => "config-unreadable", CodeInfo {
            severity: DSeverity::Error,
            summary: "the config.json could not be read or is not valid JSON",
            explanation: "Every engine refuses a config.json that is not valid JSON.",
            source: "dflash-check",
        },
        PinMissing => "pin-missing", CodeInfo {
            severity: DSeverity::Error,
            summary: "no pin for this drafter in dflash-check.toml, and --require-pin is set",
            explanation: "With --require-pin every drafter must be pinned to an authority at a commit sha; run \
`dflash-check pin`.",
            source: "dflash-check",
        },
        NoAuthority => "no-authority", CodeInfo {
            severity: DSeverity::Info,
            summary: "no pin and no built-in snapshot matches: only lint rules were run",
            explanation: "Nothing to compare the drafter with; pin it to its Hub repo to compare field by field.",
            source: "dflash-check",
        },
    }
}

/// Codes of the findings `check` makes itself (lint's come from `rules`).
pub const CHECK_CODES: &[(&str, Severity, &str)] = &[
    ("authority-mismatch", Severity::Error, "A critical field differs from the drafter's authoritative config (pinned Hub commit, file or built-in snapshot)."),
    ("authority-metadata-mismatch", Severity::Warning, "A metadata field (transformers_version, dtype, ...) differs from the authoritative config."),
    ("authority-layout", Severity::Info, "Same values as the authority, in the other config layout (flat vs nested)."),
    ("authority-token-out-of-range", Severity::Error, "A token id has no embedding row in the target, on both sides of the comparison."),
    ("authority-unavailable", Severity::Error, "The pinned authority or target could not be read (Hub failure, missing file)."),
    ("config-unreadable", Severity::Error, "The config.json could not be read or is not valid JSON."),
    ("pin-missing", Severity::Error, "No pin for this drafter in dflash-check.toml, and --require-pin is set."),
    ("no-authority", Severity::Info, "No pin and no built-in snapshot matches: only lint rules were run."),
];

/// What `check` needs besides the paths.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    pub pins: Option<LoadedPins>,
    pub require_pin: bool,
    pub lint: LintOptions,
    /// Hub settings for pinned Hub authorities and targets.
    pub hub: Option<HubSettings>,
    /// Paths in findings are shown relative to this directory (the repository root).
    pub root: PathBuf,
}

/// A finding with its location in a file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckFinding {
    pub code: String,
    pub level: Severity,
    /// JSON path inside the config (empty for whole-file findings).
    pub path: String,
    pub message: String,
    pub line: usize,
    pub column: usize,
}

/// The authority a drafter was compared against.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuthoritySummary {
    pub kind: &'static str,
    pub id: String,
    pub sha: Option<String>,
    /// `pin` (dflash-check.toml) or `builtin-match`.
    pub chosen_by: &'static str,
}

/// One drafter's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrafterCheck {
    /// The config file, relative to the root when possible, `/`-separated.
    pub file: String,
    pub family: Option<String>,
    pub authority: Option<AuthoritySummary>,
    pub findings: Vec<CheckFinding>,
}

impl DrafterCheck {
    pub fn count(&self, level: Severity) -> usize {
        self.findings.iter().filter(|f| f.level == level).count()
    }
}

/// The whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    pub drafters: Vec<DrafterCheck>,
    /// Config files found that are not drafters (target models and the like).
    pub skipped: Vec<String>,
    pub pins: Option<String>,
}

impl CheckReport {
    pub fn count(&self, level: Severity) -> usize {
        self.drafters.iter().map(|d| d.count(level)).sum()
    }

    pub fn fails(&self, deny_warnings: bool) -> bool {
        self.count(Severity::Error) > 0 || (deny_warnings && self.count(Severity::Warning) > 0)
    }
}

/// Every `config.json` under `paths`, sorted, hidden directories skipped.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| config::io_error(path, &e))?;
        if meta.is_file() {
            found.push(path.clone());
        } else {
            walk(path, &mut found);
        }
    }
    found.sort();
    found.dedup();
    Ok(found)
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = entry.path();
        // file_type() does not follow symlinks: a linked directory is not walked (no loops),
        // a linked config.json (Hub cache snapshots) is taken.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !name.starts_with('.') && name != "node_modules" && name != "target" {
                walk(&path, found);
            }
        } else if name == "config.json" {
            found.push(path);
        }
    }
}

/// Checks every drafter under `paths`.
pub fn run(paths: &[PathBuf], options: &CheckOptions) -> Result<CheckReport> {
    let files = discover(paths)?;
    let mut report = CheckReport {
        drafters: Vec::new(),
        skipped: Vec::new(),
        pins: options
            .pins
            .as_ref()
            .map(|p| display(&p.path, &options.root)),
    };
    let mut targets = TargetCache::default();
    for file in files {
        let shown = display(&file, &options.root);
        match config::load(&file) {
            Err(e) => report.drafters.push(DrafterCheck {
                file: shown,
                family: None,
                authority: None,
                findings: vec![whole_file("config-unreadable", &e)],
            }),
            Ok(local) => {
                let pinned = options
                    .pins
                    .as_ref()
                    .and_then(|p| p.find(&file).map(|(_, pin)| pin.clone()));
                let family = match (family::detect(local.root()), options.lint.family) {
                    (Some(d), _) => Some(d.name),
                    (None, Some(forced)) => Some(forced),
                    (None, None) if pinned.is_some() => None,
                    (None, None) => {
                        report.skipped.push(shown);
                        continue;
                    }
                };
                let mut result = check_one(&local, pinned.as_ref(), options, &mut targets);
                result.file = shown;
                result.family = family.map(|f| format!("{f:?}").to_lowercase());
                report.drafters.push(result);
            }
        }
    }
    Ok(report)
}

fn whole_file(code: &str, e: &Error) -> CheckFinding {
    // A JSON syntax error names its line and column; point the annotation there.
    let (line, column) = syntax_position(&e.message).unwrap_or((1, 1));
    CheckFinding {
        code: code.into(),
        level: Severity::Error,
        path: String::new(),
        message: e.to_string(),
        line,
        column,
    }
}

fn syntax_position(message: &str) -> Option<(usize, usize)> {
    let rest = &message[message.find("at line ")? + 8..];
    let (line, rest) = rest.split_once(", column ")?;
    let column: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((line.parse().ok()?, column.parse().ok()?))
}

/// Diff (when an authority is known) and lint for one loaded drafter.
/// Pinned targets shared by many drafters are read once per set of wanted ids, not once per
/// drafter (a real tokenizer.json is 11–30 MB).
#[derive(Default)]
struct TargetCache(std::collections::HashMap<(String, Vec<u64>), analysis::TargetContext>);

fn check_one(
    local: &ConfigFile,
    pin: Option<&Pin>,
    options: &CheckOptions,
    targets: &mut TargetCache,
) -> DrafterCheck {
    let mut findings = Vec::new();
    let pin_root = options
        .pins
        .as_ref()
        .map(LoadedPins::root)
        .unwrap_or_else(|| PathBuf::from("."));
    let (choice, chosen_by) = match pin {
        Some(pin) => match pin_choice(pin, &pin_root, options) {
            Ok(c) => (Some(c), "pin"),
            Err(e) => {
                findings.push(whole_file("authority-unavailable", &e));
                (None, "pin")
            }
        },
        None => {
            if options.require_pin {
                findings.push(CheckFinding {
                    code: "pin-missing".into(),
                    level: Severity::Error,
                    path: String::new(),
                    message: "no pin for this drafter in dflash-check.toml (--require-pin); add one with `dflash-check pin`".into(),
                    line: 1,
                    column: 1,
                });
            }
            (
                builtin::match_snapshot(local)
                    .ok()
                    .map(|a| AuthorityChoice::Resolved(Box::new(a))),
                "builtin-match",
            )
        }
    };
    let target_choice = match pin.and_then(|p| p.target.as_ref()) {
        Some(target) => target_choice(
            target,
            pin.and_then(|p| p.target_revision.as_deref()),
            &pin_root,
            options,
        ),
        None => TargetChoice::default(),
    };
    let authority = choice.map(|c| analysis::resolve_authority(local, &c));
    let authority = match authority {
        Some(Ok(a)) => Some(a),
        Some(Err(e)) => {
            findings.push(whole_file("authority-unavailable", &e));
            None
        }
        None => None,
    };
    let mut configs = vec![local];
    if let Some(a) = &authority {
        configs.push(&a.config);
    }
    let cache_key = pin.and_then(|p| p.target.as_ref()).map(|t| {
        let wanted: std::collections::BTreeSet<u64> = configs
            .iter()
            .flat_map(|c| analysis::token_fields(c.root()))
            .flat_map(|(_, node)| analysis::token_ids(node))
            .collect();
        let revision = pin
            .and_then(|p| p.target_revision.clone())
            .unwrap_or_default();
        (
            format!("{t}@{revision}"),
            wanted.into_iter().collect::<Vec<u64>>(),
        )
    });
    let cached = cache_key.as_ref().and_then(|k| targets.0.get(k)).cloned();
    let resolved = match cached {
        Some(t) => Ok(t),
        None => {
            analysis::resolve_target(&target_choice, &configs, authority.as_ref()).inspect(|t| {
                if let Some(k) = cache_key {
                    targets.0.insert(k, t.clone());
                }
            })
        }
    };
    let target = match resolved {
        Ok(t) => t,
        Err(e) => {
            findings.push(whole_file("authority-unavailable", &e));
            analysis::TargetContext::none()
        }
    };
    let summary = authority.as_ref().map(|a| AuthoritySummary {
        kind: a.kind.as_str(),
        id: a.id.clone(),
        sha: a.sha.clone(),
        chosen_by,
    });
    match &authority {
        Some(a) => {
            let report = DiffReport::build(local.clone(), a.clone(), target.clone());
            findings.extend(diff_findings(&report));
        }
        None if pin.is_none() => findings.push(CheckFinding {
            code: "no-authority".into(),
            level: Severity::Info,
            path: String::new(),
            message: "no pin and no built-in snapshot matches: checked by lint rules only (pin it with `dflash-check pin`)".into(),
            line: 1,
            column: 1,
        }),
        None => {}
    }
    match rules::lint(local, &options.lint, &target) {
        Ok(lint) => findings.extend(lint.findings.into_iter().map(|f| CheckFinding {
            code: f.code.to_string(),
            level: f.severity,
            path: f.path,
            message: f.message,
            line: f.line,
            column: f.column,
        })),
        Err(e) => findings.push(whole_file("config-unreadable", &e)),
    }
    findings.sort_by_key(|f| (f.level, f.line, f.column));
    DrafterCheck {
        file: String::new(),
        family: None,
        authority: summary,
        findings,
    }
}

fn pin_choice(pin: &Pin, root: &Path, options: &CheckOptions) -> Result<AuthorityChoice> {
    if let Some(snapshot) = &pin.snapshot {
        return Ok(AuthorityChoice::Snapshot(snapshot.clone()));
    }
    if let Some(file) = &pin.against {
        return Ok(AuthorityChoice::File(root.join(file)));
    }
    let repo = pin.hub.clone().unwrap_or_default();
    let settings = options
        .hub
        .clone()
        .ok_or_else(|| Error::new("Hub settings are needed for a Hub pin"))?;
    let repo: RepoRef = format!("{repo}@{}", pin.revision.clone().unwrap_or_default())
        .parse()
        .map_err(Error::from)?;
    Ok(AuthorityChoice::Hub {
        repo,
        settings: Box::new(settings),
        inferred: Some("pinned in dflash-check.toml".into()),
    })
}

fn target_choice(
    target: &str,
    revision: Option<&str>,
    root: &Path,
    options: &CheckOptions,
) -> TargetChoice {
    let dir = root.join(target);
    if dir.is_dir() {
        return TargetChoice {
            target_dir: Some(dir),
            ..TargetChoice::default()
        };
    }
    let spec = match revision {
        Some(rev) => format!("{target}@{rev}"),
        None => target.to_string(),
    };
    TargetChoice {
        target_hub: spec.parse().ok(),
        hub: options.hub.clone().map(Box::new),
        ..TargetChoice::default()
    }
}

/// Diff differences as located findings.
pub fn diff_findings(report: &DiffReport) -> Vec<CheckFinding> {
    let doc = &report.local.doc;
    let against = report.authority.describe();
    report
        .differences
        .iter()
        .map(|d| {
            let diff = &d.diff;
            let path = diff.local_path.clone().unwrap_or_else(|| diff.path.clone());
            let (line, column) = doc.position_of(&path);
            let (code, level) = match (diff.kind, diff.severity) {
                (DiffKind::Layout, _) => ("authority-layout", Severity::Info),
                (DiffKind::OutOfRange, _) => ("authority-token-out-of-range", Severity::Error),
                (_, DiffSeverity::Critical) => ("authority-mismatch", Severity::Error),
                (_, DiffSeverity::Minor) => ("authority-metadata-mismatch", Severity::Warning),
                (_, DiffSeverity::Info) => ("authority-layout", Severity::Info),
            };
            let local = crate::report::short_value(diff.local.as_ref(), &d.local_tokens);
            let authority =
                crate::report::short_value(diff.authority.as_ref(), &d.authority_tokens);
            let message = match diff.kind {
                DiffKind::Layout => diff.note.clone().unwrap_or_default(),
                _ => format!(
                    "{}: {local} here, {authority} in the authority ({against})",
                    diff.path
                ),
            };
            CheckFinding {
                code: code.into(),
                level,
                path: if diff.kind == DiffKind::Layout {
                    String::new()
                } else {
                    path.to_string()
                },
                message,
                line,
                column,
            }
        })
        .collect()
}

/// `path` relative to `root` when it is inside it, `/`-separated.
pub fn display(path: &Path, root: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let shown = abs
        .strip_prefix(&root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf());
    shown
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_point_at_their_line() {
        assert_eq!(
            syntax_position("`x`: invalid JSON at line 3, column 1: trailing comma"),
            Some((3, 1))
        );
        assert_eq!(syntax_position("no position"), None);
    }
}
