//! The start of a file on the Hub as a [`Read`], fetched by range requests as a parser asks for
//! it: a GGUF header, whose length nothing announces, read field by field (`crate::gguf::parse`)
//! without the tensor data.
//!
//! The first request asks for [`FIRST_BLOCK`] bytes; each further one for twice the last, up to
//! [`crate::gguf::READ_BLOCK`], so the bytes fetched are the header plus at most one block, and
//! never past `cap` (the GGUF reader's header cap). A server that ignores `Range` (olah serving
//! a git mirror answers 200 with the file from byte 0) makes every request cost its start
//! again: there each request asks for half the held prefix more once that passes a block, so the
//! bytes received stay a small multiple of the header (about 3 to 4.5 times) where fixed blocks
//! would grow with its square (a 64 MiB header: about 2 GB). Always at a resolved commit sha, with the
//! size the listing gave (a `Content-Range` that disagrees with it is refused), through the
//! same [`RangeReader`] as safetensors headers (`range.rs`).
//!
//! Cached per sha beside `range.rs`'s cache, where no Hub client looks:
//! `models--ORG--NAME/.dflash-check/gguf-headers/<sha>/<file>` holds the bytes fetched (a
//! prefix of the file) and `<file>.size` the file's size; written only after the caller's
//! parse succeeded, so a warm run reads the same bytes and sends no request.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::error::{HubError, HubErrorKind, Target};
use super::fetch::Freshness;
use super::http::RETRIES;
use super::range::{cache_path_of, check_names, store_header, RangeReader};
use super::settings::HubSettings;

/// The first range: 16 KiB holds a small GGUF's whole header.
pub const FIRST_BLOCK: u64 = 16 << 10;

/// What reading one file's start cost, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockStats {
    pub requests: usize,
    /// Response body bytes received (what a server that ignores `Range` skipped included).
    pub body_bytes: u64,
    /// Bytes of the file held when the parse ended.
    pub prefix_bytes: u64,
    /// `Hub` when asked now, `Pinned` when the whole prefix came from the cache.
    pub freshness: Freshness,
}

/// Where the start of `filename` at `sha` is cached.
pub fn gguf_cache_path(cache_dir: &Path, repo: &str, sha: &str, filename: &str) -> PathBuf {
    cache_path_of(cache_dir, repo, "gguf-headers", sha, filename)
}

/// The cached start, if it is of a file of this size.
fn read_cached(path: &Path, size: u64) -> Option<Vec<u8>> {
    super::range::read_cached(path).and_then(|(prefix, cached)| (cached == size).then_some(prefix))
}

/// The file's start as a `Read`: the cached bytes, then ranges fetched on demand.
struct Blocks<'a> {
    reader: Option<RangeReader<'a>>,
    t: &'a Target<'a>,
    buf: Vec<u8>,
    pos: usize,
    size: u64,
    cap: u64,
    next: u64,
    requests: usize,
    body_bytes: u64,
    /// The server answered a range request with the whole file (200).
    ignores_range: bool,
    /// The fetch failure the parse saw as an I/O error.
    error: Option<HubError>,
}

impl Blocks<'_> {
    fn fetch_more(&mut self) -> Result<(), HubError> {
        let Some(reader) = &self.reader else {
            return Err(HubError::new(
                HubErrorKind::NotInCache,
                format!(
                    "offline and the GGUF header of {} is not (all) in the cache",
                    self.t.what()
                ),
            )
            .with_hint(
                "run once online to cache the header (a few kilobytes to a few megabytes)",
            ));
        };
        let start = self.buf.len() as u64;
        let end = start.saturating_add(self.next).min(self.size).min(self.cap);
        self.next = (self.next * 2).min(crate::gguf::READ_BLOCK as u64);
        let part = reader
            .get(start, end - 1, &mut self.requests)?
            .ok_or_else(|| {
                HubError::new(
                    HubErrorKind::BadResponse,
                    format!(
                        "{} is listed but the Hub says it does not exist",
                        self.t.what()
                    ),
                )
            })?;
        // A 200 sent the file from byte 0: the bytes before `start` crossed too.
        self.body_bytes += part.body.len() as u64 + if part.ranged { 0 } else { start };
        if !part.ranged {
            self.ignores_range = true;
        }
        if part.total != self.size {
            return Err(HubError::new(
                HubErrorKind::BadResponse,
                format!(
                    "the Hub gave {} as {} bytes long where its file list says {}",
                    self.t.what(),
                    part.total,
                    self.size
                ),
            )
            .with_hint("retry; if it persists a proxy or mirror is altering range requests"));
        }
        self.buf.extend_from_slice(&part.body);
        if self.ignores_range {
            // The next request re-sends the held prefix anyway: past 2 MiB grow it by half
            // rather than by a fixed block, so the requests' ends grow geometrically and
            // their sum stays a small multiple of the header, where fixed blocks would sum to
            // its square.
            self.next = self.next.max(self.buf.len() as u64 / 2);
        }
        Ok(())
    }
}

impl Read for Blocks<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.buf.len() {
            let held = self.buf.len() as u64;
            if held >= self.size || held >= self.cap || out.is_empty() {
                return Ok(0);
            }
            if let Err(e) = self.fetch_more() {
                let err = std::io::Error::other(e.message.clone());
                self.error = Some(e);
                return Err(err);
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// One file's start asked of one repo at one commit.
pub struct Ask<'a> {
    pub repo: &'a str,
    pub sha: &'a str,
    pub filename: &'a str,
    /// The file's size, from the listing.
    pub size: u64,
    /// Never fetch past this many bytes (the parser's header cap).
    pub cap: u64,
    /// When the whole read must be done by (every range request of it): `--timeout` from the
    /// start of the model's read, so a server answering each range just inside the timeout
    /// cannot hold the command for one timeout per range (issue 44: 2.5 s a range held
    /// `launch --timeout 3` for 135 s).
    pub deadline: Option<std::time::Instant>,
}

/// Runs `parse` over the start of a Hub file, fetching ranges as it reads. `Err` is a fetch
/// failure; `Ok((Err(e), _))` is the parser's own verdict on the bytes. A successful parse's
/// bytes are cached for the next run.
pub fn read_start<T, E>(
    settings: &HubSettings,
    ask: &Ask<'_>,
    parse: impl FnOnce(&mut dyn Read) -> Result<T, E>,
) -> Result<(Result<T, E>, BlockStats), HubError> {
    let sha = ask.sha.to_ascii_lowercase();
    check_names(ask.repo, &sha, ask.filename)?;
    let t = Target {
        endpoint: &settings.endpoint.value,
        repo: ask.repo,
        revision: &sha,
        filename: ask.filename,
        timeout: settings.timeout.value,
        attempts: RETRIES + 1,
    };
    let path = gguf_cache_path(&settings.cache_dir.value, ask.repo, &sha, ask.filename);
    let cached = read_cached(&path, ask.size).unwrap_or_default();
    let from_cache = cached.len();
    let reader = if settings.offline.value {
        None
    } else {
        Some(
            RangeReader::new(settings, &t)?
                .with_known_size(ask.size)
                .until(ask.deadline),
        )
    };
    let mut blocks = Blocks {
        reader,
        t: &t,
        buf: cached,
        pos: 0,
        size: ask.size,
        cap: ask.cap,
        next: FIRST_BLOCK,
        requests: 0,
        body_bytes: 0,
        ignores_range: false,
        error: None,
    };
    let outcome = parse(&mut blocks);
    if let Some(e) = blocks.error.take() {
        return Err(e.redact(settings.token_text()));
    }
    if outcome.is_ok() && blocks.buf.len() > from_cache {
        store_header(&path, ask.size, &blocks.buf)?;
    }
    let stats = BlockStats {
        requests: blocks.requests,
        body_bytes: blocks.body_bytes,
        prefix_bytes: blocks.buf.len() as u64,
        freshness: if blocks.requests == 0 {
            Freshness::Pinned
        } else {
            Freshness::Hub
        },
    };
    Ok((outcome, stats))
}
