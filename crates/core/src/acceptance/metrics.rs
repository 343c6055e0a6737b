//! The Prometheus text exposition of one scrape, reduced to what `acceptance` reads: each
//! counter, gauge or untyped sample as (name, labels, value).
//!
//! The project's own parser for the text format 0.0.4, as `prometheus_client` (vLLM, SGLang)
//! writes it: `# HELP` / `# TYPE` lines, other comments, names with `:`, label values with the
//! escapes `\\`, `\"` and `\n`, values including `NaN`, `+Inf` and `-Inf`, optional timestamps.
//! It is strict where a wrong number could follow: an unknown escape, a duplicate series or
//! label, a `# TYPE` after its samples, or a family whose lines are not together is an error
//! with the line and column. Histograms and summaries are checked and skipped (no acceptance
//! metric is one).
//!
//! Cost is linear in the body (one pass; duplicates found through a hash set of 128-bit series
//! hashes), up to [`MAX_SAMPLES`] sample lines; the body itself is capped by the scraper that
//! fetched it (`acceptance::scrape::MAX_BODY` in the main crate). Only the samples a caller
//! keeps are stored (see [`parse_for`]), at most [`MAX_KEPT`].

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use crate::{Error, Result};

/// At most this many sample lines in one exposition (a vLLM server writes a few thousand).
pub const MAX_SAMPLES: usize = 1_000_000;
/// At most this many stored samples (those the caller keeps): vLLM writes 3 + K per engine
/// replica and model (18 for K = 15), so this is over a thousand replicas.
pub const MAX_KEPT: usize = 20_000;

/// One sample of a counter, gauge or untyped metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The full sample name as exposed (`vllm:spec_decode_num_drafts_total`).
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

impl Sample {
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels.get(name).map(String::as_str)
    }

    /// `name{a="1",b="2"}`, for messages.
    pub fn display_name(&self) -> String {
        if self.labels.is_empty() {
            return self.name.clone();
        }
        let labels: Vec<String> = self
            .labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{v}\""))
            .collect();
        format!("{}{{{}}}", self.name, labels.join(","))
    }
}

/// The kept counter, gauge and untyped samples of one scrape, in a stable order (by name, then
/// labels), and the namespaces (`vllm:`, `sglang:`) of every metric in it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exposition {
    pub samples: Vec<Sample>,
    /// The part of each metric name up to and including its first `:`, kept or not.
    pub namespaces: BTreeSet<String>,
}

impl Exposition {
    /// The samples called `name`.
    pub fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Sample> + 'a {
        self.samples.iter().filter(move |s| s.name == name)
    }

    /// Whether any metric's name starts with `namespace` (`vllm:`), kept or not.
    pub fn has_namespace(&self, namespace: &str) -> bool {
        self.namespaces.contains(namespace)
    }

    /// Whether any kept sample is called `name`.
    pub fn has(&self, name: &str) -> bool {
        self.samples.iter().any(|s| s.name == name)
    }
}

/// Parses a Prometheus text exposition (`text/plain; version=0.0.4`), keeping every counter,
/// gauge and untyped sample. `origin` (the URL) names the input in errors.
pub fn parse(text: &str, origin: &str) -> Result<Exposition> {
    parse_for(text, origin, &|_| true)
}

/// [`parse`], storing only the samples whose name `keep` accepts (the whole text is still
/// checked): a page of 200,000 unrelated series costs no memory per series beyond a hash.
pub fn parse_for(text: &str, origin: &str, keep: &dyn Fn(&str) -> bool) -> Result<Exposition> {
    if text.trim().is_empty() {
        return Err(Error::new(format!(
            "{origin} answered with an empty body: no metrics at all"
        ))
        .with_hint("is this the server's /metrics endpoint? (SGLang exports metrics only with --enable-metrics)"));
    }
    let mut p = Parser {
        origin,
        keep,
        families: HashMap::new(),
        current: None,
        series: HashSet::new(),
        namespaces: HashSet::new(),
        samples: Vec::new(),
        labels: Vec::new(),
    };
    for (index, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        p.line(index + 1, line)?;
    }
    let mut samples = p.samples;
    samples.sort_by(|a, b| (&a.name, &a.labels).cmp(&(&b.name, &b.labels)));
    Ok(Exposition {
        samples,
        namespaces: p.namespaces.into_iter().map(str::to_string).collect(),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
    Summary,
    Untyped,
}

/// What is known of one metric family (a `# TYPE`/`# HELP` name, or an untyped sample name).
#[derive(Debug, Default)]
struct Family {
    kind: Option<Kind>,
    help: bool,
    /// Line of its first sample.
    first_sample: Option<usize>,
    /// Its lines are over (another family came after it).
    closed: bool,
}

struct Parser<'t, 'k> {
    origin: &'t str,
    keep: &'k dyn Fn(&str) -> bool,
    families: HashMap<&'t str, Family>,
    /// The family whose lines are being read.
    current: Option<&'t str>,
    /// 128-bit hashes of (name, sorted labels) of every sample line.
    series: HashSet<u128>,
    namespaces: HashSet<&'t str>,
    samples: Vec<Sample>,
    /// Reused for each sample's labels (raw, still escaped).
    labels: Vec<(&'t str, &'t str)>,
}

/// A position in one line, for errors: 1-based line, byte offset in the line.
struct At<'t> {
    line_no: usize,
    line: &'t str,
    offset: usize,
}

impl<'t> Parser<'t, '_> {
    fn error(&self, at: &At, detail: &str) -> Error {
        let column = at.line[..at.offset.min(at.line.len())].chars().count() + 1;
        let mut excerpt: String = at.line.chars().take(160).collect();
        if excerpt.len() < at.line.len() {
            excerpt.push('…');
        }
        Error::new(format!(
            "{} did not answer with valid Prometheus text: line {}, column {column}: {detail}, in `{excerpt}`",
            self.origin, at.line_no
        ))
        .with_hint("point the URL at the engine's /metrics endpoint (vLLM: the API port; SGLang: the server port with --enable-metrics)")
    }

    fn line(&mut self, line_no: usize, line: &'t str) -> Result<()> {
        let mut at = At {
            line_no,
            line,
            offset: 0,
        };
        let trimmed = line.trim_start_matches([' ', '\t']);
        if trimmed.is_empty() {
            return Ok(());
        }
        at.offset = line.len() - trimmed.len();
        if let Some(comment) = trimmed.strip_prefix('#') {
            return self.comment(&mut at, comment);
        }
        self.sample(&mut at)
    }

    /// `# HELP name text`, `# TYPE name kind`, or any other comment (ignored).
    fn comment(&mut self, at: &mut At<'t>, comment: &'t str) -> Result<()> {
        let rest = comment.trim_start_matches([' ', '\t']);
        let (keyword, rest) = rest.split_at(rest.find([' ', '\t']).unwrap_or(rest.len()));
        if keyword != "HELP" && keyword != "TYPE" {
            return Ok(());
        }
        let rest = rest.trim_start_matches([' ', '\t']);
        at.offset = at.line.len() - rest.len();
        let name_len = metric_name_len(rest);
        if name_len == 0 {
            return Err(self.error(at, &format!("`# {keyword}` without a metric name")));
        }
        let name = &rest[..name_len];
        let after = &rest[name_len..];
        if !after.is_empty() && !after.starts_with([' ', '\t']) {
            at.offset += name_len;
            return Err(self.error(at, "a metric name has only letters, digits, `_` and `:`"));
        }
        self.enter(at, name)?;
        let family = self.families.entry(name).or_default();
        let (help, typed, first_sample) = (family.help, family.kind.is_some(), family.first_sample);
        if keyword == "HELP" {
            if help {
                return Err(self.error(at, &format!("a second `# HELP` for `{name}`")));
            }
            family.help = true;
            return Ok(());
        }
        if typed {
            return Err(self.error(at, &format!("a second `# TYPE` for `{name}`")));
        }
        if let Some(first) = first_sample {
            return Err(self.error(
                at,
                &format!("`# TYPE` for `{name}` after its samples (line {first})"),
            ));
        }
        let kind_text = after.trim_matches([' ', '\t']);
        let kind = match kind_text {
            "counter" => Kind::Counter,
            "gauge" => Kind::Gauge,
            "histogram" => Kind::Histogram,
            "summary" => Kind::Summary,
            "untyped" => Kind::Untyped,
            _ => {
                at.offset = at.line.len() - after.trim_start_matches([' ', '\t']).len();
                return Err(self.error(
                    at,
                    &format!("unknown metric type `{kind_text}` (counter, gauge, histogram, summary or untyped)"),
                ));
            }
        };
        self.families.entry(name).or_default().kind = Some(kind);
        Ok(())
    }

    /// Makes `family` the current one; a family whose lines ended before is an error.
    fn enter(&mut self, at: &At, family: &'t str) -> Result<()> {
        if self.current == Some(family) {
            return Ok(());
        }
        if self.families.get(family).is_some_and(|f| f.closed) {
            return Err(self.error(
                at,
                &format!("`{family}` appears again after other metrics: a metric's lines must be together"),
            ));
        }
        if let Some(previous) = self.current.and_then(|c| self.families.get_mut(c)) {
            previous.closed = true;
        }
        self.current = Some(family);
        if let Some(colon) = family.find(':') {
            self.namespaces.insert(&family[..=colon]);
        }
        Ok(())
    }

    /// The family a sample called `name` belongs to: the current one when the name is the
    /// family's or one of its type's suffixes, else its own (untyped) name.
    fn family_of(&self, name: &'t str) -> &'t str {
        if let Some(current) = self.current {
            let kind = self.families.get(current).and_then(|f| f.kind);
            if name == current {
                return current;
            }
            if let Some(suffix) = name.strip_prefix(current) {
                let belongs = match kind {
                    Some(Kind::Histogram) => {
                        ["_bucket", "_sum", "_count", "_created"].contains(&suffix)
                    }
                    Some(Kind::Summary) => ["_sum", "_count", "_created"].contains(&suffix),
                    Some(Kind::Counter) => ["_total", "_created"].contains(&suffix),
                    _ => false,
                };
                if belongs {
                    return current;
                }
            }
        }
        name
    }

    fn sample(&mut self, at: &mut At<'t>) -> Result<()> {
        let line = at.line;
        let rest = &line[at.offset..];
        let name_len = metric_name_len(rest);
        if name_len == 0 {
            return Err(self.error(at, "expected a metric name"));
        }
        let name = &rest[..name_len];
        at.offset += name_len;
        // Labels, possibly after blanks (as Prometheus' own parser allows).
        self.labels.clear();
        let after_name = at.offset;
        skip_blanks(line, at);
        if line[at.offset..].starts_with('{') {
            at.offset += 1;
            self.label_set(at)?;
        } else {
            at.offset = after_name;
        }
        let value = self.value_and_timestamp(at)?;
        self.record(at, name, value)
    }

    /// The value and the optional timestamp after a sample's name and labels.
    fn value_and_timestamp(&self, at: &mut At<'t>) -> Result<f64> {
        let line = at.line;
        // Separated by blanks.
        let after = &line[at.offset..];
        let fields = after.trim_start_matches([' ', '\t']);
        if fields.len() == after.len() {
            return Err(self.error(at, "expected a blank and then the value"));
        }
        at.offset = line.len() - fields.len();
        let mut parts = fields.split([' ', '\t']).filter(|p| !p.is_empty());
        let value_text = parts.next().unwrap_or("");
        let value = parse_value(value_text)
            .ok_or_else(|| self.error(at, &format!("`{value_text}` is not a number")))?;
        if let Some(ts) = parts.next() {
            let digits = ts.strip_prefix('-').unwrap_or(ts);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                at.offset = line.len() - fields.len() + fields.find(ts).unwrap_or(0);
                return Err(self.error(
                    at,
                    &format!("`{ts}` is not a timestamp (milliseconds, an integer)"),
                ));
            }
        }
        if let Some(extra) = parts.next() {
            at.offset = line.len() - fields.len() + fields.rfind(extra).unwrap_or(0);
            return Err(self.error(at, &format!("unexpected `{extra}` after the timestamp")));
        }
        Ok(value)
    }

    /// Files a parsed sample under its family, refusing duplicates and more series than one
    /// engine exposes, and keeps it when `acceptance` reads that metric.
    fn record(&mut self, at: &mut At<'t>, name: &'t str, value: f64) -> Result<()> {
        let line = at.line;
        at.offset = line.len() - line.trim_start_matches([' ', '\t']).len();
        let family = self.family_of(name);
        self.enter(at, family)?;
        let entry = self.families.entry(family).or_default();
        entry.first_sample.get_or_insert(at.line_no);
        let kind = entry.kind.unwrap_or(Kind::Untyped);
        if self.series.len() >= MAX_SAMPLES {
            return Err(Error::new(format!(
                "{} answered with more than {MAX_SAMPLES} samples: not one engine's metrics",
                self.origin
            ))
            .with_hint(
                "point the URL at the engine's own /metrics endpoint, not at an aggregator",
            ));
        }
        self.labels.sort_unstable_by(|a, b| a.0.cmp(b.0));
        if let Some(pair) = self.labels.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(self.error(at, &format!("the label `{}` is given twice", pair[0].0)));
        }
        if !self.series.insert(series_hash(name, &self.labels)) {
            return Err(self.error(
                at,
                &format!("the series `{name}` with these labels was already given"),
            ));
        }
        if matches!(kind, Kind::Histogram | Kind::Summary) || !(self.keep)(name) {
            return Ok(());
        }
        if self.samples.len() >= MAX_KEPT {
            return Err(Error::new(format!(
                "{} answered with more than {MAX_KEPT} series of the metrics `acceptance` reads: not one engine's metrics",
                self.origin
            ))
            .with_hint("point the URL at one engine's own /metrics endpoint, not at an aggregator"));
        }
        let labels = self
            .labels
            .iter()
            .map(|(k, v)| (k.to_string(), unescape(v)))
            .collect();
        self.samples.push(Sample {
            name: name.to_string(),
            labels,
            value,
        });
        Ok(())
    }

    /// `name="value", ...}` after the `{`; leaves `at` after the `}`.
    fn label_set(&mut self, at: &mut At<'t>) -> Result<()> {
        let line = at.line;
        loop {
            skip_blanks(line, at);
            if line[at.offset..].starts_with('}') {
                at.offset += 1;
                return Ok(());
            }
            let rest = &line[at.offset..];
            let len = label_name_len(rest);
            if len == 0 {
                return Err(self.error(at, "expected a label name or `}`"));
            }
            let label = &rest[..len];
            at.offset += len;
            skip_blanks(line, at);
            if !line[at.offset..].starts_with('=') {
                return Err(self.error(at, &format!("expected `=` after the label `{label}`")));
            }
            at.offset += 1;
            skip_blanks(line, at);
            if !line[at.offset..].starts_with('"') {
                return Err(
                    self.error(at, &format!("expected `\"` to open the value of `{label}`"))
                );
            }
            at.offset += 1;
            let start = at.offset;
            let bytes = line.as_bytes();
            loop {
                match bytes.get(at.offset) {
                    None => {
                        return Err(self.error(at, &format!("the value of `{label}` is not closed with `\"`")))
                    }
                    Some(b'"') => break,
                    Some(b'\\') => {
                        match bytes.get(at.offset + 1) {
                            Some(b'\\' | b'"' | b'n') => at.offset += 2,
                            _ => {
                                return Err(self.error(
                                    at,
                                    &format!("unknown escape in the value of `{label}` (only \\\\, \\\" and \\n)"),
                                ))
                            }
                        }
                    }
                    Some(_) => at.offset += 1,
                }
            }
            self.labels.push((label, &line[start..at.offset]));
            at.offset += 1;
            skip_blanks(line, at);
            match line.as_bytes().get(at.offset) {
                Some(b',') => at.offset += 1,
                Some(b'}') => {}
                _ => return Err(self.error(at, "expected `,` or `}` after a label value")),
            }
        }
    }
}

fn skip_blanks(line: &str, at: &mut At) {
    while matches!(line.as_bytes().get(at.offset), Some(b' ' | b'\t')) {
        at.offset += 1;
    }
}

/// Length of the metric name at the start of `s`: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
fn metric_name_len(s: &str) -> usize {
    name_len(s, true)
}

/// Length of the label name at the start of `s`: `[a-zA-Z_][a-zA-Z0-9_]*`.
fn label_name_len(s: &str) -> usize {
    name_len(s, false)
}

fn name_len(s: &str, colon: bool) -> usize {
    let ok = |b: u8, first: bool| {
        b.is_ascii_alphabetic()
            || b == b'_'
            || (colon && b == b':')
            || (!first && b.is_ascii_digit())
    };
    s.bytes()
        .enumerate()
        .take_while(|&(i, b)| ok(b, i == 0))
        .count()
}

/// A sample value: a float as Go's `strconv.ParseFloat` reads it (what Prometheus uses),
/// including `NaN`, `+Inf` and `-Inf`; `1e400` is infinite.
fn parse_value(text: &str) -> Option<f64> {
    let ok = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    if !ok {
        return None;
    }
    text.parse::<f64>().ok()
}

/// Decodes `\\`, `\"` and `\n` (the only escapes the parser lets through).
fn unescape(raw: &str) -> String {
    if !raw.contains('\\') {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A 128-bit hash of a series (name and labels sorted by name, values still escaped: the
/// escapes are strict, so equal decoded values have equal escaped text).
fn series_hash(name: &str, labels: &[(&str, &str)]) -> u128 {
    let half = |seed: u64| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        seed.hash(&mut h);
        name.hash(&mut h);
        labels.hash(&mut h);
        h.finish()
    };
    (u128::from(half(0x9e37_79b9_7f4a_7c15)) << 64) | u128::from(half(0x2545_f491_4f6c_dd1d))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vLLM-style exposition (colons in names, escaped label values, a histogram) parses,
    /// label escapes are decoded and histograms are skipped.
    #[test]
    fn parses_vllm_names_and_escapes() {
        let text = "\
# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine=\"0\",model_name=\"a \\\"b\\\", c\"} 10.0
# HELP vllm:e2e_request_latency_seconds Latency.
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{le=\"1.0\"} 1.0
vllm:e2e_request_latency_seconds_bucket{le=\"+Inf\"} 2.0
vllm:e2e_request_latency_seconds_sum 3.0
vllm:e2e_request_latency_seconds_count 2.0
";
        let e = parse(text, "http://x/metrics").unwrap();
        assert_eq!(e.samples.len(), 1);
        let s = &e.samples[0];
        assert_eq!(s.name, "vllm:spec_decode_num_drafts_total");
        assert_eq!(s.label("model_name"), Some("a \"b\", c"));
        assert_eq!(s.value, 10.0);
    }

    /// A body without a final newline is accepted.
    #[test]
    fn accepts_missing_final_newline() {
        let e = parse("sglang:spec_accept_length{model_name=\"m\"} 3.5", "u").unwrap();
        assert_eq!(e.samples[0].value, 3.5);
    }

    /// Malformed and empty bodies are errors that name the URL, never panics.
    #[test]
    fn malformed_text_is_an_error_naming_the_url() {
        for bad in [
            "vllm:x{engine=\"0\" 1\n",
            "<html><body>Not Found</body></html>",
            "a 1\nb 2\na 3\n",
            "a{x=\"1\"} 1\na{x=\"1\"} 2\n",
            "\u{0}\u{1}garbage",
            "{}{}{}",
        ] {
            let err = parse(bad, "http://127.0.0.1:9/metrics").unwrap_err();
            assert!(
                err.message.contains("http://127.0.0.1:9/metrics"),
                "{bad:?}: {err}"
            );
        }
        let err = parse("  \n", "http://h/metrics").unwrap_err();
        assert!(err.message.contains("empty body"), "{err}");
    }

    /// What prometheus_client writes: `_total` and `_created` families, special values,
    /// timestamps, a trailing comma, blanks around labels; all kept with decoded escapes.
    #[test]
    fn reads_the_whole_text_format() {
        let text = "\
# HELP a:b_total Doc with \\\\ and \\n escapes.
# TYPE a:b_total counter
a:b_total{x=\"1\",y=\"line\\nbreak\",} 1.5e3 1700000000000
# HELP a:b_created Created.
# TYPE a:b_created gauge
a:b_created{x=\"1\"} 1.7e9
# a free comment
c NaN
d { z = \"q\" } +Inf
e -Inf -5
# TYPE f counter
f_total 3
";
        let e = parse(text, "u").unwrap();
        let get = |n: &str| e.named(n).next().unwrap().clone();
        assert_eq!(get("a:b_total").value, 1500.0);
        assert_eq!(get("a:b_total").label("y"), Some("line\nbreak"));
        assert!(get("c").value.is_nan());
        assert_eq!(get("d").value, f64::INFINITY);
        assert_eq!(get("d").label("z"), Some("q"));
        assert_eq!(get("e").value, f64::NEG_INFINITY);
        assert_eq!(get("f_total").value, 3.0);
        assert!(e.has_namespace("a:"));
        let kept = parse_for(text, "u", &|n| n == "c").unwrap();
        assert_eq!(kept.samples.len(), 1);
        assert!(
            kept.has_namespace("a:"),
            "namespaces of unkept metrics count"
        );
    }

    /// Each strictness is an error with the line and column.
    #[test]
    fn strict_errors_carry_line_and_column() {
        for (bad, at) in [
            ("a{x=\"\\t\"} 1\n", "line 1, column 6: unknown escape"),
            (
                "a 1\n# TYPE a counter\n",
                "line 2, column 8: `# TYPE` for `a` after its samples",
            ),
            (
                "a{x=\"1\",x=\"2\"} 1\n",
                "line 1, column 1: the label `x` is given twice",
            ),
            (
                "# TYPE a counter\n# TYPE a gauge\n",
                "line 2, column 8: a second `# TYPE`",
            ),
            (
                "# TYPE a countr\n",
                "line 1, column 10: unknown metric type `countr`",
            ),
            ("a 1 12x\n", "line 1, column 5: `12x` is not a timestamp"),
            ("a 1 2 3\n", "line 1, column 7: unexpected `3`"),
            ("a{x=\"1\"}1\n", "line 1, column 9: expected a blank"),
            (
                "a{x=\"1\" y=\"2\"} 1\n",
                "line 1, column 9: expected `,` or `}`",
            ),
            (
                "a{x=\"1\"} 1\na{x=\"1\"} 2\n",
                "line 2, column 1: the series `a` with these labels",
            ),
            (
                "a{y=\"2\",x=\"1\"} 1\na{x=\"1\",y=\"2\"} 2\n",
                "line 2, column 1: the series `a`",
            ),
            ("a 1\nb 2\na 3\n", "line 3, column 1: `a` appears again"),
            ("é 1\n", "line 1, column 1: expected a metric name"),
        ] {
            let err = parse(bad, "u").unwrap_err();
            assert!(err.message.contains(at), "{bad:?}: {}", err.message);
        }
    }
}
