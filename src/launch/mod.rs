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
pub mod read;
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
pub use read::LaunchInput;
pub use rules::DrafterFacts;

pub use crate::diagnostic::codes::LaunchCode;

/// The documentation of any launch code: its rule's, or for a code launch raises about its
/// inputs rather than by a rule, the [`CodeInfo`] below.
pub fn info(code: LaunchCode) -> &'static CodeInfo {
    rules::rule(code)
        .map(|r| &r.info)
        .or_else(|| input_info(code))
        .expect("every launch code has a rule or an input's documentation (tested)")
}

/// The codes that are no rule's judgement but what launch says about its inputs: a model the
/// command names could not be read (raised by `locate`), or lint did not run on the drafter
/// (raised by [`check`]).
fn input_info(code: LaunchCode) -> Option<&'static CodeInfo> {
    match code {
        LaunchCode::DrafterUnavailable => Some(&DRAFTER_UNAVAILABLE),
        LaunchCode::TargetUnavailable => Some(&TARGET_UNAVAILABLE),
        LaunchCode::LintSkipped => Some(&LINT_SKIPPED),
        _ => None,
    }
}

const DRAFTER_UNAVAILABLE: CodeInfo = CodeInfo {
        severity: Severity::Warning,
        summary: "the drafter named in the command could not be read (Hub unreachable, gated, not found, or no such path)",
        explanation: "The drafter's config.json is needed for the rules that compare the flags with the drafter \
(method vs family, K vs block_size, mixed attention, SGLang draft tokens) and for lint. The message names the repo \
or path and why it could not be read; those checks are listed as not checked. A container path can be pointed at a \
local copy with --drafter DIR.",
        source: "dflash-check: reads the drafter through the Hub client in src/hub (docs/hub.md)",
};

const TARGET_UNAVAILABLE: CodeInfo = CodeInfo {
        severity: Severity::Warning,
        summary: "the target model named in the command could not be read",
        explanation: "Lint compares the drafter with its target (layer count, hidden size, vocabulary, tokens). When \
the target cannot be read, lint falls back to built-in facts of a known target matching the drafter, or skips those \
rules. A container path can be pointed at a local copy with --target DIR.",
        source: "dflash-check: reads the target through analysis::resolve_target (docs/hub.md)",
};

/// How to run the check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Resolves the models the command names, with the command's Hub settings; `None` reads
    /// local paths only.
    pub inputs: Option<crate::input::Resolver>,
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
    /// The launch rules skipped for want of an input (the drafter's config, the target's
    /// vocabulary), each with what it lacked: the rules behind `not_checked`'s first lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<rules::Skipped>,
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

const LINT_SKIPPED: CodeInfo = CodeInfo {
        severity: Severity::Info,
        summary: "the drafter's config is not a family lint knows, so only the launch rules ran",
        explanation: "lint knows DFlash, DFlash2, EAGLE-3 and the speculators format. A plain language model used \
as a draft model, or a target with a fused draft module (DeepSeek MTP/DSpark checkpoints), is checked by the \
launch rules only.",
        source: "dflash-check: rules::family::detect",
};

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
    let skipped = outcome.skipped;
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
                    &LINT_SKIPPED,
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
        skipped,
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

    /// Every code is documented once: by its rule, or (the three about inputs) beside the code
    /// that raises it, never both.
    #[test]
    fn every_code_has_a_rule_or_is_about_an_input() {
        for c in LaunchCode::ALL {
            let rules = rules::RULES.iter().filter(|r| r.code == *c).count();
            match input_info(*c) {
                Some(_) => assert_eq!(rules, 0, "{}", c.as_str()),
                None => assert_eq!(rules, 1, "{}", c.as_str()),
            }
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
