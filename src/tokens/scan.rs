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
///
/// The map is read 64 bytes at a time, the way simdjson's first stage reads JSON: one bit per
/// byte for quotes, backslashes, colons, commas and closing braces; escaped quotes removed; a
/// prefix XOR over the quote bits marks the bytes inside strings. Every colon outside a string
/// then starts one entry's id, which is checked where it stands (against the id expected next,
/// as one 8-byte word, since `tokenizers` writes ids in order; parsed when it is not that one);
/// the first closing brace outside a string ends the map. Nothing inside a key is looked at
/// unless its id is wanted (the key is then read back from its colon and unescaped with serde).
/// An id that is not a plain integer followed by `,` or `}`, or counts that do not add up (two
/// quotes and one colon per entry, one comma between entries) make it give up: the caller falls
/// back to serde. The whitespace between entries is not checked, like the rest of what is
/// skipped.
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
    let mut max_id: u64 = 0;
    let mut quotes: u64 = 0;
    let mut commas: u64 = 0;
    // All ones when the previous block ended inside a string.
    let mut in_string: u64 = 0;
    // The previous block ended with a backslash that escapes this block's first byte.
    let mut escape_carry = false;
    let mut next = NextId::default();
    loop {
        // Room for this block and for the id of a colon at its end.
        while scanner.end - scanner.pos < BLOCK + ID_ROOM && !scanner.eof {
            scanner.keep_behind_compact();
            scanner.fill()?;
        }
        if scanner.pos >= scanner.end {
            // The input ended inside the map.
            return Err(Stop::Fallback);
        }
        if scanner.eof {
            scanner.pad_end(BLOCK + ID_ROOM);
        }
        let p = scanner.pos;
        let block: &[u8; BLOCK] = scanner.buf[p..p + BLOCK]
            .try_into()
            .map_err(|_| Stop::Fallback)?;
        let m = classify(block);
        let escaped = if m.backslash == 0 && !escape_carry {
            0
        } else {
            escaped_bits(m.backslash, &mut escape_carry)
        };
        let quote = m.quote & !escaped;
        let inside = prefix_xor(quote) ^ in_string;
        in_string = 0u64.wrapping_sub(inside >> 63);
        let outside = !inside;
        let close = m.close & outside;
        // Bits up to the closing brace (all, when the map goes on). Past the input's end
        // (padding) nothing is ever outside the map: the brace must come first.
        let valid_len = (scanner.end - p).min(BLOCK);
        let mut limit = if valid_len == BLOCK {
            u64::MAX
        } else {
            (1u64 << valid_len) - 1
        };
        let closed = close & limit != 0;
        if closed {
            let at = (close & limit).trailing_zeros();
            limit = if at == 63 {
                u64::MAX
            } else {
                (1u64 << (at + 1)) - 1
            };
        }
        let colon = m.colon & outside & limit;
        let comma = m.comma & outside & limit;
        quotes += u64::from((quote & limit).count_ones());
        commas += u64::from(comma.count_ones());
        let mut colons = colon;
        while colons != 0 {
            let at = p + colons.trailing_zeros() as usize;
            colons &= colons - 1;
            // `tokenizers` writes ids in order, one space after the colon: the next id is
            // usually the one after the last, compared as 8 bytes at once.
            let id = if next.follows(&scanner.buf[..scanner.end], at) {
                let id = next.value;
                next.advance();
                id
            } else {
                let id = scanner.id_after(at)?;
                next.set(id.saturating_add(1));
                id
            };
            count += 1;
            max_id = max_id.max(id);
            if is_wanted(id) {
                let key = scanner.key_before(at)?;
                let token: String = scanner.parse_span(key)?;
                file.wanted_vocab.insert(id, token);
            }
        }
        if closed {
            scanner.pos = p + (limit.count_ones() as usize);
            break;
        }
        scanner.pos = p + BLOCK;
        if scanner.pos > scanner.end {
            return Err(Stop::Fallback);
        }
    }
    // Two quotes and one colon per entry, a comma between entries: otherwise the map was not
    // a plain `"key": id` map (or not valid JSON), and serde says what it is.
    if quotes != 2 * count || commas != count.saturating_sub(1) {
        return Err(Stop::Fallback);
    }
    file.vocab_count = count;
    file.vocab_max_id = (count > 0).then_some(max_id);
    Ok(())
}

/// The id expected next in a vocabulary map, as the text `tokenizers` writes after a colon
/// (`: 9707,`), kept up to date as ids go by.
#[derive(Default)]
struct NextId {
    value: u64,
    /// The decimal digits of `value` as the bytes of a little-endian word, most significant
    /// first (ids below 10^8 only), for one comparison.
    text: u64,
    /// How many digits (0 when `value` has more than 8: then never matched).
    len: u32,
}

impl NextId {
    /// Expects `value` next (after an id that did not follow the last).
    fn set(&mut self, value: u64) {
        self.value = value;
        self.text = 0;
        self.len = 0;
        if value >= 100_000_000 {
            return;
        }
        let mut rest = value;
        let mut reversed = [0u8; 8];
        loop {
            reversed[self.len as usize] = b'0' + (rest % 10) as u8;
            self.len += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        let mut digits = [0u8; 8];
        for i in 0..self.len as usize {
            digits[i] = reversed[self.len as usize - 1 - i];
        }
        self.text = u64::from_le_bytes(digits);
    }

    /// Expects the id after `value`: a decimal increment of the digits, in the word itself
    /// (writing a byte of an array and reading the array back as a word would stall the CPU's
    /// store forwarding on every entry).
    #[inline(always)]
    fn advance(&mut self) {
        self.value += 1;
        let mut i = self.len;
        while i > 0 {
            i -= 1;
            let shift = 8 * i;
            if (self.text >> shift) & 0xff != u64::from(b'9') {
                self.text += 1 << shift;
                return;
            }
            // '9' becomes '0', and the carry moves one digit up.
            self.text -= 9 << shift;
        }
        // 9, 99, 999, ...: one more digit.
        self.set(self.value);
    }

    /// Whether the colon at `at` in `buf` is followed by exactly ` <value>,` or ` <value>}`.
    #[inline(always)]
    fn follows(&self, buf: &[u8], at: usize) -> bool {
        let len = self.len as usize;
        let Some(bytes) = buf.get(at + 1..at + 11) else {
            return false;
        };
        if len == 0 || bytes[0] != b' ' {
            return false;
        }
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[1..9]);
        let word = u64::from_le_bytes(word);
        let mask = if len == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * len)) - 1
        };
        word & mask == self.text && matches!(bytes[1 + len], b',' | b'}')
    }
}

/// Bytes per block of [`scan_vocab`]: one bit each in a `u64`.
const BLOCK: usize = 64;
/// Bytes kept in the buffer after a block, so the id of a colon at its end can be read.
const ID_ROOM: usize = 64;
/// Bytes kept before the cursor when the buffer is compacted inside the vocabulary, so the key
/// of a wanted entry can be read back from its colon.
const KEEP_BEHIND: usize = 64 * 1024;

impl<R: Read + Seek> Scanner<R> {
    /// Drops the bytes more than [`KEEP_BEHIND`] before the cursor once enough pile up.
    fn keep_behind_compact(&mut self) {
        if self.pos >= COMPACT_AT + KEEP_BEHIND {
            let from = self.pos - KEEP_BEHIND;
            self.buf.copy_within(from..self.end, 0);
            self.end -= from;
            self.dropped += from as u64;
            self.pos -= from;
        }
    }

    /// At the end of the input: `n` bytes of spaces after it, so a last partial block can be
    /// read whole. (Spaces are whitespace: they change no count, and the map's closing brace
    /// must come before them.)
    fn pad_end(&mut self, n: usize) {
        if self.buf.len() < self.end + n {
            self.buf.resize(self.end + n, b' ');
        }
        self.buf[self.end..self.end + n].fill(b' ');
    }

    /// The id after the colon at `at`: whitespace, a plain integer that fits in `u64`,
    /// whitespace, then `,` or `}`; anything else gives up.
    #[inline]
    fn id_after(&self, at: usize) -> Scan<u64> {
        let bytes = &self.buf[..self.end];
        let is_ws = |b: u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t');
        let mut i = at + 1;
        while i < bytes.len() && is_ws(bytes[i]) {
            i += 1;
        }
        let start = i;
        let mut id: u64 = 0;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            id = id.wrapping_mul(10).wrapping_add(u64::from(bytes[i] - b'0'));
            i += 1;
        }
        let digits = i - start;
        // Up to 19 digits always fit in u64; longer, or a leading zero: serde decides.
        if digits == 0 || digits > 19 || (digits > 1 && bytes[start] == b'0') {
            return Err(Stop::Fallback);
        }
        while i < bytes.len() && is_ws(bytes[i]) {
            i += 1;
        }
        match bytes.get(i) {
            Some(b',' | b'}') => Ok(id),
            _ => Err(Stop::Fallback),
        }
    }

    /// The span (quotes included) of the key before the colon at `at`: back over whitespace
    /// to its closing quote, then to the first quote not escaped by an odd run of backslashes.
    fn key_before(&self, at: usize) -> Scan<(usize, usize)> {
        let bytes = &self.buf[..self.end];
        let mut j = at;
        while j > 0 && matches!(bytes[j - 1], b' ' | b'\n' | b'\r' | b'\t') {
            j -= 1;
        }
        if j == 0 || bytes[j - 1] != b'"' {
            return Err(Stop::Fallback);
        }
        let close = j - 1;
        let mut k = close;
        while k > 0 {
            k -= 1;
            if bytes[k] == b'"' {
                let run = bytes[..k].iter().rev().take_while(|&&b| b == b'\\').count();
                if run % 2 == 0 {
                    return Ok((k, close + 1));
                }
            }
        }
        // The key began before the bytes kept in the buffer (a key over 64 KiB).
        Err(Stop::Fallback)
    }
}

/// One bit per byte of a block for each class of byte the vocabulary scan cares about.
struct Masks {
    quote: u64,
    backslash: u64,
    colon: u64,
    comma: u64,
    close: u64,
}

/// Classifies the 64 bytes of `block` with SSE2 (part of every x86-64 CPU, so no detection is
/// needed): sixteen bytes per compare, one `movemask` per class and lane.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify(block: &[u8; BLOCK]) -> Masks {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let mut m = Masks {
        quote: 0,
        backslash: 0,
        colon: 0,
        comma: 0,
        close: 0,
    };
    // SAFETY: SSE2 is baseline on x86-64; each unaligned 16-byte load reads inside `block`
    // (lane * 16 + 16 <= 64).
    unsafe {
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        let bits = |v: __m128i| u64::from(_mm_movemask_epi8(v) as u16);
        for lane in 0..BLOCK / 16 {
            let v = _mm_loadu_si128(block.as_ptr().add(lane * 16).cast::<__m128i>());
            let shift = lane * 16;
            let quote = _mm_cmpeq_epi8(v, splat(b'"'));
            let colon = _mm_cmpeq_epi8(v, splat(b':'));
            let comma = _mm_cmpeq_epi8(v, splat(b','));
            let close = _mm_cmpeq_epi8(v, splat(b'}'));
            m.quote |= bits(quote) << shift;
            m.backslash |= bits(_mm_cmpeq_epi8(v, splat(b'\\'))) << shift;
            m.colon |= bits(colon) << shift;
            m.comma |= bits(comma) << shift;
            m.close |= bits(close) << shift;
        }
    }
    m
}

/// The same, a byte at a time, where SSE2 is not available.
#[cfg(not(target_arch = "x86_64"))]
fn classify(block: &[u8; BLOCK]) -> Masks {
    let mut m = Masks {
        quote: 0,
        backslash: 0,
        colon: 0,
        comma: 0,
        close: 0,
    };
    for (i, &b) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match b {
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            b':' => m.colon |= bit,
            b',' => m.comma |= bit,
            b'}' => m.close |= bit,
            _ => {}
        }
    }
    m
}

/// Bits of the bytes escaped by a backslash: each backslash not itself escaped escapes the next
/// byte. `carry` in: the block's first byte is escaped; out: its last byte escapes the next
/// block's first. Backslashes are rare in a vocabulary, so a loop over them is cheap.
fn escaped_bits(mut backslash: u64, carry: &mut bool) -> u64 {
    let mut escaped = 0u64;
    if std::mem::take(carry) {
        escaped |= 1;
        backslash &= !1;
    }
    while backslash != 0 {
        let i = backslash.trailing_zeros();
        backslash &= backslash - 1;
        if i == 63 {
            *carry = true;
        } else {
            escaped |= 1 << (i + 1);
            backslash &= !(1 << (i + 1));
        }
    }
    escaped
}

/// Bit `i` of the result is the XOR of bits `0..=i` of `x`: with quote bits in, 1 for the bytes
/// from an opening quote up to (not including) its closing quote.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
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
        // (Long enough that the look-ahead of a block and an id after it stops short of it.)
        text.push_str(&"NOT JSON".repeat(100));
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
