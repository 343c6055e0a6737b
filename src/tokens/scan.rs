//! A byte scanner over `tokenizer.json` that reads only what token decoding needs.
//!
//! A real tokenizer file is mostly `model.vocab` (4 MB in Qwen3) and `model.merges` (7 MB),
//! and `model` comes last. The scanner reads the file in chunks, keeps the small top-level
//! values it needs (`added_tokens`, `decoder`, `pre_tokenizer`, parsed with serde from their
//! byte span), counts the entries of `model.vocab` without decoding them, decodes only the
//! entries whose id is wanted, and stops as soon as nothing later in the file can change the
//! answer: usually right after the vocabulary, so the merges are never read.
//!
//! It understands the layout that `tokenizers` writes (a vocabulary map of `"token": id`).
//! Anything else (a Unigram list vocabulary, a float id, a syntax error) makes it give up and
//! the caller falls back to the general serde pass over the whole file, which also words the
//! error. What the scanner skips it checks only for structure (strings, brackets); it does not
//! validate the text of the merges it never reads.

use std::collections::BTreeSet;
use std::io::{self, Read};

use super::{mentions_byte_level, RawAddedToken, TokenizerFile};

/// Bytes read per `read` call: small enough not to read far past the vocabulary.
const CHUNK: usize = 256 * 1024;

/// Why a scan stopped without an answer.
#[derive(Debug)]
pub(super) enum Stop {
    /// Reading the file failed.
    Io(io::Error),
    /// The file is laid out in a way the scanner does not handle (or is not valid JSON): use
    /// the general pass, which handles every layout and words the error.
    Fallback,
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Self {
        Stop::Io(e)
    }
}

type Scan<T> = std::result::Result<T, Stop>;

/// The scanner's input: the bytes read so far and the reader they come from.
pub(super) struct Scanner<R> {
    pub(super) buf: Vec<u8>,
    pos: usize,
    src: R,
    eof: bool,
}

impl<R: Read> Scanner<R> {
    /// `size_hint`: the file's length when known, to allocate once (pages that are never read
    /// are never touched, so this costs no memory).
    pub(super) fn new(src: R, size_hint: usize) -> Self {
        Scanner {
            buf: Vec::with_capacity(size_hint),
            pos: 0,
            src,
            eof: false,
        }
    }

    /// Reads the rest of the input, for the fallback pass.
    pub(super) fn read_rest(&mut self) -> io::Result<()> {
        if !self.eof {
            self.src.read_to_end(&mut self.buf)?;
            self.eof = true;
        }
        Ok(())
    }

    /// Reads one more chunk; false at the end of the input.
    #[cold]
    fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        // Into the spare capacity, without zeroing it first.
        let n = (&mut self.src)
            .take(CHUNK as u64)
            .read_to_end(&mut self.buf)?;
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }

    /// The byte at the cursor, reading more when needed; `None` at the end of the input.
    #[inline]
    fn peek(&mut self) -> Scan<Option<u8>> {
        while self.pos >= self.buf.len() {
            if !self.fill()? {
                return Ok(None);
            }
        }
        Ok(Some(self.buf[self.pos]))
    }

    /// Skips JSON whitespace; returns the next byte without consuming it.
    #[inline]
    fn skip_ws(&mut self) -> Scan<u8> {
        loop {
            match self.peek()? {
                Some(b' ' | b'\n' | b'\r' | b'\t') => self.pos += 1,
                Some(b) => return Ok(b),
                None => return Err(Stop::Fallback),
            }
        }
    }

    /// Consumes `byte` after optional whitespace.
    fn expect(&mut self, byte: u8) -> Scan<()> {
        if self.skip_ws()? == byte {
            self.pos += 1;
            Ok(())
        } else {
            Err(Stop::Fallback)
        }
    }

    /// Consumes a string starting at the cursor (which is on its `"`); returns its span,
    /// quotes included, and whether it holds escapes.
    #[inline]
    fn string(&mut self) -> Scan<(usize, usize, bool)> {
        let start = self.pos;
        self.pos += 1;
        let mut escaped = false;
        loop {
            match memchr::memchr2(b'"', b'\\', &self.buf[self.pos..]) {
                Some(i) => {
                    self.pos += i;
                    if self.buf[self.pos] == b'"' {
                        self.pos += 1;
                        return Ok((start, self.pos, escaped));
                    }
                    // A backslash: skip it and the byte it escapes (`\"`, `\\`, `\u…`).
                    escaped = true;
                    self.pos += 1;
                    if self.peek()?.is_none() {
                        return Err(Stop::Fallback);
                    }
                    self.pos += 1;
                }
                None => {
                    self.pos = self.buf.len();
                    if !self.fill()? {
                        return Err(Stop::Fallback);
                    }
                }
            }
        }
    }

    /// Consumes a non-negative integer that fits in `u64`.
    #[inline]
    fn integer(&mut self) -> Scan<u64> {
        let mut value: u64 = 0;
        let mut digits = 0;
        while let Some(b @ b'0'..=b'9') = self.peek()? {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(b - b'0')))
                .ok_or(Stop::Fallback)?;
            digits += 1;
            self.pos += 1;
        }
        // No digits, a leading zero, or a fraction/exponent: leave it to serde.
        let leading_zero = digits > 1 && self.buf[self.pos - digits] == b'0';
        if digits == 0 || leading_zero || matches!(self.peek()?, Some(b'.' | b'e' | b'E')) {
            return Err(Stop::Fallback);
        }
        Ok(value)
    }

    /// Consumes one JSON value of any kind; returns its span.
    fn skip_value(&mut self) -> Scan<(usize, usize)> {
        let start = self.pos;
        match self.skip_ws()? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let mut stack: Vec<u8> = Vec::new();
                loop {
                    match self.peek()? {
                        None => return Err(Stop::Fallback),
                        Some(b'"') => {
                            self.string()?;
                            continue;
                        }
                        Some(b @ (b'{' | b'[')) => stack.push(if b == b'{' { b'}' } else { b']' }),
                        Some(b @ (b'}' | b']')) => {
                            if stack.pop() != Some(b) {
                                return Err(Stop::Fallback);
                            }
                            if stack.is_empty() {
                                self.pos += 1;
                                break;
                            }
                        }
                        Some(_) => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                // A number or a literal: up to the next delimiter.
                while let Some(b) = self.peek()? {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    self.pos += 1;
                }
                if self.pos == start {
                    return Err(Stop::Fallback);
                }
            }
        }
        Ok((start, self.pos))
    }

    /// Parses the span with serde (strict JSON), for the few small values that matter.
    fn parse_span<T: serde::de::DeserializeOwned>(&self, (start, end): (usize, usize)) -> Scan<T> {
        serde_json::from_slice(&self.buf[start..end]).map_err(|_| Stop::Fallback)
    }

    /// Reads an object key at the cursor (after whitespace) and the `:` after it. `None` at
    /// the object's closing brace. Keys with escapes are unescaped with serde.
    fn key(&mut self, first: bool) -> Scan<Option<KeyName>> {
        let mut b = self.skip_ws()?;
        if !first {
            match b {
                b',' => {
                    self.pos += 1;
                    b = self.skip_ws()?;
                }
                b'}' => {
                    self.pos += 1;
                    return Ok(None);
                }
                _ => return Err(Stop::Fallback),
            }
        } else if b == b'}' {
            self.pos += 1;
            return Ok(None);
        }
        if b != b'"' {
            return Err(Stop::Fallback);
        }
        let (start, end, escaped) = self.string()?;
        let name = if escaped {
            let text: String = self.parse_span((start, end))?;
            KeyName::from_text(text.as_bytes())
        } else {
            KeyName::from_text(&self.buf[start + 1..end - 1])
        };
        self.expect(b':')?;
        Ok(Some(name))
    }
}

/// The keys the scanner acts on; every other key is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyName {
    AddedTokens,
    Decoder,
    PreTokenizer,
    Model,
    Vocab,
    Other,
}

impl KeyName {
    fn from_text(text: &[u8]) -> KeyName {
        match text {
            b"added_tokens" => KeyName::AddedTokens,
            b"decoder" => KeyName::Decoder,
            b"pre_tokenizer" => KeyName::PreTokenizer,
            b"model" => KeyName::Model,
            b"vocab" => KeyName::Vocab,
            _ => KeyName::Other,
        }
    }
}

/// What the scan has settled so far.
#[derive(Default)]
struct Seen {
    added_tokens: bool,
    decoder: bool,
    pre_tokenizer: bool,
    /// `model.vocab` read, or `model` read without one.
    vocab: bool,
}

impl Seen {
    /// Whether nothing later in the file can change the result. (A key repeated later would:
    /// serde keeps the last one. `tokenizers` itself rejects duplicate fields, so a file
    /// with them is not a tokenizer anyone can load.)
    fn settled(&self, file: &TokenizerFile) -> bool {
        self.added_tokens && self.vocab && (file.byte_level || (self.decoder && self.pre_tokenizer))
    }
}

/// Scans `tokenizer.json` from `src`. `Err(Stop::Fallback)` when the layout is not handled.
pub(super) fn scan<R: Read>(
    scanner: &mut Scanner<R>,
    wanted: &BTreeSet<u64>,
) -> Scan<TokenizerFile> {
    let mut file = TokenizerFile::default();
    let mut seen = Seen::default();
    scanner.expect(b'{')?;
    let mut first = true;
    while let Some(key) = scanner.key(first)? {
        first = false;
        match key {
            KeyName::AddedTokens => {
                let span = scanner.skip_value()?;
                file.added_tokens = scanner
                    .parse_span::<Option<Vec<RawAddedToken>>>(span)?
                    .unwrap_or_default();
                seen.added_tokens = true;
            }
            KeyName::Decoder | KeyName::PreTokenizer => {
                let span = scanner.skip_value()?;
                let value: Option<serde_json::Value> = scanner.parse_span(span)?;
                if value.as_ref().is_some_and(mentions_byte_level) {
                    file.byte_level = true;
                }
                if key == KeyName::Decoder {
                    seen.decoder = true;
                } else {
                    seen.pre_tokenizer = true;
                }
            }
            KeyName::Model => {
                if scan_model(scanner, wanted, &mut file, &mut seen)? {
                    return Ok(file);
                }
            }
            KeyName::Vocab | KeyName::Other => {
                scanner.skip_value()?;
            }
        }
        if seen.settled(&file) {
            return Ok(file);
        }
    }
    // The whole file was read: only whitespace may follow the top-level object.
    loop {
        match scanner.peek()? {
            None => return Ok(file),
            Some(b' ' | b'\n' | b'\r' | b'\t') => scanner.pos += 1,
            Some(_) => return Err(Stop::Fallback),
        }
    }
}

/// Scans the `model` value. Returns true when the scan is settled and may stop here (inside
/// `model`, before the merges).
fn scan_model<R: Read>(
    scanner: &mut Scanner<R>,
    wanted: &BTreeSet<u64>,
    file: &mut TokenizerFile,
    seen: &mut Seen,
) -> Scan<bool> {
    match scanner.skip_ws()? {
        b'{' => scanner.pos += 1,
        b'n' => {
            let span = scanner.skip_value()?;
            scanner.parse_span::<()>(span)?;
            seen.vocab = true;
            return Ok(false);
        }
        _ => return Err(Stop::Fallback),
    }
    let mut first = true;
    let mut vocab_read = false;
    while let Some(key) = scanner.key(first)? {
        first = false;
        if key == KeyName::Vocab && !vocab_read {
            scan_vocab(scanner, wanted, file)?;
            vocab_read = true;
            seen.vocab = true;
            if seen.settled(file) {
                return Ok(true);
            }
        } else if key == KeyName::Vocab {
            // A second `vocab`: serde would keep the last one; let it.
            return Err(Stop::Fallback);
        } else {
            scanner.skip_value()?;
        }
    }
    seen.vocab = true;
    Ok(false)
}

/// Scans a vocabulary map `{"token": id, ...}`: counts entries, tracks the highest id and
/// decodes the tokens of wanted ids. A list vocabulary (Unigram) falls back.
fn scan_vocab<R: Read>(
    scanner: &mut Scanner<R>,
    wanted: &BTreeSet<u64>,
    file: &mut TokenizerFile,
) -> Scan<()> {
    if scanner.skip_ws()? != b'{' {
        return Err(Stop::Fallback);
    }
    scanner.pos += 1;
    // A handful of ids: a sorted slice searches faster than the set.
    let wanted: Vec<u64> = wanted.iter().copied().collect();
    let mut count: u64 = 0;
    let mut max_id: Option<u64> = None;
    let mut b = scanner.skip_ws()?;
    if b == b'}' {
        scanner.pos += 1;
        return Ok(());
    }
    loop {
        if b != b'"' {
            return Err(Stop::Fallback);
        }
        // Most entries are plain and wholly in the buffer: read them straight from the slice.
        if let Some(entry) = plain_entry(&scanner.buf, scanner.pos) {
            count += 1;
            max_id = Some(max_id.map_or(entry.id, |m| m.max(entry.id)));
            if wanted.binary_search(&entry.id).is_ok() {
                let token: String = scanner.parse_span(entry.key)?;
                file.wanted_vocab.insert(entry.id, token);
            }
            scanner.pos = entry.next;
            if entry.more {
                b = scanner.skip_ws()?;
                continue;
            }
            break;
        }
        let span = scanner.string()?;
        scanner.expect(b':')?;
        scanner.skip_ws()?;
        let id = scanner.integer()?;
        count += 1;
        max_id = Some(max_id.map_or(id, |m| m.max(id)));
        if wanted.binary_search(&id).is_ok() {
            let token: String = scanner.parse_span((span.0, span.1))?;
            file.wanted_vocab.insert(id, token);
        }
        match scanner.skip_ws()? {
            b',' => {
                scanner.pos += 1;
                b = scanner.skip_ws()?;
            }
            b'}' => {
                scanner.pos += 1;
                break;
            }
            _ => return Err(Stop::Fallback),
        }
    }
    file.vocab_count = count;
    file.vocab_max_id = max_id;
    Ok(())
}

/// A vocabulary entry read by [`plain_entry`].
struct Entry {
    /// The key's span, quotes included.
    key: (usize, usize),
    id: u64,
    /// Just after the `}` that ends the map, or on what follows the `,` and its whitespace.
    next: usize,
    /// Whether a `,` (another entry) follows.
    more: bool,
}

/// Reads `"token": id` and the `,` or `}` after it from `buf[at..]` (`buf[at]` is the `"`),
/// when the entry lies wholly in `buf` and its key has no escapes. `None` otherwise: the
/// caller then reads the entry with the general, refilling path.
#[inline]
fn plain_entry(buf: &[u8], at: usize) -> Option<Entry> {
    let is_ws = |b: u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t');
    let key_start = at + 1;
    let key_end = key_start + memchr::memchr2(b'"', b'\\', buf.get(key_start..)?)?;
    if buf[key_end] != b'"' {
        return None;
    }
    let mut i = key_end + 1;
    while is_ws(*buf.get(i)?) {
        i += 1;
    }
    if buf[i] != b':' {
        return None;
    }
    i += 1;
    while is_ws(*buf.get(i)?) {
        i += 1;
    }
    let digits_start = i;
    let mut id: u64 = 0;
    while let Some(&b @ b'0'..=b'9') = buf.get(i) {
        id = id.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
        i += 1;
    }
    let digits = i - digits_start;
    // Up to 19 digits always fit in u64; longer, or a leading zero: the general path.
    if digits == 0 || digits > 19 || (digits > 1 && buf[digits_start] == b'0') {
        return None;
    }
    while is_ws(*buf.get(i)?) {
        i += 1;
    }
    let more = match buf[i] {
        b',' => true,
        b'}' => false,
        _ => return None,
    };
    i += 1;
    if more {
        // On to the next key's quote, when it is in the buffer (the caller checks the byte).
        while buf.get(i).copied().is_some_and(is_ws) {
            i += 1;
        }
    }
    Some(Entry {
        key: (at, key_end + 1),
        id,
        next: i,
        more,
    })
}
