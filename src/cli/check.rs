//! `dflash-check check`: the CI gate over every drafter and deployment under some paths.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use dflash_check::check;
use dflash_check::rules::EngineRelease;

use super::{finish, DenyArgs, HubArgs, OutputArgs};

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Directories (searched recursively for config.json and for the scripts, Dockerfiles,
    /// compose files and Kubernetes manifests that deploy speculative decoding; hidden folders
    /// skipped), config files or deployment files.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Pin file [default: dflash-check.toml in the current directory or a parent].
    #[arg(long, value_name = "FILE")]
    pub pins: Option<PathBuf>,
    /// A drafter without a pin is an error.
    #[arg(long)]
    pub require_pin: bool,
    /// The engine the drafters will be served with, optionally at a version (vllm, sglang@0.5):
    /// severities follow it. Wins over the pin file's `engine` and each pin's own.
    #[arg(long, value_name = "ENGINE[@X.Y]", value_parser = super::parse_engine)]
    pub engine: Option<EngineRelease>,
    #[command(flatten)]
    pub deny: DenyArgs,
    /// Append an [[ignore]] entry to the pin file for every error and warning found now, each
    /// with the reason `baseline of YYYY-MM-DD` (adopting the gate on an existing repository).
    #[arg(long, conflicts_with = "prune_ignores")]
    pub baseline: bool,
    /// Remove the pin file's expired and unused [[ignore]] entries (the ones this run reports).
    #[arg(long)]
    pub prune_ignores: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub hub: HubArgs,
    /// A container path a Kubernetes manifest names is this local directory, as in `launch`:
    /// `--volume /models=./local-models` reads `/models/Qwen3-8B` from `./local-models/Qwen3-8B`.
    #[arg(long, value_name = "MOUNT=DIR")]
    pub volume: Vec<dflash_check::launch::volume::Volume>,
    /// The largest deployment file read (a script, Dockerfile, compose file or manifests; a
    /// `helm template --include-crds` render is about 5 MiB): bytes, or with KiB, MiB or GiB.
    /// A file over it that configures speculative decoding is the error `deployment-too-large`.
    #[arg(long, value_name = "SIZE", value_parser = dflash_check::launch::read::parse_size, default_value = "16MiB")]
    pub max_file_size: u64,
}

pub fn run(args: &CheckArgs, out: &mut dyn std::io::Write) -> Result<u8> {
    let mut options = check::CheckOptions::new(
        args.pins.as_deref(),
        args.engine.clone(),
        args.require_pin,
        args.hub.resolver_announcing(),
    )?;
    options.volumes = args.volume.clone();
    options.file_cap = Some(args.max_file_size);
    let edit = if args.baseline {
        check::IgnoreEdit::Baseline
    } else if args.prune_ignores {
        check::IgnoreEdit::Prune
    } else {
        check::IgnoreEdit::None
    };
    let gate = check::gate(&args.paths, &options, edit)?;
    if let Some(edited) = &gate.edited {
        super::say(super::Level::Note, edited);
    }
    if gate.baselined {
        // The report as it is; its findings are now entries, so the run passes.
        super::render(&gate.report, &args.output, false, false, out)?;
        return Ok(dflash_check::exit::CLEAN);
    }
    finish(&gate.report, &args.output, args.deny.warnings(), out)
}
