//! Choosing the authority when the user named none: by evidence, never by a folder name alone.
//!
//! A drafter config is matched to the built-in snapshots by its fingerprint (architecture,
//! hidden size, target layer count, vocabulary). Two published drafters can share a fingerprint
//! (z-lab's Qwen3.5-27B and Qwen3.6-27B drafters do), and the incident this tool exists for is
//! closer to the wrong one (3 errors against Qwen3.5, 5 against its real Qwen3.6 authority), so
//! "fewest differences" would fix it into the wrong config. The candidates are narrowed by
//! evidence only:
//!
//! 1. the target's identity (`--target`, a pin's target, a model card, a launch command): only
//!    snapshots drafted for that target stay;
//! 2. exact equality in every field that matters (no error-level difference): a config equal
//!    to exactly one candidate has found its authority (a config fixed against a snapshot
//!    passes again, in any folder).
//!
//! Otherwise the choice is [`Choice::Ambiguous`]: callers report against every candidate and
//! name the flag that picks one. The drafter's folder name and `_name_or_path` are shown as a
//! hint, and never decide.

use std::path::Path;

use super::builtin::{self, KnownTarget, Snapshot, SNAPSHOTS};
use super::{Authority, SnapshotAuthority};
use crate::config::{self, ConfigFile};
use crate::diagnostic::Severity;
use crate::diff;
use crate::json::Node;
use crate::Error;

/// What is known of the target model's identity, to narrow the candidates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetIdentity {
    /// A repo id or a model name: `Qwen/Qwen3.6-27B`, `Qwen3.6-27B`.
    pub name: String,
    /// Where it was found, for the report: `--target fixtures/targets/Qwen3.6-27B`.
    pub from: String,
}

impl TargetIdentity {
    /// The identity of a target given as a directory: its config's `_name_or_path`, else the
    /// Hub cache folder's repo (`models--ORG--NAME/snapshots/SHA`), else the directory's name.
    pub fn of_dir(dir: &Path, shown: &str) -> Option<TargetIdentity> {
        if let Ok(cfg) = config::load(&dir.join("config.json")) {
            if let Some(name) = cfg.root().get("_name_or_path").and_then(Node::as_str) {
                if !name.is_empty() {
                    return Some(TargetIdentity {
                        name: name.to_string(),
                        from: format!("_name_or_path of --target {shown}"),
                    });
                }
            }
        }
        if let Some((repo, _sha)) = crate::hub::detect_cache_snapshot(&dir.join("config.json")) {
            return Some(TargetIdentity {
                name: repo,
                from: format!("--target {shown} (a Hub cache snapshot)"),
            });
        }
        let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let name = abs.file_name()?.to_str()?.to_string();
        // `my-Qwen3.6-27B`, `qwen3.6-27b-local`: a known target's name as a whole token of the
        // directory's name, when exactly one known target's is (two names say nothing); `known`
        // still checks the directory's facts against it.
        let spelled: Vec<&str> = builtin::known_targets()
            .into_iter()
            .map(|t| t.repo.rsplit('/').next().unwrap_or(t.repo))
            .filter(|short| !short.eq_ignore_ascii_case(&name) && holds_token(&name, short))
            .collect();
        if let [short] = spelled[..] {
            return Some(TargetIdentity {
                name: short.to_string(),
                from: format!("--target {shown} (its name holds the known target name {short})"),
            });
        }
        Some(TargetIdentity {
            name,
            from: format!("--target {shown}"),
        })
    }

    /// The built-in target this identity names, if any. A directory whose config contradicts
    /// the known target's facts is not that target, whatever it is called.
    pub fn known(&self, facts: Option<&config::TargetFacts>) -> Option<&'static KnownTarget> {
        let wanted = self.name.trim_end_matches('/');
        let last = wanted.rsplit('/').next().unwrap_or(wanted);
        let target = builtin::known_targets().into_iter().find(|t| {
            let short = t.repo.rsplit('/').next().unwrap_or(t.repo);
            t.repo.eq_ignore_ascii_case(wanted) || short.eq_ignore_ascii_case(last)
        })?;
        let agrees = facts.is_none_or(|f| {
            let same = |mine: Option<u64>, known: u64| mine.is_none_or(|m| m == known);
            same(f.num_hidden_layers, target.num_hidden_layers)
                && same(f.hidden_size, target.hidden_size)
                && same(f.vocab_size, target.vocab_size)
        });
        agrees.then_some(target)
    }
}

/// Whether `name` holds `token` (ASCII case ignored) as a whole token: at the start or after a
/// separator (`-`, `_`, `.`, space, `@`, `+`), and at the end or before one. `Qwen3.6-27B` is a
/// token of `my-Qwen3.6-27B` and `qwen3.6-27b-local`, not of `Qwen3.6-27B0` or `xQwen3.6-27B`.
fn holds_token(name: &str, token: &str) -> bool {
    let (name, token) = (name.to_ascii_lowercase(), token.to_ascii_lowercase());
    let separator =
        |c: Option<char>| c.is_none_or(|c| matches!(c, '-' | '_' | '.' | ' ' | '@' | '+'));
    name.match_indices(&token).any(|(at, _)| {
        separator(name[..at].chars().next_back())
            && separator(name[at + token.len()..].chars().next())
    })
}

/// Several published drafters of the drafter's shape, none equal to it in every field that
/// matters.
#[derive(Debug, Clone)]
pub struct Ambiguity {
    pub candidates: Vec<&'static Snapshot>,
    /// The error-level differing fields against each candidate, in the candidates' order.
    pub differing: Vec<Vec<String>>,
    /// `hidden_size 5120, num_target_layers 64, vocab_size 248320`.
    pub fingerprint: String,
    /// The snapshot the folder name or `_name_or_path` points at, and why: a hint only.
    pub hint: Option<(&'static Snapshot, String)>,
}

impl Ambiguity {
    /// The flags that pick one candidate, for messages: the target first (evidence), then the
    /// snapshot itself.
    pub fn pick_flags(&self) -> String {
        let first = self.hint.as_ref().map_or(self.candidates[0], |(s, _)| *s);
        let targets: Vec<String> = self
            .candidates
            .iter()
            .map(|s| format!("--target hf://{}", s.target.repo))
            .collect();
        format!(
            "{} (the target the drafter serves, or its directory), or --snapshot {} (the authority itself)",
            targets.join(" or "),
            first.repo
        )
    }

    /// One sentence: what matched, and that none is equal.
    pub fn describe(&self) -> String {
        let names: Vec<&str> = self.candidates.iter().map(|s| s.repo).collect();
        format!(
            "matches {} built-in snapshots by {} ({}), and is equal to none of them in every field that matters",
            names.len(),
            self.fingerprint,
            names.join(", ")
        )
    }

    /// The error for a command that needs one authority (`fix`).
    pub fn to_error(&self, local: &ConfigFile) -> Error {
        Error::new(format!(
            "no single authority for `{}`: it {}",
            local.path.display(),
            self.describe()
        ))
        .with_hint(format!("pick one: {}", self.pick_flags()))
    }
}

/// The outcome of choosing.
#[derive(Debug, Clone)]
pub enum Choice {
    /// One authority, with why it was chosen in `matched_by`.
    One(Box<Authority>),
    /// Several candidates and no evidence to pick one.
    Ambiguous(Ambiguity),
    /// Nothing of the drafter's shape is built in (or none for the named target).
    NoMatch(Error),
}

/// Chooses the built-in snapshot that is `local`'s authority.
pub fn choose(local: &ConfigFile, target: Option<&TargetIdentity>) -> Choice {
    choose_with_facts(local, target, None)
}

/// [`choose`], with the target directory's facts (a directory contradicting a known target's
/// facts does not identify it).
pub fn choose_with_facts(
    local: &ConfigFile,
    target: Option<&TargetIdentity>,
    facts: Option<&config::TargetFacts>,
) -> Choice {
    let root = local.root();
    let fp = fingerprint_text(root);
    let mut candidates = candidates(local);
    let hint = name_hint(local, &candidates);
    let mut evidence = vec![fp.clone()];
    if let Some(identity) = target {
        if let Some(known) = identity.known(facts) {
            let before = candidates.len();
            candidates.retain(|s| std::ptr::eq(s.target, known));
            if candidates.is_empty() && before > 0 {
                return Choice::NoMatch(
                    Error::new(format!(
                        "no built-in snapshot of a drafter for {} has the shape of `{}` ({fp}; target from {})",
                        known.repo,
                        local.path.display(),
                        identity.from
                    ))
                    .with_hint(
                        "check --target, or name the authority: --from-hub ORG/NAME[@REV], --against FILE or --snapshot REPO",
                    ),
                );
            }
            if before > candidates.len() {
                evidence.push(format!("target {} (from {})", known.repo, identity.from));
            }
        }
    }
    match candidates.len() {
        0 => Choice::NoMatch(no_match(local, &fp)),
        1 => Choice::One(Box::new(
            candidates[0].authority(Some(evidence.join("; ") + &hint_note(&hint))),
        )),
        _ => {
            let found: Vec<(&'static Snapshot, Vec<String>)> = candidates
                .iter()
                .map(|&s| (s, differing(local, s)))
                .collect();
            let exact: Vec<&'static Snapshot> = found
                .iter()
                .filter(|c| c.1.is_empty())
                .map(|c| c.0)
                .collect();
            match exact.first() {
                Some(first) => {
                    let others: Vec<&str> = candidates
                        .iter()
                        .filter(|s| !exact.iter().any(|e| std::ptr::eq(*e, **s)))
                        .map(|s| s.repo)
                        .collect();
                    let why = if others.is_empty() {
                        format!(
                            "{fp}; equal in every field that matters to all {} candidates",
                            exact.len()
                        )
                    } else {
                        format!(
                            "{fp}; equal in every field that matters to this snapshot, not to {}",
                            others.join(", ")
                        )
                    };
                    Choice::One(Box::new(first.authority(Some(why))))
                }
                None => Choice::Ambiguous(Ambiguity {
                    candidates,
                    differing: found.into_iter().map(|c| c.1).collect(),
                    fingerprint: fp,
                    hint,
                }),
            }
        }
    }
}

/// Whether `local` says it is a published drafter of its target: a snapshot of its shape,
/// drafted for the target `target` names, whose name the drafter's directory or
/// `_name_or_path` carries (`Qwen3.6-27B-DFlash` beside `--target Qwen/Qwen3.6-27B`). Only then
/// does `lint --target` compare it with that snapshot: another trainer's drafter for the same
/// target (other layer ids, another block size) is not wrong for differing from z-lab's.
pub fn claims_published(local: &ConfigFile, target: Option<&TargetIdentity>) -> bool {
    let Some(known) = target.and_then(|t| t.known(None)) else {
        return false;
    };
    let pool: Vec<&'static Snapshot> = candidates(local)
        .into_iter()
        .filter(|s| std::ptr::eq(s.target, known))
        .collect();
    name_hint(local, &pool).is_some()
}

/// The built-in snapshots of `local`'s shape, each with whether `local` equals it in every
/// field that matters: what `lint` (which has no authority) can say about published configs.
pub fn published(local: &ConfigFile) -> Vec<(&'static Snapshot, bool)> {
    candidates(local)
        .into_iter()
        .map(|s| (s, differing(local, s).is_empty()))
        .collect()
}

/// The built-in DFlash snapshots of `local`'s fingerprint. Each snapshot is parsed once per
/// run; whether `local` differs from one ([`differing`]) is asked only where it decides
/// something: a full comparison per candidate was a fifth of choosing for a drafter with one
/// candidate, which needs none (issue 44).
fn candidates(local: &ConfigFile) -> Vec<&'static Snapshot> {
    let root = local.root();
    let is_dflash = config::architectures(root)
        .iter()
        .any(|a| a == "DFlashDraftModel");
    if !is_dflash {
        return Vec::new();
    }
    SNAPSHOTS
        .iter()
        .filter(|snap| {
            let theirs = snap.config_file().root();
            FINGERPRINT
                .iter()
                .all(|key| match (root.get(key), theirs.get(key)) {
                    (Some(a), Some(b)) => a.same_value(b),
                    _ => false,
                })
        })
        .collect()
}

/// The fields (JSON paths) where `local` differs from `snap` at error level.
fn differing(local: &ConfigFile, snap: &Snapshot) -> Vec<String> {
    diff::compare(local.root(), snap.config_file().root())
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.path.to_string())
        .collect()
}

fn no_match(local: &ConfigFile, fp: &str) -> Error {
    let all: Vec<&'static Snapshot> = SNAPSHOTS.iter().collect();
    let named = name_hint(local, &all);
    let mut hint = String::from(
        "name one: --from-hub ORG/NAME[@REV], --against FILE, or --snapshot REPO (see `dflash-check snapshots`)",
    );
    if let Some((snap, why)) = named {
        hint = format!(
            "the {why} suggests {}, but its shape differs; to compare anyway: --snapshot {}",
            snap.repo, snap.repo
        );
    }
    Error::new(format!(
        "no authority for `{}`: it matches no built-in snapshot ({fp})",
        local.path.display()
    ))
    .with_hint(hint)
}

fn hint_note(hint: &Option<(&'static Snapshot, String)>) -> String {
    match hint {
        Some((s, why)) => format!(" (the {why} agrees: {})", s.repo),
        None => String::new(),
    }
}

/// The fields that identify which drafter a config is for.
const FINGERPRINT: &[&str] = &["hidden_size", "num_target_layers", "vocab_size"];

/// `hidden_size 5120, num_target_layers 64, vocab_size 248320`.
pub fn fingerprint_text(root: &Node) -> String {
    FINGERPRINT
        .iter()
        .map(|key| {
            let value = root.get(key).map_or("absent".to_string(), Node::to_compact);
            format!("{key} {value}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The snapshot among `pool` that the drafter's directory (or a parent) or `_name_or_path`
/// names, and which name said so.
fn name_hint(
    local: &ConfigFile,
    pool: &[&'static Snapshot],
) -> Option<(&'static Snapshot, String)> {
    let find = |hint: &str| {
        pool.iter()
            .copied()
            .find(|s| s.name().eq_ignore_ascii_case(hint) || s.repo.eq_ignore_ascii_case(hint))
    };
    // The hints in order: the name the config was saved from, its last part, then the names
    // of the directory and three above it. The reason is written only for the one that matches.
    if let Some(name) = local.root().get("_name_or_path").and_then(Node::as_str) {
        let last = name.rsplit('/').next();
        if let Some(s) = find(name).or_else(|| last.and_then(find)) {
            return Some((s, format!("_name_or_path `{name}`")));
        }
    }
    let dir = absolute(&local.dir());
    for name in last_names(&dir, 4).into_iter().flatten() {
        // A Hub cache folder is named models--ORG--NAME.
        let name = match name.strip_prefix("models--") {
            Some(n) => std::borrow::Cow::Owned(n.replacen("--", "/", 1)),
            None => std::borrow::Cow::Borrowed(name),
        };
        if let Some(s) = find(&name) {
            return Some((s, format!("directory name `{name}`")));
        }
    }
    None
}

/// The names of `path` and of the folders above it, `count` of them from the end (`None` for
/// the root, or a name that is not UTF-8): `path.ancestors()`' file names, read off the text
/// of a plain Unix path with no component parsing (3,000 instructions an unpinned drafter in
/// `check`, issue 44), and through `ancestors` otherwise.
fn last_names(path: &std::path::Path, count: usize) -> Vec<Option<&str>> {
    match path.to_str() {
        Some(text) if path.is_absolute() && crate::config::plain_unix_text(path) => text
            .rsplit('/')
            .take(count)
            .map(|n| Some(n).filter(|n| !n.is_empty()))
            .collect(),
        _ => path
            .ancestors()
            .take(count)
            .map(|a| a.file_name().and_then(|n| n.to_str()))
            .collect(),
    }
}

/// `path` made absolute against the working directory ([`crate::config::working_dir`], read
/// once a run: `check` asked the kernel for it for every unpinned drafter, issue 44). As
/// `std::path::absolute` when the directory cannot be read: the path as it is.
fn absolute(path: &std::path::Path) -> std::path::PathBuf {
    let joined = match crate::config::working_dir() {
        Some(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    // Absolute and plain already: nothing `std::path::absolute` would fold (it rebuilds the
    // path from its components).
    if joined.is_absolute() && crate::config::plain_unix_text(&joined) {
        return joined;
    }
    std::path::absolute(&joined).unwrap_or(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names read off a plain path's text are `ancestors`' file names.
    #[test]
    fn last_names_are_the_ancestors_names() {
        for p in [
            "/a/b/c/d/e",
            "/a/b",
            "/a",
            "/",
            "/models--org--name/snap",
            "/x y/ünï/z",
        ] {
            let path = std::path::Path::new(p);
            let slow: Vec<Option<&str>> = path
                .ancestors()
                .take(4)
                .map(|a| a.file_name().and_then(|n| n.to_str()))
                .collect();
            assert_eq!(last_names(path, 4), slow, "{p}");
        }
    }

    fn parse(text: &str, dir: &str) -> ConfigFile {
        config::parse(Path::new(&format!("{dir}/config.json")), text.as_bytes()).unwrap()
    }

    fn snapshot_text(repo: &str) -> &'static str {
        Snapshot::find(repo).unwrap().config
    }

    #[test]
    fn a_known_target_name_is_a_whole_token_of_the_directory_name() {
        for (name, holds) in [
            ("my-Qwen3.6-27B", true),
            ("qwen3.6-27b-local", true),
            ("Qwen3.6-27B", true),
            ("models_QWEN3.6-27B_fp8", true),
            ("xQwen3.6-27B", false),
            ("Qwen3.6-27B0", false),
            ("Qwen3.6-27", false),
        ] {
            assert_eq!(holds_token(name, "Qwen3.6-27B"), holds, "{name}");
        }
        let tmp = tempfile::tempdir().unwrap();
        for (dir, want) in [
            ("my-Qwen3.6-27B", Some("Qwen3.6-27B")),
            ("qwen3.6-27b-local", Some("Qwen3.6-27B")),
            // Two known names: nothing is inferred from the name.
            ("Qwen3.5-27B-vs-Qwen3.6-27B", None),
        ] {
            let path = tmp.path().join(dir);
            std::fs::create_dir(&path).unwrap();
            let id = TargetIdentity::of_dir(&path, dir).unwrap();
            match want {
                Some(short) => {
                    assert_eq!(id.name, short);
                    assert!(
                        id.from.contains("its name holds the known target name"),
                        "{}",
                        id.from
                    );
                    assert_eq!(id.known(None).unwrap().repo, "Qwen/Qwen3.6-27B");
                }
                None => assert!(id.known(None).is_none(), "{dir}: {id:?}"),
            }
        }
    }

    #[test]
    fn a_snapshot_itself_is_chosen_in_any_folder() {
        for s in SNAPSHOTS {
            let local = parse(s.config, "/tmp/models/my-drafter");
            match choose(&local, None) {
                Choice::One(a) => assert_eq!(a.id, s.repo),
                other => panic!("{}: {other:?}", s.repo),
            }
        }
    }

    #[test]
    fn a_near_miss_of_two_snapshots_is_ambiguous_whatever_the_folder() {
        let text = snapshot_text("z-lab/Qwen3.6-27B-DFlash").replace("248070", "248064");
        for dir in ["/tmp/models/my-drafter", "/tmp/models/Qwen3.6-27B-DFlash"] {
            let local = parse(&text, dir);
            match choose(&local, None) {
                Choice::Ambiguous(a) => assert_eq!(a.candidates.len(), 2),
                other => panic!("{dir}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_target_narrows_the_candidates() {
        let text = snapshot_text("z-lab/Qwen3.6-27B-DFlash").replace("248070", "248064");
        let local = parse(&text, "/tmp/models/my-drafter");
        let identity = TargetIdentity {
            name: "Qwen/Qwen3.6-27B".into(),
            from: "--target".into(),
        };
        match choose(&local, Some(&identity)) {
            Choice::One(a) => assert_eq!(a.id, "z-lab/Qwen3.6-27B-DFlash"),
            other => panic!("{other:?}"),
        }
    }
}
