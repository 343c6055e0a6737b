//! An engine's command line as data: where in a command's words an engine starts (found from
//! the table's entrypoints, with the release an image's tag names), and its flags read with the
//! row's spelling (switches, `_` for `-`) into a [`Launch`]; the engine's own code
//! ([`super::EngineCode::read`]) then fills what only it knows (its target and drafter flags,
//! its speculative settings). Pure: no file or network access.

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Engine, EngineRelease, Entrypoint};
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

/// The text of the command a line was read from, to find a flag's line and column.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandText {
    /// The file given with `--file`; `None` for a command given after `--`.
    pub file: Option<String>,
    /// The text the command's flags are searched in: shared by every command of one input
    /// (a 16 MiB manifest with many engine containers holds one copy, not one per container).
    pub text: std::sync::Arc<str>,
    /// The 1-based line of `text`'s first character.
    pub line: usize,
}

impl CommandText {
    /// Line and column of the first `needle` (after `after`, when given) in the command's text.
    pub fn find(&self, after: Option<&str>, needle: &str) -> Option<(usize, usize)> {
        self.file.as_ref()?;
        let from = match after {
            Some(a) => self.text.find(a)?,
            None => 0,
        };
        let at = from + self.text[from..].find(needle)?;
        let before = &self.text[..at];
        let line = self.line + before.matches('\n').count();
        let column = before.rsplit('\n').next().unwrap_or(before).chars().count() + 1;
        Some((line, column))
    }
}

/// An engine launch command, parsed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Launch {
    pub engine: Engine,
    /// How the engine is started, as recognised (`vllm serve`, `python -m sglang.launch_server`).
    pub entrypoint: String,
    /// The release the line's container image names (`vllm/vllm-openai:v0.28.0`), when it does.
    #[serde(skip)]
    pub image_release: Option<EngineRelease>,
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
    /// The speculative configuration as one JSON object, where the engine states it so (vLLM's
    /// `--speculative-config`, with `--speculative-config.KEY VALUE` flags merged in).
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
    pub origin: CommandText,
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

    /// A whole number a JSON override flag sets under `key` (`--hf-overrides '{"KEY": N}'`, or
    /// the dotted `--hf-overrides.KEY N` vLLM's parser also takes), the last one written
    /// winning. Not valid JSON, or not a positive whole number: none (the engine's own parser
    /// reports it; this tool does not guess).
    pub fn json_override(&self, flag: &str, key: &str) -> Option<u64> {
        let dotted = format!("{flag}.{key}");
        self.flags.iter().rev().find_map(|f| {
            let value = f.value.as_deref()?;
            if f.name == flag {
                let map: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(value).ok()?;
                map.get(key)?.as_u64().filter(|&n| n > 0)
            } else if f.name == dotted {
                value.trim().parse::<u64>().ok().filter(|&n| n > 0)
            } else {
                None
            }
        })
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

    /// A key of the speculative config.
    pub fn spec(&self, key: &str) -> Option<&Value> {
        self.speculative_config.as_ref()?.get(key)
    }

    /// The speculative method as the line writes it (vLLM's `method`, SGLang's algorithm,
    /// llama.cpp's `--spec-type` list, koboldcpp's `draft-simple` or `draft-mtp`).
    pub fn method(&self) -> Option<String> {
        self.engine.code().method(self)
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

    /// Where in the input this line is (` in FILE`, or nothing for a pasted command).
    pub fn in_file(&self) -> String {
        match &self.origin.file {
            Some(f) => format!(" in {f}"),
            None => String::new(),
        }
    }

    /// A non-negative integer flag, its first spelling given; an unexpanded `$VAR` makes it
    /// unknown (recorded in `unresolved`), anything else that is not an integer is bad input
    /// (the engine's argument parser would refuse it too).
    pub fn int_flag(&mut self, names: &[&str]) -> Result<Option<u64>> {
        let Some((name, value)) = names
            .iter()
            .find_map(|n| self.flag(n).map(|v| (n.to_string(), v.to_string())))
        else {
            return Ok(None);
        };
        if value.contains('$') {
            self.unresolved.push(name);
            return Ok(None);
        }
        value.trim().parse::<u64>().map(Some).map_err(|_| {
            Error::new(format!(
                "{name} {:?}{} is not a non-negative integer",
                clip(&value, 80),
                self.in_file()
            ))
            .with_hint("give a whole number, as the engine's argument parser requires")
        })
    }

    /// A flag's value, else the environment variable the engine reads for it (flags win).
    pub fn flag_or_env(&self, names: &[&str], env: &str) -> Option<String> {
        self.flag_any(names)
            .map(|(_, v)| v.to_string())
            .or_else(|| self.env_var(env).map(str::to_string))
    }
}

/// Where an engine starts in a command's words.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub engine: Engine,
    /// The index of its first argument.
    pub start: usize,
    /// How it was started, as printed (`vllm serve`, `vllm/vllm-openai image, …`).
    pub entrypoint: String,
    /// The release the image's tag names, when the line starts an image that names one.
    pub image_release: Option<EngineRelease>,
}

/// A word's file name (`/usr/bin/vllm` → `vllm`).
pub fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// A program's name as the entrypoints match it: the file name without `.exe`.
fn program(word: &str) -> &str {
    let base = basename(word);
    base.strip_suffix(".exe").unwrap_or(base)
}

/// `repo:tag` (or `repo@digest`) of an image word: the repository without tag or digest, and
/// the tag.
fn image_parts(word: &str) -> (&str, &str) {
    let repo = word.split(['@', ':']).next().unwrap_or(word);
    // A registry with a port (`host:5000/org/img:tag`) keeps its port in the repository.
    let repo = match word.rsplit_once(':') {
        Some((r, t)) if !t.contains('/') && r.contains('/') => r.split('@').next().unwrap_or(r),
        _ => repo,
    };
    let tag = word
        .strip_prefix(repo)
        .and_then(|rest| rest.strip_prefix(':'))
        .map(|t| t.split('@').next().unwrap_or(t))
        .unwrap_or("");
    (repo, tag)
}

/// Whether the image `repo` (with or without a registry host) is one of `repos`.
pub fn image_is(repo: &str, repos: &[&str]) -> bool {
    repos
        .iter()
        .any(|r| repo == *r || repo.ends_with(&format!("/{r}")))
}

/// The engine whose official image `word` names, and the release its tag names when it does:
/// for a compose `image:`, a container's `image`, a Dockerfile's `FROM`.
pub fn image_release(word: &str) -> Option<(Engine, Option<EngineRelease>)> {
    let (repo, tag) = image_parts(word);
    Engine::all().map(Engine::spec).find_map(|row| {
        row.images
            .iter()
            .any(|i| image_is(repo, i.repos))
            .then(|| (row.engine, EngineRelease::from_tag(row.engine, word, tag)))
    })
}

/// The release an image names for a line of `engine`: one of `engine`'s images whose tag names a
/// release (`vllm/vllm-openai:v0.28.0`), or the image of a platform built on `engine`
/// (`quay.io/ascend/vllm-ascend:v0.18.0` running `vllm serve`), which names the platform even
/// when its tag names no release. Another engine's image names none.
pub fn release_in_image(engine: Engine, word: &str) -> Option<EngineRelease> {
    let (e, release) = image_release(word)?;
    if e == engine {
        return release;
    }
    e.serves_as(engine).then(|| {
        release.unwrap_or_else(|| EngineRelease {
            from: Some(super::VersionFrom::Image(word.to_string())),
            ..EngineRelease::from(e)
        })
    })
}

/// Whether a program or module name starts an engine of the table by itself (`vllm` does not:
/// it needs `serve`; `mlx_lm.server` would).
pub fn starts_an_engine(word: &str) -> bool {
    Engine::all().any(|e| {
        e.spec().entrypoints.iter().any(|ep| match *ep {
            Entrypoint::Program { name, then, .. } => then.is_empty() && program(word) == name,
            Entrypoint::Module { module, then } => then.is_empty() && word == module,
            Entrypoint::Image { .. } => false,
        })
    })
}

/// Where an engine starts in `words`: the first word, in order, that one of the table's
/// entrypoints matches.
pub fn find_engine(words: &[String]) -> Option<Found> {
    for (i, w) in words.iter().enumerate() {
        for row in Engine::all().map(Engine::spec) {
            for e in row.entrypoints {
                if let Some(found) = entry_at(row.engine, e, words, i, w) {
                    return Some(found);
                }
            }
        }
    }
    None
}

/// `words[i]` starting `engine` by the entrypoint `e`.
fn entry_at(engine: Engine, e: &Entrypoint, words: &[String], i: usize, w: &str) -> Option<Found> {
    let follows = |then: &[&str], from: usize| {
        then.iter()
            .enumerate()
            .all(|(k, t)| words.get(from + k).map(String::as_str) == Some(*t))
    };
    let found = |start: usize, entrypoint: String, image_release| {
        Some(Found {
            engine,
            start,
            entrypoint,
            image_release,
        })
    };
    match *e {
        Entrypoint::Program { name, prefix, then } => {
            let p = program(w);
            let named = if prefix {
                p.starts_with(name) && !p.ends_with(".kcpps")
            } else {
                p == name
            };
            if !named || !follows(then, i + 1) {
                return None;
            }
            let shown = std::iter::once(name)
                .chain(then.iter().copied())
                .collect::<Vec<_>>()
                .join(" ");
            found(i + 1 + then.len(), shown, None)
        }
        Entrypoint::Module { module, then } => {
            if w != "-m" || words.get(i + 1).map(String::as_str) != Some(module) {
                return None;
            }
            if !follows(then, i + 2) {
                return None;
            }
            let shown = std::iter::once(format!("python -m {module}"))
                .chain(then.iter().map(|t| t.to_string()))
                .collect::<Vec<_>>()
                .join(" ");
            found(i + 2 + then.len(), shown, None)
        }
        Entrypoint::Image { image, tag_prefix } => {
            let spec = engine.spec();
            let (repo, tag) = image_parts(w);
            if !image_is(repo, spec.images.get(image)?.repos) || !tag.starts_with(tag_prefix) {
                return None;
            }
            // `... IMAGE vllm serve ...` states its own command: found at that word instead.
            let starts_itself = (i + 1..words.len()).any(|j| {
                spec.entrypoints.iter().any(|other| {
                    !matches!(other, Entrypoint::Image { .. })
                        && entry_at(engine, other, words, j, &words[j]).is_some()
                })
            });
            if starts_itself {
                return None;
            }
            let shown = if tag_prefix.is_empty() {
                repo.to_string()
            } else {
                format!("{repo}:{tag}")
            };
            found(
                i + 1,
                format!("{shown} image's entrypoint ({})", spec.display),
                EngineRelease::from_tag(engine, w, tag),
            )
        }
    }
}

/// `NAME=value` (also `--env=NAME=value`), when `word` is an environment assignment.
pub fn assignment(word: &str) -> Option<(&str, &str)> {
    let word = word.strip_prefix("--env=").unwrap_or(word);
    let (name, value) = word.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then_some((name, value))
}

/// The words of one command, from the engine on: its environment, its flags as the engine's
/// row spells them, then the engine's own fields ([`super::EngineCode::read`]).
pub fn parse_words(
    words: &[String],
    input_env: &[(String, String)],
    found: Found,
    origin: CommandText,
) -> Result<Launch> {
    let Found {
        engine,
        start,
        entrypoint,
        image_release,
    } = found;
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
    let (flags, positionals) = flags_of(engine, &words[start.min(words.len())..]);
    let mut launch = Launch {
        engine,
        entrypoint,
        image_release,
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
    engine.code().read(&mut launch)?;
    Ok(launch)
}

/// The flags and positional words of `args`, as `engine`'s argument parser reads them.
fn flags_of(engine: Engine, args: &[String]) -> (Vec<Flag>, Vec<String>) {
    let spelling = engine.spec().flags;
    let mut flags = Vec::new();
    let mut positionals = Vec::new();
    let is_flag = |s: &str| {
        s.starts_with('-') && s.len() > 1 && !s[1..].starts_with(|c: char| c.is_ascii_digit())
    };
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if !is_flag(w) {
            positionals.push(w.clone());
            i += 1;
            continue;
        }
        let (raw_name, inline) = match w.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (w.as_str(), None),
        };
        let name = normalise(spelling.underscores_are_dashes, raw_name);
        let value = match inline {
            Some(v) => Some(v),
            None if spelling.switches.contains(&name.as_str()) => None,
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
    (flags, positionals)
}

/// `--max_num_seqs` → `--max-num-seqs` where the engine's parser takes `_` for `-` (not in the
/// keys after a `.`: `--speculative-config.num_speculative_tokens`).
fn normalise(underscores_are_dashes: bool, name: &str) -> String {
    if !underscores_are_dashes {
        return name.to_string();
    }
    match name.split_once('.') {
        Some((flag, key)) => format!("{}.{key}", flag.replace('_', "-")),
        None => name.replace('_', "-"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn entrypoints_come_from_the_table() {
        let f = find_engine(&words("VAR=1 vllm serve M")).unwrap();
        assert_eq!(
            (f.engine, f.start, f.entrypoint.as_str()),
            (Engine::Vllm, 3, "vllm serve")
        );
        let f = find_engine(&words("python3 -m vllm.entrypoints.cli.main serve M")).unwrap();
        assert_eq!(f.start, 4);
        let f = find_engine(&words("/opt/bin/llama-server.exe -m x.gguf")).unwrap();
        assert_eq!(
            (f.engine, f.entrypoint.as_str()),
            (Engine::LlamaCpp, "llama-server")
        );
        let f = find_engine(&words("./koboldcpp-linux-x64 --model m")).unwrap();
        assert_eq!(f.engine, Engine::Koboldcpp);
        assert_eq!(find_engine(&words("echo vllm")), None);
    }

    /// An image whose entrypoint is the server starts it, and its tag names the release.
    #[test]
    fn images_start_engines_and_name_releases() {
        let f = find_engine(&words(
            "docker run --gpus all vllm/vllm-openai:v0.28.0 --model M",
        ))
        .unwrap();
        assert_eq!(f.engine, Engine::Vllm);
        let r = f.image_release.unwrap();
        assert_eq!(r.version, Some((0, 28, 0)));
        assert_eq!(r.header(), "vllm 0.28.0 (image vllm/vllm-openai:v0.28.0)");
        let f = find_engine(&words(
            "docker run ghcr.io/ggml-org/llama.cpp:server-cuda-b6000 -m x",
        ))
        .unwrap();
        assert_eq!(f.engine, Engine::LlamaCpp);
        assert_eq!(f.image_release.unwrap().version, Some((6000, 0, 0)));
        // A floating tag names no release; an image followed by the engine's own program is
        // found at the program.
        let f = find_engine(&words("docker run vllm/vllm-openai:latest --model M")).unwrap();
        assert_eq!(f.image_release, None);
        let f = find_engine(&words("docker run vllm/vllm-openai:v0.30.0 vllm serve M")).unwrap();
        assert_eq!(
            (f.entrypoint.as_str(), f.image_release),
            ("vllm serve", None)
        );
        // llama.cpp's `full` image is not the server.
        assert_eq!(
            find_engine(&words("docker run ghcr.io/ggml-org/llama.cpp:full -m x")),
            None
        );
    }

    #[test]
    fn image_words_name_an_engine_and_its_release() {
        let (e, r) = image_release("registry.example:5000/vllm/vllm-openai:v0.29.0-cu129").unwrap();
        assert_eq!(e, Engine::Vllm);
        assert_eq!(r.unwrap().version, Some((0, 29, 0)));
        let (e, r) = image_release("lmsysorg/sglang:v0.5.23-cu129").unwrap();
        assert_eq!((e, r.unwrap().version), (Engine::Sglang, Some((0, 5, 23))));
        assert_eq!(image_release("python:3.11"), None);
        let (_, r) = image_release("vllm/vllm-openai@sha256:abc").unwrap();
        assert_eq!(r, None);
    }
}
