//! End-to-end tests of `dflash-check lint` and `explain`: the real binary on tests/lint/
//! fixtures (written by tests/lint/generate.py) and the incident fixtures.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

const Q36: &str = "fixtures/targets/Qwen3.6-27B";
const Q8: &str = "tests/lint/targets/Qwen3-8B";
/// Qwen3-8B with a quantization_config: AWQ, ModelOpt NVFP4, a QuaRot rotation marker.
const Q8_AWQ: &str = "tests/lint/targets/Qwen3-8B-AWQ";
const Q8_NVFP4: &str = "tests/lint/targets/Qwen3-8B-NVFP4";
const Q8_QUAROT: &str = "tests/lint/targets/Qwen3-8B-QuaRot";
/// Qwen3-8B with its rope_theta and the YaRN scaling (factor 4) for long contexts (issue 42).
const Q8_YARN: &str = "tests/lint/targets/Qwen3-8B-YaRN";

mod common;

use common::run;

/// Runs `lint --format json` and returns the exit code and the report.
fn lint_json(path: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["lint", path, "--format", "json"];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args);
    assert!(err.is_empty(), "stderr for {path}: {err}");
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}")),
    )
}

fn codes(report: &Value) -> Vec<(String, String)> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const SPEC_OK: &str = r#"{"method": "dflash", "num_speculative_tokens": 15}"#;

/// (fixture, target, extra args, code that must fire, its severity).
const FIRES: &[(&str, &str, &[&str], &str, &str)] = &[
    // Issue 43: oMLX loads DFlash drafters through dflash-mlx, whose DFlashDraftModelArgs
    // requires a top-level rope_theta; without it oMLX serves the model without its drafter.
    (
        "cases/omlx-rope-parameters",
        Q8,
        &["--engine", "omlx"],
        "omlx-draft-fallback",
        "warning",
    ),
    // Issue 43: mlx-vlm's validate_dflash_target (0.6.16 on) finds a DFlash2 drafter whose
    // num_target_layers is not the target's layer count incompatible and generates without it.
    (
        "cases/dflash2-num-target-layers",
        Q8,
        &["--engine", "mlx-vlm@0.7"],
        "num-target-layers-mismatch",
        "warning",
    ),
    // Issue 43: oMLX up to 0.6.2 pins a dflash-mlx without DFlash2 modules (omlx#2896).
    (
        "cases/dflash2-settings-vllm",
        Q8,
        &["--engine", "omlx@0.6"],
        "omlx-draft-fallback",
        "warning",
    ),
    // Issue 39: vLLM registers DFlash2DraftModel from 0.28.0 (the engine table's capability
    // rows, read in the 0.25.1 to 0.34.0 wheels): 0.27 refuses the drafter at start-up.
    (
        "cases/dflash2-conv-group-size",
        Q8,
        &["--engine", "vllm@0.27"],
        "engine-unsupported",
        "error",
    ),
    // Issue 33: speculation_profile.json beside the drafter (tests/lint/generate.py, profiles
    // from Model-Optimizer's own test case).
    (
        "cases/profile-unmeasured",
        Q8,
        &[],
        "profile-unmeasured",
        "warning",
    ),
    (
        "cases/profile-inconsistent",
        Q8,
        &[],
        "profile-inconsistent",
        "warning",
    ),
    ("cases/profile-method", Q8, &[], "profile-method", "warning"),
    (
        "cases/profile-max-k",
        Q8,
        &[
            "--engine",
            "vllm",
            "--speculative-config",
            r#"{"method": "eagle3", "num_speculative_tokens": 5}"#,
        ],
        "profile-max-k",
        "warning",
    ),
    (
        "cases/profile-identity",
        Q8,
        &[],
        "profile-identity",
        "warning",
    ),
    (
        "cases/field-type-mask-string",
        Q36,
        &[],
        "field-type",
        "error",
    ),
    // Issue 44: NaN or an infinity, which Python's json reads, is an error of its own.
    (
        "cases/non-finite-rope-theta",
        Q36,
        &[],
        "non-finite-number",
        "error",
    ),
    (
        "cases/non-finite-rms-norm-eps",
        Q36,
        &[],
        "non-finite-number",
        "error",
    ),
    (
        "cases/hidden-size-mismatch",
        Q36,
        &[],
        "hidden-size-mismatch",
        "error",
    ),
    (
        "cases/vocab-size-mismatch",
        Q36,
        &[],
        "vocab-size-mismatch",
        "error",
    ),
    (
        "cases/block-size-missing",
        Q36,
        &[],
        "block-size-missing",
        "warning",
    ),
    ("cases/mixed-layout", Q36, &[], "mixed-layout", "warning"),
    (
        "cases/mixed-layout-across-fields",
        Q36,
        &[],
        "mixed-layout",
        "warning",
    ),
    (
        "cases/target-layer-ids-missing",
        Q36,
        &[],
        "target-layer-ids-missing",
        "error",
    ),
    (
        "cases/target-layer-ids-out-of-range",
        Q36,
        &[],
        "target-layer-ids-out-of-range",
        "error",
    ),
    (
        "cases/target-layer-ids-last-layer",
        Q36,
        &[],
        "target-layer-ids-last-layer",
        "warning",
    ),
    (
        "cases/target-layer-ids-order",
        Q36,
        &[],
        "target-layer-ids-order",
        "warning",
    ),
    (
        "cases/target-layer-ids-formula",
        Q36,
        &[],
        "target-layer-ids-formula",
        "warning",
    ),
    (
        "cases/num-target-layers-mismatch",
        Q36,
        &[],
        "num-target-layers-mismatch",
        "warning",
    ),
    ("cases/fc-width", Q36, &[], "fc-width", "info"),
    (
        "cases/mask-token-missing",
        Q36,
        &[],
        "mask-token-missing",
        "error",
    ),
    (
        "cases/mask-token-out-of-range",
        Q36,
        &[],
        "mask-token-out-of-range",
        "error",
    ),
    (
        "cases/mask-token-collision",
        Q36,
        &[],
        "mask-token-collision",
        "info",
    ),
    (
        "cases/mask-token-collision-eos",
        Q36,
        &[],
        "mask-token-collision",
        "info",
    ),
    (
        "cases/mask-token-text-token",
        Q36,
        &[],
        "mask-token-text-token",
        "warning",
    ),
    (
        "cases/layer-types-missing",
        Q36,
        &[],
        "layer-types-missing",
        "warning",
    ),
    (
        "cases/layer-types-length",
        Q36,
        &[],
        "layer-types-length",
        "error",
    ),
    (
        "cases/layer-types-unknown",
        Q36,
        &[],
        "layer-types-unknown",
        "error",
    ),
    (
        "cases/sliding-window-missing",
        Q36,
        &[],
        "sliding-window-missing",
        "error",
    ),
    (
        "cases/sliding-window-null",
        Q36,
        &[],
        "sliding-window-missing",
        "error",
    ),
    // Issue 22: transformers' Qwen3Config drops sliding_window when use_sliding_window is false,
    // and vLLM and SGLang read the drafter's config through it: no window, both refuse (an error);
    // a model type whose config class keeps the window only makes readers disagree (info).
    (
        "cases/use-sliding-window-inconsistent",
        Q36,
        &[],
        "use-sliding-window-inconsistent",
        "error",
    ),
    (
        "cases/use-sliding-window-inconsistent-llama",
        Q36,
        &[],
        "use-sliding-window-inconsistent",
        "info",
    ),
    // Issue 30: speculative-config options vLLM judges by release
    // (speculative_options_follow_the_vllm_version).
    (
        "clean/qwen3.6-27b",
        Q36,
        &[
            "--engine",
            "vllm@0.28",
            "--speculative-config",
            r#"{"method": "dflash", "num_speculative_tokens": 15, "draft_sample_method": "probabilistic"}"#,
        ],
        "draft-sample-probabilistic",
        "warning",
    ),
    (
        "clean/qwen3.6-27b",
        Q36,
        &[
            "--engine",
            "vllm",
            "--speculative-config",
            r#"{"method": "dflash", "num_speculative_tokens": 15, "dspark_draft_topk": 8}"#,
        ],
        "dspark-draft-topk",
        "error",
    ),
    // vLLM 0.25.1 refuses mixed sliding/full layers in every runner; from 0.26 it forces the
    // V2 runner for them (mixed_attention_follows_the_vllm_version).
    (
        "clean/qwen3.6-27b",
        Q36,
        &["--engine", "vllm@0.25", "--speculative-config", SPEC_OK],
        "mixed-attention-vllm",
        "error",
    ),
    (
        "cases/token-id-out-of-range",
        Q36,
        &[],
        "token-id-out-of-range",
        "warning",
    ),
    (
        "cases/token-id-not-special",
        Q36,
        &[],
        "token-id-not-special",
        "info",
    ),
    (
        "cases/token-id-target-mismatch",
        Q36,
        &[],
        "token-id-target-mismatch",
        "info",
    ),
    (
        "clean/qwen3-8b",
        Q8,
        &[
            "--engine",
            "vllm",
            "--speculative-config",
            r#"{"method": "eagle3", "num_speculative_tokens": 15}"#,
        ],
        "speculative-config-method",
        "warning",
    ),
    (
        "clean/qwen3-8b",
        Q8,
        &[
            "--engine",
            "vllm",
            "--speculative-config",
            r#"{"method": "dflash"}"#,
        ],
        "num-speculative-tokens-missing",
        "error",
    ),
    (
        "clean/qwen3-8b",
        Q8,
        &[
            "--engine",
            "vllm",
            "--speculative-config",
            r#"{"method": "dflash", "num_speculative_tokens": 16}"#,
        ],
        "num-speculative-tokens-too-large",
        "warning",
    ),
    (
        "clean/qwen3-8b",
        Q8,
        &["--engine", "sglang", "--num-draft-tokens", "8"],
        "num-draft-tokens-mismatch",
        "warning",
    ),
    (
        "real/qwen3-8b-eagle3",
        Q8,
        &[],
        "eagle-aux-layer-ids-missing",
        "warning",
    ),
    (
        "cases/eagle-aux-layer-ids-out-of-range",
        Q8,
        &[],
        "eagle-aux-layer-ids-out-of-range",
        "error",
    ),
    (
        "real/qwen3-8b-eagle3",
        Q8,
        &[],
        "draft-vocab-size-mismatch",
        "info",
    ),
    (
        "cases/target-layer-ids-duplicate",
        Q36,
        &[],
        "target-layer-ids-duplicate",
        "error",
    ),
    // Rules read from engine source (issue 11), one case each.
    (
        "cases/aux-ids-target-layer-ids-mismatch",
        Q36,
        &[],
        "aux-ids-target-layer-ids-mismatch",
        "warning",
    ),
    (
        "cases/block-size-too-small",
        Q36,
        &[],
        "block-size-too-small",
        "warning",
    ),
    (
        "cases/conv-selector-pair",
        Q8,
        &[],
        "conv-selector-pair",
        "error",
    ),
    (
        "cases/dflash-use-swa",
        Q36,
        &[],
        "dflash-use-swa",
        "warning",
    ),
    (
        "cases/conv-selector-top-level",
        Q8,
        &[],
        "conv-selector-top-level",
        "warning",
    ),
    ("cases/domino-config", Q8, &[], "domino-config", "error"),
    (
        "cases/dspark-export-layout",
        Q36,
        &[],
        "dspark-export-layout",
        "info",
    ),
    ("cases/dspark-markov", Q36, &[], "dspark-markov", "error"),
    (
        "cases/dspark-markov-absent",
        Q36,
        &[],
        "dspark-markov",
        "warning",
    ),
    (
        "cases/dspark-projector-type",
        Q36,
        &[],
        "dspark-projector-type",
        "error",
    ),
    (
        "cases/eagle-aux-layer-ids-count",
        Q8,
        &[],
        "eagle-aux-layer-ids-count",
        "warning",
    ),
    (
        "cases/eagle-aux-layer-ids-count",
        Q8,
        &[
            "--engine",
            "vllm",
            "--speculative-config",
            r#"{"method": "eagle3", "num_speculative_tokens": 3}"#,
        ],
        "eagle-aux-layer-ids-count",
        "error",
    ),
    (
        "cases/eagle-aux-layer-ids-nested",
        Q8,
        &[],
        "eagle-aux-layer-ids-nested",
        "warning",
    ),
    (
        "cases/eagle-max-position-short",
        Q8,
        &[],
        "eagle-max-position-short",
        "warning",
    ),
    // Issue 42: a block drafter built for fewer positions than its target (vllm#57941): vLLM
    // 0.29-0.32 crash past it, 0.28's V1 runner stops drafting, 0.33 raises it.
    (
        "cases/draft-max-position-short",
        Q8,
        &[],
        "draft-max-position-short",
        "warning",
    ),
    (
        "cases/draft-max-position-short",
        Q8,
        &["--engine", "vllm@0.30"],
        "draft-max-position-short",
        "error",
    ),
    (
        "cases/draft-max-position-short",
        Q8,
        &["--engine", "vllm@0.28"],
        "draft-max-position-short",
        "warning",
    ),
    (
        "cases/draft-max-position-short",
        Q8,
        &["--engine", "vllm@0.33"],
        "draft-max-position-short",
        "info",
    ),
    (
        "cases/draft-max-position-short",
        Q8,
        &["--engine", "vllm"],
        "draft-max-position-short",
        "error",
    ),
    // SGLang builds the draft at the target's context length and refuses a shorter one.
    (
        "cases/draft-max-position-short",
        Q8,
        &["--engine", "sglang"],
        "draft-max-position-short",
        "error",
    ),
    // Issue 42: the draft's rotary embedding against the target's (base; scaling type and factor).
    (
        "cases/draft-rope-theta",
        Q8_YARN,
        &[],
        "draft-rope-mismatch",
        "warning",
    ),
    (
        "cases/draft-rope-scaling-dropped",
        Q8_YARN,
        &[],
        "draft-rope-mismatch",
        "warning",
    ),
    // Issue 32: a null aux-id list means "default layers" (vLLM, SGLang), not a wrong type; the
    // speculators format writes it by default and trains on vLLM's default layers.
    (
        "cases/eagle-aux-ids-null",
        Q8,
        &[],
        "eagle-aux-layer-ids-missing",
        "warning",
    ),
    // Issue 30: MTP heads inside a target config (the config is its own target).
    (
        "cases/mtp-target-no-base-layers",
        "tests/lint/cases/mtp-target",
        &[],
        "mtp-base-layers-missing",
        "warning",
    ),
    (
        "cases/mtp-target-no-head",
        "tests/lint/cases/mtp-target-no-head",
        &[
            "--family",
            "mtp",
            "--engine",
            "vllm",
            "--speculative-config",
            r#"{"method": "mtp", "num_speculative_tokens": 1}"#,
        ],
        "mtp-head-missing",
        "error",
    ),
    (
        "cases/mtp-target-two-layers",
        "tests/lint/cases/mtp-target-two-layers",
        &[
            "--engine",
            "vllm",
            "--speculative-config",
            r#"{"method": "mtp", "num_speculative_tokens": 3}"#,
        ],
        "mtp-k-depth",
        "error",
    ),
    (
        "cases/mtp-target-v41",
        "tests/lint/cases/mtp-target-v41",
        &[
            "--engine",
            "vllm",
            "--speculative-config",
            r#"{"method": "mtp", "num_speculative_tokens": 3}"#,
        ],
        "mtp-dspark-stages",
        "error",
    ),
    // Issue 42: a DeepSeek-V4 DSpark checkpoint (DSpark keys in its config) served with method
    // mtp dies in vLLM's MTP loader at every release read (vllm#52111; the control:
    // a_deepseek_v4_with_a_classic_mtp_layer_serves_as_mtp).
    (
        "cases/dspark-embedded",
        "tests/lint/cases/dspark-embedded",
        &[
            "--engine",
            "vllm@0.28",
            "--speculative-config",
            r#"{"method": "mtp", "num_speculative_tokens": 3}"#,
        ],
        "mtp-dspark-stages",
        "error",
    ),
    (
        "cases/dspark-embedded-block-only",
        "tests/lint/cases/dspark-embedded-block-only",
        &[
            "--engine",
            "vllm",
            "--speculative-config",
            r#"{"method": "mtp", "num_speculative_tokens": 1}"#,
        ],
        "mtp-dspark-stages",
        "error",
    ),
    (
        "cases/mtp-target-mimo-v2",
        "tests/lint/cases/mtp-target-mimo-v2",
        &[],
        "mtp-layers-unused",
        "info",
    ),
    // vLLM up to 0.33 rewrites a written mtp from "dflash" in the draft's name.
    (
        "cases/mtp-target",
        "tests/lint/cases/mtp-target",
        &[
            "--engine",
            "vllm@0.33",
            "--speculative-config",
            r#"{"method": "mtp", "model": "/models/DeepSeek-V3-dflash-eval", "num_speculative_tokens": 1}"#,
        ],
        "method-overridden-by-name",
        "error",
    ),
    // Issue 32: K below an embedded DSpark head's dspark_block_size, refused by vLLM 0.26-0.27
    // (the versions: dspark_k_below_the_block_follows_the_vllm_version). The config is its own
    // target (a DeepSeek-V4 checkpoint).
    (
        "cases/dspark-embedded",
        "tests/lint/cases/dspark-embedded",
        &[
            "--engine",
            "vllm@0.26",
            "--speculative-config",
            r#"{"method": "dspark", "num_speculative_tokens": 3}"#,
        ],
        "num-speculative-tokens-too-small",
        "error",
    ),
    (
        "cases/speculators-eagle3-aux-ids-null",
        Q8,
        &[],
        "eagle-aux-layer-ids-missing",
        "info",
    ),
    (
        "cases/mask-token-string",
        Q36,
        &[],
        "mask-token-string",
        "error",
    ),
    (
        "cases/mask-token-string-added",
        Q36,
        &[],
        "mask-token-string-added",
        "info",
    ),
    (
        "cases/parallel-drafting-token-missing",
        Q8,
        &[],
        "parallel-drafting-token-missing",
        "warning",
    ),
    (
        "cases/parallel-drafting-token-missing",
        Q8,
        &[
            "--engine",
            "vllm",
            "--speculative-config",
            r#"{"method": "eagle3", "num_speculative_tokens": 3}"#,
        ],
        "peagle-parallel-drafting-off",
        "warning",
    ),
    (
        "cases/rope-neox-style",
        Q36,
        &[],
        "rope-neox-style",
        "warning",
    ),
    (
        "cases/sample-from-anchor-dflash",
        Q36,
        &[],
        "sample-from-anchor-dflash",
        "error",
    ),
    (
        "cases/target-hidden-size-null",
        Q8,
        &[],
        "target-hidden-size-null",
        "error",
    ),
    (
        "cases/draft-lm-head-shared",
        Q8,
        &["--engine", "vllm@0.11"],
        "draft-lm-head-shared",
        "error",
    ),
];

/// Issue 22: rules whose truth depends on the engine. (fixture, target, extra args, code, the
/// severity it must have under no engine, `--engine vllm`, `--engine sglang`; `None` = must not
/// fire.) Each row was a wrong or partly true finding before.
type ByEngine = (
    &'static str,
    Option<&'static str>,
    &'static [&'static str],
    &'static str,
    [Option<&'static str>; 3],
);
const BY_ENGINE: &[ByEngine] = &[
    // Issue 22/30: vLLM v0.25.1 to v0.28.0 load DSparkDraftModel as DeepSeek-V4's DSpark head
    // (model_type rewritten to deepseek_v4) and fail on the hc_mult a dense Qwen3 drafter lacks;
    // from v0.29.0 (read to v0.34.0) a qwen3 one is served as Qwen3DSparkModel, which reads
    // markov_rank at the top level, where this training layout lacks it: an error at every
    // release (`dspark_export_layout_is_an_error_at_the_releases_read`). SGLang only reads the
    // Markov settings elsewhere.
    (
        "cases/dspark-export-layout",
        Some(Q36),
        &[],
        "dspark-export-layout",
        [Some("info"), Some("error"), Some("info")],
    ),
    // Issue 30: vLLM 0.28+ reads the four DFlash2 settings from dflash_config without a default
    // (KeyError); SGLang reads an absent one as 0.
    (
        "cases/dflash2-settings-vllm",
        Some(Q8),
        &[],
        "dflash2-settings-vllm",
        [Some("warning"), Some("error"), None],
    ),
    (
        "cases/dflash2-conv-group-size",
        Some(Q8),
        &[],
        "dflash2-settings-vllm",
        [Some("warning"), Some("error"), None],
    ),
    // Issue 22: SGLang 0.5.23 captures each target layer once but sizes fc for every listed id,
    // and raises a feature dim mismatch, as vLLM does (it was a warning under SGLang, unread).
    (
        "cases/target-layer-ids-duplicate",
        Some(Q36),
        &[],
        "target-layer-ids-duplicate",
        [Some("error"), Some("error"), Some("error")],
    ),
    // Issue 22: vLLM's DFlash speculator refuses sample_from_anchor from v0.27 (the newest: an
    // error under plain --engine vllm and without an engine); SGLang reads it for DSpark only.
    (
        "cases/sample-from-anchor-dflash",
        Some(Q36),
        &[],
        "sample-from-anchor-dflash",
        [Some("error"), Some("error"), Some("warning")],
    ),
    // Issue 22: SGLang 0.5.23 raises on a mask_token string the tokenizer has under another id;
    // vLLM reads only mask_token_id.
    (
        "cases/mask-token-string",
        Some(Q36),
        &[],
        "mask-token-string",
        [Some("error"), Some("info"), Some("error")],
    ),
    // 1. id == the layer count is the last layer's output (sglang PR 32334): info, not error;
    //    above it, an error everywhere.
    (
        "cases/eagle-aux-layer-ids-final-layer",
        Some(Q8),
        &[],
        "eagle-aux-layer-ids-out-of-range",
        [Some("info"), Some("info"), Some("info")],
    ),
    (
        "cases/eagle-aux-layer-ids-out-of-range",
        Some(Q8),
        &[],
        "eagle-aux-layer-ids-out-of-range",
        [Some("error"), Some("error"), Some("error")],
    ),
    // 3. The last-layer crash is SGLang's Qwen3.5 path: nothing under vLLM.
    (
        "cases/target-layer-ids-last-layer",
        Some(Q36),
        &[],
        "target-layer-ids-last-layer",
        [Some("warning"), None, Some("error")],
    ),
    // 4. No engine refuses a missing block_size: SGLang defaults to 16, vLLM does not read it.
    (
        "cases/block-size-missing",
        Some(Q36),
        &[],
        "block-size-missing",
        [Some("warning"), Some("info"), Some("warning")],
    ),
    // 4/5. Missing ids: vLLM raises for a 5-layer drafter; SGLang's formula fallback is right
    //      for z-lab-trained DFlash, a silent collapse for DFlash2 (sglang issue 37475).
    (
        "cases/target-layer-ids-missing",
        Some(Q36),
        &[],
        "target-layer-ids-missing",
        [Some("error"), Some("error"), Some("warning")],
    ),
    (
        "cases/target-layer-ids-missing-dflash2",
        Some(Q8),
        &[],
        "target-layer-ids-missing",
        [Some("error"), Some("error"), Some("error")],
    ),
    // 6. TorchSpec's layout: num_target_layers counts taps; no false layer-count warning and no
    //    formula built from the tap count, with or without a target.
    (
        "cases/torchspec-layout",
        Some(Q8),
        &[],
        "num-target-layers-mismatch",
        [None, None, None],
    ),
    (
        "cases/torchspec-layout",
        None,
        &[],
        "target-layer-ids-formula",
        [None, None, None],
    ),
    (
        "cases/torchspec-layout-taps-only",
        Some(Q8),
        &[],
        "num-target-layers-mismatch",
        [None, None, None],
    ),
    (
        "cases/torchspec-layout-taps-only",
        None,
        &[],
        "target-layer-ids-formula",
        [None, None, None],
    ),
    // 6. A mask id equal to the pad placeholder silently corrupts training (TorchSpec PR 133).
    (
        "cases/mask-token-collision-pad",
        Some(Q36),
        &[],
        "mask-token-collision",
        [Some("error"), Some("error"), Some("error")],
    ),
    (
        "cases/mask-token-collision-eos",
        Some(Q36),
        &[],
        "mask-token-collision",
        [Some("info"), Some("info"), Some("info")],
    ),
    // 7. A DSpark head inside a DeepSeek-V4 config is not asked for DFlash's layer_types (K
    //    against its block: embedded_dspark_heads_are_recognised).
    (
        "cases/dspark-embedded",
        None,
        &[],
        "layer-types-missing",
        [None, None, None],
    ),
    // 8. A head with use_aux_hidden_state false reads no aux layers.
    (
        "cases/eagle-aux-unused",
        Some(Q8),
        &[],
        "eagle-aux-layer-ids-missing",
        [None, None, None],
    ),
    // 9. use_swa with all-full layer_types is Model-Optimizer's deliberate export for vLLM.
    (
        "cases/dflash-use-swa",
        Some(Q36),
        &[],
        "dflash-use-swa",
        [Some("warning"), Some("info"), Some("warning")],
    ),
    // 11. block_size 16.0 is read with int(): a warning, not an error; a string stays an error.
    (
        "cases/field-type-block-size-float",
        Some(Q36),
        &[],
        "field-type",
        [Some("warning"), Some("warning"), Some("warning")],
    ),
    (
        "cases/field-type-block-size-string",
        Some(Q36),
        &[],
        "field-type",
        [Some("error"), Some("error"), Some("error")],
    ),
    // 12. vLLM runs an unknown layer type as full attention instead of refusing.
    (
        "cases/layer-types-unknown",
        Some(Q36),
        &[],
        "layer-types-unknown",
        [Some("error"), Some("warning"), Some("error")],
    ),
    // Issue 23, one row per public report (FIELD §2 row in brackets).
    // [4] sglang PR 28196: an unquantized EAGLE-3 head for an AWQ target inherits --quantization
    //     in SGLang (launch makes it an error when the flag is on the command line).
    (
        "cases/quant-eagle3-unquantized",
        Some(Q8_AWQ),
        &[],
        "draft-quant-inherited",
        [Some("warning"), None, Some("warning")],
    ),
    // [3] sglang issue 39087: a W4A16 DFlash2 drafter serves at acceptance ~1.0 in SGLang.
    (
        "cases/quantized-dflash2",
        Some(Q8),
        &[],
        "quantized-block-drafter",
        [Some("warning"), Some("info"), Some("error")],
    ),
    // Issue 32: an FP8 DFlash drafter is not the reported case: a warning under SGLang.
    (
        "cases/quantized-dflash-fp8",
        Some(Q8),
        &[],
        "quantized-block-drafter",
        [Some("warning"), Some("info"), Some("warning")],
    ),
    // Issue 32: a null target_layer_ids is a wrong type for vLLM (len() of None) and a missing
    // list for SGLang 0.5.23 (None read as absent).
    (
        "cases/target-layer-ids-null",
        Some(Q36),
        &[],
        "field-type",
        [Some("error"), Some("error"), None],
    ),
    (
        "cases/target-layer-ids-null",
        Some(Q36),
        &[],
        "target-layer-ids-missing",
        [None, None, Some("warning")],
    ),
    // [2] vllm PR 49133: NVFP4 target + MXFP4 DSpark drafter: acceptance length 1.0 in vLLM.
    (
        "cases/dspark-mxfp4",
        Some(Q8_NVFP4),
        &[],
        "dspark-nvfp4-target",
        [Some("warning"), Some("error"), None],
    ),
    // [6] vllm-ascend issue 5974: EAGLE-3 on a QuaRot target (fixed in vllm-ascend PR 6914;
    //     SGLang's PR 30524 open); DFlash drafters are rotated by no engine (vllm-ascend PR 12775).
    (
        "cases/eagle3-quarot",
        Some(Q8_QUAROT),
        &[],
        "target-quant-rotated",
        // Upstream vLLM does not rotate the draft fc (its PR 36225 is open): vllm-ascend's
        // fix is not upstream vLLM's (issue 39).
        [Some("error"), Some("error"), Some("error")],
    ),
    (
        "cases/dflash-quarot",
        Some(Q8_QUAROT),
        &[],
        "target-quant-rotated",
        [Some("error"), Some("error"), Some("error")],
    ),
    // A target without quantization_config is never flagged for quantization.
    (
        "cases/quant-eagle3-unquantized",
        Some(Q8),
        &[],
        "draft-quant-inherited",
        [None, None, None],
    ),
    (
        "cases/dflash-quarot",
        Some(Q8),
        &[],
        "target-quant-rotated",
        [None, None, None],
    ),
    (
        "cases/dspark-sample-from-anchor-declared",
        Some(Q8_NVFP4),
        &[],
        "quantized-block-drafter",
        [None, None, None],
    ),
    // [1] vllm issue 56792: a fill-in DSpark export without sample_from_anchor (~0.9%); the
    //     files do not say the layout, so never an error.
    (
        "cases/dspark-sample-from-anchor-implicit",
        Some(Q8),
        &[],
        "dspark-sample-from-anchor-implicit",
        [Some("info"), Some("warning"), Some("warning")],
    ),
    (
        "cases/dspark-sample-from-anchor-declared",
        Some(Q8),
        &[],
        "dspark-sample-from-anchor-implicit",
        [None, None, None],
    ),
    // Issue 42: the served form (SpecForge's normalize_dflash_export.py) is the row's config;
    // a Qwen3DSparkModel without SpecForge's projector_type is DeepSeek's own layout.
    (
        "cases/dspark-sample-from-anchor-normalized",
        Some(Q8),
        &[],
        "dspark-sample-from-anchor-implicit",
        [Some("info"), Some("warning"), Some("warning")],
    ),
    (
        "cases/dspark-sample-from-anchor-native",
        Some(Q8),
        &[],
        "dspark-sample-from-anchor-implicit",
        [None, None, None],
    ),
    // [13] vllm PR 38111 / [14] sglang PR 32334: info unless the version is named
    //      (engine_versions_change_the_verdict).
    (
        "cases/norm-before-fc",
        Some(Q8),
        &[],
        "norm-before-fc-engine",
        [Some("info"), Some("info"), Some("info")],
    ),
    // [28] vllm issue 50722: empty verifier and null target_hidden_size.
    (
        "cases/speculators-verifier-missing",
        Some(Q8),
        &[],
        "speculators-verifier-missing",
        [Some("warning"), Some("warning"), Some("warning")],
    ),
    // [18] vllm-ascend issue 11374, vllm PR 27732: only a vLLM version that replaces the head
    //      (engine_versions_change_the_verdict); SGLang keeps it.
    (
        "cases/draft-lm-head-shared",
        Some(Q8),
        &[],
        "draft-lm-head-shared",
        [None, None, None],
    ),
];

/// JSON says which engine and version the verdict assumed: `null` without `--engine`.
#[test]
fn json_says_which_engine_was_assumed() {
    let case = "tests/lint/cases/dflash-use-swa";
    for (extra, assumed, swa) in [
        (&[][..], serde_json::json!(null), "warning"),
        (
            &["--engine", "vllm"][..],
            serde_json::json!({"engine": "vllm", "version": null, "from": null}),
            "info",
        ),
        (
            &["--engine", "vllm@0.26.1"][..],
            serde_json::json!({"engine": "vllm", "version": "0.26.1", "from": "--engine"}),
            "info",
        ),
        (
            &["--engine", "sglang"][..],
            serde_json::json!({"engine": "sglang", "version": null, "from": null}),
            "warning",
        ),
    ] {
        let (_, report) = lint_json(case, extra);
        assert_eq!(report["assumed"], assumed, "{extra:?}");
        assert_eq!(
            codes(&report),
            vec![("dflash-use-swa".to_string(), swa.to_string())],
            "{extra:?}"
        );
    }
}

/// Issue 39: `--engine vllm` without a release is judged across vLLM's default window: on every
/// fixture, each code is reported at the worst severity any release of the window gives it, and
/// not at all where none reports it (a gate never passes a line that fails on a release it may
/// be served with, and never judges by the newest alone). SGLang's window is one release.
#[test]
fn engine_without_release_is_judged_across_the_window() {
    let window: &[(&str, &[&str])] = &[
        (
            "vllm",
            &["0.28", "0.29", "0.30", "0.31", "0.32", "0.33", "0.34"],
        ),
        ("sglang", &["0.5.23"]),
    ];
    let rank = |s: &str| match s {
        "error" => 0,
        "warning" => 1,
        _ => 2,
    };
    let mut compared = 0;
    for group in ["tests/lint/cases", "tests/lint/real"] {
        for entry in std::fs::read_dir(group).unwrap() {
            let path = entry.unwrap().path();
            if !path.join("config.json").is_file() {
                continue;
            }
            let path = path.to_str().unwrap();
            let diagnostics = |spec: &str| -> Option<BTreeMap<String, String>> {
                let (_, out, _) = run(&["lint", path, "--format", "json", "--engine", spec]);
                // A fixture lint refuses (exit 2) has no findings to compare.
                let v: Value = serde_json::from_str(&out).ok()?;
                let mut worst: BTreeMap<String, String> = BTreeMap::new();
                for (code, severity) in codes(&v) {
                    let slot = worst.entry(code).or_insert(severity.clone());
                    if rank(&severity) < rank(slot) {
                        *slot = severity;
                    }
                }
                Some(worst)
            };
            for (engine, releases) in window {
                let Some(unknown) = diagnostics(engine) else {
                    continue;
                };
                let mut across: BTreeMap<String, String> = BTreeMap::new();
                for r in *releases {
                    for (code, severity) in diagnostics(&format!("{engine}@{r}")).unwrap() {
                        let slot = across.entry(code).or_insert(severity.clone());
                        if rank(&severity) < rank(slot) {
                            *slot = severity;
                        }
                    }
                }
                assert_eq!(unknown, across, "{path} {engine}");
                compared += 1;
            }
        }
    }
    assert!(compared > 100, "only {compared} comparisons");
}

/// Issue 23: verdicts that change with the engine's version (`--engine vllm@X.Y`).
#[test]
fn engine_versions_change_the_verdict() {
    let cases: &[(&str, &str, &str, Option<&str>)] = &[
        // vllm PR 38111 (merged 2026-03-25): speculators' norm_before_fc not propagated before.
        (
            "cases/norm-before-fc",
            "vllm@0.18",
            "norm-before-fc-engine",
            Some("warning"),
        ),
        (
            "cases/norm-before-fc",
            "vllm@0.19",
            "norm-before-fc-engine",
            Some("info"),
        ),
        // vllm PR 42143 (merged 2026-05-09): the nested eagle_config.norm_before_fc.
        (
            "cases/norm-before-fc-nested",
            "vllm@0.20",
            "norm-before-fc-engine",
            Some("warning"),
        ),
        (
            "cases/norm-before-fc-nested",
            "vllm@0.21",
            "norm-before-fc-engine",
            Some("info"),
        ),
        (
            "cases/norm-before-fc-nested",
            "sglang@0.5",
            "norm-before-fc-engine",
            Some("info"),
        ),
        // Issue 42: SGLang's EAGLE-3 model reads the key from 0.5.17 (read in the wheels).
        (
            "cases/norm-before-fc-nested",
            "sglang@0.5.16",
            "norm-before-fc-engine",
            Some("warning"),
        ),
        (
            "cases/norm-before-fc",
            "sglang@0.5.16",
            "norm-before-fc-engine",
            Some("warning"),
        ),
        (
            "cases/norm-before-fc",
            "sglang@0.5.17",
            "norm-before-fc-engine",
            Some("info"),
        ),
        // vLLM v0.26.0's DFlash speculator does not read sample_from_anchor (ignored: a
        // warning); v0.27.1's raises (an error).
        (
            "cases/sample-from-anchor-dflash",
            "vllm@0.26",
            "sample-from-anchor-dflash",
            Some("warning"),
        ),
        (
            "cases/sample-from-anchor-dflash",
            "vllm@0.27",
            "sample-from-anchor-dflash",
            Some("error"),
        ),
        // vllm#48894: up to v0.26.0 the EAGLE draft's rotary cache is sized by its own
        // max_position_embeddings and positions past it fail a device-side assert; v0.27.1
        // raises the value to the target's max_model_len.
        (
            "cases/eagle-max-position-short",
            "vllm@0.26",
            "eagle-max-position-short",
            Some("error"),
        ),
        (
            "cases/eagle-max-position-short",
            "vllm@0.27",
            "eagle-max-position-short",
            Some("info"),
        ),
        // Issue 32: SGLang 0.5.23 builds the draft at the target's context length and raises
        // ValueError past the draft's own (unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1).
        (
            "cases/eagle-max-position-short",
            "sglang@0.5",
            "eagle-max-position-short",
            Some("error"),
        ),
        // vllm PR 28549 (merged 2025-11-12; PR 27732): the drafter's lm_head overwritten before.
        (
            "cases/draft-lm-head-shared",
            "vllm@0.11",
            "draft-lm-head-shared",
            Some("error"),
        ),
        (
            "cases/draft-lm-head-shared",
            "vllm@0.12",
            "draft-lm-head-shared",
            None,
        ),
        (
            "cases/draft-lm-head-shared",
            "sglang@0.5",
            "draft-lm-head-shared",
            None,
        ),
    ];
    for (fixture, engine, code, want) in cases {
        let (exit, report) = lint_json(
            &format!("tests/lint/{fixture}"),
            &["--no-builtin", "--target", Q8, "--engine", engine],
        );
        let found = codes(&report);
        let got: Vec<&str> = found
            .iter()
            .filter(|(c, _)| c == code)
            .map(|(_, s)| s.as_str())
            .collect();
        assert_eq!(
            got,
            want.map_or(vec![], |w| vec![w]),
            "{fixture} {engine}: {found:?}"
        );
        assert_eq!(
            exit,
            i32::from(found.iter().any(|(_, s)| s == "error")),
            "{fixture} {engine}"
        );
    }
}

/// Issue 41: a rotated target is an error at every release read of each upstream engine (the
/// rows of target-quant-rotated: vLLM and SGLang feed the draft's fc the rotated hidden states
/// as they are), pinned or not, and for an engine no row names.
#[test]
fn a_rotated_target_is_an_error_at_every_release_read() {
    for fixture in ["cases/eagle3-quarot", "cases/dflash-quarot"] {
        for engine in [
            "vllm@0.25.1",
            "vllm@0.34.0",
            "vllm",
            "sglang@0.5.10",
            "sglang@0.5.23",
            "llama.cpp",
        ] {
            let (exit, report) = lint_json(
                &format!("tests/lint/{fixture}"),
                &["--no-builtin", "--target", Q8_QUAROT, "--engine", engine],
            );
            let found = codes(&report);
            assert!(
                found.contains(&("target-quant-rotated".into(), "error".into())),
                "{fixture} {engine}: {found:?}"
            );
            assert_eq!(exit, 1, "{fixture} {engine}");
        }
    }
}

/// Each engine-dependent rule has exactly the severity its row says under each engine (or does
/// not fire), and the exit code follows the errors.
#[test]
fn engine_dependent_rules_follow_the_engine() {
    let engines: [&[&str]; 3] = [&[], &["--engine", "vllm"], &["--engine", "sglang"]];
    for (fixture, target, extra, code, want) in BY_ENGINE {
        for (engine, want) in engines.iter().zip(want) {
            let path = format!("tests/lint/{fixture}");
            let mut args = vec!["--no-builtin"];
            if let Some(t) = target {
                args.extend(["--target", t]);
            }
            args.extend_from_slice(engine);
            args.extend_from_slice(extra);
            let (exit, report) = lint_json(&path, &args);
            let found = codes(&report);
            let got: Vec<&str> = found
                .iter()
                .filter(|(c, _)| c == code)
                .map(|(_, s)| s.as_str())
                .collect();
            match want {
                Some(severity) => assert!(
                    !got.is_empty() && got.iter().all(|s| s == severity),
                    "{fixture} {engine:?}: expected {severity}[{code}], got {found:?}"
                ),
                None => assert!(
                    got.is_empty(),
                    "{fixture} {engine:?}: {code} fired: {found:?}"
                ),
            }
            let has_error = found.iter().any(|(_, s)| s == "error");
            assert_eq!(
                exit,
                i32::from(has_error),
                "{fixture} {engine:?}: {found:?}"
            );
        }
    }
}

/// `lint PATH` for Qwen3.6-27B under `engine` with vLLM's `--speculative-config SPEC`.
fn lint_deployed(path: &str, engine: &str, spec: &str) -> (i32, Value) {
    let args = ["--no-builtin", "--target", Q36, "--engine", engine];
    lint_json(path, &[&args[..], &["--speculative-config", spec]].concat())
}

/// `code` was reported once at `want` (or not at all), and the exit code follows the errors.
fn reported_as(exit: i32, report: &Value, code: &str, want: Option<&str>, what: &str) {
    let found = codes(report);
    assert_eq!(
        severities(&found, code),
        want.map_or(vec![], |w| vec![w]),
        "{what}: {found:?}"
    );
    let has_error = found.iter().any(|(_, s)| s == "error");
    assert_eq!(exit, i32::from(has_error), "{what}: {found:?}");
}

/// The severities `code` was reported at.
fn severities<'a>(found: &'a [(String, String)], code: &str) -> Vec<&'a str> {
    found
        .iter()
        .filter(|(c, _)| c == code)
        .map(|(_, s)| s.as_str())
        .collect()
}

/// At every vLLM release read (0.25.1 to 0.34.0) the training layout fails to load: up to 0.28
/// as DeepSeek-V4's head, from 0.29 as Qwen3DSparkModel without a top-level markov_rank. The
/// exported Markov layout under the training architecture's name loads from 0.29 (issue 30);
/// with the release not known it is an error, since 0.28 is in vLLM's default window (issue 39).
#[test]
fn dspark_export_layout_is_an_error_at_the_releases_read() {
    for (fixture, engine, want) in [
        ("dspark-export-layout", "vllm@0.26", Some("error")),
        ("dspark-export-layout", "vllm@0.28", Some("error")),
        ("dspark-export-layout", "vllm@0.29", Some("error")),
        ("dspark-export-layout", "vllm", Some("error")),
        ("dspark-export-layout-top-level", "vllm@0.28", Some("error")),
        ("dspark-export-layout-top-level", "vllm@0.29", None),
        ("dspark-export-layout-top-level", "vllm", Some("error")),
        ("dspark-export-layout-top-level", "vllm@0.34", None),
    ] {
        let (code, report) = lint_json(
            &format!("tests/lint/cases/{fixture}"),
            &["--no-builtin", "--target", Q36, "--engine", engine],
        );
        reported_as(
            code,
            &report,
            "dspark-export-layout",
            want,
            &format!("{fixture} {engine}"),
        );
    }
}

/// Issue 30: `draft_sample_method: "probabilistic"` is not lossless up to vLLM 0.28 (a warning
/// there, nothing from 0.29; with no release given, a warning: 0.28 is in vLLM's default
/// window, issue 39); `dspark_draft_topk` is refused from 0.28 with another method, a
/// non-Qwen3 DSpark drafter or a top-k past the draft vocabulary.
#[test]
fn speculative_options_follow_the_vllm_version() {
    let probabilistic = r#"{"method": "dflash", "num_speculative_tokens": 15, "draft_sample_method": "probabilistic"}"#;
    let topk = |method: &str, k: u64| {
        format!(
            r#"{{"method": "{method}", "num_speculative_tokens": 16, "dspark_draft_topk": {k}}}"#
        )
    };
    let cases: Vec<(&str, &str, String, &str, Option<&str>)> = vec![
        (
            "clean/qwen3.6-27b",
            "vllm@0.28",
            probabilistic.into(),
            "draft-sample-probabilistic",
            Some("warning"),
        ),
        (
            "clean/qwen3.6-27b",
            "vllm@0.29",
            probabilistic.into(),
            "draft-sample-probabilistic",
            None,
        ),
        (
            "clean/qwen3.6-27b",
            "vllm",
            probabilistic.into(),
            "draft-sample-probabilistic",
            Some("warning"),
        ),
        (
            "clean/qwen3.6-27b",
            "vllm@0.34",
            probabilistic.into(),
            "draft-sample-probabilistic",
            None,
        ),
        (
            "clean/qwen3.6-27b",
            "vllm",
            topk("dflash", 8),
            "dspark-draft-topk",
            Some("error"),
        ),
        (
            "clean/qwen3.6-27b",
            "vllm@0.27",
            topk("dflash", 8),
            "dspark-draft-topk",
            None,
        ),
        (
            "cases/dspark-export-layout-top-level",
            "vllm",
            topk("dspark", 8),
            "dspark-draft-topk",
            None,
        ),
        (
            "cases/dspark-export-layout-top-level",
            "vllm",
            topk("dspark", 300000),
            "dspark-draft-topk",
            Some("error"),
        ),
        (
            "cases/dspark-embedded",
            "vllm",
            topk("dspark", 8),
            "dspark-draft-topk",
            Some("error"),
        ),
    ];
    for (fixture, engine, spec, code, want) in cases {
        let (exit, report) = lint_deployed(&format!("tests/lint/{fixture}"), engine, &spec);
        reported_as(
            exit,
            &report,
            code,
            want,
            &format!("{fixture} {engine} {spec}"),
        );
    }
}

/// vLLM 0.25.1 refuses a mixed sliding/full DFlash drafter in every runner; from 0.26.0 it
/// forces the V2 runner for one when VLLM_USE_V2_MODEL_RUNNER is not set (read up to 0.33.0;
/// 0.34.0 has no other runner): nothing to report there (issue 30).
#[test]
fn mixed_attention_follows_the_vllm_version() {
    for (engine, want) in [
        ("vllm@0.25", Some("error")),
        ("vllm@0.26", None),
        ("vllm@0.27", None),
        ("vllm@0.34", None),
        ("vllm", None),
    ] {
        let (exit, report) = lint_deployed("tests/lint/clean/qwen3.6-27b", engine, SPEC_OK);
        reported_as(exit, &report, "mixed-attention-vllm", want, engine);
    }
}

/// A DSpark head embedded in a DeepSeek-V4 target's config is recognised by its dspark_* keys,
/// even by `dspark_block_size` alone.
#[test]
fn embedded_dspark_heads_are_recognised() {
    for fixture in ["cases/dspark-embedded", "cases/dspark-embedded-block-only"] {
        let (_, r) = lint_json(&format!("tests/lint/{fixture}"), &["--no-builtin"]);
        assert_eq!(r["family"]["name"], "dspark", "{fixture}");
    }
    let (_, r) = lint_json(
        "tests/lint/cases/dspark-embedded-block-only",
        &["--no-builtin"],
    );
    assert_eq!(
        r["family"]["evidence"],
        serde_json::json!(["dspark_block_size present"])
    );
    // K above dspark_block_size collapsed acceptance at every position (vLLM PR 41834): an
    // error at dspark_block_size; K equal to the block is clean.
    let spec = |k: u32| format!(r#"{{"method": "dspark", "num_speculative_tokens": {k}}}"#);
    for (k, want) in [
        (
            7,
            vec![(
                "num-speculative-tokens-too-large".to_string(),
                "error".to_string(),
            )],
        ),
        (5, vec![]),
    ] {
        let spec = spec(k);
        let args = [
            "--no-builtin",
            "--engine",
            "vllm",
            "--speculative-config",
            &spec,
        ];
        let (exit, r) = lint_json("tests/lint/cases/dspark-embedded", &args);
        let found: Vec<(String, String)> = codes(&r)
            .into_iter()
            .filter(|(c, _)| c.starts_with("num-speculative"))
            .collect();
        assert_eq!(found, want, "K = {k}");
        assert_eq!(exit, i32::from(k == 7), "K = {k}");
        if k == 7 {
            assert_eq!(r["diagnostics"][0]["path"], "dspark_block_size");
        }
    }
}

/// Issue 32: vLLM 0.26.0 and 0.27.1 refuse K below a DeepSeek-V4 DSpark head's
/// dspark_block_size ("DSpark requires num_speculative_tokens >= dspark_block_size"); 0.25.1 and
/// main 002e77c have no such check (a warning); K equal to the block is clean.
#[test]
fn dspark_k_below_the_block_follows_the_vllm_version() {
    let spec = |k: u32| format!(r#"{{"method": "dspark", "num_speculative_tokens": {k}}}"#);
    for (k, engine, want) in [
        (3, "vllm@0.25", Some("warning")),
        (3, "vllm@0.26", Some("error")),
        (3, "vllm@0.27", Some("error")),
        (3, "vllm@0.28", Some("warning")),
        (3, "vllm", Some("warning")),
        (5, "vllm@0.26", None),
    ] {
        let spec = spec(k);
        let args = [
            "--no-builtin",
            "--engine",
            engine,
            "--speculative-config",
            &spec,
        ];
        let (exit, r) = lint_json("tests/lint/cases/dspark-embedded", &args);
        let found = codes(&r);
        assert_eq!(
            severities(&found, "num-speculative-tokens-too-small"),
            want.map_or(vec![], |w| vec![w]),
            "K {k} {engine}: {found:?}"
        );
        assert_eq!(
            exit,
            i32::from(found.iter().any(|(_, s)| s == "error")),
            "K {k} {engine}: {found:?}"
        );
    }
}

/// Built-in target facts adopted by fingerprint say which drafter fields matched, in the human
/// report and in JSON; facts from --target do not claim a match.
#[test]
fn builtin_target_says_what_it_matched_by() {
    let (code, out, _) = run(&["lint", "tests/lint/clean/qwen3.6-27b"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            "  target   built-in facts of Qwen/Qwen3.6-27B, matched by vocab_size 248320, hidden_size 5120, \
             num_target_layers 64"
        ),
        "{out}"
    );
    let (_, r) = lint_json("tests/lint/clean/qwen3.6-27b", &[]);
    assert_eq!(
        r["target"]["matched_by"],
        "vocab_size 248320, hidden_size 5120, num_target_layers 64"
    );
    let (_, r) = lint_json("tests/lint/clean/qwen3.6-27b", &["--target", Q36]);
    assert!(r["target"].get("matched_by").is_none(), "{}", r["target"]);
}

/// Every rule fires on its fixture, with its severity, and the exit code follows.
#[test]
fn every_rule_fires_on_its_fixture() {
    for (fixture, target, extra, code, severity) in FIRES {
        let path = format!("tests/lint/{fixture}");
        let mut args = vec!["--target", target, "--no-builtin"];
        args.extend_from_slice(extra);
        let (exit, report) = lint_json(&path, &args);
        let found = codes(&report);
        assert!(
            found.iter().any(|(c, s)| c == code && s == severity),
            "{fixture}: expected {severity}[{code}], got {found:?}"
        );
        let has_error = found.iter().any(|(_, s)| s == "error");
        assert_eq!(exit, i32::from(has_error), "{fixture}: {found:?}");
    }
}

/// The clean fixtures fire nothing, even under --deny warnings, with every engine check on.
#[test]
fn clean_fixtures_fire_nothing() {
    let runs: &[(&str, &str, &[&str])] = &[
        (
            "clean/qwen3.6-27b",
            Q36,
            &["--engine", "sglang", "--num-draft-tokens", "16"],
        ),
        (
            "clean/qwen3-8b",
            Q8,
            &["--engine", "vllm", "--speculative-config", SPEC_OK],
        ),
        (
            "clean/qwen3-8b",
            Q8,
            &["--engine", "sglang", "--num-draft-tokens", "16"],
        ),
        // Issue 42: the target's YaRN scaling and base, flat and in rope_parameters.
        (
            "clean/qwen3-8b-yarn",
            Q8_YARN,
            &["--engine", "vllm", "--speculative-config", SPEC_OK],
        ),
        (
            "clean/qwen3-8b-yarn-nested",
            Q8_YARN,
            &["--engine", "sglang", "--num-draft-tokens", "16"],
        ),
        (
            "clean/qwen3-8b-eagle3",
            Q8,
            &[
                "--engine",
                "vllm",
                "--speculative-config",
                r#"{"method": "eagle3", "num_speculative_tokens": 3}"#,
            ],
        ),
    ];
    for (fixture, target, extra) in runs {
        let path = format!("tests/lint/{fixture}");
        let mut args = vec!["--target", target, "--no-builtin", "--deny", "warnings"];
        args.extend_from_slice(extra);
        let (exit, report) = lint_json(&path, &args);
        assert_eq!(codes(&report), vec![], "{fixture}");
        assert_eq!(report["skipped"], serde_json::json!([]), "{fixture}");
        assert_eq!(exit, 0, "{fixture}");
    }
}

/// Every lint code has a firing fixture above, in FIRES or (engine-dependent rules) in BY_ENGINE
/// (the clean runs cover all families and engines).
#[test]
fn every_rule_code_has_a_fixture() {
    // Lint's config rules and the deployment rules `lint --engine` runs; a deployment rule on a
    // flag lint's options cannot state (SGLang's attention backends) fires in launch's tests
    // (tests/mtp_targets.rs).
    const LAUNCH_ONLY: &[&str] = &["draft-attention-backend-inherited"];
    let all: BTreeSet<&str> = dflash_check::rules::LintCode::ALL
        .iter()
        .map(|c| c.as_str())
        .chain(
            dflash_check::diagnostic::codes::DeploymentCode::ALL
                .iter()
                .map(|c| c.as_str()),
        )
        .filter(|c| !LAUNCH_ONLY.contains(c))
        .collect();
    let covered: BTreeSet<&str> = FIRES
        .iter()
        .map(|f| f.3)
        .chain(
            BY_ENGINE
                .iter()
                .filter(|b| b.4.iter().any(Option::is_some))
                .map(|b| b.3),
        )
        .collect();
    // Rules that read the deployment's environment, which lint's flags do not state: their
    // launch tests fire them (tests/launch.rs, a_dflash2_drafter_needs_the_v2_runner;
    // tests/engine_release.rs, a_runner_variable_the_release_refuses_is_an_error).
    // And the rule that reads SGLang's --speculative-algorithm with no draft model, which lint's
    // flags do not state either: tests/mtp_targets.rs, sglang_nextn_needs_exactly_one_mtp_layer.
    let environment_only = BTreeSet::from([
        "dflash2-v1-runner",
        "mtp-nextn-layers-sglang",
        "vllm-runner-env-invalid",
    ]);
    // The draft-model rules compare two real tokenizers (Qwen3 and Llama 3, fetched by
    // scripts/test.sh): tests/draft_vocab.rs fires four of them; draft-model-tokenizer-type-mismatch
    // (both real HF tokenizers are BPE) fires on two GGUF vocabularies, SentencePiece against
    // byte-level BPE, in tests/launch_llama.rs.
    let tokenizer_pairs = BTreeSet::from([
        "draft-model-pre-tokenizer-mismatch",
        "draft-model-special-tokens-mismatch",
        "draft-model-tokenizer-type-mismatch",
        "draft-model-vocab-mismatch",
        "draft-model-vocab-size-mismatch",
    ]);
    // TensorRT-LLM's rules read its LLM API options file, which lint's flags do not state:
    // tests/launch_trtllm.rs fires each of them from a launch line.
    let options_file_only = BTreeSet::from([
        "trtllm-eagle-alias",
        "trtllm-foreign-key",
        "trtllm-mtp-draft-len",
        "trtllm-required-key",
    ]);
    let all: BTreeSet<&str> = all
        .difference(&environment_only)
        .copied()
        .collect::<BTreeSet<_>>()
        .difference(&options_file_only)
        .copied()
        .collect::<BTreeSet<_>>()
        .difference(&tokenizer_pairs)
        .copied()
        .collect();
    assert_eq!(all, covered);
}

/// The incident's guessed config fails under --deny warnings and names the z-lab ids, with no
/// built-in facts involved.
#[test]
fn incident_guessed_config_fails_with_the_zlab_ids() {
    let args = [
        "lint",
        "fixtures/incident/Qwen3.6-27B-DFlash",
        "--target",
        Q36,
        "--no-builtin",
        "--deny",
        "warnings",
    ];
    let (code, out, _) = run(&args);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("[1, 16, 31, 46, 61]"), "{out}");
    assert!(
        out.contains("only the published config can settle it"),
        "{out}"
    );
    assert!(out.contains("248064 <|repo_name|>"), "{out}");
    assert!(
        out.contains("warning[target-layer-ids-formula] dflash_config.target_layer_ids:"),
        "{out}"
    );
    assert!(out.contains("Qwen3.6-27B-DFlash/config.json:14:5"), "{out}");
    // The target numbers say which JSON path of the target's config they came from.
    assert!(
        out.contains("(layers 64 from text_config.num_hidden_layers, hidden 5120 from text_config.hidden_size"),
        "{out}"
    );
    // Without --deny warnings it passes: they are warnings.
    let (code, _, _) = run(&args[..5]);
    assert_eq!(code, 0);
}

#[test]
fn incident_json_report() {
    let (code, report) = lint_json(
        "fixtures/incident/Qwen3.6-27B-DFlash",
        &["--target", Q36, "--no-builtin", "--deny", "warnings"],
    );
    assert_eq!(code, 1);
    insta::assert_json_snapshot!("incident_lint_json", report);
}

/// The authoritative config lints clean under --deny warnings against the same target.
#[test]
fn incident_authority_lints_clean() {
    let (code, out, _) = run(&[
        "lint",
        "fixtures/incident/authority",
        "--target",
        Q36,
        "--no-builtin",
        "--deny",
        "warnings",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("OK: 0 errors, 0 warnings, 0 info"), "{out}");
}

/// Real configs of other trainers produce no errors (warnings and infos where they deviate).
#[test]
fn real_configs_of_other_trainers_have_no_false_errors() {
    let runs: &[(&str, Option<&str>, &str)] = &[
        ("real/qwen3-4b-dflash", None, "dflash"),
        ("real/qwen3-8b-dflash", Some(Q8), "dflash"),
        ("real/llama3-8b-eagle3", None, "eagle3"),
        ("real/qwen3-8b-eagle3", Some(Q8), "eagle3"),
        ("real/dflash2-qwen3-8b", Some(Q8), "dflash2"),
        ("real/speculators-dflash", Some(Q8), "speculators"),
        ("real/mimo-style", Some(Q8), "dflash"),
        ("real/qwen3.5-27b-dflash", Some(Q36), "dflash"),
    ];
    for (fixture, target, family) in runs {
        let path = format!("tests/lint/{fixture}");
        let args: Vec<&str> = target.map_or(vec![], |t| vec!["--target", t]);
        let (exit, report) = lint_json(&path, &args);
        let found = codes(&report);
        assert!(
            found.iter().all(|(_, s)| s != "error"),
            "{fixture}: {found:?}"
        );
        assert_eq!(exit, 0, "{fixture}");
        assert_eq!(report["family"]["name"], *family, "{fixture}");
        assert!(!report["family"]["evidence"].as_array().unwrap().is_empty());
    }
}

/// DFlash2 and MiMo-style ids differ from the formula on purpose: info for DFlash2, a warning
/// that says so for DFlash.
#[test]
fn formula_severity_depends_on_family() {
    let (_, r) = lint_json("tests/lint/real/dflash2-qwen3-8b", &["--target", Q8]);
    assert_eq!(
        codes(&r),
        vec![("target-layer-ids-formula".into(), "info".into())]
    );
    let (_, r) = lint_json("tests/lint/real/mimo-style", &["--target", Q8]);
    let formula = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "target-layer-ids-formula")
        .unwrap();
    let msg = formula["message"].as_str().unwrap();
    assert!(msg.contains("other trainers"), "{msg}");
    assert_eq!(formula["severity"], "warning");
    assert_eq!(formula["expected"], serde_json::json!([1, 9, 17, 25, 33]));
}

/// sglang issue 32204: the last layer is an error under --engine sglang.
#[test]
fn last_layer_is_an_error_under_sglang() {
    let (code, r) = lint_json(
        "tests/lint/cases/target-layer-ids-last-layer",
        &["--target", Q36, "--engine", "sglang"],
    );
    assert_eq!(code, 1);
    assert!(codes(&r).contains(&("target-layer-ids-last-layer".into(), "error".into())));
}

/// Wrong types are findings, never panics or crashes.
#[test]
fn wrong_types_are_findings_not_panics() {
    for case in [
        "field-type-mask-string",
        "field-type-ids-float",
        "field-type-ids-negative",
        "field-type-ids-null",
        "field-type-ids-empty",
        "field-type-ids-string",
        "field-type-block-size-string",
        "field-type-layer-types-null-list",
        "field-type-hidden-negative",
    ] {
        let path = format!("tests/lint/cases/{case}");
        for target in [vec!["--target", Q36], vec!["--no-builtin"]] {
            let (code, r) = lint_json(&path, &target);
            assert_eq!(code, 1, "{case}");
            assert!(
                codes(&r).contains(&("field-type".into(), "error".into())),
                "{case}: {:?}",
                codes(&r)
            );
        }
    }
}

/// A float eos id is wrong data but no engine reads a drafter's eos: a warning, not an error.
#[test]
fn wrong_token_id_types_are_warnings() {
    let (code, r) = lint_json("tests/lint/cases/field-type-eos-float", &["--target", Q36]);
    assert_eq!(code, 0);
    assert!(codes(&r).contains(&("token-id-out-of-range".into(), "warning".into())));
}

/// Not a drafter: exit 2 with a message, unless --family forces the rules.
#[test]
fn unknown_family_exits_2_unless_forced() {
    let (code, out, err) = run(&["lint", "tests/lint/cases/not-a-drafter"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.contains("not a drafter config") && err.contains("--family"),
        "{err}"
    );
    let (code, r) = lint_json("tests/lint/cases/not-a-drafter", &["--family", "dflash"]);
    assert_eq!(code, 1);
    assert_eq!(r["family"]["forced"], true);
    assert!(codes(&r).contains(&("mask-token-missing".into(), "error".into())));
}

/// Without a target, rules that need one are listed as skipped; a known target is used when
/// the drafter matches one.
#[test]
fn without_target_rules_are_skipped_or_builtin_facts_used() {
    let (code, r) = lint_json("tests/lint/clean/qwen3.6-27b", &["--no-builtin"]);
    assert_eq!(code, 0);
    let skipped: Vec<&str> = r["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["code"].as_str().unwrap())
        .collect();
    for c in [
        "hidden-size-mismatch",
        "target-layer-ids-out-of-range",
        "mask-token-out-of-range",
    ] {
        assert!(skipped.contains(&c), "{skipped:?}");
    }
    assert_eq!(r["target"]["source"], "none");
    let (_, r) = lint_json("fixtures/incident/Qwen3.6-27B-DFlash", &[]);
    assert_eq!(r["skipped"], serde_json::json!([]));
    assert!(r["target"]["source"]
        .as_str()
        .unwrap()
        .starts_with("built-in facts"));
    assert!(codes(&r).contains(&("target-layer-ids-last-layer".into(), "warning".into())));
}

/// Engine flags are checked for consistency before any work: exit 2.
#[test]
fn engine_flag_misuse_exits_2() {
    let p = "tests/lint/clean/qwen3-8b";
    for args in [
        vec!["lint", p, "--speculative-config", SPEC_OK],
        vec!["lint", p, "--engine", "vllm", "--num-draft-tokens", "16"],
        vec![
            "lint",
            p,
            "--engine",
            "vllm",
            "--speculative-config",
            "{not json",
        ],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.starts_with("error: "), "{err}");
    }
}

#[test]
fn explain_lists_codes_and_explains_one() {
    let (code, out, _) = run(&["explain"]);
    assert_eq!(code, 0);
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("target-layer-ids-formula "))
        .unwrap();
    // Every family's codes are listed, not only lint's.
    for c in ["authority-ambiguous", "changed", "mask-token-missing"] {
        assert!(out.contains(c), "{c}");
    }
    assert!(line.contains(" warning "), "{line}");
    let (code, out, _) = run(&["explain", "target-layer-ids-formula"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("round_ties_even") || out.contains("half to even"),
        "{out}"
    );
    assert!(out.contains("Source: z-lab/dflash"), "{out}");
    let (code, _, err) = run(&["explain", "no-such-rule"]);
    assert_eq!(code, 2);
    assert!(err.contains("dflash-check explain"), "{err}");
}

/// Issue 22: the messages say what the pinned engine source does. vLLM v0.26.0 logs the aux
/// layers it falls back to at info level (no "Acceptance will be low" warning); its DFlash
/// speculator up to v0.26 ignores sample_from_anchor rather than refusing it.
#[test]
fn messages_say_what_the_pinned_source_does() {
    let message = |path: &str, extra: &[&str], code: &str| -> String {
        let (_, report) = lint_json(path, extra);
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == code)
            .unwrap_or_else(|| panic!("{path}: no {code}"))["message"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let missing = message(
        "tests/fixtures/real-configs/SafeAILab__EAGLE-traineagle3",
        &["--no-builtin"],
        "eagle-aux-layer-ids-missing",
    );
    assert!(missing.contains("info log"), "{missing}");
    assert!(!missing.contains("Acceptance will be low"), "{missing}");
    let anchor = |engine: &str| {
        message(
            "tests/lint/cases/sample-from-anchor-dflash",
            &["--no-builtin", "--target", Q36, "--engine", engine],
            "sample-from-anchor-dflash",
        )
    };
    assert!(anchor("vllm@0.26").contains("does not read it"));
    assert!(anchor("vllm@0.27").contains("refuses it"));
}

/// `--format github` prints no diff, so the verdict names the diff commands themselves rather
/// than "run the diff above" (issue 45).
#[test]
fn github_verdict_names_the_diffs_it_means() {
    let (code, out, err) = run(&[
        "lint",
        "fixtures/incident/Qwen3.6-27B-DFlash",
        "--format",
        "github",
    ]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(!out.contains("above"), "{out}");
    for snapshot in ["z-lab/Qwen3.6-27B-DFlash", "z-lab/Qwen3.5-27B-DFlash"] {
        assert!(
            out.contains(&format!(
                "`dflash-check diff fixtures/incident/Qwen3.6-27B-DFlash --snapshot {snapshot}`"
            )),
            "{out}"
        );
    }
}
