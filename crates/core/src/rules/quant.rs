//! Quantization: the target's and the drafter's `quantization_config` against the family and
//! the engine. A drafter is trained on the target's full-precision hidden states and emits
//! full-precision logits; what the engines do when either model is quantized differs (SGLang
//! hands an unquantized draft the target's `--quantization`, serves a quantized DFlash2 draft
//! without complaint and with nothing accepted; rotated targets feed a drafter hidden states in
//! another basis). A model without `quantization_config` is never flagged here.

use super::{Applies, ByEngine, Ctx, Engine, Family, LintCode, ReleaseRow, Rule};
use crate::config::QuantFacts;
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::Path;

/// The rules here whose severity follows the engine and its version.
pub(super) const BY_ENGINE: &[(LintCode, &ByEngine)] = &[
    (
        LintCode::QuantizedBlockDrafter,
        &QUANTIZED_BLOCK_DRAFTER_BY_ENGINE,
    ),
    (LintCode::DsparkNvfp4Target, &DSPARK_NVFP4_TARGET_BY_ENGINE),
    (LintCode::TargetQuantRotated, &TARGET_QUANT_ROTATED_EAGLE),
    (LintCode::TargetQuantRotated, &TARGET_QUANT_ROTATED_DFLASH),
    (LintCode::TargetQuantRotated, &TARGET_QUANT_ROTATED_DSPARK),
];

pub(super) const RULES: &[Rule] = &[
    QUANTIZED_BLOCK_DRAFTER,
    DSPARK_NVFP4_TARGET,
    TARGET_QUANT_ROTATED,
];

/// The drafter's own `quantization_config`.
fn drafter_quant(cx: &Ctx) -> Option<QuantFacts> {
    QuantFacts::from_root(cx.root)
}

/// The target's `quantization_config` (needs `--target`).
fn target_quant(cx: &Ctx) -> Option<QuantFacts> {
    cx.facts.and_then(|f| f.quantization.clone())
}

const QUANTIZED_BLOCK_DRAFTER: Rule = Rule {
    code: LintCode::QuantizedBlockDrafter,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a quantized DFlash-family drafter: SGLang served a W4A16 DFlash2 one with acceptance ~1.0 and no error",
        explanation: "A DFlash2 drafter quantized with compressed-tensors (W4A16: I32 packed weights) loads into \
SGLang's DFlash2DraftModel and serves, but its drafts are rejected almost always: acceptance length fell from 3.7 to \
~1.0, \"no error and no warning\", while the same weights unquantized work (sglang issue 39087, open: every SGLang \
release so far). An error under --engine sglang for that case (a DFlash2 drafter with compressed-tensors \
pack-quantized weights); any other quantized block drafter (an FP8 DFlash drafter, say) is a warning there, since \
no report covers it. vLLM loads quantized DFlash drafters once the draft's quant config \
reaches its fused layers (vllm PR 53122; INT8 W8A16 kept acceptance 4.16 vs 4.24 in BF16) and fails loudly at \
start-up before it: info under --engine vllm. A warning without an engine.",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: quantized_block_drafter,
};

const QUANTIZED_BLOCK_DRAFTER_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "serves a W4A16 DFlash2 drafter at acceptance ~1.0 with no error (issue 39087); other schemes and \
             families unreported: a warning",
        ),
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Info),
            "no report of a collapse",
        ),
    ],
};

/// What sglang issue 39087 reports: a DFlash2 drafter with packed integer weights
/// (compressed-tensors `pack-quantized`, W4A16). No other quantized drafter was reported there.
fn like_sglang_39087(cx: &Ctx, q: &QuantFacts) -> bool {
    cx.detection.name == Family::Dflash2
        && q.method == "compressed-tensors"
        && q.schemes.iter().any(|s| s == "PACK-QUANTIZED")
}

fn quantized_block_drafter(cx: &mut Ctx) {
    let Some(q) = drafter_quant(cx) else { return };
    if cx.embedded_dspark() {
        // A DeepSeek-V4 target's own config: its quantization is the target's.
        return;
    }
    let Some(mut severity) = cx.engine_severity() else {
        return;
    };
    // SGLang's row is the report's case; any other quantized block drafter is unreported there.
    let reported = like_sglang_39087(cx, &q);
    if !reported && severity == Severity::Error {
        severity = Severity::Warning;
    }
    let what = if reported {
        "SGLang serves a W4A16 DFlash2 drafter like this one with acceptance ~1.0 and no error (sglang issue \
         39087)"
    } else {
        "SGLang served a W4A16 DFlash2 drafter with acceptance ~1.0 and no error (sglang issue 39087); this \
         scheme or family was not reported, so measure acceptance"
    };
    cx.emit_as(
        severity,
        &Path::key("quantization_config"),
        format!(
            "the drafter is quantized ({}): {what}; serve the unquantized weights if acceptance is low",
            q.describe()
        ),
    );
}

const DSPARK_NVFP4_TARGET: Rule = Rule {
    code: LintCode::DsparkNvfp4Target,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a DSpark drafter for an NVFP4 target: vLLM drafted token 0 (acceptance length exactly 1.0)",
        explanation: "With an NVFP4 (ModelOpt) target, the official MXFP4 DSpark drafter served by vLLM proposed \
token 0 at every position: acceptance length exactly 1.0, throughput 3.55 → 2.57, no error (vllm PR 49133). An \
error under --engine vllm for releases without that fix, a warning without an engine; SGLang was not reported. \
Fires only when the target's quantization_config says NVFP4 (quant_algo / moe_quant_algo / an nvfp4 group format).",
    },
    applies: Applies::Only(&[Family::Dspark]),
    needs: &[],
    check: dspark_nvfp4_target,
};

const DSPARK_NVFP4_TARGET_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Error),
            "drafted token 0 for this pairing (PR 49133)",
        ),
        ReleaseRow::any_version(Engine::Sglang, None, "no such report"),
    ],
};

fn dspark_nvfp4_target(cx: &mut Ctx) {
    let Some(q) = target_quant(cx).filter(QuantFacts::is_nvfp4) else {
        return;
    };
    let Some(severity) = cx.engine_severity() else {
        return;
    };
    let own = drafter_quant(cx).map_or("unquantized".to_string(), |d| d.describe());
    cx.emit_as(
        severity,
        &Path::root(),
        format!(
            "the target is NVFP4 ({}) and the DSpark drafter is {own}: vLLM drafted token 0 for this pairing \
             (acceptance length exactly 1.0, vllm PR 49133); use a vLLM with that fix or a non-NVFP4 target",
            q.describe()
        ),
    );
}

const TARGET_QUANT_ROTATED: Rule = Rule {
    code: LintCode::TargetQuantRotated,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a rotated (QuaRot / SpinQuant) target: the drafter's fc reads hidden states in another basis",
        explanation: "QuaRot-style quantization multiplies the residual stream by an orthogonal (Hadamard) matrix, \
so the hidden states a drafter reads from the target are rotated; a drafter trained on the unrotated target gets \
inputs in another basis. EAGLE-3 on a QuaRot w8a8 target: acceptance length 1.07 instead of 3.09 (vllm-ascend \
issue 5974 and PR 7038). Upstream vLLM does not rotate the draft fc (its EAGLE-3 model feeds the aux hidden states to fc as they are, \
read at 0.34.0; the fix proposed in PR 36225 is in no release) and SGLang's fix (PR 30524) is open: an error \
under both engines, at every release read, and without one. vllm-ascend rotates it at load when the \
target's quant description names its global rotation (`optional.quarot.rotation_map.global_rotation`): an \
EAGLE-3 drafter vLLM builds as Eagle3LlamaForCausalLM from 0.16.0rc1 (PR 6914, patch_draft_quarot.py), its own \
Qwen3 DSpark model from 0.25.1rc1, every dflash and dspark drafter from 0.26.0rc1 (commit e8950038 \
\"anti-rotate draft fc weights for QuaRot targets\", llm_base_proposer.py; PR 12775 reported acceptance near zero \
before it); an error on its releases before those, \
nothing from them. Fires only when the target's quantization_config marks a rotation (a key naming rotat, quarot, \
spinquant or hadamard with a set value, or a value naming QuaRot or SpinQuant) — except FP-Quant (`quant_method: \
fp_quant`), whose `hadamard_group_size` names per-layer Hadamard matrices (transformers' FP-Quant integration loads \
a forward_hadamard_matrix per linear module), so the hidden states between layers are not rotated.",
    },
    applies: Applies::All,
    needs: &[],
    check: target_quant_rotated,
};

/// An EAGLE-3 head on a rotated target, per engine: only vllm-ascend from PR 6914 rotates its
/// fc at load.
const TARGET_QUANT_ROTATED_EAGLE: ByEngine = ByEngine {
    case: Some("the drafter is an EAGLE-3 head"),
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Error),
            "feeds the target's aux hidden states to the draft's fc as they are (llama_eagle3.py \
combine_hidden_states, read at 0.34.0; no rotation in its spec-decode code): the rotation fix proposed in \
vllm#36225 is in no release read (its RFC, vllm#36223, closed as stale)",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "feeds the aux hidden states to the draft's fc as they are (llama_eagle3.py, read at 0.5.23): the \
QuaRot fix is sglang#30524, open",
        ),
        ReleaseRow::until(
            Engine::VllmAscend,
            (0, 15),
            Some(Severity::Error),
            "does not rotate the draft fc before PR 6914: acceptance 1.07 instead of 3.09 (issue 5974)",
        ),
        ReleaseRow::since(
            Engine::VllmAscend,
            (0, 16),
            None,
            "rotates the EAGLE-3 draft fc at load by the target's global rotation (PR 6914, \
             patch_draft_quarot.py, read at 0.16.0rc1 to 0.26.0rc1)",
        ),
    ],
};

/// A DFlash-family drafter (not DSpark) on a rotated target: vllm-ascend aligns its fc from
/// 0.26.0rc1 (`_maybe_anti_rotate_fc` for methods dflash and dspark); no other engine does.
const TARGET_QUANT_ROTATED_DFLASH: ByEngine = ByEngine {
    case: Some("the drafter is a DFlash-family drafter other than DSpark"),
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::any_version(Engine::Vllm, Some(Severity::Error), "rotates no DFlash drafter"),
        ReleaseRow::any_version(Engine::Sglang, Some(Severity::Error), "rotates no DFlash drafter"),
        ReleaseRow::until(
            Engine::VllmAscend,
            (0, 25),
            Some(Severity::Error),
            "its rotation patches the EAGLE-3 class only (patch_draft_quarot.py; read at 0.16.0rc1 to 0.25.1rc1)",
        ),
        ReleaseRow::since(
            Engine::VllmAscend,
            (0, 26),
            None,
            "aligns a dflash or dspark drafter's fc with the target's global rotation at load \
             (llm_base_proposer.py _maybe_anti_rotate_fc, read at 0.26.0rc1)",
        ),
    ],
};

/// A DSpark drafter on a rotated target: vllm-ascend 0.25.1rc1 rotates its own Qwen3 DSpark
/// model's fc (`models/qwen3_dspark.py`) and no other; 0.26.0rc1 every dspark drafter.
const TARGET_QUANT_ROTATED_DSPARK: ByEngine = ByEngine {
    case: Some("the drafter is a DSpark drafter"),
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::any_version(Engine::Vllm, Some(Severity::Error), "rotates no DSpark drafter"),
        ReleaseRow::any_version(Engine::Sglang, Some(Severity::Error), "rotates no DSpark drafter"),
        ReleaseRow::until(
            Engine::VllmAscend,
            (0, 24),
            Some(Severity::Error),
            "its rotation patches the EAGLE-3 class only (patch_draft_quarot.py; read at 0.16.0rc1 to 0.24.0rc1)",
        ),
        ReleaseRow::between(
            Engine::VllmAscend,
            (0, 25),
            (0, 25),
            Some(Severity::Warning),
            "rotates the fc of the Qwen3DSparkModel it registers (models/qwen3_dspark.py, read at 0.25.1rc1), \
             not other DSpark architectures",
        ),
        ReleaseRow::since(
            Engine::VllmAscend,
            (0, 26),
            None,
            "aligns a dflash or dspark drafter's fc with the target's global rotation at load \
             (llm_base_proposer.py _maybe_anti_rotate_fc and models/qwen3_dspark.py, read at 0.26.0rc1)",
        ),
    ],
};

fn target_quant_rotated(cx: &mut Ctx) {
    let eagle = cx.detection.eagle_like();
    if !(eagle || cx.detection.block_drafter()) || cx.embedded_dspark() {
        return;
    }
    let Some(q) = target_quant(cx).filter(|q| q.rotated) else {
        return;
    };
    let case = if eagle {
        &TARGET_QUANT_ROTATED_EAGLE
    } else if cx.detection.effective().family == Family::Dspark {
        &TARGET_QUANT_ROTATED_DSPARK
    } else {
        &TARGET_QUANT_ROTATED_DFLASH
    };
    cx.emit_judged(
        case,
        &Path::root(),
        format!(
            "the target's weights are rotated ({}): the drafter reads rotated hidden states it was not trained on \
             (acceptance 1.07 instead of 3.09 in vllm-ascend issue 5974); use an engine build that rotates the \
             draft's fc (vllm-ascend 0.16 and later for an EAGLE-3 head, 0.26 and later for DFlash and DSpark), or a \
             drafter converted for the rotated target",
            q.describe()
        ),
    );
}
