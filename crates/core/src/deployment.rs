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

pub use crate::engine::{Engine, EngineRelease};

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

/// Where the speculative method came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MethodFrom {
    /// vLLM's `--speculative-config` `method`.
    SpeculativeConfig,
    /// SGLang's `--speculative-algorithm` (upper-cased; `NEXTN` read as `EAGLE`).
    SglangAlgorithm,
    /// No method given: vLLM infers it from "eagle3" or "dflash" in the drafter's name.
    DrafterName,
}

/// The speculative method as the engine reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Method {
    pub name: String,
    pub from: MethodFrom,
}

/// SGLang's draft tokens and the flag that set them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DraftTokens {
    pub value: u64,
    /// `--speculative-num-draft-tokens` or `--speculative-dflash-block-size`.
    pub flag: &'static str,
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

/// The attention backends the engine is started with (`None`: not given, the engine picks).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AttentionBackends {
    /// SGLang's `--attention-backend`.
    pub target: Option<String>,
    /// SGLang's `--speculative-draft-attention-backend`.
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
            command: None,
        }
    }

    /// From lint's flags: `--engine`, vLLM's `--speculative-config` JSON and SGLang's
    /// `--num-draft-tokens` (read as `--speculative-num-draft-tokens`), with the target's facts.
    /// A flag of the other engine is ignored, as the engine would never see it.
    pub fn from_lint_flags(
        engine: Option<EngineRelease>,
        speculative_config: Option<&Value>,
        num_draft_tokens: Option<u64>,
        target: Option<&TargetFacts>,
    ) -> Deployment {
        let which = engine.as_ref().map(|e| e.engine);
        let mut d = Deployment::new(Origin::LintFlags, engine);
        d.target = target.cloned();
        match which {
            Some(Engine::Vllm) => {
                d.speculative_config = speculative_config.and_then(Value::as_object).cloned();
                d.method = d.vllm_method();
                d.tensor_parallel.draft =
                    d.spec("draft_tensor_parallel_size").and_then(Value::as_u64);
            }
            Some(Engine::Sglang) => {
                d.draft_tokens = num_draft_tokens.map(|value| DraftTokens {
                    value,
                    flag: "--speculative-num-draft-tokens",
                });
            }
            // llama.cpp's settings are flags of a command line (`launch`); lint's flags state none.
            Some(Engine::LlamaCpp | Engine::Koboldcpp) | None => {}
        }
        d
    }

    /// The engine, without its version.
    pub fn engine(&self) -> Option<Engine> {
        self.engine.as_ref().map(|e| e.engine)
    }

    /// A key of vLLM's speculative config.
    pub fn spec(&self, key: &str) -> Option<&Value> {
        self.speculative_config.as_ref()?.get(key)
    }

    /// vLLM's `num_speculative_tokens` when it is a positive integer.
    pub fn k(&self) -> Option<u64> {
        self.spec("num_speculative_tokens")
            .and_then(Value::as_u64)
            .filter(|&k| k > 0)
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

    /// The method vLLM uses: the speculative config's `method`, else the one vLLM infers from
    /// "eagle3" or "dflash" in the drafter's name (`model`), else none.
    pub fn vllm_method(&self) -> Option<Method> {
        let spec = self.speculative_config.as_ref()?;
        if let Some(m) = spec.get("method").and_then(Value::as_str) {
            return Some(Method {
                name: m.to_string(),
                from: MethodFrom::SpeculativeConfig,
            });
        }
        let name = spec
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_ascii_lowercase();
        let inferred = ["eagle3", "dflash"]
            .into_iter()
            .find(|m| name.contains(m))?;
        Some(Method {
            name: inferred.to_string(),
            from: MethodFrom::DrafterName,
        })
    }
}

/// The text of the command a deployment was read from, to find a flag's line and column.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandText {
    /// The file given with `--file`; `None` for a command given after `--`.
    pub file: Option<String>,
    /// The text the command's flags are searched in.
    pub text: String,
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
