//! Rules about which tensors are there: one the loader refuses, one it skips, one it has no
//! parameter for, one the drafter needs that no shard holds. Each file tensor is classified
//! once ([`Layout::classify`]): expected (its shape is the shape rules'), a vocabulary map
//! (the vocab rules'), or one of the cases below.

use serde_json::json;

use super::cx::{Cx, Rule, DFLASH_LAYOUTS, KNOWN_LAYOUTS};
use super::text::Grouped;
use super::view::{layer_of, Class, Layout};
use super::WeightsCode;
use crate::diagnostic::{CodeInfo, Severity};
use crate::family::WeightsLayout;

pub(super) const RULES: &[Rule] = &[
    FORBIDDEN_TENSOR,
    IGNORED_TENSOR,
    UNEXPECTED_TENSOR,
    MISSING_TENSOR,
];

const FORBIDDEN_TENSOR: Rule = Rule {
    code: WeightsCode::ForbiddenTensor,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a tensor the engine's loader refuses (mask_hidden in a DFlash drafter)",
        explanation: "vLLM's DFlash loader asserts that no tensor is named `mask_hidden`: DFlash embeds masked \
slots through `mask_token_id` (optionally a separate `mask_embedding.pt`), and a `mask_hidden` weight means a \
checkpoint of another method (EAGLE-3 parallel drafting). The load fails. Remove the tensor or use the right \
method.",
    },
    applies: DFLASH_LAYOUTS,
    needs: &[],
    check: forbidden_tensor,
};

fn forbidden_tensor(cx: &mut Cx) {
    let v = cx.v;
    let Some(l) = &v.layout else { return };
    for (canon, t) in &v.names.by_name {
        if matches!(l.classify(canon), Class::MaskHidden) {
            let name = &t.name;
            cx.emit(
                name,
                &v.file_of(t),
                format!(
                    "`{name}` is in the weights: vLLM's DFlash loader asserts that no tensor is named mask_hidden \
                     (DFlash embeds masked slots through mask_token_id), so the load fails"
                ),
            );
        }
    }
}

const IGNORED_TENSOR: Rule = Rule {
    code: WeightsCode::IgnoredTensor,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "a tensor the loader skips (unused, or for a mode not configured)",
        explanation: "Some tensors are skipped on purpose: EAGLE-3's `mask_hidden` unless vLLM runs parallel \
drafting (it logs a warning), a DFlash `mask_embedding` tensor (vLLM reads a separate mask embedding only from \
`mask_embedding.pt`), rotary `inv_freq` buffers. They cost download and memory only; a mask embedding meant to \
be used must ship as `mask_embedding.pt`.",
    },
    applies: KNOWN_LAYOUTS,
    needs: &[],
    check: ignored_tensor,
};

/// Rotary buffers repeat in every layer: grouped. The mask tensors are one each.
fn ignored_tensor(cx: &mut Cx) {
    let v = cx.v;
    let Some(l) = &v.layout else { return };
    let mut grouped = Grouped::new();
    for (canon, t) in &v.names.by_name {
        let name = &t.name;
        let file = v.file_of(t);
        match l.classify(canon) {
            Class::MaskHidden if l.kind == WeightsLayout::Eagle3 => cx.emit(
                name,
                &file,
                format!(
                    "`{name}` is only used by vLLM's parallel drafting; otherwise it is skipped with a warning"
                ),
            ),
            Class::MaskEmbedding => cx.emit(
                name,
                &file,
                format!(
                    "`{name}` is skipped by vLLM, which reads a separate mask embedding only from mask_embedding.pt"
                ),
            ),
            Class::Rotary => {
                let message = format!(
                    "`{name}` is a rotary-embedding buffer that loaders skip; it is recomputed"
                );
                grouped.add(canon, String::new(), cx.diag(name, &file, message));
            }
            _ => {}
        }
    }
    grouped.finish(cx);
}

const UNEXPECTED_TENSOR: Rule = Rule {
    code: WeightsCode::UnexpectedTensor,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a tensor the drafter's model has no parameter for",
        explanation: "vLLM's AutoWeightsLoader raises \"There is no module or parameter named ...\" for a tensor \
that matches no parameter of the drafter it built from the config (after the accepted aliases `midlayer.`, \
`encoder.fc.`, `encoder.output_norm_enc.`). transformers would ignore it with a warning. Common causes: \
attention biases without `attention_bias: true`, a `d2t` in a DFlash drafter whose vocabulary equals the \
target's (vLLM then has no `draft_id_to_target_id`), the weights of another architecture.",
    },
    applies: KNOWN_LAYOUTS,
    needs: &[],
    check: unexpected_tensor,
};

/// Unknown tensors (grouped across layers), then a DFlash `d2t` no vocabulary needs.
fn unexpected_tensor(cx: &mut Cx) {
    let v = cx.v;
    let Some(l) = &v.layout else { return };
    let mut grouped = Grouped::new();
    for (canon, t) in &v.names.by_name {
        if !matches!(l.classify(canon), Class::Unknown) {
            continue;
        }
        let why = if canon.ends_with(".bias") && !l.sizes.attention_bias && !l.sizes.mlp_bias {
            " (the config has no `attention_bias: true`)"
        } else {
            ""
        };
        let message = format!(
            "`{}` matches no parameter of the {} drafter this config describes{why}: vLLM's loader raises \
             \"There is no module or parameter named\"",
            t.name,
            l.kind.name()
        );
        grouped.add(
            canon,
            String::new(),
            cx.diag(&t.name, &v.file_of(t), message),
        );
    }
    grouped.finish(cx);
    unneeded_d2t(cx, l);
}

/// vLLM's DFlash model has a `draft_id_to_target_id` parameter only for a reduced vocabulary.
fn unneeded_d2t(cx: &mut Cx, l: &Layout) {
    let v = cx.v;
    let Some(t) = v.names.by_name.get("d2t") else {
        return;
    };
    if l.map_needed() != Some(false) || !l.kind.is_dflash() {
        return;
    }
    cx.emit(
        &t.name,
        &v.file_of(t),
        format!(
            "`{}` is in the weights but the draft vocabulary ({}) equals {}: vLLM's DFlash model \
             then has no draft_id_to_target_id parameter and refuses the tensor",
            t.name,
            l.sizes.draft_vocab.unwrap_or(0),
            super::vocab::target_vocab_text(cx)
        ),
    );
}

const MISSING_TENSOR: Rule = Rule {
    code: WeightsCode::MissingTensor,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a tensor the drafter needs is in no shard",
        explanation: "Every projection, norm and the fc of the drafter must be in the weights. vLLM's DFlash \
and EAGLE-3 loaders do not check that all parameters were loaded, and transformers initialises missing ones \
randomly (with a warning): the drafter runs with garbage weights and acceptance collapses. A reduced draft \
vocabulary also needs its own `lm_head`.",
    },
    applies: KNOWN_LAYOUTS,
    needs: &[],
    check: missing_tensor,
};

/// Expected tensors that no shard holds. A tensor the index puts in a missing shard is
/// `weights-shard-missing`'s, a whole missing layer `weights-layer-count`'s.
fn missing_tensor(cx: &mut Cx) {
    let v = cx.v;
    let Some(l) = &v.layout else { return };
    let whole = v.whole_file();
    let mut grouped = Grouped::new();
    for (canon, e) in &l.expect {
        if v.names.by_name.contains_key(canon) || l.in_missing_shard.contains(canon) {
            continue;
        }
        if layer_of(canon).is_some_and(|(x, _)| !l.file_layers.contains(&x)) {
            continue;
        }
        let lm_head = canon == "lm_head.weight";
        if !(e.required || (lm_head && l.need_map == Some(true))) {
            continue;
        }
        let why = if lm_head {
            "a reduced draft vocabulary needs the drafter's own LM head"
        } else if canon == "fc.weight" {
            "the drafter cannot combine the target's hidden states"
        } else {
            "it would run uninitialised (random in transformers, unset in vLLM)"
        };
        let message = format!("`{canon}` is in no shard: {why}");
        let d = cx.diag(canon, &whole, message).expected(json!(e.shape));
        grouped.add(canon, String::new(), d);
    }
    grouped.finish(cx);
}
