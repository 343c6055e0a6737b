//! Command-line definition (clap derive) and dispatch. Arguments and environment are resolved
//! into library options here, once, before any work starts; output goes through the library's
//! renderers into a buffer that is written to stdout in one piece.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};

use dflash_check::analysis::{self, AuthorityChoice, DiffReport, TargetChoice, TargetContext};
use dflash_check::config::ConfigFile;
use dflash_check::hub::{self, HubFlags, HubSettings, RepoRef};
use dflash_check::report::{self, human::Painter};
use dflash_check::rules::{self, render, Engine, Family, LintOptions};
use dflash_check::source::{builtin, Authority};
use dflash_check::{check, config, exit, fix, pins};

mod status;

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
    /// Make a drafter config match its authority: minimal edits (or --exact), backup, atomic write, verify.
    #[command(after_help = FIX_EXAMPLES)]
    Fix(FixArgs),
    /// Check a drafter config on its own: against its target model and the engine it will run on.
    #[command(after_help = LINT_EXAMPLES)]
    Lint(LintArgs),
    /// Explain a lint rule (or list every rule code).
    Explain(ExplainArgs),
    /// The CI gate: check every drafter config under PATHs (diff against pins or built-in snapshots, and lint).
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// Record a drafter's authority (and target) at a resolved commit in dflash-check.toml.
    #[command(after_help = CHECK_EXAMPLES)]
    Pin(PinArgs),
    /// List the built-in snapshots of known drafters.
    Snapshots(OutputArgs),
    /// Show the Hub settings in force (endpoint, cache, token, offline, timeout) and where each came from.
    Env(EnvArgs),
}

const CHECK_EXAMPLES: &str = "\
Examples:
  dflash-check pin models/Qwen3.6-27B-DFlash --from-hub z-lab/Qwen3.6-27B-DFlash --target Qwen/Qwen3.6-27B
  dflash-check check models/ --format github
  dflash-check check models/ --format sarif > dflash.sarif

Exit codes: 0 clean, 1 an error-level finding in any drafter (--deny warnings: warnings too), 2 could not run.";

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
    /// Count warnings as failures: `--deny warnings`.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub deny: Option<DenyLevel>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
    pub format: CheckFormat,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    #[command(flatten)]
    pub hub: HubArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    Human,
    Json,
    /// GitHub Actions workflow commands (annotations on the offending lines).
    Github,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
}

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
    /// Target model: a Hub repo ORG/NAME[@REV] (its sha is recorded) or a directory.
    #[arg(long, value_name = "REPO|DIR")]
    pub target: Option<String>,
    /// Pin file to update [default: dflash-check.toml found from PATH upwards, else ./dflash-check.toml].
    #[arg(long, value_name = "FILE")]
    pub pins: Option<PathBuf>,
    #[command(flatten)]
    pub hub: HubArgs,
}

#[derive(Debug, Args)]
pub struct EnvArgs {
    #[command(flatten)]
    pub hub: HubArgs,
    #[command(flatten)]
    pub output: OutputArgs,
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
    /// Seconds to wait for the Hub per request [env: HF_HUB_DOWNLOAD_TIMEOUT; default 10].
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
    /// Resolves flags and environment into settings, once.
    pub fn settings(&self) -> Result<HubSettings> {
        let flags = HubFlags {
            endpoint: self.endpoint.clone(),
            cache_dir: self.cache_dir.clone(),
            offline: self.offline,
            timeout_secs: self.timeout,
            require_fresh: self.require_fresh,
        };
        let env = |name: &str| std::env::var(name).ok();
        let mut settings = HubSettings::resolve(&flags, &env).map_err(dflash_check::Error::from)?;
        settings.progress = status::progress_sink(self.quiet);
        Ok(settings)
    }
}

const FIX_EXAMPLES: &str = "\
Examples:
  dflash-check fix models/Qwen3.6-27B-DFlash --snapshot z-lab/Qwen3.6-27B-DFlash --dry-run
  dflash-check fix models/Qwen3.6-27B-DFlash --against authoritative/config.json
  dflash-check fix models/Qwen3.6-27B-DFlash --against authoritative/config.json --exact

Exit codes: 0 fixed (or nothing to do), 1 --dry-run and something would change, 2 error (the file is left as it was).";

#[derive(Debug, Args)]
pub struct FixArgs {
    /// Drafter directory (holding config.json) or config file.
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

const LINT_EXAMPLES: &str = "\
Examples:
  dflash-check lint models/Qwen3.6-27B-DFlash --target models/Qwen3.6-27B
  dflash-check lint models/drafter --target models/Qwen3.6-27B --engine vllm --speculative-config '{\"method\": \"dflash\", \"num_speculative_tokens\": 15}'
  dflash-check lint models/drafter --engine sglang --num-draft-tokens 16
  dflash-check explain target-layer-ids-formula

Exit codes: 0 no error (warnings shown), 1 errors found (with --deny warnings: warnings too), 2 could not run.";

#[derive(Debug, Args)]
pub struct LintArgs {
    /// Drafter directory (holding config.json) or config file.
    pub path: PathBuf,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Do not use built-in target facts or token tables when no --target is given.
    #[arg(long)]
    pub no_builtin: bool,
    #[command(flatten)]
    pub hub: HubArgs,
    /// Use this family's rules instead of detecting the family.
    #[arg(long, value_enum)]
    pub family: Option<FamilyArg>,
    /// The engine the drafter will be served with.
    #[arg(long, value_enum)]
    pub engine: Option<EngineArg>,
    /// vLLM's --speculative-config JSON, checked against the config (needs --engine vllm).
    #[arg(long, value_name = "JSON")]
    pub speculative_config: Option<String>,
    /// SGLang's --speculative-num-draft-tokens, checked against block_size (needs --engine sglang).
    #[arg(long, value_name = "B")]
    pub num_draft_tokens: Option<u64>,
    /// Count warnings as failures: `--deny warnings`.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub deny: Option<DenyLevel>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A rule code (`target-layer-ids-formula`); without it, every code is listed.
    pub code: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FamilyArg {
    Dflash,
    Dflash2,
    Eagle3,
    Speculators,
}

impl From<FamilyArg> for Family {
    fn from(f: FamilyArg) -> Self {
        match f {
            FamilyArg::Dflash => Family::Dflash,
            FamilyArg::Dflash2 => Family::Dflash2,
            FamilyArg::Eagle3 => Family::Eagle3,
            FamilyArg::Speculators => Family::Speculators,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    Vllm,
    Sglang,
}

impl From<EngineArg> for Engine {
    fn from(e: EngineArg) -> Self {
        match e {
            EngineArg::Vllm => Engine::Vllm,
            EngineArg::Sglang => Engine::Sglang,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DenyLevel {
    Warnings,
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
    /// The drafter's Hub repo, optionally at a branch, tag or commit sha: ORG/NAME[@REV].
    #[arg(long, value_name = "REPO[@REV]", group = "authority")]
    pub from_hub: Option<String>,
    #[command(flatten)]
    pub hub: HubArgs,
}

#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Target model: a directory (config.json and tokenizer files) or a Hub repo ORG/NAME[@REV].
    #[arg(long, value_name = "DIR|REPO")]
    pub target: Option<String>,
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
    /// The authority for the drafter at `local` (a Hub cache snapshot path names its repo).
    pub fn choice(&self, local: &std::path::Path) -> Result<AuthorityChoice> {
        if let Some(p) = &self.against {
            return Ok(AuthorityChoice::File(p.clone()));
        }
        if let Some(s) = &self.snapshot {
            return Ok(AuthorityChoice::Snapshot(s.clone()));
        }
        if let Some(r) = &self.from_hub {
            let repo: RepoRef = r.parse().map_err(dflash_check::Error::from)?;
            return Ok(AuthorityChoice::Hub {
                repo,
                settings: Box::new(self.hub.settings()?),
                inferred: None,
            });
        }
        if let Some((repo, sha)) = hub::detect_cache_snapshot(local) {
            // A cached snapshot of commit `sha`: compare it with what the repo's main is now.
            return Ok(AuthorityChoice::Hub {
                repo: RepoRef { repo: repo.clone(), revision: None },
                settings: Box::new(self.hub.settings()?),
                inferred: Some(format!(
                    "the path is a Hub cache snapshot of {repo} at commit {sha}; compared with the repo's main branch"
                )),
            });
        }
        Ok(AuthorityChoice::Auto)
    }
}

impl TargetArgs {
    /// Resolves `--target` (a directory or a Hub repo) and `--tokenizer` into a choice.
    pub fn choice(&self, hub_args: &HubArgs) -> Result<TargetChoice> {
        let mut choice = TargetChoice {
            tokenizer_dir: self.tokenizer.clone(),
            full_tokenizer: self.full_tokenizer,
            ..TargetChoice::default()
        };
        match &self.target {
            Some(t) if std::path::Path::new(t).exists() => {
                choice.target_dir = Some(PathBuf::from(t))
            }
            Some(t) => {
                let repo: RepoRef = t.parse().map_err(|e: hub::HubError| {
                    dflash_check::Error::new(format!(
                        "--target `{t}` is neither a directory nor a Hub repo id: {}",
                        e.message
                    ))
                })?;
                choice.target_hub = Some(repo);
                choice.hub = Some(Box::new(hub_args.settings()?));
            }
            None => {}
        }
        if choice.hub.is_none() && self.target.is_none() && self.tokenizer.is_none() {
            // Only a Hub authority's model card can name a target: settings are cheap, no I/O.
            choice.hub = hub_args.settings().ok().map(Box::new);
        }
        Ok(choice)
    }
}

/// Runs a parsed command; returns the exit code.
pub fn run(cli: Cli) -> Result<u8> {
    let mut out = Vec::new();
    let code = match cli.command {
        Command::Diff(args) => run_diff(&args, &mut out)?,
        Command::Fix(args) => run_fix(&args, &mut out)?,
        Command::Snapshots(args) => run_snapshots(&args, &mut out)?,
        Command::Env(args) => run_env(&args, &mut out)?,
        Command::Check(args) => run_check(&args, &mut out)?,
        Command::Pin(args) => run_pin(&args, &mut out)?,
        Command::Lint(args) => run_lint(&args, &mut out)?,
        Command::Explain(args) => run_explain(&args, &mut out)?,
    };
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&out).and_then(|()| stdout.flush()) {
        // A closed pipe (`… | head`) loses output, not the verdict: the exit code stays.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(code),
        Err(e) => Err(e.into()),
        Ok(()) => Ok(code),
    }
}

/// Loads the drafter and resolves its authority and target from the command's arguments.
fn resolve_inputs(
    path: &std::path::Path,
    authority: &AuthorityArgs,
    target: &TargetArgs,
) -> Result<(ConfigFile, Authority, TargetContext)> {
    let local = config::load(path)?;
    let authority_choice = authority.choice(&local.path)?;
    let mut target_choice = target.choice(&authority.hub)?;
    // Only a Hub authority has a model card that can name the target.
    if !matches!(authority_choice, AuthorityChoice::Hub { .. })
        && target_choice.target_hub.is_none()
    {
        target_choice.hub = None;
    }
    let authority = analysis::resolve_authority(&local, &authority_choice)?;
    let target = analysis::resolve_target(
        &target_choice,
        &[&local, &authority.config],
        Some(&authority),
    )?;
    Ok((local, authority, target))
}

/// Builds the diff report for one drafter from the command's arguments.
fn diff_report(
    path: &std::path::Path,
    authority: &AuthorityArgs,
    target: &TargetArgs,
) -> Result<DiffReport> {
    let (local, authority, target) = resolve_inputs(path, authority, target)?;
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

fn run_fix(args: &FixArgs, out: &mut Vec<u8>) -> Result<u8> {
    let (local, authority, target) = resolve_inputs(&args.path, &args.authority, &args.target)?;
    status::warn_inputs(&target.warnings);
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
    match args.output.format {
        Format::Human => fix::render::write_human(out, &report, args.output.painter())?,
        Format::Json => fix::render::write_json(out, &report)?,
    }
    Ok(fix::render::exit_code(&report))
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

fn run_env(args: &EnvArgs, out: &mut Vec<u8>) -> Result<u8> {
    let settings = args.hub.settings()?;
    let rows = settings.describe();
    match args.output.format {
        Format::Json => {
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
        Format::Human => {
            let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
            for (name, value, source) in rows {
                writeln!(out, "{name:<w$}  {value}  ({source})")?;
            }
        }
    }
    Ok(exit::CLEAN)
}

impl LintArgs {
    /// Resolves the engine flags into lint options, refusing inconsistent combinations.
    fn options(&self) -> Result<LintOptions> {
        let engine = self.engine.map(Engine::from);
        if self.speculative_config.is_some() && engine != Some(Engine::Vllm) {
            anyhow::bail!("--speculative-config is vLLM's flag: pass --engine vllm with it");
        }
        if self.num_draft_tokens.is_some() && engine != Some(Engine::Sglang) {
            anyhow::bail!("--num-draft-tokens is SGLang's flag: pass --engine sglang with it");
        }
        let speculative_config = match &self.speculative_config {
            None => None,
            Some(text) => {
                let v: serde_json::Value = serde_json::from_str(text)
                    .map_err(|e| anyhow::anyhow!("--speculative-config is not valid JSON: {e}"))?;
                if !v.is_object() {
                    anyhow::bail!("--speculative-config must be a JSON object, like vLLM's flag");
                }
                Some(v)
            }
        };
        Ok(LintOptions {
            family: self.family.map(Family::from),
            engine,
            speculative_config,
            num_draft_tokens: self.num_draft_tokens,
        })
    }
}

fn run_lint(args: &LintArgs, out: &mut Vec<u8>) -> Result<u8> {
    let options = args.options()?;
    let local = config::load(&args.path)?;
    let mut choice = args.target.choice(&args.hub)?;
    choice.no_builtin = args.no_builtin;
    let target = analysis::resolve_target(&choice, &[&local], None)?;
    status::warn_inputs(&target.warnings);
    let report = rules::lint(&local, &options, &target)?;
    let deny = args.deny == Some(DenyLevel::Warnings);
    match args.output.format {
        Format::Human => render::write_human(out, &report, deny, args.output.painter())?,
        Format::Json => render::write_json(out, &report, deny)?,
    }
    Ok(if report.fails(deny) {
        exit::FINDINGS
    } else {
        exit::CLEAN
    })
}

fn run_explain(args: &ExplainArgs, out: &mut Vec<u8>) -> Result<u8> {
    match &args.code {
        None => render::write_rule_list(out)?,
        Some(code) => match rules::rule(code) {
            Some(r) => render::write_explanation(out, r)?,
            None => {
                return Err(dflash_check::Error::new(format!("no lint rule `{code}`"))
                    .with_hint("run `dflash-check explain` to list every rule code")
                    .into())
            }
        },
    }
    Ok(exit::CLEAN)
}

fn run_check(args: &CheckArgs, out: &mut Vec<u8>) -> Result<u8> {
    let pins_path = match &args.pins {
        Some(p) => Some(p.clone()),
        None => pins::discover(std::path::Path::new(".")),
    };
    let pins = pins_path.as_deref().map(pins::load).transpose()?;
    let root = pins
        .as_ref()
        .map(|p| p.root())
        .unwrap_or_else(|| PathBuf::from("."));
    let options = check::CheckOptions {
        pins,
        require_pin: args.require_pin,
        lint: LintOptions::default(),
        // Resolved now, used only by Hub pins: building settings does no I/O.
        hub: args.hub.settings().ok(),
        root,
    };
    let report = check::run(&args.paths, &options)?;
    let deny = args.deny == Some(DenyLevel::Warnings);
    let painter = OutputArgs {
        format: Format::Human,
        color: args.color,
    }
    .painter();
    match args.format {
        CheckFormat::Human => report::check::write_human(out, &report, deny, painter)?,
        CheckFormat::Json => report::check::write_json(out, &report, deny)?,
        CheckFormat::Github => report::github::write(out, &report)?,
        CheckFormat::Sarif => report::sarif::write(out, &report)?,
    }
    Ok(if report.fails(deny) {
        exit::FINDINGS
    } else {
        exit::CLEAN
    })
}

fn run_pin(args: &PinArgs, out: &mut Vec<u8>) -> Result<u8> {
    let local = config::load(&args.path)?;
    let pins_path = match &args.pins {
        Some(p) => p.clone(),
        None => pins::discover(&local.dir()).unwrap_or_else(|| PathBuf::from(pins::FILE_NAME)),
    };
    let mut loaded = if pins_path.is_file() {
        pins::load(&pins_path)?
    } else {
        pins::LoadedPins {
            path: pins_path.clone(),
            file: pins::PinFile {
                version: pins::VERSION,
                ..Default::default()
            },
        }
    };
    let key = loaded.key_for(&local.path).ok_or_else(|| {
        dflash_check::Error::new(format!(
            "`{}` is not inside `{}`'s directory",
            local.path.display(),
            pins_path.display()
        ))
        .with_hint("pass --pins with a pin file at the repository root")
    })?;
    let mut pin = pins::Pin {
        pinned: Some(today()),
        ..Default::default()
    };
    let mut summary: String;
    if let Some(r) = &args.from_hub {
        let repo: RepoRef = r.parse().map_err(dflash_check::Error::from)?;
        let settings = args.hub.settings()?;
        let authority = dflash_check::source::hub::load(&settings, &repo, None)?;
        let sha = authority.sha.clone().unwrap_or_default();
        summary = format!("{}@{sha} ({})", authority.id, authority.provenance);
        pin.hub = Some(authority.id);
        pin.revision = Some(sha);
    } else if let Some(s) = &args.snapshot {
        let snap = builtin::Snapshot::find(s)
            .ok_or_else(|| dflash_check::Error::new(format!("no built-in snapshot named `{s}`")))?;
        summary = format!("built-in snapshot {}", snap.repo);
        pin.snapshot = Some(snap.repo.to_string());
    } else if let Some(p) = &args.against {
        let file = config::config_path(p)?;
        config::load(&file)?;
        let rel = check::display(&file, &loaded.root());
        summary = format!("file {rel}");
        pin.against = Some(rel);
    } else {
        let a = builtin::match_snapshot(&local)?;
        summary = format!(
            "built-in snapshot {} ({})",
            a.id,
            a.matched_by.unwrap_or_default()
        );
        pin.snapshot = Some(a.id);
    }
    if let Some(t) = &args.target {
        if std::path::Path::new(t).is_dir() {
            pin.target = Some(check::display(std::path::Path::new(t), &loaded.root()));
        } else {
            let repo: RepoRef = t.parse().map_err(dflash_check::Error::from)?;
            let settings = args.hub.settings()?;
            let fetched = dflash_check::source::hub::fetch_target(&settings, &repo, false)?;
            summary.push_str(&format!("; target {}@{}", fetched.repo, fetched.sha));
            pin.target = Some(fetched.repo);
            pin.target_revision = Some(fetched.sha);
        }
    }
    loaded.file.drafters.insert(key.clone(), pin);
    pins::save(&loaded.path, &loaded.file)?;
    writeln!(out, "pinned {key} to {summary}")?;
    writeln!(
        out,
        "in {} — commit it; `dflash-check check` will compare against exactly this.",
        loaded.path.display()
    )?;
    Ok(exit::CLEAN)
}

/// Today's date (UTC) as YYYY-MM-DD, for the pin file's reviewers.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
