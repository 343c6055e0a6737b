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
    let pins_path = match &args.pins {
        Some(p) => Some(p.clone()),
        None => pins::discover(std::path::Path::new(".")),
    };
    let pins = pins_path.as_deref().map(pins::load).transpose()?;
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
        // Resolved now, used only by Hub pins: building settings does no I/O.
        hub: args.hub.settings().ok(),
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
    let entries = suppress::baseline_entries(&report.diagnostics());
    let path = pins.map_or_else(|| PathBuf::from(pins::FILE_NAME), |p| p.path.clone());
    let text = match pins {
        Some(_) => std::fs::read_to_string(&path).map_err(|e| {
            dflash_check::Error::new(format!("cannot read `{}`: {e}", path.display()))
        })?,
        None => format!("version = {}\n", pins::VERSION),
    };
    if !entries.is_empty() {
        suppress::write_pin_file(&path, &format!("{text}{entries}"))?;
    }
    super::render(report, &args.output, false, false, out)?;
    eprintln!(
        "dflash-check: {} [[ignore]] entr{} appended to `{}`: replace each reason `{}` before the next run",
        entries.matches("[[ignore]]").count(),
        if entries.matches("[[ignore]]").count() == 1 { "y" } else { "ies" },
        path.display(),
        suppress::PLACEHOLDER_REASON
    );
    Ok(dflash_check::exit::CLEAN)
}

/// `--prune-ignores`: removes the stale entries this run reported from the pin file, and their
/// findings from the report (an entry written inline, without its own `[[ignore]]` header,
/// cannot be located and stays reported).
fn prune(report: &mut check::CheckReport, pins: &pins::LoadedPins) -> Result<()> {
    let entries = suppress::entries(pins)?;
    let lines: Vec<usize> = report
        .suppressions
        .stale
        .iter()
        .filter_map(|&i| entries.get(i).and_then(|e| e.line))
        .collect();
    if lines.is_empty() {
        return Ok(());
    }
    let text = std::fs::read_to_string(&pins.path).map_err(|e| {
        dflash_check::Error::new(format!("cannot read `{}`: {e}", pins.path.display()))
    })?;
    suppress::write_pin_file(&pins.path, &suppress::without_entries(&text, &lines))?;
    let pruned: Vec<bool> = report
        .suppressions
        .stale
        .iter()
        .map(|&i| entries.get(i).is_some_and(|e| e.line.is_some()))
        .collect();
    let mut keep = pruned.iter().map(|p| !p);
    report
        .suppressions
        .findings
        .retain(|_| keep.next().unwrap_or(true));
    eprintln!(
        "dflash-check: removed {} stale [[ignore]] entr{} from `{}`",
        lines.len(),
        if lines.len() == 1 { "y" } else { "ies" },
        pins.path.display()
    );
    Ok(())
}
