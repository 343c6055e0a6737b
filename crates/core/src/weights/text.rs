//! How the weights rules write shapes and layer lists, and how a finding repeated in several
//! decoder layers becomes one (naming the first tensor and the other layers).

use std::collections::BTreeMap;

use super::cx::Cx;
use super::view::layer_of;
use crate::diagnostic::Diagnostic;

/// `[2, 3]`.
pub fn shape_text(s: &[u64]) -> String {
    let items: Vec<String> = s.iter().map(u64::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// `` `layers.2` ``, `` `layers.2`–`layers.4`, `layers.7` ``.
pub fn layer_names(layers: &[u64]) -> String {
    runs(layers, |n| format!("`layers.{n}`"))
}

/// `2`, `2–4, 7`.
pub fn ranges(layers: &[u64]) -> String {
    runs(layers, |n| n.to_string())
}

/// Sorted numbers as runs of consecutive ones, each shown by `show` (`a`, or `a–b`), joined
/// by commas.
fn runs(layers: &[u64], show: impl Fn(u64) -> String) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < layers.len() {
        let start = layers[i];
        let mut end = start;
        while i + 1 < layers.len() && layers[i + 1] == end + 1 {
            i += 1;
            end = layers[i];
        }
        out.push(if start == end {
            show(start)
        } else {
            format!("{}–{}", show(start), show(end))
        });
        i += 1;
    }
    out.join(", ")
}

/// One rule's findings that repeat across layers, grouped under the first tensor's name.
pub struct Grouped {
    /// (tail with `layers.*`, detail) → (first diagnostic, other layers).
    groups: BTreeMap<(String, String), (Diagnostic, Vec<u64>)>,
    order: Vec<(String, String)>,
}

impl Grouped {
    pub fn new() -> Self {
        Grouped {
            groups: BTreeMap::new(),
            order: Vec::new(),
        }
    }

    /// Adds `d` about `canonical`; `detail` is what must be equal for two layers to group.
    pub fn add(&mut self, canonical: &str, detail: String, d: Diagnostic) {
        let (layer, key_name) = match layer_of(canonical) {
            Some((l, tail)) => (Some(l), format!("layers.*.{tail}")),
            None => (None, canonical.to_string()),
        };
        let key = (key_name, detail);
        match self.groups.get_mut(&key) {
            Some((_, others)) => others.extend(layer),
            None => {
                self.order.push(key.clone());
                self.groups.insert(key, (d, Vec::new()));
            }
        }
    }

    /// Reports each group once, naming the other layers it was seen in.
    pub fn finish(mut self, cx: &mut Cx) {
        for key in self.order {
            if let Some((mut d, others)) = self.groups.remove(&key) {
                if !others.is_empty() {
                    d.message.push_str(&format!(
                        " (the same in layer{} {})",
                        if others.len() == 1 { "" } else { "s" },
                        ranges(&others)
                    ));
                }
                cx.push(d);
            }
        }
    }
}
