//! vLLM's quark handling of an MTP head, where it differs from matching the exclude list module
//! by module under the checkpoint's names (read in every vLLM wheel 0.25.1–0.34.0, and SGLang's
//! side of the same modules in 0.5.10–0.5.23):
//!
//! - a DeepSeek-style NextN layer's `eh_proj` (DeepSeek-V3/V3.2, GLM-4.5, GLM-5 DSA) is a plain
//!   `nn.Linear` in vLLM at every release (deepseek_mtp.py, glm4_moe_mtp.py,
//!   models/deepseek_v32/*/mtp.py), whatever `exclude` says: a BF16 `eh_proj` loads there.
//!   SGLang builds GLM-4.5's plain too (glm4_moe_nextn.py), but DeepSeek's and GLM-5 DSA's
//!   (deepseek_nextn.py) under the quark config from 0.5.11, as `model.eh_proj`;
//! - a MoE's routed experts are one module (`….mlp.experts`), matched by its own name (the
//!   exclude side lives in `engine::exclude::quant`): up to 0.25 an excluded MoE gets a linear
//!   method its constructor refuses, and entries naming the experts one by one match nothing,
//!   so the BF16 experts of amd/GLM-5.2-MXFP4's MTP layer met MXFP4 parameters
//!   (ROCm/vllm#1022); from 0.26.0 both forms build it unquantized (vllm#46757).
//!
//! Everything else in the head is matched as the tool matches it (exact names or `re:` against
//! the checkpoint's names; the fused q/k/v and gate/up projections through the model's packed
//! mapping at every release; `mtp.fc` under the quark config, no bypass as for ModelOpt NVFP4).

use super::cx::Cx;
use super::mtp_head::MtpModule;
use super::quant_exclude::{Exclusions, Method, Verdict};
use crate::diagnostic::Severity;
use crate::engine::ANY_PATCH;
use crate::rules::{ByEngine, Engine, ReleaseRow};

/// Targets whose NextN layer SGLang builds with deepseek_nextn.py's `DeepseekModelNextN`
/// (GLM-5 DSA through `GlmMoeDsaForCausalLMNextN` from 0.5.16), which takes the quark config
/// for `eh_proj` from 0.5.11.
const DEEPSEEK_NEXTN: &[&str] = &[
    "DeepseekV3ForCausalLM",
    "DeepseekV32ForCausalLM",
    "GlmMoeDsaForCausalLM",
];
/// Targets whose NextN `eh_proj` both engines build plain at every release read (SGLang
/// glm4_moe_nextn.py, vLLM glm4_moe_mtp.py).
const PLAIN_NEXTN: &[&str] = &["Glm4MoeForCausalLM"];

/// Who builds a NextN `eh_proj` under quark otherwise than the list reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EhProj {
    /// Plain in vLLM; under the quark config in SGLang from 0.5.11 ([`EH_PROJ_BY_ENGINE`]).
    SglangQuark,
    /// Plain in both engines: a BF16 weight loads wherever it is served.
    Plain,
}

/// The `eh_proj` of a NextN layer stored at `layer_prefix` (`model.layers.61.`) of a target
/// named in [`DEEPSEEK_NEXTN`] or [`PLAIN_NEXTN`], under any quant method; `None` for any other
/// module.
pub(super) fn eh_proj(
    cx: &Cx,
    ex: &Exclusions,
    m: &MtpModule,
    layer_prefix: Option<&str>,
) -> Option<EhProj> {
    if m.name.strip_prefix(layer_prefix?)? != "eh_proj" {
        return None;
    }
    let architectures = crate::config::architectures(cx.v.config.root());
    let first = architectures.first()?.as_str();
    if DEEPSEEK_NEXTN.contains(&first) {
        // SGLang hands deepseek_nextn.py's `eh_proj` the quant config under quark only; under
        // every other method (fp8, compressed-tensors, ModelOpt…) both engines build it as a
        // plain nn.Linear (sglang deepseek_nextn.py, 0.5.23: `if quant_config … == "quark"`).
        Some(if ex.method == Method::Quark {
            EhProj::SglangQuark
        } else {
            EhProj::Plain
        })
    } else if PLAIN_NEXTN.contains(&first) {
        Some(EhProj::Plain)
    } else {
        None
    }
}

/// SGLang's runtime name of a DeepSeek NextN `eh_proj`, when the list leaves it quantized under
/// that name too (an entry naming `model.eh_proj`, or the whole layer, makes SGLang build it
/// BF16 at some releases: not judged here).
pub(super) fn sglang_quantizes_eh_proj(ex: &Exclusions, layer_prefix: &str) -> bool {
    ex.verdict("model.eh_proj") == Verdict::Quantized
        && ex.verdict(layer_prefix.trim_end_matches('.')) == Verdict::Quantized
}

/// quark, a DeepSeek / GLM-5 DSA NextN `eh_proj` stored BF16 that the list leaves quantized.
pub(super) const EH_PROJ_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, a DeepSeek-V3/V3.2 or GLM-5 DSA NextN `eh_proj` stored BF16 that `exclude` does not name"),
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            None,
            "builds the NextN `eh_proj` as a plain nn.Linear at every release read, 0.25.1 to 0.34.0 \
(deepseek_mtp.py; models/deepseek_v32/nvidia and amd mtp.py from 0.29.0): the BF16 weight loads",
        ),
        ReleaseRow::until_release(
            Engine::Sglang,
            (0, 5, 10),
            None,
            "builds `eh_proj` as a plain nn.Linear (deepseek_nextn.py): the BF16 weight loads",
        ),
        ReleaseRow::from_release(
            Engine::Sglang,
            (0, 5, 11),
            Some(Severity::Error),
            "builds `eh_proj` as a ReplicatedLinear under the quark config, named `model.eh_proj` \
(deepseek_nextn.py): a quantized layer whose BF16 weight fails the loader's shape assertion",
        ),
    ],
};

/// quark, a routed expert of the head stored BF16 that the list excludes (its MoE named whole, or
/// modules under it).
pub(super) const EXPERTS_EXCLUDED_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, the MTP head's routed experts stored BF16 and excluded (the MoE named, or its experts one by one)"),
    no_engine: None,
    rows: &[
        ReleaseRow::until_release(
            Engine::Vllm,
            (0, 25, ANY_PATCH),
            Some(Severity::Error),
            "returns a linear method for an excluded MoE, which RoutedExperts' `assert isinstance(quant_method, \
FusedMoEMethodBase)` refuses, and matches entries naming the experts one by one to nothing, so the experts get \
quantized parameters and the BF16 weights fail to load (\"The size of tensor a (256) must match the size of tensor \
b (512)\", ROCm/vllm#1022 on amd/GLM-5.2-MXFP4; vllm#46757)",
        ),
        ReleaseRow::from_release(
            Engine::Vllm,
            (0, 26, 0),
            None,
            "builds an excluded MoE unquantized (UnquantizedFusedMoEMethod), an entry naming a module under it \
excluding it too (`check_children`, quark/utils.py)",
        ),
    ],
};

/// The verdict for a BF16 expert the list excludes, at the engine and release judged: an error
/// for vLLM up to 0.25, `None` elsewhere.
pub(super) fn experts_excluded(cx: &Cx) -> Option<Severity> {
    EXPERTS_EXCLUDED_BY_ENGINE
        .judge(cx.v.engine.as_ref())
        .map(|j| j.severity)
}
