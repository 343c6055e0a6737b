//! The attention kernel a separate draft runs on under SGLang: a draft runner without
//! `--speculative-draft-attention-backend` runs the process-wide `--attention-backend`, which for
//! an MLA target (DeepSeek-V3, Kimi-K2.5/K2.6, GLM-5) is often an MLA kernel an MHA draft
//! (an EAGLE-3 head) cannot run on (sglang#23490).

use serde_json::json;

use super::{At, Cx, Need, Rule, When, SGLANG};
use crate::diagnostic::codes::DeploymentCode;
use crate::diagnostic::{CodeInfo, Severity};

/// The architectures SGLang 0.5.23 runs with MLA attention (`configs/model_config.py`), the
/// `…NextN` draft forms and the multimodal wrappers included, as far as a config's name says.
const MLA_ARCHITECTURES: &[&str] = &[
    "DeepseekV2ForCausalLM",
    "DeepseekV32ForCausalLM",
    "DeepseekV3ForCausalLM",
    "DeepseekV3ForCausalLMNextN",
    "Glm4MoeLiteForCausalLM",
    "Glm4MoeLiteForCausalLMNextN",
    "GlmMoeDsaForCausalLM",
    "GlmMoeDsaForCausalLMNextN",
    "Glm5NextForConditionalGeneration",
    "LongcatFlashForCausalLM",
    "HYV4ForCausalLM",
    "Dots3NoteForCausalLM",
    "MistralLarge3ForCausalLM",
    "MistralLarge3ForCausalLMEagle",
    "KimiK25ForConditionalGeneration",
    "Eagle3DeepseekV2ForCausalLM",
    "GigaChat35ForCausalLM",
];

pub(super) const DRAFT_ATTENTION_BACKEND_INHERITED: Rule = Rule {
    code: DeploymentCode::DraftAttentionBackendInherited,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "SGLang: an MHA draft on an MLA target inherits the target's MLA attention backend",
        explanation: "SGLang 0.5.23 gives a draft runner its own attention backend only when one is resolved for \
it (`--speculative-draft-attention-backend`, or the DFLASH/DSPARK fallbacks); otherwise the draft runs the \
process-wide `--attention-backend` (attention_backend_setup.py). For an MLA target (its architecture is one SGLang \
runs with MLA attention: DeepSeek-V2/V3, Kimi-K2.5, GLM-5, …) that is often an MLA kernel, and a separate draft with \
ordinary (MHA) attention, such as an EAGLE-3 head, cannot run on it: Kimi-K2.6 with an EAGLE-3 head and \
`trtllm_mla` failed at start-up until `--speculative-draft-attention-backend trtllm_mha` was given (sglang issue \
23490). An error when `--attention-backend` names an MLA kernel (`…mla`) and no draft backend is given; when the \
target's backend is not given, SGLang picks one by platform and the rule says nothing. Give \
`--speculative-draft-attention-backend` an MHA backend (trtllm_mha, fa3, flashinfer, triton).",
    },
    applies: SGLANG.when(When::MlaBackend),
    needs: &[Need::DrafterConfig],
    check: draft_attention_backend_inherited,
};

/// Whether one of `architectures` is one SGLang runs with MLA attention.
fn mla_names(architectures: &[String]) -> bool {
    architectures
        .iter()
        .any(|a| MLA_ARCHITECTURES.contains(&a.as_str()))
}

/// The target's `--attention-backend` when it is an MLA kernel (its name says `mla`).
pub fn mla_backend(d: &crate::deployment::Deployment) -> Option<&str> {
    d.attention_backends
        .as_ref()?
        .target
        .as_deref()
        .filter(|b| b.to_ascii_lowercase().contains("mla"))
}

/// A separate MHA draft, an MLA target, an MLA `--attention-backend` and no draft backend.
fn draft_attention_backend_inherited(cx: &mut Cx) {
    let d = cx.deployment;
    let (Some(dr), Some(backend), Some(target)) = (cx.drafter, mla_backend(d), d.target.as_ref())
    else {
        return;
    };
    let own = d.attention_backends.as_ref().and_then(|b| b.draft.as_ref());
    if own.is_some()
        || !mla_names(&target.architectures)
        || !matches!(d.drafter, crate::deployment::Drafter::Separate(_))
    {
        return;
    }
    let root = dr.root();
    let draft_mla = mla_names(&crate::config::architectures(root))
        || root.get("kv_lora_rank").is_some_and(|n| !n.is_null());
    if draft_mla {
        return;
    }
    let message = format!(
        "--attention-backend {backend} is an MLA kernel and the draft has none of its own: SGLang runs the draft on \
         the target's backend, and this draft (architectures {}) has ordinary attention, not MLA (Kimi-K2.6 with an \
         EAGLE-3 head failed to start this way, sglang#23490); add --speculative-draft-attention-backend trtllm_mha \
         (or fa3, flashinfer, triton)",
        crate::config::architectures(root).join(", ")
    );
    let at = At {
        flag: crate::engine::sglang::ATTENTION_BACKEND,
        anchor: (None, crate::engine::sglang::ATTENTION_BACKEND),
        field: None,
    };
    cx.emit(Severity::Error, at, message, Some(json!("trtllm_mha")));
}
