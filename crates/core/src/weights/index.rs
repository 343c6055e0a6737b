//! `model.safetensors.index.json`: which shard holds which tensor.
//!
//! Loaders (transformers, vLLM, huggingface_hub's `get_safetensors_metadata`) open every shard
//! named in `weight_map`, so the shard list is the distinct values of `weight_map`, in order of
//! first appearance. Shard names come from a file that may be hostile and become paths and
//! URLs, so they must be plain relative names inside the model directory.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::{Error, Result};

/// The index file's name, as transformers and huggingface_hub spell it.
pub const INDEX_FILE: &str = "model.safetensors.index.json";
/// The single-file name.
pub const SINGLE_FILE: &str = "model.safetensors";
/// Largest index we read. DeepSeek-V3's names about 91,000 tensors in 8.9 MB; an NVFP4 export of
/// a model that size, with two scales and an input scale per linear weight, about twice that.
pub const MAX_INDEX_BYTES: u64 = 64 << 20;
/// Most tensors an index may name: every name is kept, so memory is bounded by this (real
/// indexes name under 200,000).
pub const MAX_INDEX_ENTRIES: usize = 500_000;
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

/// The `weight_map` read entry by entry, straight into the index's lists (no JSON tree of
/// 150,000 nodes is built first), stopping at the first bad entry or past a cap. A key given
/// twice keeps its first position and its last shard, as Python's `json` and the `Value` map
/// this replaced do.
struct WeightMap<'s> {
    state: &'s mut ParseState,
}

#[derive(Default)]
struct ParseState {
    weight_map: Vec<(String, String)>,
    /// The first problem found, worded for the user (serde's own errors are for JSON syntax).
    problem: Option<String>,
    seen_map: bool,
    hasher: std::collections::hash_map::RandomState,
}

/// A shard name as the map gives it: a string (borrowed from the text when it has no escape),
/// or `None` for any other JSON value — read without building a JSON tree for it.
struct ShardName<'de>(Option<std::borrow::Cow<'de, str>>);

impl<'de> serde::Deserialize<'de> for ShardName<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ShardName<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a shard file name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Self::Value, E> {
                Ok(ShardName(Some(std::borrow::Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
                Ok(ShardName(Some(std::borrow::Cow::Owned(v.to_string()))))
            }
            fn visit_bool<E>(self, _: bool) -> std::result::Result<Self::Value, E> {
                Ok(ShardName(None))
            }
            fn visit_i64<E>(self, _: i64) -> std::result::Result<Self::Value, E> {
                Ok(ShardName(None))
            }
            fn visit_u64<E>(self, _: u64) -> std::result::Result<Self::Value, E> {
                Ok(ShardName(None))
            }
            fn visit_f64<E>(self, _: f64) -> std::result::Result<Self::Value, E> {
                Ok(ShardName(None))
            }
            fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
                Ok(ShardName(None))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(ShardName(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(ShardName(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// The index file's top level: `weight_map` read by [`WeightMap`], every other key skipped.
struct Top<'s> {
    state: &'s mut ParseState,
}

impl<'de> serde::de::DeserializeSeed<'de> for Top<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Top<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object with a `weight_map`")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "weight_map" {
                map.next_value_seed(WeightMap {
                    state: &mut *self.state,
                })?;
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for WeightMap<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl WeightMap<'_> {
    /// Records `problem` and returns the error that stops serde.
    fn stop<E: serde::de::Error>(&mut self, problem: String) -> E {
        self.state.problem = Some(problem);
        E::custom("stopped")
    }
}

impl<'de> serde::de::Visitor<'de> for WeightMap<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object of tensor names to shard files")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        mut self,
        mut map: A,
    ) -> std::result::Result<(), A::Error> {
        self.state.seen_map = true;
        // Each name's position by its hash, so a name given twice is found without a second
        // copy of every name (a collision of two names is told apart by comparing them).
        let mut position: HashMap<u64, usize> = HashMap::new();
        let mut collided: HashMap<String, usize> = HashMap::new();
        while let Some(tensor) = map.next_key::<String>()? {
            let value = map.next_value::<ShardName>()?;
            // Names from a hostile file may be megabytes long: messages show their start.
            let tensor_shown = || crate::text::clip(&tensor, 120);
            let ShardName(Some(shard)) = value else {
                let p = format!("`weight_map.{}` is not a file name string", tensor_shown());
                return Err(self.stop(p));
            };
            let shard = shard.as_ref();
            if !is_safe_file_name(shard) {
                let p = format!(
                    "`weight_map.{}` names `{}`, which is not a file inside the model directory",
                    tensor_shown(),
                    crate::text::clip(&shard.escape_debug().to_string(), 120)
                );
                return Err(self.stop(p));
            }
            let hash = {
                use std::hash::{BuildHasher, Hasher};
                let mut h = self.state.hasher.build_hasher();
                h.write(tensor.as_bytes());
                h.finish()
            };
            let again = match position.get(&hash) {
                Some(&at) if self.state.weight_map[at].0 == tensor => Some(at),
                Some(_) => collided.get(&tensor).copied(),
                None => None,
            };
            if let Some(at) = again {
                self.state.weight_map[at].1 = shard.to_string();
                continue;
            }
            if self.state.weight_map.len() == MAX_INDEX_ENTRIES {
                let p = format!(
                    "its `weight_map` names more than {MAX_INDEX_ENTRIES} tensors (the largest \
                     public checkpoints name under 200,000)"
                );
                return Err(self.stop(p));
            }
            let at = self.state.weight_map.len();
            match position.entry(hash) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(at);
                }
                // Another name has this hash: this one is found by name.
                std::collections::hash_map::Entry::Occupied(_) => {
                    collided.insert(tensor.clone(), at);
                }
            }
            self.state.weight_map.push((tensor, shard.to_string()));
        }
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        mut self,
        _: A,
    ) -> std::result::Result<(), A::Error> {
        Err(self.stop("no `weight_map` object".to_string()))
    }
    fn visit_unit<E: serde::de::Error>(mut self) -> std::result::Result<(), E> {
        Err(self.stop("no `weight_map` object".to_string()))
    }
    fn visit_str<E: serde::de::Error>(mut self, _: &str) -> std::result::Result<(), E> {
        Err(self.stop("no `weight_map` object".to_string()))
    }
    fn visit_bool<E: serde::de::Error>(mut self, _: bool) -> std::result::Result<(), E> {
        Err(self.stop("no `weight_map` object".to_string()))
    }
    fn visit_u64<E: serde::de::Error>(mut self, _: u64) -> std::result::Result<(), E> {
        Err(self.stop("no `weight_map` object".to_string()))
    }
    fn visit_i64<E: serde::de::Error>(mut self, _: i64) -> std::result::Result<(), E> {
        Err(self.stop("no `weight_map` object".to_string()))
    }
    fn visit_f64<E: serde::de::Error>(mut self, _: f64) -> std::result::Result<(), E> {
        Err(self.stop("no `weight_map` object".to_string()))
    }
}

/// Parses index bytes, naming `display` in errors: one pass over the text, entry by entry.
pub fn parse(display: &str, bytes: &[u8]) -> Result<Index> {
    use serde::de::DeserializeSeed;
    let bad = |what: String| {
        Error::new(format!("`{display}`: {what}"))
            .with_hint("restore the index from the model's repo (it lists every shard's tensors)")
    };
    let mut state = ParseState::default();
    // About 100 bytes an entry in real indexes: one allocation instead of doublings.
    state
        .weight_map
        .reserve((bytes.len() / 128).min(MAX_INDEX_ENTRIES));
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let read = Top { state: &mut state }
        .deserialize(&mut de)
        .and_then(|()| de.end());
    if let Some(problem) = state.problem.take() {
        return Err(bad(problem));
    }
    if let Err(e) = read {
        return Err(bad(if e.is_data() && !state.seen_map {
            "no `weight_map` object".to_string()
        } else {
            format!("invalid JSON: {e}")
        }));
    }
    if !state.seen_map {
        return Err(bad("no `weight_map` object".to_string()));
    }
    // The shards, from the map as it ended (a shard named only by an entry given again with
    // another shard is not loaded).
    let mut shards: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for (_, shard) in &state.weight_map {
        if seen.insert(shard) {
            if shards.len() == MAX_SHARDS {
                return Err(bad(format!(
                    "more than {MAX_SHARDS} shard files (the largest models ship a few hundred)"
                )));
            }
            shards.push(shard.clone());
        }
    }
    Ok(Index {
        display: display.to_string(),
        weight_map: state.weight_map,
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

    /// More than [`MAX_INDEX_ENTRIES`] tensors is refused while the map is read, naming the cap;
    /// a tensor named twice keeps its first place and its last shard (as Python's `json`).
    #[test]
    fn entries_are_capped_and_duplicates_keep_the_last_shard() {
        let items: Vec<String> = (0..=MAX_INDEX_ENTRIES)
            .map(|i| format!("\"t{i}\": \"s.safetensors\""))
            .collect();
        let text = format!("{{\"weight_map\": {{{}}}}}", items.join(","));
        let err = parse("i.json", text.as_bytes()).unwrap_err();
        assert!(
            err.message.contains("more than 500000 tensors"),
            "{}",
            err.message
        );
        let idx = parse(
            "i.json",
            br#"{"weight_map": {"a": "s1.safetensors", "b": "s1.safetensors", "a": "s2.safetensors"}, "metadata": {"total_size": [1, {"x": null}]}}"#,
        )
        .unwrap();
        assert_eq!(
            idx.weight_map,
            vec![
                ("a".to_string(), "s2.safetensors".to_string()),
                ("b".to_string(), "s1.safetensors".to_string())
            ]
        );
        assert_eq!(idx.shards, vec!["s2.safetensors", "s1.safetensors"]);
        for bad in [
            r#"{"metadata": {}}"#,
            r#"{"weight_map": null}"#,
            r#"{"weight_map": {"a": "s"}} x"#,
        ] {
            let err = parse("i.json", bad.as_bytes()).unwrap_err();
            assert!(err.message.starts_with("`i.json`"), "{}", err.message);
        }
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
