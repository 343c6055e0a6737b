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

pub mod gguf;
mod hub_gguf;
pub mod locate;
pub mod manifest;
pub mod read;
pub mod volume;

// The pure part (the parsed command, its deployment, the rules by topic and every launch code's
// documentation) is the core's; re-exported so `crate::launch::…` reads the same.
pub use dflash_check_core::launch::{
    deployment, ecma, hf, info, k8s, parse, parse_input, parse_input_with, rules, shell,
    DrafterFacts, EnvVar, Flag, Launch, LaunchCode, SglangSpec,
};

use serde::Serialize;

use crate::analysis::{TargetChoice, TargetContext};
use crate::config::{ConfigFile, TargetFacts};
use crate::diagnostic::{Diagnostic, Summary};
use crate::pipeline::{self, AuthorityPick, DrafterRun, LintWith, Linted, Pipeline, WeightsFrom};
use crate::rules::LintOptions;
use crate::source::choose::TargetIdentity;
use crate::Result;

pub use locate::{Location, LocationKind};
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
    /// Check the weights beside a local drafter too (`doctor`).
    pub weights: bool,
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
    let family = crate::draft::family_of(launch.method().as_deref());
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
    };
    Ok(crate::rules::lint_config(config, &options, target)?.findings)
}

/// Checks a launch command: locates the drafter and target, runs the drafter through the
/// pipeline (compared with the authority its target picks, the target read once, lint with
/// the engine's flags), then the launch rules.
pub fn check(launch: Launch, notes: Vec<String>, options: &CheckOptions) -> Result<LaunchReport> {
    // llama.cpp's models are GGUF files, read as headers rather than through the pipeline.
    if launch.engine.reads_gguf() {
        return gguf::check(launch, notes, options);
    }
    let release = deployment::release_of(&launch, &options.stated)?;
    let found = locate::locate(&launch, options)?;
    let facts = found.drafter_config.as_ref().map(DrafterFacts::from_config);
    let run = found
        .drafter_config
        .as_ref()
        .map(|config| drafter_run(&launch, &release, &found, config, options));
    let mut launch_diags = found.diagnostics.clone();
    if let Some(e) = run.as_ref().and_then(|r| r.target_error.as_ref()) {
        launch_diags.push(Diagnostic::new(
            LaunchCode::TargetUnavailable,
            info(LaunchCode::TargetUnavailable),
            found.target_flag,
            format!(
                "the target's files could not be read for lint: {}",
                e.message
            ),
        ));
    }
    // The target's vocabulary: the facts the pipeline read, else the target's own config.
    let target_facts = match &run {
        Some(r) => r.target.facts.clone(),
        None => found.target_config.as_ref().map(TargetFacts::from_config),
    };
    let deployment = deployment::of(&launch, release, target_facts.as_ref());
    let detection = found
        .drafter_config
        .as_ref()
        .and_then(|c| crate::rules::family::detect(c.root()));
    let outcome = rules::check(&rules::Input {
        launch: &launch,
        deployment: &deployment,
        drafter_config: found.drafter_config.as_ref().map(|config| {
            crate::rules::deployment::DrafterConfig {
                config,
                detection: detection.as_ref(),
            }
        }),
        drafter: facts.as_ref(),
        drafter_on_hub: launch
            .drafter
            .as_deref()
            .is_some_and(|d| locate::names_hub_repo(d, options.base_dir.as_deref())),
        drafter_sha: found.drafter.sha.as_deref(),
        target_vocab: target_facts.as_ref().and_then(|f| f.vocab_size),
        draft_gguf: None,
        target_gguf: None,
    });
    launch_diags.extend(outcome.diagnostics);
    launch_diags.sort_by_key(|d| d.severity);
    let mut not_checked = outcome.not_checked;
    let mut diagnostics = launch_diags;
    if let (Some(run), Some(config)) = (&run, &found.drafter_config) {
        diagnostics.extend(drafter_findings(run, config));
        if run.target.facts.is_none() {
            not_checked.push(
                "lint's target rules (layer ids, sizes, vocabulary): no target facts (the target could not be read \
                 and matches no built-in target)"
                    .to_string(),
            );
        }
        not_checked.extend(run.not_checked.iter().cloned());
    }
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
        drafter_facts: facts,
        authority: run.as_ref().and_then(|r| r.authority_line()),
        diagnostics,
        not_checked,
        skipped: outcome.skipped,
        notes,
        summary,
        run: run.map(Box::new),
        vocabulary_compared: None,
    })
}

/// The drafter the command names through the pipeline: a local drafter is compared with the
/// authority its target picks (one served from the Hub as published is its own authority), the
/// target is read once (built-in facts when its files cannot be), and lint runs with the
/// engine's flags.
fn drafter_run(
    launch: &Launch,
    release: &crate::engine::EngineRelease,
    found: &locate::Found,
    config: &ConfigFile,
    options: &CheckOptions,
) -> DrafterRun {
    let local = found.drafter.kind == LocationKind::Local;
    let target_dir = found
        .target_config
        .as_ref()
        .and_then(|c| c.path.parent().map(std::path::Path::to_path_buf));
    let vocab_dir = target_dir.clone();
    let lint = |c: &ConfigFile, t: &TargetContext| {
        lint_drafter(c, launch, release, t, vocab_dir.as_deref())
    };
    let mut pipeline = Pipeline::new(options.inputs.clone());
    pipeline.run(pipeline::DrafterInput {
        config,
        authority: if local {
            AuthorityPick::Choose(target_identity(&found.target, target_dir.as_deref()))
        } else {
            AuthorityPick::Skip
        },
        fresh_authority: options.fresh_authority,
        target: Ok(TargetChoice {
            target_dir,
            ..TargetChoice::default()
        }),
        shared_target: None,
        builtin_fallback: true,
        lint: LintWith::Custom(&lint),
        weights: if local && options.weights {
            WeightsFrom::Local { pinned_hub: None }
        } else {
            WeightsFrom::Skip
        },
    })
}

/// The target's identity, which picks the drafter's authority: a local target's own name
/// (`_name_or_path`, else its folder), else the repo or name the command gives.
fn target_identity(target: &Location, dir: Option<&std::path::Path>) -> Option<TargetIdentity> {
    let given = target.given.clone().or_else(|| target.path.clone())?;
    if let (Some(dir), LocationKind::Local) = (dir, target.kind) {
        // `--target DIR` (doctor, launch) keeps its flag's name; else it is the command's.
        let by = match target.note.as_deref() {
            Some("--target") => "--target",
            _ => "the target in the launch command,",
        };
        return TargetIdentity::of_dir(dir, &given).map(|mut id| {
            id.from = id.from.replacen("--target", by, 1);
            id
        });
    }
    Some(TargetIdentity {
        name: target.repo.clone().unwrap_or(given),
        from: "the target in the launch command".into(),
    })
}

/// The drafter's findings: the comparison's, then lint's where the comparison says nothing
/// new (or why lint did not run).
fn drafter_findings(run: &DrafterRun, config: &ConfigFile) -> Vec<Diagnostic> {
    let shown = config.path.display().to_string();
    let mut out: Vec<Diagnostic> = run
        .diff_findings()
        .into_iter()
        .map(|d| match d.file {
            Some(_) => d,
            None => d.file(shown.clone()),
        })
        .collect();
    match &run.lint {
        Linted::Findings(found) => {
            let mut lint = pipeline::uncovered(found.iter().cloned(), &out);
            lint.sort_by_key(|d| d.severity);
            out.extend(lint);
        }
        Linted::Failed(e) => out.push(
            Diagnostic::new(
                LaunchCode::LintSkipped,
                info(LaunchCode::LintSkipped),
                "",
                format!("lint did not run: {}", e.message),
            )
            .file(shown),
        ),
        Linted::NotRun | Linted::Report(_) => {}
    }
    out
}
