//! `dflash-check explain [CODE]`: any code of any command, from the registry.

use anyhow::Result;
use clap::Args;

use dflash_check::diagnostic::Code;
use dflash_check::exit;
use dflash_check::report::explain;

use super::{FormatArg, OutputArgs};

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A code (`target-layer-ids-formula`, `authority-ambiguous`, ...); without it, every code is
    /// listed.
    pub code: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run(args: &ExplainArgs, out: &mut Vec<u8>) -> Result<u8> {
    args.output.listing_only("explain")?;
    let json = args.output.format == FormatArg::Json;
    match &args.code {
        None if json => explain::write_json(out, &Code::all())?,
        None => explain::write_code_list(out)?,
        Some(text) => match Code::parse(text) {
            Some(code) if json => explain::write_json(out, &[code])?,
            Some(code) => {
                if Code::alias(text).is_some() {
                    explain::write_alias_note(out, text, code)?;
                }
                explain::write_explanation(out, code)?
            }
            None => {
                return Err(dflash_check::Error::new(format!("no code `{text}`"))
                    .kind(dflash_check::error::ErrorKind::Usage)
                    .with_hint("run `dflash-check explain` to list every code")
                    .into())
            }
        },
    }
    Ok(exit::CLEAN)
}
