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

    /// Reserves room for `n` ids and `bytes` of text.
    pub fn reserve(&mut self, n: usize, bytes: usize) {
        self.spans.reserve(n);
        self.text.reserve(bytes);
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
