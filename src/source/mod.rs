//! Where an authoritative config comes from, and how sure we are of it.
//!
//! Every comparison is against an [`Authority`]: a local file the user named (`--against`), a
//! built-in snapshot compiled into the tool (offline, gated repos), or a Hub repo at a commit
//! (`--from-hub`, fresh or from the cache). The authority carries its provenance so every
//! report can say exactly what it compared against.

pub mod choose;
pub mod file;
pub mod hub;

use serde::Serialize;

/// The built-in snapshots: compiled-in data, the core's (`crate::builtin`), so that the core's
/// checks can name them; made an [`Authority`] here ([`SnapshotAuthority`]).
pub use crate::builtin;
use crate::config::{ConfigFile, TargetFacts};
use crate::tokens::TokenTable;

/// What kind of authority a config was compared against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthorityKind {
    /// A file on disk named by `--against`.
    File,
    /// A snapshot compiled into this binary: not the live Hub.
    Builtin,
    /// Asked the Hub now.
    Hub,
    /// The local Hub cache, because the Hub was not asked (offline) or could not be reached.
    Cache,
}

impl AuthorityKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthorityKind::File => "file",
            AuthorityKind::Builtin => "builtin",
            AuthorityKind::Hub => "hub",
            AuthorityKind::Cache => "cache",
        }
    }
}

/// An authoritative config and everything known about where it came from.
#[derive(Debug, Clone)]
pub struct Authority {
    pub kind: AuthorityKind,
    /// A repo id (`z-lab/Qwen3.6-27B-DFlash`) or a file path.
    pub id: String,
    /// The revision asked for (branch, tag, sha), when there is one.
    pub revision: Option<String>,
    /// The commit the config was read at, when known.
    pub sha: Option<String>,
    /// One sentence: where the values were recorded, when, how fresh.
    pub provenance: String,
    /// Why this authority was chosen when the user did not name one.
    pub matched_by: Option<String>,
    /// The config, parsed.
    pub config: ConfigFile,
    /// The config's bytes exactly as served (for `fix --exact`), shared by the clones.
    pub bytes: std::sync::Arc<[u8]>,
    /// Facts about the drafter's target model, when the authority knows them.
    pub target: Option<TargetFacts>,
    /// Token table of the target, when the authority knows it.
    pub tokens: Option<std::sync::Arc<TokenTable>>,
    /// How to name this authority again on a command line (`--from-hub X@sha`).
    pub cli_args: Vec<String>,
}

impl Authority {
    /// One line for people: `built-in snapshot of z-lab/Qwen3.6-27B-DFlash (...)`.
    pub fn describe(&self) -> String {
        let rev = match (&self.sha, &self.revision) {
            (Some(sha), Some(rev)) if sha != rev => format!(" at {sha} ({rev})"),
            (Some(sha), _) => format!(" at {sha}"),
            (None, Some(rev)) => format!(" at {rev}"),
            (None, None) => String::new(),
        };
        match self.kind {
            AuthorityKind::File => format!("file {}", self.id),
            AuthorityKind::Builtin => {
                format!("built-in snapshot of {}{rev} (not the live Hub)", self.id)
            }
            AuthorityKind::Hub => format!("{}{rev}, fresh from the Hub", self.id),
            AuthorityKind::Cache => format!("{}{rev}, from the local Hub cache", self.id),
        }
    }
}

/// A built-in snapshot as the authority a command compares with.
pub trait SnapshotAuthority {
    fn authority(&self, matched_by: Option<String>) -> Authority;
}

impl SnapshotAuthority for builtin::Snapshot {
    fn authority(&self, matched_by: Option<String>) -> Authority {
        let config = self.config_file().clone();
        Authority {
            kind: AuthorityKind::Builtin,
            id: self.repo.to_string(),
            revision: self.revision.map(str::to_string),
            sha: self.revision.map(str::to_string),
            provenance: format!("{}; recorded {}", self.provenance, builtin::RECORDED),
            matched_by,
            config,
            bytes: self.config.as_bytes().into(),
            target: Some(self.target.facts()),
            tokens: Some(self.target.tokens()),
            cli_args: vec!["--snapshot".into(), self.repo.to_string()],
        }
    }
}
