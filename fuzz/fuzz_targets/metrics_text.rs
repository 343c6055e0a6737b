//! text -> `acceptance`'s Prometheus text parser, then the whole measurement: the input split at
//! its first NUL is the first and the last scrape of a window (vLLM's counters, SGLang's gauges),
//! measured with no waiting and rendered as JSON. Invariant: no panic; the text is either an
//! exposition or an error naming the URL, and a measurement that succeeds has a finite,
//! non-negative acceptance length (a gate never compares NaN with its threshold).
#![no_main]

use std::time::Duration;

use dflash_check::acceptance::{self, metrics, MeasureOptions, MetricsSource};
use dflash_check::report::{self, Format, Painter, RenderOptions};
use libfuzzer_sys::fuzz_target;

const URL: &str = "http://127.0.0.1:8000/metrics";

struct Canned<'a> {
    bodies: [&'a str; 2],
    sent: usize,
}

impl MetricsSource for Canned<'_> {
    fn url(&self) -> &str {
        URL
    }
    fn fetch(&mut self) -> dflash_check::Result<String> {
        let body = self.bodies[self.sent.min(1)];
        self.sent += 1;
        Ok(body.to_string())
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = metrics::parse(text, URL) {
        assert!(e.message.contains(URL), "{}", e.message);
    }
    let (first, last) = text.split_once('\0').unwrap_or((text, text));
    let mut source = Canned {
        bodies: [first, last],
        sent: 0,
    };
    let options = MeasureOptions {
        window: Duration::from_secs(2),
        model_name: None,
        min_acceptance_length: Some(2.0),
        draft_family: dflash_check::family::Family::Dflash,
        draft_cost_ratio: None,
        profile: Default::default(),
    };
    if let Ok(r) = acceptance::measure(&mut source, &options, &mut |_| {}) {
        let length = r.measurement.acceptance_length();
        assert!(
            length.is_finite() && length >= 0.0,
            "acceptance length {length}"
        );
        let options = RenderOptions {
            painter: Painter { enabled: false },
            deny_warnings: false,
            fails: r.fails(),
        };
        let mut out = Vec::new();
        report::render(&r, Format::Json, &options, &mut out).unwrap();
        let _: serde_json::Value = serde_json::from_slice(&out).unwrap();
    }
});
