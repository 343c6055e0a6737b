//! From a command's words to a typed [`Launch`]: which engine, its environment, the target, the
//! drafter and its revision, vLLM's speculative config, SGLang's speculative flags, and every
//! other flag as written. Pure: no file or network access.
//!
//! Engines are found by how they are started: `vllm serve`, `python -m
//! vllm.entrypoints.openai.api_server`, the `vllm/vllm-openai` image (whose entrypoint is the
//! vLLM server), `python -m sglang.launch_server` and `sglang serve`; llama.cpp's
//! `llama-server`, `llama-cli`, `llama-speculative` and `llama-speculative-simple` (any
//! directory, `.exe` too) and its `ghcr.io/ggml-org/llama.cpp:server` images; koboldcpp
//! (`koboldcpp`, `koboldcpp.py`, its release binaries, the `koboldai/koboldcpp` image). Words before the engine
//! that look like `NAME=value` are environment assignments (a leading `VAR=1`, `env VAR=1`,
//! `docker run -e VAR=1`).

use serde::Serialize;
use serde_json::{Map, Value};

use super::shell::Command;
use crate::rules::Engine;
use crate::text::clip;
use crate::{Error, Result};

/// One flag as written, its name normalised (`--max_num_seqs` → `--max-num-seqs` for vLLM).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// One environment variable the engine starts with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvVar {
    pub name: String,
    pub value: String,
}

/// SGLang's speculative-decoding flags (`None` when not given).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SglangSpec {
    /// `--speculative-algorithm`, upper-cased (`NEXTN` is SGLang's alias of `EAGLE`).
    pub algorithm: Option<String>,
    pub num_steps: Option<u64>,
    pub eagle_topk: Option<u64>,
    pub num_draft_tokens: Option<u64>,
    pub dflash_block_size: Option<u64>,
    /// `--speculative-dflash-draft-window-size` (older SGLang: `--speculative-draft-window-size`).
    pub draft_window_size: Option<u64>,
    pub token_map: Option<String>,
}

/// llama.cpp's speculative-decoding settings (and koboldcpp's, which passes them to the
/// llama.cpp it vendors), as the command states them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LlamaSpec {
    /// `--spec-type` values in order, comma lists split (env `LLAMA_ARG_SPEC_TYPE` when no
    /// flag): `draft-simple`, `draft-eagle3`, `draft-mtp`, `draft-dflash`, `draft-dspark`,
    /// `ngram-*`, `none`. Empty: none given, so llama.cpp infers the type from the draft.
    pub types: Vec<String>,
    /// K: `--spec-draft-n-max` (llama.cpp), `--draftamount` (koboldcpp).
    pub n_max: Option<u64>,
    /// koboldcpp's `--usemtp`: draft with the target's own MTP head.
    pub use_mtp: bool,
    /// The target and the draft are named as Hub repos (`-hf`, `-hfd`, `OWNER/REPO[:TAG]`),
    /// which llama.cpp downloads; `launch` reads the chosen file's header by range requests.
    pub target_on_hub: bool,
    pub draft_on_hub: bool,
    /// `--hf-file FILE` (env `LLAMA_ARG_HF_FILE`): the target repo's file, instead of the tag's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_hf_file: Option<String>,
    /// `-md FILE` beside `-hfd`: the draft repo's file (llama.cpp sets the draft's `hf_file`
    /// from `-md`, `common/arg.cpp` at 0c1e570, lines 4244-4245).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draft_hf_file: Option<String>,
}

/// Where the command came from, to give diagnostics a line and column: the deployment's
/// command text.
pub use crate::deployment::CommandText as Origin;

/// An engine launch command, parsed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Launch {
    pub engine: Engine,
    /// How the engine is started, as recognised (`vllm serve`, `python -m sglang.launch_server`).
    pub entrypoint: String,
    /// The environment the engine sees: the input's `export`/`ENV`/`environment:`, then the
    /// command's own `VAR=value` words; a later value wins.
    pub env: Vec<EnvVar>,
    /// The target model: vLLM's positional model or `--model`; SGLang's `--model-path`.
    pub target: Option<String>,
    pub target_revision: Option<String>,
    /// The drafter: vLLM's `speculative_config.model`; SGLang's `--speculative-draft-model-path`.
    pub drafter: Option<String>,
    /// vLLM's `speculative_config.revision`; SGLang's `--speculative-draft-model-revision`.
    pub drafter_revision: Option<String>,
    /// vLLM's `--speculative-config` JSON, with `--speculative-config.KEY VALUE` flags merged in.
    pub speculative_config: Option<Map<String, Value>>,
    /// vLLM's `--max-num-seqs` and `--max-num-batched-tokens`.
    pub max_num_seqs: Option<u64>,
    pub max_num_batched_tokens: Option<u64>,
    /// SGLang's speculative flags.
    pub sglang: SglangSpec,
    /// llama.cpp's and koboldcpp's speculative flags.
    pub llama: LlamaSpec,
    /// Every flag, in order, as written (values of secrets hidden in output).
    pub flags: Vec<Flag>,
    /// Words after the engine that are neither flags nor flag values.
    pub positionals: Vec<String>,
    /// Flags whose value holds a shell variable the input never assigned: not checked.
    pub unresolved: Vec<String>,
    #[serde(skip)]
    pub origin: Origin,
}

impl Launch {
    /// The last value of a flag (argparse: the last one wins).
    pub fn flag(&self, name: &str) -> Option<&str> {
        self.flags
            .iter()
            .rev()
            .find(|f| f.name == name)
            .and_then(|f| f.value.as_deref())
    }

    pub fn has_flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f.name == name)
    }

    /// The value of an environment variable the engine sees.
    pub fn env_var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .rev()
            .find(|e| e.name == name)
            .map(|e| e.value.as_str())
    }

    /// A key of vLLM's speculative config.
    pub fn spec(&self, key: &str) -> Option<&Value> {
        self.speculative_config.as_ref()?.get(key)
    }

    /// vLLM's `method`, SGLang's algorithm, llama.cpp's `--spec-type` (as written, comma
    /// separated), koboldcpp's `draft-simple` (`--draftmodel`) or `draft-mtp` (`--usemtp`).
    pub fn method(&self) -> Option<String> {
        match self.engine {
            Engine::Vllm => self
                .spec("method")
                .and_then(Value::as_str)
                .map(str::to_string),
            Engine::Sglang => self.sglang.algorithm.clone(),
            Engine::LlamaCpp => (!self.llama.types.is_empty()).then(|| self.llama.types.join(",")),
            Engine::Koboldcpp => match (&self.drafter, self.llama.use_mtp) {
                (Some(_), _) => Some("draft-simple".into()),
                (None, true) => Some("draft-mtp".into()),
                (None, false) => None,
            },
        }
    }

    /// The last of several spellings of one flag (`-md`, `--model-draft`,
    /// `--spec-draft-model`): its name as written and its value.
    pub fn flag_any(&self, names: &[&str]) -> Option<(&str, &str)> {
        self.flags
            .iter()
            .rev()
            .find(|f| names.contains(&f.name.as_str()))
            .and_then(|f| f.value.as_deref().map(|v| (f.name.as_str(), v)))
    }
}

/// Flags that take no value. A word after one of them is not its value; anything not listed
/// is taken to take a value when the next word is not a flag.
const VLLM_SWITCHES: &[&str] = &[
    "--trust-remote-code",
    "--enforce-eager",
    "--enable-prefix-caching",
    "--no-enable-prefix-caching",
    "--enable-chunked-prefill",
    "--no-enable-chunked-prefill",
    "--enable-auto-tool-choice",
    "--disable-log-requests",
    "--enable-log-requests",
    "--disable-log-stats",
    "--enable-expert-parallel",
    "--async-scheduling",
    "--no-async-scheduling",
    "--disable-custom-all-reduce",
    "--headless",
    "--enable-lora",
    "--enable-sleep-mode",
    "--enable-eplb",
    "--skip-tokenizer-init",
    "--disable-fastapi-docs",
    "--enable-prompt-tokens-details",
    "--enable-server-load-tracking",
    "--disable-frontend-multiprocessing",
    "--disable-uvicorn-access-log",
    "--enable-request-id-headers",
    "--enable-force-include-usage",
    "--return-tokens-as-token-ids",
];

const SGLANG_SWITCHES: &[&str] = &[
    "--trust-remote-code",
    "--enable-torch-compile",
    "--disable-radix-cache",
    "--enable-dp-attention",
    "--disable-cuda-graph",
    "--enable-mixed-chunk",
    "--disable-overlap-schedule",
    "--enable-metrics",
    "--skip-server-warmup",
    "--enable-multi-layer-eagle",
    "--enable-ep-moe",
    "--disable-cuda-graph-padding",
    "--enable-p2p-check",
    "--enable-deterministic-inference",
    "--skip-tokenizer-init",
    "--enable-cache-report",
    "--enable-two-batch-overlap",
];

/// llama.cpp's switches (flags that take no value), from `common/arg.cpp` at 0c1e570: those a
/// server command line carries, the draft ones among them.
const LLAMA_SWITCHES: &[&str] = &[
    "--jinja",
    "--no-jinja",
    "-cb",
    "--cont-batching",
    "-nocb",
    "--no-cont-batching",
    "--mlock",
    "--mmap",
    "--no-mmap",
    "--metrics",
    "--slots",
    "--no-slots",
    "--props",
    "--embedding",
    "--embeddings",
    "--reranking",
    "--rerank",
    "-v",
    "--verbose",
    "--log-verbose",
    "--no-warmup",
    "--offline",
    "--no-mmproj",
    "--no-webui",
    "--webui",
    "-sp",
    "--special",
    "--check-tensors",
    "-cmoe",
    "--cpu-moe",
    "-cmoed",
    "--cpu-moe-draft",
    "--spec-draft-cpu-moe",
    "-kvu",
    "--kv-unified",
    "-nkvo",
    "--no-kv-offload",
    "--swa-full",
    "--context-shift",
    "--no-context-shift",
    "--spec-draft-backend-sampling",
    "--no-spec-draft-backend-sampling",
    "--spec-default",
    "--mtp",
    "--dflash",
    "--eagle3",
    "-e",
    "--escape",
    "--no-escape",
    "-cnv",
    "--conversation",
    "-no-cnv",
    "--no-conversation",
];

/// koboldcpp's switches (`action='store_true'` in koboldcpp.py) that a launch line carries.
const KOBOLD_SWITCHES: &[&str] = &[
    "--usemtp",
    "--flashattention",
    "--noflashattention",
    "--no-flash-attn",
    "-nofa",
    "--quiet",
    "--nommap",
    "--usemlock",
    "--noavx2",
    "--skiplauncher",
    "--showgui",
    "--jinja",
    "--jinja_tools",
    "--jinja-tools",
    "--jinjatools",
    "--remotetunnel",
    "--nocertify",
    "--smartcontext",
    "--noshift",
    "--nobostoken",
    "--lowvram",
    "-nkvo",
    "--no-kv-offload",
    "--ignoremissing",
    "--singleinstance",
    "--nopipelineparallel",
    "--enableguidance",
    "--gendefaultsoverwrite",
    "--usecpu",
    "--usevulkan",
    "--usecublas",
    "--usecuda",
];

/// Other servers people paste, named in the error when no supported engine is found.
const OTHER_ENGINES: &[&str] = &[
    "trtllm-serve",
    "text-generation-launcher",
    "lmdeploy",
    "tgi",
    "ollama",
    "mlx_lm.server",
    "tabbyAPI",
    "aphrodite",
];

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Where an engine starts in `words`: the engine, the index of its first argument, and how it
/// was started.
fn find_engine(words: &[String]) -> Option<(Engine, usize, String)> {
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).map(String::as_str);
        match (basename(w), next) {
            ("vllm", Some("serve")) => return Some((Engine::Vllm, i + 2, "vllm serve".into())),
            ("sglang", Some("serve")) => {
                return Some((Engine::Sglang, i + 2, "sglang serve".into()))
            }
            ("-m", Some("vllm.entrypoints.openai.api_server")) => {
                return Some((
                    Engine::Vllm,
                    i + 2,
                    "python -m vllm.entrypoints.openai.api_server".into(),
                ))
            }
            ("-m", Some("vllm.entrypoints.cli.main"))
                if words.get(i + 2).map(String::as_str) == Some("serve") =>
            {
                return Some((
                    Engine::Vllm,
                    i + 3,
                    "python -m vllm.entrypoints.cli.main serve".into(),
                ))
            }
            ("-m", Some("sglang.launch_server")) => {
                return Some((
                    Engine::Sglang,
                    i + 2,
                    "python -m sglang.launch_server".into(),
                ))
            }
            _ => {}
        }
        let base = basename(w);
        let bin = base.strip_suffix(".exe").unwrap_or(base);
        if matches!(
            bin,
            "llama-server" | "llama-cli" | "llama-speculative" | "llama-speculative-simple"
        ) {
            return Some((Engine::LlamaCpp, i + 1, bin.to_string()));
        }
        if bin.starts_with("koboldcpp") && !bin.ends_with(".kcpps") {
            return Some((Engine::Koboldcpp, i + 1, "koboldcpp".into()));
        }
        // The vLLM image's entrypoint is the server: `docker run ... vllm/vllm-openai:TAG ARGS`.
        let image = w.split(['@', ':']).next().unwrap_or(w);
        // llama.cpp's server images (`:server`, `:server-cuda`, `:server-b6000`) start
        // llama-server; koboldcpp's image starts koboldcpp.
        let tag = w.split_once(':').map(|(_, t)| t).unwrap_or("");
        if (image.ends_with("ggml-org/llama.cpp") || image.ends_with("ggerganov/llama.cpp"))
            && tag.starts_with("server")
            && !words[i + 1..]
                .iter()
                .any(|x| basename(x).starts_with("llama-"))
        {
            return Some((
                Engine::LlamaCpp,
                i + 1,
                format!("{image}:{tag} image, whose entrypoint is llama-server"),
            ));
        }
        if image.ends_with("koboldai/koboldcpp")
            && !words[i + 1..]
                .iter()
                .any(|x| basename(x).starts_with("koboldcpp"))
        {
            return Some((
                Engine::Koboldcpp,
                i + 1,
                format!("{image} image, whose entrypoint is koboldcpp"),
            ));
        }
        if image == "vllm/vllm-openai" || image.ends_with("/vllm/vllm-openai") {
            // `... vllm/vllm-openai vllm serve ...` states its own command: found above next time.
            if !words[i + 1..].iter().any(|x| basename(x) == "vllm") {
                return Some((
                    Engine::Vllm,
                    i + 1,
                    format!("{image} image, whose entrypoint is the vLLM server"),
                ));
            }
        }
    }
    None
}

fn assignment(word: &str) -> Option<(&str, &str)> {
    let word = word.strip_prefix("--env=").unwrap_or(word);
    let (name, value) = word.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then_some((name, value))
}

/// The first command of `commands` that starts an engine, parsed; the others with an engine
/// are returned as notes (launch checks one command).
pub fn parse_commands(commands: &[Command], file: Option<&str>) -> Result<(Launch, Vec<String>)> {
    let mut found = commands
        .iter()
        .filter_map(|c| find_engine(&c.words).map(|e| (c, e)));
    let Some((command, (engine, start, entrypoint))) = found.next() else {
        return Err(no_engine(commands, file));
    };
    let others: Vec<String> = found
        .map(|(c, (_, _, how))| match file {
            Some(f) if c.line > 1 => format!("{how} at {f}:{}", c.line),
            _ => how,
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
    let origin = Origin {
        file: file.map(str::to_string),
        text: command.text.to_string(),
        line: command.line,
    };
    let launch = parse_words(
        &command.words,
        &command.env,
        engine,
        start,
        entrypoint,
        origin,
    )?;
    Ok((launch, notes))
}

fn no_engine(commands: &[Command], file: Option<&str>) -> Error {
    let input = file.map_or_else(|| "the command".to_string(), |f| f.to_string());
    let other = commands
        .iter()
        .flat_map(|c| c.words.iter())
        .find(|w| OTHER_ENGINES.contains(&basename(w)));
    let supported =
        "vLLM (`vllm serve MODEL`, `python -m vllm.entrypoints.openai.api_server --model MODEL`, \
the vllm/vllm-openai image), SGLang (`python -m sglang.launch_server --model-path MODEL`), llama.cpp \
(`llama-server -m MODEL.gguf -md DRAFT.gguf`) and koboldcpp (`koboldcpp --model MODEL.gguf --draftmodel DRAFT.gguf`)";
    match other {
        Some(engine) => Error::new(format!(
            "unknown engine `{}` in {input}: launch checks {supported}",
            clip(engine, 80)
        )),
        None => {
            let first = commands
                .iter()
                .find_map(|c| c.words.iter().find(|w| assignment(w).is_none()))
                .map_or_else(|| "nothing".to_string(), |w| format!("`{}`", clip(w, 80)));
            Error::new(format!(
                "no vLLM, SGLang, llama.cpp or koboldcpp command found in {input} (it starts with {first}): launch checks {supported}"
            ))
        }
    }
    .with_hint("paste the command you deploy after `--`, or name the script, Dockerfile or compose file with --file")
}

/// The words of one command, from the engine on.
pub fn parse_words(
    words: &[String],
    input_env: &[(String, String)],
    engine: Engine,
    start: usize,
    entrypoint: String,
    origin: Origin,
) -> Result<Launch> {
    let mut env: Vec<EnvVar> = input_env
        .iter()
        .map(|(n, v)| EnvVar {
            name: n.clone(),
            value: v.clone(),
        })
        .collect();
    for w in &words[..start.min(words.len())] {
        if let Some((name, value)) = assignment(w) {
            env.retain(|e| e.name != name);
            env.push(EnvVar {
                name: name.to_string(),
                value: value.to_string(),
            });
        }
    }
    let switches = match engine {
        Engine::Vllm => VLLM_SWITCHES,
        Engine::Sglang => SGLANG_SWITCHES,
        Engine::LlamaCpp => LLAMA_SWITCHES,
        Engine::Koboldcpp => KOBOLD_SWITCHES,
    };
    let mut flags = Vec::new();
    let mut positionals = Vec::new();
    let args = &words[start.min(words.len())..];
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let is_flag = |s: &str| {
            s.starts_with('-') && s.len() > 1 && !s[1..].starts_with(|c: char| c.is_ascii_digit())
        };
        if !is_flag(w) {
            positionals.push(w.clone());
            i += 1;
            continue;
        }
        let (raw_name, inline) = match w.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (w.as_str(), None),
        };
        let name = normalise(engine, raw_name);
        let value = match inline {
            Some(v) => Some(v),
            None if switches.contains(&name.as_str()) => None,
            None => match args.get(i + 1) {
                Some(next) if !is_flag(next) => {
                    i += 1;
                    Some(next.clone())
                }
                _ => None,
            },
        };
        flags.push(Flag { name, value });
        i += 1;
    }
    let mut launch = Launch {
        engine,
        entrypoint,
        env,
        target: None,
        target_revision: None,
        drafter: None,
        drafter_revision: None,
        speculative_config: None,
        max_num_seqs: None,
        max_num_batched_tokens: None,
        sglang: SglangSpec::default(),
        llama: LlamaSpec::default(),
        flags,
        positionals,
        unresolved: Vec::new(),
        origin,
    };
    launch.target_revision = launch.flag("--revision").map(str::to_string);
    match engine {
        Engine::Vllm => fill_vllm(&mut launch)?,
        Engine::Sglang => fill_sglang(&mut launch)?,
        Engine::LlamaCpp => fill_llama(&mut launch)?,
        Engine::Koboldcpp => fill_kobold(&mut launch)?,
    }
    Ok(launch)
}

/// vLLM accepts `_` for `-` in flag names (not in the keys after a `.`); SGLang, llama.cpp and
/// koboldcpp do not.
fn normalise(engine: Engine, name: &str) -> String {
    match engine {
        Engine::Vllm => match name.split_once('.') {
            Some((flag, key)) => format!("{}.{key}", flag.replace('_', "-")),
            None => name.replace('_', "-"),
        },
        Engine::Sglang | Engine::LlamaCpp | Engine::Koboldcpp => name.to_string(),
    }
}

fn where_(launch: &Launch) -> String {
    match &launch.origin.file {
        Some(f) => format!(" in {f}"),
        None => String::new(),
    }
}

/// A non-negative integer flag; an unexpanded `$VAR` makes it unknown, anything else that is
/// not an integer is bad input (the engine would refuse it too).
fn int_flag(launch: &mut Launch, names: &[&str]) -> Result<Option<u64>> {
    let Some((name, value)) = names
        .iter()
        .find_map(|n| launch.flag(n).map(|v| (n.to_string(), v.to_string())))
    else {
        return Ok(None);
    };
    if value.contains('$') {
        launch.unresolved.push(name);
        return Ok(None);
    }
    value.trim().parse::<u64>().map(Some).map_err(|_| {
        Error::new(format!(
            "{name} {:?}{} is not a non-negative integer",
            clip(&value, 80),
            where_(launch)
        ))
        .with_hint("give a whole number, as the engine's argument parser requires")
    })
}

fn fill_vllm(launch: &mut Launch) -> Result<()> {
    launch.target = launch
        .positionals
        .first()
        .cloned()
        .or_else(|| launch.flag("--model").map(str::to_string));
    launch.max_num_seqs = int_flag(launch, &["--max-num-seqs"])?;
    launch.max_num_batched_tokens = int_flag(launch, &["--max-num-batched-tokens"])?;
    let mut spec: Option<Map<String, Value>> = None;
    for flag in launch.flags.clone() {
        if flag.name == "--speculative-config" {
            let text = flag.value.clone().unwrap_or_default();
            let value: Value = serde_json::from_str(&text).map_err(|e| {
                let hint = if text.contains('$') {
                    "it holds a shell variable the input never assigns; paste the expanded command"
                } else {
                    "vLLM parses it with json.loads: double-quoted keys and strings, and single quotes around the whole value in the shell"
                };
                Error::new(format!(
                    "--speculative-config{} is not valid JSON: {e}: {}",
                    where_(launch),
                    clip(&text, 200)
                ))
                .with_hint(hint)
            })?;
            let Value::Object(map) = value else {
                return Err(Error::new(format!(
                    "--speculative-config{} must be a JSON object, not {}",
                    where_(launch),
                    clip(&text, 200)
                ))
                .with_hint("vLLM takes --speculative-config '{\"method\": ..., \"model\": ..., \"num_speculative_tokens\": ...}'"));
            };
            let merged = spec.get_or_insert_with(Map::new);
            merged.extend(map);
        } else if let Some(key) = flag.name.strip_prefix("--speculative-config.") {
            // `--speculative-config.num_speculative_tokens 15`: the value is JSON when it parses.
            let text = flag.value.clone().unwrap_or_else(|| "true".into());
            let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
            spec.get_or_insert_with(Map::new)
                .insert(key.to_string(), value);
        }
    }
    if let Some(spec) = &spec {
        launch.drafter = spec
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string);
        launch.drafter_revision = spec
            .get("revision")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    launch.speculative_config = spec;
    Ok(())
}

fn fill_sglang(launch: &mut Launch) -> Result<()> {
    launch.target = ["--model-path", "--model"]
        .iter()
        .find_map(|n| launch.flag(n))
        .map(str::to_string);
    launch.drafter = [
        "--speculative-draft-model-path",
        "--speculative-draft-model",
    ]
    .iter()
    .find_map(|n| launch.flag(n))
    .map(str::to_string);
    launch.drafter_revision = launch
        .flag("--speculative-draft-model-revision")
        .map(str::to_string);
    let algorithm =
        launch
            .flag("--speculative-algorithm")
            .map(|a| match a.to_ascii_uppercase().as_str() {
                "NEXTN" => "EAGLE".to_string(),
                other => other.to_string(),
            });
    let spec = SglangSpec {
        algorithm,
        num_steps: int_flag(launch, &["--speculative-num-steps"])?,
        eagle_topk: int_flag(launch, &["--speculative-eagle-topk"])?,
        num_draft_tokens: int_flag(launch, &["--speculative-num-draft-tokens"])?,
        dflash_block_size: int_flag(launch, &["--speculative-dflash-block-size"])?,
        draft_window_size: int_flag(
            launch,
            &[
                "--speculative-dflash-draft-window-size",
                "--speculative-draft-window-size",
            ],
        )?,
        token_map: launch.flag("--speculative-token-map").map(str::to_string),
    };
    launch.sglang = spec;
    Ok(())
}

/// llama.cpp's spellings of the flags read here (`common/arg.cpp` at 0c1e570; `-md` and
/// `--model-draft` are also the older builds' names).
pub const LLAMA_MODEL: &[&str] = &["-m", "--model"];
pub const LLAMA_HF_REPO: &[&str] = &["-hf", "-hfr", "--hf-repo"];
pub const LLAMA_HF_FILE: &[&str] = &["-hff", "--hf-file"];
pub const LLAMA_DRAFT_MODEL: &[&str] = &["--spec-draft-model", "-md", "--model-draft"];
pub const LLAMA_DRAFT_HF: &[&str] = &["--spec-draft-hf", "-hfd", "-hfrd", "--hf-repo-draft"];
pub const LLAMA_N_MAX: &[&str] = &["--spec-draft-n-max"];
pub const KOBOLD_MODEL: &[&str] = &["--model", "-m"];
pub const KOBOLD_DRAFT_MODEL: &[&str] = &["--draftmodel", "--model-draft", "-md"];
pub const KOBOLD_N_MAX: &[&str] = &["--draftamount", "--draft-max", "--draft-n"];

/// A flag's value, else the environment variable llama.cpp reads for it (`set_env` in
/// `common/arg.cpp`: flags win over the environment).
fn flag_or_env(launch: &Launch, names: &[&str], env: &str) -> Option<String> {
    launch
        .flag_any(names)
        .map(|(_, v)| v.to_string())
        .or_else(|| launch.env_var(env).map(str::to_string))
}

fn fill_llama(launch: &mut Launch) -> Result<()> {
    let model = flag_or_env(launch, LLAMA_MODEL, "LLAMA_ARG_MODEL");
    let hf = flag_or_env(launch, LLAMA_HF_REPO, "LLAMA_ARG_HF_REPO");
    launch.llama.target_on_hub = model.is_none() && hf.is_some();
    launch.target = model.or(hf);
    if launch.llama.target_on_hub {
        launch.llama.target_hf_file = flag_or_env(launch, LLAMA_HF_FILE, "LLAMA_ARG_HF_FILE");
    }
    let draft = flag_or_env(launch, LLAMA_DRAFT_MODEL, "LLAMA_ARG_SPEC_DRAFT_MODEL");
    let draft_hf = flag_or_env(launch, LLAMA_DRAFT_HF, "LLAMA_ARG_SPEC_DRAFT_HF_REPO");
    // With `-hfd`, `-md FILE` names the file of the draft repo to load (arg.cpp:4244-4245).
    launch.llama.draft_on_hub = draft_hf.is_some();
    if draft_hf.is_some() {
        launch.llama.draft_hf_file = draft.clone();
    }
    launch.drafter = draft_hf.or(draft);
    let mut types: Vec<String> = launch
        .flags
        .iter()
        .filter(|f| f.name == "--spec-type")
        .filter_map(|f| f.value.as_deref())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_string())
        .collect();
    if types.is_empty() {
        if let Some(v) = launch.env_var("LLAMA_ARG_SPEC_TYPE") {
            types = v.split(',').map(|t| t.trim().to_string()).collect();
        }
    }
    launch.llama.types = types;
    launch.llama.n_max = match int_flag(launch, LLAMA_N_MAX)? {
        Some(k) => Some(k),
        None => match launch.env_var("LLAMA_ARG_SPEC_DRAFT_N_MAX") {
            Some(v) => v.trim().parse().ok(),
            None => None,
        },
    };
    Ok(())
}

fn fill_kobold(launch: &mut Launch) -> Result<()> {
    // koboldcpp also takes the model as its first positional argument (`model_param`).
    launch.target = launch
        .flag_any(KOBOLD_MODEL)
        .map(|(_, v)| v.to_string())
        .or_else(|| launch.positionals.first().cloned());
    launch.drafter = launch
        .flag_any(KOBOLD_DRAFT_MODEL)
        .map(|(_, v)| v.to_string());
    launch.llama.n_max = int_flag(launch, KOBOLD_N_MAX)?;
    launch.llama.use_mtp = launch.has_flag("--usemtp");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::shell;

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
        let e = parse("trtllm-serve M").unwrap_err();
        assert!(
            e.message.contains("unknown engine `trtllm-serve`"),
            "{}",
            e.message
        );
        let e = parse("echo hello world").unwrap_err();
        assert!(
            e.message
                .contains("no vLLM, SGLang, llama.cpp or koboldcpp command"),
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
