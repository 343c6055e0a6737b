//! The mask token: the id that fills the masked positions of a drafted block. It cannot be
//! inferred; it must be the id used in training, and an embedding row of the target.

use super::{
    find, is_base_vocab, is_text_marker, Applies, ByEngine, Ctx, Engine, LintCode, Need,
    ReleaseRow, Rule, CONTROL_TOKENS,
};
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{Node, Path};
use crate::tokens::TokenClass;

pub(super) const RULES: &[Rule] = &[
    MASK_TOKEN_MISSING,
    MASK_TOKEN_OUT_OF_RANGE,
    MASK_TOKEN_COLLISION,
    MASK_TOKEN_TEXT_TOKEN,
    MASK_TOKEN_STRING,
    MASK_TOKEN_STRING_ADDED,
];

/// The rules here whose severity follows the engine.
pub(super) const BY_ENGINE: &[(LintCode, &ByEngine)] = &[
    (LintCode::MaskTokenMissing, &MASK_TOKEN_MISSING_BY_ENGINE),
    (LintCode::MaskTokenString, &MASK_TOKEN_STRING_BY_ENGINE),
    (LintCode::MaskTokenStringAdded, &MASK_ADDED_PAST_VOCAB),
];

fn locate<'a>(cx: &Ctx<'a>) -> Option<(Path, &'a Node)> {
    find(
        cx.root,
        &[
            &["dflash_config", "mask_token_id"],
            &["mask_token_id"],
            &["dspark_noise_token_id"],
            &["speculators_config", "mask_token_id"],
        ],
    )
}

/// The mask id, when it is a non-negative integer (other values are reported by
/// `mask-token-out-of-range`, which owns reading it).
fn mask_id(cx: &Ctx) -> Option<(Path, u64)> {
    let (path, node) = locate(cx)?;
    node.as_number()
        .filter(|n| n.is_integer_literal())
        .and_then(|n| n.as_u64())
        .map(|id| (path, id))
}

const MASK_TOKEN_MISSING: Rule = Rule {
    code: LintCode::MaskTokenMissing,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "no mask_token_id: vLLM refuses to load, SGLang adds its own mask token",
        explanation: "Block drafters fill each drafted block with the mask token. Without \
`dflash_config.mask_token_id` vLLM raises ValueError at load (_init_parallel_drafting_params; it tests only that \
the key exists, and its V2 runner then fails on an explicit null). SGLang's _resolve_mask_token_id adds `<|MASK|>` to the \
tokenizer and uses its new id, len(tokenizer) — it logs this at info level and says it mirrors the reference demo: \
for Qwen3 that is 151669, exactly z-lab's mask id; for Qwen3.5/3.6 it is 248077, which is right for newer drafters \
and wrong for those trained with 248070. NeMo-Automodel once fell back to the pad token (PR 2461). An error \
(vLLM refuses); a warning with --engine sglang, where the fallback may be the trained id. Copy the id from the \
published config.",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: mask_token_missing,
};

const MASK_TOKEN_MISSING_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Error),
            "raises ValueError at load",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Warning),
            "adds <|MASK|> at id len(tokenizer), the trained id only for some drafters",
        ),
    ],
};

fn mask_token_missing(cx: &mut Ctx) {
    match locate(cx) {
        None => {
            let path = Path::key("dflash_config").child("mask_token_id");
            cx.emit_by_engine(
                &path,
                "`dflash_config.mask_token_id` is missing: vLLM raises ValueError at load; SGLang adds `<|MASK|>` \
                 at id len(tokenizer), which is the trained id only for drafters trained that way"
                    .to_string(),
            );
        }
        Some((path, node)) if node.is_null() => {
            cx.emit_by_engine(
                &path,
                format!(
                    "`{path}` is null: vLLM's V2 runner fails on int(None); SGLang adds `<|MASK|>` at id \
                     len(tokenizer), which need not be the id the drafter was trained with"
                ),
            );
        }
        Some(_) => {}
    }
}

const MASK_TOKEN_OUT_OF_RANGE: Rule = Rule {
    code: LintCode::MaskTokenOutOfRange,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "mask_token_id is not an embedding row of the target",
        explanation: "The mask id indexes the target's embedding matrix: it must be a non-negative integer < the \
target's vocab_size (text_config.vocab_size for multimodal targets). SGLang refuses both: parse_dflash_draft_config \
raises for a negative or non-integer mask_token_id, _resolve_mask_token_id raises \"outside the target vocab size\" \
(read at 0.5.23; at 7f151c5 the check applied only to the id resolved from the mask_token string). Other engines \
index the embedding with it unchecked (not cited by line). Ids between the tokenizer length and vocab_size are \
unused rows and valid (Qwen3's 151669). The value's type is checked here too.",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: mask_token_out_of_range,
};

fn mask_token_out_of_range(cx: &mut Ctx) {
    let Some((path, node)) = locate(cx) else {
        return;
    };
    if node.is_null() {
        return;
    }
    if mask_id(cx).is_none() {
        if let Some(huge) = super::tokens::past_u64(node) {
            cx.emit(
                &path,
                format!("mask_token_id {huge} is out of range: past 2^64, no embedding matrix has that row"),
            );
        } else if let Some(n) = node.as_number().filter(|n| n.is_integer_literal()) {
            cx.emit(
                &path,
                format!(
                    "mask_token_id {} is negative: no embedding row has a negative index (SGLang requires an \
                     int >= 0)",
                    n.text
                ),
            );
        } else {
            cx.emit_type(
                &path,
                format!(
                    "`{path}` is {}; it must be a non-negative integer token id",
                    super::describe(node)
                ),
            );
        }
        return;
    }
    let Some(vocab) = cx.target_vocab() else {
        cx.skip();
        return;
    };
    let Some((path, id)) = mask_id(cx) else {
        return;
    };
    if id >= vocab {
        let tok = cx.decode(id);
        cx.emit(
            &path,
            format!("mask_token_id {id} is out of range: the target has {vocab} embedding rows"),
        )
        .tokens = vec![tok.clone()];
    }
}

const MASK_TOKEN_COLLISION: Rule = Rule {
    code: LintCode::MaskTokenCollision,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "mask_token_id is the eos/pad/bos id or a chat-control token",
        explanation: "A mask id equal to the target's (or the drafter's) eos, pad or bos id, or to a chat-control \
token (`<|im_end|>`, `<|im_start|>`, `<|endoftext|>`, `<|eot_id|>`...), makes masked positions indistinguishable \
from real structure. For eos, bos and control tokens that is not wrong in itself — SpecForge's LongCat-Flash DFlash \
template uses mask 2, its own eos id — but it is how a guess shows itself: info, check it against the published \
config. The pad id is an error: a mask id left at the pad placeholder trains and drafts on PAD embeddings instead \
of the mask token, which silently corrupts the objective (TorchSpec PR 133's review of its GLM-5.2 DSpark config, \
whose mask id was the pad placeholder), and a fallback to the pad token \"does not error, but acceptance quietly \
degrades\" (NeMo-Automodel PR 2461). No published drafter in the corpus uses its pad id as the mask.",
    },
    applies: Applies::BlockDrafters,
    needs: &[Need::TargetVocab],
    check: mask_token_collision,
};

fn mask_token_collision(cx: &mut Ctx) {
    let Some((path, id)) = mask_id(cx) else {
        return;
    };
    if cx.target_vocab().is_some_and(|v| id >= v) {
        return;
    }
    let tok = cx.decode(id);
    let mut named: Vec<(String, u64)> = Vec::new();
    if let Some(f) = cx.facts {
        for &e in &f.eos_token_ids {
            named.push(("the target's eos_token_id".into(), e));
        }
        if let Some(p) = f.pad_token_id {
            named.push(("the target's pad_token_id".into(), p));
        }
        if let Some(b) = f.bos_token_id {
            named.push(("the target's bos_token_id".into(), b));
        }
    }
    for key in ["eos_token_id", "pad_token_id", "bos_token_id"] {
        if let Some(n) = cx.root.get(key) {
            for v in super::tokens::ids_of(n) {
                named.push((format!("the drafter's {key}"), v));
            }
        }
    }
    // The pad id first: it is the one collision that is an error.
    let pad = named
        .iter()
        .find(|(what, v)| *v == id && what.ends_with("pad_token_id"));
    if let Some((what, _)) = pad.or_else(|| named.iter().find(|(_, v)| *v == id)) {
        let (severity, consequence) = if what.ends_with("pad_token_id") {
            (
                Severity::Error,
                "the drafter trains and drafts on the PAD embedding instead of a mask, which silently corrupts the \
                 objective (TorchSpec PR 133); write the mask id the drafter was trained with",
            )
        } else {
            (Severity::Info, "masked positions look like real structure")
        };
        let message = format!("mask_token_id {id} is {what}: {consequence}");
        cx.emit_as(severity, &path, message).tokens = vec![tok.clone()];
        return;
    }
    if tok.content().is_some_and(|c| CONTROL_TOKENS.contains(&c)) {
        cx.emit(
            &path,
            format!("mask_token_id {id} is a chat-control token: masked positions look like real structure"),
        )
        .tokens = vec![tok.clone()];
    }
}

const MASK_TOKEN_TEXT_TOKEN: Rule = Rule {
    code: LintCode::MaskTokenTextToken,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "mask_token_id decodes to a token that occurs in ordinary text",
        explanation: "Published mask ids are unused embedding rows (151669, 248077) or tokens a text model never \
sees (`<|audio_start|>`, `<|reserved_200000|>`). A regular vocabulary token, or an added token used in text \
(`<think>`, `<tool_call>`, `<|fim_*|>`, `<|repo_name|>`), is almost certainly a guess: the incident's 248064 \
`<|repo_name|>` instead of 248070 `<|audio_start|>`. No engine checks it: a warning.",
    },
    applies: Applies::BlockDrafters,
    needs: &[Need::TargetVocab],
    check: mask_token_text_token,
};

fn mask_token_text_token(cx: &mut Ctx) {
    let Some((path, id)) = mask_id(cx) else {
        return;
    };
    if cx.target_vocab().is_some_and(|v| id >= v) {
        return;
    }
    let tok = cx.decode(id);
    // A control token is the collision rule's.
    if tok.content().is_some_and(|c| CONTROL_TOKENS.contains(&c)) {
        return;
    }
    let text_like = match &tok.class {
        TokenClass::Added { content }
        | TokenClass::AddedToken { content }
        | TokenClass::SpecialAdded { content } => is_text_marker(content),
        _ => is_base_vocab(cx.tokens, &tok),
    };
    if text_like {
        cx.emit(
            &path,
            format!(
                "mask_token_id {tok} is a token that occurs in ordinary text; published mask ids are unused \
                 embedding rows or tokens a text model never sees (check the published config)"
            ),
        )
        .tokens = vec![tok.clone()];
    }
}

const MASK_TOKEN_STRING: Rule = Rule {
    code: LintCode::MaskTokenString,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "dflash_config.mask_token names a token whose id is not mask_token_id",
        explanation: "SGLang reads `dflash_config.mask_token` (a string) beside mask_token_id; when the tokenizer \
already has that token under another id, _resolve_mask_token_id raises \"mask_token_id conflicts with tokenizer \
vocab id\" (read at 0.5.23; the older 7f151c5 had no such check and used the string's id). vLLM ignores the string \
(info with --engine vllm). Make the two agree, or drop the string.",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: mask_token_string_conflict,
};

fn mask_token_string_conflict(cx: &mut Ctx) {
    let Some((path, node)) = find(
        cx.root,
        &[&["dflash_config", "mask_token"], &["mask_token"]],
    ) else {
        return;
    };
    // A wrong type is field-type's.
    let Some(text) = node.as_str() else {
        return;
    };
    let Some((_, id)) = mask_id(cx) else { return };
    // Only added tokens are known by content; a mask string is always one.
    let Some(found) = cx
        .tokens
        .added
        .iter()
        .find(|(_, t)| t.content == text)
        .map(|(&id, _)| id)
    else {
        return;
    };
    if found != id {
        let Some(d) = cx.emit_by_engine(
            &path,
            format!(
                "mask_token {} is id {found} in the target's tokenizer, but mask_token_id is {id}: SGLang raises \
                 \"mask_token_id conflicts with tokenizer vocab id\"",
                crate::json::quote(text)
            ),
        ) else {
            return;
        };
        d.expected = Some(serde_json::json!(found));
    }
}

const MASK_TOKEN_STRING_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "raises ValueError on the conflict (read at 0.5.23)",
        ),
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Info),
            "reads mask_token_id only",
        ),
    ],
};

/// The added token's id would be past the target's embedding rows: SGLang refuses it; vLLM
/// does not add the string (it refuses the missing id: mask-token-missing says so).
const MASK_ADDED_PAST_VOCAB: ByEngine = ByEngine {
    case: Some("len(tokenizer) is not below the target's vocab_size"),
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Warning),
            "raises \"DFLASH mask_token_id is outside the target vocab size\" (read at 0.5.23)",
        ),
        ReleaseRow::any_version(
            Engine::Vllm,
            None,
            "does not add the string (mask-token-missing reports the missing id)",
        ),
    ],
};

const MASK_TOKEN_STRING_ADDED: Rule = Rule {
    code: LintCode::MaskTokenStringAdded,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "dflash_config.mask_token is not in the target's tokenizer and mask_token_id is absent: SGLang adds it",
        explanation: "Without a mask_token_id, SGLang's _resolve_mask_token_id looks `dflash_config.mask_token` up \
in the target tokenizer and, when it is not there, adds it (add_special_tokens) and fills drafted blocks with its \
new id, len(tokenizer): an unused embedding row, the trained id only if the drafter was trained that way. Info, \
since it is SGLang's documented behaviour (vLLM refuses the missing id, reported by mask-token-missing); a \
warning (except with --engine vllm) when len(tokenizer) is not below the target's vocab_size, because SGLang then \
raises \"DFLASH mask_token_id is outside the target vocab size\". Not an error: the string is looked up among the \
tokenizer's added tokens only (the fast token reader does not index the base vocabulary by text), and a string that \
is a base-vocabulary token would be found by SGLang and not added. Needs the target's tokenizer.",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: mask_token_string_added,
};

fn mask_token_string_added(cx: &mut Ctx) {
    let Some((path, node)) = find(
        cx.root,
        &[&["dflash_config", "mask_token"], &["mask_token"]],
    ) else {
        return;
    };
    // A wrong type is field-type's; a configured id is mask-token-string's.
    let Some(text) = node.as_str().filter(|t| !t.is_empty()) else {
        return;
    };
    if locate(cx).is_some_and(|(_, n)| !n.is_null()) {
        return;
    }
    // Without the target's tokens nothing can be said about the string.
    if !cx.tokens.can_decode() {
        return;
    }
    let Some(len) = cx.tokens.tokenizer_len else {
        return;
    };
    if cx.tokens.added.values().any(|t| t.content == text) {
        return;
    }
    let quoted = crate::json::quote(text);
    match cx.target_vocab() {
        Some(vocab) if len >= vocab && cx.judge(&MASK_ADDED_PAST_VOCAB).is_some() => {
            cx.emit_judged(
                &MASK_ADDED_PAST_VOCAB,
                &path,
                format!(
                    "{quoted} is not an added token of the target's tokenizer: unless it is a token of the base \
                     vocabulary (not searched), SGLang will add it at id {len} (len(tokenizer)), but the target has \
                     only {vocab} embedding rows, and SGLang raises \"DFLASH mask_token_id is outside the target \
                     vocab size\"; set mask_token_id"
                ),
            );
        }
        _ => {
            cx.emit(
                &path,
                format!(
                    "SGLang will add {quoted} to the tokenizer at id {len} (len(tokenizer)) and fill drafted blocks \
                     with it: right only if the drafter was trained with that id"
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{self, TargetFacts};
    use crate::rules::{lint, Engine, LintOptions};
    use crate::target::TargetContext;
    use crate::tokens::{AddedToken, TokenTable};

    /// A target whose tokenizer has `len` tokens (the last one `<|im_end|>`) and `vocab` rows.
    fn target(len: u64, vocab: u64) -> TargetContext {
        let mut t = TargetContext::none();
        t.facts = Some(std::sync::Arc::new(TargetFacts {
            source: "test".into(),
            vocab_size: Some(vocab),
            ..TargetFacts::default()
        }));
        let mut tokens = TokenTable::empty(Some(vocab));
        std::sync::Arc::make_mut(&mut tokens.added).insert(
            len - 1,
            AddedToken {
                content: "<|im_end|>".into(),
                special: Some(true),
            },
        );
        tokens.tokenizer_len = Some(len);
        t.tokens = std::sync::Arc::new(tokens);
        t
    }

    fn found(text: &str, target: &TargetContext, engine: Option<Engine>) -> Vec<(String, String)> {
        let cfg = config::parse(std::path::Path::new("config.json"), text.as_bytes()).unwrap();
        let options = LintOptions {
            engine: engine.map(Into::into),
            ..LintOptions::default()
        };
        lint(&cfg, &options, target)
            .unwrap()
            .findings
            .iter()
            .filter(|d| d.code.as_str() == "mask-token-string-added")
            .map(|d| (d.severity.as_str().to_string(), d.message.clone()))
            .collect()
    }

    const DRAFTER: &str = r#"{"architectures": ["DFlashDraftModel"], "block_size": 16,
        "dflash_config": {"target_layer_ids": [1, 9, 17, 25, 33], "mask_token": "<|MASK|>"}}"#;

    /// With no mask id, a string the tokenizer lacks is added at len(tokenizer): info when that
    /// row exists, a warning when it does not (SGLang refuses, unless the string is in the base
    /// vocabulary, which is not searched), info under vLLM.
    #[test]
    fn a_missing_mask_string_is_added_at_the_tokenizer_length() {
        let got = found(DRAFTER, &target(151669, 151936), None);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].0, "info");
        assert!(
            got[0]
                .1
                .contains("\"<|MASK|>\" to the tokenizer at id 151669"),
            "{}",
            got[0].1
        );
        let full = target(151936, 151936);
        assert_eq!(found(DRAFTER, &full, None)[0].0, "warning");
        assert_eq!(found(DRAFTER, &full, Some(Engine::Sglang))[0].0, "warning");
        assert_eq!(found(DRAFTER, &full, Some(Engine::Vllm))[0].0, "info");
        // A string the tokenizer has, a configured id, or no tokenizer: nothing to say here.
        let known = DRAFTER.replace("<|MASK|>", "<|im_end|>");
        assert_eq!(found(&known, &target(151669, 151936), None), vec![]);
        let with_id = DRAFTER.replace(
            "\"mask_token\"",
            "\"mask_token_id\": 151669, \"mask_token\"",
        );
        assert_eq!(found(&with_id, &target(151669, 151936), None), vec![]);
        assert_eq!(found(DRAFTER, &TargetContext::none(), None), vec![]);
    }
}
