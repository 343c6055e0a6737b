//! The first bytes of a large file on the Hub, by HTTP range requests: a safetensors header
//! without the weights.
//!
//! Like Python `huggingface_hub`'s `parse_safetensors_file_metadata`: one
//! `GET /{repo}/resolve/{sha}/{file}` with `Range: bytes=0-16383`; the first 8 bytes give the
//! header length `n`; if `8 + n` bytes did not fit, one more request for the rest
//! (`bytes=100001-{n+7}`; Python asks again from byte 8). So at most 2 requests per file, and
//! never a byte past the header except what the first fixed-size range brings along.
//!
//! Always at a resolved commit sha, with the endpoint, token, timeout and retries of
//! [`HubSettings`]. Headers are cached per sha beside the standard layout, where no Hub client
//! looks: `models--ORG--NAME/.dflash-check/safetensors-headers/<sha>/<file>` holds the file's
//! first `8 + n` bytes verbatim and `<file>.size` its total size. (A partial file under
//! `snapshots/` would be taken for the real one by every other tool.) A file that does not
//! exist at the sha gets the standard `.no_exist/<sha>/<file>` marker. A commit never changes,
//! so a cached answer is the Hub's answer and a warm run sends no request.

use std::fs;
use std::path::{Path, PathBuf};

use crate::net::{header_text, read_part, Follow, Method};

use super::cache::{write_atomic, RepoCache};
use super::error::{status_error, transport, HubError, HubErrorKind, Target};
use super::fetch::Freshness;
use super::http::{announced_size, Http, RETRIES};
use super::repo_ref::is_commit_sha;
use super::settings::HubSettings;

/// The first request asks for bytes `0..=FIRST_RANGE_END`: 16 KiB holds the whole header of
/// every real drafter seen (a 5-layer DFlash header is about 6 kB), so one request of a few KB
/// usually suffices. (`huggingface_hub` asks for 100,000 bytes; a smaller first range costs a
/// second request only for headers over 16 KiB.)
pub const FIRST_RANGE_END: u64 = 16_383;
/// Header lengths over this are not fetched (`huggingface_hub`'s
/// `SAFETENSORS_MAX_HEADER_LENGTH`); the caller reports the file as invalid.
pub const MAX_HEADER_BYTES: u64 = 25_000_000;

/// The start of one file at one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangedHeader {
    pub repo: String,
    pub sha: String,
    pub filename: String,
    /// The file's first `8 + n` bytes (fewer when the file is shorter, or only the 8-byte
    /// length when that length is over [`MAX_HEADER_BYTES`]: the caller says what is wrong).
    pub prefix: Vec<u8>,
    /// The whole file's size, from `Content-Range` (or `Content-Length` of a server that
    /// ignored the range).
    pub file_size: u64,
    /// `Hub` when asked now, `Pinned` when read from the cache.
    pub freshness: Freshness,
    /// Requests sent for it (0 from the cache).
    pub requests: usize,
    /// Response body bytes received for it.
    pub body_bytes: u64,
}

fn join_rel(base: &Path, rel: &str) -> PathBuf {
    rel.split('/').fold(base.to_path_buf(), |p, c| p.join(c))
}

/// Where the header of `filename` at `sha` is cached.
pub fn header_cache_path(cache_dir: &Path, repo: &str, sha: &str, filename: &str) -> PathBuf {
    cache_path_of(cache_dir, repo, "safetensors-headers", sha, filename)
}

/// `models--ORG--NAME/.dflash-check/<kind>/<sha>/<filename>` (also `blocks.rs`'s GGUF headers).
pub(super) fn cache_path_of(
    cache_dir: &Path,
    repo: &str,
    kind: &str,
    sha: &str,
    filename: &str,
) -> PathBuf {
    let cache = RepoCache::new(cache_dir, repo);
    join_rel(
        &cache.root().join(".dflash-check").join(kind).join(sha),
        filename,
    )
}

fn size_path(header: &Path) -> PathBuf {
    let mut name = header.file_name().unwrap_or_default().to_os_string();
    name.push(".size");
    header.with_file_name(name)
}

pub(super) fn check_names(repo: &str, sha: &str, filename: &str) -> Result<(), HubError> {
    super::fetch::check_filename(&repo, filename)?;
    if !is_commit_sha(sha) {
        return Err(HubError::new(
            HubErrorKind::InvalidInput,
            format!(
                "range reads need a resolved commit sha, not `{}`",
                sha.escape_debug()
            ),
        ));
    }
    Ok(())
}

/// The cached header, if both its files are there and agree.
pub(super) fn read_cached(path: &Path) -> Option<(Vec<u8>, u64)> {
    let size: u64 = fs::read_to_string(size_path(path))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let prefix = fs::read(path).ok()?;
    (prefix.len() as u64 <= size).then_some((prefix, size))
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> HubError {
    HubError::new(
        HubErrorKind::Io,
        format!("cannot {what} `{}`: {e}", path.display()),
    )
    .with_hint(
        "check the permissions of the Hub cache, or choose another with --cache-dir / HF_HUB_CACHE",
    )
}

/// A range read of `filename` in `repo` at `sha`, with the settings' endpoint and timeout.
fn target_at<'a>(
    settings: &'a HubSettings,
    repo: &'a str,
    sha: &'a str,
    filename: &'a str,
) -> Target<'a> {
    Target {
        endpoint: &settings.endpoint.value,
        repo,
        revision: sha,
        filename,
        timeout: settings.timeout.value,
        attempts: RETRIES + 1,
    }
}

/// The answer for one file: its header, or that it does not exist at the commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderAnswer {
    Found(RangedHeader),
    /// The file is not in the commit; `requests` were sent to learn it (0 from the cache).
    Missing {
        requests: usize,
    },
}

/// Reads the safetensors header of `filename` in `repo` at commit `sha`.
pub fn fetch_safetensors_header(
    settings: &HubSettings,
    repo: &str,
    sha: &str,
    filename: &str,
) -> Result<HeaderAnswer, HubError> {
    let sha = sha.to_ascii_lowercase();
    check_names(repo, &sha, filename)?;
    let t = target_at(settings, repo, &sha, filename);
    let cache = RepoCache::new(&settings.cache_dir.value, repo);
    if cache.no_exist_path(&sha, filename).is_file() {
        return Ok(HeaderAnswer::Missing { requests: 0 });
    }
    let path = header_cache_path(&settings.cache_dir.value, repo, &sha, filename);
    if let Some((prefix, file_size)) = read_cached(&path) {
        return Ok(HeaderAnswer::Found(RangedHeader {
            repo: repo.to_string(),
            sha,
            filename: filename.to_string(),
            prefix,
            file_size,
            freshness: Freshness::Pinned,
            requests: 0,
            body_bytes: 0,
        }));
    }
    if settings.offline.value {
        return Err(HubError::new(
            HubErrorKind::NotInCache,
            format!(
                "offline and the header of {} is not in the cache `{}`",
                t.what(),
                settings.cache_dir.value.display()
            ),
        )
        .with_hint("run once online to cache the header (a few kilobytes), or download the file"));
    }

    let token = settings.token_text();
    let reader = RangeReader::new(settings, &t)?;
    let mut requests = 0;
    let first = match reader.get(0, FIRST_RANGE_END, &mut requests) {
        Ok(Some(first)) => first,
        Ok(None) => {
            let _ = cache.mark_no_exist(&sha, filename);
            return Ok(HeaderAnswer::Missing { requests });
        }
        Err(e) => return Err(e.redact(token)),
    };
    let file_size = first.total;
    let (prefix, body_bytes, complete) =
        whole_header(&reader, first, &mut requests).map_err(|e| e.redact(token))?;
    // Only a whole header is worth keeping: anything else is reported as an invalid file.
    if complete {
        store_header(&path, file_size, &prefix)?;
    }
    Ok(HeaderAnswer::Found(RangedHeader {
        repo: repo.to_string(),
        sha,
        filename: filename.to_string(),
        prefix,
        file_size,
        freshness: Freshness::Hub,
        requests,
        body_bytes,
    }))
}

/// Bytes `start..start + len` of a file read by [`fetch_safetensors_bytes`], and what they cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangedBytes {
    pub bytes: Vec<u8>,
    /// Requests sent (0 from the cache).
    pub requests: usize,
    /// Response body bytes received (0 from the cache).
    pub body_bytes: u64,
}

/// Where bytes `start..end` of `filename` at `sha` are cached: beside the headers, under
/// `safetensors-data/<sha>/<filename>.<start>-<end>`.
pub fn data_cache_path(
    cache_dir: &Path,
    repo: &str,
    sha: &str,
    filename: &str,
    start: u64,
    end: u64,
) -> PathBuf {
    cache_path_of(
        cache_dir,
        repo,
        "safetensors-data",
        sha,
        &format!("{filename}.{start}-{end}"),
    )
}

/// Bytes `start..start + len` of `filename` (a file of `file_size` bytes, as its header read
/// gave) in `repo` at commit `sha`: one range request, cached per sha as headers are. The
/// vocabulary maps' data (`weights::maps`), a few hundred kilobytes. `Ok(None)` when offline
/// with nothing cached, or when the file is gone: the caller then judges without the data.
pub fn fetch_safetensors_bytes(
    settings: &HubSettings,
    repo: &str,
    sha: &str,
    filename: &str,
    (start, len): (u64, u64),
    file_size: u64,
) -> Result<Option<RangedBytes>, HubError> {
    let sha = sha.to_ascii_lowercase();
    check_names(repo, &sha, filename)?;
    let end = start.saturating_add(len);
    let path = data_cache_path(&settings.cache_dir.value, repo, &sha, filename, start, end);
    if let Ok(bytes) = fs::read(&path) {
        if bytes.len() as u64 == len {
            return Ok(Some(RangedBytes {
                bytes,
                requests: 0,
                body_bytes: 0,
            }));
        }
    }
    if settings.offline.value || len == 0 {
        return Ok(None);
    }
    let t = target_at(settings, repo, &sha, filename);
    let token = settings.token_text();
    let reader = RangeReader::new(settings, &t)?.with_known_size(file_size);
    let mut requests = 0;
    let Some(part) = reader
        .get(start, end - 1, &mut requests)
        .map_err(|e| e.redact(token))?
    else {
        return Ok(None);
    };
    if part.total != file_size || part.body.len() as u64 != len {
        return Err(HubError::new(
            HubErrorKind::BadResponse,
            format!(
                "the range request for bytes {start}-{} of {} returned {} bytes of a {}-byte file; \
                 its header said {len} bytes of a {file_size}-byte file",
                end - 1,
                t.what(),
                part.body.len(),
                part.total
            ),
        )
        .with_hint("retry; if it persists a proxy is altering range requests"));
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error("create", parent, e))?;
    }
    write_atomic(&path, &part.body).map_err(|e| io_error("write", &path, e))?;
    Ok(Some(RangedBytes {
        body_bytes: part.body.len() as u64,
        bytes: part.body,
        requests,
    }))
}

/// The header from the `first` range: cut to its `8 + n` bytes, or completed by one more range
/// request when it did not fit (never for a length over [`MAX_HEADER_BYTES`] or past the end of
/// the file, which the caller reports as invalid). Returns the prefix, the body bytes received
/// and whether the header is whole.
fn whole_header(
    reader: &RangeReader<'_>,
    first: Part,
    requests: &mut usize,
) -> Result<(Vec<u8>, u64, bool), HubError> {
    let t = reader.t;
    let file_size = first.total;
    let mut body_bytes = first.body.len() as u64;
    let mut prefix = first.body;
    if prefix.len() < 8 {
        return Ok((prefix, body_bytes, false));
    }
    let n = u64::from_le_bytes(prefix[..8].try_into().unwrap_or([0; 8]));
    let end = 8u64.saturating_add(n);
    if n > MAX_HEADER_BYTES {
        prefix.truncate(8);
        return Ok((prefix, body_bytes, false));
    }
    if end <= prefix.len() as u64 {
        prefix.truncate(end as usize);
        return Ok((prefix, body_bytes, true));
    }
    if end > file_size {
        return Ok((prefix, body_bytes, false));
    }
    let rest = reader
        .get(prefix.len() as u64, end - 1, requests)?
        .ok_or_else(|| {
            HubError::new(
                HubErrorKind::BadResponse,
                format!("{} disappeared between two range requests", t.what()),
            )
        })?;
    body_bytes += rest.body.len() as u64;
    if rest.total != file_size || rest.body.len() as u64 != end - prefix.len() as u64 {
        return Err(HubError::new(
            HubErrorKind::BadResponse,
            format!(
                "the second range request for {} returned {} bytes of a {}-byte file; expected bytes {}..{} of {file_size}",
                t.what(),
                rest.body.len(),
                rest.total,
                prefix.len(),
                end
            ),
        )
        .with_hint("retry; if it persists a proxy is altering range requests"));
    }
    prefix.extend_from_slice(&rest.body);
    Ok((prefix, body_bytes, true))
}

/// Caches a whole header at `path` (and the file's size beside it), each written atomically.
pub(super) fn store_header(path: &Path, file_size: u64, prefix: &[u8]) -> Result<(), HubError> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error("create", parent, e))?;
    }
    write_atomic(&size_path(path), file_size.to_string().as_bytes())
        .map_err(|e| io_error("write", path, e))?;
    write_atomic(path, prefix).map_err(|e| io_error("write", path, e))
}

/// Bytes `start..` of a file and the file's total size.
pub(super) struct Part {
    pub body: Vec<u8>,
    pub total: u64,
    /// Whether the server honoured `Range` (206/416). A 200 sent the file from byte 0, so
    /// every further range from this server costs its start again.
    pub ranged: bool,
}

pub(super) struct RangeReader<'a> {
    url: String,
    http: Http<'a>,
    t: &'a Target<'a>,
    /// The file's size when a listing gave it: a server that ignores `Range` and announces no
    /// length (olah serving a git mirror streams the file chunked) is then read up to what was
    /// asked, never further.
    known_size: Option<u64>,
}

/// `bytes A-B/TOTAL` → (A, B, TOTAL); `bytes */TOTAL` → (0, 0, TOTAL) with no range.
fn content_range(value: &str) -> Option<(Option<(u64, u64)>, u64)> {
    let rest = value.trim().strip_prefix("bytes")?.trim_start();
    let (range, total) = rest.split_once('/')?;
    let total: u64 = total.trim().parse().ok()?;
    if range.trim() == "*" {
        return Some((None, total));
    }
    let (a, b) = range.trim().split_once('-')?;
    Some((Some((a.parse().ok()?, b.parse().ok()?)), total))
}

impl<'a> RangeReader<'a> {
    pub(super) fn new(settings: &'a HubSettings, t: &'a Target<'a>) -> Result<Self, HubError> {
        let http = Http::new(settings, t, "range-reader")?;
        Ok(RangeReader {
            url: http.resolve_url(t.revision),
            http,
            t,
            known_size: None,
        })
    }

    /// The same reader, each request also ending by `deadline`: one bound for a read made of
    /// several ranges ([`super::http::Http::until`]).
    pub(super) fn until(mut self, deadline: Option<std::time::Instant>) -> Self {
        self.http = self.http.until(deadline);
        self
    }

    /// The same reader for a file whose size a listing gave.
    pub(super) fn with_known_size(mut self, size: u64) -> Self {
        self.known_size = Some(size);
        self
    }

    /// `GET` bytes `start..=end` (clamped to the file); `Ok(None)` when the file does not exist.
    pub(super) fn get(
        &self,
        start: u64,
        end: u64,
        requests: &mut usize,
    ) -> Result<Option<Part>, HubError> {
        self.http
            .with_retries(requests, || self.http.run(self.try_get(start, end)).into())
    }

    /// One attempt, under the one deadline of [`Http::run`]: the redirects are followed by
    /// [`Http::send`], so the token stays with the endpoint.
    async fn try_get(&self, start: u64, end: u64) -> Result<Option<Part>, HubError> {
        let t = self.t;
        let range = format!("bytes={start}-{end}");
        let mut resp = self
            .http
            .send(Method::GET, &self.url, Some(&range), Follow::Any)
            .await?;
        let status = resp.status().as_u16();
        let bad = |what: &str| {
            HubError::new(
                HubErrorKind::BadResponse,
                format!(
                    "the Hub answered {status} for bytes {start}-{end} of {} with {what}",
                    t.what()
                ),
            )
        };
        let total = match status {
            206 | 416 => match header_text(resp.headers(), "content-range")
                .as_deref()
                .and_then(content_range)
            {
                Some((Some((a, _)), total)) if a == start => total,
                Some((None, total)) if status == 416 => total,
                _ => return Err(bad("an unusable Content-Range")),
            },
            // A server that ignores `Range` sends the whole file: read only what was asked.
            200 => match announced_size(resp.headers(), false) {
                Ok(Some(len)) => len,
                Ok(None) if self.known_size.is_some() => self.known_size.unwrap_or_default(),
                Ok(None) => {
                    return Err(HubError::new(
                        HubErrorKind::BadResponse,
                        format!(
                            "the server ignored the range request for {} and gave no length; refusing to download the whole file",
                            t.what()
                        ),
                    ))
                }
                Err(what) => return Err(bad(&what)),
            },
            // A file missing at the commit (no error code, or EntryNotFound) is an answer.
            404 if !matches!(
                header_text(resp.headers(), "x-error-code").as_deref(),
                Some("RepoNotFound" | "RevisionNotFound")
            ) =>
            {
                return Ok(None)
            }
            _ => return Err(status_error(t, status, resp.headers())),
        };
        if status == 416 {
            return Ok(Some(Part {
                body: Vec::new(),
                total,
                ranged: true,
            }));
        }
        // Bytes wanted from this response: `start..=end`, clamped to the file. A 200 carries
        // the file from byte 0, so skip to `start` first. (Nothing is preallocated from the
        // server's numbers: `want` is at most what was asked.)
        let skip = if status == 200 { start } else { 0 };
        let want = end
            .min(total.saturating_sub(1))
            .saturating_add(1)
            .saturating_sub(start);
        let body = read_part(&mut resp, skip, want)
            .await
            .map_err(|e| transport(&e, t))?;
        // (Reading stops at `want`: the rest of a 200 is the weights.)
        if (body.len() as u64) < want {
            return Err(HubError::new(
                HubErrorKind::BadResponse,
                format!(
                    "range request for {} was cut short: got {} of {want} bytes",
                    t.what(),
                    body.len()
                ),
            )
            .with_hint(
                "retry; if it persists the connection or a proxy is cutting downloads short",
            ));
        }
        Ok(Some(Part {
            body,
            total,
            ranged: status != 200,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_content_range() {
        assert_eq!(
            content_range("bytes 0-99/1234"),
            Some((Some((0, 99)), 1234))
        );
        assert_eq!(content_range("bytes */50"), Some((None, 50)));
        assert_eq!(content_range("bytes 0-99/*"), None);
        assert_eq!(content_range("items 0-1/2"), None);
    }

    #[test]
    fn cache_paths_sit_beside_the_standard_layout() {
        let p = header_cache_path(
            Path::new("/c"),
            "org/name",
            "0123456789abcdef0123456789abcdef01234567",
            "sub/model.safetensors",
        );
        assert_eq!(
            p,
            PathBuf::from("/c/models--org--name/.dflash-check/safetensors-headers/0123456789abcdef0123456789abcdef01234567/sub/model.safetensors")
        );
        assert_eq!(size_path(&p).file_name().unwrap(), "model.safetensors.size");
        // `blocks.rs`'s GGUF headers, beside them.
        let g = super::super::blocks::gguf_cache_path(
            Path::new("/c"),
            "org/name",
            "0123456789abcdef0123456789abcdef01234567",
            "m-Q4_K_M.gguf",
        );
        assert_eq!(
            g,
            PathBuf::from("/c/models--org--name/.dflash-check/gguf-headers/0123456789abcdef0123456789abcdef01234567/m-Q4_K_M.gguf")
        );
    }
}
