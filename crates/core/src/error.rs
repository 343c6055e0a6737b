//! The one error type of the library.
//!
//! Every `Error` is something that stopped a command from running: unreadable or invalid input,
//! a missing file, a Hub failure. Findings (differences, lint results) are data, never errors, so
//! the binary can map any `Error` to exit code 2 without looking at where it came from. An error
//! carries its kind (so callers branch on it, never on message text), where it happened (file,
//! line, column) when that is known, and a hint saying what to do.

use std::fmt;
use std::path::PathBuf;

/// What kind of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad usage: flags that contradict each other, a malformed argument.
    Usage,
    /// A file could not be read or written.
    Io,
    /// An input was read but is not what it must be (invalid JSON, a non-object config, a
    /// hostile header).
    InvalidInput,
    /// The Hub (or its cache) could not answer; the Hub's own kind says why.
    Hub(HubErrorKind),
}

/// What kind of Hub failure, so callers and tests can branch without parsing the message
/// (defined here, below the Hub client, so every layer can name it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HubErrorKind {
    /// A repo id, revision, file name or setting is malformed.
    InvalidInput,
    /// 401: the repo is gated or private and no (valid) token was sent.
    AuthRequired,
    /// 403: the token is valid but may not read this repo (gated terms not accepted, or scope).
    Forbidden,
    RepoNotFound,
    RevisionNotFound,
    EntryNotFound,
    /// 429.
    RateLimited,
    /// 5xx after the bounded retries.
    Server,
    /// No answer within the timeout.
    Timeout,
    /// Could not connect to the endpoint at all.
    Unreachable,
    /// The file is larger than the cap for its kind.
    TooLarge,
    /// The answer was inconsistent: truncated body, content not matching its ETag, bad headers.
    BadResponse,
    /// Offline (or the Hub gave no answer) and the cache has no copy.
    NotInCache,
    /// `require_fresh` is set but only a cached copy could be used.
    NotFresh,
    /// Reading or writing the cache failed.
    Io,
}

/// A failure that prevents a command from producing an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    /// What went wrong and where (file, line, JSON path).
    pub message: String,
    /// What the user can do about it, when we know.
    pub hint: Option<String>,
    /// The file the error is about, when there is one.
    pub file: Option<PathBuf>,
    /// 1-based line and column in `file` (a JSON syntax error's position).
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl Error {
    /// An invalid-input error (the most common kind); see [`Error::kind`] for others.
    pub fn new(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::InvalidInput,
            message: message.into(),
            hint: None,
            file: None,
            line: None,
            column: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// Where the error is: a file, and a position in it when known.
    pub fn at(mut self, file: impl Into<PathBuf>, position: Option<(usize, usize)>) -> Self {
        self.file = Some(file.into());
        if let Some((line, column)) = position {
            self.line = Some(line);
            self.column = Some(column);
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
