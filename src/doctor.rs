//! `doctor`: from the symptom to the fix. Given what a user has — a running server's metrics,
//! the launch command, the drafter and target — it measures acceptance, finds the drafter and
//! target, compares the drafter with the authority the target names, lints it for the engine,
//! reads its weights' headers and checks the launch flags, then ranks the causes by the
//! evidence: the per-position pattern says which kinds of finding can explain the symptom
//! (a first-position collapse: mask id, target layers, pairing, quantization, export defaults; a
//! cliff after a few positions: sliding-window layers run as full attention, the runner), and
//! each cause ends with the command that repairs it and the restart the engine needs.
//!
//! Nothing here is a new check: every finding comes from `acceptance`, `launch`, `diff`,
//! `lint` or `weights`, with their codes, and the drafter goes through the one drafter
//! pipeline (`crate::pipeline`, inside `launch` when a launch is given) once, its target read
//! once. This module only puts the findings in order.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::acceptance::{self, AcceptanceReport, MeasureOptions, MetricsSource, Shape};
use crate::analysis::{self, TargetChoice};
use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::hub::RepoRef;
use crate::input::{InputRef, Resolver};
use crate::launch::{self, LaunchReport, LocationKind};
use crate::pipeline::{
    self, AuthorityPick, DrafterInput, DrafterRun, LintWith, Linted, Pipeline, Weighed, WeightsFrom,
};
use crate::{Error, Result};

/// What the server says about itself, beyond its metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerInfo {
    /// Where it was read (`/get_server_info`, `/v1/models`).
    pub endpoint: String,
    /// The served target (SGLang's `model_path`; vLLM's model `root` or `id`).
    pub target: Option<String>,
    /// SGLang's `speculative_draft_model_path` (vLLM does not expose the drafter).
    pub drafter: Option<String>,
    /// SGLang's `speculative_algorithm`.
    pub algorithm: Option<String>,
    /// SGLang's `speculative_num_draft_tokens`.
    pub num_draft_tokens: Option<u64>,
    pub drafter_revision: Option<String>,
    pub target_revision: Option<String>,
    /// Paths the server named that are not read (`/proc`, `/dev`, `/sys`, a `..` step, a local
    /// path that is not a directory), each with why: a server's answer is input.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
}

/// Why a model path a server names is not read from this machine, if it is not: the server is
/// not trusted to point `doctor` at `/proc/self/environ` or a device (it did read
/// `/proc/self/environ`: issue 32). A Hub repo id (`ORG/NAME`, no such local path) passes; the
/// engine's own model directories are directories.
fn refused_path(value: &str) -> Option<&'static str> {
    let path = std::path::Path::new(value);
    if path
        .components()
        .any(|c| c == std::path::Component::ParentDir)
    {
        return Some("it climbs with `..`");
    }
    if ["/proc", "/dev", "/sys"]
        .iter()
        .any(|p| path.starts_with(p))
    {
        return Some("it is under /proc, /dev or /sys");
    }
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_dir() => Some("it is not a directory"),
        _ => None,
    }
}

impl ServerInfo {
    /// Reads SGLang's `/get_server_info` answer (the resolved server arguments).
    pub fn from_sglang(endpoint: &str, body: &serde_json::Value) -> ServerInfo {
        let s = |k: &str| body.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let mut info = ServerInfo {
            endpoint: endpoint.to_string(),
            target: s("model_path"),
            drafter: s("speculative_draft_model_path"),
            algorithm: s("speculative_algorithm"),
            num_draft_tokens: body
                .get("speculative_num_draft_tokens")
                .and_then(|v| v.as_u64()),
            drafter_revision: s("speculative_draft_model_revision"),
            target_revision: s("revision"),
            refused: Vec::new(),
        };
        info.refuse_paths();
        info
    }

    /// Drops the model paths [`refused_path`] refuses, saying which and why.
    fn refuse_paths(&mut self) {
        for (what, slot) in [("target", &mut self.target), ("drafter", &mut self.drafter)] {
            if let Some(why) = slot.as_deref().and_then(refused_path) {
                let value = slot.take().unwrap_or_default();
                self.refused.push(format!(
                    "the server names the {what} `{value}`, not read: {why}"
                ));
            }
        }
    }

    /// Reads vLLM's `/v1/models` answer: the served target, never the drafter.
    pub fn from_vllm_models(endpoint: &str, body: &serde_json::Value) -> ServerInfo {
        let first = body
            .get("data")
            .and_then(|d| d.as_array())
            .and_then(|a| a.first());
        let target = first
            .and_then(|m| m.get("root").or_else(|| m.get("id")))
            .and_then(|v| v.as_str())
            .map(str::to_string);
        let mut info = ServerInfo {
            endpoint: endpoint.to_string(),
            target,
            ..ServerInfo::default()
        };
        info.refuse_paths();
        info
    }

    /// The SGLang launch command these arguments describe, for the launch rules (public for the
    /// `server_answer` fuzz target).
    pub fn sglang_command(&self) -> Option<Vec<String>> {
        if self.endpoint == "/v1/models" {
            return None;
        }
        // A server's answer is input: a value that reads as a flag is not a path or repo.
        let target = self.target.as_ref().filter(|t| !t.starts_with('-'))?;
        let mut args = vec![
            "python".to_string(),
            "-m".into(),
            "sglang.launch_server".into(),
            "--model-path".into(),
            target.clone(),
        ];
        let value = |v: &Option<String>| v.clone().filter(|v| !v.starts_with('-'));
        if let Some(d) = value(&self.drafter) {
            args.extend(["--speculative-draft-model-path".into(), d]);
        }
        if let Some(a) = value(&self.algorithm) {
            args.extend(["--speculative-algorithm".into(), a]);
        }
        if let Some(n) = self.num_draft_tokens {
            args.extend(["--speculative-num-draft-tokens".into(), n.to_string()]);
        }
        if let Some(r) = value(&self.drafter_revision) {
            args.extend(["--speculative-draft-model-revision".into(), r]);
        }
        Some(args)
    }
}

pub use crate::launch::LaunchInput;

/// What the user gave.
#[derive(Debug, Clone, Default)]
pub struct DoctorInputs {
    /// A parsed launch command (from `-- CMD` or `--file`), its notes, and the directory its
    /// relative paths are resolved in.
    pub launch: Option<LaunchInput>,
    /// `--drafter DIR`: the drafter's files on this machine.
    pub drafter_dir: Option<PathBuf>,
    /// `--target DIR|REPO`: the target's files on this machine, or a Hub repo in an explicit
    /// form (`hf://ORG/NAME[@REV]`); decided by [`InputRef::parse`].
    pub target: Option<String>,
    /// The command's inputs resolver (its Hub settings); `None` reads local files only.
    pub hub: Option<Resolver>,
    /// How to measure, when a server is given.
    pub measure: Option<MeasureOptions>,
    /// Where the release that serves the line is stated besides the line (`--engine`, the pin
    /// file); the server's own answer is added when it gives one.
    pub stated: launch::deployment::Stated,
}

/// What a finding is about, for ranking: each kind of cause explains some symptoms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// Acceptance with a healthy shape that does not pay for drafting K tokens.
    BreakEven,
    MaskToken,
    TargetLayers,
    Pairing,
    Quantization,
    ExportDefaults,
    SlidingWindow,
    Weights,
    LaunchFlags,
    NoAuthority,
    Other,
}

impl CauseKind {
    pub fn title(self) -> &'static str {
        match self {
            CauseKind::BreakEven => "speculation does not pay at this K",
            CauseKind::MaskToken => "mask token id",
            CauseKind::TargetLayers => "target layer ids",
            CauseKind::Pairing => "drafter and target do not belong together",
            CauseKind::Quantization => "quantization",
            CauseKind::ExportDefaults => "export defaults",
            CauseKind::SlidingWindow => "sliding-window layers",
            CauseKind::Weights => "weights",
            CauseKind::LaunchFlags => "launch flags",
            CauseKind::NoAuthority => "no single authority",
            CauseKind::Other => "other config fields",
        }
    }

    /// The kind of a finding, from its field and code.
    pub fn of(d: &Diagnostic) -> CauseKind {
        let code = d.code.as_str();
        let path = d.path.as_str();
        let any = |needles: &[&str]| needles.iter().any(|n| code.contains(n) || path.contains(n));
        if code == "authority-ambiguous" {
            CauseKind::NoAuthority
        } else if any(&["mask_token", "mask-token", "pard_token", "ptd_token"]) {
            CauseKind::MaskToken
        } else if any(&[
            "target_layer_ids",
            "target-layer-ids",
            "aux_hidden_state",
            "eagle-aux",
            "aux-ids",
        ]) {
            CauseKind::TargetLayers
        } else if any(&["quant", "rotation"]) {
            CauseKind::Quantization
        } else if any(&[
            "layer_types",
            "layer-types",
            "sliding",
            "max_window_layers",
            "use-swa",
            "use_swa",
            "mixed-attention",
        ]) {
            CauseKind::SlidingWindow
        } else if any(&[
            "hidden_size",
            "hidden-size",
            "vocab_size",
            "vocab-size",
            "num_target_layers",
            "num-target-layers",
            "target_hidden_size",
            "draft_vocab",
            // A classic draft model's vocabulary against its target's (issue 31).
            "draft-model",
        ]) {
            CauseKind::Pairing
        } else if any(&[
            "sample_from_anchor",
            "sample-from-anchor",
            "norm_before_fc",
            "causal",
            "export",
        ]) {
            CauseKind::ExportDefaults
        } else if matches!(d.code, Code::Weights(_)) {
            CauseKind::Weights
        } else if matches!(d.code, Code::Launch(_)) {
            CauseKind::LaunchFlags
        } else {
            CauseKind::Other
        }
    }

    /// How well this kind explains the symptom: lower is more likely.
    fn rank(self, symptom: Symptom) -> u8 {
        use CauseKind::*;
        let order: &[CauseKind] = match symptom {
            Symptom::FirstPositionCollapse => &[
                MaskToken,
                TargetLayers,
                Pairing,
                NoAuthority,
                Quantization,
                ExportDefaults,
                Weights,
                SlidingWindow,
                LaunchFlags,
                Other,
                BreakEven,
            ],
            Symptom::Cliff => &[
                SlidingWindow,
                LaunchFlags,
                NoAuthority,
                ExportDefaults,
                TargetLayers,
                MaskToken,
                Pairing,
                Quantization,
                Weights,
                Other,
                BreakEven,
            ],
            Symptom::BelowBreakEven | Symptom::Healthy | Symptom::NotMeasured => &[
                BreakEven,
                NoAuthority,
                MaskToken,
                TargetLayers,
                SlidingWindow,
                Pairing,
                Quantization,
                ExportDefaults,
                Weights,
                LaunchFlags,
                Other,
            ],
        };
        order.iter().position(|k| *k == self).unwrap_or(order.len()) as u8
    }
}

/// What the server's acceptance shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Symptom {
    /// Position 1 is already rarely accepted.
    FirstPositionCollapse,
    /// Healthy early positions, then ~0.
    Cliff,
    /// No telling shape, but the gate fails (below the threshold or break-even).
    BelowBreakEven,
    /// Acceptance passes.
    Healthy,
    /// No server was given.
    NotMeasured,
}

impl Symptom {
    pub fn describe(self) -> &'static str {
        match self {
            Symptom::FirstPositionCollapse => {
                "collapse from the first position: the drafter's first guess is already wrong"
            }
            Symptom::Cliff => {
                "a cliff: healthy first positions, then about zero (later positions computed wrongly)"
            }
            Symptom::BelowBreakEven => "acceptance below what pays for drafting, with no telling shape",
            Symptom::Healthy => "acceptance is healthy",
            Symptom::NotMeasured => "not measured (no server given): causes ranked by severity",
        }
    }

    fn of(report: &AcceptanceReport) -> Symptom {
        match (report.shape, report.fails()) {
            (Shape::FirstPositionLow { .. }, _) => Symptom::FirstPositionCollapse,
            (Shape::Cliff { .. }, _) => Symptom::Cliff,
            (_, true) => Symptom::BelowBreakEven,
            (_, false) => Symptom::Healthy,
        }
    }
}

/// One cause: its kind, the findings that show it, and how to repair it.
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    pub kind: CauseKind,
    pub title: &'static str,
    /// Whether this kind of cause explains the measured symptom.
    pub explains_symptom: bool,
    pub findings: Vec<Diagnostic>,
    /// Commands or flag changes that repair it, in order.
    pub repair: Vec<String>,
}

/// Where the drafter and target were found, and what the drafter was compared with.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Located {
    pub drafter: Option<String>,
    pub drafter_from: Option<String>,
    pub target: Option<String>,
    pub target_from: Option<String>,
    pub authority: Option<String>,
    pub authority_chosen_by: Option<String>,
}

/// The whole answer.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    pub symptom: Symptom,
    #[serde(skip)]
    pub acceptance: Option<AcceptanceReport>,
    pub acceptance_summary: Option<String>,
    pub server: Option<ServerInfo>,
    pub located: Located,
    pub causes: Vec<Cause>,
    /// What was checked and found clean.
    pub ruled_out: Vec<String>,
    /// What could not be checked, and why.
    pub not_checked: Vec<String>,
    /// The engine's restart, said once.
    pub restart: Option<String>,
}

impl DoctorReport {
    /// A cause was found: a failing acceptance, an error anywhere, or a finding that explains
    /// a measured collapse or cliff.
    pub fn fails(&self) -> bool {
        self.acceptance.as_ref().is_some_and(|a| a.fails())
            || self.causes.iter().any(|c| {
                c.explains_symptom || c.findings.iter().any(|f| f.severity == Severity::Error)
            })
    }

    /// Every finding, acceptance's first.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut all: Vec<Diagnostic> = self
            .acceptance
            .as_ref()
            .map(|a| a.diagnostics.clone())
            .unwrap_or_default();
        all.extend(self.causes.iter().flat_map(|c| c.findings.iter().cloned()));
        all
    }
}

/// What the doctor gathered about the drafter, from the launch and the pipeline.
#[derive(Default)]
struct Gathered {
    located: Located,
    findings: Vec<Diagnostic>,
    not_checked: Vec<String>,
    /// The `fix` line for the drafter's differences from its authority.
    fix_line: Option<String>,
    launch_checked: bool,
    weights_checked: bool,
    /// The drafter was compared with one authority: only that rules out a wrong mask token,
    /// layer ids, attention layout or target pairing (lint alone warns, and cannot tell).
    authority_checked: bool,
    /// A llama.cpp or koboldcpp line: a classic draft model or a head in a GGUF, which has no
    /// mask token, layer ids or attention layout of a drafter config to get wrong; its pairing
    /// with the target is its vocabulary, compared when both GGUF files were read.
    classic_draft: Option<ClassicDraft>,
}

/// What doctor knows of a llama.cpp or koboldcpp line's draft.
#[derive(Debug, Clone, Copy)]
struct ClassicDraft {
    vocabulary_compared: bool,
}

/// Runs the doctor. `source` is the server's metrics (None: not measured); `server` what the
/// server says about itself.
pub fn run(
    inputs: &DoctorInputs,
    source: Option<&mut dyn MetricsSource>,
    server: Option<ServerInfo>,
    sleep: &mut dyn FnMut(std::time::Duration),
) -> Result<DoctorReport> {
    let acceptance = match (source, &inputs.measure) {
        (Some(src), Some(opts)) => Some(acceptance::measure(src, opts, sleep)?),
        _ => None,
    };
    let symptom = acceptance
        .as_ref()
        .map_or(Symptom::NotMeasured, Symptom::of);
    let target = match inputs.target.as_deref() {
        None => None,
        Some(t) => Some(InputRef::parse(t, "--target")?),
    };
    let mut g = Gathered::default();
    // The launch: the user's command, else the one SGLang's server arguments describe.
    let run = match launch_command(inputs, server.as_ref())? {
        Some((launch, from)) => from_launch(inputs, target.as_ref(), launch, from, &mut g)?,
        None => {
            let engine = acceptance.as_ref().map(|a| a.measurement.engine());
            let Some(dir) = &inputs.drafter_dir else {
                return Err(no_drafter(server.as_ref(), inputs));
            };
            Some(from_flags(dir, inputs, target.as_ref(), engine, &mut g)?)
        }
    };
    match run {
        Some(run) => shape(&run, &mut g),
        None if g.located.drafter.is_some() => {}
        None => return Err(no_drafter(server.as_ref(), inputs)),
    }
    Ok(finish(acceptance, symptom, server, g))
}

/// The launch command to check: the user's, else the one SGLang's server arguments describe;
/// with where it came from.
fn launch_command(
    inputs: &DoctorInputs,
    server: Option<&ServerInfo>,
) -> Result<Option<(LaunchInput, &'static str)>> {
    Ok(match (&inputs.launch, server) {
        (Some(l), _) => Some((l.clone(), "the launch command")),
        (None, Some(info)) => match info.sglang_command() {
            Some(args) => {
                // The command is the server's answer rewritten: say so, or the error would
                // speak of a command the user never typed.
                let (parsed, notes) = launch::parse_input(&args, None).map_err(|mut e| {
                    e.message = format!(
                        "{} (the command doctor built from the server's {} answer)",
                        e.message, info.endpoint
                    );
                    e
                })?;
                Some((
                    (parsed, notes, None),
                    "the server's arguments (SGLang /get_server_info)",
                ))
            }
            None => None,
        },
        (None, None) => None,
    })
}

/// `--target`: a local directory, or a Hub repo (which needs the Hub, asked now so that its
/// error is this run's).
fn target_parts(
    inputs: &DoctorInputs,
    target: Option<&InputRef>,
) -> Result<(Option<PathBuf>, Option<RepoRef>)> {
    match target {
        Some(InputRef::Local(dir)) => Ok((Some(dir.clone()), None)),
        Some(InputRef::Hub(repo)) => {
            let resolver = inputs.hub.as_ref().ok_or_else(|| {
                Error::new(format!(
                    "--target {repo} is a Hub repo, and this run does not ask the Hub"
                ))
            })?;
            resolver.settings()?;
            Ok((None, Some(repo.clone())))
        }
        None => Ok((None, None)),
    }
}

/// The launch checked (its drafter through the pipeline, fresh authority and weights
/// included): its findings, and the drafter's run when the drafter is a local one. A drafter
/// served from the Hub as published is its own authority (`None`, located).
fn from_launch(
    inputs: &DoctorInputs,
    target: Option<&InputRef>,
    (parsed, notes, base): LaunchInput,
    from: &str,
    g: &mut Gathered,
) -> Result<Option<DrafterRun>> {
    let (target_dir, target_repo) = target_parts(inputs, target)?;
    let mut report = launch::check(
        parsed,
        notes,
        &launch::CheckOptions {
            inputs: inputs.hub.clone(),
            drafter_dir: inputs.drafter_dir.clone(),
            target_dir,
            base_dir: base,
            target_repo,
            fresh_authority: true,
            weights: true,
            volumes: Vec::new(),
            stated: inputs.stated.clone(),
        },
    )?;
    g.launch_checked = true;
    if report.launch.engine.reads_gguf() {
        g.classic_draft = Some(ClassicDraft {
            vocabulary_compared: report.vocabulary_compared == Some(true),
        });
    }
    for d in &report.diagnostics {
        // A model the launch could not read is a limit of this run, not a cause.
        if d.code.as_str().ends_with("-unavailable") {
            g.not_checked.push(d.message.clone());
        } else {
            g.findings.push(d.clone());
        }
    }
    g.not_checked.extend(report.not_checked.iter().cloned());
    locate_target(target, Some((&report, from)), &mut g.located);
    let run = report.run.take().map(|r| *r);
    if let Some(dir) = &inputs.drafter_dir {
        g.located.drafter = Some(dir.display().to_string());
        g.located.drafter_from = Some("--drafter".into());
        return Ok(run);
    }
    match (&report.drafter.kind, &report.drafter.path) {
        (LocationKind::Local, Some(path)) => {
            g.located.drafter = report.drafter.given.clone().or(Some(path.clone()));
            g.located.drafter_from = Some(from.to_string());
            Ok(run)
        }
        (LocationKind::Hub, _) => {
            let at = report.drafter.sha.as_deref().unwrap_or("?");
            let repo = report.drafter.repo.clone().unwrap_or_default();
            g.located.drafter = Some(format!("{repo}@{at}"));
            g.located.drafter_from = Some(from.to_string());
            g.not_checked.push(format!(
                "diff: the drafter is served from the Hub repo {repo} as published, so it is its own authority"
            ));
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// Where the target was found: `--target`, else the target the launch names.
fn locate_target(
    target: Option<&InputRef>,
    launch: Option<(&LaunchReport, &str)>,
    located: &mut Located,
) {
    let choice = match target {
        Some(InputRef::Local(dir)) => TargetChoice {
            target_dir: Some(dir.clone()),
            ..TargetChoice::default()
        },
        Some(InputRef::Hub(repo)) => TargetChoice {
            target_hub: Some(repo.clone()),
            ..TargetChoice::default()
        },
        None => TargetChoice::default(),
    };
    if let Some(identity) = analysis::target_identity(&choice).0 {
        located.target_from = Some("--target".into());
        located.target = Some(identity.name);
        return;
    }
    if let Some((r, from)) = launch {
        if let Some(name) = r.target.repo.clone().or_else(|| r.target.given.clone()) {
            located.target = Some(name);
            located.target_from = Some(from.to_string());
        }
    }
}

/// Without a launch: the drafter `--drafter` names through the pipeline, compared with the
/// authority `--target` picks, linted for the server's engine.
fn from_flags(
    dir: &Path,
    inputs: &DoctorInputs,
    target: Option<&InputRef>,
    engine: Option<crate::rules::Engine>,
    g: &mut Gathered,
) -> Result<DrafterRun> {
    let drafter = Resolver::local_config(dir)?;
    g.located.drafter = Some(dir.display().to_string());
    g.located.drafter_from = Some("--drafter".into());
    let choice = match target_parts(inputs, target)? {
        (dir, None) => TargetChoice {
            target_dir: dir,
            ..TargetChoice::default()
        },
        (_, Some(repo)) => TargetChoice {
            target_hub: Some(repo),
            hub: inputs
                .hub
                .as_ref()
                .map(|r| r.settings().cloned())
                .transpose()?
                .map(Box::new),
            ..TargetChoice::default()
        },
    };
    locate_target(target, None, &mut g.located);
    let identity = analysis::target_identity(&choice).0;
    let options = crate::rules::LintOptions {
        engine: engine.map(Into::into),
        ..crate::rules::LintOptions::default()
    };
    let run = Pipeline::new(inputs.hub.clone()).run(DrafterInput {
        config: &drafter,
        authority: AuthorityPick::Choose(identity),
        fresh_authority: true,
        target: Ok(choice),
        shared_target: None,
        builtin_fallback: false,
        lint: LintWith::Options(Box::new(options)),
        weights: WeightsFrom::Local { pinned_hub: None },
    });
    if let Some(e) = &run.target_error {
        return Err(e.clone());
    }
    let compared = run.diff_findings();
    match &run.lint {
        Linted::Report(r) => g
            .findings
            .extend(pipeline::uncovered(r.findings.iter().cloned(), &compared)),
        Linted::Failed(e) => g.not_checked.push(format!("lint: {}", e.message)),
        Linted::NotRun | Linted::Findings(_) => {}
    }
    g.findings.extend(compared);
    g.not_checked.extend(run.not_checked.iter().cloned());
    Ok(run)
}

/// What the doctor takes from a drafter's run besides its findings: the authority, the `fix`
/// line, and the weights (with the rules skipped for want of a fact).
fn shape(run: &DrafterRun, g: &mut Gathered) {
    if let Some(report) = run.diff.as_ref().filter(|r| r.fails(false)) {
        g.fix_line = Some(report.fix_command());
    }
    g.authority_checked |= run.diff.is_some() && run.ambiguity.is_none();
    g.located.authority = run.authority_line();
    if let Some(ambiguity) = &run.ambiguity {
        // Doctor names the flags that pick the authority, as `diff` does.
        let pick = analysis::pick_authority(ambiguity, &run.path);
        for f in &mut g.findings {
            if f.code == pick.code {
                *f = pick.clone();
            }
        }
    }
    g.located.authority_chosen_by = run.authority.as_ref().and_then(|a| a.matched_by.clone());
    match &run.weights {
        Weighed::Checked(c) => {
            g.weights_checked = true;
            g.findings.extend(c.diagnostics.iter().cloned());
            g.not_checked.extend(pipeline::skipped_lines(&c.skipped));
        }
        Weighed::NoWeights => g
            .not_checked
            .push("weights: no safetensors beside the drafter's config".into()),
        Weighed::Unreadable(e) => {
            let code = crate::diagnostic::codes::CheckCode::WeightsUnreadable;
            g.findings.push(
                Diagnostic::new(code, crate::check::info(code), "", e.message.clone())
                    .file(run.path.display().to_string()),
            );
        }
        Weighed::NotRun => {}
    }
}

/// Groups the findings into causes, ranked by how well each explains the symptom.
fn finish(
    acceptance: Option<AcceptanceReport>,
    symptom: Symptom,
    server: Option<ServerInfo>,
    g: Gathered,
) -> DoctorReport {
    let Gathered {
        located,
        findings,
        not_checked,
        fix_line,
        launch_checked,
        weights_checked,
        authority_checked,
        classic_draft,
    } = g;
    let mut not_checked = not_checked;
    let mut groups: std::collections::BTreeMap<CauseKind, Vec<Diagnostic>> = Default::default();
    // A healthy-shaped curve below break-even: the measurement itself is the cause (too many
    // drafted tokens for what is accepted); under a collapse or a cliff it is only the symptom.
    if symptom == Symptom::BelowBreakEven {
        if let Some(a) = &acceptance {
            let below: Vec<Diagnostic> = a
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .cloned()
                .collect();
            if !below.is_empty() {
                groups.insert(CauseKind::BreakEven, below);
            }
        }
    }
    for f in findings {
        if f.severity == Severity::Info {
            continue;
        }
        groups.entry(CauseKind::of(&f)).or_default().push(f);
    }
    let explains = |k: CauseKind| match symptom {
        Symptom::FirstPositionCollapse => matches!(
            k,
            CauseKind::MaskToken
                | CauseKind::TargetLayers
                | CauseKind::Pairing
                | CauseKind::Quantization
                | CauseKind::ExportDefaults
                | CauseKind::NoAuthority
        ),
        Symptom::Cliff => matches!(k, CauseKind::SlidingWindow | CauseKind::LaunchFlags),
        Symptom::BelowBreakEven => true,
        Symptom::Healthy | Symptom::NotMeasured => false,
    };
    let mut causes: Vec<Cause> = groups
        .into_iter()
        .map(|(kind, mut findings)| {
            findings.sort_by_key(|f| f.severity);
            Cause {
                kind,
                title: kind.title(),
                explains_symptom: explains(kind),
                repair: repair(kind, &findings, fix_line.as_deref()),
                findings,
            }
        })
        .collect();
    causes.sort_by_key(|c| {
        let has_error = c.findings.iter().any(|f| f.severity == Severity::Error);
        (!c.explains_symptom, !has_error, c.kind.rank(symptom))
    });
    let looked_at = Looked {
        launch: launch_checked,
        weights: weights_checked,
        authority: authority_checked,
        classic_draft,
    };
    let ruled_out = ruled_out(&causes, &looked_at);
    not_checked.extend(unchecked_causes(&causes, &looked_at));
    let restart = (!causes.is_empty()).then(|| {
        "the engine reads the drafter's files and its flags at start: restart the server after the repair".to_string()
    });
    let acceptance_summary = acceptance.as_ref().map(acceptance_summary);
    DoctorReport {
        symptom,
        acceptance,
        acceptance_summary,
        server,
        located,
        causes,
        ruled_out,
        not_checked,
        restart,
    }
}

/// The kinds of cause that were looked at and not found. Only what was looked at can be ruled
/// out: the launch flags without a launch, the weights without weights, are not.
/// `vLLM acceptance length 1.12 of 16`: the measurement in one line.
fn acceptance_summary(a: &AcceptanceReport) -> String {
    let max = a
        .measurement
        .max_acceptance_length()
        .map_or(String::new(), |m| format!(" of {m}"));
    format!(
        "{} acceptance length {:.2}{max}",
        a.measurement.engine().display(),
        a.measurement.acceptance_length()
    )
}

/// Which checks ran with the inputs they need.
struct Looked {
    launch: bool,
    weights: bool,
    authority: bool,
    classic_draft: Option<ClassicDraft>,
}

/// The causes a check can rule out, and whether it ran here with the inputs it needs: a wrong
/// mask token, layer ids, attention layout or pairing only by a comparison with the authority
/// (lint without one only warns: the incident's wrong `layer_types` are no lint error), the
/// launch flags by a launch command, the weights by their headers.
fn cause_checks(looked: &Looked) -> Vec<(CauseKind, bool, &'static str)> {
    let by_authority = "no authority to compare with (pass --target, the served target, or run `dflash-check diff DIR --snapshot REPO`)";
    if let Some(draft) = looked.classic_draft {
        // A GGUF draft has no drafter config: its pairing is its vocabulary against the target's.
        return vec![
            (
                CauseKind::Pairing,
                draft.vocabulary_compared,
                "the draft's vocabulary was not compared (both GGUF files are needed)",
            ),
            (
                CauseKind::LaunchFlags,
                looked.launch,
                "no launch command (pass it after `--`, or --file)",
            ),
        ];
    }
    vec![
        (CauseKind::MaskToken, looked.authority, by_authority),
        (CauseKind::TargetLayers, looked.authority, by_authority),
        (CauseKind::SlidingWindow, looked.authority, by_authority),
        (CauseKind::Pairing, looked.authority, by_authority),
        (CauseKind::Quantization, true, ""),
        (
            CauseKind::Weights,
            looked.weights,
            "no safetensors headers were read",
        ),
        (
            CauseKind::LaunchFlags,
            looked.launch,
            "no launch command (pass it after `--`, or --file)",
        ),
    ]
}

/// The causes ruled out: checked with the inputs they need, and not found.
fn ruled_out(causes: &[Cause], looked: &Looked) -> Vec<String> {
    cause_checks(looked)
        .iter()
        .filter(|(k, ran, _)| *ran && !causes.iter().any(|c| c.kind == *k))
        .map(|(k, _, _)| k.title().to_string())
        .collect()
}

/// The causes neither found nor ruled out, with what would check them.
fn unchecked_causes(causes: &[Cause], looked: &Looked) -> Vec<String> {
    cause_checks(looked)
        .iter()
        .filter(|(k, ran, _)| !*ran && !causes.iter().any(|c| c.kind == *k))
        .filter(|(k, _, _)| !matches!(k, CauseKind::Weights | CauseKind::LaunchFlags))
        .map(|(k, _, why)| format!("{}: not ruled out, {why}", k.title()))
        .collect()
}

/// The repair of one cause: the `fix` line for fields that differ from the authority, the
/// runner for mixed attention under vLLM, the launch flag for K.
fn repair(kind: CauseKind, findings: &[Diagnostic], fix_line: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    if kind == CauseKind::BreakEven {
        out.push(
            "draft fewer tokens: lower num_speculative_tokens in --speculative-config (SGLang: \
             --speculative-num-draft-tokens), or serve large batches without speculation; then \
             measure again with `dflash-check acceptance`"
                .to_string(),
        );
        return out;
    }
    let from_diff = findings.iter().any(|f| matches!(f.code, Code::Diff(_)));
    match kind {
        CauseKind::NoAuthority => out.push(
            "name the drafter's authority: `--target` the served target, or `dflash-check diff DIR --snapshot REPO`"
                .into(),
        ),
        _ if from_diff => {
            if let Some(line) = fix_line {
                out.push(line.to_string());
            }
        }
        _ => {}
    }
    if kind == CauseKind::SlidingWindow
        && findings.iter().any(|f| {
            f.code.as_str().contains("mixed-attention")
                || f.message.contains("VLLM_USE_V2_MODEL_RUNNER")
        })
    {
        out.push("set VLLM_USE_V2_MODEL_RUNNER=1 in the server's environment (mixed sliding/full draft layers)".into());
    }
    if kind == CauseKind::LaunchFlags {
        out.push("change the launch flags as the findings say (`dflash-check launch -- CMD` checks the result)".into());
    }
    if out.is_empty() && !from_diff {
        out.push(format!(
            "see `dflash-check explain {}`",
            findings.first().map_or("", |f| f.code.as_str())
        ));
    }
    out
}

/// The error when no drafter can be found: what to pass.
fn no_drafter(server: Option<&ServerInfo>, inputs: &DoctorInputs) -> Error {
    let what = match server {
        Some(s) if s.endpoint.ends_with("/v1/models") => format!(
            "the server is vLLM, whose {} names the served target ({}) but not the drafter",
            s.endpoint,
            // A refused target is said with why, not as `?`.
            s.target
                .clone()
                .or_else(|| s.refused.first().cloned())
                .unwrap_or_else(|| "none".into())
        ),
        Some(s) => server_drafter(s),
        None if inputs.launch.is_some() => {
            "the launch command names no drafter that could be read".into()
        }
        None => "nothing names a drafter".into(),
    };
    Error::new(format!("doctor cannot find the drafter: {what}")).with_hint(
        "pass the launch command after `--` (or --file), or the drafter's directory with --drafter DIR",
    )
}

/// What the server said of its drafter, when doctor could not use it: the path it refused and
/// why, the drafter it named that could not be read, or that it named none. ("names no
/// drafter" was said of all three, hiding a refused `/dev/zero` and an uncached Hub repo.)
fn server_drafter(s: &ServerInfo) -> String {
    if let Some(refused) = s.refused.iter().find(|r| r.contains(" the drafter ")) {
        return refused.clone();
    }
    match &s.drafter {
        Some(d) => format!(
            "the server's {} names the drafter `{d}`, which could not be read here (a Hub repo \
             needs the Hub or its cache; a path, the drafter's directory on this machine)",
            s.endpoint
        ),
        None => format!("the server's {} names no drafter", s.endpoint),
    }
}

/// Asks the server about itself: SGLang's `/get_server_info` (its resolved arguments, drafter
/// included; `/server_info` in newer releases), else vLLM's `/v1/models` (the served target).
/// `None` when neither answers with JSON: the metrics alone then say nothing of the drafter.
pub fn server_info(metrics_url: &str, timeout: std::time::Duration) -> Option<ServerInfo> {
    let base = metrics_url
        .trim_end_matches('/')
        .trim_end_matches("/metrics")
        .to_string();
    // The metrics scraper's client (one deadline for the whole request), with a body cap for
    // answers of a few kB: a 16 MiB answer parsed whole cost 602 MB.
    let get = |path: &str| -> Option<String> {
        let source = acceptance::HttpSource::new(format!("{base}{path}"), timeout).ok()?;
        source.capped(SERVER_ANSWER_CAP).fetch().ok()
    };
    for path in ["/get_server_info", "/server_info"] {
        if let Some(info) = get(path).and_then(|body| ServerInfo::parse_sglang(path, &body)) {
            return Some(info);
        }
    }
    get("/v1/models").and_then(|body| ServerInfo::parse_vllm_models("/v1/models", &body))
}

/// The most a server's answer about itself (`/get_server_info`, `/v1/models`) may hold: SGLang's
/// resolved arguments are a few kB.
pub const SERVER_ANSWER_CAP: u64 = 1024 * 1024;

/// Only the fields `doctor` reads of SGLang's `/get_server_info`, kept raw; every other key is
/// skipped unbuilt.
#[derive(serde::Deserialize)]
struct SglangAnswer<'a> {
    #[serde(borrow, default)]
    model_path: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    speculative_draft_model_path: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    speculative_algorithm: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    speculative_num_draft_tokens: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    speculative_draft_model_revision: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    revision: Option<&'a serde_json::value::RawValue>,
}

/// vLLM's `/v1/models`: the models, each kept raw until the first is read.
#[derive(serde::Deserialize)]
struct ModelsAnswer<'a> {
    #[serde(borrow, default)]
    data: Option<&'a serde_json::value::RawValue>,
}

/// A raw field as a value (`Null` when it is not JSON, which cannot happen for a field serde
/// has already delimited).
fn raw_value(raw: Option<&serde_json::value::RawValue>) -> serde_json::Value {
    raw.and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or(serde_json::Value::Null)
}

impl ServerInfo {
    /// SGLang's answer, read field by field; `None` when it is not a JSON object naming a
    /// `model_path` (then it is not SGLang's server info). Public for the `server_answer` fuzz
    /// target, like [`ServerInfo::parse_vllm_models`].
    pub fn parse_sglang(endpoint: &str, body: &str) -> Option<ServerInfo> {
        let a: SglangAnswer = serde_json::from_str(body).ok()?;
        // A JSON object naming `model_path` as a string (serde would also read an array as the
        // fields in order).
        if !body.trim_start().starts_with('{') || !a.model_path?.get().starts_with('"') {
            return None;
        }
        let fields = serde_json::json!({
            "model_path": raw_value(a.model_path),
            "speculative_draft_model_path": raw_value(a.speculative_draft_model_path),
            "speculative_algorithm": raw_value(a.speculative_algorithm),
            "speculative_num_draft_tokens": raw_value(a.speculative_num_draft_tokens),
            "speculative_draft_model_revision": raw_value(a.speculative_draft_model_revision),
            "revision": raw_value(a.revision),
        });
        Some(ServerInfo::from_sglang(endpoint, &fields))
    }

    /// vLLM's answer: the first model only.
    pub fn parse_vllm_models(endpoint: &str, body: &str) -> Option<ServerInfo> {
        let a: ModelsAnswer = serde_json::from_str(body).ok()?;
        let first = a.data.and_then(|d| {
            let list: Vec<&serde_json::value::RawValue> = serde_json::from_str(d.get()).ok()?;
            list.first().map(|m| raw_value(Some(m)))
        });
        let data = serde_json::Value::Array(first.into_iter().collect());
        Some(ServerInfo::from_vllm_models(
            endpoint,
            &serde_json::json!({ "data": data }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server's answer is input: a model path it names under /proc, /dev or /sys, with a `..`
    /// step, or that is a file here, is not read (it named /proc/self/environ: issue 32).
    #[test]
    fn server_named_paths_outside_model_directories_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        for bad in [
            "/proc/self/environ",
            "/dev/zero",
            "/sys/kernel",
            "models/../../etc",
            file.to_str().unwrap(),
        ] {
            assert!(refused_path(bad).is_some(), "{bad}");
        }
        for good in [
            "Qwen/Qwen3.6-27B",
            tmp.path().to_str().unwrap(),
            "/models/not-here",
        ] {
            assert_eq!(refused_path(good), None, "{good}");
        }
        let info = ServerInfo::from_sglang(
            "/get_server_info",
            &serde_json::json!({"model_path": "/proc/self/environ", "speculative_draft_model_path": "z-lab/x"}),
        );
        assert_eq!(info.target, None);
        assert_eq!(info.drafter.as_deref(), Some("z-lab/x"));
        assert!(
            info.refused[0].contains("/proc/self/environ"),
            "{:?}",
            info.refused
        );
    }

    /// When the server's drafter cannot be used, the error says what the server named and why
    /// it was not used (issue 32: "names no drafter" hid a refused /dev/zero and an uncached
    /// Hub repo), and a refused vLLM target is named, not shown as `?`.
    #[test]
    fn no_drafter_says_what_the_server_named() {
        let inputs = DoctorInputs::default();
        let sglang = |drafter: &str| {
            ServerInfo::from_sglang(
                "/get_server_info",
                &serde_json::json!({"model_path": "Qwen/Qwen3-8B", "speculative_draft_model_path": drafter}),
            )
        };
        let refused = no_drafter(Some(&sglang("/dev/zero")), &inputs).message;
        assert!(refused.contains("`/dev/zero`, not read"), "{refused}");
        let unread = no_drafter(Some(&sglang("z-lab/Qwen3-8B-DFlash-b16")), &inputs).message;
        assert!(
            unread
                .contains("names the drafter `z-lab/Qwen3-8B-DFlash-b16`, which could not be read"),
            "{unread}"
        );
        let models = ServerInfo::from_vllm_models(
            "/v1/models",
            &serde_json::json!({"data": [{"id": "m", "root": "/proc/self/environ"}]}),
        );
        let vllm = no_drafter(Some(&models), &inputs).message;
        assert!(vllm.contains("`/proc/self/environ`, not read"), "{vllm}");
    }

    /// The server's answers are read field by field: other keys, however many, are skipped
    /// unbuilt, wrong types ignored, and only the first of vLLM's models is read.
    #[test]
    fn server_answers_are_read_field_by_field() {
        let mut body = String::from("{");
        for i in 0..50_000 {
            body.push_str(&format!("\"k{i}\": [1, 2, {{\"x\": null}}], "));
        }
        body.push_str(
            "\"model_path\": \"Qwen/Qwen3.6-27B\", \"speculative_num_draft_tokens\": 16}",
        );
        let info = ServerInfo::parse_sglang("/get_server_info", &body).unwrap();
        assert_eq!(info.target.as_deref(), Some("Qwen/Qwen3.6-27B"));
        assert_eq!(info.num_draft_tokens, Some(16));
        assert!(ServerInfo::parse_sglang("/get_server_info", "{\"other\": 1}").is_none());
        assert!(ServerInfo::parse_sglang("/get_server_info", "[1, 2]").is_none());
        let models = r#"{"data": [{"id": "a", "root": "Qwen/Qwen3-8B"}, {"id": "b"}]}"#;
        let info = ServerInfo::parse_vllm_models("/v1/models", models).unwrap();
        assert_eq!(info.target.as_deref(), Some("Qwen/Qwen3-8B"));
        let empty = ServerInfo::parse_vllm_models("/v1/models", r#"{"data": "x"}"#).unwrap();
        assert_eq!(empty.target, None);
    }

    /// A server's answer is input: wrong types are ignored, never a panic, and a value that
    /// reads as a flag never becomes one in the launch command built from it.
    #[test]
    fn hostile_server_answers_are_ignored_not_obeyed() {
        let weird = serde_json::json!({
            "model_path": "--tp",
            "speculative_draft_model_path": 42,
            "speculative_num_draft_tokens": "sixteen",
            "speculative_algorithm": ["DFLASH"],
        });
        let info = ServerInfo::from_sglang("/get_server_info", &weird);
        assert_eq!(info.drafter, None);
        assert_eq!(info.num_draft_tokens, None);
        assert_eq!(info.sglang_command(), None);
        let sneaky = serde_json::json!({
            "model_path": "Qwen/Qwen3.6-27B",
            "speculative_draft_model_path": "--enable-torch-compile",
        });
        let args = ServerInfo::from_sglang("/get_server_info", &sneaky)
            .sglang_command()
            .unwrap();
        assert!(
            !args.iter().any(|a| a == "--enable-torch-compile"),
            "{args:?}"
        );
        let models = ServerInfo::from_vllm_models("/v1/models", &serde_json::json!({"data": "x"}));
        assert_eq!(models.target, None);
        assert_eq!(models.sglang_command(), None);
    }
}
