//! llama.cpp and koboldcpp lines: their models are GGUF files, not directories with a
//! `config.json`, so they are located and read here instead of through the drafter pipeline.
//!
//! The target (`-m`, `--model`) and the draft (`-md`, `--spec-draft-model`, koboldcpp's
//! `--draftmodel`) are read as headers only (the core's GGUF reader: metadata and the tensor
//! table, never the tensor data), from the path the command gives (relative to the `--file`'s
//! directory, through `--volume` for a container path) or from `--target FILE` /
//! `--drafter FILE`. A model named as a Hub repo (`-hf`, `-hfd`) is read by `hub_gguf`: the
//! file llama.cpp would load, chosen by its rule, its header only, by range requests; a repo
//! that cannot be had is a `launch-*-unavailable` warning that says why, and the rules that
//! need it are listed as skipped. With no draft named and a `--spec-type` that loads a sidecar,
//! the sidecar in the target's repo is the draft, as llama.cpp takes it. A file that exists but
//! is not a readable GGUF is bad input (exit 2), as in `weights`.
//!
//! When the draft is a plain language model (what `draft-simple` and koboldcpp's
//! `--draftmodel` run), its vocabulary is compared with the target's by token text
//! (`vocab::gguf::from_header`, `vocab::compare`) and lint's `draft-model-*` rules judge the
//! comparison with the engine's severities; then the launch rules run with the draft's header
//! facts (`launch::rules::GgufModel`).

use std::path::{Path, PathBuf};

use super::found::{Found, GgufFiles, Location, LocationKind, Read};
use super::hub_gguf;
use super::locate::unavailable;
use super::{CheckOptions, Launch, LaunchCode};
use crate::diagnostic::Diagnostic;
use crate::family::Family;
use crate::gguf::{self, GgufHeader};
use crate::rules::LintOptions;
use crate::target::TargetContext;
use crate::Result;

pub use dflash_check_core::launch::rules::GgufModel;

/// Reads the GGUF model named `given` (or the file given by `--drafter`/`--target`).
fn read(
    given: Option<&str>,
    on_hub: bool,
    file: Option<(&Path, &'static str)>,
    options: &CheckOptions,
) -> Result<Read> {
    if on_hub {
        // Not reached: a model on the Hub is read by `hub_gguf`.
        return Ok(Read {
            location: Location::new(given, LocationKind::Unavailable),
            header: None,
        });
    }
    let path = match (file, given) {
        (Some((f, _)), _) => f.to_path_buf(),
        (None, None) => {
            return Ok(Read {
                location: Location::new(None, LocationKind::None),
                header: None,
            })
        }
        (None, Some(g)) => {
            // Not `InputRef::engine`: llama.cpp's -m/-md is always a file path (the Hub is only
            // -hf/-hfd), so a missing `models/x.gguf` is a missing file, never a repo id.
            let mapped = PathBuf::from(super::volume::resolve(g, &options.volumes));
            match &options.base_dir {
                Some(base) if mapped.is_relative() && !mapped.exists() => base.join(&mapped),
                _ => mapped,
            }
        }
    };
    let mut loc = Location::new(given, LocationKind::Unavailable);
    if !path.exists() {
        loc.note = Some(format!("no such file: {}", path.display()));
        return Ok(Read {
            location: loc,
            header: None,
        });
    }
    if path.is_dir() {
        loc.note = Some(format!(
            "{} is a directory; llama.cpp loads one .gguf file: name the file",
            path.display()
        ));
        return Ok(Read {
            location: loc,
            header: None,
        });
    }
    // A file that is there but is no readable GGUF is bad input, as in `weights FILE.gguf`.
    let header = gguf::read_path(&path, gguf::Limits::default())?;
    loc.kind = LocationKind::Local;
    loc.path = Some(path.display().to_string());
    if let Some((_, flag)) = file {
        loc.note = Some(flag.into());
    }
    Ok(Read {
        location: loc,
        header: Some((path, header)),
    })
}

/// Whether the draft runs as a plain language model whose ids the target verifies: koboldcpp's
/// `--draftmodel`, llama.cpp's `draft-simple`, or no type given for a draft with no head of its
/// own (llama.cpp then drafts nothing, which `launch-llama-draft-not-used` says; the
/// vocabulary is still what `--spec-type draft-simple` would need).
fn runs_as_draft_model(launch: &Launch, draft: &GgufModel) -> bool {
    // The line's method as llama.cpp runs it (koboldcpp's --draftmodel is draft-simple).
    match launch.method() {
        Some(m) => m.split(',').any(|t| t.trim() == "draft-simple"),
        None => draft.inferred_type.is_none(),
    }
}

/// The draft's vocabulary against the target's, judged by lint's `draft-model-*` rules with
/// the engine's severities; `None` when a file has no token list to compare.
fn vocabulary(
    launch: &Launch,
    draft: (&Path, &GgufHeader),
    target: (&Path, &GgufHeader),
) -> Result<Option<Vec<Diagnostic>>> {
    let Some(comparison) = super::found::compare_vocabularies(draft, target) else {
        return Ok(None);
    };
    // The draft-model rules read the comparison; the config they run on states only what a
    // GGUF header says in config.json's terms, named after the draft file.
    let config_text = serde_json::json!({
        "model_type": draft.1.architecture().unwrap_or("unknown"),
        "vocab_size": comparison.here_len,
    })
    .to_string();
    let config = crate::config::parse(draft.0, config_text.as_bytes())?;
    let mut target_cx = TargetContext::none();
    target_cx.vocab = Some(comparison);
    let options = LintOptions {
        family: Some(Family::Draft),
        engine: Some(launch.engine.into()),
        ..LintOptions::default()
    };
    let report = crate::rules::lint_config(&config, &options, &target_cx)?;
    Ok(Some(
        report
            .findings
            .into_iter()
            .filter(|d| d.code.as_str().starts_with("draft-model-"))
            .collect(),
    ))
}

/// The draft against its target: a plain draft model's vocabulary compared (its findings, and
/// whether the comparison was made); a head (DFlash, DSpark, MTP, EAGLE-3) is judged by its
/// metadata and K only, and its fit to the target is named as not checked.
fn draft_against_target(
    launch: &Launch,
    (draft, draft_model): (&Read, Option<&GgufModel>),
    target: &Read,
    options: &CheckOptions,
    not_checked: &mut Vec<String>,
) -> Result<(Vec<Diagnostic>, bool)> {
    if let Some(model) = draft_model.filter(|m| !runs_as_draft_model(launch, m)) {
        let kind = model.inferred_type.unwrap_or("draft head");
        // A head read from the Hub has no local path to give `weights`: its download has one.
        let weights = match model.file.strip_prefix("hf://") {
            Some(rest) => {
                let mut parts = rest.splitn(3, '/');
                let (org, name, file) = (parts.next(), parts.next(), parts.next());
                format!(
                    "`hf download {}/{} {}` and `dflash-check weights` on the file check",
                    org.unwrap_or_default(),
                    name.unwrap_or_default(),
                    file.unwrap_or_default()
                )
            }
            None => format!("`dflash-check weights {}` checks", model.file),
        };
        not_checked.push(format!(
            "the {kind} draft {} against its target's hidden size: not compared for a GGUF head (its target \
             layers are, against the target GGUF's layers, and an MTP head's vocabulary under draft-mtp); \
             {weights} the head's own tensors",
            model.file
        ));
        return Ok((Vec::new(), false));
    }
    match (&draft.header, &target.header) {
        (Some((dp, dh)), Some((tp, th))) => match vocabulary(launch, (dp, dh), (tp, th))? {
            Some(found) => return Ok((found, true)),
            None => not_checked.push(
                "the draft's vocabulary against the target's: a GGUF without tokenizer.ggml.tokens"
                    .to_string(),
            ),
        },
        (None, _) if launch.drafter.is_none() && options.drafter_dir.is_none() => {}
        _ => not_checked.push(
            "the draft's vocabulary against the target's (draft-model-*): both GGUF files are needed"
                .to_string(),
        ),
    }
    Ok((Vec::new(), false))
}

/// One model of the command: `--target`/`--drafter FILE` first, then a Hub repo, then a path.
fn read_one(
    launch: &Launch,
    role: hub_gguf::Role,
    options: &CheckOptions,
) -> Result<hub_gguf::FromHub> {
    let (given, on_hub, file) = match role {
        hub_gguf::Role::Target => (
            launch.target.as_deref(),
            launch.llama.target_on_hub,
            options.target_dir.as_deref().map(|p| (p, "--target")),
        ),
        hub_gguf::Role::Draft => (
            launch.drafter.as_deref(),
            launch.llama.draft_on_hub,
            options.drafter_dir.as_deref().map(|p| (p, "--drafter")),
        ),
    };
    match (file, given) {
        (None, Some(g)) if on_hub => hub_gguf::read(g, role, launch, options),
        _ => Ok(hub_gguf::FromHub {
            read: read(given, false, file, options)?,
            listing: None,
        }),
    }
}

/// The target and the draft: as named, or the draft a target repo's sidecar provides.
fn read_both(launch: &Launch, options: &CheckOptions) -> Result<(Read, Read)> {
    let target = read_one(launch, hub_gguf::Role::Target, options)?;
    let draft = read_one(launch, hub_gguf::Role::Draft, options)?.read;
    let named = launch.drafter.is_some() || options.drafter_dir.is_some();
    // Only a target read from the Hub has a listing to take a sidecar from (llama.cpp's -hf).
    if !named {
        if let Some(sidecar) = hub_gguf::target_sidecar(launch, &target, options)? {
            return Ok((target.read, sidecar));
        }
    }
    Ok((target.read, draft))
}

/// Locates a llama.cpp or koboldcpp line's models: the GGUF files it names (or a target repo's
/// sidecar), each unavailable one a warning that says why.
pub fn locate(launch: &Launch, options: &CheckOptions) -> Result<Found> {
    let (drafter_flag, target_flag) = launch.engine.code().model_flags(launch);
    let (target, draft) = read_both(launch, options)?;
    let mut diagnostics = Vec::new();
    if target.location.kind == LocationKind::Unavailable {
        diagnostics.push(unavailable(
            launch,
            LaunchCode::TargetUnavailable,
            "target",
            &target.location,
            target_flag,
        ));
    }
    if draft.location.kind == LocationKind::Unavailable {
        diagnostics.push(unavailable(
            launch,
            LaunchCode::DrafterUnavailable,
            "draft model",
            &draft.location,
            drafter_flag,
        ));
    }
    Ok(Found {
        drafter: draft.location.clone(),
        target: target.location.clone(),
        drafter_config: None,
        target_config: None,
        target_flag,
        diagnostics,
        gguf: Some(GgufFiles { target, draft }),
    })
}

/// What the GGUF files said: each file's own checks (as `weights FILE.gguf` runs them), the
/// draft's vocabulary against the target's, and what could not be checked.
pub(super) struct Checked {
    pub findings: Vec<Diagnostic>,
    pub not_checked: Vec<String>,
    pub vocabulary_compared: bool,
}

/// Checks the GGUF files of a llama.cpp or koboldcpp line.
pub(super) fn check_models(
    launch: &Launch,
    files: &GgufFiles,
    options: &CheckOptions,
) -> Result<Checked> {
    let mut not_checked = Vec::new();
    let draft_model = files.draft_model();
    let (mut findings, vocabulary_compared) = draft_against_target(
        launch,
        (&files.draft, draft_model.as_ref()),
        &files.target,
        options,
        &mut not_checked,
    )?;
    // Each file's own tensors and metadata, as `weights FILE.gguf` checks them (an MTP draft
    // whose next-n layer index is wrong fails here, where llama.cpp fails to load it).
    // The draft's target layers are judged against the target's layer count.
    let target_layers = files.target_layers();
    for (read, target) in [
        (&files.target, None),
        (&files.draft, target_layers.as_ref()),
    ] {
        if let Some((path, header)) = &read.header {
            let (headers, config) = crate::weights::gguf::tables(path, header)?;
            findings
                .extend(crate::weights::run_gguf(&config, &headers, header, target).diagnostics);
        }
    }
    Ok(Checked {
        findings,
        not_checked,
        vocabulary_compared,
    })
}
