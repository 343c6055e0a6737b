//! The fast token path (`TokenTable::from_dir`, the tokenizer.json byte scanner) decodes every
//! id exactly as the `tokenizers` crate does, on the real Qwen3 tokenizer (11 MB, 151643 BPE
//! entries, 26 added tokens, `vocab_size` 151936).
//!
//! The tokenizer is not in the repo. Fetch it and point the test at it:
//!
//! ```sh
//! export DFLASH_QWEN3_TOKENIZER_DIR=$(bench/fetch-qwen3-tokenizer.sh)
//! cargo test --release --test tokens_real
//! ```
//!
//! Without the variable every test here says "skipped" on stderr and passes.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

use dflash_check::tokens::{Pass, TokenClass, TokenTable, TokenizerFile};
use sha2::{Digest, Sha256};

const ENV: &str = "DFLASH_QWEN3_TOKENIZER_DIR";
const SHA256: &str = "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4";
const VOCAB_SIZE: u64 = 151936;
const BASE_VOCAB: u64 = 151643;
const TOKENIZER_LEN: u64 = 151669;

/// The directory from the environment, checked to hold the real file; `None` (and a line on
/// stderr, past the test harness's capture) when the variable is not set.
fn qwen3_dir(test: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os(ENV).filter(|v| !v.is_empty()) else {
        let _ = writeln!(
            std::io::stderr(),
            "{test}: skipped: set {ENV} to the directory printed by bench/fetch-qwen3-tokenizer.sh"
        );
        return None;
    };
    let dir = PathBuf::from(dir);
    let bytes = std::fs::read(dir.join("tokenizer.json"))
        .unwrap_or_else(|e| panic!("{ENV}={}: cannot read tokenizer.json: {e}", dir.display()));
    let sha: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        sha,
        SHA256,
        "{ENV}={}: tokenizer.json is not the Qwen3 tokenizer this test knows",
        dir.display()
    );
    Some(dir)
}

/// Every id class: all added tokens, every base-vocabulary id, the unused embedding rows and
/// ids past the embedding (including ones that do not fit in u32).
fn all_ids() -> BTreeSet<u64> {
    let mut ids: BTreeSet<u64> = (0..VOCAB_SIZE).collect();
    ids.extend([
        VOCAB_SIZE,
        200_000,
        u64::from(u32::MAX),
        u64::from(u32::MAX) + 1,
        u64::MAX,
    ]);
    ids
}

#[test]
fn fast_path_equals_full_tokenizer_for_every_id() {
    let Some(dir) = qwen3_dir("fast_path_equals_full_tokenizer_for_every_id") else {
        return;
    };
    let ids = all_ids();
    let fast = TokenTable::from_dir(&dir, &ids, Some(VOCAB_SIZE)).unwrap();
    let full = TokenTable::from_dir_full(&dir, &ids, Some(VOCAB_SIZE)).unwrap();
    assert_eq!(fast.tokenizer_len, Some(TOKENIZER_LEN));
    assert_eq!(fast.tokenizer_len, full.tokenizer_len);
    assert_eq!(fast.added, full.added);
    assert!(fast.byte_level);
    let mut mismatches = Vec::new();
    for &id in &ids {
        let (a, b) = (fast.decode(id), full.decode(id));
        if a != b {
            mismatches.push(format!("{id}: fast {a} / full {b}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} ids differ, first: {:#?}",
        mismatches.len(),
        &mismatches[..mismatches.len().min(20)]
    );
}

#[test]
fn fast_path_equals_tokenizers_crate_directly() {
    let Some(dir) = qwen3_dir("fast_path_equals_tokenizers_crate_directly") else {
        return;
    };
    let tokenizer = tokenizers::Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
    let ids = all_ids();
    let fast = TokenTable::from_dir(&dir, &ids, Some(VOCAB_SIZE)).unwrap();
    assert_eq!(
        fast.tokenizer_len,
        Some(tokenizer.get_vocab_size(true) as u64)
    );
    let added = tokenizer.get_added_tokens_decoder();
    assert_eq!(added.len(), (TOKENIZER_LEN - BASE_VOCAB) as usize);
    let (mut bytes, mut multibyte, mut lossy, mut unused, mut out_of_range) = (0, 0, 0, 0, 0);
    for &id in &ids {
        let decoded = fast.decode(id);
        let id32 = u32::try_from(id).ok();
        match &decoded.class {
            TokenClass::SpecialAdded { content } | TokenClass::Added { content } => {
                let tok = &added[&id32.unwrap()];
                assert_eq!(content, &tok.content, "{id}");
                assert_eq!(
                    matches!(decoded.class, TokenClass::SpecialAdded { .. }),
                    tok.special,
                    "{id}"
                );
                assert!((BASE_VOCAB..TOKENIZER_LEN).contains(&id), "{id}");
            }
            TokenClass::Regular { raw, text } => {
                let id32 = id32.unwrap();
                assert_eq!(
                    tokenizer.id_to_token(id32).as_deref(),
                    Some(raw.as_str()),
                    "{id}"
                );
                assert_eq!(&tokenizer.decode(&[id32], false).unwrap(), text, "{id}");
                assert!(!added.contains_key(&id32), "{id}");
                if raw.chars().count() == 1 && id < 256 {
                    bytes += 1;
                }
                if text.contains('\u{fffd}') {
                    lossy += 1;
                } else if text.chars().any(|c| c.len_utf8() > 1) {
                    multibyte += 1;
                }
            }
            TokenClass::UnusedRow {
                tokenizer_len,
                vocab_size,
            } => {
                assert_eq!((*tokenizer_len, *vocab_size), (TOKENIZER_LEN, VOCAB_SIZE));
                assert!((TOKENIZER_LEN..VOCAB_SIZE).contains(&id), "{id}");
                let id32 = id32.unwrap();
                assert_eq!(tokenizer.id_to_token(id32), None, "{id}");
                assert_eq!(tokenizer.decode(&[id32], false).unwrap(), "", "{id}");
                unused += 1;
            }
            TokenClass::OutOfRange { vocab_size } => {
                assert_eq!(*vocab_size, VOCAB_SIZE);
                assert!(id >= VOCAB_SIZE, "{id}");
                if let Some(id32) = id32 {
                    assert_eq!(tokenizer.id_to_token(id32), None, "{id}");
                    assert_eq!(tokenizer.decode(&[id32], false).unwrap(), "", "{id}");
                }
                out_of_range += 1;
            }
            other => panic!("{id}: unexpected class {other:?}"),
        }
    }
    // The ids covered every kind of token.
    assert_eq!(bytes, 256, "single-byte tokens");
    assert!(multibyte > 10_000, "multi-byte UTF-8 tokens: {multibyte}");
    assert!(lossy > 1_000, "tokens that are partial UTF-8: {lossy}");
    assert_eq!(unused, VOCAB_SIZE - TOKENIZER_LEN);
    assert_eq!(out_of_range, 5);
}

#[test]
fn scanner_reads_the_real_file_and_stops_before_the_merges() {
    let Some(dir) = qwen3_dir("scanner_reads_the_real_file_and_stops_before_the_merges") else {
        return;
    };
    let path = dir.join("tokenizer.json");
    let len = std::fs::metadata(&path).unwrap().len();
    // The ids of a typical drafter config, and a spread of thousands of regular ids.
    let few: BTreeSet<u64> = [13, 9707, 151643, 151645, 151662, 151669, 151700].into();
    let spread: BTreeSet<u64> = (0..BASE_VOCAB).step_by(37).chain(few.clone()).collect();
    let bytes = std::fs::read(&path).unwrap();
    for wanted in [&few, &spread] {
        let (file, pass) = TokenizerFile::read_with_pass(&path, wanted).unwrap();
        let Pass::Scan { bytes_read } = pass else {
            panic!("the scanner fell back to the serde pass on the real file");
        };
        // The vocabulary ends about 4 MB into the 11 MB file; the merges are never read.
        assert!(bytes_read < len / 2, "read {bytes_read} of {len} bytes");
        assert_eq!(file.vocab_count, BASE_VOCAB);
        assert_eq!(file.vocab_max_id, Some(BASE_VOCAB - 1));
        assert_eq!(file, TokenizerFile::parse(&bytes, wanted).unwrap());
    }
}
