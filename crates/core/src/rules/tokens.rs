//! bos / eos / pad ids. Drafters borrow the target's tokenizer and embeddings and no engine
//! reads a drafter's bos/eos/pad ids (the target's tokenizer and generation config decide), so
//! nothing here is an error; wrong ids are how a guessed or copied config shows itself.

use super::{is_base_vocab, Applies, Ctx, LintCode, Need, Rule};
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{Node, Path, Value};

pub(super) const RULES: &[Rule] = &[
    TOKEN_ID_OUT_OF_RANGE,
    TOKEN_ID_NOT_SPECIAL,
    TOKEN_ID_TARGET_MISMATCH,
];

const KEYS: [&str; 3] = ["bos_token_id", "eos_token_id", "pad_token_id"];

/// The ids in a token field: an integer or a list of integers. Other values have none.
pub(crate) fn ids_of(node: &Node) -> Vec<u64> {
    match node.as_array() {
        Some(items) => items.iter().filter_map(Node::as_u64).collect(),
        None => node.as_u64().into_iter().collect(),
    }
}

/// The first integer past 2^64 in an id field (a number or a list), as written.
pub(crate) fn past_u64(node: &Node) -> Option<String> {
    let huge = |n: &Node| {
        n.as_number()
            .filter(|x| {
                // Beyond i128 the text is kept but no integer: all digits means huge.
                x.integer
                    .map_or(x.text.bytes().all(|b| b.is_ascii_digit()), |i| {
                        i > i128::from(u64::MAX)
                    })
            })
            .map(|x| x.text.to_string())
    };
    match node.as_array() {
        Some(items) => items.iter().find_map(huge),
        None => huge(node),
    }
}

/// `-1`: the old "no token" convention of `pad_token_id` (and sometimes bos/eos).
fn is_none_marker(n: &Node) -> bool {
    n.as_number()
        .is_some_and(|x| x.is_integer_literal() && x.integer == Some(-1))
}

fn is_id(n: &Node) -> bool {
    n.as_u64().is_some() && n.as_number().is_some_and(|x| x.is_integer_literal())
}

const TOKEN_ID_OUT_OF_RANGE: Rule = Rule {
    code: LintCode::TokenIdOutOfRange,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "bos/eos/pad id is not an embedding row of the target, or not an id at all",
        explanation: "bos_token_id, eos_token_id and pad_token_id name rows of the target's embeddings, which must \
exist (< vocab_size). No engine reads a drafter's own bos/eos/pad ids — the target's tokenizer and generation config \
decide — so a wrong one breaks nothing by itself, but it says the config was written for another model. `-1` is \
the old \"no token\" convention and is accepted; other negative numbers, strings and floats are reported here too. \
A warning.",
    },
    applies: Applies::All,
    needs: &[],
    check: token_id_out_of_range,
};

fn token_id_out_of_range(cx: &mut Ctx) {
    for key in KEYS {
        let Some(node) = cx.root.get(key) else {
            continue;
        };
        let path = Path::key(key);
        let ok_type = match &node.value {
            Value::Null => true,
            Value::Array(items) => items.iter().all(|n| is_id(n) || is_none_marker(n)),
            Value::Number(_) => is_id(node) || is_none_marker(node),
            _ => false,
        };
        if !ok_type {
            let message = if let Some(huge) = past_u64(node) {
                format!(
                    "`{key}` {huge} is out of range: past 2^64, no embedding matrix has that row"
                )
            } else {
                let what = match node.as_array() {
                    Some(items) => {
                        let bad: Vec<String> = items
                            .iter()
                            .enumerate()
                            .filter(|(_, n)| !(is_id(n) || is_none_marker(n)))
                            .map(|(i, n)| format!("[{i}] is {}", n.to_compact()))
                            .collect();
                        format!("a list whose element {}", bad.join(", "))
                    }
                    None => super::describe(node),
                };
                format!("`{key}` is {what}; it must be a non-negative integer id, a list of them, or null")
            };
            cx.emit(&path, message);
            continue;
        }
        let Some(vocab) = cx.target_vocab() else {
            if !ids_of(node).is_empty() {
                cx.skip();
            }
            continue;
        };
        for id in ids_of(node) {
            if id >= vocab {
                let tok = cx.decode(id);
                cx.emit(
                    &path,
                    format!("`{key}` {id} is out of range: the target has {vocab} embedding rows"),
                )
                .tokens = vec![tok.clone()];
            }
        }
    }
}

const TOKEN_ID_NOT_SPECIAL: Rule = Rule {
    code: LintCode::TokenIdNotSpecial,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "bos/eos id decodes to a regular vocabulary token",
        explanation: "bos and eos are special tokens of the target's tokenizer. An id that decodes to a regular \
vocabulary token is almost always an id of another tokenizer: a Qwen3 id (151643 <|endoftext|>) inside a \
Qwen3.5/3.6 drafter is a plain BPE token there, as in one SpecForge template; speculators#613 posted a Qwen3.6 \
drafter with Llama's bos 1 / eos 2. No engine reads them: info.",
    },
    applies: Applies::All,
    needs: &[Need::TargetVocab],
    check: token_id_not_special,
};

fn token_id_not_special(cx: &mut Ctx) {
    let vocab = cx.target_vocab().unwrap_or(u64::MAX);
    for key in ["bos_token_id", "eos_token_id"] {
        let Some(node) = cx.root.get(key) else {
            continue;
        };
        for id in ids_of(node).into_iter().filter(|&id| id < vocab) {
            let tok = cx.decode(id);
            if is_base_vocab(cx.tokens, &tok) {
                cx.emit(
                    &Path::key(key),
                    format!(
                        "`{key}` {tok} is a regular vocabulary token where a special token is expected: probably \
                         an id of another tokenizer"
                    ),
                )
                .tokens = vec![tok.clone()];
            }
        }
    }
}

const TOKEN_ID_TARGET_MISMATCH: Rule = Rule {
    code: LintCode::TokenIdTargetMismatch,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "bos/eos id differs from the target's",
        explanation: "The drafter's eos/bos ids are not used by engines (the target's tokenizer decides), but they \
normally equal the target's; a difference hints at a config written for another model.",
    },
    applies: Applies::All,
    needs: &[Need::TargetVocab],
    check: token_id_target_mismatch,
};

fn token_id_target_mismatch(cx: &mut Ctx) {
    let Some(facts) = cx.facts else { return };
    let vocab = cx.target_vocab().unwrap_or(u64::MAX);
    for key in ["bos_token_id", "eos_token_id"] {
        let Some(node) = cx.root.get(key) else {
            continue;
        };
        for id in ids_of(node).into_iter().filter(|&id| id < vocab) {
            let tok = cx.decode(id);
            if is_base_vocab(cx.tokens, &tok) {
                continue; // token-id-not-special says more.
            }
            let theirs = match key {
                "eos_token_id"
                    if !facts.eos_token_ids.is_empty() && !facts.eos_token_ids.contains(&id) =>
                {
                    Some(format!("{:?}", facts.eos_token_ids))
                }
                "bos_token_id" => facts
                    .bos_token_id
                    .filter(|&b| b != id)
                    .map(|b| b.to_string()),
                _ => None,
            };
            if let Some(theirs) = theirs {
                cx.emit(
                    &Path::key(key),
                    format!("`{key}` {tok} differs from the target's ({theirs})"),
                )
                .tokens = vec![tok.clone()];
            }
        }
    }
}
