//! Terminal styling: ANSI colours on or off (`--color`, `NO_COLOR`), and the one way each
//! severity is painted, for every human renderer, and [`Painter::shown`], the display filter
//! every human line is written through.

use std::borrow::Cow;

use crate::diagnostic::Severity;
use crate::display;

/// The SGR codes the painter writes (`ESC [ code m`): the only escape sequences a human line
/// may hold when colours are on.
const CODES: [&str; 6] = ["1", "2", "1;31", "33", "32", "0"];

/// ANSI styling, on or off.
#[derive(Debug, Clone, Copy)]
pub struct Painter {
    pub enabled: bool,
}

impl Painter {
    /// `text` in colour `code`; itself, borrowed, with colours off (no copy for every part of
    /// every finding line when the page goes to a file or a CI log, issue 44).
    fn paint<'a>(&self, code: &str, text: &'a str) -> Cow<'a, str> {
        debug_assert!(CODES.contains(&code));
        if self.enabled {
            Cow::Owned(format!("\x1b[{code}m{text}\x1b[0m"))
        } else {
            Cow::Borrowed(text)
        }
    }
    pub fn bold<'a>(&self, t: &'a str) -> Cow<'a, str> {
        self.paint("1", t)
    }
    pub fn dim<'a>(&self, t: &'a str) -> Cow<'a, str> {
        self.paint("2", t)
    }
    pub fn red<'a>(&self, t: &'a str) -> Cow<'a, str> {
        self.paint("1;31", t)
    }
    pub fn yellow<'a>(&self, t: &'a str) -> Cow<'a, str> {
        self.paint("33", t)
    }
    pub fn green<'a>(&self, t: &'a str) -> Cow<'a, str> {
        self.paint("32", t)
    }
    /// A human line fit to print ([`display::shown`]): every control character escaped, except,
    /// when colours are on, the painter's own colour codes. Input text can still carry one of
    /// those on a colour terminal (it can colour the text after it, not move the cursor,
    /// retitle or clear); off a terminal, with colours off, every `ESC` is escaped.
    pub fn shown<'a>(&self, line: &'a str) -> Cow<'a, str> {
        // Printable ASCII without `#` holds no line break, escape or `##[`: nothing to show
        // differently, told in one pass over the bytes (three passes were a fifth of
        // writing `check`'s page, issue 44).
        if display::printable_ascii(line, Some(b'#')) {
            return Cow::Borrowed(line);
        }
        if line.contains(display::HINT_BREAK) {
            let parts: Vec<_> = line
                .split(display::HINT_BREAK)
                .map(|l| self.shown(l))
                .collect();
            return Cow::Owned(parts.join(display::HINT_BREAK));
        }
        if !self.enabled {
            return display::shown(line);
        }
        let mut out = String::new();
        let mut rest = line;
        while let Some(at) = rest.find('\x1b') {
            let sgr = CODES
                .iter()
                .map(|c| format!("\x1b[{c}m"))
                .find(|s| rest[at..].starts_with(s.as_str()));
            let Some(sgr) = sgr else {
                out.push_str(&display::shown(&rest[..=at]));
                rest = &rest[at + 1..];
                continue;
            };
            out.push_str(&display::shown(&rest[..at]));
            out.push_str(&sgr);
            rest = &rest[at + sgr.len()..];
        }
        if out.is_empty() {
            return display::shown(line);
        }
        out.push_str(&display::shown(rest));
        Cow::Owned(out)
    }
    /// `error` / `warning` / `info` of a lint or check finding, coloured.
    pub fn level(&self, s: Severity) -> Cow<'static, str> {
        match s {
            Severity::Error => self.red("error"),
            Severity::Warning => self.yellow("warning"),
            Severity::Info => self.dim("info"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The painter's colours pass; every other escape, and every line break, is shown.
    #[test]
    fn shown_keeps_only_the_painters_colours() {
        let on = Painter { enabled: true };
        let red = on.red("FAIL");
        assert_eq!(
            on.shown(&format!("{red} a\x1b]0;t\x07\nb")),
            format!("{red} a\\u{{1b}}]0;t\\u{{7}}\\nb")
        );
        assert_eq!(on.shown("\x1b[2J\x1b"), "\\u{1b}[2J\\u{1b}");
        let off = Painter { enabled: false };
        assert_eq!(off.shown("\x1b[1;31mx"), "\\u{1b}[1;31mx");
    }
}
