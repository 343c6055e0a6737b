//! SGLang's own code: `--model-path` is the target, `--speculative-draft-model-path` the drafter,
//! `--speculative-algorithm` the method (upper-cased; NEXTN is EAGLE), and K is stated by
//! `--speculative-num-steps`, `--speculative-num-draft-tokens` or, for DFLASH,
//! `--speculative-dflash-block-size`.

use serde_json::{Map, Value};

use super::code::{
    AttentionBackends, DraftLength, DraftTokens, EngineCode, Method, MethodFrom, ServedLength,
    Settings,
};
use super::command::{Launch, SglangSpec};
use crate::family::FamilySpec;
use crate::Result;

/// SGLang's code (the table's row points here).
pub struct Sglang;

/// The flag that names the method.
pub const ALGORITHM: &str = "--speculative-algorithm";
/// The flag of the draft tokens per step.
pub const NUM_DRAFT_TOKENS: &str = "--speculative-num-draft-tokens";
/// DFLASH's block size, which SGLang reads as the draft tokens.
pub const DFLASH_BLOCK_SIZE: &str = "--speculative-dflash-block-size";
/// DFLASH's draft window (older releases: [`DRAFT_WINDOW_SIZE_OLD`]).
pub const DRAFT_WINDOW_SIZE: &str = "--speculative-dflash-draft-window-size";
pub const DRAFT_WINDOW_SIZE_OLD: &str = "--speculative-draft-window-size";
/// EAGLE's steps and top-k.
pub const NUM_STEPS: &str = "--speculative-num-steps";
pub const EAGLE_TOPK: &str = "--speculative-eagle-topk";
/// A truncated EAGLE head's token map.
pub const TOKEN_MAP: &str = "--speculative-token-map";
/// The target and the draft model, and the draft's revision.
pub const MODEL_PATH: &str = "--model-path";
pub const DRAFT_MODEL_PATH: &str = "--speculative-draft-model-path";
pub const DRAFT_MODEL_REVISION: &str = "--speculative-draft-model-revision";
/// The length the target is served at, and the overrides of both models' configs
/// (`ModelConfig.from_server_args` passes `json_model_override_args` to the target's and the
/// draft's alike).
const CONTEXT_LENGTH: &str = "--context-length";
const MODEL_OVERRIDES: &str = "--json-model-override-args";
/// The variable that lets a draft (or target) run past its own derived context length.
const ALLOW_LONGER_CONTEXT: &str = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN";
/// The attention backends of the target and of the draft.
pub const ATTENTION_BACKEND: &str = "--attention-backend";
pub const DRAFT_ATTENTION_BACKEND: &str = "--speculative-draft-attention-backend";

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
        launch.drafter_revision = launch.flag(DRAFT_MODEL_REVISION).map(str::to_string);
        let algorithm = spec.method.and_then(|f| launch.flag(f)).map(|a| {
            match a.to_ascii_uppercase().as_str() {
                "NEXTN" => "EAGLE".to_string(),
                other => other.to_string(),
            }
        });
        launch.sglang = SglangSpec {
            algorithm,
            num_steps: launch.int_flag(&[NUM_STEPS])?,
            eagle_topk: launch.int_flag(&[EAGLE_TOPK])?,
            num_draft_tokens: launch.int_flag(&[NUM_DRAFT_TOKENS])?,
            dflash_block_size: launch.int_flag(&[DFLASH_BLOCK_SIZE])?,
            draft_window_size: launch.int_flag(&[DRAFT_WINDOW_SIZE, DRAFT_WINDOW_SIZE_OLD])?,
            token_map: launch.flag(TOKEN_MAP).map(str::to_string),
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
                target: launch.flag(ATTENTION_BACKEND).map(str::to_string),
                draft: launch.flag(DRAFT_ATTENTION_BACKEND).map(str::to_string),
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

    /// `--context-length` (an `int`), else the length an override of `max_position_embeddings`
    /// gives the target; the override reaches the draft too, and with
    /// `SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN` true (`EnvBool`: `true`, `1`, `yes`, `y`)
    /// ModelConfig raises a shorter draft's length to the target's instead of refusing.
    fn served_length(&self, launch: &Launch) -> Option<ServedLength> {
        let overridden = launch.json_override(MODEL_OVERRIDES, super::vllm::POSITIONS_KEY);
        let tokens = launch
            .flag(CONTEXT_LENGTH)
            .and_then(|text| {
                let n = text.trim().parse::<u64>().ok().filter(|&n| n > 0)?;
                Some((n, format!("{CONTEXT_LENGTH} {text}")))
            })
            .or_else(|| {
                let n = overridden?;
                Some((n, format!("{MODEL_OVERRIDES} max_position_embeddings {n}")))
            });
        let allow = launch
            .env_var(ALLOW_LONGER_CONTEXT)
            .filter(|v| ["true", "1", "yes", "y"].contains(&v.to_ascii_lowercase().as_str()));
        let draft = match (allow, overridden) {
            (Some(v), _) => DraftLength::Raised(format!("{ALLOW_LONGER_CONTEXT}={v}")),
            (None, Some(n)) => DraftLength::Set(n),
            (None, None) => DraftLength::Own,
        };
        (tokens.is_some() || draft != DraftLength::Own).then_some(ServedLength { tokens, draft })
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
        (DRAFT_MODEL_PATH, MODEL_PATH)
    }

    /// `--speculative-algorithm EAGLE` (or its alias NEXTN) and no draft model path: the
    /// target's own MTP head.
    fn serves_mtp_head(&self, method: Option<&Method>, separate: bool) -> bool {
        method.is_some_and(|m| m.from == MethodFrom::Flag && m.name == "EAGLE") && !separate
    }
}

/// What SGLang's server info says of its speculative arguments (`/server_info`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerArgs<'a> {
    pub target: Option<&'a str>,
    pub drafter: Option<&'a str>,
    pub algorithm: Option<&'a str>,
    pub num_draft_tokens: Option<u64>,
    pub drafter_revision: Option<&'a str>,
}

/// The launch line SGLang's resolved arguments describe (`doctor` checks it like one the user
/// gave); `None` without a target. A server's answer is input: a value that reads as a flag is
/// not a path, repo or name.
pub fn server_command(a: &ServerArgs) -> Option<Vec<String>> {
    let target = a.target.filter(|t| !t.starts_with('-'))?;
    let mut args: Vec<String> = ["python", "-m", "sglang.launch_server", MODEL_PATH, target]
        .iter()
        .map(|w| w.to_string())
        .collect();
    let value = |v: Option<&str>| v.filter(|v| !v.starts_with('-')).map(str::to_string);
    let mut push = |flag: &str, v: Option<String>| {
        if let Some(v) = v {
            args.extend([flag.to_string(), v]);
        }
    };
    push(DRAFT_MODEL_PATH, value(a.drafter));
    push(ALGORITHM, value(a.algorithm));
    push(NUM_DRAFT_TOKENS, a.num_draft_tokens.map(|n| n.to_string()));
    push(DRAFT_MODEL_REVISION, value(a.drafter_revision));
    Some(args)
}
