//! quark and a MoE in the MTP head: the routed experts are one module (`….mlp.experts`), matched
//! by its own name (the exclude side lives in `engine::exclude::quant`), so how the list names
//! them decides what each engine release builds (read in every vLLM wheel 0.25.1–0.34.0 and
//! SGLang 0.5.10–0.5.23):
//!
//! - vLLM up to 0.25 gives an excluded MoE a linear method its constructor refuses, and matches
//!   entries naming the experts one by one to nothing, so the BF16 experts of amd/GLM-5.2-MXFP4's
//!   MTP layer met MXFP4 parameters (ROCm/vllm#1022); from 0.26.0 both forms build it
//!   unquantized (vllm#46757);
//! - SGLang builds an excluded MoE unquantized at every release, but matches entries naming the
//!   experts one by one only from 0.5.21 (`should_ignore_layer`); its GLM-5 DSA, Qwen3.5 and
//!   DeepSeek NextN classes get there earlier by their own rules, its GLM-4.5 class never.
//!
//! Everything else in the head is matched as the tool matches it (exact names or `re:` against
//! the checkpoint's names; the fused q/k/v and gate/up projections through the model's packed
//! mapping at every release; `mtp.fc` under the quark config, no bypass as for ModelOpt NVFP4);
//! a NextN layer's `eh_proj` is [`super::eh_proj`]'s.

use super::cx::Cx;
use super::eh_proj::{DEEPSEEK_NEXTN, PLAIN_NEXTN};
use crate::diagnostic::Severity;
use crate::engine::ANY_PATCH;
use crate::rules::{ByEngine, Engine, ReleaseRow};

/// vLLM's rows for a BF16 routed expert of the head that quark's list excludes, either form.
const VLLM_EXCLUDED_MOE_FAILS: ReleaseRow = ReleaseRow::until_release(
    Engine::Vllm,
    (0, 25, ANY_PATCH),
    Some(Severity::Error),
    "returns a linear method for an excluded MoE, which RoutedExperts' `assert isinstance(quant_method, \
FusedMoEMethodBase)` refuses, and matches entries naming the experts one by one to nothing, so the experts get \
quantized parameters and the BF16 weights fail to load (\"The size of tensor a (256) must match the size of tensor \
b (512)\", ROCm/vllm#1022 on amd/GLM-5.2-MXFP4; vllm#46757)",
);
const VLLM_EXCLUDED_MOE_LOADS: ReleaseRow = ReleaseRow::from_release(
    Engine::Vllm,
    (0, 26, 0),
    None,
    "builds an excluded MoE unquantized (UnquantizedFusedMoEMethod), an entry naming a module under it \
excluding it too (`check_children`, quark/utils.py)",
);

/// quark, a routed expert of the head stored BF16 whose MoE the list names whole (its name, or a
/// `re:` matching it).
pub(super) const EXPERTS_MOE_EXCLUDED_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, the MTP head's routed experts stored BF16 and excluded by naming their MoE (`….mlp.experts`)"),
    no_engine: None,
    rows: &[
        VLLM_EXCLUDED_MOE_FAILS,
        VLLM_EXCLUDED_MOE_LOADS,
        ReleaseRow::any_version(
            Engine::Sglang,
            None,
            "returns no method for an excluded MoE (quark.py get_quant_method), and FusedMoE falls back to \
UnquantizedFusedMoEMethod (fused_moe_triton/layer.py), at every release read, 0.5.10 to 0.5.23: it loads",
        ),
    ],
};

/// quark, a routed expert of the head stored BF16 that the list excludes only by naming modules
/// under its MoE (`….mlp.experts.0.down_proj`, amd/GLM-5.2-MXFP4's form), on a target whose
/// NextN layer SGLang matches under the checkpoint's names or its own remapped ones (DeepSeek-V3,
/// V3.2, GLM-5 DSA; GLM-5 DSA before 0.5.16 is [`super::mtp`]'s naming rule).
pub(super) const EXPERTS_NAMED_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, the MTP head's routed experts stored BF16 and excluded only by entries naming the experts one by one"),
    no_engine: Some(Severity::Warning),
    rows: &[
        VLLM_EXCLUDED_MOE_FAILS,
        VLLM_EXCLUDED_MOE_LOADS,
        SGLANG_EXPERT_ENTRIES_MISSED,
        SGLANG_EXPERT_ENTRIES_EXCLUDE,
    ],
};

const SGLANG_EXPERT_ENTRIES_MISSED: ReleaseRow = ReleaseRow::until_release(
    Engine::Sglang,
    (0, 5, 20),
    Some(Severity::Error),
    "matches quark's list against the MoE's own name only (should_ignore_layer, quark/utils.py): entries naming \
its experts match nothing, so the MoE is built quantized and the BF16 expert weights do not fit its parameters",
);
const SGLANG_EXPERT_ENTRIES_EXCLUDE: ReleaseRow = ReleaseRow::from_release(
    Engine::Sglang,
    (0, 5, 21),
    None,
    "excludes a MoE when an entry names a module under it (should_ignore_layer: \"excludes may name experts \
individually\", quark/utils.py): it loads",
);

/// The same on a Qwen3.5 head: every such entry starts `mtp.`, so SGLang's Qwen3.5 MTP class
/// builds the whole head BF16 from 0.5.12 ([`super::quark_head`]); 0.5.10 and 0.5.11 match the
/// list as above.
pub(super) const EXPERTS_NAMED_QWEN35_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, a Qwen3.5 head's routed experts stored BF16 and excluded only by entries naming the experts one by one"),
    no_engine: Some(Severity::Warning),
    rows: &[
        VLLM_EXCLUDED_MOE_FAILS,
        VLLM_EXCLUDED_MOE_LOADS,
        ReleaseRow::until_release(
            Engine::Sglang,
            (0, 5, 11),
            Some(Severity::Error),
            "matches quark's list against the MoE's own name only (should_ignore_layer, quark/utils.py), and has \
no whole-head rule yet: the MoE is built quantized and the BF16 expert weights do not fit",
        ),
        ReleaseRow::from_release(
            Engine::Sglang,
            (0, 5, 12),
            None,
            "builds the whole head BF16 for the list's `mtp.` entries (qwen3_5_mtp.py; from 0.5.21 for one naming \
`mlp.experts`, as these do): it loads",
        ),
    ],
};

/// The same on a GLM-5 DSA target: SGLang's GLM-5 DSA NextN class adds the MoE's runtime name
/// `model.decoder.mlp.experts` to the list when an entry names an expert of the MTP layer, from
/// 0.5.16 (glm4_moe.py `_resolve_nextn_quant_config`, sglang#30265); before, the entries are not
/// remapped at all ([`super::mtp`]'s naming rule reports that too).
pub(super) const EXPERTS_NAMED_GLM_DSA_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, a GLM-5 DSA NextN layer's routed experts stored BF16 and excluded only by entries naming the experts one by one"),
    no_engine: Some(Severity::Warning),
    rows: &[
        VLLM_EXCLUDED_MOE_FAILS,
        VLLM_EXCLUDED_MOE_LOADS,
        ReleaseRow::until_release(
            Engine::Sglang,
            (0, 5, 15),
            Some(Severity::Error),
            "matches quark's list against the MoE's own name only and does not remap the checkpoint's entries: \
the MoE is built quantized and the BF16 expert weights do not fit",
        ),
        ReleaseRow::from_release(
            Engine::Sglang,
            (0, 5, 16),
            None,
            "adds the MoE's runtime name `model.decoder.mlp.experts` when an entry names an expert of the MTP layer \
(glm4_moe.py `_resolve_nextn_quant_config`, sglang#30265): it loads",
        ),
    ],
};

/// The same on a DeepSeek-V3/V3.2 or GLM-5 DSA target whose list also names the whole NextN
/// layer (`model.layers.61`): from 0.5.11 SGLang's DeepSeek NextN class builds such a layer with
/// no quant config at all (deepseek_nextn.py `should_ignore_layer(mapped_prefix, …)`; GLM-5 DSA's
/// class adds the MoE's runtime name itself from 0.5.16), so only 0.5.10 fails.
pub(super) const EXPERTS_NAMED_LAYER_EXCLUDED_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, a DeepSeek-style NextN layer's routed experts stored BF16, named one by one, the whole layer named too"),
    no_engine: Some(Severity::Warning),
    rows: &[
        VLLM_EXCLUDED_MOE_FAILS,
        VLLM_EXCLUDED_MOE_LOADS,
        ReleaseRow::until_release(
            Engine::Sglang,
            (0, 5, 10),
            Some(Severity::Error),
            "has no whole-layer rule yet and matches quark's list against the MoE's own name only: the MoE is \
built quantized and the BF16 expert weights do not fit",
        ),
        ReleaseRow::from_release(
            Engine::Sglang,
            (0, 5, 11),
            None,
            "builds a NextN layer the list names whole with no quant config (deepseek_nextn.py; GLM-5 DSA from \
0.5.16 through the MoE's runtime name, glm4_moe.py): it loads",
        ),
    ],
};

/// The same on a GLM-4.5 target: SGLang builds its NextN layer as `model.decoder.*` and never
/// remaps the checkpoint's entries (glm4_moe_nextn.py, 0.5.10 to 0.5.23), which
/// [`super::mtp`]'s naming rule reports; here only vLLM's side.
pub(super) const EXPERTS_NAMED_GLM45_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, a GLM-4.5 NextN layer's routed experts stored BF16 and excluded only by entries naming the experts one by one"),
    no_engine: Some(Severity::Warning),
    rows: &[
        VLLM_EXCLUDED_MOE_FAILS,
        VLLM_EXCLUDED_MOE_LOADS,
        ReleaseRow::any_version(
            Engine::Sglang,
            None,
            "builds the NextN layer as `model.decoder.*`, which no checkpoint entry names: reported as \
weights-mtp-unquantized-one-engine",
        ),
    ],
};

/// How a BF16 routed expert of the head is excluded, and so which table judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ExpertsExcluded {
    /// Its MoE named whole: [`EXPERTS_MOE_EXCLUDED_BY_ENGINE`].
    Moe,
    /// Only modules under the MoE named, on a DeepSeek-style target: [`EXPERTS_NAMED_BY_ENGINE`].
    Named,
    /// The same on a Qwen3.5 head: [`EXPERTS_NAMED_QWEN35_BY_ENGINE`].
    NamedQwen35,
    /// The same on a GLM-5 DSA target: [`EXPERTS_NAMED_GLM_DSA_BY_ENGINE`].
    NamedGlmDsa,
    /// The same on a DeepSeek-style target whose list names the whole NextN layer too:
    /// [`EXPERTS_NAMED_LAYER_EXCLUDED_BY_ENGINE`].
    NamedLayerExcluded,
    /// The same on a GLM-4.5 target: [`EXPERTS_NAMED_GLM45_BY_ENGINE`].
    NamedGlm45,
}

impl ExpertsExcluded {
    /// The case of a BF16 expert the list excludes whole (`whole`) or by its experts' names, on
    /// the target `cx` describes.
    /// `layer_excluded`: the list names the expert's whole NextN layer (`model.layers.61`).
    pub(super) fn of(cx: &Cx, whole: bool, layer_excluded: bool) -> Self {
        if whole {
            return ExpertsExcluded::Moe;
        }
        let root = cx.v.config.root();
        let architectures = crate::config::architectures(root);
        let first = architectures.first().map(String::as_str);
        if layer_excluded && first.is_some_and(|a| DEEPSEEK_NEXTN.contains(&a)) {
            ExpertsExcluded::NamedLayerExcluded
        } else if first.is_some_and(|a| PLAIN_NEXTN.contains(&a)) {
            ExpertsExcluded::NamedGlm45
        } else if first == Some("GlmMoeDsaForCausalLM") {
            ExpertsExcluded::NamedGlmDsa
        } else if super::quark_head::is_qwen35(root) {
            ExpertsExcluded::NamedQwen35
        } else {
            ExpertsExcluded::Named
        }
    }

    pub(super) fn table(self) -> &'static ByEngine {
        match self {
            ExpertsExcluded::Moe => &EXPERTS_MOE_EXCLUDED_BY_ENGINE,
            ExpertsExcluded::Named => &EXPERTS_NAMED_BY_ENGINE,
            ExpertsExcluded::NamedQwen35 => &EXPERTS_NAMED_QWEN35_BY_ENGINE,
            ExpertsExcluded::NamedGlmDsa => &EXPERTS_NAMED_GLM_DSA_BY_ENGINE,
            ExpertsExcluded::NamedLayerExcluded => &EXPERTS_NAMED_LAYER_EXCLUDED_BY_ENGINE,
            ExpertsExcluded::NamedGlm45 => &EXPERTS_NAMED_GLM45_BY_ENGINE,
        }
    }

    /// For entries naming the experts one by one: what SGLang does with them on this family, and
    /// ` or SGLang X` — the first release that loads such a head (empty where none does).
    pub(super) fn sglang_named(self) -> (&'static str, &'static str) {
        match self {
            ExpertsExcluded::NamedQwen35 => (
                "SGLang 0.5.10 and 0.5.11 likewise (0.5.12 and later build this head BF16 whole for its `mtp.` \
                 entries)",
                " or SGLang 0.5.12",
            ),
            ExpertsExcluded::NamedGlmDsa => (
                "SGLang up to 0.5.15 likewise (0.5.16 and later add the MoE's runtime name for such entries)",
                " or SGLang 0.5.16",
            ),
            ExpertsExcluded::NamedLayerExcluded => (
                "SGLang 0.5.10 likewise (0.5.11 and later build a NextN layer the list names whole unquantized)",
                " or SGLang 0.5.11",
            ),
            ExpertsExcluded::NamedGlm45 => (
                "SGLang builds this layer under its own names (weights-mtp-unquantized-one-engine)",
                "",
            ),
            ExpertsExcluded::Named | ExpertsExcluded::Moe => (
                "SGLang up to 0.5.20 likewise (should_ignore_layer, quark/utils.py; 0.5.21 and later exclude a MoE \
                 for an entry naming a module under it)",
                " or SGLang 0.5.21",
            ),
        }
    }

    /// The verdict at the engine and release judged; `None` where it loads.
    pub(super) fn verdict(self, cx: &Cx) -> Option<Severity> {
        self.table().judge(cx.v.engine.as_ref()).map(|j| j.severity)
    }
}
