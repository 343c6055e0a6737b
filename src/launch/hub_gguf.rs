//! A llama.cpp model named as a Hub repo (`-hf OWNER/REPO[:TAG]`, `-hfd`, their long forms and
//! `LLAMA_ARG_*` variables): the repo's files listed at its current commit
//! ([`crate::hub::list_repo_files`], as llama.cpp lists them), the file llama.cpp would load
//! chosen by its own rule ([`dflash_check_core::launch::hf`]), and only that file's GGUF header
//! read, by range requests ([`crate::hub::read_start`]), into the same [`GgufHeader`] a local
//! file gives: the vocabulary comparison and the `launch-llama-*` rules then run as on disk.
//!
//! Listing and header are cached per commit sha; `--offline` / `HF_HUB_OFFLINE` read the cache
//! only. A model's read (the listing, then its header's ranges) has one `--timeout` deadline,
//! not one per request: a server answering each range just inside the timeout held
//! `launch --timeout 3` for 135 s (issue 44). A repo that cannot be had (not found, gated, unreachable, not cached offline), a tag
//! that matches no file, a repo without GGUF files: the model is unavailable, a warning that
//! says why, as for a vLLM drafter on the Hub. An answer that is no valid answer (a listing over
//! its caps, a `Content-Range` that lies, a header cut short or not GGUF) is bad input: exit 2.

use std::path::PathBuf;
use std::time::Instant;

use dflash_check_core::launch::hf::{self, Chosen, NotChosen};

use super::found::{Location, LocationKind, Read};
use super::{CheckOptions, Launch};
use crate::gguf::{self, GgufHeader};
use crate::hub::{self, HubError, HubErrorKind, RepoListing, RepoRef};
use crate::Result;

/// Which model of the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Target,
    Draft,
}

/// A repo read: the model, and the listing (for a sidecar in the target's repo).
pub(super) struct FromHub {
    pub read: Read,
    pub listing: Option<(RepoListing, String)>,
}

fn unavailable(mut loc: Location, why: String) -> FromHub {
    loc.note = Some(why);
    FromHub {
        read: Read {
            location: loc,
            header: None,
        },
        listing: None,
    }
}

/// A Hub failure: a bad answer is bad input (exit 2); anything else makes the model unavailable.
fn failure(loc: Location, e: HubError) -> Result<FromHub> {
    match e.kind {
        HubErrorKind::BadResponse | HubErrorKind::TooLarge | HubErrorKind::Io => Err(e.into()),
        _ => Ok(unavailable(
            loc,
            match e.hint {
                Some(h) => format!("{} ({h})", e.message),
                None => e.message,
            },
        )),
    }
}

fn gguf_files(listing: &RepoListing) -> String {
    let all: Vec<String> = listing
        .paths()
        .into_iter()
        .filter(|p| p.ends_with(".gguf"))
        .map(|p| format!("`{p}`"))
        .collect();
    match all.len() {
        0 => "it has no .gguf file".to_string(),
        n if n > 12 => format!(
            "its GGUF files: {} and {} more",
            all[..12].join(", "),
            n - 12
        ),
        _ => format!("its GGUF files: {}", all.join(", ")),
    }
}

fn not_chosen(listing: &RepoListing, tag: &str, why: NotChosen) -> String {
    let at = format!(
        "`{}` at {}",
        listing.repo,
        &listing.sha[..12.min(listing.sha.len())]
    );
    match why {
        NotChosen::Preset => format!(
            "{at} ships preset.ini: llama-server runs it as a router of its presets, not as one model"
        ),
        NotChosen::NoSuchFile(f) => format!(
            "`{f}` is not a file of {at} (llama.cpp: file not found in repository); {}",
            gguf_files(listing)
        ),
        NotChosen::NoMatch if tag.is_empty() => format!(
            "no GGUF model file in {at} (llama.cpp: no GGUF files found in repository); {}",
            gguf_files(listing)
        ),
        NotChosen::NoMatch => format!(
            "no GGUF model file of {at} matches the tag `{tag}` (llama.cpp matches `{tag}[.-]` in the path, \
             case-insensitively, and fails to start); {}",
            gguf_files(listing)
        ),
    }
}

/// The file of `listing` llama.cpp loads for this model of the command.
fn choose(
    launch: &Launch,
    role: Role,
    listing: &RepoListing,
    tag: &str,
) -> std::result::Result<Chosen, NotChosen> {
    let paths = listing.paths();
    match role {
        Role::Target => hf::target_file(&paths, tag, launch.llama.target_hf_file.as_deref()),
        Role::Draft => hf::draft_file(
            &paths,
            tag,
            launch.llama.draft_hf_file.as_deref(),
            &launch.llama.types,
        ),
    }
}

/// Reads the model `given` (`OWNER/REPO[:TAG]`) names on the Hub.
pub(super) fn read(
    given: &str,
    role: Role,
    launch: &Launch,
    options: &CheckOptions,
) -> Result<FromHub> {
    let mut loc = Location::new(Some(given), LocationKind::Unavailable);
    let (repo, tag) = match hf::split_repo_tag(given) {
        Ok(parts) => parts,
        Err(why) => return Ok(unavailable(loc, why)),
    };
    let hf_file = match role {
        Role::Target => launch.llama.target_hf_file.as_deref(),
        Role::Draft => launch.llama.draft_hf_file.as_deref(),
    };
    // With a file named, llama.cpp never compiles the tag.
    match hf::tag_problem(&tag).filter(|_| hf_file.is_none()) {
        Some(hf::TagProblem::Invalid(why)) => return Err(invalid_tag(given, &tag, why)),
        Some(hf::TagProblem::Unevaluated) => {
            let why = format!(
                "the tag `{tag}` is a pattern llama.cpp compiles (as `{tag}[.-]`) but this tool \
                 does not evaluate (a lookahead or a back-reference): which file llama.cpp \
                 loads was not decided; name it with --hf-file to have it checked"
            );
            return Ok(unavailable(loc, why));
        }
        None => {}
    }
    loc.repo = Some(repo.clone());
    let repo_ref: RepoRef = match repo.parse() {
        Ok(r) => r,
        Err(e) => return failure(loc, e),
    };
    let Some(inputs) = &options.inputs else {
        return Ok(unavailable(
            loc,
            "a Hub repo, and the Hub was not asked".into(),
        ));
    };
    let settings = inputs.settings()?;
    // One deadline for the model's whole read: the listing and every range of its header.
    let deadline = Some(Instant::now() + settings.timeout.value);
    let listing = match hub::list_repo_files(settings, &repo_ref, deadline) {
        Ok(l) => l,
        Err(e) => return failure(loc, e),
    };
    loc.revision = Some(listing.branch.clone());
    loc.sha = Some(listing.sha.clone());
    loc.freshness = Some(listing.freshness.label().to_string());
    let chosen = match choose(launch, role, &listing, &tag) {
        Ok(c) => c,
        Err(why) => return Ok(unavailable(loc, not_chosen(&listing, &tag, why))),
    };
    let why = why_chosen(&tag, &chosen);
    let mut from = file(settings, loc, &listing, &chosen, &why, deadline)?;
    from.listing = Some((listing, tag));
    Ok(from)
}

/// A tag llama.cpp cannot compile: the command would not start, so it is bad input (exit 2).
fn invalid_tag(
    given: &str,
    tag: &str,
    why: dflash_check_core::launch::ecma::Refused,
) -> crate::Error {
    crate::Error::new(format!(
        "the model `{given}`: its tag `{tag}` is not a pattern llama.cpp can compile: it looks \
         for the file with `std::regex(\"{tag}[.-]\", icase)` (common/download.cpp at \
         0c1e570, find_best_model), which throws {} — llama-server stops with \"failed to \
         fetch model metadata\"",
        why.describe()
    ))
    .with_hint(
        "a tag is a quantization name such as Q4_K_M, q8_0 or UD-Q4_K_XL, matched \
         case-insensitively as a regular expression: escape a regex character with a backslash, \
         drop the tag, or name the file with --hf-file",
    )
}

fn why_chosen(tag: &str, chosen: &Chosen) -> String {
    match (chosen.sidecar, tag) {
        (Some(kind), _) => format!(
            "the {} sidecar llama.cpp loads as the draft",
            kind.spec_type()
        ),
        (None, "") => {
            "the file llama.cpp picks without a tag (Q4_K_M, else Q8_0, else the first model file)"
                .into()
        }
        (None, t) => format!("the file llama.cpp picks for the tag `{t}`"),
    }
}

/// Reads the header of `chosen` in `listing` into a located model, every request by
/// `deadline`.
fn file(
    settings: &hub::HubSettings,
    mut loc: Location,
    listing: &RepoListing,
    chosen: &Chosen,
    why: &str,
    deadline: Option<Instant>,
) -> Result<FromHub> {
    let size = listing.size_of(&chosen.file).unwrap_or(0);
    let limits = gguf::Limits::default();
    let display = format!("hf://{}/{}", listing.repo, chosen.file);
    let ask = hub::RangedAsk {
        repo: &listing.repo,
        sha: &listing.sha,
        filename: &chosen.file,
        size,
        cap: limits.max_header_bytes,
        deadline,
    };
    let parse = |r: &mut dyn std::io::Read| gguf::parse(r, &display, size, limits);
    let (parsed, stats) = match hub::read_start(settings, &ask, parse) {
        Ok(done) => done,
        Err(e) => return failure(loc, e),
    };
    let header: GgufHeader = parsed?;
    loc.kind = LocationKind::Hub;
    loc.path = Some(display.clone());
    loc.note = Some(match stats.requests {
        0 => format!("`{}`, {why}; its header from the cache", chosen.file),
        n => format!(
            "`{}`, {why}; its header read by {n} range request(s), {} bytes",
            chosen.file, stats.body_bytes
        ),
    });
    Ok(FromHub {
        read: Read {
            location: loc,
            header: Some((PathBuf::from(display), header)),
        },
        listing: None,
    })
}

/// With no draft named: the sidecar of a requested `--spec-type` in the target's repo, which
/// llama.cpp loads as the draft (`common/arg.cpp` at 0c1e570, lines 640-677).
pub(super) fn target_sidecar(
    launch: &Launch,
    target: &FromHub,
    options: &CheckOptions,
) -> Result<Option<Read>> {
    let (Some((listing, tag)), Some((path, _))) = (&target.listing, &target.read.header) else {
        return Ok(None);
    };
    let Some(inputs) = &options.inputs else {
        return Ok(None);
    };
    let model = path
        .to_string_lossy()
        .strip_prefix(&format!("hf://{}/", listing.repo))
        .unwrap_or_default()
        .to_string();
    let Some(chosen) = hf::target_sidecar(&listing.paths(), &model, tag, &launch.llama.types)
    else {
        return Ok(None);
    };
    let mut loc = Location::new(
        target.read.location.given.as_deref(),
        LocationKind::Unavailable,
    );
    loc.repo = Some(listing.repo.clone());
    loc.revision = Some(listing.branch.clone());
    loc.sha = Some(listing.sha.clone());
    loc.freshness = Some(listing.freshness.label().to_string());
    let why = format!(
        "the {} sidecar in the target's repo, which llama.cpp loads as the draft when none is named",
        chosen.sidecar.map(|s| s.spec_type()).unwrap_or("draft")
    );
    let settings = inputs.settings()?;
    let deadline = Some(Instant::now() + settings.timeout.value);
    Ok(Some(
        file(settings, loc, listing, &chosen, &why, deadline)?.read,
    ))
}
