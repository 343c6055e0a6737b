//! The files of a Hub repo at its current commit, listed as llama.cpp lists them for `-hf`
//! (`common/hf-cache.cpp` at 0c1e570, `get_repo_commit` and `get_repo_files`):
//! `GET /api/models/{repo}/refs` resolves `main` (else the first branch) to a commit sha, then
//! `GET /api/models/{repo}/tree/{sha}?recursive=true` lists its files, in the server's order
//! (the order llama.cpp picks the first match in). Like llama.cpp, only the first page of the
//! tree is read.
//!
//! Both answers are input: read up to a cap ([`MAX_REFS_BYTES`], [`MAX_LISTING_BYTES`]), the
//! listing's entries counted ([`MAX_LISTING_ENTRIES`]), anything else refused as a
//! `BadResponse` or `TooLarge` [`HubError`]; an entry whose path could escape the repo is
//! skipped, as llama.cpp skips it. The branch's sha is written to the standard `refs/<branch>`;
//! the listing is cached per sha at `models--ORG--NAME/.dflash-check/tree/<sha>.json` (a commit
//! never changes), so a warm run sends one request (the refs) and an offline run none.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use crate::net::{read_capped, BodyError, Follow, Method};

use super::cache::{write_atomic, RepoCache};
use super::error::{repo_not_found, status_error, transport, HubError, HubErrorKind, Target};
use super::fetch::Freshness;
use super::http::{Http, RETRIES};
use super::repo_ref::{is_commit_sha, RepoRef};
use super::settings::{HubSettings, SettingSource};

/// Largest `/refs` answer read (a repo's branches and tags).
pub const MAX_REFS_BYTES: u64 = 1 << 20;
/// Largest tree listing read: a GGUF repo lists tens of files; 16 MiB is some 100,000 entries.
pub const MAX_LISTING_BYTES: u64 = 16 << 20;
/// Most entries a listing may have.
pub const MAX_LISTING_ENTRIES: usize = 100_000;

/// One file of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoFile {
    pub path: String,
    /// The file's size (the LFS object's for an LFS file).
    pub size: u64,
}

/// A repo's files at one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoListing {
    pub repo: String,
    /// The branch the sha was resolved from.
    pub branch: String,
    pub sha: String,
    pub files: Vec<RepoFile>,
    pub freshness: Freshness,
    /// Requests sent (0 offline or from the cache).
    pub requests: usize,
    /// Response body bytes received.
    pub body_bytes: u64,
}

impl RepoListing {
    pub fn paths(&self) -> Vec<&str> {
        self.files.iter().map(|f| f.path.as_str()).collect()
    }

    pub fn size_of(&self, path: &str) -> Option<u64> {
        self.files.iter().find(|f| f.path == path).map(|f| f.size)
    }
}

/// Where the listing of `repo` at `sha` is cached.
pub fn listing_cache_path(cache_dir: &Path, repo: &str, sha: &str) -> PathBuf {
    RepoCache::new(cache_dir, repo)
        .root()
        .join(".dflash-check")
        .join("tree")
        .join(format!("{sha}.json"))
}

fn target<'a>(settings: &'a HubSettings, repo: &'a str, rev: &'a str, what: &'a str) -> Target<'a> {
    Target {
        endpoint: &settings.endpoint.value,
        repo,
        revision: rev,
        filename: what,
        timeout: settings.timeout.value,
        attempts: RETRIES + 1,
    }
}

fn bad(t: &Target<'_>, what: impl std::fmt::Display) -> HubError {
    HubError::new(
        HubErrorKind::BadResponse,
        format!("the Hub answered for {} with {what}", t.what()),
    )
}

/// `GET url` under the one deadline, redirects kept on the endpoint, the body read up to `cap`.
fn get_json(
    http: &Http<'_>,
    t: &Target<'_>,
    url: &str,
    cap: u64,
    requests: &mut usize,
) -> Result<Vec<u8>, HubError> {
    http.with_retries(requests, || {
        http.run(async {
            let mut resp = http.send(Method::GET, url, None, Follow::SameOrigin).await?;
            let status = resp.status().as_u16();
            if status != 200 {
                let err = status_error(t, status, resp.headers());
                // An API path that is not found names no file: the repo is what is missing.
                return Err(match err.kind {
                    HubErrorKind::EntryNotFound => repo_not_found(t),
                    _ => err,
                });
            }
            read_capped(&mut resp, cap, |_| {}).await.map_err(|e| match e {
                BodyError::Transport(e) => transport(&e, t),
                BodyError::Announced(n) | BodyError::OverCap(n) => HubError::new(
                    HubErrorKind::TooLarge,
                    format!(
                        "the Hub's answer for {} is over the {cap}-byte limit ({n} bytes); refusing it",
                        t.what()
                    ),
                )
                .with_hint("a repo whose file list is this large is not a GGUF model repo; name the file with --hf-file"),
            })
        })
        .into()
    })
}

/// The branch llama.cpp resolves: `main`, else the first branch with a valid commit.
fn branch_of(t: &Target<'_>, body: &[u8]) -> Result<(String, String), HubError> {
    let json: Value = serde_json::from_slice(body)
        .map_err(|e| bad(t, format_args!("JSON that does not parse ({e})")))?;
    let Some(branches) = json.get("branches").and_then(Value::as_array) else {
        return Err(bad(t, "no `branches` list"));
    };
    let valid = branches.iter().filter_map(|b| {
        let name = b.get("name")?.as_str()?;
        let sha = b.get("targetCommit")?.as_str()?;
        (is_commit_sha(sha) && super::repo_ref::check_revision(name, name).is_ok())
            .then(|| (name.to_string(), sha.to_ascii_lowercase()))
    });
    let all: Vec<(String, String)> = valid.take(10_000).collect();
    all.iter()
        .find(|(n, _)| n == "main")
        .or(all.first())
        .cloned()
        .ok_or_else(|| bad(t, "no branch with a valid commit"))
}

/// The files of a tree answer, checked: a JSON array of at most [`MAX_LISTING_ENTRIES`]
/// entries; `type: file` entries with a safe path are kept, in order.
fn files_of(t: &Target<'_>, body: &[u8]) -> Result<Vec<RepoFile>, HubError> {
    let json: Value = serde_json::from_slice(body)
        .map_err(|e| bad(t, format_args!("JSON that does not parse ({e})")))?;
    let Some(items) = json.as_array() else {
        return Err(bad(t, "a listing that is not a JSON array"));
    };
    if items.len() > MAX_LISTING_ENTRIES {
        return Err(HubError::new(
            HubErrorKind::TooLarge,
            format!(
                "the Hub listed {} entries for {}, over the limit of {MAX_LISTING_ENTRIES}; refusing it",
                items.len(),
                t.what()
            ),
        )
        .with_hint("a repo this large is not a GGUF model repo; name the file with --hf-file"));
    }
    Ok(items
        .iter()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("file"))
        .filter_map(|i| {
            let path = i.get("path")?.as_str()?;
            super::fetch::check_filename(&t.repo, path).ok()?;
            let size = i
                .get("lfs")
                .and_then(|l| l.get("size"))
                .or_else(|| i.get("size"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            Some(RepoFile {
                path: path.to_string(),
                size,
            })
        })
        .collect())
}

fn store(path: &Path, files: &[RepoFile]) -> Result<(), HubError> {
    let json: Vec<Value> = files
        .iter()
        .map(|f| serde_json::json!({"type": "file", "path": f.path, "size": f.size}))
        .collect();
    let text = serde_json::to_vec(&json).unwrap_or_default();
    write_atomic(path, &text).map_err(|e| {
        HubError::new(
            HubErrorKind::Io,
            format!("cannot write `{}`: {e}", path.display()),
        )
        .with_hint("check the permissions of the Hub cache, or choose another with --cache-dir / HF_HUB_CACHE")
    })
}

/// The cached listing at `sha`, if it is there and reads back.
fn cached(settings: &HubSettings, repo: &str, sha: &str) -> Option<Vec<RepoFile>> {
    let path = listing_cache_path(&settings.cache_dir.value, repo, sha);
    let body = fs::read(path).ok()?;
    let t = target(settings, repo, sha, "the file list");
    files_of(&t, &body).ok()
}

fn offline_source(settings: &HubSettings) -> String {
    match &settings.offline.source {
        SettingSource::Flag => "--offline".to_string(),
        SettingSource::Env(var) => format!("{var} is set"),
        other => other.to_string(),
    }
}

/// The listing from the cache alone (offline, or the Hub gave no answer: `why`).
fn from_cache(settings: &HubSettings, repo: &str, why: String) -> Result<RepoListing, HubError> {
    let cache = RepoCache::new(&settings.cache_dir.value, repo);
    let found = ["main"].iter().find_map(|b| {
        let sha = cache.read_ref(b)?;
        Some((b.to_string(), sha.clone(), cached(settings, repo, &sha)?))
    });
    let Some((branch, sha, files)) = found else {
        return Err(HubError::new(
            HubErrorKind::NotInCache,
            format!(
                "{why} and the file list of `{repo}` is not in the cache `{}`",
                settings.cache_dir.value.display()
            ),
        )
        .with_hint(
            "run once online to cache the file list and the GGUF headers (a few kilobytes each)",
        ));
    };
    if settings.require_fresh.value {
        return Err(HubError::new(
            HubErrorKind::NotFresh,
            format!(
                "--require-fresh is set but {why}: cannot ask the Hub for the files of `{repo}`"
            ),
        )
        .with_hint(format!(
            "a cached file list at sha {sha} exists; drop --require-fresh to accept it"
        )));
    }
    Ok(RepoListing {
        repo: repo.to_string(),
        branch,
        sha,
        files,
        freshness: Freshness::Cache { reason: why },
        requests: 0,
        body_bytes: 0,
    })
}

/// Lists the files of `repo` at the commit its `main` branch (else its first branch) points
/// at: the Hub when online, the cache otherwise (labelled). Every request also ends by
/// `deadline`, when the listing is part of a larger read with one deadline.
pub fn list_repo_files(
    settings: &HubSettings,
    repo: &RepoRef,
    deadline: Option<Instant>,
) -> Result<RepoListing, HubError> {
    let repo = repo.repo.as_str();
    if settings.offline.value {
        return from_cache(
            settings,
            repo,
            format!("offline ({})", offline_source(settings)),
        );
    }
    let token = settings.token_text();
    let t = target(settings, repo, "main", "the branch list");
    let http = Http::new(settings, &t, "hub-tree")?.until(deadline);
    let endpoint = settings.endpoint.value.trim_end_matches('/');
    let mut requests = 0;
    let refs = match get_json(
        &http,
        &t,
        &format!("{endpoint}/api/models/{repo}/refs"),
        MAX_REFS_BYTES,
        &mut requests,
    ) {
        Ok(body) => body,
        Err(e) if e.is_no_answer() => {
            let e = e.redact(token);
            let prefix = match e.kind {
                HubErrorKind::Server => "Hub unavailable",
                HubErrorKind::RateLimited => "Hub rate-limited",
                _ => "Hub unreachable",
            };
            return from_cache(settings, repo, format!("{prefix}: {}", e.message)).map_err(|_| e);
        }
        Err(e) => return Err(e.redact(token)),
    };
    let mut body_bytes = refs.len() as u64;
    let (branch, sha) = branch_of(&t, &refs)?;
    let files = match cached(settings, repo, &sha) {
        Some(files) => files,
        None => {
            let tt = target(settings, repo, &sha, "the file list");
            let http = Http::new(settings, &tt, "hub-tree")?.until(deadline);
            let url = format!("{endpoint}/api/models/{repo}/tree/{sha}?recursive=true");
            let body = get_json(&http, &tt, &url, MAX_LISTING_BYTES, &mut requests)
                .map_err(|e| e.redact(token))?;
            body_bytes += body.len() as u64;
            let files = files_of(&tt, &body)?;
            store(
                &listing_cache_path(&settings.cache_dir.value, repo, &sha),
                &files,
            )?;
            files
        }
    };
    // The branch's sha, for an offline run, once the listing at it is in the cache.
    let _ = RepoCache::new(&settings.cache_dir.value, repo).write_ref(&branch, &sha);
    Ok(RepoListing {
        repo: repo.to_string(),
        branch,
        sha,
        files,
        freshness: Freshness::Hub,
        requests,
        body_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> Target<'static> {
        Target {
            endpoint: "http://h",
            repo: "o/r",
            revision: "main",
            filename: "the file list",
            timeout: std::time::Duration::from_secs(1),
            attempts: 1,
        }
    }

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn main_or_else_the_first_valid_branch() {
        let body = format!(
            r#"{{"branches":[{{"name":"dev","targetCommit":"{SHA}"}},{{"name":"main","targetCommit":"{}"}}]}}"#,
            "f".repeat(40)
        );
        assert_eq!(
            branch_of(&t(), body.as_bytes()).unwrap(),
            ("main".into(), "f".repeat(40))
        );
        let body = format!(
            r#"{{"branches":[{{"name":"main","targetCommit":"x"}},{{"name":"dev","targetCommit":"{SHA}"}}]}}"#
        );
        assert_eq!(branch_of(&t(), body.as_bytes()).unwrap().0, "dev");
        assert!(branch_of(&t(), b"{}").is_err());
        assert!(branch_of(&t(), b"[").is_err());
    }

    #[test]
    fn listings_keep_safe_files_in_order() {
        let body = br#"[{"type":"directory","path":"sub"},{"type":"file","path":"b.gguf","size":5,"lfs":{"size":9}},
            {"type":"file","path":"../x.gguf","size":1},{"type":"file","path":"a.gguf","size":3}]"#;
        let files = files_of(&t(), body).unwrap();
        assert_eq!(
            files,
            vec![
                RepoFile {
                    path: "b.gguf".into(),
                    size: 9
                },
                RepoFile {
                    path: "a.gguf".into(),
                    size: 3
                }
            ]
        );
        assert!(files_of(&t(), b"{}").is_err());
        let many = format!("[{}]", vec!["{}"; MAX_LISTING_ENTRIES + 1].join(","));
        assert_eq!(
            files_of(&t(), many.as_bytes()).unwrap_err().kind,
            HubErrorKind::TooLarge
        );
    }
}
