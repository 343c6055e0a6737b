//! Where a model path in a deployed command is on this machine: `--volume MOUNT=DIR` says the
//! container's `MOUNT` (a path such as `/models`, or a KServe `pvc://CLAIM`) holds what the
//! local `DIR` holds, so `/models/Qwen3-8B` is read from `DIR/Qwen3-8B`; and a model URI
//! `hf://ORG/NAME` is the Hub repo `ORG/NAME`, as `--target hf://…` is. A name no volume
//! covers is read as the engine would read it (`crate::input::InputRef::engine`).

use std::path::PathBuf;

use crate::{Error, Result};

/// One `--volume MOUNT=DIR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Volume {
    pub mount: String,
    pub dir: PathBuf,
}

impl std::str::FromStr for Volume {
    type Err = Error;

    fn from_str(s: &str) -> Result<Volume> {
        match s.split_once('=') {
            Some((mount, dir)) if !mount.is_empty() && !dir.is_empty() => Ok(Volume {
                mount: mount.trim_end_matches('/').to_string(),
                dir: PathBuf::from(dir),
            }),
            _ => Err(Error::new(format!("--volume `{s}` is not MOUNT=DIR"))
                .kind(crate::error::ErrorKind::Usage)
                .with_hint("map a path in the container to a local directory: --volume /models=./local-models")),
        }
    }
}

/// `given` with the longest volume that covers it mapped to its local directory, and an
/// `hf://` prefix removed; as written otherwise.
pub fn resolve(given: &str, volumes: &[Volume]) -> String {
    let covering = volumes
        .iter()
        .filter_map(|v| {
            let rest = given.strip_prefix(v.mount.as_str())?;
            (rest.is_empty() || rest.starts_with('/')).then_some((v, rest))
        })
        .max_by_key(|(v, _)| v.mount.len());
    if let Some((v, rest)) = covering {
        let rest = rest.trim_start_matches('/');
        let path = if rest.is_empty() {
            v.dir.clone()
        } else {
            v.dir.join(rest)
        };
        return path.display().to_string();
    }
    given.strip_prefix("hf://").unwrap_or(given).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_the_longest_covering_volume() {
        let vols: Vec<Volume> = [
            "/models=./local",
            "/models/draft=/tmp/d",
            "pvc://claim=/srv",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
        assert_eq!(resolve("/models/Qwen3-8B", &vols), "./local/Qwen3-8B");
        assert_eq!(resolve("/models/draft", &vols), "/tmp/d");
        assert_eq!(resolve("/modelsX", &vols), "/modelsX");
        assert_eq!(resolve("pvc://claim/qwen", &vols), "/srv/qwen");
        assert_eq!(resolve("hf://Org/Name", &vols), "Org/Name");
        assert!("nodir".parse::<Volume>().is_err());
    }
}
