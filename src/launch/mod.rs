//! `launch`: the engine command line (vLLM, SGLang) checked against the drafter it serves.
//!
//! The user pastes the command they deploy (or names a script, Dockerfile or compose file).
//! [`shell`] splits it into commands, [`parse`] turns the engine's command into a typed
//! [`Launch`] (pure), [`locate`] finds the drafter and the target it names (local paths, the Hub
//! cache, the Hub; an unreachable repo is a warning, not a failure), [`rules`] checks the flags
//! and environment against each other and against the drafter's config, and [`lint_drafter`]
//! runs `lint` on the drafter with the engine and its flags. [`check`] does all of it and
//! returns a [`LaunchReport`], which `report::launch` renders.

pub mod locate;
pub mod parse;
pub mod rules;
pub mod shell;

use serde::Serialize;

use crate::analysis::TargetContext;
use crate::config::ConfigFile;
use crate::diagnostic::{Code, CodeInfo, Diagnostic, Severity, Summary};
use crate::rules::{Engine, LintCode, LintOptions};
use crate::Result;

pub use locate::{Location, LocationKind};
pub use parse::{EnvVar, Flag, Launch, SglangSpec};
pub use rules::{DrafterFacts, DrafterKind};

pub use crate::diagnostic::codes::LaunchCode;

/// The documentation of each code this family raises.
pub fn info(code: LaunchCode) -> &'static CodeInfo {
    match code {
        LaunchCode::MethodFamily => &CodeInfo {
            severity: Severity::Warning,
            summary: "the vLLM method or SGLang algorithm does not match the drafter's family",
            explanation: "vLLM picks the proposer from `method` (`dflash`, `dspark`, `eagle3`) and, when it is absent, \
infers it from \"dflash\" or \"eagle3\" in the drafter's name; SGLang picks the worker from --speculative-algorithm \
(DFLASH, DSPARK, EAGLE3). Another method loads the drafter with the wrong proposer (vLLM's DFlash proposer asserts \
method == \"dflash\"; its V2 DFlash path refuses DSpark's sample_from_anchor). DSpark drafters are recognised by a \
DSpark architecture (DSparkDraftModel, Qwen3DSparkModel), dspark_* keys, sample_from_anchor or projector_type \
\"dspark\", so method \"dspark\" is not flagged for them.",
            source: "vllm-project/vllm vllm/config/speculative.py@002e77c (method inferred from the drafter's name); vllm-project/vllm v1/spec_decode DFlashProposer (asserts method == \"dflash\"); sgl-project/sglang python/sglang/srt/server_args.py (handle_speculative_decoding: one handler per algorithm)",
        },
        LaunchCode::NumSpeculativeTokensMissing => &CodeInfo {
            severity: Severity::Error,
            summary: "vLLM --speculative-config without a positive num_speculative_tokens",
            explanation: "vLLM refuses to start: \"num_speculative_tokens must be provided with speculative model unless \
the draft model config contains an n_predict parameter\", and the field must be > 0. The DFlash convention is \
block_size - 1 (15 for -b16 drafters); DSpark drafters may use block_size.",
            source: "vllm-project/vllm vllm/config/speculative.py@v0.26.0 (__post_init__: n_predict default, raise; _verify_args: absent or <= 0)",
        },
        LaunchCode::KExceedsBlock => &CodeInfo {
            severity: Severity::Warning,
            summary: "num_speculative_tokens exceeds what the drafter's block drafts (DFlash: block_size - 1; DSpark: block_size)",
            explanation: "A DFlash block of block_size positions holds the last verified token and block_size - 1 \
drafted ones, so K = block_size - 1 is the convention (z-lab README: 15 for block_size 16; speculators' converter; \
vLLM recipes). No engine enforces it: vLLM never reads the drafter's block_size (its `block_size` is the KV page \
size), so a larger K drafts positions the drafter was not trained for. A warning, not an error. DSpark drafters draft \
a whole block (K = block_size is legal).",
            source: "z-lab/dflash README.md@44947fb (num_speculative_tokens 15 with block_size 16); vllm-project/speculators src/speculators/convert/dflash/converter.py@c05b95b:132; vllm-project/recipes#837; vllm-project/vllm#50012 (block_size in vLLM is the KV page size)",
        },
        LaunchCode::BatchedTokens => &CodeInfo {
            severity: Severity::Error,
            summary: "max_num_batched_tokens < max_num_seqs × (K+1) for a DFlash/DSpark drafter",
            explanation: "DFlash and DSpark drafters issue max_num_seqs × (K+1) query tokens in one unchunkable decode \
step (a bonus query and K mask queries per request). vLLM sizes the drafter's input buffers to \
max_num_batched_tokens, so a full batch indexes past them (CUDA out-of-bounds gather); v0.26.0 rejects some such \
configs at start-up with a negative max_num_scheduled_tokens. Checked only when both flags are on the command line: \
vLLM's defaults depend on the GPU and the entrypoint, and the report says so.",
            source: "vllm-project/vllm vllm/v1/worker/gpu/spec_decode/speculator.py@v0.26.0 (buffers of max_num_batched_tokens rows), dflash/speculator.py@v0.26.0 (1 + K queries per request); vllm-project/vllm#53970 (DFlash/DSpark token budget: out-of-bounds gather when max_num_seqs × (L+1) > max_num_batched_tokens); vllm-project/vllm#50708 (v0.26.0: max_num_scheduled_tokens negative at config build)",
        },
        LaunchCode::MixedAttentionRunner => &CodeInfo {
            severity: Severity::Error,
            summary: "a drafter with mixed sliding/full attention layers under vLLM without VLLM_USE_V2_MODEL_RUNNER=1",
            explanation: "vLLM's DFlash loader raises NotImplementedError for a drafter whose layer_types mix \
sliding_attention and full_attention unless the V2 model runner is used. Error when the command sets \
VLLM_USE_V2_MODEL_RUNNER to 0 (V1 forced). Warning when the variable is unset, because the default depends on the \
version and the target: the error was hit on v0.26.0rc (vllm-ascend#15650); vllm#44443 (merged 2026-07-02) made \
MRv2 the default for dense targets only. Note vllm#49559: on vLLM 0.25.1 a speculators-trained DFlash drafter had ~0% \
acceptance with the V2 runner: check acceptance after deploy.",
            source: "vllm-project/vllm vllm/model_executor/models/qwen3_dflash.py@036a00d (_resolve_layer_attention: NotImplementedError without use_v2_model_runner); vllm-project/vllm-ascend#15650 (v0.26.0rc); vllm-project/vllm#44443",
        },
        LaunchCode::RejectedKey => &CodeInfo {
            severity: Severity::Error,
            summary: "tensor_parallel_size inside vLLM's --speculative-config (vLLM wants draft_tensor_parallel_size)",
            explanation: "vLLM refuses to start: \"'tensor_parallel_size' is not a valid argument in the speculative_config. \
Please pass 'draft_tensor_parallel_size' instead.\" The draft's tensor parallelism can only be 1 or the target's.",
            source: "vllm-project/vllm vllm/config/speculative.py@v0.26.0 (_verify_args)",
        },
        LaunchCode::DraftTpIgnored => &CodeInfo {
            severity: Severity::Warning,
            summary: "vLLM's draft_tensor_parallel_size differs from the target's TP: vLLM runs the draft at the target's anyway",
            explanation: "vLLM accepts `draft_tensor_parallel_size` (1 or the target's) but builds the EAGLE-3 draft with \
the target's tensor-parallel group: with tensor_parallel_size 4 and draft_tensor_parallel_size 1 the draft still \
runs at TP 4 (vllm issue 31345; the fix, PR 31886, is open; vllm-ascend fixed its own path in PR 5519). Nothing \
fails, the setting does nothing: a warning. launch-draft-heads-tp checks the drafter's heads at the TP it really \
runs at.",
            source: "vllm-project/vllm#31345 (draft_tensor_parallel_size does not take effect); vllm-project/vllm#31886 (open fix: the draft's layers still report the target's tp_size); vllm-project/vllm-ascend#5519",
        },
        LaunchCode::DraftHeadsTp => &CodeInfo {
            severity: Severity::Error,
            summary: "the drafter's attention or KV heads are not divisible by the tensor-parallel size it runs at",
            explanation: "A draft runs at the target's tensor-parallel size (vLLM ignores draft_tensor_parallel_size, \
SGLang has no separate draft TP). Its attention splits heads across ranks and asserts num_attention_heads % tp == 0, \
and num_key_value_heads % tp == 0 (or tp % num_key_value_heads == 0 when the KV heads are replicated): a drafter \
with 12 heads under TP 8 fails while the server builds it. An error; NeMo-RL caps the draft's TP at its KV heads \
for the same reason.",
            source: "vllm-project/vllm vllm/model_executor/models/llama.py@0035bdf2b1ac243ef6f31eef27411b022461df8e (LlamaAttention.__init__: the head asserts); vllm-project/vllm#31345 (the draft runs at the target's TP); NVIDIA-NeMo/RL#3723 (TP capped at the KV heads)",
        },
        LaunchCode::DraftQuantInherited => &CodeInfo {
            severity: Severity::Error,
            summary: "SGLang --quantization with a draft that has no quantization_config and no --speculative-draft-model-quantization",
            explanation: "SGLang copies --quantization onto --speculative-draft-model-quantization when that is not \
given, and ModelConfig clears it only when the draft checkpoint has its own quantization_config: an unquantized \
EAGLE-3/MTP draft is then loaded as AWQ/GPTQ and the server fails (\"ValueError: Cannot find the config file for \
awq\", sglang PR 28196, open in every release): an error for AWQ/GPTQ-family methods, a warning for others (the \
draft is quantized on load). `--speculative-draft-model-quantization unquant` avoids it, except for Qwen3.5 MTP \
drafts read from a GPTQ checkpoint, which inherit GPTQ anyway (sglang PR 34622, open: accept length below 3 instead \
of ~3.5): a warning.",
            source: "sgl-project/sglang#28196 (open: the inherited quantization; ValueError for awq); sgl-project/sglang#34622 (open: unquant not honoured for the Qwen3.5 MTP draft)",
        },
        LaunchCode::ChatTemplateOverride => &CodeInfo {
            severity: Severity::Warning,
            summary: "speculative decoding with --chat-template: the target is served with another template than its own",
            explanation: "A drafter is distilled on the target's answers to prompts rendered by one chat template (the \
target's own, or the one its training recipe used). vLLM's and SGLang's --chat-template replace the template for \
every request; when it differs from the one the drafter was trained with (Luce-Org/lucebox PR 293: a template without \
the empty `<think></think>` prefill) the drafter drafts text the target does not write and acceptance falls to about \
zero, with no error. A warning: the override may be the drafter's own template. Make sure it is, and measure \
acceptance; `dflash-check pin` records the target's template and `check` fails when it changes.",
            source: "Luce-Org/lucebox#293 (template without the think prefill: acceptance near 0); vLLM and SGLang --chat-template (replaces the tokenizer's template)",
        },
        LaunchCode::ThinkingDefault => &CodeInfo {
            severity: Severity::Warning,
            summary: "speculative decoding with --default-chat-template-kwargs setting thinking (enable_thinking / thinking)",
            explanation: "A server-wide `enable_thinking` (or vLLM's alias `thinking`) changes what every prompt renders \
to. Drafters for reasoning targets are trained on thinking traces: with thinking off, a DFlash drafter for \
Qwen3.5-35B-A3B went from 9.5 to under 4 accepted tokens per round, slower than no drafter (z-lab/dflash issue 60); \
the opposite mismatch hurts a drafter trained without thinking the same way. A warning: check which mode the \
drafter was trained for (its model card) and measure acceptance in the mode you serve. vLLM's \
--default-chat-template-kwargs and SGLang's flag of the same name (recent SGLang ServerArgs hold \
default_chat_template_kwargs) are read; per-request `chat_template_kwargs` are not visible in a launch command.",
            source: "z-lab/dflash#60 (enable_thinking=False: acceptance collapses); vLLM --default-chat-template-kwargs and SGLang ServerArgs default_chat_template_kwargs (server-wide chat template kwargs)",
        },
        LaunchCode::RevisionUnpinned => &CodeInfo {
            severity: Severity::Warning,
            summary: "a Hub drafter loaded without a commit sha (vLLM speculative-config revision, SGLang --speculative-draft-model-revision)",
            explanation: "Without a revision the engine loads the repo's `main` as it is at start-up. Drafter repos are \
re-published with different architectures under the same name (z-lab/dflash#152: the same repo at two commits is \
6 layers with 8 target layers and SWA 4096, or 4 layers with 6 target layers and SWA 2048), so a restart can load \
another drafter. Pin the commit sha that was checked (`dflash-check pin` records it).",
            source: "z-lab/dflash#152",
        },
        LaunchCode::DrafterMissing => &CodeInfo {
            severity: Severity::Error,
            summary: "SGLang --speculative-algorithm DFLASH without --speculative-draft-model-path",
            explanation: "SGLang refuses to start: \"DFLASH speculative decoding requires setting \
--speculative-draft-model-path\".",
            source: "sgl-project/sglang python/sglang/srt/server_args.py (_handle_dflash)",
        },
        LaunchCode::SglangBlockSizeConflict => &CodeInfo {
            severity: Severity::Error,
            summary: "SGLang --speculative-num-draft-tokens differs from --speculative-dflash-block-size",
            explanation: "SGLang refuses to start: \"Both --speculative-num-draft-tokens and --speculative-dflash-block-size \
are set but they differ. For DFLASH they must match.\"",
            source: "sgl-project/sglang python/sglang/srt/server_args.py (_handle_dflash)",
        },
        LaunchCode::SglangDraftTokensMismatch => &CodeInfo {
            severity: Severity::Warning,
            summary: "SGLang DFLASH draft tokens on the command line differ from the drafter's block_size",
            explanation: "SGLang reads block_size from the drafter only when neither --speculative-num-draft-tokens nor \
--speculative-dflash-block-size is given; an explicit value that differs from the drafter's block_size is not \
compared at start-up, and the DFlash worker only logs \"DFLASH block size mismatch\". Omit the flag or make it equal \
to block_size (16 for -b16 drafters).",
            source: "sgl-project/sglang python/sglang/srt/speculative/dflash_worker.py@7f151c5 (block size mismatch warning); sgl-project/sglang python/sglang/srt/server_args.py (_handle_dflash infers the block size only when unset)",
        },
        LaunchCode::SglangWindowTooSmall => &CodeInfo {
            severity: Severity::Error,
            summary: "SGLang DFLASH draft window smaller than the block",
            explanation: "SGLang refuses to start when --speculative-dflash-draft-window-size (older versions: \
--speculative-draft-window-size) is below the draft tokens (the block size): the compact draft cache must hold a \
whole block.",
            source: "sgl-project/sglang python/sglang/srt/server_args.py (_handle_dflash: window_size must be >= --speculative-num-draft-tokens)",
        },
        LaunchCode::SglangEaglePartial => &CodeInfo {
            severity: Severity::Error,
            summary: "SGLang EAGLE topk or draft tokens given without --speculative-num-steps",
            explanation: "When --speculative-num-steps is unset, SGLang asserts that --speculative-eagle-topk and \
--speculative-num-draft-tokens are unset too and chooses all three itself; setting only some of them stops the \
server at start-up. Set all three or none.",
            source: "sgl-project/sglang python/sglang/srt/server_args.py (_handle_eagle_family: assert topk and num_draft_tokens are None when num_steps is None); sgl-project/sglang docs/advanced_features/speculative_decoding.md@067ad4d",
        },
        LaunchCode::SglangEagleChain => &CodeInfo {
            severity: Severity::Warning,
            summary: "SGLang EAGLE with topk 1: draft tokens differ from steps + 1",
            explanation: "With --speculative-eagle-topk 1 the draft is a chain of --speculative-num-steps tokens, verified \
with the last accepted one: --speculative-num-draft-tokens must be steps + 1. SGLang replaces another value with a \
log line (\"speculative_num_draft_tokens is adjusted to speculative_num_steps + 1\"), so the flag does not do what it \
says, and its acceptance-rate metric was computed from the wrong count (sglang#13212).",
            source: "sgl-project/sglang python/sglang/srt/server_args.py (_handle_eagle_family); sgl-project/sglang#13212; THUDM/slime#1017",
        },
        LaunchCode::SglangEagleTree => &CodeInfo {
            severity: Severity::Warning,
            summary: "SGLang EAGLE tree: draft tokens exceed what steps and topk can draft",
            explanation: "A draft tree of --speculative-num-steps levels with --speculative-eagle-topk branches has at most \
topk + (steps - 1)·topk² candidate nodes; --speculative-num-draft-tokens - 1 above that asks for candidates that do \
not exist, and SGLang has no start-up check for it.",
            source: "sgl-project/sglang#24054 (no start-up check of the tree arithmetic)",
        },
        LaunchCode::SglangTokenMap => &CodeInfo {
            severity: Severity::Warning,
            summary: "SGLang EAGLE drafter with a truncated vocabulary but no --speculative-token-map (or a token map given to EAGLE-3)",
            explanation: "An EAGLE-2 head whose output vocabulary (draft_vocab_size, else vocab_size) is smaller than the \
target's predicts ids in its own reduced vocabulary; SGLang maps them to target ids with the FR-Spec \
--speculative-token-map. Without it the ids are \
misread and acceptance collapses. For EAGLE-3 the map ships in the weights (d2t) and SGLang ignores the flag (info).",
            source: "sgl-project/sglang docs/advanced_features/speculative_decoding.md@067ad4d (FR-Spec token map; \"--speculative-token-map is ignored for EAGLE-3 models\")",
        },
        LaunchCode::DrafterUnavailable => &CodeInfo {
            severity: Severity::Warning,
            summary: "the drafter named in the command could not be read (Hub unreachable, gated, not found, or no such path)",
            explanation: "The drafter's config.json is needed for the rules that compare the flags with the drafter \
(method vs family, K vs block_size, mixed attention, SGLang draft tokens) and for lint. The message names the repo \
or path and why it could not be read; those checks are listed as not checked. A container path can be pointed at a \
local copy with --drafter DIR.",
            source: "dflash-check: reads the drafter through the Hub client in src/hub (docs/hub.md)",
        },
        LaunchCode::TargetUnavailable => &CodeInfo {
            severity: Severity::Warning,
            summary: "the target model named in the command could not be read",
            explanation: "Lint compares the drafter with its target (layer count, hidden size, vocabulary, tokens). When \
the target cannot be read, lint falls back to built-in facts of a known target matching the drafter, or skips those \
rules. A container path can be pointed at a local copy with --target DIR.",
            source: "dflash-check: reads the target through analysis::resolve_target (docs/hub.md)",
        },
        LaunchCode::LintSkipped => &CodeInfo {
            severity: Severity::Info,
            summary: "the drafter's config is not a family lint knows, so only the launch rules ran",
            explanation: "lint knows DFlash, DFlash2, EAGLE-3 and the speculators format. A plain language model used \
as a draft model, or a target with a fused draft module (DeepSeek MTP/DSpark checkpoints), is checked by the \
launch rules only.",
            source: "dflash-check: rules::family::detect",
        },
    }
}

/// How to run the check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Hub settings for repo ids in the command; `None` reads local paths only.
    pub hub: Option<crate::hub::HubSettings>,
    /// Read the drafter from this directory instead of what the command names.
    pub drafter_dir: Option<std::path::PathBuf>,
    /// Read the target from this directory instead of what the command names.
    pub target_dir: Option<std::path::PathBuf>,
    /// A second directory to resolve relative paths in (the `--file`'s directory).
    pub base_dir: Option<std::path::PathBuf>,
}

/// The result of checking one launch command.
#[derive(Debug, Clone, Serialize)]
pub struct LaunchReport {
    /// The file the command came from (`--file`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The parsed command, secrets hidden.
    pub launch: Launch,
    pub drafter: Location,
    pub target: Location,
    /// What the launch rules read from the drafter's config.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drafter_facts: Option<DrafterFacts>,
    /// Launch findings, then lint's findings on the drafter's config.
    pub diagnostics: Vec<Diagnostic>,
    /// Checks that could not be made, and why.
    pub not_checked: Vec<String>,
    /// Other things worth saying (more engine commands in the file).
    pub notes: Vec<String>,
    pub summary: Summary,
}

impl LaunchReport {
    /// Whether the report fails the gate: any error, or any warning with `deny_warnings`.
    pub fn fails(&self, deny_warnings: bool) -> bool {
        self.summary.fails(deny_warnings)
    }
}

/// Lint codes whose job the launch rules do with what only the launch knows (the environment,
/// DSpark drafters, which versions enforce what): dropped from lint's output here so that one
/// finding is not reported twice with two severities.
pub const SUPERSEDED_LINT_CODES: &[LintCode] = &[
    LintCode::SpeculativeConfigMethod,
    LintCode::NumSpeculativeTokensMissing,
    LintCode::NumSpeculativeTokensTooLarge,
    LintCode::NumDraftTokensMismatch,
    LintCode::MixedAttentionVllm,
    LintCode::DraftQuantInherited,
];

/// Runs `lint` on the drafter's config with the engine and its flags, as diagnostics.
///
/// The one place launch calls the lint rule engine: `Err` carries lint's reason when the config
/// is not a drafter family it knows.
pub fn lint_drafter(
    config: &ConfigFile,
    launch: &Launch,
    target: &TargetContext,
) -> std::result::Result<Vec<Diagnostic>, crate::Error> {
    let options = LintOptions {
        family: None,
        engine: Some(launch.engine),
        engine_version: None,
        speculative_config: match launch.engine {
            Engine::Vllm => launch
                .speculative_config
                .clone()
                .map(serde_json::Value::Object),
            Engine::Sglang => None,
        },
        num_draft_tokens: match launch.engine {
            Engine::Vllm => None,
            Engine::Sglang => launch
                .sglang
                .num_draft_tokens
                .or(launch.sglang.dflash_block_size),
        },
    };
    let report = crate::rules::lint(config, &options, target)?;
    Ok(report
        .findings
        .into_iter()
        .filter(|d| match d.code {
            Code::Lint(code) => !SUPERSEDED_LINT_CODES.contains(&code),
            _ => true,
        })
        .collect())
}

/// Checks a launch command: locates the drafter and target, runs the launch rules and lint.
pub fn check(launch: Launch, notes: Vec<String>, options: &CheckOptions) -> Result<LaunchReport> {
    let found = locate::locate(&launch, options)?;
    let facts = found.drafter_config.as_ref().map(DrafterFacts::from_config);
    let outcome = rules::check(&rules::Input {
        launch: &launch,
        drafter: facts.as_ref(),
        drafter_on_hub: launch
            .drafter
            .as_deref()
            .is_some_and(|d| locate::names_hub_repo(d, options.base_dir.as_deref())),
        drafter_sha: found.drafter.sha.as_deref(),
        target_vocab: found
            .target_context
            .facts
            .as_ref()
            .and_then(|f| f.vocab_size),
    });
    let mut launch_diags = found.diagnostics;
    launch_diags.extend(outcome.diagnostics);
    launch_diags.sort_by_key(|d| d.severity);
    let mut not_checked = outcome.not_checked;
    let mut lint_diags = Vec::new();
    if let Some(config) = &found.drafter_config {
        match lint_drafter(config, &launch, &found.target_context) {
            Ok(mut d) => {
                d.sort_by_key(|d| d.severity);
                lint_diags = d;
            }
            Err(e) => {
                let d = Diagnostic::new(
                    LaunchCode::LintSkipped,
                    info(LaunchCode::LintSkipped),
                    "",
                    format!("lint did not run: {}", e.message),
                )
                .file(config.path.display().to_string());
                launch_diags.push(d);
            }
        }
        if found.target_context.facts.is_none() {
            not_checked.push(
                "lint's target rules (layer ids, sizes, vocabulary): no target facts (the target could not be read \
                 and matches no built-in target)"
                    .to_string(),
            );
        }
    }
    let mut diagnostics = launch_diags;
    diagnostics.extend(lint_diags);
    let summary = Summary::of(&diagnostics);
    Ok(LaunchReport {
        file: launch.origin.file.clone(),
        launch: launch.redacted(),
        drafter: found.drafter,
        target: found.target,
        drafter_facts: facts,
        diagnostics,
        not_checked,
        notes,
        summary,
    })
}

/// Parses the input (a command given after `--`, or a file's text) into a launch and notes.
pub fn parse_input(args: &[String], file: Option<(&str, &str)>) -> Result<(Launch, Vec<String>)> {
    let (commands, name) = match file {
        Some((name, text)) => (shell::from_file(name, text)?, Some(name)),
        None => (shell::from_args(args)?, None),
    };
    let (launch, notes) = parse::parse_commands(&commands, name)?;
    if launch.speculative_config.is_none() && launch.sglang.algorithm.is_none() {
        let what = match launch.engine {
            Engine::Vllm => "no --speculative-config",
            Engine::Sglang => "no --speculative-algorithm",
        };
        let input = match &launch.origin.file {
            Some(f) => format!(" in {f}"),
            None => String::new(),
        };
        let mut err = crate::Error::new(format!(
            "the {} command{input} configures no speculative decoding ({what}): there is no drafter to check",
            launch.entrypoint
        ));
        err = if launch.has_flag("--speculative-model")
            || launch.has_flag("--num-speculative-tokens")
        {
            err.with_hint(
                "--speculative-model and --num-speculative-tokens are vLLM's old flags; current vLLM takes \
                 --speculative-config '{\"method\": ..., \"model\": ..., \"num_speculative_tokens\": ...}'",
            )
        } else if launch.has_flag("--config") {
            err.with_hint("flags inside vLLM's --config YAML file are not read: paste them on the command line")
        } else {
            err.with_hint(
                "pass the command that starts the server with its speculative-decoding flags",
            )
        };
        return Err(err);
    }
    Ok((launch, notes))
}

impl Launch {
    /// A copy safe to print: values of secret-looking environment variables and flags hidden.
    pub fn redacted(&self) -> Launch {
        let mut l = self.clone();
        for e in &mut l.env {
            if is_secret_name(&e.name.to_ascii_lowercase().replace('_', "-")) {
                e.value = "<redacted>".into();
            }
        }
        for f in &mut l.flags {
            if is_secret_name(&f.name) && f.value.is_some() {
                f.value = Some("<redacted>".into());
            }
        }
        l
    }
}

/// `--api-key`, `HF_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `DB_PASSWORD` (names lower-cased, `_` as `-`).
fn is_secret_name(name: &str) -> bool {
    let name = name.trim_start_matches('-');
    let last = name.rsplit('-').next().unwrap_or(name);
    matches!(last, "token" | "key" | "apikey")
        || name
            .split('-')
            .any(|part| matches!(part, "secret" | "password" | "passwd"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_prefixed_and_cites_a_source() {
        for c in LaunchCode::ALL {
            assert!(c.as_str().starts_with("launch-"), "{}", c.as_str());
            assert!(!info(*c).source.is_empty() && !info(*c).explanation.is_empty());
        }
    }

    #[test]
    fn secrets_are_hidden() {
        for name in [
            "--api-key",
            "hf-token",
            "aws-secret-access-key",
            "db-password",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "--max-num-batched-tokens",
            "--speculative-token-map",
            "vllm-use-v2-model-runner",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }
}
