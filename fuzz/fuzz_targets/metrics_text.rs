//! text -> `acceptance`'s Prometheus text parser. Invariant: no panic; the text is either an
//! exposition or an error naming the URL.
#![no_main]

use dflash_check::acceptance::metrics;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = metrics::parse(text, "http://127.0.0.1:8000/metrics");
});
