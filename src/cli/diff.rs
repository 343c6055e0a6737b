//! `dflash-check diff`: a drafter config against its authority, field by field.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use dflash_check::analysis::{self, DiffReport};

use super::{finish, AuthorityArgs, OutputArgs, TargetArgs};

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Drafter directory (holding config.json) or config file.
    pub path: PathBuf,
    #[command(flatten)]
    pub authority: AuthorityArgs,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Fail (exit 1) on any difference, warnings included.
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run(args: &DiffArgs, out: &mut Vec<u8>) -> Result<u8> {
    let (local, authority, target) = analysis::resolve_inputs(
        &args.path,
        &args.authority.choice()?,
        &args.target.choice(&args.authority.hub)?,
        args.authority.hub.settings().ok(),
    )?;
    let report = DiffReport::build(local, authority, target);
    finish(
        &report,
        &args.output,
        report.fails(args.strict),
        args.strict,
        out,
    )
}
