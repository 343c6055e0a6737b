//! Rules about a GGUF file's metadata against its own tensor table, as llama.cpp loads it:
//! MTP (NextN) blocks where `{arch}.nextn_predict_layers` puts them, an MTP-only file, a
//! DFlash drafter without `dflash.target_layers`, token-embedding rows against the vocabulary.
//!
//! Read at ggml-org/llama.cpp 0c1e57098bba43ac29e6e3b677cdceebdd22334f (the commit vendored in
//! `llama-cpp-python==0.3.36`): the loader reads `{arch}.nextn_predict_layers` as optional
//! (`llama-model.cpp`), the model's trunk is `block_count - nextn_predict_layers` blocks and the
//! MTP blocks are the last ones (`llama_hparams::n_layer`), each with required
//! `blk.N.nextn.{eh_proj,enorm,hnorm}` when MTP is loaded (`models/qwen35.cpp`), and every
//! tensor is checked against the shape the model builds (`check_tensor_dims`).

use std::collections::BTreeSet;

use super::cx::{Applies, Cx, Need, Rule};
use super::WeightsCode;
use crate::diagnostic::{CodeInfo, Severity};
use crate::gguf::GgufHeader;

pub(super) const RULES: &[Rule] = &[
    NEXTN_COUNT,
    NEXTN_INDEX,
    NEXTN_KEY_MISSING,
    MTP_ONLY,
    DFLASH_TARGET_LAYERS,
    EMBEDDING_ROWS,
];

/// The NextN tensors llama.cpp requires of each MTP block.
const NEXTN_REQUIRED: &[&str] = &["eh_proj", "enorm", "hnorm"];

/// `blk.N.nextn.…` → N.
fn nextn_block(name: &str) -> Option<u64> {
    let rest = name.strip_prefix("blk.")?;
    let (n, tail) = rest.split_once('.')?;
    tail.starts_with("nextn.").then(|| n.parse().ok())?
}

/// The blocks that hold `nextn.*` tensors.
fn nextn_blocks(h: &GgufHeader) -> BTreeSet<u64> {
    h.tensors
        .iter()
        .filter_map(|t| nextn_block(&t.name))
        .collect()
}

/// `({arch}.nextn_predict_layers, {arch}.block_count)` and the key's name.
fn nextn_facts(h: &GgufHeader) -> (Option<u64>, Option<u64>, String) {
    let arch = h.architecture().unwrap_or("(no general.architecture)");
    (
        h.arch_key("nextn_predict_layers").and_then(|v| v.as_u64()),
        h.arch_key("block_count").and_then(|v| v.as_u64()),
        format!("{arch}.nextn_predict_layers"),
    )
}

/// The GGUF header of a rule that needs [`Need::Gguf`].
pub(super) fn gguf<'a>(cx: &Cx<'a>) -> &'a GgufHeader {
    cx.v.gguf.expect("the rule needs Need::Gguf")
}

const NEXTN_COUNT: Rule = Rule {
    code: WeightsCode::GgufNextnCount,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a GGUF's nextn_predict_layers is larger than its block_count",
        explanation: "llama.cpp counts the MTP (NextN) blocks inside `{arch}.block_count` and asserts \
`n_layer_nextn <= n_layer_all` right after reading the key: the load aborts. Write the total block count \
(trunk plus MTP blocks) in `block_count`.",
    },
    applies: Applies::Any,
    needs: &[Need::Gguf],
    check: nextn_count,
};

fn nextn_count(cx: &mut Cx) {
    let h = gguf(cx);
    if let (Some(n), Some(blocks), key) = nextn_facts(h) {
        if n > blocks {
            cx.emit(
                &key,
                &h.display,
                format!("`{key}` is {n} but `block_count` is {blocks}: llama.cpp asserts nextn_predict_layers <= block_count and aborts the load"),
            );
        }
    }
}

const NEXTN_INDEX: Rule = Rule {
    code: WeightsCode::GgufNextnIndex,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a GGUF's MTP (nextn) tensors are not at the blocks nextn_predict_layers puts them",
        explanation: "llama.cpp's trunk is `block_count - nextn_predict_layers` blocks; the MTP blocks are the \
last `nextn_predict_layers` indices, and each must hold `blk.N.nextn.eh_proj`, `enorm` and `hnorm` when MTP \
is loaded (`--spec-type draft-mtp`): a block without them fails with `tensor 'blk.N.nextn.eh_proj' not found`, \
and NextN tensors at another index (a draft head written at `blk.0` instead of its absolute index, or the \
other way round) are never claimed. Rename the tensors to the index llama.cpp computes, or fix the key.",
    },
    applies: Applies::Any,
    needs: &[Need::Gguf],
    check: nextn_index,
};

fn nextn_index(cx: &mut Cx) {
    let h = gguf(cx);
    let (Some(n), Some(blocks), key) = nextn_facts(h) else {
        return;
    };
    if n == 0 || n > blocks {
        return;
    }
    let want: BTreeSet<u64> = (blocks - n..blocks).collect();
    let have = nextn_blocks(h);
    let stray: Vec<u64> = have.difference(&want).copied().collect();
    for b in &want {
        let missing: Vec<&str> = NEXTN_REQUIRED
            .iter()
            .filter(|s| {
                h.tensors
                    .iter()
                    .all(|t| t.name != format!("blk.{b}.nextn.{s}.weight"))
            })
            .copied()
            .collect();
        if missing.is_empty() {
            continue;
        }
        let also = if stray.is_empty() {
            String::new()
        } else {
            format!("; the file has nextn tensors at block(s) {stray:?} instead")
        };
        let names: Vec<String> = missing
            .iter()
            .map(|s| format!("`blk.{b}.nextn.{s}.weight`"))
            .collect();
        let verb = if names.len() == 1 { "is" } else { "are" };
        cx.emit(
            &format!("blk.{b}.nextn"),
            &h.display,
            format!(
                "`{key}` = {n} and `block_count` = {blocks} put an MTP block at `blk.{b}`, but {} {verb} missing{also}: llama.cpp fails loading MTP (tensor not found)",
                names.join(", ")
            ),
        );
    }
}

const NEXTN_KEY_MISSING: Rule = Rule {
    code: WeightsCode::GgufNextnKeyMissing,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a GGUF has blk.N.nextn.* tensors but no nextn_predict_layers key",
        explanation: "llama.cpp reads `{arch}.nextn_predict_layers` as an optional key: without it the model has \
no MTP blocks (`n_layer_nextn = 0`), the NextN tensors are not MTP, and `--spec-type draft-mtp` on this file \
stops at `MTP requires n_layer_nextn > 0`. Converters that predate MTP support drop the key; re-convert with \
a llama.cpp whose `convert_hf_to_gguf.py` writes it, or add it with `gguf-py`'s `gguf_new_metadata.py`.",
    },
    applies: Applies::Any,
    needs: &[Need::Gguf],
    check: nextn_key_missing,
};

fn nextn_key_missing(cx: &mut Cx) {
    let h = gguf(cx);
    let (n, _, key) = nextn_facts(h);
    let have = nextn_blocks(h);
    if n.unwrap_or(0) == 0 && !have.is_empty() {
        let said = if n.is_some() { "is 0" } else { "is absent" };
        cx.emit(
            &key,
            &h.display,
            format!(
                "the file has nextn (MTP) tensors at block(s) {have:?} but `{key}` {said}: llama.cpp treats the model as having no MTP head"
            ),
        );
    }
}

const MTP_ONLY: Rule = Rule {
    code: WeightsCode::GgufMtpOnly,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "the GGUF holds only MTP blocks, no trunk: a draft for -md beside the full target",
        explanation: "llama.cpp recognises an MTP-only file (`convert_hf_to_gguf.py --mtp`) by a positive \
`nextn_predict_layers` and no `blk.0.attn_norm.weight`, and then does not require the trunk's tensors. Such \
a file is served as the draft model (`-md`) next to the full target with `--spec-type draft-mtp`; it cannot \
be served alone.",
    },
    applies: Applies::Any,
    needs: &[Need::Gguf],
    check: mtp_only,
};

fn mtp_only(cx: &mut Cx) {
    let h = gguf(cx);
    let (Some(n), _, key) = nextn_facts(h) else {
        return;
    };
    if n > 0 && h.tensors.iter().all(|t| t.name != "blk.0.attn_norm.weight") {
        cx.emit(
            &key,
            &h.display,
            format!("an MTP-only GGUF (`{key}` = {n}, no `blk.0.attn_norm.weight`): serve it with `-md` next to the full target and `--spec-type draft-mtp`"),
        );
    }
}

const DFLASH_TARGET_LAYERS: Rule = Rule {
    code: WeightsCode::GgufDflashTargetLayers,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a DFlash GGUF without dflash.target_layers",
        explanation: "llama.cpp's DFlash model (`general.architecture = dflash`) reads the target layers it \
fuses from the `dflash.target_layers` array and throws `DFlash model requires 'target_layers' in GGUF \
metadata` without it. Re-convert the drafter with a converter that writes the key (its value is the \
drafter config's `dflash_config.target_layer_ids`).",
    },
    applies: Applies::Any,
    needs: &[Need::Gguf],
    check: dflash_target_layers,
};

fn dflash_target_layers(cx: &mut Cx) {
    let h = gguf(cx);
    if h.architecture() == Some("dflash") && h.get("dflash.target_layers").is_none() {
        cx.emit(
            "dflash.target_layers",
            &h.display,
            "a DFlash GGUF without `dflash.target_layers`: llama.cpp refuses to load it".into(),
        );
    }
}

const EMBEDDING_ROWS: Rule = Rule {
    code: WeightsCode::GgufEmbeddingRows,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a GGUF's token_embd/output tensor does not match the vocabulary or embedding length",
        explanation: "llama.cpp builds `token_embd.weight` (and `output.weight` when present) as \
`{n_embd, n_vocab}`, with `n_vocab` the length of `tokenizer.ggml.tokens` and `n_embd` the \
`{arch}.embedding_length`, and refuses any other shape: `check_tensor_dims: tensor 'token_embd.weight' has \
wrong shape`. A vocabulary padded or cut after conversion causes it.",
    },
    applies: Applies::Any,
    needs: &[Need::Gguf],
    check: embedding_rows,
};

fn embedding_rows(cx: &mut Cx) {
    let h = gguf(cx);
    let vocab = h.tokenizer().vocab_size().map(|n| n as u64);
    let embd = h.arch_key("embedding_length").and_then(|v| v.as_u64());
    for name in ["token_embd.weight", "output.weight"] {
        let Some(t) = h.tensors.iter().find(|t| t.name == name) else {
            continue;
        };
        let want = [embd, vocab];
        let got = [t.dims.first().copied(), t.dims.get(1).copied()];
        let wrong = t.dims.len() != 2 || want.iter().zip(&got).any(|(w, g)| w.is_some() && w != g);
        if wrong {
            let show = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
            cx.emit(
                name,
                &h.display,
                format!(
                    "`{name}` is {:?} (ggml order) but llama.cpp builds [{}, {}] (embedding_length, tokenizer.ggml.tokens): it refuses the shape",
                    t.dims,
                    show(embd),
                    show(vocab)
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::nextn_block;

    #[test]
    fn nextn_block_index() {
        assert_eq!(nextn_block("blk.64.nextn.eh_proj.weight"), Some(64));
        assert_eq!(nextn_block("blk.0.attn_norm.weight"), None);
        assert_eq!(nextn_block("blk.x.nextn.enorm.weight"), None);
    }
}
