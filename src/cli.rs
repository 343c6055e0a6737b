//! Command-line definition (clap derive) and dispatch. Arguments and environment are resolved
//! into library options here, once, before any work starts; output goes through the library's
//! renderers into a buffer that is written to stdout in one piece.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};

use dflash_check::analysis::{self, AuthorityChoice, DiffReport, TargetChoice};
use dflash_check::report::{self, human::Painter};
use dflash_check::source::builtin;
use dflash_check::{config, exit};

const EXAMPLES: &str = "\
Examples:
  dflash-check diff models/Qwen3.6-27B-DFlash
  dflash-check diff models/Qwen3.6-27B-DFlash --against authoritative/config.json --target models/Qwen3.6-27B
  dflash-check diff models/drafter --snapshot z-lab/Qwen3.6-27B-DFlash --format json

Exit codes: 0 no critical difference, 1 critical differences found, 2 error.";

#[derive(Debug, Parser)]
#[command(
    name = "dflash-check",
    version,
    about = "Check a speculative-decoding drafter config against its authoritative config and its target model",
    long_about = "Check a speculative-decoding drafter config (DFlash, DFlash2, EAGLE-3) before it is deployed.\n\n\
A wrong mask_token_id, target_layer_ids or layer_types crashes nothing: the engine runs and acceptance collapses. \
dflash-check compares the config, field by field, with its authority (a Hub repo at a commit, a file, or a built-in snapshot) \
and decodes every token id through the target's tokenizer.",
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compare a drafter config with its authoritative config, field by field.
    #[command(after_help = EXAMPLES)]
    Diff(DiffArgs),
    /// List the built-in snapshots of known drafters.
    Snapshots(OutputArgs),
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Drafter directory (holding config.json) or config file.
    pub path: PathBuf,
    #[command(flatten)]
    pub authority: AuthorityArgs,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Fail (exit 1) on any difference, minor ones included.
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct AuthorityArgs {
    /// Authoritative config file (or directory holding config.json).
    #[arg(long, value_name = "PATH", group = "authority")]
    pub against: Option<PathBuf>,
    /// Use the built-in snapshot of this repo (see `dflash-check snapshots`).
    #[arg(long, value_name = "REPO", group = "authority")]
    pub snapshot: Option<String>,
}

#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Target model directory: its config.json (vocab_size, layers, hidden size) and tokenizer files.
    #[arg(long, value_name = "DIR")]
    pub target: Option<PathBuf>,
    /// Directory with tokenizer.json and/or tokenizer_config.json (overrides --target's).
    #[arg(long, value_name = "DIR")]
    pub tokenizer: Option<PathBuf>,
    /// Load the full tokenizer with the `tokenizers` crate instead of reading only what is needed.
    #[arg(long)]
    pub full_tokenizer: bool,
}

#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl OutputArgs {
    fn painter(&self) -> Painter {
        let enabled = match self.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        };
        Painter { enabled }
    }
}

impl AuthorityArgs {
    fn choice(&self) -> AuthorityChoice {
        if let Some(p) = &self.against {
            AuthorityChoice::File(p.clone())
        } else if let Some(s) = &self.snapshot {
            AuthorityChoice::Snapshot(s.clone())
        } else {
            AuthorityChoice::Auto
        }
    }
}

impl From<&TargetArgs> for TargetChoice {
    fn from(t: &TargetArgs) -> Self {
        TargetChoice {
            target_dir: t.target.clone(),
            tokenizer_dir: t.tokenizer.clone(),
            full_tokenizer: t.full_tokenizer,
        }
    }
}

/// Runs a parsed command; returns the exit code.
pub fn run(cli: Cli) -> Result<u8> {
    let mut out = Vec::new();
    let code = match cli.command {
        Command::Diff(args) => run_diff(&args, &mut out)?,
        Command::Snapshots(args) => run_snapshots(&args, &mut out)?,
    };
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&out).and_then(|()| stdout.flush()) {
        // A closed pipe (`… | head`) loses output, not the verdict: the exit code stays.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(code),
        Err(e) => Err(e.into()),
        Ok(()) => Ok(code),
    }
}

/// Builds the diff report for one drafter from the command's arguments.
fn diff_report(
    path: &std::path::Path,
    authority: &AuthorityArgs,
    target: &TargetArgs,
) -> Result<DiffReport> {
    let local = config::load(path)?;
    let authority = analysis::resolve_authority(&local, &authority.choice())?;
    let target = analysis::resolve_target(
        &target.into(),
        &[&local, &authority.config],
        Some(&authority),
    )?;
    Ok(DiffReport::build(local, authority, target))
}

fn run_diff(args: &DiffArgs, out: &mut Vec<u8>) -> Result<u8> {
    let report = diff_report(&args.path, &args.authority, &args.target)?;
    match args.output.format {
        Format::Human => {
            report::human::write_diff(out, &report, args.strict, args.output.painter())?
        }
        Format::Json => report::json::write_diff(out, &report, args.strict)?,
    }
    Ok(if report.fails(args.strict) {
        exit::FINDINGS
    } else {
        exit::CLEAN
    })
}

fn run_snapshots(args: &OutputArgs, out: &mut Vec<u8>) -> Result<u8> {
    match args.format {
        Format::Json => {
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
                    "snapshots": list,
                }),
            )?;
            writeln!(out)?;
        }
        Format::Human => {
            for s in builtin::SNAPSHOTS {
                writeln!(out, "{}  (target {})", s.repo, s.target.repo)?;
                writeln!(out, "    {}; recorded {}", s.provenance, builtin::RECORDED)?;
            }
        }
    }
    Ok(exit::CLEAN)
}
