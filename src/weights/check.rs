//! The checks: every tensor of the headers against what the config (and, when known, the
//! target) makes the engine build.
//!
//! Names are first brought to one spelling: an optional `model.` prefix is stripped (and
//! reported, because vLLM does not strip it), and the aliases vLLM maps are applied
//! (`midlayer.` → `layers.0.`, `encoder.fc.` → `fc.`, `encoder.output_norm_enc.` →
//! `hidden_norm.`; DFlash2's bare codebook names get their `.weight`). Then the expected
//! tensors are built from the config's sizes, and each file tensor is either expected (its
//! shape is compared), deliberately skipped by loaders (info), refused (error), or unknown
//! (error: vLLM's loader raises). Expected tensors that no shard holds are reported missing.
//! The same finding in several decoder layers is reported once, naming the layers.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use super::{Tensor, WeightsCode, WeightsHeaders};
use crate::config::{self, ConfigFile, TargetFacts};
use crate::diagnostic::{self, Diagnostic};
use crate::json::Node;
use crate::rules::family::{self, Family};

/// The aliases vLLM's DFlash loader maps (`hf_to_vllm_mapper`); EAGLE-3's maps `midlayer.` too.
const ALIASES: &[(&str, &str)] = &[
    ("midlayer.", "layers.0."),
    ("encoder.fc.", "fc."),
    ("encoder.output_norm_enc.", "hidden_norm."),
];

/// More decoder layers than any drafter has: such a count is reported, not enumerated.
const MAX_LAYERS: u64 = 4096;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// DFlash; `v2` adds DFlash2's convolutions and candidate selector.
    Dflash {
        v2: bool,
    },
    Eagle3,
}

/// The config's numbers that shape the tensors.
#[derive(Debug, Default)]
struct Sizes {
    hidden: Option<u64>,
    layers: Option<u64>,
    heads: Option<u64>,
    kv_heads: Option<u64>,
    head_dim: Option<u64>,
    intermediate: Option<u64>,
    vocab: Option<u64>,
    /// `draft_vocab_size`, else `vocab_size`.
    draft_vocab: Option<u64>,
    draft_vocab_explicit: bool,
    /// `target_hidden_size`, else `hidden_size`, and which field it came from.
    target_hidden: Option<(u64, &'static str)>,
    /// The number of aux hidden states `fc` concatenates, and the field that says so.
    aux: Option<(u64, String)>,
    use_aux: bool,
    attention_bias: bool,
    mlp_bias: bool,
    sink_bias: bool,
    quantized: bool,
    conv_kernel: Option<u64>,
    conv_group: Option<u64>,
    selector_rank: Option<u64>,
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

impl Sizes {
    fn read(root: &Node, kind: Kind) -> Sizes {
        let hidden = uint(root, "hidden_size");
        let heads = uint(root, "num_attention_heads");
        // transformers' Qwen3Config defaults head_dim to 128; LlamaConfig to hidden / heads.
        let head_dim = uint(root, "head_dim").or(match kind {
            Kind::Eagle3 => hidden
                .zip(heads)
                .filter(|(_, h)| *h > 0)
                .map(|(a, h)| a / h),
            Kind::Dflash { .. } => {
                let model_type = root.get("model_type").and_then(Node::as_str);
                (model_type == Some("qwen3")).then_some(128)
            }
        });
        let vocab = uint(root, "vocab_size");
        let draft_vocab_field = uint(root, "draft_vocab_size");
        let target_hidden = match uint(root, "target_hidden_size") {
            Some(t) => Some((t, "target_hidden_size")),
            None => hidden.map(|h| (h, "hidden_size")),
        };
        let aux = match kind {
            // vLLM takes explicit EAGLE-style aux ids first, then the DFlash target layer ids.
            Kind::Dflash { .. } => list_len(
                root,
                &[
                    "eagle_aux_hidden_state_layer_ids",
                    "eagle_config.eagle_aux_hidden_state_layer_ids",
                    "dflash_config.target_layer_ids",
                    "target_layer_ids",
                ],
            ),
            Kind::Eagle3 => list_len(
                root,
                &[
                    "eagle_aux_hidden_state_layer_ids",
                    "eagle_config.eagle_aux_hidden_state_layer_ids",
                ],
            )
            .or(Some((3, "the EAGLE-3 default (3 aux layers)".to_string()))),
        };
        let dv = |k: &str| first_uint(root, &[&format!("dflash_config.{k}"), k]);
        Sizes {
            hidden,
            layers: uint(root, "num_hidden_layers"),
            heads,
            kv_heads: uint(root, "num_key_value_heads").or(heads),
            head_dim,
            intermediate: uint(root, "intermediate_size"),
            vocab,
            draft_vocab: draft_vocab_field.or(vocab),
            draft_vocab_explicit: draft_vocab_field.is_some(),
            target_hidden,
            aux,
            use_aux: flag(
                root,
                &[
                    "dflash_config.use_aux_hidden_state",
                    "eagle_config.use_aux_hidden_state",
                    "use_aux_hidden_state",
                ],
            )
            .unwrap_or(true),
            attention_bias: flag(root, &["attention_bias"]).unwrap_or(false),
            mlp_bias: flag(root, &["mlp_bias"]).unwrap_or(false),
            sink_bias: flag(
                root,
                &[
                    "dflash_config.attention_sink_bias",
                    "add_swa_attention_sink_bias",
                ],
            )
            .unwrap_or(false),
            quantized: root.get("quantization_config").is_some(),
            conv_kernel: dv("conv_kernel_size"),
            conv_group: dv("conv_group_size"),
            selector_rank: dv("selector_rank"),
        }
    }
}

/// One expected tensor.
#[derive(Debug, Clone)]
struct Expect {
    /// `None` when a size the shape depends on is not in the config: presence only.
    shape: Option<Vec<u64>>,
    /// The dims in words: `num_attention_heads × head_dim, hidden_size`.
    formula: String,
    code: WeightsCode,
    required: bool,
}

fn expect(dims: &[(Option<u64>, &str)], code: WeightsCode, required: bool) -> Expect {
    Expect {
        shape: dims.iter().map(|d| d.0).collect(),
        formula: dims.iter().map(|d| d.1).collect::<Vec<_>>().join(", "),
        code,
        required,
    }
}

fn mul(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    a.zip(b).and_then(|(a, b)| a.checked_mul(b))
}

/// Every tensor the engine builds for this config, by canonical name.
fn expected(kind: Kind, s: &Sizes, layers: &BTreeSet<u64>) -> BTreeMap<String, Expect> {
    use WeightsCode::{FcWidth, Shape, VocabRows};
    let mut m = BTreeMap::new();
    let h = s.hidden;
    let q_rows = mul(s.heads, s.head_dim);
    let kv_rows = mul(s.kv_heads, s.head_dim);
    let i = s.intermediate;
    for &l in layers {
        let p = |rest: &str| format!("layers.{l}.{rest}");
        let (in_dim, in_text) = if kind == Kind::Eagle3 && l == 0 {
            (mul(Some(2), h), "2 × hidden_size")
        } else {
            (h, "hidden_size")
        };
        let qh = "num_attention_heads × head_dim";
        let kvh = "num_key_value_heads × head_dim";
        m.insert(
            p("self_attn.q_proj.weight"),
            expect(&[(q_rows, qh), (in_dim, in_text)], Shape, true),
        );
        m.insert(
            p("self_attn.k_proj.weight"),
            expect(&[(kv_rows, kvh), (in_dim, in_text)], Shape, true),
        );
        m.insert(
            p("self_attn.v_proj.weight"),
            expect(&[(kv_rows, kvh), (in_dim, in_text)], Shape, true),
        );
        m.insert(
            p("self_attn.o_proj.weight"),
            expect(&[(h, "hidden_size"), (q_rows, qh)], Shape, true),
        );
        if s.attention_bias {
            m.insert(
                p("self_attn.q_proj.bias"),
                expect(&[(q_rows, qh)], Shape, true),
            );
            m.insert(
                p("self_attn.k_proj.bias"),
                expect(&[(kv_rows, kvh)], Shape, true),
            );
            m.insert(
                p("self_attn.v_proj.bias"),
                expect(&[(kv_rows, kvh)], Shape, true),
            );
            m.insert(
                p("self_attn.o_proj.bias"),
                expect(&[(h, "hidden_size")], Shape, true),
            );
        }
        m.insert(
            p("input_layernorm.weight"),
            expect(&[(h, "hidden_size")], Shape, true),
        );
        m.insert(
            p("post_attention_layernorm.weight"),
            expect(&[(h, "hidden_size")], Shape, true),
        );
        m.insert(
            p("mlp.gate_proj.weight"),
            expect(&[(i, "intermediate_size"), (h, "hidden_size")], Shape, true),
        );
        m.insert(
            p("mlp.up_proj.weight"),
            expect(&[(i, "intermediate_size"), (h, "hidden_size")], Shape, true),
        );
        m.insert(
            p("mlp.down_proj.weight"),
            expect(&[(h, "hidden_size"), (i, "intermediate_size")], Shape, true),
        );
        if s.mlp_bias {
            for name in ["gate_proj", "up_proj"] {
                m.insert(
                    p(&format!("mlp.{name}.bias")),
                    expect(&[(i, "intermediate_size")], Shape, true),
                );
            }
            m.insert(
                p("mlp.down_proj.bias"),
                expect(&[(h, "hidden_size")], Shape, true),
            );
        }
        match kind {
            Kind::Dflash { v2 } => {
                m.insert(
                    p("self_attn.q_norm.weight"),
                    expect(&[(s.head_dim, "head_dim")], Shape, true),
                );
                m.insert(
                    p("self_attn.k_norm.weight"),
                    expect(&[(s.head_dim, "head_dim")], Shape, true),
                );
                if s.sink_bias {
                    m.insert(
                        p("self_attn.attention_sink_bias"),
                        expect(&[(s.heads, "num_attention_heads")], Shape, true),
                    );
                }
                if v2 {
                    let groups = h
                        .zip(s.conv_group)
                        .filter(|(h, g)| *g > 0 && h % g == 0)
                        .map(|(h, g)| h / g);
                    let proj_rows = mul(mul(Some(2), s.conv_kernel), groups);
                    for conv in ["attention_conv", "mlp_conv"] {
                        m.insert(
                            p(&format!("{conv}.base_kernel")),
                            expect(
                                &[
                                    (Some(2), "2"),
                                    (s.conv_kernel, "conv_kernel_size"),
                                    (h, "hidden_size"),
                                ],
                                Shape,
                                true,
                            ),
                        );
                        m.insert(
                            p(&format!("{conv}.kernel_projection.weight")),
                            expect(
                                &[
                                    (
                                        proj_rows,
                                        "2 × conv_kernel_size × hidden_size / conv_group_size",
                                    ),
                                    (h, "hidden_size"),
                                ],
                                Shape,
                                true,
                            ),
                        );
                    }
                }
            }
            Kind::Eagle3 => {
                if l == 0 {
                    m.insert(
                        p("hidden_norm.weight"),
                        expect(&[(h, "hidden_size")], Shape, true),
                    );
                }
            }
        }
    }
    m.insert(
        "norm.weight".into(),
        expect(&[(h, "hidden_size")], Shape, true),
    );
    if s.use_aux {
        let width = s
            .aux
            .as_ref()
            .and_then(|(k, _)| mul(Some(*k), s.target_hidden.map(|t| t.0)));
        m.insert(
            "fc.weight".into(),
            expect(
                &[
                    (h, "hidden_size"),
                    (width, "aux layers × target hidden size"),
                ],
                FcWidth,
                true,
            ),
        );
    }
    if matches!(kind, Kind::Dflash { .. }) {
        m.insert(
            "hidden_norm.weight".into(),
            expect(&[(h, "hidden_size")], Shape, true),
        );
    }
    if kind == (Kind::Dflash { v2: true }) {
        let rank = s.selector_rank;
        for book in ["predecessor_codebook", "successor_codebook"] {
            m.insert(
                format!("candidate_selector.{book}.weight"),
                expect(
                    &[(s.vocab, "vocab_size"), (rank, "selector_rank")],
                    Shape,
                    true,
                ),
            );
        }
        m.insert(
            "candidate_selector.hidden_projection.weight".into(),
            expect(&[(rank, "selector_rank"), (h, "hidden_size")], Shape, true),
        );
    }
    m.insert(
        "embed_tokens.weight".into(),
        expect(
            &[(s.vocab, "vocab_size"), (h, "hidden_size")],
            VocabRows,
            false,
        ),
    );
    let lm_rows_text = if s.draft_vocab_explicit {
        "draft_vocab_size"
    } else {
        "vocab_size"
    };
    m.insert(
        "lm_head.weight".into(),
        expect(
            &[(s.draft_vocab, lm_rows_text), (h, "hidden_size")],
            VocabRows,
            false,
        ),
    );
    m
}

/// `model.layers.0.x` → (`layers.0.x`, prefixed); aliases applied.
fn canonical(name: &str) -> (String, bool) {
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
fn layer_of(canonical: &str) -> Option<(u64, &str)> {
    let rest = canonical.strip_prefix("layers.")?;
    let (idx, tail) = rest.split_once('.')?;
    if idx.is_empty() || !idx.bytes().all(|b| b.is_ascii_digit()) || idx.len() > 9 {
        return None;
    }
    Some((idx.parse().ok()?, tail))
}

/// `` `layers.2` ``, `` `layers.2`–`layers.4`, `layers.7` ``.
fn layer_names(layers: &[u64]) -> String {
    runs(layers, |n| format!("`layers.{n}`"))
}

fn shape_text(s: &[u64]) -> String {
    let items: Vec<String> = s.iter().map(u64::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// `2`, `2–4, 7`.
fn ranges(layers: &[u64]) -> String {
    runs(layers, |n| n.to_string())
}

/// Sorted numbers as runs of consecutive ones, each shown by `show` (`a`, or `a–b`), joined
/// by commas.
fn runs(layers: &[u64], show: impl Fn(u64) -> String) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < layers.len() {
        let start = layers[i];
        let mut end = start;
        while i + 1 < layers.len() && layers[i + 1] == end + 1 {
            i += 1;
            end = layers[i];
        }
        out.push(if start == end {
            show(start)
        } else {
            format!("{}–{}", show(start), show(end))
        });
        i += 1;
    }
    out.join(", ")
}

/// Findings that repeat across layers are grouped under the first tensor's name.
struct Grouped {
    /// (code, tail with `layers.*`, detail) → (first diagnostic, other layers).
    groups: BTreeMap<(WeightsCode, String, String), (Diagnostic, Vec<u64>)>,
    order: Vec<(WeightsCode, String, String)>,
}

impl Grouped {
    fn new() -> Self {
        Grouped {
            groups: BTreeMap::new(),
            order: Vec::new(),
        }
    }

    /// Adds `d` about `canonical`; `detail` is what must be equal for two layers to group.
    fn add(&mut self, code: WeightsCode, canonical: &str, detail: String, d: Diagnostic) {
        let (layer, key_name) = match layer_of(canonical) {
            Some((l, tail)) => (Some(l), format!("layers.*.{tail}")),
            None => (None, canonical.to_string()),
        };
        let key = (code, key_name, detail);
        match self.groups.get_mut(&key) {
            Some((_, others)) => others.extend(layer),
            None => {
                self.order.push(key.clone());
                self.groups.insert(key, (d, Vec::new()));
            }
        }
    }

    fn finish(mut self, out: &mut Vec<Diagnostic>) {
        for key in self.order {
            if let Some((mut d, others)) = self.groups.remove(&key) {
                if !others.is_empty() {
                    d.message.push_str(&format!(
                        " (the same in layer{} {})",
                        if others.len() == 1 { "" } else { "s" },
                        ranges(&others)
                    ));
                }
                out.push(d);
            }
        }
    }
}

fn diag(code: WeightsCode, path: &str, file: &str, message: String) -> Diagnostic {
    Diagnostic::new(code, super::info(code), path, message).file(file)
}

fn kind_of(config: &ConfigFile) -> Option<Kind> {
    let d = family::detect(config.root())?;
    match d.name {
        Family::Dflash => Some(Kind::Dflash { v2: false }),
        Family::Dflash2 => Some(Kind::Dflash { v2: true }),
        Family::Eagle3 => Some(Kind::Eagle3),
        // The speculators format renames tensors, and DSpark, Domino, P-EAGLE and MTP heads carry
        // tensors of their own whose names were not read from a loader: not checked here, so a
        // real tensor is never called unexpected.
        Family::Speculators | Family::Dspark | Family::Domino | Family::Peagle | Family::Mtp => {
            None
        }
    }
}

/// Checks the headers of a drafter's weights against its config and, when given, its target.
///
/// Index problems (a shard that is missing, a weight map that disagrees with the shards, a
/// tensor in two shards) are reported for any config; tensor names and shapes only for a
/// config of a known family (DFlash, DFlash2, EAGLE-3).
pub fn check(
    config: &ConfigFile,
    headers: &WeightsHeaders,
    target: Option<&TargetFacts>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    check_index(headers, &mut out);
    check_quantization(config, headers, &mut out);

    // Canonical names, first occurrence wins; later ones are duplicates.
    let mut by_name: BTreeMap<String, &Tensor> = BTreeMap::new();
    let mut prefixed: Vec<&Tensor> = Vec::new();
    for t in headers.tensors() {
        let (canon, had_prefix) = canonical(&t.name);
        if had_prefix {
            prefixed.push(t);
        }
        match by_name.get(&canon) {
            Some(first) => out.push(
                diag(
                    WeightsCode::DuplicateTensor,
                    &t.name,
                    &headers.display_of(&t.shard),
                    if first.name == t.name {
                        format!(
                            "`{}` is in `{}` and again in `{}`: loaders keep whichever they read last",
                            t.name, first.shard, t.shard
                        )
                    } else {
                        format!(
                            "`{}` (in `{}`) and `{}` (in `{}`) are the same tensor `{canon}` once aliases are \
                             applied: loaders keep whichever they read last",
                            first.name, first.shard, t.name, t.shard
                        )
                    },
                ),
            ),
            None => {
                by_name.insert(canon, t);
            }
        }
    }
    if let Some(first) = prefixed.first() {
        out.push(diag(
            WeightsCode::ModelPrefix,
            &first.name,
            &headers.display_of(&first.shard),
            format!(
                "{} tensor name(s) start with `model.` (`{}`): transformers strips the prefix, but vLLM's DFlash and \
                 EAGLE-3 loaders prepend `model.` to every name except lm_head and refuse the unmatched \
                 `model.model.*` names at load",
                prefixed.len(),
                first.name
            ),
        ));
    }

    let Some(kind) = kind_of(config) else {
        diagnostic::sort(&mut out);
        return out;
    };
    let sizes = Sizes::read(config.root(), kind);
    let cfg = config.path.display().to_string();

    // Tensors the index maps to a missing shard are reported as weights-shard-missing only.
    let in_missing_shard: BTreeSet<String> = match &headers.index {
        Some(index) => index
            .weight_map
            .iter()
            .filter(|(_, f)| headers.missing_shards.contains(f))
            .map(|(t, _)| canonical(t).0)
            .collect(),
        None => BTreeSet::new(),
    };

    // Decoder layers.
    let file_layers: BTreeSet<u64> = by_name
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
    if let Some(n) = sizes.layers {
        let extra: Vec<u64> = file_layers.iter().copied().filter(|&l| l >= n).collect();
        let mut missing: Vec<u64> = (0..n.min(MAX_LAYERS))
            .filter(|l| !file_layers.contains(l))
            .collect();
        if n > MAX_LAYERS && missing.is_empty() {
            // Layers MAX_LAYERS.. are missing too; name the first.
            missing.push(MAX_LAYERS.max(file_layers.iter().max().map_or(0, |m| m + 1)));
        }
        if !extra.is_empty() || !missing.is_empty() {
            let (path, file) = match extra.first() {
                Some(l) => {
                    let t = by_name
                        .iter()
                        .find(|(k, _)| layer_of(k).is_some_and(|x| x.0 == *l))
                        .map(|(_, t)| *t);
                    (
                        format!("layers.{l}"),
                        t.map_or_else(|| cfg.clone(), |t| headers.display_of(&t.shard)),
                    )
                }
                None => (
                    format!("layers.{}", missing.first().copied().unwrap_or(0)),
                    whole_file(headers),
                ),
            };
            let held = if file_layers.is_empty() {
                "the weights hold no decoder layer".to_string()
            } else {
                format!(
                    "the weights hold {} decoder layer(s) ({})",
                    file_layers.len(),
                    ranges(&file_layers.iter().copied().collect::<Vec<_>>())
                )
            };
            let mut msg = format!("{held} but `num_hidden_layers` is {n}");
            if !extra.is_empty() {
                msg.push_str(&format!(
                    "; {} {} no place in the model (vLLM refuses {})",
                    layer_names(&extra),
                    if extra.len() == 1 { "has" } else { "have" },
                    if extra.len() == 1 { "it" } else { "them" },
                ));
            }
            if !missing.is_empty() {
                msg.push_str(&format!(
                    "; {}{} would run uninitialised",
                    layer_names(&missing),
                    if n > MAX_LAYERS {
                        " and every later layer"
                    } else {
                        ""
                    }
                ));
            }
            out.push(
                diag(WeightsCode::LayerCount, &path, &file, msg).expected(json!(file_layers.len())),
            );
        }
    }

    let expect = expected(kind, &sizes, &layers);
    let mut grouped = Grouped::new();
    let target_vocab = target.and_then(|t| t.vocab_size).or(sizes.vocab);
    let need_map = match (sizes.draft_vocab, target_vocab) {
        (Some(d), Some(t)) => Some(d != t),
        _ => None,
    };

    for (canon, t) in &by_name {
        let file = headers.display_of(&t.shard);
        let name = t.name.as_str();
        if let Some(e) = expect.get(canon.as_str()) {
            check_shape(&mut grouped, canon, t, e, &sizes, target, &file);
            continue;
        }
        let last = canon.rsplit('.').next().unwrap_or("");
        if canon == "d2t" || canon == "t2d" {
            continue; // below, with the vocabularies
        }
        if canon == "mask_hidden" || canon.ends_with(".mask_hidden") {
            match kind {
                Kind::Dflash { .. } => out.push(diag(
                    WeightsCode::ForbiddenTensor,
                    name,
                    &file,
                    format!(
                        "`{name}` is in the weights: vLLM's DFlash loader asserts that no tensor is named mask_hidden \
                         (DFlash embeds masked slots through mask_token_id), so the load fails"
                    ),
                )),
                Kind::Eagle3 => out.push(diag(
                    WeightsCode::IgnoredTensor,
                    name,
                    &file,
                    format!(
                        "`{name}` is only used by vLLM's parallel drafting; otherwise it is skipped with a warning"
                    ),
                )),
            }
            continue;
        }
        if canon == "mask_embedding" && matches!(kind, Kind::Dflash { .. }) {
            out.push(diag(
                WeightsCode::IgnoredTensor,
                name,
                &file,
                format!(
                    "`{name}` is skipped by vLLM, which reads a separate mask embedding only from mask_embedding.pt"
                ),
            ));
            continue;
        }
        if ROTARY_BUFFERS.iter().any(|r| canon.ends_with(r)) {
            grouped.add(
                WeightsCode::IgnoredTensor,
                canon,
                String::new(),
                diag(
                    WeightsCode::IgnoredTensor,
                    name,
                    &file,
                    format!(
                        "`{name}` is a rotary-embedding buffer that loaders skip; it is recomputed"
                    ),
                ),
            );
            continue;
        }
        if let Some((l, _)) = layer_of(canon) {
            if !layers.contains(&l) {
                continue; // reported as weights-layer-count
            }
        }
        if sizes.quantized && QUANT_SUFFIXES.iter().any(|s| last.ends_with(s)) {
            continue;
        }
        let why = if canon.ends_with(".bias") && !sizes.attention_bias && !sizes.mlp_bias {
            " (the config has no `attention_bias: true`)"
        } else {
            ""
        };
        grouped.add(
            WeightsCode::UnexpectedTensor,
            canon,
            String::new(),
            diag(
                WeightsCode::UnexpectedTensor,
                name,
                &file,
                format!(
                    "`{name}` matches no parameter of the {} drafter this config describes{why}: vLLM's loader raises \
                     \"There is no module or parameter named\"",
                    kind_name(kind)
                ),
            ),
        );
    }

    // Expected tensors that no shard holds.
    let whole = whole_file(headers);
    for (canon, e) in &expect {
        if by_name.contains_key(canon) || in_missing_shard.contains(canon) {
            continue;
        }
        if let Some((l, _)) = layer_of(canon) {
            if !file_layers.contains(&l) {
                continue; // a whole layer: reported as weights-layer-count
            }
        }
        let required = e.required || (canon == "lm_head.weight" && need_map == Some(true));
        if !required {
            continue;
        }
        let why = if canon == "lm_head.weight" {
            ": a reduced draft vocabulary needs the drafter's own LM head".to_string()
        } else if canon == "fc.weight" {
            ": the drafter cannot combine the target's hidden states".to_string()
        } else {
            ": it would run uninitialised (random in transformers, unset in vLLM)".to_string()
        };
        grouped.add(
            WeightsCode::MissingTensor,
            canon,
            String::new(),
            diag(
                WeightsCode::MissingTensor,
                canon,
                &whole,
                format!("`{canon}` is in no shard{why}"),
            )
            .expected(json!(e.shape)),
        );
    }
    grouped.finish(&mut out);

    // A d2t the index puts in a missing shard is reported as weights-shard-missing.
    let need_map = need_map.filter(|_| !in_missing_shard.contains("d2t"));
    check_vocab_map(
        &mut out,
        kind,
        &sizes,
        &by_name,
        headers,
        target_vocab,
        need_map,
        target.is_some(),
    );
    diagnostic::sort(&mut out);
    out
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Dflash { v2: false } => "DFlash",
        Kind::Dflash { v2: true } => "DFlash2",
        Kind::Eagle3 => "EAGLE-3",
    }
}

/// The file to name for something about the whole set: the single file, or the index.
fn whole_file(headers: &WeightsHeaders) -> String {
    match (&headers.index, headers.shards.first()) {
        (Some(i), _) => i.display.clone(),
        (None, Some(s)) => s.display.clone(),
        (None, None) => headers.source.clone(),
    }
}

fn check_shape(
    grouped: &mut Grouped,
    canon: &str,
    t: &Tensor,
    e: &Expect,
    sizes: &Sizes,
    target: Option<&TargetFacts>,
    file: &str,
) {
    let name = t.name.as_str();
    // A quantized checkpoint packs or pads its linear weights: compare float tensors only.
    if sizes.quantized && !matches!(t.dtype.as_str(), "F16" | "BF16" | "F32" | "F64") {
        return;
    }
    if let Some(shape) = &e.shape {
        if &t.shape != shape {
            let message = if e.code == WeightsCode::FcWidth {
                fc_message(name, &t.shape, shape, sizes)
            } else {
                format!(
                    "`{name}` is {} but the config builds {} ({})",
                    shape_text(&t.shape),
                    shape_text(shape),
                    e.formula
                )
            };
            grouped.add(
                e.code,
                canon,
                format!("{:?}{:?}", t.shape, shape),
                diag(e.code, name, file, message).expected(json!(shape)),
            );
            return;
        }
    }
    // The fc fits the config; does it fit the target it will run on?
    if e.code == WeightsCode::FcWidth {
        if let (Some(th), Some((cfg_th, field)), Some((k, _)), Some(width)) = (
            target.and_then(|t| t.hidden_size),
            sizes.target_hidden,
            sizes.aux.as_ref(),
            t.shape.get(1),
        ) {
            if th != cfg_th {
                grouped.add(
                    e.code,
                    canon,
                    "target".to_string(),
                    diag(
                        e.code,
                        name,
                        file,
                        format!(
                            "`{name}` takes {width} inputs = {k} × {cfg_th} (`{field}`), but the target's hidden size \
                             is {th}: it will pass {k} × {th} = {} features and the drafter fails at the first step",
                            k.saturating_mul(th)
                        ),
                    )
                    .expected(json!([t.shape.first(), k.saturating_mul(th)])),
                );
            }
        }
    }
}

fn fc_message(name: &str, got: &[u64], want: &[u64], sizes: &Sizes) -> String {
    let (Some(&rows), Some(&width)) = (got.first(), got.get(1)) else {
        return format!(
            "`{name}` is {} but the config builds {}",
            shape_text(got),
            shape_text(want)
        );
    };
    let mut msg = format!(
        "`{name}` is {} but the config builds {}",
        shape_text(got),
        shape_text(want)
    );
    if let (Some((k, field)), Some((th, th_field))) = (sizes.aux.as_ref(), sizes.target_hidden) {
        if want.get(1) != Some(&width) {
            msg = format!(
                "`{name}` takes {width} inputs but the config gives {k} aux layers ({field}) × {th} (`{th_field}`) = {}",
                k.saturating_mul(th)
            );
            if th > 0 && width % th == 0 {
                msg.push_str(&format!(
                    ": the weights were trained with {} target layers",
                    width / th
                ));
            }
        }
        if want.first() != Some(&rows) {
            msg.push_str(&format!(
                "; it has {rows} output rows, hidden_size is {}",
                want.first().copied().unwrap_or(0)
            ));
        }
    }
    msg
}

#[allow(clippy::too_many_arguments)]
fn check_vocab_map(
    out: &mut Vec<Diagnostic>,
    kind: Kind,
    sizes: &Sizes,
    by_name: &BTreeMap<String, &Tensor>,
    headers: &WeightsHeaders,
    target_vocab: Option<u64>,
    need_map: Option<bool>,
    from_target: bool,
) {
    let tv_text = if from_target {
        "the target's vocabulary"
    } else {
        "vocab_size"
    };
    match (by_name.get("d2t"), need_map) {
        (None, Some(true)) => out.push(
            diag(
                WeightsCode::D2tMissing,
                "d2t",
                &whole_file(headers),
                format!(
                    "the draft vocabulary ({} {}) differs from {tv_text} ({}), and no shard holds `d2t`: vLLM keeps its \
                     draft-to-target map at zero, every drafted id becomes the wrong token, and acceptance collapses \
                     with no error",
                    if sizes.draft_vocab_explicit {
                        "draft_vocab_size"
                    } else {
                        "vocab_size, no draft_vocab_size"
                    },
                    sizes.draft_vocab.unwrap_or(0),
                    target_vocab.unwrap_or(0)
                ),
            )
            .expected(json!([sizes.draft_vocab])),
        ),
        (Some(t), _) => {
            let file = headers.display_of(&t.shard);
            if let Some(dv) = sizes.draft_vocab {
                if t.shape != [dv] {
                    out.push(
                        diag(
                            WeightsCode::D2tLength,
                            &t.name,
                            &file,
                            format!(
                                "`{}` is {} but draft_vocab_size is {dv}: it must hold one offset per draft id",
                                t.name,
                                shape_text(&t.shape)
                            ),
                        )
                        .expected(json!([dv])),
                    );
                }
            }
            if need_map == Some(false) && matches!(kind, Kind::Dflash { .. }) {
                out.push(diag(
                    WeightsCode::UnexpectedTensor,
                    &t.name,
                    &file,
                    format!(
                        "`{}` is in the weights but the draft vocabulary ({}) equals {tv_text}: vLLM's DFlash model \
                         then has no draft_id_to_target_id parameter and refuses the tensor",
                        t.name,
                        sizes.draft_vocab.unwrap_or(0)
                    ),
                ));
            }
        }
        _ => {}
    }
    if let (Some(t), Some(tv)) = (by_name.get("t2d"), target_vocab) {
        if t.shape != [tv] {
            out.push(
                diag(
                    WeightsCode::T2dLength,
                    &t.name,
                    &headers.display_of(&t.shard),
                    format!(
                        "`{}` is {} but {tv_text} is {tv}: the mapping was built for another vocabulary",
                        t.name,
                        shape_text(&t.shape)
                    ),
                )
                .expected(json!([tv])),
            );
        }
    }
}

/// A shard the index names that is missing; tensors the index and the shards disagree on.
fn check_index(headers: &WeightsHeaders, out: &mut Vec<Diagnostic>) {
    let Some(index) = &headers.index else { return };
    for s in &headers.missing_shards {
        let n = index.weight_map.iter().filter(|(_, f)| f == s).count();
        out.push(diag(
            WeightsCode::ShardMissing,
            s,
            &index.display,
            format!(
                "the index maps {n} tensor(s) to `{s}`, which does not exist: loaders fail opening it"
            ),
        ));
    }
    let mut in_shard: BTreeMap<(&str, &str), ()> = BTreeMap::new();
    for t in headers.tensors() {
        in_shard.insert((t.name.as_str(), t.shard.as_str()), ());
    }
    let mapped: BTreeSet<(&str, &str)> = index
        .weight_map
        .iter()
        .map(|(t, f)| (t.as_str(), f.as_str()))
        .collect();
    let present: BTreeSet<&str> = headers.shards.iter().map(|s| s.file.as_str()).collect();
    let mut problems = 0usize;
    let mut first: Option<Diagnostic> = None;
    for (t, f) in &mapped {
        if present.contains(f) && !in_shard.contains_key(&(*t, *f)) {
            problems += 1;
            first.get_or_insert_with(|| {
                diag(
                    WeightsCode::IndexMismatch,
                    t,
                    &index.display,
                    format!("the index maps `{t}` to `{f}`, which does not hold it"),
                )
                .expected(json!(headers
                    .tensors()
                    .find(|x| x.name == *t)
                    .map(|x| x.shard.clone())))
            });
        }
    }
    let mapped_names: BTreeSet<&str> = mapped.iter().map(|(t, _)| *t).collect();
    for t in headers.tensors() {
        if !mapped_names.contains(t.name.as_str()) {
            problems += 1;
            first.get_or_insert_with(|| {
                diag(
                    WeightsCode::IndexMismatch,
                    &t.name,
                    &index.display,
                    format!(
                        "`{}` is in `{}` but not in the index's weight_map",
                        t.name, t.shard
                    ),
                )
                .expected(json!(t.shard))
            });
        }
    }
    if let Some(mut d) = first {
        if problems > 1 {
            d.message
                .push_str(&format!(" ({} more disagreement(s))", problems - 1));
        }
        out.push(d);
    }
}

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

/// The tensors against the config's `quantization_config`, both ways.
fn check_quantization(config: &ConfigFile, headers: &WeightsHeaders, out: &mut Vec<Diagnostic>) {
    let declared = crate::config::QuantFacts::from_root(config.root());
    let evidence = quantized_tensor(headers);
    let cfg = config.path.display().to_string();
    match (declared, evidence) {
        (None, Some(t)) => out.push(diag(
            WeightsCode::QuantizedUndeclared,
            &t.name,
            &headers.display_of(&t.shard),
            format!(
                "`{}` ({} {}) is a quantized tensor but {cfg} has no quantization_config: engines build \
                 unquantized layers from the config; write the quantization_config the quantizer produced",
                t.name,
                t.dtype,
                shape_text(&t.shape)
            ),
        )),
        (Some(q), None) => {
            let floats = headers
                .tensors()
                .filter(|t| t.name.ends_with(".weight") && t.shape.len() == 2)
                .count();
            if floats > 0 {
                out.push(diag(
                    WeightsCode::QuantizationUnmatched,
                    "quantization_config",
                    &cfg,
                    format!(
                        "{cfg} declares quantization_config ({}) but all {floats} linear weights are \
                         floating-point and no tensor holds scales or packed weights: the engine builds \
                         quantized layers for float tensors; remove the quantization_config or publish the \
                         quantized tensors",
                        q.describe()
                    ),
                ));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_canonical() {
        assert_eq!(
            canonical("midlayer.mlp.up_proj.weight").0,
            "layers.0.mlp.up_proj.weight"
        );
        assert_eq!(canonical("encoder.fc.weight").0, "fc.weight");
        assert_eq!(
            canonical("encoder.output_norm_enc.weight").0,
            "hidden_norm.weight"
        );
        assert_eq!(
            canonical("model.layers.2.input_layernorm.weight"),
            ("layers.2.input_layernorm.weight".to_string(), true)
        );
        assert_eq!(
            canonical("candidate_selector.successor_codebook").0,
            "candidate_selector.successor_codebook.weight"
        );
        assert_eq!(layer_of("layers.12.mlp.x"), Some((12, "mlp.x")));
        assert_eq!(layer_of("layers.x.mlp"), None);
        assert_eq!(ranges(&[1, 2, 3, 5, 7, 8]), "1–3, 5, 7–8");
    }
}
