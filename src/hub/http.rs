//! The Hub's side of the one HTTP client ([`crate::net`], which owns redirects and the token's
//! origin, the deadline, body caps, and the proxy and loopback rules): every request this crate
//! sends to the Hub (the `HEAD` that resolves a file, the `GET` that downloads it, the ranged
//! `GET`s of safetensors headers) is made by an [`Http`] for one file of one repo, which adds
//! what is the Hub's own:
//!
//! - the endpoint is the token's home: `Authorization` goes only to its origin, and only while
//!   the chain has never left it (`net`'s rule);
//! - URLs of the `resolve` API, percent-encoded;
//! - retries of a transient failure ([`RETRIES`]), never of a timeout: retrying would multiply
//!   the bound the user gave;
//! - every failure worded as a [`HubError`] naming the repo, revision and file.

use std::future::Future;
use std::time::{Duration, Instant};

use crate::net::{self, Client, Follow, HeaderMap, HeaderName, Method, NetError, Response, Url};

use super::error::{read_timed_out, timed_out, transport, HubError, HubErrorKind, Target};
use super::settings::HubSettings;

/// Retries after the first attempt for transient failures (5xx, 429, connect errors).
pub const RETRIES: usize = 2;

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

/// The endpoints this run could not reach at all, so that later requests to them are not
/// retried (see [`Http::with_retries`]). Process-wide: every command reads the Hub through one
/// endpoint, and a request that succeeds takes its endpoint off the list.
mod unreachable {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};

    fn set() -> &'static Mutex<HashSet<String>> {
        static SET: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
        SET.get_or_init(|| Mutex::new(HashSet::new()))
    }

    pub fn known(endpoint: &str) -> bool {
        set().lock().is_ok_and(|s| s.contains(endpoint))
    }

    pub fn remember(endpoint: &str) {
        if let Ok(mut s) = set().lock() {
            s.insert(endpoint.to_string());
        }
    }

    pub fn forget(endpoint: &str) {
        if let Ok(mut s) = set().lock() {
            s.remove(endpoint);
        }
    }
}

/// The HTTP client for one file of one repo.
pub(crate) struct Http<'a> {
    client: Client<'a>,
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
        let endpoint = Url::parse(&settings.endpoint.value).map_err(|e| fail(&e))?;
        settings
            .progress
            .asking(&format!("`{}` of {}", t.filename, t.repo));
        let client = Client::new(settings.timeout.value, purpose)
            .map_err(|e| fail(&e))?
            .with_home(&endpoint, settings.token_text());
        Ok(Http { client, t })
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

    /// The same client, its requests also bounded by one deadline for the whole read they are
    /// part of ([`Client::with_deadline`]).
    pub fn until(mut self, deadline: Option<Instant>) -> Self {
        self.client = self.client.with_deadline(deadline);
        self
    }

    /// Runs one request (`fut`: send, follow, read) under the one deadline.
    pub fn run<T>(&self, fut: impl Future<Output = Result<T, HubError>>) -> Result<T, HubError> {
        self.client.run(fut).unwrap_or_else(|| {
            Err(if self.client.past_deadline() {
                read_timed_out(self.t)
            } else {
                timed_out(self.t)
            })
        })
    }

    /// Runs `attempt` until it is done, at most `RETRIES` more times after a transient failure,
    /// with a growing pause between attempts. `requests` counts the attempts.
    ///
    /// An endpoint that could not be reached at all (DNS, refused connection) after every
    /// attempt is remembered for the rest of the run: later requests to it are tried once, not
    /// retried, so a run without network that asks the Hub for twenty files fails each at once
    /// instead of pausing twenty times (`check .` offline: 10.4 s, then about 1 s).
    pub fn with_retries<T>(
        &self,
        requests: &mut usize,
        mut attempt: impl FnMut() -> Attempt<T>,
    ) -> Result<T, HubError> {
        let retries = if unreachable::known(self.t.endpoint) {
            0
        } else {
            RETRIES
        };
        let mut delay = Duration::from_millis(200);
        let mut n = 0;
        loop {
            n += 1;
            *requests += 1;
            match attempt() {
                Attempt::Done(r) => {
                    if r.is_ok() {
                        unreachable::forget(self.t.endpoint);
                    }
                    return r;
                }
                Attempt::Retry(e) if n > retries => {
                    if e.kind == HubErrorKind::Unreachable {
                        unreachable::remember(self.t.endpoint);
                    }
                    return Err(e);
                }
                Attempt::Retry(_) => {
                    std::thread::sleep(delay);
                    delay *= 2;
                }
            }
        }
    }

    /// Sends `method url` (with `range`, if any) and follows redirects as `follow` says
    /// ([`Client::send`]: the token stays with the endpoint). The answer is the first response
    /// that is not a redirect to follow.
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        range: Option<&str>,
        follow: Follow,
    ) -> Result<Response, HubError> {
        let headers: Vec<(HeaderName, &str)> =
            range.map(|r| (net::header::RANGE, r)).into_iter().collect();
        self.client
            .send(method, url, &headers, follow)
            .await
            .map_err(|e| match e {
                NetError::BadUrl(what) => HubError::new(
                    HubErrorKind::BadResponse,
                    format!("{what} while fetching {}", self.t.what()),
                ),
                other => transport(&other, self.t),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An endpoint no attempt reached is tried once by later requests; a success forgets it.
    #[test]
    fn an_unreachable_endpoint_is_not_retried_twice_in_a_run() {
        let settings = super::super::settings::HubSettings::resolve(&Default::default(), &|k| {
            (k == "HOME").then(|| "/nonexistent".to_string())
        })
        .unwrap();
        let t = Target {
            endpoint: "http://unreachable.test.invalid",
            repo: "org/name",
            revision: "main",
            filename: "config.json",
            timeout: Duration::from_secs(1),
            attempts: 1,
        };
        let http = Http::new(&settings, &t, "test").unwrap();
        let refused = || {
            Attempt::<()>::Retry(HubError::new(
                HubErrorKind::Unreachable,
                "refused".to_string(),
            ))
        };
        let mut first = 0;
        assert!(http.with_retries(&mut first, refused).is_err());
        assert_eq!(first, RETRIES + 1);
        let mut second = 0;
        assert!(http.with_retries(&mut second, refused).is_err());
        assert_eq!(second, 1, "the endpoint is known unreachable: one attempt");
        assert!(http.with_retries(&mut 0, || Attempt::Done(Ok(()))).is_ok());
        let mut third = 0;
        assert!(http.with_retries(&mut third, refused).is_err());
        assert_eq!(
            third,
            RETRIES + 1,
            "a success took the endpoint off the list"
        );
    }

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
