//! The one display filter for text that comes from inputs: a token's text from a target's
//! tokenizer (which a Hub target brings from whoever publishes it), a path, a server's answer,
//! a metrics label, an `[[ignore]]` reason. Every human line and every error goes through
//! [`shown`] where it is written (`report::human`, the binary's stderr, GitHub annotations and
//! the step summary), so a control character, an escape sequence or a bidi override in an input is
//! printed as a visible escape and never retitles or clears a terminal, starts a line of its
//! own in a CI log (a forged `::error` annotation, an `::add-mask::`), or reorders what a
//! reader sees. JSON output does not use it: its encoder escapes controls itself and keeps the
//! text exact.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal or a log as itself: C0 controls (line breaks and tabs
/// included: one line of output stays one line), DEL, C1 controls (8-bit CSI and OSC among
/// them), the bidi embeddings, overrides, isolates and marks that reorder what a reader sees
/// (Trojan Source), and the Unicode line and paragraph separators.
pub fn is_unshowable(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        | '\u{200e}' | '\u{200f}' | '\u{061c}'
        | '\u{2028}' | '\u{2029}')
}

/// `s` fit to print on a terminal or in a CI log: each [unshowable](is_unshowable) character
/// as a visible escape (`\n`, `\r`, `\t`, `\u{1b}`, `\u{202e}`), everything else as it is,
/// borrowed when nothing needed escaping. A backslash is kept as it is: the escapes are for a
/// reader, not a parser. `##[` becomes `#\u{23}[`: the GitHub runner's older command syntax
/// (`##[add-mask]…`) is looked for anywhere in a line, not only at its start.
pub fn shown(s: &str) -> Cow<'_, str> {
    // Printable ASCII holds no unshowable character: told from the bytes, without decoding
    // characters (nearly every line of a report; `check` renders thousands, issue 44).
    let plain_ascii = printable_ascii(s, None);
    if (plain_ascii || !s.chars().any(is_unshowable)) && !s.contains("##[") {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '#' if out.ends_with('#') && chars.peek() == Some(&'[') => out.push_str("\\u{23}"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unshowable(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether every byte of `s` is printable ASCII (`' '..='~'`) and none is `except`. Every
/// byte is tested, with no early exit, so the test is vectorised: `all` went a byte at a time,
/// and a report's every line is tested (a sixth of rendering `check`'s page, issue 44).
pub fn printable_ascii(s: &str, except: Option<u8>) -> bool {
    let except = except.unwrap_or(b' ' - 1);
    s.bytes().fold(true, |ok, b| {
        ok & (b' '..=b'~').contains(&b) & (b != except)
    })
}

/// How [`crate::Error`]'s `Display` puts its hint on a line of its own; a finding that quotes
/// an error (`check`'s `config-unreadable`) holds it too.
pub const HINT_BREAK: &str = "\n  hint: ";

/// `s` as lines fit to print: [`shown`], except that an error's hint ([`HINT_BREAK`]) keeps its
/// line, so every line but the first starts with `  hint: ` and no text can start a line of
/// its own choosing.
pub fn shown_lines(s: &str) -> Cow<'_, str> {
    if !s.contains(HINT_BREAK) {
        return shown(s);
    }
    Cow::Owned(
        s.split(HINT_BREAK)
            .map(shown)
            .collect::<Vec<_>>()
            .join(HINT_BREAK),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every control, escape and reordering character is printed as a visible escape; text
    /// without them is borrowed untouched.
    #[test]
    fn shown_escapes_what_acts_on_a_terminal() {
        assert!(matches!(shown("<|im_end|> ü ✓ \\n"), Cow::Borrowed(_)));
        assert_eq!(
            shown("x\n::error file=README.md::INJECTED"),
            "x\\n::error file=README.md::INJECTED"
        );
        assert_eq!(
            shown("\u{1b}]0;title\u{7}\u{1b}[2J"),
            "\\u{1b}]0;title\\u{7}\\u{1b}[2J"
        );
        assert_eq!(shown("a\rb\tc\u{0}d\u{7f}"), "a\\rb\\tc\\u{0}d\\u{7f}");
        assert_eq!(shown("\u{9b}31m\u{85}"), "\\u{9b}31m\\u{85}");
        assert_eq!(shown("abc\u{202e}fed\u{2066}"), "abc\\u{202e}fed\\u{2066}");
        assert_eq!(shown("a\u{2028}b\u{2029}"), "a\\u{2028}b\\u{2029}");
        assert_eq!(shown("x ##[add-mask]word"), "x #\\u{23}[add-mask]word");
        assert_eq!(shown("### [x]"), "### [x]");
        assert_eq!(
            shown_lines("bad\n::x\n  hint: do\r this"),
            "bad\\n::x\n  hint: do\\r this"
        );
    }
}
