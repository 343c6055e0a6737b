//! Terminal styling: ANSI colours on or off (`--color`, `NO_COLOR`), and the one way each
//! severity is painted, for every human renderer.

use crate::diagnostic::Severity;

/// ANSI styling, on or off.
#[derive(Debug, Clone, Copy)]
pub struct Painter {
    pub enabled: bool,
}

impl Painter {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
    pub fn bold(&self, t: &str) -> String {
        self.paint("1", t)
    }
    pub fn dim(&self, t: &str) -> String {
        self.paint("2", t)
    }
    pub fn red(&self, t: &str) -> String {
        self.paint("1;31", t)
    }
    pub fn yellow(&self, t: &str) -> String {
        self.paint("33", t)
    }
    pub fn green(&self, t: &str) -> String {
        self.paint("32", t)
    }
    /// `error` / `warning` / `info` of a lint or check finding, coloured.
    pub fn level(&self, s: Severity) -> String {
        match s {
            Severity::Error => self.red("error"),
            Severity::Warning => self.yellow("warning"),
            Severity::Info => self.dim("info"),
        }
    }
}
