//! The builder: from a measured window to the report, by running the family's rules — the
//! verdict, the likely cause, the `dflash-check` commands to run next, and the rules skipped for
//! want of a fact — with the built-in snapshots of drafters for the served model. A file apart
//! from the data types ([`super::verdict`]), which the rules read: the rules sit between the
//! two. Pure: no I/O.

use serde::Serialize;

use super::compute::Shape;
use super::cx::{Cx, Skipped};
use super::rules::RULES;
use super::threshold;
use super::verdict::{Measurement, Threshold, Verdict, Window};
use crate::builtin::{self, Snapshot};
use crate::diagnostic::rule::run;
use crate::diagnostic::{Diagnostic, Summary};

/// Everything `acceptance` found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AcceptanceReport {
    /// The URL scraped.
    pub url: String,
    /// The served model read (`model_name` label), when the series carry one.
    pub model_name: Option<String>,
    /// Every model the server's acceptance metrics name.
    pub models: Vec<String>,
    pub window: Window,
    pub measurement: Measurement,
    pub shape: Shape,
    pub threshold: Option<Threshold>,
    pub verdict: Verdict,
    /// Built-in snapshots of drafters for the served model (by their target's repo name).
    pub snapshots: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
    /// The `dflash-check` commands that check the likely cause.
    pub next_steps: Vec<String>,
    /// The rules not run for want of a fact (a threshold, per-position counters, …).
    pub skipped: Vec<Skipped>,
}

impl AcceptanceReport {
    /// Builds the verdict, and runs the family's rules for the diagnostics, the next steps and
    /// the rules skipped for want of a fact.
    pub fn build(
        url: String,
        model_name: Option<String>,
        models: Vec<String>,
        window: Window,
        measurement: Measurement,
        threshold: Option<Threshold>,
        family: crate::family::Family,
    ) -> AcceptanceReport {
        let snapshots = model_name
            .as_deref()
            .map(snapshots_for_model)
            .unwrap_or_default();
        let target = model_name.as_deref().filter(|m| looks_like_model_path(m));
        let mut cx = Cx::new(&measurement, threshold.as_ref(), &snapshots, target, family);
        let skipped = run(RULES, &mut cx);
        let (shape, mut diagnostics, next_steps) = (cx.shape, cx.diagnostics, cx.next_steps);
        crate::diagnostic::sort(&mut diagnostics);
        let verdict = threshold::verdict(&measurement, threshold.as_ref());
        AcceptanceReport {
            url,
            model_name,
            models,
            window,
            measurement,
            shape,
            threshold,
            verdict,
            snapshots,
            diagnostics,
            next_steps,
            skipped,
        }
    }

    pub fn summary(&self) -> Summary {
        Summary::of(&self.diagnostics)
    }

    /// Exit code: 1 when the verdict fails (the only error-level finding), else 0.
    /// Whether the gate fails: the acceptance length is below the threshold.
    pub fn fails(&self) -> bool {
        self.summary().errors > 0
    }
}

/// The drafters the tool knows for a served model: built-in snapshots whose target repo is the
/// model name, or whose target's repo name is its last path component (`/models/Qwen3.6-27B`).
pub fn snapshots_for_model(model: &str) -> Vec<String> {
    let last = model
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(model);
    builtin::SNAPSHOTS
        .iter()
        .filter(|s: &&Snapshot| {
            let repo = s.target.repo;
            let name = repo.rsplit('/').next().unwrap_or(repo);
            repo.eq_ignore_ascii_case(model) || name.eq_ignore_ascii_case(last)
        })
        .map(|s| s.repo.to_string())
        .collect()
}

/// A served model name usable as `--target`: a Hub repo id or a path, not an alias.
fn looks_like_model_path(name: &str) -> bool {
    name.contains('/') && !name.contains(char::is_whitespace)
}
