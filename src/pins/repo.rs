//! What a pin file may reach: the repository it belongs to.
//!
//! A pin file arrives in pull requests, and `check` runs it in CI with the runner's files
//! around it. So a path it names is taken only inside its repository, with links resolved first
//! (issue 44): an `against` authority outside (`../../home/runner/.docker/config.json`, an
//! absolute path, a link in the checkout pointing out) was read and its values printed as
//! `only-authority` lines, a credential in a CI log. An authority must also be a model config
//! ([`crate::config::is_model_config`]), so no other JSON in the checkout (a cloud login's key
//! file written into the workspace) is shown either. A refused file is named, never shown.
//!
//! The same bound holds when the pin file itself is a link and `pin`, `--baseline` or
//! `--prune-ignores` write it: through the link when its target is inside the repository
//! (and the command says so), refused otherwise ([`write_target`]).
//!
//! The repository is the nearest folder at or above the pin file's own (links resolved) that
//! holds `.git` (a directory, or the file a worktree or submodule has), else the pin file's
//! folder.

use std::path::{Path, PathBuf};

use crate::config::{self, MAX_CONFIG_BYTES};
use crate::{Error, Result};

/// The repository the pin file at `pin_file` belongs to, links resolved (module doc).
pub fn repository_root(pin_file: &Path) -> Result<PathBuf> {
    let dir = match pin_file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = std::fs::canonicalize(dir).map_err(|e| config::io_error(dir, &e))?;
    let root = dir
        .ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
        .unwrap_or(&dir);
    Ok(root.to_path_buf())
}

/// The authority file the pin `key` of the pin file at `pin_file` names with `against`
/// (relative to the pin file's folder, or absolute): see [`authority_at`].
pub fn authority_file(pin_file: &Path, key: &str, against: &str) -> Result<PathBuf> {
    let dir = pin_file.parent().unwrap_or(Path::new(""));
    authority_at(pin_file, key, &dir.join(against), against)
}

/// The authority file at `named` (a file, or a directory holding `config.json`), written
/// `against` in the pin `key` of `pin_file`: its path with every link resolved, once it is
/// known to be inside the pin file's repository and a model config. Anything else is an
/// error (exit 2) that names the file and shows none of its values.
pub fn authority_at(pin_file: &Path, key: &str, named: &Path, against: &str) -> Result<PathBuf> {
    let root = repository_root(pin_file)?;
    let file = config::config_path(named)?;
    let real = std::fs::canonicalize(&file).map_err(|e| config::io_error(&file, &e))?;
    let pin = format!("`{}`: the pin `{key}`", pin_file.display());
    if !real.starts_with(&root) {
        return Err(Error::new(format!(
            "{pin} names `against = \"{against}\"`, which is `{}`, outside the repository `{}`: \
             an authority file must be inside the repository the pin file is in (links \
             resolved), so it was not read",
            real.display(),
            root.display()
        ))
        .with_hint(
            "copy the authoritative config.json into the repository and pin it again with \
             `dflash-check pin DRAFTER --against FILE`, or pin a Hub revision (--from-hub) or a \
             built-in snapshot (--snapshot)",
        ));
    }
    let bytes = config::read_capped(&real, MAX_CONFIG_BYTES)?;
    // The reader's own message may quote the text; a file that is not a config is not shown.
    let not_a_config = |why: &str| {
        Error::new(format!(
            "{pin} names `{}` as its authority, which is not a model config ({why}); none of \
             its values are shown",
            real.display()
        ))
        .with_hint(
            "`against` names a model's config.json: a JSON object with `architectures` or \
             `model_type`; pin the right file with `dflash-check pin DRAFTER --against FILE`",
        )
    };
    let parsed = config::parse(&real, &bytes).map_err(|e| match (e.line, e.column) {
        (Some(line), Some(column)) => not_a_config(&format!(
            "it is not valid JSON at line {line}, column {column}"
        )),
        _ => not_a_config("it is not a JSON object"),
    })?;
    if !config::is_model_config(parsed.root()) {
        return Err(not_a_config(
            "it has neither `architectures` (a list of class names) nor `model_type` (a name) \
             at the top level",
        ));
    }
    Ok(real)
}

/// Where a write of the pin file at `path` lands: the file itself, or, when `path` is a
/// symbolic link, the file it leads to (every link resolved), which must be inside the
/// repository the link is in. `pin`, `check --baseline` and `--prune-ignores` replaced such a
/// link with a regular file and said nothing (issue 44); now they write the target and say
/// so ([`WriteTarget::through`]), or refuse (exit 2, nothing written) a target outside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteTarget {
    /// The file written (and locked).
    pub path: PathBuf,
    /// The link it was reached through, when it was.
    pub link: Option<PathBuf>,
}

impl WriteTarget {
    /// `` `dflash-check.toml` ``, or `` `conf/pins.toml` (through the symbolic link
    /// `dflash-check.toml`, which was kept) ``: where the write went, for the command's message.
    pub fn through(&self) -> String {
        match &self.link {
            Some(link) => format!(
                "`{}` (through the symbolic link `{}`, which was kept)",
                self.path.display(),
                link.display()
            ),
            None => format!("`{}`", self.path.display()),
        }
    }
}

/// The [`WriteTarget`] of the pin file at `path` (which may not exist yet).
pub fn write_target(path: &Path) -> Result<WriteTarget> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Ok(WriteTarget {
            path: path.to_path_buf(),
            link: None,
        });
    }
    // A dangling link or a loop: the read before the write refuses it, in its own words.
    let Ok(real) = std::fs::canonicalize(path) else {
        return Ok(WriteTarget {
            path: path.to_path_buf(),
            link: None,
        });
    };
    let root = repository_root(path)?;
    if !real.starts_with(&root) {
        return Err(Error::new(format!(
            "`{}` is a symbolic link to `{}`, outside the repository `{}`: the pin file is not \
             written through it; nothing was written",
            path.display(),
            real.display(),
            root.display()
        ))
        .with_hint(
            "replace the link with the pin file itself (or a link to a file inside the \
             repository), or name the file to write with --pins",
        ));
    }
    Ok(WriteTarget {
        path: real,
        link: Some(path.to_path_buf()),
    })
}
