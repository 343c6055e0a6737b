//! Token fields: where a config holds token ids (`mask_token_id`, `eos_token_id`, lists of
//! ids), the ids in them, and which of them can have no embedding row whatever the target
//! (negative ids, ids past 2^64). Used by the `out-of-range` rule, by `check`'s token scan
//! and to decode the ids a difference shows.

use crate::json::{Node, Path};
use crate::text::is_id_past_u64;
use crate::tokens::{DecodedToken, TokenTable};

/// Every field holding token ids, anywhere in the tree (`dflash_config.mask_token_id`, ...).
pub fn token_fields(root: &Node) -> Vec<(Path, &Node)> {
    fn walk<'a>(node: &'a Node, path: &Path, out: &mut Vec<(Path, &'a Node)>) {
        if let Some(members) = node.as_object() {
            for m in members {
                // A member's path is built only where it is kept or walked into.
                if super::is_token_key(&m.key) {
                    out.push((path.child(&m.key), &m.value));
                } else if m.value.as_object().is_some() {
                    walk(&m.value, &path.child(&m.key), out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(root, &Path::root(), &mut out);
    out
}

/// The ids of every token field in the tree: [`token_fields`]' values through [`token_ids`],
/// in the same order, with no path built for any (what a shared target's cache key needs).
pub fn token_field_ids(root: &Node, out: &mut Vec<u64>) {
    if let Some(members) = root.as_object() {
        for m in members {
            if super::is_token_key(&m.key) {
                match m.value.as_array() {
                    Some(items) => out.extend(items.iter().filter_map(Node::as_u64)),
                    None => out.extend(m.value.as_u64()),
                }
            } else if m.value.as_object().is_some() {
                token_field_ids(&m.value, out);
            }
        }
    }
}

/// The ids in a token field: an integer or a list of integers. Other values have none.
pub fn token_ids(node: &Node) -> Vec<u64> {
    match node.as_array() {
        Some(items) => items.iter().filter_map(Node::as_u64).collect(),
        None => node.as_u64().into_iter().collect(),
    }
}

/// Whether the engine indexes the target's embedding with this field (the drafter embeds its
/// mask token), so that no value there can mean "none".
fn is_indexed_id_field(path: &Path) -> bool {
    path.last_key().is_some_and(|k| k == "mask_token_id")
}

/// Whether `node` is a negative integer literal (`-1`, `-248070`, or one too long for `i128`).
fn negative_integer(node: &Node) -> Option<Option<i128>> {
    let n = node.as_number()?;
    let negative = match n.integer {
        Some(i) => i < 0,
        None => n
            .text
            .strip_prefix('-')
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())),
    };
    negative.then_some(n.integer)
}

/// Whether a token field's value holds a negative id that has no embedding row: any negative
/// id of a field the engine indexes with (`mask_token_id`), and elsewhere any negative id but
/// the `-1` that old configs use to mean "none" (`"pad_token_id": -1`).
pub(super) fn has_negative_id(path: &Path, node: &Node) -> bool {
    let indexed = is_indexed_id_field(path);
    let bad = |n: &Node| negative_integer(n).is_some_and(|i| indexed || i != Some(-1));
    match node.as_array() {
        Some(items) => items.iter().any(bad),
        None => bad(node),
    }
}

/// Whether a token field's value holds an id past 2^64.
pub(super) fn has_id_past_u64(node: &Node) -> bool {
    match node.as_array() {
        Some(items) => items.iter().any(is_id_past_u64),
        None => is_id_past_u64(node),
    }
}

/// Decodes the ids of a token field's value.
pub fn decode_node(tokens: &TokenTable, node: Option<&Node>) -> Vec<DecodedToken> {
    node.map(|n| {
        token_ids(n)
            .into_iter()
            .map(|id| tokens.decode(id))
            .collect()
    })
    .unwrap_or_default()
}
