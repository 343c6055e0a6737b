//! YAML as the tool reads it from files that may be hostile (compose files, Kubernetes
//! manifests, engines' options files): every document, loaded only after counting what its
//! aliases expand to, so a "billion laughs" file is refused before it is built.

use crate::{Error, Result};

/// Most memory a compose file may load to, aliases copied out, as estimated by [`yaml_cost`]:
/// about 30 MB of tree. Nodes alone do not bound it: one alias of a 0.5 MB scalar copies
/// 0.5 MB, so 40,000 of them in a 1 MiB file built 20 GB when only nodes were counted.
pub const MAX_YAML_COST: u64 = 16 << 20;
/// A larger file may load to this many times its size: a Helm render with its CRDs loads to
/// 1.8 to 2.8 times its bytes by [`yaml_cost`] (kube-prometheus-stack 88.5.3, KServe's
/// kserve-llmisvc-crd v0.20.0; docs/launch.md), so a file read under a raised cap loads, while
/// aliases still cannot copy a small file into a large tree.
const YAML_COST_PER_BYTE: u64 = 8;
/// What a node costs in [`yaml_cost`] besides its scalar text (a rough size of a loaded node).
const YAML_NODE_COST: u64 = 64;

/// What `text` loads to, in bytes of scalar text plus [`YAML_NODE_COST`] a node, each alias
/// counted as the cost of the node it copies (saturating), from the parser's events: no tree
/// is built.
fn yaml_cost(text: &str) -> std::result::Result<u64, yaml_rust2::ScanError> {
    use yaml_rust2::parser::{Event, EventReceiver, Parser};
    #[derive(Default)]
    struct Count {
        /// Open sequences and mappings: (anchor id, nodes so far).
        open: Vec<(usize, u64)>,
        /// Nodes of each anchored node, once complete.
        anchored: std::collections::HashMap<usize, u64>,
        total: u64,
    }
    impl Count {
        fn add(&mut self, n: u64) {
            match self.open.last_mut() {
                Some((_, size)) => *size = size.saturating_add(n),
                None => self.total = self.total.saturating_add(n),
            }
        }
    }
    impl EventReceiver for Count {
        fn on_event(&mut self, ev: Event) {
            match ev {
                Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                    self.open.push((anchor, YAML_NODE_COST))
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    if let Some((anchor, size)) = self.open.pop() {
                        if anchor > 0 {
                            self.anchored.insert(anchor, size);
                        }
                        self.add(size);
                    }
                }
                Event::Scalar(value, _, anchor, _) => {
                    let cost = YAML_NODE_COST.saturating_add(value.len() as u64);
                    if anchor > 0 {
                        self.anchored.insert(anchor, cost);
                    }
                    self.add(cost);
                }
                Event::Alias(id) => {
                    self.add(self.anchored.get(&id).copied().unwrap_or(YAML_NODE_COST))
                }
                _ => {}
            }
        }
    }
    let mut count = Count::default();
    Parser::new_from_str(text).load(&mut count, true)?;
    Ok(count.total)
}

/// Every document of a YAML file, loaded only after [`yaml_cost`] says the aliases do not
/// expand past [`MAX_YAML_COST`], or [`YAML_COST_PER_BYTE`] times a larger file's size (the
/// parser's own recursion limit refuses deep nesting): compose files and Kubernetes manifests
/// share the caps. `what` names the kind of file in the
/// error (`a docker-compose file`), `hint` says what `--file` takes.
pub fn load(text: &str, file: &str, what: &str, hint: &str) -> Result<Vec<yaml_rust2::Yaml>> {
    let invalid = |e: yaml_rust2::ScanError| {
        Error::new(format!("{file} is not valid YAML: {e}")).with_hint(hint)
    };
    // The loader copies an anchored node at every alias, so ten levels of ten aliases (a
    // "billion laughs" file of a few hundred bytes) would build 10^10 nodes: count first.
    let cost = yaml_cost(text).map_err(invalid)?;
    let cap = MAX_YAML_COST.max((text.len() as u64).saturating_mul(YAML_COST_PER_BYTE));
    if cost > cap {
        return Err(Error::new(format!(
            "{file} expands to more than {} MiB of YAML through its aliases (`*name`): it is not {what}",
            cap >> 20
        ))
        .with_hint("write the service's command out without nested aliases"));
    }
    yaml_rust2::YamlLoader::load_from_str(text).map_err(invalid)
}
