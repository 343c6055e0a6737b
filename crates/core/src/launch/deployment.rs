//! The [`Deployment`] an engine command line describes: its engine, method, K, speculative
//! config, drafter, tensor-parallel sizes, quantization flags, chat template, thinking default
//! and environment, as the parsed [`Launch`] states them. The deployment rules
//! (`rules::deployment`) judge it exactly as they judge one built from `lint`'s flags.

use serde_json::Value;

use super::parse::Launch;
use crate::config::TargetFacts;
use crate::deployment::{
    AttentionBackends, Deployment, DraftTokens, Drafter, Method, MethodFrom, Origin,
    QuantizationFlags, TensorParallel,
};
use crate::rules::Engine;

/// The deployment `launch` states, with the target's facts when they were read.
pub fn of(launch: &Launch, target: Option<&TargetFacts>) -> Deployment {
    let mut d = Deployment::new(Origin::LaunchLine, Some(launch.engine.into()));
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
        draft: launch
            .spec("draft_tensor_parallel_size")
            .and_then(Value::as_u64),
    };
    match launch.engine {
        Engine::Vllm => {
            d.speculative_config = launch.speculative_config.clone();
            d.method = d.vllm_method();
        }
        Engine::Sglang => {
            d.attention_backends = Some(AttentionBackends {
                target: flag("--attention-backend"),
                draft: flag("--speculative-draft-attention-backend"),
            });
            d.method = launch.sglang.algorithm.clone().map(|name| Method {
                name,
                from: MethodFrom::SglangAlgorithm,
            });
            let s = &launch.sglang;
            d.draft_tokens = s
                .num_draft_tokens
                .map(|value| DraftTokens {
                    value,
                    flag: "--speculative-num-draft-tokens",
                })
                .or(s.dflash_block_size.map(|value| DraftTokens {
                    value,
                    flag: "--speculative-dflash-block-size",
                }));
        }
        // llama.cpp's method is a list of types, judged by its own launch rules
        // (`launch::rules::llama`); the engine claims above are vLLM's and SGLang's.
        Engine::LlamaCpp | Engine::Koboldcpp => {}
    }
    d
}

/// The target's tensor-parallel size from the command line (1 when unset); `None` when the
/// value is not a whole number (a shell variable): the rules that need it do not guess.
fn target_tp(launch: &Launch) -> Option<u64> {
    let names: &[&str] = match launch.engine {
        Engine::Vllm => &["--tensor-parallel-size", "-tp"],
        Engine::Sglang => &["--tp-size", "--tp", "--tensor-parallel-size"],
        // llama.cpp splits layers across devices (`--split-mode`), not heads.
        Engine::LlamaCpp | Engine::Koboldcpp => return None,
    };
    match names.iter().find_map(|n| launch.flag(n)) {
        None => Some(1),
        Some(v) => v.parse::<u64>().ok().filter(|&t| t > 0),
    }
}
