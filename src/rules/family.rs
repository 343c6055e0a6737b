//! Which kind of drafter a config is, and the evidence for it: DFlash, DFlash2, EAGLE-3, or the
//! speculators format (which wraps either). The family picks the rules and their severities.

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
    /// EAGLE-3 (vLLM / SpecForge / speculators Llama-style heads).
    Eagle3,
    /// vllm-project/speculators format (`speculators_model_type`).
    Speculators,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Dflash => "dflash",
            Family::Dflash2 => "dflash2",
            Family::Eagle3 => "eagle3",
            Family::Speculators => "speculators",
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

    /// Whether DFlash rules (mask, block size, target layers) apply.
    pub fn dflash_like(&self) -> bool {
        match self.name {
            Family::Dflash | Family::Dflash2 => true,
            Family::Eagle3 => false,
            Family::Speculators => self.speculators_model_type.as_deref() != Some("eagle3"),
        }
    }

    /// Whether EAGLE-3 rules (aux layers, draft vocab) apply.
    pub fn eagle_like(&self) -> bool {
        match self.name {
            Family::Eagle3 => true,
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
    let dflash_config = root
        .get("dflash_config")
        .filter(|n| n.as_object().is_some());
    let make = |name, evidence| Detection {
        name,
        evidence,
        forced: false,
        speculators_model_type: None,
    };

    let spec_type = root.get("speculators_model_type").and_then(Node::as_str);
    if spec_type.is_some() || root.get("speculators_config").is_some() {
        let mut ev = Vec::new();
        if let Some(t) = spec_type {
            ev.push(format!("speculators_model_type {}", crate::json::quote(t)));
        }
        if root.get("speculators_config").is_some() {
            ev.push("speculators_config present".into());
        }
        let mut d = make(Family::Speculators, ev);
        d.speculators_model_type = spec_type.map(str::to_ascii_lowercase);
        return Some(d);
    }

    let dflash2_fields: Vec<String> = DFLASH2_FIELDS
        .iter()
        .filter(|k| root.get(k).is_some() || dflash_config.is_some_and(|d| d.get(k).is_some()))
        .map(|k| format!("{k} present"))
        .collect();
    if let Some(a) = archs.iter().find(|a| a.as_str() == "DFlash2DraftModel") {
        let mut ev = vec![arch_text(a)];
        ev.extend(dflash2_fields);
        return Some(make(Family::Dflash2, ev));
    }
    if let Some(a) = archs.iter().find(|a| a.as_str() == "DFlashDraftModel") {
        if !dflash2_fields.is_empty() {
            let mut ev = vec![arch_text(a)];
            ev.extend(dflash2_fields);
            return Some(make(Family::Dflash2, ev));
        }
        return Some(make(Family::Dflash, vec![arch_text(a)]));
    }
    if let Some(a) = archs
        .iter()
        .find(|a| a.to_ascii_lowercase().contains("eagle3"))
    {
        return Some(make(Family::Eagle3, vec![arch_text(a)]));
    }
    let eagle_fields: Vec<String> = [
        "eagle_config",
        "eagle_aux_hidden_state_layer_ids",
        "draft_vocab_size",
    ]
    .iter()
    .filter(|k| root.get(k).is_some())
    .map(|k| format!("{k} present"))
    .collect();
    if !eagle_fields.is_empty() {
        return Some(make(Family::Eagle3, eagle_fields));
    }
    if dflash_config.is_some() {
        if !dflash2_fields.is_empty() {
            return Some(make(Family::Dflash2, dflash2_fields));
        }
        return Some(make(Family::Dflash, vec!["dflash_config present".into()]));
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
    Error::new(format!(
        "`{}` is not a drafter config this tool knows ({what}; no dflash_config, eagle or speculators fields)",
        config.path.display()
    ))
    .with_hint("if it is one, force the rules with --family dflash|dflash2|eagle3|speculators")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Document;

    fn fam(text: &str) -> Option<Family> {
        detect(&Document::parse(text).unwrap().root).map(|d| d.name)
    }

    #[test]
    fn families_are_told_apart_by_their_fields() {
        assert_eq!(
            fam(r#"{"architectures": ["DFlashDraftModel"]}"#),
            Some(Family::Dflash)
        );
        assert_eq!(
            fam(
                r#"{"architectures": ["DFlashDraftModel"], "dflash_config": {"conv_kernel_size": 4}}"#
            ),
            Some(Family::Dflash2)
        );
        assert_eq!(
            fam(r#"{"architectures": ["DFlash2DraftModel"]}"#),
            Some(Family::Dflash2)
        );
        assert_eq!(
            fam(r#"{"architectures": ["LlamaForCausalLMEagle3"]}"#),
            Some(Family::Eagle3)
        );
        assert_eq!(fam(r#"{"draft_vocab_size": 32000}"#), Some(Family::Eagle3));
        assert_eq!(
            fam(r#"{"speculators_model_type": "dflash"}"#),
            Some(Family::Speculators)
        );
        assert_eq!(fam(r#"{"architectures": ["Qwen3ForCausalLM"]}"#), None);
    }
}
