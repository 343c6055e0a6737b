//! A deployment file as `check` gates it: a script, Dockerfile, compose file or Kubernetes
//! manifests, read as `launch --file` reads it ([`read::read_deployments`], up to the run's size
//! cap) and each engine command in it that configures speculative decoding — every engine
//! container of a manifest, every compose service — checked through the same [`check`] as
//! `launch` runs, with the run's Hub settings. Container paths are read through `check --volume
//! MOUNT=DIR` as `launch --volume` reads them; a model on a volume not mapped is reported as
//! unavailable. [`unverified`] is what a launch report could not verify, which `launch`'s
//! verdict and `check`'s both state.

use std::path::Path;

use super::{check, read, CheckOptions, LaunchReport, LocationKind};
use crate::input::Resolver;
use crate::Result;

/// The launch report of every engine command of the deployment file at `path` that
/// configures speculative decoding, each its own result (one whose models cannot be read as
/// the command names them is its own error); `Err` when the file cannot be read.
pub fn check_deployments(
    path: &Path,
    inputs: Option<Resolver>,
    volumes: &[super::volume::Volume],
    stated: &super::deployment::Stated,
    cap: u64,
) -> Result<Vec<Result<LaunchReport>>> {
    let (found, base_dir) = read::read_deployments(path, cap)?;
    let options = CheckOptions {
        inputs,
        base_dir,
        volumes: volumes.to_vec(),
        stated: stated.clone(),
        ..CheckOptions::default()
    };
    Ok(found
        .launches
        .into_iter()
        .map(|launch| check(launch, found.notes.clone(), &options))
        .collect())
}

/// What `report` could not verify, one reason a line: a drafter or target that could not be
/// read ([`unread_models`]), checks listed under "not checked" (counted). Empty: every check of
/// the line ran, and `OK` may be said of it.
pub fn unverified(report: &LaunchReport) -> Vec<String> {
    let mut what = unread_models(report);
    if !report.not_checked.is_empty() {
        let n = report.not_checked.len();
        what.push(format!(
            "{n} check{} not made (see \"not checked\")",
            if n == 1 { "" } else { "s" }
        ));
    }
    what
}

/// The models `report`'s line names that could not be read (`the drafter could not be read`).
pub fn unread_models(report: &LaunchReport) -> Vec<String> {
    [("drafter", &report.drafter), ("target", &report.target)]
        .into_iter()
        .filter(|(_, loc)| loc.kind == LocationKind::Unavailable)
        .map(|(name, _)| format!("the {name} could not be read"))
        .collect()
}
