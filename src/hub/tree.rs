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

use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Serialize;
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
/// entries; `type: file` entries with a safe path are kept, in order. Read in one streaming
/// pass ([`Listing`]): each entry's `type`, `path`, `size` and `lfs.size` are taken and
/// everything else is skipped unbuilt, so memory is the body plus the files kept (a 16 MiB
/// listing of one entry holding 8 million numbers built a `Value` tree of 630 MB; issue 44).
/// Entries are read as `serde_json::Value` read them: a duplicated key's last value wins, a
/// field of another type is absent.
fn files_of(t: &Target<'_>, body: &[u8]) -> Result<Vec<RepoFile>, HubError> {
    // UTF-8 first, for the whole body: the streaming pass does not look inside the strings it
    // skips, and a `Value` reading refused invalid UTF-8 anywhere.
    let text = std::str::from_utf8(body).map_err(|e| {
        bad(
            t,
            format_args!(
                "JSON that does not parse (invalid UTF-8 at byte {})",
                e.valid_up_to()
            ),
        )
    })?;
    let over = Cell::new(false);
    let mut de = serde_json::Deserializer::from_str(text);
    let read = de
        .deserialize_any(Listing { over: &over })
        .and_then(|files| de.end().map(|()| files));
    match (read, over.get()) {
        (_, true) => Err(HubError::new(
            HubErrorKind::TooLarge,
            format!(
                "the Hub listed more than {MAX_LISTING_ENTRIES} entries for {} (the limit); refusing it",
                t.what()
            ),
        )
        .with_hint("a repo this large is not a GGUF model repo; name the file with --hf-file")),
        (Ok(Some(entries)), false) => Ok(entries
            .into_iter()
            .filter(|e| e.kind.as_deref() == Some("file"))
            .filter_map(|e| {
                let path = e.path?;
                super::fetch::check_filename(&t.repo, &path).ok()?;
                let size = e.lfs_size.unwrap_or(e.size).unwrap_or(0);
                Some(RepoFile { path, size })
            })
            .collect()),
        (Ok(None), false) => Err(bad(t, "a listing that is not a JSON array")),
        (Err(e), false) => Err(bad(t, format_args!("JSON that does not parse ({e})"))),
    }
}

/// The files of a tree answer `body` for `repo`, as [`list_repo_files`] reads them (for the
/// fuzz target and tests).
pub fn parse_listing(repo: &str, body: &[u8]) -> Result<Vec<RepoFile>, HubError> {
    let t = Target {
        endpoint: "",
        repo,
        revision: "",
        filename: "the file list",
        timeout: std::time::Duration::ZERO,
        attempts: 1,
    };
    files_of(&t, body)
}

/// One entry of a listing, as far as it is read: `type`, `path`, `size`, and `lfs.size`
/// (`Some(None)` when `lfs.size` is there but not a size: then the entry's size is unknown,
/// as `Value::as_u64` on it said).
#[derive(Default)]
struct Entry {
    kind: Option<String>,
    path: Option<String>,
    size: Option<u64>,
    lfs_size: Option<Option<u64>>,
}

/// The listing's array, entry by entry; `Ok(None)` for any other JSON value. `over` is set as
/// soon as the count passes [`MAX_LISTING_ENTRIES`], and the read stops there.
struct Listing<'a> {
    over: &'a Cell<bool>,
}

impl<'de> Visitor<'de> for Listing<'_> {
    type Value = Option<Vec<Entry>>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a listing")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(entry) = seq.next_element::<Loose<Entry>>()? {
            if out.len() == MAX_LISTING_ENTRIES {
                self.over.set(true);
                return Err(serde::de::Error::custom("too many entries"));
            }
            out.push(entry.0.unwrap_or_default());
        }
        Ok(Some(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// A value read if it has the wanted type, skipped (unbuilt) and `None` otherwise.
struct Loose<T>(Option<T>);

impl<'de, T: LooseValue> Deserialize<'de> for Loose<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LooseVisitor(std::marker::PhantomData))
            .map(Loose)
    }
}

/// What a [`Loose`] value takes: a string, a `u64` (a non-negative integer, as
/// `Value::as_u64`), an [`Entry`] or an `lfs` object's size.
trait LooseValue: Sized {
    fn from_str(_: &str) -> Option<Self> {
        None
    }
    fn from_u64(_: u64) -> Option<Self> {
        None
    }
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

impl LooseValue for String {
    fn from_str(s: &str) -> Option<Self> {
        Some(s.to_string())
    }
}

impl LooseValue for u64 {
    fn from_u64(n: u64) -> Option<Self> {
        Some(n)
    }
}

impl LooseValue for Entry {
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        let mut e = Entry::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "type" => e.kind = map.next_value::<Loose<String>>()?.0,
                "path" => e.path = map.next_value::<Loose<String>>()?.0,
                "size" => e.size = map.next_value::<Loose<u64>>()?.0,
                "lfs" => e.lfs_size = map.next_value::<Loose<LfsSize>>()?.0.and_then(|l| l.0),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(e))
    }
}

/// An entry's `lfs` object: `Some` of its `size` when it has that key (whatever its value).
struct LfsSize(Option<Option<u64>>);

impl LooseValue for LfsSize {
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        let mut size = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "size" {
                size = Some(map.next_value::<Loose<u64>>()?.0);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Some(LfsSize(size)))
    }
}

struct LooseVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: LooseValue> Visitor<'de> for LooseVisitor<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(T::from_str(s))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok(T::from_u64(n))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        Ok(u64::try_from(n).ok().and_then(T::from_u64))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::from_map(map)
    }
}

/// A cached listing entry, as [`files_of`] reads it back.
#[derive(Serialize)]
struct Stored<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    path: &'a str,
    size: u64,
}

fn store(path: &Path, files: &[RepoFile]) -> Result<(), HubError> {
    let stored: Vec<Stored<'_>> = files
        .iter()
        .map(|f| Stored {
            kind: "file",
            path: &f.path,
            size: f.size,
        })
        .collect();
    let text = serde_json::to_vec(&stored).unwrap_or_default();
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

    /// The streaming reader keeps what a `serde_json::Value` reading kept (the code before
    /// issue 44): duplicated keys (the last wins), fields of other types, `lfs` without a
    /// size or with one that is not a number, entries that are not objects.
    #[test]
    fn streaming_reads_entries_as_a_value_tree_did() {
        let body = br#"[{"type":"file","path":"a.gguf","path":"b.gguf","size":3},
            {"type":"file","path":"c.gguf","size":"7","lfs":{"oid":"x"}},
            {"type":"file","path":"d.gguf","size":2,"lfs":{"size":"9"}},
            {"type":"file","path":"e.gguf","size":-2,"lfs":{"size":5.0}},
            {"type":"file","path":"f.gguf","lfs":{"size":5},"lfs":"none","size":4},
            {"type":["file"],"path":"g.gguf"},{"type":"file","path":7},
            {"type":"file","path":"h.gguf","x":[[[{"y":[1,2,{}]}]]],"size":18446744073709551615},
            [1,2],"s",null,3,{"type":"file","type":"dir","path":"i.gguf"}]"#;
        // What the `Value` reading gave (fuzz target hub_listing compares with it on any input).
        let expected = [
            ("b.gguf", 3),
            ("c.gguf", 0),
            ("d.gguf", 0),
            ("e.gguf", 0),
            ("f.gguf", 4),
            ("h.gguf", u64::MAX),
        ];
        let files: Vec<(String, u64)> = files_of(&t(), body)
            .unwrap()
            .into_iter()
            .map(|f| (f.path, f.size))
            .collect();
        let expected: Vec<(String, u64)> =
            expected.iter().map(|(p, s)| (p.to_string(), *s)).collect();
        assert_eq!(files, expected);
        for not_a_listing in [&b"{}"[..], b"3", b"\"x\"", b"null", b"true"] {
            assert_eq!(
                files_of(&t(), not_a_listing).unwrap_err().kind,
                HubErrorKind::BadResponse
            );
        }
        assert!(files_of(&t(), b"[{}] x").is_err());
        // Invalid UTF-8 in a field that is skipped is still invalid JSON (fuzz, issue 44).
        assert!(files_of(&t(), b"[{\"type\":\"file\",\"x\":\"\xda\",\"path\":\"a\"}]").is_err());
        assert!(files_of(&t(), b"[{\"type\":").is_err());
    }
}
