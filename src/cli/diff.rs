//! `dflash-check diff`: a drafter config against its authority, field by field.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use dflash_check::analysis::{DiffReport, Inputs};

use super::{finish, AuthorityArgs, DenyArgs, OutputArgs, TargetArgs};

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Drafter directory (holding config.json) or config file.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub authority: AuthorityArgs,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub deny: DenyArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run(args: &DiffArgs, out: &mut Vec<u8>) -> Result<u8> {
    let inputs = args.authority.hub.resolver().diff_inputs(
        &args.path,
        &args.authority.spec(),
        &args.target.spec(),
    )?;
    let deny = args.deny.warnings();
    match inputs {
        Inputs::One(inputs) => {
            let (local, authority, target) = *inputs;
            let report = DiffReport::build(local, authority.into(), target);
            finish(&report, &args.output, deny, out)
        }
        // Equal to none of several candidates: not the published config of any of them.
        Inputs::Ambiguous(report) => finish(&*report, &args.output, deny, out),
    }
}
