//! A classic draft model's vocabulary against its target's, id by id.
//!
//! A draft model proposes token ids that the target verifies as its own ids, so the two must
//! mean the same text by every id: engines check part of that (vLLM the config's `vocab_size`,
//! SGLang `get_vocab()` equality, llama.cpp the vocab type, bos/eos and the text of every id)
//! and none checks all of it before the weights are loaded. [`Vocabulary`] is the small neutral
//! form both sides are read into — from Hugging Face tokenizer files ([`hf`]) or, through one
//! adapter function, a GGUF file's `tokenizer.ggml.*` metadata — and [`compare`] returns every
//! way two of them differ, with the first differing ids, never stopping at the first.

pub mod compare;
pub mod gguf;
pub mod hf;
pub mod target;

pub use compare::{compare, Comparison, Difference, TextDiff};

/// A tokenizer reduced to what decides whether two of them are interchangeable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vocabulary {
    /// What it was read from, for messages.
    pub source: String,
    /// The tokenizer model: `BPE`, `Unigram`, `WordPiece` (GGUF: `gpt2`, `llama`, …).
    pub model: Option<String>,
    /// The pre-tokenizer, in a canonical text form (HF: its JSON; GGUF: `tokenizer.ggml.pre`).
    pub pre_tokenizer: Option<String>,
    /// Every token's stored text, by id (added tokens included, as `get_vocab()` lists them).
    pub tokens: TokenTexts,
    /// The added tokens by id: their text and whether they are special.
    pub added: std::collections::BTreeMap<u32, (String, bool)>,
    /// How many tokens the tokenizer model itself holds, added tokens excluded: what Hugging
    /// Face's `tokenizer.vocab_size` reports (`get_vocab_size(with_added_tokens=False)`, the
    /// model's `vocab.len()` in tokenizers 0.22.1), and what mlx-lm compares. `None`: not read
    /// (a GGUF vocabulary).
    pub base_size: Option<u32>,
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    /// Whether the tokenizer adds bos / eos itself (`None`: the files do not say).
    pub add_bos: Option<bool>,
    pub add_eos: Option<bool>,
    /// GPT-2 byte-level encoding of stored texts (`Ġthe` reads ` the`).
    pub byte_level: bool,
    /// A GGUF file's own `tokenizer.ggml.model` (`llama`, `gpt2`, …). Two GGUF vocabularies
    /// compare by it, as llama.cpp compares vocab types: `llama` (SentencePiece) and `gpt2`
    /// (byte-level BPE) are both `BPE` in [`Vocabulary::model`]'s HF terms, yet never share ids.
    pub ggml_model: Option<String>,
}

/// Token texts by id in one buffer: 150,000 tokens are one allocation, not 150,000.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenTexts {
    text: String,
    /// `(start, len)` into `text`; `len == u32::MAX` marks an id no token has.
    spans: Vec<(u32, u32)>,
}

const HOLE: (u32, u32) = (0, u32::MAX);

impl TokenTexts {
    /// Sets the text of `id` (a later entry for the same id wins, as in a JSON map).
    pub fn set(&mut self, id: u32, token: &str) {
        let i = id as usize;
        if self.spans.len() <= i {
            self.spans.resize(i + 1, HOLE);
        }
        let start = self.text.len() as u32;
        self.text.push_str(token);
        self.spans[i] = (start, token.len() as u32);
    }

    /// The text of `id`, if a token has it.
    pub fn get(&self, id: u32) -> Option<&str> {
        let &(start, len) = self.spans.get(id as usize)?;
        if len == u32::MAX {
            return None;
        }
        Some(&self.text[start as usize..(start + len) as usize])
    }

    /// One past the highest id (`len(tokenizer)` in Python when ids have no holes).
    pub fn len(&self) -> u32 {
        self.spans.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// How many ids have a token (ids below [`TokenTexts::len`] may be holes).
    pub fn count(&self) -> u32 {
        self.spans.iter().filter(|s| s.1 != u32::MAX).count() as u32
    }

    /// Reserves room for `n` ids and `bytes` of text.
    pub fn reserve(&mut self, n: usize, bytes: usize) {
        self.spans.reserve(n);
        self.text.reserve(bytes);
    }
}

/// Token texts as raw bytes while a vocabulary is read, checked as UTF-8 once at the end: one
/// pass over the whole text instead of a call per token (150,000 calls to `from_utf8` were a
/// sixth of the reader's time).
#[derive(Debug, Default)]
pub(crate) struct RawTokenTexts {
    text: Vec<u8>,
    spans: Vec<(u32, u32)>,
}

impl RawTokenTexts {
    /// Sets the bytes of `id` (a later entry for the same id wins, as in a JSON map).
    pub(crate) fn set(&mut self, id: u32, token: &[u8]) {
        let i = id as usize;
        if self.spans.len() <= i {
            self.spans.resize(i + 1, HOLE);
        }
        let start = self.text.len() as u32;
        self.text.extend_from_slice(token);
        self.spans[i] = (start, token.len() as u32);
    }

    pub(crate) fn reserve(&mut self, n: usize, bytes: usize) {
        self.spans.reserve(n);
        self.text.reserve(bytes);
    }

    /// The texts, or `Err(id)` of a token whose bytes are not UTF-8. The whole buffer being
    /// UTF-8 is not enough (two tokens can split one character between them), so every span
    /// must also start and end on a character boundary.
    pub(crate) fn into_texts(self) -> Result<TokenTexts, u32> {
        let RawTokenTexts { text, spans } = self;
        let text = match simdutf8::compat::from_utf8(&text) {
            // SAFETY: simdutf8 has just checked these very bytes as UTF-8 (its answer is std's,
            // checked by its own test suite against std); std's `from_utf8` would check them a
            // second time, character by character, which is the cost this type exists to avoid.
            Ok(_) => unsafe { String::from_utf8_unchecked(text) },
            Err(e) => {
                let at = e.valid_up_to() as u64;
                let id = spans.iter().position(|&(start, len)| {
                    len != u32::MAX
                        && u64::from(start) <= at
                        && at < u64::from(start) + u64::from(len)
                });
                return Err(id.unwrap_or(0) as u32);
            }
        };
        let split = spans.iter().position(|&(start, len)| {
            len != u32::MAX
                && !(text.is_char_boundary(start as usize)
                    && text.is_char_boundary((start + len) as usize))
        });
        match split {
            Some(id) => Err(id as u32),
            None => Ok(TokenTexts { text, spans }),
        }
    }
}

impl TokenTexts {
    /// Adds `raw`'s texts (an empty table takes them whole, without a copy).
    pub(crate) fn extend(&mut self, raw: TokenTexts) {
        if self.is_empty() {
            *self = raw;
            return;
        }
        for id in 0..raw.len() {
            if let Some(text) = raw.get(id) {
                self.set(id, text);
            }
        }
    }
}

impl Vocabulary {
    /// The id of a token by its text (added tokens first, then the vocabulary).
    pub fn id_of(&self, text: &str) -> Option<u32> {
        if let Some((&id, _)) = self.added.iter().find(|(_, (t, _))| t == text) {
            return Some(id);
        }
        (0..self.tokens.len()).find(|&id| self.tokens.get(id) == Some(text))
    }

    /// The text of `id` as it reads (byte-level decoded), for messages.
    pub fn readable(&self, id: u32) -> Option<String> {
        let raw = self.tokens.get(id)?;
        Some(if self.byte_level && !self.added.contains_key(&id) {
            crate::tokens::byte_level_decode(raw)
        } else {
            raw.replace('\u{2581}', " ")
        })
    }
}
