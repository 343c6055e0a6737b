//! A Kubernetes manifest file as `check` gates it: read as `launch --file` reads it (the
//! first engine command it renders; the others are notes) and checked through the same
//! pipeline, with the run's Hub settings. Container paths are read through `check --volume
//! MOUNT=DIR` as `launch --volume` reads them; a model on a volume not mapped is reported as
//! unavailable.

use std::path::Path;

use super::{check, read, CheckOptions, LaunchReport};
use crate::input::Resolver;
use crate::{Error, Result};

/// The launch report of the manifest at `path`.
pub fn check_manifest(
    path: &Path,
    inputs: Option<Resolver>,
    volumes: &[super::volume::Volume],
    stated: &super::deployment::Stated,
) -> Result<LaunchReport> {
    let (parsed, notes, base_dir) = read::read_launch(Some(path), &[], &mut std::io::empty())?
        .ok_or_else(|| Error::new(format!("`{}` holds no engine command", path.display())))?;
    check(
        parsed,
        notes,
        &CheckOptions {
            inputs,
            base_dir,
            volumes: volumes.to_vec(),
            stated: stated.clone(),
            ..CheckOptions::default()
        },
    )
}
