//! bos / eos / pad ids. Drafters borrow the target's tokenizer and embeddings; these ids are
//! informational for DFlash, but wrong ones are how a guessed or copied config shows itself.

use super::{is_base_vocab, Ctx, Needs, Rule, Severity};
use crate::analysis::token_ids;
use crate::json::{Path, Value};

pub const RULES: &[Rule] = &[
    Rule {
        code: "token-id-out-of-range",
        severity: Severity::Error,
        needs: Needs::Target,
        summary: "bos/eos/pad id is not an embedding row of the target",
        explanation: "bos_token_id, eos_token_id and pad_token_id index the target's embeddings; an id at or \
above the target's vocab_size does not exist. Engines that stop on eos never stop, or crash on the lookup.",
        source: "transformers PretrainedConfig (bos/eos/pad token ids)",
    },
    Rule {
        code: "token-id-not-special",
        severity: Severity::Warning,
        needs: Needs::Target,
        summary: "bos/eos id decodes to a regular vocabulary token",
        explanation: "bos and eos are special tokens of the target's tokenizer. An id that decodes to a regular \
vocabulary token is almost always an id of another tokenizer: a Qwen3 id (151643 <|endoftext|>) inside a \
Qwen3.5/3.6 drafter is a plain BPE token there, as in one SpecForge template.",
        source: "sgl-project/SpecForge configs (a template with a Qwen3 bos id in a Qwen3.5 drafter)",
    },
    Rule {
        code: "token-id-target-mismatch",
        severity: Severity::Info,
        needs: Needs::Target,
        summary: "bos/eos id differs from the target's",
        explanation: "The drafter's eos/bos ids are not used by DFlash engines (the target's tokenizer decides), \
but they normally equal the target's; a difference hints at a config written for another model.",
        source: "z-lab DFlash configs (eos_token_id = the target's)",
    },
];

pub(crate) fn check(cx: &mut Ctx) {
    let root = cx.root;
    for key in ["bos_token_id", "eos_token_id", "pad_token_id"] {
        let Some(node) = root.get(key) else { continue };
        let path = Path::key(key);
        let ok_type = match &node.value {
            Value::Null => true,
            Value::Array(items) => items.iter().all(|n| {
                n.as_u64().is_some() && n.as_number().is_some_and(|x| x.is_integer_literal())
            }),
            Value::Number(n) => n.is_integer_literal() && n.as_u64().is_some(),
            _ => false,
        };
        if !ok_type {
            if let Some(huge) = past_u64(node) {
                cx.emit(
                    "token-id-out-of-range",
                    &path,
                    format!("`{key}` {huge} is out of range: past 2^64, no embedding matrix has that row"),
                    None,
                );
                continue;
            }
            let what = match node.as_array() {
                Some(items) => {
                    let bad: Vec<String> = items
                        .iter()
                        .enumerate()
                        .filter(|(_, n)| {
                            !(n.as_u64().is_some()
                                && n.as_number().is_some_and(|x| x.is_integer_literal()))
                        })
                        .map(|(i, n)| format!("[{i}] is {}", n.to_compact()))
                        .collect();
                    format!("a list whose element {}", bad.join(", "))
                }
                None => super::describe(node),
            };
            cx.emit(
                "field-type",
                &path,
                format!("`{key}` is {what}; it must be a non-negative integer id, a list of them, or null"),
                None,
            );
            continue;
        }
        let ids = token_ids(node);
        if ids.is_empty() {
            continue;
        }
        let Some(vocab) = cx.target_vocab(&[
            "token-id-out-of-range",
            "token-id-not-special",
            "token-id-target-mismatch",
        ]) else {
            continue;
        };
        for id in ids {
            let tok = cx.decode(id);
            if id >= vocab {
                cx.emit(
                    "token-id-out-of-range",
                    &path,
                    format!("`{key}` {id} is out of range: the target has {vocab} embedding rows"),
                    None,
                );
                continue;
            }
            if key != "pad_token_id" && is_base_vocab(cx.tokens, &tok) {
                cx.emit(
                    "token-id-not-special",
                    &path,
                    format!(
                        "`{key}` {tok} is a regular vocabulary token where a special token is expected: \
                         probably an id of another tokenizer"
                    ),
                    None,
                );
                continue;
            }
            let Some(facts) = cx.facts else { continue };
            let mismatch = match key {
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
            if let Some(theirs) = mismatch {
                cx.emit(
                    "token-id-target-mismatch",
                    &path,
                    format!("`{key}` {tok} differs from the target's ({theirs})"),
                    None,
                );
            }
        }
    }
}

/// The first integer past 2^64 in an id field (a number or a list), as written.
pub(crate) fn past_u64(node: &crate::json::Node) -> Option<String> {
    let huge = |n: &crate::json::Node| {
        n.as_number()
            .filter(|x| {
                // Beyond i128 the text is kept but no integer: all digits means huge.
                x.integer
                    .map_or(x.text.bytes().all(|b| b.is_ascii_digit()), |i| {
                        i > i128::from(u64::MAX)
                    })
            })
            .map(|x| x.text.clone())
    };
    match node.as_array() {
        Some(items) => items.iter().find_map(huge),
        None => huge(node),
    }
}
