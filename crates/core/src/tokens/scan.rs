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

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read, Seek, SeekFrom};

use super::{AddedToken, RawAddedToken, TokenizerFile, BYTE_LEVEL};

/// Bytes per `read` call: small enough not to read far past the vocabulary, and to keep the
/// buffer in cache with few of its pages ever touched (the vocabulary is read through it).
const CHUNK: usize = 64 * 1024;

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
            buf: Vec::with_capacity(size_hint.min(2 * CHUNK)),
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

    /// Reads the span with a serde seed (strict JSON) that keeps only what it returns.
    fn parse_span_seed<'a, S: serde::de::DeserializeSeed<'a>>(
        &'a self,
        (start, end): (usize, usize),
        seed: S,
    ) -> Scan<S::Value> {
        let mut de = serde_json::Deserializer::from_slice(&self.buf[start..end]);
        let value = seed.deserialize(&mut de).map_err(|_| Stop::Fallback)?;
        de.end().map_err(|_| Stop::Fallback)?;
        Ok(value)
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
                file.added_tokens = scan_added_tokens(scanner)?;
                seen.added_tokens = true;
            }
            KeyName::Decoder | KeyName::PreTokenizer => {
                let span = scanner.skip_value()?;
                if scanner.parse_span_seed(span, BYTE_LEVEL)? {
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

/// `added_tokens` (a list, or `null`: none), one token at a time, the bytes of the tokens read
/// dropped once they reach a chunk: the buffer holds at most a chunk read and one token, not the
/// list beside the tokens read from it (a 230 MiB list was held whole; issue 44). Each token is read by serde, strictly, as the list
/// was; anything else makes the scan give up.
fn scan_added_tokens<R: Read + Seek>(scanner: &mut Scanner<R>) -> Scan<BTreeMap<u64, AddedToken>> {
    let mut tokens = BTreeMap::new();
    match scanner.skip_ws()? {
        b'[' => scanner.pos += 1,
        b'n' => {
            let span = scanner.skip_value()?;
            scanner.parse_span::<()>(span)?;
            return Ok(tokens);
        }
        _ => return Err(Stop::Fallback),
    }
    if scanner.skip_ws()? == b']' {
        scanner.pos += 1;
        return Ok(tokens);
    }
    loop {
        scanner.drop_consumed_past(CHUNK);
        let span = scanner.skip_value()?;
        scanner
            .parse_span::<RawAddedToken>(span)?
            .add_to(&mut tokens);
        match scanner.skip_ws()? {
            b',' => scanner.pos += 1,
            b']' => {
                scanner.pos += 1;
                return Ok(tokens);
            }
            _ => return Err(Stop::Fallback),
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
/// `tokenizers` writes every entry the same way: a key, `: `, the id (the last id plus one),
/// a comma and the same whitespace before the next key. Runs of such entries are read by
/// [`usual_entries`] in a few word compares each, without looking inside keys. Every other
/// entry (an escape in its key, a key longer than 32 bytes, an id out of sequence or wanted,
/// other whitespace, the last entry) is read by the general entry reader, which accepts any
/// JSON whitespace and parses the id; what it does not understand (a float or negative id, a
/// value that is not an integer) makes the scan give up, and the caller falls back to serde.
/// Unlike the rest of the scanner's skipping, every byte of the map's structure is checked;
/// the text of unwanted keys is not (UTF-8, control characters).
fn scan_vocab<R: Read + Seek>(
    scanner: &mut Scanner<R>,
    wanted: &BTreeSet<u64>,
    file: &mut TokenizerFile,
) -> Scan<()> {
    if scanner.skip_ws()? != b'{' {
        return Err(Stop::Fallback);
    }
    scanner.pos += 1;
    let mut count: u64 = 0;
    let mut max_id: u64 = 0;
    let mut next = NextId::default();
    let mut gap = Gap::default();
    let mut next_wanted = wanted.first().copied().unwrap_or(u64::MAX);
    match scanner.skip_ws()? {
        b'}' => {
            scanner.pos += 1;
            file.vocab_count = 0;
            file.vocab_max_id = None;
            return Ok(());
        }
        b'"' => {}
        _ => return Err(Stop::Fallback),
    }
    // The cursor is on the opening quote of a key.
    loop {
        if scanner.end - scanner.pos < ENTRY_ROOM && !scanner.eof {
            scanner.refill_from_cursor()?;
        }
        let first = next.value;
        scanner.pos = usual_entries(
            &scanner.buf[..scanner.end],
            scanner.pos,
            &mut next,
            &gap,
            next_wanted,
        );
        if next.value > first {
            count += next.value - first;
            max_id = max_id.max(next.value - 1);
            if scanner.end - scanner.pos < ENTRY_ROOM && !scanner.eof {
                // The run stopped at the end of the bytes read: read on before anything else.
                continue;
            }
        }
        let (key, id, more) = scanner.vocab_entry(&mut gap)?;
        if id == next.value && next.len > 0 {
            next.advance();
        } else {
            next.set(id.saturating_add(1));
        }
        count += 1;
        max_id = max_id.max(id);
        if wanted.contains(&id) {
            // The key's span is still in the buffer: bytes are dropped only at the top of the
            // loop, and reading more inside an entry only appends.
            let token: String = scanner.parse_span(key)?;
            file.wanted_vocab.insert(id, token);
        }
        next_wanted = wanted
            .range(next.value..)
            .next()
            .copied()
            .unwrap_or(u64::MAX);
        if !more {
            break;
        }
    }
    file.vocab_count = count;
    file.vocab_max_id = (count > 0).then_some(max_id);
    Ok(())
}

/// Bytes of the buffer an entry is checked in by [`usual_entries`]: a key of up to 32 bytes,
/// `: `, 8 digits, a comma and 8 bytes up to the next key's quote fit in it.
pub(crate) const ENTRY_ROOM: usize = 64;

/// Reads usual entries from `buf[pos..]` (`pos` on a key's opening quote) while
/// [`ENTRY_ROOM`] bytes are left: entries exactly `"key": <next id>,<gap>"`, with no backslash
/// in the key, the key at most 32 bytes, the id the one expected, and the bytes from the
/// comma to the next key's quote those of `gap`. Stops before the first other entry, and
/// before the entry whose id is `stop_at` (a wanted id, which the general reader decodes).
/// Returns the cursor after the last entry read (on the next key's quote); `next` has moved
/// on by the number of entries read.
///
/// An entry costs a few dozen instructions: one SIMD compare finds the key's end, and what
/// follows it is compared with the expected [`Tail`] as three words.
#[inline(never)]
fn usual_entries(buf: &[u8], mut pos: usize, next: &mut NextId, gap: &Gap, stop_at: u64) -> usize {
    let Some(mut tail) = Tail::new(next, gap) else {
        return pos;
    };
    let mut value = next.value;
    while value != stop_at {
        let Some(window) = buf.get(pos..pos + ENTRY_ROOM) else {
            break;
        };
        let Ok(w) = <&[u8; ENTRY_ROOM]>::try_from(window) else {
            break;
        };
        let Some(quote) = key_end_in(w) else {
            break;
        };
        if !tail.follows(w, quote + 1) {
            break;
        }
        pos += quote + tail.len;
        value += 1;
        if !tail.advance(value, gap) {
            // Past 8 digits: no tail; the general reader goes on.
            next.set(value);
            return pos;
        }
    }
    *next = tail.id(value);
    pos
}

/// The bytes a usual entry has after its key's closing quote for one id: `: `, the id's
/// digits, `,` and the gap up to the next key's opening quote; at most 2 + 8 + 1 + 8 = 19,
/// held as a 16-byte head and an 8-byte rest, with masks. The digits are counted up in place.
struct Tail {
    head: u128,
    head_mask: u128,
    rest: u64,
    rest_mask: u64,
    /// How many bytes (from the `:` to the next key's quote).
    len: usize,
    /// How many digits the id has (from byte 2 of the head).
    digits: usize,
    /// One in the last digit's byte: the increment of the id.
    one: u128,
    /// Increments left before the last digit is a `9` (then the carry is done byte by byte).
    until_nine: u8,
}

impl Tail {
    /// The tail for the id `next` expects; `None` when the id has more than 8 digits or the
    /// gap is unknown.
    fn new(next: &NextId, gap: &Gap) -> Option<Tail> {
        let digits = next.len as usize;
        if digits == 0 || gap.len == 0 {
            return None;
        }
        let mut bytes = [0u8; 24];
        bytes[..2].copy_from_slice(b": ");
        bytes[2..2 + digits].copy_from_slice(&next.text.to_le_bytes()[..digits]);
        bytes[2 + digits] = b',';
        bytes[3 + digits..3 + digits + gap.len].copy_from_slice(&gap.text.to_le_bytes()[..gap.len]);
        let len = 3 + digits + gap.len;
        let mut head = [0u8; 16];
        head.copy_from_slice(&bytes[..16]);
        let mut rest = [0u8; 8];
        rest.copy_from_slice(&bytes[16..]);
        let last = 1 + digits;
        Some(Tail {
            head: u128::from_le_bytes(head),
            head_mask: if len >= 16 {
                u128::MAX
            } else {
                (1u128 << (8 * len)) - 1
            },
            rest: u64::from_le_bytes(rest),
            rest_mask: if len > 16 { low_bytes(len - 16) } else { 0 },
            len,
            digits,
            one: 1u128 << (8 * last),
            until_nine: b'9' - bytes[last],
        })
    }

    /// Whether `w[at..]` holds this tail (`at` ≤ 33).
    #[inline(always)]
    fn follows(&self, w: &[u8; ENTRY_ROOM], at: usize) -> bool {
        let head = u128::from(word(w, at)) | u128::from(word(w, at + 8)) << 64;
        ((head ^ self.head) & self.head_mask)
            | u128::from((word(w, at + 16) ^ self.rest) & self.rest_mask)
            == 0
    }

    /// Moves on to the id after this one, whose value is `value`. False when it has more
    /// than 8 digits (no tail then).
    #[inline(always)]
    fn advance(&mut self, value: u64, gap: &Gap) -> bool {
        if self.until_nine > 0 {
            self.until_nine -= 1;
            self.head += self.one;
            return true;
        }
        self.carry(value, gap)
    }

    /// The increment that turns the last digit from `9` to `0`: the carry moves up the digits
    /// in place; 9, 99, 999, ... grow a digit and make a new tail.
    #[cold]
    fn carry(&mut self, value: u64, gap: &Gap) -> bool {
        let mut at = 1 + self.digits;
        loop {
            // This digit is a `9`: it becomes `0`, and the carry moves one digit up.
            self.head -= 9u128 << (8 * at);
            if at == 2 {
                let mut next = NextId::default();
                next.set(value);
                return match Tail::new(&next, gap) {
                    Some(tail) => {
                        *self = tail;
                        true
                    }
                    None => false,
                };
            }
            at -= 1;
            if (self.head >> (8 * at)) as u8 != b'9' {
                self.head += 1u128 << (8 * at);
                self.until_nine = 9;
                return true;
            }
        }
    }

    /// The id these digits spell, as [`NextId`] (whose value is `value`: the digits are not
    /// parsed back).
    fn id(&self, value: u64) -> NextId {
        let bytes = self.head.to_le_bytes();
        let mut digits = [0u8; 8];
        digits[..self.digits].copy_from_slice(&bytes[2..2 + self.digits]);
        NextId {
            value,
            text: u64::from_le_bytes(digits),
            len: self.digits as u32,
        }
    }
}

/// The position in `w` of the closing quote of the key whose opening quote is `w[0]`: the
/// first quote or backslash in `w[1..33]`, sixteen bytes per SSE2 compare (part of every x86-64
/// CPU, so no detection is needed). `None` when a backslash comes first or no quote is there.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn key_end_in(w: &[u8; ENTRY_ROOM]) -> Option<usize> {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let hits = |at: usize| {
        // SAFETY: SSE2 is baseline on x86-64; the unaligned load reads w[at..at + 16], and
        // `at` is 1 or 17, so inside the 64 bytes of `w`.
        unsafe {
            let v = _mm_loadu_si128(w.as_ptr().add(at).cast::<__m128i>());
            let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            _mm_movemask_epi8(_mm_or_si128(quote, backslash)) as u32
        }
    };
    let mut found = hits(1);
    let mut at = 1;
    if found == 0 {
        found = hits(17);
        at = 17;
        if found == 0 {
            return None;
        }
    }
    let i = at + found.trailing_zeros() as usize;
    (w[i & (ENTRY_ROOM - 1)] == b'"').then_some(i)
}

/// The same without SIMD instructions: eight bytes at a time with bit tricks on a word.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[cfg_attr(all(test, target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn key_end_in_words(w: &[u8; ENTRY_ROOM]) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    const QUOTES: u64 = u64::from_le_bytes([b'"'; 8]);
    const BACKSLASHES: u64 = u64::from_le_bytes([b'\\'; 8]);
    // The high bit of each byte that is zero; exact for the lowest such byte, which is all
    // that is used (a borrow can only mark bytes above a true zero).
    let zero_bytes = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    for at in [1, 9, 17, 25] {
        let text = word(w, at);
        let hits = zero_bytes(text ^ QUOTES) | zero_bytes(text ^ BACKSLASHES);
        if hits != 0 {
            let i = at + (hits.trailing_zeros() / 8) as usize;
            return (w[i & (ENTRY_ROOM - 1)] == b'"').then_some(i);
        }
    }
    None
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) use key_end_in_words as key_end_in;

/// The 8 bytes of `w` from `at` as a little-endian word. Callers pass `at` ≤ 56; the clamp
/// only lets the compiler see that, so no bounds check is left.
#[inline(always)]
fn word(w: &[u8; ENTRY_ROOM], at: usize) -> u64 {
    let at = at.min(ENTRY_ROOM - 8);
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&w[at..at + 8]);
    u64::from_le_bytes(bytes)
}

/// A mask of the low `n` bytes of a word (`n` from 1 to 8).
#[inline(always)]
fn low_bytes(n: usize) -> u64 {
    if n >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * n)) - 1
    }
}

/// The bytes between one entry's comma and the next key (the whitespace, then the key's
/// opening quote), as the last general read saw them, for one compare.
#[derive(Default)]
struct Gap {
    text: u64,
    /// 0 when unknown or longer than 8 bytes (then never matched).
    len: usize,
}

impl Gap {
    fn learn(&mut self, bytes: &[u8]) {
        *self = Gap::default();
        if (1..=8).contains(&bytes.len()) {
            let mut word = [0u8; 8];
            word[..bytes.len()].copy_from_slice(bytes);
            self.text = u64::from_le_bytes(word);
            self.len = bytes.len();
        }
    }
}

/// The id expected next in a vocabulary map, as the text `tokenizers` writes after a colon
/// (`: 9707,`), kept up to date as ids go by.
#[derive(Default, Clone, Copy)]
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
}

impl<R: Read + Seek> Scanner<R> {
    /// Drops the bytes before the cursor and reads until an entry's room is in the buffer (or
    /// the input ends), a small chunk at a time.
    #[cold]
    fn refill_from_cursor(&mut self) -> io::Result<()> {
        self.drop_consumed();
        while self.end - self.pos < ENTRY_ROOM && self.fill()? {}
        Ok(())
    }

    /// [`Scanner::drop_consumed`] once at least `bytes` lie before the cursor: the buffer holds
    /// at most that much already read beside what is still to read, and a list of small values
    /// (Qwen3's 26 added tokens) costs no move at all, where dropping before each value moved
    /// the rest of the chunk once per value (1.6 M of the headline `diff`'s 16.2 M
    /// instructions).
    fn drop_consumed_past(&mut self, bytes: usize) {
        if self.pos >= bytes {
            self.drop_consumed();
        }
    }

    /// Drops the bytes before the cursor: no span before it is read again.
    fn drop_consumed(&mut self) {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.dropped += self.pos as u64;
            self.pos = 0;
        }
    }

    /// Reads one vocabulary entry of any layout at the cursor (on its key's opening quote),
    /// the comma or closing brace after it, and the whitespace up to the next key's quote.
    /// Returns the key's span (quotes included), the id, and whether another entry follows.
    /// Learns `gap` from the whitespace after a comma.
    #[cold]
    fn vocab_entry(&mut self, gap: &mut Gap) -> Scan<((usize, usize), u64, bool)> {
        let (key_start, key_end, _) = self.string()?;
        self.expect(b':')?;
        self.skip_ws()?;
        let id = self.plain_integer()?;
        match self.skip_ws()? {
            b',' => {
                self.pos += 1;
                let from = self.pos;
                if self.skip_ws()? != b'"' {
                    return Err(Stop::Fallback);
                }
                gap.learn(&self.buf[from..=self.pos]);
                Ok(((key_start, key_end), id, true))
            }
            b'}' => {
                self.pos += 1;
                Ok(((key_start, key_end), id, false))
            }
            _ => Err(Stop::Fallback),
        }
    }

    /// A plain non-negative integer that fits in `u64` at the cursor (digits only; a leading
    /// zero, a sign, a fraction or more than 19 digits give up: serde decides those).
    fn plain_integer(&mut self) -> Scan<u64> {
        let mut id: u64 = 0;
        let mut digits = 0usize;
        let mut leading_zero = false;
        while let Some(b @ b'0'..=b'9') = self.peek()? {
            if digits == 0 && b == b'0' {
                leading_zero = true;
            }
            id = id.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
            digits += 1;
            self.pos += 1;
        }
        if digits == 0 || digits > 19 || (leading_zero && digits > 1) {
            return Err(Stop::Fallback);
        }
        match self.peek()? {
            Some(b'.' | b'e' | b'E') => Err(Stop::Fallback),
            _ => Ok(id),
        }
    }
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
        assert!(text.len() > 32 * CHUNK);
        let wanted: BTreeSet<u64> = [0, 77_777, 119_999].into();
        let mut scanner = Scanner::new(io::Cursor::new(text.as_bytes()), text.len());
        let file = scan(&mut scanner, &wanted).unwrap();
        assert!(scanner.dropped > 0 && scanner.buf.capacity() < 4 * CHUNK);
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
            // Around the 32 bytes the usual-entry reader looks through for a key's end.
            "[a-z\"]{28,40}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

        /// The scanner reads what the serde pass reads, for any vocabulary, formatting,
        /// key order and chunk size, and it never needs to fall back on these layouts.
        #[test]
        fn scanner_equals_serde_pass(
            tokens in proptest::collection::vec(token_text(), 0..40),
            id_offset in prop_oneof![0u64..5, Just(7), Just(95), Just(99_999_990)],
            // 1: ids in sequence, as `tokenizers` writes them (the usual-entry reader's
            // case, across digit carries and the 8-digit limit); 2: a gap every time.
            id_step in 1u64..3,
            wanted in proptest::collection::btree_set(
                prop_oneof![0u64..90, 99_999_990u64..100_000_040],
                0..8,
            ),
            pretty in any::<bool>(),
            merges_first in any::<bool>(),
            model_first in any::<bool>(),
            // Tiny reads cross every boundary; large ones let the fast entry reader work.
            chunk in prop_oneof![1usize..40, 100usize..400, Just(CHUNK)],
        ) {
            let mut vocab = Map::new();
            for (i, t) in tokens.iter().enumerate() {
                vocab.insert(t.clone(), json!(i as u64 * id_step + id_offset));
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

        /// The SSE2 search for a key's end finds what the word-at-a-time one finds.
        #[test]
        fn key_end_searches_agree(bytes in proptest::collection::vec(
            prop_oneof![Just(b'"'), Just(b'\\'), Just(b'a'), Just(0x80u8), Just(0u8), any::<u8>()],
            ENTRY_ROOM,
        )) {
            let w: [u8; ENTRY_ROOM] = bytes.try_into().unwrap();
            prop_assert_eq!(key_end_in(&w), key_end_in_words(&w));
        }
    }
}
