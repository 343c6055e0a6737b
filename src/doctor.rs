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
//! `lint` or `weights`, with their codes. This module only puts them in order.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::acceptance::{self, AcceptanceReport, MeasureOptions, MetricsSource, Shape};
use crate::analysis::{self, AmbiguousDiff, DiffReport, TargetChoice};
use crate::config::{self, ConfigFile};
use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::hub::RepoRef;
use crate::input::{InputRef, Resolver};
use crate::launch::{self, LaunchReport};
use crate::source::choose::{self, TargetIdentity};
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
}

impl ServerInfo {
    /// Reads SGLang's `/get_server_info` answer (the resolved server arguments).
    pub fn from_sglang(endpoint: &str, body: &serde_json::Value) -> ServerInfo {
        let s = |k: &str| body.get(k).and_then(|v| v.as_str()).map(str::to_string);
        ServerInfo {
            endpoint: endpoint.to_string(),
            target: s("model_path"),
            drafter: s("speculative_draft_model_path"),
            algorithm: s("speculative_algorithm"),
            num_draft_tokens: body
                .get("speculative_num_draft_tokens")
                .and_then(|v| v.as_u64()),
            drafter_revision: s("speculative_draft_model_revision"),
            target_revision: s("revision"),
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
        ServerInfo {
            endpoint: endpoint.to_string(),
            target,
            ..ServerInfo::default()
        }
    }

    /// The SGLang launch command these arguments describe, for the launch rules.
    fn sglang_command(&self) -> Option<Vec<String>> {
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

/// The drafter's config, where it was found, and the target's identity and files.
struct Subject {
    drafter: Option<ConfigFile>,
    /// The drafter is a Hub repo served as published: it is its own authority.
    drafter_on_hub: Option<String>,
    target_identity: Option<TargetIdentity>,
    target_choice: TargetChoice,
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
    let target_dir = match &target {
        Some(InputRef::Local(dir)) => Some(dir.clone()),
        _ => None,
    };
    let mut located = Located::default();
    let mut not_checked = Vec::new();
    let mut findings: Vec<Diagnostic> = Vec::new();

    // The launch: the user's command, else the one SGLang's server arguments describe.
    let launch = match (&inputs.launch, &server) {
        (Some(l), _) => Some((l.clone(), "the launch command")),
        (None, Some(info)) => match info.sglang_command() {
            Some(args) => {
                let (parsed, notes) = launch::parse_input(&args, None)?;
                Some((
                    (parsed, notes, None),
                    "the server's arguments (SGLang /get_server_info)",
                ))
            }
            None => None,
        },
        (None, None) => None,
    };
    let launch_report = match &launch {
        Some(((parsed, notes, base), _)) => Some(launch::check(
            parsed.clone(),
            notes.clone(),
            &launch::CheckOptions {
                inputs: inputs.hub.clone(),
                drafter_dir: inputs.drafter_dir.clone(),
                target_dir: target_dir.clone(),
                base_dir: base.clone(),
            },
        )?),
        None => None,
    };
    if let Some(r) = &launch_report {
        for d in &r.diagnostics {
            // A model the launch could not read is a limit of this run, not a cause.
            if d.code.as_str().ends_with("-unavailable") {
                not_checked.push(d.message.clone());
            } else {
                findings.push(d.clone());
            }
        }
        not_checked.extend(r.not_checked.iter().cloned());
    }
    let subject = subject(
        inputs,
        target.as_ref(),
        launch_report.as_ref(),
        launch.as_ref().map(|l| l.1),
        &mut located,
    )?;
    let Some(drafter) = &subject.drafter else {
        if let Some(repo) = &subject.drafter_on_hub {
            not_checked.push(format!(
                "diff: the drafter is served from the Hub repo {repo} as published, so it is its own authority"
            ));
        } else {
            return Err(no_drafter(server.as_ref(), inputs));
        }
        return Ok(finish(
            launch_report.is_some(),
            acceptance,
            symptom,
            server,
            located,
            findings,
            not_checked,
            None,
        ));
    };

    // The target's facts and tokens, read once for lint and the weights check (the
    // comparison reads its own, with the authority's token ids).
    let mut target_context = None;
    // Lint: the launch ran it with the engine; without a launch, run it here.
    if launch_report.is_none() {
        let target: &analysis::TargetContext = target_context.insert(analysis::resolve_target(
            &subject.target_choice,
            &[drafter],
            None,
        )?);
        let engine = acceptance.as_ref().map(|a| match a.measurement.engine() {
            acceptance::ServerEngine::Vllm => crate::rules::Engine::Vllm,
            acceptance::ServerEngine::Sglang => crate::rules::Engine::Sglang,
        });
        let options = crate::rules::LintOptions {
            engine,
            ..crate::rules::LintOptions::default()
        };
        match crate::rules::lint(drafter, &options, target) {
            Ok(r) => findings.extend(r.findings),
            Err(e) => not_checked.push(format!("lint: {}", e.message)),
        }
    }

    // Diff against the authority the target names.
    let mut fix_line = None;
    match compare(
        drafter,
        &subject,
        inputs.hub.as_ref(),
        &mut located,
        &mut not_checked,
    ) {
        Ok(Compared::One(report)) => {
            if report.fails(false) {
                fix_line = Some(report.fix_command());
            }
            findings.extend(crate::check::diff_findings(&report));
        }
        Ok(Compared::Ambiguous(report)) => {
            findings.push(report.diagnostics().remove(0));
            located.authority = Some(format!("none: {}", report.ambiguity.describe()));
        }
        Err(e) => not_checked.push(format!("diff: {}", e.message)),
    }

    // Weights beside a local drafter.
    match crate::weights::read_local(&drafter.path) {
        Ok(Some(headers)) => {
            let facts = match target_context {
                Some(t) => t.facts,
                None => analysis::resolve_target(&subject.target_choice, &[drafter], None)
                    .ok()
                    .and_then(|t| t.facts),
            };
            findings.extend(crate::weights::check(drafter, &headers, facts.as_ref()));
        }
        Ok(None) => not_checked.push("weights: no safetensors beside the drafter's config".into()),
        Err(e) => findings.push(
            Diagnostic::new(
                crate::diagnostic::codes::CheckCode::WeightsUnreadable,
                crate::check::info(crate::diagnostic::codes::CheckCode::WeightsUnreadable),
                "",
                e.message,
            )
            .file(drafter.path.display().to_string()),
        ),
    }
    Ok(finish(
        launch_report.is_some(),
        acceptance,
        symptom,
        server,
        located,
        findings,
        not_checked,
        fix_line,
    ))
}

/// The drafter and the target's identity, from (in order) the flags, the launch command, and
/// the server's own description.
fn subject(
    inputs: &DoctorInputs,
    target: Option<&InputRef>,
    launch: Option<&LaunchReport>,
    launch_from: Option<&str>,
    located: &mut Located,
) -> Result<Subject> {
    let mut target_choice = TargetChoice::default();
    match target {
        Some(InputRef::Local(dir)) => target_choice.target_dir = Some(dir.clone()),
        Some(InputRef::Hub(repo)) => {
            let resolver = inputs.hub.as_ref().ok_or_else(|| {
                Error::new(format!(
                    "--target {repo} is a Hub repo, and this run does not ask the Hub"
                ))
            })?;
            target_choice.target_hub = Some(repo.clone());
            target_choice.hub = Some(Box::new(resolver.settings()?.clone()));
        }
        None => {}
    }
    let mut drafter = None;
    let mut drafter_on_hub = None;
    if let Some(dir) = &inputs.drafter_dir {
        drafter = Some(config::load(dir)?);
        located.drafter = Some(dir.display().to_string());
        located.drafter_from = Some("--drafter".into());
    }
    let mut identity = analysis::target_identity(&target_choice).0;
    if identity.is_some() {
        located.target_from = Some("--target".into());
    }
    if let Some(r) = launch {
        let from = launch_from.unwrap_or("the launch command");
        if drafter.is_none() {
            match (&r.drafter.kind, &r.drafter.path) {
                (launch::locate::LocationKind::Local, Some(path)) => {
                    drafter = Some(config::load(Path::new(path))?);
                    located.drafter = r.drafter.given.clone().or(Some(path.clone()));
                    located.drafter_from = Some(from.to_string());
                }
                (launch::locate::LocationKind::Hub, _) => {
                    let at = r.drafter.sha.as_deref().unwrap_or("?");
                    let repo = r.drafter.repo.clone().unwrap_or_default();
                    located.drafter = Some(format!("{repo}@{at}"));
                    located.drafter_from = Some(from.to_string());
                    drafter_on_hub = Some(repo);
                }
                _ => {}
            }
        }
        if identity.is_none() {
            let name = r.target.repo.clone().or_else(|| r.target.given.clone());
            if let Some(name) = name {
                identity = Some(TargetIdentity {
                    name: name.clone(),
                    from: format!("the target in {from}"),
                });
                located.target = Some(name);
                located.target_from = Some(from.to_string());
            }
            // The target's files as the launch found them (a local directory or the Hub
            // cache snapshot), for decoding tokens.
            if target_choice.target_dir.is_none() && target_choice.target_hub.is_none() {
                target_choice.target_dir = r
                    .target
                    .path
                    .as_ref()
                    .and_then(|p| Path::new(p).parent().map(Path::to_path_buf));
            }
        }
    }
    if located.target.is_none() {
        located.target = identity.as_ref().map(|i| i.name.clone());
    }
    Ok(Subject {
        drafter,
        drafter_on_hub,
        target_identity: identity,
        target_choice,
    })
}

enum Compared {
    One(Box<DiffReport>),
    Ambiguous(Box<AmbiguousDiff>),
}

/// The drafter against its authority: the built-in snapshot the target's identity picks (by
/// the rule of `source::choose`), read fresh from the Hub when it can be (the served repo at its
/// current commit), else the snapshot itself.
fn compare(
    drafter: &ConfigFile,
    subject: &Subject,
    hub: Option<&Resolver>,
    located: &mut Located,
    not_checked: &mut Vec<String>,
) -> Result<Compared> {
    let chosen = match choose::choose(drafter, subject.target_identity.as_ref()) {
        choose::Choice::One(a) => *a,
        choose::Choice::NoMatch(e) => return Err(e),
        choose::Choice::Ambiguous(ambiguity) => {
            let report = AmbiguousDiff::build(drafter.clone(), ambiguity, &subject.target_choice)?;
            return Ok(Compared::Ambiguous(Box::new(report)));
        }
    };
    let why = chosen.matched_by.clone();
    let mut target_choice = subject.target_choice.clone();
    let settings = match hub.map(Resolver::settings) {
        Some(Ok(settings)) => Some(settings),
        Some(Err(e)) => {
            not_checked.push(format!(
                "diff: the authority was not read from the Hub ({}); compared with the built-in snapshot",
                e.message
            ));
            None
        }
        None => None,
    };
    // The served repo at its current commit when the Hub answers; else the snapshot itself.
    let fresh = settings.and_then(|settings| {
        let repo: RepoRef = chosen.id.parse().ok()?;
        match crate::source::hub::load(settings, &repo, why.clone()) {
            Ok(a) => {
                // Its model card may name the target.
                target_choice
                    .hub
                    .get_or_insert_with(|| Box::new(settings.clone()));
                Some(a)
            }
            // Offline, gated or unreachable: say so, and compare with the snapshot.
            Err(e) => {
                not_checked.push(format!(
                    "diff: the authority was not read from the Hub ({}); compared with the built-in snapshot",
                    e.message
                ));
                None
            }
        }
    });
    let authority = fresh.unwrap_or(chosen);
    located.authority = Some(authority.describe());
    located.authority_chosen_by = authority.matched_by.clone().or(why);
    let target = analysis::resolve_target(
        &target_choice,
        &[drafter, &authority.config],
        Some(&authority),
    )?;
    Ok(Compared::One(Box::new(DiffReport::build(
        drafter.clone(),
        authority,
        target,
    ))))
}

/// Groups the findings into causes, ranked by how well each explains the symptom.
#[allow(clippy::too_many_arguments)]
fn finish(
    launch_checked: bool,
    acceptance: Option<AcceptanceReport>,
    symptom: Symptom,
    server: Option<ServerInfo>,
    located: Located,
    findings: Vec<Diagnostic>,
    not_checked: Vec<String>,
    fix_line: Option<String>,
) -> DoctorReport {
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
    let checked = [
        CauseKind::MaskToken,
        CauseKind::TargetLayers,
        CauseKind::SlidingWindow,
        CauseKind::Pairing,
        CauseKind::Quantization,
        CauseKind::Weights,
        CauseKind::LaunchFlags,
    ];
    // Only what was looked at can be ruled out.
    let looked_at = |k: &CauseKind| match k {
        CauseKind::LaunchFlags => launch_checked,
        CauseKind::Weights => !not_checked.iter().any(|n| n.starts_with("weights:")),
        _ => true,
    };
    let ruled_out = checked
        .iter()
        .filter(|k| looked_at(k) && !causes.iter().any(|c| c.kind == **k))
        .map(|k| k.title().to_string())
        .collect();
    let restart = (!causes.is_empty()).then(|| {
        "vLLM and SGLang read config.json and their flags at start: restart the server after the repair".to_string()
    });
    let acceptance_summary = acceptance.as_ref().map(|a| {
        let max = a
            .measurement
            .max_acceptance_length()
            .map_or(String::new(), |m| format!(" of {m}"));
        format!(
            "{} acceptance length {:.2}{max}",
            a.measurement.engine().name(),
            a.measurement.acceptance_length()
        )
    });
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
            s.target.as_deref().unwrap_or("?")
        ),
        Some(s) => format!("the server's {} names no drafter", s.endpoint),
        None if inputs.launch.is_some() => {
            "the launch command names no drafter that could be read".into()
        }
        None => "nothing names a drafter".into(),
    };
    Error::new(format!("doctor cannot find the drafter: {what}")).with_hint(
        "pass the launch command after `--` (or --file), or the drafter's directory with --drafter DIR",
    )
}

/// Asks the server about itself: SGLang's `/get_server_info` (its resolved arguments, drafter
/// included; `/server_info` in newer releases), else vLLM's `/v1/models` (the served target).
/// `None` when neither answers with JSON: the metrics alone then say nothing of the drafter.
pub fn server_info(metrics_url: &str, timeout: std::time::Duration) -> Option<ServerInfo> {
    let base = metrics_url
        .trim_end_matches('/')
        .trim_end_matches("/metrics")
        .to_string();
    // The metrics scraper's client: one deadline for the whole request, a capped body.
    let get = |path: &str| -> Option<serde_json::Value> {
        let mut source = acceptance::HttpSource::new(format!("{base}{path}"), timeout).ok()?;
        let body = source.fetch().ok()?;
        serde_json::from_str(&body).ok()
    };
    for path in ["/get_server_info", "/server_info"] {
        if let Some(v) = get(path) {
            if v.get("model_path").is_some() {
                return Some(ServerInfo::from_sglang(path, &v));
            }
        }
    }
    get("/v1/models").map(|v| ServerInfo::from_vllm_models("/v1/models", &v))
}

#[cfg(test)]
mod tests {
    use super::*;

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
