//! What a launch line names, as found: where each model is ([`Location`]), the configs read
//! for checkpoint engines, and the GGUF headers read for llama.cpp and koboldcpp
//! ([`GgufFiles`]). The data `locate` and `gguf` fill and `models` checks; kept apart from
//! them so that each reads it without reaching into the other.

use std::path::PathBuf;

use serde::Serialize;

use crate::config::ConfigFile;
use crate::diagnostic::Diagnostic;
use crate::gguf::GgufHeader;

pub use dflash_check_core::launch::rules::GgufModel;

/// How a model named in the command was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LocationKind {
    /// A directory on this machine (as written, relative to the `--file`, or `--drafter`/`--target`).
    Local,
    /// A Hub repo, read through the Hub client (fresh, or from the cache: see `freshness`).
    Hub,
    /// No separate drafter: the draft module is part of the target (MTP, fused DSpark).
    Fused,
    /// Nothing to find (no drafter for n-gram methods; no target named).
    None,
    /// Named, but could not be read: `note` says why.
    Unavailable,
}

impl LocationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LocationKind::Local => "local",
            LocationKind::Hub => "hub",
            LocationKind::Fused => "fused",
            LocationKind::None => "none",
            LocationKind::Unavailable => "unavailable",
        }
    }
}

/// Where a model named in the command was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    /// As written in the command.
    pub given: Option<String>,
    pub kind: LocationKind,
    /// The config file read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The revision asked for (`main` when the command names none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The commit the Hub (or its cache) resolved it to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha: Option<String>,
    /// `hub` (asked now) or `cache`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freshness: Option<String>,
    /// Provenance, or why it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Location {
    pub(super) fn new(given: Option<&str>, kind: LocationKind) -> Location {
        Location {
            given: given.map(str::to_string),
            kind,
            path: None,
            repo: None,
            revision: None,
            sha: None,
            freshness: None,
            note: None,
        }
    }
}

/// What was found.
pub struct Found {
    pub drafter: Location,
    pub target: Location,
    /// The drafter's config (the target's own for a fused draft module).
    pub drafter_config: Option<ConfigFile>,
    /// The target's config, when it could be read.
    pub target_config: Option<ConfigFile>,
    /// The flag that names the target (`model`, `--model-path`), where its findings point.
    pub target_flag: &'static str,
    /// Warnings about what could not be read.
    pub diagnostics: Vec<Diagnostic>,
    /// llama.cpp and koboldcpp: the GGUF files read (the configs above are then none).
    pub gguf: Option<GgufFiles>,
}

/// A GGUF model the command names, read or not (from the Hub by `hub_gguf`, from a local file
/// by `gguf`).
pub(super) struct Read {
    pub location: Location,
    pub header: Option<(PathBuf, GgufHeader)>,
}

/// The GGUF files a llama.cpp or koboldcpp line names (target and draft), read as headers.
pub struct GgufFiles {
    pub(super) target: Read,
    pub(super) draft: Read,
}

impl GgufFiles {
    /// The draft's header facts the launch rules read, with its vocabulary compared with the
    /// target's when both files carry a token list (what `draft-mtp` never checks itself).
    pub fn draft_model(&self) -> Option<GgufModel> {
        let mut draft = model(&self.draft)?;
        if let (Some((dp, dh)), Some((tp, th))) = (&self.draft.header, &self.target.header) {
            draft.vocabulary = compare_vocabularies((dp, dh), (tp, th));
        }
        Some(draft)
    }

    /// The target's layer count as a GGUF draft's target layers are judged against.
    pub fn target_layers(&self) -> Option<crate::weights::GgufTarget> {
        let (_, header) = self.target.header.as_ref()?;
        crate::weights::GgufTarget::of_gguf(header)
    }

    /// The target's header facts the launch rules read.
    pub fn target_model(&self) -> Option<GgufModel> {
        model(&self.target)
    }

    /// The target's vocabulary size (its token list's length).
    pub fn target_vocab(&self) -> Option<u64> {
        self.target
            .header
            .as_ref()
            .and_then(|(_, h)| h.tokenizer().vocab_size())
            .map(|n| n as u64)
    }
}

/// The draft's vocabulary (`tokenizer.ggml.*`) against the target's; `None` when a file has no
/// token list.
pub(super) fn compare_vocabularies(
    draft: (&std::path::Path, &GgufHeader),
    target: (&std::path::Path, &GgufHeader),
) -> Option<crate::vocab::Comparison> {
    let shown = |p: &std::path::Path| p.display().to_string();
    let here = crate::vocab::gguf::from_header(draft.1, shown(draft.0))?;
    let there = crate::vocab::gguf::from_header(target.1, shown(target.0))?;
    Some(crate::vocab::compare(&here, &there))
}

fn model(read: &Read) -> Option<GgufModel> {
    read.header
        .as_ref()
        .map(|(p, h)| GgufModel::from_header(h, p.display().to_string()))
}
