//! The pin file, `dflash-check.toml`: the reviewed authority of each drafter in a repository.
//!
//! `dflash-check pin` writes it; `dflash-check check` reads it, so CI compares every drafter
//! against exactly the revision a person reviewed (a Hub repo at a commit sha, a file, or a
//! built-in snapshot) instead of whatever a branch points at today. It is small TOML on purpose:
//! it is meant to be read in code review.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The file name searched for from the current directory upwards.
pub const FILE_NAME: &str = "dflash-check.toml";
pub const VERSION: u32 = 1;

/// The whole pin file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinFile {
    pub version: u32,
    /// Drafter directory (relative to the pin file, `/`-separated) -> its pin.
    #[serde(default)]
    pub drafters: BTreeMap<String, Pin>,
}

/// The authority (and target) of one drafter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// Hub repo of the authoritative config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub: Option<String>,
    /// The resolved commit sha of `hub`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Or: a built-in snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// Or: an authoritative config file, relative to the pin file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
    /// Target model: a Hub repo, or a directory relative to the pin file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The resolved commit sha of a Hub `target`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_revision: Option<String>,
    /// When the pin was written (YYYY-MM-DD), for reviewers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<String>,
}

/// A loaded pin file and where it lives.
#[derive(Debug, Clone)]
pub struct LoadedPins {
    pub path: PathBuf,
    pub file: PinFile,
}

impl LoadedPins {
    /// The directory pins are relative to.
    pub fn root(&self) -> PathBuf {
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    /// The pin of the drafter whose config file or directory is `drafter`.
    pub fn find(&self, drafter: &Path) -> Option<(&String, &Pin)> {
        let key = self.key_for(drafter)?;
        self.file.drafters.get_key_value(&key)
    }

    /// The pin key of a drafter path: its directory relative to the pin file.
    pub fn key_for(&self, drafter: &Path) -> Option<String> {
        let dir = if drafter.file_name().is_some_and(|n| n == "config.json") || drafter.is_file() {
            drafter.parent()?.to_path_buf()
        } else {
            drafter.to_path_buf()
        };
        let dir = std::path::absolute(&dir).ok()?;
        let root = std::path::absolute(self.root()).ok()?;
        let rel = normalize(&dir)
            .strip_prefix(normalize(&root))
            .ok()?
            .to_path_buf();
        let key = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        Some(if key.is_empty() { ".".into() } else { key })
    }
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Finds `dflash-check.toml` in `start` or its parents.
pub fn discover(start: &Path) -> Option<PathBuf> {
    let start = std::path::absolute(start).ok()?;
    start
        .ancestors()
        .map(|d| d.join(FILE_NAME))
        .find(|p| p.is_file())
}

/// Reads and validates a pin file.
pub fn load(path: &Path) -> Result<LoadedPins> {
    let bytes = crate::config::read_capped(path, crate::config::MAX_CONFIG_BYTES)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::new(format!("`{}`: not UTF-8 text", path.display())))?;
    let file: PinFile = toml::from_str(&text).map_err(|e| {
        Error::new(format!(
            "`{}`: invalid pin file: {}",
            path.display(),
            e.message()
        ))
        .with_hint("fix it by hand or write it again with `dflash-check pin`")
    })?;
    if file.version != VERSION {
        return Err(Error::new(format!(
            "`{}`: pin file version {} is not supported (this dflash-check reads version {VERSION})",
            path.display(),
            file.version
        )));
    }
    for (key, pin) in &file.drafters {
        let sources = [
            pin.hub.is_some(),
            pin.snapshot.is_some(),
            pin.against.is_some(),
        ];
        if sources.iter().filter(|s| **s).count() != 1 {
            return Err(Error::new(format!(
                "`{}`: drafter `{key}` must have exactly one of `hub`, `snapshot`, `against`",
                path.display()
            )));
        }
        if pin.hub.is_some() && pin.revision.as_deref().is_none_or(|r| !is_sha(r)) {
            return Err(Error::new(format!(
                "`{}`: drafter `{key}`: a `hub` pin needs `revision`, a 40-hex commit sha",
                path.display()
            ))
            .with_hint("write pins with `dflash-check pin`, which resolves the sha"));
        }
    }
    Ok(LoadedPins {
        path: path.to_path_buf(),
        file,
    })
}

/// Whether `s` is a full commit sha.
pub fn is_sha(s: &str) -> bool {
    s.len() == 40
        && s.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Writes the pin file (sorted, with a header comment), replacing it atomically.
pub fn save(path: &Path, file: &PinFile) -> Result<()> {
    let body = toml::to_string_pretty(file)
        .map_err(|e| Error::new(format!("cannot serialise the pin file: {e}")))?;
    let text = format!(
        "# dflash-check pins: the reviewed authority of each drafter config.\n\
         # Written by `dflash-check pin`; `dflash-check check` compares against exactly these revisions.\n\n{body}"
    );
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".{FILE_NAME}.tmp-{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        fs::write(&tmp, text.as_bytes())?;
        fs::File::open(&tmp)?.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::new(format!("cannot write `{}`: {e}", path.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_validates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let mut file = PinFile {
            version: VERSION,
            ..PinFile::default()
        };
        file.drafters.insert(
            "models/a".into(),
            Pin {
                snapshot: Some("z-lab/Qwen3.6-27B-DFlash".into()),
                ..Pin::default()
            },
        );
        save(&path, &file).unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.file, file);
        let drafter = dir.path().join("models/a/config.json");
        assert_eq!(loaded.key_for(&drafter).as_deref(), Some("models/a"));
        fs::write(&path, "version = 1\n[drafters.\"x\"]\nhub = \"a/b\"\n").unwrap();
        assert!(load(&path).unwrap_err().message.contains("40-hex"));
    }
}
