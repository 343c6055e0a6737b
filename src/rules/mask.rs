//! The mask token: the id that fills the masked positions of a drafted block. It cannot be
//! inferred; it must be the id used in training, and an embedding row of the target.

use super::{find, is_base_vocab, is_text_marker, Ctx, Needs, Rule, Severity, CONTROL_TOKENS};
use crate::json::Path;
use crate::tokens::TokenClass;

pub const RULES: &[Rule] = &[
    Rule {
        code: "mask-token-missing",
        severity: Severity::Error,
        needs: Needs::Config,
        summary: "no mask_token_id: engines disagree on what to do",
        explanation: "DFlash fills each drafted block with the mask token. Without `dflash_config.mask_token_id` \
vLLM raises at load; SGLang silently adds a new `<|MASK|>` token to the tokenizer, an embedding row the drafter \
never saw; NeMo-Automodel once fell back to the pad token (PR 2461); SpecForge once ignored the config value \
(PR 604). Known values: Qwen3 151669, Qwen3.5/3.6 248070 or 248077, gpt-oss 200000, MiMo 151669. Copy it from \
the published config.",
        source: "vLLM qwen3_dflash.py; SGLang dflash_utils.py (DEFAULT_DFLASH_MASK_TOKEN); NVIDIA-NeMo/Automodel PR 2461; SpecForge PR 604",
    },
    Rule {
        code: "mask-token-out-of-range",
        severity: Severity::Error,
        needs: Needs::Target,
        summary: "mask_token_id is not an embedding row of the target",
        explanation: "The mask id indexes the target's embedding matrix: it must be < the target's vocab_size \
(text_config.vocab_size for multimodal targets). Ids between the tokenizer length and vocab_size are unused rows \
and valid (Qwen3's 151669).",
        source: "z-lab/dflash dflash/model.py",
    },
    Rule {
        code: "mask-token-collision",
        severity: Severity::Warning,
        needs: Needs::Target,
        summary: "mask_token_id is the eos/pad/bos id or a chat-control token",
        explanation: "A mask id equal to the target's (or the drafter's) eos, pad or bos id, or to a chat-control \
token (`<|im_end|>`, `<|im_start|>`, `<|endoftext|>`, `<|eot_id|>`...), makes masked positions indistinguishable \
from real structure; no published drafter does it. It is how a fallback to the pad token (NeMo-Automodel PR 2461) \
or a guess shows itself.",
        source: "NVIDIA-NeMo/Automodel PR 2461",
    },
    Rule {
        code: "mask-token-text-token",
        severity: Severity::Warning,
        needs: Needs::Target,
        summary: "mask_token_id decodes to a token that occurs in ordinary text",
        explanation: "Published mask ids are unused embedding rows (151669, 248077) or tokens a text model never \
sees (`<|audio_start|>`, `<|reserved_200000|>`). A regular vocabulary token, or an added token used in text \
(`<think>`, `<tool_call>`, `<|fim_*|>`, `<|repo_name|>`), is almost certainly a guess: the incident's 248064 \
`<|repo_name|>` instead of 248070 `<|audio_start|>`.",
        source: "z-lab/Qwen3.6-27B-DFlash config.json (mask 248070); a deployment incident with 248064",
    },
];

pub(crate) fn check(cx: &mut Ctx) {
    if !cx.detection.dflash_like() {
        return;
    }
    let root = cx.root;
    let Some((path, node)) = find(
        root,
        &[
            &["dflash_config", "mask_token_id"],
            &["mask_token_id"],
            &["speculators_config", "mask_token_id"],
        ],
    ) else {
        let path = Path::key("dflash_config").child("mask_token_id");
        cx.emit(
            "mask-token-missing",
            &path,
            "`dflash_config.mask_token_id` is missing: vLLM raises at load, SGLang silently adds a new \
             `<|MASK|>` token (an embedding row the drafter never saw), NeMo-Automodel once fell back to the pad \
             token"
                .to_string(),
            None,
        );
        return;
    };
    if node.is_null() {
        cx.emit(
            "mask-token-missing",
            &path,
            format!("`{path}` is null: vLLM raises at load, SGLang silently adds a new `<|MASK|>` token"),
            None,
        );
        return;
    }
    let Some(id) = node
        .as_number()
        .filter(|n| n.is_integer_literal())
        .and_then(|n| n.as_u64())
    else {
        if let Some(huge) = super::tokens::past_u64(node) {
            cx.emit(
                "mask-token-out-of-range",
                &path,
                format!("mask_token_id {huge} is out of range: past 2^64, no embedding matrix has that row"),
                None,
            );
            return;
        }
        cx.emit(
            "field-type",
            &path,
            format!(
                "`{path}` is {}; it must be a non-negative integer token id",
                super::describe(node)
            ),
            None,
        );
        return;
    };
    let Some(vocab) = cx.target_vocab(&[
        "mask-token-out-of-range",
        "mask-token-collision",
        "mask-token-text-token",
    ]) else {
        return;
    };
    let tok = cx.decode(id);
    if id >= vocab {
        cx.emit(
            "mask-token-out-of-range",
            &path,
            format!("mask_token_id {id} is out of range: the target has {vocab} embedding rows"),
            None,
        );
        return;
    }

    // Collisions with eos/pad/bos ids, the target's and the drafter's own.
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
        if let Some(n) = root.get(key) {
            for v in crate::analysis::token_ids(n) {
                named.push((format!("the drafter's {key}"), v));
            }
        }
    }
    if let Some((what, _)) = named.iter().find(|(_, v)| *v == id) {
        cx.emit(
            "mask-token-collision",
            &path,
            format!("mask_token_id {tok} is {what}: masked positions look like real structure"),
            None,
        );
        return;
    }
    if let Some(content) = tok.content() {
        if CONTROL_TOKENS.contains(&content) {
            cx.emit(
                "mask-token-collision",
                &path,
                format!("mask_token_id {tok} is a chat-control token: masked positions look like real structure"),
                None,
            );
            return;
        }
    }

    let text_like = match &tok.class {
        TokenClass::Added { content } | TokenClass::AddedToken { content } => {
            is_text_marker(content)
        }
        TokenClass::SpecialAdded { content } => is_text_marker(content),
        _ => is_base_vocab(cx.tokens, &tok),
    };
    if text_like {
        cx.emit(
            "mask-token-text-token",
            &path,
            format!(
                "mask_token_id {tok} is a token that occurs in ordinary text; published mask ids are unused \
                 embedding rows or tokens a text model never sees (check the published config)"
            ),
            None,
        );
    }
}
