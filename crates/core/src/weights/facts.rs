//! The config's facts that shape the tensors: the sizes the engine builds the tensors from
//! ([`Sizes`]), read once from the parsed config for the drafter's tensor layout (the family
//! table's `WeightsLayout`).
//!
//! Below both the expected-tensor table (`expected`) and the view the rules see (`view`), which
//! each read these facts: with them in either one, the two imported each other.

use crate::config;
use crate::family::WeightsLayout;
use crate::json::Node;

/// The config's numbers that shape the tensors.
#[derive(Debug, Default)]
pub struct Sizes {
    pub hidden: Option<u64>,
    pub layers: Option<u64>,
    pub heads: Option<u64>,
    pub kv_heads: Option<u64>,
    pub head_dim: Option<u64>,
    pub intermediate: Option<u64>,
    pub vocab: Option<u64>,
    /// `draft_vocab_size`, else `vocab_size`.
    pub draft_vocab: Option<u64>,
    pub draft_vocab_explicit: bool,
    /// `target_hidden_size`, else `hidden_size`, and which field it came from.
    pub target_hidden: Option<(u64, &'static str)>,
    /// The number of aux hidden states `fc` concatenates, and the field that says so.
    pub aux: Option<(u64, String)>,
    pub use_aux: bool,
    pub attention_bias: bool,
    pub mlp_bias: bool,
    pub sink_bias: bool,
    pub quantized: bool,
    pub conv_kernel: Option<u64>,
    pub conv_group: Option<u64>,
    pub selector_rank: Option<u64>,
}

fn uint(root: &Node, path: &str) -> Option<u64> {
    config::field(root, path).and_then(|(_, n)| n.as_u64())
}

fn first_uint(root: &Node, paths: &[&str]) -> Option<u64> {
    paths.iter().find_map(|p| uint(root, p))
}

fn flag(root: &Node, paths: &[&str]) -> Option<bool> {
    paths
        .iter()
        .find_map(|p| config::field(root, p).and_then(|(_, n)| n.as_bool()))
}

fn list_len(root: &Node, paths: &[&str]) -> Option<(u64, String)> {
    paths.iter().find_map(|p| {
        config::field(root, p)
            .and_then(|(path, n)| n.as_array().map(|a| (a.len() as u64, path.to_string())))
            .filter(|(n, _)| *n > 0)
    })
}

/// `head_dim`, else the default of the config class the engine builds: transformers'
/// Qwen3Config defaults it to 128, LlamaConfig (EAGLE-3) to hidden / heads.
fn head_dim(
    root: &Node,
    kind: WeightsLayout,
    hidden: Option<u64>,
    heads: Option<u64>,
) -> Option<u64> {
    uint(root, "head_dim").or(match kind {
        WeightsLayout::Eagle3 => hidden
            .zip(heads)
            .filter(|(_, h)| *h > 0)
            .map(|(a, h)| a / h),
        WeightsLayout::Dflash | WeightsLayout::Dflash2 => {
            let model_type = root.get("model_type").and_then(Node::as_str);
            (model_type == Some("qwen3")).then_some(128)
        }
    })
}

/// How many target hidden states `fc` concatenates, and the field that says so.
fn aux_layers(root: &Node, kind: WeightsLayout) -> Option<(u64, String)> {
    const EAGLE: [&str; 2] = [
        "eagle_aux_hidden_state_layer_ids",
        "eagle_config.eagle_aux_hidden_state_layer_ids",
    ];
    match kind {
        // vLLM takes explicit EAGLE-style aux ids first, then the DFlash target layer ids.
        WeightsLayout::Dflash | WeightsLayout::Dflash2 => list_len(
            root,
            &[
                EAGLE[0],
                EAGLE[1],
                "dflash_config.target_layer_ids",
                "target_layer_ids",
            ],
        ),
        WeightsLayout::Eagle3 => {
            list_len(root, &EAGLE).or(Some((3, "the EAGLE-3 default (3 aux layers)".to_string())))
        }
    }
}

impl Sizes {
    pub(super) fn read(root: &Node, kind: WeightsLayout) -> Sizes {
        let hidden = uint(root, "hidden_size");
        let heads = uint(root, "num_attention_heads");
        let vocab = uint(root, "vocab_size");
        let draft_vocab_field = uint(root, "draft_vocab_size");
        let target_hidden = match uint(root, "target_hidden_size") {
            Some(t) => Some((t, "target_hidden_size")),
            None => hidden.map(|h| (h, "hidden_size")),
        };
        let dv = |k: &str| first_uint(root, &[&format!("dflash_config.{k}"), k]);
        let use_aux = [
            "dflash_config.use_aux_hidden_state",
            "eagle_config.use_aux_hidden_state",
            "use_aux_hidden_state",
        ];
        let sink = [
            "dflash_config.attention_sink_bias",
            "add_swa_attention_sink_bias",
        ];
        Sizes {
            hidden,
            layers: uint(root, "num_hidden_layers"),
            heads,
            kv_heads: uint(root, "num_key_value_heads").or(heads),
            head_dim: head_dim(root, kind, hidden, heads),
            intermediate: uint(root, "intermediate_size"),
            vocab,
            draft_vocab: draft_vocab_field.or(vocab),
            draft_vocab_explicit: draft_vocab_field.is_some(),
            target_hidden,
            aux: aux_layers(root, kind),
            use_aux: flag(root, &use_aux).unwrap_or(true),
            attention_bias: flag(root, &["attention_bias"]).unwrap_or(false),
            mlp_bias: flag(root, &["mlp_bias"]).unwrap_or(false),
            sink_bias: flag(root, &sink).unwrap_or(false),
            quantized: crate::config::quantization_node(root).is_some(),
            conv_kernel: dv("conv_kernel_size"),
            conv_group: dv("conv_group_size"),
            selector_rank: dv("selector_rank"),
        }
    }
}
