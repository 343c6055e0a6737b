//! `dflash-check check`: the CI gate over every drafter under some paths.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use dflash_check::rules::LintOptions;
use dflash_check::{check, pins};

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
    #[command(flatten)]
    pub deny: DenyArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub hub: HubArgs,
}

pub fn run(args: &CheckArgs, out: &mut Vec<u8>) -> Result<u8> {
    let pins_path = match &args.pins {
        Some(p) => Some(p.clone()),
        None => pins::discover(std::path::Path::new(".")),
    };
    let pins = pins_path.as_deref().map(pins::load).transpose()?;
    let root = pins
        .as_ref()
        .map(|p| p.root())
        .unwrap_or_else(|| PathBuf::from("."));
    let options = check::CheckOptions {
        pins,
        require_pin: args.require_pin,
        lint: LintOptions::default(),
        // Resolved now, used only by Hub pins: building settings does no I/O.
        hub: args.hub.settings().ok(),
        root,
    };
    let report = check::run(&args.paths, &options)?;
    let deny = args.deny.warnings();
    finish(&report, &args.output, report.fails(deny), deny, out)
}
