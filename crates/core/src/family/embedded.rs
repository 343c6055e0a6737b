//! What a target config declares about a drafter embedded in the target checkpoint: an MTP
//! (next-n) head. Families spell its depth differently — `num_nextn_predict_layers` at the top
//! level (DeepSeek-V3, GLM-4.5/5: transformers' DeepseekV3Config, Glm4MoeConfig) and
//! `mtp_num_hidden_layers`, at the top level or under `text_config` (Qwen3-Next, Qwen3.5/3.6:
//! the multimodal configs nest the text model), and under `mtp_config` (Inkling) — so every
//! spelling is read here, once, and a
//! config whose spellings disagree is refused rather than judged by whichever was read first.
//! Lint, weights and launch all ask this module; none reads the keys itself.

use crate::json::Node;
use crate::{Error, Result};

/// Where a depth key may sit: `(parent, key)`, `parent` empty for the top level. In the order a
/// message lists them.
pub const DEPTH_KEYS: &[(&str, &str)] = &[
    ("", "num_nextn_predict_layers"),
    ("", "mtp_num_hidden_layers"),
    ("text_config", "num_nextn_predict_layers"),
    ("text_config", "mtp_num_hidden_layers"),
    // Inkling keeps its head's settings apart (vLLM 0.34.0 config/speculative.py:1204-1213 reads
    // the depth there and refuses a checkpoint whose value is below 1).
    ("mtp_config", "num_nextn_predict_layers"),
];

/// Parents that hold the head's settings apart from the trunk's: the trunk's `num_hidden_layers`
/// is read from `text_config` (where vLLM promotes Inkling's text model), else the top level.
const HEAD_APART: &[&str] = &["mtp_config"];

/// An MTP head a target config declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MtpDeclaration {
    /// How many MTP layers (next-n predictors) the checkpoint holds.
    pub depth: u64,
    /// The dotted JSON path the depth was read from (the first spelling present).
    pub key: String,
    /// The target's `num_hidden_layers` from the same object as the depth key: MTP layers are
    /// stored at layer indices `num_hidden_layers ..` (DeepSeek-V3 layer 61 of 61).
    pub num_hidden_layers: Option<u64>,
    /// Where the family keeps the head's tensors (its row of [`super::heads::ROWS`]).
    pub naming: &'static super::heads::HeadNaming,
    /// How many layers the checkpoint stores for the head: `depth`, or `depth` × the layers
    /// one step holds where the family stacks several ([`super::heads::HeadNaming::layers_per_step`]).
    pub physical: u64,
}

impl MtpDeclaration {
    /// The layer indices the MTP layers are stored at, when the base depth is known.
    pub fn layer_indices(&self) -> Option<std::ops::Range<u64>> {
        let base = self.num_hidden_layers?;
        Some(base..base.saturating_add(self.depth))
    }
}

/// The MTP head `root` declares: `Ok(None)` when no depth key is present or every present one is
/// 0 or null (no head); an error when a key is not a non-negative integer or two spellings
/// disagree.
pub fn declared(root: &Node) -> Result<Option<MtpDeclaration>> {
    let mut found: Vec<(String, u64, &Node)> = Vec::new();
    let naming = super::heads::of(root);
    for (parent, key) in DEPTH_KEYS.iter().chain(naming.depth_keys) {
        let Some((mut object, node)) = depth_node(root, parent, key) else {
            continue;
        };
        if HEAD_APART.contains(parent) {
            object = root
                .get("text_config")
                .filter(|t| t.as_object().is_some())
                .unwrap_or(root);
        }
        let path = dotted(parent, key);
        let depth = node.as_u64().ok_or_else(|| {
            Error::new(format!(
                "`{path}` is {}, not a whole number of MTP layers",
                node.to_compact()
            ))
            .with_hint(
                "set it to the number of MTP (next-n) layers the checkpoint holds, or remove it",
            )
        })?;
        found.push((path, depth, object));
    }
    let Some((first_path, depth, object)) = found.first() else {
        return Ok(None);
    };
    if let Some((other_path, other, _)) = found.iter().find(|(_, d, _)| d != depth) {
        return Err(Error::new(format!(
            "the config declares two MTP depths: `{first_path}` is {depth} and `{other_path}` is {other}"
        ))
        .with_hint("keep one spelling, with the number of MTP layers the checkpoint holds"));
    }
    if *depth == 0 {
        return Ok(None);
    }
    // Several physical layers a step (Nemotron-H's pattern, one layer per character).
    let per_step = naming
        .layers_per_step
        .and_then(|(parent, key)| depth_node(root, parent, key))
        .and_then(|(_, n)| n.as_str())
        .map_or(1, |pattern| pattern.chars().count().max(1) as u64);
    Ok(Some(MtpDeclaration {
        depth: *depth,
        key: first_path.clone(),
        num_hidden_layers: object.get("num_hidden_layers").and_then(Node::as_u64),
        naming,
        physical: depth.saturating_mul(per_step),
    }))
}

/// The evidence line detection gives for an MTP head `root` declares (`num_nextn_predict_layers
/// 1`), or `None` when it declares none. A config whose depth keys cannot be read (disagreeing
/// spellings, a depth that is not a whole number) still names the first key present, so it is
/// detected as an MTP target and lint refuses it with [`declared`]'s error instead of calling it
/// "not a drafter".
pub fn evidence(root: &Node) -> Option<String> {
    match declared(root) {
        Ok(Some(d)) => Some(format!("{} {}", d.key, d.depth)),
        Ok(None) => None,
        Err(_) => DEPTH_KEYS
            .iter()
            .chain(super::heads::of(root).depth_keys)
            .find_map(|(parent, key)| {
                depth_node(root, parent, key).map(|_| format!("{} present", dotted(parent, key)))
            }),
    }
}

/// The object holding `parent.key` (the root when `parent` is empty) and the key's non-null
/// value.
fn depth_node<'a>(root: &'a Node, parent: &str, key: &str) -> Option<(&'a Node, &'a Node)> {
    let object = if parent.is_empty() {
        Some(root)
    } else {
        root.get(parent)
    };
    let object = object.filter(|o| o.as_object().is_some())?;
    let node = object.get(key).filter(|n| !n.is_null())?;
    Some((object, node))
}

/// `key` or `parent.key`: the dotted JSON path messages name.
fn dotted(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Document;

    fn parse(text: &str) -> Result<Option<MtpDeclaration>> {
        let doc = Document::parse_bytes(text.as_bytes()).expect("test JSON");
        declared(&doc.root)
    }

    #[test]
    fn minimax_m3s_depth_key_is_read_for_its_configs_only() {
        let d = parse(
            r#"{"architectures": ["MiniMaxM3SparseForConditionalGeneration"], "model_type": "minimax_m3_vl", "text_config": {"num_hidden_layers": 60, "num_mtp_modules": 1}}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(d.key, "text_config.num_mtp_modules");
        assert_eq!(d.naming.family, "MiniMax-M3");
        // Another family's `num_mtp_modules` is not a depth this tool reads.
        assert_eq!(
            parse(r#"{"model_type": "minimax_m2", "num_mtp_modules": 3}"#).unwrap(),
            None
        );
    }

    #[test]
    fn inklings_depth_is_apart_from_its_trunk() {
        let d = parse(
            r#"{"num_hidden_layers": 2, "text_config": {"num_hidden_layers": 40}, "mtp_config": {"num_nextn_predict_layers": 1}}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(d.key, "mtp_config.num_nextn_predict_layers");
        assert_eq!(d.num_hidden_layers, Some(40));
        let d = parse(r#"{"num_hidden_layers": 2, "mtp_config": {"num_nextn_predict_layers": 1}}"#)
            .unwrap()
            .unwrap();
        assert_eq!(d.num_hidden_layers, Some(2));
    }

    #[test]
    fn deepseek_spelling_at_the_top() {
        let d = parse(r#"{"num_hidden_layers": 61, "num_nextn_predict_layers": 1}"#)
            .unwrap()
            .unwrap();
        assert_eq!(d.depth, 1);
        assert_eq!(d.key, "num_nextn_predict_layers");
        assert_eq!(d.layer_indices(), Some(61..62));
    }

    #[test]
    fn qwen_spelling_under_text_config() {
        let d = parse(
            r#"{"text_config": {"num_hidden_layers": 64, "mtp_num_hidden_layers": 1}, "num_hidden_layers": 3}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(d.key, "text_config.mtp_num_hidden_layers");
        assert_eq!(d.layer_indices(), Some(64..65));
    }

    #[test]
    fn zero_or_absent_is_no_head() {
        assert_eq!(parse(r#"{"num_nextn_predict_layers": 0}"#).unwrap(), None);
        assert_eq!(parse(r#"{"num_hidden_layers": 4}"#).unwrap(), None);
        assert_eq!(parse(r#"{"mtp_num_hidden_layers": null}"#).unwrap(), None);
    }

    #[test]
    fn disagreeing_spellings_are_refused() {
        let err = parse(
            r#"{"num_nextn_predict_layers": 1, "text_config": {"mtp_num_hidden_layers": 2}}"#,
        )
        .unwrap_err();
        assert!(err.message.contains("two MTP depths"), "{}", err.message);
    }

    #[test]
    fn evidence_names_the_key_even_when_it_cannot_be_read() {
        let doc = |t: &str| Document::parse_bytes(t.as_bytes()).expect("test JSON");
        let ok = doc(r#"{"num_nextn_predict_layers": 1}"#);
        assert_eq!(
            evidence(&ok.root).as_deref(),
            Some("num_nextn_predict_layers 1")
        );
        let bad =
            doc(r#"{"num_nextn_predict_layers": 1, "text_config": {"mtp_num_hidden_layers": 2}}"#);
        assert_eq!(
            evidence(&bad.root).as_deref(),
            Some("num_nextn_predict_layers present")
        );
        assert_eq!(
            evidence(&doc(r#"{"num_nextn_predict_layers": 0}"#).root),
            None
        );
    }

    #[test]
    fn a_non_integer_depth_is_refused() {
        let err = parse(r#"{"num_nextn_predict_layers": "1"}"#).unwrap_err();
        assert!(err.message.contains("num_nextn_predict_layers"));
    }
}
