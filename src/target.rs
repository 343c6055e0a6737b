//! What is known about the target model while judging a drafter: its config facts (layer
//! count, sizes, vocabulary) and the token table that decodes ids. Plain data, no I/O: the
//! `analysis` layer loads it (from a directory, the Hub or a built-in table) and the pure rules
//! read it.

use crate::config::TargetFacts;
use crate::tokens::TokenTable;

/// The target facts and token table used to judge ids.
#[derive(Debug, Clone)]
pub struct TargetContext {
    pub facts: Option<TargetFacts>,
    pub tokens: TokenTable,
    /// Why no tokens could be decoded, with the flag that would help.
    pub hint: Option<String>,
}
