//! The tensors the engine builds for a config, by canonical name: the table the shape,
//! fc-width, vocab-rows and missing-tensor rules compare the file with.
//!
//! Each part of a drafter is one function (the attention block, the norms and MLP, DFlash's
//! head norms, DFlash2's convolutions and candidate selector, EAGLE-3's first layer, the
//! tensors outside the layers), read from the loaders cited in the rules: a tensor and its
//! dims, each dim a size from the config (when it has it) and its name for messages.

use std::collections::{BTreeMap, BTreeSet};

use super::facts::Sizes;
use super::WeightsCode;
use crate::family::WeightsLayout;

/// One expected tensor.
#[derive(Debug, Clone)]
pub struct Expect {
    /// `None` when a size the shape depends on is not in the config: presence only.
    pub shape: Option<Vec<u64>>,
    /// The dims in words: `num_attention_heads × head_dim, hidden_size`.
    pub formula: String,
    /// The rule that compares its shape.
    pub code: WeightsCode,
    /// Whether its absence is `weights-missing-tensor`.
    pub required: bool,
}

/// A size from the config (when it has it) and its name in messages.
type Dim = (Option<u64>, &'static str);

type Table = BTreeMap<String, Expect>;

fn mul(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    a.zip(b).and_then(|(a, b)| a.checked_mul(b))
}

fn entry(dims: &[Dim], code: WeightsCode, required: bool) -> Expect {
    Expect {
        shape: dims.iter().map(|d| d.0).collect(),
        formula: dims.iter().map(|d| d.1).collect::<Vec<_>>().join(", "),
        code,
        required,
    }
}

/// A required tensor whose shape is `weights-shape`'s.
fn put(m: &mut Table, name: &str, dims: &[Dim]) {
    m.insert(name.to_string(), entry(dims, WeightsCode::Shape, true));
}

/// The config's sizes as dims.
struct Dims {
    hidden: Dim,
    /// Query rows: heads × head_dim.
    q: Dim,
    /// Key and value rows: kv heads × head_dim.
    kv: Dim,
    inter: Dim,
    head_dim: Dim,
    heads: Dim,
}

impl Dims {
    fn of(s: &Sizes) -> Dims {
        Dims {
            hidden: (s.hidden, "hidden_size"),
            q: (mul(s.heads, s.head_dim), "num_attention_heads × head_dim"),
            kv: (
                mul(s.kv_heads, s.head_dim),
                "num_key_value_heads × head_dim",
            ),
            inter: (s.intermediate, "intermediate_size"),
            head_dim: (s.head_dim, "head_dim"),
            heads: (s.heads, "num_attention_heads"),
        }
    }
}

/// Every tensor the engine builds for this config, by canonical name.
pub fn expected(kind: WeightsLayout, s: &Sizes, layers: &BTreeSet<u64>) -> Table {
    let d = Dims::of(s);
    let mut m = Table::new();
    for &l in layers {
        let mut layer = Table::new();
        // EAGLE-3's first layer takes the embedding and the fused hidden state side by side.
        let input = if kind == WeightsLayout::Eagle3 && l == 0 {
            (mul(Some(2), s.hidden), "2 × hidden_size")
        } else {
            d.hidden
        };
        attention(&mut layer, &d, input, s.attention_bias);
        norms_and_mlp(&mut layer, &d, s.mlp_bias);
        match kind {
            WeightsLayout::Dflash => dflash_attention(&mut layer, &d, s.sink_bias),
            WeightsLayout::Dflash2 => {
                dflash_attention(&mut layer, &d, s.sink_bias);
                dflash2_convolutions(&mut layer, &d, s);
            }
            WeightsLayout::Eagle3 if l == 0 => put(&mut layer, "hidden_norm.weight", &[d.hidden]),
            WeightsLayout::Eagle3 => {}
        }
        m.extend(
            layer
                .into_iter()
                .map(|(name, e)| (format!("layers.{l}.{name}"), e)),
        );
    }
    outside_layers(&mut m, kind, &d, s);
    if kind == WeightsLayout::Dflash2 {
        candidate_selector(&mut m, &d, s);
    }
    m
}

/// The attention projections (vLLM's QKV and o_proj; z-lab's Qwen3DFlashAttention).
fn attention(m: &mut Table, d: &Dims, input: Dim, bias: bool) {
    put(m, "self_attn.q_proj.weight", &[d.q, input]);
    put(m, "self_attn.k_proj.weight", &[d.kv, input]);
    put(m, "self_attn.v_proj.weight", &[d.kv, input]);
    put(m, "self_attn.o_proj.weight", &[d.hidden, d.q]);
    if bias {
        put(m, "self_attn.q_proj.bias", &[d.q]);
        put(m, "self_attn.k_proj.bias", &[d.kv]);
        put(m, "self_attn.v_proj.bias", &[d.kv]);
        put(m, "self_attn.o_proj.bias", &[d.hidden]);
    }
}

/// The layer norms and the gated MLP (Qwen3MLP / LlamaMLP).
fn norms_and_mlp(m: &mut Table, d: &Dims, bias: bool) {
    put(m, "input_layernorm.weight", &[d.hidden]);
    put(m, "post_attention_layernorm.weight", &[d.hidden]);
    put(m, "mlp.gate_proj.weight", &[d.inter, d.hidden]);
    put(m, "mlp.up_proj.weight", &[d.inter, d.hidden]);
    put(m, "mlp.down_proj.weight", &[d.hidden, d.inter]);
    if bias {
        put(m, "mlp.gate_proj.bias", &[d.inter]);
        put(m, "mlp.up_proj.bias", &[d.inter]);
        put(m, "mlp.down_proj.bias", &[d.hidden]);
    }
}

/// DFlash's per-head q/k norms and, when configured, its attention sink bias.
fn dflash_attention(m: &mut Table, d: &Dims, sink_bias: bool) {
    put(m, "self_attn.q_norm.weight", &[d.head_dim]);
    put(m, "self_attn.k_norm.weight", &[d.head_dim]);
    if sink_bias {
        put(m, "self_attn.attention_sink_bias", &[d.heads]);
    }
}

/// DFlash2's attention and MLP convolutions.
fn dflash2_convolutions(m: &mut Table, d: &Dims, s: &Sizes) {
    let groups = s
        .hidden
        .zip(s.conv_group)
        .filter(|(h, g)| *g > 0 && h % g == 0)
        .map(|(h, g)| h / g);
    let kernel = (s.conv_kernel, "conv_kernel_size");
    let rows = (
        mul(mul(Some(2), s.conv_kernel), groups),
        "2 × conv_kernel_size × hidden_size / conv_group_size",
    );
    for conv in ["attention_conv", "mlp_conv"] {
        put(
            m,
            &format!("{conv}.base_kernel"),
            &[(Some(2), "2"), kernel, d.hidden],
        );
        put(
            m,
            &format!("{conv}.kernel_projection.weight"),
            &[rows, d.hidden],
        );
    }
}

/// DFlash2's candidate selector: two codebooks over the vocabulary and a projection.
fn candidate_selector(m: &mut Table, d: &Dims, s: &Sizes) {
    let rank = (s.selector_rank, "selector_rank");
    for book in ["predecessor_codebook", "successor_codebook"] {
        put(
            m,
            &format!("candidate_selector.{book}.weight"),
            &[(s.vocab, "vocab_size"), rank],
        );
    }
    put(
        m,
        "candidate_selector.hidden_projection.weight",
        &[rank, d.hidden],
    );
}

/// The final norm, the fc over the target's hidden states, DFlash's hidden norm, and the
/// vocabulary tensors (optional: a drafter may share the target's).
fn outside_layers(m: &mut Table, kind: WeightsLayout, d: &Dims, s: &Sizes) {
    put(m, "norm.weight", &[d.hidden]);
    if s.use_aux {
        let width = s
            .aux
            .as_ref()
            .and_then(|(k, _)| mul(Some(*k), s.target_hidden.map(|t| t.0)));
        let fc = [d.hidden, (width, "aux layers × target hidden size")];
        m.insert("fc.weight".into(), entry(&fc, WeightsCode::FcWidth, true));
    }
    if kind.is_dflash() {
        put(m, "hidden_norm.weight", &[d.hidden]);
    }
    let embed = [(s.vocab, "vocab_size"), d.hidden];
    let draft_rows = if s.draft_vocab_explicit {
        "draft_vocab_size"
    } else {
        "vocab_size"
    };
    let lm_head = [(s.draft_vocab, draft_rows), d.hidden];
    for (name, dims) in [("embed_tokens.weight", embed), ("lm_head.weight", lm_head)] {
        m.insert(name.into(), entry(&dims, WeightsCode::VocabRows, false));
    }
}
