//! What an acceptance rule sees and how it reports: the family's [`Cx`] (the measured window,
//! its shape, the threshold, the snapshots for the served model, the findings and next steps
//! so far), the facts a rule may need ([`Need`]), the engines it applies to ([`Applies`]) and
//! the [`Acceptance`] family the one rule engine runs.
//!
//! Below the topical rule files (`position`, `threshold`, `gauge`), which declare their rules
//! against it, the rule list (`rules`), which makes it (`Cx::new`), and the builder (`build`),
//! which runs them.

use serde::Serialize;

use super::compute::Shape;
use super::next;
use super::verdict::{Measurement, Threshold};
use super::AcceptanceCode;
use crate::diagnostic::rule::{self, Describe, NeedKind, RuleFamily};
use crate::diagnostic::Diagnostic;
use crate::engine::{Engine, MetricsKind};

/// The acceptance family of rules: they judge one measured window ([`Cx`]).
pub struct Acceptance;

/// An acceptance rule: its code, its documentation, where it applies, what it needs, its check.
pub type Rule = rule::Rule<Acceptance>;

/// A rule that did not run, and the facts it lacked.
pub type Skipped = rule::Skipped<AcceptanceCode, Need>;

/// A fact a rule cannot judge without. Rules whose needs are unmet are skipped and listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// An acceptance length to fail below: `--min-acceptance-length`, or the break-even point
    /// (which an EAGLE-style drafter cannot have without K).
    Threshold,
    /// Accepted tokens per draft position (vLLM's per-position counters; SGLang has none).
    PerPosition,
    /// Two non-zero samples of SGLang's gauge, or its token counter proving traffic: with one
    /// sample and no counter nothing says whether the gauge moved.
    GaugeSamples,
    /// The drafter's own speculation profile (`--drafter DIR`): most runs have none, so a rule
    /// that needs it is not listed as skipped without one.
    Profile,
}

impl NeedKind for Need {
    fn describe(self) -> &'static str {
        match self {
            Need::Threshold => "a threshold (--min-acceptance-length, or K for an EAGLE drafter's break-even point)",
            Need::PerPosition => "per-position counters (vLLM's vllm:spec_decode_num_accepted_tokens_per_pos)",
            Need::Profile => "the drafter's speculation_profile.json (--drafter DIR)",
            Need::GaugeSamples => "two samples of sglang:spec_accept_length in the window, or sglang:generation_tokens_total (a longer --window)",
        }
    }

    fn listed(self) -> bool {
        self != Need::Profile
    }
}

/// Which serving engines a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    Every,
    /// The engines that export acceptance this way (SGLang's gauges).
    Exporting(MetricsKind),
}

impl Describe for Applies {
    fn describe(self) -> String {
        match self {
            Applies::Every => "every engine".to_string(),
            Applies::Exporting(kind) => {
                let names: Vec<&str> = Engine::all()
                    .filter(|e| e.spec().metrics.is_some_and(|m| m.kind == kind))
                    .map(Engine::display)
                    .collect();
                names.join(" and ")
            }
        }
    }
}

/// What a rule sees (the window, its shape, the threshold) and where it reports.
pub struct Cx<'a> {
    /// The running rule, set by the engine ([`RuleFamily::enter`]): what `emit` reports as.
    pub(super) rule: &'static Rule,
    pub measurement: &'a Measurement,
    pub shape: Shape,
    pub threshold: Option<&'a Threshold>,
    /// Built-in snapshots of drafters for the served model.
    pub snapshots: &'a [String],
    /// The served model, when its name is usable as `--target`.
    pub target: Option<&'a str>,
    /// The drafter's family (`--draft-family`, or the launch's method in `doctor`): an MTP
    /// head inside the target is checked in the target's weights, not as a drafter of its own.
    pub family: crate::family::Family,
    pub diagnostics: Vec<Diagnostic>,
    /// The `dflash-check` commands that check the likely cause, in the order to run them.
    pub next_steps: Vec<String>,
}

impl<'a> Cx<'a> {
    pub(super) fn engine(&self) -> Engine {
        self.measurement.engine()
    }

    /// Reports a finding of the running rule about the series `path`.
    pub(super) fn emit(&mut self, path: impl Into<String>, message: String) -> &mut Diagnostic {
        let r = self.rule;
        self.diagnostics
            .push(Diagnostic::new(r.code, &r.info, path, message));
        self.diagnostics.last_mut().expect("just pushed")
    }

    /// Suggests linting the drafter against the served target and engine.
    pub(super) fn lint_next(&mut self) {
        let step = next::lint_command(self.engine(), self.target);
        self.next_steps.push(step);
    }

    /// Suggests comparing the drafter with its authority (the matching snapshot, else the Hub).
    pub(super) fn diff_next(&mut self) {
        let step = next::diff_command(self.snapshots, self.target);
        self.next_steps.push(step);
    }

    /// Whether the drafter is a head inside the target's checkpoint (MTP): its cause is in the
    /// target's weights (a dropped or quantized head, an exclude list the engine does not
    /// match) and its depth against K, not in a separate drafter's mask and layer ids.
    pub(super) fn head_in_target(&self) -> bool {
        self.family.spec().locations == [crate::family::DrafterLocation::EmbeddedInTarget]
    }

    /// Suggests the checks of the drafter's config: a separate drafter linted and compared
    /// with its authority; a head inside the target, the target's weights and lint (its MTP
    /// rules). `diff_first`: the comparison with the authority first (a first guess already
    /// wrong is most often a field that differs from it).
    pub(super) fn config_checks_next(&mut self, diff_first: bool) {
        if self.head_in_target() {
            let steps = next::head_commands(self.engine(), self.target);
            self.next_steps.extend(steps);
        } else if diff_first {
            self.diff_next();
            self.lint_next();
        } else {
            self.lint_next();
            self.diff_next();
        }
    }
}

impl RuleFamily for Acceptance {
    type Cx<'a> = Cx<'a>;
    type Code = AcceptanceCode;
    type Scope = Applies;
    type Need = Need;

    fn in_scope(cx: &Cx<'_>, scope: Applies) -> bool {
        match scope {
            Applies::Every => true,
            Applies::Exporting(kind) => cx.engine().spec().metrics.is_some_and(|m| m.kind == kind),
        }
    }

    fn has(cx: &Cx<'_>, need: Need) -> bool {
        match (need, cx.measurement) {
            (Need::Threshold, _) => cx.threshold.is_some(),
            (Need::PerPosition, Measurement::Counters(w)) => !w.per_position.is_empty(),
            (Need::PerPosition, Measurement::Gauges(_)) => false,
            (Need::GaugeSamples, Measurement::Gauges(w)) => {
                w.accept_length.samples > 1 || w.generation_tokens.is_some()
            }
            (Need::GaugeSamples, Measurement::Counters(_)) => true,
            (Need::Profile, _) => cx.threshold.is_some_and(|t| t.profile.is_some()),
        }
    }

    fn enter(cx: &mut Cx<'_>, rule: &'static Rule) {
        cx.rule = rule;
    }
}
