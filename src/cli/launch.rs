//! `dflash-check launch`: its arguments and its run function. The work is in
//! `dflash_check::launch`; this file resolves flags into options and picks the renderer.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use dflash_check::launch::{self, CheckOptions};

use super::{finish, DenyArgs, HubArgs, OutputArgs};

pub const LAUNCH_EXAMPLES: &str = "\
Examples:
  dflash-check launch -- vllm serve Qwen/Qwen3.5-27B --speculative-config \\
      '{\"method\": \"dflash\", \"model\": \"z-lab/Qwen3.5-27B-DFlash\", \"num_speculative_tokens\": 15}'
  dflash-check launch -- python -m sglang.launch_server --model-path Qwen/Qwen3-8B \\
      --speculative-algorithm DFLASH --speculative-draft-model-path z-lab/Qwen3-8B-DFlash-b16
  dflash-check launch --file serve.sh
  dflash-check launch --file Dockerfile --drafter ./models/drafter
  helm template ./chart | dflash-check launch --file - --volume /models=./local-models
  dflash-check launch -- llama-server -m target.gguf -md draft.gguf --spec-type draft-simple
  dflash-check launch -- llama-server -hf ORG/T-GGUF:Q4_K_M -hfd ORG/D-GGUF \\
      --spec-type draft-simple

Exit codes: 0 no error (warnings shown), 1 errors found (with --deny warnings: warnings too), 2 could not run.";

#[derive(Debug, Args)]
pub struct LaunchArgs {
    /// A shell script, Dockerfile, docker-compose file or Kubernetes manifests holding the
    /// command (`-` reads stdin).
    #[arg(long, value_name = "FILE", conflicts_with = "command")]
    pub file: Option<PathBuf>,
    /// Read the drafter from this directory (a .gguf file for llama.cpp and koboldcpp) instead
    /// of the path or repo the command names.
    #[arg(long, value_name = "DIR")]
    pub drafter: Option<PathBuf>,
    /// Read the target from this directory (a .gguf file for llama.cpp and koboldcpp) instead
    /// of the path or repo the command names.
    #[arg(long, value_name = "DIR")]
    pub target: Option<PathBuf>,
    /// The release of the engine that serves the line (`vllm@0.30`, `llama.cpp@b11312`): the
    /// verdict is judged at it. Without it: the line's image tag, else the `engine` key of
    /// dflash-check.toml, else every release of the engine's default window.
    #[arg(long, value_name = "ENGINE[@RELEASE]", value_parser = super::parse_engine)]
    pub engine: Option<dflash_check::rules::EngineRelease>,
    /// A container path the command names (or a KServe `pvc://CLAIM`) is this local directory:
    /// `--volume /models=./local-models` reads `/models/Qwen3-8B` from `./local-models/Qwen3-8B`.
    #[arg(long, value_name = "MOUNT=DIR")]
    pub volume: Vec<launch::volume::Volume>,
    /// The largest --file read (a script, Dockerfile, compose file or manifests; a `helm
    /// template --include-crds` render is about 5 MiB): bytes, or with KiB, MiB or GiB. A file
    /// over it is refused (exit 2), never read in part.
    #[arg(long, value_name = "SIZE", value_parser = launch::read::parse_size, default_value = "16MiB")]
    pub max_file_size: u64,
    #[command(flatten)]
    pub deny: DenyArgs,
    #[command(flatten)]
    pub hub: HubArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// The engine command line as you deploy it, after `--` (or as one quoted argument).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

pub fn run_launch(args: &LaunchArgs, out: &mut Vec<u8>) -> Result<u8> {
    let read = launch::read::read_launch_capped(
        args.file.as_deref(),
        &args.command,
        &mut std::io::stdin(),
        args.max_file_size,
    )?;
    let (parsed, notes, base_dir) = read.ok_or_else(|| {
            dflash_check::Error::new("no engine command given").with_hint(
                "pass it after `--` (dflash-check launch -- vllm serve MODEL ...) or name a file with --file",
            )
        })?;
    let options = CheckOptions {
        inputs: Some(args.hub.resolver()),
        drafter_dir: args.drafter.clone(),
        target_dir: args.target.clone(),
        base_dir,
        volumes: args.volume.clone(),
        stated: launch::stated(args.engine.clone())?,
        ..CheckOptions::default()
    };
    let report = launch::check(parsed, notes, &options)?;
    let deny = args.deny.warnings();
    finish(&report, &args.output, deny, out)
}

/// The launch command from `--file` (`-` is stdin) or the words after `--`, read and parsed by
/// the library; `None` when neither was given.
pub(super) fn read_launch(
    file: Option<&std::path::Path>,
    command: &[String],
) -> Result<Option<launch::LaunchInput>> {
    Ok(launch::read::read_launch(
        file,
        command,
        &mut std::io::stdin(),
    )?)
}
