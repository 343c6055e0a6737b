//! Rules about a DFlash/DSpark (or EAGLE-3) GGUF draft as llama.cpp runs it: a file with no
//! tensors at all, the mask token the draft fills its block with, and the target layers it taps
//! against the target's layer count (when the target is known: a launch line's `-m` GGUF, or
//! `weights --target`).
//!
//! Read at ggml-org/llama.cpp 0c1e57098bba43ac29e6e3b677cdceebdd22334f (b11312, vendored in
//! `llama-cpp-python==0.3.36`): the DFlash model requires `fc.weight` and two norms
//! (`src/models/dflash.cpp`, `load_arch_tensors`), the vocabulary loader returns before it reads
//! any special token id for a `no_vocab`/`none` tokenizer (`src/llama-vocab.cpp`), the DFlash
//! implementation fills each draft block with `llama_vocab_mask` of the draft
//! (`common/speculative.cpp`), and a target layer id is a layer *input*: `0..=n_layer`, where
//! `n_layer` is `block_count - nextn_predict_layers` and id `n_layer` is the last layer's output
//! (`src/llama-context.cpp`). The converter writes the HF `target_layer_ids` plus one
//! (`conversion/qwen.py`, `DFlashModel`), so an HF id of the last layer becomes `n_layer`.

use super::cx::{Applies, Cx, Need, Rule};
use super::gguf::gguf;
use super::WeightsCode;
use crate::config::TargetFacts;
use crate::diagnostic::{CodeInfo, Severity};
use crate::gguf::GgufHeader;

pub(super) const RULES: &[Rule] = &[DFLASH_EMPTY, DFLASH_MASK_TOKEN, DFLASH_TARGET_LAYER_RANGE];

/// The target a GGUF draft is served with, as far as its layer count goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufTarget {
    /// The layers llama.cpp counts for the target (`n_layer`: its blocks without MTP blocks).
    pub layers: u64,
    /// How the count was read, for messages (`qwen3.block_count` = 36).
    pub how: String,
    /// Where it was read (the file or config).
    pub source: String,
    /// The target GGUF's `general.architecture`; `None` for an HF config.
    pub architecture: Option<String>,
}

impl GgufTarget {
    /// A target GGUF: `{arch}.block_count` minus `{arch}.nextn_predict_layers` (llama.cpp's
    /// `llama_hparams::n_layer`); `None` without a block count.
    pub fn of_gguf(h: &GgufHeader) -> Option<GgufTarget> {
        let arch = h.architecture()?;
        let blocks = h.arch_key("block_count").and_then(|v| v.as_u64())?;
        let nextn = h
            .arch_key("nextn_predict_layers")
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        let how = match nextn {
            0 => format!("`{arch}.block_count` = {blocks}"),
            n => format!(
                "`{arch}.block_count` {blocks} minus `{arch}.nextn_predict_layers` {n} = {}",
                blocks.saturating_sub(n)
            ),
        };
        Some(GgufTarget {
            layers: blocks.saturating_sub(nextn),
            how,
            source: h.display.clone(),
            architecture: Some(arch.to_string()),
        })
    }

    /// An HF target config: `num_hidden_layers` (which counts no MTP layer), what llama.cpp's
    /// converter writes as the trunk's blocks.
    pub fn of_config(t: &TargetFacts) -> Option<GgufTarget> {
        let layers = t.num_hidden_layers?;
        let key = t
            .origins
            .get("num_hidden_layers")
            .map_or("num_hidden_layers", String::as_str);
        Some(GgufTarget {
            layers,
            how: format!("`{key}` = {layers}"),
            source: t.source.clone(),
            architecture: None,
        })
    }
}

/// Target architectures whose graph publishes the last layer's output as layer input `n_layer`
/// (`res->t_layer_inp[n_layer]`, 0c1e570: `models/deepseek4.cpp`, `models/mimo2.cpp`,
/// `models/nemotron-h.cpp`, whose graph `nemotron_h_moe` inherits). Every other graph sets only
/// `t_layer_inp[il]` for `il < n_layer`, and a request for `n_layer` trips
/// `GGML_ASSERT(t_layer_inp[il] != nullptr && "layer input tensor is null")` (`llama-graph.cpp`).
const PUBLISHES_LAST_OUTPUT: &[&str] = &["deepseek4", "mimo2", "nemotron_h", "nemotron_h_moe"];

/// The draft architectures that read `{arch}.target_layers`.
const TAPPING_ARCHS: &[&str] = &["dflash", "eagle3"];

const DFLASH_EMPTY: Rule = Rule {
    code: WeightsCode::GgufDflashEmpty,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a DFlash/DSpark GGUF with no tensors (a converter's empty output)",
        explanation: "llama.cpp's DFlash model requires `fc.weight`, `enc.output_norm.weight` and \
`output_norm.weight` (`create_tensor(…, 0)` in `models/dflash.cpp`, 0c1e570): a file whose tensor table is empty \
fails to load with `missing tensor 'fc.weight'`, and the draft is never set up. Converters that stop early (a \
tensor-name map that matches nothing) write such a file of metadata only, a few MB of vocabulary (ik_llama.cpp#2043). \
Re-convert the drafter and check the output's tensor count.",
    },
    applies: Applies::Any,
    needs: &[Need::Gguf],
    check: dflash_empty,
};

fn dflash_empty(cx: &mut Cx) {
    let h = gguf(cx);
    if h.architecture() == Some("dflash") && h.tensors.is_empty() {
        cx.emit(
            "tensors",
            &h.display,
            format!(
                "a `dflash` GGUF of {} bytes with no tensors (0 in its tensor table, {} metadata keys): llama.cpp fails \
                 to load it (`missing tensor 'fc.weight'`); re-convert the drafter",
                h.file_size,
                h.metadata.len()
            ),
        );
    }
}

const DFLASH_MASK_TOKEN: Rule = Rule {
    code: WeightsCode::GgufDflashMaskToken,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a DFlash/DSpark GGUF whose mask token llama.cpp resolves to -1 (no_vocab, absent or out of range)",
        explanation: "llama.cpp's DFlash implementation fills every draft block after its first token with the \
draft's mask token (`llama_vocab_mask`, common/speculative.cpp, 0c1e570). The vocabulary loader sets that id from \
`tokenizer.ggml.mask_token_id` only for a real tokenizer: for `tokenizer.ggml.model` = `no_vocab` or `none` it \
returns before reading any special token id, so the key is ignored (llama.cpp#26761); without the key the id \
stays at its default, none; an id past the token list is refused (\"bad special token\") and the default used. \
In each case the mask id is -1, and the first draft batch fails (`invalid token[1] = -1`, llama_decode returns an \
error): nothing is drafted. Convert the drafter with the target's tokenizer (`convert_hf_to_gguf.py \
--target-model-dir`), which writes `tokenizer.ggml.mask_token_id` from `dflash_config.mask_token_id`.",
    },
    applies: Applies::Any,
    needs: &[Need::Gguf],
    check: dflash_mask_token,
};

fn dflash_mask_token(cx: &mut Cx) {
    let h = gguf(cx);
    // An empty file already fails to load; the mask is not the news there.
    if h.architecture() != Some("dflash") || h.tensors.is_empty() {
        return;
    }
    let tok = h.tokenizer();
    let key = "tokenizer.ggml.mask_token_id";
    let mask = tok.id("mask");
    let why = match (tok.model, mask) {
        (Some(m @ ("no_vocab" | "none")), Some(id)) => format!(
            "`{key}` is {id} but `tokenizer.ggml.model` is `{m}`: llama.cpp's vocabulary loader returns before it \
             reads special token ids, so the key is ignored (llama.cpp#26761)"
        ),
        (Some(m @ ("no_vocab" | "none")), None) => format!(
            "`tokenizer.ggml.model` is `{m}` (no vocabulary) and there is no `{key}`"
        ),
        (_, None) => format!("the file has no `{key}`"),
        (_, Some(id)) => match tok.vocab_size() {
            Some(n) if id >= n as u64 => format!(
                "`{key}` is {id}, past the {n} tokens of `tokenizer.ggml.tokens`: llama.cpp refuses it (\"bad \
                 special token\")"
            ),
            _ => return,
        },
    };
    cx.emit(
        key,
        &h.display,
        format!(
            "{why}; the draft's mask id is -1 and llama.cpp's first DFlash draft batch fails (`invalid token[1] = -1`): \
             nothing is drafted. Convert the drafter with the target's tokenizer (`convert_hf_to_gguf.py \
             --target-model-dir TARGET`), which writes the mask id from `dflash_config.mask_token_id`"
        ),
    );
}

const DFLASH_TARGET_LAYER_RANGE: Rule = Rule {
    code: WeightsCode::GgufDflashTargetLayerRange,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a DFlash/EAGLE-3 GGUF's target_layers past the target's layers",
        explanation: "A GGUF draft's `{arch}.target_layers` are layer inputs of the target: id i is the input of \
layer i, the output of layer i-1 (llama.cpp's converter writes the HF `target_layer_ids` plus one), so they run \
from 1 to the target's `n_layer`, its `block_count` less its MTP (`nextn_predict_layers`) blocks. At 0c1e570 an id \
above `n_layer` aborts at start: `GGML_ASSERT(lid <= model.hparams.n_layer())` (DFlash, llama-context.cpp) or \
`EAGLE3: target layer id … exceeds target n_layer` (common/speculative.cpp). An id equal to `n_layer` (the last \
layer's output, FIELD row 23's `48` for a 48-block target) is served by EAGLE-3 from the target's final hidden \
state, but DFlash asks the target's graph for it, which only DeepSeek-V4, MiMo-2 and Nemotron-H targets publish: \
other targets abort on the first request (`layer input tensor is null`). Checked when the target is known (a \
launch line's `-m` GGUF, `weights --target`); with an HF target config an id equal to its layer count is a \
warning, its GGUF architecture not known. Re-convert the drafter for this target, or serve it with its own.",
    },
    applies: Applies::Any,
    needs: &[Need::Gguf],
    check: dflash_target_layer_range,
};

fn dflash_target_layer_range(cx: &mut Cx) {
    let h = gguf(cx);
    let Some(target) = cx.v.gguf_target.as_ref() else {
        return;
    };
    let Some(arch) = h.architecture().filter(|a| TAPPING_ARCHS.contains(a)) else {
        return;
    };
    let key = format!("{arch}.target_layers");
    let Some(ids) = h
        .get(&key)
        .and_then(|v| v.as_array())
        .and_then(|a| a.integers())
    else {
        return;
    };
    let n = target.layers as i64;
    let beyond: Vec<i64> = ids.iter().copied().filter(|&i| i < 0 || i > n).collect();
    let last = ids.contains(&n);
    let target_text = format!(
        "the target {} has {} layers ({})",
        target.source, target.layers, target.how
    );
    if !beyond.is_empty() {
        cx.emit(
            &key,
            &h.display,
            format!(
                "`{key}` is {ids:?}, and {target_text}: id(s) {beyond:?} are past its last layer output ({n}), and \
                 llama.cpp aborts when the draft is set up (`lid <= n_layer` assertion); this draft was converted for \
                 another target: serve it with its own target, or re-convert it for this one"
            ),
        );
        return;
    }
    if !last || arch != "dflash" {
        return;
    }
    let publishes = target
        .architecture
        .as_deref()
        .map(|a| PUBLISHES_LAST_OUTPUT.contains(&a));
    let severity = match publishes {
        Some(true) => return,
        Some(false) => Severity::Error,
        None => Severity::Warning,
    };
    let graph = match &target.architecture {
        Some(a) => format!("a `{a}` target's graph does not publish it"),
        None => {
            "its GGUF's graph publishes it only for deepseek4, mimo2 and nemotron_h targets".into()
        }
    };
    cx.emit_as(
        severity,
        &key,
        &h.display,
        format!(
            "`{key}` is {ids:?}, and {target_text}: id {n} taps the last layer's output, and {graph}, so llama.cpp \
             aborts on the first request (`layer input tensor is null`); the HF `target_layer_ids` behind it name the \
             target's last layer ({}): check the drafter was trained for this target",
            n - 1
        ),
    );
}
