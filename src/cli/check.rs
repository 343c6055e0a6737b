//! `dflash-check check`: the CI gate over every drafter under some paths.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use dflash_check::rules::{EngineSpec, LintOptions};
use dflash_check::{check, pins, suppress};

use super::{finish, DenyArgs, HubArgs, OutputArgs};

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Directories (searched recursively for config.json; hidden folders skipped) or config files.
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
    pub engine: Option<EngineSpec>,
    #[command(flatten)]
    pub deny: DenyArgs,
    /// Append an [[ignore]] entry to the pin file for every error and warning found now, each
    /// with a placeholder reason that must be replaced before the next run.
    #[arg(long, conflicts_with = "prune_ignores")]
    pub baseline: bool,
    /// Remove the pin file's expired and unused [[ignore]] entries (the ones this run reports).
    #[arg(long)]
    pub prune_ignores: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub hub: HubArgs,
}

pub fn run(args: &CheckArgs, out: &mut Vec<u8>) -> Result<u8> {
    let pins = pins::find(args.pins.as_deref())?;
    let root = pins
        .as_ref()
        .map(|p| p.root())
        .unwrap_or_else(|| PathBuf::from("."));
    let engine = args
        .engine
        .or_else(|| pins.as_ref().and_then(|p| p.file.engine));
    let options = check::CheckOptions {
        pins,
        require_pin: args.require_pin,
        // The flag, else the pin file's top-level `engine`; a pin's own engine applies per
        // drafter when no flag is given.
        lint: LintOptions::default().with_engine(engine),
        engine_from_flag: args.engine.is_some(),
        // Resolved when a Hub pin first needs them.
        hub: Some(args.hub.resolver()),
        root,
    };
    let mut report = check::run(&args.paths, &options)?;
    if args.baseline {
        return baseline(&report, options.pins.as_ref(), args, out);
    }
    if args.prune_ignores {
        if let Some(pins) = &options.pins {
            prune(&mut report, pins)?;
        }
    }
    let deny = args.deny.warnings();
    finish(&report, &args.output, deny, out)
}

/// `--baseline`: the report as it is, then its findings appended to the pin file as entries
/// (the file is created beside the working directory when there is none); exit 0.
fn baseline(
    report: &check::CheckReport,
    pins: Option<&pins::LoadedPins>,
    args: &CheckArgs,
    out: &mut Vec<u8>,
) -> Result<u8> {
    use dflash_check::report::Report;
    let (path, count) = suppress::append_baseline(&report.diagnostics(), pins)?;
    super::render(report, &args.output, false, false, out)?;
    super::say(
        super::Level::Note,
        &format!(
            "{count} [[ignore]] entr{} appended to `{}`: replace each reason `{}` before the next run",
            if count == 1 { "y" } else { "ies" },
            path.display(),
            suppress::PLACEHOLDER_REASON
        ),
    );
    Ok(dflash_check::exit::CLEAN)
}

/// `--prune-ignores`: the stale entries this run reported, removed from the pin file and from
/// the report.
fn prune(report: &mut check::CheckReport, pins: &pins::LoadedPins) -> Result<()> {
    let removed = check::prune_ignores(report, pins)?;
    if removed > 0 {
        super::say(
            super::Level::Note,
            &format!(
                "removed {removed} stale [[ignore]] entr{} from `{}`",
                if removed == 1 { "y" } else { "ies" },
                pins.path.display()
            ),
        );
    }
    Ok(())
}
