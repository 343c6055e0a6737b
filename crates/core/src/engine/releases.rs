//! What an engine does at a range of its releases, as data: a rule that depends on the engine
//! declares a [`ByEngine`] beside its `Rule` — one [`ReleaseRow`] per engine and release range,
//! each saying what the engine does there and the severity that follows, and the verdict without
//! an engine. The rows are what `explain` and docs/rules.md print, so a severity that depends on
//! the engine is read from the same data the rule runs on; the evidence for each row is in
//! evidence/evidence.toml under the rule's code.
//!
//! [`ByEngine::judge`] chooses, for the release that serves the line:
//! - a known release (`--engine vllm@0.26`, an image tag, the pin file, the server): the row
//!   that holds it (a release newer than every row: the newest row);
//! - an engine whose release is not known: every row that holds within the engine's **default
//!   window** (the releases listed in its row of the engine table). The finding takes the worst
//!   severity among them and, where the releases disagree, says which releases give which
//!   severity and how to pin the release ([`Judged::releases`]) — a gate never passes a line
//!   that fails on a release it may be served with, and never silently judges by the newest;
//! - no engine (or an engine no row names): the `no_engine` verdict, the most cautious
//!   statement that is true whatever the engine.

use super::version::{line_text, range_text, Line, ANY_PATCH};
use super::{Engine, EngineRelease, Platform};
use crate::diagnostic::Severity;

/// What one engine does at a range of its versions, and the severity that follows there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReleaseRow {
    pub engine: Engine,
    /// The first version the row holds at (inclusive); `None`: as far back as known.
    pub since: Option<Line>,
    /// The last version the row holds at (inclusive); `None`: still so at the newest release read.
    pub until: Option<Line>,
    /// The severity there; `None`: not a finding for that engine (it does not read the field).
    pub severity: Option<Severity>,
    /// What the engine does there, in a few words (for `explain` and docs/rules.md).
    pub does: &'static str,
}

impl ReleaseRow {
    /// A row that holds at every version read.
    pub const fn any_version(
        engine: Engine,
        severity: Option<Severity>,
        does: &'static str,
    ) -> Self {
        ReleaseRow {
            engine,
            since: None,
            until: None,
            severity,
            does,
        }
    }

    /// A row that holds from the line `(major, minor)` on (a change that shipped in its `.0`).
    pub const fn since(
        engine: Engine,
        (a, b): (u32, u32),
        severity: Option<Severity>,
        does: &'static str,
    ) -> Self {
        ReleaseRow::from_release(engine, (a, b, 0), severity, does)
    }

    /// A row that holds up to the line `(major, minor)`, every patch of it (the last line
    /// before a change).
    pub const fn until(
        engine: Engine,
        (a, b): (u32, u32),
        severity: Option<Severity>,
        does: &'static str,
    ) -> Self {
        ReleaseRow::until_release(engine, (a, b, ANY_PATCH), severity, does)
    }

    /// A row that holds on the lines `from` to `to`, every patch of `to`.
    pub const fn between(
        engine: Engine,
        (a, b): (u32, u32),
        (c, d): (u32, u32),
        severity: Option<Severity>,
        does: &'static str,
    ) -> Self {
        ReleaseRow {
            since: Some((a, b, 0)),
            until: Some((c, d, ANY_PATCH)),
            ..ReleaseRow::any_version(engine, severity, does)
        }
    }

    /// A row that holds from the release `v` on (patch precision: `(0, 5, 23)`).
    pub const fn from_release(
        engine: Engine,
        v: Line,
        severity: Option<Severity>,
        does: &'static str,
    ) -> Self {
        ReleaseRow {
            since: Some(v),
            ..ReleaseRow::any_version(engine, severity, does)
        }
    }

    /// A row that holds up to the release `v` (patch precision: `(0, 5, 22)`).
    pub const fn until_release(
        engine: Engine,
        v: Line,
        severity: Option<Severity>,
        does: &'static str,
    ) -> Self {
        ReleaseRow {
            until: Some(v),
            ..ReleaseRow::any_version(engine, severity, does)
        }
    }

    /// Whether the row's version range holds `v`.
    pub fn holds_at(&self, v: Line) -> bool {
        self.since.is_none_or(|s| s <= v) && self.until.is_none_or(|u| v <= u)
    }

    /// The part of `window` the row holds in, when it holds in any.
    pub fn within(&self, window: (Line, Line)) -> Option<(Line, Line)> {
        let from = self.since.map_or(window.0, |s| s.max(window.0));
        let to = self.until.map_or(window.1, |u| u.min(window.1));
        (from <= to).then_some((from, to))
    }

    /// `vllm ≥ 0.27`, `vllm ≤ 0.26`, `vllm 0.25–0.26`, `sglang`.
    pub fn versions(&self) -> String {
        let name = self.engine.as_str();
        let at = |l| line_text(self.engine, l);
        match (self.since, self.until) {
            (None, None) => name.to_string(),
            (Some(a), None) => format!("{name} ≥ {}", at(a)),
            (None, Some(b)) => format!("{name} ≤ {}", at(b)),
            (Some(a), Some(b)) => format!("{name} {}", range_text(self.engine, a, b)),
        }
    }
}

/// A rule's severities by engine and release, declared beside the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByEngine {
    /// The case of the rule these rows are about, when a rule's verdict differs by case as well
    /// as by engine (`the target is a Qwen3.5 model`): the rule picks the case from the config,
    /// the rows say what each engine does in it. `None`: the rule's one table.
    pub case: Option<&'static str>,
    /// Without an engine, or for an engine no row names: the statement true whatever the
    /// engine (`None`: nothing is said without the engine).
    pub no_engine: Option<Severity>,
    pub rows: &'static [ReleaseRow],
}

/// The severity a rule's rows give for the release that serves a line, and — when the release
/// is not known and the engine's window holds releases that disagree — which releases give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    pub severity: Severity,
    /// `error on vllm 0.28–0.33 (…); not reported on 0.34 (…): the release is not known — pin
    /// it …`: set only when the window's releases disagree.
    pub releases: Option<String>,
}

impl ByEngine {
    /// The severity for `engine` (`None`: not a finding there), with the releases that give it
    /// when the release is not known ([`Judged`]); see the module's documentation.
    pub fn judge(&self, engine: Option<&EngineRelease>) -> Option<Judged> {
        let Some(release) = engine else {
            return self.no_engine.map(Judged::plain);
        };
        let e = release.engine;
        if let Some(platform) = e.platform() {
            return self.judge_platform(release, platform);
        }
        let rows: Vec<&ReleaseRow> = self.rows.iter().filter(|r| r.engine == e).collect();
        if rows.is_empty() {
            return self.no_engine.map(Judged::plain);
        }
        if let Some(v) = release.version {
            return newest_or_holding(&rows, v).severity.map(Judged::plain);
        }
        self.across_window(e, &rows)
    }

    /// A platform's release (vllm-ascend on vLLM): its own row where one holds there, else the
    /// base engine's rows at the release it pins; with the release not known, each of its
    /// releases read in its window, the worst with the releases named when they disagree.
    fn judge_platform(&self, release: &EngineRelease, platform: &Platform) -> Option<Judged> {
        let engine = release.engine;
        if let Some(v) = release.version {
            return self.at_platform(engine, platform, v).0.map(Judged::plain);
        }
        let verdicts: Vec<(Line, Option<Severity>, String)> = window_read(engine)
            .into_iter()
            .map(|v| {
                let (s, does) = self.at_platform(engine, platform, v);
                (v, s, does)
            })
            .collect();
        let rank = |s: Option<Severity>| s.map_or(3, |s| s as u8);
        let worst = verdicts
            .iter()
            .map(|(_, s, _)| *s)
            .min_by_key(|s| rank(*s))?;
        let severity = worst?;
        if verdicts.iter().all(|(_, s, _)| *s == worst) {
            return Some(Judged::plain(severity));
        }
        let spans = |pick: &dyn Fn(Option<Severity>) -> bool| -> Vec<(Line, Line, Option<Severity>, String)> {
            let mut out: Vec<(Line, Line, Option<Severity>, String)> = Vec::new();
            for (v, s, does) in verdicts.iter().filter(|(_, s, _)| pick(*s)) {
                match out.last_mut() {
                    Some(last) if last.2 == *s && last.3 == *does => last.1 = *v,
                    _ => out.push((*v, *v, *s, does.clone())),
                }
            }
            out
        };
        let bad = spans(&|s| s == worst)
            .iter()
            .map(|(a, b, _, does)| format!("{} ({does})", range_text(engine, *a, *b)))
            .collect::<Vec<_>>()
            .join(", ");
        let others = spans(&|s| s != worst);
        let other_text = others
            .iter()
            .map(|(a, b, s, _)| format!("{} on {}", verdict(*s), range_text(engine, *a, *b)))
            .collect::<Vec<_>>()
            .join(", ");
        let pin = others
            .first()
            .map(|(a, ..)| line_text(engine, *a))
            .unwrap_or_default();
        let name = engine.as_str();
        Some(Judged {
            severity,
            releases: Some(format!(
                "{severity} on {} {bad}; {other_text}. The release that serves this line is not known: \
                 pin it with --engine {name}@{pin} or `engine = \"{name}@{pin}\"` in dflash-check.toml",
                engine.display(),
            )),
        })
    }

    /// What a platform does at its release `v`, and in a few words why: its own row that holds
    /// there, else the base engine's at the release `v` pins.
    fn at_platform(
        &self,
        engine: Engine,
        platform: &Platform,
        v: Line,
    ) -> (Option<Severity>, String) {
        if let Some(own) = self
            .rows
            .iter()
            .find(|r| r.engine == engine && r.holds_at(v))
        {
            return (own.severity, own.does.to_string());
        }
        let pin = platform.pinned(v);
        let base: Vec<&ReleaseRow> = self
            .rows
            .iter()
            .filter(|r| r.engine == platform.base)
            .collect();
        if base.is_empty() {
            return (
                self.no_engine,
                "no row for it or the engine it runs".to_string(),
            );
        }
        let row = newest_or_holding(&base, pin);
        // Without the pinned release in the text, so consecutive releases that take the same
        // base row read as one span (`0.13–0.25.1 (as the vLLM release it pins: …)`).
        let does = format!(
            "as the {} release it pins: {}",
            platform.base.display(),
            row.does
        );
        (row.severity, does)
    }

    /// The verdict across `engine`'s default window: the worst severity of the rows that hold
    /// there, with the releases named when they disagree.
    fn across_window(&self, engine: Engine, rows: &[&ReleaseRow]) -> Option<Judged> {
        let window = engine.spec().releases.window;
        let held: Vec<(&ReleaseRow, Line, Line)> = rows
            .iter()
            .filter_map(|r| r.within(window).map(|(a, b)| (*r, a, b)))
            .collect();
        if held.is_empty() {
            // No row holds in the window (every row is about older releases): the newest row.
            let newest = rows
                .iter()
                .max_by_key(|r| (r.until.is_none(), r.until, r.since))?;
            return newest.severity.map(Judged::plain);
        }
        // Error sorts first: the worst severity is the least; "not reported" (None) last.
        let rank = |s: Option<Severity>| s.map_or(3, |s| s as u8);
        let worst = held
            .iter()
            .map(|(r, _, _)| r.severity)
            .min_by_key(|s| rank(*s))?;
        let severity = worst?;
        if held.iter().all(|(r, _, _)| r.severity == worst) {
            return Some(Judged::plain(severity));
        }
        let part = |pick: &dyn Fn(Option<Severity>) -> bool| {
            held.iter()
                .filter(|(r, _, _)| pick(r.severity))
                .map(|(r, a, b)| format!("{} ({})", range_text(engine, *a, *b), r.does))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let bad = part(&|s| s == worst);
        let others = held
            .iter()
            .filter(|(r, _, _)| r.severity != worst)
            .map(|(r, a, b)| (r.severity, *a, *b))
            .collect::<Vec<_>>();
        let other_text = others
            .iter()
            .map(|(s, a, b)| format!("{} on {}", verdict(*s), range_text(engine, *a, *b)))
            .collect::<Vec<_>>()
            .join(", ");
        let pin = others.first().map(|(_, a, _)| line_text(engine, *a));
        let name = engine.as_str();
        let releases = format!(
            "{severity} on {} {bad}; {other_text}. The release that serves this line is not known: \
             pin it with --engine {name}@{} or `engine = \"{name}@{}\"` in dflash-check.toml",
            engine.display(),
            pin.clone().unwrap_or_default(),
            pin.unwrap_or_default(),
        );
        Some(Judged {
            severity,
            releases: Some(releases),
        })
    }

    /// The rows as one line each, and the verdict without an engine: `explain` prints these.
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .case
            .map(|c| format!("when {c}:"))
            .into_iter()
            .collect();
        out.extend(
            self.rows
                .iter()
                .map(|r| format!("{}: {} ({})", r.versions(), verdict(r.severity), r.does)),
        );
        out.push(format!("no engine: {}", verdict(self.no_engine)));
        out
    }
}

/// The row that holds at `v`, else the newest (a release newer than every row).
fn newest_or_holding<'r>(rows: &[&'r ReleaseRow], v: Line) -> &'r ReleaseRow {
    let newest = rows
        .iter()
        .max_by_key(|r| (r.until.is_none(), r.until, r.since))
        .expect("not empty");
    rows.iter().find(|r| r.holds_at(v)).unwrap_or(newest)
}

/// The releases of `engine` read that lie in its default window, as lines (patch 0 for a
/// release read as its line).
pub(super) fn window_read(engine: Engine) -> Vec<Line> {
    let r = &engine.spec().releases;
    let (a, b) = r.window;
    let mut lines: Vec<Line> = r
        .read
        .iter()
        .filter_map(|v| super::version::read_line(r.scheme, v))
        .map(|(x, y, z)| if z == ANY_PATCH { (x, y, 0) } else { (x, y, z) })
        .filter(|v| a <= *v && *v <= b)
        .collect();
    lines.sort();
    lines.dedup();
    lines
}

impl Judged {
    fn plain(severity: Severity) -> Judged {
        Judged {
            severity,
            releases: None,
        }
    }
}

fn verdict(s: Option<Severity>) -> &'static str {
    s.map_or("not reported", Severity::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Severity::{Error, Info, Warning};

    const ROWS: ByEngine = ByEngine {
        case: None,
        no_engine: Some(Error),
        rows: &[
            ReleaseRow::until(Engine::Vllm, (0, 26), Some(Warning), "ignores it"),
            ReleaseRow::since(Engine::Vllm, (0, 27), Some(Error), "refuses it"),
            ReleaseRow::any_version(Engine::Sglang, None, "does not read it"),
        ],
    };

    fn at(engine: Engine, v: Option<(u32, u32)>) -> Option<Severity> {
        let v = v.map(|(a, b)| (a, b, 0));
        let release = EngineRelease {
            version: v,
            ..EngineRelease::from(engine)
        };
        ROWS.judge(Some(&release)).map(|j| j.severity)
    }

    /// `--engine vllm@0.26` picks the row holding 0.26, `vllm@0.27` and later the newer one.
    #[test]
    fn a_version_picks_the_row_that_holds_it() {
        assert_eq!(at(Engine::Vllm, Some((0, 26))), Some(Warning));
        assert_eq!(at(Engine::Vllm, Some((0, 25))), Some(Warning));
        assert_eq!(at(Engine::Vllm, Some((0, 27))), Some(Error));
        assert_eq!(at(Engine::Vllm, Some((1, 2))), Some(Error));
    }

    /// An engine without a release: the worst severity of the rows that hold in its default
    /// window, with the releases named when they disagree.
    #[test]
    fn an_unknown_release_is_judged_across_the_window() {
        let (a, b) = Engine::Vllm.spec().releases.window;
        assert!(a < b, "vLLM's window spans several releases");
        // Every row of the window says error: an error, no release note.
        let j = ROWS.judge(Some(&Engine::Vllm.into())).unwrap();
        assert_eq!((j.severity, j.releases), (Error, None));
        // An error up to a release inside the window, nothing after it: an error that names
        // the releases and how to pin.
        let split = (a.0, a.1 + 1, 0);
        let rows: &'static [ReleaseRow] = Box::leak(Box::new([
            ReleaseRow::until(Engine::Vllm, (a.0, a.1), Some(Error), "raises"),
            ReleaseRow::since(Engine::Vllm, (split.0, split.1), None, "fixed"),
        ]));
        let by = ByEngine {
            case: None,
            no_engine: Some(Info),
            rows,
        };
        let j = by.judge(Some(&Engine::Vllm.into())).unwrap();
        assert_eq!(j.severity, Error);
        let note = j.releases.unwrap();
        assert!(note.starts_with("error on vLLM"), "{note}");
        assert!(
            note.contains("(raises)") && note.contains("not reported on"),
            "{note}"
        );
        assert!(
            note.contains(&format!("--engine vllm@{}", line_text(Engine::Vllm, split))),
            "{note}"
        );
        // A known release gets the row that holds it, with no note.
        let fixed = EngineRelease {
            version: Some(b),
            ..EngineRelease::from(Engine::Vllm)
        };
        assert_eq!(by.judge(Some(&fixed)), None);
        // Rows that all end before the window: the newest row.
        let old: &'static [ReleaseRow] = Box::leak(Box::new([ReleaseRow::until(
            Engine::Vllm,
            (0, 1),
            Some(Warning),
            "old",
        )]));
        let by = ByEngine {
            case: None,
            no_engine: None,
            rows: old,
        };
        assert_eq!(
            by.judge(Some(&Engine::Vllm.into())).map(|j| j.severity),
            Some(Warning)
        );
    }

    /// No engine: the rule's statement that holds whatever the engine; an engine no row names
    /// gets the same; a row may say "not a finding" for an engine.
    #[test]
    fn no_engine_is_the_statement_true_for_every_engine() {
        assert_eq!(ROWS.judge(None).map(|j| j.severity), Some(Error));
        assert_eq!(at(Engine::Sglang, None), None);
        assert_eq!(at(Engine::LlamaCpp, None), Some(Error));
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
}
