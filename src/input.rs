//! "A local path or a Hub repo": decided in one place, so that a typo is never sent to the Hub.
//!
//! Several arguments accept either (`lint PATH|REPO`, `weights PATH|REPO`, `--target DIR|REPO`).
//! Guessing from the text would send a mistyped folder name (`models/nothing`) to the Hub,
//! leaking a private name and answering "cannot reach the Hub" instead of "no such folder". So
//! a Hub repo is taken only in a form a typo cannot produce:
//!
//! - `hf://ORG/NAME[@REV]` (the prefix `huggingface_hub`'s file system uses), or
//! - `ORG/NAME@REV` with an explicit revision, when no such path exists.
//!
//! Anything else is a local path, and one that does not exist is an error that says so and
//! shows the explicit Hub form.

use std::path::{Path, PathBuf};

use crate::error::ErrorKind;
use crate::hub::RepoRef;
use crate::{Error, Result};

/// The prefix that makes an argument a Hub repo.
pub const HUB_PREFIX: &str = "hf://";

/// An input named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputRef {
    Local(PathBuf),
    Hub(RepoRef),
}

impl InputRef {
    /// Reads `arg`, given for `what` (`the drafter`, `--target`), by the rules of this module.
    pub fn parse(arg: &str, what: &str) -> Result<InputRef> {
        if let Some(rest) = arg.strip_prefix(HUB_PREFIX) {
            return rest.parse::<RepoRef>().map(InputRef::Hub).map_err(|e| {
                Error::new(format!(
                    "{what} `{arg}` is not a Hub repo id: {}",
                    e.message
                ))
                .kind(ErrorKind::Usage)
                .with_hint("write a Hub repo as hf://ORG/NAME or hf://ORG/NAME@REVISION")
            });
        }
        let path = Path::new(arg);
        if path.exists() || path.is_symlink() {
            return Ok(InputRef::Local(path.to_path_buf()));
        }
        if let Ok(repo) = arg.parse::<RepoRef>() {
            if repo.revision.is_some() {
                return Ok(InputRef::Hub(repo));
            }
        }
        let mut hint = "check the path".to_string();
        if arg.parse::<RepoRef>().is_ok() {
            hint = format!(
                "for a Hub repo, write {HUB_PREFIX}{arg} (or {arg}@REVISION); a bare ORG/NAME is \
                 read as a local path so that a mistyped folder is never sent to the Hub"
            );
        }
        Err(Error::new(format!(
            "{what} `{arg}` does not exist (no such file or directory)"
        ))
        .kind(ErrorKind::Usage)
        .with_hint(hint))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_hub_forms() {
        let hub = |s: &str| match InputRef::parse(s, "x").unwrap() {
            InputRef::Hub(r) => (r.repo, r.revision),
            other => panic!("{other:?}"),
        };
        assert_eq!(hub("hf://Qwen/Qwen3-8B"), ("Qwen/Qwen3-8B".into(), None));
        assert_eq!(
            hub("hf://Qwen/Qwen3-8B@main"),
            ("Qwen/Qwen3-8B".into(), Some("main".into()))
        );
        assert_eq!(
            hub("Qwen/Qwen3-8B@v1"),
            ("Qwen/Qwen3-8B".into(), Some("v1".into()))
        );
    }

    #[test]
    fn a_missing_bare_name_is_a_missing_path() {
        let e = InputRef::parse("models/nothing-here-at-all", "the drafter").unwrap_err();
        assert!(e.message.contains("does not exist"), "{}", e.message);
        assert!(e.hint.unwrap().contains("hf://models/nothing-here-at-all"));
    }

    #[test]
    fn an_existing_path_is_local() {
        assert_eq!(
            InputRef::parse(".", "x").unwrap(),
            InputRef::Local(".".into())
        );
    }
}
