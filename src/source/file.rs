//! An authority the user names by path: `--against other/config.json` (or its directory).

use std::path::Path;

use super::{Authority, AuthorityKind};
use crate::config::{self, MAX_CONFIG_BYTES};
use crate::Result;

/// Loads `path` (a directory holding `config.json`, or a file) as the authority.
pub fn load(path: &Path) -> Result<Authority> {
    let file = config::config_path(path)?;
    let bytes = config::read_capped(&file, MAX_CONFIG_BYTES)?;
    let parsed = config::parse(&file, &bytes)?;
    Ok(Authority {
        kind: AuthorityKind::File,
        id: file.display().to_string(),
        revision: None,
        sha: None,
        provenance: format!("the file {} as it is on disk now", file.display()),
        matched_by: None,
        config: parsed,
        bytes: bytes.into(),
        target: None,
        tokens: None,
        cli_args: vec!["--against".into(), path.display().to_string()],
    })
}
