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
//! error. What the scanner skips it checks only for structure (strings, brackets): it does not
//! validate the text of unwanted vocabulary keys (UTF-8, control characters), nor anything
//! after the point where it stops (the merges), which `tokenizers` would reject if broken.

use std::collections::BTreeSet;
use std::io::{self, Read, Seek, SeekFrom};

use super::{mentions_byte_level, RawAddedToken, TokenizerFile};

/// Bytes read per `read` call: small enough not to read far past the vocabulary.
const CHUNK: usize = 256 * 1024;

/// While reading the vocabulary, bytes already scanned are dropped once this many pile up, so
/// the buffer stays near 1 MiB whatever the file's size.
const COMPACT_AT: usize = 1024 * 1024;

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

/// The scanner's input: a window of the bytes read so far and the reader they come from.
pub(super) struct Scanner<R> {
    /// `buf[..end]` holds input; the rest is room for the next read (zeroed once, reused).
    buf: Vec<u8>,
    end: usize,
    pos: usize,
    /// Bytes dropped from the front of `buf`.
    dropped: u64,
    src: R,
    eof: bool,
    /// Bytes per read ([`CHUNK`]; tiny in tests, to cross chunk boundaries everywhere).
    chunk: usize,
}

impl<R: Read + Seek> Scanner<R> {
    /// `size_hint`: the input's length when known (0 otherwise), to size the buffer.
    pub(super) fn new(src: R, size_hint: usize) -> Self {
        Scanner {
            buf: Vec::with_capacity(size_hint.min(COMPACT_AT + 2 * CHUNK)),
            end: 0,
            pos: 0,
            dropped: 0,
            src,
            eof: false,
            chunk: CHUNK,
        }
    }

    /// How many bytes of the input have been read.
    pub(super) fn bytes_read(&self) -> u64 {
        self.dropped + self.end as u64
    }

    /// The whole input, for the fallback pass: the rest of it, or all of it again when the
    /// front was dropped.
    pub(super) fn into_all(mut self) -> io::Result<Vec<u8>> {
        self.buf.truncate(self.end);
        if self.dropped > 0 {
            self.src.seek(SeekFrom::Start(0))?;
            self.buf.clear();
            self.eof = false;
        }
        if !self.eof {
            self.src.read_to_end(&mut self.buf)?;
        }
        Ok(self.buf)
    }

    /// Drops the bytes before the cursor once enough pile up. Only called where no span into
    /// the buffer is held.
    #[inline]
    fn compact(&mut self) {
        if self.pos >= COMPACT_AT {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.dropped += self.pos as u64;
            self.pos = 0;
        }
    }

    /// Reads one more chunk; false at the end of the input.
    #[cold]
    fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.buf.len() < self.end + self.chunk {
            self.buf.resize(self.end + self.chunk, 0);
        }
        let n = loop {
            match self
                .src
                .read(&mut self.buf[self.end..self.end + self.chunk])
            {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        self.end += n;
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }

    /// The byte at the cursor, reading more when needed; `None` at the end of the input.
    #[inline]
    fn peek(&mut self) -> Scan<Option<u8>> {
        while self.pos >= self.end {
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
            let unread = &self.buf[self.pos..self.end];
            match unread.iter().position(|&b| b == b'"' || b == b'\\') {
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
                    self.pos = self.end;
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
pub(super) fn scan<R: Read + Seek>(
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
fn scan_model<R: Read + Seek>(
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
fn scan_vocab<R: Read + Seek>(
    scanner: &mut Scanner<R>,
    wanted: &BTreeSet<u64>,
    file: &mut TokenizerFile,
) -> Scan<()> {
    if scanner.skip_ws()? != b'{' {
        return Err(Stop::Fallback);
    }
    scanner.pos += 1;
    // A handful of ids: a 64-bit filter (bit `id % 64`) skips the set lookup for nearly
    // every entry.
    let filter = wanted.iter().fold(0u64, |f, id| f | 1 << (id % 64));
    let is_wanted = |id: u64| filter & (1 << (id % 64)) != 0 && wanted.contains(&id);
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
        scanner.compact();
        // Most entries are plain and lie in the buffer: read them straight from the slice.
        if let Some(entry) = plain_entry(&scanner.buf[..scanner.end], scanner.pos) {
            count += 1;
            max_id = Some(max_id.map_or(entry.id, |m| m.max(entry.id)));
            if is_wanted(entry.id) {
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
        if is_wanted(id) {
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

/// The 8 bytes of `w` from `i`, little-endian.
#[inline]
fn word(w: &[u8; WINDOW], i: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&w[i..i + 8]);
    u64::from_le_bytes(bytes)
}

/// The high bit of each byte of `x` that equals `byte`, and no other bit (exact: no carry
/// crosses bytes).
#[inline]
fn bytes_equal(x: u64, byte: u8) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let v = x ^ (0x0101_0101_0101_0101 * u64::from(byte));
    !(((v & LOW7) + LOW7) | v | LOW7)
}

/// How far [`plain_entry`] looks: a fixed window lets the compiler drop bounds checks.
const WINDOW: usize = 128;

/// Reads `"token": id` and the `,` or `}` after it from `buf[at..]` (`buf[at]` is the `"`),
/// when the entry fits in [`WINDOW`] bytes of `buf` and its key has no escapes. `None`
/// otherwise: the caller then reads the entry with the general, refilling path. (This is the
/// hot loop: 151643 entries of about 26 bytes in Qwen3.)
#[inline]
fn plain_entry(buf: &[u8], at: usize) -> Option<Entry> {
    let w: &[u8; WINDOW] = buf.get(at..at + WINDOW)?.try_into().ok()?;
    let is_ws = |b: u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t');
    // The key's end, 8 bytes at a time.
    let mut i = 1;
    while i + 8 <= WINDOW {
        let found = bytes_equal(word(w, i), b'"') | bytes_equal(word(w, i), b'\\');
        if found != 0 {
            i += (found.trailing_zeros() / 8) as usize;
            break;
        }
        i += 8;
    }
    if i + 8 > WINDOW || w[i] != b'"' {
        return None;
    }
    let key_end = i;
    i += 1;
    while i < WINDOW && is_ws(w[i]) {
        i += 1;
    }
    if i >= WINDOW || w[i] != b':' {
        return None;
    }
    i += 1;
    while i < WINDOW && is_ws(w[i]) {
        i += 1;
    }
    let digits_start = i;
    let mut id: u64 = 0;
    while i < WINDOW && w[i].is_ascii_digit() {
        id = id.wrapping_mul(10).wrapping_add(u64::from(w[i] - b'0'));
        i += 1;
    }
    let digits = i - digits_start;
    // Up to 19 digits always fit in u64; longer, or a leading zero: the general path.
    if digits == 0 || digits > 19 || (digits > 1 && w[digits_start] == b'0') {
        return None;
    }
    while i < WINDOW && is_ws(w[i]) {
        i += 1;
    }
    if i >= WINDOW {
        return None;
    }
    let more = match w[i] {
        b',' => true,
        b'}' => false,
        _ => return None,
    };
    i += 1;
    if more {
        // On towards the next key's quote (the caller skips what whitespace is left): a
        // newline, then an indent of spaces, 8 at a time.
        while i < WINDOW && matches!(w[i], b'\n' | b'\r') {
            i += 1;
        }
        while i + 8 <= WINDOW {
            let other = !bytes_equal(word(w, i), b' ') & 0x8080_8080_8080_8080;
            // `other` is 0 for 8 spaces: trailing_zeros is then 64, and 8 spaces are skipped.
            let spaces = (other.trailing_zeros() / 8) as usize;
            i += spaces.min(8);
            if spaces < 8 {
                break;
            }
        }
    }
    Some(Entry {
        key: (at, at + key_end + 1),
        id,
        next: at + i,
        more,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::{Pass, ReadError};
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    /// Scans `text` in chunks of `chunk` bytes, falling back like `TokenizerFile::from_reader`.
    fn scan_text(
        text: &str,
        chunk: usize,
        wanted: &BTreeSet<u64>,
    ) -> Result<(TokenizerFile, Pass), String> {
        let mut scanner = Scanner::new(io::Cursor::new(text.as_bytes()), 0);
        scanner.chunk = chunk;
        match scan(&mut scanner, wanted) {
            Ok(file) => Ok((
                file,
                Pass::Scan {
                    bytes_read: scanner.bytes_read(),
                },
            )),
            Err(Stop::Io(e)) => Err(e.to_string()),
            Err(Stop::Fallback) => {
                let all = scanner.into_all().unwrap();
                assert_eq!(all, text.as_bytes());
                TokenizerFile::parse(&all, wanted).map(|f| (f, Pass::Serde))
            }
        }
    }

    fn tokenizer(vocab: Value, merges_first: bool) -> Value {
        let mut model = Map::new();
        model.insert("type".into(), json!("BPE"));
        if merges_first {
            model.insert("ignore_merges".into(), json!([["a", "b"], ["c\"", "}{"]]));
        }
        model.insert("vocab".into(), vocab);
        model.insert("merges".into(), json!([["a", "b"], ["ab", "c"]]));
        json!({
            "version": "1.0",
            "added_tokens": [
                {"id": 3, "content": "<|end|>", "special": true},
                {"id": 9, "content": "<think>", "special": false}
            ],
            "normalizer": {"type": "NFC", "odd": "}]\"{["},
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}]},
            "decoder": {"type": "ByteLevel"},
            "model": Value::Object(model),
        })
    }

    #[test]
    fn stops_before_the_merges() {
        let vocab = json!({"a": 0, "b": 1, "ab": 2});
        let mut text = serde_json::to_string_pretty(&tokenizer(vocab, false)).unwrap();
        // Whatever follows the vocabulary is never read, so it cannot matter.
        let cut = text.find("\"merges\"").unwrap();
        text.truncate(cut);
        text.push_str("NOT JSON");
        let wanted: BTreeSet<u64> = [2, 3].into();
        let (file, pass) = scan_text(&text, 8, &wanted).unwrap();
        assert!(matches!(pass, Pass::Scan { bytes_read } if bytes_read < text.len() as u64));
        assert_eq!(file.vocab_count, 3);
        assert_eq!(file.vocab_max_id, Some(2));
        assert_eq!(file.wanted_vocab.get(&2).map(String::as_str), Some("ab"));
        assert_eq!(file.added_tokens.len(), 2);
        assert!(file.byte_level);
    }

    #[test]
    fn model_before_added_tokens_reads_on() {
        let text = r#"{"model": {"vocab": {"a": 0, "b\"": 1}, "merges": [["a", "b\""]]},
            "decoder": null, "pre_tokenizer": null,
            "added_tokens": [{"id": 2, "content": "<s>", "special": true}]}"#;
        let wanted: BTreeSet<u64> = [1].into();
        let (file, pass) = scan_text(text, 3, &wanted).unwrap();
        assert!(matches!(pass, Pass::Scan { .. }));
        assert_eq!(
            file,
            TokenizerFile::parse(text.as_bytes(), &wanted).unwrap()
        );
        assert_eq!(file.wanted_vocab.get(&1).map(String::as_str), Some("b\""));
        assert!(!file.byte_level);
    }

    #[test]
    fn unusual_layouts_fall_back_to_the_serde_pass() {
        let wanted: BTreeSet<u64> = [1].into();
        // Unigram: a list vocabulary.
        let unigram = r#"{"added_tokens": [], "decoder": null, "pre_tokenizer": null,
            "model": {"type": "Unigram", "vocab": [["<unk>", 0.0], ["a", -1.5]]}}"#;
        let (file, pass) = scan_text(unigram, 4, &wanted).unwrap();
        assert_eq!(pass, Pass::Serde);
        assert_eq!(file.wanted_vocab.get(&1).map(String::as_str), Some("a"));
        // Ids serde rejects, a truncated file, trailing text, a malformed added token: the
        // serde pass words the error.
        for bad in [
            r#"{"added_tokens": [], "model": {"vocab": {"a": 1.0}}}"#,
            r#"{"added_tokens": [], "model": {"vocab": {"a": -1}}}"#,
            r#"{"added_tokens": [], "model": {"vocab": {"a": 01}}}"#,
            r#"{"added_tokens": [], "model": {"vocab": {"a": 1}"#,
            r#"{"added_tokens": [], "model": {"vocab": {"a": 1}}} x"#,
            r#"{"added_tokens": [{"id": "x"}], "model": null}"#,
        ] {
            let err = scan_text(bad, 2, &wanted).unwrap_err();
            assert!(!err.is_empty(), "{bad}");
        }
    }

    #[test]
    fn a_large_vocabulary_is_scanned_through_a_window() {
        let mut vocab = Map::new();
        for i in 0..120_000u64 {
            vocab.insert(format!("tok\"{i}"), json!(i));
        }
        let text = serde_json::to_string_pretty(&tokenizer(Value::Object(vocab), false)).unwrap();
        assert!(text.len() > 2 * COMPACT_AT);
        let wanted: BTreeSet<u64> = [0, 77_777, 119_999].into();
        let mut scanner = Scanner::new(io::Cursor::new(text.as_bytes()), text.len());
        let file = scan(&mut scanner, &wanted).unwrap();
        assert!(scanner.dropped > 0 && scanner.buf.capacity() < 2 * COMPACT_AT);
        assert_eq!(
            file,
            TokenizerFile::parse(text.as_bytes(), &wanted).unwrap()
        );
        // A layout the scanner gives up on late still reaches the serde pass whole.
        let late = text.replace("\"tok\\\"100000\": 100000", "\"tok\": 1.5");
        assert_ne!(late, text);
        let err = scan_text(&late, CHUNK, &wanted).unwrap_err();
        assert!(err.contains("invalid type: floating point"), "{err}");
    }

    #[test]
    fn escaped_top_level_keys_are_unescaped() {
        let text = r#"{"added\u005ftokens": [{"id": 1, "content": "<s>", "special": true}],
            "model": {"vocab": {"a": 0}}}"#;
        let (file, _) = scan_text(text, 5, &BTreeSet::new()).unwrap();
        assert_eq!(
            file,
            TokenizerFile::parse(text.as_bytes(), &BTreeSet::new()).unwrap()
        );
        assert_eq!(file.added_tokens.len(), 1);
    }

    #[test]
    fn bytes_equal_flags_exactly_the_equal_bytes() {
        for (text, byte) in [
            (*b" ! !\"\"!!", b' '),
            (*b"\x00\x01\"\\\x22\xa2\xff ", b'"'),
        ] {
            let expected =
                text.iter().enumerate().fold(
                    0u64,
                    |m, (k, &b)| {
                        if b == byte {
                            m | 0x80 << (8 * k)
                        } else {
                            m
                        }
                    },
                );
            assert_eq!(bytes_equal(u64::from_le_bytes(text), byte), expected);
        }
    }

    #[test]
    fn read_errors_are_io_errors() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        impl Seek for Failing {
            fn seek(&mut self, _: SeekFrom) -> io::Result<u64> {
                Ok(0)
            }
        }
        let err = TokenizerFile::from_reader(Failing, 0, &BTreeSet::new()).unwrap_err();
        assert!(matches!(err, ReadError::Io(e) if e.to_string() == "disk on fire"));
    }

    /// Token texts that stress the scanner: quotes, backslashes, escapes, braces, non-ASCII.
    fn token_text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9 ]{0,6}",
            "[\"\\\\{}\\[\\],:]{1,4}",
            "\\PC{0,4}",
            "[\u{0}-\u{1f}\u{7f}\u{2028}]{1,3}",
            "[ĠĊâĢĻÃ©]{1,5}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

        /// The scanner reads what the serde pass reads, for any vocabulary, formatting,
        /// key order and chunk size, and it never needs to fall back on these layouts.
        #[test]
        fn scanner_equals_serde_pass(
            tokens in proptest::collection::vec(token_text(), 0..40),
            id_offset in 0u64..5,
            wanted in proptest::collection::btree_set(0u64..90, 0..8),
            pretty in any::<bool>(),
            merges_first in any::<bool>(),
            model_first in any::<bool>(),
            // Tiny reads cross every boundary; large ones let the fast entry reader work.
            chunk in prop_oneof![1usize..40, 100usize..400, Just(CHUNK)],
        ) {
            let mut vocab = Map::new();
            for (i, t) in tokens.iter().enumerate() {
                vocab.insert(t.clone(), json!(i as u64 * 2 + id_offset));
            }
            let mut value = tokenizer(Value::Object(vocab), merges_first);
            if model_first {
                let obj = value.as_object_mut().unwrap();
                let model = obj.shift_remove("model").unwrap();
                let mut reordered = Map::new();
                reordered.insert("model".into(), model);
                reordered.extend(std::mem::take(obj));
                value = Value::Object(reordered);
            }
            let text = if pretty {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                serde_json::to_string(&value).unwrap()
            };
            let expected = TokenizerFile::parse(text.as_bytes(), &wanted).unwrap();
            let (file, pass) = scan_text(&text, chunk, &wanted).unwrap();
            prop_assert!(matches!(pass, Pass::Scan { bytes_read: _ }), "fell back: {:?}", pass);
            prop_assert_eq!(file, expected);
        }
    }
}
