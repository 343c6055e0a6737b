//! Where a finding's file is in the repository, for the formats a code host reads (SARIF,
//! GitLab Code Quality): findings name files relative to the working directory, but code
//! scanning and merge-request widgets resolve paths from the repository root, so a run from a
//! subfolder pointed every alert nowhere. The root is `GITHUB_WORKSPACE` or `CI_PROJECT_DIR`
//! when set, else the nearest folder at or above the working directory that holds `.git` (a
//! folder, or a file in a worktree), else the working directory. A file outside the root keeps
//! the name it was given.

use std::path::{Component, Path, PathBuf};

use crate::diagnostic::Diagnostic;

/// The repository root and the working directory, both absolute.
#[derive(Debug, Clone)]
pub struct RepoBase {
    root: PathBuf,
    cwd: PathBuf,
}

impl RepoBase {
    /// The root of the repository the command runs in (see the module's documentation).
    pub fn discover() -> RepoBase {
        let cwd = std::env::current_dir().unwrap_or_default();
        let from_env = ["GITHUB_WORKSPACE", "CI_PROJECT_DIR"]
            .iter()
            .find_map(|v| std::env::var_os(v).filter(|p| !p.is_empty()))
            .map(PathBuf::from);
        let root = from_env.unwrap_or_else(|| {
            cwd.ancestors()
                .find(|dir| dir.join(".git").exists())
                .unwrap_or(&cwd)
                .to_path_buf()
        });
        // The working directory is the real path (getcwd); the variables may name a symlink.
        let root = root.canonicalize().unwrap_or(root);
        RepoBase::new(root, cwd)
    }

    pub fn new(root: PathBuf, cwd: PathBuf) -> RepoBase {
        RepoBase { root, cwd }
    }

    /// `file` (as a finding names it: relative to the working directory, or absolute) relative
    /// to the repository root, `/`-separated; `None` when it is outside the root.
    pub fn relative(&self, file: &str) -> Option<String> {
        let file = file.replace('\\', "/");
        let mut abs = PathBuf::new();
        for part in self.cwd.join(&file).components() {
            match part {
                Component::CurDir => {}
                Component::ParentDir => {
                    abs.pop();
                }
                other => abs.push(other),
            }
        }
        let rel = abs.strip_prefix(&self.root).ok()?;
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        Some(parts.join("/"))
    }

    /// The repository path of `d`'s file, or the name it was given
    /// ([`Diagnostic::repo_path`]) when it is outside the root; `None` when `d` is not about a
    /// file.
    pub fn path(&self, d: &Diagnostic) -> Option<String> {
        let file = d.file.as_deref()?;
        self.relative(file).or_else(|| d.repo_path())
    }
}

/// `path` as a URI reference: every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`) and
/// `/` percent-encoded, so `%41`, `#`, `?` or a space in a file name names that file and no
/// other.
pub fn uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether `path` is absolute (a file outside the repository).
pub(crate) fn is_absolute(path: &str) -> bool {
    Path::new(path).is_absolute()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_relative_to_the_repository_root() {
        let base = RepoBase::new("/repo".into(), "/repo/sub/dir".into());
        let path = |f: &str| base.relative(f).unwrap_or_default();
        assert_eq!(path("models/x/config.json"), "sub/dir/models/x/config.json");
        assert_eq!(path("./a/../b.json"), "sub/dir/b.json");
        assert_eq!(path("../../top.json"), "top.json");
        assert_eq!(path("/repo/abs.json"), "abs.json");
        assert_eq!(base.relative("/elsewhere/x.json"), None);
        assert_eq!(base.relative("../../../out.json"), None);
    }

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(uri_path("a/%41 b#c?.json"), "a/%2541%20b%23c%3F.json");
        assert_eq!(uri_path("ü/x-y_z~.json"), "%C3%BC/x-y_z~.json");
    }
}
