//! Turning token ids into something a person can check: `248070 <|audio_start|>`.
//!
//! The ids in a drafter config (mask, bos, eos, pad) are nearly always added tokens, listed in
//! `tokenizer_config.json` (`added_tokens_decoder`) and `tokenizer.json` (`added_tokens`); some
//! tokens exist only in the former, so both are read. Building a full `tokenizers::Tokenizer`
//! costs hundreds of milliseconds and megabytes, so the default path reads `tokenizer.json`
//! with a byte scanner ([`scan`]) that keeps the added tokens, counts `model.vocab`, decodes
//! only the entries for the ids asked about and stops before the merges; a file laid out
//! differently goes through a general streaming serde pass instead. `--full-tokenizer` loads
//! the real thing (the equivalence of the paths is tested on the real Qwen3 tokenizer, in
//! `tests/tokens_real.rs`).

pub(crate) mod scan;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::{Read, Seek};
use std::path::Path;
use std::sync::Arc;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::config::{io_error, open_regular, read_capped, regular_file_present};
use crate::{Error, Result};

/// Large tokenizers (Qwen3.5: 248k entries) are about 20 MB; leave room, refuse absurd files.
pub const MAX_TOKENIZER_BYTES: u64 = 256 * 1024 * 1024;
pub const MAX_TOKENIZER_CONFIG_BYTES: u64 = 16 * 1024 * 1024;
/// `--full-tokenizer` hands the whole file to the `tokenizers` crate, whose model costs about
/// 16 times the file in memory (the 11 MB Qwen3 tokenizer: 165 MB peak; a 64 MiB BPE: 1 GB and
/// 6–7 s; BENCHMARKS.md), so it has a cap of its own, under [`MAX_TOKENIZER_BYTES`]: about twice
/// the largest tokenizer.json published for a current target (Gemma 3's, 33 MB).
pub const MAX_FULL_TOKENIZER_BYTES: u64 = 64 * 1024 * 1024;
/// `--full-tokenizer`'s time cap: building runs the crate's own code (regex compilation, the
/// BPE merge table) over a file we do not control. The Qwen3 tokenizer builds in 0.3 s; a file
/// still building after this long is refused instead of holding the command.
pub const FULL_TOKENIZER_SECONDS: u64 = 30;

/// An added token: its text and whether the tokenizer marks it special.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AddedToken {
    pub content: String,
    /// `None` when the source does not say (a built-in table recorded without the flag).
    pub special: Option<bool>,
}

/// What an id is, for the target's tokenizer and embedding matrix.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "class", rename_all = "snake_case")]
pub enum TokenClass {
    /// An added token the tokenizer marks special (`<|im_end|>`).
    SpecialAdded { content: String },
    /// An added token not marked special (`<think>` in Qwen3).
    Added { content: String },
    /// An added token whose special flag is unknown.
    AddedToken { content: String },
    /// A token of the base vocabulary: `raw` as stored (`Ġthe`), `text` as it reads (` the`).
    Regular { raw: String, text: String },
    /// Beyond the tokenizer but inside the embedding matrix: valid as a mask id, never text.
    UnusedRow { tokenizer_len: u64, vocab_size: u64 },
    /// At or above the target's `vocab_size`: no embedding row exists.
    OutOfRange { vocab_size: u64 },
    /// Beyond the tokenizer; the target's `vocab_size` is not known, so it may be either.
    BeyondTokenizer { tokenizer_len: u64 },
    /// No tokenizer (or no vocabulary) to decode it with.
    Unknown,
}

/// A decoded id.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DecodedToken {
    pub id: u64,
    #[serde(flatten)]
    pub class: TokenClass,
}

impl DecodedToken {
    pub fn is_out_of_range(&self) -> bool {
        matches!(self.class, TokenClass::OutOfRange { .. })
    }

    /// The token's text, when it has one.
    pub fn content(&self) -> Option<&str> {
        match &self.class {
            TokenClass::SpecialAdded { content }
            | TokenClass::Added { content }
            | TokenClass::AddedToken { content } => Some(content),
            TokenClass::Regular { text, .. } => Some(text),
            _ => None,
        }
    }
}

impl fmt::Display for DecodedToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = self.id;
        match &self.class {
            TokenClass::SpecialAdded { content } => write!(f, "{id} {content} (special token)"),
            TokenClass::Added { content } => write!(f, "{id} {content} (added token, not special)"),
            TokenClass::AddedToken { content } => write!(f, "{id} {content} (added token)"),
            TokenClass::Regular { raw, text } => {
                if raw == text {
                    write!(f, "{id} {} (vocab token)", readable(text))
                } else {
                    write!(f, "{id} {} (vocab token {})", readable(text), readable(raw))
                }
            }
            TokenClass::UnusedRow {
                tokenizer_len,
                vocab_size,
            } => write!(
                f,
                "{id} (unused embedding row: the tokenizer has {tokenizer_len} tokens, the \
                 embedding {vocab_size} rows; valid as a mask id, not text)"
            ),
            TokenClass::OutOfRange { vocab_size } => {
                write!(
                    f,
                    "{id} (out of range: the target has {vocab_size} embedding rows)"
                )
            }
            TokenClass::BeyondTokenizer { tokenizer_len } => write!(
                f,
                "{id} (beyond the tokenizer's {tokenizer_len} tokens: an unused embedding row or \
                 out of range; pass --target to know the vocab_size)"
            ),
            TokenClass::Unknown => write!(f, "{id} (not decoded)"),
        }
    }
}

/// Quotes text so that spaces and control characters show: `" the"`, `"\n"`.
pub fn readable(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// How ids are decoded for one target.
#[derive(Debug, Clone, Default)]
pub struct TokenTable {
    /// What the table was built from, for the report.
    pub source: String,
    /// Shared, so that copies of a target's table (the comparison's, lint's) cost nothing: a
    /// tokenizer of millions of added tokens was copied whole for each (issue 44).
    pub added: Arc<BTreeMap<u64, AddedToken>>,
    /// Regular vocabulary entries for the ids that were asked about: id -> (stored form, text).
    pub regular: BTreeMap<u64, (String, String)>,
    /// Number of tokens the tokenizer knows (`len(tokenizer)` in Python).
    pub tokenizer_len: Option<u64>,
    /// Embedding rows of the target.
    pub vocab_size: Option<u64>,
    /// Whether regular tokens are byte-level encoded (GPT-2 style `Ġ`).
    pub byte_level: bool,
    /// Whether the base vocabulary was read (so an id missing from it is known to be missing).
    pub has_vocab: bool,
}

impl TokenTable {
    /// A table that can only tell ranges, from the target's `vocab_size`.
    pub fn empty(vocab_size: Option<u64>) -> TokenTable {
        TokenTable {
            source: "none".into(),
            vocab_size,
            ..TokenTable::default()
        }
    }

    /// Whether the table can name any token at all.
    pub fn can_decode(&self) -> bool {
        !self.added.is_empty() || self.has_vocab
    }

    pub fn decode(&self, id: u64) -> DecodedToken {
        let class = if let Some(tok) = self.added.get(&id) {
            let content = tok.content.clone();
            match tok.special {
                Some(true) => TokenClass::SpecialAdded { content },
                Some(false) => TokenClass::Added { content },
                None => TokenClass::AddedToken { content },
            }
        } else if let Some((raw, text)) = self.regular.get(&id) {
            TokenClass::Regular {
                raw: raw.clone(),
                text: text.clone(),
            }
        } else {
            match (self.tokenizer_len, self.vocab_size) {
                (_, Some(vocab)) if id >= vocab => TokenClass::OutOfRange { vocab_size: vocab },
                (Some(len), Some(vocab)) if id >= len => TokenClass::UnusedRow {
                    tokenizer_len: len,
                    vocab_size: vocab,
                },
                (Some(len), None) if id >= len => {
                    TokenClass::BeyondTokenizer { tokenizer_len: len }
                }
                _ => TokenClass::Unknown,
            }
        };
        DecodedToken { id, class }
    }

    /// Reads the tokenizer files in `dir` (`tokenizer_config.json` and/or `tokenizer.json`),
    /// keeping the vocabulary entries of `wanted` only.
    pub fn from_dir(
        dir: &Path,
        wanted: &BTreeSet<u64>,
        vocab_size: Option<u64>,
    ) -> Result<TokenTable> {
        Self::from_dir_reading(dir, vocab_size, |path| TokenizerFile::read(path, wanted))
            .map(|(table, _)| table)
    }

    /// [`TokenTable::from_dir`] with `tokenizer.json` read by `read` (called only when the file
    /// is there), also returning `tokenizer_config.json`'s bytes when they were read: for
    /// [`crate::vocab::target`], which reads `tokenizer.json` for more than the table and
    /// applies the config to that too. Everything else is `from_dir`'s own code, so the table
    /// differs from it only if `read`'s [`TokenizerFile`] does.
    pub(crate) fn from_dir_reading(
        dir: &Path,
        vocab_size: Option<u64>,
        read: impl FnOnce(&Path) -> Result<TokenizerFile>,
    ) -> Result<(TokenTable, Option<Vec<u8>>)> {
        let config_path = dir.join("tokenizer_config.json");
        let tokenizer_path = dir.join("tokenizer.json");
        let has_config = regular_file_present(&config_path)?;
        let has_tokenizer = regular_file_present(&tokenizer_path)?;
        if !has_config && !has_tokenizer {
            return Err(Error::new(format!(
                "no tokenizer.json or tokenizer_config.json in `{}`",
                dir.display()
            ))
            .with_hint("pass the target model's directory with --target, or its tokenizer files with --tokenizer"));
        }
        let mut table = TokenTable {
            vocab_size,
            ..TokenTable::default()
        };
        let mut sources = Vec::new();
        if has_tokenizer {
            let file = read(&tokenizer_path)?;
            table.merge_tokenizer_file(file);
            sources.push(tokenizer_path.display().to_string());
        }
        let mut config = None;
        if has_config {
            let bytes = read_capped(&config_path, MAX_TOKENIZER_CONFIG_BYTES)?;
            let added = parse_added_tokens_decoder(&bytes)
                .map_err(|e| Error::new(format!("`{}`: {e}", config_path.display())))?;
            for (id, tok) in added {
                Arc::make_mut(&mut table.added).entry(id).or_insert(tok);
            }
            sources.push(config_path.display().to_string());
            config = Some(bytes);
        }
        table.finish_len();
        table.source = sources.join(" + ");
        Ok((table, config))
    }

    fn merge_tokenizer_file(&mut self, file: TokenizerFile) {
        if self.added.is_empty() {
            self.added = Arc::new(file.added_tokens);
        } else {
            Arc::make_mut(&mut self.added).extend(file.added_tokens);
        }
        let byte_level = file.byte_level;
        self.regular = file
            .wanted_vocab
            .into_iter()
            .map(|(id, raw)| {
                let text = if byte_level {
                    byte_level_decode(&raw)
                } else {
                    raw.replace('\u{2581}', " ")
                };
                (id, (raw, text))
            })
            .collect();
        self.byte_level = byte_level;
        self.has_vocab = file.vocab_count > 0;
        if file.vocab_count > 0 {
            self.tokenizer_len = Some(file.vocab_max_id.map_or(0, |m| m + 1).max(file.vocab_count));
        }
    }

    /// `len(tokenizer)`: the vocabulary plus the added tokens above it.
    fn finish_len(&mut self) {
        if let Some(max_added) = self.added.keys().next_back() {
            if self.has_vocab {
                let len = self.tokenizer_len.unwrap_or(0).max(max_added + 1);
                self.tokenizer_len = Some(len);
            } else if self.tokenizer_len.is_none() {
                // Without tokenizer.json the base vocabulary is unknown, but added tokens sit
                // at its end in every tokenizer this tool knows of, so the highest added id
                // bounds the tokenizer.
                self.tokenizer_len = Some(max_added + 1);
            }
        }
    }

    /// Builds the table with the `tokenizers` crate's full `Tokenizer` (slow; for checking
    /// the fast path and for exotic tokenizer files).
    pub fn from_dir_full(
        dir: &Path,
        wanted: &BTreeSet<u64>,
        vocab_size: Option<u64>,
    ) -> Result<TokenTable> {
        let tokenizer_path = dir.join("tokenizer.json");
        // Read by us (a FIFO or device is refused, the size capped), parsed by `tokenizers`.
        let bytes = read_capped(&tokenizer_path, MAX_FULL_TOKENIZER_BYTES).map_err(|e| {
            e.with_hint(format!(
                "--full-tokenizer loads at most {} MiB (the full tokenizer costs about 16 times \
                 its file in memory); without --full-tokenizer the file is read up to {} MiB",
                MAX_FULL_TOKENIZER_BYTES >> 20,
                MAX_TOKENIZER_BYTES >> 20
            ))
        })?;
        let loaded = within(
            std::time::Duration::from_secs(FULL_TOKENIZER_SECONDS),
            move || tokenizers::Tokenizer::from_bytes(&bytes).map_err(|e| e.to_string()),
        );
        let cannot_load = |why: String| {
            Error::new(format!(
                "`{}`: the tokenizers crate cannot load it: {why}",
                tokenizer_path.display()
            ))
        };
        let tokenizer =
            match loaded {
                Ok(Ok(tokenizer)) => tokenizer,
                Ok(Err(why)) | Err(Unfinished::Failed(why)) => return Err(cannot_load(why)),
                Err(Unfinished::TimedOut) => return Err(Error::new(format!(
                    "`{}`: the full tokenizer was still building after {FULL_TOKENIZER_SECONDS} s \
                     (--full-tokenizer's time limit)",
                    tokenizer_path.display()
                ))
                .with_hint(
                    "drop --full-tokenizer: the default reader decodes the ids without building it",
                )),
            };
        let mut table = TokenTable {
            vocab_size,
            has_vocab: true,
            source: format!("{} (full tokenizer)", tokenizer_path.display()),
            ..TokenTable::default()
        };
        for (id, tok) in tokenizer.get_added_tokens_decoder() {
            Arc::make_mut(&mut table.added).insert(
                u64::from(id),
                AddedToken {
                    content: tok.content.clone(),
                    special: Some(tok.special),
                },
            );
        }
        let config_path = dir.join("tokenizer_config.json");
        if regular_file_present(&config_path)? {
            let bytes = read_capped(&config_path, MAX_TOKENIZER_CONFIG_BYTES)?;
            if let Ok(added) = parse_added_tokens_decoder(&bytes) {
                for (id, tok) in added {
                    Arc::make_mut(&mut table.added).entry(id).or_insert(tok);
                }
            }
        }
        for &id in wanted {
            if table.added.contains_key(&id) {
                continue;
            }
            let Ok(id32) = u32::try_from(id) else {
                continue;
            };
            if let Some(raw) = tokenizer.id_to_token(id32) {
                // Decode exactly as the tokenizer's own decoder does.
                let text = tokenizer
                    .decode(&[id32], false)
                    .unwrap_or_else(|_| raw.clone());
                table.regular.insert(id, (raw, text));
            }
        }
        table.tokenizer_len = Some(tokenizer.get_vocab_size(true) as u64);
        table.finish_len();
        Ok(table)
    }
}

/// Why [`within`] has no result.
#[derive(Debug)]
enum Unfinished {
    /// Still running when the time was up.
    TimedOut,
    /// It panicked, or no thread could be started (the reason).
    Failed(String),
}

/// Runs `work` on its own thread and waits at most `limit` for it. The thread is left to finish
/// on its own after a timeout (Rust cannot stop a thread); the command reports an error and
/// exits, which ends it. A panic in `work` (third-party code) becomes an error where panics
/// unwind (debug builds, tests); the release profile's `panic = "abort"` still ends the process
/// on one (RELIABILITY.md, "Panics": `--full-tokenizer` is opt-in third-party code).
fn within<T: Send + 'static>(
    limit: std::time::Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> std::result::Result<T, Unfinished> {
    use std::sync::mpsc::RecvTimeoutError;
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("full-tokenizer".into())
        .spawn(move || {
            // The receiver is gone only after a timeout; nobody wants the result then.
            let _ = send.send(work());
        })
        .map_err(|e| Unfinished::Failed(format!("no thread to build it on ({e})")))?;
    receive.recv_timeout(limit).map_err(|e| match e {
        RecvTimeoutError::Timeout => Unfinished::TimedOut,
        RecvTimeoutError::Disconnected => {
            Unfinished::Failed("the tokenizers crate panicked".into())
        }
    })
}

/// The parts of `tokenizer.json` this tool needs.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TokenizerFile {
    /// By id, built as the list is read (an id listed twice: the last entry), so the tokens
    /// are held once, not in a list and then again in the table.
    pub added_tokens: BTreeMap<u64, AddedToken>,
    pub vocab_count: u64,
    pub vocab_max_id: Option<u64>,
    pub wanted_vocab: BTreeMap<u64, String>,
    pub byte_level: bool,
}

/// How [`TokenizerFile::read`] read the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// The byte scanner, which stopped after `bytes_read` bytes of the file.
    Scan { bytes_read: u64 },
    /// The general serde pass over the whole file (a layout the scanner does not handle).
    Serde,
}

#[derive(Debug, PartialEq, Eq, Deserialize)]
pub struct RawAddedToken {
    pub id: u64,
    pub content: String,
    #[serde(default)]
    pub special: bool,
}

impl TokenizerFile {
    /// Reads what is needed from the `tokenizer.json` at `path`, keeping the vocabulary
    /// entries of `wanted` only.
    pub fn read(path: &Path, wanted: &BTreeSet<u64>) -> Result<TokenizerFile> {
        Self::read_with_pass(path, wanted).map(|(file, _)| file)
    }

    /// [`TokenizerFile::read`], also telling which pass read the file.
    pub fn read_with_pass(path: &Path, wanted: &BTreeSet<u64>) -> Result<(TokenizerFile, Pass)> {
        let (file, meta) = open_regular(path)?;
        if meta.len() > MAX_TOKENIZER_BYTES {
            // Let the common reader word the refusal.
            read_capped(path, MAX_TOKENIZER_BYTES)?;
        }
        let size_hint = usize::try_from(meta.len()).unwrap_or(0);
        Self::from_reader(file, size_hint, wanted).map_err(|e| match e {
            ReadError::Io(e) => io_error(path, &e),
            ReadError::Invalid(e) => Error::new(format!(
                "`{}`: cannot read the tokenizer: {e}",
                path.display()
            )),
        })
    }

    /// Scans `tokenizer.json` bytes from `reader`, falling back to [`TokenizerFile::parse`]
    /// over the whole input (read again from its start) when the layout is not the one the
    /// scanner handles.
    /// `size_hint` is the input's length when known (0 otherwise).
    pub fn from_reader<R: Read + Seek>(
        reader: R,
        size_hint: usize,
        wanted: &BTreeSet<u64>,
    ) -> std::result::Result<(TokenizerFile, Pass), ReadError> {
        let mut scanner = scan::Scanner::new(reader, size_hint);
        match scan::scan(&mut scanner, wanted) {
            Ok(file) => Ok((
                file,
                Pass::Scan {
                    bytes_read: scanner.bytes_read(),
                },
            )),
            Err(scan::Stop::Io(e)) => Err(ReadError::Io(e)),
            Err(scan::Stop::Fallback) => {
                let bytes = scanner.into_all().map_err(ReadError::Io)?;
                if bytes.len() as u64 > MAX_TOKENIZER_BYTES {
                    return Err(ReadError::Invalid(format!(
                        "over the {} MiB limit for a tokenizer",
                        MAX_TOKENIZER_BYTES / (1024 * 1024)
                    )));
                }
                let file = Self::parse(&bytes, wanted).map_err(ReadError::Invalid)?;
                Ok((file, Pass::Serde))
            }
        }
    }

    /// The general pass: one streaming serde pass over the whole file.
    pub fn parse(
        bytes: &[u8],
        wanted: &BTreeSet<u64>,
    ) -> std::result::Result<TokenizerFile, String> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let file = TopSeed { wanted }
            .deserialize(&mut de)
            .map_err(|e| e.to_string())?;
        de.end().map_err(|e| e.to_string())?;
        Ok(file)
    }
}

/// Why [`TokenizerFile::from_reader`] failed.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    /// Not a tokenizer file this tool can read (the serde error, worded).
    Invalid(String),
}

struct TopSeed<'w> {
    wanted: &'w BTreeSet<u64>,
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = TokenizerFile;
    fn deserialize<D: Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<TokenizerFile, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_> {
    type Value = TokenizerFile;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tokenizer.json object")
    }
    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<TokenizerFile, A::Error> {
        let mut file = TokenizerFile::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "added_tokens" => file.added_tokens = map.next_value_seed(AddedTokensSeed)?,
                "model" => map.next_value_seed(ModelSeed {
                    file: &mut file,
                    wanted: self.wanted,
                })?,
                "decoder" | "pre_tokenizer" => {
                    if map.next_value_seed(BYTE_LEVEL)? {
                        file.byte_level = true;
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(file)
    }
}

/// `added_tokens` (a list, or `null`) read into a table by id, one token at a time.
struct AddedTokensSeed;

impl<'de> DeserializeSeed<'de> for AddedTokensSeed {
    type Value = BTreeMap<u64, AddedToken>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for AddedTokensSeed {
    type Value = BTreeMap<u64, AddedToken>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of added tokens")
    }
    fn visit_none<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(BTreeMap::new())
    }
    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(BTreeMap::new())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut added = BTreeMap::new();
        while let Some(token) = seq.next_element::<RawAddedToken>()? {
            token.add_to(&mut added);
        }
        Ok(added)
    }
}

impl RawAddedToken {
    /// Into the table by id (a later entry for the same id replaces it, as the tokenizer's
    /// own list order does).
    pub(crate) fn add_to(self, added: &mut BTreeMap<u64, AddedToken>) {
        added.insert(
            self.id,
            AddedToken {
                content: self.content,
                special: Some(self.special),
            },
        );
    }
}

/// Whether a JSON value mentions a step of type `.0` anywhere: an object whose `type` is that
/// name (`ByteLevel` in a `decoder` or `pre_tokenizer`, `TemplateProcessing` in a
/// `post_processor`), read in one streaming pass that builds nothing: a 230 MiB decoder list
/// built a `serde_json::Value` tree of 5.4 GB (issue 44). A key that appears twice in one
/// object counts with each of its values (`serde_json::Value` kept the last; `tokenizers`
/// refuses such a file), except `type`, whose last value is the object's.
#[derive(Clone, Copy)]
pub struct TypeMention(pub &'static str);

/// What one value says: whether it is the wanted name as a string, and whether it mentions a
/// step of that type inside.
#[derive(Default)]
struct Mention {
    is_name: bool,
    inside: bool,
}

impl<'de> DeserializeSeed<'de> for TypeMention {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<bool, D::Error> {
        d.deserialize_any(MentionVisitor(self.0)).map(|m| m.inside)
    }
}

struct MentionVisitor(&'static str);

impl<'de> DeserializeSeed<'de> for MentionVisitor {
    type Value = Mention;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Mention, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MentionVisitor {
    type Value = Mention;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E>(self, s: &str) -> std::result::Result<Mention, E> {
        Ok(Mention {
            is_name: s == self.0,
            inside: false,
        })
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Mention, E> {
        Ok(Mention::default())
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Mention, E> {
        Ok(Mention::default())
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Mention, E> {
        Ok(Mention::default())
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Mention, E> {
        Ok(Mention::default())
    }
    fn visit_unit<E>(self) -> std::result::Result<Mention, E> {
        Ok(Mention::default())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Mention, A::Error> {
        let mut inside = false;
        while let Some(m) = seq.next_element_seed(MentionVisitor(self.0))? {
            inside |= m.inside;
        }
        Ok(Mention {
            is_name: false,
            inside,
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Mention, A::Error> {
        let (mut typed, mut inside) = (false, false);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let m = map.next_value_seed(MentionVisitor(self.0))?;
            if key == "type" {
                typed = m.is_name;
            }
            inside |= m.inside;
        }
        Ok(Mention {
            is_name: false,
            inside: typed || inside,
        })
    }
}

/// A `decoder` or `pre_tokenizer` with a byte-level step: regular tokens are GPT-2 encoded.
pub(crate) const BYTE_LEVEL: TypeMention = TypeMention("ByteLevel");

struct ModelSeed<'f, 'w> {
    file: &'f mut TokenizerFile,
    wanted: &'w BTreeSet<u64>,
}

impl<'de> DeserializeSeed<'de> for ModelSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ModelSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tokenizer model object")
    }
    fn visit_unit<E>(self) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "vocab" {
                map.next_value_seed(VocabSeed {
                    file: &mut *self.file,
                    wanted: self.wanted,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// `model.vocab`: a map `token -> id` (BPE, WordPiece) or a list of `[token, score]` (Unigram).
struct VocabSeed<'f, 'w> {
    file: &'f mut TokenizerFile,
    wanted: &'w BTreeSet<u64>,
}

impl VocabSeed<'_, '_> {
    fn record(&mut self, token: &str, id: u64) {
        self.file.vocab_count += 1;
        self.file.vocab_max_id = Some(self.file.vocab_max_id.map_or(id, |m| m.max(id)));
        if self.wanted.contains(&id) {
            self.file.wanted_vocab.insert(id, token.to_string());
        }
    }
}

impl<'de> DeserializeSeed<'de> for VocabSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for VocabSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a vocabulary map or list")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(token) = map.next_key::<Cow<'de, str>>()? {
            let id: u64 = map.next_value()?;
            self.record(&token, id);
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> std::result::Result<(), A::Error> {
        let mut id = 0u64;
        while let Some((token, _score)) = seq.next_element::<(Cow<'de, str>, IgnoredAny)>()? {
            self.record(&token, id);
            id += 1;
        }
        Ok(())
    }
}

/// `tokenizer_config.json`'s `added_tokens_decoder`: `{"151643": {"content": ..., "special": ...}}`.
pub fn parse_added_tokens_decoder(
    bytes: &[u8],
) -> std::result::Result<BTreeMap<u64, AddedToken>, String> {
    #[derive(Deserialize)]
    struct Entry {
        content: String,
        #[serde(default)]
        special: Option<bool>,
    }
    #[derive(Deserialize)]
    struct ConfigFile {
        #[serde(default)]
        added_tokens_decoder: Option<BTreeMap<String, Entry>>,
    }
    let file: ConfigFile =
        serde_json::from_slice(bytes).map_err(|e| format!("invalid JSON: {e}"))?;
    let mut out = BTreeMap::new();
    for (id, entry) in file.added_tokens_decoder.unwrap_or_default() {
        let id: u64 = id
            .parse()
            .map_err(|_| format!("added_tokens_decoder: key {id:?} is not a token id"))?;
        out.insert(
            id,
            AddedToken {
                content: entry.content,
                special: entry.special,
            },
        );
    }
    Ok(out)
}

/// Reverses GPT-2's byte-to-unicode mapping: `Ġthe` -> ` the`, exactly as the `tokenizers`
/// ByteLevel decoder does: invalid UTF-8 decodes lossily, and a token holding a character
/// outside the mapping is kept as it is.
pub fn byte_level_decode(raw: &str) -> String {
    let bytes: Option<Vec<u8>> = raw.chars().map(unicode_to_byte).collect();
    match bytes {
        Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        None => raw.to_string(),
    }
}

fn unicode_to_byte(c: char) -> Option<u8> {
    let cp = c as u32;
    let printable = |b: u32| {
        (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b)
    };
    if cp < 256 && printable(cp) {
        return Some(cp as u8);
    }
    if (256..256 + 68).contains(&cp) {
        // The 68 non-printable bytes are mapped, in order, to U+0100 onwards.
        let n = cp - 256;
        let mut seen = 0;
        for b in 0u32..256 {
            if !printable(b) {
                if seen == n {
                    return Some(b as u8);
                }
                seen += 1;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--full-tokenizer`'s time cap: work past the limit is abandoned with `TimedOut`, a panic
    /// in the work is an error instead of a crash, and quick work returns its result.
    #[test]
    fn full_tokenizer_work_is_bounded_in_time() {
        use std::time::{Duration, Instant};
        let start = Instant::now();
        let slow = within(Duration::from_millis(50), || {
            std::thread::sleep(Duration::from_secs(5));
            1
        });
        assert!(matches!(slow, Err(Unfinished::TimedOut)), "{slow:?}");
        assert!(start.elapsed() < Duration::from_secs(4));
        assert_eq!(within(Duration::from_secs(5), || 7).unwrap(), 7);
        let panicked = within(Duration::from_secs(5), || -> u8 { panic!("hostile") });
        assert!(
            matches!(panicked, Err(Unfinished::Failed(_))),
            "{panicked:?}"
        );
    }

    /// `--full-tokenizer`'s byte cap is its own, below the default reader's: a file over it is
    /// refused before it is read (a sparse file: no 64 MiB written), naming the flag.
    #[test]
    fn full_tokenizer_has_its_own_byte_cap() {
        let dir = std::env::temp_dir().join(format!("dflash-full-cap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = std::fs::File::create(dir.join("tokenizer.json")).unwrap();
        f.set_len(MAX_FULL_TOKENIZER_BYTES + 1).unwrap();
        let err = TokenTable::from_dir_full(&dir, &BTreeSet::new(), None).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            err.message.contains("over the 64 MiB limit"),
            "{}",
            err.message
        );
        let hint = err.hint.unwrap_or_default();
        assert!(
            hint.contains("--full-tokenizer loads at most 64 MiB"),
            "{hint}"
        );
        const { assert!(MAX_FULL_TOKENIZER_BYTES < MAX_TOKENIZER_BYTES) };
    }

    #[test]
    fn byte_level_reverses_gpt2_mapping() {
        assert_eq!(byte_level_decode("Ġthe"), " the");
        assert_eq!(byte_level_decode("Ċ"), "\n");
        assert_eq!(byte_level_decode("Ã©"), "é");
        // A lone lead byte decodes lossily; a character outside the mapping keeps the token.
        assert_eq!(byte_level_decode("Ã"), "\u{fffd}");
        assert_eq!(byte_level_decode("Ġ€"), "Ġ€");
    }

    /// The streaming check agrees with the `Value` walk it replaced (issue 44), on values
    /// without duplicated keys; it builds nothing.
    #[test]
    fn type_mentions_stream_as_the_value_walk_read() {
        fn by_value(v: &serde_json::Value) -> bool {
            match v {
                serde_json::Value::Object(m) => {
                    m.get("type").and_then(|t| t.as_str()) == Some("ByteLevel")
                        || m.values().any(by_value)
                }
                serde_json::Value::Array(a) => a.iter().any(by_value),
                _ => false,
            }
        }
        for text in [
            r#"null"#,
            r#""ByteLevel""#,
            r#"{"type":"ByteLevel"}"#,
            r#"{"type":"Sequence","pretokenizers":[{"type":"Split"},{"type":"ByteLevel","add_prefix_space":false}]}"#,
            r#"{"type":{"type":"ByteLevel"}}"#,
            r#"{"type":["ByteLevel"]}"#,
            r#"[[[{"x":{"type":"ByteLevel"}}]]]"#,
            r#"{"type":"Metaspace","replacement":"ByteLevel"}"#,
            r#"[1, 2.5, true, "x", {}]"#,
        ] {
            let v: serde_json::Value = serde_json::from_str(text).unwrap();
            let mut de = serde_json::Deserializer::from_str(text);
            assert_eq!(
                BYTE_LEVEL.deserialize(&mut de).unwrap(),
                by_value(&v),
                "{text}"
            );
        }
    }

    #[test]
    fn streaming_pass_keeps_added_and_wanted() {
        let json = br#"{"version":"1.0","added_tokens":[{"id":5,"content":"<|end|>","special":true},{"id":6,"content":"<think>","special":false}],
            "decoder":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0,"\u0120the":1,"c":2,"d":3,"e":4},"merges":[]}}"#;
        let wanted: BTreeSet<u64> = [1, 5].into();
        let file = TokenizerFile::parse(json, &wanted).unwrap();
        assert_eq!(file.vocab_count, 5);
        assert_eq!(file.added_tokens.len(), 2);
        assert_eq!(file.wanted_vocab.get(&1).map(String::as_str), Some("Ġthe"));
        assert!(file.byte_level);
    }

    #[test]
    fn classes_cover_every_range() {
        let mut t = TokenTable::empty(Some(10));
        Arc::make_mut(&mut t.added).insert(
            5,
            AddedToken {
                content: "<|end|>".into(),
                special: Some(true),
            },
        );
        t.regular.insert(1, ("Ġthe".into(), " the".into()));
        t.has_vocab = true;
        t.tokenizer_len = Some(6);
        assert_eq!(t.decode(5).to_string(), "5 <|end|> (special token)");
        assert_eq!(t.decode(1).to_string(), "1 \" the\" (vocab token \"Ġthe\")");
        assert!(matches!(t.decode(7).class, TokenClass::UnusedRow { .. }));
        assert!(t.decode(10).is_out_of_range());
    }
}
