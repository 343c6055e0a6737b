//! A NextN layer's `eh_proj` (the projection of the concatenated embedding and hidden state):
//! several MTP classes build it as a plain `nn.Linear` whatever the exclude list says, so
//! whether the checkpoint may store it quantized, or must, depends on the family, the quant
//! method and the engine release, not on the list (read in every vLLM wheel 0.25.1–0.34.0 and
//! SGLang 0.5.10–0.5.23):
//!
//! - DeepSeek-V3/V3.2, GLM-4.5 and GLM-5 DSA: plain in vLLM at every release (deepseek_mtp.py,
//!   glm4_moe_mtp.py, models/deepseek_v32/*/mtp.py). SGLang builds GLM-4.5's plain too
//!   (glm4_moe_nextn.py), DeepSeek's and GLM-5 DSA's (deepseek_nextn.py) under the quark
//!   config from 0.5.11, as `model.eh_proj`, and plain under every other method;
//! - Bailing 2.5 (hybrid): plain in vLLM (bailing_moe_mtp.py); under the quant config, by the
//!   checkpoint's name, in SGLang (bailing_moe_nextn.py), except under ModelOpt FP4, which
//!   SGLang drops for the whole NextN layer.
//!
//! So a BF16 `eh_proj` the list does not name fails only where an engine quantizes it (the
//! one-engine rows), and one stored quantized fails where an engine builds it plain: its scales
//! have no parameter (vLLM's loaders look each name up, `params_dict[name]`: a KeyError) and a
//! packed weight does not fit ([`QUANTIZED_BY_ENGINE`] and its siblings).

use super::cx::Cx;
use super::mtp_head::MtpModule;
use super::quant_exclude::{Exclusions, Method, Verdict};
use crate::diagnostic::Severity;
use crate::rules::{ByEngine, Engine, ReleaseRow};

/// Targets whose NextN layer SGLang builds with deepseek_nextn.py's `DeepseekModelNextN`
/// (GLM-5 DSA through `GlmMoeDsaForCausalLMNextN` from 0.5.16), which takes the quark config
/// for `eh_proj` from 0.5.11.
pub(super) const DEEPSEEK_NEXTN: &[&str] = &[
    "DeepseekV3ForCausalLM",
    "DeepseekV32ForCausalLM",
    "GlmMoeDsaForCausalLM",
];
/// Targets whose NextN `eh_proj` both engines build plain at every release read (SGLang
/// glm4_moe_nextn.py, vLLM glm4_moe_mtp.py).
pub(super) const PLAIN_NEXTN: &[&str] = &["Glm4MoeForCausalLM"];

/// Targets whose NextN layer vLLM builds with bailing_moe_mtp.py (Ling/Ring 2.5, the hybrid
/// linear-attention line: vLLM's speculative config maps `bailing_hybrid` and
/// `BailingMoeV2_5ForCausalLM` to it), whose `eh_proj` is a plain nn.Linear at every release
/// read, 0.25.1 to 0.34.0; SGLang's bailing_moe_nextn.py builds it under the quant config
/// (0.5.10 to 0.5.23). Bailing V3 is not here: vLLM's bailing_moe_v3_mtp.py quantizes it too.
const BAILING_HYBRID_ARCHITECTURES: &[&str] = &["BailingMoeV2_5ForCausalLM"];
const BAILING_HYBRID_MODEL_TYPES: &[&str] = &["bailing_hybrid"];

/// Who builds a NextN `eh_proj` otherwise than the list reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EhProj {
    /// Plain in vLLM; under the quark config in SGLang from 0.5.11 ([`EH_PROJ_BY_ENGINE`]).
    SglangQuark,
    /// Plain in vLLM; under the quant config, by the checkpoint's name, in SGLang at every
    /// release read (Bailing 2.5, [`BAILING_EH_PROJ_BY_ENGINE`]).
    SglangQuantized,
    /// Plain in both engines: a BF16 weight loads wherever it is served.
    Plain,
}

/// The `eh_proj` of a NextN layer stored at `layer_prefix` (`model.layers.61.`) of a target
/// named in [`DEEPSEEK_NEXTN`] or [`PLAIN_NEXTN`], or a Bailing 2.5 one, under any quant method;
/// `None` for any other module.
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
    } else if is_bailing_hybrid(cx) {
        // SGLang's Bailing NextN class drops the quant config for the whole layer under
        // `modelopt_fp4` (bailing_moe_nextn.py), as vLLM's nn.Linear does for `eh_proj`.
        Some(if ex.modelopt_fp4 {
            EhProj::Plain
        } else {
            EhProj::SglangQuantized
        })
    } else {
        None
    }
}

/// A Bailing 2.5 (hybrid) target, as vLLM's speculative config recognises it.
fn is_bailing_hybrid(cx: &Cx) -> bool {
    let root = cx.v.config.root();
    let architectures = crate::config::architectures(root);
    architectures
        .iter()
        .any(|a| BAILING_HYBRID_ARCHITECTURES.contains(&a.as_str()))
        || root
            .get("model_type")
            .and_then(|t| t.as_str())
            .is_some_and(|t| BAILING_HYBRID_MODEL_TYPES.contains(&t))
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

/// Bailing 2.5, a NextN `eh_proj` stored BF16 that the list leaves quantized.
pub(super) const BAILING_EH_PROJ_BY_ENGINE: ByEngine = ByEngine {
    case: Some("a Bailing 2.5 (hybrid) NextN `eh_proj` stored BF16 that the exclude list does not name"),
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            None,
            "builds the NextN `eh_proj` as a plain nn.Linear at every release read, 0.25.1 to 0.34.0 \
(bailing_moe_mtp.py): the BF16 weight loads",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "builds `eh_proj` as a ReplicatedLinear under the quant config, named as in the checkpoint, at every \
release read, 0.5.10 to 0.5.23 (bailing_moe_nextn.py; not under modelopt_fp4): a quantized layer for the BF16 \
weight",
        ),
    ],
};

/// vLLM's row for a NextN `eh_proj` stored quantized: a plain nn.Linear at every release.
const VLLM_PLAIN_QUANTIZED_FAILS: ReleaseRow = ReleaseRow::any_version(
    Engine::Vllm,
    Some(Severity::Error),
    "builds the NextN `eh_proj` as a plain nn.Linear at every release read, 0.25.1 to 0.34.0 (deepseek_mtp.py, \
glm4_moe_mtp.py, bailing_moe_mtp.py): the checkpoint's scale has no parameter (`params_dict[name]`, a KeyError) \
and a packed weight does not fit",
);

/// A NextN `eh_proj` stored quantized that both engines build plain (DeepSeek-style targets
/// under any method but quark, GLM-4.5 under any, Bailing 2.5 under ModelOpt FP4).
pub(super) const QUANTIZED_BY_ENGINE: ByEngine = ByEngine {
    case: Some("a NextN `eh_proj` stored quantized that both engines build as a plain nn.Linear"),
    no_engine: Some(Severity::Error),
    rows: &[
        VLLM_PLAIN_QUANTIZED_FAILS,
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "builds it as a plain nn.Linear (deepseek_nextn.py under every method but quark, glm4_moe_nextn.py, \
bailing_moe_nextn.py under modelopt_fp4): the quantized weight and its scale do not load",
        ),
    ],
};

/// quark, a DeepSeek-V3/V3.2 or GLM-5 DSA NextN `eh_proj` stored quantized.
pub(super) const QUANTIZED_QUARK_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, a DeepSeek-V3/V3.2 or GLM-5 DSA NextN `eh_proj` stored quantized"),
    no_engine: Some(Severity::Warning),
    rows: &[
        VLLM_PLAIN_QUANTIZED_FAILS,
        ReleaseRow::until_release(
            Engine::Sglang,
            (0, 5, 10),
            Some(Severity::Error),
            "builds `eh_proj` as a plain nn.Linear (deepseek_nextn.py): the quantized weight does not load",
        ),
        ReleaseRow::from_release(
            Engine::Sglang,
            (0, 5, 11),
            None,
            "builds `eh_proj` under the quark config (deepseek_nextn.py): it loads",
        ),
    ],
};

/// Bailing 2.5, a NextN `eh_proj` stored quantized.
pub(super) const QUANTIZED_BAILING_BY_ENGINE: ByEngine = ByEngine {
    case: Some("a Bailing 2.5 (hybrid) NextN `eh_proj` stored quantized"),
    no_engine: Some(Severity::Warning),
    rows: &[
        VLLM_PLAIN_QUANTIZED_FAILS,
        ReleaseRow::any_version(
            Engine::Sglang,
            None,
            "builds `eh_proj` under the quant config at every release read (bailing_moe_nextn.py): it loads",
        ),
    ],
};

impl EhProj {
    /// The rows for an `eh_proj` of this kind stored quantized.
    pub(super) fn quantized_table(self) -> &'static ByEngine {
        match self {
            EhProj::Plain => &QUANTIZED_BY_ENGINE,
            EhProj::SglangQuark => &QUANTIZED_QUARK_BY_ENGINE,
            EhProj::SglangQuantized => &QUANTIZED_BAILING_BY_ENGINE,
        }
    }
}
