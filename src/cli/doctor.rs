//! `dflash-check doctor`: why is my drafter slow? Flags become [`DoctorInputs`]; the library
//! measures, finds the drafter and target, runs every check and ranks the causes.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use dflash_check::acceptance::{scrape, HttpSource, MeasureOptions, MetricsSource};
use dflash_check::doctor::{self, DoctorInputs};
use dflash_check::family::Family;

use super::{finish, DenyArgs, HubArgs, OutputArgs};

pub const DOCTOR_EXAMPLES: &str = "\
Examples:
  dflash-check doctor --metrics http://127.0.0.1:30000    # SGLang: the server names its drafter
  dflash-check doctor --metrics http://127.0.0.1:8000 -- vllm serve Qwen/Qwen3.6-27B \\
      --speculative-config \\
      '{\"method\": \"dflash\", \"model\": \"models/drafter\", \"num_speculative_tokens\": 15}'
  dflash-check doctor --drafter models/drafter --target models/Qwen3.6-27B    # no server

Exit codes: 0 nothing wrong found, 1 a cause was found (or acceptance fails; with --deny warnings, \
any warning), 2 could not look (no drafter found, server unreachable, bad input).";

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The running server (base URL or its /metrics URL): acceptance is measured, and SGLang's
    /// server arguments name the drafter and target.
    #[arg(long, value_name = "URL")]
    pub metrics: Option<String>,
    /// A shell script, Dockerfile or docker-compose file holding the launch command.
    #[arg(long, value_name = "FILE", conflicts_with = "command")]
    pub file: Option<PathBuf>,
    /// The release of the engine that serves the line (`vllm@0.30`): the verdict is judged at
    /// it. Without it: what the server answers, the line's image tag, the `engine` key of
    /// dflash-check.toml, else every release of the engine's default window.
    #[arg(long, value_name = "ENGINE[@RELEASE]", value_parser = super::parse_engine)]
    pub engine: Option<dflash_check::rules::EngineRelease>,
    /// The drafter's directory on this machine (else the one the launch command or server names).
    #[arg(long, value_name = "DIR")]
    pub drafter: Option<PathBuf>,
    /// The target: a directory, or a Hub repo hf://ORG/NAME[@REV]; it picks the drafter's authority.
    #[arg(long, value_name = "DIR|REPO")]
    pub target: Option<String>,
    /// Seconds between the first and the last scrape.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = super::acceptance::parse_window)]
    pub window: f64,
    /// Seconds to wait for each request to the server.
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = super::acceptance::parse_timeout)]
    pub server_timeout: f64,
    /// Fail when the acceptance length is below X.
    // `acceptance`'s value parser: NaN or 0 (which would pass a collapsed server) are refused.
    #[arg(long, value_name = "X", value_parser = super::acceptance::parse_min_length)]
    pub min_acceptance_length: Option<f64>,
    /// Read this served model (the `model_name` label) when the server serves several.
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    /// The cost of one drafter forward relative to one target forward, for the break-even
    /// point (default per family: docs/acceptance.md).
    #[arg(long, value_name = "C", value_parser = super::acceptance::parse_cost_ratio)]
    pub draft_cost_ratio: Option<f64>,
    /// The drafter's `speculation_profile.json`, named directly (wins over the one beside
    /// --drafter DIR), as `acceptance --profile`.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<std::path::PathBuf>,
    /// How far below the drafter's `speculation_profile.json` (beside --drafter DIR, or
    /// --profile) the live acceptance may fall before it fails (as `acceptance --profile-tolerance`).
    #[arg(long, value_name = "T", default_value = "0.1", value_parser = super::acceptance::parse_tolerance)]
    pub profile_tolerance: f64,
    #[command(flatten)]
    pub deny: DenyArgs,
    #[command(flatten)]
    pub hub: HubArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// The engine command line as you deploy it, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

fn secs(v: f64, what: &str) -> Result<Duration> {
    if !v.is_finite() || v <= 0.0 || v > 3600.0 {
        return Err(dflash_check::Error::new(format!(
            "{what} must be more than 0 and at most 3600 seconds"
        ))
        .kind(dflash_check::error::ErrorKind::Usage)
        .into());
    }
    Ok(Duration::from_secs_f64(v))
}

/// The family whose acceptance a launch line measures: the target's own MTP head where the
/// engine reads the line's method as serving it (vLLM's `mtp`, SGLang's EAGLE with no draft
/// model), EAGLE-style drafters (one forward per drafted token) where the method names EAGLE,
/// else a block drafter (DFlash).
fn draft_family_of(launch: &dflash_check::launch::Launch) -> Family {
    let deployment = dflash_check::launch::deployment::of(launch, launch.engine.into(), None);
    if deployment.serves_mtp_head() {
        Family::Mtp
    } else if launch
        .method()
        .is_some_and(|m| m.to_ascii_lowercase().contains("eagle"))
    {
        Family::Eagle3
    } else {
        Family::Dflash
    }
}

pub fn run_doctor(args: &DoctorArgs, out: &mut Vec<u8>) -> Result<u8> {
    let launch = super::launch::read_launch(args.file.as_deref(), &args.command)?;
    if launch.is_none() && args.metrics.is_none() && args.drafter.is_none() {
        return Err(dflash_check::Error::new("doctor needs something to look at")
            .kind(dflash_check::error::ErrorKind::Usage)
            .with_hint(
                "pass the server (--metrics URL), the launch command (after `--`, or --file), or --drafter DIR",
            )
            .into());
    }
    let timeout = secs(args.server_timeout, "--server-timeout")?;
    let window = secs(args.window, "--window")?;
    let draft_family = launch
        .as_ref()
        .map_or(Family::Dflash, |(l, _, _)| draft_family_of(l));
    let inputs = DoctorInputs {
        launch,
        drafter_dir: args.drafter.clone(),
        target: args.target.clone(),
        hub: Some(args.hub.resolver()),
        stated: dflash_check::launch::stated(args.engine.clone())?,
        measure: args.metrics.as_ref().map(|_| MeasureOptions {
            window,
            model_name: args.model_name.clone(),
            min_acceptance_length: args.min_acceptance_length,
            draft_family,
            draft_cost_ratio: args.draft_cost_ratio,
            profile: dflash_check::acceptance::profile::ProfileOptions {
                drafter_dir: args.drafter.clone(),
                profile_file: args.profile.clone(),
                tolerance: args.profile_tolerance,
            },
        }),
    };
    let mut source = match &args.metrics {
        Some(url) => Some(HttpSource::new(scrape::metrics_url(url)?, timeout)?),
        None => None,
    };
    let server = args
        .metrics
        .as_deref()
        .and_then(|url| doctor::server_info(url, timeout));
    let report = doctor::run(
        &inputs,
        source.as_mut().map(|s| s as &mut dyn MetricsSource),
        server,
        &mut std::thread::sleep,
    )?;
    finish(&report, &args.output, args.deny.warnings(), out)
}
