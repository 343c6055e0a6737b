//! SGLang's gauge rule: `sglang:spec_accept_length` holds the most recent batch's value, so a
//! gauge that never moved and no token counter showing traffic may describe a batch from before
//! the window (`acceptance-static-gauge`).

use super::compute::SGLANG_ACCEPT_LENGTH;
use super::cx::{Applies, Cx, Need, Rule};
use super::text::fmt2;
use super::verdict::Measurement;
use super::AcceptanceCode;
use crate::diagnostic::{CodeInfo, Severity};
use crate::engine::MetricsKind;

pub(super) const STATIC_GAUGE: Rule = Rule {
    code: AcceptanceCode::StaticGauge,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "SGLang's acceptance gauge did not change during the window",
        explanation: "sglang:spec_accept_length holds the value of the most recent batch. It had the same value in every sample and the server exports no generated-token counter to show traffic, so the number may describe a batch from before the window. Measure again under traffic or with a longer --window.",
    },
    applies: Applies::Exporting(MetricsKind::Gauges),
    needs: &[Need::GaugeSamples],
    check: static_gauge,
};

fn static_gauge(cx: &mut Cx) {
    let Measurement::Gauges(w) = cx.measurement else {
        return;
    };
    if !w.static_gauge {
        return;
    }
    let gauge = SGLANG_ACCEPT_LENGTH;
    cx.emit(
        gauge,
        format!(
            "{gauge} was {} in all {} samples and no token counter shows traffic: it may be the last batch before the window",
            fmt2(w.accept_length.mean),
            w.accept_length.samples
        ),
    );
}
