//! `launch`: the engine command line (vLLM, SGLang) checked against the drafter it serves.
//!
//! The user pastes the command they deploy (or names a script, Dockerfile or compose file).
//! [`shell`] splits it into commands, [`parse`] turns the engine's command into a typed
//! [`Launch`] (both pure, the core's `launch`, re-exported here), [`locate`] finds the drafter and the target it names (local paths, the Hub
//! cache, the Hub; an unreachable repo is a warning, not a failure), [`deployment`] turns the
//! command into the [`Deployment`](crate::deployment::Deployment) the engine claims are judged
//! on (`rules::deployment`, shared with lint), [`rules`] checks the flags and environment against
//! each other and against the drafter's config, and [`lint_drafter`] runs lint's config rules on
//! the drafter with the engine and its flags. [`check`] does all of it — the
//! drafter through the one drafter pipeline (`crate::pipeline`): a local drafter compared with
//! the authority its target picks, as `check` compares it, the target read once — and returns
//! a [`LaunchReport`], which `report::launch` renders.

mod found;
pub mod gguf;
mod hub_gguf;
pub mod locate;
pub mod manifest;
mod models;
pub mod read;
pub mod volume;

// The pure part (the parsed command, its deployment, the rules by topic and every launch code's
// documentation) is the core's; re-exported so `crate::launch::…` reads the same.
pub use dflash_check_core::launch::{
    deployment, ecma, hf, info, k8s, parse, parse_deployments_with, parse_input, parse_input_with,
    rules, shell, DrafterFacts, EnvVar, Flag, Launch, LaunchCode, SglangSpec,
};

use serde::Serialize;

use crate::analysis::TargetContext;
use crate::config::ConfigFile;
use crate::diagnostic::{Diagnostic, Summary};
use crate::pipeline::DrafterRun;
use crate::rules::LintOptions;
use crate::Result;

pub use found::{Location, LocationKind};
pub use read::LaunchInput;

/// How to run the check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Resolves the models the command names, with the command's Hub settings; `None` reads
    /// local paths only.
    pub inputs: Option<crate::input::Resolver>,
    /// Read the drafter from this directory instead of what the command names.
    pub drafter_dir: Option<std::path::PathBuf>,
    /// Read the target from this directory instead of what the command names.
    pub target_dir: Option<std::path::PathBuf>,
    /// A second directory to resolve relative paths in (the `--file`'s directory).
    pub base_dir: Option<std::path::PathBuf>,
    /// Read the target from this Hub repo instead of what the command names (`doctor
    /// --target hf://…`).
    pub target_repo: Option<crate::hub::RepoRef>,
    /// Read the authority the target picks fresh from the Hub when it answers (`doctor`).
    pub fresh_authority: bool,
    /// `--volume MOUNT=DIR`: where a container path of the command is on this machine.
    pub volumes: Vec<volume::Volume>,
    /// Where the release that serves the line is stated besides the line: `--engine`, the pin
    /// file, the server.
    pub stated: deployment::Stated,
}

/// The result of checking one launch command.
#[derive(Debug, Clone, Serialize)]
pub struct LaunchReport {
    /// The file the command came from (`--file`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The parsed command, secrets hidden.
    pub launch: Launch,
    /// The engine and the release the verdict judged (the envelope's `assumed`).
    #[serde(skip)]
    pub release: crate::engine::EngineRelease,
    pub drafter: Location,
    pub target: Location,
    /// What the launch rules read from the drafter's config.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drafter_facts: Option<DrafterFacts>,
    /// What a local drafter was compared with: the authority its target picks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authority: Option<String>,
    /// Launch findings, then the comparison's with the authority, then lint's findings on the
    /// drafter's config.
    pub diagnostics: Vec<Diagnostic>,
    /// Checks that could not be made, and why.
    pub not_checked: Vec<String>,
    /// The launch rules skipped for want of an input (the drafter's config, the target's
    /// vocabulary), each with what it lacked: the rules behind `not_checked`'s first lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<rules::Skipped>,
    /// Other things worth saying (more engine commands in the file).
    pub notes: Vec<String>,
    pub summary: Summary,
    /// The drafter's run through the pipeline, for `doctor`, which reports it its own way.
    #[serde(skip)]
    pub run: Option<Box<DrafterRun>>,
    /// llama.cpp and koboldcpp: whether the draft's GGUF vocabulary was compared with the
    /// target's (`doctor` rules the pairing out only then); `None` for vLLM and SGLang.
    #[serde(skip)]
    pub vocabulary_compared: Option<bool>,
}

impl LaunchReport {
    /// Whether the report fails the gate: any error, or any warning with `deny_warnings`.
    pub fn fails(&self, deny_warnings: bool) -> bool {
        self.summary.fails(deny_warnings)
    }
}

/// Where the release that serves a line is stated besides the line: `flag` (`--engine`), and the
/// `engine` key of the repository's `dflash-check.toml`, found from the working directory up as
/// `check` finds it (a file that does not load is bad input).
pub fn stated(flag: Option<crate::engine::EngineRelease>) -> Result<deployment::Stated> {
    let pinned = crate::pins::find(None)?
        .map(|loaded| loaded.file.engine.0)
        .unwrap_or_default();
    Ok(deployment::Stated {
        flag,
        pinned,
        ..deployment::Stated::default()
    })
}

/// A model the command names as `profile-identity` compares it.
fn compared(given: &str) -> String {
    crate::rules::profile::compared_name(given, std::path::Path::new(given).exists())
}

/// The classic draft-model family when the line serves a draft model (told by the line alone:
/// its config is any LM's), whose vocabulary is then compared with the target's.
pub(crate) fn draft_family(launch: &Launch) -> Option<crate::family::Family> {
    crate::draft::family_of(
        launch.engine.code().drafts_with_draft_model(launch),
        launch.method().as_deref(),
    )
}

/// Runs lint's config rules on the drafter's config with the engine and its flags, as
/// diagnostics. The engine claims (the deployment rules) are not lint's here: [`check`] runs
/// them on the command's [`Deployment`](crate::deployment::Deployment) whether or not lint can
/// run, so each is reported once, under one code.
///
/// The one place launch calls the lint rule engine: `Err` carries lint's reason when the config
/// is not a drafter family it knows.
pub fn lint_drafter(
    config: &ConfigFile,
    launch: &Launch,
    release: &crate::engine::EngineRelease,
    target: &TargetContext,
    target_dir: Option<&std::path::Path>,
) -> std::result::Result<Vec<Diagnostic>, crate::Error> {
    // A draft model is told by the launch line alone (its config is any LM's): its vocabulary
    // is compared with the target's before the rules run.
    let family = draft_family(launch);
    let with_vocab;
    let target = match family {
        Some(_) => {
            with_vocab = crate::draft::with_vocab(config, target_dir, target)?;
            &with_vocab
        }
        None => target,
    };
    let (speculative_config, num_draft_tokens) = launch.engine.code().lint_flags(launch);
    let options = LintOptions {
        family,
        engine: Some(release.clone()),
        speculative_config,
        num_draft_tokens,
        // The drafter's own profile, when one is beside a local drafter: K against its
        // max_supported_k, its method against the family.
        profile: crate::rules::profile::beside(&config.path)?.map(std::sync::Arc::new),
        drafter_name: launch.drafter.as_deref().map(compared),
        target_name: launch.target.as_deref().map(compared),
        served_length: launch.engine.code().served_length(launch),
        refuses_other_vocab_size: launch.engine.code().refuses_other_vocab_size(launch),
        detected: None,
    };
    Ok(crate::rules::lint_config(config, &options, target)?.findings)
}

/// Checks a launch command along one route for every engine: locate the models the line
/// names as its engine loads them (checkpoint folders or Hub repos; GGUF files by path or
/// `-hf`), run each through the checks the standalone commands run ([`models::check`]: the
/// drafter through the pipeline — the authority its target picks, lint with the engine's
/// flags, its weights — the target's weights, each GGUF file's own checks and the draft's
/// vocabulary), then judge the line's deployment with what they said.
pub fn check(launch: Launch, notes: Vec<String>, options: &CheckOptions) -> Result<LaunchReport> {
    let release = deployment::release_of(&launch, &options.stated)?;
    let found = match launch.engine.reads_gguf() {
        true => gguf::locate(&launch, options)?,
        false => locate::locate(&launch, options)?,
    };
    let models = models::check(&launch, &release, &found, options)?;
    let deployment = deployment::of(&launch, release, models.target_facts.as_ref());
    let detection = found
        .drafter_config
        .as_ref()
        .and_then(|c| crate::rules::family::detect(c.root()));
    let (draft_gguf, target_gguf) = match &found.gguf {
        Some(files) => (files.draft_model(), files.target_model()),
        None => (None, None),
    };
    let outcome = rules::check(&rules::Input {
        launch: &launch,
        deployment: &deployment,
        drafter_config: found.drafter_config.as_ref().map(|config| {
            crate::rules::deployment::DrafterConfig {
                config,
                detection: detection.as_ref(),
            }
        }),
        drafter: models.facts.as_ref(),
        drafter_on_hub: launch
            .drafter
            .as_deref()
            .is_some_and(|d| locate::names_hub_repo(d, options.base_dir.as_deref()))
            || launch.llama.draft_on_hub,
        drafter_sha: found.drafter.sha.as_deref(),
        target_vocab: match &found.gguf {
            Some(files) => files.target_vocab(),
            None => models.target_facts.as_ref().and_then(|f| f.vocab_size),
        },
        draft_gguf: draft_gguf.as_ref(),
        target_gguf: target_gguf.as_ref(),
    });
    // The line's findings first (what could not be read, the deployment rules), by severity;
    // then each model's.
    let mut diagnostics = found.diagnostics.clone();
    diagnostics.extend(models.target_unreadable.clone());
    diagnostics.extend(outcome.diagnostics);
    diagnostics.sort_by_key(|d| d.severity);
    diagnostics.extend(models.findings);
    let mut not_checked = outcome.not_checked;
    not_checked.extend(models.not_checked);
    let summary = Summary::of(&diagnostics);
    Ok(LaunchReport {
        file: launch.origin.file.clone(),
        release: deployment
            .engine
            .clone()
            .unwrap_or_else(|| launch.engine.into()),
        launch: launch.redacted(),
        drafter: found.drafter,
        target: found.target,
        drafter_facts: models.facts,
        authority: models.run.as_ref().and_then(|r| r.authority_line()),
        diagnostics,
        not_checked,
        skipped: outcome.skipped,
        notes,
        summary,
        run: models.run.map(Box::new),
        vocabulary_compared: models.vocabulary_compared,
    })
}
