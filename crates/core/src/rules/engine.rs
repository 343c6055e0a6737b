//! Engine launch parameters against the config: vLLM's `--speculative-config` method and
//! `num_speculative_tokens`, SGLang's `--speculative-num-draft-tokens`. `dflash-check launch`
//! reads them from the real command line; `lint --engine` takes them as flags.

use serde_json::json;

use super::{Applies, ByEngine, Ctx, Engine, EngineRow, Family, LintCode, Need, Rule};
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{Node, Path};

/// The rules here whose severity follows the engine and its version.
pub(super) const BY_ENGINE: &[(LintCode, &ByEngine)] = &[(
    LintCode::NumSpeculativeTokensTooSmall,
    &NUM_SPECULATIVE_TOKENS_TOO_SMALL_BY_ENGINE,
)];

pub(super) const RULES: &[Rule] = &[
    SPECULATIVE_CONFIG_METHOD,
    NUM_SPECULATIVE_TOKENS_MISSING,
    NUM_SPECULATIVE_TOKENS_TOO_LARGE,
    NUM_SPECULATIVE_TOKENS_TOO_SMALL,
    NUM_DRAFT_TOKENS_MISMATCH,
];

/// Where launch findings point in the config: the block size when there is one.
fn anchor(cx: &Ctx) -> Path {
    cx.block_size().map_or_else(Path::root, |(p, _)| p)
}

fn sample_from_anchor(cx: &Ctx) -> bool {
    cx.dflash_config()
        .and_then(|d| d.get("sample_from_anchor"))
        .or_else(|| cx.root.get("sample_from_anchor"))
        .and_then(Node::as_bool)
        == Some(true)
}

const SPECULATIVE_CONFIG_METHOD: Rule = Rule {
    code: LintCode::SpeculativeConfigMethod,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the vLLM speculative-config method does not match the drafter family",
        explanation: "vLLM picks the proposer from `method` (auto-detected from \"dflash\"/\"eagle3\" in the repo \
name when absent): `dflash` for DFlash and DFlash2, `dspark` for DSpark, `eagle3` for EAGLE-3 heads. DFlashProposer \
asserts method == \"dflash\"; another method loads the drafter with the wrong proposer. A DSpark drafter served as \
`dflash` with `sample_from_anchor: true` is refused by vLLM's V2 DFlash speculator (an error); otherwise a mismatch \
is a warning.",
        source: "vllm-project/vllm vllm/config/speculative.py@v0.26.0 (method auto-detection), vllm/v1/spec_decode/dflash.py@v0.26.0 (DFlashProposer asserts method == \"dflash\"); vllm/v1/worker/gpu/spec_decode/dflash/speculator.py@0074614 (sample_from_anchor)",
    },
    applies: Applies::All,
    needs: &[Need::Engine],
    check: speculative_config_method,
};

fn speculative_config_method(cx: &mut Ctx) {
    if cx.engine() != Some(Engine::Vllm) {
        return;
    }
    let Some(method) = cx
        .options
        .speculative_config
        .as_ref()
        .and_then(|s| s.get("method"))
        .and_then(|m| m.as_str())
        .map(str::to_string)
    else {
        return;
    };
    let want = match cx.detection.name {
        Family::Speculators => match cx.detection.speculators_model_type.as_deref() {
            Some("dflash") => Some("dflash"),
            Some("dspark") => Some("dspark"),
            Some("eagle3") | Some("peagle") => Some("eagle3"),
            Some("mtp") => Some("mtp"),
            _ => None,
        },
        other => other.vllm_method(),
    };
    let Some(want) = want else {
        return;
    };
    if method == want || (want == "eagle3" && method == "eagle") {
        return;
    }
    let refused = method == "dflash" && sample_from_anchor(cx);
    let severity = if refused {
        Severity::Error
    } else {
        Severity::Warning
    };
    let why = if refused {
        "; vLLM's DFlash speculator refuses sample_from_anchor: true"
    } else {
        ""
    };
    cx.emit_as(
        severity,
        &Path::root(),
        format!(
            "--speculative-config method {method:?} but the drafter is {}: vLLM expects \"{want}\"{why}",
            cx.detection.name.as_str()
        ),
    )
    .expected = Some(json!(want));
}

/// The speculative config's `num_speculative_tokens`, if the config has one.
fn k_value(cx: &Ctx) -> Option<serde_json::Value> {
    cx.options
        .speculative_config
        .as_ref()?
        .get("num_speculative_tokens")
        .cloned()
}

const NUM_SPECULATIVE_TOKENS_MISSING: Rule = Rule {
    code: LintCode::NumSpeculativeTokensMissing,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "vLLM speculative-config without num_speculative_tokens",
        explanation: "vLLM refuses a speculative model without `num_speculative_tokens` (\"A speculative model \
was provided, but `num_speculative_tokens` was not provided\") unless the drafter config carries `n_predict` (MTP \
heads: num_nextn_predict_layers); speculators-format configs carry `speculative_tokens` and are exempt. The convention for DFlash is block_size - 1 \
(15 for -b16 drafters); DSpark uses block_size.",
        source: "vllm-project/vllm vllm/config/speculative.py@v0.26.0 (__post_init__: n_predict default, raise; _verify_args)",
    },
    applies: Applies::All,
    needs: &[Need::Engine],
    check: num_speculative_tokens_missing,
};

fn num_speculative_tokens_missing(cx: &mut Ctx) {
    if cx.engine() != Some(Engine::Vllm) || cx.options.speculative_config.is_none() {
        return;
    }
    if cx.detection.name == Family::Speculators
        || cx.root.get("n_predict").is_some()
        || cx.root.get("num_nextn_predict_layers").is_some()
    {
        return;
    }
    let block = cx.block_size().map(|(_, b)| b);
    let suggested = block.map(|b| {
        if cx.detection.name == Family::Dspark {
            b
        } else {
            b - 1
        }
    });
    match k_value(cx) {
        None | Some(serde_json::Value::Null) => {
            let hint = suggested.map_or(String::new(), |k| format!(" (conventionally {k} here)"));
            let d = cx.emit(
                &anchor(cx),
                format!("--speculative-config has no num_speculative_tokens: vLLM refuses to start{hint}"),
            );
            d.expected = suggested.map(Into::into);
        }
        Some(v) if v.as_u64().is_none_or(|k| k == 0) => {
            let d = cx.emit(
                &anchor(cx),
                format!(
                    "--speculative-config num_speculative_tokens is {v}, not a positive integer"
                ),
            );
            d.expected = suggested.map(Into::into);
        }
        Some(_) => {}
    }
}

const NUM_SPECULATIVE_TOKENS_TOO_LARGE: Rule = Rule {
    code: LintCode::NumSpeculativeTokensTooLarge,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "num_speculative_tokens is above the family's convention (DFlash: block_size - 1)",
        explanation: "A DFlash drafter drafts one block of block_size positions, the first being the last verified \
token, so the convention is K = block_size - 1 (z-lab's README uses 15 for -b16 drafters; the speculators converter \
writes it; vllm-project/recipes#837). No engine enforces it: the `block_size` in vLLM's DFlash code is the KV-cache \
page size (vllm#50012, v0.26.0), not the drafter's. DSpark drafts K = block_size legally when its anchor is sampled (`sample_from_anchor`, default true), and vLLM \
refuses a Qwen3-Omni DSpark drafter unless K equals block_size (an error there). A DSpark head embedded in a \
DeepSeek-V4 checkpoint (`dspark_block_size`) is an error too when K exceeds its block: a public report measured \
acceptance collapsing at every position, not only past the block (vLLM PR 41834: K 7 on dspark_block_size 5 gave \
4.4 % against 34.7 % at K 5); K below it is num-speculative-tokens-too-small's (refused by vLLM 0.26 and 0.27), so \
there K must equal dspark_block_size. Otherwise a convention: a warning.",
        source: "vllm-project/speculators src/speculators/convert/dflash/converter.py@c05b95b:132, src/speculators/models/dspark/config.py@c05b95b:28; vllm-project/vllm vllm/config/speculative.py@002e77c (_validate_qwen3_omni_dspark); vllm-project/vllm#50012; vllm-project/recipes#837; vllm-project/vllm PR 41834 (DeepSeek-V4-Flash-0731 DSpark, num_speculative_tokens 7 vs dspark_block_size 5)",
    },
    applies: Applies::BlockDrafters,
    needs: &[Need::Engine],
    check: num_speculative_tokens_too_large,
};

fn num_speculative_tokens_too_large(cx: &mut Ctx) {
    if cx.engine() != Some(Engine::Vllm) {
        return;
    }
    let (Some(k), Some((block_path, b))) = (k_value(cx).and_then(|v| v.as_u64()), cx.block_size())
    else {
        return;
    };
    let dspark = cx.detection.name == Family::Dspark;
    // DSpark's anchor is itself a prediction unless sample_from_anchor is false (top level,
    // default true: speculators src/speculators/models/dspark/config.py@c05b95b:28).
    let anchor_counts =
        dspark && cx.root.get("sample_from_anchor").and_then(Node::as_bool) != Some(false);
    let omni = crate::config::architectures(cx.root)
        .iter()
        .any(|a| a == "Qwen3OmniDSparkModel");
    if omni && k != b {
        cx.emit_as(
            Severity::Error,
            &anchor(cx),
            format!(
                "--speculative-config num_speculative_tokens {k} but block_size is {b}: vLLM refuses a \
                 Qwen3-Omni DSpark drafter unless they are equal"
            ),
        )
        .expected = Some(json!(b));
        return;
    }
    // A DSpark head inside a DeepSeek-V4 checkpoint: K above its block collapsed acceptance at
    // every position, not only past the block (vLLM PR 41834: 4.4 % with K 7 on a block of 5).
    if block_path.last_key() == Some("dspark_block_size") && k > b {
        cx.emit_as(
            Severity::Error,
            &block_path,
            format!(
                "--speculative-config num_speculative_tokens {k} exceeds dspark_block_size {b}: with the DSpark \
                 head of a DeepSeek-V4 checkpoint acceptance collapsed at every position, not only past the block \
                 (vLLM PR 41834: 4.4 % at K 7, 34.7 % at K 5); use {b}"
            ),
        )
        .expected = Some(json!(b));
        return;
    }
    let limit = if anchor_counts { b } else { b - 1 };
    if k > limit {
        let rule = if anchor_counts {
            "block_size"
        } else {
            "block_size - 1"
        };
        cx.emit(
            &anchor(cx),
            format!(
                "--speculative-config num_speculative_tokens {k} exceeds {rule} = {limit}: positions past the \
                 block are drafted from nothing"
            ),
        )
        .expected = Some(json!(limit));
    }
}

const NUM_SPECULATIVE_TOKENS_TOO_SMALL: Rule = Rule {
    code: LintCode::NumSpeculativeTokensTooSmall,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "num_speculative_tokens below a DeepSeek-V4 DSpark head's dspark_block_size: vLLM 0.26 and 0.27 refuse it",
        explanation: "vLLM 0.26.0 and 0.27.1 raise ValueError \"DSpark requires num_speculative_tokens >= \
dspark_block_size\" when method is dspark and the draft config carries `dspark_block_size` (a DSpark head embedded \
in a DeepSeek-V4 checkpoint); their comment says a shorter K \"yields incorrect (garbled) output rather than merely \
lower acceptance\". vLLM 0.25.1 has no such check, nor has main at 002e77c (unreleased when read): a warning there, \
since the output problem the check guarded against was not read as fixed. With K above the block acceptance \
collapses (num-speculative-tokens-too-large, vLLM PR 41834), so at 0.26 and 0.27 K equal to dspark_block_size is \
the one value that neither fails nor collapses. SGLang takes --speculative-num-draft-tokens instead: nothing there.",
        source: "vllm-project/vllm vllm/config/speculative.py@vllm==0.26.0:1004-1026, @vllm==0.27.1:1035-1057 (DSpark requires num_speculative_tokens >= dspark_block_size); absent at vllm==0.25.1 and at main 002e77c",
    },
    applies: Applies::Only(&[Family::Dspark]),
    needs: &[Need::Engine],
    check: num_speculative_tokens_too_small,
};

const NUM_SPECULATIVE_TOKENS_TOO_SMALL_BY_ENGINE: ByEngine = ByEngine {
    no_engine: None,
    rows: &[
        EngineRow::until(
            Engine::Vllm,
            (0, 25),
            Some(Severity::Warning),
            "no check (read at 0.25.1); 0.26 added it for incorrect output below the block",
        ),
        EngineRow {
            engine: Engine::Vllm,
            since: Some((0, 26)),
            until: Some((0, 27)),
            severity: Some(Severity::Error),
            does: "raises ValueError \"DSpark requires num_speculative_tokens >= dspark_block_size\" (read at 0.26.0 and 0.27.1)",
        },
        EngineRow::since(
            Engine::Vllm,
            (0, 28),
            Some(Severity::Warning),
            "main (002e77c, unreleased when read) has no such check; the output problem was not read as fixed",
        ),
        EngineRow::any_version(
            Engine::Sglang,
            None,
            "takes --speculative-num-draft-tokens, not num_speculative_tokens",
        ),
    ],
};

fn num_speculative_tokens_too_small(cx: &mut Ctx) {
    if cx.engine() != Some(Engine::Vllm) {
        return;
    }
    // vLLM's check runs for method dspark (an absent method is auto-detected; another method is
    // speculative-config-method's).
    let method = cx
        .options
        .speculative_config
        .as_ref()
        .and_then(|s| s.get("method"))
        .and_then(|m| m.as_str());
    if method.is_some_and(|m| m != "dspark") {
        return;
    }
    let (Some(k), Some((path, b))) = (k_value(cx).and_then(|v| v.as_u64()), cx.block_size()) else {
        return;
    };
    if path.last_key() != Some("dspark_block_size") || k == 0 || k >= b {
        return;
    }
    let Some(d) = cx.emit_by_engine(
        &path,
        format!(
            "--speculative-config num_speculative_tokens {k} is below dspark_block_size {b}: vLLM 0.26 and 0.27 \
             raise \"DSpark requires num_speculative_tokens >= dspark_block_size\" (a shorter K gives incorrect \
             output, their comment says), and K above the block collapses acceptance (vLLM PR 41834); use {b}"
        ),
    ) else {
        return;
    };
    d.expected = Some(json!(b));
}

const NUM_DRAFT_TOKENS_MISMATCH: Rule = Rule {
    code: LintCode::NumDraftTokensMismatch,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "SGLang --speculative-num-draft-tokens differs from block_size",
        explanation: "SGLang's DFLASH algorithm expects --speculative-num-draft-tokens equal to the drafter's \
block_size (16 for -b16 drafters) and infers it from the config when the flag is omitted; a different value only \
logs \"DFLASH block size mismatch\" and wastes or truncates drafts.",
        source: "sgl-project/sglang python/sglang/srt/speculative/dflash_worker.py@7f151c5; sgl-project/sglang#23553",
    },
    applies: Applies::BlockDrafters,
    needs: &[Need::Engine],
    check: num_draft_tokens_mismatch,
};

fn num_draft_tokens_mismatch(cx: &mut Ctx) {
    if cx.engine() != Some(Engine::Sglang) {
        return;
    }
    let (Some(b_cli), Some((path, b))) = (cx.options.num_draft_tokens, cx.block_size()) else {
        return;
    };
    if b_cli != b {
        cx.emit(
            &path,
            format!(
                "--num-draft-tokens {b_cli} differs from `{path}` {b}: SGLang expects block_size"
            ),
        )
        .expected = Some(json!(b));
    }
}
