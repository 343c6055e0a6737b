//! `dflash-check weights PATH|ORG/NAME[@REV]`: the safetensors tensor table of a drafter (local
//! or on the Hub, headers and the vocabulary maps' data only) and the weights checks against the
//! config beside it.

use anyhow::Result;
use clap::Args;

use dflash_check::rules::family;
use dflash_check::weights;

use super::{finish, DenyArgs, HubArgs, OutputArgs};

pub const WEIGHTS_EXAMPLES: &str = "\
Examples:
  dflash-check weights models/Qwen3-8B-DFlash-b16
  dflash-check weights models/Qwen3-8B-DFlash-b16 --target models/Qwen3-8B --format json
  dflash-check weights z-lab/Qwen3-8B-DFlash-b16@main
  dflash-check weights models/Qwen3.5-27B-MTP-Q4_K_M.gguf

Only the safetensors headers are read (8 bytes and the JSON header of each file; on the Hub, one
or two range requests per file), never the weights; of the tensor data only the vocabulary maps
(d2t, t2d: at most 16 MiB each, one read or range request each) whose values are checked. A .gguf
file: its header (metadata and tensor table) only, checked as llama.cpp loads it.

Exit codes: 0 no error-level finding (or no config to check against), 1 errors found (with --deny
warnings: warnings too), 2 could not run (unreadable or hostile header, Hub failure).";

#[derive(Debug, Args)]
pub struct WeightsArgs {
    /// A drafter directory (or its config.json, or a .safetensors or .gguf file), or a Hub
    /// repo hf://ORG/NAME[@REV].
    #[arg(default_value = ".")]
    pub path: String,
    /// Target model: a directory or config file, or a Hub repo hf://ORG/NAME[@REV] (for the fc width
    /// and the d2t check against the target's hidden size and vocabulary).
    #[arg(long, value_name = "DIR|REPO")]
    pub target: Option<String>,
    /// The engine (and release) that will load the weights (`vllm@0.34`, `sglang`): where
    /// engines build a checkpoint's modules differently (an MTP head's exclude list), the
    /// verdict is that engine's; without it, what fails under any engine is a warning.
    #[arg(long, value_name = "ENGINE[@RELEASE]", value_parser = super::parse_engine)]
    pub engine: Option<dflash_check::rules::EngineRelease>,
    #[command(flatten)]
    pub deny: DenyArgs,
    #[command(flatten)]
    pub hub: HubArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run_weights(args: &WeightsArgs, out: &mut Vec<u8>) -> Result<u8> {
    let inputs = args.hub.resolver();
    let read = inputs.weights(&args.path)?;
    let (headers, config, hub) = (read.headers, read.config, read.hub);
    let gguf = read.gguf;
    // A GGUF draft's target may be a GGUF file too (its block count is all `weights` reads).
    let gguf_target_file = args
        .target
        .as_deref()
        .filter(|t| weights::gguf::is_gguf_path(std::path::Path::new(t)));
    let target = args
        .target
        .as_deref()
        .filter(|_| gguf_target_file.is_none())
        .map(|t| inputs.target_facts(t))
        .transpose()?;
    let gguf_target = match gguf_target_file {
        Some(file) => {
            let header = dflash_check::gguf::read_path(
                std::path::Path::new(file),
                dflash_check::gguf::Limits::default(),
            )?;
            weights::GgufTarget::of_gguf(&header)
        }
        None => target
            .as_ref()
            .and_then(|t| weights::GgufTarget::of_config(&t.0)),
    };
    if let Some(c) = &config {
        // A target's MTP declaration or exclude list the rules cannot judge is bad input.
        weights::check_inputs(c)?;
    }
    let checked = match (&config, &gguf) {
        (Some(c), Some(g)) => weights::run_gguf(c, &headers, g, gguf_target.as_ref()),
        (Some(c), None) => weights::run_for(
            c,
            &headers,
            target.as_ref().map(|t| &t.0),
            args.engine.clone(),
            weights::Purpose::Shards,
        ),
        (None, _) => weights::Checked {
            diagnostics: Vec::new(),
            skipped: Vec::new(),
            shards_absent: false,
        },
    };
    let report = weights::WeightsReport {
        family: config
            .as_ref()
            .and_then(|c| family::detect(c.root()))
            .map(|d| d.name.as_str().to_string()),
        mtp_head: config
            .as_ref()
            .and_then(|c| {
                dflash_check::family::embedded::declared(c.root())
                    .ok()
                    .flatten()
            })
            .map(|d| format!("{} = {}", d.key, d.depth)),
        config: config
            .as_ref()
            .filter(|_| gguf.is_none())
            .map(|c| c.path.display().to_string()),
        target: target
            .map(|t| t.1)
            .or_else(|| gguf_target_file.map(str::to_string)),
        headers,
        hub,
        diagnostics: checked.diagnostics,
        skipped: checked.skipped,
        gguf: gguf.as_ref().map(weights::gguf::header_lines),
        engine: args.engine.clone(),
    };
    let deny = args.deny.warnings();
    finish(&report, &args.output, deny, out)
}
