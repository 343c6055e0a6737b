//! The tensors against the config's `quantization_config`, both ways, for any config:
//! quantized tensors the config does not declare, a declared quantization no tensor carries.

use super::cx::{Applies, Cx, Rule};
use super::quant_exclude::has_hf_quant_config;
use super::text::shape_text;
use super::{Tensor, WeightsCode, WeightsHeaders};
use crate::config::QuantFacts;
use crate::diagnostic::{CodeInfo, Severity};

pub(super) const RULES: &[Rule] = &[QUANTIZED_UNDECLARED, QUANTIZATION_UNMATCHED];

/// The first tensor that shows a quantized checkpoint: a quantization companion of a linear
/// weight (packed weights, zero points, scales) or a 2-D `.weight` stored as integers or FP8.
/// `d2t` / `t2d` (1-D integer maps) are not weights.
fn quantized_tensor(headers: &WeightsHeaders) -> Option<&Tensor> {
    const COMPANIONS: &[&str] = &[
        ".qweight",
        ".qzeros",
        ".g_idx",
        ".weight_packed",
        ".weight_scale",
        ".weight_scale_inv",
        ".weight_zero_point",
        ".input_scale",
    ];
    headers.tensors().find(|t| {
        COMPANIONS.iter().any(|c| t.name.ends_with(c))
            || (t.name.ends_with(".weight")
                && t.shape.len() == 2
                && (t.dtype.starts_with('I')
                    || t.dtype.starts_with('U')
                    || t.dtype.starts_with("F8")))
    })
}

const QUANTIZED_UNDECLARED: Rule = Rule {
    code: WeightsCode::QuantizedUndeclared,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "quantized tensors (packed integers, FP8, quantization scales) in a drafter whose config has no quantization_config",
        explanation: "Engines pick a drafter's linear layers from its config.json: without `quantization_config` \
they build unquantized layers, then meet `weight_packed` / `qweight` / `weight_scale` names they do not know, or \
integer / FP8 data where they expect floating-point weights. Nothing in the config tells lint the drafter is \
quantized (quantized-block-drafter and the launch rules read quantization_config), so the checks that depend on it \
cannot run. MLX's `quantization` (mlx-lm and mlx-vlm write it, newer versions copy it to `quantization_config`) \
declares it too. Write the quantization_config the quantizer produced. A warning: the tensors, not the config, are \
what the drafter was saved as.",
    },
    applies: Applies::Any,
    needs: &[],
    check: quantized_undeclared,
};

fn quantized_undeclared(cx: &mut Cx) {
    let v = cx.v;
    // vLLM takes the quantization from hf_quant_config.json when config.json has none (older
    // ModelOpt exports, such as nvidia/DeepSeek-V3.1-NVFP4): declared there, it is declared.
    if QuantFacts::from_root(v.config.root()).is_some() || has_hf_quant_config(v.config) {
        return;
    }
    let Some(t) = quantized_tensor(v.headers) else {
        return;
    };
    cx.emit(
        &t.name,
        &v.file_of(t),
        format!(
            "`{}` ({} {}) is a quantized tensor but {} has no quantization_config (nor MLX's \
             `quantization`): engines build unquantized layers from the config; write the \
             quantization_config the quantizer produced",
            t.name,
            t.dtype,
            shape_text(&t.shape),
            v.config.path.display()
        ),
    );
}

const QUANTIZATION_UNMATCHED: Rule = Rule {
    code: WeightsCode::QuantizationUnmatched,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the config declares quantization_config but every linear weight is floating-point",
        explanation: "A quantization_config makes the engine build quantized layers that expect packed weights and \
scales; a drafter whose tensors are all BF16/F16/F32 (a config copied from the target, or a dequantized export) then \
fails to load or is quantized again on load. Remove the quantization_config, or publish the quantized tensors. A \
warning (online-quantization configs legitimately keep float tensors).",
    },
    applies: Applies::Any,
    needs: &[],
    check: quantization_unmatched,
};

fn quantization_unmatched(cx: &mut Cx) {
    let v = cx.v;
    let Some(q) = QuantFacts::from_root(v.config.root()) else {
        return;
    };
    if quantized_tensor(v.headers).is_some() {
        return;
    }
    let floats = v
        .headers
        .tensors()
        .filter(|t| t.name.ends_with(".weight") && t.shape.len() == 2)
        .count();
    if floats == 0 {
        return;
    }
    let cfg = v.config.path.display().to_string();
    cx.emit(
        "quantization_config",
        &cfg,
        format!(
            "{cfg} declares quantization_config ({}) but all {floats} linear weights are \
             floating-point and no tensor holds scales or packed weights: the engine builds \
             quantized layers for float tensors; remove the quantization_config or publish the \
             quantized tensors",
            q.describe()
        ),
    );
}
