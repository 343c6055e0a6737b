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
//! Layout: [`scrape`] does HTTP and the timing (its sleep is injectable) and is the only part
//! here; the rest is the core's `acceptance`, re-exported under the same paths: [`metrics`]
//! parses one scrape, [`compute`] is the pure arithmetic, [`rules`] lists every code as a
//! [`Rule`] beside the check that raises it (`position`, `threshold`, `gauge`, and the needs it
//! cannot judge without), [`verdict`] holds a measured window's data types and
//! [`AcceptanceReport::build`] turns a window into a report by running the rules;
//! `report::acceptance` writes the human and JSON reports.

pub mod profile;
pub mod scrape;

pub use dflash_check_core::acceptance::{
    break_even, build, compute, cx, gauge, info, metrics, next, position, rules,
    snapshots_for_model, text, threshold, Acceptance, AcceptanceCode, AcceptanceReport, Applies,
    Cx, Measurement, Need, Rule, Shape, Skipped, Threshold, Verdict, Window, NEAR_ZERO,
};
pub use scrape::{measure, HttpSource, MeasureOptions, MetricsSource};

/// The core's `verdict` (a measured window's data types) with the report its builder makes, at
/// the paths the scraper and the commands name (`acceptance::verdict::AcceptanceReport`).
pub mod verdict {
    pub use dflash_check_core::acceptance::build::AcceptanceReport;
    pub use dflash_check_core::acceptance::verdict::*;
}
