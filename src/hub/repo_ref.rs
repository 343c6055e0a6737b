//! `org/name[@revision]`: a model repo on the Hub, optionally at a branch, tag or commit sha.
//!
//! Validated as strictly as the Hub does, because the parts become paths in the cache
//! (`models--org--name/refs/<revision>`) and must never escape it.

use std::fmt;
use std::str::FromStr;

use super::error::{HubError, HubErrorKind};

/// Longest repo name (and, here, org name) the Hub accepts.
pub const MAX_NAME_LEN: usize = 96;
/// Longest revision we accept (git refs are effectively limited by file names).
pub const MAX_REVISION_LEN: usize = 255;

/// A model repo and an optional revision.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RepoRef {
    /// `org/name`
    pub repo: String,
    /// Branch, tag or 40-hex commit sha; `None` means `main`.
    pub revision: Option<String>,
}

// Pure, and a launch rule needs it (an unpinned drafter revision): the core's.
pub use crate::text::is_commit_sha;

fn bad(input: &str, why: impl fmt::Display) -> HubError {
    HubError::new(
        HubErrorKind::InvalidInput,
        format!("invalid Hub repo `{}`: {why}", input.escape_debug()),
    )
    .with_hint("expected ORG/NAME or ORG/NAME@REVISION, e.g. z-lab/Qwen3-8B-DFlash-b16@main")
}

fn check_part(input: &str, what: &str, part: &str) -> Result<(), HubError> {
    if part.is_empty() {
        return Err(bad(input, format_args!("the {what} is empty")));
    }
    if part.len() > MAX_NAME_LEN {
        return Err(bad(
            input,
            format_args!("the {what} is longer than {MAX_NAME_LEN} characters"),
        ));
    }
    if let Some(c) = part
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(bad(
            input,
            format_args!(
                "the {what} `{}` contains `{}`; only A-Z a-z 0-9 . _ - are allowed",
                part.escape_debug(),
                c.escape_debug()
            ),
        ));
    }
    if part.contains("..") || part.contains("--") {
        return Err(bad(
            input,
            format_args!("the {what} `{part}` contains `..` or `--`"),
        ));
    }
    if part.starts_with(['.', '-']) || part.ends_with(['.', '-']) {
        return Err(bad(
            input,
            format_args!("the {what} `{part}` starts or ends with `.` or `-`"),
        ));
    }
    Ok(())
}

/// Checks a revision (branch, tag, `refs/pr/N` or sha) for use in a URL and as a cache path.
pub fn check_revision(input: &str, rev: &str) -> Result<(), HubError> {
    let bad_rev = |why: String| {
        HubError::new(
            HubErrorKind::InvalidInput,
            format!(
                "invalid revision `{}` in `{}`: {why}",
                rev.escape_debug(),
                input.escape_debug()
            ),
        )
        .with_hint("use a branch or tag name, or a full 40-character commit sha")
    };
    if rev.is_empty() {
        return Err(bad_rev("it is empty".into()));
    }
    if rev.len() > MAX_REVISION_LEN {
        return Err(bad_rev(format!(
            "it is longer than {MAX_REVISION_LEN} characters"
        )));
    }
    if let Some(c) = rev.chars().find(|c| {
        c.is_control()
            || c.is_whitespace()
            || matches!(c, '\\' | '~' | '^' | ':' | '?' | '*' | '[' | '%')
    }) {
        return Err(bad_rev(format!("it contains `{}`", c.escape_debug())));
    }
    if rev.contains("..") || rev.contains("@{") || rev.contains("//") {
        return Err(bad_rev("it contains `..`, `@{` or `//`".into()));
    }
    if rev.starts_with(['/', '.', '-']) || rev.ends_with(['/', '.']) || rev.ends_with(".lock") {
        return Err(bad_rev(
            "it starts with `/`, `.` or `-`, or ends with `/`, `.` or `.lock`".into(),
        ));
    }
    if rev.split('/').any(|c| c.starts_with('.')) {
        return Err(bad_rev("a path component starts with `.`".into()));
    }
    Ok(())
}

impl RepoRef {
    /// The revision as it will be asked for: the given one, or `main`.
    pub fn revision_or_main(&self) -> &str {
        self.revision.as_deref().unwrap_or("main")
    }

    /// `(org, name)`.
    pub fn parts(&self) -> (&str, &str) {
        self.repo.split_once('/').unwrap_or(("", &self.repo))
    }
}

impl FromStr for RepoRef {
    type Err = HubError;

    fn from_str(input: &str) -> Result<Self, HubError> {
        let (repo, revision) = match input.split_once('@') {
            Some((repo, rev)) => (repo, Some(rev)),
            None => (input, None),
        };
        if repo.starts_with('/') {
            return Err(bad(
                input,
                "it starts with `/`; expected ORG/NAME, not a path",
            ));
        }
        let Some((org, name)) = repo.split_once('/') else {
            return Err(bad(input, "expected ORG/NAME with exactly one `/`"));
        };
        if name.contains('/') {
            return Err(bad(input, "expected ORG/NAME with exactly one `/`"));
        }
        check_part(input, "organisation", org)?;
        check_part(input, "name", name)?;
        if let Some(rev) = revision {
            check_revision(input, rev)?;
        }
        Ok(RepoRef {
            repo: repo.to_string(),
            revision: revision.map(str::to_string),
        })
    }
}

impl fmt::Display for RepoRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repo)?;
        if let Some(rev) = &self.revision {
            write!(f, "@{rev}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> RepoRef {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn parses_repo_and_revision() {
        assert_eq!(ok("z-lab/Qwen3-8B-DFlash-b16").revision, None);
        assert_eq!(ok("z-lab/Qwen3-8B-DFlash-b16").revision_or_main(), "main");
        let r = ok("z-lab/Qwen3.6-35B-A3B-DFlash@0123456789abcdef0123456789abcdef01234567");
        assert_eq!(r.repo, "z-lab/Qwen3.6-35B-A3B-DFlash");
        assert!(is_commit_sha(r.revision_or_main()));
        assert_eq!(
            ok("org/name@refs/pr/1").revision.as_deref(),
            Some("refs/pr/1")
        );
        assert_eq!(ok("org/name@v1.0").to_string(), "org/name@v1.0");
        assert_eq!(ok("org/name").parts(), ("org", "name"));
    }

    #[test]
    fn rejects_hostile_inputs_and_names_them() {
        for input in [
            "../x",
            "/abs",
            "/abs/x",
            "a/b/c",
            "a b/c",
            "org/name@../../x",
            "org/name@",
            "org/name@/etc",
            "org/name@a b",
            "org/name@a\nb",
            "org/name@a\\b",
            "org/..",
            "org/na..me",
            "org/na--me",
            "org\\x/name",
            "name",
            "",
            "/",
            "org/",
            "/name",
            "org/.hidden",
            "org/name@refs/../x",
            "org/name@.git",
        ] {
            let err = input.parse::<RepoRef>().expect_err(input);
            assert_eq!(err.kind, HubErrorKind::InvalidInput, "{input}");
            assert!(
                err.message.contains(&input.escape_debug().to_string()),
                "message should name `{input}`: {}",
                err.message
            );
        }
    }

    #[test]
    fn enforces_hub_length_limits() {
        let long = "a".repeat(MAX_NAME_LEN + 1);
        assert!(format!("org/{long}").parse::<RepoRef>().is_err());
        assert!(format!("org/{}", "a".repeat(MAX_NAME_LEN))
            .parse::<RepoRef>()
            .is_ok());
        let rev = "r".repeat(MAX_REVISION_LEN + 1);
        assert!(format!("org/name@{rev}").parse::<RepoRef>().is_err());
    }
}
