//! `dflash-check fix`: make a drafter config match its authority, safely.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use dflash_check::fix;

use super::{finish, AuthorityArgs, OutputArgs, TargetArgs};

#[derive(Debug, Args)]
pub struct FixArgs {
    /// Drafter directory (holding config.json) or config file.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub authority: AuthorityArgs,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Write the authority's bytes verbatim instead of editing only the values that differ.
    #[arg(long, conflicts_with = "prune")]
    pub exact: bool,
    /// Also remove keys that only the local file has (they are kept by default).
    #[arg(long)]
    pub prune: bool,
    /// Print a unified diff of what would change and write nothing (exit 1 if anything would).
    #[arg(long)]
    pub dry_run: bool,
    /// Do not keep a copy of the original (config.json.bak, .bak.1, ...).
    #[arg(long)]
    pub no_backup: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run(args: &FixArgs, out: &mut Vec<u8>) -> Result<u8> {
    let (local, authority, target) = args
        .authority
        .hub
        .resolver()
        .diff_inputs(&args.path, &args.authority.spec(), &args.target.spec())?
        .single()?;
    super::status::warn_inputs(&target.warnings);
    let mode = if args.exact {
        fix::Mode::Exact
    } else if args.prune {
        fix::Mode::Prune
    } else {
        fix::Mode::Minimal
    };
    let opts = fix::FixOptions {
        mode,
        dry_run: args.dry_run,
        backup: !args.no_backup,
    };
    let report = fix::run(&local, &authority, &target, &opts)?;
    finish(&report, &args.output, false, out)
}
