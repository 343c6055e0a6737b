//! Short forms of values and tokens for one-line messages: `[1, 16, 31, 46, 61]`,
//! `4× sliding_attention, 1× full_attention`, `248070 <|audio_start|> (special)`. Pure string
//! building, shared by findings (which carry messages) and renderers.

use crate::json::{Node, Value};
use crate::tokens::{DecodedToken, TokenClass};

/// `s` cut to at most `max_chars` characters for a message, with how much was left out: input
/// echoed in an error (a pasted word, a flag's value) may be a megabyte long.
pub fn clip(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        None => s.to_string(),
        Some((at, _)) => format!("{}… ({} bytes in all)", &s[..at], s.len()),
    }
}

/// Short form of a value for one-line display: whole when short, summarised when long.
pub fn short_value(node: Option<&Node>, tokens: &[DecodedToken]) -> String {
    let Some(node) = node else {
        return "(absent)".into();
    };
    if !tokens.is_empty() {
        let parts: Vec<String> = tokens.iter().map(short_token).collect();
        return match node.value {
            Value::Array(_) => format!("[{}]", parts.join(", ")),
            _ => parts.join(", "),
        };
    }
    if let Some(items) = node.as_array() {
        if let Some(rle) = run_lengths(items) {
            return rle;
        }
        if items.len() > 12 {
            let head: Vec<String> = items.iter().take(8).map(Node::to_compact).collect();
            return format!("[{}, … ({} items)]", head.join(", "), items.len());
        }
    }
    let text = node.to_compact();
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// Short form of a token field's value: every id decoded (`tokens` holds the decoded ids in
/// order), everything else as written, so a string or a float in an id list is never hidden.
pub fn short_ids(node: Option<&Node>, tokens: &[DecodedToken]) -> String {
    let Some(node) = node else {
        return "(absent)".into();
    };
    let mut decoded = tokens.iter();
    let mut one = |n: &Node| -> String {
        if n.as_u64().is_some() {
            if let Some(t) = decoded.next() {
                return short_token(t);
            }
        } else if is_id_past_u64(n) {
            return format!("{} (out of range: past 2^64)", n.to_compact());
        }
        n.to_compact()
    };
    match node.as_array() {
        Some(items) => {
            let parts: Vec<String> = items.iter().map(&mut one).collect();
            format!("[{}]", parts.join(", "))
        }
        None => one(node),
    }
}

/// `4× sliding_attention, 1× full_attention` for lists of repeated strings.
fn run_lengths(items: &[Node]) -> Option<String> {
    let strings: Vec<&str> = items.iter().map(Node::as_str).collect::<Option<_>>()?;
    let mut runs: Vec<(&str, usize)> = Vec::new();
    for s in strings {
        match runs.last_mut() {
            Some((last, n)) if *last == s => *n += 1,
            _ => runs.push((s, 1)),
        }
    }
    if runs.len() == items.len() && items.len() <= 4 {
        return None;
    }
    Some(
        runs.iter()
            .map(|(s, n)| format!("{n}× {s}"))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// `248070 <|audio_start|>`, `151669 (unused embedding row)`.
pub fn short_token(t: &DecodedToken) -> String {
    let id = t.id;
    match &t.class {
        TokenClass::SpecialAdded { content } => format!("{id} {content} (special)"),
        TokenClass::Added { content } => format!("{id} {content} (added, not special)"),
        TokenClass::AddedToken { content } => format!("{id} {content} (added)"),
        TokenClass::Regular { text, .. } => {
            format!("{id} {} (vocab)", crate::tokens::readable(text))
        }
        TokenClass::UnusedRow { .. } => format!("{id} (unused embedding row)"),
        TokenClass::OutOfRange { vocab_size } => {
            format!("{id} (out of range: ≥ vocab_size {vocab_size})")
        }
        TokenClass::BeyondTokenizer { .. } => format!("{id} (beyond the tokenizer)"),
        TokenClass::Unknown => format!("{id}"),
    }
}

/// Whether `node` is a non-negative integer literal too large for any id (at or past 2^64,
/// including literals too long for `i128`). No embedding has such a row.
pub fn is_id_past_u64(node: &Node) -> bool {
    node.as_number().is_some_and(|n| {
        n.as_u64().is_none() && !n.text.is_empty() && n.text.bytes().all(|b| b.is_ascii_digit())
    })
}

/// `true` for a full 40-character lowercase-or-uppercase hex commit sha.
pub fn is_commit_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}
