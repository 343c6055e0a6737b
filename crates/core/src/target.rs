//! What is known about the target model while judging a drafter: its config facts (layer
//! count, sizes, vocabulary) and the token table that decodes ids. Plain data, no I/O: the
//! `analysis` layer loads it (from a directory, the Hub or a built-in table) and the pure rules
//! read it.

use crate::config::TargetFacts;
use serde::Serialize;

use crate::tokens::TokenTable;

/// The target facts and token table used to judge ids.
#[derive(Debug, Clone)]
pub struct TargetContext {
    pub facts: Option<std::sync::Arc<TargetFacts>>,
    /// Shared by the runs and reports that keep the context (a `check` run's pinned target is
    /// one table for all of its drafters).
    pub tokens: std::sync::Arc<TokenTable>,
    /// What the ids were decoded with.
    pub decoded_with: DecodedWith,
    /// Why no tokens could be decoded, with the flag that would help.
    pub hint: Option<String>,
    /// Inputs the user did not name that could not be had; the command went on without them.
    pub warnings: Vec<InputWarning>,
    /// A classic draft model's vocabulary compared with this target's (`--family draft`, or a
    /// launch line's draft model), when both tokenizers were read.
    pub vocab: Option<crate::vocab::Comparison>,
    /// The target's whole vocabulary, when it was read with the token table because a draft
    /// model's check will compare it: one read of its `tokenizer.json` for both (issue 44).
    pub vocabulary: Option<std::sync::Arc<crate::vocab::Vocabulary>>,
}

impl TargetContext {
    /// No target at all: ids are judged by nothing.
    pub fn none() -> TargetContext {
        TargetContext {
            facts: None,
            tokens: std::sync::Arc::new(TokenTable::empty(None)),
            decoded_with: DecodedWith::None,
            hint: None,
            warnings: Vec::new(),
            vocab: None,
            vocabulary: None,
        }
    }
}

/// What token ids were decoded with (`tokens.decoded_with` in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecodedWith {
    /// The target's tokenizer files (a directory, or fetched from the Hub).
    Tokenizer,
    /// A built-in added-token table of a known target, compiled into the binary.
    Builtin,
    /// Nothing: ids are shown undecoded.
    None,
}

impl DecodedWith {
    pub fn as_str(self) -> &'static str {
        match self {
            DecodedWith::Tokenizer => "tokenizer",
            DecodedWith::Builtin => "builtin",
            DecodedWith::None => "none",
        }
    }
}

/// An input the user did not name (a target found through a model card, a tokenizer found
/// through the target) that could not be had. It never stops the command: the answer is given
/// without it, and the warning says so and which flag supplies it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputWarning {
    /// What could not be had and how it was found: `target Qwen/Qwen3.6-27B (base_model in the
    /// model card of z-lab/Qwen3.6-27B-DFlash)`.
    pub input: String,
    /// Why it could not be had (the Hub's answer, worded).
    pub reason: String,
    /// What was done instead.
    pub instead: String,
    /// The flag that supplies the input: `--target`, `--tokenizer`.
    pub flag: &'static str,
}

impl std::fmt::Display for InputWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} could not be had: {}; {} — pass {} to supply it",
            self.input, self.reason, self.instead, self.flag
        )
    }
}
