//! Rules that compare the tensors the engine builds with the file's: the decoder layers, the
//! fc's width (against the config and the target), every other shape, the vocabulary rows.
//! The same finding in several layers is reported once, naming the layers.

use serde_json::json;

use super::cx::{Applies, Cx, Rule, KNOWN_LAYOUTS};
use super::expected::Expect;
use super::facts::Sizes;
use super::text::{layer_names, ranges, shape_text, Grouped};
use super::view::{layer_of, Layout, View, MAX_LAYERS};
use super::{Tensor, WeightsCode};
use crate::diagnostic::{CodeInfo, Diagnostic, Severity};

pub(super) const RULES: &[Rule] = &[LAYER_COUNT, FC_WIDTH, SHAPE, VOCAB_ROWS];

/// The file tensors whose shape the running rule compares: the expected ones of its code.
/// A quantized checkpoint packs or pads its linear weights: float tensors only.
fn compared<'v>(
    v: &'v View,
    l: &'v Layout,
    code: WeightsCode,
) -> impl Iterator<Item = (&'v str, &'v Tensor, &'v Expect)> {
    v.names.by_name.iter().filter_map(move |(canon, t)| {
        let e = l.expect.get(canon.as_str()).filter(|e| e.code == code)?;
        let float = matches!(t.dtype.as_str(), "F16" | "BF16" | "F32" | "F64");
        (float || !l.sizes.quantized).then_some((canon.as_str(), *t, e))
    })
}

/// The finding for a tensor whose shape differs from the expected one, if it does.
fn mismatch(cx: &Cx, t: &Tensor, e: &Expect, sizes: &Sizes) -> Option<Diagnostic> {
    let shape = e.shape.as_ref().filter(|s| **s != t.shape)?;
    let name = t.name.as_str();
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
    Some(
        cx.diag(name, &cx.v.file_of(t), message)
            .expected(json!(shape)),
    )
}

/// Compares every tensor of the running rule, grouping repeats across layers.
fn compare_shapes(cx: &mut Cx) {
    let v = cx.v;
    let Some(l) = &v.layout else { return };
    let mut grouped = Grouped::new();
    for (canon, t, e) in compared(v, l, cx.code()) {
        if let Some(d) = mismatch(cx, t, e, &l.sizes) {
            grouped.add(canon, format!("{:?}{:?}", t.shape, e.shape), d);
        }
    }
    grouped.finish(cx);
}

const LAYER_COUNT: Rule = Rule {
    code: WeightsCode::LayerCount,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the file's decoder layers differ from num_hidden_layers",
        explanation: "Engines build `num_hidden_layers` decoder layers from the config. Extra layers in the file \
make vLLM's loader fail (\"There is no module or parameter named 'layers.N'\"); missing layers are left \
uninitialised (vLLM does not check that a drafter's parameters were all loaded; transformers initialises them \
randomly), and acceptance collapses. Set num_hidden_layers to the number of layers in the weights.",
    },
    applies: KNOWN_LAYOUTS,
    needs: &[],
    check: layer_count,
};

fn layer_count(cx: &mut Cx) {
    let v = cx.v;
    let Some(l) = &v.layout else { return };
    let Some(n) = l.sizes.layers else { return };
    let extra: Vec<u64> = l.file_layers.iter().copied().filter(|&x| x >= n).collect();
    let mut missing: Vec<u64> = (0..n.min(MAX_LAYERS))
        .filter(|x| !l.file_layers.contains(x))
        .collect();
    if n > MAX_LAYERS && missing.is_empty() {
        // Layers MAX_LAYERS.. are missing too; name the first.
        missing.push(MAX_LAYERS.max(l.file_layers.iter().max().map_or(0, |m| m + 1)));
    }
    if extra.is_empty() && missing.is_empty() {
        return;
    }
    let (path, file) = match extra.first() {
        Some(x) => {
            let t = v
                .names
                .by_name
                .iter()
                .find(|(k, _)| layer_of(k).is_some_and(|y| y.0 == *x))
                .map(|(_, t)| *t);
            let cfg = || v.config.path.display().to_string();
            (format!("layers.{x}"), t.map_or_else(cfg, |t| v.file_of(t)))
        }
        None => (
            format!("layers.{}", missing.first().copied().unwrap_or(0)),
            v.whole_file(),
        ),
    };
    let message = layer_count_message(l, n, &extra, &missing);
    let d = cx.diag(&path, &file, message);
    cx.push(d.expected(json!(l.file_layers.len())));
}

fn layer_count_message(l: &Layout, n: u64, extra: &[u64], missing: &[u64]) -> String {
    let held = if l.file_layers.is_empty() {
        "the weights hold no decoder layer".to_string()
    } else {
        format!(
            "the weights hold {} decoder layer(s) ({})",
            l.file_layers.len(),
            ranges(&l.file_layers.iter().copied().collect::<Vec<_>>())
        )
    };
    let mut msg = format!("{held} but `num_hidden_layers` is {n}");
    if !extra.is_empty() {
        let one = extra.len() == 1;
        msg.push_str(&format!(
            "; {} {} no place in the model (vLLM refuses {})",
            layer_names(extra),
            if one { "has" } else { "have" },
            if one { "it" } else { "them" },
        ));
    }
    if !missing.is_empty() {
        msg.push_str(&format!(
            "; {}{} would run uninitialised",
            layer_names(missing),
            if n > MAX_LAYERS {
                " and every later layer"
            } else {
                ""
            }
        ));
    }
    msg
}

const FC_WIDTH: Rule = Rule {
    code: WeightsCode::FcWidth,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the fc projection's input width does not match the aux layers the config names",
        explanation: "The drafter's `fc.weight` is [hidden_size, k × target hidden size]: DFlash concatenates \
one target hidden state per `dflash_config.target_layer_ids` entry (k = their number), EAGLE-3 one per \
`eagle_aux_hidden_state_layer_ids` entry (3 when the config names none); the target hidden size is \
`target_hidden_size`, else `hidden_size`. vLLM builds `fc` from the config, so a file trained with another \
number of layers fails to load with \"Attempted to load weight ... into parameter ...\"; a target whose hidden \
size differs fails at the first step (\"DFlash drafter expects N concatenated aux hidden features\"). Fix the \
config's layer ids to the ones the weights were trained with (the fc width tells how many).",
    },
    applies: KNOWN_LAYOUTS,
    // The target's hidden size is optional and not a need: without it the fc is compared with
    // the config only, as the report's `checked against …` line (no `; target …`) already says.
    needs: &[],
    check: fc_width,
};

/// The fc against the config; when it fits, against the target it will run on.
fn fc_width(cx: &mut Cx) {
    let v = cx.v;
    let Some(l) = &v.layout else { return };
    for (_, t, e) in compared(v, l, WeightsCode::FcWidth) {
        match mismatch(cx, t, e, &l.sizes) {
            Some(d) => cx.push(d),
            None => fc_against_target(cx, t, &l.sizes),
        }
    }
}

fn fc_against_target(cx: &mut Cx, t: &Tensor, sizes: &Sizes) {
    let (Some(th), Some((cfg_th, field)), Some((k, _)), Some(width)) = (
        cx.v.target.and_then(|t| t.hidden_size),
        sizes.target_hidden,
        sizes.aux.as_ref(),
        t.shape.get(1),
    ) else {
        return;
    };
    if th == cfg_th {
        return;
    }
    let name = t.name.as_str();
    let message = format!(
        "`{name}` takes {width} inputs = {k} × {cfg_th} (`{field}`), but the target's hidden size \
         is {th}: it will pass {k} × {th} = {} features and the drafter fails at the first step",
        k.saturating_mul(th)
    );
    let d = cx.diag(name, &cx.v.file_of(t), message);
    cx.push(d.expected(json!([t.shape.first(), k.saturating_mul(th)])));
}

fn fc_message(name: &str, got: &[u64], want: &[u64], sizes: &Sizes) -> String {
    let mut msg = format!(
        "`{name}` is {} but the config builds {}",
        shape_text(got),
        shape_text(want)
    );
    let (Some(&rows), Some(&width)) = (got.first(), got.get(1)) else {
        return msg;
    };
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

const SHAPE: Rule = Rule {
    code: WeightsCode::Shape,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a tensor's shape differs from what the config builds (heads × head_dim, intermediate_size, hidden_size)",
        explanation: "q_proj has num_attention_heads × head_dim rows, k_proj and v_proj num_key_value_heads × \
head_dim, o_proj takes num_attention_heads × head_dim inputs, q_norm/k_norm have head_dim entries, the MLP's \
gate/up projections intermediate_size rows, and every norm hidden_size entries (EAGLE-3's first layer takes \
2 × hidden_size inputs). A different shape fails vLLM's weight loader (\"Attempted to load weight (...) into \
parameter (...)\", or a QKV shard that does not fit) and transformers' from_pretrained (size mismatch). The \
config's sizes are wrong for these weights, or the weights belong to another drafter.",
    },
    applies: KNOWN_LAYOUTS,
    needs: &[],
    check: compare_shapes,
};

const VOCAB_ROWS: Rule = Rule {
    code: WeightsCode::VocabRows,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "embed_tokens rows differ from vocab_size, or lm_head rows from draft_vocab_size",
        explanation: "A drafter that ships its own `embed_tokens.weight` must have vocab_size rows, and its \
`lm_head.weight` draft_vocab_size rows (vocab_size when there is no draft_vocab_size): vLLM builds both from \
the config and its loader refuses another shape. A plain causal LM (of no drafter family, such as a \
`Qwen2ForCausalLM` served as a draft model) is held to its own config the same way: its `embed_tokens` and \
`lm_head` are built with `vocab_size` rows, and vLLM's and SGLang's vocabulary-embedding loader asserts that the \
checkpoint's rows equal it (`VocabParallelEmbedding.weight_loader`), so a hand-edited `vocab_size` fails the load. \
A mismatch usually means the config's vocabulary fields belong to another target, or were edited: set \
`vocab_size` to the embedding's rows.",
    },
    applies: Applies::Any,
    needs: &[],
    check: vocab_rows,
};

/// A known layout's expected shapes; a plain causal LM's embedding against its own config.
fn vocab_rows(cx: &mut Cx) {
    if cx.v.layout.is_some() {
        compare_shapes(cx);
    } else {
        plain_vocab_rows(cx);
    }
}

/// Config keys of models whose embedding is padded past `vocab_size` (Mamba's
/// `pad_vocab_size_multiple`, ChatGLM's `padded_vocab_size`): their rows are not `vocab_size`.
const PADDED_VOCAB: &[&str] = &["pad_vocab_size_multiple", "padded_vocab_size"];

/// A config of no drafter family naming a causal LM architecture (`…ForCausalLM`): the
/// embedding's and LM head's rows (canonical names, `model.` stripped) against `vocab_size`.
fn plain_vocab_rows(cx: &mut Cx) {
    let v = cx.v;
    let root = v.config.root();
    let causal = root
        .get("architectures")
        .and_then(crate::json::Node::as_array)
        .is_some_and(|a| {
            a.iter()
                .filter_map(crate::json::Node::as_str)
                .any(|n| n.ends_with("ForCausalLM"))
        });
    if !causal
        || crate::family::detect(root).is_some()
        || PADDED_VOCAB.iter().any(|k| root.get(k).is_some())
    {
        return;
    }
    let Some(vocab) = root.get("vocab_size").and_then(crate::json::Node::as_u64) else {
        return;
    };
    for name in ["embed_tokens.weight", "lm_head.weight"] {
        let Some(t) = v.names.by_name.get(name) else {
            continue;
        };
        let Some(&rows) = t.shape.first().filter(|_| t.shape.len() == 2) else {
            continue;
        };
        if rows == vocab {
            continue;
        }
        let message = format!(
            "`{}` has {rows} rows but `vocab_size` is {vocab}: vLLM and SGLang build it with \
             `vocab_size` rows and their loader asserts the checkpoint's rows equal them \
             (VocabParallelEmbedding.weight_loader), so the model does not load; set `vocab_size` \
             to {rows} if the config was edited",
            t.name
        );
        let d = cx.diag(&t.name, &v.file_of(t), message);
        cx.push(d.expected(json!([vocab, t.shape.get(1)])));
    }
}
