//! `dflash-check snapshots`: the built-in snapshots of known drafters.

use std::io::Write;

use anyhow::Result;

use dflash_check::source::builtin;
use dflash_check::{exit, report};

use super::{FormatArg, OutputArgs};

pub fn run(args: &OutputArgs, out: &mut Vec<u8>) -> Result<u8> {
    args.listing_only("snapshots")?;
    match args.format {
        FormatArg::Json => {
            let list: Vec<serde_json::Value> = builtin::SNAPSHOTS
                .iter()
                .map(|s| {
                    serde_json::json!({
                        "repo": s.repo,
                        "revision": s.revision,
                        "provenance": s.provenance,
                        "recorded": builtin::RECORDED,
                        "target": s.target.repo,
                    })
                })
                .collect();
            serde_json::to_writer_pretty(
                &mut *out,
                &serde_json::json!({
                    "schema_version": report::SCHEMA_VERSION,
                    "command": "snapshots",
                    "snapshots": list,
                }),
            )?;
            writeln!(out)?;
        }
        _ => {
            for s in builtin::SNAPSHOTS {
                writeln!(out, "{}  (target {})", s.repo, s.target.repo)?;
                writeln!(out, "    {}; recorded {}", s.provenance, builtin::RECORDED)?;
            }
        }
    }
    Ok(exit::CLEAN)
}
