//! The Prometheus text exposition of one scrape, reduced to what `acceptance` reads: each
//! counter, gauge or untyped sample as (name, labels, value).
//!
//! The grammar work is done by `openmetrics-parser` (see the Cargo.toml comment for why that
//! crate); this file is the only place that knows its types, so replacing the parser touches
//! nothing else. Histograms and summaries are skipped: no acceptance metric is one.
//!
//! One strictness of that parser to know: consecutive samples of different metrics with no
//! `# TYPE`/`# HELP` line between them are rejected as one inconsistent family. vLLM and SGLang
//! render their metrics with `prometheus_client`, which writes both lines for every family, so
//! their expositions parse; a hand-made exposition must do the same.

use std::collections::BTreeMap;

use openmetrics_parser::{PrometheusType, PrometheusValue};

use crate::{Error, Result};

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

/// Every counter, gauge and untyped sample of one scrape, in a stable order (by name, then
/// labels).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exposition {
    pub samples: Vec<Sample>,
}

impl Exposition {
    /// The samples called `name`.
    pub fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Sample> + 'a {
        self.samples.iter().filter(move |s| s.name == name)
    }

    /// Whether any sample's name starts with `prefix`.
    pub fn has_prefix(&self, prefix: &str) -> bool {
        self.samples.iter().any(|s| s.name.starts_with(prefix))
    }

    /// Whether any sample is called `name`.
    pub fn has(&self, name: &str) -> bool {
        self.samples.iter().any(|s| s.name == name)
    }
}

/// Parses a Prometheus text exposition (`text/plain; version=0.0.4`). `origin` (the URL) names
/// the input in errors.
pub fn parse(text: &str, origin: &str) -> Result<Exposition> {
    if text.trim().is_empty() {
        return Err(Error::new(format!(
            "{origin} answered with an empty body: no metrics at all"
        ))
        .with_hint("is this the server's /metrics endpoint? (SGLang exports metrics only with --enable-metrics)"));
    }
    // The grammar wants every sample line to end with a newline; a body cut right after the
    // last value is still a complete exposition.
    let owned;
    let text = if text.ends_with('\n') {
        text
    } else {
        owned = format!("{text}\n");
        &owned
    };
    // The parser is a third-party crate with `unwrap()`s after its grammar checks; a panic on
    // some input it did not foresee must still be a clean "malformed" error, never a crash.
    let parsed =
        std::panic::catch_unwind(|| openmetrics_parser::prometheus::parse_prometheus(text))
            .map_err(|_| malformed(origin, "the parser gave up on this input"))?
            .map_err(|e| malformed(origin, &e.to_string()))?;
    let mut samples = Vec::new();
    for family in parsed.families.values() {
        if !matches!(
            family.family_type,
            PrometheusType::Counter | PrometheusType::Gauge | PrometheusType::Unknown
        ) {
            continue;
        }
        for sample in family.iter_samples() {
            let value = match &sample.value {
                PrometheusValue::Counter(c) => c.value.as_f64(),
                PrometheusValue::Gauge(n) | PrometheusValue::Unknown(n) => n.as_f64(),
                PrometheusValue::Histogram(_) | PrometheusValue::Summary(_) => continue,
            };
            let labels = sample
                .get_labelset()
                .map_err(|e| malformed(origin, &e.to_string()))?
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            samples.push(Sample {
                name: family.family_name.clone(),
                labels,
                value,
            });
        }
    }
    samples.sort_by(|a, b| (&a.name, &a.labels).cmp(&(&b.name, &b.labels)));
    Ok(Exposition { samples })
}

fn malformed(origin: &str, detail: &str) -> Error {
    Error::new(format!(
        "{origin} did not answer with valid Prometheus text: {}",
        detail.trim()
    ))
    .with_hint("point the URL at the engine's /metrics endpoint (vLLM: the API port; SGLang: the server port with --enable-metrics)")
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
}
