//! `dflash-check pin`: record a drafter's authority (and target) at a resolved commit.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use dflash_check::hub::RepoRef;
use dflash_check::{exit, pins};

use super::{FormatArg, HubArgs, OutputArgs};

#[derive(Debug, Args)]
pub struct PinArgs {
    /// Drafter directory (holding config.json).
    pub path: PathBuf,
    /// The drafter's Hub repo, at a branch, tag or sha: ORG/NAME[@REV]; the resolved sha is recorded.
    #[arg(long, value_name = "REPO[@REV]", group = "pin_authority")]
    pub from_hub: Option<String>,
    /// Pin a built-in snapshot instead.
    #[arg(long, value_name = "REPO", group = "pin_authority")]
    pub snapshot: Option<String>,
    /// Pin an authoritative config file instead (stored relative to the pin file).
    #[arg(long, value_name = "PATH", group = "pin_authority")]
    pub against: Option<PathBuf>,
    /// Target model: a Hub repo hf://ORG/NAME[@REV] (its sha is recorded) or a directory.
    #[arg(long, value_name = "REPO|DIR")]
    pub target: Option<String>,
    /// The engine (and version) the drafter was reviewed for, recorded in the pin: `check` lints
    /// it for that engine unless given `--engine`.
    #[arg(long, value_name = "ENGINE[@X.Y]", value_parser = super::parse_engine)]
    pub engine: Option<dflash_check::rules::EngineRelease>,
    /// Pin file to update [default: dflash-check.toml found from PATH upwards, else ./dflash-check.toml].
    #[arg(long, value_name = "FILE")]
    pub pins: Option<PathBuf>,
    #[command(flatten)]
    pub hub: HubArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run(args: &PinArgs, out: &mut Vec<u8>) -> Result<u8> {
    args.output.listing_only("pin")?;
    let source = if let Some(r) = &args.from_hub {
        let repo: RepoRef = r.parse().map_err(dflash_check::Error::from)?;
        pins::PinSource::Hub(repo)
    } else if let Some(s) = &args.snapshot {
        pins::PinSource::Snapshot(s.clone())
    } else if let Some(p) = &args.against {
        pins::PinSource::File(p.clone())
    } else {
        pins::PinSource::Auto
    };
    let recorded = pins::record(&pins::PinRequest {
        drafter: args.path.clone(),
        source,
        target: args.target.clone(),
        pins: args.pins.clone(),
        hub: Some(args.hub.resolver()),
        date: pins::today(),
        engine: args.engine.clone(),
    })?;
    if args.output.format == FormatArg::Json {
        serde_json::to_writer_pretty(
            &mut *out,
            &serde_json::json!({
                "schema_version": dflash_check::report::SCHEMA_VERSION,
                "command": "pin",
                "pin_file": recorded.pin_file.display().to_string(),
                "written_to": recorded.written.path.display().to_string(),
                "key": recorded.key,
                "summary": recorded.summary,
            }),
        )?;
        writeln!(out)?;
        return Ok(exit::CLEAN);
    }
    // The key, the summary and the path name inputs: shown through the display filter.
    let shown = |s: &str| dflash_check::display::shown(s).into_owned();
    writeln!(
        out,
        "pinned {} to {}",
        shown(&recorded.key),
        shown(&recorded.summary)
    )?;
    writeln!(
        out,
        "in {} — commit it; `dflash-check check` will compare against exactly this.",
        shown(&recorded.written.through())
    )?;
    Ok(exit::CLEAN)
}
