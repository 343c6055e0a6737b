//! What a weights rule sees and how it reports: the family's [`Cx`] (the [`View`] of the parsed
//! headers and config, and the findings so far), the facts a rule may need ([`Need`]), the
//! configs it applies to ([`Applies`]) and the [`Weights`] family the one rule engine runs.
//!
//! Below the topical rule files (`files`, `quant`, `shapes`, `presence`, `vocab`), which
//! declare their rules against it, and below the rule list (`rules`), which runs them: the
//! context and the list are two files so that neither imports the other's importers.

use crate::diagnostic::Severity;
use serde::Serialize;

use super::view::View;
use super::WeightsCode;
use crate::diagnostic::rule::{self, Describe, NeedKind, RuleFamily};
use crate::diagnostic::Diagnostic;
use crate::family::WeightsLayout;

/// A fact a weights rule cannot run without.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// `model.safetensors.index.json`: without one (a single file) there is no index to check,
    /// and the rule is not listed as skipped.
    Index,
    /// The target's vocabulary size: `--target`, else the config's `vocab_size`.
    TargetVocab,
    /// The draft vocabulary size: the config's `draft_vocab_size`, else `vocab_size`.
    DraftVocab,
    /// A GGUF header: the GGUF rules run on `.gguf` files only, and are not listed as skipped
    /// for safetensors.
    Gguf,
}

impl NeedKind for Need {
    fn describe(self) -> &'static str {
        match self {
            Need::Index => "an index (model.safetensors.index.json)",
            Need::TargetVocab => {
                "the target's vocabulary size (--target DIR|REPO, else the config's vocab_size)"
            }
            Need::DraftVocab => {
                "the draft vocabulary size (the config's draft_vocab_size or vocab_size)"
            }
            Need::Gguf => "a GGUF file",
        }
    }

    /// A single-file checkpoint has no index: index rules do not apply rather than wait.
    fn listed(self) -> bool {
        !matches!(self, Need::Index | Need::Gguf)
    }
}

/// Which configs a weights rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// Any config, of any family or none.
    Any,
    /// Configs of these families, whose tensor layout is known.
    Layouts(&'static [WeightsLayout]),
}

/// Every family whose tensor layout is known.
pub(super) const KNOWN_LAYOUTS: Applies = Applies::Layouts(&[
    WeightsLayout::Dflash,
    WeightsLayout::Dflash2,
    WeightsLayout::Eagle3,
]);

/// DFlash and DFlash2.
pub(super) const DFLASH_LAYOUTS: Applies =
    Applies::Layouts(&[WeightsLayout::Dflash, WeightsLayout::Dflash2]);

impl Describe for Applies {
    fn describe(self) -> String {
        match self {
            Applies::Any => "any drafter's weights".into(),
            Applies::Layouts(kinds) => {
                let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
                format!("{} weights", names.join(", "))
            }
        }
    }
}

/// The weights family: rules that compare safetensors headers with a config ([`Cx`]).
pub struct Weights;

/// A weights rule: its code, documentation, scope, needs and check.
pub type Rule = rule::Rule<Weights>;

/// A weights rule that did not run, and the facts it lacked.
pub type Skipped = rule::Skipped<WeightsCode, Need>;

impl RuleFamily for Weights {
    type Cx<'a> = Cx<'a>;
    type Code = WeightsCode;
    type Scope = Applies;
    type Need = Need;

    fn in_scope(cx: &Cx<'_>, scope: Applies) -> bool {
        match scope {
            Applies::Any => true,
            Applies::Layouts(kinds) => {
                cx.v.layout
                    .as_ref()
                    .is_some_and(|l| kinds.contains(&l.kind))
            }
        }
    }

    fn has(cx: &Cx<'_>, need: Need) -> bool {
        let layout = cx.v.layout.as_ref();
        match need {
            Need::Index => cx.v.headers.index.is_some(),
            Need::TargetVocab => layout.and_then(|l| l.target_vocab).is_some(),
            Need::DraftVocab => layout.and_then(|l| l.sizes.draft_vocab).is_some(),
            Need::Gguf => cx.v.gguf.is_some(),
        }
    }

    fn enter(cx: &mut Cx<'_>, rule: &'static Rule) {
        cx.rule = rule;
    }
}

/// What a weights rule sees, and where it reports.
pub struct Cx<'a> {
    pub(super) rule: &'static Rule,
    /// The parsed config and headers, the target's facts, and what is derived from them.
    pub v: &'a View<'a>,
    pub(super) found: Vec<Diagnostic>,
}

impl Cx<'_> {
    /// A finding of the running rule about `path` (a tensor name) in `file`, to be pushed.
    pub fn diag(&self, path: &str, file: &str, message: String) -> Diagnostic {
        let rule: &'static Rule = self.rule;
        Diagnostic::new(rule.code, &rule.info, path, message).file(file)
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.found.push(d);
    }

    /// Reports a finding of the running rule.
    pub fn emit(&mut self, path: &str, file: &str, message: String) {
        let d = self.diag(path, file, message);
        self.push(d);
    }

    /// Reports a finding of the running rule at `severity` (the rule's explanation says when
    /// it differs from its own).
    pub fn emit_as(&mut self, severity: Severity, path: &str, file: &str, message: String) {
        let d = self.diag(path, file, message).severity(severity);
        self.push(d);
    }

    /// The running rule's code.
    pub fn code(&self) -> WeightsCode {
        self.rule.code
    }
}
