//! A [`Vocabulary`] from a Hugging Face tokenizer: `tokenizer.json` and `tokenizer_config.json`.
//!
//! Every token's text is needed, so unlike the id decoder in [`crate::tokens`] this reads the
//! whole of `model.vocab`; it still never builds a `tokenizers::Tokenizer` (hundreds of
//! milliseconds, and a regex compiled from the file) and never decodes `model.merges`: a small
//! JSON walker over the file's bytes skips the values it does not need and stops once the
//! vocabulary and the top-level keys read before it are in. A vocabulary key without escapes is
//! copied as it is; one with escapes, a Unigram list vocabulary and the small top-level values
//! go through serde. bos/eos and add_bos/add_eos come from `tokenizer_config.json`, which is
//! where `transformers` and llama.cpp's converter read them.

use crate::tokens::{TypeMention, BYTE_LEVEL};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::Vocabulary;
use crate::config::{open_regular, read_capped, regular_file_present};
use crate::tokens::scan::{key_end_in, ENTRY_ROOM};
use crate::tokens::{MAX_TOKENIZER_BYTES, MAX_TOKENIZER_CONFIG_BYTES};
use crate::{Error, Result};

/// Reads the tokenizer files in `dir`.
pub fn from_dir(dir: &Path) -> Result<Vocabulary> {
    from_dir_in_pieces(dir, CHUNK)
}

/// [`from_dir`] reading the file `piece` bytes at a time: for the fuzz target and tests, which
/// put a piece boundary inside every kind of entry (the fast entry loop and the general walker
/// meet there).
#[doc(hidden)]
pub fn from_dir_in_pieces(dir: &Path, piece: usize) -> Result<Vocabulary> {
    let tokenizer = dir.join("tokenizer.json");
    if !regular_file_present(&tokenizer)? {
        return Err(Error::new(format!(
            "no tokenizer.json in `{}`: the vocabulary cannot be compared",
            dir.display()
        ))
        .with_hint(
            "the draft model and the target each need their tokenizer.json beside config.json",
        ));
    }
    let (mut vocab, _) = read_tokenizer(&tokenizer, piece, &BTreeSet::new())?;
    let config = dir.join("tokenizer_config.json");
    if regular_file_present(&config)? {
        let bytes = read_capped(&config, MAX_TOKENIZER_CONFIG_BYTES)?;
        apply_config_file(&mut vocab, &config, &bytes)?;
    }
    Ok(vocab)
}

/// The `tokenizer.json` at `path` (known to be there) into a vocabulary, `tokenizer_config.json`
/// not applied yet, with what the walk noticed for a token table asking about `wanted`.
pub(crate) fn read_tokenizer(
    path: &Path,
    piece: usize,
    wanted: &BTreeSet<u64>,
) -> Result<(Vocabulary, Notes)> {
    let (file, meta) = open_regular(path)?;
    if meta.len() > MAX_TOKENIZER_BYTES {
        // Let the common reader word the refusal.
        read_capped(path, MAX_TOKENIZER_BYTES)?;
    }
    let mut w = Walker {
        // Room for the whole file at once (untouched pages cost nothing): it never regrows.
        b: Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0)),
        pos: 0,
        // Never past the cap, even if the file grows while it is read: spans stay u32.
        src: Some(std::io::Read::take(file, MAX_TOKENIZER_BYTES)),
        piece: piece.max(1),
        dropped: 0,
        notes: Notes::default(),
    };
    let mut vocab = walk_tokenizer(&mut w, wanted).map_err(|e| {
        Error::new(format!(
            "`{}`: cannot read the tokenizer: {e}",
            path.display()
        ))
    })?;
    vocab.source = path.display().to_string();
    Ok((vocab, w.notes))
}

/// `tokenizer_config.json`'s bytes (read from `config`) applied to `vocab`, its error naming
/// the file.
pub(crate) fn apply_config_file(vocab: &mut Vocabulary, config: &Path, bytes: &[u8]) -> Result<()> {
    apply_config(vocab, bytes).map_err(|e| Error::new(format!("`{}`: {e}", config.display())))
}

/// What one walk of `tokenizer.json` noticed beyond the [`Vocabulary`], so that the target's
/// token table can be built from the same read instead of a second one (issue 44;
/// [`super::target`]). The table's own reader, [`crate::tokens::TokenizerFile::read`], is a
/// different parser: on a file laid out as `tokenizers` writes it the two read the same
/// things, but each tolerates different faults, and where they could part the walk says so
/// ([`Notes::unusual`]) and the table is read its own way.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    /// Why the file is not one both readers are known to take alike (the first reason seen);
    /// `None`: it is.
    pub unusual: Option<&'static str>,
    /// Entries of `model.vocab`, an id listed twice counted twice (as the table counts them).
    pub entries: u64,
    /// One past the highest id of `model.vocab`, before the added tokens join the table.
    pub base_len: u32,
    /// A `ByteLevel` step in `decoder` or `pre_tokenizer`, told by [`TypeMention`] as the
    /// table's reader tells it (the vocabulary reads `pre_tokenizer` as a tree, which keeps
    /// only the last of a key written twice).
    pub byte_level: bool,
    /// The `model.vocab` text of each wanted id (the last entry for an id listed twice), before
    /// an added token of the same id replaces it in [`Vocabulary::tokens`].
    pub wanted: BTreeMap<u64, String>,
}

impl Notes {
    fn mark(&mut self, why: &'static str) {
        self.unusual.get_or_insert(why);
    }

    /// Keeps the texts of the `wanted` ids of `model.vocab` (`tokens` before the added tokens
    /// join it), and its length.
    fn keep_wanted(&mut self, tokens: &super::TokenTexts, wanted: &BTreeSet<u64>) {
        self.base_len = tokens.len();
        for &id in wanted.range(..u64::from(tokens.len())) {
            if let Some(text) = tokens.get(id as u32) {
                // The table's reader decodes a wanted key with serde, which refuses a control
                // character written as it is; the walk copies a key without escapes unchecked.
                if text.bytes().any(|c| c < 0x20) {
                    self.mark("a wanted token's text holds a control character");
                }
                self.wanted.insert(id, text.to_string());
            }
        }
    }
}

/// `tokenizer.json`'s bytes into a vocabulary (no bos/eos: those are the config's).
pub fn parse_tokenizer(bytes: &[u8]) -> std::result::Result<Vocabulary, String> {
    walk_tokenizer(
        &mut Walker {
            b: bytes.to_vec(),
            pos: 0,
            src: None,
            piece: CHUNK,
            dropped: 0,
            notes: Notes::default(),
        },
        &BTreeSet::new(),
    )
}

/// Highest token id read: the table holds a slot per id up to the highest, so an id of 2^31 in
/// a 40-byte file would allocate 16 GiB. The largest vocabularies are about 262,000 tokens.
const MAX_TOKEN_ID: u64 = 1 << 24;

/// Bytes per read: the file is read as far as the walk goes (to the end of the vocabulary,
/// as `tokenizers` lays files out), never the merges after it.
pub(crate) const CHUNK: usize = 1 << 16;

fn walk_tokenizer(
    w: &mut Walker,
    wanted: &BTreeSet<u64>,
) -> std::result::Result<Vocabulary, String> {
    let mut vocab = Vocabulary::default();
    let mut post_processor_adds_bos = None;
    // The top-level keys read before `model` (where `tokenizers` writes them): once they and
    // the model are in, nothing later can change the answer, and the merges are never walked.
    let mut seen = [false; 4];
    let (mut models, mut stopped) = (0, false);
    w.open(b'{')?;
    let mut first = true;
    while let Some((a, b)) = w.key(&mut first)? {
        let key = w.b[a..b].to_vec();
        if let Some(i) = TOP_KEYS.iter().position(|k| *k == key) {
            if seen[i] {
                w.notes.mark("a top-level key is written twice");
            }
            seen[i] = true;
        }
        match key.as_slice() {
            b"added_tokens" => {
                let span = w.skip()?;
                let added: Option<Vec<RawAdded>> = parse_span(&w.b, span, w.dropped)?;
                let added = added.unwrap_or_default();
                if let Some(t) = added.iter().find(|t| u64::from(t.id) > MAX_TOKEN_ID) {
                    return Err(format!(
                        "added token id {} is over {MAX_TOKEN_ID} (no tokenizer has that many tokens)",
                        t.id
                    ));
                }
                for t in added {
                    vocab.added.insert(t.id, (t.content, t.special));
                }
            }
            b"pre_tokenizer" => w.pre_tokenizer(&mut vocab)?,
            b"decoder" => {
                let span = w.skip()?;
                let byte_level = parse_seed(&w.b, span, w.dropped, BYTE_LEVEL)?;
                vocab.byte_level |= byte_level;
                w.notes.byte_level |= byte_level;
            }
            b"post_processor" => {
                let span = w.skip()?;
                let template = TypeMention("TemplateProcessing");
                post_processor_adds_bos = Some(parse_seed(&w.b, span, w.dropped, template)?);
            }
            b"model" => {
                models += 1;
                if models > 1 {
                    w.notes.mark("`model` is written twice");
                }
                if w.model(&mut vocab, seen.iter().all(|s| *s))? {
                    stopped = true;
                    break;
                }
            }
            _ => {
                w.skip()?;
            }
        }
    }
    if !stopped {
        // The table's reader may then read to the end of the file (and refuse what follows
        // the object), or stop where this walk did not.
        w.notes
            .mark("the file is not laid out as `tokenizers` writes it");
    }
    // `model.vocab` alone, before the added tokens join the table.
    vocab.base_size = Some(vocab.tokens.count());
    w.notes.keep_wanted(&vocab.tokens, wanted);
    for (&id, (text, _)) in &vocab.added {
        vocab.tokens.set(id, text);
    }
    vocab.add_bos = post_processor_adds_bos;
    Ok(vocab)
}

const TOP_KEYS: [&[u8]; 4] = [
    b"added_tokens",
    b"pre_tokenizer",
    b"decoder",
    b"post_processor",
];

#[derive(serde::Deserialize)]
struct RawAdded {
    id: u32,
    content: String,
    #[serde(default)]
    special: bool,
}

fn parse_span<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    (a, b): (usize, usize),
    dropped: usize,
) -> std::result::Result<T, String> {
    serde_json::from_slice(&bytes[a..b]).map_err(|e| format!("at byte {}: {e}", a + dropped))
}

/// The largest `pre_tokenizer` read: it is parsed whole (its compact text is compared).
const MAX_PRE_TOKENIZER_BYTES: usize = 1 << 20;

/// A span read by a serde seed that keeps only what it returns (no tree of the value).
fn parse_seed<'a, S: serde::de::DeserializeSeed<'a>>(
    bytes: &'a [u8],
    (a, b): (usize, usize),
    dropped: usize,
    seed: S,
) -> std::result::Result<S::Value, String> {
    let mut de = serde_json::Deserializer::from_slice(&bytes[a..b]);
    let value = seed
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| format!("at byte {}: {e}", a + dropped))?;
    Ok(value)
}

fn mentions(v: &serde_json::Value, ty: &str) -> bool {
    match v {
        serde_json::Value::Object(m) => {
            m.get("type").and_then(|t| t.as_str()) == Some(ty)
                || m.values().any(|v| mentions(v, ty))
        }
        serde_json::Value::Array(a) => a.iter().any(|v| mentions(v, ty)),
        _ => false,
    }
}

/// A cursor over JSON bytes that reads structure only, reading its file as far as it goes.
struct Walker {
    /// The bytes read and not yet dropped; spans are indices into it (only the vocabulary walk
    /// drops what it has read, between entries).
    b: Vec<u8>,
    pos: usize,
    /// The file still to read (`None`: at its end, or bytes given whole).
    src: Option<std::io::Take<std::fs::File>>,
    /// Bytes per read ([`CHUNK`]).
    piece: usize,
    /// Bytes dropped from the front of `b`: positions in messages are `pos + dropped`.
    dropped: usize,
    /// What the walk noticed for a token table read with it.
    notes: Notes,
}

impl Walker {
    /// The byte at `at`, reading more of the file when needed; `None` past its end.
    #[inline]
    fn at(&mut self, at: usize) -> std::result::Result<Option<u8>, String> {
        while at >= self.b.len() {
            if !self.fill()? {
                return Ok(None);
            }
        }
        Ok(Some(self.b[at]))
    }

    #[cold]
    fn fill(&mut self) -> std::result::Result<bool, String> {
        use std::io::Read;
        let Some(src) = self.src.as_mut() else {
            return Ok(false);
        };
        // Appended into the spare capacity, never zero-filled first.
        let n = src
            .take(self.piece as u64)
            .read_to_end(&mut self.b)
            .map_err(|e| format!("reading it failed: {e}"))?;
        if n == 0 {
            self.src = None;
        }
        Ok(n > 0)
    }

    fn ws(&mut self) -> std::result::Result<u8, String> {
        loop {
            let rest = self.b.get(self.pos..).unwrap_or_default();
            if let Some(i) = rest
                .iter()
                .position(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t'))
            {
                self.pos += i;
                return Ok(rest[i]);
            }
            self.pos = self.pos.max(self.b.len());
            if !self.fill()? {
                return Err("the file ends early".into());
            }
        }
    }

    fn open(&mut self, c: u8) -> std::result::Result<(), String> {
        if self.ws()? != c {
            return Err(format!(
                "expected `{}` at byte {}",
                c as char,
                self.pos + self.dropped
            ));
        }
        self.pos += 1;
        Ok(())
    }

    /// The next key of an object (`None` at its end), with the colon consumed.
    fn key(&mut self, first: &mut bool) -> std::result::Result<Option<(usize, usize)>, String> {
        let c = self.ws()?;
        if c == b'}' {
            self.pos += 1;
            return Ok(None);
        }
        if !*first {
            if c != b',' {
                return Err(format!("expected `,` at byte {}", self.pos + self.dropped));
            }
            self.pos += 1;
            self.ws()?;
        }
        *first = false;
        let (a, b, escaped) = self.string()?;
        if escaped {
            // Compared as written here, unescaped by the table's reader.
            self.notes.mark("an object key is written with an escape");
        }
        self.open(b':')?;
        Ok(Some((a, b)))
    }

    /// A string at the cursor: the span of its contents and whether it has escapes.
    fn string(&mut self) -> std::result::Result<(usize, usize, bool), String> {
        self.open(b'"')?;
        let start = self.pos;
        let mut escaped = false;
        loop {
            if self.pos >= self.b.len() && !self.fill()? {
                return Err("a string does not end".into());
            }
            let Some(pos) = self.b.get(self.pos..) else {
                continue;
            };
            // Tokens are short: a plain loop beats a SIMD search's set-up.
            match pos.iter().position(|&c| c == b'"' || c == b'\\') {
                Some(i) if pos[i] == b'"' => {
                    self.pos += i + 1;
                    return Ok((start, self.pos - 1, escaped));
                }
                Some(i) => {
                    escaped = true;
                    self.pos += i + 2;
                }
                None => self.pos = self.b.len(),
            }
        }
    }

    /// `pre_tokenizer`, kept as compact text to compare with the target's, so it is built as
    /// a tree: bounded first (a few hundred bytes in every tokenizer; issue 44).
    fn pre_tokenizer(&mut self, vocab: &mut Vocabulary) -> std::result::Result<(), String> {
        let span = self.skip()?;
        if span.1 - span.0 > MAX_PRE_TOKENIZER_BYTES {
            return Err(format!(
                "`pre_tokenizer` at byte {} is {} bytes, over the {} KiB a pre-tokenizer \
                 could need (a real one is a few hundred bytes)",
                span.0 + self.dropped,
                span.1 - span.0,
                MAX_PRE_TOKENIZER_BYTES >> 10
            ));
        }
        let v: serde_json::Value = parse_span(&self.b, span, self.dropped)?;
        vocab.byte_level |= mentions(&v, "ByteLevel");
        match parse_seed(&self.b, span, self.dropped, BYTE_LEVEL) {
            Ok(byte_level) => self.notes.byte_level |= byte_level,
            Err(_) => self
                .notes
                .mark("`pre_tokenizer` is read alike only as a tree"),
        }
        vocab.pre_tokenizer = (!v.is_null()).then(|| v.to_string());
        Ok(())
    }

    /// Skips one value; returns its span.
    fn skip(&mut self) -> std::result::Result<(usize, usize), String> {
        self.ws()?;
        let start = self.pos;
        let mut depth = 0usize;
        // Which bracket each open level is (a bit each, `{` set), for the notes: the brackets
        // are only counted here, and the table's reader gives up on `{]`. Deeper than 128
        // levels nothing is tracked and the file is unusual.
        let mut kinds = 0u128;
        loop {
            match self.ws()? {
                b'"' => {
                    self.string()?;
                }
                c @ (b'{' | b'[') => {
                    if depth >= 128 {
                        self.notes.mark("a value nests more than 128 levels deep");
                    }
                    kinds = kinds << 1 | u128::from(c == b'{');
                    depth += 1;
                    self.pos += 1;
                }
                c @ (b'}' | b']') => {
                    depth = depth.checked_sub(1).ok_or("unbalanced brackets")?;
                    if (kinds & 1 == 1) != (c == b'}') {
                        self.notes.mark("a bracket closes one of the other kind");
                    }
                    kinds >>= 1;
                    self.pos += 1;
                }
                b',' | b':' if depth > 0 => self.pos += 1,
                _ => {
                    let at = self.pos;
                    while let Some(c) = self.at(self.pos)? {
                        if matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                            break;
                        }
                        self.pos += 1;
                    }
                    if self.pos == at {
                        // `"key": ,`: a value left out, which the table's reader refuses.
                        self.notes.mark("a value is missing");
                    }
                }
            }
            if depth == 0 {
                return Ok((start, self.pos));
            }
        }
    }

    /// `model`: its `type` and `vocab`; the merges and the rest skipped. With `may_stop`,
    /// stops as soon as both are in and returns true (the rest of the file is not read).
    fn model(
        &mut self,
        vocab: &mut Vocabulary,
        may_stop: bool,
    ) -> std::result::Result<bool, String> {
        if self.ws()? != b'{' {
            self.skip()?;
            return Ok(false);
        }
        let (mut has_type, mut has_vocab) = (false, false);
        self.pos += 1;
        let mut first = true;
        while let Some((a, b)) = self.key(&mut first)? {
            let key = self.b[a..b].to_vec();
            if key == b"vocab" && has_vocab {
                self.notes.mark("`model.vocab` is written twice");
            }
            match key.as_slice() {
                b"type" => {
                    let span = self.skip()?;
                    vocab.model = parse_span::<Option<String>>(&self.b, span, self.dropped)?;
                    has_type = true;
                }
                b"vocab" if self.ws()? == b'{' => {
                    self.vocab_map(vocab)?;
                    has_vocab = true;
                }
                b"vocab" => {
                    // The table's reader reads a list vocabulary (Unigram) by its serde pass
                    // over the whole file, which refuses faults after the vocabulary.
                    self.notes.mark("`model.vocab` is a list");
                    has_vocab = true;
                    let span = self.skip()?;
                    let list: Vec<(String, serde::de::IgnoredAny)> =
                        parse_span(&self.b, span, self.dropped)?;
                    vocab.tokens.reserve(list.len(), 0);
                    self.notes.entries += list.len() as u64;
                    for (id, (token, _)) in list.iter().enumerate() {
                        vocab.tokens.set(id as u32, token);
                    }
                }
                _ => {
                    self.skip()?;
                }
            }
            if may_stop && has_type && has_vocab {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `"token": id, …` into the table.
    fn vocab_map(&mut self, vocab: &mut Vocabulary) -> std::result::Result<(), String> {
        self.pos += 1;
        let mut raw = super::RawTokenTexts::default();
        // Room for 262,144 tokens at once (untouched pages cost nothing): no regrowth copies.
        raw.reserve(1 << 18, 1 << 22);
        self.vocab_entries(&mut raw)?;
        let texts = raw
            .into_texts()
            .map_err(|id| format!("the vocabulary key of id {id} is not UTF-8"))?;
        vocab.tokens.extend(texts);
        Ok(())
    }

    /// The entries of `model.vocab`, the cursor just inside its `{`.
    fn vocab_entries(&mut self, raw: &mut super::RawTokenTexts) -> std::result::Result<(), String> {
        let mut first = true;
        loop {
            // Between entries nothing before the cursor is needed any more: dropping it keeps
            // the buffer at about two reads, so the pages it touches stay few (page faults,
            // not parsing, were the cost of keeping the whole vocabulary's bytes).
            if self.pos > self.piece {
                self.b.drain(..self.pos);
                self.dropped += self.pos;
                self.pos = 0;
            }
            // Most entries are plain and whole in the buffer; the general code below takes the
            // one the fast loop stops at (cut by the buffer's end, escaped, or bad input).
            self.plain_entries(raw, &mut first);
            let c = self.ws()?;
            if c == b'}' {
                self.pos += 1;
                return Ok(());
            }
            if !first {
                if c != b',' {
                    return Err(format!("expected `,` at byte {}", self.pos + self.dropped));
                }
                self.pos += 1;
                self.ws()?;
            }
            first = false;
            let (a, b, escaped) = self.string()?;
            self.open(b':')?;
            self.ws()?;
            let id = self.id()?;
            self.notes.entries += 1;
            if escaped {
                let s: String = parse_span(&self.b, (a - 1, b + 1), self.dropped)?;
                raw.set(id, s.as_bytes());
            } else {
                raw.set(id, &self.b[a..b]);
            }
        }
    }

    /// Reads `"key": id` entries straight from the bytes already in the buffer, with no refill
    /// and no error path, and leaves the cursor at the first entry it does not take whole: one
    /// that runs past the bytes read so far, has an escape, an id of more than 10 digits or over
    /// 2^31, or anything else unusual (the end of the map included). The
    /// general loop reads that entry, refilling or failing with its message, so both paths
    /// accept exactly the same files. Per entry this is a few compares instead of five calls
    /// that each check for a refill: the vocabulary walk's cost was per entry, not per byte.
    fn plain_entries(&mut self, raw: &mut super::RawTokenTexts, first: &mut bool) {
        let b = &self.b;
        let skip_ws = |mut i: usize| {
            while i < b.len() && matches!(b[i], b' ' | b'\n' | b'\r' | b'\t') {
                i += 1;
            }
            i
        };
        let mut at = self.pos;
        let mut taken = 0u64;
        loop {
            let mut i = skip_ws(at);
            if !*first {
                if b.get(i) != Some(&b',') {
                    break;
                }
                i = skip_ws(i + 1);
            }
            if b.get(i) != Some(&b'"') {
                break;
            }
            let key = i + 1;
            // Most keys are short: their end is found 16 bytes per compare, by the token
            // table's own scanner; a longer key, or one with a backslash, byte by byte.
            let window = b
                .get(i..i + ENTRY_ROOM)
                .and_then(|w| <&[u8; ENTRY_ROOM]>::try_from(w).ok());
            let end = match window.and_then(key_end_in) {
                Some(at) => i + at,
                None => {
                    let Some(len) = b[key..].iter().position(|&c| c == b'"' || c == b'\\') else {
                        break;
                    };
                    key + len
                }
            };
            if b[end] != b'"' {
                break;
            }
            i = skip_ws(end + 1);
            if b.get(i) != Some(&b':') {
                break;
            }
            let digits = skip_ws(i + 1);
            let mut j = digits;
            let mut id: u64 = 0;
            while j < b.len() && j - digits < 10 && b[j].is_ascii_digit() {
                id = id * 10 + u64::from(b[j] - b'0');
                j += 1;
            }
            // The id must end inside the buffer (the next byte read is not a digit); one with
            // a leading zero is left to the general path, which notes it.
            if j == digits
                || j >= b.len()
                || b[j].is_ascii_digit()
                || id > MAX_TOKEN_ID
                || (b[digits] == b'0' && j - digits > 1)
            {
                break;
            }
            raw.set(id as u32, &b[key..end]);
            taken += 1;
            *first = false;
            at = j;
        }
        self.pos = at;
        self.notes.entries += taken;
    }

    /// A token id: a plain non-negative integer below 2^31 (no token table is larger).
    fn id(&mut self) -> std::result::Result<u32, String> {
        let start = self.pos;
        let mut n: u64 = 0;
        while let Some(c) = self.at(self.pos)? {
            if !c.is_ascii_digit() {
                break;
            }
            n = n * 10 + u64::from(c - b'0');
            if n > MAX_TOKEN_ID {
                return Err(format!(
                    "a token id at byte {} is over {MAX_TOKEN_ID} (no tokenizer has that many tokens)",
                    start + self.dropped
                ));
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(format!(
                "expected a token id at byte {}",
                start + self.dropped
            ));
        }
        if self.pos - start > 1 && self.at(start)? == Some(b'0') {
            // `007`: not JSON; the table's reader gives up on it, this walk reads 7.
            self.notes.mark("a token id has a leading zero");
        }
        Ok(n as u32)
    }
}

/// `tokenizer_config.json`: added tokens it alone lists, bos/eos, add_bos/add_eos.
fn apply_config(vocab: &mut Vocabulary, bytes: &[u8]) -> std::result::Result<(), String> {
    let v: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("invalid JSON: {e}"))?;
    if let Some(decoder) = v.get("added_tokens_decoder").and_then(|d| d.as_object()) {
        for (id, entry) in decoder {
            let (Ok(id), Some(content)) = (
                id.parse::<u32>(),
                entry.get("content").and_then(|c| c.as_str()),
            ) else {
                continue;
            };
            if id > MAX_TOKEN_ID as u32 {
                return Err(format!(
                    "added_tokens_decoder id {id} is over {MAX_TOKEN_ID} (no tokenizer has that many tokens)"
                ));
            }
            if let std::collections::btree_map::Entry::Vacant(slot) = vocab.added.entry(id) {
                let special = entry.get("special").and_then(|s| s.as_bool());
                slot.insert((content.to_string(), special.unwrap_or(false)));
                vocab.tokens.set(id, content);
            }
        }
    }
    let token_text = |key: &str| match v.get(key) {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(serde_json::Value::Object(o)) => {
            o.get("content").and_then(|c| c.as_str()).map(String::from)
        }
        _ => None,
    };
    vocab.bos = token_text("bos_token").and_then(|t| vocab.id_of(&t));
    vocab.eos = token_text("eos_token").and_then(|t| vocab.id_of(&t));
    if let Some(b) = v.get("add_bos_token").and_then(|b| b.as_bool()) {
        vocab.add_bos = Some(b);
    }
    if let Some(b) = v.get("add_eos_token").and_then(|b| b.as_bool()) {
        vocab.add_eos = Some(b);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_vocab_added_and_config() {
        let json =
            br#"{"version":"1.0","added_tokens":[{"id":3,"content":"<|end|>","special":true}],
            "pre_tokenizer":{"type":"ByteLevel"},"post_processor":null,
            "model":{"type":"BPE","vocab":{"a":0,"\u0120the":1,"c\"":2},"merges":[["a","c\""]]}}"#;
        let mut v = parse_tokenizer(json).unwrap();
        assert_eq!(v.model.as_deref(), Some("BPE"));
        assert_eq!(v.tokens.len(), 4);
        assert_eq!(v.tokens.get(1), Some("Ġthe"));
        assert_eq!(v.tokens.get(2), Some("c\""));
        assert_eq!(v.tokens.get(3), Some("<|end|>"));
        assert_eq!(v.readable(1).as_deref(), Some(" the"));
        apply_config(&mut v, br#"{"eos_token":"<|end|>","add_bos_token":false}"#).unwrap();
        assert_eq!((v.eos, v.bos, v.add_bos), (Some(3), None, Some(false)));
    }

    /// With every top-level key read before `model`, the merges are never walked: a file cut
    /// off inside them still reads (as `tokenizers` writes files, nothing follows that matters).
    #[test]
    fn stops_after_the_vocabulary() {
        let json =
            br#"{"added_tokens":[],"pre_tokenizer":null,"decoder":null,"post_processor":null,
            "model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":[["a","b"],["a""#;
        let v = parse_tokenizer(json).unwrap();
        assert_eq!((v.tokens.len(), v.model.as_deref()), (2, Some("BPE")));
        // Without them it reads on, and the cut is an error.
        let without = br#"{"model":{"type":"BPE","vocab":{"a":0},"merges":[["a""#;
        assert!(parse_tokenizer(without).is_err());
    }

    /// The fast entry loop and the general one must read the same files the same way: a
    /// vocabulary of 300,000 entries (several read chunks) with escaped keys, long keys, odd
    /// spacing and ids out of order, read chunk by chunk from a file, whole from bytes, and by
    /// serde, agree id by id; and a bad entry deep in the file fails with the general path's
    /// message.
    #[test]
    fn chunked_fast_and_general_paths_agree() {
        let mut json = String::from("{\"model\":{\"type\":\"BPE\",\"vocab\":{");
        let mut expected = std::collections::BTreeMap::new();
        for i in 0u32..300_000 {
            let id = if i % 1000 == 7 { 300_000 + i } else { i };
            let key = match (i % 11, i % 5003) {
                (_, 2) => "x".repeat(70_000 + i as usize % 3) + &i.to_string(),
                (0, _) => format!("q\\\"{i}\\n"),
                (1, _) => format!("\\u00e9t\\u00e9{i}"),
                _ => format!("\u{120}tok{i}"),
            };
            let sep = ["", " ", "\n      ", "\t\r\n"][i as usize % 4];
            let comma = if i == 0 { "" } else { "," };
            json.push_str(&format!("{comma}{sep}\"{key}\"{sep}:{sep}{id}"));
            let text: String = serde_json::from_str(&format!("\"{key}\"")).unwrap();
            expected.insert(id, text);
        }
        json.push_str("}}}");
        let dir = std::env::temp_dir().join(format!("dflash-vocab-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tokenizer.json"), &json).unwrap();
        let chunked = from_dir(&dir).unwrap();
        let whole = parse_tokenizer(json.as_bytes()).unwrap();
        assert_eq!(chunked.tokens, whole.tokens);
        // Pieces of a few bytes: a boundary inside every part of an entry.
        assert_eq!(from_dir_in_pieces(&dir, 7).unwrap().tokens, whole.tokens);
        assert_eq!(chunked.tokens.len(), 300_000 + 299_008);
        for (id, text) in &expected {
            assert_eq!(chunked.tokens.get(*id), Some(text.as_str()), "id {id}");
        }
        // A bad id deep in the file: the fast loop leaves it to the general path's message.
        let key_at = json.find("\"\u{120}tok250003\"").unwrap();
        let id_at = key_at + json[key_at..].find(":").unwrap();
        let id_at = id_at + json[id_at..].find("250003").unwrap();
        let bad = format!("{}2500x3{}", &json[..id_at], &json[id_at + 6..]);
        std::fs::write(dir.join("tokenizer.json"), &bad).unwrap();
        let err = from_dir(&dir).unwrap_err().to_string();
        assert!(err.contains("expected `,`"), "{err}");
        // The byte named is the file's, not the trimmed buffer's.
        let at = bad.find("2500x3").unwrap() + 4;
        assert!(err.contains(&format!("at byte {at}")), "{err} (byte {at})");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unigram_list_and_bad_input() {
        let json = br#"{"model":{"type":"Unigram","vocab":[["<unk>",0.0],["a",-1.5]]}}"#;
        let v = parse_tokenizer(json).unwrap();
        assert_eq!(v.tokens.get(1), Some("a"));
        for bad in [
            &b"{\"model\":{\"vocab\":{\"a\":"[..],
            b"{\"model\":{\"vocab\":{\"a\":99999999999}}}",
            // Under 2^31 but no tokenizer's: a slot per id would be 16 GiB.
            b"{\"model\":{\"vocab\":{\"a\":2147483647}}}",
            b"{\"added_tokens\":[{\"id\":4294967295,\"content\":\"x\"}],\"model\":{\"vocab\":{}}}",
            b"[",
            b"{\"a\":\"x",
            // Not UTF-8, and (second) one character split between two keys: the whole text
            // is UTF-8 but neither key is.
            b"{\"model\":{\"vocab\":{\"a\":0,\"\xff\":1}}}",
            b"{\"model\":{\"vocab\":{\"a\xc3\":0,\"\xa9b\":1}}}",
        ] {
            assert!(
                parse_tokenizer(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
