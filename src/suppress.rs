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
//!
//! `check --baseline` and `--prune-ignores` edit the file through `toml_edit` under the pin
//! file's lock (the one `pin` takes), on the text read under that lock, and re-parse the result
//! before it replaces the file: an entry is found by its place in the TOML array, never by
//! searching the text for a header line. Path globs match in O(pattern × path) at worst (no
//! backtracking search) and hold at most [`MAX_WILDCARDS`] wildcards. Entries are looked up
//! by code, pointer and (without wildcards) path, so applying them is linear in entries plus
//! findings; at most [`MAX_GLOB_ENTRIES`] entries have a wildcard.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::diagnostic::codes::CheckCode;
use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::pins::repo::WriteTarget;
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
    /// The line of its `[[ignore]]` header (or inline table) in the pin file.
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
    /// Whether the entry is one `check --baseline` wrote (its reason is `baseline of DATE`).
    pub baseline: bool,
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
    // Without entries there are no lines to find: the pin file is not parsed a second time
    // (with its spans, for nothing: 2.5 % of a `check` of 1,000 pinned drafters, issue 44).
    if pins.file.ignore.is_empty() {
        return Ok(Vec::new());
    }
    validated(pins)
}

/// [`entries`] of a pin file that has some.
fn validated(pins: &LoadedPins) -> Result<Vec<Suppression>> {
    let mut lines = entry_lines(&pins.text).into_iter();
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
    let mut globs = 0;
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
        let wildcards = raw.path.chars().filter(|c| matches!(c, '*' | '?')).count();
        if wildcards > MAX_WILDCARDS {
            return Err(bad(
                i,
                format!(
                    "has a `path` with {wildcards} wildcards (`*`, `?`), over the limit of \
                     {MAX_WILDCARDS}: name the directory, or use `**` once"
                ),
            ));
        }
        if wildcards > 0 {
            globs += 1;
            if globs > MAX_GLOB_ENTRIES {
                return Err(bad(
                    i,
                    format!(
                        "has a wildcard in `path`, as more than {MAX_GLOB_ENTRIES} entries do (the \
                         limit: each is tried against every finding); name each path without \
                         wildcards, as `check --baseline` writes them"
                    ),
                ));
            }
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
                    return Err(bad(
                        i,
                        format!("has expires `{s}`, not a date YYYY-MM-DD that exists"),
                    ));
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
            line: lines.next().flatten(),
        });
    }
    Ok(out)
}

/// The line of each `[[ignore]]` entry in `text`, in the order of the array: the line of its
/// `[[ignore]]` header, or of its inline table in `ignore = [...]`. Taken from the TOML
/// parser's spans, so a header written `[[ ignore ]]  # old` or a line `[[ignore]]` inside a
/// multi-line string does not shift them.
fn entry_lines(text: &str) -> Vec<Option<usize>> {
    let Ok(doc) = toml_edit::Document::parse(text) else {
        return Vec::new();
    };
    // One index of the lines for every entry: counting the newlines before each entry's span
    // cost the text's length per entry (20,000 entries: 18 s).
    let starts = crate::json::line_starts(text);
    let line_of = |span: Option<std::ops::Range<usize>>| {
        span.filter(|r| r.start <= text.len())
            .map(|r| crate::json::line_at(&starts, r.start))
    };
    match doc.as_item().get("ignore") {
        Some(toml_edit::Item::ArrayOfTables(tables)) => {
            tables.iter().map(|t| line_of(t.span())).collect()
        }
        Some(toml_edit::Item::Value(toml_edit::Value::Array(array))) => {
            array.iter().map(|v| line_of(v.span())).collect()
        }
        _ => Vec::new(),
    }
}

/// Refused as a reason: what `check --baseline` wrote before baseline entries carried their own
/// reason, until a person replaced it.
pub const PLACEHOLDER_REASON: &str = "TODO: why is this accepted?";

/// The most `*` and `?` one entry's `path` may hold. Real globs hold one to four; matching is
/// polynomial whatever the pattern, and the cap keeps a hostile entry's cost small besides.
pub const MAX_WILDCARDS: usize = 32;

/// The most entries whose `path` holds a wildcard. An entry without one is found by a hash
/// lookup, so the 16 MiB pin file (some 400,000 entries) is its only bound; a glob entry is
/// matched against every finding of its code and pointer and every file checked, so their
/// number multiplies the work. A pin file writes a few by hand; `--baseline` writes none.
pub const MAX_GLOB_ENTRIES: usize = 1000;

/// The reason `check --baseline` gives the entries it writes: they accept what was there when
/// the gate was adopted, and say so.
pub fn baseline_reason(date: &str) -> String {
    format!("baseline of {date}")
}

/// Whether `reason` is one `check --baseline` wrote ([`baseline_reason`]).
pub fn is_baseline_reason(reason: &str) -> bool {
    reason.strip_prefix("baseline of ").is_some_and(is_date)
}

/// `YYYY-MM-DD`, a day of the calendar (`2027-02-31` is not).
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if !(b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit()))
    {
        return false;
    }
    let (Ok(year), Ok(month), Ok(day)) = (
        s[..4].parse::<i32>(),
        s[5..7].parse::<u8>(),
        s[8..10].parse::<u8>(),
    ) else {
        return false;
    };
    time::Month::try_from(month)
        .and_then(|m| time::Date::from_calendar_date(year, m, day))
        .is_ok()
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

    #[cfg(test)]
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
/// shown to the user, `today` `YYYY-MM-DD`. Linear in entries plus findings (plus glob entries
/// times what they are matched against): the entries are looked up through an [`Index`], where
/// a scan of every entry per finding made a baseline of 20,000 findings take minutes.
pub fn apply<'a>(
    entries: &[Suppression],
    findings: impl IntoIterator<Item = &'a mut Vec<Diagnostic>>,
    checked: &[String],
    pin_file: &str,
    today: &str,
) -> Outcome {
    let mut index = Index::new(entries, |s| !s.expired(today));
    let mut used = vec![false; entries.len()];
    let mut outcome = Outcome::default();
    for list in findings {
        list.retain(|d| retain(entries, &mut index, &mut used, &mut outcome, d));
    }
    let checked = Checked::new(checked, &mut index);
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
        } else if !used[i] && checked.named_by(i, s) {
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

/// A path pattern without wildcards: it names exactly one file or directory (what `glob`
/// matches it against, its trailing `/` ignored).
fn literal(pattern: &str) -> Option<&str> {
    (!pattern.contains(['*', '?'])).then(|| pattern.trim_end_matches('/'))
}

/// A file and its directory (`covers` matches either), `./` trimmed.
fn file_and_dir(file: &str) -> (&str, Option<&str>) {
    let file = file.trim_start_matches("./");
    (file, Path::new(file).parent().and_then(|d| d.to_str()))
}

/// The entries `keep` selects, by what a finding must share with them: code, pointer (or no
/// pointer) and path for an entry without wildcards, each list in file order (so the first of
/// a list is the first entry of the file there); the glob entries, and for each file asked
/// about the glob entries that cover it, worked out once per file (a run's findings share a
/// few files: glob work is files × glob entries, not findings × glob entries).
struct Index<'e> {
    entries: &'e [Suppression],
    literal: HashMap<(Code, Option<&'e str>, &'e str), Vec<usize>>,
    globs: Vec<usize>,
    covering: HashMap<String, Vec<usize>>,
}

impl<'e> Index<'e> {
    fn new(entries: &'e [Suppression], keep: impl Fn(&Suppression) -> bool) -> Index<'e> {
        let mut index = Index {
            entries,
            literal: HashMap::new(),
            globs: Vec::new(),
            covering: HashMap::new(),
        };
        for (i, s) in entries.iter().enumerate().filter(|(_, s)| keep(s)) {
            match literal(&s.path) {
                Some(path) => index
                    .literal
                    .entry((s.code, s.pointer.as_deref(), path))
                    .or_default()
                    .push(i),
                None => index.globs.push(i),
            }
        }
        index
    }

    /// The glob entries whose path covers `file`, in file order.
    fn covering(&mut self, file: &str) -> &[usize] {
        let (entries, globs) = (self.entries, &self.globs);
        self.covering.entry(file.to_string()).or_insert_with(|| {
            globs
                .iter()
                .copied()
                .filter(|&i| entries[i].covers(file))
                .collect()
        })
    }

    /// The first entry (in file order) that matches `d`, as `Suppression::matches` says.
    fn first_match(&mut self, d: &Diagnostic) -> Option<usize> {
        let file = d.repo_path()?;
        let (file, dir) = file_and_dir(&file);
        let pointer = d.pointer();
        let mut best = None;
        for p in [Some(pointer.as_str()), None] {
            for path in [Some(file), dir].into_iter().flatten() {
                let first = self.literal.get(&(d.code, p, path)).and_then(|l| l.first());
                best = earliest(best, first.copied());
            }
        }
        let entries = self.entries;
        let glob = self.covering(file).iter().copied().find(|&i| {
            let s = &entries[i];
            s.code == d.code && s.pointer.as_ref().is_none_or(|p| *p == pointer)
        });
        earliest(best, glob)
    }

    /// The glob entries that cover at least one of `files`.
    fn globs_covering_any(&mut self, files: &[String]) -> HashSet<usize> {
        let mut out = HashSet::new();
        for f in files {
            out.extend(self.covering(f.trim_start_matches("./")).iter().copied());
        }
        out
    }
}

/// The smaller of two entry indices, either of which may be missing.
fn earliest(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The places a run checked, for the entries it could have used: the config files and their
/// directories (an entry without wildcards names one of them), and the glob entries that
/// cover one of the files.
struct Checked<'c> {
    places: HashSet<&'c str>,
    globs: HashSet<usize>,
}

impl<'c> Checked<'c> {
    fn new(files: &'c [String], index: &mut Index<'_>) -> Checked<'c> {
        let places = files
            .iter()
            .flat_map(|f| {
                let (file, dir) = file_and_dir(f);
                [Some(file), dir]
            })
            .flatten()
            .collect();
        Checked {
            places,
            globs: index.globs_covering_any(files),
        }
    }

    /// Whether entry `i` (`s`) names a place the run checked.
    fn named_by(&self, i: usize, s: &Suppression) -> bool {
        match literal(&s.path) {
            Some(path) => self.places.contains(path),
            None => self.globs.contains(&i),
        }
    }
}

/// Whether `d` stays: false (and recorded) when a live entry matches it.
fn retain(
    entries: &[Suppression],
    index: &mut Index<'_>,
    used: &mut [bool],
    outcome: &mut Outcome,
    d: &Diagnostic,
) -> bool {
    let Some(i) = index.first_match(d) else {
        return true;
    };
    let s = &entries[i];
    used[i] = true;
    outcome.suppressed.push(Suppressed {
        code: d.code,
        file: d.repo_path(),
        pointer: d.pointer(),
        reason: s.reason.clone(),
        baseline: is_baseline_reason(&s.reason),
    });
    false
}

/// The `[[ignore]]` entries `check --baseline` appends for `findings` (errors and warnings
/// with a file; the suppressions' own findings excluded), one per (code, file, pointer), each
/// with the reason `baseline of DATE` ([`baseline_reason`]).
pub fn baseline_entries(findings: &[Diagnostic], date: &str) -> Vec<toml_edit::Table> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
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
        let mut table = toml_edit::Table::new();
        table.decor_mut().set_prefix("\n");
        table["code"] = toml_edit::value(d.code.as_str());
        table["path"] = toml_edit::value(file);
        table["pointer"] = toml_edit::value(d.pointer());
        table["reason"] = toml_edit::value(baseline_reason(date));
        out.push(table);
    }
    out
}

/// The pin file's text with the `[[ignore]]` entries at `indices` (their places in the TOML
/// array, as [`entries`] numbers them) removed, each with the comments written above it; the
/// rest of the file stays as written. `None` when `text` is not TOML or has no such entries.
pub fn without_entries(text: &str, indices: &[usize]) -> Option<String> {
    let mut doc: toml_edit::DocumentMut = text.parse().ok()?;
    // One pass that keeps every entry not asked for: removing them one by one shifted the
    // rest of the array each time (quadratic in a file of thousands of stale entries).
    let mut drop = Vec::new();
    let len = match doc.get("ignore")? {
        toml_edit::Item::ArrayOfTables(tables) => tables.len(),
        toml_edit::Item::Value(toml_edit::Value::Array(array)) => array.len(),
        _ => return None,
    };
    drop.resize(len, false);
    for &i in indices {
        *drop.get_mut(i)? = true;
    }
    let mut index = 0;
    let mut keep = || {
        index += 1;
        !drop[index - 1]
    };
    match doc.get_mut("ignore")? {
        toml_edit::Item::ArrayOfTables(tables) => tables.retain(|_| keep()),
        toml_edit::Item::Value(toml_edit::Value::Array(array)) => array.retain(|_| keep()),
        _ => return None,
    }
    Some(doc.to_string())
}

/// `text` with `tables` appended as `[[ignore]]` entries at the end of the file (inline tables
/// when the file writes `ignore = [...]`). `None` when `text` is not TOML or its `ignore` is
/// not an array.
fn with_entries(text: &str, tables: Vec<toml_edit::Table>) -> Option<String> {
    let mut doc: toml_edit::DocumentMut = text.parse().ok()?;
    let item = doc
        .entry("ignore")
        .or_insert(toml_edit::Item::ArrayOfTables(Default::default()));
    match item {
        toml_edit::Item::ArrayOfTables(array) => {
            // After every table already in the file, in the order given.
            for mut table in tables {
                table.set_position(Some(isize::MAX));
                array.push(table);
            }
        }
        toml_edit::Item::Value(toml_edit::Value::Array(array)) => {
            for table in tables {
                array.push(table.into_inline_table());
            }
        }
        _ => return None,
    }
    Some(doc.to_string())
}

/// `check --baseline`: appends an `[[ignore]]` entry for each of `findings` (errors and
/// warnings) to the pin file, created as `dflash-check.toml` in the working directory when
/// there is none, under the pin file's lock; an entry the file already holds (same code, path
/// and pointer, written by a run that finished meanwhile) is not written twice. Returns where
/// the entries went and how many were written.
pub fn append_baseline(
    findings: &[Diagnostic],
    pins: Option<&LoadedPins>,
) -> Result<(WriteTarget, usize)> {
    let tables = baseline_entries(findings, &crate::pins::today());
    let path = pins.map_or_else(|| PathBuf::from(crate::pins::FILE_NAME), |p| p.path.clone());
    if tables.is_empty() {
        return Ok((WriteTarget { path, link: None }, 0));
    }
    let mut count = 0;
    let target = edit_pin_file(&path, |text| {
        let text = text.unwrap_or_else(|| format!("version = {}\n", crate::pins::VERSION));
        let present: HashSet<(String, String, Option<String>)> =
            entries(&crate::pins::parse(&path, text.clone())?)?
                .into_iter()
                .map(|e| (e.code.as_str().to_string(), e.path, e.pointer))
                .collect();
        let key = |t: &toml_edit::Table| {
            let field = |k: &str| t.get(k).and_then(|v| v.as_str()).map(str::to_string);
            (
                field("code").unwrap_or_default(),
                field("path").unwrap_or_default(),
                field("pointer"),
            )
        };
        let new: Vec<toml_edit::Table> = tables
            .into_iter()
            .filter(|t| !present.contains(&key(t)))
            .collect();
        count = new.len();
        if new.is_empty() {
            return Ok(None);
        }
        let edited = with_entries(&text, new).ok_or_else(|| {
            Error::new(format!(
                "`{}`: `ignore` is not an array of tables; nothing was written",
                path.display()
            ))
        })?;
        Ok(Some(edited))
    })?;
    Ok((target, count))
}

/// `check --prune-ignores`: removes from the pin file the entries of `stale` (indices into the
/// entries `pins` was loaded with). Under the pin file's lock the file is read again and each
/// stale entry is looked up there by its content, so an edit made since (a `pin` run adding a
/// drafter) is kept and an entry changed since is left alone. Returns the indices (into
/// `pins`) of the entries removed, and where the file was written.
pub fn prune_entries(pins: &LoadedPins, stale: &[usize]) -> Result<(Vec<usize>, WriteTarget)> {
    let mut removed = Vec::new();
    if stale.is_empty() {
        let path = pins.path.clone();
        return Ok((removed, WriteTarget { path, link: None }));
    }
    let target = edit_pin_file(&pins.path, |text| {
        let Some(text) = text else {
            return Ok(None);
        };
        let now = crate::pins::parse(&pins.path, text.clone())?;
        // The entries now in the file by their content (TOML text: `toml::Value` has no hash),
        // each list in file order: one lookup per stale entry, where a scan of the file per
        // stale entry was quadratic.
        let mut by_content: HashMap<String, VecDeque<usize>> = HashMap::new();
        for (j, entry) in now.file.ignore.iter().enumerate() {
            by_content
                .entry(entry.to_string())
                .or_default()
                .push_back(j);
        }
        let mut indices = Vec::new();
        for &i in stale {
            let Some(old) = pins.file.ignore.get(i) else {
                continue;
            };
            let found = by_content
                .get_mut(&old.to_string())
                .and_then(VecDeque::pop_front);
            if let Some(j) = found {
                indices.push(j);
                removed.push(i);
            }
        }
        if indices.is_empty() {
            return Ok(None);
        }
        without_entries(&text, &indices).map(Some).ok_or_else(|| {
            Error::new(format!(
                "internal error: the [[ignore]] entries of `{}` could not be located; \
                     nothing was written",
                pins.path.display()
            ))
        })
    })?;
    Ok((removed, target))
}

/// Reads the pin file at `path` under its lock (the lock `pin` takes), gives its text (`None`
/// when there is no file) to `edit`, and writes what `edit` returns, after checking that it
/// loads as a pin file with valid entries. Nothing is written when `edit` returns `None` or
/// anything fails. A link is written through when it leads inside the repository and refused
/// otherwise ([`crate::pins::repo::write_target`]); the target is returned.
fn edit_pin_file(
    path: &Path,
    edit: impl FnOnce(Option<String>) -> Result<Option<String>>,
) -> Result<WriteTarget> {
    let target = crate::pins::repo::write_target(path)?;
    let path = target.path.as_path();
    let _lock = crate::fix::write::lock(path)?;
    let text = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        // Whatever is there (a dangling link, a FIFO) is the pin file, and refused by `load`.
        _ => Some(crate::pins::load(path)?.text),
    };
    let Some(new) = edit(text)? else {
        return Ok(target);
    };
    let refused = |e: Error| {
        Error::new(format!(
            "internal error: the edited `{}` would not load ({}); nothing was written",
            path.display(),
            e.message
        ))
        .with_hint("please report it with the pin file; edit the file by hand meanwhile")
    };
    let reloaded = crate::pins::parse(path, new.clone()).map_err(refused)?;
    entries(&reloaded).map_err(refused)?;
    write_pin_file(path, &new)?;
    Ok(target)
}

/// Replaces the pin file with `text` atomically, keeping an existing file's mode and owner (a
/// new file gets 0666 minus the umask): [`crate::fix::write::write_file`].
pub fn write_pin_file(path: &Path, text: &str) -> Result<()> {
    crate::fix::write::write_file(path, text.as_bytes())
}

/// Whether `path` (`/`-separated) matches `pattern`: `*` and `?` within one segment, `**` for
/// any number of whole segments, a trailing `/` ignored. Both levels are matched by
/// [`wildcard`], so the cost is at most (pattern × path) steps, whatever the pattern.
pub fn glob(pattern: &str, path: &str) -> bool {
    let p: Vec<&str> = pattern.trim_end_matches('/').split('/').collect();
    let s: Vec<&str> = path.split('/').collect();
    wildcard(&p, &s, |p| *p == "**", |p, s| segment(p, s))
}

/// One segment: `*` any run of characters (none too), `?` exactly one.
fn segment(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = name.chars().collect();
    wildcard(&p, &s, |c| *c == '*', |p, s| *p == '?' || p == s)
}

/// Whether `pattern` matches the whole of `text`, where an element for which `star` holds
/// matches any run of items (none too) and any other element exactly one item that `one`
/// accepts. Greedy, remembering only the last star: when a later element fails, that star
/// takes one more item and matching resumes after it. Going back to an earlier star is never
/// needed (the last one can absorb whatever an earlier one would have), so each step either
/// advances the text or moves the last star's end forward: at most pattern × text steps,
/// instead of the recursion's one branch per star.
fn wildcard<P, T>(
    pattern: &[P],
    text: &[T],
    star: impl Fn(&P) -> bool,
    one: impl Fn(&P, &T) -> bool,
) -> bool {
    let (mut p, mut t) = (0, 0);
    // (the pattern element after the last star, the text item its run ends before)
    let mut last_star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && star(&pattern[p]) {
            p += 1;
            last_star = Some((p, t));
        } else if p < pattern.len() && one(&pattern[p], &text[t]) {
            p += 1;
            t += 1;
        } else if let Some((after, end)) = last_star {
            p = after;
            t = end + 1;
            last_star = Some((after, end + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(star)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn globs_match_segments() {
        assert!(glob("models/*-DFlash", "models/Qwen3.6-27B-DFlash"));
        assert!(!glob("models/*", "models/a/config.json"));
        assert!(glob("models/**", "models/a/config.json"));
        assert!(glob("**/config.json", "config.json"));
        assert!(glob("m?dels/a/", "models/a"));
        assert!(!glob("models/a", "models/ab"));
        // `?` is one character, not one byte.
        assert!(glob("mod?les/*", "modèles/x"));
    }

    /// The recursion the matcher replaced: obviously the documented semantics, exponential in
    /// the stars. The reference for the property test, on inputs small enough for it.
    fn reference(pattern: &str, path: &str) -> bool {
        fn segments(p: &[&str], s: &[&str]) -> bool {
            match p.split_first() {
                None => s.is_empty(),
                Some((&"**", rest)) => (0..=s.len()).any(|k| segments(rest, &s[k..])),
                Some((first, rest)) => {
                    !s.is_empty()
                        && segment(
                            &first.chars().collect::<Vec<_>>(),
                            &s[0].chars().collect::<Vec<_>>(),
                        )
                        && segments(rest, &s[1..])
                }
            }
        }
        fn segment(p: &[char], s: &[char]) -> bool {
            match (p.first(), s.first()) {
                (None, None) => true,
                (Some('*'), _) => segment(&p[1..], s) || (!s.is_empty() && segment(p, &s[1..])),
                (Some('?'), Some(_)) => segment(&p[1..], &s[1..]),
                (Some(a), Some(b)) if a == b => segment(&p[1..], &s[1..]),
                _ => false,
            }
        }
        let p: Vec<&str> = pattern.trim_end_matches('/').split('/').collect();
        let s: Vec<&str> = path.split('/').collect();
        segments(&p, &s)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// The linear matcher answers as the recursion does, on patterns and paths over a small
        /// alphabet (so matches are common) that hold every wildcard, empty segments and a
        /// multi-byte character.
        #[test]
        fn glob_agrees_with_the_reference(
            pattern in proptest::collection::vec(
                prop_oneof![Just("a"), Just("b"), Just("é"), Just("*"), Just("?"), Just("**"), Just("/")],
                0..10,
            ),
            path in proptest::collection::vec(
                prop_oneof![Just("a"), Just("b"), Just("é"), Just("/")],
                0..10,
            ),
        ) {
            let (pattern, path) = (pattern.concat(), path.concat());
            prop_assert_eq!(glob(&pattern, &path), reference(&pattern, &path), "{} vs {}", pattern, path);
        }
    }

    /// Issue 32: `models/****************Z` took 23-49 s against this name with the recursion,
    /// 20 stars no answer in 60 s. Not a timed assertion: before the change this test does not
    /// finish (`tests/check_cli.rs` times the same patterns through the binary).
    #[test]
    fn hostile_globs_answer_at_once() {
        let name = "models/Qwen3.6-27B-DFlash";
        for stars in [16, 20, 200, 2000] {
            let pattern = format!("models/{}Z", "*".repeat(stars));
            assert!(!glob(&pattern, name));
            let alternating = format!("models/{}Z", "*a".repeat(stars));
            assert!(!glob(&alternating, name));
            let deep = format!("{}/Z", vec!["**"; stars].join("/"));
            assert!(!glob(&deep, &"d/".repeat(200)));
        }
    }

    fn loaded(text: &str) -> LoadedPins {
        crate::pins::parse(Path::new("dflash-check.toml"), text.to_string()).unwrap()
    }

    const ENTRY: &str = "code = \"changed\"\npath = \"m\"\nreason = \"r\"\n";

    /// Lines come from the parser: odd headers and a multi-line string that holds a line
    /// `[[ignore]]` do not shift them.
    #[test]
    fn entry_lines_follow_the_toml() {
        let text = format!(
            "version = 2\n[[ignore]]  # old\ncode = \"changed\"\npath = \"m\"\n\
reason = \"\"\"\n[[ignore]]\n[x]\n\"\"\"\n\n[[ ignore ]]\n{ENTRY}"
        );
        let e = entries(&loaded(&text)).unwrap();
        assert_eq!(
            e.iter().map(|e| e.line).collect::<Vec<_>>(),
            [Some(2), Some(10)]
        );
        let inline =
            "version = 2\nignore = [\n  { code = \"changed\", path = \"m\", reason = \"r\" },\n\
  { code = \"changed\", path = \"n\", reason = \"r\" },\n]\n";
        let e = entries(&loaded(inline)).unwrap();
        assert_eq!(
            e.iter().map(|e| e.line).collect::<Vec<_>>(),
            [Some(3), Some(4)]
        );
    }

    /// Issue 32: the removal edits the TOML array, so the entry removed is the one asked for,
    /// whatever its header looks like, and the result parses.
    #[test]
    fn pruning_removes_the_entry_asked_for() {
        let text = format!(
            "# pins\nversion = 2\n\n# the live one\n[[ignore]]\ncode = \"changed\"\npath = \"live\"\n\
reason = \"\"\"\n[[ignore]]\n[not a table]\n\"\"\"\n\n[drafters.\"m\"]\nsnapshot = \"x\"\n\n\
[[ ignore ]]  # old\n{ENTRY}"
        );
        let pruned = without_entries(&text, &[1]).unwrap();
        let e = entries(&loaded(&pruned)).unwrap();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].path, "live");
        assert!(
            pruned.starts_with("# pins\nversion = 2\n\n# the live one\n[[ignore]]\n"),
            "{pruned}"
        );
        assert!(
            pruned.contains("[drafters.\"m\"]\nsnapshot = \"x\"\n"),
            "{pruned}"
        );
        // The first entry (whose multi-line reason has lines starting with `[`) removed: the
        // file still parses, the drafter's pin and the other entry stay.
        let pruned = without_entries(&text, &[0]).unwrap();
        let p = loaded(&pruned);
        assert_eq!(entries(&p).unwrap()[0].path, "m");
        assert!(p.file.drafters.contains_key("m"), "{pruned}");
        assert!(!pruned.contains("the live one"), "{pruned}");
        // Nothing removed: the same file (toml_edit writes `[[ ignore ]]` as `[[ignore]]`).
        assert_eq!(
            without_entries(&text, &[]).unwrap(),
            text.replace("[[ ignore ]]", "[[ignore]]")
        );
        assert_eq!(without_entries(&text, &[2]), None);
        let inline = format!(
            "version = 2\nignore = [{{ {} }}, {{ {} }}]\n",
            "code = \"changed\", path = \"a\", reason = \"r\"",
            "code = \"changed\", path = \"b\", reason = \"r\""
        );
        let pruned = without_entries(&inline, &[0]).unwrap();
        assert_eq!(entries(&loaded(&pruned)).unwrap()[0].path, "b");
    }

    /// Baseline entries go at the end of the file (inline when the file writes `ignore = [..]`)
    /// with their own reason, which loads, and are recognised as the baseline's.
    #[test]
    fn baseline_entries_load() {
        let d = Diagnostic::new(
            Code::Check(CheckCode::PinMissing),
            info(CheckCode::PinMissing),
            "x",
            "m",
        )
        .file("models/a/config.json".to_string());
        let tables = baseline_entries(&[d.clone(), d.clone()], "2026-12-04");
        assert_eq!(tables.len(), 1);
        let text =
            format!("version = 2\n\n[[ignore]]\n{ENTRY}\n[drafters.\"m\"]\nsnapshot = \"x\"\n");
        let out = with_entries(&text, tables.clone()).unwrap();
        assert!(out.starts_with(&text), "{out}");
        assert!(out.ends_with("\n\n[[ignore]]\ncode = \"pin-missing\"\npath = \"models/a/config.json\"\npointer = \"/x\"\nreason = \"baseline of 2026-12-04\"\n"), "{out}");
        let e = entries(&loaded(&out)).unwrap();
        assert!(is_baseline_reason(&e[1].reason) && !is_baseline_reason(&e[0].reason));
        let inline = "version = 2\nignore = []\n";
        let out = with_entries(inline, tables).unwrap();
        assert_eq!(entries(&loaded(&out)).unwrap().len(), 1, "{out}");
        assert_eq!(with_entries("version = 2\nignore = 3\n", Vec::new()), None);
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
    fn dates_are_iso_and_exist() {
        for good in ["2027-03-01", "2028-02-29", "2027-12-31"] {
            assert!(is_date(good), "{good}");
        }
        for bad in [
            "2027-3-01",
            "2027-13-01",
            "tomorrow",
            "2027-03-00",
            "2027-02-31",
            "2027-02-29",
            "2027-04-31",
            "2027-0a-01",
        ] {
            assert!(!is_date(bad), "{bad}");
        }
    }

    /// Impossible dates and too many wildcards are refused, naming the file, the entry and the
    /// field.
    #[test]
    fn bad_entries_are_named() {
        let bad = |entry: &str| {
            let text = format!("version = 2\n[[ignore]]\n{ENTRY}\n[[ignore]]\n{entry}");
            entries(&loaded(&text)).unwrap_err().message
        };
        let e = bad("code = \"changed\"\npath = \"m\"\nreason = \"r\"\nexpires = \"2027-02-31\"\n");
        assert!(
            e.contains("`dflash-check.toml`: [[ignore]] entry 2 has expires `2027-02-31`"),
            "{e}"
        );
        let e = bad(&format!(
            "code = \"changed\"\npath = \"models/{}Z\"\nreason = \"r\"\n",
            "*".repeat(MAX_WILDCARDS + 1)
        ));
        assert!(e.contains("entry 2 has a `path` with 33 wildcards"), "{e}");
    }

    fn entry(code: Code, path: &str, pointer: Option<&str>, expires: Option<&str>) -> Suppression {
        Suppression {
            code,
            path: path.into(),
            pointer: pointer.map(str::to_string),
            reason: "r".into(),
            expires: expires.map(str::to_string),
            line: None,
        }
    }

    fn finding(code: Code, file: &str, path: &str) -> Diagnostic {
        Diagnostic::new(code, info(CheckCode::SuppressionUnused), path, "m").file(file.to_string())
    }

    const CODES: [Code; 2] = [
        Code::Diff(crate::diagnostic::codes::DiffCode::Changed),
        Code::Diff(crate::diagnostic::codes::DiffCode::OnlyLocal),
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The index finds the entry a scan of every entry in file order finds (the matching
        /// before issue 44), for entries with and without wildcards, pointers and expiry.
        #[test]
        fn index_agrees_with_a_scan(
            raw in proptest::collection::vec(
                (0..2usize,
                 prop_oneof![Just("m/a"), Just("m/a/config.json"), Just("m/*"), Just("m/a/"), Just("**"), Just("./m/a"), Just("m/?")],
                 prop_oneof![Just(None), Just(Some("/x")), Just(Some("/y")), Just(Some(""))],
                 any::<bool>()),
                0..8,
            ),
            found in proptest::collection::vec(
                (0..2usize,
                 prop_oneof![Just("m/a/config.json"), Just("./m/a/config.json"), Just("m/b/config.json"), Just("config.json")],
                 prop_oneof![Just(""), Just("x"), Just("y")]),
                1..6,
            ),
        ) {
            let entries: Vec<Suppression> = raw
                .iter()
                .map(|(c, p, ptr, old)| entry(CODES[*c], p.trim_start_matches("./"), *ptr, old.then_some("2000-01-01")))
                .collect();
            let mut index = Index::new(&entries, |s| !s.expired("2026-12-05"));
            for (c, file, path) in &found {
                let d = finding(CODES[*c], file, path);
                let scan = entries.iter().position(|s| !s.expired("2026-12-05") && s.matches(&d));
                prop_assert_eq!(index.first_match(&d), scan);
            }
        }
    }

    /// Issue 44: a baseline of 20,000 findings took 18 s in `check` (each finding scanned every
    /// entry) and 40,000 took 92 s. Here at the caps: as many entries as the 16 MiB pin file
    /// holds at the shortest (a one-letter path and reason, inline: 36 bytes), each matching
    /// one finding, plus the most glob entries, tried against every finding. Not timed: a
    /// quadratic regression shows as a test that does not finish.
    #[test]
    fn entries_at_the_cap_apply_in_linear_time() {
        let n = (crate::config::MAX_CONFIG_BYTES / 36) as usize;
        let code = CODES[0];
        // 1,000 drafters (files), each with its share of the findings at its own pointers.
        let file = |i: usize| format!("m{}/config.json", i % 1000);
        let mut entries: Vec<Suppression> = (0..n)
            .map(|i| entry(code, &file(i), Some(&format!("/k{i}")), None))
            .collect();
        entries.extend((0..MAX_GLOB_ENTRIES).map(|i| entry(code, &format!("g{i}*"), None, None)));
        let mut findings: Vec<Diagnostic> = (0..n)
            .map(|i| finding(code, &file(i), &format!("k{i}")))
            .collect();
        let checked: Vec<String> = (0..1000).map(file).collect();
        let outcome = apply(&entries, [&mut findings], &checked, "p", "2026-12-05");
        assert!(findings.is_empty());
        assert_eq!(outcome.suppressed.len(), n);
        assert!(
            outcome.stale.is_empty(),
            "no glob entry covers a checked file"
        );
        // Pruning all of them is one pass too.
        let text: String = std::iter::once("version = 2\nignore = [\n".to_string())
            .chain(
                (0..20_000).map(|i| format!("{{code=\"changed\",path=\"m{i}\",reason=\"r\"}},\n")),
            )
            .chain(std::iter::once("]\n".to_string()))
            .collect();
        let all: Vec<usize> = (0..20_000).collect();
        let pruned = without_entries(&text, &all).unwrap();
        assert!(
            !pruned.contains("code"),
            "{}",
            &pruned[..200.min(pruned.len())]
        );
        assert_eq!(entry_lines(&text).len(), 20_000);
    }

    #[test]
    fn glob_entries_are_capped() {
        let globs: String = (0..=MAX_GLOB_ENTRIES)
            .map(|i| {
                format!("\n[[ignore]]\ncode = \"changed\"\npath = \"m{i}/*\"\nreason = \"r\"\n")
            })
            .collect();
        let e = entries(&loaded(&format!("version = 2\n{globs}")))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!(
                "entry {} has a wildcard in `path`",
                MAX_GLOB_ENTRIES + 1
            )),
            "{e}"
        );
        let ok: String = (0..MAX_GLOB_ENTRIES)
            .map(|i| {
                format!("\n[[ignore]]\ncode = \"changed\"\npath = \"m{i}/*\"\nreason = \"r\"\n")
            })
            .collect();
        assert_eq!(
            entries(&loaded(&format!("version = 2\n{ok}")))
                .unwrap()
                .len(),
            MAX_GLOB_ENTRIES
        );
    }
}
