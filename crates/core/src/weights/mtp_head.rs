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
use crate::family::heads::{HeadLayers, HeadNaming};

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
    // MLX's affine quantization: `.scales` and `.biases` beside each quantized `.weight`.
    "biases",
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

/// `12.mlp.gate` → (12, `mlp.gate`): one to nine digits, then a dot. A byte loop: it runs for
/// every name of the index (twice `split_once`, a digit check and `parse` were a quarter of a
/// 183,610-name walk, issue 44).
fn index_of(s: &str) -> Option<(u64, &str)> {
    let mut n: u64 = 0;
    for (i, &b) in s.as_bytes().iter().enumerate().take(10) {
        match b {
            b'0'..=b'9' => n = n * 10 + u64::from(b - b'0'),
            b'.' if i > 0 => return Some((n, &s[i + 1..])),
            _ => return None,
        }
    }
    None
}

/// Where `name` sits, for a head of `depth` layers whose family keeps it as `naming` says (its
/// own prefix, or decoder index `base + j`).
fn place<'n>(name: &'n str, base: u64, depth: u64, naming: &HeadNaming) -> Place<'n> {
    for stack in STACKS {
        let Some(rest) = name.strip_prefix(stack) else {
            continue;
        };
        for spelling in naming.layers {
            let HeadLayers::Own { layers, shared, .. } = *spelling else {
                continue;
            };
            if let Some((j, tail)) = rest.strip_prefix(layers).and_then(index_of) {
                return Place::Mtp(j, tail);
            }
            if let Some(r) = shared.and_then(|p| rest.strip_prefix(p)) {
                return Place::MtpShared(r);
            }
        }
        if let Some((k, tail)) = rest.strip_prefix("layers.").and_then(index_of) {
            return if k < base {
                Place::Trunk(tail)
            } else if naming.after_trunk() && k - base < depth {
                Place::Mtp(k - base, tail)
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
    match experts_at(module) {
        Some(at) => match index_of(&module[at + EXPERTS.len()..]) {
            Some((_, tail)) => (&module[..at], tail),
            None => (module, ""),
        },
        None => (module, ""),
    }
}

const EXPERTS: &str = ".experts.";

/// Where `.experts.` first stands in `module`: `split_once(".experts.")` with a loop over the
/// dots instead of a substring searcher set up for every module name.
fn experts_at(module: &str) -> Option<usize> {
    let b = module.as_bytes();
    (0..b.len()).find(|&i| b[i] == b'.' && b[i..].starts_with(EXPERTS.as_bytes()))
}

/// The kind as text: `mlp.experts.*.down_proj`.
fn kind_text((head, tail): (&str, &str)) -> String {
    if tail.is_empty() {
        head.to_string()
    } else {
        format!("{head}.experts.*.{tail}")
    }
}

fn kind(module: &str) -> String {
    kind_text(kind_parts(module))
}

/// `(tensor, shard)` for every tensor name: the index's when there is one (it names the tensors
/// of shards not downloaded too), else the headers'. Walked, never collected (a list of the
/// 183,610 names of a DeepSeek-size index was 5.9 MB).
fn names(headers: &WeightsHeaders) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
    match &headers.index {
        Some(i) => Box::new(i.entries()),
        None => Box::new(
            headers
                .tensors()
                .map(|t| (t.name.as_str(), t.shard.as_str())),
        ),
    }
}

/// What the trunk's layers store quantized, gathered in the same walk over the names as the
/// head (one walk of 183,610 names instead of two, issue 44).
#[derive(Default)]
struct Trunk<'n> {
    /// The kinds of the modules the trunk stores quantized (a scale or packed weight beside).
    kinds: HashSet<(&'n str, &'n str)>,
    /// Whether it stores any module quantized.
    quantized: bool,
    /// The module of the last quantized part seen: a module's parts come together
    /// (`weight_scale`, `weight_scale_2`), so its kind is taken once.
    last: &'n str,
}

impl<'n> Trunk<'n> {
    fn see(&mut self, tail: &'n str) {
        let Some((module, part)) = split_part(tail) else {
            return;
        };
        if part == "weight" {
            return;
        }
        self.quantized = true;
        if module != self.last {
            self.last = module;
            self.kinds.insert(kind_parts(module));
        }
    }

    /// Which of the MTP modules' kinds the trunk stores quantized, as text.
    fn quantized_of(&self, mtp_kinds: &HashSet<(&str, &str)>) -> HashSet<String> {
        mtp_kinds
            .iter()
            .filter(|k| self.kinds.contains(*k))
            .map(|&k| kind_text(k))
            .collect()
    }
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
        // Every layer the checkpoint stores for the head (Nemotron-H: several a step).
        let depth = declared.physical;
        let mut present = std::collections::BTreeSet::new();
        let mut tensors = 0;
        let mut modules: BTreeMap<String, MtpModule> = BTreeMap::new();
        let mut mtp_kinds: HashSet<(&str, &str)> = HashSet::new();
        let mut trunk = Trunk::default();
        for (name, shard) in names(headers) {
            let (layer, tail) = match place(name, base, depth, declared.naming) {
                Place::Mtp(j, tail) if j < depth => {
                    present.insert(j);
                    (Some(j), tail)
                }
                Place::MtpShared(tail) => (None, tail),
                Place::Trunk(tail) => {
                    trunk.see(tail);
                    continue;
                }
                Place::Mtp(..) | Place::Other => continue,
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
            trunk_quantized: trunk.quantized_of(&mtp_kinds),
            trunk_is_quantized: trunk.quantized,
        }
    }

    /// Declared MTP layers with no tensor.
    pub fn missing(&self) -> Vec<u64> {
        let read = self.declared.naming.layers_read.unwrap_or(u64::MAX);
        (0..self.declared.physical.min(read).min(4096))
            .filter(|j| self.present.binary_search(j).is_err())
            .collect()
    }

    /// Where a missing layer `j` was looked for, for messages.
    pub fn spellings(&self, j: u64) -> String {
        self.declared
            .naming
            .spellings(j, self.declared.num_hidden_layers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weights::Index;

    fn head(depth: u64, base: u64, names: &[&str]) -> MtpHead {
        let index = Index::from_entries(
            "i.json",
            names
                .iter()
                .map(|n| (n.to_string(), "s.safetensors".to_string())),
        );
        let headers = WeightsHeaders {
            source: "d".into(),
            index: Some(index),
            shards: vec![],
            missing_shards: vec!["s.safetensors".into()],
            requests: 0,
            body_bytes: 0,
            map_data: Vec::new(),
        };
        let declared = MtpDeclaration {
            depth,
            key: "num_nextn_predict_layers".into(),
            num_hidden_layers: Some(base),
            naming: &crate::family::heads::ANY,
            physical: depth,
        };
        MtpHead::of(declared, &headers)
    }

    /// A layer index is one to nine digits and a dot, as `split_once` and `parse` read it.
    #[test]
    fn layer_indices() {
        assert_eq!(index_of("12.mlp.gate"), Some((12, "mlp.gate")));
        assert_eq!(index_of("007.x"), Some((7, "x")));
        assert_eq!(index_of("123456789.x"), Some((123_456_789, "x")));
        for bad in ["1234567890.x", ".x", "x.y", "12", "12x.y", "", "1_2.x"] {
            assert_eq!(index_of(bad), None, "{bad}");
        }
    }

    /// MLX's layout: `.scales` and `.biases` beside a quantized `.weight`, in the trunk and the
    /// head alike, read as quantized storage.
    #[test]
    fn mlx_scales_and_biases_are_quantized_storage() {
        let h = head(
            1,
            1,
            &[
                "language_model.model.layers.0.mlp.gate_proj.weight",
                "language_model.model.layers.0.mlp.gate_proj.scales",
                "language_model.model.layers.0.mlp.gate_proj.biases",
                "mtp.layers.0.mlp.gate_proj.weight",
                "mtp.layers.0.mlp.gate_proj.scales",
                "mtp.layers.0.mlp.gate_proj.biases",
            ],
        );
        assert!(h.trunk_is_quantized);
        assert!(h.trunk_quantized.contains("mlp.gate_proj"));
        assert_eq!(h.modules.len(), 1);
        assert!(h.modules[0].quantized());
        assert_eq!(h.modules[0].parts, vec!["scales", "biases"]);
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
