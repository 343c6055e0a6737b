//! Fetching one file of a repo at a revision, saying exactly where the answer came from.
//!
//! Order of work, so that nothing is asked of the network that the cache can answer for sure:
//! 1. a pinned commit sha already in the cache is read directly: no client, no request;
//! 2. offline: the cache only (`refs/<branch>` gives the sha);
//! 3. online: `HEAD .../resolve/<rev>/<file>` (hf-hub `get_file_metadata`) resolves the sha, the
//!    ETag and the size; a blob already cached under that ETag is reused, otherwise the file is
//!    downloaded at the resolved sha, checked (size, ETag hash) and only then put in the cache.
//!
//! hf-hub's own `download_file` is not used: when the Hub is unreachable it silently returns the
//! cached copy, and it writes whatever the GET returned into the cache without checking it.

use std::fs;
use std::path::PathBuf;

use hf_hub::HFClientSync;

use super::cache::{matches_etag, safe_etag, RepoCache};
use super::error::{entry_not_found, from_hf, HubError, HubErrorKind, Target};
use super::progress::HfProgress;
use super::repo_ref::{is_commit_sha, RepoRef};
use super::settings::{HubSettings, SettingSource};

/// Retries after the first attempt for transient failures (5xx, 429, connect errors, timeouts).
pub const RETRIES: usize = 2;
/// Largest `config.json`, `tokenizer_config.json` or other small file we accept.
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;
/// Largest `tokenizer.json` we accept.
pub const MAX_TOKENIZER_BYTES: u64 = 64 << 20;

/// The size cap for a file, by name.
pub fn size_limit(filename: &str) -> u64 {
    if filename.rsplit('/').next() == Some("tokenizer.json") {
        MAX_TOKENIZER_BYTES
    } else {
        MAX_CONFIG_BYTES
    }
}

/// Where the bytes of a [`HubFile`] came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness {
    /// The Hub was asked just now and answered with this sha.
    Hub,
    /// A full commit sha was asked for and its file was already in the cache. A commit's files
    /// never change, so this is what the Hub would serve; no request was made.
    Pinned,
    /// A cached copy stands in for a Hub answer: offline, or the Hub could not be asked. The
    /// branch may have moved since. `reason` says which, e.g. `Hub unreachable: ...`.
    Cache { reason: String },
}

impl Freshness {
    /// `hub`, `pinned`, `cache`: a stable label for machine output.
    pub fn label(&self) -> &'static str {
        match self {
            Freshness::Hub => "hub",
            Freshness::Pinned => "pinned",
            Freshness::Cache { .. } => "cache",
        }
    }

    /// `false` only for [`Freshness::Cache`].
    pub fn is_authoritative(&self) -> bool {
        !matches!(self, Freshness::Cache { .. })
    }
}

/// One file of a repo at a resolved commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubFile {
    /// `org/name`
    pub repo: String,
    /// The revision as asked for (`main` by default).
    pub revision: String,
    /// The commit sha it resolved to.
    pub sha: String,
    pub filename: String,
    /// `<cache>/models--ORG--NAME/snapshots/<sha>/<filename>`
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub freshness: Freshness,
}

enum Lookup {
    Found(HubFile),
    /// The file does not exist at that revision.
    Missing,
}

/// Fetches `filename` of `repo`; a missing file is an error.
pub fn fetch_file(
    settings: &HubSettings,
    repo: &RepoRef,
    filename: &str,
) -> Result<HubFile, HubError> {
    match fetch(settings, repo, filename)? {
        Lookup::Found(f) => Ok(f),
        Lookup::Missing => Err(entry_not_found(&target(settings, repo, filename))),
    }
}

/// Fetches `filename` of `repo`; a file the Hub says does not exist is `Ok(None)`.
pub fn fetch_optional_file(
    settings: &HubSettings,
    repo: &RepoRef,
    filename: &str,
) -> Result<Option<HubFile>, HubError> {
    match fetch(settings, repo, filename)? {
        Lookup::Found(f) => Ok(Some(f)),
        Lookup::Missing => Ok(None),
    }
}

fn target<'a>(settings: &'a HubSettings, repo: &'a RepoRef, filename: &'a str) -> Target<'a> {
    Target {
        endpoint: &settings.endpoint.value,
        repo: &repo.repo,
        revision: repo.revision_or_main(),
        filename,
        timeout: settings.timeout.value,
        attempts: RETRIES + 1,
    }
}

/// A file name must be a relative path inside the repo: it becomes part of a URL and of a
/// path in the cache. (Also used by the ranged header reads in `range.rs`.)
pub(super) fn check_filename(repo: &dyn std::fmt::Display, filename: &str) -> Result<(), HubError> {
    let bad = filename.is_empty()
        || filename.len() > 1024
        || filename.starts_with('/')
        || filename.contains('\\')
        || filename.chars().any(char::is_control)
        || filename
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..");
    if bad {
        return Err(HubError::new(
            HubErrorKind::InvalidInput,
            format!(
                "invalid file name `{}` for `{repo}`: expected a relative path inside the repo",
                filename.escape_debug()
            ),
        ));
    }
    Ok(())
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

fn too_large(t: &Target<'_>, size: u64, limit: u64) -> HubError {
    HubError::new(
        HubErrorKind::TooLarge,
        format!(
            "{} is {} ({size} bytes), over the {} limit for this kind of file; refusing it",
            t.what(),
            mib(size),
            mib(limit)
        ),
    )
    .with_hint("this is not a plausible config or tokenizer file; check the repo and file name")
}

fn io_error(t: &Target<'_>, what: &str, path: &std::path::Path, e: std::io::Error) -> HubError {
    HubError::new(
        HubErrorKind::Io,
        format!("cannot {what} `{}` for {}: {e}", path.display(), t.what()),
    )
    .with_hint(
        "check the permissions of the Hub cache, or choose another with --cache-dir / HF_HUB_CACHE",
    )
}

/// Reads `filename` at `sha` from the cache, if the cache knows the answer.
fn read_cached(
    cache: &RepoCache,
    t: &Target<'_>,
    sha: &str,
    freshness: Freshness,
) -> Result<Option<Lookup>, HubError> {
    if cache.no_exist_path(sha, t.filename).is_file() {
        return Ok(Some(Lookup::Missing));
    }
    let path = cache.snapshot_path(sha, t.filename);
    let Ok(meta) = fs::metadata(&path) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Ok(None);
    }
    let limit = size_limit(t.filename);
    if meta.len() > limit {
        return Err(too_large(t, meta.len(), limit));
    }
    let bytes = fs::read(&path).map_err(|e| io_error(t, "read", &path, e))?;
    // The online path checks content against the ETag; a cached copy is checked against the
    // blob name it was stored under, or a hand-edited cache would answer "identical".
    if let Err(why) = super::cache::verify_cached(&path, &bytes) {
        return Err(HubError::new(
            HubErrorKind::BadResponse,
            format!("the cached {} at {sha} cannot be trusted: {why}", t.what()),
        )
        .with_hint(format!(
            "delete `{}` (and its blob) so it is fetched again, or fix the cache",
            path.display()
        )));
    }
    Ok(Some(Lookup::Found(HubFile {
        repo: t.repo.to_string(),
        revision: t.revision.to_string(),
        sha: sha.to_string(),
        filename: t.filename.to_string(),
        path,
        bytes,
        freshness,
    })))
}

fn offline_source(settings: &HubSettings) -> String {
    match &settings.offline.source {
        SettingSource::Flag => "--offline".to_string(),
        SettingSource::Env(var) => format!("{var} is set"),
        other => other.to_string(),
    }
}

fn build_client(settings: &HubSettings, t: &Target<'_>) -> Result<HFClientSync, HubError> {
    let fail = |e: &dyn std::fmt::Display| {
        HubError::new(
            HubErrorKind::InvalidInput,
            format!("cannot set up the Hub client for {}: {e}", t.endpoint),
        )
    };
    let timeout = settings.timeout.value;
    let http = reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .user_agent(format!(
            "dflash-check/{}; hf-hub/1.0",
            env!("CARGO_PKG_VERSION")
        ))
        .build()
        .map_err(|e| fail(&e))?;
    let mut builder = hf_hub::HFClient::builder()
        .endpoint(settings.endpoint.value.clone())
        .cache_dir(settings.cache_dir.value.clone())
        .client(http)
        .retry_max_attempts(RETRIES);
    if let Some(token) = settings.token_text() {
        builder = builder.token(token);
    }
    builder
        .build_sync()
        .map_err(|e| fail(&e).redact(settings.token_text()))
}

fn fetch(settings: &HubSettings, repo: &RepoRef, filename: &str) -> Result<Lookup, HubError> {
    check_filename(repo, filename)?;
    let t = target(settings, repo, filename);
    let revision = t.revision;
    let cache = RepoCache::new(&settings.cache_dir.value, &repo.repo);
    let pinned = is_commit_sha(revision);

    // 1. A pinned sha in the cache: no client, no request.
    if pinned {
        if let Some(found) = read_cached(
            &cache,
            &t,
            &revision.to_ascii_lowercase(),
            Freshness::Pinned,
        )? {
            return Ok(found);
        }
    }

    // 2. Offline: the cache is the only source.
    if settings.offline.value {
        let why = format!("offline ({})", offline_source(settings));
        if settings.require_fresh.value {
            return Err(HubError::new(
                HubErrorKind::NotFresh,
                format!(
                    "--require-fresh is set but {why}: cannot ask the Hub for {}",
                    t.what()
                ),
            )
            .with_hint(
                "drop --offline / unset HF_HUB_OFFLINE, or pin a commit sha that is in the cache",
            ));
        }
        let sha = if pinned {
            None
        } else {
            cache.read_ref(revision)
        };
        if let Some(sha) = &sha {
            if let Some(found) = read_cached(
                &cache,
                &t,
                sha,
                Freshness::Cache {
                    reason: why.clone(),
                },
            )? {
                return Ok(found);
            }
        }
        return Err(HubError::new(
            HubErrorKind::NotInCache,
            format!(
                "{why} and {} is not in the cache `{}`",
                t.what(),
                settings.cache_dir.value.display()
            ),
        )
        .with_hint(format!(
            "run once online, or `hf download {} {}{}`",
            repo.repo,
            filename,
            repo.revision
                .as_deref()
                .map(|r| format!(" --revision {r}"))
                .unwrap_or_default()
        )));
    }

    // 3. Ask the Hub.
    let token = settings.token_text();
    let client = build_client(settings, &t)?;
    let (org, name) = repo.parts();
    let handle = client.model(org, name);
    let meta = match handle
        .get_file_metadata()
        .filepath(filename)
        .revision(revision)
        .send()
    {
        Ok(meta) => meta,
        Err(e) => {
            let err = from_hf(e, &t).redact(token);
            if err.kind == HubErrorKind::EntryNotFound {
                if pinned {
                    let _ = cache.mark_no_exist(&revision.to_ascii_lowercase(), filename);
                }
                return Ok(Lookup::Missing);
            }
            if err.is_no_answer() {
                return fall_back_to_cache(settings, &cache, &t, err);
            }
            return Err(err);
        }
    };

    let sha = meta.commit_hash.trim().to_ascii_lowercase();
    if !is_commit_sha(&sha) || (pinned && !sha.eq_ignore_ascii_case(revision)) {
        return Err(HubError::new(
            HubErrorKind::BadResponse,
            format!(
                "the Hub answered for {} with an unusable commit `{}`",
                t.what(),
                sha.escape_debug()
            ),
        ));
    }
    let etag = meta.etag.trim().to_string();
    if !safe_etag(&etag) {
        return Err(HubError::new(
            HubErrorKind::BadResponse,
            format!(
                "the Hub answered for {} with an unusable ETag `{}`",
                t.what(),
                etag.escape_debug()
            ),
        ));
    }
    let limit = size_limit(filename);
    if meta.file_size > limit {
        return Err(too_large(&t, meta.file_size, limit));
    }
    let size_ok = |len: usize| meta.file_size == 0 || len as u64 == meta.file_size;

    let blob = cache.blob_path(&etag);
    // (Only a regular file: anything else planted in the cache could block the read.)
    let cached_blob = fs::metadata(&blob)
        .is_ok_and(|m| m.is_file())
        .then(|| fs::read(&blob).ok())
        .flatten()
        .filter(|b| size_ok(b.len()) && matches_etag(b, &etag));
    let bytes = match cached_blob {
        Some(bytes) => bytes,
        None => {
            // A large file (tokenizer.json) reports its progress, if anyone listens.
            let progress = settings.progress.for_size(meta.file_size);
            if let Some(p) = &progress {
                p.start(&format!("{} {filename}", repo.repo), meta.file_size);
            }
            let result = handle
                .download_file_to_bytes()
                .filename(filename)
                .revision(sha.clone())
                .maybe_progress(
                    progress
                        .clone()
                        .map(|p| hf_hub::progress::Progress::new(HfProgress(p))),
                )
                .send();
            if let Some(p) = &progress {
                p.finish();
            }
            let bytes = result.map_err(|e| from_hf(e, &t).redact(token))?;
            if bytes.len() as u64 > limit {
                return Err(too_large(&t, bytes.len() as u64, limit));
            }
            if !size_ok(bytes.len()) {
                return Err(HubError::new(
                    HubErrorKind::BadResponse,
                    format!(
                        "download of {} was cut short: got {} of {} bytes; nothing was cached",
                        t.what(),
                        bytes.len(),
                        meta.file_size
                    ),
                )
                .with_hint(
                    "retry; if it persists a proxy or the network is truncating downloads",
                ));
            }
            if !matches_etag(&bytes, &etag) {
                return Err(HubError::new(
                    HubErrorKind::BadResponse,
                    format!(
                        "download of {} does not match its ETag `{etag}`; nothing was cached",
                        t.what()
                    ),
                )
                .with_hint("retry; if it persists a proxy or mirror is altering the file"));
            }
            cache
                .write_blob(&etag, &bytes)
                .map_err(|e| io_error(&t, "write", &blob, e))?;
            bytes.to_vec()
        }
    };
    if !sha.eq_ignore_ascii_case(revision) {
        cache
            .write_ref(revision, &sha)
            .map_err(|e| io_error(&t, "write the ref for", &blob, e))?;
    }
    let path = cache
        .link_snapshot(&sha, filename, &etag)
        .map_err(|e| io_error(&t, "link", &cache.snapshot_path(&sha, filename), e))?;
    Ok(Lookup::Found(HubFile {
        repo: repo.repo.clone(),
        revision: revision.to_string(),
        sha,
        filename: filename.to_string(),
        path,
        bytes,
        freshness: Freshness::Hub,
    }))
}

/// The Hub gave no answer (`err`): use the cached copy, labelled, unless `require_fresh`.
fn fall_back_to_cache(
    settings: &HubSettings,
    cache: &RepoCache,
    t: &Target<'_>,
    err: HubError,
) -> Result<Lookup, HubError> {
    let prefix = match err.kind {
        HubErrorKind::Server => "Hub unavailable",
        HubErrorKind::RateLimited => "Hub rate-limited",
        _ => "Hub unreachable",
    };
    let reason = format!("{prefix}: {}", err.message);
    let sha = if is_commit_sha(t.revision) {
        Some(t.revision.to_ascii_lowercase())
    } else {
        cache.read_ref(t.revision)
    };
    let cached = match &sha {
        Some(sha) => read_cached(cache, t, sha, Freshness::Cache { reason })?,
        None => None,
    };
    match (cached, settings.require_fresh.value) {
        (Some(_), true) => Err(HubError::new(
            HubErrorKind::NotFresh,
            format!(
                "--require-fresh is set and the Hub gave no answer for {}: {}",
                t.what(),
                err.message
            ),
        )
        .with_hint(format!(
            "a cached copy at sha {} exists; drop --require-fresh to accept it",
            sha.unwrap_or_default()
        ))),
        (Some(found), false) => Ok(found),
        (None, _) => Err(err),
    }
}
