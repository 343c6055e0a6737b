//! `model.safetensors.index.json`: which shard holds which tensor.
//!
//! Loaders (transformers, vLLM, huggingface_hub's `get_safetensors_metadata`) open every shard
//! named in `weight_map`, so the shard list is the distinct values of `weight_map`, in order of
//! first appearance. Shard names come from a file that may be hostile and become paths and
//! URLs, so they must be plain relative names inside the model directory.

use serde::Serialize;

use crate::{Error, Result};

/// The index file's name, as transformers and huggingface_hub spell it.
pub const INDEX_FILE: &str = "model.safetensors.index.json";
/// The single-file name.
pub const SINGLE_FILE: &str = "model.safetensors";
/// Largest index we read; real ones are tens of kilobytes.
pub const MAX_INDEX_BYTES: u64 = 16 << 20;
/// Most distinct shard files an index may name: every shard's header is read, so the work is
/// bounded by this (the largest public checkpoints have a few hundred shards).
pub const MAX_SHARDS: usize = 10_000;

/// A parsed index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Index {
    /// How messages name it: a path, or `ORG/NAME@SHA/model.safetensors.index.json`.
    pub display: String,
    /// `(tensor, shard)` in the file's order.
    pub weight_map: Vec<(String, String)>,
    /// The distinct shards, in order of first appearance.
    pub shards: Vec<String>,
}

/// Whether `name` is a safe relative file name: no absolute path, `..`, backslash or control.
pub fn is_safe_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 1024
        && !name.starts_with('/')
        && !name.contains('\\')
        && !name.chars().any(char::is_control)
        && name
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// Parses index bytes, naming `display` in errors.
pub fn parse(display: &str, bytes: &[u8]) -> Result<Index> {
    let bad = |what: String| {
        Error::new(format!("`{display}`: {what}"))
            .with_hint("restore the index from the model's repo (it lists every shard's tensors)")
    };
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| bad(format!("invalid JSON: {e}")))?;
    let map = value
        .get("weight_map")
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| bad("no `weight_map` object".to_string()))?;
    let mut weight_map = Vec::with_capacity(map.len());
    let mut shards: Vec<String> = Vec::new();
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (tensor, shard) in map {
        // Names from a hostile file may be megabytes long: messages show their start.
        let tensor_shown = crate::text::clip(tensor, 120);
        let Some(shard) = shard.as_str() else {
            return Err(bad(format!(
                "`weight_map.{tensor_shown}` is not a file name string"
            )));
        };
        if !is_safe_file_name(shard) {
            return Err(bad(format!(
                "`weight_map.{tensor_shown}` names `{}`, which is not a file inside the model directory",
                crate::text::clip(&shard.escape_debug().to_string(), 120)
            )));
        }
        if seen.insert(shard) {
            if shards.len() == MAX_SHARDS {
                return Err(bad(format!(
                    "more than {MAX_SHARDS} shard files (the largest models ship a few hundred)"
                )));
            }
            shards.push(shard.to_string());
        }
        weight_map.push((tensor.clone(), shard.to_string()));
    }
    Ok(Index {
        display: display.to_string(),
        weight_map,
        shards,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 200,000 shard names took minutes (a scan of the list per name); now a set, and more
    /// than [`MAX_SHARDS`] distinct shards is refused.
    #[test]
    fn many_shards_are_counted_in_linear_time_and_capped() {
        let many = |n: usize| {
            let items: Vec<String> = (0..n)
                .map(|i| format!("\"t{i}\": \"s{i}.safetensors\""))
                .collect();
            format!("{{\"weight_map\": {{{}}}}}", items.join(","))
        };
        let idx = parse("i.json", many(MAX_SHARDS).as_bytes()).unwrap();
        assert_eq!(idx.shards.len(), MAX_SHARDS);
        let err = parse("i.json", many(200_000).as_bytes()).unwrap_err();
        assert!(
            err.message.contains("more than 10000 shard files"),
            "{}",
            err.message
        );
    }

    #[test]
    fn lists_shards_in_order_and_refuses_escapes() {
        let idx = parse(
            "i.json",
            br#"{"metadata": {"total_size": 10}, "weight_map": {"b": "s2.safetensors", "a": "s1.safetensors", "c": "s2.safetensors"}}"#,
        )
        .unwrap();
        assert_eq!(idx.shards, vec!["s2.safetensors", "s1.safetensors"]);
        assert_eq!(idx.weight_map.len(), 3);
        for bad in [
            r#"{"weight_map": {"a": "../x.safetensors"}}"#,
            r#"{"weight_map": {"a": "/etc/passwd"}}"#,
            r#"{"weight_map": {"a": 3}}"#,
            r#"{"weight_map": []}"#,
            r#"[1]"#,
            r#"{"weight_map": {"a": "#,
        ] {
            let err = parse("i.json", bad.as_bytes()).unwrap_err();
            assert!(err.message.starts_with("`i.json`"), "{}", err.message);
        }
    }
}
