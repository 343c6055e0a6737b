//! Every model a deployment names, checked as the standalone commands check it: the drafter's
//! weights (beside a local drafter, or by range requests on the Hub as `weights hf://` reads
//! them), the target's weights, and the target's own MTP head when the line serves it.
//!
//! Why here: a gate that judged the drafter's config alone passed lines whose target declares
//! an MTP head and ships none of its tensors (FIELD2 §1), though `weights TARGET` fails them.
//! The drafter's weights go through the pipeline with its other stages ([`weights_from`]); the
//! target, which the pipeline does not run as a drafter, is read and judged here
//! ([`target_weights`]). A model whose weights cannot be read is listed under "not checked"
//! with why, so the verdict says it is unverified instead of a plain OK.

use super::found::{Found, Location, LocationKind};
use super::{gguf, info, lint_drafter, CheckOptions, DrafterFacts, Launch, LaunchCode};
use crate::analysis::{TargetChoice, TargetContext};
use crate::config::{ConfigFile, TargetFacts};
use crate::diagnostic::Diagnostic;
use crate::engine::EngineRelease;
use crate::pipeline::{
    self, AuthorityPick, DrafterRun, LintWith, Linted, Pipeline, Weighed, WeightsFrom,
};
use crate::source::choose::TargetIdentity;
use crate::weights::{self, Purpose, WeightsHeaders};
use crate::Result;

/// What the models of a line said.
pub struct Checked {
    /// The drafter's run through the pipeline (a checkpoint drafter, or the target's own MTP
    /// head), for `doctor`.
    pub run: Option<DrafterRun>,
    /// Every model's findings: the drafter's comparison, lint and weights, the target's
    /// weights, each GGUF file's own checks and the draft's vocabulary.
    pub findings: Vec<Diagnostic>,
    /// What could not be checked, and why.
    pub not_checked: Vec<String>,
    /// The target's facts (the pipeline's, else its own config's).
    pub target_facts: Option<TargetFacts>,
    /// What the launch rules read from the drafter's config.
    pub facts: Option<DrafterFacts>,
    /// A target whose files could not be read for lint.
    pub target_unreadable: Option<Diagnostic>,
    /// llama.cpp and koboldcpp: whether the draft's vocabulary was compared (`None`: not GGUF).
    pub vocabulary_compared: Option<bool>,
}

/// Runs every model `found` names through its checks.
pub fn check(
    launch: &Launch,
    release: &EngineRelease,
    found: &Found,
    options: &CheckOptions,
) -> Result<Checked> {
    if let Some(files) = &found.gguf {
        let g = gguf::check_models(launch, files, options)?;
        return Ok(Checked {
            run: None,
            findings: g.findings,
            not_checked: g.not_checked,
            target_facts: None,
            facts: None,
            target_unreadable: None,
            vocabulary_compared: Some(g.vocabulary_compared),
        });
    }
    let run = found
        .drafter_config
        .as_ref()
        .map(|config| drafter_run(launch, release, found, config, options));
    let target_unreadable = run.as_ref().and_then(|r| r.target_error.as_ref()).map(|e| {
        Diagnostic::new(
            LaunchCode::TargetUnavailable,
            info(LaunchCode::TargetUnavailable),
            found.target_flag,
            format!(
                "the target's files could not be read for lint: {}",
                e.message
            ),
        )
    });
    let target_facts = match &run {
        Some(r) => r.target.facts.as_deref().cloned(),
        None => found.target_config.as_ref().map(TargetFacts::from_config),
    };
    let mut findings = Vec::new();
    let mut not_checked = Vec::new();
    if let (Some(run), Some(config)) = (&run, &found.drafter_config) {
        findings.extend(drafter_findings(run, config));
        if run.target.facts.is_none() {
            not_checked.push(
                "lint's target rules (layer ids, sizes, vocabulary): no target facts (the target could not be read \
                 and matches no built-in target)"
                    .to_string(),
            );
        }
        not_checked.extend(run.not_checked.iter().cloned());
        not_checked.extend(pipeline::skipped_lines(run.weights_skipped()));
    }
    // The target's weights (a fused draft module's were the drafter run's).
    let (target_findings, target_not_checked) = target_weights(found, release, options);
    findings.extend(target_findings);
    not_checked.extend(target_not_checked);
    Ok(Checked {
        facts: found.drafter_config.as_ref().map(DrafterFacts::from_config),
        run,
        findings,
        not_checked,
        target_facts,
        target_unreadable,
        vocabulary_compared: None,
    })
}

/// Where the drafter's weights are read: beside a local drafter; on the Hub at the commit the
/// drafter resolved to; for a draft module fused into the target (an MTP head), the target's.
pub fn weights_from(drafter: &Location, target: &Location) -> WeightsFrom {
    let at = match drafter.kind {
        LocationKind::Fused => target,
        _ => drafter,
    };
    match at.kind {
        LocationKind::Local => WeightsFrom::Local {
            pinned_hub: None,
            none_listed: false,
        },
        LocationKind::Hub => match hub_commit(at) {
            Some((repo, sha)) => WeightsFrom::Hub { repo, sha },
            None => WeightsFrom::Skip,
        },
        LocationKind::Fused | LocationKind::None | LocationKind::Unavailable => WeightsFrom::Skip,
    }
}

/// A Hub model's repo and the commit it resolved to (the revision asked for, when the cache
/// gave no commit).
fn hub_commit(at: &Location) -> Option<(String, String)> {
    let repo = at.repo.clone()?;
    let sha = at.sha.clone().or_else(|| at.revision.clone())?;
    Some((repo, sha))
}

/// The target's weights, when the drafter is a model of its own (a fused draft module's run
/// already read them): findings, and what could not be read, for "not checked".
pub fn target_weights(
    found: &Found,
    release: &EngineRelease,
    options: &CheckOptions,
) -> (Vec<Diagnostic>, Vec<String>) {
    if found.drafter.kind == LocationKind::Fused {
        return (Vec::new(), Vec::new());
    }
    let Some(config) = &found.target_config else {
        return (Vec::new(), Vec::new());
    };
    let read = match found.target.kind {
        LocationKind::Local => weights::read_beside(&config.path).map_err(Unread::Bad),
        LocationKind::Hub => match (hub_commit(&found.target), &options.inputs) {
            (Some((repo, sha)), Some(inputs)) => inputs
                .settings()
                .and_then(|s| weights::read_hub_headers(s, &repo, &sha))
                .map_err(|e| match e.kind {
                    crate::error::ErrorKind::Hub(_) => {
                        Unread::Hub(format!("`{repo}` at {sha}: {}", e.message))
                    }
                    _ => Unread::Bad(e),
                }),
            _ => Err(Unread::Hub("the Hub was not asked".into())),
        },
        LocationKind::Fused | LocationKind::None | LocationKind::Unavailable => {
            return (Vec::new(), Vec::new())
        }
    };
    judge(config, read, release)
}

/// Why a model's headers were not read.
enum Unread {
    /// The Hub could not answer: not checked.
    Hub(String),
    /// Headers that are there but cannot be read (truncated, hostile): a finding.
    Bad(crate::Error),
}

fn judge(
    config: &crate::config::ConfigFile,
    read: std::result::Result<Option<WeightsHeaders>, Unread>,
    release: &EngineRelease,
) -> (Vec<Diagnostic>, Vec<String>) {
    let what = "the target's weights";
    match read {
        Ok(Some(headers)) => {
            let checked = weights::run_for(
                config,
                &headers,
                None,
                Some(release.clone()),
                Purpose::TargetWithoutHead,
            );
            let mut not_checked = crate::pipeline::skipped_lines(&checked.skipped)
                .into_iter()
                .map(|l| l.replacen("weights:", &format!("{what}:"), 1))
                .collect::<Vec<_>>();
            if checked.shards_absent {
                not_checked.push(format!(
                    "{what}: the index's shards are not here: the tensor names were checked from the index, \
                     their dtypes and shapes were not"
                ));
            }
            (checked.diagnostics, not_checked)
        }
        Ok(None) => (
            Vec::new(),
            vec![format!(
                "{what}: no model.safetensors or model.safetensors.index.json beside `{}`",
                config.path.display()
            )],
        ),
        Err(Unread::Hub(why)) => (
            Vec::new(),
            vec![format!("{what}: not read from the Hub: {why}")],
        ),
        Err(Unread::Bad(e)) => {
            let code = crate::diagnostic::codes::CheckCode::WeightsUnreadable;
            (
                vec![
                    Diagnostic::new(code, crate::registry::check::info(code), "", e.message)
                        .file(config.path.display().to_string()),
                ],
                Vec::new(),
            )
        }
    }
}

/// The drafter the command names through the pipeline: a local drafter is compared with the
/// authority its target picks (one served from the Hub as published is its own authority), the
/// target is read once (built-in facts when its files cannot be), and lint runs with the
/// engine's flags.
fn drafter_run(
    launch: &Launch,
    release: &crate::engine::EngineRelease,
    found: &Found,
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
            // Read with the token table for the draft model's check in `lint_drafter`.
            vocabulary: super::draft_family(launch).is_some(),
            ..TargetChoice::default()
        }),
        shared_target: None,
        builtin_fallback: true,
        lint: LintWith::Custom(&lint),
        engine: Some(release.clone()),
        weights: weights_from(&found.drafter, &found.target),
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
            .file(shown.clone()),
        ),
        Linted::NotRun | Linted::Report(_) => {}
    }
    // The weights, read beside a local drafter, on the Hub, or the target's for an MTP head.
    match &run.weights {
        Weighed::Checked(c) => out.extend(c.diagnostics.iter().cloned()),
        Weighed::Unreadable(e) => {
            let code = crate::diagnostic::codes::CheckCode::WeightsUnreadable;
            out.push(
                Diagnostic::new(
                    code,
                    crate::registry::check::info(code),
                    "",
                    e.message.clone(),
                )
                .file(shown),
            );
        }
        // Listed under "not checked" by the run.
        Weighed::NotRun | Weighed::NoWeights | Weighed::NotRead(_) => {}
    }
    out
}
