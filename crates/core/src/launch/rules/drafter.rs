//! The drafter as the launch rules see it: its kind and the facts read from its `config.json`
//! ([`DrafterFacts`], also printed in launch's report), and whether the command pins the Hub
//! revision it loads.

use serde::Serialize;
use serde_json::json;

use super::{Cx, Rule, VLLM_SGLANG};
use crate::config::ConfigFile;
use crate::diagnostic::{CodeInfo, Severity};
use crate::family::{self, Family, FamilySpec};
use crate::json::Node;
use crate::launch::LaunchCode;

/// What the launch rules read from the drafter's config.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrafterFacts {
    /// The drafter's family (the speculators format: the wrapped algorithm's), serialized as
    /// its name; `None` (serialized `other`): a plain LM, an MTP target, an unknown head.
    #[serde(serialize_with = "kind_name")]
    pub kind: Option<Family>,
    /// The fields that gave the kind away.
    pub evidence: Vec<String>,
    /// `block_size` or `dflash_config.block_size` (DSpark: also `dspark_block_size`).
    pub block_size: Option<u64>,
    /// `layer_types` holds both `sliding_attention` and `full_attention`.
    pub mixed_attention: bool,
    /// `layer_types`, counted (`4× sliding_attention, 1× full_attention`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer_types: Option<String>,
    pub vocab_size: Option<u64>,
    pub draft_vocab_size: Option<u64>,
    /// vLLM takes K from `n_predict` when the speculative config has none.
    pub n_predict: Option<u64>,
    /// The drafter's own `quantization_config` method (`None`: unquantized).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantization: Option<String>,
    /// Attention and KV heads (top level, or speculators' `transformer_layer_config`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_attention_heads: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_key_value_heads: Option<u64>,
}

/// A family's name, `other` when there is none.
fn name_of(kind: Option<Family>) -> &'static str {
    kind.map_or("other", Family::as_str)
}

fn kind_name<S: serde::Serializer>(
    kind: &Option<Family>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(name_of(*kind))
}

impl DrafterFacts {
    /// The family's row, when the family is known.
    pub fn spec(&self) -> Option<&'static FamilySpec> {
        self.kind.map(Family::spec)
    }

    /// The family's name in messages (`dflash`, `eagle3`; `other`).
    pub fn kind_str(&self) -> &'static str {
        name_of(self.kind)
    }
}

fn positive(node: Option<&Node>) -> Option<u64> {
    node.and_then(Node::as_u64).filter(|&v| v > 0)
}

/// A head count at the top level or in speculators' `transformer_layer_config`.
fn head_count(root: &Node, key: &str) -> Option<u64> {
    positive(root.get(key)).or_else(|| {
        positive(
            root.get("transformer_layer_config")
                .and_then(|t| t.get(key)),
        )
    })
}

impl DrafterFacts {
    /// Reads the facts from a drafter's (or a fused target's) config.
    pub fn from_config(config: &ConfigFile) -> DrafterFacts {
        let root = config.root();
        // One family detection for every command (crate::family); its row says how engines
        // serve it.
        let (kind, evidence) = match family::detect(root) {
            Some(d) => (Some(d.effective().family), d.evidence),
            None => (None, Vec::new()),
        };
        let block_size = crate::config::layout_field("block_size")
            .and_then(|f| f.find(root))
            .and_then(|(_, n)| positive(Some(n)))
            .or_else(|| positive(root.get("dspark_block_size")));
        let layer_types: Option<Vec<String>> = root.get("layer_types").and_then(|n| {
            n.as_array().map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_string))
                    .collect()
            })
        });
        let mixed_attention = layer_types.as_ref().is_some_and(|t| {
            t.iter().any(|x| x == "sliding_attention") && t.iter().any(|x| x == "full_attention")
        });
        let layer_types = layer_types.map(|t| {
            let mut counts: Vec<(String, usize)> = Vec::new();
            for x in t {
                match counts.iter_mut().find(|(k, _)| *k == x) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((x, 1)),
                }
            }
            counts
                .iter()
                .map(|(k, n)| format!("{n}× {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        });
        DrafterFacts {
            kind,
            evidence,
            block_size,
            mixed_attention,
            layer_types,
            vocab_size: positive(root.get("vocab_size")),
            draft_vocab_size: positive(root.get("draft_vocab_size")),
            n_predict: positive(root.get("n_predict")),
            quantization: crate::config::QuantFacts::from_root(root).map(|q| q.method),
            num_attention_heads: head_count(root, "num_attention_heads"),
            num_key_value_heads: head_count(root, "num_key_value_heads"),
        }
    }
}

pub(super) const REVISION_UNPINNED: Rule = Rule {
    code: LaunchCode::RevisionUnpinned,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a Hub drafter loaded without a commit sha (vLLM speculative-config revision, SGLang --speculative-draft-model-revision)",
        explanation: "Without a revision the engine loads the repo's `main` as it is at start-up. Drafter repos are \
re-published with different architectures under the same name (z-lab/dflash#152: the same repo at two commits is \
6 layers with 8 target layers and SWA 4096, or 4 layers with 6 target layers and SWA 2048), so a restart can load \
another drafter. Pin the commit sha that was checked (`dflash-check pin` records it).",
    },
    applies: VLLM_SGLANG,
    needs: &[],
    check: revision_unpinned,
};

/// A Hub drafter without a commit sha: the repo can change under the deployment.
fn revision_unpinned(cx: &mut Cx) {
    if !cx.input.drafter_on_hub {
        return;
    }
    let launch = cx.launch();
    // `-hfd USER/MODEL[:QUANT]` names no revision to pin: the row says where one is pinned.
    let Some((path, anchor)) = launch.engine.spec().flags.drafter_revision else {
        return;
    };
    let drafter = launch.drafter.clone().unwrap_or_default();
    let message = match launch.drafter_revision.as_deref() {
        Some(r) if crate::text::is_commit_sha(r) => return,
        Some(r) => format!(
            "the drafter {drafter} is pinned to {r:?}, a branch or tag that can move: pin a commit sha"
        ),
        None => format!(
            "the drafter {drafter} has no revision: the engine loads whatever `main` is at start-up; pin a commit sha"
        ),
    };
    let expected = cx.input.drafter_sha.map(|s| json!(s));
    cx.emit(path, (None, anchor), message, expected);
}
