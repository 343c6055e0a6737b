//! `acceptance`: a running server's speculative-decoding acceptance, from its Prometheus
//! `/metrics`, with a verdict and the likely cause — the pure part.
//!
//! Config checks cannot see everything: an engine that runs sliding-window draft layers as full
//! attention, or the wrong runner, collapses acceptance with a perfect config. This module judges
//! what the server measured. For vLLM the spec-decode counters at the start and end of a window
//! give the acceptance length (1 + Δaccepted / Δdrafts), the draft-token acceptance rate and the
//! per-position acceptance; for SGLang, whose acceptance metrics are per-batch gauges, samples
//! over the window. The per-position shape names the likely cause: a cliff to ~0 after a few
//! positions (sliding layers run as full attention), or position 1 already near 0 (mask id,
//! target layers, wrong drafter).
//!
//! Layout: [`metrics`] parses one scrape's text, [`compute`] is the arithmetic over scrapes,
//! [`verdict`] the data types of a measured window, [`cx`] what a rule sees, [`rules`] the rule
//! list and `position`, `threshold`, `gauge`, `profile` (the drafter's own profile) the rules by topic (each code a
//! [`Rule`](cx::Rule) beside the check that raises it), [`build`] the report built by running
//! them, [`next`] the commands a finding suggests and [`text`] how numbers are written. The
//! main crate's `acceptance` scrapes the server (HTTP and the timing) and re-exports all of this
//! under the same paths.

pub mod build;
pub mod compute;
pub mod cx;
pub mod gauge;
pub mod metrics;
pub mod next;
pub mod position;
pub mod profile;
pub mod rules;
pub mod text;
pub mod threshold;
pub mod verdict;

pub use build::{snapshots_for_model, AcceptanceReport};
pub use compute::Shape;
pub use cx::{Acceptance, Applies, Cx, Need, Rule, Skipped};
pub use position::NEAR_ZERO;
pub use verdict::{break_even, Measurement, Threshold, Verdict, Window};

use crate::diagnostic::CodeInfo;

pub use crate::diagnostic::codes::AcceptanceCode;

/// The documentation of each code this family raises, from the rule that raises it.
pub fn info(code: AcceptanceCode) -> &'static CodeInfo {
    &rules::rule(code).info
}
