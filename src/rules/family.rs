//! Which kind of drafter a config is, and the evidence for it. The family picks the rules and
//! their severities: DFlash, DFlash2, DSpark and Domino are block drafters (target layer ids, a
//! mask token, a block size); EAGLE-3 and P-EAGLE are heads with auxiliary layer ids; the
//! speculators format wraps either; MTP heads are recognised and named, with few rules.
//!
//! Evidence, in the order it is tried (first match wins, so a more specific family is tried
//! before the one it extends):
//! 1. speculators: `speculators_model_type` or `speculators_config` (vllm-project/speculators
//!    src/speculators/config.py@c05b95b).
//! 2. MTP: an architecture naming a multi-token-prediction head (`…MTP…`, `…NextN…`).
//! 3. DSpark: `DSparkDraftModel` / `Qwen3DSparkModel`, `dflash_config.projector_type: dspark`,
//!    a `dspark_*` key, or `sample_from_anchor: true` (SpecForge configs/qwen3.6-27b-dspark.json
//!    @a6b6b02; vLLM `method="dspark"`).
//! 4. Domino: `DominoDraftModel`, `dflash_config.projector_type: domino` (SpecForge
//!    configs/qwen3-8b-domino.json@a6b6b02).
//! 5. DFlash2: `DFlash2DraftModel`, or conv/selector fields (z-lab DFlash2 configs).
//! 6. DFlash: `DFlashDraftModel` and vendor names containing `DFlash` (`QwenDFlashDraftModel`,
//!    Laguna's), or a `dflash_config` object.
//! 7. P-EAGLE: an architecture naming P-EAGLE, or `parallel_drafting` in the config.
//! 8. EAGLE-3: an architecture containing `eagle3` (`LlamaForCausalLMEagle3`,
//!    `Eagle3LlamaForCausalLM`), or EAGLE fields (`eagle_config`,
//!    `eagle_aux_hidden_state_layer_ids`, `draft_vocab_size`, `truncated_vocab_size` on a plain
//!    `LlamaForCausalLM` as nebius publishes them).

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
            Family::Peagle => "p-eagle",
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
            Family::Speculators => self.speculators_model_type.as_deref() == Some("dflash"),
        }
    }

    /// Whether EAGLE-3 rules (aux layers, draft vocab) apply.
    pub fn eagle_like(&self) -> bool {
        match self.name {
            Family::Eagle3 | Family::Peagle => true,
            Family::Speculators => self.speculators_model_type.as_deref() == Some("eagle3"),
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

/// Detects the family from the config's own fields.
pub fn detect(root: &Node) -> Option<Detection> {
    let archs = config::architectures(root);
    let arch_text = |a: &str| format!("architectures [{}]", crate::json::quote(a));
    let arch_with = |needle: &str| {
        archs
            .iter()
            .find(|a| a.to_ascii_lowercase().contains(needle))
            .map(|a| arch_text(a))
    };
    let dflash_config = root
        .get("dflash_config")
        .filter(|n| n.as_object().is_some());
    let in_either = |k: &str| root.get(k).or_else(|| dflash_config.and_then(|d| d.get(k)));
    let projector = in_either("projector_type").and_then(Node::as_str);
    let make = |name, evidence| {
        Some(Detection {
            name,
            evidence,
            forced: false,
            speculators_model_type: None,
        })
    };

    // 1. speculators format.
    let spec_type = root.get("speculators_model_type").and_then(Node::as_str);
    if spec_type.is_some() || root.get("speculators_config").is_some() {
        let mut ev = Vec::new();
        if let Some(t) = spec_type {
            ev.push(format!("speculators_model_type {}", crate::json::quote(t)));
        }
        if root.get("speculators_config").is_some() {
            ev.push("speculators_config present".into());
        }
        let mut d = make(Family::Speculators, ev)?;
        d.speculators_model_type = spec_type.map(str::to_ascii_lowercase);
        return Some(d);
    }

    // 2. MTP heads.
    if let Some(a) = archs.iter().find(|a| {
        let l = a.to_ascii_lowercase();
        l.contains("mtp") || l.contains("nextn")
    }) {
        return make(Family::Mtp, vec![arch_text(a)]);
    }

    // 3. DSpark.
    let mut dspark = Vec::new();
    if let Some(a) = arch_with("dspark") {
        dspark.push(a);
    }
    if projector == Some("dspark") {
        dspark.push("projector_type \"dspark\"".into());
    }
    let dspark_keys = |n: Option<&Node>| -> Vec<String> {
        n.and_then(Node::as_object)
            .map(|members| {
                members
                    .iter()
                    .filter(|m| m.key.starts_with("dspark_"))
                    .map(|m| format!("{} present", m.key))
                    .collect()
            })
            .unwrap_or_default()
    };
    dspark.extend(dspark_keys(Some(root)));
    dspark.extend(dspark_keys(dflash_config));
    if in_either("sample_from_anchor").and_then(Node::as_bool) == Some(true) {
        dspark.push("sample_from_anchor true".into());
    }
    if !dspark.is_empty() {
        return make(Family::Dspark, dspark);
    }

    // 4. Domino.
    let mut domino = Vec::new();
    if let Some(a) = arch_with("domino") {
        domino.push(a);
    }
    if projector == Some("domino") {
        domino.push("projector_type \"domino\"".into());
    }
    if !domino.is_empty() {
        return make(Family::Domino, domino);
    }

    // 5–6. DFlash2 and DFlash.
    let dflash2_fields: Vec<String> = DFLASH2_FIELDS
        .iter()
        .filter(|k| in_either(k).is_some())
        .map(|k| format!("{k} present"))
        .collect();
    if let Some(a) = arch_with("dflash2") {
        let mut ev = vec![a];
        ev.extend(dflash2_fields);
        return make(Family::Dflash2, ev);
    }
    if let Some(a) = arch_with("dflash") {
        if !dflash2_fields.is_empty() {
            let mut ev = vec![a];
            ev.extend(dflash2_fields);
            return make(Family::Dflash2, ev);
        }
        return make(Family::Dflash, vec![a]);
    }

    // 7. P-EAGLE.
    let mut peagle = Vec::new();
    if let Some(a) = archs.iter().find(|a| {
        let l = a.to_ascii_lowercase().replace(['-', '_'], "");
        l.contains("peagle") || l.contains("paralleleagle")
    }) {
        peagle.push(arch_text(a));
    }
    if in_either("parallel_drafting").is_some() {
        peagle.push("parallel_drafting present".into());
    }
    if !peagle.is_empty() {
        return make(Family::Peagle, peagle);
    }

    // 8. EAGLE-3.
    if let Some(a) = arch_with("eagle3") {
        return make(Family::Eagle3, vec![a]);
    }
    let eagle_fields: Vec<String> = [
        "eagle_config",
        "eagle_aux_hidden_state_layer_ids",
        "draft_vocab_size",
        "truncated_vocab_size",
    ]
    .iter()
    .filter(|k| root.get(k).is_some())
    .map(|k| format!("{k} present"))
    .collect();
    if !eagle_fields.is_empty() {
        return make(Family::Eagle3, eagle_fields);
    }

    // A bare dflash_config: DFlash (or DFlash2 by its fields).
    if dflash_config.is_some() {
        if !dflash2_fields.is_empty() {
            return make(Family::Dflash2, dflash2_fields);
        }
        return make(Family::Dflash, vec!["dflash_config present".into()]);
    }
    None
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
            (r#"{"architectures": ["DFlashDraftModel"]}"#, Some(Family::Dflash)),
            (r#"{"architectures": ["QwenDFlashDraftModel"]}"#, Some(Family::Dflash)),
            (
                r#"{"architectures": ["DFlashDraftModel"], "dflash_config": {"conv_kernel_size": 4}}"#,
                Some(Family::Dflash2),
            ),
            (r#"{"architectures": ["DFlash2DraftModel"]}"#, Some(Family::Dflash2)),
            (r#"{"architectures": ["DSparkDraftModel"]}"#, Some(Family::Dspark)),
            (
                r#"{"architectures": ["DFlashDraftModel"], "dflash_config": {"projector_type": "dspark"}}"#,
                Some(Family::Dspark),
            ),
            (
                r#"{"architectures": ["DFlashDraftModel"], "dflash_config": {"sample_from_anchor": true}}"#,
                Some(Family::Dspark),
            ),
            (r#"{"architectures": ["DominoDraftModel"]}"#, Some(Family::Domino)),
            (r#"{"architectures": ["LlamaForCausalLMEagle3"]}"#, Some(Family::Eagle3)),
            (r#"{"architectures": ["Eagle3LlamaForCausalLM"]}"#, Some(Family::Eagle3)),
            (r#"{"draft_vocab_size": 32000}"#, Some(Family::Eagle3)),
            (
                r#"{"architectures": ["LlamaForCausalLM"], "truncated_vocab_size": 32000}"#,
                Some(Family::Eagle3),
            ),
            (r#"{"architectures": ["DeepseekV3ForCausalLMNextN"]}"#, Some(Family::Mtp)),
            (r#"{"speculators_model_type": "dflash"}"#, Some(Family::Speculators)),
            (r#"{"architectures": ["Qwen3ForCausalLM"]}"#, None),
        ];
        for (text, want) in cases {
            assert_eq!(fam(text), *want, "{text}");
        }
    }
}
