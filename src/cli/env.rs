//! `dflash-check env`: the Hub settings in force and where each came from.

use std::io::Write;

use anyhow::Result;
use clap::Args;

use dflash_check::{exit, report};

use super::{FormatArg, HubArgs, OutputArgs};

#[derive(Debug, Args)]
pub struct EnvArgs {
    #[command(flatten)]
    pub hub: HubArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run(args: &EnvArgs, out: &mut Vec<u8>) -> Result<u8> {
    let inputs = args.hub.resolver();
    let settings = inputs.settings()?;
    let rows = settings.describe();
    args.output.listing_only("env")?;
    match args.output.format {
        FormatArg::Json => {
            let settings: serde_json::Map<String, serde_json::Value> = rows
                .iter()
                .map(|(name, value, source)| {
                    (
                        name.clone(),
                        serde_json::json!({"value": value, "source": source}),
                    )
                })
                .collect();
            serde_json::to_writer_pretty(
                &mut *out,
                &serde_json::json!({"schema_version": report::SCHEMA_VERSION, "command": "env", "settings": settings}),
            )?;
            writeln!(out)?;
        }
        _ => {
            let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
            for (name, value, source) in rows {
                // The cache path and the sources (a token file's path) are input text.
                let line = format!("{name:<w$}  {value}  ({source})");
                writeln!(out, "{}", dflash_check::display::shown(&line))?;
            }
        }
    }
    Ok(exit::CLEAN)
}
