//! `dflash-check lint`: one drafter config on its own, against its target and engine.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use dflash_check::pipeline;
use dflash_check::rules::{EngineRelease, Family, LintOptions};

use dflash_check::input::TargetSpec;

use super::{finish, DenyArgs, HubArgs, OutputArgs, TargetArgs};

#[derive(Debug, Args)]
pub struct LintArgs {
    /// Drafter directory (holding config.json, and its safetensors when present), config file, or
    /// a Hub repo hf://ORG/NAME[@REV] (config and safetensors headers read at the resolved sha).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Do not use built-in target facts or token tables when no --target is given.
    #[arg(long)]
    pub no_builtin: bool,
    /// Do not read the safetensors headers beside the config.
    #[arg(long)]
    pub no_weights: bool,
    #[command(flatten)]
    pub hub: HubArgs,
    /// Use this family's rules instead of detecting the family.
    #[arg(long, value_parser = super::family_parser(|_| true))]
    pub family: Option<Family>,
    /// The engine the drafter will be served with, optionally at a version: vllm, sglang,
    /// vllm@0.26 (version-dependent rules then say which applies).
    #[arg(long, value_name = "ENGINE[@X.Y]", value_parser = super::parse_engine)]
    pub engine: Option<EngineRelease>,
    /// vLLM's --speculative-config JSON, checked against the config (needs --engine vllm).
    #[arg(long, value_name = "JSON")]
    pub speculative_config: Option<String>,
    /// SGLang's --speculative-num-draft-tokens, checked against block_size (needs --engine sglang).
    #[arg(long, value_name = "B")]
    pub num_draft_tokens: Option<u64>,
    #[command(flatten)]
    pub deny: DenyArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl LintArgs {
    /// Resolves the engine flags into lint options, refusing inconsistent combinations.
    fn options(&self) -> Result<LintOptions> {
        // Each flag stands for an engine's own (the engine table says which engines take it).
        let flags = self.engine.as_ref().map(|e| e.engine.spec().flags);
        if self.speculative_config.is_some() && flags.and_then(|f| f.speculative_config).is_none() {
            anyhow::bail!(
                "--speculative-config is the flag of {}: pass --engine with one of them",
                takers(|f| f.speculative_config)
            );
        }
        if self.num_draft_tokens.is_some() && flags.and_then(|f| f.draft_tokens).is_none() {
            anyhow::bail!(
                "--num-draft-tokens stands for the draft-tokens flag of {}: pass --engine with one of them",
                takers(|f| f.draft_tokens)
            );
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
            family: self.family,
            engine: self.engine.clone(),
            speculative_config,
            num_draft_tokens: self.num_draft_tokens,
            ..LintOptions::default()
        })
    }
}

pub fn run(args: &LintArgs, out: &mut Vec<u8>) -> Result<u8> {
    let options = args.options()?;
    let target = TargetSpec {
        no_builtin: args.no_builtin,
        ..args.target.spec()
    };
    // The config and, unless `--no-weights`, its safetensors headers: from disk, or from the
    // Hub at the resolved sha (headers by range requests).
    let report = pipeline::lint(
        &args.hub.resolver(),
        &args.path.to_string_lossy(),
        &target,
        options,
        !args.no_weights,
    )?;
    super::status::warn_inputs(&report.warnings);
    let deny = args.deny.warnings();
    finish(&report, &args.output, deny, out)
}

/// The engines whose rows have the flag `which` picks, by name.
fn takers(which: impl Fn(&dflash_check::engine::Flags) -> Option<&'static str>) -> String {
    let names: Vec<&str> = dflash_check::engine::Engine::all()
        .filter(|e| which(&e.spec().flags).is_some())
        .map(|e| e.as_str())
        .collect();
    names.join(", ")
}
