//! The one error type of the library.
//!
//! Every `Error` is something that stopped a command from running: unreadable or invalid input,
//! a missing file, a Hub failure. Findings (differences, lint results) are data, never errors, so
//! the binary can map any `Error` to exit code 2 without looking at where it came from.

use std::fmt;

/// A failure that prevents a command from producing an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What went wrong and where (file, line, JSON path).
    pub message: String,
    /// What the user can do about it, when we know.
    pub hint: Option<String>,
}

impl Error {
    pub fn new(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
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
