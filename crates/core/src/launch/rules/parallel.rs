//! Tensor parallelism: vLLM's `draft_tensor_parallel_size`, which it ignores, and the drafter's
//! heads against the tensor-parallel size the draft really runs at. The quantization a draft
//! inherits is a deployment rule (`rules::deployment`).

use serde_json::json;

use super::{Cx, Need, Rule, VLLM, VLLM_SGLANG};
use crate::diagnostic::{CodeInfo, Severity};
use crate::launch::LaunchCode;

pub(super) const DRAFT_TP_IGNORED: Rule = Rule {
    code: LaunchCode::DraftTpIgnored,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "vLLM's draft_tensor_parallel_size differs from the target's TP: vLLM runs the draft at the target's anyway",
        explanation: "vLLM accepts `draft_tensor_parallel_size` (1 or the target's) but builds the EAGLE-3 draft with \
the target's tensor-parallel group: with tensor_parallel_size 4 and draft_tensor_parallel_size 1 the draft still \
runs at TP 4 (vllm issue 31345; the fix, PR 31886, is open; vllm-ascend fixed its own path in PR 5519). Nothing \
fails, the setting does nothing: a warning. launch-draft-heads-tp checks the drafter's heads at the TP it really \
runs at.",
    },
    applies: VLLM,
    needs: &[],
    check: draft_tp_ignored,
};

/// vLLM's `draft_tensor_parallel_size` different from the target's: vLLM builds the draft at
/// the target's TP anyway (vllm issue 31345; the fix, PR 31886, is open).
fn draft_tp_ignored(cx: &mut Cx) {
    let tp = &cx.input.deployment.tensor_parallel;
    let (Some(draft), Some(tp)) = (tp.draft, tp.target) else {
        return;
    };
    if draft == tp {
        return;
    }
    cx.emit(
        "--speculative-config.draft_tensor_parallel_size",
        (Some(crate::engine::vllm::SPECULATIVE_CONFIG), "draft_tensor_parallel_size"),
        format!(
            "draft_tensor_parallel_size is {draft} but vLLM builds the draft at the target's tensor-parallel size \
             {tp} (vllm issue 31345; the fix, PR 31886, is open): the setting changes nothing"
        ),
        Some(json!(tp)),
    );
}

pub(super) const DRAFT_HEADS_TP: Rule = Rule {
    code: LaunchCode::DraftHeadsTp,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the drafter's attention or KV heads are not divisible by the tensor-parallel size it runs at",
        explanation: "A draft runs at the target's tensor-parallel size (vLLM ignores draft_tensor_parallel_size, \
SGLang has no separate draft TP). Its attention splits heads across ranks and asserts num_attention_heads % tp == 0, \
and num_key_value_heads % tp == 0 (or tp % num_key_value_heads == 0 when the KV heads are replicated): a drafter \
with 12 heads under TP 8 fails while the server builds it. An error; NeMo-RL caps the draft's TP at its KV heads \
for the same reason.",
    },
    applies: VLLM_SGLANG,
    needs: &[Need::DrafterConfig],
    check: draft_heads_tp,
};

/// Drafter attention / KV heads the tensor-parallel size the draft runs at does not divide.
fn draft_heads_tp(cx: &mut Cx) {
    let Some(d) = cx.input.drafter else { return };
    let Some(tp) = cx
        .input
        .deployment
        .tensor_parallel
        .target
        .filter(|&t| t > 1)
    else {
        return;
    };
    let heads = d.num_attention_heads;
    let kv = d.num_key_value_heads.or(heads);
    let mut wrong = Vec::new();
    if let Some(h) = heads.filter(|h| h % tp != 0) {
        wrong.push(format!("{h} attention heads"));
    }
    if let Some(k) = kv.filter(|&k| if k >= tp { k % tp != 0 } else { tp % k != 0 }) {
        wrong.push(format!("{k} KV heads"));
    }
    if wrong.is_empty() {
        return;
    }
    // llama.cpp splits layers, not heads: an engine with no tensor-parallel flag is not judged.
    let engine = cx.launch().engine;
    let Some(&[flag, ..]) = engine.spec().flags.tensor_parallel else {
        return;
    };
    let how = format!(
        "{} runs the draft at the target's tensor-parallel size{}",
        engine.display(),
        if cx.input.deployment.tensor_parallel.draft.is_some() {
            " whatever draft_tensor_parallel_size says"
        } else {
            ""
        }
    );
    cx.emit(
        flag,
        (None, flag),
        format!(
            "the drafter has {}, which tensor-parallel size {tp} does not divide: {how}, and its attention \
             asserts the heads split evenly (KV heads may also be replicated when they divide the TP size); \
             the server fails while building the draft",
            wrong.join(" and ")
        ),
        None,
    );
}
