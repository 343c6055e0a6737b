//! A JSON reader that remembers where every value sits in the file.
//!
//! serde_json answers "what is the value"; a config checker also needs "where is it": the line
//! of a key for a GitHub annotation, the byte span of a value for a minimal in-place edit, the
//! original text of a number so `1e-06` is never rewritten as `1e-6`. So configs are parsed here
//! into a tree of [`Node`]s that carry byte spans. The grammar is RFC 8259 plus what Python's
//! `json` module (and so transformers) accepts and writes: `NaN`, `Infinity`, `-Infinity`, and
//! duplicate keys, where the last one wins. Nesting is capped so hostile input cannot overflow
//! the stack.
//!
//! String values, numbers' text and the keys of [`Path`]s are [`CompactString`]s: up to 24
//! bytes (nearly every string and number of a config, and the keys of the paths the rules
//! build) they are held inline, with no allocation of their own; an allocation and its free
//! cost more than parsing the text they hold (issue 44). An object's own keys
//! ([`Member::key`]) are still `String`s.

pub use compact_str::CompactString;
use smallvec::SmallVec;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

/// Deeper nesting than this is refused. Python's own limit is about 1,000; real configs use 3.
pub const MAX_DEPTH: usize = 256;
/// Most values (objects, arrays, strings, numbers, literals) one document may hold. A drafter
/// config holds about a hundred; the largest real configs, image classifiers trained on
/// ImageNet-21k (`google/vit-huge-patch14-224-in21k`: an `id2label` and a `label2id` of 21,843
/// classes each), about 44,000: this leaves them more than twice that. Every later step
/// (diff, fix, lint) is linear in this count, but a difference per value costs about a
/// kilobyte end to end (the difference, its diagnostic, its line of JSON output, which is held
/// until the command succeeds): at 190,000 differences `diff --format json` and `fix --format
/// json` peaked at 360 and 690 MB, at 95,000 at 178 and 237 MB (BENCHMARKS.md, "Hostile
/// shapes").
pub const MAX_VALUES: usize = 100_000;
/// Objects up to this many members look keys up by scanning (faster than hashing when small).
const SCAN_MEMBERS: usize = 16;
/// Objects up to this many members are searched for duplicate keys, and for a key's position,
/// by scanning; larger ones get the document's member index. A drafter config's top level
/// has 30 to 60 keys: an index for it (each key copied and hashed) was a fifth of parsing it,
/// for lookups that a scan answers as fast (issue 44). A scan costs at most 64 × 64 / 2 key
/// comparisons, most of them settled by the length.
const INDEX_MEMBERS: usize = 64;

/// Repeated lookups in one tree, each in time linear in its path's length. A large object
/// answers from its own key table ([`Object`]); one without a table (its keys collide in the
/// table's hash, [`Object::table`]) has its members put in a map the first time it is searched,
/// since [`Node::get`] then scans and n lookups in an object of n keys would be quadratic.
#[derive(Default)]
pub struct Lookup<'a> {
    maps: std::collections::HashMap<*const Node, std::collections::HashMap<&'a str, &'a Node>>,
}

impl<'a> Lookup<'a> {
    /// The member `key` of `obj` (the last of a duplicated key), as [`Node::get`].
    pub fn get(&mut self, obj: &'a Node, key: &str) -> Option<&'a Node> {
        match obj.object() {
            Some(ms) if ms.len() > SCAN_MEMBERS && ms.table.is_none() => self
                .maps
                .entry(obj as *const Node)
                .or_insert_with(|| obj.members_by_key())
                .get(key)
                .copied(),
            _ => obj.get(key),
        }
    }

    /// The node at `path` under `root`, as [`Path::lookup`].
    pub fn path(&mut self, root: &'a Node, path: &Path) -> Option<&'a Node> {
        let mut node = root;
        for seg in &path.0 {
            node = match seg {
                Segment::Key(k) => self.get(node, k)?,
                Segment::Index(i) => node.as_array()?.get(*i)?,
            };
        }
        Some(node)
    }
}

/// Whether two object keys are equal: [`str`]'s `==`, faster for the keys configs hold. Keys
/// looked up share their length with many others (`num_hidden_layers`, `num_target_layers`),
/// and `==` settles each such pair with a call to `memcmp` (issue 44: 1.4 such calls a lookup,
/// about 160 lookups a drafter in `check`). Compared here: the length, then the last and first
/// eight bytes as two words (all of a key up to 16 bytes), then the words between. It saved
/// 0.8 % of `check`'s instructions (BENCHMARKS.md, fourth pass); comparing the words between
/// instead of calling `memcmp` for them, with the next change, another 0.8 % (fifth pass).
#[inline(always)]
pub fn same_key(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a == b;
    }
    let word = |s: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_ne_bytes(w)
    };
    if word(a, n - 8) != word(b, n - 8) || word(a, 0) != word(b, 0) {
        return false;
    }
    // The words between, without a call to `memcmp` (a third of config keys are over 16
    // bytes: `max_position_embeddings`, `num_attention_heads`).
    let mut at = 8;
    while at + 8 < n {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    true
}

/// One parsed value with the byte range it occupies in the source text.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub span: Range<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(CompactString),
    Array(Vec<Node>),
    Object(Object),
}

/// An object's members in file order (duplicates kept), and, for an object of more than a few
/// members, a table of where each key's last member sits, so [`Node::get`] is not a scan.
/// `check` looks up about 160 keys a drafter, most in a config's top level of some 30 keys
/// (issue 44): the table takes 1.4 % off its instructions, net of building it (a scan of 30
/// short keys is cheap; BENCHMARKS.md, fourth pass), and keeps a lookup in a large object from
/// costing its size. The table is built once, when the object is made, and the members cannot
/// change afterwards (no `DerefMut`), so it stays true.
#[derive(Debug, Clone, Default)]
pub struct Object {
    members: Vec<Member>,
    /// Open addressing, linear probing: a member's index plus one, 0 for an empty slot; the
    /// length a power of two at least twice the member count. `None` for a small object.
    table: Option<Box<[u32]>>,
}

/// Objects of at most this many members are scanned: a scan of eight keys costs about what
/// hashing one key does.
const TABLE_MEMBERS: usize = 8;
/// The farthest a key may sit from its hash's slot in [`Object`]'s table (at half load,
/// honest keys sit within two or three).
const MAX_PROBES: usize = 32;

impl Object {
    pub fn new(members: Vec<Member>) -> Object {
        let table = (members.len() > TABLE_MEMBERS && members.len() < u32::MAX as usize / 2)
            .then(|| Object::table(&members))
            .flatten();
        Object { members, table }
    }

    /// The table of `members`, or `None` when a key lands more than [`MAX_PROBES`] slots from
    /// its hash's: keys chosen to collide (the hash is not keyed) would make the build
    /// quadratic, and without a table a lookup is the scan it always was.
    fn table(members: &[Member]) -> Option<Box<[u32]>> {
        let mut table = vec![0u32; (members.len() * 2).next_power_of_two()];
        let mask = table.len() - 1;
        for (i, m) in members.iter().enumerate() {
            let mut at = key_hash(&m.key) as usize & mask;
            let mut probes = 0;
            // A duplicated key's slot is taken over by its later member: the last wins.
            while table[at] != 0 && !same_key(&members[table[at] as usize - 1].key, &m.key) {
                at = (at + 1) & mask;
                probes += 1;
                if probes > MAX_PROBES {
                    return None;
                }
            }
            table[at] = i as u32 + 1;
        }
        Some(table.into_boxed_slice())
    }

    /// The member of `key` (the last one if the key is duplicated).
    pub fn get(&self, key: &str) -> Option<&Member> {
        let Some(table) = &self.table else {
            return self.members.iter().rev().find(|m| same_key(&m.key, key));
        };
        let mask = table.len() - 1;
        let mut at = key_hash(key) as usize & mask;
        loop {
            let member = self.members.get((table[at] as usize).checked_sub(1)?)?;
            if same_key(&member.key, key) {
                return Some(member);
            }
            at = (at + 1) & mask;
        }
    }

    pub fn into_members(self) -> Vec<Member> {
        self.members
    }
}

impl std::ops::Deref for Object {
    type Target = Vec<Member>;
    fn deref(&self) -> &Vec<Member> {
        &self.members
    }
}

impl FromIterator<Member> for Object {
    fn from_iter<I: IntoIterator<Item = Member>>(members: I) -> Object {
        Object::new(members.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a Object {
    type Item = &'a Member;
    type IntoIter = std::slice::Iter<'a, Member>;
    fn into_iter(self) -> Self::IntoIter {
        self.members.iter()
    }
}

impl From<Vec<Member>> for Object {
    fn from(members: Vec<Member>) -> Object {
        Object::new(members)
    }
}

/// Equal members, in order (the table follows from them).
impl PartialEq for Object {
    fn eq(&self, other: &Object) -> bool {
        self.members == other.members
    }
}

/// A key's hash for [`Object`]'s table: FxHash's multiply-rotate over eight-byte words, which
/// costs a few instructions for a config's keys (SipHash, std's, costs ten times more). Keys
/// chosen to collide only cost the table ([`Object::table`]): a lookup then scans, as before.
#[inline]
fn key_hash(key: &str) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let bytes = key.as_bytes();
    let n = bytes.len();
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let mix = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(K);
    let mut h = n as u64;
    if n < 8 {
        // Short keys byte by byte (a copy of a variable length calls memcpy).
        let mut w = 0u64;
        for &b in bytes {
            w = (w << 8) | u64::from(b);
        }
        return mix(h, w);
    }
    // Whole words, then the last eight bytes (overlapping the last word read): every byte is
    // in the hash, with no copy of a partial word.
    let mut at = 0;
    while at + 8 < n {
        h = mix(h, word(at));
        at += 8;
    }
    h = mix(h, word(n - 8));
    // The high bits are the best mixed; the table's index takes the low ones.
    h ^ (h >> 32)
}

/// An object member. Duplicates are kept in order; lookups take the last, like Python.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    pub key_span: Range<usize>,
    pub value: Node,
}

/// A number as written, with its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Number {
    /// The exact source text (`1e-06`, `10000000`, `NaN`).
    pub text: CompactString,
    /// The value as a double (what Python's `json` gives floats).
    pub value: f64,
    /// The exact value when the text is an integer that fits in `i128`.
    pub integer: Option<i128>,
}

impl Number {
    /// Equality by value, as a reader of the config sees it: `1e-06 == 0.000001`, `1e7 == 10000000`.
    pub fn same_value(&self, other: &Number) -> bool {
        match (self.integer, other.integer) {
            (Some(a), Some(b)) => a == b,
            _ => (self.value.is_nan() && other.value.is_nan()) || self.value == other.value,
        }
    }

    /// A non-negative integer id, if the number is one (`248070`, but not `248070.5` or `-1`).
    pub fn as_u64(&self) -> Option<u64> {
        self.integer.and_then(|i| u64::try_from(i).ok())
    }

    /// Whether the text is an integer literal (no fraction, no exponent).
    pub fn is_integer_literal(&self) -> bool {
        self.integer.is_some()
    }
}

impl Node {
    /// The member `key` of an object (the last one if the key is duplicated).
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Object(object) => object.get(key).map(|m| &m.value),
            _ => None,
        }
    }

    /// The object itself, for lookups by its table ([`Object::get`]).
    pub fn object(&self) -> Option<&Object> {
        match &self.value {
            Value::Object(object) => Some(object),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&[Member]> {
        match &self.value {
            Value::Object(members) => Some(members),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<&Number> {
        match &self.value {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::as_u64)
    }

    pub fn as_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    /// The JSON type name, for messages (`"number"`, `"string"`, ...).
    pub fn type_name(&self) -> &'static str {
        self.value.type_name()
    }

    /// Deep equality by value: numbers by value, objects by key set (last duplicate wins),
    /// arrays element by element.
    pub fn same_value(&self, other: &Node) -> bool {
        match (&self.value, &other.value) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a.same_value(b),
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_value(y))
            }
            (Value::Object(_), Value::Object(_)) => {
                // Maps, not `get`: a scan per key is quadratic in the object's size.
                let (a, b) = (self.members_by_key(), other.members_by_key());
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, x)| b.get(k).is_some_and(|y| x.same_value(y)))
            }
            _ => false,
        }
    }

    /// The distinct keys of an object in first-seen order (linear: a set of the keys seen).
    pub fn effective_keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        if let Value::Object(members) = &self.value {
            for m in members {
                if seen.insert(m.key.as_str()) {
                    keys.push(&m.key);
                }
            }
        }
        keys
    }

    /// An object's members by key (the last one of a duplicated key), for walks that look up
    /// every key: [`Node::get`] scans, so a walk over n keys with it is quadratic.
    pub fn members_by_key(&self) -> std::collections::HashMap<&str, &Node> {
        self.as_object()
            .unwrap_or_default()
            .iter()
            .map(|m| (m.key.as_str(), &m.value))
            .collect()
    }

    /// Compact one-line JSON text of the value, numbers as written.
    pub fn to_compact(&self) -> String {
        let mut out = String::new();
        self.write_compact(&mut out);
        out
    }

    fn write_compact(&self, out: &mut String) {
        match &self.value {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => out.push_str(&n.text),
            Value::String(s) => out.push_str(&quote(s)),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write_compact(out);
                }
                out.push(']');
            }
            Value::Object(members) => {
                out.push('{');
                for (i, m) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&quote(&m.key));
                    out.push_str(": ");
                    m.value.write_compact(out);
                }
                out.push('}');
            }
        }
    }

    /// The value as serde_json data, for machine-readable output. NaN and infinities, which
    /// JSON output cannot hold, become their Python spelling as strings.
    pub fn to_serde(&self) -> serde_json::Value {
        match &self.value {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => {
                if let Some(i) = n.integer {
                    if let Ok(i) = i64::try_from(i) {
                        return i.into();
                    }
                    if let Ok(u) = u64::try_from(i) {
                        return u.into();
                    }
                }
                serde_json::Number::from_f64(n.value)
                    .map(serde_json::Value::Number)
                    .unwrap_or_else(|| serde_json::Value::String(n.text.to_string()))
            }
            Value::String(s) => serde_json::Value::String(s.to_string()),
            Value::Array(items) => items.iter().map(Node::to_serde).collect(),
            Value::Object(_) => {
                // Keys in first-seen order, values of the last duplicate (a map lookup per key,
                // not a scan: linear in the object's size).
                let last = self.members_by_key();
                let mut map = serde_json::Map::with_capacity(last.len());
                for key in self.effective_keys() {
                    if let Some(v) = last.get(key) {
                        map.insert(key.to_string(), v.to_serde());
                    }
                }
                serde_json::Value::Object(map)
            }
        }
    }
}

impl Value {
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
}

/// JSON string literal for `s`, escaping only what must be escaped.
pub fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    Key(CompactString),
    Index(usize),
}

/// A path such as `dflash_config.target_layer_ids[2]`. Up to two segments sit inline: nearly
/// every path a rule or the comparison builds is a key or a key and one below it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Path(pub SmallVec<[Segment; 2]>);

impl Path {
    /// The `Display` text (`dflash_config.target_layer_ids[2]`), written into a string of its
    /// size: `to_string` grows its string through the formatter, about 850 instructions a path,
    /// and `check` writes some five paths a drafter (issue 44).
    pub fn to_text(&self) -> String {
        if self.0.is_empty() {
            return "(root)".into();
        }
        let plain = |k: &str| {
            !k.is_empty()
                && k.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
        };
        let size = self.0.iter().map(|s| match s {
            Segment::Key(k) => k.len() + 1,
            Segment::Index(_) => 8,
        });
        let mut out = String::with_capacity(size.sum());
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Segment::Key(k) if plain(k) => {
                    if i > 0 {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Segment::Key(k) => {
                    out.push('[');
                    out.push_str(&quote(k));
                    out.push(']');
                }
                Segment::Index(n) => {
                    use std::fmt::Write;
                    let _ = write!(out, "[{n}]");
                }
            }
        }
        out
    }

    pub fn root() -> Self {
        Path(SmallVec::new())
    }

    pub fn key(key: &str) -> Self {
        let mut segments = SmallVec::new();
        segments.push(Segment::Key(key.into()));
        Path(segments)
    }

    pub fn child(&self, key: &str) -> Self {
        self.then(Segment::Key(key.into()))
    }

    pub fn index(&self, i: usize) -> Self {
        self.then(Segment::Index(i))
    }

    /// This path and one more segment, allocated once at its final length (a clone and a push
    /// allocated twice: the clone exactly, then the push's growth; issue 44).
    fn then(&self, last: Segment) -> Self {
        let mut segments = SmallVec::with_capacity(self.0.len() + 1);
        segments.extend(self.0.iter().cloned());
        segments.push(last);
        Path(segments)
    }

    /// The last key of the path, if it ends in a key.
    pub fn last_key(&self) -> Option<&str> {
        match self.0.last() {
            Some(Segment::Key(k)) => Some(k),
            _ => None,
        }
    }

    /// The first key of the path (the top-level field it belongs to).
    pub fn first_key(&self) -> Option<&str> {
        match self.0.first() {
            Some(Segment::Key(k)) => Some(k),
            _ => None,
        }
    }

    /// Parses the dotted form produced by `Display` for plain keys (`a.b[1].c`).
    pub fn parse(text: &str) -> Self {
        let mut segments = SmallVec::new();
        for part in text.split('.').filter(|p| !p.is_empty()) {
            let (key, mut rest) = match part.find('[') {
                Some(i) => (&part[..i], &part[i..]),
                None => (part, ""),
            };
            if !key.is_empty() {
                segments.push(Segment::Key(key.into()));
            }
            while let Some(end) = rest.find(']') {
                if let Ok(i) = rest[1..end].parse() {
                    segments.push(Segment::Index(i));
                }
                rest = &rest[end + 1..];
            }
        }
        Path(segments)
    }

    /// Finds the node at this path.
    pub fn lookup<'a>(&self, root: &'a Node) -> Option<&'a Node> {
        let mut node = root;
        for seg in &self.0 {
            node = match seg {
                Segment::Key(k) => node.get(k)?,
                Segment::Index(i) => node.as_array()?.get(*i)?,
            };
        }
        Some(node)
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(root)");
        }
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Segment::Key(k) => {
                    let plain = !k.is_empty()
                        && k.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if plain {
                        if i > 0 {
                            f.write_str(".")?;
                        }
                        f.write_str(k)?;
                    } else {
                        write!(f, "[{}]", quote(k))?;
                    }
                }
                Segment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// The RFC 6901 JSON pointer (`/dflash_config/target_layer_ids/2`) of a path written in the
/// dotted form of [`Path`]'s `Display` (`dflash_config.target_layer_ids[2]`, `["a.b"].c`), or of
/// any other dotted name a diagnostic carries (a tensor name, a flag). The pointer is the
/// identity of a finding's place that does not move when lines shift: SARIF fingerprints and
/// suppressions key on it. `""` (the whole document) for the root.
pub fn pointer(dotted: &str) -> String {
    let mut out = String::new();
    let mut push = |segment: &str| {
        out.push('/');
        out.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    };
    if dotted == "(root)" {
        return out;
    }
    let mut rest = dotted;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            rest = after;
        } else if rest.starts_with("[\"") {
            // A quoted key: a JSON string literal inside brackets.
            let mut de = serde_json::Deserializer::from_str(&rest[1..]).into_iter::<String>();
            match de.next() {
                Some(Ok(key)) if rest[1 + de.byte_offset()..].starts_with(']') => {
                    push(&key);
                    rest = &rest[2 + de.byte_offset()..];
                }
                // Not the form `Display` writes: the rest is one segment, as written.
                _ => {
                    push(rest);
                    break;
                }
            }
        } else if let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']').unwrap_or(inner.len());
            push(&inner[..end]);
            rest = inner.get(end + 1..).unwrap_or("");
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            push(&rest[..end]);
            rest = &rest[end..];
        }
    }
    out
}

/// A syntax error with its position (1-based line and column, in characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub message: String,
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

/// A parsed document: the source text and its tree.
#[derive(Debug, Clone)]
pub struct Document {
    pub text: String,
    pub root: Node,
    /// Keys that appear more than once in the same object: (path of the key, line of the
    /// value that wins).
    pub duplicate_keys: Vec<(Path, usize)>,
    line_starts: Vec<usize>,
    /// Whether any number in the tree (duplicated keys' values included) is one Python reads
    /// as NaN or an infinity: `NaN`, `Infinity`, `-Infinity`, or a non-integer literal past a
    /// double's range (`1e400`). Told while parsing, so the rule that reports them does not walk
    /// the tree of every config to find none (the walk was 3 % of `check`, issue 44).
    pub holds_non_finite: bool,
    /// For each object of more than a few members, by path: its members' indexes by key (the
    /// last of a duplicated key), so [`Document::position_of`] is not a scan per key.
    member_index: HashMap<Path, HashMap<CompactString, usize>>,
}

impl Document {
    /// Parses UTF-8 bytes. Refuses a byte-order mark, as Python's `json.loads` does.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Document, SyntaxError> {
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let offset = e.valid_up_to();
                let (line, column) = line_col_in(&bytes[..offset], offset);
                return Err(SyntaxError {
                    message: format!("invalid UTF-8 (byte 0x{:02x})", bytes[offset]),
                    offset,
                    line,
                    column,
                });
            }
        };
        Document::parse(text)
    }

    pub fn parse(text: &str) -> Result<Document, SyntaxError> {
        let mut parser = Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            duplicates: Vec::new(),
            path: Vec::new(),
            values: 0,
            member_index: HashMap::new(),
            non_finite: false,
            // Sized from the text (a pretty-printed config has a line per 20 bytes or so and
            // a member per 25; a 1 KB config's top level holds some 40), so they are not grown
            // a few elements at a time, nor made 13 KB for a ten-byte document.
            line_starts: Vec::with_capacity(1 + text.len() / 16),
            members: Vec::with_capacity(stack_size(text)),
            items: Vec::with_capacity(stack_size(text)),
        };
        parser.line_starts.push(0);
        let result = parser.document();
        match result {
            Ok(root) => {
                let mut doc = Document {
                    text: text.to_string(),
                    root,
                    duplicate_keys: Vec::new(),
                    line_starts: std::mem::take(&mut parser.line_starts),
                    holds_non_finite: parser.non_finite,
                    member_index: std::mem::take(&mut parser.member_index),
                };
                let dups = std::mem::take(&mut parser.duplicates);
                doc.duplicate_keys = dups
                    .into_iter()
                    .map(|(path, offset)| (path, doc.line_col(offset).0))
                    .collect();
                Ok(doc)
            }
            Err((message, offset)) => {
                let (line, column) = line_col_in(text.as_bytes(), offset);
                Err(SyntaxError {
                    message,
                    offset,
                    line,
                    column,
                })
            }
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line];
        let end = offset.min(self.text.len());
        let column = self
            .text
            .get(start..end)
            .map_or(end - start, |s| s.chars().count())
            + 1;
        (line + 1, column)
    }

    /// Line and column where the member at `path` starts: its key, or the value for array
    /// elements. Falls back to the nearest existing ancestor.
    pub fn position_of(&self, path: &Path) -> (usize, usize) {
        let mut node = &self.root;
        let mut offset = self.root.span.start;
        for (depth, seg) in path.0.iter().enumerate() {
            match seg {
                Segment::Key(k) => match node.object().and_then(|ms| {
                    if ms.len() > INDEX_MEMBERS {
                        let index = self
                            .member_index
                            .get(&Path(path.0[..depth].iter().cloned().collect()))?;
                        ms.members.get(*index.get(k)?)
                    } else {
                        ms.get(k)
                    }
                }) {
                    Some(m) => {
                        offset = m.key_span.start;
                        node = &m.value;
                    }
                    None => break,
                },
                Segment::Index(i) => match node.as_array().and_then(|a| a.get(*i)) {
                    Some(n) => {
                        offset = n.span.start;
                        node = n;
                    }
                    None => break,
                },
            }
        }
        self.line_col(offset)
    }

    /// The source text of a node.
    pub fn source(&self, node: &Node) -> &str {
        &self.text[node.span.clone()]
    }
}

/// The byte offset where each line of `text` starts (the first is 0): with [`line_at`], the
/// line of any offset in O(log lines), where counting the newlines before each offset of a
/// long list would cost the text's length per lookup.
pub fn line_starts(text: &str) -> Vec<usize> {
    // memchr's vectorised search: a byte-by-byte filter over every config's text was a tenth
    // of parsing it (issue 44).
    // Counted first, so the list is allocated once (it grew four or five times a config).
    let mut starts = Vec::with_capacity(1 + memchr::memchr_iter(b'\n', text.as_bytes()).count());
    starts.push(0);
    starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
    starts
}

/// The 1-based line holding byte `offset`, given the text's [`line_starts`].
pub fn line_at(starts: &[usize], offset: usize) -> usize {
    starts.partition_point(|&s| s <= offset).max(1)
}

fn line_col_in(bytes: &[u8], offset: usize) -> (usize, usize) {
    let offset = offset.min(bytes.len());
    let before = &bytes[..offset];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (line, column)
}

type ParseResult<T> = Result<T, (String, usize)>;

/// The bytes that end a run of a string's plain text: `"`, `\\` and the control characters.
const ENDS_RUN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// The starting capacity of the parser's member and element stacks for `text`: a member or
/// element per 24 bytes, at least 4 and at most 64 (past that they grow as vectors do).
fn stack_size(text: &str) -> usize {
    (4 + text.len() / 24).min(64)
}

/// The length of `text`'s plain run: the bytes before the first `"`, `\\` or control
/// character (all of `text` if none). Eight bytes at a time: a word holds one of them when one
/// of three tests finds a byte of it zero (the word xor `"`s, xor `\\`s) or under 0x20, and the
/// lowest byte a test flags is always a true one (a false flag is only ever a borrow carried up
/// from a true one below it). Byte by byte (a table look-up each), strings were a sixth of
/// parsing a config (issue 44); a config's keys and values are 10 to 30 bytes.
fn plain_run(text: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    let mut at = 0;
    while let Some(chunk) = text.get(at..at + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let flags = zero_byte(w ^ (ONES * u64::from(b'"')))
            | zero_byte(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS);
        if flags != 0 {
            return at + flags.trailing_zeros() as usize / 8;
        }
        at += 8;
    }
    let rest = &text[at..];
    at + rest
        .iter()
        .position(|&b| ENDS_RUN[usize::from(b)])
        .unwrap_or(rest.len())
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    duplicates: Vec<(Path, usize)>,
    /// The path of the value being parsed (a stack, so no value pays for a copy of its path).
    path: Vec<Segment>,
    /// Values parsed so far, against [`MAX_VALUES`].
    values: usize,
    member_index: HashMap<Path, HashMap<CompactString, usize>>,
    /// A number Python reads as NaN or an infinity was parsed ([`Document::holds_non_finite`]).
    non_finite: bool,
    /// Where each line starts, noted as whitespace is skipped: a JSON text's line breaks are
    /// all whitespace between tokens (a string cannot hold a raw one), so the parser sees each
    /// once, and the document's [`line_starts`] costs no pass of its own (it was a tenth of
    /// parsing a config, issue 44).
    line_starts: Vec<usize>,
    /// The members of the objects being parsed, innermost last: an object's members are
    /// gathered here and moved once into a vector of their number (grown member by member,
    /// each object's vector was reallocated four or five times, a sixth of parsing a config).
    members: Vec<Member>,
    /// The same for the elements of the arrays being parsed.
    items: Vec<Node>,
}

impl<'a> Parser<'a> {
    fn document(&mut self) -> ParseResult<Node> {
        if self.text.starts_with('\u{feff}') {
            return Err((
                "the file starts with a UTF-8 byte-order mark, which Python's json (and so \
                 transformers) rejects; save the file without a BOM"
                    .into(),
                0,
            ));
        }
        if self.bytes.is_empty() {
            return Err(("the file is empty: expected a JSON object".into(), 0));
        }
        self.skip_ws();
        if self.pos >= self.bytes.len() {
            return Err((
                "the file holds only whitespace: expected a JSON object".into(),
                self.pos,
            ));
        }
        let root = self.value(0)?;
        self.skip_ws();
        if self.pos < self.bytes.len() {
            return Err((
                format!(
                    "unexpected {} after the end of the JSON value",
                    self.describe_here()
                ),
                self.pos,
            ));
        }
        Ok(root)
    }

    fn skip_ws(&mut self) {
        // The position in a local: written through `self` at every byte, it stayed in memory.
        let bytes = self.bytes;
        let mut pos = self.pos;
        loop {
            match bytes.get(pos) {
                Some(b' ' | b'\t' | b'\r') => pos += 1,
                Some(b'\n') => {
                    pos += 1;
                    self.line_starts.push(pos);
                }
                _ => break,
            }
        }
        self.pos = pos;
    }

    fn describe_here(&self) -> String {
        match self.text[self.pos..].chars().next() {
            None => "end of file".into(),
            Some('/') => "`/` (comments are not allowed in JSON)".into(),
            Some(c) if c.is_control() => format!("control character U+{:04X}", c as u32),
            Some(c) => format!("`{c}`"),
        }
    }

    fn value(&mut self, depth: usize) -> ParseResult<Node> {
        if depth > MAX_DEPTH {
            return Err((
                format!("nesting deeper than {MAX_DEPTH} levels; a drafter config needs 3"),
                self.pos,
            ));
        }
        self.values += 1;
        if self.values > MAX_VALUES {
            return Err((
                format!(
                    "more than {MAX_VALUES} values (a drafter config holds about a hundred): \
                     this is not a model config"
                ),
                self.pos,
            ));
        }
        let start = self.pos;
        let value = match self.bytes.get(self.pos) {
            None => return Err(("unexpected end of file: expected a value".into(), self.pos)),
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Value::String(CompactString::new(self.string()?)),
            Some(b't') => self.literal("true", Value::Bool(true))?,
            Some(b'f') => self.literal("false", Value::Bool(false))?,
            Some(b'n') => self.literal("null", Value::Null)?,
            Some(b'N') => self.literal_number("NaN", f64::NAN)?,
            Some(b'I') => self.literal_number("Infinity", f64::INFINITY)?,
            Some(b'-') if self.text[self.pos..].starts_with("-Infinity") => {
                self.literal_number("-Infinity", f64::NEG_INFINITY)?
            }
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => {
                return Err((
                    format!("unexpected {}: expected a value", self.describe_here()),
                    self.pos,
                ))
            }
        };
        Ok(Node {
            value,
            span: start..self.pos,
        })
    }

    fn literal(&mut self, word: &str, value: Value) -> ParseResult<Value> {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err((
                format!("unexpected {}: expected a value", self.describe_here()),
                self.pos,
            ))
        }
    }

    fn literal_number(&mut self, word: &str, value: f64) -> ParseResult<Value> {
        let start = self.pos;
        self.literal(word, Value::Null)?;
        self.non_finite = true;
        Ok(Value::Number(Number {
            text: self.text[start..self.pos].into(),
            value,
            integer: None,
        }))
    }

    fn number(&mut self) -> ParseResult<Value> {
        let start = self.pos;
        let b = self.bytes;
        if b.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        match b.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                while matches!(b.get(self.pos), Some(b'0'..=b'9')) {
                    self.pos += 1;
                }
            }
            _ => return Err(("invalid number: expected a digit".into(), self.pos)),
        }
        let mut integral = true;
        if b.get(self.pos) == Some(&b'.') {
            integral = false;
            self.pos += 1;
            if !matches!(b.get(self.pos), Some(b'0'..=b'9')) {
                return Err((
                    "invalid number: expected a digit after `.`".into(),
                    self.pos,
                ));
            }
            while matches!(b.get(self.pos), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        if matches!(b.get(self.pos), Some(b'e' | b'E')) {
            integral = false;
            self.pos += 1;
            if matches!(b.get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !matches!(b.get(self.pos), Some(b'0'..=b'9')) {
                return Err((
                    "invalid number: expected a digit in the exponent".into(),
                    self.pos,
                ));
            }
            while matches!(b.get(self.pos), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        if self.pos == start + 1 && b[start] == b'-' {
            return Err(("invalid number".into(), start));
        }
        let text = &self.text[start..self.pos];
        let (value, integer) = match integral {
            // Up to 18 characters the integer fits in an `i64`, read from the digits already
            // scanned; converting it rounds to the same double as reading the text (both are
            // the nearest, ties to even). Two parses per number were a sixth of parsing a
            // config (issue 44).
            true if text.len() <= 18 => {
                let negative = text.starts_with('-');
                let magnitude = text
                    .bytes()
                    .skip(usize::from(negative))
                    .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
                let integer = if negative { -magnitude } else { magnitude };
                // `-0` is the double -0.0, as the text reads.
                let value = if negative && magnitude == 0 {
                    -0.0
                } else {
                    integer as f64
                };
                (value, Some(i128::from(integer)))
            }
            true => (text.parse().unwrap_or(f64::NAN), text.parse::<i128>().ok()),
            false => {
                let value: f64 = text.parse().unwrap_or(f64::NAN);
                self.non_finite |= !value.is_finite();
                (value, None)
            }
        };
        Ok(Value::Number(Number {
            text: text.into(),
            value,
            integer,
        }))
    }

    /// A string literal's text: borrowed from the source when it holds no escape (most do),
    /// so a value is copied once into its [`CompactString`] and a key once into its `String`.
    fn string(&mut self) -> ParseResult<Cow<'a, str>> {
        let open = self.pos;
        self.pos += 1; // opening quote
        let mut out = String::new();
        loop {
            let run_start = self.pos;
            // Up to the closing quote, an escape or a control character.
            self.pos += plain_run(self.bytes.get(self.pos..).unwrap_or_default());
            if out.is_empty() && self.bytes.get(self.pos) == Some(&b'"') {
                self.pos += 1;
                return Ok(Cow::Borrowed(&self.text[run_start..self.pos - 1]));
            }
            out.push_str(&self.text[run_start..self.pos]);
            match self.bytes.get(self.pos) {
                None => return Err(("unterminated string".into(), open)),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let esc = self.bytes.get(self.pos).copied();
                    self.pos += 1;
                    match esc {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => {
                            let first = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&first) {
                                if self.text[self.pos..].starts_with("\\u") {
                                    self.pos += 2;
                                    let second = self.hex4()?;
                                    if (0xDC00..0xE000).contains(&second) {
                                        char::from_u32(
                                            0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00),
                                        )
                                    } else {
                                        None
                                    }
                                } else {
                                    None
                                }
                            } else {
                                char::from_u32(first)
                            };
                            // Python accepts lone surrogates; Rust strings cannot hold them.
                            out.push(c.unwrap_or('\u{fffd}'));
                        }
                        _ => return Err(("invalid escape in string".into(), self.pos - 2)),
                    }
                }
                Some(_) => {
                    return Err((
                        "control character inside a string (escape it, e.g. \\n)".into(),
                        self.pos,
                    ))
                }
            }
        }
    }

    fn hex4(&mut self) -> ParseResult<u32> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| {
                (
                    "invalid \\u escape: expected 4 hex digits".to_string(),
                    self.pos,
                )
            })?;
        self.pos += 4;
        Ok(u32::from_str_radix(digits, 16).unwrap_or(0xfffd))
    }

    fn object(&mut self, depth: usize) -> ParseResult<Value> {
        // Past the `{`; this object's members are `self.members[base..]` until it closes.
        self.pos += 1;
        let base = self.members.len();
        // Once the object is too large to scan for duplicates: each key's last index. It finds
        // duplicates and becomes the document's member index (one copy of each key, not two).
        let mut index: HashMap<CompactString, usize> = HashMap::new();
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Value::Object(Vec::new().into()));
        }
        loop {
            self.skip_ws();
            if self.bytes.get(self.pos) != Some(&b'"') {
                let msg = if self.bytes.get(self.pos) == Some(&b'}') {
                    "trailing comma before `}` (not allowed in JSON)".to_string()
                } else {
                    format!(
                        "unexpected {}: expected a key in double quotes",
                        self.describe_here()
                    )
                };
                return Err((msg, self.pos));
            }
            let key_start = self.pos;
            let key = self.string()?.into_owned();
            let key_span = key_start..self.pos;
            self.skip_ws();
            if self.bytes.get(self.pos) != Some(&b':') {
                return Err((
                    format!(
                        "unexpected {}: expected `:` after key {}",
                        self.describe_here(),
                        quote(&key)
                    ),
                    self.pos,
                ));
            }
            self.pos += 1;
            self.skip_ws();
            // The path is only read below a container (its members' paths) and for a
            // duplicate: a scalar's key is not copied into it.
            let container = matches!(self.bytes.get(self.pos), Some(b'{' | b'['));
            if container {
                self.path.push(Segment::Key(key.as_str().into()));
            }
            let value = self.value(depth + 1)?;
            if container {
                self.path.pop();
            }
            if self.is_duplicate(base, &mut index, &key) {
                let mut path = self.path.clone();
                path.push(Segment::Key(key.as_str().into()));
                self.duplicates
                    .push((Path(path.into_iter().collect()), value.span.start));
            }
            self.members.push(Member {
                key,
                key_span,
                value,
            });
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    if self.members.len() - base > INDEX_MEMBERS {
                        self.member_index
                            .insert(Path(self.path.iter().cloned().collect()), index);
                    }
                    // Copied out at their count; the stack keeps its buffer for the next object.
                    return Ok(Value::Object(self.members.split_off(base).into()));
                }
                None => {
                    return Err((
                        "unexpected end of file: expected `,` or `}`".into(),
                        self.pos,
                    ))
                }
                _ => {
                    return Err((
                        format!(
                            "unexpected {}: expected `,` or `}}` after a member",
                            self.describe_here()
                        ),
                        self.pos,
                    ))
                }
            }
        }
    }

    /// Whether `key` is already a key of the object whose members are `self.members[base..]`:
    /// scanned while the object is small, then through `index` (each key's last index), built
    /// when the object reaches [`INDEX_MEMBERS`] and given `key`'s index.
    fn is_duplicate(
        &self,
        base: usize,
        index: &mut HashMap<CompactString, usize>,
        key: &str,
    ) -> bool {
        let members = &self.members[base..];
        if members.len() < INDEX_MEMBERS {
            return members.iter().any(|m| same_key(&m.key, key));
        }
        if index.is_empty() {
            let keys = members.iter().map(|m| CompactString::new(&m.key));
            index.extend(keys.zip(0..));
        }
        index.insert(key.into(), members.len()).is_some()
    }

    fn array(&mut self, depth: usize) -> ParseResult<Value> {
        // Past the `[`; this array's elements are `self.items[base..]` until it closes.
        self.pos += 1;
        let base = self.items.len();
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Value::Array(Vec::new()));
        }
        loop {
            self.skip_ws();
            if self.bytes.get(self.pos) == Some(&b']') {
                return Err((
                    "trailing comma before `]` (not allowed in JSON)".into(),
                    self.pos,
                ));
            }
            self.path.push(Segment::Index(self.items.len() - base));
            let item = self.value(depth + 1)?;
            self.items.push(item);
            self.path.pop();
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(self.items.split_off(base)));
                }
                None => {
                    return Err((
                        "unexpected end of file: expected `,` or `]`".into(),
                        self.pos,
                    ))
                }
                _ => {
                    return Err((
                        format!(
                            "unexpected {}: expected `,` or `]` after an element",
                            self.describe_here()
                        ),
                        self.pos,
                    ))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More than [`MAX_VALUES`] values is refused while parsing (an 8-million-number array
    /// cost 2.7 GB before), and objects of many keys parse, find duplicates and answer
    /// positions in linear time (each was a scan per key: 100,000 keys took minutes).
    #[test]
    fn value_cap_and_many_keys() {
        let array = format!("{{\"x\": [{}]}}", vec!["0"; MAX_VALUES].join(","));
        let err = Document::parse(&array).unwrap_err();
        assert!(
            err.message.contains("more than 100000 values"),
            "{}",
            err.message
        );

        let n = 60_000;
        let mut members: Vec<String> = (0..n).map(|i| format!("\"k{i}\": {i}")).collect();
        members.push("\"k7\": 0".into());
        let doc = Document::parse(&format!("{{\n{}\n}}", members.join(",\n"))).unwrap();
        assert_eq!(doc.duplicate_keys, vec![(Path::key("k7"), n + 2)]);
        assert_eq!(doc.root.effective_keys().len(), n);
        for i in (0..n).filter(|i| *i != 7) {
            assert_eq!(doc.position_of(&Path::key(&format!("k{i}"))).0, i + 2);
        }
        assert_eq!(doc.position_of(&Path::key("k7")).0, n + 2);
        let mut lookup = Lookup::default();
        assert_eq!(
            lookup.path(&doc.root, &Path::key("k7")).unwrap().as_u64(),
            Some(0)
        );
        assert_eq!(
            lookup.get(&doc.root, "k59999").unwrap().as_u64(),
            Some(59_999)
        );
        // Whole-object comparison and JSON output look keys up in a map: a scan per key made
        // both quadratic (an object of 190,000 keys in an array, diffed against itself or
        // written by `diff --format json`, ran past a minute). Last duplicate wins in both.
        let other = doc.root.clone();
        assert!(doc.root.same_value(&other));
        let serde = doc.root.to_serde();
        let map = serde.as_object().unwrap();
        assert_eq!(map.len(), n);
        assert_eq!(map["k7"], serde_json::json!(0));
        assert_eq!(map.keys().nth(7).map(String::as_str), Some("k7"));
    }

    #[test]
    fn pointer_of_every_path_form() {
        assert_eq!(pointer("(root)"), "");
        assert_eq!(pointer("block_size"), "/block_size");
        assert_eq!(
            pointer("dflash_config.target_layer_ids[2]"),
            "/dflash_config/target_layer_ids/2"
        );
        assert_eq!(pointer("[\"a.b/c~\"].d"), "/a.b~1c~0/d");
        assert_eq!(
            pointer("layers.0.self_attn.q_proj.weight"),
            "/layers/0/self_attn/q_proj/weight"
        );
        assert_eq!(
            pointer("--speculative-config.method"),
            "/--speculative-config/method"
        );
        assert_eq!(pointer("[\"unterminated"), "/[\"unterminated");
        // What `Display` writes, the pointer reads back.
        let path = Path::root().child("x y").index(3).child("z");
        assert_eq!(pointer(&path.to_string()), "/x y/3/z");
    }

    #[test]
    fn numbers_compare_by_value_and_keep_their_text() {
        let doc =
            Document::parse(r#"{"a": 1e-06, "b": 0.000001, "c": 10000000, "d": 1e7}"#).unwrap();
        let n = |k| doc.root.get(k).unwrap().clone();
        assert!(n("a").same_value(&n("b")));
        assert!(n("c").same_value(&n("d")));
        assert_eq!(doc.source(&n("a")), "1e-06");
    }

    #[test]
    fn integers_read_from_their_digits_are_the_texts_values() {
        for text in [
            "0",
            "-0",
            "7",
            "-7",
            "248070",
            "9007199254740993",
            "-9007199254740993",
            "999999999999999999",
            "-99999999999999999",
            "1000000000000000000",
            "-999999999999999999",
            "123456789012345678901",
        ] {
            let doc = Document::parse(text).unwrap();
            let n = doc.root.as_number().unwrap();
            let value: f64 = text.parse().unwrap();
            assert_eq!(n.value.to_bits(), value.to_bits(), "{text}");
            assert_eq!(n.integer, text.parse::<i128>().ok(), "{text}");
        }
    }

    #[test]
    fn large_integers_stay_exact() {
        let doc = Document::parse("[18446744073709551617, 18446744073709551616]").unwrap();
        let items = doc.root.as_array().unwrap();
        assert!(!items[0].same_value(&items[1]));
        assert_eq!(items[0].as_u64(), None);
    }

    /// `same_key` is `==` on every pair of lengths around its word boundaries, equal and not,
    /// differing at every position.
    #[test]
    fn same_key_is_string_equality() {
        for n in 0..40 {
            let a: String = (0..n).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            assert!(same_key(&a, &a.clone()), "{a}");
            for at in 0..n {
                let mut b = a.clone().into_bytes();
                b[at] = b'_';
                let b = String::from_utf8(b).unwrap();
                assert!(!same_key(&a, &b), "{a} {b}");
            }
            for m in 0..40 {
                let b: String = (0..m).map(|i| (b'a' + (i % 26) as u8) as char).collect();
                assert_eq!(same_key(&a, &b), a == b, "{a} {b}");
            }
        }
        assert!(same_key("ünïcödé_kéy_ñame", "ünïcödé_kéy_ñame"));
        assert!(!same_key("ünïcödé_kéy_ñame", "ünïcödé_kéy_ñamé"));
    }

    fn object_of(keys: &[String]) -> Object {
        keys.iter()
            .enumerate()
            .map(|(i, k)| Member {
                key: k.clone(),
                key_span: i..i,
                value: Node {
                    value: Value::Null,
                    span: i..i,
                },
            })
            .collect()
    }

    /// The table answers as the scan does (the last of a duplicated key, nothing for an
    /// absent one) at every size around the threshold, with duplicates and keys that share
    /// their length and words.
    #[test]
    fn object_lookups_by_table_are_the_scan() {
        for n in 0..200 {
            let keys: Vec<String> = (0..n)
                .map(|i| match i % 5 {
                    0 => format!("num_{i}_layers"),
                    1 => format!("k{}", i % 7),
                    2 => "dup".to_string(),
                    3 => format!("{}x", "a".repeat(i % 23)),
                    _ => format!("key-{i}"),
                })
                .collect();
            let object = object_of(&keys);
            assert_eq!(object.table.is_some(), n > TABLE_MEMBERS, "{n}");
            let asked = keys
                .iter()
                .cloned()
                .chain(["absent".into(), String::new(), "dup ".into()]);
            for key in asked {
                let scanned = object.iter().rposition(|m| m.key == key);
                let found = object.get(&key).map(|m| m.key_span.start);
                assert_eq!(found, scanned, "{n} {key:?}");
            }
        }
    }

    /// `Lookup` answers as `Node::get` for a large object with its table and for one whose
    /// keys collide (no table: `Lookup`'s own map).
    #[test]
    fn lookup_answers_as_get_with_and_without_a_table() {
        let mask = (64usize * 2).next_power_of_two() - 1;
        let mut colliding: Vec<String> = (0..)
            .map(|i| format!("k{i}"))
            .filter(|k| key_hash(k) as usize & mask == 0)
            .take(MAX_PROBES + 2)
            .collect();
        colliding.extend((0..64 - colliding.len()).map(|i| format!("other{i}")));
        let plain: Vec<String> = (0..64).map(|i| format!("key{}", i % 50)).collect();
        for keys in [plain, colliding] {
            let node = Node {
                value: Value::Object(object_of(&keys)),
                span: 0..0,
            };
            let mut lookup = Lookup::default();
            for key in keys.iter().map(String::as_str).chain(["absent"]) {
                let got = lookup.get(&node, key).map(|n| n.span.start);
                assert_eq!(got, node.get(key).map(|n| n.span.start), "{key}");
            }
        }
    }

    /// Keys chosen to collide in the table (found by trying names) leave the object without
    /// one, and its lookups scan: the build stops instead of going quadratic.
    #[test]
    fn colliding_keys_fall_back_to_the_scan() {
        let n = 64;
        let mask = (n * 2usize).next_power_of_two() - 1;
        let mut keys: Vec<String> = (0..)
            .map(|i| format!("k{i}"))
            .filter(|k| key_hash(k) as usize & mask == 0)
            .take(MAX_PROBES + 2)
            .collect();
        keys.extend((0..n - keys.len()).map(|i| format!("other{i}")));
        let object = object_of(&keys);
        assert!(object.table.is_none());
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(object.get(key).map(|m| m.key_span.start), Some(i));
        }
        assert!(object.get("absent").is_none());
    }

    /// `to_text` is `Display`'s text for every kind of segment.
    #[test]
    fn path_to_text_is_its_display() {
        let paths = [
            Path::root(),
            Path::key("a"),
            Path::parse("dflash_config.target_layer_ids"),
            Path::key("dflash_config")
                .child("target_layer_ids")
                .index(2),
            Path::key("a.b").child("c"),
            Path::key("").child("x"),
            Path::key("ünï").child("k-1_2"),
            Path::root().index(0).child("q\"uote"),
            Path::key("x").index(usize::MAX),
        ];
        for p in paths {
            assert_eq!(p.to_text(), p.to_string(), "{p:?}");
        }
    }

    #[test]
    fn duplicate_keys_last_wins_and_are_recorded() {
        let doc = Document::parse("{\"a\": 1,\n \"a\": 2}").unwrap();
        assert_eq!(doc.root.get("a").unwrap().as_u64(), Some(2));
        assert_eq!(doc.duplicate_keys, vec![(Path::key("a"), 2)]);
    }

    #[test]
    fn python_non_finite_numbers_are_accepted() {
        let doc = Document::parse("[NaN, Infinity, -Infinity]").unwrap();
        let items = doc.root.as_array().unwrap();
        assert!(items[0].as_number().unwrap().value.is_nan());
        assert_eq!(items[2].as_number().unwrap().value, f64::NEG_INFINITY);
    }

    /// The parser's flag agrees with the walk the rule used to make over every config: set for
    /// what Python reads as NaN or an infinity (a duplicated key's value too, as the walk over
    /// the tree saw it), not for a huge integer literal, a finite float or a string "NaN".
    #[test]
    fn the_non_finite_flag_is_the_walks_answer() {
        for (text, holds) in [
            ("{\"a\": NaN}", true),
            ("{\"a\": [1, Infinity]}", true),
            ("{\"a\": {\"b\": -Infinity}}", true),
            ("{\"a\": 1e400}", true),
            ("{\"a\": -1.5e999}", true),
            ("{\"a\": NaN, \"a\": 1}", true),
            (
                "{\"a\": 1e308, \"b\": -0.0, \"c\": 5e-324, \"d\": 1e-400}",
                false,
            ),
            (&format!("{{\"a\": {}}}", "9".repeat(400)), false),
            ("{\"a\": \"NaN\", \"Infinity\": null}", false),
        ] {
            let doc = Document::parse(text).unwrap();
            assert_eq!(doc.holds_non_finite, holds, "{text}");
        }
    }

    #[test]
    fn errors_carry_line_and_column() {
        let err = Document::parse("{\n  \"a\": 1,\n}").unwrap_err();
        assert_eq!((err.line, err.column), (3, 1));
        assert!(err.message.contains("trailing comma"), "{}", err.message);
        let err = Document::parse("{\"a\": 1 // c\n}").unwrap_err();
        assert!(err.message.contains("comments"), "{}", err.message);
    }

    #[test]
    fn deep_nesting_is_refused_without_overflow() {
        let text = "[".repeat(10_000) + &"]".repeat(10_000);
        let err = Document::parse(&text).unwrap_err();
        assert!(err.message.contains("nesting"));
    }

    #[test]
    fn bom_and_invalid_utf8_are_refused() {
        assert!(Document::parse("\u{feff}{}")
            .unwrap_err()
            .message
            .contains("byte-order mark"));
        let err = Document::parse_bytes(b"{\"a\": \"\xff\"}").unwrap_err();
        assert!(err.message.contains("UTF-8"));
        assert_eq!(err.column, 8);
    }

    #[test]
    fn paths_display_and_parse() {
        let p = Path::key("dflash_config")
            .child("target_layer_ids")
            .index(2);
        assert_eq!(p.to_string(), "dflash_config.target_layer_ids[2]");
        assert_eq!(Path::parse("dflash_config.target_layer_ids[2]"), p);
        assert_eq!(Path::key("a.b").to_string(), "[\"a.b\"]");
    }

    #[test]
    fn positions_point_at_keys() {
        let doc = Document::parse("{\n  \"x\": {\n    \"y\": [1, 2]\n  }\n}").unwrap();
        assert_eq!(doc.position_of(&Path::parse("x.y")), (3, 5));
        assert_eq!(doc.position_of(&Path::parse("x.y[1]")), (3, 14));
    }

    #[test]
    fn escapes_decode() {
        let doc = Document::parse(r#""\u00e9\ud83d\ude00\n""#).unwrap();
        assert_eq!(doc.root.as_str(), Some("é😀\n"));
    }

    /// The word-at-a-time run is the byte-by-byte one: every byte value that ends a run (and
    /// its neighbours: 0x1f/0x20, 0x21/0x22/0x23, 0x5b/0x5c/0x5d, 0x7f, 0x80, 0xff) at every
    /// position of texts up to 40 bytes, several enders in one word, none at all.
    #[test]
    fn plain_run_is_the_byte_scan() {
        let byte_scan = |t: &[u8]| {
            t.iter()
                .position(|&b| ENDS_RUN[usize::from(b)])
                .unwrap_or(t.len())
        };
        let specials = [
            0x00, 0x01, 0x09, 0x0a, 0x1f, 0x20, 0x21, b'"', 0x23, 0x5b, b'\\', 0x5d, 0x7f, 0x80,
            0xc3, 0xff,
        ];
        for len in 0..40 {
            let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert_eq!(plain_run(&base), len);
            for at in 0..len {
                for &b in &specials {
                    let mut t = base.clone();
                    t[at] = b;
                    assert_eq!(plain_run(&t), byte_scan(&t), "{t:?}");
                    // A second special later in the same word or the next.
                    for later in [at + 1, at + 3, at + 9] {
                        if later < len {
                            let mut u = t.clone();
                            u[later] = b'"';
                            assert_eq!(plain_run(&u), byte_scan(&u), "{u:?}");
                        }
                    }
                }
            }
        }
        // High bytes only (UTF-8), then a quote.
        let t = "ééééééééééé\"".as_bytes();
        assert_eq!(plain_run(t), t.len() - 1);
    }

    /// The line starts the parser notes while skipping whitespace are [`line_starts`] of the
    /// text: pretty-printed, compact, CRLF, tabs, blank lines, leading and trailing lines, and
    /// newlines in nested objects and arrays; and positions read from them are the same.
    #[test]
    fn the_parsers_line_starts_are_the_texts() {
        let texts = [
            "{}",
            "\n\n{\n}\n\n",
            "{\r\n  \"a\": [\r\n    1,\r\n    2\r\n  ]\r\n}\r\n",
            "{\n\t\"a\": {\"b\": [1, {\"c\":\n\n null}]},\n\n\t\"d\": \"x\\ny\"\n}",
            "[\n1,\n2,\n[\n3\n]\n]",
            "  {\"only\": \"one line\"}  ",
            "{\"a\": 1}\n",
        ];
        for text in texts {
            let doc = Document::parse(text).unwrap();
            assert_eq!(doc.line_starts, line_starts(text), "{text:?}");
        }
        let doc = Document::parse(texts[3]).unwrap();
        assert_eq!(doc.position_of(&Path::parse("d")), (6, 2));
    }

    /// Objects and arrays nested in each other, parsed through the shared member and element
    /// stacks, are whole and in order, and a duplicate is found only within its own object.
    #[test]
    fn nested_containers_keep_their_own_members() {
        let text = r#"{"a": {"x": 1, "y": [1, [2, 3], {"x": 2, "z": [4]}], "x": 3},
                      "b": [[], {}, [[5]], {"a": {"a": 6}}], "c": {"a": 7}}"#;
        let doc = Document::parse(text).unwrap();
        let a = doc.root.get("a").unwrap();
        assert_eq!(a.get("x").unwrap().to_compact(), "3");
        assert_eq!(
            a.get("y").unwrap().to_compact(),
            r#"[1, [2, 3], {"x": 2, "z": [4]}]"#
        );
        assert_eq!(
            doc.root.get("b").unwrap().to_compact(),
            r#"[[], {}, [[5]], {"a": {"a": 6}}]"#
        );
        assert_eq!(doc.root.get("c").unwrap().to_compact(), r#"{"a": 7}"#);
        let keys: Vec<&str> = doc
            .root
            .as_object()
            .unwrap()
            .iter()
            .map(|m| m.key.as_str())
            .collect();
        assert_eq!(keys, ["a", "b", "c"]);
        assert_eq!(doc.duplicate_keys, vec![(Path::parse("a.x"), 1)]);
    }
}
