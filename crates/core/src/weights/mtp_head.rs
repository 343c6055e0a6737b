//! The MTP (next-n) head a target checkpoint's config declares, as its index and headers hold
//! it: which of the declared MTP layers have tensors, and each MTP linear module's storage
//! (quantized or floating-point), beside what the trunk's layers store for the same module.
//!
//! The depth and the base layer index come from `family::embedded::declared` (the one reading
//! of `num_nextn_predict_layers` / `mtp_num_hidden_layers`). Checkpoints store MTP layer `j`
//! under one of two spellings: at decoder index `num_hidden_layers + j` (`model.layers.61.*`,
//! DeepSeek-V3 and GLM: vLLM's `deepseek_mtp.py` and `glm4_moe_mtp.py` read them there) or as
//! `mtp.layers.j.*` beside shared `mtp.fc` / `mtp.norm` tensors (Qwen3-Next, Qwen3.5/3.6). Names
//! are read from the index when there is one — it names every tensor, including those of shards
//! not downloaded — else from the single file's header; dtypes only from headers. Tensor data
//! is never read.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::WeightsHeaders;
use crate::family::embedded::MtpDeclaration;

/// Prefixes a decoder stack sits under (text models, then multimodal wrappers).
const STACKS: &[&str] = &[
    "model.language_model.",
    "language_model.model.",
    "language_model.",
    "model.",
    "",
];

/// Suffixes of a linear module's quantized storage (packed weights, scales, zero points).
const QUANT_PARTS: &[&str] = &[
    "weight_packed",
    "qweight",
    "weight_scale",
    "weight_scale_inv",
    "weight_scale_2",
    "weight_zero_point",
    "qzeros",
    "scales",
];

/// Modules engines never quantize, whatever the config: embeddings and LM heads.
const NEVER_QUANTIZED: &[&str] = &["embed_tokens", "shared_head.head", "lm_head"];

/// Where a tensor name sits.
enum Place<'n> {
    /// MTP layer `j`; the tail after the layer (`self_attn.q_proj.weight`).
    Mtp(u64, &'n str),
    /// An MTP tensor outside its layers (`mtp.fc.weight`, `mtp.norm.weight`).
    MtpShared(&'n str),
    /// Trunk layer; the tail.
    Trunk(&'n str),
    Other,
}

fn index_of(s: &str) -> Option<(u64, &str)> {
    let (idx, tail) = s.split_once('.')?;
    if idx.is_empty() || idx.len() > 9 || !idx.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((idx.parse().ok()?, tail))
}

fn place<'n>(name: &'n str, base: u64, depth: u64) -> Place<'n> {
    for stack in STACKS {
        let Some(rest) = name.strip_prefix(stack) else {
            continue;
        };
        if let Some(r) = rest.strip_prefix("mtp.") {
            return match r.strip_prefix("layers.").and_then(index_of) {
                Some((j, tail)) => Place::Mtp(j, tail),
                None => Place::MtpShared(r),
            };
        }
        if let Some((k, tail)) = rest.strip_prefix("layers.").and_then(index_of) {
            return if (base..base.saturating_add(depth)).contains(&k) {
                Place::Mtp(k - base, tail)
            } else if k < base {
                Place::Trunk(tail)
            } else {
                Place::Other
            };
        }
    }
    Place::Other
}

/// `(module, part)`: `self_attn.q_proj.weight_scale` → (`self_attn.q_proj`, `weight_scale`).
fn split_part(tail: &str) -> Option<(&str, &str)> {
    let (module, part) = tail.rsplit_once('.')?;
    (part == "weight" || QUANT_PARTS.contains(&part)).then_some((module, part))
}

/// A module's kind across layers, borrowed: `(mlp, down_proj)` for `mlp.experts.3.down_proj`
/// (expert indices dropped, so MTP layer 61's experts compare with the trunk's), `(module, "")`
/// otherwise. Borrowed so that the trunk's 180,000 names are compared without an allocation.
fn kind_parts(module: &str) -> (&str, &str) {
    match module.split_once(".experts.") {
        Some((head, rest)) => match index_of(rest) {
            Some((_, tail)) => (head, tail),
            None => (module, ""),
        },
        None => (module, ""),
    }
}

/// The kind as text: `mlp.experts.*.down_proj`.
fn kind(module: &str) -> String {
    match kind_parts(module) {
        (head, "") => head.to_string(),
        (head, tail) => format!("{head}.experts.*.{tail}"),
    }
}

/// Which of the MTP modules' kinds the trunk stores quantized (kinds compared borrowed, so the
/// trunk's names cost no allocation), and whether it stores any module quantized.
fn trunk_kinds<'n>(
    names: &[(&'n str, &'n str)],
    base: u64,
    depth: u64,
    mut mtp_kinds: HashSet<(&'n str, &'n str)>,
) -> (HashSet<String>, bool) {
    let mut trunk_quantized = HashSet::new();
    let mut trunk_is_quantized = false;
    for &(name, _) in names {
        let Place::Trunk(tail) = place(name, base, depth) else {
            continue;
        };
        let Some((module, part)) = split_part(tail) else {
            continue;
        };
        if part == "weight" {
            continue;
        }
        trunk_is_quantized = true;
        if mtp_kinds.remove(&kind_parts(module)) {
            trunk_quantized.insert(kind(module));
        }
    }
    (trunk_quantized, trunk_is_quantized)
}

/// Each module's `.weight` dtype and rank, from the headers read (the index names no dtype).
fn fill_dtypes(modules: &mut BTreeMap<String, MtpModule>, headers: &WeightsHeaders) {
    let wanted: HashMap<String, &str> = modules
        .keys()
        .map(|m| (format!("{m}.weight"), m.as_str()))
        .collect();
    let mut found: Vec<(String, String, usize)> = Vec::new();
    for t in headers.tensors() {
        if let Some(m) = wanted.get(&t.name) {
            found.push((m.to_string(), t.dtype.clone(), t.shape.len()));
        }
    }
    for (m, dtype, rank) in found {
        if let Some(module) = modules.get_mut(&m) {
            module.dtype = Some(dtype);
            module.rank = Some(rank);
        }
    }
}

/// One linear module of an MTP layer, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MtpModule {
    /// The MTP layer (`None`: shared, such as `mtp.fc`).
    pub layer: Option<u64>,
    /// The module's name as the checkpoint spells it (`model.layers.61.self_attn.q_a_proj`).
    pub name: String,
    /// The kind, shared with the trunk's layers (`self_attn.q_a_proj`).
    pub kind: String,
    /// The `.weight`'s dtype, when a header read holds it.
    pub dtype: Option<String>,
    /// The `.weight`'s rank, when a header read holds it.
    pub rank: Option<usize>,
    /// Quantized-storage companions beside it (`weight_scale`, `weight_packed`, …).
    pub parts: Vec<String>,
    /// The shard that holds the module's weight.
    pub shard: String,
}

impl MtpModule {
    /// Stored quantized: a non-float `.weight`, else (dtype unknown) a packed weight or a scale.
    pub fn quantized(&self) -> bool {
        match self.dtype.as_deref() {
            Some(d) => !matches!(d, "BF16" | "F16" | "F32" | "F64"),
            None => !self.parts.is_empty(),
        }
    }

    /// A header that says floating-point while a scale or packed weight sits beside it.
    pub fn contradicts(&self) -> bool {
        self.dtype.is_some() && !self.quantized() && !self.parts.is_empty()
    }
}

/// The MTP head as stored.
#[derive(Debug, Clone)]
pub struct MtpHead {
    pub declared: MtpDeclaration,
    /// Declared MTP layers (0-based) with at least one tensor.
    pub present: Vec<u64>,
    /// How many tensors belong to the MTP head (layers and shared).
    pub tensors: usize,
    /// Its linear modules, by name.
    pub modules: Vec<MtpModule>,
    /// The MTP modules' kinds that the trunk stores quantized.
    pub trunk_quantized: HashSet<String>,
    /// Whether the trunk stores any linear module quantized.
    pub trunk_is_quantized: bool,
}

impl MtpHead {
    /// The head `declared` describes, in `headers`' names and dtypes. The base layer index is
    /// `num_hidden_layers` beside the depth key; without it only `mtp.*` names are read.
    pub fn of(declared: MtpDeclaration, headers: &WeightsHeaders) -> MtpHead {
        let base = declared.num_hidden_layers.unwrap_or(u64::MAX);
        let depth = declared.depth;
        let names: Vec<(&str, &str)> = match &headers.index {
            Some(i) => i
                .weight_map
                .iter()
                .map(|(t, s)| (t.as_str(), s.as_str()))
                .collect(),
            None => headers
                .tensors()
                .map(|t| (t.name.as_str(), t.shard.as_str()))
                .collect(),
        };
        let mut present = std::collections::BTreeSet::new();
        let mut tensors = 0;
        let mut modules: BTreeMap<String, MtpModule> = BTreeMap::new();
        let mut mtp_kinds: HashSet<(&str, &str)> = HashSet::new();
        for &(name, shard) in &names {
            let (layer, tail) = match place(name, base, depth) {
                Place::Mtp(j, tail) if j < depth => {
                    present.insert(j);
                    (Some(j), tail)
                }
                Place::MtpShared(tail) => (None, tail),
                Place::Trunk(_) | Place::Mtp(..) | Place::Other => continue,
            };
            tensors += 1;
            let Some((module, part)) = split_part(tail) else {
                continue;
            };
            if NEVER_QUANTIZED.iter().any(|n| module.ends_with(n)) {
                continue;
            }
            mtp_kinds.insert(kind_parts(module));
            let full = &name[..name.len() - part.len() - 1];
            let m = modules
                .entry(full.to_string())
                .or_insert_with(|| MtpModule {
                    layer,
                    name: full.to_string(),
                    kind: kind(module),
                    dtype: None,
                    rank: None,
                    parts: Vec::new(),
                    shard: shard.to_string(),
                });
            if part == "weight" {
                m.shard = shard.to_string();
            } else {
                m.parts.push(part.to_string());
            }
        }
        let (trunk_quantized, trunk_is_quantized) = trunk_kinds(&names, base, depth, mtp_kinds);
        fill_dtypes(&mut modules, headers);
        MtpHead {
            declared,
            present: present.into_iter().collect(),
            tensors,
            // 1-D `.weight`s are norms, not linear modules.
            modules: modules
                .into_values()
                .filter(|m| m.rank != Some(1))
                .collect(),
            trunk_quantized,
            trunk_is_quantized,
        }
    }

    /// Declared MTP layers with no tensor.
    pub fn missing(&self) -> Vec<u64> {
        (0..self.declared.depth.min(4096))
            .filter(|j| self.present.binary_search(j).is_err())
            .collect()
    }

    /// Where a missing layer `j` was looked for, for messages.
    pub fn spellings(&self, j: u64) -> String {
        match self.declared.num_hidden_layers {
            Some(n) => format!(
                "`mtp.layers.{j}.*` or `model.layers.{}.*`",
                n.saturating_add(j)
            ),
            None => format!("`mtp.layers.{j}.*`"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weights::Index;

    fn head(depth: u64, base: u64, names: &[&str]) -> MtpHead {
        let index = Index {
            display: "i.json".into(),
            weight_map: names
                .iter()
                .map(|n| (n.to_string(), "s.safetensors".to_string()))
                .collect(),
            shards: vec!["s.safetensors".into()],
        };
        let headers = WeightsHeaders {
            source: "d".into(),
            index: Some(index),
            shards: vec![],
            missing_shards: vec!["s.safetensors".into()],
            requests: 0,
            body_bytes: 0,
        };
        let declared = MtpDeclaration {
            depth,
            key: "num_nextn_predict_layers".into(),
            num_hidden_layers: Some(base),
        };
        MtpHead::of(declared, &headers)
    }

    #[test]
    fn both_spellings_and_the_trunk() {
        let h = head(
            2,
            61,
            &[
                "model.layers.0.self_attn.q_a_proj.weight",
                "model.layers.0.self_attn.q_a_proj.weight_scale_inv",
                "model.layers.0.mlp.experts.3.down_proj.weight_scale_inv",
                "model.layers.61.eh_proj.weight",
                "model.layers.61.mlp.experts.0.down_proj.weight",
                "model.layers.61.embed_tokens.weight",
                "model.layers.62.self_attn.q_a_proj.weight",
                "model.layers.62.self_attn.q_a_proj.weight_scale_inv",
                "model.layers.63.x.weight",
            ],
        );
        assert_eq!(h.present, vec![0, 1]);
        assert!(h.missing().is_empty());
        assert!(h.trunk_quantized.contains("mlp.experts.*.down_proj"));
        let names: Vec<(&str, bool)> = h
            .modules
            .iter()
            .map(|m| (m.name.as_str(), m.quantized()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("model.layers.61.eh_proj", false),
                ("model.layers.61.mlp.experts.0.down_proj", false),
                ("model.layers.62.self_attn.q_a_proj", true),
            ]
        );
        let q = head(
            1,
            64,
            &["mtp.fc.weight", "mtp.layers.0.mlp.gate_proj.weight_packed"],
        );
        assert_eq!(q.present, vec![0]);
        assert_eq!(q.modules[0].layer, None);
        let none = head(
            1,
            64,
            &["model.language_model.layers.0.mlp.gate_proj.weight"],
        );
        assert_eq!(none.missing(), vec![0]);
        assert_eq!(none.spellings(0), "`mtp.layers.0.*` or `model.layers.64.*`");
    }
}
