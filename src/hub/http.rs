//! The project's own HTTP for the Hub: every request this crate sends to the Hub (the `HEAD`
//! that resolves a file, the `GET` that downloads it, the ranged `GET`s of safetensors headers)
//! goes through here, so that four guarantees hold in one place:
//!
//! - **The token stays with the endpoint.** Redirects are followed by hand, never by the HTTP
//!   stack (whose redirect policies copy the original headers onto every hop). `Authorization`
//!   is sent only to the endpoint's origin (scheme, host and port), and only while the chain has
//!   never left it: once a hop goes elsewhere, no later hop carries the token, even one that
//!   comes back to the endpoint (its URL was chosen by the other host).
//! - **One deadline per request.** [`Http::run`] bounds a whole request (connect, every redirect
//!   hop, headers and body) by `--timeout`. A timed-out request is not retried: retrying would
//!   multiply the bound the user gave.
//! - **Sizes from the network are claims, checked before use.** Nothing is preallocated from a
//!   server's number; bodies are read chunk by chunk and abandoned as soon as they pass the
//!   caller's cap ([`read_capped`]).
//! - **No side channels.** No xet, no CAS: a file is the bytes of a plain `GET`, whatever
//!   headers (`X-Xet-Hash`) come with it.

use std::future::Future;
use std::time::Duration;

use reqwest::header::{HeaderMap, ACCEPT_ENCODING, LOCATION, RANGE};
use reqwest::{Method, Response, Url};

use super::error::{timed_out, transport, HubError, HubErrorKind, Target};
use super::fetch::RETRIES;
use super::settings::HubSettings;

/// Redirect hops followed before giving up (the Hub uses one or two).
pub(crate) const MAX_REDIRECTS: usize = 10;

/// Which redirects a request follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Follow {
    /// Only those that stay on the endpoint's origin; a redirect elsewhere is the answer
    /// (a `HEAD` reads the file's metadata from the Hub's own redirect to its CDN, as
    /// `huggingface_hub` does).
    SameOrigin,
    /// All of them (a download goes on to the CDN), the token only as the module says.
    Any,
}

/// One attempt's outcome, for [`Http::with_retries`].
pub(crate) enum Attempt<T> {
    Done(Result<T, HubError>),
    /// A transient failure worth another attempt.
    Retry(HubError),
}

impl<T> From<Result<T, HubError>> for Attempt<T> {
    /// Unreachable hosts, 5xx and 429 are worth another attempt; a timeout is not (see the
    /// module doc), nor is anything else.
    fn from(r: Result<T, HubError>) -> Self {
        match r {
            Err(e)
                if matches!(
                    e.kind,
                    HubErrorKind::Unreachable | HubErrorKind::Server | HubErrorKind::RateLimited
                ) =>
            {
                Attempt::Retry(e)
            }
            other => Attempt::Done(other),
        }
    }
}

/// The HTTP client for one file of one repo.
pub(crate) struct Http<'a> {
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
    endpoint: Url,
    token: Option<&'a str>,
    timeout: Duration,
    t: &'a Target<'a>,
}

/// `s` percent-encoded for a URL path, keeping `/` when `keep_slash` (a file path) and
/// encoding it otherwise (a revision: `refs/pr/1` is one segment).
fn percent_encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The size a response announces for the file: `X-Linked-Size` (the Hub's redirect to its
/// CDN) or else `Content-Length` (unless `linked_only`: a redirect's own `Content-Length` is
/// that of the redirect's body, not the file's). `Err` when a value is not a number.
pub(crate) fn announced_size(
    headers: &HeaderMap,
    linked_only: bool,
) -> Result<Option<u64>, String> {
    let names: &[&str] = if linked_only {
        &["x-linked-size"]
    } else {
        &["x-linked-size", "content-length"]
    };
    let Some((name, value)) = names.iter().find_map(|n| headers.get(*n).map(|v| (*n, v))) else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Some)
        .ok_or_else(|| {
            format!(
                "an unusable {name} `{}`",
                String::from_utf8_lossy(value.as_bytes()).escape_debug()
            )
        })
}

/// A header's text, if it has one.
pub(crate) fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Why [`read_capped`] stopped early.
pub(crate) enum BodyError {
    /// More than the cap arrived; this many bytes had been read when it was noticed.
    OverCap(u64),
    Transport(HubError),
}

/// Reads `resp`'s body, at most `cap` bytes: chunk by chunk, without preallocating, and
/// stops (dropping the connection) as soon as the body passes `cap`. `progress` gets the
/// running byte count.
pub(crate) async fn read_capped(
    resp: &mut Response,
    cap: u64,
    t: &Target<'_>,
    mut progress: impl FnMut(u64),
) -> Result<Vec<u8>, BodyError> {
    let mut body = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                let total = body.len() as u64 + chunk.len() as u64;
                if total > cap {
                    return Err(BodyError::OverCap(total));
                }
                body.extend_from_slice(&chunk);
                progress(total);
            }
            Ok(None) => return Ok(body),
            Err(e) => return Err(BodyError::Transport(transport(&e, t))),
        }
    }
}

impl<'a> Http<'a> {
    /// A client for `t` with the endpoint, token and timeout of `settings`; `purpose` goes in
    /// the User-Agent.
    pub fn new(
        settings: &'a HubSettings,
        t: &'a Target<'a>,
        purpose: &str,
    ) -> Result<Self, HubError> {
        let fail = |e: &dyn std::fmt::Display| {
            HubError::new(
                HubErrorKind::InvalidInput,
                format!("cannot set up the HTTP client for {}: {e}", t.endpoint),
            )
        };
        let timeout = settings.timeout.value;
        let client = reqwest::Client::builder()
            // Redirects are ours to follow (module doc).
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(timeout)
            .timeout(timeout)
            .user_agent(format!(
                "dflash-check/{}; {purpose}",
                env!("CARGO_PKG_VERSION")
            ))
            .build()
            .map_err(|e| fail(&e))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(&e))?;
        let endpoint = Url::parse(&settings.endpoint.value).map_err(|e| fail(&e))?;
        Ok(Http {
            client,
            runtime,
            endpoint,
            token: settings.token_text(),
            timeout,
            t,
        })
    }

    /// `{endpoint}/{repo}/resolve/{revision}/{file}` for this client's target.
    pub fn resolve_url(&self, revision: &str) -> String {
        format!(
            "{}/{}/resolve/{}/{}",
            self.t.endpoint.trim_end_matches('/'),
            self.t.repo,
            percent_encode(revision, false),
            percent_encode(self.t.filename, true)
        )
    }

    /// Runs one request (`fut`: send, follow, read) under the one deadline.
    pub fn run<T>(&self, fut: impl Future<Output = Result<T, HubError>>) -> Result<T, HubError> {
        self.runtime
            .block_on(async { tokio::time::timeout(self.timeout, fut).await })
            .unwrap_or_else(|_| Err(timed_out(self.t)))
    }

    /// Runs `attempt` until it is done, at most `RETRIES` more times after a transient failure,
    /// with a growing pause between attempts. `requests` counts the attempts.
    pub fn with_retries<T>(
        &self,
        requests: &mut usize,
        mut attempt: impl FnMut() -> Attempt<T>,
    ) -> Result<T, HubError> {
        let mut delay = Duration::from_millis(200);
        let mut n = 0;
        loop {
            n += 1;
            *requests += 1;
            match attempt() {
                Attempt::Done(r) => return r,
                Attempt::Retry(e) if n > RETRIES => return Err(e),
                Attempt::Retry(_) => {
                    std::thread::sleep(delay);
                    delay *= 2;
                }
            }
        }
    }

    /// Sends `method url` (with `range`, if any) and follows redirects as `follow` says; the
    /// token goes only where the module doc says. The answer is the first response that is
    /// not a redirect to follow.
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        range: Option<&str>,
        follow: Follow,
    ) -> Result<Response, HubError> {
        let t = self.t;
        let bad = |what: String| {
            HubError::new(
                HubErrorKind::BadResponse,
                format!("{what} while fetching {}", t.what()),
            )
        };
        let mut url = Url::parse(url).map_err(|e| bad(format!("invalid URL `{url}`: {e}")))?;
        let home = self.endpoint.origin();
        let mut left_home = false;
        for _ in 0..=MAX_REDIRECTS {
            left_home |= url.origin() != home;
            let mut req = self
                .client
                .request(method.clone(), url.clone())
                // The bytes as stored: their length and hash are what the Hub announced.
                .header(ACCEPT_ENCODING, "identity");
            if let Some(range) = range {
                req = req.header(RANGE, range);
            }
            if let (Some(token), false) = (self.token, left_home) {
                req = req.bearer_auth(token);
            }
            let resp = req.send().await.map_err(|e| transport(&e, t))?;
            if !resp.status().is_redirection() {
                return Ok(resp);
            }
            let Some(location) = header_text(resp.headers(), LOCATION.as_str()) else {
                return Ok(resp);
            };
            let next = url.join(&location).map_err(|e| {
                bad(format!(
                    "a redirect to an invalid URL `{}` ({e})",
                    location.escape_debug()
                ))
            })?;
            if !matches!(next.scheme(), "http" | "https") {
                return Err(bad(format!(
                    "a redirect to `{}`, which is not http(s)",
                    location.escape_debug()
                )));
            }
            if follow == Follow::SameOrigin && next.origin() != home {
                return Ok(resp);
            }
            url = next;
        }
        Err(bad(format!("more than {MAX_REDIRECTS} redirects")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_paths_and_revisions() {
        assert_eq!(
            percent_encode("a b/c.safetensors", true),
            "a%20b/c.safetensors"
        );
        assert_eq!(percent_encode("refs/pr/1", false), "refs%2Fpr%2F1");
    }

    #[test]
    fn announced_size_prefers_the_linked_size_and_refuses_garbage() {
        let mut h = HeaderMap::new();
        assert_eq!(announced_size(&h, false), Ok(None));
        h.insert("content-length", "12".parse().unwrap());
        assert_eq!(announced_size(&h, false), Ok(Some(12)));
        assert_eq!(announced_size(&h, true), Ok(None));
        h.insert("x-linked-size", "18446744073709551615".parse().unwrap());
        assert_eq!(announced_size(&h, false), Ok(Some(u64::MAX)));
        h.insert("x-linked-size", "-1".parse().unwrap());
        assert!(announced_size(&h, false).is_err());
        h.insert("x-linked-size", "18446744073709551616".parse().unwrap());
        assert!(announced_size(&h, true).is_err());
    }
}
