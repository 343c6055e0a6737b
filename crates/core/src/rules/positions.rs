//! Positions: a drafter's rotary embedding, and the length it was built for, against its target's. The engines build the draft's
//! rotary embedding from the draft's own config (vLLM's DFlash and EAGLE-3 models pass the
//! draft config's `rope_parameters` to `get_rope`), so the config must say what the drafter was
//! trained with; a base or a scaling that differs from the target's is most often a config
//! copied from another model or a converter that dropped the scaling. Trainers have also
//! ignored the config's base (SpecForge#265), so a difference can be what was trained: the
//! measured effect is an acceptance loss, not a collapse, and the rule warns.

use serde_json::json;

use super::{Applies, ByEngine, Ctx, Engine, LintCode, ReleaseRow, Rule};
use crate::config::{field, RopeFacts};
use crate::diagnostic::{CodeInfo, Severity};
use crate::engine::DraftLength;
use crate::json::Path;

pub(super) const RULES: &[Rule] = &[DRAFT_ROPE_MISMATCH, DRAFT_MAX_POSITION_SHORT];

pub(super) const BY_ENGINE: &[(LintCode, &ByEngine)] = &[(
    LintCode::DraftMaxPositionShort,
    &DRAFT_MAX_POSITION_SHORT_BY_ENGINE,
)];

const DRAFT_MAX_POSITION_SHORT_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 28),
            Some(Severity::Warning),
            "raises only an EAGLE draft's value (config/speculative.py); on the V1 runner, the default for most \
targets, drafting stops for a request past the draft's length, while a DFlash2 or mixed-attention drafter (forced \
onto V2) reads past its rotary cache",
        ),
        ReleaseRow::between(
            Engine::Vllm,
            (0, 29),
            (0, 32),
            Some(Severity::Error),
            "raises only an EAGLE draft's value, and its default V2 runner hands the drafter the target's \
positions with no length gate: the first request past the draft's length reads past its rotary cache, a CUDA \
illegal memory access that takes the engine down (vllm#57941)",
        ),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 33),
            Some(Severity::Info),
            "raises every sharing draft's value to the target's max_model_len when its RoPE type only sizes the \
cache; for the others (YaRN, DeepSeek) it caps the served max_model_len to the draft's instead",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "builds the draft at the target's context length (dflash_worker.py from 0.5.11, \
draft_worker_common.py in 0.5.23) and ModelConfig raises ValueError when it exceeds the draft's derived length, \
unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1: the server does not start as launched",
        ),
    ],
};

const DRAFT_MAX_POSITION_SHORT: Rule = Rule {
    code: LintCode::DraftMaxPositionShort,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a DFlash/DSpark drafter's max_position_embeddings is below the target's",
        explanation: "A block drafter (DFlash, DFlash2, DSpark) reads the target's absolute positions for its \
context, and its rotary cache is sized by its own max_position_embeddings. vLLM up to 0.32 raises that value to \
the target's max_model_len for EAGLE drafts only (config/speculative.py, read at 0.28.0 and 0.32.0); from 0.29 its \
default V2 runner has no length gate, so the first request longer than the draft's value reads past the cache: a \
CUDA illegal memory access that takes the engine down (vllm#57941: Muse-Glimmer-30B served at 393,216 with a \
DFlash2 draft of 131,072; vllm#57964). On 0.28's V1 runner drafting just stops for such a request. vLLM 0.33 raises \
every sharing draft's value (or, for YaRN/DeepSeek RoPE, caps max_model_len to the draft's): info. SGLang (DFlash \
from 0.5.11, DSpark) builds the draft with the target's context length, and its ModelConfig raises ValueError \
(\"Target model's context_length ... is greater than the derived context_length\") unless \
SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1: the server does not start as launched, an error (a launch line that \
sets the variable has the draft's length raised to the target's: no finding). Compared with the \
length the launch line serves the target at when it states one (vLLM --max-model-len, `32k`/`32K` as vLLM reads \
them, or an --hf-overrides max_position_embeddings; SGLang --context-length, or a --json-model-override-args \
max_position_embeddings, which SGLang applies to the draft too), else with the target config's \
max_position_embeddings, a lower bound of what it is served with. Set the drafter's max_position_embeddings to the \
length the target is served with, serve the target no longer than the drafter, or serve with vLLM 0.33 or later.",
    },
    applies: Applies::BlockDrafters,
    needs: &[],
    check: draft_max_position_short,
};

fn draft_max_position_short(cx: &mut Ctx) {
    let (Some(reach), Some(d)) = (Reach::of(cx), draft_positions(cx)) else {
        return;
    };
    if d >= reach.tokens {
        return;
    }
    let n = reach.tokens;
    let message = format!(
        "max_position_embeddings {d} is below {}: the engine hands the drafter the target's positions and its \
         rotary cache covers {d}, so a longer request reads past it (vLLM 0.29–0.32 crash, vllm#57941; SGLang \
         refuses to start the draft); set `max_position_embeddings` to {n}, or serve the target at most {d} tokens",
        reach.named
    );
    if let Some(diag) = cx.emit_by_engine(&Path::key("max_position_embeddings"), message) {
        diag.expected = Some(json!(n));
    }
}

/// The length a drafter must cover, and how a message names it: the launch line's served
/// length when it states one (it may serve the target beyond its config, or below it), else the
/// target config's `max_position_embeddings` (a lower bound: engines derive at least that).
pub(super) struct Reach {
    pub tokens: u64,
    pub named: String,
}

impl Reach {
    pub fn of(cx: &Ctx) -> Option<Reach> {
        if let Some((tokens, stated_by)) = cx
            .options
            .served_length
            .as_ref()
            .and_then(|s| s.tokens.as_ref())
        {
            return Some(Reach {
                tokens: *tokens,
                named: format!("{tokens}, the length the line serves the target at ({stated_by})"),
            });
        }
        let t = cx.facts?.max_position_embeddings?;
        Some(Reach {
            tokens: t,
            named: format!("the target's {t}"),
        })
    }
}

/// The drafter's own length as the engine builds it from the line: an override the engine
/// applies to the draft too, else the drafter config's; `None` where the engine raises it to
/// the served length (nothing to compare) or the config states none.
pub(super) fn draft_positions(cx: &Ctx) -> Option<u64> {
    let own = || {
        cx.root
            .get("max_position_embeddings")
            .and_then(|n| super::positive_int(n).ok())
    };
    match cx.options.served_length.as_ref().map(|s| &s.draft) {
        None | Some(DraftLength::Own) => own(),
        Some(DraftLength::Set(n)) => Some(*n),
        Some(DraftLength::Raised(_)) => None,
    }
}

const DRAFT_ROPE_MISMATCH: Rule = Rule {
    code: LintCode::DraftRopeMismatch,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the drafter's rotary embedding (rope_theta, rope scaling type or factor) differs from the target's",
        explanation: "Engines build the draft's rotary embedding from the draft's own config: vLLM 0.34.0's DFlash \
model passes the draft config's rope_parameters to get_rope (qwen3_dflash.py), as its EAGLE-3 model does; nothing \
compares them with the target's. A drafter is trained on the target's positions, so a base or a scaling that \
differs from the target's is usually a config copied from another model or a converter that lost the scaling \
(speculators#574). Reported effects are an acceptance and accuracy loss rather than a collapse (vllm-ascend#6612 \
for a speculators EAGLE-3 head whose rope_theta differs; sfllm#32 measured 2.39 against 2.50 accepted tokens for \
two bases), and some trainers ignored the config's base (SpecForge#265), so a difference can be what was trained: \
a warning. Compared only where both configs state the value (a draft without rope_theta gets its loader's \
default, which this tool does not guess).",
    },
    applies: Applies::All,
    needs: &[],
    check: draft_rope_mismatch,
};

fn draft_rope_mismatch(cx: &mut Ctx) {
    let Some(target) = cx.facts.and_then(|f| f.rope.clone()) else {
        return;
    };
    let Some(draft) = RopeFacts::read(cx.root) else {
        return;
    };
    if let (Some(d), Some(t)) = (draft.theta, target.theta) {
        if !same(d, t) {
            let path = field(cx.root, "rope_theta")
                .map(|(p, _)| p)
                .unwrap_or_else(|| Path::key("rope_theta"));
            let d = cx.emit(
                &path,
                format!(
                    "rope_theta is {d} and the target's is {t}: the engine rotates the draft's positions with \
                     {d}; if the drafter was trained with the target's base, set `{path}` to {t} (keep {d} only if \
                     training used it)"
                ),
            );
            // A whole base as the integer configs write (`1000000`, not `1000000.0`).
            d.expected = Some(if t.fract() == 0.0 && t.abs() < 1e15 {
                json!(t as i64)
            } else {
                json!(t)
            });
        }
    }
    if draft.scaling != target.scaling || !same_factor(draft.factor, target.factor) {
        let path = ["rope_scaling", "rope_parameters"]
            .into_iter()
            .find(|k| cx.root.get(k).is_some())
            .map(Path::key)
            .unwrap_or_else(|| Path::key("rope_scaling"));
        cx.emit(
            &path,
            format!(
                "the draft's RoPE scaling is {} and the target's is {}: past the original context the draft's \
                 positions no longer match the target's; give `{path}` the target's scaling (type and factor) \
                 unless the drafter was trained without it",
                scaling(&draft),
                scaling(&target)
            ),
        );
    }
}

/// Bases compare by value with a relative tolerance (`1e6` and `1000000.0` are one base).
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

fn same_factor(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// A scaling as a message shows it: `none`, `yarn with factor 4`, `llama3`.
fn scaling(r: &RopeFacts) -> String {
    match (&r.scaling, r.factor) {
        (None, _) => "none".to_string(),
        (Some(kind), Some(f)) => format!("{kind} with factor {f}"),
        (Some(kind), None) => kind.clone(),
    }
}
