//! The vocabulary a GGUF file carries (`tokenizer.ggml.*`), borrowed from its header: what
//! llama.cpp's vocabulary loader (`llama_vocab::impl::load` in `src/llama-vocab.cpp`) reads
//! and what its draft-compatibility check compares (type, bos/eos ids, add-bos/add-eos, token
//! text). A view only: comparing two vocabularies is the vocabulary module's job.

use super::{GgufHeader, Strings, Value};

/// The `tokenizer.ggml.*` keys of one header; each `None` when the key is absent or of
/// another type.
#[derive(Debug, Clone, Copy)]
pub struct Tokenizer<'a> {
    /// `tokenizer.ggml.model`: `llama` (SentencePiece), `gpt2` (byte-level BPE), `bert`, `t5`,
    /// `rwkv`, `plamo2`, `no_vocab`, `none`.
    pub model: Option<&'a str>,
    /// `tokenizer.ggml.pre`: the pre-tokenizer (`qwen2`, `llama-bpe`, `default`, ...).
    pub pre: Option<&'a str>,
    /// `tokenizer.ggml.tokens`: each id's text.
    pub tokens: Option<&'a Strings>,
    header: &'a GgufHeader,
}

impl<'a> Tokenizer<'a> {
    pub(super) fn of(header: &'a GgufHeader) -> Self {
        Tokenizer {
            model: header.str("tokenizer.ggml.model"),
            pre: header.str("tokenizer.ggml.pre"),
            tokens: header
                .get("tokenizer.ggml.tokens")
                .and_then(Value::as_array)
                .and_then(|a| a.strings()),
            header,
        }
    }

    /// `tokenizer.ggml.token_type`: each id's type (1 normal, 2 unknown, 3 control, 4 user
    /// defined, 5 unused, 6 byte).
    pub fn token_types(&self) -> Option<Vec<i64>> {
        self.header
            .get("tokenizer.ggml.token_type")
            .and_then(Value::as_array)
            .and_then(|a| a.integers())
    }

    /// A special token id, by its key's middle part: `id("bos")` reads
    /// `tokenizer.ggml.bos_token_id`; also `eos`, `unknown`, `padding`, `seperator` (sic, as
    /// llama.cpp spells it), `mask`, `eot`.
    pub fn id(&self, which: &str) -> Option<u64> {
        self.header.u64(&format!("tokenizer.ggml.{which}_token_id"))
    }

    pub fn bos(&self) -> Option<u64> {
        self.id("bos")
    }

    pub fn eos(&self) -> Option<u64> {
        self.id("eos")
    }

    /// `tokenizer.ggml.add_bos_token` / `add_eos_token`; absent means the loader's default for
    /// the model type.
    pub fn add_bos(&self) -> Option<bool> {
        self.header
            .get("tokenizer.ggml.add_bos_token")
            .and_then(Value::as_bool)
    }

    pub fn add_eos(&self) -> Option<bool> {
        self.header
            .get("tokenizer.ggml.add_eos_token")
            .and_then(Value::as_bool)
    }

    /// The vocabulary size: the token list's length.
    pub fn vocab_size(&self) -> Option<usize> {
        self.tokens.map(Strings::len)
    }
}
