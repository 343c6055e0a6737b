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
//! Layout: [`metrics`] parses one scrape, [`compute`] is the pure arithmetic, [`verdict`]
//! turns a window into a verdict and [`Diagnostic`](crate::diagnostic::Diagnostic)s,
//! [`scrape`] does HTTP and the timing (its sleep is injectable), [`render`] writes the human
//! and JSON reports.

pub mod compute;
pub mod metrics;
pub mod scrape;
pub mod verdict;

pub use compute::{ServerEngine, Shape};
pub use scrape::{measure, HttpSource, MeasureOptions, MetricsSource};
pub use verdict::{AcceptanceReport, DraftFamily, Measurement, Threshold, Verdict};

use crate::diagnostic::{CodeInfo, Severity};

/// vLLM's definition of the numbers this check computes.
const VLLM_METRICS_SOURCE: &str = "vllm-project/vllm:vllm/v1/spec_decode/metrics.py@016a8587edb04ae53c913a1da9355a07dc0ca4ae (SpecDecodingProm: mean acceptance length = 1 + accepted / drafts, per-position = accepted_per_pos / drafts)";

pub use crate::diagnostic::codes::AcceptanceCode;

/// The documentation of each code this family raises.
pub fn info(code: AcceptanceCode) -> &'static CodeInfo {
    match code {
        AcceptanceCode::BelowThreshold => &CodeInfo {
            severity: Severity::Error,
            summary: "the measured acceptance length is below the threshold",
            explanation: "The acceptance length (1 + accepted draft tokens per draft, the bonus token included, as vLLM logs it) over the window is below --min-acceptance-length or, without it, below the break-even point where speculative decoding is slower than none: 1 + c for DFlash (one drafter forward drafts the whole block) and 1 + K·c for EAGLE-style drafters (one forward per drafted token), c being the cost of one drafter forward relative to one target forward (default 0.15 for DFlash, 0.05 for EAGLE; --draft-cost-ratio, --draft-family; derivation in docs/acceptance.md). The per-position shape, when the engine exports it, names the likely cause (acceptance-cliff, acceptance-first-position-low).",
            source: VLLM_METRICS_SOURCE,
        },
        AcceptanceCode::NoThreshold => &CodeInfo {
            severity: Severity::Info,
            summary: "no acceptance threshold is known, so there is no verdict",
            explanation: "No --min-acceptance-length was given and the break-even point cannot be computed: an EAGLE-style drafter's break-even 1 + K·c needs K, which SGLang does not export. The numbers are reported; pass --min-acceptance-length X (for example the acceptance length the drafter's model card reports for a similar workload) to gate on them.",
            source: VLLM_METRICS_SOURCE,
        },
        AcceptanceCode::Cliff => &CodeInfo {
            severity: Severity::Warning,
            summary: "per-position acceptance falls to ~0 after the first few positions",
            explanation: "The first draft positions are accepted at healthy rates and then acceptance drops to about zero at one position and stays there. A drafter that is simply weak decays gradually; a cliff means the later positions are computed wrongly. The reported cause is sliding-window draft layers run as full attention, or with the wrong window: the engine or the config ignores layer_types/sliding_window (vLLM gained DFlash sliding-window attention in PR 40898; its mixed sliding/full layers need VLLM_USE_V2_MODEL_RUNNER=1). Check the drafter's layer_types, sliding_window and use_sliding_window with `dflash-check lint` and `dflash-check diff`, and the engine version and runner.",
            source: "vllm-project/vllm#40898 (sliding-window attention for DFlash drafters); z-lab/dflash#126 (maintainer: SWA layers forced to full attention lower the acceptance length); AEON-7 Qwen3.6-27B DFlash drafter report #6 (per-position acceptance falls to 0.000 after position ~4-5 with 4 of 5 SWA layers run as full attention)",
        },
        AcceptanceCode::FirstPositionLow => &CodeInfo {
            severity: Severity::Warning,
            summary: "position 1 is already rarely accepted: the drafter's first guess is wrong",
            explanation: "Even the first draft token is rarely accepted, so the drafter is not predicting this target at all. Typical causes: a wrong mask_token_id (a token that aliases real text, or one outside the target's embedding), wrong target_layer_ids (off by one between conventions, or the loader's default list), a drafter trained for another target, or an engine path that breaks drafting (vLLM's V2 runner for DFlash). For SGLang, which exports no per-position counters, position 1 is bounded by the acceptance length − 1. Compare the drafter with its authority (`dflash-check diff`) and lint it against the target (`dflash-check lint`).",
            source: "sgl-project/sglang#25454 (aux layer ids off by one between conventions); NVIDIA-NeMo/Automodel#2461 (mask id fallback: acceptance quietly degrades); NVIDIA/Model-Optimizer#1621 (mask id must exist in the target embedding); vllm-project/vllm#49559 (DFlash on the V2 runner: acceptance close to 0%)",
        },
        AcceptanceCode::StaticGauge => &CodeInfo {
            severity: Severity::Info,
            summary: "SGLang's acceptance gauge did not change during the window",
            explanation: "sglang:spec_accept_length holds the value of the most recent batch. It had the same value in every sample and the server exports no generated-token counter to show traffic, so the number may describe a batch from before the window. Measure again under traffic or with a longer --window.",
            source: "sgl-project/sglang:python/sglang/srt/metrics/collector.py@00ae9c1590d2d0bb6c0bfff39e312c34ae3dd538 (spec_accept_length: Gauge, multiprocess_mode=\"mostrecent\")",
        },
    }
}
