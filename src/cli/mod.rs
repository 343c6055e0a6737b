//! The command line: clap definitions of every command and the arguments they share, and the
//! dispatch. Each command's arguments and its `run` function live in their own file; this one
//! holds what they share (Hub, authority, target and output arguments) and turns a finished
//! report into output and an exit code. Domain policy lives in the library.

mod acceptance;
mod check;
mod diff;
mod doctor;
mod env;
mod explain;
mod fix;
mod launch;
mod lint;
mod pin;
mod snapshots;
mod weights;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};

use dflash_check::exit;
use dflash_check::family::{self, Family, FamilySpec};
use dflash_check::hub::{HubFlags, SettingsCell};
use dflash_check::input::{AuthoritySpec, Resolver, TargetSpec};
use dflash_check::report::{self, Format, Painter, RenderOptions, Report};

mod status;

pub use status::{error_text, say, Level};

const EXAMPLES: &str = "\
Examples:
  dflash-check diff fixtures/incident/Qwen3.6-27B-DFlash --target fixtures/targets/Qwen3.6-27B
  dflash-check diff fixtures/incident/Qwen3.6-27B-DFlash \\
      --against fixtures/incident/authority/config.json
  dflash-check diff models/drafter --snapshot z-lab/Qwen3.6-27B-DFlash --format json

Exit codes: 0 no error-level difference, 1 error-level differences found (--deny warnings: any), \
or several published configs of the drafter's shape and none equal to it, 2 could not run.";

#[derive(Debug, Parser)]
#[command(
    name = "dflash-check",
    version,
    about = "Check a speculative-decoding drafter config against its authoritative config and its target model",
    long_about = "Check a speculative-decoding drafter config (DFlash, DFlash2, DSpark, Domino, EAGLE-3, ...) before it is deployed.\n\n\
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
    Diff(diff::DiffArgs),
    /// Make a drafter config match its authority: minimal edits (or --exact), backup, atomic write, verify.
    #[command(after_help = FIX_EXAMPLES)]
    Fix(fix::FixArgs),
    /// Check a drafter config on its own: against its target model and the engine it will run on.
    #[command(after_help = LINT_EXAMPLES)]
    Lint(lint::LintArgs),
    /// Explain a finding's code (or list every code).
    Explain(explain::ExplainArgs),
    /// The CI gate: check every drafter config and deployment (launch scripts, Dockerfiles, compose files, Kubernetes manifests) under PATHs: diff against pins or built-in snapshots, lint, launch checks.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(check::CheckArgs),
    /// Show a drafter's safetensors tensors (local or on the Hub, headers only) and check them against its config.
    #[command(after_help = weights::WEIGHTS_EXAMPLES)]
    Weights(weights::WeightsArgs),
    /// Record a drafter's authority (and target) at a resolved commit in dflash-check.toml.
    #[command(after_help = CHECK_EXAMPLES)]
    Pin(pin::PinArgs),
    /// List the built-in snapshots of known drafters.
    Snapshots(OutputArgs),
    /// Show the Hub settings in force (endpoint, cache, token, offline, timeout) and where each came from.
    Env(env::EnvArgs),
    /// Check an engine launch command against the drafter and target it names.
    #[command(about = launch_about(), after_help = launch::LAUNCH_EXAMPLES)]
    Launch(launch::LaunchArgs),
    /// Measure a running server's acceptance from its /metrics, with a verdict and the likely cause.
    #[command(about = acceptance_about(), after_help = acceptance::ACCEPTANCE_EXAMPLES)]
    Acceptance(acceptance::AcceptanceArgs),
    /// Why is my drafter slow? Measure, find the drafter and target, run every check, rank the causes, print the repair.
    #[command(after_help = doctor::DOCTOR_EXAMPLES)]
    Doctor(doctor::DoctorArgs),
}

/// `launch`'s one-line help, its engines named from the engine table.
fn launch_about() -> String {
    format!(
        "Check an engine launch command ({}) against the drafter and target it names",
        dflash_check::engine::Engine::displays_listed()
    )
}

/// `acceptance`'s one-line help, naming the engines whose metrics the table knows.
fn acceptance_about() -> String {
    format!(
        "Measure a running {} server's acceptance from its /metrics, with a verdict and the likely cause",
        dflash_check::engine::Engine::measured_listed()
    )
}

/// Runs a parsed command; returns the exit code.
pub fn run(cli: Cli) -> Result<u8> {
    status::set_github(cli.command.format() == FormatArg::Github);
    // `check` over thousands of drafters writes tens of megabytes (5.5 KB of JSON a drafter):
    // written to stdout as it is rendered, not held first (issue 44). Nothing but the writing
    // can fail once its report is built, except `--format github`'s step summary, written
    // after the annotations: that format is held like every other command's output, so that
    // a command that fails (exit 2) prints nothing on stdout.
    if let Command::Check(args) = &cli.command {
        if args.output.format != FormatArg::Github {
            let mut out = Streamed::new();
            let code = check::run(args, &mut out)?;
            out.finish()?;
            return Ok(code);
        }
    }
    let mut out = Vec::new();
    let code = match cli.command {
        Command::Diff(args) => diff::run(&args, &mut out)?,
        Command::Fix(args) => fix::run(&args, &mut out)?,
        Command::Snapshots(args) => snapshots::run(&args, &mut out)?,
        Command::Env(args) => env::run(&args, &mut out)?,
        Command::Check(args) => check::run(&args, &mut out)?,
        Command::Pin(args) => pin::run(&args, &mut out)?,
        Command::Lint(args) => lint::run(&args, &mut out)?,
        Command::Explain(args) => explain::run(&args, &mut out)?,
        Command::Launch(args) => launch::run_launch(&args, &mut out)?,
        Command::Acceptance(args) => acceptance::run_acceptance(&args, &mut out)?,
        Command::Weights(args) => weights::run_weights(&args, &mut out)?,
        Command::Doctor(args) => doctor::run_doctor(&args, &mut out)?,
    };
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&out).and_then(|()| stdout.flush()) {
        // A closed pipe (`… | head`) loses output, not the verdict: the exit code stays.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(code),
        Err(e) => Err(e.into()),
        Ok(()) => Ok(code),
    }
}

/// Standard output, written through a buffer as a report is rendered. A closed pipe
/// (`check … | head`) drops the rest of the output, not the verdict: the exit code stays, as
/// when held output meets a closed pipe. Its own buffer, not a `BufWriter` behind the
/// serializer's many small writes (a fifth of `check`'s rendering went to those layers).
struct Streamed {
    buf: Vec<u8>,
    closed: bool,
}

impl Streamed {
    const CAPACITY: usize = 64 * 1024;

    fn new() -> Streamed {
        Streamed {
            buf: Vec::with_capacity(Self::CAPACITY),
            closed: false,
        }
    }

    fn finish(mut self) -> std::io::Result<()> {
        self.drain()
    }

    /// Writes the buffer to stdout; a closed pipe ends the output.
    fn drain(&mut self) -> std::io::Result<()> {
        if !self.closed && !self.buf.is_empty() {
            let mut stdout = std::io::stdout().lock();
            match stdout.write_all(&self.buf).and_then(|()| stdout.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => self.closed = true,
                other => other?,
            }
        }
        self.buf.clear();
        Ok(())
    }
}

impl Write for Streamed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if self.buf.len() + buf.len() > Self::CAPACITY {
            self.drain()?;
        }
        if !self.closed {
            self.buf.extend_from_slice(buf);
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.drain()
    }
}

impl Command {
    /// The command's `--format`.
    fn format(&self) -> FormatArg {
        let output = match self {
            Command::Diff(a) => &a.output,
            Command::Fix(a) => &a.output,
            Command::Snapshots(a) => a,
            Command::Env(a) => &a.output,
            Command::Check(a) => &a.output,
            Command::Pin(a) => &a.output,
            Command::Lint(a) => &a.output,
            Command::Explain(a) => &a.output,
            Command::Launch(a) => &a.output,
            Command::Acceptance(a) => &a.output,
            Command::Weights(a) => &a.output,
            Command::Doctor(a) => &a.output,
        };
        output.format
    }
}

/// Renders `report` and maps its verdict (the report says whether it fails) to the exit code:
/// the one place a verdict becomes a code.
fn finish(
    report: &dyn Report,
    output: &OutputArgs,
    deny_warnings: bool,
    out: &mut dyn Write,
) -> Result<u8> {
    render(
        report,
        output,
        report.fails(deny_warnings),
        deny_warnings,
        out,
    )
}

/// Renders `report` with a verdict the caller decided (`check --baseline` passes), and maps it
/// to the exit code.
fn render(
    report: &dyn Report,
    output: &OutputArgs,
    fails: bool,
    deny_warnings: bool,
    out: &mut dyn Write,
) -> Result<u8> {
    let options = RenderOptions {
        painter: output.painter(),
        deny_warnings,
        fails,
    };
    report::render(report, output.format.into(), &options, out)?;
    if output.format == FormatArg::Github {
        append_step_summary(report, &options)?;
    }
    Ok(if fails { exit::FINDINGS } else { exit::CLEAN })
}

/// In a GitHub Actions step (`$GITHUB_STEP_SUMMARY` names a file), appends the findings as a
/// Markdown table to the job's summary page (`report::github::append_step_summary`: a file that
/// cannot be written, or is not a regular file, is an error, exit 2).
fn append_step_summary(report: &dyn Report, options: &RenderOptions) -> Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let table = report::github::step_summary(report, options);
    report::github::append_step_summary(std::path::Path::new(&path), &table)?;
    Ok(())
}

/// How to reach the Hub. Flags win over the environment (HF_ENDPOINT, HF_TOKEN, HF_TOKEN_PATH,
/// HF_HOME, HF_HUB_CACHE, HF_HUB_OFFLINE, HF_HUB_DOWNLOAD_TIMEOUT).
#[derive(Debug, Args, Clone, Default)]
pub struct HubArgs {
    /// Hub endpoint URL [env: HF_ENDPOINT; default https://huggingface.co].
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// Hub cache directory [env: HF_HUB_CACHE, $HF_HOME/hub; default ~/.cache/huggingface/hub].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Never contact the Hub; answer from the cache and say so [env: HF_HUB_OFFLINE=1].
    #[arg(long)]
    pub offline: bool,
    /// Seconds to wait for the Hub per request; a GGUF model read from the Hub (`-hf` in a launch
    /// line) gets them once for its whole read, file list and header ranges together [env:
    /// HF_HUB_DOWNLOAD_TIMEOUT; default 10].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
    /// Fail (exit 2) instead of falling back to a cached copy when the Hub cannot be asked.
    #[arg(long)]
    pub require_fresh: bool,
    /// Draw no progress bar for large downloads (none is drawn unless stderr is a terminal).
    #[arg(long, short)]
    pub quiet: bool,
}

impl HubArgs {
    /// The command's input resolver: the one set of Hub settings of the command, resolved
    /// (from these flags, then the environment) when an input first needs the Hub.
    pub fn resolver(&self) -> Resolver {
        self.resolver_with(status::progress_sink(self.quiet))
    }

    /// The resolver of a command that asks the Hub only for what its inputs name (`check`):
    /// one note on stderr before its first request, so a run without network does not wait in
    /// silence, naming `--offline` to skip the Hub (issue 45).
    pub fn resolver_announcing(&self) -> Resolver {
        let quiet = self.quiet;
        self.resolver_with(status::progress_sink(quiet).announcing(move |what| {
            if !quiet {
                status::say(
                    status::Level::Note,
                    &format!(
                        "asking the Hub for {what} (and whatever else the inputs name); \
                         --offline skips the Hub (cache and built-in snapshots only)"
                    ),
                );
            }
        }))
    }

    fn resolver_with(&self, progress: dflash_check::hub::ProgressSink) -> Resolver {
        let flags = HubFlags {
            endpoint: self.endpoint.clone(),
            cache_dir: self.cache_dir.clone(),
            offline: self.offline,
            timeout_secs: self.timeout,
            require_fresh: self.require_fresh,
        };
        Resolver::new(SettingsCell::from_env(flags, progress))
    }
}

#[derive(Debug, Args)]
pub struct AuthorityArgs {
    /// Authoritative config file (or directory holding config.json).
    #[arg(long, value_name = "PATH", group = "authority")]
    pub against: Option<PathBuf>,
    /// Use the built-in snapshot of this repo (see `dflash-check snapshots`).
    #[arg(long, value_name = "REPO", group = "authority")]
    pub snapshot: Option<String>,
    /// The drafter's Hub repo, optionally at a branch, tag or commit sha: ORG/NAME[@REV].
    #[arg(long, value_name = "REPO[@REV]", group = "authority")]
    pub from_hub: Option<String>,
    #[command(flatten)]
    pub hub: HubArgs,
}

impl AuthorityArgs {
    /// The authority the user named, for the library to resolve.
    pub fn spec(&self) -> AuthoritySpec {
        AuthoritySpec {
            against: self.against.clone(),
            snapshot: self.snapshot.clone(),
            from_hub: self.from_hub.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Target model: a directory (config.json and tokenizer files) or a Hub repo hf://ORG/NAME[@REV].
    #[arg(long, value_name = "DIR|REPO")]
    pub target: Option<String>,
    /// Directory with tokenizer.json and/or tokenizer_config.json (overrides --target's).
    #[arg(long, value_name = "DIR")]
    pub tokenizer: Option<PathBuf>,
    /// Load the full tokenizer with the `tokenizers` crate instead of reading only what is needed.
    #[arg(long)]
    pub full_tokenizer: bool,
}

impl TargetArgs {
    /// `--target` and `--tokenizer`, for the library to resolve.
    pub fn spec(&self) -> TargetSpec {
        TargetSpec {
            target: self.target.clone(),
            tokenizer: self.tokenizer.clone(),
            full_tokenizer: self.full_tokenizer,
            no_builtin: false,
        }
    }
}

#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    pub format: FormatArg,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// The one output format flag of every command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Human,
    Json,
    /// GitHub Actions workflow commands (annotations on the offending lines).
    Github,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
    /// GitLab Code Quality JSON (a `codequality` report artifact).
    Gitlab,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Human => Format::Human,
            FormatArg::Json => Format::Json,
            FormatArg::Github => Format::Github,
            FormatArg::Sarif => Format::Sarif,
            FormatArg::Gitlab => Format::Gitlab,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl OutputArgs {
    /// For commands that list facts rather than findings (`snapshots`, `env`): formats made of
    /// findings (annotations, SARIF, ...) would print nothing true, so they are refused rather
    /// than silently answered in human text.
    fn listing_only(&self, command: &str) -> Result<()> {
        if matches!(self.format, FormatArg::Human | FormatArg::Json) {
            return Ok(());
        }
        Err(dflash_check::Error::new(
            format!(
                "`{command}` lists facts, not findings: --format {:?} is not available for it",
                self.format
            )
            .to_lowercase(),
        )
        .kind(dflash_check::error::ErrorKind::Usage)
        .with_hint("use --format human or --format json")
        .into())
    }

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DenyLevel {
    Warnings,
}

/// The one flag that makes warnings fail, for every command that gates.
#[derive(Debug, Args, Clone, Default)]
pub struct DenyArgs {
    /// Count warnings as failures: `--deny warnings`.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub deny: Option<DenyLevel>,
    /// The same as `--deny warnings` (kept for `diff`'s earlier flag).
    #[arg(long, hide = true)]
    pub strict: bool,
}

impl DenyArgs {
    /// Whether warnings fail the gate.
    pub fn warnings(&self) -> bool {
        self.strict || self.deny == Some(DenyLevel::Warnings)
    }
}

pub(crate) const CHECK_EXAMPLES: &str = "\
Examples:
  dflash-check pin models/Qwen3.6-27B-DFlash --from-hub z-lab/Qwen3.6-27B-DFlash \\
      --target hf://Qwen/Qwen3.6-27B
  dflash-check check . --require-pin --deny warnings --format github
  dflash-check check . --require-pin --deny warnings --format sarif > dflash.sarif
  dflash-check check deploy/ --offline          # launch scripts, Dockerfiles, k8s manifests

Exit codes: 0 clean (or only warnings: an unverified drafter, nothing found; the verdict line says \
so), 1 an error-level finding in any drafter or deployment (--deny warnings: warnings too), 2 could \
not run.";

pub(crate) const FIX_EXAMPLES: &str = "\
Examples:
  dflash-check fix models/Qwen3.6-27B-DFlash --snapshot z-lab/Qwen3.6-27B-DFlash --dry-run
  dflash-check fix models/Qwen3.6-27B-DFlash --against authoritative/config.json
  dflash-check fix models/Qwen3.6-27B-DFlash --against authoritative/config.json --exact

Exit codes: 0 fixed (or nothing to do), 1 --dry-run and something would change, 2 error (the file is left as it was).";

pub(crate) const LINT_EXAMPLES: &str = "\
Examples:
  dflash-check lint models/Qwen3.6-27B-DFlash --target models/Qwen3.6-27B
  dflash-check lint models/drafter --target models/Qwen3.6-27B --engine vllm \\
      --speculative-config '{\"method\": \"dflash\", \"num_speculative_tokens\": 15}'
  dflash-check lint models/drafter --engine sglang --num-draft-tokens 16
  dflash-check explain target-layer-ids-formula

Exit codes: 0 no error (warnings shown), 1 errors found (with --deny warnings: warnings too), 2 could not run.";

/// `--family` (lint) and `--draft-family` (acceptance, the rows `keep` keeps): the family
/// table's names and aliases are clap's possible values, so help lists them and a new row is a
/// new value.
fn family_parser(
    keep: fn(&FamilySpec) -> bool,
) -> impl clap::builder::TypedValueParser<Value = Family> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = family::ROWS
        .iter()
        .filter(|r| keep(r))
        .map(|r| PossibleValue::new(r.cli).aliases(r.cli_aliases.iter().copied()));
    PossibleValuesParser::new(values)
        .try_map(|name| Family::from_cli(&name).ok_or(format!("no drafter family `{name}`")))
}

/// `--engine ENGINE[@RELEASE]` (lint, check, pin, launch, doctor, weights): `vllm`, `sglang`,
/// `vllm@0.26`, `llama.cpp@b11312`.
fn parse_engine(text: &str) -> std::result::Result<dflash_check::rules::EngineRelease, String> {
    dflash_check::rules::EngineRelease::parse(text)
}
