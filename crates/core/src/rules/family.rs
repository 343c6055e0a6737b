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

use serde::Serialize;

use crate::config::{self, ConfigFile};
use crate::json::Node;
use crate::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
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
}

impl Family {
    pub const ALL: &'static [Family] = &[
        Family::Dflash,
        Family::Dflash2,
        Family::Dspark,
        Family::Domino,
        Family::Peagle,
        Family::Eagle3,
        Family::Speculators,
        Family::Mtp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Family::Dflash => "dflash",
            Family::Dflash2 => "dflash2",
            Family::Dspark => "dspark",
            Family::Domino => "domino",
            Family::Peagle => "peagle",
            Family::Eagle3 => "eagle3",
            Family::Speculators => "speculators",
            Family::Mtp => "mtp",
        }
    }

    /// The vLLM `--speculative-config` method that serves this family, when there is one.
    pub fn vllm_method(self) -> Option<&'static str> {
        match self {
            Family::Dflash | Family::Dflash2 => Some("dflash"),
            Family::Dspark => Some("dspark"),
            Family::Eagle3 | Family::Peagle => Some("eagle3"),
            Family::Mtp => Some("mtp"),
            Family::Domino | Family::Speculators => None,
        }
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

    /// Whether block-drafter rules (target layer ids, mask token, block size, attention
    /// layout) apply.
    pub fn block_drafter(&self) -> bool {
        match self.name {
            Family::Dflash | Family::Dflash2 | Family::Dspark | Family::Domino => true,
            Family::Eagle3 | Family::Peagle | Family::Mtp => false,
            Family::Speculators => matches!(
                self.speculators_model_type.as_deref(),
                Some("dflash") | Some("dspark")
            ),
        }
    }

    /// Whether EAGLE-3 rules (aux layers, draft vocab) apply.
    pub fn eagle_like(&self) -> bool {
        match self.name {
            Family::Eagle3 | Family::Peagle => true,
            Family::Speculators => matches!(
                self.speculators_model_type.as_deref(),
                Some("eagle3") | Some("peagle")
            ),
            _ => false,
        }
    }
}

const DFLASH2_FIELDS: &[&str] = &[
    "conv_kernel_size",
    "conv_group_size",
    "selector_rank",
    "selector_top_k",
];

/// Architecture names, exact, by family (vLLM speculative.py@002e77c auto-detection and
/// architecture rewrites; SpecForge specforge/modeling/draft/*.py@a6b6b02; speculators
/// src/speculators/models/*/config.py@c05b95b; AngelSlim's Qwen DFlash/DFlare drafters).
const DSPARK_ARCHS: &[&str] = &[
    "DSparkDraftModel",
    "Qwen3DSparkModel",
    "Qwen3OmniDSparkModel",
    "Gemma4DSparkModel",
    "K3DSparkModel",
    "DSparkV41DraftModel",
    "DSparkSpeculator",
];
const DOMINO_ARCHS: &[&str] = &["DominoDraftModel"];
const PEAGLE_ARCHS: &[&str] = &[
    "PEagleDraftModel",
    "PeagleLlamaForCausalLM",
    "PeagleQwen3ForCausalLM",
    "PEagleSpeculator",
];
const DFLASH_ARCHS: &[&str] = &[
    "DFlashDraftModel",
    "QwenDFlashDraftModel",
    "QwenDFlareDraftModel",
    "DFlashQwen3ForCausalLM",
    "DFlashLagunaForCausalLM",
    "MuseGlimmerAssistantModel",
];
/// DSpark-only fields (SpecForge specforge/modeling/draft/dspark.py@a6b6b02).
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
        seen.dflash2_fields = seen.present(DFLASH2_FIELDS);
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

/// 2. The first architecture that names a family.
fn by_architecture(seen: &Seen) -> Option<Detection> {
    for a in &config::architectures(seen.root) {
        let name = a.as_str();
        let ev = vec![format!("architectures [{}]", crate::json::quote(name))];
        if name == "DFlash2DraftModel" {
            let mut ev = ev;
            ev.extend(seen.dflash2_fields.iter().cloned());
            return found(Family::Dflash2, ev);
        }
        let family = if DSPARK_ARCHS.contains(&name) {
            Family::Dspark
        } else if DOMINO_ARCHS.contains(&name) {
            Family::Domino
        } else if PEAGLE_ARCHS.contains(&name) {
            Family::Peagle
        } else if DFLASH_ARCHS.contains(&name) || name.contains("DFlash") {
            return seen.refine(ev);
        } else if name.to_ascii_lowercase().contains("eagle3") {
            Family::Eagle3
        } else if name.ends_with("MTP") || name.ends_with("MTPModel") || name.contains("NextN") {
            Family::Mtp
        } else {
            continue;
        };
        return found(family, ev);
    }
    None
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
    // `dspark_*` keys of the target's own config (vLLM PR 41834, sglang PR 29538).
    let top_level = |keys: &[&str]| -> Vec<String> {
        keys.iter()
            .filter(|k| root.get(k).is_some())
            .map(|k| format!("{k} present"))
            .collect()
    };
    let embedded_dspark = top_level(&[
        "dspark_target_layer_ids",
        "dspark_noise_token_id",
        "dspark_block_size",
        "dspark_markov_rank",
    ]);
    if let Some(first) = embedded_dspark.into_iter().next() {
        return found(Family::Dspark, vec![first]);
    }
    if let Some(first) = top_level(&["pard_token", "ptd_token_id"])
        .into_iter()
        .next()
    {
        return found(Family::Peagle, vec![first]);
    }
    let eagle_fields = top_level(&[
        "eagle_config",
        "eagle_aux_hidden_state_layer_ids",
        "draft_vocab_size",
        "truncated_vocab_size",
    ]);
    if !eagle_fields.is_empty() {
        return found(Family::Eagle3, eagle_fields);
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
        "if it is one, force the rules with --family {}",
        names.join("|")
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
        ];
        for (text, want) in cases {
            assert_eq!(fam(text), *want, "{text}");
        }
    }
}
