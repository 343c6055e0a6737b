//! The [`Deployment`] an engine command line describes: its engine, method, K, speculative
//! config, drafter, tensor-parallel sizes, quantization flags, chat template, thinking default
//! and environment, as the parsed [`Launch`] states them. The deployment rules
//! (`rules::deployment`) judge it exactly as they judge one built from `lint`'s flags.

use super::parse::Launch;
use crate::config::TargetFacts;
use crate::deployment::{Deployment, Drafter, Origin, QuantizationFlags, TensorParallel};
use crate::engine::EngineRelease;
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
/// An `--engine` of another engine than the line starts is bad input.
pub fn release_of(launch: &Launch, stated: &Stated) -> Result<EngineRelease> {
    if let Some(flag) = stated
        .flag
        .as_ref()
        .filter(|f| !stated.flag_per_engine || f.engine == launch.engine)
    {
        if flag.engine != launch.engine {
            return Err(Error::new(format!(
                "--engine {flag}: the line{} starts {} ({})",
                launch.in_file(),
                launch.engine.display(),
                launch.entrypoint
            ))
            .with_hint(format!(
                "give the release of the engine the line starts: --engine {}@RELEASE",
                launch.engine.as_str()
            )));
        }
        if flag.version.is_some() {
            return Ok(flag.clone());
        }
    }
    let same = |r: &&EngineRelease| r.engine == launch.engine && r.version.is_some();
    Ok(stated
        .server
        .as_ref()
        .filter(same)
        .or(launch.image_release.as_ref())
        .or(stated.pinned.iter().find(same))
        .cloned()
        .unwrap_or_else(|| launch.engine.into()))
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
