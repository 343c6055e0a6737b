//! vLLM's own flags: keys its `--speculative-config` refuses, and the token budget a parallel
//! drafter needs in one decode step (`--max-num-batched-tokens` against `--max-num-seqs` × (K+1)).
//! The method and K against the drafter are deployment rules (`rules::deployment`).

use serde_json::json;

use super::{Cx, DrafterFacts, Rule, VLLM};
use crate::diagnostic::{CodeInfo, Severity};
use crate::launch::LaunchCode;

pub(super) const REJECTED_KEY: Rule = Rule {
    code: LaunchCode::RejectedKey,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "tensor_parallel_size inside vLLM's --speculative-config (vLLM wants draft_tensor_parallel_size)",
        explanation: "vLLM refuses to start: \"'tensor_parallel_size' is not a valid argument in the speculative_config. \
Please pass 'draft_tensor_parallel_size' instead.\" The draft's tensor parallelism can only be 1 or the target's.",
    },
    applies: VLLM,
    needs: &[],
    check: rejected_key,
};

/// `tensor_parallel_size` inside vLLM's speculative config.
fn rejected_key(cx: &mut Cx) {
    let Some(value) = cx.launch().spec("tensor_parallel_size").cloned() else {
        return;
    };
    cx.emit(
        "--speculative-config.tensor_parallel_size",
        (Some(crate::engine::vllm::SPECULATIVE_CONFIG), "tensor_parallel_size"),
        "vLLM refuses `tensor_parallel_size` inside --speculative-config (\"not a valid argument in the \
         speculative_config\"): the draft's tensor parallelism is `draft_tensor_parallel_size` (1 or the target's)"
            .to_string(),
        Some(json!({ "draft_tensor_parallel_size": value })),
    );
}

pub(super) const BATCHED_TOKENS: Rule = Rule {
    code: LaunchCode::BatchedTokens,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "max_num_batched_tokens < max_num_seqs × (K+1) for a DFlash/DSpark drafter",
        explanation: "DFlash and DSpark drafters issue max_num_seqs × (K+1) query tokens in one unchunkable decode \
step (a bonus query and K mask queries per request). vLLM sizes the drafter's input buffers to \
max_num_batched_tokens, so a full batch indexes past them (CUDA out-of-bounds gather); v0.26.0 rejects some such \
configs at start-up with a negative max_num_scheduled_tokens. Checked only when both flags are on the command line: \
vLLM's defaults depend on the GPU and the entrypoint, and the report says so.",
    },
    applies: VLLM,
    needs: &[],
    check: batched_tokens,
};

/// `max_num_batched_tokens ≥ max_num_seqs × (K+1)` for parallel drafters (DFlash, DSpark).
fn batched_tokens(cx: &mut Cx) {
    let launch = cx.launch();
    let method = cx.input.deployment.method.as_ref().map(|m| m.name.as_str());
    let block_drafter = cx
        .input
        .drafter
        .and_then(DrafterFacts::spec)
        .is_some_and(|r| r.rules.block_drafter);
    let parallel = matches!(method, Some("dflash" | "dspark")) || block_drafter;
    if !parallel || launch.speculative_config.is_none() {
        return;
    }
    let Some(k) = cx.input.deployment.k() else {
        return;
    };
    let per_seq = k.saturating_add(1);
    match (launch.max_num_seqs, launch.max_num_batched_tokens) {
        (Some(seqs), Some(tokens)) => {
            let need = seqs.saturating_mul(per_seq);
            if tokens < need {
                cx.emit(
                    crate::engine::vllm::MAX_NUM_BATCHED_TOKENS,
                    (None, crate::engine::vllm::MAX_NUM_BATCHED_TOKENS),
                    format!(
                        "--max-num-batched-tokens {tokens} is below --max-num-seqs {seqs} × (K+1 = {per_seq}) = {need}: \
                         one decode step of a full batch drafts {need} query tokens, past the drafter's buffers"
                    ),
                    Some(json!(need)),
                );
            }
        }
        (Some(seqs), None) => cx.not_checked(format!(
            "max_num_batched_tokens ≥ max_num_seqs × (K+1) = {}: --max-num-batched-tokens is not given, and \
             vLLM's default depends on the GPU and the entrypoint (2048 in vllm#53970); pass it explicitly",
            seqs.saturating_mul(per_seq)
        )),
        (None, Some(tokens)) => cx.not_checked(format!(
            "max_num_batched_tokens ≥ max_num_seqs × (K+1): --max-num-seqs is not given (vLLM's default depends on \
             the GPU and the entrypoint, 256 in vllm#53970); it holds for max_num_seqs ≤ {} = {tokens} / {per_seq}",
            tokens / per_seq
        )),
        (None, None) => cx.not_checked(format!(
            "max_num_batched_tokens ≥ max_num_seqs × (K+1 = {per_seq}): neither flag is given, and vLLM's defaults \
             depend on the GPU and the entrypoint (2048 tokens with 256 sequences fails for K ≥ 8, vllm#53970)"
        )),
    }
}
