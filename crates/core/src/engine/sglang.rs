//! SGLang's own code: `--model-path` is the target, `--speculative-draft-model-path` the drafter,
//! `--speculative-algorithm` the method (upper-cased; NEXTN is EAGLE), and K is stated by
//! `--speculative-num-steps`, `--speculative-num-draft-tokens` or, for DFLASH,
//! `--speculative-dflash-block-size`.

use serde_json::{Map, Value};

use super::code::{AttentionBackends, DraftTokens, EngineCode, Method, MethodFrom, Settings};
use super::command::{Launch, SglangSpec};
use crate::family::FamilySpec;
use crate::Result;

/// SGLang's code (the table's row points here).
pub struct Sglang;

/// The flag that names the method.
const ALGORITHM: &str = "--speculative-algorithm";
/// The flag of the draft tokens per step.
const NUM_DRAFT_TOKENS: &str = "--speculative-num-draft-tokens";
/// DFLASH's block size, which SGLang reads as the draft tokens.
const DFLASH_BLOCK_SIZE: &str = "--speculative-dflash-block-size";

impl EngineCode for Sglang {
    fn read(&self, launch: &mut Launch) -> Result<()> {
        let spec = launch.engine.spec().flags;
        launch.target = spec
            .target
            .iter()
            .find_map(|n| launch.flag(n))
            .map(str::to_string);
        launch.drafter = spec
            .drafter
            .iter()
            .find_map(|n| launch.flag(n))
            .map(str::to_string);
        launch.drafter_revision = launch
            .flag("--speculative-draft-model-revision")
            .map(str::to_string);
        let algorithm = spec.method.and_then(|f| launch.flag(f)).map(|a| {
            match a.to_ascii_uppercase().as_str() {
                "NEXTN" => "EAGLE".to_string(),
                other => other.to_string(),
            }
        });
        launch.sglang = SglangSpec {
            algorithm,
            num_steps: launch.int_flag(&["--speculative-num-steps"])?,
            eagle_topk: launch.int_flag(&["--speculative-eagle-topk"])?,
            num_draft_tokens: launch.int_flag(&[NUM_DRAFT_TOKENS])?,
            dflash_block_size: launch.int_flag(&[DFLASH_BLOCK_SIZE])?,
            draft_window_size: launch.int_flag(&[
                "--speculative-dflash-draft-window-size",
                "--speculative-draft-window-size",
            ])?,
            token_map: launch.flag("--speculative-token-map").map(str::to_string),
        };
        Ok(())
    }

    fn method(&self, launch: &Launch) -> Option<String> {
        launch.sglang.algorithm.clone()
    }

    fn speculates(&self, launch: &Launch) -> bool {
        launch.sglang.algorithm.is_some()
    }

    fn no_speculation(&self, _launch: &Launch) -> (&'static str, Option<&'static str>) {
        ("no --speculative-algorithm", None)
    }

    fn settings(&self, launch: &Launch) -> Settings {
        let s = &launch.sglang;
        Settings {
            method: s.algorithm.clone().map(|name| Method {
                name,
                from: MethodFrom::Flag,
            }),
            draft_tokens: s
                .num_draft_tokens
                .map(|value| DraftTokens {
                    value,
                    flag: NUM_DRAFT_TOKENS,
                })
                .or(s.dflash_block_size.map(|value| DraftTokens {
                    value,
                    flag: DFLASH_BLOCK_SIZE,
                })),
            attention_backends: Some(AttentionBackends {
                target: launch.flag("--attention-backend").map(str::to_string),
                draft: launch
                    .flag("--speculative-draft-attention-backend")
                    .map(str::to_string),
            }),
            ..Settings::default()
        }
    }

    fn lint_settings(
        &self,
        _speculative_config: Option<&Map<String, Value>>,
        num_draft_tokens: Option<u64>,
    ) -> Settings {
        Settings {
            draft_tokens: num_draft_tokens.map(|value| DraftTokens {
                value,
                flag: NUM_DRAFT_TOKENS,
            }),
            ..Settings::default()
        }
    }

    fn lint_flags(&self, launch: &Launch) -> (Option<Value>, Option<u64>) {
        let s = &launch.sglang;
        (None, s.num_draft_tokens.or(s.dflash_block_size))
    }

    fn spec_line(&self, l: &Launch) -> String {
        let s = &l.sglang;
        let mut parts = vec![format!(
            "algorithm {}",
            s.algorithm.clone().unwrap_or_else(|| "(none)".into())
        )];
        for (name, v) in [
            ("num_steps", s.num_steps),
            ("eagle_topk", s.eagle_topk),
            ("num_draft_tokens", s.num_draft_tokens),
            ("dflash_block_size", s.dflash_block_size),
            ("draft_window_size", s.draft_window_size),
        ] {
            if let Some(v) = v {
                parts.push(format!("{name} {v}"));
            }
        }
        parts.join("; ")
    }

    fn expected_method(&self, family: &FamilySpec) -> Option<&'static str> {
        family.engines.sglang
    }

    fn method_location(&self) -> (&'static str, Option<&'static str>, &'static str) {
        (ALGORITHM, None, ALGORITHM)
    }

    fn method_written(&self, want: &str) -> String {
        format!("{ALGORITHM} {want}")
    }

    fn model_flags(&self, _launch: &Launch) -> (&'static str, &'static str) {
        ("--speculative-draft-model-path", "--model-path")
    }

    /// `--speculative-algorithm EAGLE` (or its alias NEXTN) and no draft model path: the
    /// target's own MTP head.
    fn serves_mtp_head(&self, method: Option<&Method>, separate: bool) -> bool {
        method.is_some_and(|m| m.from == MethodFrom::Flag && m.name == "EAGLE") && !separate
    }
}
