//! What the doctor checks, through the tools that own each check: the launch command (its own,
//! or the one a server's arguments describe) through `launch`, or a drafter directory through
//! the pipeline; the findings, what could not be checked, and where the drafter and target were
//! found, gathered for the ranking.

use std::path::{Path, PathBuf};

use crate::analysis::{self, TargetChoice};
use crate::diagnostic::Diagnostic;
use crate::hub::RepoRef;
use crate::input::{InputRef, Resolver};
use crate::launch::{self, LaunchReport, LocationKind};
use crate::pipeline::{
    self, AuthorityPick, DrafterInput, DrafterRun, LintWith, Linted, Pipeline, Weighed, WeightsFrom,
};
use crate::{Error, Result};

use super::{ClassicDraft, DoctorInputs, Gathered, LaunchInput, Located, ServerInfo};

/// The launch command to check: the user's, else the one SGLang's server arguments describe;
/// with where it came from.
pub(super) fn launch_command(
    inputs: &DoctorInputs,
    server: Option<&ServerInfo>,
) -> Result<Option<(LaunchInput, &'static str)>> {
    Ok(match (&inputs.launch, server) {
        (Some(l), _) => Some((l.clone(), "the launch command")),
        (None, Some(info)) => match info.sglang_command() {
            Some(args) => {
                // The command is the server's answer rewritten: say so, or the error would
                // speak of a command the user never typed.
                let (parsed, notes) = launch::parse_input(&args, None).map_err(|mut e| {
                    e.message = format!(
                        "{} (the command doctor built from the server's {} answer)",
                        e.message, info.endpoint
                    );
                    e
                })?;
                Some((
                    (parsed, notes, None),
                    "the server's arguments (SGLang /get_server_info)",
                ))
            }
            None => None,
        },
        (None, None) => None,
    })
}

/// `--target`: a local directory, or a Hub repo (which needs the Hub, asked now so that its
/// error is this run's).
fn target_parts(
    inputs: &DoctorInputs,
    target: Option<&InputRef>,
) -> Result<(Option<PathBuf>, Option<RepoRef>)> {
    match target {
        Some(InputRef::Local(dir)) => Ok((Some(dir.clone()), None)),
        Some(InputRef::Hub(repo)) => {
            let resolver = inputs.hub.as_ref().ok_or_else(|| {
                Error::new(format!(
                    "--target {repo} is a Hub repo, and this run does not ask the Hub"
                ))
            })?;
            resolver.settings()?;
            Ok((None, Some(repo.clone())))
        }
        None => Ok((None, None)),
    }
}

/// The launch checked (its drafter through the pipeline, fresh authority and weights
/// included): its findings, and the drafter's run when the drafter is a local one. A drafter
/// served from the Hub as published is its own authority (`None`, located).
pub(super) fn from_launch(
    inputs: &DoctorInputs,
    target: Option<&InputRef>,
    (parsed, notes, base): LaunchInput,
    from: &str,
    g: &mut Gathered,
) -> Result<Option<DrafterRun>> {
    let (target_dir, target_repo) = target_parts(inputs, target)?;
    let mut report = launch::check(
        parsed,
        notes,
        &launch::CheckOptions {
            inputs: inputs.hub.clone(),
            drafter_dir: inputs.drafter_dir.clone(),
            target_dir,
            base_dir: base,
            target_repo,
            fresh_authority: true,
            volumes: Vec::new(),
            stated: inputs.stated.clone(),
        },
    )?;
    g.launch_checked = true;
    if report.launch.engine.reads_gguf() {
        g.classic_draft = Some(ClassicDraft {
            vocabulary_compared: report.vocabulary_compared == Some(true),
        });
    }
    for d in &report.diagnostics {
        // A model the launch could not read is a limit of this run, not a cause.
        if d.code.as_str().ends_with("-unavailable") {
            g.not_checked.push(d.message.clone());
        } else {
            g.findings.push(d.clone());
        }
    }
    g.not_checked.extend(report.not_checked.iter().cloned());
    locate_target(target, Some((&report, from)), &mut g.located);
    let run = report.run.take().map(|r| *r);
    if let Some(dir) = &inputs.drafter_dir {
        g.located.drafter = Some(dir.display().to_string());
        g.located.drafter_from = Some("--drafter".into());
        return Ok(run);
    }
    // A line that serves the target's own MTP head drafts with the target: the launch's checks
    // of the target's weights and config are the drafter's.
    let head = launch::deployment::of(&report.launch, report.release.clone(), None);
    if report.launch.drafter.is_none() && head.serves_mtp_head() {
        let target = report.launch.target.clone().unwrap_or_else(|| "?".into());
        g.located.drafter = Some(format!("the MTP head inside {target}"));
        g.located.drafter_from = Some(from.to_string());
        g.mtp_head = true;
        return Ok(run);
    }
    match (&report.drafter.kind, &report.drafter.path) {
        (LocationKind::Local, Some(path)) => {
            g.located.drafter = report.drafter.given.clone().or(Some(path.clone()));
            g.located.drafter_from = Some(from.to_string());
            Ok(run)
        }
        (LocationKind::Hub, _) => {
            let at = report.drafter.sha.as_deref().unwrap_or("?");
            let repo = report.drafter.repo.clone().unwrap_or_default();
            g.located.drafter = Some(format!("{repo}@{at}"));
            g.located.drafter_from = Some(from.to_string());
            g.not_checked.push(format!(
                "diff: the drafter is served from the Hub repo {repo} as published, so it is its own authority"
            ));
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// Where the target was found: `--target`, else the target the launch names.
fn locate_target(
    target: Option<&InputRef>,
    launch: Option<(&LaunchReport, &str)>,
    located: &mut Located,
) {
    let choice = match target {
        Some(InputRef::Local(dir)) => TargetChoice {
            target_dir: Some(dir.clone()),
            ..TargetChoice::default()
        },
        Some(InputRef::Hub(repo)) => TargetChoice {
            target_hub: Some(repo.clone()),
            ..TargetChoice::default()
        },
        None => TargetChoice::default(),
    };
    if let Some(identity) = analysis::target_identity(&choice).0 {
        located.target_from = Some("--target".into());
        located.target = Some(identity.name);
        return;
    }
    if let Some((r, from)) = launch {
        if let Some(name) = r.target.repo.clone().or_else(|| r.target.given.clone()) {
            located.target = Some(name);
            located.target_from = Some(from.to_string());
        }
    }
}

/// Without a launch: the drafter `--drafter` names through the pipeline, compared with the
/// authority `--target` picks, linted for the server's engine.
pub(super) fn from_flags(
    dir: &Path,
    inputs: &DoctorInputs,
    target: Option<&InputRef>,
    engine: Option<crate::rules::Engine>,
    g: &mut Gathered,
) -> Result<DrafterRun> {
    let drafter = Resolver::local_config(dir)?;
    g.located.drafter = Some(dir.display().to_string());
    g.located.drafter_from = Some("--drafter".into());
    let choice = match target_parts(inputs, target)? {
        (dir, None) => TargetChoice {
            target_dir: dir,
            ..TargetChoice::default()
        },
        (_, Some(repo)) => TargetChoice {
            target_hub: Some(repo),
            hub: inputs
                .hub
                .as_ref()
                .map(|r| r.settings().cloned())
                .transpose()?
                .map(Box::new),
            ..TargetChoice::default()
        },
    };
    locate_target(target, None, &mut g.located);
    let identity = analysis::target_identity(&choice).0;
    let options = crate::rules::LintOptions {
        engine: engine.map(Into::into),
        ..crate::rules::LintOptions::default()
    };
    let run = Pipeline::new(inputs.hub.clone()).run(DrafterInput {
        config: &drafter,
        authority: AuthorityPick::Choose(identity),
        fresh_authority: true,
        target: Ok(choice),
        shared_target: None,
        builtin_fallback: false,
        engine: options.engine.clone(),
        lint: LintWith::Options(Box::new(options)),
        weights: WeightsFrom::Local {
            pinned_hub: None,
            none_listed: false,
        },
    });
    if let Some(e) = &run.target_error {
        return Err(e.clone());
    }
    let compared = run.diff_findings();
    match &run.lint {
        Linted::Report(r) => g
            .findings
            .extend(pipeline::uncovered(r.findings.iter().cloned(), &compared)),
        Linted::Failed(e) => g.not_checked.push(format!("lint: {}", e.message)),
        Linted::NotRun | Linted::Findings(_) => {}
    }
    g.findings.extend(compared);
    g.not_checked.extend(run.not_checked.iter().cloned());
    Ok(run)
}

/// What the doctor takes from a drafter's run besides its findings: the authority, the `fix`
/// line, and the weights (with the rules skipped for want of a fact).
pub(super) fn shape(run: &DrafterRun, g: &mut Gathered) {
    if let Some(report) = run.diff.as_ref().filter(|r| r.fails(false)) {
        g.fix_line = Some(report.fix_command());
    }
    g.authority_checked |= run.diff.is_some() && run.ambiguity.is_none();
    g.located.authority = run.authority_line();
    if let Some(ambiguity) = &run.ambiguity {
        // Doctor names the flags that pick the authority, as `diff` does.
        let pick = analysis::pick_authority(ambiguity, &run.path);
        for f in &mut g.findings {
            if f.code == pick.code {
                *f = pick.clone();
            }
        }
    }
    g.located.authority_chosen_by = run.authority.as_ref().and_then(|a| a.matched_by.clone());
    match &run.weights {
        Weighed::Checked(c) => {
            g.weights_checked = true;
            // A launch's report already holds the weights' findings and skipped rules.
            if !g.launch_checked {
                g.findings.extend(c.diagnostics.iter().cloned());
                g.not_checked.extend(pipeline::skipped_lines(&c.skipped));
            }
        }
        // Said in the run's `not_checked`, which the caller lists.
        Weighed::NoWeights | Weighed::NotRead(_) => {}
        Weighed::Unreadable(_) if g.launch_checked => {}
        Weighed::Unreadable(e) => {
            let code = crate::diagnostic::codes::CheckCode::WeightsUnreadable;
            g.findings.push(
                Diagnostic::new(code, crate::check::info(code), "", e.message.clone())
                    .file(run.path.display().to_string()),
            );
        }
        Weighed::NotRun => {}
    }
}

/// The error when no drafter can be found: what to pass.
pub(super) fn no_drafter(server: Option<&ServerInfo>, inputs: &DoctorInputs) -> Error {
    let what = match server {
        Some(s) if s.endpoint.ends_with("/v1/models") => format!(
            "the server is vLLM, whose {} names the served target ({}) but not the drafter",
            s.endpoint,
            // A refused target is said with why, not as `?`.
            s.target
                .clone()
                .or_else(|| s.refused.first().cloned())
                .unwrap_or_else(|| "none".into())
        ),
        Some(s) => server_drafter(s),
        None if inputs.launch.is_some() => {
            "the launch command names no drafter that could be read".into()
        }
        None => "nothing names a drafter".into(),
    };
    Error::new(format!("doctor cannot find the drafter: {what}")).with_hint(
        "pass the launch command after `--` (or --file), or the drafter's directory with --drafter DIR",
    )
}

/// What the server said of its drafter, when doctor could not use it: the path it refused and
/// why, the drafter it named that could not be read, or that it named none. ("names no
/// drafter" was said of all three, hiding a refused `/dev/zero` and an uncached Hub repo.)
fn server_drafter(s: &ServerInfo) -> String {
    if let Some(refused) = s.refused.iter().find(|r| r.contains(" the drafter ")) {
        return refused.clone();
    }
    match &s.drafter {
        Some(d) => format!(
            "the server's {} names the drafter `{d}`, which could not be read here (a Hub repo \
             needs the Hub or its cache; a path, the drafter's directory on this machine)",
            s.endpoint
        ),
        None => format!("the server's {} names no drafter", s.endpoint),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// When the server's drafter cannot be used, the error says what the server named and why
    /// it was not used (issue 32: "names no drafter" hid a refused /dev/zero and an uncached
    /// Hub repo), and a refused vLLM target is named, not shown as `?`.
    #[test]
    fn no_drafter_says_what_the_server_named() {
        let inputs = DoctorInputs::default();
        let sglang = |drafter: &str| {
            ServerInfo::from_sglang(
                "/get_server_info",
                &serde_json::json!({"model_path": "Qwen/Qwen3-8B", "speculative_draft_model_path": drafter}),
            )
        };
        let refused = no_drafter(Some(&sglang("/dev/zero")), &inputs).message;
        assert!(refused.contains("`/dev/zero`, not read"), "{refused}");
        let unread = no_drafter(Some(&sglang("z-lab/Qwen3-8B-DFlash-b16")), &inputs).message;
        assert!(
            unread
                .contains("names the drafter `z-lab/Qwen3-8B-DFlash-b16`, which could not be read"),
            "{unread}"
        );
        let models = ServerInfo::from_vllm_models(
            "/v1/models",
            &serde_json::json!({"data": [{"id": "m", "root": "/proc/self/environ"}]}),
        );
        let vllm = no_drafter(Some(&models), &inputs).message;
        assert!(vllm.contains("`/proc/self/environ`, not read"), "{vllm}");
    }
}
