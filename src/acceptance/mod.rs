//! `acceptance`: a running server's speculative-decoding acceptance, from its Prometheus
//! `/metrics`, with a verdict and the likely cause.
//!
//! Config checks cannot see everything: an engine that runs sliding-window draft layers as full
//! attention, or the wrong runner, collapses acceptance with a perfect config. This module reads
//! what the server measured. For vLLM it takes the spec-decode counters at the start and end of
//! a window and computes the acceptance length (1 + Δaccepted / Δdrafts), the draft-token
//! acceptance rate and the per-position acceptance; for SGLang, whose acceptance metrics are
//! per-batch gauges, it samples them over the window. The per-position shape names the likely
//! cause: a cliff to ~0 after a few positions (sliding layers run as full attention), or
//! position 1 already near 0 (mask id, target layers, wrong drafter).
//!
//! Layout: [`metrics`] parses one scrape, [`compute`] is the pure arithmetic, [`rules`] holds
//! every code as a [`Rule`](rules::Rule) beside the check that raises it (and the needs it
//! cannot judge without), [`verdict`] turns a window into a report by running them,
//! [`scrape`] does HTTP and the timing (its sleep is injectable), and `report::acceptance`
//! writes the human and JSON reports.

pub mod compute;
pub mod metrics;
pub mod rules;
pub mod scrape;
pub mod verdict;

pub use compute::{ServerEngine, Shape};
pub use scrape::{measure, HttpSource, MeasureOptions, MetricsSource};
pub use verdict::{AcceptanceReport, Measurement, Threshold, Verdict};

use crate::diagnostic::CodeInfo;

pub use crate::diagnostic::codes::AcceptanceCode;

/// The documentation of each code this family raises, from the rule that raises it.
pub fn info(code: AcceptanceCode) -> &'static CodeInfo {
    &rules::rule(code).info
}
