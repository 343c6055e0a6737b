//! The code that is specific to one engine, behind one trait: each engine's file (`vllm.rs`,
//! `sglang.rs`, `llama_cpp.rs`, `koboldcpp.rs`) implements [`EngineCode`], and its row in the
//! table points at it. Everything else reads an engine through its row or this trait, never by
//! matching on it: how a command line names the target, the drafter and the method, what a
//! line's deployment settings are ([`Settings`]), what lint's own flags mean for the engine,
//! the header's summary of the line, and the method a drafter family is served with.

use serde::Serialize;
use serde_json::{Map, Value};

use super::command::Launch;
use crate::family::FamilySpec;
use crate::json::Node;
use crate::Result;

/// Where the speculative method came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MethodFrom {
    /// A key of the speculative configuration (vLLM's `--speculative-config` `method`).
    SpeculativeConfig,
    /// A flag of its own (SGLang's `--speculative-algorithm`, llama.cpp's `--spec-type`).
    Flag,
    /// No method given: the engine infers it from the drafter's name (vLLM: "eagle3" or
    /// "dflash").
    DrafterName,
}

/// The speculative method as the engine reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Method {
    pub name: String,
    pub from: MethodFrom,
}

/// Draft tokens per step and the flag that set them (SGLang's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DraftTokens {
    pub value: u64,
    /// `--speculative-num-draft-tokens` or `--speculative-dflash-block-size`.
    pub flag: &'static str,
}

/// The attention backends the engine is started with (`None`: not given, the engine picks).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AttentionBackends {
    /// SGLang's `--attention-backend`.
    pub target: Option<String>,
    /// SGLang's `--speculative-draft-attention-backend`.
    pub draft: Option<String>,
}

/// The length a launch line serves its target at, and what the line does to the draft's own:
/// a drafter is handed the target's positions up to the served length, whatever its config says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedLength {
    /// The length the line states (vLLM's `--max-model-len`, SGLang's `--context-length`, or a
    /// config override of the target's `max_position_embeddings`), as a number and as written
    /// (`--max-model-len 256k`); `None`: the target's config gives it.
    pub tokens: Option<(u64, String)>,
    pub draft: DraftLength,
}

/// The draft's length as the engine builds it from the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DraftLength {
    /// The draft config's `max_position_embeddings`.
    Own,
    /// Set by an override the engine applies to the draft too (SGLang's
    /// `--json-model-override-args` builds both models).
    Set(u64),
    /// Raised to the served length by the engine (SGLang with
    /// `SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN`), as the line says it.
    Raised(String),
}

/// What an engine's line (or lint's flags) says about the deployment's speculative settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    pub method: Option<Method>,
    /// The speculative configuration as one object, where the engine takes one.
    pub speculative_config: Option<Map<String, Value>>,
    pub draft_tokens: Option<DraftTokens>,
    /// `None`: the engine takes no attention-backend flags (or the input cannot state them).
    pub attention_backends: Option<AttentionBackends>,
    /// The drafter's own tensor-parallel size (vLLM's `draft_tensor_parallel_size`).
    pub draft_tensor_parallel: Option<u64>,
    /// The switch that asks for async scheduling explicitly, when the line's last word on it
    /// does (vLLM's `--async-scheduling`, not undone by a later `--no-async-scheduling`).
    pub async_scheduling: Option<&'static str>,
    /// The environment variable that asks for the engine's newer model runner explicitly, when
    /// it does (vLLM's `VLLM_USE_V2_MODEL_RUNNER` set to a non-zero integer).
    pub v2_runner: Option<&'static str>,
    /// The target is built by the engine's transformers backend rather than its own model class
    /// (vLLM's `--model-impl transformers`).
    pub target_via_transformers: bool,
}

/// The code specific to one engine.
pub trait EngineCode: Sync {
    /// Fills the engine's own fields of a parsed line: its target and drafter, their revisions,
    /// its speculative settings. Bad values (JSON that does not parse, a count that is not a
    /// number) are bad input.
    fn read(&self, launch: &mut Launch) -> Result<()>;

    /// Reads an options file the line names (the row's `options_file` flags): the settings it
    /// holds join the line's, as the engine merges them. Engines that take none do nothing.
    fn read_options(&self, _launch: &mut Launch, _file: &str, _text: &str) -> Result<()> {
        Ok(())
    }

    /// The options file the line makes the engine read: by default the value of the row's
    /// `options_file` flag, when the line gives one; an engine that always reads a file of its
    /// own (oMLX's `model_settings.json`) names it here.
    fn options_path(&self, launch: &Launch) -> Option<String> {
        launch
            .engine
            .spec()
            .flags
            .options_file
            .iter()
            .find_map(|f| launch.flag(f))
            .map(str::to_string)
    }

    /// Whether a line whose options file cannot be read is still a line (the engine then runs
    /// without the settings it holds) rather than bad input.
    fn options_optional(&self) -> bool {
        false
    }

    /// The deployments one line is: itself, for every engine whose line names one target and
    /// one drafter; one per model for a server whose options file switches drafting on per
    /// model (oMLX).
    fn split(&self, launch: Launch) -> Vec<Launch> {
        vec![launch]
    }

    /// The method as the line writes it.
    fn method(&self, launch: &Launch) -> Option<String>;

    /// Whether the line configures speculative decoding at all.
    fn speculates(&self, launch: &Launch) -> bool;

    /// What a line that does not speculate lacks (`no --speculative-config`), and a hint when
    /// the line shows why (an older spelling of the flags).
    fn no_speculation(&self, launch: &Launch) -> (&'static str, Option<&'static str>);

    /// The deployment settings the line states: by default what its speculative config states,
    /// read as lint's flags are.
    fn settings(&self, launch: &Launch) -> Settings {
        self.lint_settings(launch.speculative_config.as_ref(), None)
    }

    /// The deployment settings lint's flags state (`--speculative-config`, `--num-draft-tokens`).
    fn lint_settings(
        &self,
        speculative_config: Option<&Map<String, Value>>,
        num_draft_tokens: Option<u64>,
    ) -> Settings {
        let _ = (speculative_config, num_draft_tokens);
        Settings::default()
    }

    /// The length the line serves the target at, when it states one ([`ServedLength`]); a value
    /// that is not a whole number (a shell variable, `auto`) states none.
    fn served_length(&self, _launch: &Launch) -> Option<ServedLength> {
        None
    }

    /// What lint reads of the line: its speculative config and its draft tokens.
    fn lint_flags(&self, _launch: &Launch) -> (Option<Value>, Option<u64>) {
        (None, None)
    }

    /// The header's `spec` line: the method, K and the other speculative settings as written.
    fn spec_line(&self, launch: &Launch) -> String;

    /// The method the family table names for a drafter family on this engine; `None` when the
    /// engine names none, or names it some other way (vLLM names an MTP head by its target's
    /// model type, so it is not judged by the family's name).
    fn expected_method(&self, family: &FamilySpec) -> Option<&'static str>;

    /// Whether `method` serves a drafter of that family on this engine (its name or an alias).
    fn family_accepts(&self, family: &FamilySpec, method: &str) -> bool {
        self.expected_method(family) == Some(method)
    }

    /// Where a line states the method, to point a finding at: the path shown, and the text to
    /// find in the line (after a first text, when given).
    fn method_location(&self) -> (&'static str, Option<&'static str>, &'static str);

    /// How the method `want` is written on this engine's line (`"method": "dflash"`).
    fn method_written(&self, want: &str) -> String;

    /// The flags (or keys) that name the drafter and the target, for messages.
    fn model_flags(&self, launch: &Launch) -> (&'static str, &'static str);

    /// Whether a deployment with `method` serves the target's own MTP head (`separate`: a
    /// separate drafter is named).
    fn serves_mtp_head(&self, method: Option<&Method>, separate: bool) -> bool;

    /// The model type by which the engine loads `drafter` when that config is a native
    /// checkpoint (`declares_mtp`: a target that bundles its MTP layers, as detected) rather than
    /// a drafter of its own kinds; `None` where the engine has no such path or the config is not
    /// one (mlx-vlm's `--draft-model`: the capability rows say at which releases it loads one).
    fn native_mtp_drafter<'c>(&self, _drafter: &'c Node, _declares_mtp: bool) -> Option<&'c str> {
        None
    }

    /// Whether the line drafts with a classic draft model by the engine's own convention rather
    /// than a method the family table names (mlx-lm's `--draft-model`, which takes nothing but
    /// a draft language model): the draft-model vocabulary rules run on its drafter.
    fn drafts_with_draft_model(&self, _launch: &Launch) -> bool {
        false
    }

    /// Whether the program the line starts compares the two tokenizers' own vocabulary sizes
    /// (Hugging Face `vocab_size`, added tokens excluded) and raises when they differ, where
    /// the engine's other entrypoints only warn (mlx-lm's `generate`, not its server).
    fn refuses_other_vocab_size(&self, _launch: &Launch) -> bool {
        false
    }
}
