//! `net`: the one HTTP client. Every request the tool sends — to the Hub (`hub`: the `HEAD`
//! that resolves a file, the `GET` that downloads it, the ranged `GET`s of safetensors headers)
//! and to a running server (`acceptance::scrape`: `/metrics`; `doctor`: what the server says
//! about itself, through the scraper) — goes through [`Client`], so that these hold in one
//! place:
//!
//! - **The token stays with its origin.** Redirects are followed by hand, never by the HTTP
//!   stack (whose redirect policies copy the original headers onto every hop). A token
//!   ([`Client::with_token`]) is sent only to its home origin (scheme, host and port), and
//!   only while the chain has never left it: once a hop goes elsewhere, no later hop carries
//!   it, even one that comes back (its URL was chosen by the other host).
//! - **One deadline per request.** [`Client::run`] bounds a whole request (connect, every
//!   redirect hop, headers and body) by the caller's `--timeout`; a read made of several
//!   requests can also be given one deadline for all of them ([`Client::with_deadline`]: a
//!   GGUF header read by ranges, issue 44), which then bounds each request too.
//! - **Sizes from the network are claims, checked before use.** Nothing is preallocated from a
//!   server's number; bodies are read chunk by chunk and abandoned as soon as they pass the
//!   caller's cap ([`read_capped`], [`read_part`]).
//! - **A loopback host never goes through a proxy.** A proxy from the environment
//!   (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, with `NO_PROXY`) is used for other hosts; a
//!   request to this machine — `localhost`, `127.0.0.0/8`, `::1`, `::ffff:127.x.x.x`, or the
//!   unspecified address (`0.0.0.0`, `::`, which a connection reaches this machine by) — is
//!   sent directly, hop by hop ([`is_loopback`]): a proxy would reach its own machine, or see
//!   a scrape of a local server that is none of its business.
//! - **No side channels.** No xet, no CAS, no content decoding: a body is the bytes of a plain
//!   request, as stored (`Accept-Encoding: identity`).
//!
//! Nothing else in the crate names `reqwest` or `tokio` (`tests/architecture.rs`): callers
//! use the types re-exported here. Errors are [`NetError`]s, which each caller words in its own
//! terms (the Hub's `HubError` names the repo and file; the scraper's names the URL).

use std::cell::OnceCell;
use std::future::Future;
use std::net::IpAddr;
use std::time::{Duration, Instant};

pub use reqwest::header::{self, HeaderMap, HeaderName};
pub use reqwest::{Method, Response, StatusCode, Url};

use reqwest::header::{ACCEPT_ENCODING, LOCATION};

/// Redirect hops followed before giving up (the Hub uses one or two).
pub const MAX_REDIRECTS: usize = 10;

/// Which redirects a request follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// Only those that stay on the home origin; a redirect elsewhere is the answer (a `HEAD`
    /// reads the file's metadata from the Hub's own redirect to its CDN, as `huggingface_hub`
    /// does).
    SameOrigin,
    /// All of them, the token only as the module says.
    Any,
}

/// Why a request got no usable answer, for the caller to word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetError {
    /// The HTTP stack or the runtime could not be set up.
    Setup(String),
    /// The HTTP stack's own timer (the deadline) ran out.
    Timeout,
    /// No connection: the innermost cause ("Connection refused (os error 111)").
    Connect(String),
    /// The request or its answer broke off after connecting: the innermost cause.
    Transfer(String),
    /// A URL or a redirect that cannot be followed: what is wrong with it.
    BadUrl(String),
}

impl std::fmt::Display for NetError {
    /// What went wrong, without a URL: each caller says what was being fetched.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NetError::Timeout => f.write_str("timed out"),
            NetError::Setup(what)
            | NetError::Connect(what)
            | NetError::Transfer(what)
            | NetError::BadUrl(what) => f.write_str(what),
        }
    }
}

impl NetError {
    fn from_reqwest(e: &reqwest::Error) -> NetError {
        if e.is_timeout() {
            NetError::Timeout
        } else if e.is_connect() {
            NetError::Connect(root_cause(e))
        } else {
            NetError::Transfer(root_cause(e))
        }
    }
}

/// The innermost cause's message ("Connection refused (os error 111)").
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// Whether `url`'s host is this machine: `localhost` (any case, with or without a trailing
/// dot), an IPv4 address in `127.0.0.0/8`, `::1`, an IPv4-mapped `::ffff:127.x.x.x`, or the
/// unspecified `0.0.0.0` / `::` (a connection to it reaches this machine). The URL parser
/// has already normalised the other spellings (`127.1`, `0x7f.0.0.1`, `[0:0::1]`).
pub fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<IpAddr>() {
        Ok(ip) => {
            let ip = match ip {
                IpAddr::V6(v6) => v6.to_canonical(),
                v4 => v4,
            };
            ip.is_loopback() || ip.is_unspecified()
        }
        Err(_) => {
            let name = host.strip_suffix('.').unwrap_or(host);
            name.eq_ignore_ascii_case("localhost")
        }
    }
}

/// A token and the origin it belongs to.
struct Token<'a> {
    secret: &'a str,
    home: String,
}

/// `scheme://host:port`, the origin a token belongs to.
fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The one HTTP client: a current-thread runtime, one deadline, and connection pools built
/// when first needed — direct (loopback hosts) or through the environment's proxy (others),
/// each with TLS (`https://`, the system's certificate store read) or without (`http://`: a
/// plain scrape of a server's `/metrics` read the whole store for nothing, and failed where
/// there is none, issue 44).
pub struct Client<'a> {
    runtime: tokio::runtime::Runtime,
    timeout: Duration,
    /// When the whole read this client serves must be done by, if it has one.
    deadline: Option<Instant>,
    user_agent: String,
    home: Option<String>,
    token: Option<Token<'a>>,
    /// By `[loopback][https]`.
    pools: [[OnceCell<reqwest::Client>; 2]; 2],
}

impl<'a> Client<'a> {
    /// A client whose requests each end within `timeout`; `purpose` goes in the User-Agent.
    pub fn new(timeout: Duration, purpose: &str) -> Result<Client<'a>, NetError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| NetError::Setup(e.to_string()))?;
        Ok(Client {
            runtime,
            timeout,
            deadline: None,
            user_agent: format!("dflash-check/{}; {purpose}", env!("CARGO_PKG_VERSION")),
            home: None,
            token: None,
            pools: Default::default(),
        })
    }

    /// `home` is the origin [`Follow::SameOrigin`] stays on, and the only one `token` (if
    /// any) is sent to.
    pub fn with_home(mut self, home: &Url, token: Option<&'a str>) -> Client<'a> {
        self.home = Some(origin(home));
        // An origin that is not a URL's (`null`) matches no hop: no token to hold it.
        self.token = token
            .filter(|_| home.origin().is_tuple())
            .map(|secret| Token {
                secret,
                home: origin(home),
            });
        self
    }

    /// The connection pool for a request to `url`: direct for this machine, else the
    /// environment's proxy settings; TLS roots only for an `https://` URL (each redirect hop
    /// takes the pool of its own URL, so an `http://` one never carries a TLS connection).
    fn pool(&self, url: &Url) -> Result<&reqwest::Client, NetError> {
        let loopback = is_loopback(url);
        let https = url.scheme() != "http";
        let cell = &self.pools[usize::from(loopback)][usize::from(https)];
        if let Some(client) = cell.get() {
            return Ok(client);
        }
        let mut builder = reqwest::Client::builder()
            // Redirects are ours to follow (module doc).
            .redirect(reqwest::redirect::Policy::none())
            // The deadline is `run`'s, over the whole request; this only ends a connection
            // attempt that alone would use it all.
            .connect_timeout(self.timeout)
            .user_agent(&self.user_agent);
        if loopback {
            builder = builder.no_proxy();
        }
        if !https {
            // No root of trust to load: nothing is verified on a plain connection.
            builder = builder.tls_certs_only(std::iter::empty());
        }
        let client = builder
            .build()
            .map_err(|e| NetError::Setup(root_cause(&e)))?;
        Ok(cell.get_or_init(|| client))
    }

    /// Every request of this client must end by `deadline` as well as within the timeout:
    /// one bound for a read made of several requests.
    pub fn with_deadline(mut self, deadline: Option<Instant>) -> Client<'a> {
        self.deadline = deadline;
        self
    }

    /// Whether the read's deadline ([`Client::with_deadline`]) has passed.
    pub fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Runs one request (`fut`: send, follow, read) under the one deadline (the timeout, or
    /// what is left until the read's deadline when that is sooner); `None` when it passed
    /// first.
    pub fn run<T>(&self, fut: impl Future<Output = T>) -> Option<T> {
        let limit = match self.deadline {
            Some(d) => self
                .timeout
                .min(d.saturating_duration_since(Instant::now())),
            None => self.timeout,
        };
        if limit.is_zero() {
            return None;
        }
        self.runtime
            // The timer is made inside the runtime (it needs its reactor).
            .block_on(async { tokio::time::timeout(limit, fut).await })
            .ok()
    }

    /// Sends `method url` with `headers` and follows redirects as `follow` says; the token
    /// goes only where the module doc says. The answer is the first response that is not a
    /// redirect to follow.
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(HeaderName, &str)],
        follow: Follow,
    ) -> Result<Response, NetError> {
        let mut url =
            Url::parse(url).map_err(|e| NetError::BadUrl(format!("invalid URL `{url}`: {e}")))?;
        let mut left_home = false;
        for _ in 0..=MAX_REDIRECTS {
            let pool = self.pool(&url)?;
            let mut req = pool
                .request(method.clone(), url.clone())
                // The bytes as stored: their length and hash are what the server announced.
                .header(ACCEPT_ENCODING, "identity");
            for (name, value) in headers {
                req = req.header(name, *value);
            }
            if let Some(token) = &self.token {
                left_home |= origin(&url) != token.home;
                if !left_home {
                    req = req.bearer_auth(token.secret);
                }
            }
            let resp = req.send().await.map_err(|e| NetError::from_reqwest(&e))?;
            if !resp.status().is_redirection() {
                return Ok(resp);
            }
            let Some(location) = header_text(resp.headers(), LOCATION.as_str()) else {
                return Ok(resp);
            };
            let next = url.join(&location).map_err(|e| {
                NetError::BadUrl(format!(
                    "a redirect to an invalid URL `{}` ({e})",
                    location.escape_debug()
                ))
            })?;
            if !matches!(next.scheme(), "http" | "https") {
                return Err(NetError::BadUrl(format!(
                    "a redirect to `{}`, which is not http(s)",
                    location.escape_debug()
                )));
            }
            if follow == Follow::SameOrigin && self.home.as_deref() != Some(origin(&next).as_str())
            {
                return Ok(resp);
            }
            url = next;
        }
        Err(NetError::BadUrl(format!(
            "more than {MAX_REDIRECTS} redirects"
        )))
    }
}

/// A header's text, if it has one.
pub fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Why [`read_capped`] stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// The response's `Content-Length` is over the cap: nothing was read.
    Announced(u64),
    /// More than the cap arrived; this many bytes had been read when it was noticed.
    OverCap(u64),
    Transport(NetError),
}

/// Reads `resp`'s body, at most `cap` bytes: a `Content-Length` over the cap is refused before
/// any byte is read; then chunk by chunk, without preallocating, stopping (and dropping the
/// connection) as soon as the body passes `cap`. `progress` gets the running byte count.
pub async fn read_capped(
    resp: &mut Response,
    cap: u64,
    mut progress: impl FnMut(u64),
) -> Result<Vec<u8>, BodyError> {
    if let Some(n) = resp.content_length().filter(|&n| n > cap) {
        return Err(BodyError::Announced(n));
    }
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
            Err(e) => return Err(BodyError::Transport(NetError::from_reqwest(&e))),
        }
    }
}

/// Bytes `skip..skip + want` of `resp`'s body, or fewer if it ends first: reading stops as
/// soon as they are in (the rest of a file is never read), and nothing is preallocated.
pub async fn read_part(resp: &mut Response, skip: u64, want: u64) -> Result<Vec<u8>, NetError> {
    let mut body: Vec<u8> = Vec::new();
    let mut seen: u64 = 0;
    while (body.len() as u64) < want {
        let Some(chunk) = resp.chunk().await.map_err(|e| NetError::from_reqwest(&e))? else {
            break;
        };
        let from = skip.saturating_sub(seen).min(chunk.len() as u64) as usize;
        seen += chunk.len() as u64;
        let room = (want - body.len() as u64) as usize;
        let take = (chunk.len() - from).min(room);
        body.extend_from_slice(&chunk[from..from + take]);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every spelling of this machine is loopback (issue 32: the scraper sent
    /// `[::ffff:127.0.0.1]` through `HTTP_PROXY`); other hosts are not.
    #[test]
    fn loopback_in_every_spelling() {
        let local = [
            "http://localhost:8000/metrics",
            "http://LocalHost./metrics",
            "http://127.0.0.1:8000/",
            "http://127.0.0.2/",
            "http://127.255.255.254/",
            "http://127.1/",
            "http://0x7f.0.0.1/",
            "http://2130706433/",
            "http://[::1]:8000/",
            "http://[0:0:0:0:0:0:0:1]/",
            "http://[::ffff:127.0.0.1]:8000/metrics",
            "http://[::ffff:7f00:2]/",
            "http://0.0.0.0:8000/",
            "http://[::]:8000/",
            "https://localhost/",
        ];
        for u in local {
            assert!(is_loopback(&Url::parse(u).unwrap()), "{u}");
        }
        let remote = [
            "http://10.0.0.1/",
            "http://128.0.0.1/",
            "http://[::2]/",
            "http://[::ffff:10.0.0.1]/",
            "http://localhost.example.com/",
            "http://notlocalhost/",
            "https://huggingface.co/",
        ];
        for u in remote {
            assert!(!is_loopback(&Url::parse(u).unwrap()), "{u}");
        }
    }
}
