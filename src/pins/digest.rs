//! The digests a pin records besides the authority: the target's chat template and the
//! drafter's `d2t` token map (issue 23, classes 3 and 5).
//!
//! Neither is in the drafter's config, and both silently ruin acceptance when they change: a
//! drafter distilled on one chat template (say, with an empty `<think></think>` prefill) and
//! served behind another is asked to predict text it never saw (Luce-Org/lucebox PR 293,
//! z-lab/dflash issue 60), and an EAGLE-3 drafter fine-tuned with a regenerated `d2t` maps
//! every `lm_head` row to a different target token (SpecForge PR 534). So `pin` records a
//! sha256 of each and `check` recomputes them. Both are read from local files only: a Hub
//! target or drafter is pinned at a commit sha, whose files cannot change.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::{Error, Result};

/// The files a target's chat template can live in, as transformers reads them.
pub const TOKENIZER_CONFIG: &str = "tokenizer_config.json";
pub const TEMPLATE_FILE: &str = "chat_template.jinja";

/// A digest and what it was computed from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Computed {
    /// Lower-case hex sha256.
    pub sha256: String,
    /// `tokenizer_config.json chat_template`, `chat_template.jinja`, `d2t in model.safetensors`.
    pub from: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `s` is a lower-case hex sha256, as the pin file records digests.
pub fn is_sha256(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Appends one length-prefixed part, so ("ab", "c") and ("a", "bc") hash differently.
fn part(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// The target's chat template digest: `tokenizer_config.json`'s `chat_template` (a string, or
/// a list of `{name, template}`, hashed in order with its names) and a `chat_template.jinja`
/// beside it, each part labelled. `Ok(None)` when the directory has neither (a base model).
/// A `tokenizer_config.json` that is not JSON, or a `chat_template` of another type, is an error.
pub fn chat_template(target_dir: &Path) -> Result<Option<Computed>> {
    let mut h = Sha256::new();
    let mut from = Vec::new();
    let config = target_dir.join(TOKENIZER_CONFIG);
    if crate::config::regular_file_present(&config)? {
        let bytes = crate::config::read_capped(&config, crate::config::MAX_CONFIG_BYTES)?;
        let (template, what) = read_chat_template(&config, &bytes)?;
        if let Some(template) = template {
            match template {
                ChatTemplate::One(t) => {
                    part(&mut h, b"tokenizer_config.chat_template");
                    part(&mut h, t.as_bytes());
                }
                ChatTemplate::Named(list) => {
                    part(&mut h, b"tokenizer_config.chat_template[]");
                    for item in &list {
                        part(&mut h, item.name.as_bytes());
                        part(&mut h, item.template.as_bytes());
                    }
                }
            }
            from.push(what);
        }
    }
    let file = target_dir.join(TEMPLATE_FILE);
    if crate::config::regular_file_present(&file)? {
        let bytes = crate::config::read_capped(&file, crate::config::MAX_CONFIG_BYTES)?;
        part(&mut h, b"chat_template.jinja");
        part(&mut h, &bytes);
        from.push(TEMPLATE_FILE.to_string());
    }
    if from.is_empty() {
        return Ok(None);
    }
    Ok(Some(Computed {
        sha256: hex(&h.finalize()),
        from: from.join(" + "),
    }))
}

/// Only the field the digest reads: every other key of `tokenizer_config.json` is skipped
/// without being built (serde ignores unknown fields), and `chat_template` is kept as its raw
/// text until its type is known, so no hostile shape (a 16 MiB array of numbers, deep nesting)
/// is ever materialised as a `serde_json::Value`.
#[derive(serde::Deserialize)]
struct TokenizerConfig<'a> {
    #[serde(default, borrow)]
    chat_template: Option<&'a serde_json::value::RawValue>,
}

/// One of transformers' named templates.
#[derive(serde::Deserialize)]
struct NamedTemplate {
    name: String,
    template: String,
}

enum ChatTemplate {
    One(String),
    Named(Vec<NamedTemplate>),
}

/// `chat_template` of a `tokenizer_config.json` (absent or null: `None`), with how the digest
/// names its source; a file that is not JSON, or a template of another type, is an error.
fn read_chat_template(config: &Path, bytes: &[u8]) -> Result<(Option<ChatTemplate>, String)> {
    let not_json = |e: serde_json::Error| {
        Error::new(format!("`{}`: not valid JSON: {e}", config.display()))
            .with_hint("download the target's tokenizer_config.json again")
    };
    let parsed: TokenizerConfig = serde_json::from_slice(bytes).map_err(not_json)?;
    let Some(raw) = parsed.chat_template else {
        return Ok((None, String::new()));
    };
    let text = raw.get();
    let named_hint = "transformers reads a list of named templates in that form";
    match text.as_bytes().first() {
        Some(b'n') => Ok((None, String::new())),
        Some(b'"') => {
            let t: String = serde_json::from_str(text).map_err(not_json)?;
            Ok((
                Some(ChatTemplate::One(t)),
                format!("{TOKENIZER_CONFIG} chat_template"),
            ))
        }
        Some(b'[') => {
            let list: Vec<NamedTemplate> = serde_json::from_str(text).map_err(|e| {
                Error::new(format!(
                    "`{}`: chat_template is not a list of {{\"name\": string, \"template\": string}} ({e})",
                    config.display()
                ))
                .with_hint(named_hint)
            })?;
            let what = format!("{TOKENIZER_CONFIG} chat_template ({} named)", list.len());
            Ok((Some(ChatTemplate::Named(list)), what))
        }
        first => {
            let kind = match first {
                Some(b'{') => "an object",
                Some(b't' | b'f') => "a boolean",
                _ => "a number",
            };
            Err(Error::new(format!(
                "`{}`: chat_template is {kind}, not a string or a list of named templates",
                config.display()
            ))
            .with_hint("transformers reads a string or a list of {name, template}"))
        }
    }
}

/// What [`d2t`] found beside a drafter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum D2t {
    /// No `model.safetensors` and no index beside the config: nothing to read.
    NoWeights,
    /// Weights, but no `d2t` tensor in them.
    Absent,
    /// The sha256 of the tensor's bytes as stored (`sha256sum` of that byte range).
    Found(Computed),
}

/// The digest of the drafter's `d2t` tensor (named `d2t` or `model.d2t`): one ranged read of
/// its bytes from the local `model.safetensors` or the shard that holds it.
pub fn d2t(drafter: &Path) -> Result<D2t> {
    let Some(headers) = crate::weights::read_local(drafter)? else {
        return Ok(D2t::NoWeights);
    };
    let Some(name) = headers
        .tensors()
        .map(|t| t.name.as_str())
        .find(|n| *n == "d2t" || *n == "model.d2t")
        .map(str::to_string)
    else {
        return Ok(D2t::Absent);
    };
    match crate::weights::read_local_tensor(drafter, &headers, &name)? {
        None => Ok(D2t::Absent),
        Some((tensor, bytes)) => Ok(D2t::Found(Computed {
            sha256: hex(&Sha256::digest(&bytes)),
            from: format!("`{name}` in {}", tensor.shard),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn chat_template_sources_and_changes() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(chat_template(dir.path()).unwrap(), None);
        fs::write(
            dir.path().join(TOKENIZER_CONFIG),
            r#"{"model_max_length": 8}"#,
        )
        .unwrap();
        assert_eq!(chat_template(dir.path()).unwrap(), None);
        fs::write(
            dir.path().join(TOKENIZER_CONFIG),
            r#"{"chat_template": "{{ messages }}"}"#,
        )
        .unwrap();
        let a = chat_template(dir.path()).unwrap().unwrap();
        assert!(is_sha256(&a.sha256));
        assert_eq!(a.from, "tokenizer_config.json chat_template");
        fs::write(
            dir.path().join(TOKENIZER_CONFIG),
            r#"{"chat_template": [{"name": "default", "template": "{{ messages }}"}]}"#,
        )
        .unwrap();
        let b = chat_template(dir.path()).unwrap().unwrap();
        assert_ne!(a.sha256, b.sha256, "a list is not the same template text");
        fs::write(dir.path().join(TEMPLATE_FILE), "{{ x }}").unwrap();
        let c = chat_template(dir.path()).unwrap().unwrap();
        assert_ne!(b.sha256, c.sha256);
        assert!(c.from.ends_with("+ chat_template.jinja"), "{}", c.from);
        fs::write(dir.path().join(TOKENIZER_CONFIG), r#"{"chat_template": 3}"#).unwrap();
        assert!(chat_template(dir.path())
            .unwrap_err()
            .message
            .contains("not a string"));
        fs::write(
            dir.path().join(TOKENIZER_CONFIG),
            r#"{"chat_template": [{"name": 1}]}"#,
        )
        .unwrap();
        assert!(chat_template(dir.path()).is_err());
    }
}
