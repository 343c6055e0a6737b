//! The comparison itself: (local config, authoritative config) -> differences. No I/O.
//!
//! Both trees are first brought to one canonical layout, so that the same semantic field is
//! compared once however it is spelled: `dflash_config.block_size` is `block_size`, and
//! transformers 5's `rope_parameters` is folded back into `rope_theta` + `rope_scaling`
//! (`{"rope_type": "default"}` alone is `rope_scaling: null`). Layout differences are then
//! reported on their own line, informational, because a value that agrees is not a change even
//! if a loader that reads one layout only will still trip on it (lint says so).
//! Objects are walked key by key; arrays are compared whole, as one value, because a layer list
//! is one setting.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Serialize;

use crate::config::{Layout, LAYOUT_FIELDS};
use crate::diagnostic::codes::DiffCode;
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{same_key, Member, Node, Path, Segment, Value};
use crate::tokens::TokenTable;

pub mod defaults;
pub mod rules;
pub mod token_fields;

pub use token_fields::{decode_node, token_field_ids, token_fields, token_ids};

/// What kind of difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffKind {
    /// Both sides have the field with different values.
    Changed,
    /// Different JSON types (`"248070"` vs `248070`).
    Type,
    /// Only the local file has the field.
    OnlyLocal,
    /// Only the authority has the field.
    OnlyAuthority,
    /// A token id with no embedding row, even if both sides agree.
    OutOfRange,
    /// Same values, different layout (flat vs nested).
    Layout,
}

impl DiffKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DiffKind::Changed => "changed",
            DiffKind::Type => "type",
            DiffKind::OnlyLocal => "only_local",
            DiffKind::OnlyAuthority => "only_authority",
            DiffKind::OutOfRange => "out_of_range",
            DiffKind::Layout => "layout",
        }
    }
}

/// The documentation of a diff code: the rule that classifies that kind of difference
/// (`rules`), or, for `authority-ambiguous`, the tool's own judgement.
pub fn info(code: DiffCode) -> &'static CodeInfo {
    match crate::diagnostic::rule::find(rules::RULES, code) {
        Some(rule) => &rule.info,
        None => &rules::AMBIGUOUS,
    }
}

impl DiffKind {
    /// The diagnostic code of this kind of difference.
    pub fn code(self) -> DiffCode {
        match self {
            DiffKind::Changed => DiffCode::Changed,
            DiffKind::Type => DiffCode::TypeChanged,
            DiffKind::OnlyLocal => DiffCode::OnlyLocal,
            DiffKind::OnlyAuthority => DiffCode::OnlyAuthority,
            DiffKind::OutOfRange => DiffCode::OutOfRange,
            DiffKind::Layout => DiffCode::Layout,
        }
    }
}

/// Top-level fields that are metadata: they never change what the drafter computes.
/// Everything else, including keys this tool has never seen, is critical.
pub const MINOR_FIELDS: &[&str] = &[
    "transformers_version",
    "dtype",
    "torch_dtype",
    "_name_or_path",
    "_commit_hash",
    "_attn_implementation",
    "_attn_implementation_autoset",
    "use_cache",
    "initializer_range",
    "attention_dropout",
    "auto_map",
    "output_attentions",
    "output_hidden_states",
    "return_dict",
    "torchscript",
    "chunk_size_feed_forward",
    "problem_type",
    "tokenizer_class",
    "speculators_version",
];

/// Keys that only training reads: a difference changes nothing an engine serves, so it is a
/// warning, like metadata. Unknown keys stay errors. Matched on the last key of a path that is
/// top level or directly under `dflash_config`. Each is a training option of SpecForge
/// (specforge/config/schema.py@a6b6b02, the line in the comment) or speculators.
pub const TRAINING_ONLY_FIELDS: &[&str] = &[
    "num_anchors",                  // schema.py:537, anchors sampled per sequence
    "loss_decay_gamma",             // schema.py:538, per-position loss decay
    "attention_backend",            // schema.py:523-525, training attention kernel
    "objective_chunk_blocks",       // schema.py:540, loss chunking
    "loss_type",                    // schema.py:541, DFlash loss variant
    "dpace_alpha",                  // schema.py:547
    "lambda_base_start",            // schema.py:548, Domino loss schedule
    "lambda_base_decay_ratio",      // schema.py:549
    "dspark_ce_loss_alpha",         // schema.py:550, DSpark loss weights
    "dspark_l1_loss_alpha",         // schema.py:551
    "dspark_confidence_head_alpha", // schema.py:552
    "ttt_length",                   // schema.py:522, EAGLE-3 training-time-test length
    "kl_scale",                     // schema.py:534, EAGLE-3 KL loss
    "kl_decay",                     // schema.py:535
    "num_depths",                   // schema.py:554, P-EAGLE COD sampling
    "down_sample_ratio",            // schema.py:555
    "down_sample_ratio_min",        // schema.py:556
    "embed_requires_grad", // speculators src/speculators/models/eagle3/config.py@c05b95b:84
];

/// Top-level fields a drafter's config holds that no serving engine reads for the drafter: a
/// drafter borrows the target's tokenizer and generation config, so its own bos/eos/pad ids
/// decide nothing (evidence/evidence.toml, codes `token-id-target-mismatch` and
/// `token-id-out-of-range`: z-lab/dflash never reads them; vLLM's draft model config takes
/// the target's tokenizer). A difference is a warning — it still says the file is not the
/// published one, and `--deny warnings` fails on it — and the mask id, which engines do read,
/// stays an error.
pub const NOT_READ_BY_ENGINES: &[&str] = &["bos_token_id", "eos_token_id", "pad_token_id"];

/// The severity of a difference at `path` (canonical layout): metadata, training-only keys and
/// fields no engine reads are warnings; everything else (including keys this tool has never
/// seen) is an error.
pub fn severity_of(path: &Path) -> Severity {
    let training = |key: &str| TRAINING_ONLY_FIELDS.contains(&key);
    let top_level = path.0.len() == 1;
    let under_dflash_config = path.0.len() == 2 && path.first_key() == Some("dflash_config");
    match (path.first_key(), path.last_key()) {
        (Some(first), _) if MINOR_FIELDS.contains(&first) => Severity::Warning,
        (Some(first), _) if top_level && NOT_READ_BY_ENGINES.contains(&first) => Severity::Warning,
        (_, Some(last)) if (top_level || under_dflash_config) && training(last) => {
            Severity::Warning
        }
        _ => Severity::Error,
    }
}

/// Whether the field at `path` holds token ids (`mask_token_id`, `eos_token_id`, ...).
pub fn is_token_field(path: &Path) -> bool {
    path.last_key().is_some_and(is_token_key)
}

/// Whether a member of this key holds token ids.
pub fn is_token_key(key: &str) -> bool {
    key.ends_with("token_id") || key.ends_with("token_ids")
}

/// Whether the field at `path` takes integers only: token ids, layer ids, sizes, counts.
/// There `248070.0` is not `248070`: Python's json gives a float, and a float cannot index an
/// embedding row or a layer (`range(16.0)` fails). Elsewhere (`rope_theta`, `rms_norm_eps`)
/// numbers compare by value, so `1e7` is `10000000`.
pub fn is_integer_field(path: &Path) -> bool {
    let Some(key) = path.0.iter().rev().find_map(|s| match s {
        Segment::Key(k) => Some(k.as_str()),
        Segment::Index(_) => None,
    }) else {
        return false;
    };
    key.ends_with("_id")
        || key.ends_with("_ids")
        || key.ends_with("_size")
        || key.ends_with("_dim")
        || key.ends_with("_layers")
        || key.starts_with("num_")
        || matches!(key, "sliding_window" | "max_position_embeddings")
}

/// Whether two values that are equal by value differ in integer-ness somewhere: one side
/// writes an integer literal where the other writes a float.
fn integer_literals_differ(a: &Node, b: &Node) -> bool {
    match (&a.value, &b.value) {
        (Value::Number(x), Value::Number(y)) => x.is_integer_literal() != y.is_integer_literal(),
        (Value::Array(xs), Value::Array(ys)) => xs
            .iter()
            .zip(ys)
            .any(|(x, y)| integer_literals_differ(x, y)),
        _ => false,
    }
}

/// One difference between the two configs.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// The canonical path (flat layout for layout fields).
    pub path: Path,
    pub kind: DiffKind,
    pub severity: Severity,
    /// Where the local value sits in the local file, when it exists.
    pub local_path: Option<Path>,
    pub authority_path: Option<Path>,
    pub local: Option<Node>,
    pub authority: Option<Node>,
    /// Free text for layout lines.
    pub note: Option<String>,
}

/// A config brought to the canonical layout, remembering where moved values came from.
///
/// Only top-level members move, so the canonical layout is a view: the top-level members in
/// canonical order, each borrowed from the original except the few the move rebuilds (an
/// emptied `dflash_config`, `rope_scaling`). Nothing else is copied: a whole-tree clone per
/// side and per comparison cost as much memory as the parsed file.
pub struct Canonical<'a> {
    /// The top-level members in canonical layout (last duplicate wins, as in the file), when
    /// the root is an object.
    top: Option<Vec<(&'a str, Cow<'a, Node>)>>,
    /// (canonical path, real path) for every value that was moved.
    moved: Vec<(Path, Path)>,
    pub layouts: Vec<(&'static str, Layout)>,
}

/// The last member `key` of a top-level view.
fn top_get<'v, 'a>(top: &'v [(&'a str, Cow<'a, Node>)], key: &str) -> Option<&'v Node> {
    top.iter()
        .rev()
        .find(|(k, _)| same_key(k, key))
        .map(|(_, n)| &**n)
}

/// Removes every member `key` of the view, returning the last one.
fn top_take<'a>(top: &mut Vec<(&'a str, Cow<'a, Node>)>, key: &str) -> Option<Cow<'a, Node>> {
    let index = top.iter().rposition(|(k, _)| same_key(k, key))?;
    let taken = top.remove(index).1;
    top.retain(|(k, _)| *k != key);
    Some(taken)
}

/// Sets `key` last in the view, replacing every member of that name.
fn top_set<'a>(top: &mut Vec<(&'a str, Cow<'a, Node>)>, key: &'a str, value: Cow<'a, Node>) {
    top.retain(|(k, _)| *k != key);
    top.push((key, value));
}

/// Takes the member `key` out of the object `parent` (every duplicate; the last is returned):
/// the member borrowed when `parent` is, and `parent` rebuilt without it.
fn take_from<'a>(parent: &Cow<'a, Node>, key: &str) -> Option<(Cow<'a, Node>, Cow<'a, Node>)> {
    let members = parent.as_object()?;
    let index = members.iter().rposition(|m| same_key(&m.key, key))?;
    let value = match parent {
        Cow::Borrowed(node) => {
            let node: &'a Node = node;
            Cow::Borrowed(&node.as_object()?[index].value)
        }
        Cow::Owned(node) => Cow::Owned(node.as_object()?[index].value.clone()),
    };
    let rest = Node {
        value: Value::Object(members.iter().filter(|m| m.key != key).cloned().collect()),
        span: parent.span.clone(),
    };
    Some((value, Cow::Owned(rest)))
}

impl<'a> Canonical<'a> {
    pub fn new(original: &'a Node) -> Canonical<'a> {
        let mut moved = Vec::new();
        let layouts = LAYOUT_FIELDS
            .iter()
            .map(|f| (f.name, f.layout_in(original)))
            .collect();
        let top = original.as_object().map(|members| {
            let mut top: Vec<(&'a str, Cow<'a, Node>)> = members
                .iter()
                .map(|m| (m.key.as_str(), Cow::Borrowed(&m.value)))
                .collect();
            Self::fold(&mut top, &mut moved);
            top
        });
        Canonical {
            top,
            moved,
            layouts,
        }
    }

    /// Moves the nested spellings of the layout fields to the flat ones.
    fn fold(top: &mut Vec<(&'a str, Cow<'a, Node>)>, moved: &mut Vec<(Path, Path)>) {
        // block_size: dflash_config.block_size -> block_size, unless both exist.
        if top_get(top, "block_size").is_none() {
            // The last `dflash_config` is the one that counts (duplicates: last wins).
            let dflash = top
                .iter()
                .rposition(|(k, _)| *k == "dflash_config")
                .and_then(|i| take_from(&top[i].1, "block_size").map(|t| (i, t)));
            if let Some((i, (value, rest))) = dflash {
                top[i].1 = rest;
                top_set(top, "block_size", value);
                moved.push((
                    Path::key("block_size"),
                    Path::key("dflash_config").child("block_size"),
                ));
                // A dflash_config that held only block_size is not a field of its own.
                let emptied = top_get(top, "dflash_config")
                    .and_then(Node::as_object)
                    .is_some_and(<[Member]>::is_empty);
                if emptied {
                    top_take(top, "dflash_config");
                }
            }
        }
        // rope_parameters -> rope_theta + rope_scaling, unless the flat fields exist.
        let has_flat_rope = top_get(top, "rope_theta").is_some()
            || top_get(top, "rope_scaling").is_some_and(|n| !n.is_null());
        if has_flat_rope
            || top_get(top, "rope_parameters")
                .and_then(Node::as_object)
                .is_none()
        {
            return;
        }
        let Some(mut params) = top_take(top, "rope_parameters") else {
            return;
        };
        if let Some((theta, rest)) = take_from(&params, "rope_theta") {
            params = rest;
            top_set(top, "rope_theta", theta);
            moved.push((
                Path::key("rope_theta"),
                Path::key("rope_parameters").child("rope_theta"),
            ));
        }
        let default_only = params.as_object().is_some_and(|ms| {
            ms.is_empty()
                || ms
                    .iter()
                    .all(|m| m.key == "rope_type" && m.value.as_str() == Some("default"))
        });
        let scaling = if default_only {
            Cow::Owned(Node {
                value: Value::Null,
                span: params.span.clone(),
            })
        } else {
            params
        };
        top_set(top, "rope_scaling", scaling);
        moved.push((Path::key("rope_scaling"), Path::key("rope_parameters")));
    }

    /// The real path in the original file of a canonical path.
    pub fn real_path(&self, canonical: &Path) -> Path {
        for (canon, real) in &self.moved {
            if canonical.0.starts_with(&canon.0) {
                let mut p = real.clone();
                p.0.extend(canonical.0[canon.0.len()..].iter().cloned());
                return p;
            }
        }
        canonical.clone()
    }
}

/// Compares `local` with `authority`; differences come out in the local file's key order,
/// then keys only the authority has, then the layout line. Each difference's severity is its
/// kind's rule's classification of the field (`rules`). Token ids out of range on both sides
/// are not looked for: that needs the target's tokens ([`compare_with`]).
pub fn compare(local: &Node, authority: &Node) -> Vec<Difference> {
    compare_with(local, authority, None)
}

/// [`compare`], and with the target's `tokens`, token ids that have no embedding row even
/// where both sides agree (`out-of-range`).
pub fn compare_with(
    local: &Node,
    authority: &Node,
    tokens: Option<&TokenTable>,
) -> Vec<Difference> {
    let local_c = Canonical::new(local);
    let auth_c = Canonical::new(authority);
    let mut out = Vec::new();
    match (&local_c.top, &auth_c.top) {
        (Some(l), Some(a)) => walk_members(
            &local_c,
            &auth_c,
            top_members(l),
            top_members(a),
            &Path::root(),
            &mut out,
        ),
        _ => walk(&local_c, &auth_c, local, authority, &Path::root(), &mut out),
    }
    let mut cx = rules::Comparison {
        local,
        authority,
        local_canonical: &local_c,
        authority_canonical: &auth_c,
        tokens,
        differences: out,
    };
    // The skipped list says only that out-of-range was not looked for without tokens, which
    // the caller chose by passing none.
    let _skipped = crate::diagnostic::rule::run(rules::RULES, &mut cx);
    cx.differences
}

/// An object's distinct keys in first-seen order and its members by key (the last duplicate).
type Members<'n> = (Vec<&'n str>, ByKey<'n>);

/// An object's members by key, the last of a duplicated key winning: scanned when the object
/// is small (a config's top level and its nested objects: hashing every key of both sides was
/// a third of a comparison, issue 44), a map when it is large (a walk that scans for each of
/// n keys is quadratic).
enum ByKey<'n> {
    /// The members in file order, and whether their keys are distinct.
    Scan(Vec<(&'n str, &'n Node)>, bool),
    Map(HashMap<&'n str, &'n Node>),
}

/// Objects up to this many members are scanned.
const SCAN_KEYS: usize = 64;

impl<'n> ByKey<'n> {
    fn of(members: impl ExactSizeIterator<Item = (&'n str, &'n Node)>) -> ByKey<'n> {
        if members.len() <= SCAN_KEYS {
            ByKey::Scan(members.collect(), false)
        } else {
            ByKey::Map(members.collect())
        }
    }

    fn get(&self, key: &str) -> Option<&'n Node> {
        match self {
            ByKey::Scan(members, _) => members
                .iter()
                .rev()
                .find(|(k, _)| same_key(k, key))
                .map(|m| m.1),
            ByKey::Map(map) => map.get(key).copied(),
        }
    }

    /// [`ByKey::get`], looking first at the member after the one found last (`next`): a
    /// drafter's config and its authority list their keys in the same order (transformers
    /// writes them sorted), so a walk over both finds most keys there instead of scanning for
    /// each (the scans were a sixth of a comparison, issue 44). Only where keys are distinct,
    /// so the member found is the last of its key.
    fn get_near(&self, key: &str, next: &mut usize) -> Option<&'n Node> {
        let ByKey::Scan(members, true) = self else {
            return self.get(key);
        };
        if let Some(&(k, node)) = members.get(*next) {
            if same_key(k, key) {
                *next += 1;
                return Some(node);
            }
        }
        let found = members.iter().position(|(k, _)| same_key(k, key))?;
        *next = found + 1;
        Some(members[found].1)
    }
}

/// Distinct keys in first-seen order, and the members by key.
fn members_of<'n>(
    members: impl ExactSizeIterator<Item = (&'n str, &'n Node)> + Clone,
) -> Members<'n> {
    let mut by_key = ByKey::of(members.clone());
    let mut keys = Vec::with_capacity(members.len());
    match &mut by_key {
        // Keys in strictly increasing order are distinct: told in one pass. transformers
        // writes a config's keys sorted, so this is nearly every object; the scan of the keys
        // before each key was a fifth of a comparison (issue 44).
        ByKey::Scan(all, distinct) if all.windows(2).all(|w| w[0].0 < w[1].0) => {
            keys.extend(all.iter().map(|(k, _)| *k));
            *distinct = true;
        }
        ByKey::Scan(all, distinct) => {
            for (i, (key, _)) in all.iter().enumerate() {
                if !all[..i].iter().any(|(k, _)| k == key) {
                    keys.push(*key);
                }
            }
            *distinct = keys.len() == all.len();
        }
        ByKey::Map(_) => {
            let mut seen = std::collections::HashSet::with_capacity(members.len());
            keys.extend(members.map(|(k, _)| k).filter(|k| seen.insert(*k)));
        }
    }
    (keys, by_key)
}

fn object_members(node: &Node) -> Members<'_> {
    let members = node.as_object().unwrap_or_default();
    members_of(members.iter().map(|m| (m.key.as_str(), &m.value)))
}

fn top_members<'n>(top: &'n [(&'n str, Cow<'n, Node>)]) -> Members<'n> {
    members_of(top.iter().map(|(key, node)| (*key, &**node)))
}

/// Walks two objects' members: the local keys in order, then the authority's other keys.
/// Maps, not `get`: a walk that scans for each of n keys is quadratic.
fn walk_members(
    lc: &Canonical,
    ac: &Canonical,
    (mut keys, lm): Members,
    (auth_keys, am): Members,
    path: &Path,
    out: &mut Vec<Difference>,
) {
    let mut next_local = 0;
    keys.extend(
        auth_keys
            .into_iter()
            .filter(|k| lm.get_near(k, &mut next_local).is_none()),
    );
    let (mut next_local, mut next_authority) = (0, 0);
    for key in keys {
        let (l, a) = (
            lm.get_near(key, &mut next_local),
            am.get_near(key, &mut next_authority),
        );
        // Most fields are equal scalars: nothing to report, and no path to build for them
        // (a path per key of every config was a third of `check`'s comparison, issue 44).
        if let (Some(l), Some(a)) = (l, a) {
            if l.as_object().is_none() && l.same_value(a) && !integer_literals_differ(l, a) {
                continue;
            }
        }
        let child = path.child(key);
        match (l, a) {
            (Some(l), Some(a)) => walk(lc, ac, l, a, &child, out),
            (Some(l), None) => out.push(difference(
                lc,
                ac,
                &child,
                DiffKind::OnlyLocal,
                Some(l),
                None,
            )),
            (None, Some(a)) => out.push(difference(
                lc,
                ac,
                &child,
                DiffKind::OnlyAuthority,
                None,
                Some(a),
            )),
            (None, None) => {}
        }
    }
}

fn walk(
    lc: &Canonical,
    ac: &Canonical,
    local: &Node,
    authority: &Node,
    path: &Path,
    out: &mut Vec<Difference>,
) {
    if local.as_object().is_some() && authority.as_object().is_some() {
        let (members, auth_members) = (object_members(local), object_members(authority));
        walk_members(lc, ac, members, auth_members, path, out);
        return;
    }
    if local.same_value(authority) {
        // Equal numbers, but a float (`248070.0`, `2.4807e5`) where the field takes an integer:
        // Python reads a float, which cannot index a token or a layer. Not identical.
        if is_integer_field(path) && integer_literals_differ(local, authority) {
            let mut d = difference(lc, ac, path, DiffKind::Type, Some(local), Some(authority));
            d.note = Some("equal as numbers, but a float where this field takes an integer".into());
            out.push(d);
        }
        return;
    }
    let kind = if std::mem::discriminant(&local.value) == std::mem::discriminant(&authority.value)
        || local.is_null()
        || authority.is_null()
    {
        DiffKind::Changed
    } else {
        DiffKind::Type
    };
    out.push(difference(lc, ac, path, kind, Some(local), Some(authority)));
}

fn difference(
    lc: &Canonical,
    ac: &Canonical,
    path: &Path,
    kind: DiffKind,
    local: Option<&Node>,
    authority: Option<&Node>,
) -> Difference {
    Difference {
        path: path.clone(),
        kind,
        // Classified by the kind's rule (`rules`) once the walk is done.
        severity: Severity::Error,
        local_path: local.map(|_| lc.real_path(path)),
        authority_path: authority.map(|_| ac.real_path(path)),
        local: local.cloned(),
        authority: authority.cloned(),
        note: None,
    }
}

/// Sorts differences for display: critical first, then by kind, keeping file order within.
pub fn sort_for_display(diffs: &mut [Difference]) {
    diffs.sort_by_key(|d| d.severity);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Document;

    fn diff(a: &str, b: &str) -> Vec<Difference> {
        compare(
            &Document::parse(a).unwrap().root,
            &Document::parse(b).unwrap().root,
        )
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(diff(
            r#"{"rms_norm_eps": 1e-06, "rope_theta": 1e7}"#,
            r#"{"rms_norm_eps": 0.000001, "rope_theta": 10000000}"#
        )
        .is_empty());
    }

    #[test]
    fn nested_and_flat_layouts_are_one_field() {
        let flat = r#"{"block_size": 16, "dflash_config": {"mask_token_id": 5}, "rope_theta": 1000000, "rope_scaling": null}"#;
        let nested = r#"{"dflash_config": {"mask_token_id": 5, "block_size": 16}, "rope_parameters": {"rope_theta": 1000000, "rope_type": "default"}}"#;
        let d = diff(flat, nested);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].kind, DiffKind::Layout);
        assert!(d[0]
            .note
            .as_deref()
            .unwrap()
            .contains("block_size: local flat, authority nested"));
    }

    #[test]
    fn changed_value_keeps_real_paths() {
        let d = diff(
            r#"{"block_size": 8}"#,
            r#"{"dflash_config": {"block_size": 16}}"#,
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].path.to_string(), "block_size");
        assert_eq!(
            d[0].authority_path.as_ref().unwrap().to_string(),
            "dflash_config.block_size"
        );
    }

    #[test]
    fn type_mismatch_and_presence() {
        let d = diff(
            r#"{"dflash_config": {"mask_token_id": "248070"}, "x": 1}"#,
            r#"{"dflash_config": {"mask_token_id": 248070}, "y": 2}"#,
        );
        let kinds: Vec<_> = d.iter().map(|d| (d.path.to_string(), d.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("dflash_config.mask_token_id".into(), DiffKind::Type),
                ("x".into(), DiffKind::OnlyLocal),
                ("y".into(), DiffKind::OnlyAuthority)
            ]
        );
    }

    #[test]
    fn metadata_is_minor_and_unknown_keys_critical() {
        assert_eq!(
            severity_of(&Path::key("transformers_version")),
            Severity::Warning
        );
        assert_eq!(severity_of(&Path::key("some_new_field")), Severity::Error);
        assert_eq!(
            severity_of(&Path::parse("dflash_config.mask_token_id")),
            Severity::Error
        );
    }
}
