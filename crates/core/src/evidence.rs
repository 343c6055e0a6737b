//! The evidence behind every engine claim, as data (issue 22).
//!
//! A rule's explanation says what vLLM, SGLang, a trainer or a converter does; `evidence/
//! evidence.toml` says where that can be checked: lines of a public repository at a full commit
//! (identified by location and by the sha256 of the whitespace-normalised lines, never quoted),
//! the absence of an identifier in named files, or a public issue thread. Codes that are the
//! tool's own judgement say so instead, and what an engine claim still lacks is listed as
//! pending. The file is kept apart from the families' `CodeInfo` so the evidence can be
//! re-verified (`scripts/verify-evidence.py`) and moved to a new engine release without touching
//! the rules. It is compiled in, already parsed: `build.rs` turns it into static tables, so
//! `explain` prints it with no file to find at run time and no run parses it (issue 44).

use std::sync::OnceLock;

// `EVIDENCE` and `CODES`, written by `crates/core/build.rs` from `evidence/evidence.toml`.
include!(concat!(env!("OUT_DIR"), "/evidence.rs"));

/// The whole evidence file, as the build step wrote it into the binary. The file stays at the
/// repository's root (`evidence/evidence.toml`), where `scripts/verify-evidence.py`, the docs
/// and reviewers find it.
#[derive(Debug)]
pub struct Evidence {
    pub evidence: &'static [Entry],
    pub judgement: &'static [Note],
    pub pending: &'static [Note],
}

/// One piece of evidence for one code (the file's `kind`).
#[derive(Debug)]
pub enum Entry {
    /// Lines of a repository at a commit (or of a released wheel of it, `release`), and the
    /// sha256 of those lines normalised.
    Source {
        code: &'static str,
        repo: &'static str,
        path: &'static str,
        /// The full commit; absent when the entry cites a `release`.
        commit: Option<&'static str>,
        /// A PyPI release, `package==version`, read from its wheel where the tag's commit is not
        /// known (SGLang publishes none in its wheels); `path` is then the path in the wheel.
        release: Option<&'static str>,
        lines: [u32; 2],
        sha256: &'static str,
        claim: &'static str,
    },
    /// No file matching `paths` at `commit` names any of `identifiers`.
    Absence {
        code: &'static str,
        repo: &'static str,
        commit: &'static str,
        paths: &'static [&'static str],
        identifiers: &'static [&'static str],
        claim: &'static str,
    },
    /// A public issue or pull request and what it shows.
    Report {
        code: &'static str,
        url: &'static str,
        shows: &'static str,
    },
}

/// A judgement (why the code is the tool's own) or a pending part (what a claim still lacks).
#[derive(Debug)]
pub struct Note {
    pub code: &'static str,
    pub why: &'static str,
}

impl Entry {
    /// What a source or absence was read at: its commit, or its release (`package==version`).
    pub fn revision(&self) -> Option<&str> {
        match self {
            Entry::Source {
                commit, release, ..
            } => commit.or(*release),
            Entry::Absence { commit, .. } => Some(commit),
            Entry::Report { .. } => None,
        }
    }

    pub fn code(&self) -> &str {
        match self {
            Entry::Source { code, .. }
            | Entry::Absence { code, .. }
            | Entry::Report { code, .. } => code,
        }
    }

    /// What the entry shows, in the project's words.
    pub fn claim(&self) -> &str {
        match self {
            Entry::Source { claim, .. } | Entry::Absence { claim, .. } => claim,
            Entry::Report { shows, .. } => shows,
        }
    }

    /// Where to check it: `repo path@commit:a-b`, the files and identifiers searched, or a URL.
    pub fn location(&self) -> String {
        match self {
            Entry::Source {
                repo, path, lines, ..
            } => format!(
                "{repo} {path}@{}:{}-{}",
                self.revision().unwrap_or_default(),
                lines[0],
                lines[1]
            ),
            Entry::Absence {
                repo,
                commit,
                paths,
                identifiers,
                ..
            } => format!(
                "{repo}@{commit}: none of {} in {}",
                identifiers.join(", "),
                paths.join(", ")
            ),
            Entry::Report { url, .. } => url.to_string(),
        }
    }
}

/// The evidence file, compiled in (nothing is parsed at run time).
pub fn evidence() -> &'static Evidence {
    &EVIDENCE
}

/// The evidence entries of one code (`code` as `explain` names it).
pub fn for_code(code: &str) -> impl Iterator<Item = &'static Entry> + '_ {
    evidence().evidence.iter().filter(move |e| e.code() == code)
}

/// Why the code is the tool's own judgement, if it is.
pub fn judgement(code: &str) -> Option<&'static str> {
    find(evidence().judgement, code)
}

/// What the code's engine claim still lacks, if anything.
pub fn pending(code: &str) -> Option<&'static str> {
    find(evidence().pending, code)
}

fn find(notes: &'static [Note], code: &str) -> Option<&'static str> {
    notes.iter().find(|n| n.code == code).map(|n| n.why)
}

/// The code's evidence as text, for `explain` and SARIF's rule help: each claim with where to
/// check it, why the code is the tool's own judgement, and what its engine claim still lacks.
/// Empty when the evidence file says nothing of the code.
pub fn describe(code: &str) -> String {
    let mut out = String::new();
    let mut entries = for_code(code).peekable();
    if entries.peek().is_some() {
        out.push_str("Evidence:\n");
        for e in entries {
            out.push_str(&format!("  - {}\n    {}\n", e.claim(), e.location()));
        }
    }
    if let Some(why) = judgement(code) {
        out.push_str(&format!("Judgement (no engine claim): {why}\n"));
    }
    if let Some(why) = pending(code) {
        out.push_str(&format!("Evidence pending: {why}\n"));
    }
    out
}

/// The code's provenance in one line, rendered from the evidence file (the only place a rule's
/// source is written): the location of each entry (`repo path@commit:a-b`, an absence, a
/// report's URL), else the judgement that makes the code the tool's own, else what is pending.
/// `Diagnostic::source`, `explain`'s "Source:" line, SARIF and docs/rules.md show it. Each
/// code's line is rendered the first time it is asked for and kept: a run pays for the codes
/// it raises, not for every code (issue 44).
pub fn source_text(code: &str) -> &'static str {
    static TEXTS: [OnceLock<String>; CODES.len()] = [const { OnceLock::new() }; CODES.len()];
    match CODES.binary_search(&code) {
        Ok(i) => TEXTS[i].get_or_init(|| render_source(code)).as_str(),
        Err(_) => "",
    }
}

fn render_source(code: &str) -> String {
    let locations: Vec<String> = for_code(code).map(Entry::location).collect();
    if !locations.is_empty() {
        return locations.join("; ");
    }
    match (judgement(code), pending(code)) {
        (Some(_), _) => "dflash-check's own judgement (no engine claim)".to_string(),
        (None, Some(why)) => format!("evidence pending: {why}"),
        (None, None) => String::new(),
    }
}

/// The code's evidence as JSON, for `explain --format json`: the same entries `describe` prints
/// (each with its kind, claim, location, and the fields a script verifies: repository, path,
/// commit or release, lines and hash, or the report's URL), the judgement and the pending part.
pub fn json(code: &str) -> serde_json::Value {
    let entries: Vec<serde_json::Value> = for_code(code)
        .map(|e| {
            let mut v = serde_json::json!({
                "claim": e.claim(),
                "location": e.location(),
            });
            let extra = match e {
                Entry::Source {
                    repo,
                    path,
                    commit,
                    release,
                    lines,
                    sha256,
                    ..
                } => serde_json::json!({"kind": "source", "repo": repo, "path": path,
                    "commit": commit, "release": release, "lines": lines, "sha256": sha256}),
                Entry::Absence {
                    repo,
                    commit,
                    paths,
                    identifiers,
                    ..
                } => serde_json::json!({"kind": "absence", "repo": repo, "commit": commit,
                    "paths": paths, "identifiers": identifiers}),
                Entry::Report { url, .. } => serde_json::json!({"kind": "report", "url": url}),
            };
            if let (Some(v), serde_json::Value::Object(extra)) = (v.as_object_mut(), extra) {
                v.extend(extra);
            }
            v
        })
        .collect();
    serde_json::json!({
        "entries": entries,
        "judgement": judgement(code),
        "pending": pending(code),
    })
}

/// A commit shortened to 12 digits for the table; a release (`package==version`) as it is.
pub fn short(rev: &str) -> &str {
    if rev.contains("==") {
        rev
    } else {
        &rev[..12.min(rev.len())]
    }
}
