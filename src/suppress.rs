//! Suppressions: `[[ignore]]` entries in `dflash-check.toml`, for files that cannot hold a
//! comment (JSON configs).
//!
//! ```toml
//! [[ignore]]
//! code = "target-layer-ids-formula"
//! path = "models/*-DFlash"              # glob, relative to the pin file: directory or config file
//! pointer = "/dflash_config/target_layer_ids"   # RFC 6901; absent: anywhere in the file
//! reason = "trained with its own ids; acceptance measured at 6.8 (PR 42)"
//! expires = 2027-03-01                  # optional: the entry stops applying on that day
//! ```
//!
//! A finding of `check` that an entry matches (same code, path glob, pointer) is dropped from
//! the verdict and listed as suppressed with its reason. An entry must keep earning its place,
//! as ESLint's unused suppressions and ruff's unused `noqa` do: an entry past its expiry, or one
//! that matched nothing among the drafters this run checked, is itself an error finding
//! (`suppression-expired`, `suppression-unused`) on its line of the pin file. Entries for
//! drafters the run did not check (pre-commit passes only the changed files) are left alone.
//! The pin file keeps the entries as raw TOML (`PinFile::ignore`), so `pin` writes them back.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::diagnostic::codes::CheckCode;
use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::pins::LoadedPins;
use crate::{Error, Result};

// The documentation of the codes this module raises is the registry's (in the core);
// re-exported so `suppress::info` reads the same.
pub use crate::registry::check::suppress_info as info;

/// One `[[ignore]]` entry, validated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suppression {
    pub code: Code,
    /// Glob (`*`, `?` within a path segment, `**` across segments), relative to the pin file.
    pub path: String,
    /// RFC 6901 pointer of the finding's place; `None` matches anywhere in the file.
    pub pointer: Option<String>,
    pub reason: String,
    /// `YYYY-MM-DD`; the entry stops applying on that day.
    pub expires: Option<String>,
    /// The line of its `[[ignore]]` header in the pin file, when written that way.
    #[serde(skip)]
    pub line: Option<usize>,
}

/// A finding an entry suppressed: kept out of the verdict, shown with the entry's reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suppressed {
    pub code: Code,
    pub file: Option<String>,
    pub pointer: String,
    pub reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    code: String,
    path: String,
    pointer: Option<String>,
    reason: String,
    expires: Option<toml::Value>,
}

/// The entries of a pin file, validated: a bad entry is an error (exit 2) naming its index.
pub fn entries(pins: &LoadedPins) -> Result<Vec<Suppression>> {
    let text = &pins.text;
    let mut headers = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == "[[ignore]]")
        .map(|(i, _)| i + 1);
    let bad = |i: usize, what: String| {
        Error::new(format!(
            "`{}`: [[ignore]] entry {} {what}",
            pins.path.display(),
            i + 1
        ))
        .with_hint(
            "each entry needs code, path, reason (and may have pointer, expires = YYYY-MM-DD)",
        )
    };
    let mut out = Vec::new();
    for (i, value) in pins.file.ignore.iter().enumerate() {
        let raw: RawEntry = value
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| bad(i, format!("is invalid: {}", e.message())))?;
        let code = Code::parse(&raw.code).ok_or_else(|| {
            bad(
                i,
                format!(
                    "names no code `{}` (`dflash-check explain` lists them)",
                    raw.code
                ),
            )
        })?;
        if raw.reason.trim().is_empty() || raw.reason.trim() == PLACEHOLDER_REASON {
            return Err(bad(
                i,
                "has no reason: say why the finding is accepted".into(),
            ));
        }
        if raw.path.trim().is_empty() {
            return Err(bad(i, "has an empty path".into()));
        }
        if let Some(p) = &raw.pointer {
            if !(p.is_empty() || p.starts_with('/')) {
                return Err(bad(
                    i,
                    format!(
                        "has pointer `{p}`, not a JSON pointer (`/dflash_config/mask_token_id`)"
                    ),
                ));
            }
        }
        let expires = match raw.expires {
            None => None,
            Some(v) => {
                let s = match &v {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Datetime(d) => d.to_string(),
                    other => other.to_string(),
                };
                if !is_date(&s) {
                    return Err(bad(i, format!("has expires `{s}`, not a date YYYY-MM-DD")));
                }
                Some(s)
            }
        };
        out.push(Suppression {
            code,
            path: raw.path.trim_start_matches("./").to_string(),
            pointer: raw.pointer,
            reason: raw.reason,
            expires,
            line: headers.next(),
        });
    }
    Ok(out)
}

/// Refused as a reason: what a generated entry would hold until a person writes one.
pub const PLACEHOLDER_REASON: &str = "TODO: why is this accepted?";

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && s.chars()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
        && (1..=12).contains(&s[5..7].parse::<u32>().unwrap_or(0))
        && (1..=31).contains(&s[8..10].parse::<u32>().unwrap_or(0))
}

impl Suppression {
    fn expired(&self, today: &str) -> bool {
        self.expires.as_deref().is_some_and(|e| e <= today)
    }

    /// Whether this entry's path glob names `file` (a config file relative to the pin file's
    /// directory) or its directory.
    fn covers(&self, file: &str) -> bool {
        let file = file.trim_start_matches("./");
        glob(&self.path, file)
            || Path::new(file)
                .parent()
                .and_then(|d| d.to_str())
                .is_some_and(|dir| glob(&self.path, dir))
    }

    fn matches(&self, d: &Diagnostic) -> bool {
        d.code == self.code
            && d.repo_path().is_some_and(|f| self.covers(&f))
            && self.pointer.as_ref().is_none_or(|p| *p == d.pointer())
    }
}

/// What applying the entries did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Outcome {
    pub suppressed: Vec<Suppressed>,
    /// `suppression-expired` and `suppression-unused` findings, on the pin file.
    pub findings: Vec<Diagnostic>,
    /// The indices of those entries (expired or unused), for `--prune-ignores`.
    #[serde(skip)]
    pub stale: Vec<usize>,
}

/// Drops from each list of `findings` those a live entry matches; `checked` are the config
/// files this run checked (relative to the pin file's directory), `pin_file` the pin file as
/// shown to the user, `today` `YYYY-MM-DD`.
pub fn apply<'a>(
    entries: &[Suppression],
    findings: impl IntoIterator<Item = &'a mut Vec<Diagnostic>>,
    checked: &[String],
    pin_file: &str,
    today: &str,
) -> Outcome {
    let mut used = vec![false; entries.len()];
    let mut outcome = Outcome::default();
    for list in findings {
        list.retain(|d| retain(entries, &mut used, &mut outcome, today, d));
    }
    for (i, s) in entries.iter().enumerate() {
        let (code, message) = if s.expired(today) {
            (
                CheckCode::SuppressionExpired,
                format!(
                    "[[ignore]] of `{}` at `{}`{} expired on {} (reason given: {}); its finding is reported again",
                    s.code,
                    s.path,
                    s.pointer.as_deref().map(|p| format!(" `{p}`")).unwrap_or_default(),
                    s.expires.as_deref().unwrap_or(""),
                    s.reason
                ),
            )
        } else if !used[i] && checked.iter().any(|f| s.covers(f)) {
            (
                CheckCode::SuppressionUnused,
                format!(
                    "[[ignore]] of `{}` at `{}`{} matched no finding: remove it",
                    s.code,
                    s.path,
                    s.pointer
                        .as_deref()
                        .map(|p| format!(" `{p}`"))
                        .unwrap_or_default()
                ),
            )
        } else {
            continue;
        };
        let mut d = Diagnostic::new(code, info(code), format!("ignore[{i}]"), message)
            .file(pin_file.to_string());
        if let Some(line) = s.line {
            d = d.span(line, 1);
        }
        outcome.findings.push(d);
        outcome.stale.push(i);
    }
    outcome
}

/// Whether `d` stays: false (and recorded) when a live entry matches it.
fn retain(
    entries: &[Suppression],
    used: &mut [bool],
    outcome: &mut Outcome,
    today: &str,
    d: &Diagnostic,
) -> bool {
    let hit = entries
        .iter()
        .enumerate()
        .find(|(_, s)| !s.expired(today) && s.matches(d));
    let Some((i, s)) = hit else {
        return true;
    };
    used[i] = true;
    outcome.suppressed.push(Suppressed {
        code: d.code,
        file: d.repo_path(),
        pointer: d.pointer(),
        reason: s.reason.clone(),
    });
    false
}

/// The `[[ignore]]` entries `check --baseline` appends for `findings` (errors and warnings
/// with a file; the suppressions' own findings excluded), one per (code, file, pointer), with
/// the placeholder reason that the next run refuses until a person replaces it.
pub fn baseline_entries(findings: &[Diagnostic]) -> String {
    let mut seen = std::collections::BTreeSet::new();
    let mut text = String::new();
    for d in findings {
        let (Some(file), false) = (d.repo_path(), d.severity == Severity::Info) else {
            continue;
        };
        if matches!(
            d.code,
            Code::Check(CheckCode::SuppressionExpired | CheckCode::SuppressionUnused)
        ) || !seen.insert((d.code, file.clone(), d.pointer()))
        {
            continue;
        }
        let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
        text.push_str(&format!(
            "\n[[ignore]]\ncode = {}\npath = {}\npointer = {}\nreason = {}\n",
            quote(d.code.as_str()),
            quote(&file),
            quote(&d.pointer()),
            quote(PLACEHOLDER_REASON)
        ));
    }
    text
}

/// `text` (the pin file) without the `[[ignore]]` blocks whose headers are on `lines`: each
/// block runs from its header to the next table header or the end, so comments and tables
/// elsewhere in the file stay as they are.
pub fn without_entries(text: &str, lines: &[usize]) -> String {
    let mut out = String::new();
    let mut dropping = false;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            dropping = lines.contains(&(i + 1)) && trimmed == "[[ignore]]";
        }
        if !dropping {
            out.push_str(line);
        }
    }
    out
}

/// `check --baseline`: appends an `[[ignore]]` entry for each of `findings` (errors and
/// warnings) to the pin file, created as `dflash-check.toml` in the working directory when
/// there is none. Returns the file and the number of entries written.
pub fn append_baseline(
    findings: &[Diagnostic],
    pins: Option<&LoadedPins>,
) -> Result<(PathBuf, usize)> {
    let entries = baseline_entries(findings);
    let path = pins.map_or_else(|| PathBuf::from(crate::pins::FILE_NAME), |p| p.path.clone());
    let text = match pins {
        Some(_) => std::fs::read_to_string(&path)
            .map_err(|e| Error::new(format!("cannot read `{}`: {e}", path.display())))?,
        None => format!("version = {}\n", crate::pins::VERSION),
    };
    if !entries.is_empty() {
        write_pin_file(&path, &format!("{text}{entries}"))?;
    }
    Ok((path, entries.matches("[[ignore]]").count()))
}

/// Replaces the pin file with `text` atomically (a temporary file beside it, renamed over it).
pub fn write_pin_file(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let fail = |e: std::io::Error| Error::new(format!("cannot write `{}`: {e}", path.display()));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    tmp.write_all(text.as_bytes())
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

/// `*` and `?` within one `/`-separated segment, `**` for any number of segments.
fn glob(pattern: &str, path: &str) -> bool {
    fn segments(p: &[&str], s: &[&str]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some((&"**", rest)) => (0..=s.len()).any(|k| segments(rest, &s[k..])),
            Some((first, rest)) => {
                !s.is_empty()
                    && segment(first.as_bytes(), s[0].as_bytes())
                    && segments(rest, &s[1..])
            }
        }
    }
    fn segment(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => segment(&p[1..], s) || (!s.is_empty() && segment(p, &s[1..])),
            (Some(b'?'), Some(_)) => segment(&p[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => segment(&p[1..], &s[1..]),
            _ => false,
        }
    }
    let p: Vec<&str> = pattern.trim_end_matches('/').split('/').collect();
    let s: Vec<&str> = path.split('/').collect();
    segments(&p, &s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_segments() {
        assert!(glob("models/*-DFlash", "models/Qwen3.6-27B-DFlash"));
        assert!(!glob("models/*", "models/a/config.json"));
        assert!(glob("models/**", "models/a/config.json"));
        assert!(glob("**/config.json", "config.json"));
        assert!(glob("m?dels/a/", "models/a"));
        assert!(!glob("models/a", "models/ab"));
    }

    #[test]
    fn pruning_keeps_everything_else() {
        let text =
            "# pins\nversion = 1\n\n[[ignore]]\ncode = \"a\"\n# keep? no: inside the block\n\n\
[drafters.\"m\"]\nsnapshot = \"x\"\n\n[[ignore]]\ncode = \"b\"\n";
        assert_eq!(
            without_entries(text, &[4]),
            "# pins\nversion = 1\n\n[drafters.\"m\"]\nsnapshot = \"x\"\n\n[[ignore]]\ncode = \"b\"\n"
        );
        assert_eq!(without_entries(text, &[11]).lines().count(), 10);
        assert_eq!(without_entries(text, &[]), text);
    }

    /// An old code (renamed when launch's and lint's engine claims merged, issue 29) still names
    /// its finding in an entry, as the surviving code, until the next release.
    #[test]
    fn an_old_code_names_the_surviving_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dflash-check.toml");
        std::fs::write(
            &path,
            "version = 1\n\n[[ignore]]\ncode = \"launch-k-exceeds-block\"\npath = \"m\"\nreason = \"K 16 measured\"\n",
        )
        .unwrap();
        let pins = crate::pins::load(&path).unwrap();
        let got = entries(&pins).unwrap();
        assert_eq!(got[0].code.as_str(), "num-speculative-tokens-too-large");
    }

    #[test]
    fn dates_are_iso() {
        assert!(is_date("2027-03-01"));
        for bad in ["2027-3-01", "2027-13-01", "tomorrow", "2027-03-00"] {
            assert!(!is_date(bad), "{bad}");
        }
    }
}
