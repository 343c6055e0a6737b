//! The threshold a live measurement is held to, with the drafter's own profile: read
//! `speculation_profile.json` (`--profile FILE`, or beside `--drafter DIR`) before scraping, so
//! a broken profile is bad input (exit 2) without a request sent; a measured profile sets the
//! threshold (its acceptance length × (1 − `--profile-tolerance`), the core's
//! `acceptance::profile::threshold`), and without one the default break-even point is used and
//! the threshold says so when a drafter was given.

use std::path::Path;
use std::sync::Arc;

use super::verdict::Threshold;
use crate::rules::profile::{self, Profile};
use crate::Result;

// The pure part (the threshold a measured profile sets, the per-position rule) is the core's.
use dflash_check_core::acceptance::profile::threshold as profile_threshold;
pub use dflash_check_core::acceptance::profile::DEFAULT_TOLERANCE;

/// Where the drafter's profile is, and how far below it the live acceptance may be.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileOptions {
    /// `--drafter DIR`: its `speculation_profile.json`, when it has one, sets the threshold.
    pub drafter_dir: Option<std::path::PathBuf>,
    /// `--profile FILE`: the drafter's profile, named directly.
    pub profile_file: Option<std::path::PathBuf>,
    /// `--profile-tolerance`.
    pub tolerance: f64,
}

impl Default for ProfileOptions {
    fn default() -> ProfileOptions {
        ProfileOptions {
            drafter_dir: None,
            profile_file: None,
            tolerance: DEFAULT_TOLERANCE,
        }
    }
}

/// The profile `opts` names (`--profile FILE`, else beside `--drafter DIR`), read and checked
/// for shape; `None` when neither names one.
pub fn read(opts: &ProfileOptions) -> Result<Option<Arc<Profile>>> {
    if let Some(file) = &opts.profile_file {
        return Ok(Some(Arc::new(profile::read_file(file)?)));
    }
    match &opts.drafter_dir {
        Some(dir) => Ok(profile::beside(&dir.join("config.json"))?.map(Arc::new)),
        None => Ok(None),
    }
}

/// The threshold: `--min-acceptance-length` (`min`), else the profile's, else the break-even
/// point (`break_even`), said to be the default when the drafter had no usable profile.
pub fn choose_threshold(
    min: Option<f64>,
    opts: &ProfileOptions,
    profile: Option<&Profile>,
    break_even: Option<Threshold>,
) -> Option<Threshold> {
    if let Some(value) = min {
        return Some(Threshold {
            value,
            source: "--min-acceptance-length".to_string(),
            profile: None,
        });
    }
    if let Some(t) = profile.and_then(|p| profile_threshold(p, opts.tolerance)) {
        return Some(t);
    }
    let mut t = break_even?;
    let why = match (profile, &opts.drafter_dir) {
        (Some(p), _) => Some(format!(
            "{} is an unmeasured stub, so the default break-even",
            p.file.path.display()
        )),
        (None, Some(dir)) => Some(format!(
            "no {} in {}, so the default break-even",
            profile::FILE,
            Path::new(dir).display()
        )),
        (None, None) => None,
    };
    if let Some(why) = why {
        t.source = format!("{}; {why}", t.source);
    }
    Some(t)
}
