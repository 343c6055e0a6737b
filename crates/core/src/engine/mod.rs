//! The engines that serve drafters, as one table: everything the tool knows per engine is one
//! [`EngineSpec`] row of [`table::ROWS`] — its names, how it is started (programs, `python -m`
//! modules, container images), how its command line is spelled (switches, the drafter and
//! target flags, where the speculative method comes from), its metrics and what its server
//! says about itself, **the releases the tool has read** and the default window a line with no
//! known release is judged across — plus one file per engine (`vllm.rs`, `sglang.rs`,
//! `llama_cpp.rs`, `koboldcpp.rs`, `trtllm.rs`, `mlx_lm.rs`, `mlx_vlm.rs`, `omlx.rs`) holding the only code that is
//! specific to it.
//!
//! What an engine *does* at a release is data too: a rule that depends on the engine declares
//! its [`ByEngine`] rows (one [`ReleaseRow`] per engine and release range, [`releases`]), and
//! which release of which engine serves a drafter at all is a row of [`capability`]. Outside
//! this module no code matches on an [`Engine`] (`tests/architecture.rs`): it reads the row.
//! The quantization exclude-list matching each engine does is here too ([`exclude`]).

mod aux_targets;
mod capabilities;
pub mod capability;
mod code;
pub mod command;
pub mod exclude;
pub mod koboldcpp;
pub mod llama_cpp;
pub mod mlx_lm;
pub mod mlx_vlm;
pub mod omlx;
pub mod releases;
pub mod sglang;
pub mod table;
pub mod tpu_inference;
pub mod trtllm;
mod version;
pub mod vllm;
pub mod vllm_ascend;

use serde::Serialize;

pub use capability::{Capabilities, Holds, What};
pub use code::{
    AttentionBackends, DraftLength, DraftTokens, EngineCode, Method, MethodFrom, ServedLength,
    Settings,
};
pub use llama_cpp::{DRAFT_HF as LLAMA_DRAFT_HF, DRAFT_MODEL as LLAMA_DRAFT_MODEL};
pub use releases::{ByEngine, Judged, ReleaseRow};
pub use version::{
    line_text, range_text, tag_release, EngineRelease, Line, VersionFrom, ANY_PATCH,
};

/// An engine the tool knows: the key of its row in [`table::ROWS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "&'static str")]
pub enum Engine {
    Vllm,
    Sglang,
    /// llama.cpp's `llama-server`, `llama-cli`, `llama-speculative`: GGUF models, a draft model
    /// (`-md`) or a draft head of a type (`--spec-type`).
    LlamaCpp,
    /// koboldcpp, which vendors llama.cpp's speculative decoding behind its own flags.
    Koboldcpp,
    /// NVIDIA TensorRT-LLM's `trtllm-serve`, its speculative decoding in an LLM API options file.
    Trtllm,
    /// vllm-ascend: vLLM's server on Ascend NPUs, a platform on vLLM with releases of its own.
    VllmAscend,
    /// tpu-inference (the `vllm-tpu` distribution): vLLM's server on Google TPUs, a platform on
    /// vLLM whose releases share vLLM's numbers.
    TpuInference,
    /// Apple MLX's mlx-lm (`mlx_lm.server`, `mlx_lm.generate`): MLX checkpoints, a plain draft
    /// model by `--draft-model`.
    MlxLm,
    /// Apple MLX's mlx-vlm (`mlx_vlm.server`, `mlx_vlm.generate`): DFlash, EAGLE-3 and MTP
    /// drafters by `--draft-model` and `--draft-kind`.
    MlxVlm,
    /// oMLX (`omlx serve`): many MLX models, their drafters switched on per model in its
    /// `model_settings.json`.
    Omlx,
}

impl From<Engine> for &'static str {
    fn from(e: Engine) -> &'static str {
        e.as_str()
    }
}

impl Engine {
    /// Every engine, in the table's order.
    pub fn all() -> impl Iterator<Item = Engine> {
        table::ROWS.iter().map(|r| r.engine)
    }

    /// The engine's row.
    pub fn spec(self) -> &'static EngineSpec {
        table::ROWS
            .iter()
            .find(|r| r.engine == self)
            .expect("every engine has a row (tested)")
    }

    /// The name `--engine` takes and output prints (`vllm`, `llama.cpp`).
    pub fn as_str(self) -> &'static str {
        self.spec().name
    }

    /// The engine whose metrics `e` holds (the first row whose marker series it has).
    pub fn exporting(has: impl Fn(&str) -> bool) -> Option<Engine> {
        table::ROWS
            .iter()
            .find(|r| r.metrics.is_some_and(|m| has(m.marker)))
            .map(|r| r.engine)
    }

    /// Whether its models are GGUF files (llama.cpp and the servers that vendor it).
    pub fn reads_gguf(self) -> bool {
        self.spec().models == Models::Gguf
    }

    /// How people write it (`vLLM`, `SGLang`).
    pub fn display(self) -> &'static str {
        self.spec().display
    }

    /// Every engine's display name, platforms left out (their lines are their base engine's):
    /// `vLLM, SGLang, llama.cpp or koboldcpp`.
    pub fn displays_listed() -> String {
        listed(own_commands().map(|r| r.display))
    }

    /// The engines whose servers export the acceptance counters the tool reads (the rows with
    /// metric names), for help texts: `vLLM or SGLang`.
    pub fn measured_listed() -> String {
        listed(
            own_commands()
                .filter(|r| r.metrics.is_some())
                .map(|r| r.display),
        )
    }

    /// Every engine with how its lines start, for messages and help: `vLLM (`vllm serve MODEL
    /// …`), SGLang (…) and …`.
    pub fn examples() -> String {
        let all: Vec<String> = own_commands()
            .map(|r| format!("{} (`{}`)", r.display, r.example))
            .collect();
        match all.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => all.join(""),
        }
    }

    /// The platform the engine is, when it runs another engine's server.
    pub fn platform(self) -> Option<&'static Platform> {
        self.spec().platform.as_ref()
    }

    /// Whether the engine serves lines of `other`: it is `other`, or a platform built on it.
    pub fn serves_as(self, other: Engine) -> bool {
        self == other || self.platform().is_some_and(|p| p.base == other)
    }

    /// The platforms built on the engine (vLLM: vllm-ascend, tpu-inference).
    pub fn platforms(self) -> impl Iterator<Item = Engine> {
        table::ROWS
            .iter()
            .filter(move |r| r.platform.is_some_and(|p| p.base == self))
            .map(|r| r.engine)
    }

    /// The engine's own code (its command line, its deployment settings).
    pub fn code(self) -> &'static dyn EngineCode {
        self.spec().code
    }

    /// The engine named `name` (its name or an alias, any case).
    pub fn named(name: &str) -> Option<Engine> {
        let lower = name.to_ascii_lowercase();
        table::ROWS
            .iter()
            .find(|r| r.name == lower || r.aliases.contains(&lower.as_str()))
            .map(|r| r.engine)
    }

    /// Every engine's name, for messages and help: `vllm, sglang, llama.cpp or koboldcpp`.
    pub fn names_listed() -> String {
        listed(table::ROWS.iter().map(|r| r.name))
    }
}

/// The rows whose lines and servers are their own: a platform's (vllm-ascend) are its base
/// engine's, so texts that name commands or servers leave it out.
fn own_commands() -> impl Iterator<Item = &'static EngineSpec> {
    table::ROWS.iter().filter(|r| r.platform.is_none())
}

/// `a, b or c`.
fn listed<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let all: Vec<&str> = items.collect();
    match all.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => all.join(""),
    }
}

/// Every capability row (`capabilities`), for `capability`'s queries.
fn capability_rows() -> &'static [capability::Capability] {
    static ALL: std::sync::LazyLock<Vec<capability::Capability>> = std::sync::LazyLock::new(|| {
        capabilities::ROWS
            .iter()
            .chain(aux_targets::ROWS)
            .copied()
            .collect()
    });
    &ALL
}

/// The kinds of capability whose uncovered releases are unknown (`capabilities::EXPLICIT`).
fn capability_kinds_explicit() -> &'static [(Engine, capability::What<'static>)] {
    capabilities::EXPLICIT
}

/// The kinds of capability an engine's rows list whole (`capabilities::COMPLETE`).
fn capability_lists_read_whole() -> &'static [(Engine, capability::What<'static>)] {
    capabilities::COMPLETE
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One engine: what the tool knows of it, as data.
pub struct EngineSpec {
    pub engine: Engine,
    /// The `--engine` name, printed in output and written in `dflash-check.toml`.
    pub name: &'static str,
    /// Other names `--engine` accepts.
    pub aliases: &'static [&'static str],
    /// How it is written in prose (`vLLM`).
    pub display: &'static str,
    /// Whose speculative-decoding code it vendors, and since when, when it serves drafts with
    /// another engine's code (koboldcpp: llama.cpp's): messages name it.
    pub vendors: Option<&'static str>,
    /// What its models are: checkpoint folders (`config.json` and safetensors) or GGUF files.
    pub models: Models,
    /// A line that starts it with a drafter, for messages and help.
    pub example: &'static str,
    /// How a command line starts it, in the order they are tried.
    pub entrypoints: &'static [Entrypoint],
    /// Its official container images, and how their tags name a release.
    pub images: &'static [Image],
    /// How its command line is spelled.
    pub flags: Flags,
    /// Where the speculative method of a line comes from (for docs and messages).
    pub method_from: &'static str,
    /// The metrics its server exports about speculative decoding (`acceptance`, `doctor`).
    pub metrics: Option<Metrics>,
    /// Where its server says which release it is.
    pub version_endpoint: Option<VersionEndpoint>,
    /// The releases read and the default window.
    pub releases: Releases,
    /// When the engine is a platform that runs another engine's server (vllm-ascend and
    /// tpu-inference run `vllm serve`): the engine it is built on, and the release of it each
    /// of its own releases pins. Its rows are its own where it has them, else the base
    /// engine's at the pinned release (`ByEngine::judge`, `Capabilities::of`).
    pub platform: Option<Platform>,
    /// The engine's own code (`engine/NAME.rs`).
    pub code: &'static dyn EngineCode,
}

/// A platform built on another engine: a line of the base engine's (`vllm serve …`) is served
/// by it when the line says so — its image, `--engine NAME@X`, the pin file's engine key or an
/// environment variable only it reads; a bare line stays the base engine's.
#[derive(Debug, Clone, Copy)]
pub struct Platform {
    /// The engine whose command line, flags and, where the platform has no rows of its own,
    /// behaviour it has.
    pub base: Engine,
    /// Each of its releases read and the base release it pins, oldest first: `(0, 18, 0)` →
    /// `(0, 18, 0)`.
    pub pins: &'static [(Line, Line)],
    /// Where the pins were read (docs/engines.md).
    pub pins_from: &'static str,
    /// Environment variables only the platform reads: a name, or a prefix ending in `_`.
    pub env: &'static [&'static str],
}

impl Platform {
    /// The base release `release` (one of the platform's) pins: the pin of the newest release
    /// read at or before it, else the oldest pin.
    pub fn pinned(&self, release: Line) -> Line {
        let key = |l: Line| if l.2 == ANY_PATCH { (l.0, l.1, 0) } else { l };
        let wanted = if release.2 == ANY_PATCH {
            (release.0, release.1, ANY_PATCH)
        } else {
            release
        };
        self.pins
            .iter()
            .rev()
            .find(|(own, _)| key(*own) <= wanted)
            .or(self.pins.first())
            .map_or(release, |(_, base)| *base)
    }

    /// Whether an environment variable's name is one only the platform reads.
    pub fn reads_env(&self, name: &str) -> bool {
        self.env.iter().any(|e| {
            if e.ends_with('_') {
                name.starts_with(e) && name.len() > e.len()
            } else {
                name == *e
            }
        })
    }
}

/// What an engine loads as a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Models {
    /// Hugging Face checkpoint folders: `config.json`, tokenizer files, safetensors.
    Checkpoints,
    /// GGUF files (llama.cpp's format), a draft judged against its target by llama.cpp's
    /// `common_speculative_are_compatible`.
    Gguf,
}

/// How a command line starts an engine.
#[derive(Debug, Clone, Copy)]
pub enum Entrypoint {
    /// A program (its file name, any directory, `.exe` too), followed by `then` (`vllm serve`).
    /// `prefix`: any program whose name starts with `name` (`koboldcpp-linux-x64`).
    Program {
        name: &'static str,
        prefix: bool,
        then: &'static [&'static str],
    },
    /// `python -m MODULE`, followed by `then`.
    Module {
        module: &'static str,
        then: &'static [&'static str],
    },
    /// A container image whose own entrypoint is the server (`docker run IMAGE ARGS`), when its
    /// tag starts with `tag_prefix` and no later word starts the engine by another entrypoint
    /// (`docker run IMAGE vllm serve …` states its own command).
    Image {
        /// Index into the row's `images`.
        image: usize,
        tag_prefix: &'static str,
    },
}

/// An official container image of an engine.
#[derive(Debug, Clone, Copy)]
pub struct Image {
    /// The repository, without registry host when it has none (`vllm/vllm-openai`); an image
    /// name is matched when it equals one of these or ends with `/` + one of these.
    pub repos: &'static [&'static str],
    /// What a tag without a release (`latest`, `nightly`, `server-cuda`) means.
    pub floating: &'static str,
}

/// How an engine's command line is spelled.
#[derive(Debug, Clone, Copy)]
pub struct Flags {
    /// Flags that take no value.
    pub switches: &'static [&'static str],
    /// Whether `--max_num_seqs` is `--max-num-seqs` (vLLM's argument parser).
    pub underscores_are_dashes: bool,
    /// The flags that name the target model, first the preferred spelling.
    pub target: &'static [&'static str],
    /// The flags that name the drafter (or a draft model), first the preferred spelling.
    pub drafter: &'static [&'static str],
    /// Where a line pins the drafter's Hub revision, and the flag to point at when it does not
    /// (`None`: the engine takes no revision for a drafter).
    pub drafter_revision: Option<(&'static str, &'static str)>,
    /// The flags that set the target's tensor-parallel size (`None`: the engine splits no heads).
    pub tensor_parallel: Option<&'static [&'static str]>,
    /// The flag that states the whole speculative configuration as JSON, when there is one.
    pub speculative_config: Option<&'static str>,
    /// The flags that name an options file the engine reads its settings from (a YAML or JSON
    /// file `launch` reads like `--file`).
    pub options_file: &'static [&'static str],
    /// The flag that names the method (algorithm, type), when it is a flag of its own.
    pub method: Option<&'static str>,
    /// The flag that states the draft tokens per step, when the engine takes one (lint's
    /// `--num-draft-tokens` stands for it).
    pub draft_tokens: Option<&'static str>,
    /// The flag `--help`-style examples show for K.
    pub k: &'static str,
    /// Words only a file that configures this engine's speculative decoding holds (`check`
    /// looks for them in manifests before reading one whole), matched as substrings.
    pub speculation_words: &'static [&'static str],
    /// Short flags that count only as whole words (as substrings they are in too many others).
    pub speculation_short: &'static [&'static str],
}

/// The speculative-decoding metrics of an engine's `/metrics`.
#[derive(Debug, Clone, Copy)]
pub struct Metrics {
    /// The namespace all its series share (`vllm:`).
    pub namespace: &'static str,
    /// The series whose presence says speculative decoding runs, and whose `model_name` label
    /// names the models served.
    pub marker: &'static str,
    /// The series the acceptance length is measured from.
    pub length: &'static str,
    /// The series `acceptance` reads, by name prefix (the parser keeps only these).
    pub reads: &'static [&'static str],
    /// How acceptance is exported.
    pub kind: MetricsKind,
    /// What to start the server with when the marker is missing.
    pub enable_hint: &'static str,
}

/// How an engine exports acceptance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsKind {
    /// Running counters (drafts, draft tokens, accepted tokens, per position): a window is the
    /// difference of two scrapes.
    Counters,
    /// Gauges of the most recent batch (accept length, accept rate): a window is their samples.
    Gauges,
}

/// Where a running server says which release it is.
#[derive(Debug, Clone, Copy)]
pub struct VersionEndpoint {
    /// The path, from the server's root (`/version`).
    pub path: &'static str,
    /// The JSON key holding the version (`version`).
    pub key: &'static str,
}

/// How an engine's releases are numbered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `MAJOR.MINOR[.PATCH]` (`0.28.0`, `v0.5.23`); rows hold at `(major, minor)`.
    Semver,
    /// A build number (`b6000`); rows hold at `(build, 0)`.
    Build,
}

/// The releases of an engine the tool has read, and the window judged when none is known.
#[derive(Debug, Clone, Copy)]
pub struct Releases {
    pub scheme: Scheme,
    /// The releases whose source the rules' evidence cites, oldest first, as written.
    pub read: &'static [&'static str],
    /// The default window, oldest and newest line: a line with no known release is judged
    /// across these releases, and a finding that is an error in any of them is an error.
    pub window: (Line, Line),
    /// Why the window starts where it does (docs/engines.md).
    pub window_why: &'static str,
}

impl Releases {
    /// The newest line read.
    pub fn newest(&self) -> Line {
        self.window.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every engine has one row, with a unique name and aliases that name no other engine.
    #[test]
    fn one_row_per_engine_with_unique_names() {
        let mut seen = std::collections::BTreeSet::new();
        for row in table::ROWS {
            assert_eq!(row.engine.spec().name, row.name);
            for n in std::iter::once(row.name).chain(row.aliases.iter().copied()) {
                assert!(seen.insert(n), "{n} names two engines");
                assert_eq!(Engine::named(n), Some(row.engine), "{n}");
            }
            let r = &row.releases;
            assert!(r.window.0 <= r.window.1, "{}: window backwards", row.name);
            assert!(!r.read.is_empty(), "{}: no release read", row.name);
            for e in row.entrypoints {
                if let Entrypoint::Image { image, .. } = e {
                    assert!(*image < row.images.len(), "{}: no image {image}", row.name);
                }
            }
        }
        assert_eq!(Engine::named("VLLM"), Some(Engine::Vllm));
        assert_eq!(Engine::named("tgi"), None);
    }

    /// A platform's release pins the base release of the newest of its releases read at or
    /// before it (the oldest pin before them all); its environment is names and prefixes.
    #[test]
    fn a_platform_pins_its_base_release_and_reads_its_environment() {
        let p = Platform {
            base: Engine::Vllm,
            pins: &[((0, 18, 0), (0, 18, 0)), ((0, 19, 1), (0, 19, 1))],
            pins_from: "",
            env: &["PLATFORM_", "ONLY_NAME"],
        };
        assert_eq!(p.pinned((0, 18, 0)), (0, 18, 0));
        assert_eq!(p.pinned((0, 19, ANY_PATCH)), (0, 19, 1));
        assert_eq!(p.pinned((0, 19, 0)), (0, 18, 0));
        assert_eq!(p.pinned((0, 30, 0)), (0, 19, 1));
        assert_eq!(p.pinned((0, 11, 0)), (0, 18, 0));
        assert!(p.reads_env("PLATFORM_X") && p.reads_env("ONLY_NAME"));
        assert!(!p.reads_env("PLATFORM_") && !p.reads_env("PLATFORMX"));
        assert!(!p.reads_env("ONLY_NAME_2") && !p.reads_env("X"));
    }

    #[test]
    fn names_are_listed_for_messages() {
        assert_eq!(
            Engine::names_listed(),
            "vllm, sglang, llama.cpp, koboldcpp, trtllm, vllm-ascend, tpu-inference, mlx-lm, mlx-vlm or omlx"
        );
    }
}
