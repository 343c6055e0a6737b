//! Finding the drafter and the target a launch command names, the way the engines do: a path
//! that exists is a local model; otherwise `org/name` is a Hub repo (both decided by
//! [`InputRef::engine`] and read by [`crate::input::Resolver`], the standard cache first,
//! offline honoured). A repo that cannot be read is a warning that names it and says why, never
//! a failure: the launch rules that do not need it still run. The target's facts and tokens are
//! not read here: the drafter pipeline (`crate::pipeline`) reads them once, for lint, the
//! comparison and the launch rules.

use std::path::Path;

pub use super::found::{Found, Location, LocationKind};
use super::parse::Launch;
use super::{info, CheckOptions, LaunchCode};
use crate::config::ConfigFile;
use crate::diagnostic::Diagnostic;
use crate::hub::RepoRef;
use crate::input::{EngineName, InputRef, Resolver, Role};
use crate::Result;

/// vLLM methods and SGLang algorithms that draft without a model of their own.
const MODEL_FREE: &[&str] = &["ngram", "ngram_gpu", "suffix", "NGRAM"];

/// Whether the engine would load `given` from the Hub: not a path that exists here, and an
/// `ORG/NAME` repo id. (`--drafter DIR` only says where to read a copy; the engine still loads
/// what the command names.)
pub fn names_hub_repo(given: &str, base: Option<&Path>) -> bool {
    matches!(InputRef::engine(given, base), EngineName::Hub(_))
}

/// Reads the config of a model named `given` (at `revision`, for a Hub repo).
fn read_model(
    given: &str,
    revision: Option<&str>,
    options: &CheckOptions,
    role: Role,
) -> Result<(Location, Option<ConfigFile>)> {
    let mut loc = Location::new(Some(given), LocationKind::Unavailable);
    let mapped = super::volume::resolve(given, &options.volumes);
    let mut repo = match InputRef::engine(&mapped, options.base_dir.as_deref()) {
        EngineName::Unreadable(why) => {
            loc.note = Some(why);
            return Ok((loc, None));
        }
        EngineName::Local(path) => {
            // A local model that exists but whose config is broken is bad input, as in `lint`.
            let config = Resolver::local_config(&path)?;
            loc.kind = LocationKind::Local;
            loc.path = Some(config.path.display().to_string());
            return Ok((loc, Some(config)));
        }
        EngineName::Hub(repo) => repo,
    };
    if repo.revision.is_none() {
        repo.revision = revision.map(str::to_string);
    }
    read_repo(loc, &repo, options, role)
}

/// Reads the config of a Hub repo the command (or `--target hf://…`) names.
fn read_repo(
    mut loc: Location,
    repo: &RepoRef,
    options: &CheckOptions,
    role: Role,
) -> Result<(Location, Option<ConfigFile>)> {
    loc.repo = Some(repo.repo.clone());
    loc.revision = Some(repo.revision_or_main().to_string());
    let Some(inputs) = &options.inputs else {
        loc.note = Some("not a local directory, and the Hub was not asked".into());
        return Ok((loc, None));
    };
    match inputs.hub_model(repo, role) {
        Ok((config, hub)) => {
            loc.kind = LocationKind::Hub;
            loc.sha = hub.sha;
            loc.freshness = Some(hub.freshness);
            loc.note = Some(hub.provenance);
            loc.path = Some(config.path.display().to_string());
            Ok((loc, Some(config)))
        }
        // A local config that cannot be read is bad input; a repo that cannot be had is a note.
        Err(e) if matches!(e.kind, crate::error::ErrorKind::Hub(_)) || role == Role::Drafter => {
            loc.note = Some(explain(e));
            Ok((loc, None))
        }
        Err(e) => Err(e),
    }
}

fn explain(e: crate::Error) -> String {
    match e.hint {
        Some(h) => format!("{} ({h})", e.message),
        None => e.message,
    }
}

/// A warning that a named model could not be read, at the name in the input file.
pub(super) fn unavailable(
    launch: &Launch,
    code: LaunchCode,
    what: &str,
    loc: &Location,
    flag: &str,
) -> Diagnostic {
    let name = loc.given.clone().unwrap_or_default();
    let why = loc.note.clone().unwrap_or_default();
    let mut d = Diagnostic::new(
        code,
        info(code),
        flag,
        format!("the {what} `{name}` could not be read: {why}"),
    );
    if let Some(file) = &launch.origin.file {
        d = d.file(file.clone());
        if let Some((line, column)) = launch.origin.find(None, &name) {
            d = d.span(line, column);
        }
    }
    d
}

/// Finds the drafter and the target of `launch`.
pub fn locate(launch: &Launch, options: &CheckOptions) -> Result<Found> {
    let mut diagnostics = Vec::new();
    let (drafter_flag, target_flag) = launch.engine.code().model_flags(launch);
    // The target first: a fused draft module is read from it.
    let (target, target_config) = locate_target(launch, options)?;
    if target.kind == LocationKind::Unavailable {
        diagnostics.push(unavailable(
            launch,
            LaunchCode::TargetUnavailable,
            "target",
            &target,
            target_flag,
        ));
    }
    let (drafter, drafter_config) = locate_drafter(launch, options, &target, &target_config)?;
    if drafter.kind == LocationKind::Unavailable {
        diagnostics.push(unavailable(
            launch,
            LaunchCode::DrafterUnavailable,
            "drafter",
            &drafter,
            drafter_flag,
        ));
    }
    let drafter_config = drafter_config.filter(|_| drafter.kind != LocationKind::None);
    Ok(Found {
        drafter,
        target,
        drafter_config,
        target_config,
        target_flag,
        diagnostics,
        gguf: None,
    })
}

/// A model given by `--target DIR` / `--drafter DIR`: read from the directory, whatever the
/// command names.
fn given_dir(
    dir: &Path,
    named: Option<&str>,
    flag: &str,
) -> Result<(Location, Option<ConfigFile>)> {
    let config = Resolver::local_config(dir)?;
    let mut loc = Location::new(named, LocationKind::Local);
    loc.path = Some(config.path.display().to_string());
    loc.note = Some(flag.into());
    Ok((loc, Some(config)))
}

/// The target: `--target DIR` (or a Hub repo in `doctor --target`), else the model the
/// command serves.
fn locate_target(
    launch: &Launch,
    options: &CheckOptions,
) -> Result<(Location, Option<ConfigFile>)> {
    if let Some(repo) = &options.target_repo {
        let loc = Location::new(launch.target.as_deref(), LocationKind::Unavailable);
        return read_repo(loc, repo, options, Role::Target);
    }
    match (&options.target_dir, &launch.target) {
        (Some(dir), _) => given_dir(dir, launch.target.as_deref(), "--target"),
        (None, Some(given)) => read_model(
            given,
            launch.target_revision.as_deref(),
            options,
            Role::Target,
        ),
        (None, None) => Ok((Location::new(None, LocationKind::None), None)),
    }
}

/// The drafter: `--drafter DIR`, else the model the command names, else none (a model-free
/// method) or the target's own draft module (fused).
fn locate_drafter(
    launch: &Launch,
    options: &CheckOptions,
    target: &Location,
    target_config: &Option<ConfigFile>,
) -> Result<(Location, Option<ConfigFile>)> {
    let method = launch.method();
    match (&options.drafter_dir, &launch.drafter) {
        (Some(dir), _) => given_dir(dir, launch.drafter.as_deref(), "--drafter"),
        (None, Some(given)) => read_model(
            given,
            launch.drafter_revision.as_deref(),
            options,
            Role::Drafter,
        ),
        (None, None) if method.as_deref().is_some_and(|m| MODEL_FREE.contains(&m)) => {
            let mut loc = Location::new(None, LocationKind::None);
            loc.note = Some(format!(
                "method {} drafts without a model",
                method.unwrap_or_default()
            ));
            Ok((loc, None))
        }
        (None, None) => {
            let mut loc = Location::new(None, LocationKind::Fused);
            loc.path = target.path.clone();
            loc.note = Some(
                "no separate drafter: the draft module is read from the target's config".into(),
            );
            Ok((loc, target_config.clone()))
        }
    }
}
