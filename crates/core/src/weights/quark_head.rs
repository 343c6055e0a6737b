//! SGLang's Qwen3.5 MTP class and a quark exclude list with `mtp.` entries: from 0.5.12 it reads
//! the list whole before any module is matched and, when it finds one, builds the whole head
//! BF16 (`quant_config = None`; qwen3_5_mtp.py, sgl-project/sglang#23113); from 0.5.21 it does
//! so only when an `mtp.` entry names `mlp.experts` (a mixed head keeps its MXFP4 experts,
//! #23146), matching the list module by module otherwise, as vLLM and SGLang up to 0.5.11 do.
//! So a BF16 head excluded only in part loads on 0.5.12–0.5.20 though it fails elsewhere, and a
//! head that stores its experts quantized fails on 0.5.12–0.5.20 though it loads elsewhere.
//! These tables give the two MTP weight rules (`weights-mtp-unquantized`,
//! `weights-mtp-quant-excluded`) their verdicts for such a head.

use super::cx::Cx;
use super::quant_exclude::{Exclusions, Method, QuarkHeadBf16};
use crate::diagnostic::Severity;
use crate::json::Node;
use crate::rules::{ByEngine, Engine, ReleaseRow};

/// The model types whose MTP head SGLang builds with qwen3_5_mtp.py (top level or
/// `text_config`).
const QWEN35_MODEL_TYPES: &[&str] = &["qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text"];

const SGLANG_FROM: (u32, u32, u32) = (0, 5, 12);
const SGLANG_ANY_ENTRY_UNTIL: (u32, u32, u32) = (0, 5, 20);

/// The builds that match the list module by module, whatever its `mtp.` entries: vLLM, and
/// SGLang before its whole-head rule (0.5.11 and older).
const VLLM_BF16_FAILS: ReleaseRow = ReleaseRow::any_version(
    Engine::Vllm,
    Some(Severity::Error),
    "matches the list module by module: a quantized layer for the BF16 weight",
);
const SGLANG_BEFORE_BF16_FAILS: ReleaseRow = ReleaseRow::until_release(
    Engine::Sglang,
    (0, 5, 11),
    Some(Severity::Error),
    "matches the list module by module (no whole-head rule yet)",
);
const VLLM_QUANTIZED_LOADS: ReleaseRow = ReleaseRow::any_version(
    Engine::Vllm,
    None,
    "matches the list module by module: it loads",
);
const SGLANG_BEFORE_QUANTIZED_LOADS: ReleaseRow = ReleaseRow::until_release(
    Engine::Sglang,
    (0, 5, 11),
    None,
    "matches the list module by module: it loads",
);

/// A module stored BF16 that the list does not exclude, with `mtp.` entries but none naming the
/// experts: SGLang 0.5.12–0.5.20 builds it BF16 (the whole head), every other build quantized.
pub(super) const BF16_MODULE_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, a Qwen3.5 head whose `exclude` has `mtp.` entries, none naming the experts: a BF16 module"),
    no_engine: Some(Severity::Error),
    rows: &[
        VLLM_BF16_FAILS,
        SGLANG_BEFORE_BF16_FAILS,
        ReleaseRow {
            engine: Engine::Sglang,
            since: Some(SGLANG_FROM),
            until: Some(SGLANG_ANY_ENTRY_UNTIL),
            severity: None,
            does: "builds the whole head BF16 when any exclude entry starts `mtp.` (qwen3_5_mtp.py): it loads",
        },
        ReleaseRow::from_release(
            Engine::Sglang,
            (0, 5, 21),
            Some(Severity::Error),
            "builds the head BF16 only for an `mtp.` entry naming `mlp.experts`; module by module otherwise",
        ),
    ],
};

/// The same with an `mtp.` entry naming the experts: SGLang from 0.5.12 builds the whole head BF16.
pub(super) const BF16_MODULE_EXPERTS_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, a Qwen3.5 head whose `exclude` has an `mtp.` entry naming the experts: a BF16 module"),
    no_engine: Some(Severity::Error),
    rows: &[
        VLLM_BF16_FAILS,
        SGLANG_BEFORE_BF16_FAILS,
        ReleaseRow::from_release(
            Engine::Sglang,
            SGLANG_FROM,
            None,
            "builds the whole head BF16 (qwen3_5_mtp.py): it loads",
        ),
    ],
};

/// A module stored quantized (MXFP4 experts), `mtp.` entries but none naming the experts:
/// SGLang 0.5.12–0.5.20 builds it BF16 and the quantized weights do not fit.
pub(super) const QUANTIZED_MODULE_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, a Qwen3.5 head whose `exclude` has `mtp.` entries, none naming the experts: a quantized module"),
    no_engine: Some(Severity::Warning),
    rows: &[
        VLLM_QUANTIZED_LOADS,
        SGLANG_BEFORE_QUANTIZED_LOADS,
        ReleaseRow {
            engine: Engine::Sglang,
            since: Some(SGLANG_FROM),
            until: Some(SGLANG_ANY_ENTRY_UNTIL),
            severity: Some(Severity::Error),
            does: "builds the whole head BF16 for any `mtp.` entry: the quantized weights do not fit the BF16 \
parameters (the case 0.5.21's qwen3_5_mtp.py names: MXFP4 expert shards that no longer fit)",
        },
        ReleaseRow::from_release(
            Engine::Sglang,
            (0, 5, 21),
            None,
            "keeps the experts quantized unless an `mtp.` entry names them: it loads",
        ),
    ],
};

/// The same with an `mtp.` entry naming the experts: SGLang from 0.5.12 builds them BF16.
pub(super) const QUANTIZED_MODULE_EXPERTS_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, a Qwen3.5 head whose `exclude` has an `mtp.` entry naming the experts: a quantized module"),
    no_engine: Some(Severity::Warning),
    rows: &[
        VLLM_QUANTIZED_LOADS,
        SGLANG_BEFORE_QUANTIZED_LOADS,
        ReleaseRow::from_release(
            Engine::Sglang,
            SGLANG_FROM,
            Some(Severity::Error),
            "builds the whole head BF16: the quantized weights do not fit the BF16 parameters",
        ),
    ],
};

/// The `mtp.` entries SGLang's Qwen3.5 MTP class reacts to, when the head is one it builds
/// and the list is quark's.
pub(super) fn head_bf16(cx: &Cx, ex: &Exclusions) -> Option<QuarkHeadBf16> {
    if ex.method != Method::Quark {
        return None;
    }
    is_qwen35(cx.v.config.root())
        .then(|| ex.sglang_quark_head_bf16())
        .flatten()
}

/// Whether the target is one whose MTP head SGLang builds with qwen3_5_mtp.py.
pub(super) fn is_qwen35(root: &Node) -> bool {
    [
        root.get("model_type"),
        root.get("text_config").and_then(|t| t.get("model_type")),
    ]
    .into_iter()
    .flatten()
    .filter_map(|n| n.as_str())
    .any(|t| QWEN35_MODEL_TYPES.contains(&t))
}

/// The verdict for a BF16 module the list leaves quantized (`quantized`: false) or for a module
/// stored quantized (`true`), at the engine and release judged; `None` where it loads.
pub(super) fn verdict(cx: &Cx, head: &QuarkHeadBf16, quantized: bool) -> Option<Severity> {
    let table = match (quantized, head.experts_entry.is_some()) {
        (false, false) => &BF16_MODULE_BY_ENGINE,
        (false, true) => &BF16_MODULE_EXPERTS_BY_ENGINE,
        (true, false) => &QUANTIZED_MODULE_BY_ENGINE,
        (true, true) => &QUANTIZED_MODULE_EXPERTS_BY_ENGINE,
    };
    table.judge(cx.v.engine.as_ref()).map(|j| j.severity)
}
