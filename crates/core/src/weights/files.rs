//! Rules about the files and the names in them, for any config: a shard the index names that
//! does not exist, an index that disagrees with its shards, a tensor saved twice, names with a
//! `model.` prefix.

use std::collections::HashSet;

use serde_json::json;

use super::cx::{Applies, Cx, Need, Rule, KNOWN_LAYOUTS};
use super::WeightsCode;
use crate::diagnostic::{CodeInfo, Diagnostic, Severity};

pub(super) const RULES: &[Rule] = &[
    SHARD_MISSING,
    SHARDS_ABSENT,
    INDEX_MISMATCH,
    DUPLICATE_TENSOR,
    MODEL_PREFIX,
];

const SHARD_MISSING: Rule = Rule {
    code: WeightsCode::ShardMissing,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the index names shards that do not exist",
        explanation: "transformers, vLLM and huggingface_hub open every file that \
`model.safetensors.index.json` names in `weight_map`; a missing one fails the load (or the download). \
Download the missing shards, or regenerate the index. One finding per index, naming every missing shard. \
Where a deployment is checked (`lint`, `check`, `launch`, `doctor`) and none of the shards is there — a \
config repository or a CI checkout, which hold the config and its index only — that is \
`weights-shards-absent` (info) instead; `weights`, whose job is the shards, reports it here.",
    },
    applies: Applies::Any,
    needs: &[Need::Index],
    check: shard_missing,
};

/// How many missing shards a message names before it counts the rest.
const NAMED_SHARDS: usize = 8;

fn shard_missing(cx: &mut Cx) {
    let h = cx.v.headers;
    let Some(index) = &h.index else { return };
    if h.missing_shards.is_empty() || (h.shards.is_empty() && cx.v.purpose.is_deployment()) {
        return;
    }
    // One pass over the map (163 missing shards of a 184,000-entry index were 30 million
    // comparisons when each shard scanned the map), counted by shard number.
    let per_shard: std::collections::HashMap<&str, usize> = index
        .shards
        .iter()
        .map(String::as_str)
        .zip(index.per_shard())
        .collect();
    let tensors: usize = h
        .missing_shards
        .iter()
        .map(|s| per_shard.get(s.as_str()).copied().unwrap_or(0))
        .sum();
    let names = shard_list(&h.missing_shards);
    let (count, all) = (h.missing_shards.len(), index.shards.len());
    let first = h.missing_shards[0].clone();
    cx.emit(
        &first,
        &index.display,
        format!(
            "{count} of the index's {all} shard(s) do not exist ({names}), holding {tensors} tensor(s) the \
             index maps to them: loaders fail opening them"
        ),
    );
}

/// `a, b, c and 5 more`.
fn shard_list(names: &[String]) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(NAMED_SHARDS)
        .map(|n| format!("`{n}`"))
        .collect();
    match names.len().saturating_sub(NAMED_SHARDS) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

const SHARDS_ABSENT: Rule = Rule {
    code: WeightsCode::ShardsAbsent,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "the config and its index only, no shard: tensor names checked from the index, not dtypes or shapes",
        explanation: "A config repository or a CI checkout holds `config.json` and \
`model.safetensors.index.json` without the shards. Where a deployment is checked (`lint`, `check`, \
`launch`, `doctor`) that is judged from the config and the index — every rule that reads tensor names \
runs on the index's `weight_map` (an MTP head the config declares and the index does not name is still an \
error) — and the checks that read the shards' headers (dtypes, shapes) are listed as not made, so the \
verdict says it is unverified. `weights DIR`, whose job is the shards, reports `weights-shard-missing` \
instead.",
    },
    applies: Applies::Any,
    needs: &[Need::Index],
    check: shards_absent,
};

fn shards_absent(cx: &mut Cx) {
    let h = cx.v.headers;
    let Some(index) = &h.index else { return };
    if !h.shards.is_empty() || h.missing_shards.is_empty() || !cx.v.purpose.is_deployment() {
        return;
    }
    let message = format!(
        "none of the index's {} shard(s) is here (a config checkout): the tensor names were checked from the \
         index, their dtypes and shapes were not (run `dflash-check weights` where the shards are)",
        index.shards.len()
    );
    cx.emit("", &index.display, message);
}

const INDEX_MISMATCH: Rule = Rule {
    code: WeightsCode::IndexMismatch,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the index's weight_map disagrees with the shards' contents",
        explanation: "`weight_map` names, for each tensor, the shard that holds it. A tensor in a shard but not \
in the map, or mapped to a shard that does not hold it, means the index and the shards come from different \
saves: transformers reports keys from the map, loaders read the shards.",
    },
    applies: Applies::Any,
    needs: &[Need::Index],
    check: index_mismatch,
};

/// The first disagreement is named, the others counted.
fn index_mismatch(cx: &mut Cx) {
    let mut found = disagreements(cx).into_iter();
    let Some(mut d) = found.next() else { return };
    let more = found.count();
    if more > 0 {
        d.message
            .push_str(&format!(" ({more} more disagreement(s))"));
    }
    cx.push(d);
}

/// Tensors mapped to a present shard that does not hold them, then tensors in no entry of the
/// map, in that order.
fn disagreements(cx: &Cx) -> Vec<Diagnostic> {
    let h = cx.v.headers;
    let Some(index) = &h.index else {
        return Vec::new();
    };
    // No shard read (all missing, or none downloaded): nothing to disagree with, and no set
    // of every name to build (183,610 names hashed for nothing, issue 44).
    if h.shards.is_empty() {
        return Vec::new();
    }
    // Hash sets: a 184,000-entry index in ordered sets cost a third of a second in string
    // comparisons. The disagreements found are sorted, as the ordered set listed them.
    let in_shard: HashSet<(&str, &str)> = h
        .tensors()
        .map(|t| (t.name.as_str(), t.shard.as_str()))
        .collect();
    let present: HashSet<&str> = h.shards.iter().map(|s| s.file.as_str()).collect();
    let mut wrong: Vec<(&str, &str)> = index
        .entries()
        .filter(|&(t, f)| present.contains(f) && !in_shard.contains(&(t, f)))
        .collect();
    wrong.sort_unstable();
    wrong.dedup();
    let mut out = Vec::new();
    for (t, f) in wrong {
        let holder = h.tensors().find(|x| x.name == t).map(|x| x.shard.clone());
        let message = format!("the index maps `{t}` to `{f}`, which does not hold it");
        out.push(cx.diag(t, &index.display, message).expected(json!(holder)));
    }
    let mapped_names: HashSet<&str> = index.tensor_names().collect();
    for t in h.tensors() {
        if !mapped_names.contains(t.name.as_str()) {
            let message = format!(
                "`{}` is in `{}` but not in the index's weight_map",
                t.name, t.shard
            );
            out.push(
                cx.diag(&t.name, &index.display, message)
                    .expected(json!(t.shard)),
            );
        }
    }
    out
}

const DUPLICATE_TENSOR: Rule = Rule {
    code: WeightsCode::DuplicateTensor,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a tensor appears in two shards (or twice through an alias)",
        explanation:
            "Loaders read every shard and assign tensors in file order, so the last copy wins and \
which one that is depends on the loader. Keep each tensor in one shard.",
    },
    applies: Applies::Any,
    needs: &[],
    check: duplicate_tensor,
};

fn duplicate_tensor(cx: &mut Cx) {
    let v = cx.v;
    for dup in &v.names.duplicates {
        let (first, t) = (dup.first, dup.again);
        let message = if first.name == t.name {
            format!(
                "`{}` is in `{}` and again in `{}`: loaders keep whichever they read last",
                t.name, first.shard, t.shard
            )
        } else {
            format!(
                "`{}` (in `{}`) and `{}` (in `{}`) are the same tensor `{}` once aliases are \
                 applied: loaders keep whichever they read last",
                first.name, first.shard, t.name, t.shard, dup.canonical
            )
        };
        cx.emit(&t.name, &v.file_of(t), message);
    }
}

const MODEL_PREFIX: Rule = Rule {
    code: WeightsCode::ModelPrefix,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "tensor names carry a `model.` prefix: vLLM's DFlash and EAGLE-3 loaders fail to load them",
        explanation: "transformers strips a leading `model.` (the base-model prefix) when loading, so the \
reference code reads these names. vLLM's DFlash and EAGLE-3 loaders instead prepend `model.` to every name except \
`lm_head` (and `d2t`), giving `model.model.layers...`, and hand the result to AutoWeightsLoader, whose _load_module \
raises (\"There is no module or parameter named ...\") for a name that matches no parameter: the drafter does not \
load in vLLM. An error. Save the state dict without the prefix (the published drafters have none). Only the \
families whose loaders rename (DFlash, DFlash2, EAGLE-3) are judged: a plain causal LM served as a draft model \
(`Qwen2ForCausalLM`, vLLM `draft_model`) and a target with its own MTP head are loaded by their own model class, \
which expects `model.embed_tokens.weight`.",
    },
    applies: KNOWN_LAYOUTS,
    needs: &[],
    check: model_prefix,
};

/// One finding for all prefixed names, naming the first.
fn model_prefix(cx: &mut Cx) {
    let v = cx.v;
    let prefixed = &v.names.prefixed;
    let Some(first) = prefixed.first() else {
        return;
    };
    cx.emit(
        &first.name,
        &v.file_of(first),
        format!(
            "{} tensor name(s) start with `model.` (`{}`): transformers strips the prefix, but vLLM's DFlash and \
             EAGLE-3 loaders prepend `model.` to every name except lm_head and refuse the unmatched \
             `model.model.*` names at load",
            prefixed.len(),
            first.name
        ),
    );
}
