//! Hub failures as one error type whose message always names the repo, revision and file.
//!
//! The Hub's answers (status and `X-Error-Code`) are mapped here, so every caller sees the same
//! wording. Messages never contain the token: they are built from our own strings plus server
//! text, and [`HubError::redact`] scrubs the token from whatever the server or the HTTP stack
//! said. A password in the endpoint (`http://user:secret@host`) is scrubbed from every message
//! and hint when the error is made ([`redact_userinfo`]), so no path, ours or the HTTP stack's,
//! can print it. What is scrubbed comes from the parsed endpoint (the URL parser's userinfo,
//! registered when the settings are resolved), never from scanning text for where a URL might
//! end: a password may hold `"`, `'`, `` ` ``, `<` or `>`.

use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use crate::net::{header_text, HeaderMap, NetError, Url};

pub use crate::error::HubErrorKind;

/// A Hub failure: what went wrong (naming repo, revision and file) and what to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubError {
    pub kind: HubErrorKind,
    pub message: String,
    pub hint: Option<String>,
}

impl HubError {
    pub fn new(kind: HubErrorKind, message: impl Into<String>) -> Self {
        HubError {
            kind,
            message: redact_userinfo(&message.into()),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(redact_userinfo(&hint.into()));
        self
    }

    /// Replaces every occurrence of `secret` in the message and hint by `<redacted>`.
    pub(crate) fn redact(mut self, secret: Option<&str>) -> Self {
        if let Some(secret) = secret.filter(|s| !s.is_empty()) {
            self.message = self.message.replace(secret, "<redacted>");
            self.hint = self.hint.map(|h| h.replace(secret, "<redacted>"));
        }
        self
    }

    /// The Hub gave no usable answer (network, timeout, 5xx, 429): a cached copy may stand in.
    pub fn is_no_answer(&self) -> bool {
        matches!(
            self.kind,
            HubErrorKind::Unreachable
                | HubErrorKind::Timeout
                | HubErrorKind::Server
                | HubErrorKind::RateLimited
        )
    }
}

impl fmt::Display for HubError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for HubError {}

impl From<HubError> for crate::Error {
    fn from(e: HubError) -> Self {
        let err = crate::Error::new(e.message).kind(crate::error::ErrorKind::Hub(e.kind));
        match e.hint {
            Some(h) => err.with_hint(h),
            None => err,
        }
    }
}

/// The user information of every endpoint resolved in this process (`user:password@`), in
/// each form a message may hold it: as the URL parser writes it (the settings keep the parsed
/// endpoint, and the HTTP stack prints URLs the same way) and percent-decoded.
static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records `url`'s user information, if it has any, so that every later Hub error message and
/// hint scrubs it ([`redact_userinfo`]). Called with every endpoint the settings accept.
pub(crate) fn register_userinfo(url: &Url) {
    if url.username().is_empty() && url.password().is_none() {
        return;
    }
    let written = match url.password() {
        Some(p) => format!("{}:{p}@", url.username()),
        None => format!("{}@", url.username()),
    };
    let decoded = percent_decoded(&written);
    let mut secrets = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    for s in [written, decoded] {
        if !secrets.contains(&s) {
            secrets.push(s);
        }
    }
    // The longest first, so a form that contains another is replaced whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
}

fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` with the user information of every endpoint resolved in this process
/// ([`register_userinfo`]) replaced by `***`: `http://***@host`. Applied to every Hub error's
/// message and hint when it is made.
pub fn redact_userinfo(text: &str) -> String {
    let secrets = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = text.to_string();
    for s in secrets.iter() {
        out = out.replace(&format!("://{s}"), "://***@");
    }
    out
}

/// `url` fit to show: parsed, its user information (a token, a password) as `***`; text that
/// does not parse as a URL with a host (`alice:secret@host` parses, as scheme `alice` and path
/// `secret@host`) is not shown at all, since where a password in it ends cannot be told. The
/// one way an endpoint is shown (`env` in every format, the endpoint's own errors).
pub fn shown_url(url: &str) -> String {
    let Some(mut parsed) = Url::parse(url.trim())
        .ok()
        .filter(|u| u.host_str().is_some())
    else {
        return "<not shown: not a URL>".into();
    };
    if !parsed.username().is_empty() || parsed.password().is_some() {
        // Neither can fail for a URL with a host, which one with user information has.
        let _ = parsed.set_password(None);
        let _ = parsed.set_username("***");
    }
    let text = parsed.as_str();
    // The parser writes an empty path as `/`; the endpoint was given without it.
    match text.strip_suffix('/') {
        Some(t) if parsed.path() == "/" && !url.trim().ends_with('/') => t.to_string(),
        _ => text.to_string(),
    }
}

/// What was asked for, to name it in messages.
#[derive(Debug, Clone)]
pub(crate) struct Target<'a> {
    pub endpoint: &'a str,
    pub repo: &'a str,
    pub revision: &'a str,
    pub filename: &'a str,
    pub timeout: Duration,
    pub attempts: usize,
}

impl Target<'_> {
    /// "`config.json` of `org/name` at revision `main`"
    pub fn what(&self) -> String {
        format!(
            "`{}` of `{}` at revision `{}`",
            self.filename, self.repo, self.revision
        )
    }

    fn repo_page(&self) -> String {
        format!("{}/{}", self.endpoint, self.repo)
    }
}

pub(crate) fn server_detail(server_message: Option<&str>) -> String {
    match server_message.map(str::trim) {
        Some(m) if !m.is_empty() => format!(" (the Hub said: {m})"),
        _ => String::new(),
    }
}

pub(crate) fn repo_not_found(t: &Target<'_>) -> HubError {
    HubError::new(
        HubErrorKind::RepoNotFound,
        format!(
            "repository `{}` not found at {} (while fetching {})",
            t.repo,
            t.endpoint,
            t.what()
        ),
    )
    .with_hint(format!(
        "check the spelling of `{}`; a private repo also answers \"not found\" without a token: set HF_TOKEN",
        t.repo
    ))
}

pub(crate) fn revision_not_found(t: &Target<'_>) -> HubError {
    HubError::new(
        HubErrorKind::RevisionNotFound,
        format!(
            "revision `{}` not found in `{}` (while fetching `{}`)",
            t.revision, t.repo, t.filename
        ),
    )
    .with_hint(format!(
        "use a branch, tag or full 40-character commit sha that exists; see {}/commits/main",
        t.repo_page()
    ))
}

pub(crate) fn entry_not_found(t: &Target<'_>) -> HubError {
    HubError::new(
        HubErrorKind::EntryNotFound,
        format!(
            "`{}` does not exist in `{}` at revision `{}`",
            t.filename, t.repo, t.revision
        ),
    )
    .with_hint(format!(
        "list the repo's files on {}/tree/{}",
        t.repo_page(),
        t.revision
    ))
}

pub(crate) fn gated(t: &Target<'_>, status: u16, detail: &str) -> HubError {
    HubError::new(
        if status == 401 {
            HubErrorKind::AuthRequired
        } else {
            HubErrorKind::Forbidden
        },
        format!(
            "access to `{}` is restricted ({status}): cannot fetch {}{detail}",
            t.repo,
            t.what()
        ),
    )
    .with_hint(format!(
        "the repo is gated or private: set HF_TOKEN to a token of an account that has accepted the repo's terms on its page {}",
        t.repo_page()
    ))
}

/// A Hub answer with a status that is not a success, for `t`, in our wording: the Hub's
/// `X-Error-Code` tells a missing repo, revision or file apart, `X-Error-Message` is quoted.
pub(crate) fn status_error(t: &Target<'_>, status: u16, headers: &HeaderMap) -> HubError {
    let code = header_text(headers, "x-error-code");
    let detail = server_detail(header_text(headers, "x-error-message").as_deref());
    match (status, code.as_deref()) {
        (401 | 404, Some("RepoNotFound")) => repo_not_found(t),
        (401 | 404, Some("RevisionNotFound")) => revision_not_found(t),
        (401 | 404, Some("EntryNotFound")) | (404, _) => entry_not_found(t),
        (401, _) | (403, Some("GatedRepo")) => gated(t, status, &detail),
        (403, _) => HubError::new(
            HubErrorKind::Forbidden,
            format!("the Hub refused access (403) to {}{detail}", t.what()),
        )
        .with_hint(format!(
            "check that HF_TOKEN has read access to `{}`; for a gated repo accept its terms on {}",
            t.repo,
            t.repo_page()
        )),
        (429, _) => {
            let when = match header_text(headers, "retry-after")
                .and_then(|v| v.trim().parse::<u64>().ok())
            {
                Some(secs) => format!("retry in {secs} s (Retry-After)"),
                None => "retry in a few minutes".to_string(),
            };
            HubError::new(
                HubErrorKind::RateLimited,
                format!(
                    "the Hub rate-limited the request (429) for {} after {} attempts",
                    t.what(),
                    t.attempts
                ),
            )
            .with_hint(format!(
                "{when}; an authenticated request (HF_TOKEN) has a higher limit"
            ))
        }
        (500..=599, _) => HubError::new(
            HubErrorKind::Server,
            format!(
                "the Hub answered {status} for {} after {} attempts{detail}",
                t.what(),
                t.attempts
            ),
        )
        .with_hint("the Hub is having trouble; retry later, or use --offline to read the cache"),
        _ => HubError::new(
            HubErrorKind::BadResponse,
            format!("the Hub answered {status} for {}{detail}", t.what()),
        ),
    }
}

/// The request for `t` did not finish within its deadline.
pub(crate) fn timed_out(t: &Target<'_>) -> HubError {
    HubError::new(
        HubErrorKind::Timeout,
        format!(
            "no complete answer from {} within {} s (connection, redirects, headers and body) while fetching {}",
            t.endpoint,
            t.timeout.as_secs_f64(),
            t.what()
        ),
    )
    .with_hint("raise --timeout, check the network, or use --offline to read the cache")
}

/// The one deadline of a read made of several requests (a GGUF model: its file list and its
/// header's ranges) passed: `--timeout` bounds the read as a whole.
pub(crate) fn read_timed_out(t: &Target<'_>) -> HubError {
    HubError::new(
        HubErrorKind::Timeout,
        format!(
            "{} was not read from {} within {} s: --timeout bounds the whole read of a GGUF model \
             from the Hub (its file list and every range request of its header), not each request",
            t.what(),
            t.endpoint,
            t.timeout.as_secs_f64()
        ),
    )
    .with_hint("raise --timeout, check the network, or use --offline to read the cache")
}

pub(crate) fn transport(source: &NetError, t: &Target<'_>) -> HubError {
    match source {
        NetError::Timeout => timed_out(t),
        NetError::Connect(cause) => HubError::new(
            HubErrorKind::Unreachable,
            format!(
                "cannot reach {} while fetching {}: {cause}",
                t.endpoint,
                t.what()
            ),
        )
        .with_hint("check the network and HF_ENDPOINT, or use --offline to read the cache"),
        NetError::Setup(cause) => HubError::new(
            HubErrorKind::InvalidInput,
            format!("cannot set up the HTTP client for {}: {cause}", t.endpoint),
        ),
        NetError::Transfer(cause) | NetError::BadUrl(cause) => HubError::new(
            HubErrorKind::BadResponse,
            format!(
                "transfer from {} failed while fetching {}: {cause}",
                t.endpoint,
                t.what()
            ),
        )
        .with_hint("retry; if it persists the connection or a proxy is cutting the download short"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The endpoint's user information is scrubbed as the parser read it, whatever it holds
    /// (issue 32: a password with `"`, `'`, `` ` ``, `<`, `>` was printed whole).
    #[test]
    fn endpoint_userinfo_is_redacted_from_the_parsed_url() {
        let raw = "http://al:p\"w'`<x>@h.example:8080";
        let url = Url::parse(raw).unwrap();
        register_userinfo(&url);
        let shown = url.as_str().trim_end_matches('/');
        let e = HubError::new(
            HubErrorKind::Timeout,
            format!("no answer from {shown}/org/x and `{raw}`"),
        )
        .with_hint(format!("check {raw}"));
        let text = e.to_string();
        assert!(!text.contains("p\"w") && !text.contains("p%22w"), "{text}");
        assert!(text.contains("http://***@h.example:8080/org/x"), "{text}");
        assert_eq!(shown_url(raw), "http://***@h.example:8080");
        assert_eq!(shown_url("https://TOKEN@hf.co/"), "https://***@hf.co/");
        assert_eq!(shown_url("https://hf-mirror.com"), "https://hf-mirror.com");
        assert_eq!(shown_url("alice:secret@host"), "<not shown: not a URL>");
        // Text that is not the endpoint is left as it is.
        assert_eq!(
            redact_userinfo("https://hf.co/x@y (a@b)"),
            "https://hf.co/x@y (a@b)"
        );
    }
}
