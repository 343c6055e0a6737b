//! The target's token table and its whole vocabulary from one read of its `tokenizer.json`.
//!
//! A classic draft model's check needs the target's tokenizer twice over: the token table
//! ([`TokenTable`]) that decodes the configs' ids for the other rules, and the [`Vocabulary`]
//! the draft's is compared with. Read apart, the 11 MB Qwen3 file was opened and walked twice
//! (issue 44). Here the vocabulary's walk ([`super::hf`]) also keeps what the table needs that
//! the vocabulary drops (the vocabulary's entry count, the wanted ids' texts before added
//! tokens replace them, the byte-level flag as the table's reader tells it), and the table is
//! assembled by [`TokenTable::from_dir`]'s own code from that. The two readers are different
//! parsers that read a file laid out as `tokenizers` writes it alike but tolerate different
//! faults; where they could part (a key written twice, a bracket closing the other kind, a list
//! vocabulary read by the table's whole-file serde pass, …) the walk says so and the table is
//! read its own way, a second read kept for that file only. The equality of the two tables is
//! tested on real and generated tokenizers (`tests/vocab_once.rs`).

use std::collections::BTreeSet;
use std::path::Path;

use super::{hf, Vocabulary};
use crate::tokens::{AddedToken, TokenTable, TokenizerFile};
use crate::Result;

/// What [`read`] read.
#[derive(Debug)]
pub struct TargetTokens {
    /// Equal to [`TokenTable::from_dir`]'s table for the same directory and ids.
    pub table: TokenTable,
    /// The vocabulary [`hf::from_dir`] reads from the same directory; `None` when it could not
    /// be read (a caller that needs it reads it again and reports why, as before).
    pub vocabulary: Option<Vocabulary>,
    /// Whether `tokenizer.json` was read once for both (`false`: the table's reader read it a
    /// second time, the file being unusual or unreadable by the vocabulary's walk, or absent).
    pub one_read: bool,
}

/// The token table of `dir` for `wanted` (as [`TokenTable::from_dir`] builds it, errors
/// included) and its vocabulary (as [`hf::from_dir`] reads it), `tokenizer.json` read once
/// when the file is laid out as `tokenizers` writes it.
pub fn read(dir: &Path, wanted: &BTreeSet<u64>, vocab_size: Option<u64>) -> Result<TargetTokens> {
    let mut walked = None;
    let mut one_read = false;
    let (table, config) = TokenTable::from_dir_reading(dir, vocab_size, |path| {
        let Ok((vocab, notes)) = hf::read_tokenizer(path, hf::CHUNK, wanted) else {
            // The table's reader words its own refusal, or reads what the walk refused.
            return TokenizerFile::read(path, wanted);
        };
        let file = match notes.unusual {
            None => Some(table_file(&vocab, notes)),
            Some(_) => None,
        };
        walked = Some(vocab);
        match file {
            Some(file) => {
                one_read = true;
                Ok(file)
            }
            None => TokenizerFile::read(path, wanted),
        }
    })?;
    let config_path = dir.join("tokenizer_config.json");
    let vocabulary = walked.and_then(|mut vocab| match &config {
        // An error here is the comparison's to report: it reads the files again.
        Some(bytes) => hf::apply_config_file(&mut vocab, &config_path, bytes)
            .ok()
            .map(|()| vocab),
        None => Some(vocab),
    });
    Ok(TargetTokens {
        table,
        vocabulary,
        one_read,
    })
}

/// What [`TokenizerFile::read`] reads, from the vocabulary's walk (`tokenizer_config.json` not
/// yet applied to `vocab`: its added tokens are the table's to merge, with their own rules).
fn table_file(vocab: &Vocabulary, notes: hf::Notes) -> TokenizerFile {
    TokenizerFile {
        added_tokens: vocab
            .added
            .iter()
            .map(|(&id, (content, special))| {
                let token = AddedToken {
                    content: content.clone(),
                    special: Some(*special),
                };
                (u64::from(id), token)
            })
            .collect(),
        vocab_count: notes.entries,
        vocab_max_id: (notes.entries > 0).then(|| u64::from(notes.base_len).saturating_sub(1)),
        wanted_vocab: notes.wanted,
        byte_level: notes.byte_level,
    }
}
