//! `model.safetensors.index.json`: which shard holds which tensor.
//!
//! Loaders (transformers, vLLM, huggingface_hub's `get_safetensors_metadata`) open every shard
//! named in `weight_map`, so the shard list is the distinct values of `weight_map`, in order of
//! first appearance. Shard names come from a file that may be hostile and become paths and
//! URLs, so they must be plain relative names inside the model directory.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasher;

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

/// One entry of the map: where its tensor name is in the index's text, and its shard's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    start: u32,
    len: u32,
    shard: u32,
}

/// A parsed index. The tensor names are kept where the file wrote them (the file's text is
/// the index's, 12 bytes an entry beside it) and each shard name once: a 183,610-entry index
/// held a `String` for every name and every shard (47 MB for a 17.5 MB file, issue 44).
#[derive(Clone)]
pub struct Index {
    /// How messages name it: a path, or `ORG/NAME@SHA/model.safetensors.index.json`.
    pub display: String,
    /// The distinct shards, in order of first appearance.
    pub shards: Vec<String>,
    /// The names' text: the index file (or, when it holds bytes that are not UTF-8 outside
    /// the names, the names alone), then the names written with JSON escapes, unescaped.
    text: String,
    /// The map's entries in the file's order.
    slots: Vec<Slot>,
}

impl Index {
    /// An index of `(tensor, shard)` entries as given (for tests and callers that build one).
    pub fn from_entries(
        display: &str,
        entries: impl IntoIterator<Item = (String, String)>,
    ) -> Index {
        let mut index = Index {
            display: display.to_string(),
            shards: Vec::new(),
            text: String::new(),
            slots: Vec::new(),
        };
        let mut ids: HashMap<String, u32> = HashMap::new();
        for (tensor, shard) in entries {
            let next = index.shards.len() as u32;
            let id = *ids.entry(shard.clone()).or_insert_with(|| {
                index.shards.push(shard);
                next
            });
            index.slots.push(Slot {
                start: index.text.len() as u32,
                len: tensor.len() as u32,
                shard: id,
            });
            index.text.push_str(&tensor);
        }
        index
    }

    /// How many tensors the map names.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    fn name(&self, s: Slot) -> &str {
        self.text
            .get(s.start as usize..(s.start + s.len) as usize)
            .unwrap_or_default()
    }

    /// `(tensor, shard)` in the file's order; a tensor given twice once, at its first place,
    /// with its last shard.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + Clone + '_ {
        self.slots
            .iter()
            .map(|&s| (self.name(s), self.shards[s.shard as usize].as_str()))
    }

    /// The tensor names, in the file's order.
    pub fn tensor_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.slots.iter().map(|&s| self.name(s))
    }

    /// How many tensors the map puts in each shard, in [`Index::shards`]' order.
    pub fn per_shard(&self) -> Vec<usize> {
        let mut counts = vec![0; self.shards.len()];
        for s in &self.slots {
            counts[s.shard as usize] += 1;
        }
        counts
    }
}

impl PartialEq for Index {
    fn eq(&self, other: &Index) -> bool {
        self.display == other.display
            && self.shards == other.shards
            && self.entries().eq(other.entries())
    }
}

impl Eq for Index {}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("display", &self.display)
            .field("entries", &self.len())
            .field("shards", &self.shards)
            .finish()
    }
}

/// As the `(tensor, shard)` list it was: `{display, weight_map: [[tensor, shard], …], shards}`.
impl Serialize for Index {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Map<'a>(&'a Index);
        impl Serialize for Map<'_> {
            fn serialize<S: serde::Serializer>(
                &self,
                s: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                s.collect_seq(self.0.entries())
            }
        }
        let mut st = s.serialize_struct("Index", 3)?;
        st.serialize_field("display", &self.display)?;
        st.serialize_field("weight_map", &Map(self))?;
        st.serialize_field("shards", &self.shards)?;
        st.end()
    }
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

/// The `weight_map` read entry by entry, straight into the index's slots (no JSON tree of
/// 150,000 nodes is built first, and no name is copied), stopping at the first bad entry or
/// past a cap. A key given twice keeps its first position and its last shard, as Python's
/// `json` and the `Value` map this replaced do.
struct WeightMap<'s, 'b> {
    state: &'s mut ParseState<'b>,
}

struct ParseState<'b> {
    /// The file's bytes: a name without escapes is kept as its place in them.
    bytes: &'b [u8],
    slots: Vec<Slot>,
    /// Names written with escapes, unescaped; their slots start at `bytes.len()` + the offset.
    escaped: String,
    /// Each distinct shard name once (in order of first sight), and its number.
    shard_names: Vec<String>,
    shard_ids: HashMap<String, u32>,
    /// The last entry's shard: entries come grouped by shard, so most are found without a hash.
    last_shard: Option<u32>,
    /// The first problem found, worded for the user (serde's own errors are for JSON syntax).
    problem: Option<String>,
    seen_map: bool,
    hasher: std::collections::hash_map::RandomState,
}

impl ParseState<'_> {
    fn name_bytes<'a>(bytes: &'a [u8], escaped: &'a str, s: Slot) -> &'a [u8] {
        let (start, end) = (s.start as usize, (s.start + s.len) as usize);
        match start.checked_sub(bytes.len()) {
            None => &bytes[start..end],
            Some(at) => &escaped.as_bytes()[at..at + s.len as usize],
        }
    }

    /// Where `name` is: its place in the file when it is a slice of it (serde borrows a name
    /// without escapes from the text), else appended to the escaped names.
    fn place(&mut self, name: &str) -> (u32, u32) {
        let len = name.len() as u32;
        let at = (name.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
        if at
            .checked_add(name.len())
            .is_some_and(|end| end <= self.bytes.len())
        {
            return (at as u32, len);
        }
        let at = self.bytes.len() + self.escaped.len();
        self.escaped.push_str(name);
        (at as u32, len)
    }

    /// The number of `shard`, checked as a file name the first time it is seen.
    fn shard_id(&mut self, shard: &str, tensor: &str) -> std::result::Result<u32, String> {
        if let Some(last) = self.last_shard {
            if self.shard_names[last as usize] == shard {
                return Ok(last);
            }
        }
        if let Some(&id) = self.shard_ids.get(shard) {
            self.last_shard = Some(id);
            return Ok(id);
        }
        if !is_safe_file_name(shard) {
            // Names from a hostile file may be megabytes long: messages show their start.
            return Err(format!(
                "`weight_map.{}` names `{}`, which is not a file inside the model directory",
                crate::text::clip(tensor, 120),
                crate::text::clip(&shard.escape_debug().to_string(), 120)
            ));
        }
        let id = self.shard_names.len() as u32;
        self.shard_names.push(shard.to_string());
        self.shard_ids.insert(shard.to_string(), id);
        self.last_shard = Some(id);
        Ok(id)
    }
}

/// A JSON string as the map gives it (borrowed from the text when it has no escape), or
/// `None` for any other JSON value — read without building a JSON tree for it.
struct JsonText<'de>(Option<Cow<'de, str>>);

impl<'de> serde::Deserialize<'de> for JsonText<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = JsonText<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a tensor or shard file name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Self::Value, E> {
                Ok(JsonText(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
                Ok(JsonText(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_bool<E>(self, _: bool) -> std::result::Result<Self::Value, E> {
                Ok(JsonText(None))
            }
            fn visit_i64<E>(self, _: i64) -> std::result::Result<Self::Value, E> {
                Ok(JsonText(None))
            }
            fn visit_u64<E>(self, _: u64) -> std::result::Result<Self::Value, E> {
                Ok(JsonText(None))
            }
            fn visit_f64<E>(self, _: f64) -> std::result::Result<Self::Value, E> {
                Ok(JsonText(None))
            }
            fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
                Ok(JsonText(None))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(JsonText(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(JsonText(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// The index file's top level: `weight_map` read by [`WeightMap`], every other key skipped.
struct Top<'s, 'b> {
    state: &'s mut ParseState<'b>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Top<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Top<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object with a `weight_map`")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
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

impl<'de> serde::de::DeserializeSeed<'de> for WeightMap<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl WeightMap<'_, '_> {
    /// Records `problem` and returns the error that stops serde.
    fn stop<E: serde::de::Error>(&mut self, problem: String) -> E {
        self.state.problem = Some(problem);
        E::custom("stopped")
    }

    /// Adds one entry (`tensor` to shard number `shard`) unless the name was given before,
    /// whose shard it then replaces. `seen` holds each slot's number by its name's hash.
    fn add(
        &mut self,
        seen: &mut hashbrown::HashTable<u32>,
        tensor: &str,
        shard: u32,
    ) -> std::result::Result<(), String> {
        let st = &mut *self.state;
        let hash = st.hasher.hash_one(tensor.as_bytes());
        let (bytes, escaped, slots) = (st.bytes, &st.escaped, &mut st.slots);
        let name_of = |i: u32| ParseState::name_bytes(bytes, escaped, slots[i as usize]);
        if let Some(&at) = seen.find(hash, |&i| name_of(i) == tensor.as_bytes()) {
            slots[at as usize].shard = shard;
            return Ok(());
        }
        if slots.len() == MAX_INDEX_ENTRIES {
            return Err(format!(
                "its `weight_map` names more than {MAX_INDEX_ENTRIES} tensors (the largest \
                 public checkpoints name under 200,000)"
            ));
        }
        let (start, len) = st.place(tensor);
        let at = st.slots.len() as u32;
        st.slots.push(Slot { start, len, shard });
        let (bytes, escaped, slots, hasher) = (st.bytes, &st.escaped, &st.slots, &st.hasher);
        seen.insert_unique(hash, at, |&i| {
            hasher.hash_one(ParseState::name_bytes(bytes, escaped, slots[i as usize]))
        });
        Ok(())
    }
}

impl<'de> serde::de::Visitor<'de> for WeightMap<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object of tensor names to shard files")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        mut self,
        mut map: A,
    ) -> std::result::Result<(), A::Error> {
        self.state.seen_map = true;
        // Each name's slot, found by hashing the name where it stands (no copy of it).
        let mut seen = hashbrown::HashTable::with_capacity(self.state.slots.capacity());
        while let Some(JsonText(tensor)) = map.next_key::<JsonText>()? {
            let tensor = tensor.unwrap_or_default();
            let JsonText(Some(shard)) = map.next_value::<JsonText>()? else {
                let tensor = crate::text::clip(&tensor, 120);
                let p = format!("`weight_map.{tensor}` is not a file name string");
                return Err(self.stop(p));
            };
            let added = self
                .state
                .shard_id(&shard, &tensor)
                .and_then(|id| self.add(&mut seen, &tensor, id));
            if let Err(p) = added {
                return Err(self.stop(p));
            }
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
/// The index keeps `bytes` as the names' text (they are not copied).
pub fn parse(display: &str, bytes: Vec<u8>) -> Result<Index> {
    use serde::de::DeserializeSeed;
    let bad = |what: String| {
        Error::new(format!("`{display}`: {what}"))
            .with_hint("restore the index from the model's repo (it lists every shard's tensors)")
    };
    let mut state = ParseState {
        bytes: &bytes,
        // About 100 bytes an entry in real indexes: room reserved once (pages untouched stay
        // unallocated), not doubled as it fills.
        slots: Vec::with_capacity((bytes.len() / 80).min(MAX_INDEX_ENTRIES)),
        escaped: String::new(),
        shard_names: Vec::new(),
        shard_ids: HashMap::new(),
        last_shard: None,
        problem: None,
        seen_map: false,
        hasher: Default::default(),
    };
    let mut de = serde_json::Deserializer::from_slice(&bytes);
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
    let ParseState {
        mut slots,
        escaped,
        mut shard_names,
        ..
    } = state;
    let shards = shards_in_use(&mut slots, &mut shard_names).map_err(bad)?;
    Ok(Index {
        display: display.to_string(),
        shards,
        text: names_text(bytes, &mut slots, &escaped),
        slots,
    })
}

/// The shards, from the map as it ended (a shard named only by an entry given again with
/// another shard is not loaded), in order of first appearance; the slots renumbered to them.
fn shards_in_use(
    slots: &mut [Slot],
    names: &mut [String],
) -> std::result::Result<Vec<String>, String> {
    let mut number = vec![u32::MAX; names.len()];
    let mut shards: Vec<String> = Vec::new();
    for s in slots {
        let n = &mut number[s.shard as usize];
        if *n == u32::MAX {
            if shards.len() == MAX_SHARDS {
                return Err(format!(
                    "more than {MAX_SHARDS} shard files (the largest models ship a few hundred)"
                ));
            }
            *n = shards.len() as u32;
            shards.push(std::mem::take(&mut names[s.shard as usize]));
        }
        s.shard = *n;
    }
    Ok(shards)
}

/// The names' text: the file itself when it is UTF-8 throughout (the names stay where they
/// are), else the names alone, copied; then the escaped names.
fn names_text(bytes: Vec<u8>, slots: &mut [Slot], escaped: &str) -> String {
    let file_len = bytes.len();
    if simdutf8::basic::from_utf8(&bytes).is_ok() {
        // SAFETY: simdutf8 has just checked these very bytes as UTF-8 (its answer is std's,
        // checked by its own test suite against std); std's `from_utf8` would check all 17 MB
        // of a large index a second time.
        let mut text = unsafe { String::from_utf8_unchecked(bytes) };
        text.push_str(escaped);
        return text;
    }
    // Bytes outside the names are not UTF-8 (serde does not check the values it skips); the
    // names themselves are, as serde read them as strings.
    let mut text = String::new();
    for s in slots {
        let name = ParseState::name_bytes(&bytes, escaped, *s);
        let start = text.len() as u32;
        text.push_str(&String::from_utf8_lossy(name));
        s.start = start;
    }
    debug_assert!(text.len() <= file_len + escaped.len());
    text
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
        let idx = parse("i.json", many(MAX_SHARDS).into_bytes()).unwrap();
        assert_eq!(idx.shards.len(), MAX_SHARDS);
        let err = parse("i.json", many(200_000).into_bytes()).unwrap_err();
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
        let err = parse("i.json", text.into_bytes()).unwrap_err();
        assert!(
            err.message.contains("more than 500000 tensors"),
            "{}",
            err.message
        );
        let idx = parse(
            "i.json",
            br#"{"weight_map": {"a": "s1.safetensors", "b": "s1.safetensors", "a": "s2.safetensors"}, "metadata": {"total_size": [1, {"x": null}]}}"#.to_vec(),
        )
        .unwrap();
        assert_eq!(
            idx.entries().collect::<Vec<_>>(),
            vec![("a", "s2.safetensors"), ("b", "s1.safetensors")]
        );
        assert_eq!(idx.shards, vec!["s2.safetensors", "s1.safetensors"]);
        for bad in [
            r#"{"metadata": {}}"#,
            r#"{"weight_map": null}"#,
            r#"{"weight_map": {"a": "s"}} x"#,
        ] {
            let err = parse("i.json", bad.as_bytes().to_vec()).unwrap_err();
            assert!(err.message.starts_with("`i.json`"), "{}", err.message);
        }
    }

    /// A name written with JSON escapes is read unescaped (and found again when given plainly),
    /// and a file whose bytes are not UTF-8 where serde skips them (a metadata value) gives the
    /// same entries: the index then keeps the names alone. Serialized as the list it was.
    #[test]
    fn escaped_names_and_bytes_that_are_not_utf8_outside_the_names() {
        let map = br#"}, "weight_map": {"a\u002eb": "s.safetensors", "c": "s.safetensors", "a.b": "t.safetensors"}}"#;
        for odd in [&b""[..], &[0xff][..]] {
            let mut text = br#"{"metadata": {"note": "x"#.to_vec();
            text.extend_from_slice(odd);
            text.push(b'"');
            text.extend_from_slice(map);
            let idx = parse("i.json", text).unwrap();
            assert_eq!(
                idx.entries().collect::<Vec<_>>(),
                vec![("a.b", "t.safetensors"), ("c", "s.safetensors")]
            );
            assert_eq!(idx.shards, vec!["t.safetensors", "s.safetensors"]);
            assert_eq!(idx.per_shard(), vec![1, 1]);
            assert_eq!(
                serde_json::to_value(&idx).unwrap(),
                serde_json::json!({"display": "i.json", "shards": ["t.safetensors", "s.safetensors"],
                    "weight_map": [["a.b", "t.safetensors"], ["c", "s.safetensors"]]})
            );
        }
    }

    #[test]
    fn lists_shards_in_order_and_refuses_escapes() {
        let idx = parse(
            "i.json",
            br#"{"metadata": {"total_size": 10}, "weight_map": {"b": "s2.safetensors", "a": "s1.safetensors", "c": "s2.safetensors"}}"#.to_vec(),
        )
        .unwrap();
        assert_eq!(idx.shards, vec!["s2.safetensors", "s1.safetensors"]);
        assert_eq!(idx.len(), 3);
        for bad in [
            r#"{"weight_map": {"a": "../x.safetensors"}}"#,
            r#"{"weight_map": {"a": "/etc/passwd"}}"#,
            r#"{"weight_map": {"a": 3}}"#,
            r#"{"weight_map": []}"#,
            r#"[1]"#,
            r#"{"weight_map": {"a": "#,
        ] {
            let err = parse("i.json", bad.as_bytes().to_vec()).unwrap_err();
            assert!(err.message.starts_with("`i.json`"), "{}", err.message);
        }
    }
}
