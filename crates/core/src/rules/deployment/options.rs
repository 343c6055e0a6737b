//! Options of vLLM's speculative config that a release judges on their own (issue 30): the
//! probabilistic draft sampling vLLM 0.28.0 shipped without separating the draft's random
//! stream from the target's, and `dspark_draft_topk`, which vLLM from 0.28 accepts only for
//! DSpark's Qwen3 drafters and within the draft vocabulary. Both read the speculative config as
//! the deployment states it, and the drafter's config when the rule needs it.

use serde_json::{json, Value};

use super::{At, Cx, Rule, VLLM};
use crate::deployment::Engine;
use crate::diagnostic::codes::DeploymentCode;
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{Node, Path};
use crate::rules::{ByEngine, ReleaseRow};

pub(super) const DRAFT_SAMPLE_PROBABILISTIC: Rule = Rule {
    code: DeploymentCode::DraftSampleProbabilistic,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "draft_sample_method \"probabilistic\" on vLLM 0.28 or older: the draft's noise is the target's",
        explanation: "vLLM's V2 runner samples drafts with Gumbel noise drawn from the request's seed and position, \
the same stream the target's sampling uses; with `draft_sample_method: \"probabilistic\"` the proposal and the \
residual it is resampled from then share a noise vector, and the output is no longer distributed as the target's \
(reported on 0.28.0, fixed after the tag by vllm PR 54282). 0.29.0 salts the draft's positions apart \
(_DRAFT_NOISE_SALT, read up to 0.34.0). 0.27.1 has the option and no salt either. A warning up to 0.28 (the \
output changes silently, nothing fails); nothing from 0.29, and nothing with greedy drafting (the default).",
    },
    applies: VLLM,
    needs: &[],
    check: draft_sample_probabilistic,
};

pub(super) const DRAFT_SAMPLE_PROBABILISTIC_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: None,
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 28),
            Some(Severity::Warning),
            "the draft's Gumbel noise is the target's stream: not lossless (reported at 0.28.0; 0.27.1 has no salt)",
        ),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 29),
            None,
            "salts the draft's noise apart from the target's (read at 0.29.0 and 0.34.0)",
        ),
    ],
};

fn draft_sample_probabilistic(cx: &mut Cx) {
    let key = "draft_sample_method";
    if cx.deployment.spec(key).and_then(Value::as_str) != Some("probabilistic") {
        return;
    }
    let message = "draft_sample_method is \"probabilistic\": up to vLLM 0.28 the draft samples with the target's \
                   Gumbel noise stream, so the output is not distributed as the target's (fixed in 0.29, vllm PR \
                   54282); upgrade, or keep greedy drafting"
        .to_string();
    emit_at_option(cx, key, None, message, Some(json!("greedy")));
}

/// Reports the running rule's finding at `--speculative-config.KEY` (or at the drafter's
/// `field` when the deployment has no command), at the severity its rows give there.
fn emit_at_option(
    cx: &mut Cx,
    key: &str,
    field: Option<Path>,
    message: String,
    expected: Option<Value>,
) {
    let Some(severity) = cx.engine_severity() else {
        return;
    };
    let flag = format!("--speculative-config.{key}");
    let at = At {
        flag: &flag,
        anchor: (Some(crate::engine::vllm::SPECULATIVE_CONFIG), key),
        field,
    };
    cx.emit(severity, at, message, expected);
}

pub(super) const DSPARK_DRAFT_TOPK: Rule = Rule {
    code: DeploymentCode::DsparkDraftTopk,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "dspark_draft_topk where vLLM refuses it: another method, another drafter, or outside the draft vocabulary",
        explanation: "vLLM 0.28.0 added `dspark_draft_topk` to the speculative config (the Markov projection \
evaluated only for the top-k candidates) and raises ValueError when it is set with a method other than dspark, \
when it is not between 1 and the draft vocabulary size (`draft_vocab_size`, else `vocab_size`), or when the \
drafter's architectures name neither Qwen3DSparkModel nor (from 0.29.0) Qwen3OmniDSparkModel; from 0.29.0 a \
DSparkDraftModel config with model_type qwen3 is served as Qwen3DSparkModel first. Read at 0.28.0, 0.29.0, 0.33.0 \
and 0.34.0 (where the method check became the generic \"not supported with speculative method\"). An error from \
0.28; older releases do not know the key.",
    },
    applies: VLLM,
    needs: &[],
    check: dspark_draft_topk,
};

pub(super) const DSPARK_DRAFT_TOPK_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: None,
    rows: &[
        ReleaseRow::until(Engine::Vllm, (0, 27), None, "no such option"),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 28),
            Some(Severity::Error),
            "ValueError for another method, a non-Qwen3 DSpark drafter, or a top-k outside the draft vocabulary",
        ),
    ],
};

/// Why vLLM refuses `dspark_draft_topk = k` here, if it does.
fn topk_refusal(cx: &Cx, k: u64) -> Option<String> {
    let method = cx.deployment.method.as_ref().map(|m| m.name.as_str());
    if let Some(m) = method.filter(|m| *m != "dspark") {
        return Some(format!(
            "method is {m}: vLLM accepts it only with method dspark"
        ));
    }
    let root = cx.drafter.map(|d| d.root())?;
    let vocab = ["draft_vocab_size", "vocab_size"]
        .iter()
        .find_map(|key| root.get(key).and_then(Node::as_u64));
    if let Some(v) = vocab.filter(|v| k == 0 || k > *v) {
        return Some(format!(
            "it must be between 1 and the draft vocabulary size ({v})"
        ));
    }
    let archs = crate::config::architectures(root);
    let qwen3 = root.get("model_type").and_then(Node::as_str) == Some("qwen3");
    let served = archs.iter().any(|a| {
        a == "Qwen3DSparkModel" || a == "Qwen3OmniDSparkModel" || (a == "DSparkDraftModel" && qwen3)
    });
    (!served && !archs.is_empty()).then(|| {
        format!(
            "the drafter's architectures are {}: vLLM accepts it only for Qwen3DSparkModel (and Qwen3OmniDSparkModel)",
            archs.join(", ")
        )
    })
}

fn dspark_draft_topk(cx: &mut Cx) {
    let key = "dspark_draft_topk";
    let Some(k) = cx.deployment.spec(key).and_then(Value::as_u64) else {
        return;
    };
    let Some(why) = topk_refusal(cx, k) else {
        return;
    };
    let message =
        format!("dspark_draft_topk is {k}, but {why}: vLLM 0.28 and later raise ValueError");
    emit_at_option(cx, key, Some(Path::key("architectures")), message, None);
}
