//! One deployment: what is served, by which engine, with which speculative-decoding settings.
//!
//! The engine claims (a method that does not match the drafter, a missing or oversized K, SGLang
//! draft tokens that differ from the block, mixed attention under vLLM's V1 runner, a
//! quantization the draft inherits) are judged against a [`Deployment`], whatever it was built
//! from: `lint`'s flags (`--engine`, `--speculative-config`, `--num-draft-tokens`), an engine
//! command line (`launch`, built in the main crate from a parsed command), or what a running
//! server says about itself (`doctor`, through the same command line). Each builder fills what
//! its input states and leaves the rest unknown (`None`), so a rule can tell "not set" from "not
//! known": lint's flags do not know the environment or the `--quantization` flags, a command
//! line does. Pure: no I/O.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::TargetFacts;

pub use crate::engine::command::CommandText;
pub use crate::engine::{
    AttentionBackends, DraftTokens, Engine, EngineRelease, Method, MethodFrom, Settings,
};

/// What a deployment was built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// `lint`'s flags: `--engine`, `--speculative-config`, `--num-draft-tokens`.
    LintFlags,
    /// An engine command line (`launch`, or `doctor` with `--launch`).
    LaunchLine,
    /// What a running server reports about itself (`doctor`: SGLang's `/get_server_info`).
    Server,
}

/// The drafter a deployment serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Drafter {
    /// A separate drafter: the path or Hub repo the deployment names.
    Separate(String),
    /// A draft module inside the target's own checkpoint (MTP, DeepSeek-V4's DSpark head), or
    /// a model-free method: no separate drafter is named.
    Embedded,
    /// The input does not say (lint's flags: the drafter is the config linted).
    Unknown,
}

/// Tensor-parallel sizes, when the deployment states them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TensorParallel {
    /// The target's (`--tensor-parallel-size`, SGLang `--tp-size`); unset means 1.
    pub target: Option<u64>,
    /// vLLM's `draft_tensor_parallel_size`.
    pub draft: Option<u64>,
}

/// The quantization flags the engine is started with (`None`: not given).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QuantizationFlags {
    /// `--quantization`.
    pub target: Option<String>,
    /// SGLang's `--speculative-draft-model-quantization`.
    pub draft: Option<String>,
}

/// One deployment of a drafter: everything the engine claims are judged against.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Deployment {
    /// The engine and version (`None`: no engine named, so no engine claim is made).
    pub engine: Option<EngineRelease>,
    pub origin: Origin,
    /// The speculative method as written (vLLM `method`, SGLang algorithm) or inferred.
    pub method: Option<Method>,
    /// vLLM's `--speculative-config`, as written (`num_speculative_tokens` is K there).
    pub speculative_config: Option<Map<String, Value>>,
    /// SGLang's draft tokens (K + 1 for EAGLE chains; the block for DFLASH).
    pub draft_tokens: Option<DraftTokens>,
    /// The target checkpoint's facts, when read.
    #[serde(skip)]
    pub target: Option<TargetFacts>,
    pub drafter: Drafter,
    /// The target model as the command names it (a path or Hub repo); `None` for lint's flags.
    /// vLLM reads its name when the drafter is the target's own MTP head.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_name: Option<String>,
    pub tensor_parallel: TensorParallel,
    /// `None`: the input cannot state them (lint's flags).
    pub quantization: Option<QuantizationFlags>,
    /// SGLang's attention backends (`--attention-backend`, `--speculative-draft-attention-backend`);
    /// `None`: the input cannot state them (lint's flags, vLLM).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attention_backends: Option<AttentionBackends>,
    /// `--chat-template`, when given.
    pub chat_template: Option<String>,
    /// `--default-chat-template-kwargs` as written (its thinking default, if any).
    pub default_chat_template_kwargs: Option<String>,
    /// The environment the engine starts with; `None`: not known (lint's flags).
    pub env: Option<Vec<(String, String)>>,
    /// The switch that asks for async scheduling explicitly (engines that take one); `None`:
    /// not asked for, so the engine decides (vLLM turns it off where the method cannot have it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub async_scheduling: Option<&'static str>,
    /// The environment variable that asks for the V2 model runner explicitly (vLLM), when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v2_runner: Option<&'static str>,
    /// The target is built by the engine's transformers backend (vLLM's `--model-impl
    /// transformers`), not by the model class its registry names.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub target_via_transformers: bool,
    /// The command's text, to point findings at a line and column of the input file.
    #[serde(skip)]
    pub command: Option<CommandText>,
}

impl Deployment {
    /// A deployment that states nothing but its origin and engine.
    pub fn new(origin: Origin, engine: Option<EngineRelease>) -> Deployment {
        Deployment {
            engine,
            origin,
            method: None,
            speculative_config: None,
            draft_tokens: None,
            target: None,
            drafter: Drafter::Unknown,
            target_name: None,
            tensor_parallel: TensorParallel::default(),
            quantization: None,
            attention_backends: None,
            chat_template: None,
            default_chat_template_kwargs: None,
            env: None,
            async_scheduling: None,
            v2_runner: None,
            target_via_transformers: false,
            command: None,
        }
    }

    /// From lint's flags: `--engine`, the speculative config (vLLM's `--speculative-config`
    /// JSON) and the draft tokens (SGLang's `--speculative-num-draft-tokens`), with the
    /// target's facts, read as the engine reads them (its code's `lint_settings`); a flag the
    /// engine does not take is ignored, as the engine would never see it.
    pub fn from_lint_flags(
        engine: Option<EngineRelease>,
        speculative_config: Option<&Value>,
        num_draft_tokens: Option<u64>,
        target: Option<&TargetFacts>,
    ) -> Deployment {
        let settings = engine.as_ref().map(|e| {
            e.engine.code().lint_settings(
                speculative_config.and_then(Value::as_object),
                num_draft_tokens,
            )
        });
        let mut d = Deployment::new(Origin::LintFlags, engine);
        d.target = target.cloned();
        if let Some(settings) = settings {
            d.apply(settings);
        }
        d
    }

    /// Takes the speculative settings an engine's code read (from a line or lint's flags).
    pub fn apply(&mut self, settings: Settings) {
        self.method = settings.method;
        self.speculative_config = settings.speculative_config;
        self.draft_tokens = settings.draft_tokens;
        if settings.attention_backends.is_some() {
            self.attention_backends = settings.attention_backends;
        }
        if settings.draft_tensor_parallel.is_some() {
            self.tensor_parallel.draft = settings.draft_tensor_parallel;
        }
        self.async_scheduling = settings.async_scheduling;
        self.v2_runner = settings.v2_runner;
        self.target_via_transformers = settings.target_via_transformers;
    }

    /// Whether the deployment serves the target's own MTP head, as its engine reads its
    /// method.
    pub fn serves_mtp_head(&self) -> bool {
        self.engine().is_some_and(|e| {
            e.code().serves_mtp_head(
                self.method.as_ref(),
                matches!(self.drafter, Drafter::Separate(_)),
            )
        })
    }

    /// The engine, without its version.
    pub fn engine(&self) -> Option<Engine> {
        self.engine.as_ref().map(|e| e.engine)
    }

    /// A key of vLLM's speculative config.
    pub fn spec(&self, key: &str) -> Option<&Value> {
        self.speculative_config.as_ref()?.get(key)
    }

    /// K as the speculative config states it (the engine row's K key: vLLM's
    /// `num_speculative_tokens`), when it is a positive integer.
    pub fn k(&self) -> Option<u64> {
        let key = self
            .engine()
            .map_or("num_speculative_tokens", |e| e.spec().flags.k);
        self.spec(key).and_then(Value::as_u64).filter(|&k| k > 0)
    }

    /// The value of an environment variable the engine sees: `Some(None)` when the environment
    /// is known and the variable unset, `None` when the environment is not known.
    pub fn env_var(&self, name: &str) -> Option<Option<&str>> {
        let env = self.env.as_ref()?;
        Some(
            env.iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lint_flags_of_the_other_engine_are_ignored() {
        let spec = json!({"method": "dflash", "num_speculative_tokens": 15});
        let vllm =
            Deployment::from_lint_flags(Some(Engine::Vllm.into()), Some(&spec), Some(16), None);
        assert_eq!(vllm.k(), Some(15));
        assert_eq!(vllm.draft_tokens, None);
        assert_eq!(
            vllm.method.as_ref().unwrap().from,
            MethodFrom::SpeculativeConfig
        );
        let sglang =
            Deployment::from_lint_flags(Some(Engine::Sglang.into()), Some(&spec), Some(16), None);
        assert_eq!(sglang.k(), None);
        assert_eq!(sglang.draft_tokens.unwrap().value, 16);
        // Lint's flags do not know the environment: unknown, not unset.
        assert_eq!(vllm.env_var("VLLM_USE_V2_MODEL_RUNNER"), None);
    }

    #[test]
    fn vllm_infers_the_method_from_the_drafter_name() {
        let spec = json!({"model": "z-lab/Qwen3-8B-DFlash-b16", "num_speculative_tokens": 15});
        let d = Deployment::from_lint_flags(Some(Engine::Vllm.into()), Some(&spec), None, None);
        assert_eq!(
            d.method,
            Some(Method {
                name: "dflash".into(),
                from: MethodFrom::DrafterName
            })
        );
    }

    #[test]
    fn command_text_finds_a_flag_line_and_column() {
        let o = CommandText {
            file: Some("x.sh".into()),
            text: "vllm serve M \\\n  --speculative-config '{\"num_speculative_tokens\": 3}'\n"
                .into(),
            line: 4,
        };
        assert_eq!(o.find(None, "--speculative-config"), Some((5, 3)));
        assert_eq!(
            o.find(Some("--speculative-config"), "\"num_speculative_tokens\""),
            Some((5, 26))
        );
    }
}
