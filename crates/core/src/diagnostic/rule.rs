//! The one rule type and the one engine that runs rules, for every family of checks.
//!
//! A [`Rule`] is a value declared beside the function that implements it: its code, its
//! documentation ([`CodeInfo`]: severity, summary, explanation, cited source — the evidence
//! behind the claim lives in `evidence/evidence.toml`, keyed by the same code), where it applies,
//! the facts it needs, and the check itself. A family (lint, weights, launch, acceptance) is a
//! [`RuleFamily`]: it names what its rules look at ([`RuleFamily::Cx`]), its code enum, its scopes and
//! its needs. [`run`] is the engine every family shares: it runs each rule whose scope matches,
//! and skips — and lists — the rules whose needs are unmet, so a rule never has to remember to
//! record that itself. [`Documented`] is what `explain`, `docs/rules.md` and SARIF see of any
//! rule, whatever its family.

use std::fmt;

use serde::Serialize;

use super::{Code, CodeInfo};

/// A family of rules: what they check and the vocabulary they are declared in.
pub trait RuleFamily: 'static {
    /// What a rule sees while it checks, and where it reports.
    type Cx<'a>;
    /// The family's code enum (`LintCode`, `WeightsCode`, …).
    type Code: Copy + PartialEq + Into<Code> + Serialize + fmt::Debug + Sync;
    /// Where a rule applies (lint: drafter families; launch: an engine).
    type Scope: Copy + Describe + Sync;
    /// A fact a rule cannot run without.
    type Need: Copy + PartialEq + NeedKind + Serialize + fmt::Debug + Sync;

    /// Whether a rule of `scope` applies to what `cx` checks.
    fn in_scope(cx: &Self::Cx<'_>, scope: Self::Scope) -> bool;
    /// Whether `need` is available to the rules.
    fn has(cx: &Self::Cx<'_>, need: Self::Need) -> bool;
    /// Called before `rule` checks: what it emits then carries its code and documentation.
    fn enter(cx: &mut Self::Cx<'_>, rule: &'static Rule<Self>)
    where
        Self: Sized;
    /// Called after a rule checked: the needs it found unmet while checking (a fact it treats
    /// as optional until it turns out to matter), to be listed as skipped.
    fn leave(_cx: &mut Self::Cx<'_>) -> Vec<Self::Need> {
        Vec::new()
    }
}

/// A scope or need described for people (docs/rules.md, `explain`).
pub trait Describe: Sized {
    fn describe(self) -> String;
}

/// A need: how to describe it, and whether a rule skipped for want of it is listed.
pub trait NeedKind: Copy {
    /// What to pass to meet it (`the target's layer count (--target DIR)`).
    fn describe(self) -> &'static str;
    /// `false` for needs that select where a rule applies rather than what it reads (an engine
    /// for engine-specific rules): such a rule is not run and not listed as skipped.
    fn listed(self) -> bool {
        true
    }
}

/// Where a rule applies when the family does not distinguish: everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Everywhere;

impl Describe for Everywhere {
    fn describe(self) -> String {
        "every input".to_string()
    }
}

/// A rule: code, documentation, scope, needs and the check, declared beside the check.
pub struct Rule<F: RuleFamily> {
    pub code: F::Code,
    pub info: CodeInfo,
    pub applies: F::Scope,
    pub needs: &'static [F::Need],
    pub check: for<'a, 'b> fn(&'b mut F::Cx<'a>),
}

impl<F: RuleFamily> fmt::Debug for Rule<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rule").field("code", &self.code).finish()
    }
}

/// A rule that did not run, and the facts it lacked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped<C, N> {
    pub code: C,
    pub needs: Vec<N>,
}

/// Rules not run, grouped by what they lacked (each need described, `; `-joined), in the order
/// first seen, with each group's codes (`code` names one).
pub fn by_need<C, N: NeedKind>(
    skipped: &[Skipped<C, N>],
    code: impl Fn(&C) -> &'static str,
) -> Vec<(String, Vec<&'static str>)> {
    let mut groups: Vec<(String, Vec<&'static str>)> = Vec::new();
    for s in skipped {
        let needs: Vec<&str> = s.needs.iter().map(|n| n.describe()).collect();
        let needs = needs.join("; ");
        match groups.iter_mut().find(|(n, _)| *n == needs) {
            Some((_, codes)) => codes.push(code(&s.code)),
            None => groups.push((needs, vec![code(&s.code)])),
        }
    }
    groups
}

/// The engine: runs every rule of `rules` that applies to `cx`, in order, and returns those
/// skipped for unmet needs (a need that is not [`NeedKind::listed`] drops the rule silently).
pub fn run<'r, F: RuleFamily>(
    rules: impl IntoIterator<Item = &'static Rule<F>>,
    cx: &mut F::Cx<'r>,
) -> Vec<Skipped<F::Code, F::Need>> {
    let mut skipped = Vec::new();
    for rule in rules {
        if !F::in_scope(cx, rule.applies) {
            continue;
        }
        let missing: Vec<F::Need> = rule
            .needs
            .iter()
            .copied()
            .filter(|&n| !F::has(cx, n))
            .collect();
        if missing.iter().any(|n| !n.listed()) {
            continue;
        }
        if !missing.is_empty() {
            skipped.push(Skipped {
                code: rule.code,
                needs: missing,
            });
            continue;
        }
        F::enter(cx, rule);
        (rule.check)(cx);
        let late = F::leave(cx);
        if !late.is_empty() {
            skipped.push(Skipped {
                code: rule.code,
                needs: late,
            });
        }
    }
    skipped
}

/// The rule of `rules` that raises `code`, if any.
pub fn find<F: RuleFamily>(rules: &'static [Rule<F>], code: F::Code) -> Option<&'static Rule<F>> {
    rules.iter().find(|r| r.code == code)
}

/// What the registry, `explain` and the docs see of any rule, whatever its family.
pub trait Documented: Sync {
    fn code(&self) -> Code;
    fn info(&self) -> &CodeInfo;
    /// Where it applies, in words.
    fn scope(&self) -> String;
    /// What it needs, in words (empty: only its input).
    fn needs(&self) -> Vec<&'static str>;
}

impl<F: RuleFamily> Documented for Rule<F>
where
    Rule<F>: Sync,
{
    fn code(&self) -> Code {
        self.code.into()
    }

    fn info(&self) -> &CodeInfo {
        &self.info
    }

    fn scope(&self) -> String {
        self.applies.describe()
    }

    fn needs(&self) -> Vec<&'static str> {
        self.needs.iter().map(|n| n.describe()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::codes::WeightsCode;
    use crate::diagnostic::Severity;

    /// A toy family: rules see a list of numbers and record which codes ran.
    struct Toy;

    #[derive(Debug, Clone, Copy, PartialEq, Serialize)]
    enum ToyNeed {
        Present,
        Absent,
        Selector,
    }

    impl NeedKind for ToyNeed {
        fn describe(self) -> &'static str {
            "a toy fact"
        }
        fn listed(self) -> bool {
            self != ToyNeed::Selector
        }
    }

    struct ToyCx {
        ran: Vec<Code>,
        current: Option<Code>,
        late: Vec<ToyNeed>,
    }

    impl RuleFamily for Toy {
        type Cx<'a> = ToyCx;
        type Code = WeightsCode;
        type Scope = Everywhere;
        type Need = ToyNeed;
        fn in_scope(_: &ToyCx, _: Everywhere) -> bool {
            true
        }
        fn has(_: &ToyCx, need: ToyNeed) -> bool {
            need == ToyNeed::Present
        }
        fn enter(cx: &mut ToyCx, rule: &'static Rule<Toy>) {
            cx.current = Some(rule.code.into());
        }
        fn leave(cx: &mut ToyCx) -> Vec<ToyNeed> {
            std::mem::take(&mut cx.late)
        }
    }

    const INFO: CodeInfo = CodeInfo {
        severity: Severity::Info,
        summary: "toy",
        explanation: "toy",
    };

    fn record(cx: &mut ToyCx) {
        let code = cx.current.expect("enter ran first");
        cx.ran.push(code);
    }

    fn skip_late(cx: &mut ToyCx) {
        record(cx);
        cx.late.push(ToyNeed::Absent);
    }

    static RULES: &[Rule<Toy>] = &[
        Rule {
            code: WeightsCode::ALL[0],
            info: INFO,
            applies: Everywhere,
            needs: &[ToyNeed::Present],
            check: record,
        },
        Rule {
            code: WeightsCode::ALL[1],
            info: INFO,
            applies: Everywhere,
            needs: &[ToyNeed::Absent],
            check: record,
        },
        Rule {
            code: WeightsCode::ALL[2],
            info: INFO,
            applies: Everywhere,
            needs: &[ToyNeed::Selector],
            check: record,
        },
        Rule {
            code: WeightsCode::ALL[3],
            info: INFO,
            applies: Everywhere,
            needs: &[],
            check: skip_late,
        },
    ];

    #[test]
    fn runs_rules_whose_needs_are_met_and_lists_the_others() {
        let mut cx = ToyCx {
            ran: Vec::new(),
            current: None,
            late: Vec::new(),
        };
        let skipped = run(RULES, &mut cx);
        assert_eq!(
            cx.ran,
            vec![WeightsCode::ALL[0].into(), WeightsCode::ALL[3].into()]
        );
        // The rule needing an absent fact is listed; the one needing an unlisted selector is
        // not; the one that found a need unmet while checking is listed with it.
        assert_eq!(
            skipped,
            vec![
                Skipped {
                    code: WeightsCode::ALL[1],
                    needs: vec![ToyNeed::Absent]
                },
                Skipped {
                    code: WeightsCode::ALL[3],
                    needs: vec![ToyNeed::Absent]
                },
            ]
        );
        assert_eq!(
            find(RULES, WeightsCode::ALL[1]).unwrap().code,
            WeightsCode::ALL[1]
        );
        assert_eq!(RULES[0].needs(), vec!["a toy fact"]);
    }
}
