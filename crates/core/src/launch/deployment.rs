//! The [`Deployment`] an engine command line describes: its engine, method, K, speculative
//! config, drafter, tensor-parallel sizes, quantization flags, chat template, thinking default
//! and environment, as the parsed [`Launch`] states them. The deployment rules
//! (`rules::deployment`) judge it exactly as they judge one built from `lint`'s flags.

use super::parse::Launch;
use crate::config::TargetFacts;
use crate::deployment::{Deployment, Drafter, Origin, QuantizationFlags, TensorParallel};
use crate::engine::{Engine, EngineRelease, VersionFrom};
use crate::{Error, Result};

/// Where the release that serves a line can be stated besides the line itself: `--engine`, and
/// the releases a repository's `dflash-check.toml` names (one per engine).
#[derive(Debug, Clone, Default)]
pub struct Stated {
    /// `--engine ENGINE[@RELEASE]`.
    pub flag: Option<EngineRelease>,
    /// The flag is about lines of its engine only (`check`, over many deployments): a line of
    /// another engine is judged without it, where for `launch` and `doctor` it is bad input.
    pub flag_per_engine: bool,
    /// The `engine` key of `dflash-check.toml`: one release per engine.
    pub pinned: Vec<EngineRelease>,
    /// What the running server answered (`doctor`).
    pub server: Option<EngineRelease>,
}

/// The engine and release that serve `launch`, from the most direct statement of it: `--engine`
/// (the user's word for this run), what the server answers, the line's image tag, then the
/// pin file's release for the line's engine; with none, the engine alone (its default window).
/// The engine is the line's, or a platform built on it that the inputs name ([`served_by`]).
/// An `--engine` of an engine that does not serve the line's is bad input.
pub fn release_of(launch: &Launch, stated: &Stated) -> Result<EngineRelease> {
    let serves = |e: Engine| e.serves_as(launch.engine);
    if let Some(flag) = stated
        .flag
        .as_ref()
        .filter(|f| !stated.flag_per_engine || serves(f.engine))
    {
        if !serves(flag.engine) {
            return Err(Error::new(format!(
                "--engine {flag}: the line{} starts {} ({})",
                launch.in_file(),
                launch.engine.display(),
                launch.entrypoint
            ))
            .with_hint(format!(
                "give the release of the engine the line starts: --engine {}@RELEASE{}",
                launch.engine.as_str(),
                platforms_hint(launch.engine)
            )));
        }
        if flag.version.is_some() {
            return Ok(flag.clone());
        }
    }
    let (engine, named_by) = served_by(launch, stated);
    let same = |r: &&EngineRelease| r.engine == engine && r.version.is_some();
    Ok(stated
        .server
        .as_ref()
        .filter(same)
        .or(launch.image_release.as_ref().filter(|r| r.engine == engine))
        .or(stated.pinned.iter().find(same))
        .cloned()
        .unwrap_or_else(|| EngineRelease {
            from: named_by,
            ..engine.into()
        }))
}

/// The engine that serves the line: a platform built on its engine when `--engine`, the line's
/// image, an environment variable only the platform reads, or the pin file (naming the platform
/// and not the engine itself) says so; else the line's own. With what named a platform.
pub fn served_by(launch: &Launch, stated: &Stated) -> (Engine, Option<VersionFrom>) {
    let own = launch.engine;
    let on_it = |r: &&EngineRelease| r.engine != own && r.engine.serves_as(own);
    if let Some(flag) = stated.flag.as_ref().filter(|f| f.engine.serves_as(own)) {
        return (flag.engine, None);
    }
    if let Some(image) = launch.image_release.as_ref().filter(on_it) {
        return (image.engine, image.from.clone());
    }
    for platform in own.platforms() {
        let spec = platform.platform().expect("a platform");
        if let Some(var) = launch.env.iter().find(|v| spec.reads_env(&v.name)) {
            return (platform, Some(VersionFrom::Environment(var.name.clone())));
        }
    }
    let pinned_own = stated.pinned.iter().any(|r| r.engine == own);
    match stated.pinned.iter().find(on_it).filter(|_| !pinned_own) {
        Some(pin) => (pin.engine, Some(VersionFrom::PinFile)),
        None => (own, None),
    }
}

/// ` (or a platform on it: --engine vllm-ascend@RELEASE)`, when platforms are built on it.
fn platforms_hint(engine: Engine) -> String {
    match engine.platforms().next() {
        Some(p) => format!(" (or a platform on it: --engine {}@RELEASE)", p.as_str()),
        None => String::new(),
    }
}

/// The deployment `launch` states, served by `engine` ([`release_of`]), with the target's facts
/// when they were read: the drafter, the environment, the flags every engine shares a meaning
/// for, and the speculative settings the engine's own code reads.
pub fn of(launch: &Launch, engine: EngineRelease, target: Option<&TargetFacts>) -> Deployment {
    let mut d = Deployment::new(Origin::LaunchLine, Some(engine));
    d.target = target.cloned();
    d.command = Some(launch.origin.clone());
    d.drafter = match &launch.drafter {
        Some(name) => Drafter::Separate(name.clone()),
        None => Drafter::Embedded,
    };
    d.target_name = launch.target.clone();
    d.env = Some(
        launch
            .env
            .iter()
            .map(|e| (e.name.clone(), e.value.clone()))
            .collect(),
    );
    let flag = |name: &str| launch.flag(name).map(str::to_string);
    d.chat_template = flag("--chat-template");
    d.default_chat_template_kwargs = flag("--default-chat-template-kwargs");
    d.quantization = Some(QuantizationFlags {
        target: flag("--quantization"),
        draft: flag("--speculative-draft-model-quantization"),
    });
    d.tensor_parallel = TensorParallel {
        target: target_tp(launch),
        draft: None,
    };
    d.apply(launch.engine.code().settings(launch));
    d
}

/// The target's tensor-parallel size from the command line (1 when unset); `None` when the
/// engine splits no heads (llama.cpp splits layers, `--split-mode`) or the value is not a whole
/// number (a shell variable): the rules that need it do not guess.
fn target_tp(launch: &Launch) -> Option<u64> {
    let names = launch.engine.spec().flags.tensor_parallel?;
    match names.iter().find_map(|n| launch.flag(n)) {
        None => Some(1),
        Some(v) => v.parse::<u64>().ok().filter(|&t| t > 0),
    }
}
