//! The pure arithmetic of `acceptance`: which engine exported the metrics, which model to read,
//! and the window's deltas (vLLM counters) or samples (SGLang gauges); also the [`Shape`] the
//! cause rules sort the per-position acceptance into ([`position::shape`](super::position::shape)).
//! No I/O here: every function takes parsed scrapes and returns data or an [`Error`], so the
//! edge cases (idle, reset, several models) are unit-tested without a server.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::metrics::{Exposition, Sample};
use crate::engine::Engine;
use crate::{Error, Result};

pub use crate::engine::table::{
    SGLANG_ACCEPT_LENGTH, SGLANG_ACCEPT_RATE, SGLANG_GENERATION_TOKENS, VLLM_ACCEPTED, VLLM_DRAFTS,
    VLLM_DRAFT_TOKENS, VLLM_PER_POS,
};

/// Whether `acceptance` reads samples called `name` (the parser stores only these): the series
/// the engine table lists for each engine's metrics.
pub fn reads(name: &str) -> bool {
    Engine::all()
        .filter_map(|e| e.spec().metrics)
        .any(|m| m.reads.iter().any(|p| name.starts_with(p)))
}

/// The label every engine puts the served model's name in.
pub const MODEL_LABEL: &str = "model_name";

/// Which engine exported `e`, from its metric names (the engine table's metrics rows).
pub fn detect_engine(e: &Exposition, origin: &str) -> Result<Engine> {
    if let Some(engine) = Engine::exporting(|name| e.has(name)) {
        return Ok(engine);
    }
    let rows = || Engine::all().filter_map(|en| en.spec().metrics.map(|m| (en, m)));
    if let Some((engine, m)) = rows().find(|(_, m)| e.has_namespace(m.namespace)) {
        return Err(Error::new(format!(
            "{origin} is a server of {} without speculative-decoding metrics (no {})",
            engine.display(),
            m.marker
        ))
        .with_hint(m.enable_hint));
    }
    let known: Vec<String> = rows()
        .map(|(en, m)| format!("{} ({}*)", en.display(), m.reads[0]))
        .collect();
    Err(Error::new(format!(
        "{origin} exports no {} acceptance metrics",
        known.join(" or ")
    ))
    .with_hint("point the URL at the engine's own /metrics, not at a proxy or another exporter"))
}

/// The series whose `model_name` label names the models `engine` serves.
fn model_metric(engine: Engine) -> &'static str {
    engine.spec().metrics.map_or("", |m| m.marker)
}

/// The model names on the engine's acceptance metrics, sorted. Empty when the series carry no
/// `model_name` label.
pub fn models(e: &Exposition, engine: Engine) -> Vec<String> {
    let names: BTreeSet<String> = e
        .named(model_metric(engine))
        .filter_map(|s| s.label(MODEL_LABEL).map(str::to_string))
        .collect();
    names.into_iter().collect()
}

/// The model the check reads: `requested` (which must be served), or the only one served.
/// Several models and no `--model-name` is an error listing them.
pub fn select_model(
    e: &Exposition,
    engine: Engine,
    requested: Option<&str>,
    origin: &str,
) -> Result<Option<String>> {
    let found = models(e, engine);
    match requested {
        Some(name) if found.iter().any(|m| m == name) => Ok(Some(name.to_string())),
        Some(name) => Err(Error::new(format!(
            "--model-name `{name}` is not served at {origin}; {}",
            list_models(&found)
        ))),
        None if found.len() > 1 => Err(Error::new(format!(
            "{origin} serves {} models; {}",
            found.len(),
            list_models(&found)
        ))
        .with_hint("pick one with --model-name NAME")),
        None => Ok(found.into_iter().next()),
    }
}

fn list_models(found: &[String]) -> String {
    if found.is_empty() {
        return "its acceptance metrics carry no model_name label".to_string();
    }
    let quoted: Vec<String> = found.iter().map(|m| format!("`{m}`")).collect();
    format!("models found: {}", quoted.join(", "))
}

fn of_model<'a>(s: &'a Sample, model: Option<&'a str>) -> bool {
    model.is_none_or(|m| s.label(MODEL_LABEL) == Some(m))
}

/// One series' labels (name → value).
type Labels = BTreeMap<String, String>;

/// vLLM's counters for one model at one scrape, summed over `engine` replicas (data-parallel
/// engines count separately).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    pub drafts: f64,
    pub draft_tokens: f64,
    pub accepted: f64,
    /// `position` label (from 0) → accepted tokens at that draft position.
    pub per_position: BTreeMap<u32, f64>,
    pub engines: BTreeSet<String>,
    /// Every series read, by its display name, for counter-reset detection.
    series: BTreeMap<String, f64>,
    /// `<counter>_created` timestamps (`prometheus_client` exports them): a counter created
    /// again between scrapes was reset even if it has already grown past its old value.
    created: BTreeMap<String, f64>,
    /// The label sets summed into each total, keyed by (metric, position), so that an
    /// impossible total can be named by the series it came from.
    sources: BTreeMap<(&'static str, Option<u32>), Vec<Labels>>,
}

impl Counters {
    /// The series behind one total, for messages: the sample's own name when one series was
    /// read, else the labels they share and those that differ (`m{model_name="x"} summed over
    /// engine="0", engine="1"`).
    fn describe(&self, metric: &'static str, position: Option<u32>) -> String {
        let Some(sets) = self.sources.get(&(metric, position)) else {
            return metric.to_string();
        };
        let named = |labels: &Labels| {
            Sample {
                name: metric.to_string(),
                labels: labels.clone(),
                value: 0.0,
            }
            .display_name()
        };
        match sets.as_slice() {
            [one] => named(one),
            [first, rest @ ..] => {
                let common: Labels = first
                    .iter()
                    .filter(|(k, v)| rest.iter().all(|o| o.get(*k) == Some(*v)))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let differing: Vec<String> = sets
                    .iter()
                    .map(|set| {
                        let own: Vec<String> = set
                            .iter()
                            .filter(|(k, _)| !common.contains_key(*k))
                            .map(|(k, v)| format!("{k}=\"{v}\""))
                            .collect();
                        own.join(",")
                    })
                    .collect();
                format!("{} summed over {}", named(&common), differing.join(", "))
            }
            [] => metric.to_string(),
        }
    }

    /// Records a `<counter>_created` sample of a counter this check reads, for reset detection.
    fn note_created(&mut self, s: &Sample) {
        let Some(base) = s.name.strip_suffix("_created") else {
            return;
        };
        let counter = format!("{base}_total");
        if [VLLM_DRAFTS, VLLM_DRAFT_TOKENS, VLLM_ACCEPTED, VLLM_PER_POS].contains(&counter.as_str())
        {
            let mut key = s.clone();
            key.name = counter;
            self.created.insert(key.display_name(), s.value);
        }
    }

    /// Each replica's counter is finite, but their sum can still overflow (two engines at
    /// 1.7e308): an infinite total would make the window's delta NaN.
    fn check_totals(&self, origin: &str) -> Result<()> {
        let totals = [
            (VLLM_DRAFTS, None, self.drafts),
            (VLLM_DRAFT_TOKENS, None, self.draft_tokens),
            (VLLM_ACCEPTED, None, self.accepted),
        ];
        let positions = self
            .per_position
            .iter()
            .map(|(&p, &v)| (VLLM_PER_POS, Some(p), v));
        for (metric, position, total) in totals.into_iter().chain(positions) {
            if !total.is_finite() {
                return Err(impossible(
                    origin,
                    &format!(
                        "{} is {total}: each series is finite but their sum is not a count",
                        self.describe(metric, position)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Reads vLLM's counters for `model` from one scrape.
pub fn vllm_counters(e: &Exposition, model: Option<&str>, origin: &str) -> Result<Counters> {
    let for_model = model
        .map(|m| format!(" for model `{m}`"))
        .unwrap_or_default();
    if !e.named(VLLM_DRAFTS).any(|s| of_model(s, model)) {
        return Err(Error::new(format!(
            "{origin} no longer exports {VLLM_DRAFTS}{for_model}"
        ))
        .with_hint("the server restarted or changed during the window; measure again"));
    }
    let mut c = Counters::default();
    let mut seen = BTreeSet::new();
    for s in e.samples.iter().filter(|s| of_model(s, model)) {
        let (metric, position) = match s.name.as_str() {
            VLLM_DRAFTS => (VLLM_DRAFTS, None),
            VLLM_DRAFT_TOKENS => (VLLM_DRAFT_TOKENS, None),
            VLLM_ACCEPTED => (VLLM_ACCEPTED, None),
            VLLM_PER_POS => {
                let label = s.label("position").unwrap_or_default();
                let pos: u32 = label.parse().map_err(|_| {
                    Error::new(format!(
                        "{origin}: {} has position label `{label}`, not a number",
                        s.display_name()
                    ))
                })?;
                (VLLM_PER_POS, Some(pos))
            }
            _ => {
                c.note_created(s);
                continue;
            }
        };
        if !s.value.is_finite() || s.value < 0.0 {
            return Err(impossible(
                origin,
                &format!(
                    "counter {} has the value {}, not a count (a finite number of events, 0 or more)",
                    s.display_name(),
                    s.value
                ),
            ));
        }
        let slot = match (metric, position) {
            (VLLM_DRAFTS, _) => &mut c.drafts,
            (VLLM_DRAFT_TOKENS, _) => &mut c.draft_tokens,
            (VLLM_ACCEPTED, _) => &mut c.accepted,
            (_, pos) => c.per_position.entry(pos.unwrap_or(0)).or_insert(0.0),
        };
        *slot += s.value;
        c.sources
            .entry((metric, position))
            .or_default()
            .push(s.labels.clone());
        seen.insert(s.name.as_str());
        if let Some(engine) = s.label("engine") {
            c.engines.insert(engine.to_string());
        }
        c.series.insert(s.display_name(), s.value);
    }
    c.check_totals(origin)?;
    for needed in [VLLM_DRAFTS, VLLM_DRAFT_TOKENS, VLLM_ACCEPTED] {
        if !seen.contains(needed) {
            return Err(Error::new(format!(
                "{origin} exports {VLLM_DRAFTS} but not {needed}{for_model}"
            ))
            .with_hint("the metrics are incomplete: is this vLLM's own /metrics endpoint?"));
        }
    }
    Ok(c)
}

/// Accepted tokens at one draft position over the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PositionAcceptance {
    /// 1-based draft position (vLLM's `position` label + 1).
    pub position: u32,
    /// Accepted tokens at this position in the window.
    pub accepted: f64,
    /// accepted / drafts: how often a draft got at least this far.
    pub acceptance: f64,
}

/// vLLM's counters over the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CounterWindow {
    /// The engine whose counters they are.
    pub engine: Engine,
    pub drafts: f64,
    pub draft_tokens: f64,
    pub accepted_tokens: f64,
    /// K, from the number of positions (or draft tokens per draft when positions are absent).
    pub num_speculative_tokens: Option<u32>,
    /// 1 + Δaccepted / Δdrafts (the bonus token included, as vLLM logs it).
    pub acceptance_length: f64,
    /// Δaccepted / Δdraft_tokens.
    pub draft_acceptance_rate: Option<f64>,
    pub per_position: Vec<PositionAcceptance>,
    /// The `engine` label values summed over.
    pub engines: Vec<String>,
}

/// The window between two scrapes. A counter that went down (or was created again) is a reset:
/// an error, because a delta across a restart means nothing.
pub fn vllm_window(
    engine: Engine,
    before: &Counters,
    after: &Counters,
    origin: &str,
) -> Result<CounterWindow> {
    check_no_reset(before, after, origin)?;
    let drafts = after.drafts - before.drafts;
    let draft_tokens = after.draft_tokens - before.draft_tokens;
    let accepted = after.accepted - before.accepted;
    if drafts <= 0.0 {
        return Err(Error::new(format!(
            "no drafts at {origin} during the window: the server was idle ({VLLM_DRAFTS} stayed at {})",
            after.drafts
        ))
        .with_hint("send traffic while measuring, or lengthen --window"));
    }
    if accepted > draft_tokens {
        return Err(impossible(
            origin,
            &format!(
                "{} grew by {accepted} during the window but {} only by {draft_tokens}: more tokens accepted than drafted",
                after.describe(VLLM_ACCEPTED, None),
                after.describe(VLLM_DRAFT_TOKENS, None)
            ),
        ));
    }
    // A position first exported during the window counts from 0 (prometheus_client creates a
    // labelled series at its first increment). But when the first scrape has no per-position
    // counter at all, the end's totals are not deltas over the window (the metrics changed
    // under us): counting them from 0 showed 170 accepted in 100 drafts as "170%". The
    // per-position shape is then not measured; the totals above still are.
    let per_position_known = !before.per_position.is_empty() || after.per_position.is_empty();
    let per_position: Vec<PositionAcceptance> = after
        .per_position
        .iter()
        .filter(|_| per_position_known)
        .map(|(&label, &new)| {
            let old = before.per_position.get(&label).copied().unwrap_or(0.0);
            let accepted = new - old;
            PositionAcceptance {
                position: label.saturating_add(1),
                accepted,
                acceptance: accepted / drafts,
            }
        })
        .collect();
    // Each draft reaches a position at most once: more accepted there than drafts is above 100 %.
    if let Some(p) = per_position.iter().find(|p| p.accepted > drafts) {
        return Err(impossible(
            origin,
            &format!(
                "{} grew by {} during the window, in {drafts} drafts: position {} accepted in {} of drafts",
                after.describe(VLLM_PER_POS, Some(p.position - 1)),
                p.accepted,
                p.position,
                super::text::pct(p.acceptance)
            ),
        ));
    }
    let num_speculative_tokens = if per_position.is_empty() {
        let k = (draft_tokens / drafts).round();
        (k >= 1.0 && k <= f64::from(u32::MAX)).then_some(k as u32)
    } else {
        u32::try_from(per_position.len()).ok()
    };
    Ok(CounterWindow {
        engine,
        drafts,
        draft_tokens,
        accepted_tokens: accepted,
        num_speculative_tokens,
        acceptance_length: 1.0 + accepted / drafts,
        draft_acceptance_rate: (draft_tokens > 0.0).then(|| accepted / draft_tokens),
        per_position,
        engines: after.engines.iter().cloned().collect(),
    })
}

/// A counter lower at the end of the window than at its start, gone, or created again.
fn check_no_reset(before: &Counters, after: &Counters, origin: &str) -> Result<()> {
    for (series, old) in &before.series {
        match after.series.get(series) {
            Some(new) if new < old => {
                return Err(reset(origin, &format!("{series} went from {old} to {new}")))
            }
            None => {
                return Err(reset(
                    origin,
                    &format!("{series} was exported at the start of the window and not at the end"),
                ))
            }
            _ => {}
        }
    }
    for (series, old) in &before.created {
        if let Some(new) = after.created.get(series) {
            if new != old {
                return Err(reset(
                    origin,
                    &format!("{series} was created again during the window (its _created timestamp changed)"),
                ));
            }
        }
    }
    Ok(())
}

/// A value no engine can export (NaN, infinite, negative, more accepted than drafted, above
/// 100 %): the gate must not compare it with a threshold. `what` names the series.
fn impossible(origin: &str, what: &str) -> Error {
    Error::new(format!("{origin} exports a value that cannot be: {what}")).with_hint(
        "the numbers cannot be measured from this endpoint: check that the URL is the engine's own /metrics (not a proxy or an aggregator that sums several servers), look at the named series with `curl -s URL | grep NAME`, and report it to the engine if it is",
    )
}

fn reset(origin: &str, what: &str) -> Error {
    Error::new(format!(
        "counter reset at {origin} during the window: {what}; the server restarted (or its metrics were reset), so the window's deltas mean nothing"
    ))
    .with_hint("measure again once the server is up and serving traffic")
}

/// SGLang's acceptance gauges for one model at one scrape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GaugeScrape {
    /// `sglang:spec_accept_length` of every series (one per scheduler rank) that has seen a
    /// speculative batch; SGLang sets 0 before the first one.
    pub accept_length: Vec<f64>,
    pub accept_rate: Vec<f64>,
    /// `sglang:generation_tokens_total`, summed, when exported.
    pub generation_tokens: Option<f64>,
    /// How many series the gauge has for this model (ranks), zero ones included.
    pub series: usize,
}

/// Reads SGLang's gauges for `model` from one scrape. A value no scheduler can set (NaN,
/// infinite or negative; a rate above 1) is an error naming its series.
pub fn sglang_scrape(e: &Exposition, model: Option<&str>, origin: &str) -> Result<GaugeScrape> {
    let mut s = GaugeScrape::default();
    for sample in e.samples.iter().filter(|x| of_model(x, model)) {
        let v = sample.value;
        let (what, max) = match sample.name.as_str() {
            SGLANG_ACCEPT_LENGTH => ("gauge", f64::INFINITY),
            SGLANG_ACCEPT_RATE => ("rate", 1.0),
            SGLANG_GENERATION_TOKENS => ("counter", f64::INFINITY),
            _ => continue,
        };
        if !v.is_finite() || v < 0.0 || v > max {
            let range = if max.is_finite() {
                "a finite number from 0 to 1"
            } else {
                "a finite number, 0 or more"
            };
            return Err(impossible(
                origin,
                &format!(
                    "{what} {} has the value {v}, not {range}",
                    sample.display_name()
                ),
            ));
        }
        match sample.name.as_str() {
            SGLANG_ACCEPT_LENGTH => {
                s.series += 1;
                // 0 until the rank's first speculative batch.
                if v > 0.0 {
                    s.accept_length.push(v);
                }
            }
            SGLANG_ACCEPT_RATE if v > 0.0 => s.accept_rate.push(v),
            SGLANG_GENERATION_TOKENS => {
                let total = s.generation_tokens.get_or_insert(0.0);
                *total += v;
                if !total.is_finite() {
                    return Err(impossible(
                        origin,
                        &format!("{SGLANG_GENERATION_TOKENS} summed over its series is {total}: each series is finite but their sum is not a count"),
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(s)
}

/// Mean, minimum and maximum of sampled values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// How many values (scrapes × series).
    pub samples: usize,
}

impl Stats {
    pub fn of(values: &[f64]) -> Option<Stats> {
        if values.is_empty() {
            return None;
        }
        let sum: f64 = values.iter().sum();
        Some(Stats {
            mean: sum / values.len() as f64,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            samples: values.len(),
        })
    }
}

/// SGLang's gauges over the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GaugeWindow {
    /// The engine whose gauges they are.
    pub engine: Engine,
    pub scrapes: usize,
    /// The gauge's series for this model (scheduler ranks).
    pub series: usize,
    pub accept_length: Stats,
    pub accept_rate: Option<Stats>,
    /// Generated tokens during the window, when SGLang exports the counter.
    pub generation_tokens: Option<f64>,
    /// Every sample had the same value and no token counter proves traffic: the gauge may be
    /// holding the last batch from before the window.
    pub static_gauge: bool,
}

/// The window of SGLang samples (in scrape order).
pub fn sglang_window(engine: Engine, scrapes: &[GaugeScrape], origin: &str) -> Result<GaugeWindow> {
    let generation_tokens = match (
        scrapes.first().and_then(|s| s.generation_tokens),
        scrapes.last().and_then(|s| s.generation_tokens),
    ) {
        (Some(first), Some(last)) => Some(last - first),
        _ => None,
    };
    // Counter resets between any two scrapes.
    let mut previous: Option<f64> = None;
    for s in scrapes {
        if let (Some(old), Some(new)) = (previous, s.generation_tokens) {
            if new < old {
                return Err(reset(
                    origin,
                    &format!("{SGLANG_GENERATION_TOKENS} went from {old} to {new}"),
                ));
            }
        }
        previous = s.generation_tokens.or(previous);
    }
    if generation_tokens == Some(0.0) {
        return Err(Error::new(format!(
            "no tokens generated at {origin} during the window: the server was idle ({SGLANG_GENERATION_TOKENS} did not move), so {SGLANG_ACCEPT_LENGTH} only repeats the last batch before it"
        ))
        .with_hint("send traffic while measuring, or lengthen --window"));
    }
    let lengths: Vec<f64> = scrapes
        .iter()
        .flat_map(|s| s.accept_length.iter().copied())
        .collect();
    let Some(accept_length) = Stats::of(&lengths) else {
        return Err(Error::new(format!(
            "{SGLANG_ACCEPT_LENGTH} at {origin} was 0 in every sample: no speculative batch ran during the window"
        ))
        .with_hint("send traffic while measuring; if it is busy, speculative decoding is not running (--speculative-algorithm)"));
    };
    let rates: Vec<f64> = scrapes
        .iter()
        .flat_map(|s| s.accept_rate.iter().copied())
        .collect();
    Ok(GaugeWindow {
        engine,
        scrapes: scrapes.len(),
        series: scrapes.iter().map(|s| s.series).max().unwrap_or(0),
        static_gauge: generation_tokens.is_none()
            && lengths.len() > 1
            && accept_length.min == accept_length.max,
        accept_length,
        accept_rate: Stats::of(&rates),
        generation_tokens,
    })
}

/// What the per-position acceptance (or, without it, the acceptance length) points at.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// Position 1 is already rarely accepted: the drafter's first guess is wrong.
    FirstPositionLow {
        /// Position 1's acceptance, or (SGLang) an upper bound on it: acceptance length − 1.
        value: f64,
        /// Whether `value` is measured (vLLM) or bounded from the acceptance length (SGLang).
        measured: bool,
    },
    /// Healthy early positions, then about zero from `position` on.
    Cliff {
        /// The first near-zero position (1-based).
        position: u32,
        /// Acceptance at the position before it.
        before: f64,
        /// Acceptance at `position`.
        at: f64,
    },
    /// Neither signature.
    Gradual,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acceptance::metrics::parse;

    /// One series per (model, engine, drafts, accepted per position), families grouped as a
    /// real exposition groups them.
    fn vllm_series(series: &[(&str, u32, f64, &[f64])], k: usize) -> String {
        let mut t = String::new();
        for (name, f) in [
            (VLLM_DRAFTS, 0usize),
            (VLLM_DRAFT_TOKENS, 1),
            (VLLM_ACCEPTED, 2),
        ] {
            t.push_str(&format!("# TYPE {name} counter\n"));
            for (model, engine, drafts, per_pos) in series {
                let v = match f {
                    0 => *drafts,
                    1 => drafts * k as f64,
                    _ => per_pos.iter().sum(),
                };
                t.push_str(&format!(
                    "{name}{{engine=\"{engine}\",model_name=\"{model}\"}} {v}\n"
                ));
            }
        }
        t.push_str(&format!("# TYPE {VLLM_PER_POS} counter\n"));
        for (model, engine, _, per_pos) in series {
            for (i, v) in per_pos.iter().enumerate() {
                t.push_str(&format!(
                    "{VLLM_PER_POS}{{engine=\"{engine}\",model_name=\"{model}\",position=\"{i}\"}} {v}\n"
                ));
            }
        }
        t
    }

    fn vllm_text(model: &str, engines: &[(u32, f64, &[f64])], k: usize) -> String {
        let series: Vec<(&str, u32, f64, &[f64])> =
            engines.iter().map(|&(e, d, p)| (model, e, d, p)).collect();
        vllm_series(&series, k)
    }

    fn counters(text: &str) -> Counters {
        vllm_counters(&parse(text, "u").unwrap(), None, "u").unwrap()
    }

    /// The window uses deltas, sums engine replicas, and computes AL, rate and per-position
    /// acceptance as vLLM's own log line does.
    #[test]
    fn vllm_window_is_deltas_summed_over_engines() {
        let before = counters(&vllm_text(
            "m",
            &[
                (0, 100.0, &[90.0, 80.0, 70.0]),
                (1, 50.0, &[50.0, 50.0, 50.0]),
            ],
            3,
        ));
        let after = counters(&vllm_text(
            "m",
            &[
                (0, 200.0, &[170.0, 140.0, 110.0]),
                (1, 150.0, &[130.0, 110.0, 90.0]),
            ],
            3,
        ));
        let w = vllm_window(Engine::Vllm, &before, &after, "u").unwrap();
        // Δdrafts = 100 + 100; Δper_pos = [80+80, 60+60, 40+40]; Δaccepted = 360.
        assert_eq!(w.drafts, 200.0);
        assert_eq!(w.accepted_tokens, 360.0);
        assert_eq!(w.acceptance_length, 1.0 + 360.0 / 200.0);
        assert_eq!(w.draft_acceptance_rate, Some(360.0 / 600.0));
        assert_eq!(w.num_speculative_tokens, Some(3));
        let acc: Vec<f64> = w.per_position.iter().map(|p| p.acceptance).collect();
        assert_eq!(acc, vec![0.8, 0.6, 0.4]);
        assert_eq!(w.per_position[0].position, 1);
        assert_eq!(w.engines, vec!["0", "1"]);
    }

    /// No drafts in the window is an "idle" error, never a division by zero.
    #[test]
    fn idle_window_is_an_error() {
        let c = counters(&vllm_text("m", &[(0, 100.0, &[90.0])], 1));
        let err = vllm_window(Engine::Vllm, &c, &c, "http://h/metrics").unwrap_err();
        assert!(err.message.contains("idle"), "{err}");
    }

    /// A counter that went down, or a series that vanished, is a reset error.
    #[test]
    fn counter_reset_is_an_error() {
        let before = counters(&vllm_text("m", &[(0, 100.0, &[90.0])], 1));
        let after = counters(&vllm_text("m", &[(0, 10.0, &[9.0])], 1));
        let err = vllm_window(Engine::Vllm, &before, &after, "u").unwrap_err();
        assert!(err.message.contains("counter reset"), "{err}");
        let other_engine = counters(&vllm_text("m", &[(1, 200.0, &[190.0])], 1));
        let err = vllm_window(Engine::Vllm, &before, &other_engine, "u").unwrap_err();
        assert!(err.message.contains("not at the end"), "{err}");
    }

    /// A changed `_created` timestamp is a reset even when the value grew past the old one.
    #[test]
    fn recreated_counter_is_a_reset() {
        let created = |ts: f64| {
            format!("# TYPE vllm:spec_decode_num_drafts_created gauge\nvllm:spec_decode_num_drafts_created{{engine=\"0\",model_name=\"m\"}} {ts}\n")
        };
        let before = counters(&(vllm_text("m", &[(0, 100.0, &[90.0])], 1) + &created(1.0e9)));
        let after = counters(&(vllm_text("m", &[(0, 500.0, &[400.0])], 1) + &created(2.0e9)));
        let err = vllm_window(Engine::Vllm, &before, &after, "u").unwrap_err();
        assert!(err.message.contains("created again"), "{err}");
        let same = counters(&(vllm_text("m", &[(0, 500.0, &[400.0])], 1) + &created(1.0e9)));
        assert!(vllm_window(Engine::Vllm, &before, &same, "u").is_ok());
    }

    /// Several models need --model-name; the error lists them; a name picks one.
    #[test]
    fn several_models_need_a_name() {
        let text = vllm_series(&[("a", 0, 1.0, &[1.0]), ("b", 0, 1.0, &[0.0])], 1);
        let e = parse(&text, "u").unwrap();
        let err = select_model(&e, Engine::Vllm, None, "u").unwrap_err();
        assert!(err.message.contains("`a`, `b`"), "{err}");
        assert_eq!(
            select_model(&e, Engine::Vllm, Some("b"), "u").unwrap(),
            Some("b".to_string())
        );
        let err = select_model(&e, Engine::Vllm, Some("c"), "u").unwrap_err();
        assert!(err.message.contains("`c` is not served"), "{err}");
        let b = vllm_counters(&e, Some("b"), "u").unwrap();
        assert_eq!(b.accepted, 0.0);
    }

    /// Engine detection names what the metrics lack.
    #[test]
    fn engine_detection() {
        let e = parse("vllm:num_requests_running{model_name=\"m\"} 1\n", "u").unwrap();
        let err = detect_engine(&e, "u").unwrap_err();
        assert!(
            err.message.contains("without speculative-decoding"),
            "{err}"
        );
        let e = parse("sglang:spec_accept_length{model_name=\"m\"} 3\n", "u").unwrap();
        assert_eq!(detect_engine(&e, "u").unwrap(), Engine::Sglang);
        let e = parse("process_cpu_seconds_total 1\n", "u").unwrap();
        assert!(detect_engine(&e, "u").is_err());
    }

    /// SGLang: stats over scrapes and ranks, zeros ignored; idle and reset are errors.
    #[test]
    fn sglang_window_stats_and_errors() {
        let scrape = |l: &[f64], g: Option<f64>| GaugeScrape {
            accept_length: l.to_vec(),
            accept_rate: vec![],
            generation_tokens: g,
            series: l.len(),
        };
        let w = sglang_window(
            Engine::Sglang,
            &[
                scrape(&[3.0], Some(10.0)),
                scrape(&[3.5], Some(20.0)),
                scrape(&[4.0], Some(30.0)),
            ],
            "u",
        )
        .unwrap();
        assert_eq!(w.accept_length.mean, 3.5);
        assert_eq!((w.accept_length.min, w.accept_length.max), (3.0, 4.0));
        assert_eq!(w.generation_tokens, Some(20.0));
        assert!(!w.static_gauge);
        let idle = sglang_window(
            Engine::Sglang,
            &[scrape(&[3.0], Some(10.0)), scrape(&[3.0], Some(10.0))],
            "u",
        );
        assert!(idle.unwrap_err().message.contains("idle"));
        let reset = sglang_window(
            Engine::Sglang,
            &[scrape(&[3.0], Some(10.0)), scrape(&[3.0], Some(1.0))],
            "u",
        );
        assert!(reset.unwrap_err().message.contains("counter reset"));
        let none = sglang_window(Engine::Sglang, &[scrape(&[], None), scrape(&[], None)], "u");
        assert!(none.unwrap_err().message.contains("0 in every sample"));
        let stale = sglang_window(
            Engine::Sglang,
            &[scrape(&[3.0], None), scrape(&[3.0], None)],
            "u",
        )
        .unwrap();
        assert!(stale.static_gauge);
    }
}
