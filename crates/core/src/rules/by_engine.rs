//! Severities that follow the engine and its version, as data (issue 22).
//!
//! Where what a rule catches is refused by one engine, ignored by another, or refused only from
//! some release on, the rule declares a [`ByEngine`] beside its `Rule`: one [`EngineRow`] per
//! engine and version range, each saying what the engine does there and the severity that
//! follows, and the verdict without an engine. [`ByEngine::pick`] chooses: `--engine vllm@0.26`
//! the row whose versions hold 0.26, `--engine vllm` the engine's newest row, no engine (or an
//! engine no row names) the `no_engine` verdict — the most cautious statement that is true
//! whatever the engine. The rows are what `explain` and docs/rules.md print, so a severity that
//! depends on the engine is read from the same data the rule runs on; the evidence for each row
//! is in evidence/evidence.toml under the rule's code.

use super::{Engine, LintCode};
use crate::diagnostic::Severity;

/// `(major, minor)`, as `--engine vllm@0.26` gives it.
pub type Version = (u32, u32);

/// What one engine does at a range of its versions, and the severity that follows there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineRow {
    pub engine: Engine,
    /// The first version the row holds at (inclusive); `None`: as far back as known.
    pub since: Option<Version>,
    /// The last version the row holds at (inclusive); `None`: still so at the newest release read.
    pub until: Option<Version>,
    /// The severity there; `None`: not a finding for that engine (it does not read the field).
    pub severity: Option<Severity>,
    /// What the engine does there, in a few words (for `explain` and docs/rules.md).
    pub does: &'static str,
}

impl EngineRow {
    /// A row that holds at every version read.
    pub const fn any_version(
        engine: Engine,
        severity: Option<Severity>,
        does: &'static str,
    ) -> Self {
        EngineRow {
            engine,
            since: None,
            until: None,
            severity,
            does,
        }
    }

    /// A row that holds from `v` on (a change that shipped in `v`).
    pub const fn since(
        engine: Engine,
        v: Version,
        severity: Option<Severity>,
        does: &'static str,
    ) -> Self {
        EngineRow {
            since: Some(v),
            ..EngineRow::any_version(engine, severity, does)
        }
    }

    /// A row that holds up to `v` (the last release before a change).
    pub const fn until(
        engine: Engine,
        v: Version,
        severity: Option<Severity>,
        does: &'static str,
    ) -> Self {
        EngineRow {
            until: Some(v),
            ..EngineRow::any_version(engine, severity, does)
        }
    }

    /// Whether the row's version range holds `v`.
    pub fn holds_at(&self, v: Version) -> bool {
        self.since.is_none_or(|s| s <= v) && self.until.is_none_or(|u| v <= u)
    }

    /// `vllm ≥ 0.27`, `vllm ≤ 0.26`, `vllm 0.25–0.26`, `sglang`.
    pub fn versions(&self) -> String {
        let name = self.engine.as_str();
        match (self.since, self.until) {
            (None, None) => name.to_string(),
            (Some((a, b)), None) => format!("{name} ≥ {a}.{b}"),
            (None, Some((a, b))) => format!("{name} ≤ {a}.{b}"),
            (Some((a, b)), Some((c, d))) => format!("{name} {a}.{b}–{c}.{d}"),
        }
    }
}

/// A rule's severities by engine and version, declared beside the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByEngine {
    /// Without an engine, or for an engine no row names: the statement true whatever the
    /// engine (`None`: nothing is said without the engine).
    pub no_engine: Option<Severity>,
    pub rows: &'static [EngineRow],
}

impl ByEngine {
    /// The severity for `engine` at `version`: the row holding the version; the engine's newest
    /// row when no version is given or no row holds it (a release not read is assumed to behave
    /// as the newest read); `no_engine` without an engine or for an engine no row names.
    pub fn pick(&self, engine: Option<Engine>, version: Option<Version>) -> Option<Severity> {
        let Some(engine) = engine else {
            return self.no_engine;
        };
        let rows = || self.rows.iter().filter(move |r| r.engine == engine);
        let newest = rows().max_by_key(|r| (r.until.is_none(), r.until, r.since));
        let row = version
            .and_then(|v| rows().find(|r| r.holds_at(v)))
            .or(newest);
        match row {
            Some(r) => r.severity,
            None => self.no_engine,
        }
    }

    /// The rows as one line each, and the verdict without an engine: `explain` prints these.
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .rows
            .iter()
            .map(|r| format!("{}: {} ({})", r.versions(), verdict(r.severity), r.does))
            .collect();
        out.push(format!("no engine: {}", verdict(self.no_engine)));
        out
    }
}

fn verdict(s: Option<Severity>) -> &'static str {
    s.map_or("not reported", Severity::as_str)
}

/// The severities by engine of every rule that declares them.
pub fn all() -> impl Iterator<Item = (LintCode, &'static ByEngine)> {
    [
        super::mask::BY_ENGINE,
        super::attention::BY_ENGINE,
        super::variants::BY_ENGINE,
        super::shape::BY_ENGINE,
        super::eagle::BY_ENGINE,
        super::quant::BY_ENGINE,
        super::layers::BY_ENGINE,
        super::export::BY_ENGINE,
        super::engine::BY_ENGINE,
    ]
    .into_iter()
    .flatten()
    .copied()
}

/// The severities by engine of `code`'s rule, when it declares them.
pub fn of(code: LintCode) -> Option<&'static ByEngine> {
    all().find(|(c, _)| *c == code).map(|(_, b)| b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Severity::{Error, Info, Warning};

    const ROWS: ByEngine = ByEngine {
        no_engine: Some(Error),
        rows: &[
            EngineRow {
                engine: Engine::Vllm,
                since: None,
                until: Some((0, 26)),
                severity: Some(Warning),
                does: "ignores it",
            },
            EngineRow {
                engine: Engine::Vllm,
                since: Some((0, 27)),
                until: None,
                severity: Some(Error),
                does: "refuses it",
            },
            EngineRow {
                engine: Engine::Sglang,
                since: None,
                until: None,
                severity: None,
                does: "does not read it",
            },
        ],
    };

    /// `--engine vllm@0.26` picks the row holding 0.26, `vllm@0.27` and later the newer one.
    #[test]
    fn a_version_picks_the_row_that_holds_it() {
        assert_eq!(ROWS.pick(Some(Engine::Vllm), Some((0, 26))), Some(Warning));
        assert_eq!(ROWS.pick(Some(Engine::Vllm), Some((0, 25))), Some(Warning));
        assert_eq!(ROWS.pick(Some(Engine::Vllm), Some((0, 27))), Some(Error));
        assert_eq!(ROWS.pick(Some(Engine::Vllm), Some((1, 2))), Some(Error));
    }

    /// `--engine vllm` without a version: the newest row (the open-ended one).
    #[test]
    fn an_engine_without_a_version_picks_its_newest_row() {
        assert_eq!(ROWS.pick(Some(Engine::Vllm), None), Some(Error));
        // Order does not matter: the newest is found, not the last written.
        const REVERSED: ByEngine = ByEngine {
            no_engine: Some(Info),
            rows: &[ROWS.rows[1], ROWS.rows[0]],
        };
        assert_eq!(REVERSED.pick(Some(Engine::Vllm), None), Some(Error));
        // Rows that all end: the one ending last.
        const CLOSED: ByEngine = ByEngine {
            no_engine: None,
            rows: &[
                EngineRow {
                    until: Some((0, 20)),
                    severity: Some(Info),
                    ..ROWS.rows[0]
                },
                EngineRow {
                    since: Some((0, 21)),
                    until: Some((0, 24)),
                    ..ROWS.rows[0]
                },
            ],
        };
        assert_eq!(CLOSED.pick(Some(Engine::Vllm), None), Some(Warning));
        // A version after every row: the newest row, as for no version.
        assert_eq!(
            CLOSED.pick(Some(Engine::Vllm), Some((0, 30))),
            Some(Warning)
        );
    }

    /// No engine: the rule's statement that holds whatever the engine; an engine no row names
    /// gets the same; a row may say "not a finding" for an engine.
    #[test]
    fn no_engine_is_the_statement_true_for_every_engine() {
        assert_eq!(ROWS.pick(None, None), Some(Error));
        assert_eq!(ROWS.pick(None, Some((0, 26))), Some(Error));
        assert_eq!(ROWS.pick(Some(Engine::Sglang), None), None);
        const VLLM_ONLY: ByEngine = ByEngine {
            no_engine: Some(Info),
            rows: ROWS.rows.split_at(2).0,
        };
        assert_eq!(VLLM_ONLY.pick(Some(Engine::Sglang), None), Some(Info));
    }

    #[test]
    fn rows_read_as_lines() {
        assert_eq!(
            ROWS.lines(),
            [
                "vllm ≤ 0.26: warning (ignores it)",
                "vllm ≥ 0.27: error (refuses it)",
                "sglang: not reported (does not read it)",
                "no engine: error",
            ]
        );
    }

    /// Every declared table belongs to a rule, once, and every row of an engine says something.
    #[test]
    fn every_table_belongs_to_one_rule() {
        let mut seen = std::collections::BTreeSet::new();
        for (code, by) in all() {
            assert!(seen.insert(code.as_str()), "{code:?} declared twice");
            assert!(!by.rows.is_empty(), "{code:?}: no rows");
            for r in by.rows {
                assert!(!r.does.is_empty(), "{code:?}: say what {:?} does", r.engine);
                if let (Some(s), Some(u)) = (r.since, r.until) {
                    assert!(s <= u, "{code:?}: {s:?} after {u:?}");
                }
            }
            // The code has a rule (lookup panics otherwise).
            let _ = super::super::rule(code);
        }
    }
}
