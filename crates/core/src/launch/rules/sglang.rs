//! SGLang's speculative flags against each other and the drafter: DFLASH's drafter path, draft
//! tokens, block size and window; EAGLE's steps, top-k and draft tokens (chain and tree); the
//! FR-Spec token map. SGLang's draft tokens against the drafter's block are a deployment rule
//! (`rules::deployment`).

use serde_json::json;

use super::{Cx, Need, Rule, SGLANG};
use crate::diagnostic::{CodeInfo, Severity};
use crate::launch::parse::Launch;
use crate::launch::LaunchCode;

pub(super) const DRAFTER_MISSING: Rule = Rule {
    code: LaunchCode::DrafterMissing,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "SGLang --speculative-algorithm DFLASH without --speculative-draft-model-path",
        explanation: "SGLang refuses to start: \"DFLASH speculative decoding requires setting \
--speculative-draft-model-path\".",
    },
    applies: SGLANG,
    needs: &[],
    check: drafter_missing,
};

/// SGLang DFLASH without a drafter path.
fn drafter_missing(cx: &mut Cx) {
    let launch = cx.launch();
    if launch.sglang.algorithm.as_deref() == Some("DFLASH") && launch.drafter.is_none() {
        cx.emit(
            crate::engine::sglang::DRAFT_MODEL_PATH,
            (None, crate::engine::sglang::ALGORITHM),
            "--speculative-algorithm DFLASH without --speculative-draft-model-path: SGLang refuses to start"
                .to_string(),
            None,
        );
    }
}

fn is_dflash(launch: &Launch) -> bool {
    launch.sglang.algorithm.as_deref() == Some("DFLASH")
}

fn is_eagle(launch: &Launch) -> bool {
    matches!(
        launch.sglang.algorithm.as_deref(),
        Some("EAGLE" | "EAGLE3" | "STANDALONE")
    )
}

pub(super) const SGLANG_BLOCK_SIZE_CONFLICT: Rule = Rule {
    code: LaunchCode::SglangBlockSizeConflict,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "SGLang --speculative-num-draft-tokens differs from --speculative-dflash-block-size",
        explanation: "SGLang refuses to start: \"Both --speculative-num-draft-tokens and --speculative-dflash-block-size \
are set but they differ. For DFLASH they must match.\"",
    },
    applies: SGLANG,
    needs: &[],
    check: sglang_block_size_conflict,
};

/// SGLang DFLASH: `--speculative-num-draft-tokens` and `--speculative-dflash-block-size` differ.
fn sglang_block_size_conflict(cx: &mut Cx) {
    let s = &cx.launch().sglang;
    let (Some(tokens), Some(block)) = (s.num_draft_tokens, s.dflash_block_size) else {
        return;
    };
    if is_dflash(cx.launch()) && tokens != block {
        cx.emit(
            crate::engine::sglang::NUM_DRAFT_TOKENS,
            (None, crate::engine::sglang::NUM_DRAFT_TOKENS),
            format!(
                "--speculative-num-draft-tokens {tokens} and --speculative-dflash-block-size {block} differ: SGLang \
                 refuses to start (for DFLASH they must match)"
            ),
            Some(json!(block)),
        );
    }
}

/// The draft tokens SGLang will use for DFLASH, and the flag that set them.
fn dflash_tokens(launch: &Launch) -> Option<(u64, &'static str)> {
    let s = &launch.sglang;
    s.num_draft_tokens
        .map(|t| (t, crate::engine::sglang::NUM_DRAFT_TOKENS))
        .or(s
            .dflash_block_size
            .map(|b| (b, crate::engine::sglang::DFLASH_BLOCK_SIZE)))
}

pub(super) const SGLANG_WINDOW_TOO_SMALL: Rule = Rule {
    code: LaunchCode::SglangWindowTooSmall,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "SGLang DFLASH draft window smaller than the block",
        explanation: "SGLang refuses to start when --speculative-dflash-draft-window-size (older versions: \
--speculative-draft-window-size) is below the draft tokens (the block size): the compact draft cache must hold a \
whole block.",
    },
    applies: SGLANG,
    needs: &[],
    check: sglang_window_too_small,
};

/// SGLang DFLASH: the draft window must hold a whole block.
fn sglang_window_too_small(cx: &mut Cx) {
    let launch = cx.launch();
    if !is_dflash(launch) {
        return;
    }
    let Some(window) = launch.sglang.draft_window_size else {
        return;
    };
    let flag = if launch.has_flag(crate::engine::sglang::DRAFT_WINDOW_SIZE) {
        crate::engine::sglang::DRAFT_WINDOW_SIZE
    } else {
        crate::engine::sglang::DRAFT_WINDOW_SIZE_OLD
    };
    let block = dflash_tokens(launch)
        .map(|(t, _)| (t, "the draft tokens"))
        .or_else(|| {
            cx.input
                .drafter
                .and_then(|d| d.block_size)
                .map(|b| (b, "the drafter's block_size"))
        });
    let Some((block, what)) = block else {
        return;
    };
    if window < block {
        cx.emit(
            flag,
            (None, flag),
            format!(
                "{flag} {window} is smaller than {what} ({block}): SGLang refuses to start (the window must hold \
                 a whole block)"
            ),
            Some(json!(block)),
        );
    }
}

pub(super) const SGLANG_EAGLE_PARTIAL: Rule = Rule {
    code: LaunchCode::SglangEaglePartial,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "SGLang EAGLE topk or draft tokens given without --speculative-num-steps",
        explanation: "When --speculative-num-steps is unset, SGLang asserts that --speculative-eagle-topk and \
--speculative-num-draft-tokens are unset too and chooses all three itself; setting only some of them stops the \
server at start-up. Set all three or none.",
    },
    applies: SGLANG,
    needs: &[],
    check: sglang_eagle_partial,
};

/// SGLang EAGLE: `--speculative-eagle-topk` or `--speculative-num-draft-tokens` without
/// `--speculative-num-steps` trips an assertion at start-up.
fn sglang_eagle_partial(cx: &mut Cx) {
    let launch = cx.launch();
    let s = &launch.sglang;
    if !is_eagle(launch) || s.num_steps.is_some() {
        return;
    }
    let given: Vec<&str> = [
        (s.eagle_topk.is_some(), crate::engine::sglang::EAGLE_TOPK),
        (
            s.num_draft_tokens.is_some(),
            crate::engine::sglang::NUM_DRAFT_TOKENS,
        ),
    ]
    .iter()
    .filter(|(set, _)| *set)
    .map(|(_, n)| *n)
    .collect();
    if given.is_empty() {
        return;
    }
    let first = given[0];
    cx.emit(
        crate::engine::sglang::NUM_STEPS,
        (None, first),
        format!(
            "{} without --speculative-num-steps: SGLang asserts at start-up that all three are set or none is \
             (none: it chooses them itself)",
            given.join(" and ")
        ),
        None,
    );
}

pub(super) const SGLANG_EAGLE_CHAIN: Rule = Rule {
    code: LaunchCode::SglangEagleChain,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "SGLang EAGLE with topk 1: draft tokens differ from steps + 1",
        explanation: "With --speculative-eagle-topk 1 the draft is a chain of --speculative-num-steps tokens, verified \
with the last accepted one: --speculative-num-draft-tokens must be steps + 1. SGLang replaces another value with a \
log line (\"speculative_num_draft_tokens is adjusted to speculative_num_steps + 1\"), so the flag does not do what it \
says, and its acceptance-rate metric was computed from the wrong count (sglang#13212).",
    },
    applies: SGLANG,
    needs: &[],
    check: sglang_eagle_chain,
};

/// SGLang EAGLE chain (topk 1): the draft tokens are steps + 1.
fn sglang_eagle_chain(cx: &mut Cx) {
    let launch = cx.launch();
    let s = &launch.sglang;
    let (Some(steps), Some(1), Some(tokens)) = (s.num_steps, s.eagle_topk, s.num_draft_tokens)
    else {
        return;
    };
    let chain = steps.saturating_add(1);
    if is_eagle(launch) && tokens != chain {
        cx.emit(
            crate::engine::sglang::NUM_DRAFT_TOKENS,
            (None, crate::engine::sglang::NUM_DRAFT_TOKENS),
            format!(
                "--speculative-eagle-topk 1 drafts a chain of --speculative-num-steps {steps} tokens, so \
                 --speculative-num-draft-tokens must be {}: SGLang silently replaces {tokens} with {} (and its \
                 acceptance-rate metric is wrong when they differ, sglang#13212)",
                chain,
                chain
            ),
            Some(json!(chain)),
        );
    }
}

pub(super) const SGLANG_EAGLE_TREE: Rule = Rule {
    code: LaunchCode::SglangEagleTree,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "SGLang EAGLE tree: draft tokens exceed what steps and topk can draft",
        explanation: "A draft tree of --speculative-num-steps levels with --speculative-eagle-topk branches has at most \
topk + (steps - 1)·topk² candidate nodes; --speculative-num-draft-tokens - 1 above that asks for candidates that do \
not exist, and SGLang has no start-up check for it.",
    },
    applies: SGLANG,
    needs: &[],
    check: sglang_eagle_tree,
};

/// SGLang EAGLE tree (topk > 1): the draft tokens cannot exceed the tree's nodes.
fn sglang_eagle_tree(cx: &mut Cx) {
    let launch = cx.launch();
    let s = &launch.sglang;
    let (Some(steps), Some(topk), Some(tokens)) = (s.num_steps, s.eagle_topk, s.num_draft_tokens)
    else {
        return;
    };
    if !is_eagle(launch) || topk <= 1 || steps == 0 || tokens == 0 {
        return;
    }
    let nodes = topk.saturating_add((steps - 1).saturating_mul(topk.saturating_mul(topk)));
    if tokens - 1 > nodes {
        cx.emit(
            crate::engine::sglang::NUM_DRAFT_TOKENS,
            (None, crate::engine::sglang::NUM_DRAFT_TOKENS),
            format!(
                "--speculative-num-draft-tokens {tokens} asks for {} drafted tokens, but a tree of \
                 --speculative-num-steps {steps} with --speculative-eagle-topk {topk} has at most topk + \
                 (steps-1)·topk² = {nodes}: SGLang does not check this at start-up",
                tokens - 1
            ),
            Some(json!(nodes.saturating_add(1))),
        );
    }
}

pub(super) const SGLANG_TOKEN_MAP: Rule = Rule {
    code: LaunchCode::SglangTokenMap,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "SGLang EAGLE drafter with a truncated vocabulary but no --speculative-token-map (or a token map given to EAGLE-3)",
        explanation: "An EAGLE-2 head whose output vocabulary (draft_vocab_size, else vocab_size) is smaller than the \
target's predicts ids in its own reduced vocabulary; SGLang maps them to target ids with the FR-Spec \
--speculative-token-map. Without it the ids are \
misread and acceptance collapses. For EAGLE-3 the map ships in the weights (d2t) and SGLang ignores the flag (info).",
    },
    applies: SGLANG,
    needs: &[],
    check: sglang_token_map,
};

/// SGLang EAGLE-2 with a truncated draft vocabulary needs `--speculative-token-map`; EAGLE-3
/// ignores it.
fn sglang_token_map(cx: &mut Cx) {
    let launch = cx.launch();
    let algorithm = launch.sglang.algorithm.as_deref();
    if algorithm == Some("EAGLE3") && launch.sglang.token_map.is_some() {
        cx.emit(
            crate::engine::sglang::TOKEN_MAP,
            (None, crate::engine::sglang::TOKEN_MAP),
            "--speculative-token-map is ignored for EAGLE-3: the draft-to-target mapping ships in the drafter's \
             weights (d2t)"
                .to_string(),
            None,
        )
        .severity = Severity::Info;
        return;
    }
    if algorithm != Some("EAGLE") || launch.sglang.token_map.is_some() {
        return;
    }
    // Only this part reads the drafter and the target: an unmet need is found here, not before
    // the rule runs (the EAGLE-3 part above needs neither).
    let Some(drafter) = cx.input.drafter else {
        cx.lacks(Need::DrafterConfig);
        return;
    };
    // The head's own output vocabulary: `draft_vocab_size`, else its `vocab_size`.
    let Some(draft_vocab) = drafter.draft_vocab_size.or(drafter.vocab_size) else {
        return;
    };
    let Some(vocab) = cx.input.target_vocab else {
        cx.lacks(Need::TargetVocab);
        return;
    };
    if draft_vocab < vocab {
        cx.emit(
            crate::engine::sglang::TOKEN_MAP,
            (None, crate::engine::sglang::ALGORITHM),
            format!(
                "the EAGLE head predicts {draft_vocab} ids, fewer than the target's {vocab}, and no \
                 --speculative-token-map says which target token each draft id is: pass the FR-Spec token map the \
                 head was trained with"
            ),
            None,
        );
    }
}
