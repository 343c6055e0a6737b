//! Fetching one file of a repo at a revision, saying exactly where the answer came from.
//!
//! Order of work, so that nothing is asked of the network that the cache can answer for sure:
//! 1. a pinned commit sha already in the cache is read directly: no client, no request;
//! 2. offline: the cache only (`refs/<branch>` gives the sha);
//! 3. online: `HEAD .../resolve/<rev>/<file>` resolves the sha, the ETag and the size; a blob
//!    already cached under that ETag is reused, otherwise the file is downloaded at the
//!    resolved sha by one `GET`, checked (size, ETag hash) and only then put in the cache.
//!
//! Both requests are the project's own ([`super::http`]): the token goes only to the endpoint,
//! one deadline bounds each request, a body is read up to the cap and no further, and no xet
//! path exists. Only an ETag that is a content hash (git blob sha1 or sha256) is accepted, so
//! every download is verified. hf-hub's download functions were given up because none of this
//! could be imposed on them: they copy the token onto every redirect hop, preallocate from the
//! server's `X-Linked-Size`, route `X-Xet-Hash` files to a CAS client without our timeout, and
//! buffer a whole body before our cap could see it.

use std::fs;
use std::path::PathBuf;

use crate::net::{header_text, read_capped, BodyError, Follow, HeaderMap, Method};

use super::cache::{is_content_hash, matches_etag, safe_etag, RepoCache};
use super::error::{entry_not_found, status_error, transport, HubError, HubErrorKind, Target};
use super::http::{announced_size, Http, RETRIES};
use super::progress::DownloadProgress;
use super::repo_ref::{is_commit_sha, RepoRef};
use super::settings::{HubSettings, SettingSource};

/// Largest `config.json`, `tokenizer_config.json` or other small file we accept.
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;
/// Largest `tokenizer.json` we accept.
pub const MAX_TOKENIZER_BYTES: u64 = 64 << 20;

/// Largest `model.safetensors.index.json` we accept: the weights reader's own cap (a test in
/// `weights` checks they agree). DeepSeek-V3's index is 8.9 MB, over the small-file cap.
pub const MAX_INDEX_BYTES: u64 = 64 << 20;

/// The size cap for a file, by name.
pub fn size_limit(filename: &str) -> u64 {
    match filename.rsplit('/').next() {
        Some("tokenizer.json") => MAX_TOKENIZER_BYTES,
        Some("model.safetensors.index.json") => MAX_INDEX_BYTES,
        _ => MAX_CONFIG_BYTES,
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
        // On Windows `C:` (or `x:` anywhere: a stream name) would leave the cache directory
        // when joined; a listing's names are the repo's, so refuse it there.
        || (cfg!(windows) && filename.contains(':'))
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

/// A body that passed the cap while it streamed in (its size was not announced).
fn too_large_streamed(t: &Target<'_>, read: u64, limit: u64) -> HubError {
    HubError::new(
        HubErrorKind::TooLarge,
        format!(
            "{} is over the {} limit for this kind of file ({read} bytes arrived before the download was stopped); refusing it",
            t.what(),
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
    let ask = Ask {
        settings,
        cache,
        t,
        repo,
        pinned,
    };
    if settings.offline.value {
        return ask.read_offline();
    }
    // 3. Ask the Hub.
    ask.ask_hub()
}

/// One file asked of one repo: what each step of [`fetch`] reads.
struct Ask<'a> {
    settings: &'a HubSettings,
    cache: RepoCache,
    t: Target<'a>,
    repo: &'a RepoRef,
    pinned: bool,
}

impl Ask<'_> {
    fn parts(&self) -> (&HubSettings, &RepoCache, &Target<'_>, &RepoRef, bool) {
        (self.settings, &self.cache, &self.t, self.repo, self.pinned)
    }

    /// Offline: the cached copy the branch's ref names, labelled as such, or what to run to get it.
    fn read_offline(&self) -> Result<Lookup, HubError> {
        let (settings, cache, t, repo, pinned) = self.parts();
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
            cache.read_ref(t.revision)
        };
        if let Some(sha) = &sha {
            let freshness = Freshness::Cache {
                reason: why.clone(),
            };
            if let Some(found) = read_cached(cache, t, sha, freshness)? {
                return Ok(found);
            }
        }
        Err(HubError::new(
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
            t.filename,
            repo.revision
                .as_deref()
                .map(|r| format!(" --revision {r}"))
                .unwrap_or_default()
        )))
    }

    /// Online: a `HEAD` resolves the sha, the ETag and the size; the bytes come from the blob
    /// cached under that ETag or from one download, checked against it; then the cache records
    /// the branch's sha and the snapshot's link. No answer from the Hub falls back to the cache.
    fn ask_hub(&self) -> Result<Lookup, HubError> {
        let (settings, cache, t, repo, pinned) = self.parts();
        let (revision, filename) = (t.revision, t.filename);
        let token = settings.token_text();
        let http = Http::new(settings, t, "hub")?;
        let meta = match head(&http, t, pinned) {
            Ok(meta) => meta,
            Err(err) => {
                let err = err.redact(token);
                if err.kind == HubErrorKind::EntryNotFound {
                    if pinned {
                        let _ = cache.mark_no_exist(&revision.to_ascii_lowercase(), filename);
                    }
                    return Ok(Lookup::Missing);
                }
                if err.is_no_answer() {
                    return fall_back_to_cache(settings, cache, t, err);
                }
                return Err(err);
            }
        };
        let bytes = match cached_blob(cache, &meta, size_limit(filename)) {
            Some(bytes) => bytes,
            None => download_verified(settings, &http, cache, t, &meta, repo)?,
        };
        let Meta { sha, etag, .. } = meta;
        if !sha.eq_ignore_ascii_case(revision) {
            cache
                .write_ref(revision, &sha)
                .map_err(|e| io_error(t, "write the ref for", &cache.blob_path(&etag), e))?;
        }
        let path = cache
            .link_snapshot(&sha, filename, &etag)
            .map_err(|e| io_error(t, "link", &cache.snapshot_path(&sha, filename), e))?;
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
}

/// The blob cached under the file's ETag, if it is a regular file within the cap that still
/// matches its name and size: anything else planted in the cache could block the read or
/// stand in for the file.
fn cached_blob(cache: &RepoCache, meta: &Meta, limit: u64) -> Option<Vec<u8>> {
    let blob = cache.blob_path(&meta.etag);
    fs::metadata(&blob)
        .is_ok_and(|m| m.is_file() && m.len() <= limit)
        .then(|| fs::read(&blob).ok())
        .flatten()
        .filter(|b| meta.size.is_none_or(|n| b.len() as u64 == n) && matches_etag(b, &meta.etag))
}

/// Downloads the file at the resolved sha (with a progress bar for a large one, if anyone
/// listens), checks it against its ETag and only then caches the blob.
fn download_verified(
    settings: &HubSettings,
    http: &Http<'_>,
    cache: &RepoCache,
    t: &Target<'_>,
    meta: &Meta,
    repo: &RepoRef,
) -> Result<Vec<u8>, HubError> {
    let size = meta.size;
    let progress = settings.progress.for_size(size.unwrap_or(0));
    if let Some(p) = &progress {
        p.start(&format!("{} {}", repo.repo, t.filename), size.unwrap_or(0));
    }
    let limit = size_limit(t.filename);
    let result = download(http, t, &meta.sha, size, limit, progress.as_deref());
    if let Some(p) = &progress {
        p.finish();
    }
    let bytes = result.map_err(|e| e.redact(settings.token_text()))?;
    if !matches_etag(&bytes, &meta.etag) {
        return Err(HubError::new(
            HubErrorKind::BadResponse,
            format!(
                "download of {} does not match its ETag `{}`; nothing was cached",
                t.what(),
                meta.etag
            ),
        )
        .with_hint("retry; if it persists a proxy or mirror is altering the file"));
    }
    cache
        .write_blob(&meta.etag, &bytes)
        .map_err(|e| io_error(t, "write", &cache.blob_path(&meta.etag), e))?;
    Ok(bytes)
}

/// What the Hub's `HEAD` says of a file.
struct Meta {
    /// The commit the revision resolved to.
    sha: String,
    /// A content hash: the git blob sha1 (regular files) or sha256 (LFS files).
    etag: String,
    /// The announced size, already checked against the cap.
    size: Option<u64>,
}

fn bad_response(t: &Target<'_>, what: impl std::fmt::Display) -> HubError {
    HubError::new(
        HubErrorKind::BadResponse,
        format!("the Hub answered for {} with {what}", t.what()),
    )
}

/// `huggingface_hub`'s normalization: `X-Linked-Etag` (LFS, on the redirect to the CDN) or
/// `ETag`, without `W/` and quotes.
fn etag_of(headers: &HeaderMap) -> Option<String> {
    let raw = header_text(headers, "x-linked-etag").or_else(|| header_text(headers, "etag"))?;
    let raw = raw.trim();
    Some(
        raw.strip_prefix("W/")
            .unwrap_or(raw)
            .trim_matches('"')
            .to_string(),
    )
}

/// `HEAD .../resolve/<revision>/<file>`, following only redirects that stay on the endpoint
/// (a redirect to the CDN carries the metadata itself, as `huggingface_hub` reads it).
fn head(http: &Http<'_>, t: &Target<'_>, pinned: bool) -> Result<Meta, HubError> {
    let url = http.resolve_url(t.revision);
    let resp = http.with_retries(&mut 0, || {
        http.run(async {
            let resp = http
                .send(Method::HEAD, &url, None, Follow::SameOrigin)
                .await?;
            let status = resp.status();
            if status.is_success() || status.is_redirection() {
                Ok(resp)
            } else {
                Err(status_error(t, status.as_u16(), resp.headers()))
            }
        })
        .into()
    })?;
    let headers = resp.headers();
    let sha = header_text(headers, "x-repo-commit")
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if !is_commit_sha(&sha) || (pinned && !sha.eq_ignore_ascii_case(t.revision)) {
        return Err(bad_response(
            t,
            format_args!("an unusable commit `{}`", sha.escape_debug()),
        ));
    }
    let etag = etag_of(headers).unwrap_or_default();
    if !safe_etag(&etag) {
        return Err(bad_response(
            t,
            format_args!("an unusable ETag `{}`", etag.escape_debug()),
        ));
    }
    if !is_content_hash(&etag) {
        // Only a content hash lets the download be checked; anything else would turn the
        // check off and let an altered file through as the authority.
        return Err(bad_response(
            t,
            format_args!("the ETag `{etag}`, which is not a content hash (a 40-hex git blob sha1 or a 64-hex sha256): the download could not be verified, so it is refused"),
        )
        .with_hint("a mirror or proxy that rewrites ETags cannot serve authoritative files; use the Hub itself or a mirror that passes the Hub's ETags through"));
    }
    let size = announced_size(headers, resp.status().is_redirection())
        .map_err(|what| bad_response(t, what))?;
    let limit = size_limit(t.filename);
    if let Some(n) = size.filter(|&n| n > limit) {
        return Err(too_large(t, n, limit));
    }
    Ok(Meta { sha, etag, size })
}

/// `GET .../resolve/<sha>/<file>`: redirects followed (the token stays home), the whole
/// request under one deadline, the body read up to the announced size or the cap, whichever
/// is smaller, never preallocated from a server's number.
fn download(
    http: &Http<'_>,
    t: &Target<'_>,
    sha: &str,
    head_size: Option<u64>,
    limit: u64,
    progress: Option<&dyn DownloadProgress>,
) -> Result<Vec<u8>, HubError> {
    let url = http.resolve_url(sha);
    http.with_retries(&mut 0, || {
        http.run(async {
            let mut resp = http.send(Method::GET, &url, None, Follow::Any).await?;
            let status = resp.status().as_u16();
            if status != 200 {
                return Err(status_error(t, status, resp.headers()));
            }
            let announced =
                announced_size(resp.headers(), false).map_err(|what| bad_response(t, what))?;
            if let Some(n) = announced.filter(|&n| n > limit) {
                return Err(too_large(t, n, limit));
            }
            let expected = head_size.or(announced);
            if let (Some(h), Some(g)) = (head_size, announced) {
                if h != g {
                    return Err(bad_response(
                        t,
                        format_args!("a body of {g} bytes where its HEAD said {h}; nothing was cached"),
                    ));
                }
            }
            let cap = expected.unwrap_or(limit).min(limit);
            let body = read_capped(&mut resp, cap, |done| {
                if let Some(p) = progress {
                    p.advance(done);
                }
            })
            .await
            .map_err(|e| match e {
                BodyError::Transport(e) => transport(&e, t),
                BodyError::Announced(n) if cap == limit => too_large(t, n, limit),
                BodyError::Announced(n) => bad_response(
                    t,
                    format_args!("a Content-Length of {n} bytes where {cap} were announced; nothing was cached"),
                ),
                BodyError::OverCap(n) if cap == limit => too_large_streamed(t, n, limit),
                BodyError::OverCap(n) => bad_response(
                    t,
                    format_args!("a body longer than the {cap} bytes announced (at least {n}); nothing was cached"),
                ),
            })?;
            if expected.is_some_and(|n| body.len() as u64 != n) {
                return Err(HubError::new(
                    HubErrorKind::BadResponse,
                    format!(
                        "download of {} was cut short: got {} of {} bytes; nothing was cached",
                        t.what(),
                        body.len(),
                        expected.unwrap_or_default()
                    ),
                )
                .with_hint(
                    "retry; if it persists a proxy or the network is truncating downloads",
                ));
            }
            Ok(body)
        })
        .into()
    })
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
