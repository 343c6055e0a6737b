//! The deployments `check` finds beside the configs, and what they serve.
//!
//! Each deployment file the walk finds (a script, Dockerfile, compose file or Kubernetes
//! manifests: `pipeline::discover`) is judged as `launch --file` judges it, once per engine
//! command in it that configures speculative decoding (`launch::manifest::check_deployments`):
//! its findings, under the file's shown path, and what could not be verified
//! (`launch::manifest::unverified`), which makes the run's verdict `OK (N unverified)` rather
//! than `OK`. A file over the size cap is the error `deployment-too-large`, naming the cap and
//! the option that raises it. And what each line serves is kept: a local target served with
//! its own MTP head ([`ServedHeads`]) is judged as a drafter by the config walk, with the
//! deployment's engine.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{check_diagnostic, display, whole_file, CheckOptions, DrafterCheck, DEPLOYMENT};
use crate::diagnostic::codes::CheckCode;
use crate::diagnostic::Diagnostic;
use crate::launch::{self, LaunchReport, LocationKind};
use crate::rules::EngineRelease;

/// The local targets the deployments under the paths serve with their own MTP head
/// (`Deployment::serves_mtp_head`), by their config's canonical path, with the release of the
/// first deployment that serves each.
#[derive(Debug, Default)]
pub struct ServedHeads(HashMap<PathBuf, EngineRelease>);

impl ServedHeads {
    /// The release that serves the target whose config is at `config`, when a deployment here
    /// serves it with MTP (one `realpath` a config, only when some deployment does).
    pub fn release(&self, config: &Path) -> Option<&EngineRelease> {
        if self.0.is_empty() {
            return None;
        }
        self.0.get(&std::fs::canonicalize(config).ok()?)
    }

    /// Records the target `report`'s line serves with its MTP head, when it is local.
    fn record(&mut self, report: &LaunchReport) {
        let served =
            launch::deployment::of(&report.launch, report.release.clone(), None).serves_mtp_head();
        let local = report.target.kind == LocationKind::Local;
        let path = report.target.path.as_deref().filter(|_| served && local);
        if let Some(config) = path.and_then(|p| std::fs::canonicalize(p).ok()) {
            self.0
                .entry(config)
                .or_insert_with(|| report.release.clone());
        }
    }
}

/// Every speculating engine command of the deployment file at `file`, checked as `launch
/// --file` checks it, one [`DrafterCheck`] each (none: a script that starts no engine, which
/// the run lists as skipped); a file that cannot be read (or a line whose models cannot be read
/// as named) is a `config-unreadable` finding, as a broken `config.json` is. What the lines
/// serve with MTP is recorded in `served`.
pub fn check_file(
    file: &Path,
    shown: &str,
    options: &CheckOptions,
    served: &mut ServedHeads,
) -> Vec<DrafterCheck> {
    // `--engine` (when given) applies to the lines of its engine; the pin file's `engine` key
    // states each engine's release.
    let stated = launch::deployment::Stated {
        flag: options
            .engine_from_flag
            .then(|| options.lint.engine.clone())
            .flatten(),
        flag_per_engine: true,
        pinned: options
            .pins
            .as_ref()
            .map(|p| p.file.engine.0.clone())
            .unwrap_or_default(),
        server: None,
    };
    let reports = launch::manifest::check_deployments(
        file,
        options.hub.clone(),
        &options.volumes,
        &stated,
        options.max_file_bytes(),
    );
    let unreadable = |e: &crate::Error| DrafterCheck {
        unverified: vec!["the file could not be read as a deployment".into()],
        ..entry(
            shown,
            vec![whole_file(CheckCode::ConfigUnreadable, e)],
            options.lint.assumed(),
        )
    };
    match reports {
        Err(e) => vec![unreadable(&e)],
        Ok(reports) => reports
            .into_iter()
            .map(|r| match r {
                Err(e) => unreadable(&e),
                Ok(report) => {
                    served.record(&report);
                    judged(file, shown, report, &options.root)
                }
            })
            .collect(),
    }
}

/// One line's launch report as `check`'s entry: its findings, those in the deployment file
/// under its shown path and those in a model it names under theirs; the line it judged; what
/// it could not verify.
fn judged(file: &Path, shown: &str, report: LaunchReport, root: &Path) -> DrafterCheck {
    let manifest = file.display().to_string();
    // Each check not made is named: `check` has no "not checked" section of its own.
    let mut unverified = launch::manifest::unread_models(&report);
    unverified.extend(
        report
            .not_checked
            .iter()
            .map(|n| format!("not checked: {n}")),
    );
    // The engine that serves the line: a platform its image or environment names (vLLM Ascend
    // running `vllm serve`), else the line's own.
    let serves = report.release.engine.display();
    let line = match report.launch.target.as_deref() {
        Some(target) => format!("{serves} serving {target}"),
        None => serves.to_string(),
    };
    let findings = report
        .diagnostics
        .into_iter()
        .map(|mut f| {
            f.file = Some(match f.file.as_deref() {
                Some(other) if other != manifest => display(Path::new(other), root),
                _ => shown.to_string(),
            });
            f
        })
        .collect();
    DrafterCheck {
        deployment: Some(line),
        unverified,
        ..entry(shown, findings, Some(report.release))
    }
}

/// A deployment file over the size cap, named by discovery: the error `deployment-too-large`,
/// and nothing it deploys verified.
pub fn too_large(file: &Path, size: u64, options: &CheckOptions) -> DrafterCheck {
    let shown = display(file, &options.root);
    let message = launch::read::too_large_message(&shown, size, options.max_file_bytes());
    let finding = check_diagnostic(CheckCode::DeploymentTooLarge, "", message).span(1, 1);
    DrafterCheck {
        unverified: vec!["not read: over the size cap".into()],
        ..entry(
            &shown,
            vec![finding.file(shown.clone())],
            options.lint.assumed(),
        )
    }
}

/// An entry of a deployment file with `findings`.
fn entry(shown: &str, findings: Vec<Diagnostic>, assumed: Option<EngineRelease>) -> DrafterCheck {
    DrafterCheck {
        file: shown.to_string(),
        family: Some(DEPLOYMENT.to_string()),
        authority: None,
        assumed,
        findings: findings
            .into_iter()
            .map(|f| match f.file {
                Some(_) => f,
                None => f.file(shown.to_string()),
            })
            .collect(),
        weights_skipped: Vec::new(),
        deployment: None,
        unverified: Vec::new(),
    }
}

/// The `mtp-not-served` info of a target config whose MTP head no deployment here serves.
pub fn unserved_head(shown: &str) -> Diagnostic {
    check_diagnostic(
        CheckCode::MtpNotServed,
        "",
        "this target declares an MTP head, and no script, compose file or manifest under the paths serves it \
         with MTP (not served with MTP by anything here): not judged as a drafter; check the deployment that \
         serves it with `dflash-check launch`, or pin it to make it one",
    )
    .file(shown.to_string())
    .span(1, 1)
}
