//! From a file's or a pasted command's commands to the one typed [`Launch`] that starts an
//! engine: the first command an entrypoint of the engine table matches (`engine::command`:
//! programs, `python -m` modules, images whose entrypoint is the server), read with that
//! engine's spelling and its own code; the other engine commands of the input become notes.
//! Words before the engine that look like `NAME=value` are environment assignments (a leading
//! `VAR=1`, `env VAR=1`, `docker run -e VAR=1`). Pure: no file or network access.

use super::shell::Command;
use crate::engine::command::{self, find_engine};
use crate::engine::Engine;
use crate::text::clip;
use crate::{Error, Result};

pub use crate::engine::command::{EnvVar, Flag, Launch, LlamaSpec, SglangSpec};

/// Where the command came from, to give diagnostics a line and column: the deployment's
/// command text.
pub use crate::engine::command::CommandText as Origin;

/// Other servers people paste, named in the error when no supported engine is found. A name
/// the engine table starts an engine with is left out when read (`command::starts_an_engine`),
/// so an engine that joins the table needs no change here.
const OTHER_ENGINES: &[&str] = &[
    "text-generation-launcher",
    "lmdeploy",
    "tgi",
    "ollama",
    "mlx_lm.server",
    "tabbyAPI",
    "aphrodite",
];

/// The first command of `commands` that starts an engine, parsed; the others with an engine
/// are returned as notes (launch checks one command).
pub fn parse_commands(commands: &[Command], file: Option<&str>) -> Result<(Launch, Vec<String>)> {
    let mut found = commands
        .iter()
        .filter_map(|c| find_engine(&c.words).map(|e| (c, e)));
    let Some((command, engine)) = found.next() else {
        return Err(no_engine(commands, file));
    };
    let others: Vec<String> = found
        .map(|(c, e)| match file {
            Some(f) if c.line > 1 => format!("{} at {f}:{}", e.entrypoint, c.line),
            _ => e.entrypoint,
        })
        .collect();
    let mut notes = Vec::new();
    if !others.is_empty() {
        notes.push(format!(
            "the input holds {} more engine command(s), not checked: {} (launch checks the first)",
            others.len(),
            others.join(", ")
        ));
    }
    Ok((parse_one(command, engine, file)?, notes))
}

/// Every command of `commands` that starts an engine, parsed, in order (`check` judges each
/// engine container of a deployment file). No engine command at all is the error
/// [`parse_commands`] gives.
pub fn parse_all(commands: &[Command], file: Option<&str>) -> Result<Vec<Launch>> {
    let launches = commands
        .iter()
        .filter_map(|c| find_engine(&c.words).map(|e| (c, e)))
        .map(|(c, e)| parse_one(c, e, file))
        .collect::<Result<Vec<_>>>()?;
    if launches.is_empty() {
        return Err(no_engine(commands, file));
    }
    Ok(launches)
}

/// One engine command, read with its engine's spelling; the release its container image's
/// tag names, when the line itself names none.
fn parse_one(command: &Command, engine: command::Found, file: Option<&str>) -> Result<Launch> {
    let origin = Origin {
        file: file.map(str::to_string),
        text: std::sync::Arc::clone(&command.text),
        line: command.line,
    };
    let start = engine.start.min(command.words.len());
    let mut launch = command::parse_words(&command.words, &command.env, engine, origin)?;
    // The container the command runs in (a compose service's or manifest's image, or an image
    // word before the engine: `docker run IMAGE vllm serve …`) may name the release in its tag,
    // or a platform built on the engine.
    if launch.image_release.is_none() {
        launch.image_release = command
            .image
            .iter()
            .chain(&command.words[..start])
            .find_map(|image| command::release_in_image(launch.engine, image));
    }
    Ok(launch)
}

fn no_engine(commands: &[Command], file: Option<&str>) -> Error {
    let input = file.map_or_else(|| "the command".to_string(), |f| f.to_string());
    let other = commands.iter().flat_map(|c| c.words.iter()).find(|w| {
        let name = command::basename(w);
        OTHER_ENGINES.contains(&name) && !command::starts_an_engine(name)
    });
    let supported = Engine::examples();
    match other {
        Some(engine) => Error::new(format!(
            "unknown engine `{}` in {input}: launch checks {supported}",
            clip(engine, 80)
        )),
        None => {
            let first = commands
                .iter()
                .find_map(|c| c.words.iter().find(|w| command::assignment(w).is_none()))
                .map_or_else(|| "nothing".to_string(), |w| format!("`{}`", clip(w, 80)));
            Error::new(format!(
                "no {} command found in {input} (it starts with {first}): launch checks {supported}",
                Engine::displays_listed()
            ))
        }
    }
    .with_hint("paste the command you deploy after `--`, or name the script, Dockerfile or compose file with --file")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::shell;
    use serde_json::Value;

    fn parse(cmd: &str) -> Result<Launch> {
        let cmds = shell::from_args(&[cmd.to_string()])?;
        parse_commands(&cmds, None).map(|(l, _)| l)
    }

    #[test]
    fn vllm_serve_with_json_and_dotted_speculative_config() {
        let l = parse(
            "VLLM_USE_V2_MODEL_RUNNER=1 vllm serve Qwen/Qwen3.5-27B \
             --speculative-config '{\"method\": \"dflash\", \"model\": \"z-lab/Qwen3.5-27B-DFlash\", \"num_speculative_tokens\": 15}' \
             --speculative-config.revision=abc --max_num_seqs 8 --max-num-batched-tokens=32768 --trust-remote-code",
        )
        .unwrap();
        assert_eq!(l.engine, Engine::Vllm);
        assert_eq!(l.target.as_deref(), Some("Qwen/Qwen3.5-27B"));
        assert_eq!(l.drafter.as_deref(), Some("z-lab/Qwen3.5-27B-DFlash"));
        assert_eq!(l.drafter_revision.as_deref(), Some("abc"));
        assert_eq!(l.spec("num_speculative_tokens"), Some(&Value::from(15)));
        assert_eq!(
            (l.max_num_seqs, l.max_num_batched_tokens),
            (Some(8), Some(32768))
        );
        assert_eq!(l.env_var("VLLM_USE_V2_MODEL_RUNNER"), Some("1"));
        assert!(l.has_flag("--trust-remote-code"));
    }

    #[test]
    fn vllm_api_server_takes_the_model_flag() {
        let l = parse(
            "python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-4B --port 8037",
        )
        .unwrap();
        assert_eq!(l.entrypoint, "python -m vllm.entrypoints.openai.api_server");
        assert_eq!(l.target.as_deref(), Some("Qwen/Qwen3-4B"));
        assert!(l.speculative_config.is_none());
    }

    #[test]
    fn sglang_flags_and_env_prefix() {
        let l = parse(
            "env SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server --model-path Qwen/Qwen3-8B \
             --speculative-algorithm nextn --speculative-draft-model-path z-lab/Qwen3-8B-DFlash-b16 \
             --speculative-num-steps 3 --speculative-eagle-topk=1 --speculative-num-draft-tokens 4",
        )
        .unwrap();
        assert_eq!(l.engine, Engine::Sglang);
        assert_eq!(l.sglang.algorithm.as_deref(), Some("EAGLE"));
        assert_eq!(
            (
                l.sglang.num_steps,
                l.sglang.eagle_topk,
                l.sglang.num_draft_tokens
            ),
            (Some(3), Some(1), Some(4))
        );
        assert_eq!(l.drafter.as_deref(), Some("z-lab/Qwen3-8B-DFlash-b16"));
        assert_eq!(l.env_var("SGLANG_ENABLE_SPEC_V2"), Some("1"));
    }

    #[test]
    fn docker_run_of_the_vllm_image() {
        let l = parse(
            "docker run --gpus all -e HF_HUB_OFFLINE=1 --env=VLLM_USE_V2_MODEL_RUNNER=0 vllm/vllm-openai:latest --model M",
        )
        .unwrap();
        assert_eq!(l.target.as_deref(), Some("M"));
        assert_eq!(l.env_var("VLLM_USE_V2_MODEL_RUNNER"), Some("0"));
        assert_eq!(l.env_var("HF_HUB_OFFLINE"), Some("1"));
    }

    #[test]
    fn bad_inputs_are_errors_that_say_what() {
        let e = parse("vllm serve M --speculative-config '{\"method\": dflash}'").unwrap_err();
        assert!(e.message.contains("not valid JSON"), "{}", e.message);
        let e = parse("vllm serve M --speculative-config '[1]'").unwrap_err();
        assert!(e.message.contains("JSON object"), "{}", e.message);
        let e = parse("lmdeploy serve api_server M").unwrap_err();
        assert!(
            e.message.contains("unknown engine `lmdeploy`"),
            "{}",
            e.message
        );
        let e = parse("echo hello world").unwrap_err();
        assert!(
            e.message
                .contains(&format!("no {} command", Engine::displays_listed())),
            "{}",
            e.message
        );
        let e = parse("vllm serve M --max-num-seqs many").unwrap_err();
        assert!(e.message.contains("--max-num-seqs"), "{}", e.message);
    }

    #[test]
    fn an_unexpanded_variable_leaves_a_number_unknown() {
        let l = parse("vllm serve M --max-num-seqs $SEQS").unwrap();
        assert_eq!(l.max_num_seqs, None);
        assert_eq!(l.unresolved, vec!["--max-num-seqs".to_string()]);
    }

    #[test]
    fn hub_models_of_llama_cpp_and_the_files_they_name() {
        let l =
            parse("llama-server -hf o/T:Q8_0 -hff T-F16.gguf -hfd o/D -md D-Q8_0.gguf").unwrap();
        assert_eq!(l.target.as_deref(), Some("o/T:Q8_0"));
        assert!(l.llama.target_on_hub && l.llama.draft_on_hub);
        assert_eq!(l.llama.target_hf_file.as_deref(), Some("T-F16.gguf"));
        // -md beside -hfd names the draft repo's file (arg.cpp:4244-4245).
        assert_eq!(l.drafter.as_deref(), Some("o/D"));
        assert_eq!(l.llama.draft_hf_file.as_deref(), Some("D-Q8_0.gguf"));
        let l = parse(
            "LLAMA_ARG_HF_REPO=o/T LLAMA_ARG_SPEC_DRAFT_HF_REPO=o/D LLAMA_ARG_HF_FILE=x.gguf llama-server",
        )
        .unwrap();
        assert_eq!(
            (l.target.as_deref(), l.drafter.as_deref()),
            (Some("o/T"), Some("o/D"))
        );
        assert_eq!(l.llama.target_hf_file.as_deref(), Some("x.gguf"));
        let l = parse("llama-server -m t.gguf -md d.gguf").unwrap();
        assert!(!l.llama.draft_on_hub && l.llama.draft_hf_file.is_none());
    }
}
