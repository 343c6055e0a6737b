//! An authority from the Hugging Face Hub: a drafter repo's `config.json` at a resolved commit.
//! The fetching itself (settings, cache, freshness, errors) is `crate::hub`; this module turns
//! its answer into an [`Authority`] that says which commit and how fresh, and fetches a target
//! model's small files (config, tokenizer tables) into the cache for token decoding.

use std::path::PathBuf;

use super::{Authority, AuthorityKind};
use crate::config;
use crate::hub::{self, Freshness, HubError, HubFile, HubSettings, RepoRef};
use crate::Result;

/// Fetches `repo`'s `config.json` and makes it the authority.
pub fn load(
    settings: &HubSettings,
    repo: &RepoRef,
    matched_by: Option<String>,
) -> Result<Authority> {
    load_with(settings, repo, matched_by, |e| e)
}

/// [`load`] for a repository the user named with `--from-hub`: when it cannot be had, the hint
/// also names the built-in snapshot of the same repository, if there is one.
pub fn load_named(
    settings: &HubSettings,
    repo: &RepoRef,
    matched_by: Option<String>,
) -> Result<Authority> {
    load_with(settings, repo, matched_by, |e| {
        suggest_builtin_snapshot(e, &repo.repo)
    })
}

fn load_with(
    settings: &HubSettings,
    repo: &RepoRef,
    matched_by: Option<String>,
    on_error: impl FnOnce(HubError) -> HubError,
) -> Result<Authority> {
    let file = hub::fetch_file(settings, repo, "config.json").map_err(on_error)?;
    let label = format!("{}@{}/config.json", file.repo, short(&file.sha));
    let parsed = config::parse(std::path::Path::new(&label), &file.bytes)?;
    let (kind, provenance) = describe(&file);
    let requested = repo.revision.clone().unwrap_or_else(|| "main".into());
    Ok(Authority {
        kind,
        id: file.repo.clone(),
        revision: Some(requested),
        sha: Some(file.sha.clone()),
        provenance,
        matched_by,
        config: parsed,
        bytes: file.bytes.into(),
        target: None,
        tokens: None,
        cli_args: vec!["--from-hub".into(), format!("{}@{}", file.repo, file.sha)],
    })
}

/// When the Hub could not be had (offline and not cached, or no answer) and a snapshot of the
/// same repository is compiled in, the hint names `--snapshot REPO`: the one thing that works
/// with no network and no cache.
fn suggest_builtin_snapshot(err: HubError, repo: &str) -> HubError {
    let offline_miss = err.kind == hub::HubErrorKind::NotInCache;
    let Some(snapshot) = super::builtin::Snapshot::find(repo) else {
        return err;
    };
    if !(offline_miss || err.is_no_answer()) {
        return err;
    }
    let builtin = format!(
        "or compare with the built-in snapshot of this repository: `--snapshot {}` (recorded, not the live Hub)",
        snapshot.repo
    );
    let hint = match &err.hint {
        Some(h) => format!("{h}; {builtin}"),
        None => builtin,
    };
    err.with_hint(hint)
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

fn describe(file: &HubFile) -> (AuthorityKind, String) {
    match &file.freshness {
        Freshness::Hub => (
            AuthorityKind::Hub,
            format!("asked the Hub now: {} at `{}` is commit {}", file.repo, file.revision, file.sha),
        ),
        Freshness::Pinned => (
            AuthorityKind::Cache,
            format!(
                "commit {} read from the local Hub cache without a request (a commit never changes)",
                file.sha
            ),
        ),
        Freshness::Cache { reason } => (
            AuthorityKind::Cache,
            format!(
                "cached copy of commit {} for `{}` — {reason}; the branch may have moved since",
                file.sha, file.revision
            ),
        ),
    }
}

/// The drafter repo's model card front matter names its target (`base_model: Qwen/Qwen3.6-27B`).
/// `Ok(None)` when the repo has no card or the card names no target; an error when the card
/// could not be had (the Hub gave no answer and it is not cached, gated, ...).
pub fn base_model(
    settings: &HubSettings,
    repo: &RepoRef,
    sha: &str,
) -> std::result::Result<Option<String>, HubError> {
    let at_sha = RepoRef {
        repo: repo.repo.clone(),
        revision: Some(sha.to_string()),
    };
    let card = hub::fetch_optional_file(settings, &at_sha, "README.md")?;
    Ok(card.and_then(|c| parse_base_model(&String::from_utf8_lossy(&c.bytes))))
}

/// Reads `base_model:` from YAML front matter: `base_model: X` or a one-item list.
pub fn parse_base_model(card: &str) -> Option<String> {
    let rest = card.strip_prefix("---")?;
    let front = &rest[..rest.find("\n---")?];
    let mut lines = front.lines();
    while let Some(line) = lines.next() {
        let Some(value) = line.strip_prefix("base_model:") else {
            continue;
        };
        let value = value.trim().trim_matches(['"', '\'']);
        if !value.is_empty() {
            return Some(value.to_string());
        }
        let item = lines.next()?.trim().strip_prefix("- ")?;
        return Some(item.trim().trim_matches(['"', '\'']).to_string());
    }
    None
}

/// A target model's small files, fetched into the cache at one commit.
pub struct HubTarget {
    pub repo: String,
    pub sha: String,
    /// The cache snapshot directory holding the fetched files.
    pub dir: PathBuf,
    pub freshness: Freshness,
}

/// Fetches the target's `config.json` and `tokenizer_config.json` (small); `tokenizer.json`
/// (11–30 MB) only when `need_vocab` says the added-token tables are not enough.
pub fn fetch_target(settings: &HubSettings, repo: &RepoRef, need_vocab: bool) -> Result<HubTarget> {
    let target = fetch_target_config(settings, repo)?;
    fetch_target_file(settings, &target, "tokenizer_config.json")?;
    if need_vocab {
        fetch_target_file(settings, &target, "tokenizer.json")?;
    }
    Ok(target)
}

/// Fetches the target's `config.json`, which fixes the commit every other file is read at.
pub fn fetch_target_config(
    settings: &HubSettings,
    repo: &RepoRef,
) -> std::result::Result<HubTarget, HubError> {
    let config = hub::fetch_file(settings, repo, "config.json")?;
    let dir = config
        .path
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    Ok(HubTarget {
        repo: config.repo,
        sha: config.sha,
        dir,
        freshness: config.freshness,
    })
}

/// Fetches one more file of `target` into its snapshot directory, at the target's commit (so
/// two files never come from two revisions); `Ok(false)` when the repo has no such file.
pub fn fetch_target_file(
    settings: &HubSettings,
    target: &HubTarget,
    filename: &str,
) -> std::result::Result<bool, HubError> {
    let at_sha = RepoRef {
        repo: target.repo.clone(),
        revision: Some(target.sha.clone()),
    };
    Ok(hub::fetch_optional_file(settings, &at_sha, filename)?.is_some())
}

#[cfg(test)]
mod tests {
    use super::parse_base_model;

    #[test]
    fn base_model_from_front_matter() {
        assert_eq!(
            parse_base_model("---\nlicense: mit\nbase_model: Qwen/Qwen3.6-27B\n---\n# x")
                .as_deref(),
            Some("Qwen/Qwen3.6-27B")
        );
        assert_eq!(
            parse_base_model("---\nbase_model:\n- Qwen/Qwen3-8B\ntags: []\n---\n").as_deref(),
            Some("Qwen/Qwen3-8B")
        );
        assert_eq!(parse_base_model("# no front matter\nbase_model: x"), None);
    }
}
