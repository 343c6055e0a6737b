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

//!
//! The parts: [`server`] reads what a running server says about itself (its arguments, its
//! release), [`gather`] checks the launch or the drafter through `launch` and the pipeline,
//! [`causes`] holds the kinds of cause, which symptoms each explains and how each is repaired,
//! as data; this module puts the findings in order.

mod causes;
mod gather;
mod server;

use std::path::PathBuf;

use serde::Serialize;

use crate::acceptance::{self, AcceptanceReport, MeasureOptions, MetricsSource};
use crate::diagnostic::{Diagnostic, Severity};
use crate::input::{InputRef, Resolver};
use crate::launch::{self};
use crate::Result;

pub use causes::{Cause, CauseKind, Symptom};
pub use server::{server_info, ServerInfo, SERVER_ANSWER_CAP};

use causes::{acceptance_summary, repair, ruled_out, unchecked_causes, Looked};
use gather::{from_flags, from_launch, launch_command, no_drafter, shape};

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
    /// The drafter is the target's own MTP head (said in the symptom).
    #[serde(skip)]
    pub mtp_head: bool,
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
    /// The line serves the target's own MTP head: its causes are the target's weights (the
    /// head's tensors, their dtype, the exclude list) and the launch flags, not a drafter
    /// config's fields.
    mtp_head: bool,
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
    // The release the server says it runs joins where the line's release is stated.
    let with_server;
    let inputs = match server.as_ref().and_then(|s| s.release.clone()) {
        Some(release) => {
            let mut stated = inputs.stated.clone();
            stated.server = Some(release);
            with_server = DoctorInputs {
                stated,
                ..inputs.clone()
            };
            &with_server
        }
        None => inputs,
    };
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
        mtp_head,
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
    let explains = |k: CauseKind| k.explains(symptom);
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
        mtp_head,
    };
    let ruled_out = ruled_out(&causes, &looked_at);
    not_checked.extend(unchecked_causes(&causes, &looked_at));
    let restart = (!causes.is_empty()).then(|| {
        "the engine reads the drafter's files and its flags at start: restart the server after the repair".to_string()
    });
    let acceptance_summary = acceptance.as_ref().map(acceptance_summary);
    DoctorReport {
        symptom,
        mtp_head,
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
