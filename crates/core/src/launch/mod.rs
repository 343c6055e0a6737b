//! `launch`'s pure part: an engine command line (vLLM, SGLang) as a typed [`Launch`] and the
//! rules that judge it against the drafter it serves.
//!
//! [`shell`] splits a command (or a file's text, given as text) into commands ([`k8s`]: the
//! containers and KServe `LLMInferenceService`s of Kubernetes manifests; [`files`]: which files
//! `check` gates as deployments), [`parse`] turns the engine's command into a [`Launch`] (every
//! engine command of a deployment file: [`parse_deployments_with`]), [`deployment`] turns it into the
//! [`Deployment`](crate::deployment::Deployment) the engine claims are judged on
//! (`rules::deployment`, shared with lint), and [`rules`] checks the flags and environment against
//! each other and against the drafter's config ([`DrafterFacts`]). Nothing here reads a file or
//! the Hub: the `dflash-check` crate's `launch` locates the models, reads them through its
//! pipeline and re-exports this module's items, so `crate::launch::…` reads the same there.

pub mod deployment;
pub mod ecma;
pub mod files;
pub mod hf;
pub mod k8s;
pub mod parse;
pub mod rules;
pub mod shell;

use crate::diagnostic::{CodeInfo, Severity};
use crate::Result;

pub use parse::{EnvVar, Flag, Launch, SglangSpec};
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
/// (raised by the `dflash-check` crate's `launch::check`).
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
local copy with --drafter DIR. A llama.cpp draft named as a Hub repo (-hfd OWNER/REPO[:TAG]) is the GGUF file \
llama.cpp takes from the repo's file list (with no --spec-type, its MTP, DSpark, DFlash or EAGLE-3 sidecar first; \
-md FILE names the file), read as a header only by range requests: a repo that cannot be had, a tag no file \
matches or a named file that is not there is reported here.",
};

const TARGET_UNAVAILABLE: CodeInfo = CodeInfo {
        severity: Severity::Warning,
        summary: "the target model named in the command could not be read",
        explanation: "Lint compares the drafter with its target (layer count, hidden size, vocabulary, tokens). When \
the target cannot be read, lint falls back to built-in facts of a known target matching the drafter, or skips those \
rules. A container path can be pointed at a local copy with --target DIR. A llama.cpp target named as a Hub repo \
(-hf OWNER/REPO[:TAG]) is the GGUF file llama.cpp would load, chosen as it chooses (the tag's file, else Q4_K_M, \
else Q8_0, else the first model file; --hf-file names it), read as a header only by range requests: a repo that \
cannot be had, a tag no file matches (llama.cpp then has no model to load) or a repo without GGUF files is \
reported here.",
};

const LINT_SKIPPED: CodeInfo = CodeInfo {
        severity: Severity::Info,
        summary: "the drafter's config is not a family lint knows, so only the launch rules ran",
        explanation: "lint knows DFlash, DFlash2, EAGLE-3 and the speculators format. A plain language model used \
as a draft model, or a target with a fused draft module (DeepSeek MTP/DSpark checkpoints), is checked by the \
launch rules only.",
};

/// Reads an options file a line names (the path as written): its name as shown and its text.
pub type OptionsReader<'r> = &'r dyn Fn(&str) -> Result<(String, String)>;

/// Parses the input (a command given after `--`, or a file's text) into a launch and notes; an
/// options file the line names is not read ([`parse_input_with`] reads one).
pub fn parse_input(args: &[String], file: Option<(&str, &str)>) -> Result<(Launch, Vec<String>)> {
    parse_input_with(args, file, &|path: &str| {
        Err(crate::Error::new(format!(
            "the line names the options file `{}`, which is not read here",
            crate::text::clip(path, 200)
        )))
    })
}

/// [`parse_input`], reading an options file the line names (`trtllm-serve
/// --extra_llm_api_options FILE`: the engine row's `options_file` flags) through `options`, as
/// `--file` is read, before the line is judged on whether it speculates.
pub fn parse_input_with(
    args: &[String],
    file: Option<(&str, &str)>,
    options: OptionsReader,
) -> Result<(Launch, Vec<String>)> {
    let (commands, rendered) = commands_of(args, file)?;
    let (mut launch, mut notes) = parse::parse_commands(&commands, file.map(|(name, _)| name))?;
    notes.splice(0..0, rendered);
    read_options(&mut launch, options)?;
    let mut split = launch.engine.code().split(launch).into_iter();
    let launch = split
        .next()
        .ok_or_else(|| crate::Error::new("the line holds no deployment"))?;
    let rest: Vec<String> = split.map(|l| deployment_name(&l)).collect();
    if !rest.is_empty() {
        notes.push(format!(
            "the line's settings enable {} more drafter(s), not checked: {} (launch checks the first; \
             `check` judges each)",
            rest.len(),
            rest.join(", ")
        ));
    }
    speculating(&launch)?;
    Ok((launch, notes))
}

/// What `check` judges in a deployment file: every engine command that configures speculative
/// decoding (each engine container of a manifest, each compose service), each as `launch
/// --file` judges the first; and the notes (how manifests were rendered, the engine commands
/// that speculate not).
#[derive(Debug, Clone)]
pub struct Deployments {
    pub launches: Vec<Launch>,
    pub notes: Vec<String>,
}

/// The [`Deployments`] of the file `name` holding `text`, options files read through
/// `options`. A file with no engine command, or none that speculates, is the error `launch
/// --file` gives on it — except a shell script that starts no engine, which has no deployments
/// (a benchmark client passes `--speculative-config` too): `check` lists it as skipped.
pub fn parse_deployments_with(
    name: &str,
    text: &str,
    options: OptionsReader,
) -> Result<Deployments> {
    let (commands, mut notes) = commands_of(&[], Some((name, text)))?;
    let script =
        !k8s::is_manifest(text) && shell::FileKind::detect(name, text) == shell::FileKind::Script;
    let no_engine = |c: &shell::Command| crate::engine::command::find_engine(&c.words).is_none();
    if script && commands.iter().all(no_engine) {
        return Ok(Deployments {
            launches: Vec::new(),
            notes,
        });
    }
    let mut launches = Vec::new();
    let mut plain = Vec::new();
    let mut first_error = None;
    let mut split = Vec::new();
    for mut launch in parse::parse_all(&commands, Some(name))? {
        read_options(&mut launch, options)?;
        split.extend(launch.engine.code().split(launch));
    }
    for launch in split {
        match speculating(&launch) {
            Ok(()) => launches.push(launch),
            Err(e) => {
                plain.push(launch.entrypoint.clone());
                first_error.get_or_insert(e);
            }
        }
    }
    if let (true, Some(e)) = (launches.is_empty(), first_error) {
        return Err(e);
    }
    if !plain.is_empty() {
        notes.push(format!(
            "{} more engine command(s) configure no speculative decoding, not checked: {}",
            plain.len(),
            plain.join(", ")
        ));
    }
    Ok(Deployments { launches, notes })
}

/// The commands of an input: a Kubernetes manifest's containers (with notes on how they were
/// rendered), a script's, Dockerfile's or compose file's, or the words after `--`.
fn commands_of(
    args: &[String],
    file: Option<(&str, &str)>,
) -> Result<(Vec<shell::Command>, Vec<String>)> {
    match file {
        Some((name, text)) if k8s::is_manifest(text) => k8s::from_manifests(text, name),
        Some((name, text)) => Ok((shell::from_file(name, text)?, Vec::new())),
        None => Ok((shell::from_args(args)?, Vec::new())),
    }
}

/// Reads the options file a line names (the engine row's `options_file` flags) into it.
/// A file the engine reads only when it is there (oMLX's settings) and that cannot be read
/// leaves the line as it is, the reason kept among its unchecked values.
fn read_options(launch: &mut Launch, options: OptionsReader) -> Result<()> {
    let code = launch.engine.code();
    let Some(path) = code.options_path(launch) else {
        return Ok(());
    };
    match options(&path) {
        Ok((shown, text)) => code.read_options(launch, &shown, &text),
        // Only a file that is not there (or cannot be opened) is "not read"; one that is there
        // and is no text, too large or a directory is bad input like any other.
        Err(e) if code.options_optional() && e.kind == crate::error::ErrorKind::Io => {
            launch
                .unresolved
                .push(format!("{path} (not read: {})", e.message));
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// A line that configures no speculative decoding has no drafter to check: an error that says
/// what it lacks.
fn speculating(launch: &Launch) -> Result<()> {
    let code = launch.engine.code();
    if code.speculates(launch) {
        return Ok(());
    }
    let (what, hint) = code.no_speculation(launch);
    // What the line names and could not be read (an options file that is not there).
    let unread: Vec<&str> = launch
        .unresolved
        .iter()
        .filter(|u| u.contains("(not read: "))
        .map(String::as_str)
        .collect();
    let unread = if unread.is_empty() {
        String::new()
    } else {
        format!("; {}", unread.join("; "))
    };
    Err(crate::Error::new(format!(
        "the {} command{} configures no speculative decoding ({what}{unread}): there is no drafter to check",
        launch.entrypoint,
        launch.in_file()
    ))
    .with_hint(hint.unwrap_or(
        "pass the command that starts the server with its speculative-decoding flags",
    )))
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

/// How a deployment split from a line is named in notes: its target.
fn deployment_name(launch: &Launch) -> String {
    launch
        .target
        .clone()
        .unwrap_or_else(|| launch.entrypoint.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_prefixed_and_cites_a_source() {
        for c in LaunchCode::ALL {
            assert!(c.as_str().starts_with("launch-"), "{}", c.as_str());
            assert!(
                !crate::evidence::source_text(c.as_str()).is_empty()
                    && !info(*c).explanation.is_empty()
            );
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
