//! Scraping: the URL, the HTTP GET (with the one client, [`crate::net`]: one deadline, a size
//! cap, no proxy for this machine) and the window's timing.
//!
//! [`measure`] takes its scrapes from a [`MetricsSource`] and waits through an injected `sleep`,
//! so tests drive it with canned expositions and no waiting; the binary passes an
//! [`HttpSource`] and `std::thread::sleep`.

use std::time::{Duration, Instant};

use crate::net::{header, read_capped, BodyError, Client, Follow, Method, NetError, StatusCode};

use super::compute;
use super::metrics::{self, Exposition};
use super::verdict::{self, AcceptanceReport, Measurement, Window};
use crate::engine::MetricsKind;
use crate::family::Family;
use crate::{Error, Result};

/// A `/metrics` body larger than this is refused, while it streams (vLLM's is a few hundred
/// kB; SGLang's smaller).
pub const MAX_BODY: u64 = 16 * 1024 * 1024;
/// SGLang's gauges are sampled about this often over the window.
pub const SGLANG_SAMPLE_INTERVAL: Duration = Duration::from_secs(1);
/// At least this many SGLang samples, however short the window.
pub const SGLANG_MIN_SAMPLES: usize = 3;
/// At most this many (a bound on the requests one run sends).
pub const SGLANG_MAX_SAMPLES: usize = 601;

/// Where scrapes come from.
pub trait MetricsSource {
    /// The URL scraped, for messages.
    fn url(&self) -> &str;
    /// One scrape's body.
    fn fetch(&mut self) -> Result<String>;
}

/// What to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasureOptions {
    pub window: Duration,
    /// The `model_name` label to read, required when the server serves several.
    pub model_name: Option<String>,
    /// Overrides the break-even threshold.
    pub min_acceptance_length: Option<f64>,
    /// The drafter family and draft-to-target cost ratio (`None`: the family's default) that
    /// set the break-even threshold when no minimum is given.
    pub draft_family: Family,
    pub draft_cost_ratio: Option<f64>,
    /// The drafter's own profile (`--drafter DIR`, `--profile FILE`, `--profile-tolerance`).
    pub profile: super::profile::ProfileOptions,
}

/// Scrapes at the start and end of the window (vLLM) or every second across it (SGLang), and
/// builds the report.
pub fn measure(
    source: &mut dyn MetricsSource,
    opts: &MeasureOptions,
    sleep: &mut dyn FnMut(Duration),
) -> Result<AcceptanceReport> {
    // The drafter's profile first: a broken one is bad input before any request is sent.
    let profile = super::profile::read(&opts.profile)?;
    let url = source.url().to_string();
    let first = scrape(source, &url)?;
    let engine = compute::detect_engine(&first, &url)?;
    let models = compute::models(&first, engine);
    let model = compute::select_model(&first, engine, opts.model_name.as_deref(), &url)?;
    let model_ref = model.as_deref();
    let start = Instant::now();
    let kind = engine.spec().metrics.map(|m| m.kind);
    let (measurement, scrapes) = match kind {
        // Detected by its metrics: every engine detected has a metrics row.
        None | Some(MetricsKind::Counters) => {
            let before = compute::vllm_counters(&first, model_ref, &url)?;
            sleep(opts.window);
            let last = scrape(source, &url)?;
            let after = compute::vllm_counters(&last, model_ref, &url)?;
            let window = compute::vllm_window(engine, &before, &after, &url)?;
            (Measurement::Counters(window), 2)
        }
        Some(MetricsKind::Gauges) => {
            let n = sglang_samples(opts.window);
            let step = opts.window.div_f64((n - 1) as f64);
            let mut samples = vec![compute::sglang_scrape(&first, model_ref, &url)?];
            for _ in 1..n {
                sleep(step);
                let e = scrape(source, &url)?;
                samples.push(compute::sglang_scrape(&e, model_ref, &url)?);
            }
            (
                Measurement::Gauges(compute::sglang_window(engine, &samples, &url)?),
                n,
            )
        }
    };
    // The checks above name the series of any impossible value; this is the last line of
    // defence: a gate never compares NaN or infinity with its threshold (NaN < 5 is false).
    let length = measurement.acceptance_length();
    if !length.is_finite() {
        return Err(Error::new(format!(
            "{url}: the acceptance length over the window is {length}, not a number of tokens"
        ))
        .with_hint("the server's counters are not consistent; measure again against the engine's own /metrics"));
    }
    let window = Window {
        requested_secs: opts.window.as_secs_f64(),
        measured_secs: start.elapsed().as_secs_f64(),
        scrapes,
    };
    let k = measurement.max_acceptance_length().map(|m| m - 1);
    let break_even = verdict::break_even(opts.draft_family, opts.draft_cost_ratio, k);
    let threshold = super::profile::choose_threshold(
        opts.min_acceptance_length,
        &opts.profile,
        profile.as_deref(),
        break_even,
    );
    Ok(AcceptanceReport::build(
        url,
        model,
        models,
        window,
        measurement,
        threshold,
        opts.draft_family,
    ))
}

/// How many SGLang samples a window gets: one a second, at least [`SGLANG_MIN_SAMPLES`].
pub fn sglang_samples(window: Duration) -> usize {
    let per_interval = (window.as_secs_f64() / SGLANG_SAMPLE_INTERVAL.as_secs_f64()).ceil();
    let n = if per_interval.is_finite() && per_interval >= 0.0 {
        (per_interval as usize).saturating_add(1)
    } else {
        SGLANG_MAX_SAMPLES
    };
    n.clamp(SGLANG_MIN_SAMPLES, SGLANG_MAX_SAMPLES)
}

fn scrape(source: &mut dyn MetricsSource, url: &str) -> Result<Exposition> {
    let text = source.fetch()?;
    metrics::parse_for(&text, url, &compute::reads)
}

/// The `/metrics` URL for what the user typed: a server base (`http://127.0.0.1:8000`, with
/// or without a trailing `/`; a missing `http://` is added) gets `/metrics`, any other path is
/// used as given.
pub fn metrics_url(input: &str) -> Result<String> {
    let trimmed = input.trim();
    let with_scheme = if trimmed.contains("://") {
        trimmed.to_string()
    } else if names_a_file(trimmed) {
        // Without this, `metrics.txt` became http://metrics.txt/metrics and failed as a host
        // that does not resolve, which says nothing about the mistake.
        return Err(Error::new(format!(
            "`{trimmed}` names a file, not a server: a saved metrics page cannot be measured"
        ))
        .with_hint(NOT_A_FILE_HINT));
    } else {
        format!("http://{trimmed}")
    };
    let mut url = crate::net::Url::parse(&with_scheme).map_err(|e| {
        Error::new(format!("`{input}` is not a URL: {e}")).with_hint(
            "give the server's base URL, like http://127.0.0.1:8000, or its /metrics URL",
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        let hint = if url.scheme() == "file" {
            NOT_A_FILE_HINT
        } else {
            "give the server's base URL, like http://127.0.0.1:8000, or its /metrics URL"
        };
        return Err(Error::new(format!(
            "`{input}`: only http and https URLs can be scraped"
        ))
        .with_hint(hint));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(Error::new(format!("`{input}` names no host")));
    }
    if url.path() == "/" || url.path().is_empty() {
        url.set_path("/metrics");
    }
    Ok(url.to_string())
}

/// Why a file cannot stand for a server, and what to give instead.
const NOT_A_FILE_HINT: &str = "the acceptance length is what changed between two scrapes of a \
     running server (--window apart), so give the server's base URL, like \
     http://127.0.0.1:8000, or its /metrics URL";

/// Whether `input`, typed without a scheme, names a file rather than a host: an existing file,
/// or a name ending in an extension a saved metrics page has (no top-level domain is spelt so).
fn names_a_file(input: &str) -> bool {
    let ext = input.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    matches!(ext.as_deref(), Some("txt" | "prom" | "log" | "json"))
        || std::path::Path::new(input).is_file()
}

/// Scrapes a URL over HTTP with the one client ([`crate::net`]): one deadline covers the whole
/// request (connect, redirects, headers, every byte of the body; a server that dripped its body
/// one byte at a time once held a `--timeout 5` run for minutes), the body is capped at
/// [`MAX_BODY`], and a server on this machine is never reached through a proxy.
pub struct HttpSource {
    url: String,
    timeout: Duration,
    client: Client<'static>,
    /// The body cap: [`MAX_BODY`] for a metrics page, less for endpoints whose answers are a
    /// few kB ([`HttpSource::capped`]).
    max_body: u64,
}

impl HttpSource {
    /// A client for `url` (already normalised by [`metrics_url`]) that gives up after
    /// `timeout` per scrape, from connecting to the last byte of the answer.
    pub fn new(url: String, timeout: Duration) -> Result<HttpSource> {
        let client = Client::new(timeout, "metrics")
            .map_err(|e| Error::new(format!("cannot set up an HTTP client for {url}: {e}")))?;
        Ok(HttpSource {
            url,
            timeout,
            client,
            max_body: MAX_BODY,
        })
    }

    /// The same source with a smaller body cap, for a JSON endpoint whose answer is a few kB
    /// (`doctor`'s `/get_server_info`, `/v1/models`): a larger answer is refused unread.
    pub fn capped(mut self, max_body: u64) -> HttpSource {
        self.max_body = max_body.min(MAX_BODY);
        self
    }

    /// One GET, streamed against [`MAX_BODY`]. `answered` is set once the status line and
    /// headers are in, so a timeout can say which part was slow.
    async fn get(&self, answered: &std::cell::Cell<bool>) -> Result<Vec<u8>> {
        let url = &self.url;
        let secs = self.timeout.as_secs_f64();
        // The Prometheus text format: what both engines' prometheus_client serves by default
        // (OpenMetrics only when asked for it).
        let accept = (header::ACCEPT, "text/plain;version=0.0.4;q=1,*/*;q=0.1");
        let mut response = self
            .client
            .send(Method::GET, url, &[accept], Follow::Any)
            .await
            .map_err(|e| transport(url, secs, &e))?;
        answered.set(true);
        let status = response.status();
        if status != StatusCode::OK {
            let hint = if status == StatusCode::NOT_FOUND {
                "vLLM serves /metrics on its API port; SGLang only with --enable-metrics"
            } else {
                "check that the URL is the engine's /metrics endpoint and that it is healthy"
            };
            return Err(Error::new(format!("{url} answered HTTP {status}")).with_hint(hint));
        }
        read_capped(&mut response, self.max_body, |_| {})
            .await
            .map_err(|e| match e {
                BodyError::Announced(_) | BodyError::OverCap(_) => too_large(url, self.max_body),
                BodyError::Transport(e) => Error::new(format!("{url} broke off its answer: {e}")),
            })
    }
}

fn too_large(url: &str, cap: u64) -> Error {
    if cap < MAX_BODY {
        return Error::new(format!(
            "{url} answered with more than {} KiB, more than this endpoint's answer can be",
            cap / 1024
        ));
    }
    Error::new(format!(
        "{url} answered with more than {} MiB: not a metrics page",
        cap / (1024 * 1024)
    ))
    .with_hint(NOT_METRICS_HINT)
}

impl MetricsSource for HttpSource {
    fn url(&self) -> &str {
        &self.url
    }

    fn fetch(&mut self) -> Result<String> {
        let answered = std::cell::Cell::new(false);
        let body = self.client.run(self.get(&answered)).unwrap_or_else(|| {
            let secs = self.timeout.as_secs_f64();
            let what = if answered.get() {
                "did not finish answering"
            } else {
                "did not answer"
            };
            Err(
                Error::new(format!("{} {what} within {secs} s (--timeout)", self.url)).with_hint(
                    "the server is overloaded or hung; raise --timeout if it is just slow",
                ),
            )
        })?;
        String::from_utf8(body).map_err(|e| {
            Error::new(format!(
                "{} did not answer with valid Prometheus text: the body is not UTF-8 (byte {})",
                self.url,
                e.utf8_error().valid_up_to()
            ))
            .with_hint(NOT_METRICS_HINT)
        })
    }
}

/// What to do when the URL answers with something that is not a metrics page.
const NOT_METRICS_HINT: &str = "point the URL at the engine's /metrics endpoint (vLLM: the API port; SGLang: the server port with --enable-metrics)";

fn transport(url: &str, secs: f64, e: &NetError) -> Error {
    match e {
        NetError::Timeout => {
            Error::new(format!("{url} did not answer within {secs} s (--timeout)"))
                .with_hint("the server is overloaded or hung; raise --timeout if it is just slow")
        }
        NetError::Connect(cause) => Error::new(format!("cannot connect to {url}: {cause}"))
            .with_hint("is the server running, and is this its host and port?"),
        NetError::Setup(cause) => {
            Error::new(format!("cannot set up an HTTP client for {url}: {cause}"))
        }
        NetError::Transfer(cause) | NetError::BadUrl(cause) => {
            Error::new(format!("request to {url} failed: {cause}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Canned scrapes, in order; records how long `measure` asked to sleep.
    struct Canned {
        bodies: Vec<String>,
    }

    impl MetricsSource for Canned {
        fn url(&self) -> &str {
            "http://test/metrics"
        }
        fn fetch(&mut self) -> Result<String> {
            Ok(self.bodies.remove(0))
        }
    }

    fn vllm(drafts: f64, per_pos: &[f64]) -> String {
        let acc: f64 = per_pos.iter().sum();
        let mut t = format!(
            "# TYPE vllm:spec_decode_num_drafts_total counter\n\
             vllm:spec_decode_num_drafts_total{{engine=\"0\",model_name=\"m\"}} {drafts}\n\
             # TYPE vllm:spec_decode_num_draft_tokens_total counter\n\
             vllm:spec_decode_num_draft_tokens_total{{engine=\"0\",model_name=\"m\"}} {}\n\
             # TYPE vllm:spec_decode_num_accepted_tokens_total counter\n\
             vllm:spec_decode_num_accepted_tokens_total{{engine=\"0\",model_name=\"m\"}} {acc}\n\
             # TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter\n",
            drafts * per_pos.len() as f64
        );
        for (i, v) in per_pos.iter().enumerate() {
            t.push_str(&format!("vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine=\"0\",model_name=\"m\",position=\"{i}\"}} {v}\n"));
        }
        t
    }

    fn opts(window: f64) -> MeasureOptions {
        MeasureOptions {
            window: Duration::from_secs_f64(window),
            model_name: None,
            min_acceptance_length: Some(2.0),
            draft_family: Family::Dflash,
            draft_cost_ratio: None,
            profile: Default::default(),
        }
    }

    /// vLLM: two scrapes, one sleep of the whole window, deltas between them.
    #[test]
    fn vllm_scrapes_twice_and_sleeps_the_window() {
        let mut src = Canned {
            bodies: vec![vllm(100.0, &[50.0, 10.0]), vllm(200.0, &[140.0, 80.0])],
        };
        let mut slept = Vec::new();
        let r = measure(&mut src, &opts(10.0), &mut |d| slept.push(d)).unwrap();
        assert_eq!(slept, vec![Duration::from_secs(10)]);
        assert_eq!(r.window.scrapes, 2);
        assert!((r.measurement.acceptance_length() - 2.6).abs() < 1e-12);
        assert_eq!(r.verdict, crate::acceptance::Verdict::Pass);
    }

    /// SGLang: one sample a second over the window (at least three), evenly spaced.
    #[test]
    fn sglang_samples_across_the_window() {
        let g = |v: f64, t: f64| {
            format!(
                "# TYPE sglang:spec_accept_length gauge\n\
                 sglang:spec_accept_length{{model_name=\"m\",tp_rank=\"0\"}} {v}\n\
                 # TYPE sglang:generation_tokens_total counter\n\
                 sglang:generation_tokens_total{{model_name=\"m\"}} {t}\n"
            )
        };
        let mut src = Canned {
            bodies: (0..11)
                .map(|i| g(3.0 + i as f64 * 0.1, i as f64 * 100.0))
                .collect(),
        };
        let mut slept = Vec::new();
        let r = measure(&mut src, &opts(10.0), &mut |d| slept.push(d)).unwrap();
        assert_eq!(slept, vec![Duration::from_secs(1); 10]);
        assert_eq!(r.window.scrapes, 11);
        assert!((r.measurement.acceptance_length() - 3.5).abs() < 1e-12);
        assert_eq!(sglang_samples(Duration::from_secs_f64(0.2)), 3);
        assert_eq!(
            sglang_samples(Duration::from_secs(3600)),
            SGLANG_MAX_SAMPLES
        );
    }

    /// Base URLs get /metrics; explicit paths are kept; non-HTTP schemes are refused.
    #[test]
    fn url_normalisation() {
        assert_eq!(
            metrics_url("http://127.0.0.1:8000").unwrap(),
            "http://127.0.0.1:8000/metrics"
        );
        assert_eq!(
            metrics_url("127.0.0.1:8000/").unwrap(),
            "http://127.0.0.1:8000/metrics"
        );
        assert_eq!(
            metrics_url("https://h.example/custom/metrics").unwrap(),
            "https://h.example/custom/metrics"
        );
        assert!(metrics_url("ftp://h/metrics").is_err());
        assert!(metrics_url("http://").is_err());
    }

    /// A file name given for the server (issue 32) is refused before any lookup, with what to
    /// give instead; so is a `file://` URL. `metrics.txt` used to become http://metrics.txt/.
    #[test]
    fn a_file_for_the_server_is_refused_with_a_hint() {
        let dir = tempfile::tempdir().unwrap();
        let saved = dir.path().join("scrape");
        std::fs::write(&saved, "x").unwrap();
        for input in ["metrics.txt", "out/metrics.prom", saved.to_str().unwrap()] {
            let e = metrics_url(input).unwrap_err();
            assert!(
                e.message.contains("names a file, not a server"),
                "{input}: {e:?}"
            );
            assert!(e.hint.as_deref().unwrap().contains("http://127.0.0.1:8000"));
        }
        let e = metrics_url("file:///tmp/metrics.txt").unwrap_err();
        assert!(e
            .hint
            .as_deref()
            .unwrap()
            .contains("two scrapes of a running server"));
        // A host is still a host.
        assert!(metrics_url("vllm.internal:8000").is_ok());
    }
}
