//! `dflash-check weights PATH|ORG/NAME[@REV]`: the safetensors tensor table of a drafter (local
//! or on the Hub, headers only) and the weights checks against the config beside it.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use dflash_check::input::InputRef;

use dflash_check::config::{self, TargetFacts};
use dflash_check::rules::family;
use dflash_check::source;
use dflash_check::weights;

use super::{finish, DenyArgs, HubArgs, OutputArgs};

pub const WEIGHTS_EXAMPLES: &str = "\
Examples:
  dflash-check weights models/Qwen3-8B-DFlash-b16
  dflash-check weights models/Qwen3-8B-DFlash-b16 --target models/Qwen3-8B --format json
  dflash-check weights z-lab/Qwen3-8B-DFlash-b16@main

Only the safetensors headers are read (8 bytes and the JSON header of each file; on the Hub, one
or two range requests per file), never the weights.

Exit codes: 0 no error-level finding (or no config to check against), 1 errors found (with --deny
warnings: warnings too), 2 could not run (unreadable or hostile header, Hub failure).";

#[derive(Debug, Args)]
pub struct WeightsArgs {
    /// A drafter directory (or its config.json, or a .safetensors file), or a Hub repo
    /// hf://ORG/NAME[@REV].
    #[arg(default_value = ".")]
    pub path: String,
    /// Target model: a directory or config file, or a Hub repo hf://ORG/NAME[@REV] (for the fc width
    /// and the d2t check against the target's hidden size and vocabulary).
    #[arg(long, value_name = "DIR|REPO")]
    pub target: Option<String>,
    #[command(flatten)]
    pub deny: DenyArgs,
    #[command(flatten)]
    pub hub: HubArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn target_facts(args: &WeightsArgs) -> Result<Option<(TargetFacts, String)>> {
    let Some(t) = &args.target else {
        return Ok(None);
    };
    let repo = match InputRef::parse(t, "--target")? {
        InputRef::Local(path) => {
            let c = config::load(&path)?;
            let source = c.path.display().to_string();
            return Ok(Some((TargetFacts::from_config(&c), source)));
        }
        InputRef::Hub(repo) => repo,
    };
    let fetched = source::hub::fetch_target(&args.hub.settings()?, &repo, false)?;
    let c = config::load(&fetched.dir)?;
    Ok(Some((
        TargetFacts::from_config(&c),
        format!("{}@{}", fetched.repo, fetched.sha),
    )))
}

/// A local path: a directory, a config file, or one `.safetensors` file.
fn read_local(path: &Path) -> Result<(weights::WeightsHeaders, Option<config::ConfigFile>)> {
    let is_safetensors = path.is_file()
        && path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("safetensors"));
    let dir: PathBuf = if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    };
    let headers = if is_safetensors {
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        weights::WeightsHeaders {
            source: path.display().to_string(),
            index: None,
            shards: vec![weights::header::read_file(path, &file)?],
            missing_shards: vec![],
            requests: 0,
            body_bytes: 0,
        }
    } else {
        weights::read_local(path)?.ok_or_else(|| {
            dflash_check::Error::new(format!(
                "no `model.safetensors` or `model.safetensors.index.json` in `{}`",
                dir.display()
            ))
            .with_hint(
                "pass the directory that holds the drafter's weights, or a .safetensors file",
            )
        })?
    };
    let config_path = if path.is_file() && !is_safetensors {
        path.to_path_buf()
    } else {
        dir.join("config.json")
    };
    let config = if config_path.is_file() {
        Some(config::load(&config_path)?)
    } else {
        None
    };
    Ok((headers, config))
}

pub fn run_weights(args: &WeightsArgs, out: &mut Vec<u8>) -> Result<u8> {
    let (headers, config, hub) = match InputRef::parse(&args.path, "the drafter")? {
        InputRef::Local(local) => {
            let (h, c) = read_local(&local)?;
            (h, c, None)
        }
        InputRef::Hub(repo) => {
            let settings = args.hub.settings()?;
            let d = weights::read_hub(&settings, &repo)?;
            let headers = d.headers.ok_or_else(|| {
                dflash_check::Error::new(format!(
                    "`{}` at {} has no `model.safetensors` or `model.safetensors.index.json`",
                    d.repo, d.sha
                ))
            })?;
            let origin = weights::HubOrigin {
                repo: d.repo,
                revision: d.revision,
                sha: d.sha,
                freshness: d.freshness.label().to_string(),
            };
            (headers, Some(d.config), Some(origin))
        }
    };
    let target = target_facts(args)?;
    let diagnostics = match &config {
        Some(c) => weights::check(c, &headers, target.as_ref().map(|t| &t.0)),
        None => Vec::new(),
    };
    let report = weights::WeightsReport {
        family: config
            .as_ref()
            .and_then(|c| family::detect(c.root()))
            .map(|d| d.name.as_str().to_string()),
        config: config.as_ref().map(|c| c.path.display().to_string()),
        target: target.map(|t| t.1),
        headers,
        hub,
        diagnostics,
    };
    let deny = args.deny.warnings();
    finish(&report, &args.output, deny, out)
}
