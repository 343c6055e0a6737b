//! Hub failures as one error type whose message always names the repo, revision and file.
//!
//! The Hub's answers (status and `X-Error-Code`) are mapped here, so every caller sees the same
//! wording. Messages never contain the token: they are built from our own strings plus server
//! text, and [`HubError::redact`] scrubs the token from whatever the server or the HTTP stack
//! said. A password in the endpoint (`http://user:secret@host`) is scrubbed from every message
//! and hint when the error is made ([`redact_userinfo`]), so no path, ours or the HTTP stack's,
//! can print it.

use std::fmt;
use std::time::Duration;

use crate::net::{header_text, HeaderMap, NetError};

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

/// `text` with the user information of every URL in it (`scheme://user:password@host`)
/// replaced by `***`: `http://***@host`. The one place an endpoint is made fit to show
/// (`env` in every format, every Hub error message and hint).
pub fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends at the path, query or fragment, or where the URL ends in prose.
        let end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '`' | '\'' | '"' | '<' | '>') || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        match tail[..end].rfind('@') {
            Some(at) => {
                out.push_str("***");
                rest = &tail[at..];
            }
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
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

    #[test]
    fn userinfo_is_redacted_in_urls_and_prose() {
        assert_eq!(
            redact_userinfo("http://user:secret@host:8080/a?b"),
            "http://***@host:8080/a?b"
        );
        assert_eq!(redact_userinfo("https://TOKEN@hf.co"), "https://***@hf.co");
        assert_eq!(
            redact_userinfo("cannot reach `http://u:p@h` nor https://x:y@z/p (a@b)"),
            "cannot reach `http://***@h` nor https://***@z/p (a@b)"
        );
        assert_eq!(
            redact_userinfo("https://huggingface.co/x@y"),
            "https://huggingface.co/x@y"
        );
        assert_eq!(redact_userinfo("no url, a@b, ://"), "no url, a@b, ://");
        assert_eq!(redact_userinfo("http://ü:ß@é/"), "http://***@é/");
        let e = HubError::new(HubErrorKind::Timeout, "no answer from http://u:pw@h")
            .with_hint("check http://u:pw@h");
        assert!(!e.to_string().contains("pw"), "{e}");
    }
}
