//! Which kind of drafter a config is, and the evidence for it. The family picks the rules and
//! their severities: DFlash, DFlash2, DSpark and Domino are block drafters (target layer ids, a
//! mask token, a block size); EAGLE-3 and P-EAGLE are heads with auxiliary layer ids; the
//! speculators format wraps either; MTP heads are recognised and named, with few rules.
//!
//! Evidence, in the order it is tried (first match wins): the speculators format
//! (`speculators_model_type` / `speculators_config`); then each architecture by exact name
//! (DSpark, Domino, P-EAGLE, DFlash2 and DFlash drafters of z-lab, SpecForge, vLLM, AngelSlim,
//! Laguna and Meta; any name containing `eagle3`; MTP heads), a DFlash architecture refined by
//! `projector_type` (SpecForge exports Domino as `DFlashDraftModel` + `projector_type: domino`)
//! and DFlash2's conv/selector fields; then fields alone, with `dflash_config` before the EAGLE
//! fields (vLLM writes `draft_vocab_size` into DFlash configs too), and a DSpark head embedded in a
//! DeepSeek-V4 target's config by its `dspark_*` keys. Sources: vLLM
//! vllm/config/speculative.py@002e77c; SpecForge specforge/modeling/draft/*.py@a6b6b02 and
//! scripts/gates/normalize_dflash_export.py@a6b6b02; speculators models/*/config.py@c05b95b.

//! Which kind of drafter a config is, and the evidence for it, over one table of families
//! ([`table::ROWS`]: one [`FamilySpec`] per [`Family`]). The row holds everything per family —
//! its architectures and detection keys, where the drafter lives, the method each engine serves
//! it with, and which rules apply — so no other module matches on a family
//! (`tests/architecture.rs` fails on a `match` over `Family::` outside this module).
//!
//! Detection, in the order it is tried (first match wins): the speculators format
//! (`speculators_model_type` / `speculators_config`); then each architecture by exact name (the
//! rows' `architectures`), then by the rows' patterns (`DFlash` in the name, `eagle3`, the MTP
//! suffixes); a DFlash architecture is refined by `projector_type` (SpecForge exports Domino as
//! `DFlashDraftModel` + `projector_type: domino`) and DFlash2's conv/selector fields; then
//! fields alone, with `dflash_config` before the EAGLE fields (vLLM writes `draft_vocab_size`
//! into DFlash configs too), a DSpark head embedded in a DeepSeek-V4 target's config by its
//! `dspark_*` keys, and last an MTP head embedded in a target's config by its depth key
//! ([`embedded::evidence`]: `num_nextn_predict_layers`, `mtp_num_hidden_layers`, either under
//! `text_config`), so a drafter of another family is never taken for an MTP target. The
//! speculators format wraps another family: [`Detection::effective`] is
//! the wrapped algorithm's row. Sources: vLLM vllm/config/speculative.py@002e77c; SpecForge
//! specforge/modeling/draft/*.py@a6b6b02 and scripts/gates/normalize_dflash_export.py@a6b6b02;
//! speculators models/*/config.py@c05b95b.

pub mod embedded;
pub mod heads;
mod table;

use serde::{Serialize, Serializer};

use crate::config::{self, ConfigFile};
use crate::json::Node;
use crate::Error;

pub use table::ROWS;

/// A drafter family: the id of one row of [`ROWS`] (`family.spec()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// z-lab DFlash (`DFlashDraftModel`).
    Dflash,
    /// DFlash2 (`DFlash2DraftModel`, conv/selector fields).
    Dflash2,
    /// DSpark (SpecForge): DFlash with a sampled anchor and confidence heads.
    Dspark,
    /// Domino (SpecForge): DFlash with a GRU projector.
    Domino,
    /// P-EAGLE: EAGLE-3 heads drafting positions in parallel.
    Peagle,
    /// EAGLE-3 (vLLM / SpecForge / speculators Llama-style heads).
    Eagle3,
    /// vllm-project/speculators format (`speculators_model_type`).
    Speculators,
    /// Multi-token-prediction heads (DeepSeek-V3 NextN, Qwen3-Next MTP, MiMo MTP).
    Mtp,
    /// A classic draft model: an ordinary small causal LM of the target's vocabulary (vLLM
    /// `draft_model`, SGLang `STANDALONE`, llama.cpp `-md`). Its config cannot tell it from any
    /// other LM: it is a draft model because a launch line or `--family draft` says so.
    Draft,
}

/// Serialized as its row's `cli` name (`dflash`, `eagle3`, …).
impl Serialize for Family {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Where a family's drafter weights live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrafterLocation {
    /// A checkpoint of its own, named beside the target.
    Separate,
    /// Inside the target's checkpoint (MTP heads, DeepSeek-V4's DSpark head).
    EmbeddedInTarget,
    /// A GGUF file (llama.cpp).
    Gguf,
}

/// The name each engine serves a family with (`None`: the engine has none, or none was read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineNames {
    /// vLLM's `--speculative-config` `method`.
    pub vllm: Option<&'static str>,
    /// Other vLLM methods accepted for the family without a finding.
    pub vllm_aliases: &'static [&'static str],
    /// SGLang's `--speculative-algorithm`.
    pub sglang: Option<&'static str>,
    pub llama_cpp: Option<&'static str>,
    pub trtllm: Option<&'static str>,
}

/// A tensor layout read from an engine's loader (the weights rules' expected tensors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightsLayout {
    Dflash,
    /// DFlash plus DFlash2's convolutions and candidate selector.
    Dflash2,
    Eagle3,
}

impl WeightsLayout {
    pub fn name(self) -> &'static str {
        match self {
            WeightsLayout::Dflash => "DFlash",
            WeightsLayout::Dflash2 => "DFlash2",
            WeightsLayout::Eagle3 => "EAGLE-3",
        }
    }

    pub fn is_dflash(self) -> bool {
        matches!(self, WeightsLayout::Dflash | WeightsLayout::Dflash2)
    }
}

/// How many tokens K a block of `block_size` positions drafts, by convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KConvention {
    /// The first position is the last verified token: K = block_size - 1 (DFlash).
    BlockMinusOne,
    /// The anchor is drafted too: K = block_size is legal (DSpark).
    Block,
}

impl KConvention {
    /// The largest conventional K for a block of `block`.
    pub fn max_k(self, block: u64) -> u64 {
        match self {
            KConvention::BlockMinusOne => block.saturating_sub(1),
            KConvention::Block => block,
        }
    }
}

/// How a drafter spends its draft (docs/acceptance.md, "Break-even").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forwards {
    /// One drafter forward drafts the whole block: break-even 1 + c.
    PerBlock,
    /// One drafter forward per drafted token: break-even 1 + K·c.
    PerToken,
}

/// The acceptance rules' cost model of a family.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DraftCost {
    pub forwards: Forwards,
    /// The default draft-to-target cost ratio c of one drafter forward.
    pub default_cost_ratio: f64,
}

/// Which rules apply to a family, and the facts they need from it. Lint and diff apply to
/// every family; the launch rules' method checks use [`FamilySpec::engines`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RuleScope {
    /// Block-drafter rules (target layer ids, mask token, block size, attention layout).
    pub block_drafter: bool,
    /// EAGLE-3 rules (aux layers, draft vocab).
    pub eagle_like: bool,
    /// The weights rules' tensor layout; `None`: only the index and shards are checked.
    pub weights: Option<WeightsLayout>,
    /// The launch rules' K convention; `None`: K is not compared with a block.
    pub launch_k: Option<KConvention>,
    /// The acceptance rules' break-even cost model; `None`: not offered by `--draft-family`.
    pub acceptance: Option<DraftCost>,
}

/// A pattern an architecture name may match when no row names it exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchPattern {
    Contains(&'static str),
    ContainsIgnoreCase(&'static str),
    EndsWith(&'static str),
}

impl ArchPattern {
    fn matches(self, name: &str) -> bool {
        match self {
            ArchPattern::Contains(p) => name.contains(p),
            ArchPattern::ContainsIgnoreCase(p) => name.to_ascii_lowercase().contains(p),
            ArchPattern::EndsWith(p) => name.ends_with(p),
        }
    }
}

/// One drafter family: everything the tool knows about it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FamilySpec {
    pub family: Family,
    /// The name on the command line (`--family`, `--draft-family`) and in JSON.
    pub cli: &'static str,
    /// Other names the command line accepts for it.
    pub cli_aliases: &'static [&'static str],
    /// The name in messages (`DFlash`, `EAGLE-3`).
    pub display: &'static str,
    /// Architecture names that are this family, exactly.
    pub architectures: &'static [&'static str],
    /// Patterns tried when no row names the architecture exactly, in [`ROWS`] order.
    pub arch_patterns: &'static [ArchPattern],
    /// Config keys whose presence alone says this family (see [`detect`] for the order).
    pub detection_keys: &'static [&'static str],
    /// The `speculators_model_type` that wraps this family.
    pub speculators_type: Option<&'static str>,
    pub locations: &'static [DrafterLocation],
    pub engines: EngineNames,
    pub rules: RuleScope,
}

impl FamilySpec {
    /// Whether vLLM's `method` serves this family (its method or an alias).
    pub fn vllm_accepts(&self, method: &str) -> bool {
        self.engines.vllm == Some(method) || self.engines.vllm_aliases.contains(&method)
    }
}

impl Family {
    /// A classic draft model (an LM of its own, not a head on the target's hidden states):
    /// the drafter rules do not apply to it, the vocabulary rules do.
    pub fn is_draft_model(self) -> bool {
        matches!(self, Family::Draft)
    }

    pub const ALL: &'static [Family] = &[
        Family::Dflash,
        Family::Dflash2,
        Family::Dspark,
        Family::Domino,
        Family::Peagle,
        Family::Eagle3,
        Family::Speculators,
        Family::Mtp,
        Family::Draft,
    ];

    /// The family's row: [`ROWS`] lists the families in declaration order, one row each
    /// (`every_family_has_one_row_and_names_are_unique`).
    pub fn spec(self) -> &'static FamilySpec {
        &ROWS[self as usize]
    }

    pub fn as_str(self) -> &'static str {
        self.spec().cli
    }

    /// The vLLM `--speculative-config` method that serves this family, when there is one.
    pub fn vllm_method(self) -> Option<&'static str> {
        self.spec().engines.vllm
    }

    /// The family a command-line name (or alias) names.
    pub fn from_cli(name: &str) -> Option<Family> {
        ROWS.iter()
            .find(|r| r.cli == name || r.cli_aliases.contains(&name))
            .map(|r| r.family)
    }
}

/// The detected (or forced) family and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Detection {
    pub name: Family,
    /// The fields that gave it away (`architectures ["DFlashDraftModel"]`).
    pub evidence: Vec<String>,
    /// Whether `--family` forced it.
    pub forced: bool,
    /// For the speculators format: the wrapped algorithm (`dflash`, `eagle3`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speculators_model_type: Option<String>,
}

impl Detection {
    pub fn forced(family: Family, root: &Node) -> Detection {
        let mut d = detect(root).unwrap_or(Detection {
            name: family,
            evidence: vec![],
            forced: true,
            speculators_model_type: None,
        });
        if d.name != family {
            d.evidence
                .insert(0, format!("detected as {}, overridden", d.name.as_str()));
        }
        d.evidence
            .insert(0, format!("--family {}", family.as_str()));
        d.name = family;
        d.forced = true;
        d
    }

    /// The row whose rules and engine names apply: the family's own, or for the speculators
    /// format the wrapped algorithm's (the speculators row itself when the wrapped type is
    /// absent or unknown).
    pub fn effective(&self) -> &'static FamilySpec {
        let wrapped = self
            .speculators_model_type
            .as_deref()
            .filter(|_| self.name == Family::Speculators)
            .and_then(|t| ROWS.iter().find(|r| r.speculators_type == Some(t)));
        wrapped.unwrap_or_else(|| self.name.spec())
    }

    /// Whether this is an MTP head found inside a target's config by its depth key (not a
    /// standalone MTP module, named by its architecture or `model_type`): the config is the
    /// target's own. `check` takes such a config as a drafter only when a deployment it finds
    /// serves it with MTP, or a pin names it (`pipeline::is_drafter`).
    pub fn in_target(&self, root: &Node) -> bool {
        self.name == Family::Mtp
            && !self.forced
            && self.evidence.first() == embedded::evidence(root).as_ref()
    }

    /// Whether block-drafter rules (target layer ids, mask token, block size, attention
    /// layout) apply.
    pub fn block_drafter(&self) -> bool {
        self.effective().rules.block_drafter
    }

    /// Whether EAGLE-3 rules (aux layers, draft vocab) apply.
    pub fn eagle_like(&self) -> bool {
        self.effective().rules.eagle_like
    }
}

/// DSpark-only fields inside `dflash_config` (SpecForge specforge/modeling/draft/dspark.py@a6b6b02).
const DSPARK_FIELDS: &[&str] = &["markov_rank", "markov_head_type", "enable_confidence_head"];

/// Detects the family from the config's own fields: the speculators format first, then the
/// architectures (refined by `projector_type` and DFlash2's fields), then fields alone.
pub fn detect(root: &Node) -> Option<Detection> {
    let seen = Seen::new(root);
    by_speculators_format(root)
        .or_else(|| by_architecture(&seen))
        .or_else(|| by_fields(&seen))
}

/// What detection reads of a config, once.
struct Seen<'a> {
    root: &'a Node,
    dflash_config: Option<&'a Node>,
    projector: Option<&'a str>,
    /// DFlash2's own fields that are present, as evidence lines.
    dflash2_fields: Vec<String>,
}

impl<'a> Seen<'a> {
    fn new(root: &'a Node) -> Seen<'a> {
        let mut seen = Seen {
            root,
            dflash_config: root
                .get("dflash_config")
                .filter(|n| n.as_object().is_some()),
            projector: None,
            dflash2_fields: Vec::new(),
        };
        seen.projector = seen.in_either("projector_type").and_then(Node::as_str);
        seen.dflash2_fields = seen.present(Family::Dflash2.spec().detection_keys);
        seen
    }

    /// A non-null field in `dflash_config` or at the top level.
    fn in_either(&self, key: &str) -> Option<&'a Node> {
        self.dflash_config
            .and_then(|d| d.get(key))
            .or_else(|| self.root.get(key))
            .filter(|n| !n.is_null())
    }

    /// `"{key} present"` for each of `keys` found by [`Seen::in_either`].
    fn present(&self, keys: &[&str]) -> Vec<String> {
        keys.iter()
            .filter(|k| self.in_either(k).is_some())
            .map(|k| format!("{k} present"))
            .collect()
    }

    /// A DFlash-style config refined by its fields: SpecForge exports Domino as
    /// DFlashDraftModel with projector_type "domino", and SGLang decides Domino by
    /// projector_type alone.
    fn refine(&self, mut evidence: Vec<String>) -> Option<Detection> {
        match self.projector {
            Some("domino") => {
                evidence.push("projector_type \"domino\"".into());
                found(Family::Domino, evidence)
            }
            Some("dspark") => {
                evidence.push("projector_type \"dspark\"".into());
                found(Family::Dspark, evidence)
            }
            _ if !self.dflash2_fields.is_empty() => {
                evidence.extend(self.dflash2_fields.iter().cloned());
                found(Family::Dflash2, evidence)
            }
            _ => found(Family::Dflash, evidence),
        }
    }
}

fn found(name: Family, evidence: Vec<String>) -> Option<Detection> {
    Some(Detection {
        name,
        evidence,
        forced: false,
        speculators_model_type: None,
    })
}

/// 1. The speculators format: `speculators_model_type` or `speculators_config`.
fn by_speculators_format(root: &Node) -> Option<Detection> {
    let spec_type = root.get("speculators_model_type").and_then(Node::as_str);
    if spec_type.is_none() && root.get("speculators_config").is_none() {
        return None;
    }
    let mut ev = Vec::new();
    if let Some(t) = spec_type {
        ev.push(format!("speculators_model_type {}", crate::json::quote(t)));
    }
    if root.get("speculators_config").is_some() {
        ev.push("speculators_config present".into());
    }
    let mut d = found(Family::Speculators, ev)?;
    d.speculators_model_type = spec_type.map(str::to_ascii_lowercase);
    Some(d)
}

/// 2. The first architecture that names a family: exactly (any row), else by the rows'
///    patterns in [`ROWS`] order. A DFlash architecture is refined by its fields; DFlash2's
///    evidence lists its conv/selector fields.
fn by_architecture(seen: &Seen) -> Option<Detection> {
    for a in &config::architectures(seen.root) {
        let name = a.as_str();
        let row = ROWS
            .iter()
            .find(|r| r.architectures.contains(&name))
            .or_else(|| {
                ROWS.iter()
                    .find(|r| r.arch_patterns.iter().any(|p| p.matches(name)))
            });
        let Some(row) = row else {
            continue;
        };
        let mut ev = vec![format!("architectures [{}]", crate::json::quote(name))];
        if row.family == Family::Dflash {
            return seen.refine(ev);
        }
        if row.family == Family::Dflash2 {
            ev.extend(seen.dflash2_fields.iter().cloned());
        }
        return found(row.family, ev);
    }
    None
}

/// The keys of `family`'s row present at the top level of `root`, as evidence lines.
fn top_level(root: &Node, family: Family) -> Vec<String> {
    family
        .spec()
        .detection_keys
        .iter()
        .filter(|k| root.get(k).is_some())
        .map(|k| format!("{k} present"))
        .collect()
}

/// 3. Fields alone, when no architecture names a family.
fn by_fields(seen: &Seen) -> Option<Detection> {
    let root = seen.root;
    if seen.dflash_config.is_some() {
        let dspark = seen.present(DSPARK_FIELDS);
        if seen.projector.is_none() && !dspark.is_empty() {
            return found(Family::Dspark, dspark);
        }
        return seen.refine(vec!["dflash_config present".into()]);
    }
    // DeepSeek-V4 style: the DSpark head lives in the target checkpoint and its settings are
    // `dspark_*` keys of the target's own config; P-EAGLE by its parallel-drafting token. The
    // first key found is the evidence.
    for family in [Family::Dspark, Family::Peagle] {
        if let Some(first) = top_level(root, family).into_iter().next() {
            return found(family, vec![first]);
        }
    }
    let eagle_fields = top_level(root, Family::Eagle3);
    if !eagle_fields.is_empty() {
        return found(Family::Eagle3, eagle_fields);
    }
    // An MTP head inside a target checkpoint, declared by its depth key in the target's own
    // config (DeepSeek-V3, GLM-4.5/5, Qwen3-Next, Qwen3.5 under text_config). Last: a drafter of
    // any other family is told by its architecture or its own fields above, whatever else its
    // config carries, so a DFlash or EAGLE-3 drafter is never taken for an MTP target.
    if let Some(ev) = embedded::evidence(root) {
        return found(Family::Mtp, vec![ev]);
    }
    let mtp = root
        .get("model_type")
        .and_then(Node::as_str)
        .filter(|m| m.ends_with("_mtp"))?;
    found(
        Family::Mtp,
        vec![format!("model_type {}", crate::json::quote(mtp))],
    )
}

/// The error for a config of no known drafter family.
pub fn unknown_error(config: &ConfigFile) -> Error {
    let archs = config::architectures(config.root());
    let what = if archs.is_empty() {
        "no `architectures`".to_string()
    } else {
        format!("architectures {}", archs.join(", "))
    };
    let names: Vec<&str> = Family::ALL.iter().map(|f| f.as_str()).collect();
    Error::new(format!(
        "`{}` is not a drafter config this tool knows ({what}; no dflash_config, eagle, MTP or speculators fields)",
        config.path.display()
    ))
    .with_hint(format!(
        "if it is a drafter, force the rules with --family {}; if it is an ordinary LM that \
         drafts for a larger one (a classic draft model), check it against that model with \
         --family draft --target TARGET",
        names
            .iter()
            .filter(|n| **n != Family::Draft.as_str())
            .copied()
            .collect::<Vec<_>>()
            .join("|")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Document;

    fn fam(text: &str) -> Option<Family> {
        detect(&Document::parse(text).unwrap().root).map(|d| d.name)
    }

    /// Each family is told apart by its own evidence, more specific families first.
    #[test]
    fn families_are_told_apart_by_their_fields() {
        let cases: &[(&str, Option<Family>)] = &[
            (
                r#"{"architectures": ["DFlashDraftModel"]}"#,
                Some(Family::Dflash),
            ),
            (
                r#"{"architectures": ["QwenDFlashDraftModel"]}"#,
                Some(Family::Dflash),
            ),
            (
                r#"{"architectures": ["DFlashDraftModel"], "dflash_config": {"conv_kernel_size": 4}}"#,
                Some(Family::Dflash2),
            ),
            (
                r#"{"architectures": ["DFlash2DraftModel"]}"#,
                Some(Family::Dflash2),
            ),
            (
                r#"{"architectures": ["DSparkDraftModel"]}"#,
                Some(Family::Dspark),
            ),
            (
                r#"{"architectures": ["DFlashDraftModel"], "dflash_config": {"projector_type": "dspark"}}"#,
                Some(Family::Dspark),
            ),
            (
                r#"{"architectures": ["DFlashDraftModel"], "dflash_config": {"projector_type": "domino"}}"#,
                Some(Family::Domino),
            ),
            (
                r#"{"architectures": ["PEagleDraftModel"]}"#,
                Some(Family::Peagle),
            ),
            (r#"{"pard_token": 151669}"#, Some(Family::Peagle)),
            (
                r#"{"dflash_config": {"mask_token_id": 1}, "draft_vocab_size": 32000}"#,
                Some(Family::Dflash),
            ),
            (
                r#"{"architectures": ["DeepSeekMTPModel"]}"#,
                Some(Family::Mtp),
            ),
            (
                r#"{"architectures": ["DominoDraftModel"]}"#,
                Some(Family::Domino),
            ),
            (
                r#"{"architectures": ["LlamaForCausalLMEagle3"]}"#,
                Some(Family::Eagle3),
            ),
            (
                r#"{"architectures": ["Eagle3LlamaForCausalLM"]}"#,
                Some(Family::Eagle3),
            ),
            (r#"{"draft_vocab_size": 32000}"#, Some(Family::Eagle3)),
            (
                r#"{"architectures": ["LlamaForCausalLM"], "truncated_vocab_size": 32000}"#,
                Some(Family::Eagle3),
            ),
            (
                r#"{"architectures": ["DeepseekV3ForCausalLMNextN"]}"#,
                Some(Family::Mtp),
            ),
            (
                r#"{"speculators_model_type": "dflash"}"#,
                Some(Family::Speculators),
            ),
            (
                r#"{"architectures": ["DeepseekV4ForCausalLM"], "dspark_block_size": 5}"#,
                Some(Family::Dspark),
            ),
            (r#"{"architectures": ["Qwen3ForCausalLM"]}"#, None),
            // MTP heads embedded in a target checkpoint, by their depth key.
            (
                r#"{"architectures": ["DeepseekV3ForCausalLM"], "num_nextn_predict_layers": 1}"#,
                Some(Family::Mtp),
            ),
            (
                r#"{"architectures": ["Qwen3_5MoeForConditionalGeneration"], "text_config": {"mtp_num_hidden_layers": 1}}"#,
                Some(Family::Mtp),
            ),
            (
                r#"{"architectures": ["DeepseekV3ForCausalLM"], "num_nextn_predict_layers": 0}"#,
                None,
            ),
            // A drafter's own evidence wins over a depth key its config may carry.
            (
                r#"{"architectures": ["DFlashDraftModel"], "num_nextn_predict_layers": 1}"#,
                Some(Family::Dflash),
            ),
            (
                r#"{"dflash_config": {"mask_token_id": 1}, "mtp_num_hidden_layers": 1}"#,
                Some(Family::Dflash),
            ),
            (
                r#"{"architectures": ["DeepseekV4ForCausalLM"], "dspark_block_size": 5, "num_nextn_predict_layers": 1}"#,
                Some(Family::Dspark),
            ),
            (
                r#"{"architectures": ["LlamaForCausalLMEagle3"], "num_nextn_predict_layers": 1}"#,
                Some(Family::Eagle3),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(fam(text), *want, "{text}");
        }
    }
    /// An MTP head found by its depth key is the target's own; a standalone MTP module is not.
    #[test]
    fn only_a_head_found_by_its_depth_key_is_in_the_target() {
        let in_target = |text: &str| {
            let doc = Document::parse(text).unwrap();
            detect(&doc.root).is_some_and(|d| d.in_target(&doc.root))
        };
        assert!(in_target(
            r#"{"architectures": ["DeepseekV3ForCausalLM"], "num_nextn_predict_layers": 1}"#
        ));
        assert!(!in_target(
            r#"{"architectures": ["DeepSeekMTPModel"], "num_nextn_predict_layers": 1}"#
        ));
        assert!(!in_target(
            r#"{"architectures": ["DFlashDraftModel"], "num_nextn_predict_layers": 1}"#
        ));
    }

    /// One row per family, in `Family::ALL` (declaration) order, and no name (command line, alias,
    /// architecture, speculators type) claimed twice.
    #[test]
    fn every_family_has_one_row_and_names_are_unique() {
        let ids: Vec<Family> = ROWS.iter().map(|r| r.family).collect();
        assert_eq!(ids, Family::ALL);
        assert!(Family::ALL
            .iter()
            .enumerate()
            .all(|(i, f)| *f as usize == i));
        let mut seen = std::collections::BTreeSet::new();
        for r in ROWS {
            let cli = [r.cli];
            let names = cli
                .iter()
                .chain(r.cli_aliases)
                .map(|n| format!("cli {n}"))
                .chain(r.architectures.iter().map(|a| format!("arch {a}")))
                .chain(
                    r.speculators_type
                        .iter()
                        .map(|t| format!("speculators {t}")),
                );
            for n in names {
                assert!(seen.insert(n.clone()), "{n} is claimed twice");
            }
            assert!(!r.locations.is_empty(), "{}: where does it live?", r.cli);
        }
    }

    /// Every exact architecture detects to its own row (a DFlash architecture alone is DFlash).
    #[test]
    fn every_architecture_detects_to_its_row() {
        for r in ROWS {
            for a in r.architectures {
                let text = format!(r#"{{"architectures": ["{a}"]}}"#);
                assert_eq!(fam(&text), Some(r.family), "{a}");
            }
        }
    }

    /// Command-line names and aliases, speculators types and engine names lead back to the row.
    #[test]
    fn names_round_trip() {
        for r in ROWS {
            assert_eq!(Family::from_cli(r.cli), Some(r.family));
            assert_eq!(r.family.as_str(), r.cli);
            for alias in r.cli_aliases {
                assert_eq!(Family::from_cli(alias), Some(r.family), "{alias}");
            }
            if let Some(t) = r.speculators_type {
                let d = Detection {
                    name: Family::Speculators,
                    evidence: vec![],
                    forced: false,
                    speculators_model_type: Some(t.into()),
                };
                assert_eq!(d.effective().family, r.family, "{t}");
            }
            if let Some(m) = r.engines.vllm {
                assert!(r.vllm_accepts(m));
                assert_eq!(r.family.vllm_method(), Some(m));
            }
            for m in r.engines.vllm_aliases {
                assert!(r.vllm_accepts(m), "{m}");
            }
        }
        assert_eq!(Family::from_cli("eagle"), Some(Family::Eagle3));
        assert_eq!(Family::from_cli("medusa"), None);
    }

    /// The speculators format takes the wrapped algorithm's scope; an unknown wrapped type
    /// keeps the speculators row (no block-drafter or EAGLE rules, no engine method).
    #[test]
    fn speculators_take_the_wrapped_row() {
        let d = |t: &str| Detection {
            name: Family::Speculators,
            evidence: vec![],
            forced: false,
            speculators_model_type: Some(t.into()),
        };
        assert!(d("dflash").block_drafter() && !d("dflash").eagle_like());
        assert!(d("eagle3").eagle_like() && !d("eagle3").block_drafter());
        assert_eq!(d("mtp").effective().engines.vllm, Some("mtp"));
        assert_eq!(d("medusa").effective().family, Family::Speculators);
        assert!(!d("medusa").block_drafter() && !d("medusa").eagle_like());
    }
}
