//! Engine launch parameters against the config: vLLM's `--speculative-config` and SGLang's
//! `--speculative-num-draft-tokens` must agree with the drafter's block size.

use serde_json::json;

use super::{positive_int, Ctx, Engine, Needs, Rule, Severity};
use crate::config::layout_field;

pub const RULES: &[Rule] = &[
    Rule {
        code: "speculative-config-method",
        severity: Severity::Warning,
        needs: Needs::Engine,
        summary: "the vLLM speculative-config method does not match the drafter family",
        explanation: "vLLM picks the proposer from `method`: `dflash` for DFlash drafters, `eagle3` for EAGLE-3 \
heads. Another method loads the drafter with the wrong proposer.",
        source: "vllm-project/vllm vllm/config/speculative.py",
    },
    Rule {
        code: "num-speculative-tokens-missing",
        severity: Severity::Error,
        needs: Needs::Engine,
        summary: "vLLM speculative-config without num_speculative_tokens",
        explanation: "vLLM requires num_speculative_tokens for DFlash; the convention is block_size - 1 (15 for \
-b16 drafters).",
        source: "vllm-project/vllm vllm/config/speculative.py",
    },
    Rule {
        code: "num-speculative-tokens-too-large",
        severity: Severity::Error,
        needs: Needs::Engine,
        summary: "num_speculative_tokens exceeds block_size - 1",
        explanation: "A DFlash drafter drafts one block of block_size positions, the first being the last \
verified token: at most block_size - 1 speculative tokens exist. Larger values fail or draft garbage.",
        source: "vllm-project/vllm vllm/model_executor/models/qwen3_dflash.py",
    },
    Rule {
        code: "num-draft-tokens-mismatch",
        severity: Severity::Warning,
        needs: Needs::Engine,
        summary: "SGLang --speculative-num-draft-tokens differs from block_size",
        explanation: "SGLang's DFLASH algorithm expects --speculative-num-draft-tokens equal to the drafter's \
block_size (16 for -b16 drafters); a different value only warns in SGLang and wastes or truncates drafts.",
        source: "sgl-project/sglang python/sglang/srt/speculative/dflash_utils.py",
    },
];

pub(crate) fn check(cx: &mut Ctx) {
    let Some(engine) = cx.engine() else { return };
    let block = layout_field("block_size")
        .and_then(|f| f.find(cx.root))
        .and_then(|(p, n)| positive_int(n).ok().map(|b| (p, b)));
    let dflash = cx.detection.dflash_like();
    match engine {
        Engine::Vllm => {
            let Some(spec) = cx.options.speculative_config.clone() else {
                return;
            };
            let anchor = block
                .as_ref()
                .map_or_else(crate::json::Path::root, |(p, _)| p.clone());
            if let Some(method) = spec.get("method").and_then(|m| m.as_str()) {
                let want = if dflash {
                    Some("dflash")
                } else if cx.detection.eagle_like() {
                    Some("eagle3")
                } else {
                    None
                };
                if let Some(want) = want {
                    if cx.detection.name != super::Family::Speculators && method != want {
                        cx.emit(
                            "speculative-config-method",
                            &crate::json::Path::root(),
                            format!(
                                "--speculative-config method {method:?} but the drafter is {}: vLLM expects \
                                 \"{want}\"",
                                cx.detection.name.as_str()
                            ),
                            Some(json!(want)),
                        );
                    }
                }
            }
            if !dflash {
                return;
            }
            let expected = block.as_ref().map(|(_, b)| json!(b - 1));
            match spec.get("num_speculative_tokens") {
                None | Some(serde_json::Value::Null) => cx.emit(
                    "num-speculative-tokens-missing",
                    &anchor,
                    format!(
                        "--speculative-config has no num_speculative_tokens: vLLM requires it{}",
                        block
                            .as_ref()
                            .map_or(String::new(), |(_, b)| format!(
                                " (block_size {b}: use {})",
                                b - 1
                            ))
                    ),
                    expected,
                ),
                Some(v) => match (v.as_u64(), &block) {
                    (Some(n), Some((_, b))) if n > b - 1 => cx.emit(
                        "num-speculative-tokens-too-large",
                        &anchor,
                        format!(
                            "--speculative-config num_speculative_tokens {n} exceeds block_size - 1 = {}",
                            b - 1
                        ),
                        expected,
                    ),
                    (Some(_), _) => {}
                    (None, _) => cx.emit(
                        "num-speculative-tokens-missing",
                        &anchor,
                        format!(
                            "--speculative-config num_speculative_tokens is {v}, not a non-negative integer"
                        ),
                        expected,
                    ),
                },
            }
        }
        Engine::Sglang => {
            if !dflash {
                return;
            }
            let (Some(b_cli), Some((path, b))) = (cx.options.num_draft_tokens, block) else {
                return;
            };
            if b_cli != b {
                cx.emit(
                    "num-draft-tokens-mismatch",
                    &path,
                    format!("--num-draft-tokens {b_cli} differs from `{path}` {b}: SGLang expects block_size"),
                    Some(json!(b)),
                );
            }
        }
    }
}
