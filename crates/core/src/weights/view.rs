//! What the weights rules see: the headers' tensors under one spelling of their names, and —
//! for a config of a family whose tensor layout is known — the config's sizes and the tensors
//! the engine builds from them. Built once per check from parsed headers and the parsed config;
//! nothing here reads a file or the network.
//!
//! Names are first brought to one spelling: an optional `model.` prefix is stripped (the
//! `weights-model-prefix` rule reports it, because vLLM does not strip it), and the aliases vLLM
//! maps are applied (`midlayer.` → `layers.0.`, `encoder.fc.` → `fc.`,
//! `encoder.output_norm_enc.` → `hidden_norm.`; DFlash2's bare codebook names get their
//! `.weight`). The first tensor of a canonical name wins; a later one is a duplicate.

use std::collections::{BTreeMap, BTreeSet};

use super::expected::{expected, Expect};
use super::facts::Sizes;
use super::{Tensor, WeightsHeaders};
use crate::config::{ConfigFile, TargetFacts};
use crate::family::{self, WeightsLayout};

/// The aliases vLLM's DFlash loader maps (`hf_to_vllm_mapper`); EAGLE-3's maps `midlayer.` too.
const ALIASES: &[(&str, &str)] = &[
    ("midlayer.", "layers.0."),
    ("encoder.fc.", "fc."),
    ("encoder.output_norm_enc.", "hidden_norm."),
];

/// More decoder layers than any drafter has: such a count is reported, not enumerated.
pub(super) const MAX_LAYERS: u64 = 4096;

/// Tensors loaders skip by name.
const ROTARY_BUFFERS: &[&str] = &[
    "rotary_emb.inv_freq",
    "rotary_emb.cos_cached",
    "rotary_emb.sin_cached",
];

/// Name endings of quantization companions (scales, zero points, packed weights).
const QUANT_SUFFIXES: &[&str] = &[
    "_scale",
    "_scale_inv",
    "weight_packed",
    "weight_shape",
    "zero_point",
    "qweight",
    "qzeros",
    "scales",
    "g_idx",
];

/// `model.layers.0.x` → (`layers.0.x`, prefixed); aliases applied.
pub(super) fn canonical(name: &str) -> (String, bool) {
    let (rest, prefixed) = match name.strip_prefix("model.") {
        Some(r) => (r, true),
        None => (name, false),
    };
    let mut n = rest.to_string();
    for (from, to) in ALIASES {
        if let Some(tail) = n.strip_prefix(from) {
            n = format!("{to}{tail}");
            break;
        }
    }
    // DFlash2 ships its codebooks as bare parameters; z-lab's from_pretrained maps them.
    if n == "candidate_selector.predecessor_codebook"
        || n == "candidate_selector.successor_codebook"
    {
        n.push_str(".weight");
    }
    (n, prefixed)
}

/// `layers.3.self_attn.q_proj.weight` → (3, `self_attn.q_proj.weight`).
pub(super) fn layer_of(canonical: &str) -> Option<(u64, &str)> {
    let rest = canonical.strip_prefix("layers.")?;
    let (idx, tail) = rest.split_once('.')?;
    if idx.is_empty() || !idx.bytes().all(|b| b.is_ascii_digit()) || idx.len() > 9 {
        return None;
    }
    Some((idx.parse().ok()?, tail))
}

/// A tensor whose canonical name an earlier tensor already has.
pub struct Duplicate<'a> {
    pub first: &'a Tensor,
    pub again: &'a Tensor,
    pub canonical: String,
}

/// The headers' tensors by canonical name.
pub struct Names<'a> {
    /// The first tensor of each canonical name.
    pub by_name: BTreeMap<String, &'a Tensor>,
    /// Tensors written with a `model.` prefix, in file order.
    pub prefixed: Vec<&'a Tensor>,
    pub duplicates: Vec<Duplicate<'a>>,
}

impl<'a> Names<'a> {
    fn of(headers: &'a WeightsHeaders) -> Names<'a> {
        let mut names = Names {
            by_name: BTreeMap::new(),
            prefixed: Vec::new(),
            duplicates: Vec::new(),
        };
        for t in headers.tensors() {
            let (canon, had_prefix) = canonical(&t.name);
            if had_prefix {
                names.prefixed.push(t);
            }
            match names.by_name.get(&canon) {
                Some(first) => names.duplicates.push(Duplicate {
                    first,
                    again: t,
                    canonical: canon,
                }),
                None => {
                    names.by_name.insert(canon, t);
                }
            }
        }
        names
    }
}

/// What a file tensor is, for a config of a known layout.
pub enum Class<'e> {
    /// A tensor the engine builds: its shape is compared.
    Expected(&'e Expect),
    /// `d2t` / `t2d`: compared with the vocabularies.
    VocabMap,
    /// `mask_hidden`: refused by DFlash, skipped by EAGLE-3 without parallel drafting.
    MaskHidden,
    /// A DFlash `mask_embedding` tensor: skipped.
    MaskEmbedding,
    /// A rotary buffer: skipped.
    Rotary,
    /// A tensor of a layer past `num_hidden_layers`: reported as `weights-layer-count`.
    BeyondLayers,
    /// A quantization companion in a quantized checkpoint.
    QuantCompanion,
    /// Nothing the engine has a parameter for.
    Unknown,
}

/// The config's tensor layout: its family, sizes and the tensors the engine builds.
pub struct Layout {
    pub kind: WeightsLayout,
    pub sizes: Sizes,
    /// Canonical names the index maps to a shard that does not exist (reported as
    /// `weights-shard-missing` only).
    pub in_missing_shard: BTreeSet<String>,
    /// The decoder layers the weights hold (or the index maps to a missing shard).
    pub file_layers: BTreeSet<u64>,
    /// The decoder layers the engine builds.
    pub layers: BTreeSet<u64>,
    pub expect: BTreeMap<String, Expect>,
    /// The target's vocabulary (`--target`), else the config's `vocab_size`.
    pub target_vocab: Option<u64>,
    /// Whether the draft vocabulary differs from the target's, so a `d2t` is needed.
    pub need_map: Option<bool>,
}

impl Layout {
    fn of(
        kind: WeightsLayout,
        config: &ConfigFile,
        headers: &WeightsHeaders,
        names: &Names,
        target: Option<&TargetFacts>,
    ) -> Layout {
        let sizes = Sizes::read(config.root(), kind);
        let missing: std::collections::HashSet<&str> =
            headers.missing_shards.iter().map(String::as_str).collect();
        let in_missing_shard: BTreeSet<String> = match &headers.index {
            Some(index) => index
                .entries()
                .filter(|(_, f)| missing.contains(f))
                .map(|(t, _)| canonical(t).0)
                .collect(),
            None => BTreeSet::new(),
        };
        let file_layers: BTreeSet<u64> = names
            .by_name
            .keys()
            .chain(in_missing_shard.iter())
            .filter_map(|n| layer_of(n))
            .map(|l| l.0)
            .collect();
        // A layer count no drafter has (a hostile or mistyped config) is not enumerated.
        let layers: BTreeSet<u64> = match sizes.layers {
            Some(n) if n <= MAX_LAYERS => (0..n).collect(),
            Some(n) => file_layers.iter().copied().filter(|&l| l < n).collect(),
            None => file_layers.clone(),
        };
        let target_vocab = target.and_then(|t| t.vocab_size).or(sizes.vocab);
        let need_map = sizes.draft_vocab.zip(target_vocab).map(|(d, t)| d != t);
        Layout {
            expect: expected(kind, &sizes, &layers),
            kind,
            sizes,
            in_missing_shard,
            file_layers,
            layers,
            target_vocab,
            need_map,
        }
    }

    /// Whether a `d2t` is needed, leaving out a `d2t` the index puts in a missing shard
    /// (reported as `weights-shard-missing`).
    pub fn map_needed(&self) -> Option<bool> {
        self.need_map
            .filter(|_| !self.in_missing_shard.contains("d2t"))
    }

    /// What the file tensor of canonical name `canon` is.
    pub fn classify(&self, canon: &str) -> Class<'_> {
        if let Some(e) = self.expect.get(canon) {
            return Class::Expected(e);
        }
        if canon == "d2t" || canon == "t2d" {
            return Class::VocabMap;
        }
        if canon == "mask_hidden" || canon.ends_with(".mask_hidden") {
            return Class::MaskHidden;
        }
        if canon == "mask_embedding" && self.kind.is_dflash() {
            return Class::MaskEmbedding;
        }
        if ROTARY_BUFFERS.iter().any(|r| canon.ends_with(r)) {
            return Class::Rotary;
        }
        if layer_of(canon).is_some_and(|(l, _)| !self.layers.contains(&l)) {
            return Class::BeyondLayers;
        }
        let last = canon.rsplit('.').next().unwrap_or("");
        if self.sizes.quantized && QUANT_SUFFIXES.iter().any(|s| last.ends_with(s)) {
            return Class::QuantCompanion;
        }
        Class::Unknown
    }
}

/// Everything the rules see: the parsed config and headers, the target's facts, and what is
/// derived from them once.
pub struct View<'a> {
    pub config: &'a ConfigFile,
    pub headers: &'a WeightsHeaders,
    pub target: Option<&'a TargetFacts>,
    pub names: Names<'a>,
    /// `None` for a config of no family whose tensor layout is known.
    pub layout: Option<Layout>,
    /// The GGUF header, when the weights are one `.gguf` file (`rules::run_gguf`).
    pub gguf: Option<&'a crate::gguf::GgufHeader>,
    /// The target a GGUF draft is served with (a launch line's `-m`, `weights --target`).
    pub gguf_target: Option<super::GgufTarget>,
    /// The exclude list the engine matches the MTP head against (from config.json or the
    /// hf_quant_config.json beside it), read once for the MTP rules; `None` when the config
    /// declares no head, has no judged quant method, or the list cannot be read
    /// (`check_inputs` reports that as bad input).
    pub exclusions: Option<super::quant_exclude::Exclusions>,
    /// What the weights are checked for: the `weights` command's shards, or a deployment
    /// (where a config checkout without shards is the usual case).
    pub purpose: Purpose,
    /// The engine and release the weights will be served with (`weights --engine`, a launch
    /// line's): where engines load a checkpoint differently, the rules judge this one.
    pub engine: Option<crate::engine::EngineRelease>,
    /// The MTP head the config declares, as the headers hold it (`mtp_head`), found once for
    /// the four MTP rules (each found it again: 4 walks of a 183,610-name index, issue 44).
    pub mtp: Option<super::mtp_head::MtpHead>,
}

/// What a weights check is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Purpose {
    /// The `weights` command: the shards are what it was asked about, so an index whose shards
    /// are all absent is an error.
    #[default]
    Shards,
    /// A deployment gate (`lint`, `check`, `launch`, `doctor`): a config and index without
    /// shards is judged from what is there, the rest listed as not made.
    Deployment,
    /// A deployment's target served beside a separate drafter: as [`Purpose::Deployment`],
    /// but an MTP head it declares is not built, so the head's rules do not apply.
    TargetWithoutHead,
}

impl Purpose {
    /// Whether a deployment gate asks (a config checkout without shards is the usual case).
    pub fn is_deployment(self) -> bool {
        self != Purpose::Shards
    }
}

impl<'a> View<'a> {
    pub fn new(
        config: &'a ConfigFile,
        headers: &'a WeightsHeaders,
        target: Option<&'a TargetFacts>,
    ) -> View<'a> {
        let names = Names::of(headers);
        // The family's row says which layout its loaders build: the speculators format renames
        // tensors, and DSpark, Domino, P-EAGLE and MTP heads carry tensors of their own whose
        // names were not read from a loader: not checked, so a real tensor is never called
        // unexpected.
        let layout = family::detect(config.root())
            .and_then(|d| d.name.spec().rules.weights)
            .map(|k| Layout::of(k, config, headers, &names, target));
        let declared = crate::family::embedded::declared(config.root())
            .ok()
            .flatten();
        let exclusions = declared
            .is_some()
            .then(|| {
                super::quant_exclude::Exclusions::of_config(config)
                    .ok()
                    .flatten()
            })
            .flatten();
        View {
            config,
            headers,
            target,
            names,
            layout,
            gguf: None,
            gguf_target: None,
            exclusions,
            engine: None,
            purpose: Purpose::Shards,
            mtp: declared.map(|d| super::mtp_head::MtpHead::of(d, headers)),
        }
    }

    /// The file to name for something about the whole set: the single file, or the index.
    pub fn whole_file(&self) -> String {
        let h = self.headers;
        match (&h.index, h.shards.first()) {
            (Some(i), _) => i.display.clone(),
            (None, Some(s)) => s.display.clone(),
            (None, None) => h.source.clone(),
        }
    }

    /// How findings name the file that holds `t`.
    pub fn file_of(&self, t: &Tensor) -> String {
        self.headers.display_of(&t.shard)
    }
}
