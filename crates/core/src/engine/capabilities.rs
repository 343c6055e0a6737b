//! What each engine release can do, as data: the capability rows `capability` queries. Read
//! from the release wheels and the llama.cpp tree named in each group's comment;
//! evidence/evidence.toml cites the registry and method lists under `engine-unsupported` at each
//! release where they change.

use super::capability::{Capability, What};
use super::version::ANY_PATCH;
use super::Engine;

/// The kinds of fact an engine's rows list whole: for these, a name with no row is "no".
pub const COMPLETE: &[(Engine, What<'static>)] = &[
    (Engine::Vllm, What::DrafterArchitecture("")),
    (Engine::Vllm, What::Method("")),
    (Engine::Vllm, What::AsyncScheduling("")),
    (Engine::Vllm, What::V2Runner("")),
    (Engine::LlamaCpp, What::DraftMtpArchitecture("")),
    (Engine::Trtllm, What::Method("")),
    (Engine::MlxLm, What::DrafterArchitecture("")),
    (Engine::MlxLm, What::Method("")),
    (Engine::MlxVlm, What::Method("")),
    (Engine::MlxVlm, What::NativeMtpCheckpoint("")),
    (Engine::TpuInference, What::Method("")),
];

/// One capability row (`since`/`until` inclusive; `None`: as far as read).
pub(super) const fn cap(
    engine: Engine,
    what: What<'static>,
    since: Option<super::Line>,
    until: Option<super::Line>,
    evidence: &'static str,
) -> Capability {
    Capability {
        engine,
        what,
        since,
        until,
        holds: true,
        evidence,
    }
}

/// A row read as "does not" over its range (kinds in [`EXPLICIT`]).
pub(super) const fn lacks(
    engine: Engine,
    what: What<'static>,
    since: Option<super::Line>,
    until: Option<super::Line>,
    evidence: &'static str,
) -> Capability {
    Capability {
        holds: false,
        ..cap(engine, what, since, until, evidence)
    }
}

/// The kinds of fact whose releases no row covers are unknown, not "no".
pub const EXPLICIT: &[(Engine, What<'static>)] = &[
    (Engine::Vllm, What::AuxHiddenStates("")),
    (Engine::Sglang, What::LayerCapture("", "")),
];

/// What each engine release can do (`capability`): read from the release wheels and the
/// llama.cpp tree named in each group's comment; evidence/evidence.toml cites the registry and
/// method lists under `engine-unsupported` at each release where they change.
#[rustfmt::skip]
pub const ROWS: &[Capability] = &[
    // vLLM's drafter registry (`_SPECULATIVE_DECODING_MODELS`, vllm/model_executor/models/registry.py),
    // read in every wheel from 0.25.1 to 0.34.0: `since` None = already in 0.25.1.
    cap(Engine::Vllm, What::DrafterArchitecture("DFlashDraftModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("DFlashLagunaForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("DFlashMuseGlimmerAssistantModel"), Some((0, 28, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("DFlashQwen3XPressModel"), Some((0, 33, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("MuseGlimmerAssistantModel"), Some((0, 28, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Qwen3XPressModel"), Some((0, 33, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("DFlash2BeamDraftModel"), Some((0, 33, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("DFlash2DraftModel"), Some((0, 28, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("DFlash2RicursiveDraftModel"), Some((0, 34, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("DSparkDraftModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("DSparkMiniMaxDraftModel"), Some((0, 34, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("DSparkV41DraftModel"), Some((0, 30, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Gemma4DSparkModel"), Some((0, 26, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("K3DSparkModel"), Some((0, 27, 1)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("MistralLarge4DSparkModel"), Some((0, 34, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("MuseSparkDSparkModel"), Some((0, 33, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Qwen3DSparkModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Qwen3OmniDSparkModel"), Some((0, 29, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("EagleCohereForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("EagleDeepSeekMTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("EagleLlama4ForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("EagleLlamaForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("EagleMiniCPMForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("EagleMistralForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("EagleMistralLarge3ForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Eagle3DeepseekV2ForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Eagle3DeepseekV3ForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Eagle3LlamaForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Eagle3MiniMaxM2ForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Eagle3Qwen2_5vlForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Eagle3Qwen3ForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Eagle3Qwen3vlForCausalLM"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("LlamaForCausalLMEagle3"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("ExtractHiddenStatesModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("MedusaModel"), None, Some((0, 32, ANY_PATCH)), "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("BailingMoeV25MTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("BailingMoeV3MTPModel"), Some((0, 28, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("DeepSeekMTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("DeepSeekV4MTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("DeepseekV32MTPModel"), Some((0, 29, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Dots3NoteMTPModel"), Some((0, 28, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("ErnieMTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Exaone4_5_MTP"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("ExaoneMoeMTP"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Gemma4MTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Glm4MoeLiteMTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Glm4MoeMTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Glm5NextMTPModel"), Some((0, 30, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("GlmOcrMTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("HYV3MTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("HYV4MTPModel"), Some((0, 29, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("InklingMTPModel"), Some((0, 26, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("InternS2MobiusMTP"), Some((0, 28, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("KimiK3MTPModel"), Some((0, 27, 1)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("LongCatFlashMTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("MiMoMTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("MiMoV2MTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("MiMoV2OmniMTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("MiniMaxM3MTP"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Nemotron3_5TranscribeMTPModel"), Some((0, 34, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("NemotronHMTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("OpenPanguMTPModel"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("ParseAuxMTPModel"), Some((0, 33, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Qwen3NextMTP"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Qwen3_5MTP"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Qwen3_5MoeMTP"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Qwen4ExpMTP"), Some((0, 29, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Step3p5MTP"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("Step5MTP"), Some((0, 33, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("LiLiCorrDraftModel"), Some((0, 31, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("PEagleDraftModel"), None, Some((0, 33, ANY_PATCH)), "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("PeagleLlamaForCausalLM"), None, Some((0, 33, ANY_PATCH)), "engine-unsupported"),
    cap(Engine::Vllm, What::DrafterArchitecture("PeagleQwen3ForCausalLM"), None, Some((0, 33, ANY_PATCH)), "engine-unsupported"),
    // vLLM's methods (`SpeculativeConfig.method`, vllm/config/speculative.py), 0.25.1 to 0.34.0.
    cap(Engine::Vllm, What::Method("bailing_hybrid_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("bailing_hybrid_v3_mtp"), Some((0, 28, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("custom_class"), None, Some((0, 33, ANY_PATCH)), "engine-unsupported"),
    cap(Engine::Vllm, What::Method("deepseek_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("dflash"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("dots3_note_mtp"), Some((0, 28, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("draft_model"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("dspark"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("eagle"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("eagle3"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("ernie_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("exaone4_5_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("exaone_moe_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("extract_hidden_states"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("gemma4_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("glm4_moe_lite_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("glm4_moe_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("glm5_next_mtp"), Some((0, 30, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("glm_ocr_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("hy_v3_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("hy_v4_mtp"), Some((0, 29, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("inkling_mtp"), Some((0, 26, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("kimi_k3_mtp"), Some((0, 27, 1)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("longcat_flash_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("medusa"), None, Some((0, 32, ANY_PATCH)), "engine-unsupported"),
    cap(Engine::Vllm, What::Method("mimo_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("mimo_v2_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("minimax_m3_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("mlp_speculator"), None, Some((0, 32, ANY_PATCH)), "engine-unsupported"),
    cap(Engine::Vllm, What::Method("mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("nemotron3_5_transcribe_mtp"), Some((0, 34, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("nemotron_h_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("ngram"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("ngram_gpu"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("pangu_ultra_moe_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("qwen3_5_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("qwen3_next_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("qwen4_exp_mtp"), Some((0, 29, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("step3p5_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("step5_mtp"), Some((0, 33, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::Method("suffix"), None, None, "engine-unsupported"),
    // vLLM with async scheduling asked for (`--async-scheduling`): the methods `VllmConfig.__post_init__`
    // lets start with it (vllm/config/vllm.py, read in every wheel from 0.25.1 to 0.34.0). EAGLE's
    // kind (`EagleModelTypes`: eagle, eagle3, extract_hidden_states, every MTP type, dflash),
    // ngram_gpu, draft_model and dspark at every release (a method a release does not have is the
    // method rows' to refuse); ngram from 0.33, whose V2 runner (the default) runs it and where only
    // the V1 runner refuses; suffix from 0.34, the first without a V1 runner (0.33 falls back to V1
    // for it). medusa, mlp_speculator and custom_class: refused at every release that has them.
    cap(Engine::Vllm, What::AsyncScheduling("eagle"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("eagle3"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("extract_hidden_states"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("dflash"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("dspark"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("draft_model"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("ngram_gpu"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("bailing_hybrid_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("bailing_hybrid_v3_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("deepseek_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("dots3_note_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("ernie_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("exaone4_5_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("exaone_moe_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("gemma4_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("glm4_moe_lite_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("glm4_moe_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("glm5_next_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("glm_ocr_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("hy_v3_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("hy_v4_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("inkling_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("kimi_k3_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("longcat_flash_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("mimo_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("mimo_v2_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("minimax_m3_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("nemotron3_5_transcribe_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("nemotron_h_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("pangu_ultra_moe_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("qwen3_5_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("qwen3_next_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("qwen4_exp_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("step3p5_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("step5_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("ngram"), Some((0, 33, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::AsyncScheduling("suffix"), Some((0, 34, 0)), None, "engine-unsupported"),
    // ... and with `disable_padded_drafter_batch: true`: refused up to 0.32 whatever the runner; from
    // 0.33 only on the V1 runner (which the method rows' suffix and custom_class fall back to).
    cap(Engine::Vllm, What::AsyncSchedulingUnpaddedDrafts, Some((0, 33, 0)), None, "engine-unsupported"),
    // vLLM with the V2 model runner asked for (`VLLM_USE_V2_MODEL_RUNNER=1`): the methods
    // `_validate_v2_model_runner` lets start on it (vllm/config/vllm.py, 0.25.1 to 0.33.0; 0.34.0
    // has no other runner). eagle, eagle3, dflash, dspark and mtp (every MTP type, which vLLM
    // renames mtp) at every release; extract_hidden_states from 0.29, draft_model from 0.31,
    // ngram and ngram_gpu from 0.32, suffix from 0.34; medusa, mlp_speculator and custom_class
    // at no release that has them.
    cap(Engine::Vllm, What::V2Runner("eagle"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("eagle3"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("dflash"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("dspark"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("bailing_hybrid_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("bailing_hybrid_v3_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("deepseek_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("dots3_note_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("ernie_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("exaone4_5_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("exaone_moe_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("gemma4_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("glm4_moe_lite_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("glm4_moe_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("glm5_next_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("glm_ocr_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("hy_v3_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("hy_v4_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("inkling_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("kimi_k3_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("longcat_flash_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("mimo_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("mimo_v2_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("minimax_m3_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("nemotron3_5_transcribe_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("nemotron_h_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("pangu_ultra_moe_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("qwen3_5_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("qwen3_next_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("qwen4_exp_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("step3p5_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("step5_mtp"), None, None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("extract_hidden_states"), Some((0, 29, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("draft_model"), Some((0, 31, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("ngram"), Some((0, 32, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("ngram_gpu"), Some((0, 32, 0)), None, "engine-unsupported"),
    cap(Engine::Vllm, What::V2Runner("suffix"), Some((0, 34, 0)), None, "engine-unsupported"),
    // SGLang's --speculative-algorithm names (SpeculativeAlgorithm), read at 0.5.10 to 0.5.23:
    // a first release between two read is the later one (DFLASH: after 0.5.10, by 0.5.12).
    cap(Engine::Sglang, What::Method("DFLASH"), Some((0, 5, 12)), None, "engine-unsupported"),
    cap(Engine::Sglang, What::Method("DSPARK"), Some((0, 5, 17)), None, "engine-unsupported"),
    cap(Engine::Sglang, What::Method("EAGLE"), None, None, "engine-unsupported"),
    cap(Engine::Sglang, What::Method("EAGLE3"), None, None, "engine-unsupported"),
    cap(Engine::Sglang, What::Method("FROZEN_KV_MTP"), Some((0, 5, 12)), None, "engine-unsupported"),
    cap(Engine::Sglang, What::Method("NEXTN"), None, None, "engine-unsupported"),
    cap(Engine::Sglang, What::Method("NGRAM"), None, None, "engine-unsupported"),
    cap(Engine::Sglang, What::Method("STANDALONE"), None, None, "engine-unsupported"),
    cap(Engine::Sglang, What::Method("UNO"), Some((0, 5, 20)), None, "engine-unsupported"),
    // llama.cpp's draft-mtp graphs at b11312 (0c1e570): the architectures it builds an MTP draft for.
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("qwen35"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("qwen35moe"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("gemma4"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("step35"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("cohere2moe"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("deepseek2"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("qwen3next"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("deepseek4"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("glm-dsa"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("mimo2"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("deepseek32"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("glm4moe"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("bailingmoe3"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("nemotron_h_moe"), None, None, "engine-unsupported"),
    cap(Engine::LlamaCpp, What::DraftMtpArchitecture("hy_v3"), None, None, "engine-unsupported"),

    // How an engine reads a field where engines differ.
    // SGLang 0.5.23's parse_dflash_draft_config takes a None list as missing.
    cap(Engine::Sglang, What::NullLayerIdsAbsent, None, None, "target-layer-ids-missing"),
    // vLLM's draft-model proposer maps ids between tokenizers (v1/spec_decode/draft_model.py,
    // llm_base_proposer.py); 0.34.0, whose V2 runner replaced them, has no such option.
    cap(Engine::Vllm, What::HeterogeneousVocab, None, Some((0, 33, ANY_PATCH)), "draft-model-vocab-mismatch"),
    // TensorRT-LLM's decoding types (DecodingBaseConfig.from_dict, llmapi/llm_args.py): the
    // 1.2 line at d4b1e8e, PR 10124 (Eagle3) and the newest code read after it, as 1.3 on (the
    // release candidate that took it is estimated by date: the 1.3 line is judged as after).
    // Eagle3 is not refused on 1.2: the code read before PR 10124 is a 1.2.0rc5-era main, and
    // whether 1.2.0 and 1.2.1 (the newest stable) took the PR is not known, so a refusal there
    // would be a guess against the commonest correct file.
    cap(Engine::Trtllm, What::Method("MTP"), None, None, "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("Eagle"), None, None, "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("NGram"), None, None, "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("Medusa"), None, None, "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("AUTO"), None, None, "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("SaveState"), None, None, "engine-unsupported"),
    // The spellings of the newest code's class literals were not read resolved: both kept.
    cap(Engine::Trtllm, What::Method("DraftTarget"), None, None, "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("UserProvided"), None, None, "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("Lookahead"), None, Some((1, 2, ANY_PATCH)), "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("Suffix"), None, Some((1, 2, ANY_PATCH)), "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("Eagle3"), None, None, "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("Draft_Target"), Some((1, 3, 0)), None, "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("User_Provided"), Some((1, 3, 0)), None, "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("SA"), Some((1, 3, 0)), None, "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("PARD"), Some((1, 3, 0)), None, "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("DFlash"), Some((1, 3, 0)), None, "engine-unsupported"),
    cap(Engine::Trtllm, What::Method("DSpark"), Some((1, 3, 0)), None, "engine-unsupported"),
    // vllm-ascend's own proposer dispatch (`get_spec_decode_method`, vllm_ascend/spec_decode/
    // __init__.py), read in its wheels from 0.13.0 to 0.26.0rc1: where it differs from vLLM's
    // methods at the release it pins. 0.19.1rc1 refuses dflash under its pinned vLLM 0.19.1
    // ("VLLM v0.19.1 doesn't support dflash now"); older releases have no DFlash proposer.
    // The other methods (eagle, eagle3, mtp, ngram) are vLLM's at the pinned release.
    cap(Engine::VllmAscend, What::Method("dflash"), Some((0, 20, 2)), None, "engine-unsupported"),
    cap(Engine::VllmAscend, What::Method("dspark"), Some((0, 24, 0)), None, "engine-unsupported"),
    cap(Engine::VllmAscend, What::Method("draft_model"), Some((0, 18, 0)), None, "engine-unsupported"),
    cap(Engine::VllmAscend, What::Method("medusa"), Some((0, 15, 0)), None, "engine-unsupported"),
    cap(Engine::VllmAscend, What::Method("suffix"), Some((0, 13, 0)), None, "engine-unsupported"),
    // Drafter architectures vllm-ascend registers itself (vllm_ascend/models/__init__.py) before
    // the vLLM release it pins has them: Kimi K3's DSpark stages in 0.26.0rc1 (vLLM 0.27.1 on).
    cap(Engine::VllmAscend, What::DrafterArchitecture("K3DSparkModel"), Some((0, 26, 0)), None, "engine-unsupported"),
    // mlx-lm (server.py, generate.py; 0.28.4 to 0.32.2): `--draft-model` is loaded by `load` like
    // any model, by its config's model_type, its weights strictly, so a draft language model is
    // the one thing it drafts with; it has no drafter registry, so a DFlash or DSpark drafter's
    // architecture is registered at no release (its missing embedding fails the strict load).
    cap(Engine::MlxLm, What::Method(super::mlx_lm::DRAFT), None, None, "engine-unsupported"),
    // mlx-vlm's `--draft-kind` choices (server/cli.py, generate/dispatch.py; 0.6.10 to 0.7.10).
    // Its drafter classes are not listed: an architecture with no row is not judged.
    cap(Engine::MlxVlm, What::Method("dflash"), None, None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::Method("eagle3"), None, None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::Method("mtp"), None, None, "engine-unsupported"),
    // A native checkpoint (a target that bundles its MTP layers) named as mlx-vlm's drafter:
    // up to 0.7.6 `load_drafter` loads it with `load_model`, the whole target model, whose class
    // has no drafter methods, so the first request raises AttributeError (the dflash kind, which
    // up to 0.6.17 it resolves such a checkpoint to by default, mlx-vlm#2120: on
    // `drafter.config.target_layer_ids`; the mtp kind: on `draft_model.reset`). From 0.7.8 it
    // splits the head out in memory for the model types of `MTP_SPLITTERS` (mtp_split.py);
    // 0.7.9 adds nemotron_h. Any other model type still loads whole.
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("deepseek_v4"), Some((0, 7, 8)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("glm4_moe_lite"), Some((0, 7, 8)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("glm5_next"), Some((0, 7, 8)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("glm5_next_text"), Some((0, 7, 8)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("glm_moe_dsa"), Some((0, 7, 8)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("hy_v4"), Some((0, 7, 8)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("inkling"), Some((0, 7, 8)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("inkling_mm_model"), Some((0, 7, 8)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("qwen3_5"), Some((0, 7, 8)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("qwen3_5_moe"), Some((0, 7, 8)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("qwen3_next"), Some((0, 7, 8)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("qwen4_exp"), Some((0, 7, 8)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("qwen4_exp_text"), Some((0, 7, 8)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("nemotron_h"), Some((0, 7, 9)), None, "engine-unsupported"),
    cap(Engine::MlxVlm, What::NativeMtpCheckpoint("nemotron_h_nano_omni"), Some((0, 7, 9)), None, "engine-unsupported"),
    // tpu-inference's proposer dispatch (`_init_speculative_decoding`, runner/tpu_runner.py),
    // read in every wheel from 0.18.0 to 0.32.0: ngram and EAGLE-3 throughout; from 0.22 every
    // EAGLE kind vLLM's `use_eagle()` names goes to its EAGLE-3 proposer, and its speculative
    // manager feeds MTP the last hidden state (MTP served from 0.22); DFlash from 0.25. Any
    // other method raises NotImplementedError ("Unsupported speculative decoding method"). EAGLE-1
    // and DSpark reach the EAGLE-3 proposer through `use_eagle()` (from 0.22; DSpark is in it at
    // the vLLM 0.25 it pins from 0.25): accepted, though how that proposer serves them was not read.
    cap(Engine::TpuInference, What::Method("ngram"), None, None, "engine-unsupported"),
    cap(Engine::TpuInference, What::Method("eagle3"), None, None, "engine-unsupported"),
    cap(Engine::TpuInference, What::Method("mtp"), Some((0, 22, 0)), None, "engine-unsupported"),
    cap(Engine::TpuInference, What::Method("dflash"), Some((0, 25, 0)), None, "engine-unsupported"),
    cap(Engine::TpuInference, What::Method("eagle"), Some((0, 22, 0)), None, "engine-unsupported"),
    cap(Engine::TpuInference, What::Method("dspark"), Some((0, 25, 0)), None, "engine-unsupported"),
    // An EAGLE-3 head's `use_aux_hidden_state: false`: vLLM's llama_eagle3.py reads it (0.25.1
    // to 0.34.0); no tpu-inference release reads it (models/jax/llama_eagle3.py builds fc for
    // three hidden states at every release read; tpu-inference#2841).
    cap(Engine::Vllm, What::AuxHiddenStatesOff, None, None, "engine-unsupported"),
    lacks(Engine::TpuInference, What::AuxHiddenStatesOff, None, None, "engine-unsupported"),
];
