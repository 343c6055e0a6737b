//! `weights`: safetensors headers written by the real Python `safetensors` package, checked
//! against their configs; hostile headers; the Hub path through range requests against the
//! in-process Hub (request counts, bytes, agreement with Python huggingface_hub's
//! `get_safetensors_metadata`, a warm pinned run with no request).
//!
//! The fixtures are generated, not committed: `scripts/weights-setup.sh` installs `safetensors`,
//! `numpy` and `huggingface_hub` into `.venv-hf` (or `DFLASH_HF_VENV`) and runs
//! `tests/weights/generate.py` into `target/weights-fixtures` (or `DFLASH_WEIGHTS_FIXTURES`).
//! Without them each test says "skipped" on stderr and passes, except under `CI=true`, where it
//! fails.

mod common;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use dflash_check::diagnostic::Code;
use dflash_check::hub::{HubFlags, HubSettings, RepoRef};
use dflash_check::weights::{self, WeightsCode};
use support::{FakeRepo, HubServer};

fn skip_or_fail(test: &str, what: &str) -> Option<PathBuf> {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test}: {what} is missing; run scripts/weights-setup.sh (CI must not skip this)");
    }
    let _ = writeln!(
        std::io::stderr(),
        "{test}: skipped: {what} is missing; run scripts/weights-setup.sh"
    );
    None
}

/// The generated fixtures, or `None` (skip) outside CI.
fn fixtures(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("DFLASH_WEIGHTS_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/weights-fixtures"));
    if dir.join("manifest.json").is_file() {
        Some(dir)
    } else {
        skip_or_fail(test, &format!("{} (the generated fixtures)", dir.display()))
    }
}

/// The Python with `huggingface_hub` (`$DFLASH_HF_VENV`, default `.venv-hf`, as
/// tests/hub_olah.rs), or `None` (skip) outside CI.
fn hf_python(test: &str) -> Option<PathBuf> {
    let py = std::env::var_os("DFLASH_HF_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-hf"))
        .join("bin/python");
    if py.is_file() {
        Some(py)
    } else {
        skip_or_fail(
            test,
            &format!("{} (Python with huggingface_hub)", py.display()),
        )
    }
}

fn json_run(args: &[&str]) -> (i32, serde_json::Value, String) {
    let (code, out, err) = common::run(args);
    let v = serde_json::from_str(&out).unwrap_or(serde_json::Value::Null);
    (code, v, err)
}

fn codes_of(report: &serde_json::Value) -> BTreeSet<String> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

/// (case, --target dir under the fixtures, codes it must give, exit code).
const CASES: &[(&str, Option<&str>, &[&str], i32)] = &[
    ("clean-dflash", Some("target"), &[], 0),
    ("clean-dflash-sharded", Some("target"), &[], 0),
    ("clean-dflash-aliases", Some("target"), &[], 0),
    ("clean-dflash2", Some("target"), &[], 0),
    ("clean-eagle3", Some("target"), &[], 0),
    ("fc-width", None, &["weights-fc-width"], 1),
    ("fc-width-eagle3", None, &["weights-fc-width"], 1),
    (
        "fc-width-target",
        Some("target-wide"),
        &["weights-fc-width"],
        1,
    ),
    ("layer-count-extra", None, &["weights-layer-count"], 1),
    ("layer-count-missing", None, &["weights-layer-count"], 1),
    ("shape-head-dim", None, &["weights-shape"], 1),
    ("shape-intermediate", None, &["weights-shape"], 1),
    ("vocab-rows-embed", None, &["weights-vocab-rows"], 1),
    ("dflash-own-lm-head", None, &[], 0),
    ("vocab-rows-lm-head", None, &["weights-vocab-rows"], 1),
    ("d2t-missing", Some("target"), &["weights-d2t-missing"], 1),
    ("d2t-length", None, &["weights-d2t-length"], 1),
    ("t2d-length", None, &["weights-t2d-length"], 0),
    // The same shapes as clean-eagle3 with another d2t: headers cannot see it (pin's digest can).
    ("d2t-regenerated", Some("target"), &[], 0),
    // Issue 42: the maps by value (each passed before: no header check reads the data).
    ("d2t-ids-not-offsets", None, &["weights-d2t-values"], 1),
    (
        "d2t-zeros",
        None,
        &["weights-d2t-values", "weights-t2d-disagrees"],
        1,
    ),
    ("d2t-zeros-first-ids", None, &["weights-d2t-values"], 0),
    (
        "d2t-duplicates",
        None,
        &["weights-d2t-duplicates", "weights-t2d-disagrees"],
        0,
    ),
    ("t2d-disagrees", None, &["weights-t2d-disagrees"], 0),
    (
        "forbidden-mask-hidden",
        None,
        &["weights-forbidden-tensor"],
        1,
    ),
    (
        "ignored-mask-hidden-eagle3",
        None,
        &["weights-ignored-tensor"],
        0,
    ),
    ("unexpected-tensor", None, &["weights-unexpected-tensor"], 1),
    (
        "unexpected-d2t-dflash",
        Some("target"),
        &["weights-unexpected-tensor"],
        1,
    ),
    ("missing-tensor", None, &["weights-missing-tensor"], 1),
    ("model-prefix", None, &["weights-model-prefix"], 1),
    ("shard-missing", None, &["weights-shard-missing"], 1),
    ("duplicate-tensor", None, &["weights-duplicate-tensor"], 0),
    ("index-mismatch", None, &["weights-index-mismatch"], 0),
    // Issue 23 (sglang issue 39087): quantized tensors the config does not declare, and a
    // declared quantization the float tensors do not match.
    (
        "quantized-undeclared",
        None,
        &[
            "weights-quantized-undeclared",
            "weights-missing-tensor",
            "weights-unexpected-tensor",
        ],
        1,
    ),
    (
        "quantization-unmatched",
        None,
        &["weights-quantization-unmatched"],
        0,
    ),
    // Issue 30: target checkpoints with an MTP head (DeepSeek-V3 and Qwen3.5 layouts at toy size).
    ("mtp-deepseek-clean", None, &[], 0),
    ("mtp-deepseek-dropped", None, &["weights-mtp-missing"], 1),
    (
        "mtp-deepseek-bf16-head",
        None,
        &["weights-mtp-unquantized"],
        1,
    ),
    ("mtp-deepseek-bf16-head-excluded", None, &[], 0),
    (
        "mtp-deepseek-quant-excluded",
        None,
        &["weights-mtp-quant-excluded"],
        0,
    ),
    ("mtp-qwen35-regex", None, &[], 0),
    ("mtp-qwen35-prefix", None, &["weights-mtp-unquantized"], 1),
    (
        "mtp-qwen35-modelopt-regex",
        None,
        &["weights-mtp-unquantized"],
        1,
    ),
    ("mtp-qwen35-dropped", None, &["weights-mtp-missing"], 1),
    // Issue 41: a plain causal LM as a draft model: no `model.` prefix finding; an edited
    // `vocab_size` against the embedding's and LM head's rows.
    ("draft-plain-lm", None, &[], 0),
    (
        "draft-plain-lm-vocab-edited",
        None,
        &["weights-vocab-rows"],
        1,
    ),
    // Issue 41: MLX's `quantization` declares the quantization (no quantization_config); its
    // MTP head declared and not shipped is still missing.
    ("mlx-quantization-only", None, &[], 0),
    ("mtp-mlx-dropped", None, &["weights-mtp-missing"], 1),
    // Issue 43: the conversion with its MTP head kept: mlx-lm 0.30.7-0.31.3 shift its trunk
    // norms twice (an error there, tests/launch_mlx.rs); info without an engine.
    ("mtp-mlx-kept", None, &["weights-mtp-norm-shift"], 0),
    // Issue 41: ERNIE-4.5 MoE, DeepSeek-V4 and HY-V4 keep their heads under spellings of their
    // own (family::heads rows); HY-V4's loaders read one layer though its export declares 2.
    ("mtp-ernie-clean", None, &[], 0),
    ("mtp-ernie-dropped", None, &["weights-mtp-missing"], 1),
    ("mtp-deepseek-v4-clean", None, &[], 0),
    ("mtp-deepseek-v4-dropped", None, &["weights-mtp-missing"], 1),
    ("mtp-hy-v4-clean", None, &[], 0),
    ("mtp-hy-v4-dropped", None, &["weights-mtp-missing"], 1),
    // Nemotron 3.5 Transcribe's NeMo-named head (`llm.mtp.layers.j`: a false
    // weights-mtp-missing before its row); MiniMax-M3's `num_mtp_modules` and Inkling's depth
    // under mtp_config (both never checked before).
    ("mtp-nemotron-transcribe-clean", None, &[], 0),
    (
        "mtp-nemotron-transcribe-dropped",
        None,
        &["weights-mtp-missing"],
        1,
    ),
    // quark with `mtp.` entries on a Qwen3.5 head (SGLang's whole-head rule by release:
    // a_quark_qwen35_head_is_judged_by_sglangs_whole_head_rule).
    (
        "mtp-qwen35-quark-partial",
        None,
        &["weights-mtp-unquantized"],
        1,
    ),
    (
        "mtp-qwen35-quark-mixed",
        None,
        &["weights-mtp-quant-excluded"],
        0,
    ),
    ("mtp-minimax-m3-clean", None, &[], 0),
    ("mtp-minimax-m3-dropped", None, &["weights-mtp-missing"], 1),
    ("mtp-inkling-clean", None, &[], 0),
    ("mtp-inkling-dropped", None, &["weights-mtp-missing"], 1),
    // Issue 41: MiMo keeps its head as `model.mtp_layers.j.*` (its row of family::heads).
    ("mtp-mimo-clean", None, &[], 0),
    ("mtp-mimo-dropped", None, &["weights-mtp-missing"], 1),
    // AWQ: `mtp` excludes the head in vLLM and SGLang; `re:^mtp.*` is literal text to their
    // substring test (and `mtp.fc`, a plain linear in SGLang, fails under vLLM only); an empty
    // list is filled by vLLM for linear modules (which then fail under SGLang only), never for
    // experts.
    ("mtp-qwen35-awq-excluded", None, &[], 0),
    (
        "mtp-qwen35-awq-regex",
        None,
        &[
            "weights-mtp-unquantized",
            "weights-mtp-unquantized-one-engine",
        ],
        1,
    ),
    (
        "mtp-qwen35-awq-empty",
        None,
        &[
            "weights-mtp-unquantized",
            "weights-mtp-unquantized-one-engine",
        ],
        1,
    ),
    // GPTQ `-:.*mtp.*`: the linear modules are excluded in both engines; the experts only in
    // vLLM (SGLang's gptq_marlin quantizes experts whatever `dynamic` says).
    (
        "mtp-qwen35-gptq-dynamic",
        None,
        &["weights-mtp-unquantized-one-engine"],
        0,
    ),
    // compressed-tensors, the head's projections excluded one by one: SGLang up to 0.5.20
    // matches the fused qkv_proj / gate_up_proj whole (sglang#35887).
    (
        "mtp-qwen35-ct-individual",
        None,
        &["weights-mtp-unquantized-one-engine"],
        0,
    ),
    // quark, a GLM-5 DSA NextN layer excluded entry by entry: SGLang 0.5.11-0.5.15 matches its
    // own names (sglang#29781); the bare layer excluded as well keeps it unquantized there.
    (
        "mtp-glm-dsa-quark-entries",
        None,
        &[
            "weights-mtp-unquantized",
            "weights-mtp-unquantized-one-engine",
        ],
        0,
    ),
    // (its expert named one by one: vLLM up to 0.25 and SGLang 0.5.10 fail, a warning here)
    (
        "mtp-glm-dsa-quark-layer",
        None,
        &["weights-mtp-unquantized"],
        0,
    ),
    // compressed-tensors MXFP4: SGLang 0.5.17+ builds the head's experts MXFP4 whatever
    // `ignore` says (sglang#36786); NVFP4 honours the list.
    (
        "mtp-qwen35-mxfp4-experts",
        None,
        &["weights-mtp-unquantized-one-engine"],
        0,
    ),
    ("mtp-qwen35-nvfp4-experts", None, &[], 0),
    // quark under vLLM, read in every wheel 0.25.1-0.34.0 (the vllm_quark_head test below): a Qwen3.5
    // head excluded module by module, by `re:`, by a bare prefix (which matches nothing). Experts
    // named one by one fail on vLLM up to 0.25 and SGLang up to 0.5.11 here: a warning.
    (
        "mtp-qwen35-quark-named",
        None,
        &["weights-mtp-unquantized"],
        0,
    ),
    ("mtp-qwen35-quark-regex", None, &[], 0),
    (
        "mtp-qwen35-quark-prefix",
        None,
        &["weights-mtp-unquantized"],
        1,
    ),
    (
        "mtp-qwen35-quark-expert-regex",
        None,
        &["weights-mtp-unquantized"],
        1,
    ),
    // A NextN `eh_proj` stored BF16: plain in vLLM at every release; SGLang quantizes
    // DeepSeek's and GLM-5 DSA's from 0.5.11 (988a43b: an error everywhere), GLM-4.5's never.
    (
        "mtp-glm-dsa-quark-eh-proj",
        None,
        &["weights-mtp-unquantized-one-engine"],
        0,
    ),
    ("mtp-glm45-quark-eh-proj", None, &[], 0),
    // The same module under DeepSeek's fp8 config: plain in both engines, no finding.
    ("mtp-deepseek-fp8-eh-proj", None, &[], 0),
    // BF16 experts excluded by their own names or by the MoE's: vLLM up to 0.25 fails on
    // either (vllm_quark_head_is_matched_module_by_module_at_every_release); named one by one,
    // SGLang up to 0.5.20 too (quark_experts_named_one_by_one_by_sglang_release): a warning
    // without an engine for that form.
    (
        "mtp-deepseek-quark-experts-named",
        None,
        &["weights-mtp-unquantized"],
        0,
    ),
    ("mtp-deepseek-quark-experts-moe", None, &[], 0),
    // A NextN `eh_proj` stored quantized: vLLM builds it as a plain nn.Linear at every release
    // (an error wherever both engines do, a warning where SGLang quantizes it); Bailing 2.5's
    // BF16 `eh_proj` the list leaves quantized fails in SGLang only, and under ModelOpt FP4
    // nowhere (a_nextn_eh_proj_is_judged_by_who_builds_it_plain).
    (
        "mtp-deepseek-fp8-eh-proj-quantized",
        None,
        &["weights-mtp-quant-excluded"],
        1,
    ),
    (
        "mtp-glm-dsa-quark-eh-proj-quantized",
        None,
        &["weights-mtp-quant-excluded"],
        0,
    ),
    (
        "mtp-bailing-eh-proj-quantized",
        None,
        &["weights-mtp-quant-excluded"],
        0,
    ),
    (
        "mtp-bailing-eh-proj-bf16",
        None,
        &["weights-mtp-unquantized-one-engine"],
        0,
    ),
    ("mtp-bailing-modelopt-fp4-eh-proj", None, &[], 0),
    // An entry naming the fused module of a Qwen3.5 head's BF16 shards: an exact
    // compressed-tensors one is honoured everywhere; a `re:` one and quark's by release
    // (fused_module_entries_are_judged_by_release).
    ("mtp-qwen35-ct-fused-exact", None, &[], 0),
    (
        "mtp-qwen35-ct-fused-regex",
        None,
        &["weights-mtp-unquantized"],
        0,
    ),
    (
        "mtp-qwen35-quark-fused",
        None,
        &["weights-mtp-unquantized"],
        0,
    ),
    (
        "mtp-glm-dsa-quark-experts-named",
        None,
        &[
            "weights-mtp-unquantized",
            "weights-mtp-unquantized-one-engine",
        ],
        0,
    ),
    (
        "mtp-glm45-quark-experts-named",
        None,
        &[
            "weights-mtp-unquantized",
            "weights-mtp-unquantized-one-engine",
        ],
        0,
    ),
    // GLM-OCR: its head after the text trunk (`model.language_model.layers.N.*`), never `mtp.*`
    // (988a43b read a `mtp.layers.j` head as its own: the misnamed case passed there).
    ("mtp-glm-ocr-clean", None, &[], 0),
    ("mtp-glm-ocr-dropped", None, &["weights-mtp-missing"], 1),
    ("mtp-glm-ocr-misnamed", None, &["weights-mtp-missing"], 1),
    // Issue 41, the families vLLM 0.34.0 added MTP loaders for (family/heads.rs): after the
    // trunk only, a `mtp.layers.0` head is not theirs (497242d read it as the head for all but
    // Bailing V3, whose `bailing_hybrid` picked the DeepSeek-style row); MiMo-V2's and
    // LongCat-Flash's under `model.mtp.layers.0` and no other, MiMo-V2 declaring 3 layers of
    // which the engines read the first (497242d: layers 1 and 2 missing).
    ("mtp-dots3-clean", None, &[], 0),
    ("mtp-dots3-misnamed", None, &["weights-mtp-missing"], 1),
    ("mtp-bailing-v3-clean", None, &[], 0),
    ("mtp-bailing-v3-misnamed", None, &["weights-mtp-missing"], 1),
    ("mtp-kimi-k3-clean", None, &[], 0),
    ("mtp-kimi-k3-misnamed", None, &["weights-mtp-missing"], 1),
    ("mtp-pangu-ultra-clean", None, &[], 0),
    (
        "mtp-pangu-ultra-misnamed",
        None,
        &["weights-mtp-missing"],
        1,
    ),
    ("mtp-step3p5-clean", None, &[], 0),
    ("mtp-step3p5-misnamed", None, &["weights-mtp-missing"], 1),
    ("mtp-step5-clean", None, &[], 0),
    ("mtp-step5-misnamed", None, &["weights-mtp-missing"], 1),
    ("mtp-hy-v3-clean", None, &[], 0),
    ("mtp-hy-v3-misnamed", None, &["weights-mtp-missing"], 1),
    ("mtp-glm5-next-clean", None, &[], 0),
    ("mtp-glm5-next-misnamed", None, &["weights-mtp-missing"], 1),
    ("mtp-mimo-v2-clean", None, &[], 0),
    ("mtp-mimo-v2-dropped", None, &["weights-mtp-missing"], 1),
    ("mtp-longcat-clean", None, &[], 0),
    ("mtp-longcat-misnamed", None, &["weights-mtp-missing"], 1),
    // Nemotron-H: one step is len(mtp_hybrid_override_pattern) layers; a dropped second layer
    // of the step is missing (497242d read one layer a step: clean).
    ("mtp-nemotron-h-clean", None, &[], 0),
    (
        "mtp-nemotron-h-dropped-sublayer",
        None,
        &["weights-mtp-missing"],
        1,
    ),
    // `model.layers.2` excludes DeepSeek's MTP layer under vLLM's name, not SGLang's.
    (
        "mtp-deepseek-awq-layer-index",
        None,
        &["weights-mtp-unquantized-one-engine"],
        0,
    ),
    // The quantization in hf_quant_config.json beside a config.json that has none (older
    // ModelOpt exports): read as vLLM reads it.
    ("mtp-deepseek-hf-quant-config-excluded", None, &[], 0),
    (
        "mtp-deepseek-hf-quant-config",
        None,
        &["weights-mtp-unquantized"],
        1,
    ),
];

#[test]
fn every_finding_fires_on_its_own_case_and_clean_drafters_fire_nothing() {
    let Some(fx) = fixtures("every_finding_fires") else {
        return;
    };
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fx.join("manifest.json")).unwrap()).unwrap();
    let listed: BTreeSet<&str> = manifest["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let tested: BTreeSet<&str> = CASES.iter().map(|c| c.0).collect();
    assert_eq!(
        listed, tested,
        "every generated case is tested, and only those"
    );

    for (case, target, want, exit) in CASES {
        let dir = fx.join("cases").join(case);
        let dir_s = dir.to_str().unwrap();
        let target_dir = target.map(|t| fx.join(t));
        let mut args = vec!["weights", dir_s, "--format", "json"];
        if let Some(t) = &target_dir {
            args.extend(["--target", t.to_str().unwrap()]);
        }
        let (code, report, err) = json_run(&args);
        assert_eq!(code, *exit, "{case}: exit code (stderr: {err})");
        let got = codes_of(&report);
        let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
        assert_eq!(got, want, "{case}: {}", report["diagnostics"]);
        for d in report["diagnostics"].as_array().unwrap() {
            let path = d["path"].as_str().unwrap();
            assert!(
                !path.is_empty(),
                "{case}: a diagnostic without a tensor name: {d}"
            );
            assert!(
                d["message"].as_str().unwrap().contains(path),
                "{case}: the message names the tensor: {d}"
            );
            assert!(
                d["file"].as_str().unwrap().starts_with(dir_s),
                "{case}: the file is the shard or index: {d}"
            );
            assert!(!d["source"].as_str().unwrap().is_empty(), "{case}: {d}");
        }
    }

    let fired: BTreeSet<&str> = CASES.iter().flat_map(|c| c.2.iter().copied()).collect();
    // The GGUF rules have their cases in tests/gguf.rs (files written by gguf-py);
    // weights-shards-absent is the gates' (a config checkout), fired in tests/deployment_gate.rs.
    for code in WeightsCode::ALL
        .iter()
        .filter(|c| !c.as_str().starts_with("weights-gguf-"))
        .filter(|c| **c != WeightsCode::ShardsAbsent)
        // An engine-only finding (oMLX): a_dflash_drafter_s_own_head_is_refused_by_omlx_only.
        .filter(|c| **c != WeightsCode::DraftHeadRefused)
    {
        assert!(
            fired.contains(code.as_str()),
            "{} has no case",
            code.as_str()
        );
        assert!(code.as_str().starts_with("weights-"));
        assert!(!dflash_check::evidence::source_text(code.as_str()).is_empty());
    }
}

#[test]
fn findings_say_what_the_weights_were_trained_with() {
    let Some(fx) = fixtures("findings_say_what") else {
        return;
    };
    let (_, report, _) = json_run(&[
        "weights",
        fx.join("cases/fc-width").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let d = &report["diagnostics"][0];
    assert_eq!(d["path"], "fc.weight");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["expected"], serde_json::json!([32, 128]));
    let msg = d["message"].as_str().unwrap();
    assert!(
        msg.contains("4 aux layers") && msg.contains("trained with 3 target layers"),
        "{msg}"
    );

    // Issue 32: the d2t message says what each engine does, not vLLM's alone.
    let (_, report, _) = json_run(&[
        "weights",
        fx.join("cases/d2t-missing").to_str().unwrap(),
        "--target",
        fx.join("target").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let msg = report["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        msg.contains("vLLM") && msg.contains("SGLang builds none"),
        "{msg}"
    );

    // A head_dim that differs is one finding per tensor kind, naming the other layers.
    let (_, report, _) = json_run(&[
        "weights",
        fx.join("cases/shape-head-dim").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let paths: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 6, "{paths:?}");
    assert!(paths.contains(&"layers.0.self_attn.q_norm.weight"));
    assert!(report["diagnostics"][0]["message"]
        .as_str()
        .unwrap()
        .contains("the same in layer 1"));
}

#[test]
fn hostile_headers_exit_2_naming_the_file() {
    let Some(fx) = fixtures("hostile_headers") else {
        return;
    };
    let dir = fx.join("hostile");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let case = entry.unwrap().path();
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let (code, out, err) = common::run(&["weights", case.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: exit 2 (stdout {out}, stderr {err})");
        assert!(out.is_empty(), "{name}: nothing on stdout: {out}");
        let file = if name == "index-escape" {
            "model.safetensors.index.json"
        } else {
            "model.safetensors"
        };
        let named = format!("{}/{file}", case.display());
        assert!(err.contains(&named), "{name}: stderr names {named}: {err}");
        seen += 1;
    }
    assert!(seen >= 10, "{seen} hostile cases");
}

#[test]
fn a_realistic_sparse_three_shard_drafter_reads_and_checks_clean() {
    let Some(fx) = fixtures("realistic") else {
        return;
    };
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fx.join("manifest.json")).unwrap()).unwrap();
    let dir = fx.join("realistic/qwen3-8b-dflash-b16");
    let h = weights::read_local(&dir).unwrap().unwrap();
    assert_eq!(h.shards.len(), 3);
    let totals = h.totals();
    assert_eq!(totals.tensors, 58, "5 layers ⇒ 58 tensors");
    assert_eq!(
        totals.parameters,
        manifest["realistic"]["parameters"].as_u64().unwrap()
    );
    assert_eq!(
        totals.bytes,
        manifest["realistic"]["bytes"].as_u64().unwrap()
    );
    let fc = h.tensors().find(|t| t.name == "fc.weight").unwrap();
    assert_eq!(
        (fc.dtype.as_str(), fc.shape.as_slice()),
        ("BF16", &[4096u64, 20480][..])
    );

    let config = dflash_check::config::load(&dir).unwrap();
    let target = dflash_check::config::load(&fx.join("realistic/qwen3-8b"))
        .map(|c| dflash_check::config::TargetFacts::from_config(&c))
        .unwrap();
    let diags = weights::check(&config, &h, Some(&target));
    assert!(diags.is_empty(), "{diags:#?}");

    // The same through the binary: the table and the totals.
    let (code, out, _) = common::run(&["weights", dir.to_str().unwrap(), "--color", "never"]);
    assert_eq!(code, 0);
    assert!(out.contains("fc.weight"), "{out}");
    assert!(out.contains("layers.4"), "{out}");
    assert!(
        out.contains("total: 58 tensors, 1,048,626,432 parameters, 2,097,252,864 bytes of data"),
        "{out}"
    );
    assert!(
        out.contains("\nOK: 0 errors, 0 warnings, 0 info\n"),
        "{out}"
    );
}

// ---------------------------------------------------------------------------------------------
// The Hub, through range requests.

const SHARDED: &str = "z-lab/Tiny-DFlash";
const BIG: &str = "z-lab/Big-Header";

fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

fn serve(server: &HubServer, id: &str, dir: &Path) -> (String, Vec<(String, Vec<u8>)>) {
    let files = files_of(dir);
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let mut repo = FakeRepo::default();
    let sha = repo.commit(&refs);
    server.add_repo(id, repo);
    (sha, files)
}

fn settings(server: &HubServer, cache: &Path, offline: bool) -> HubSettings {
    let flags = HubFlags {
        endpoint: Some(server.url.clone()),
        cache_dir: Some(cache.to_path_buf()),
        offline,
        timeout_secs: Some(5),
        ..HubFlags::default()
    };
    HubSettings::resolve(&flags, &|k| {
        (k == "HOME").then(|| "/nonexistent".to_string())
    })
    .unwrap()
}

/// What Python `huggingface_hub` (`HfApi.get_safetensors_metadata`) reads from the same server:
/// file → tensor → (dtype, shape, data_offsets).
fn python_metadata(
    py: &Path,
    server: &HubServer,
    repo: &str,
    sha: &str,
) -> BTreeMap<String, BTreeMap<String, serde_json::Value>> {
    let cache = tempfile::tempdir().unwrap();
    let script = r#"
import json, sys
from huggingface_hub import HfApi
m = HfApi().get_safetensors_metadata(sys.argv[1], revision=sys.argv[2])
print(json.dumps({f: {n: [t.dtype, list(t.shape), list(t.data_offsets)] for n, t in fm.tensors.items()}
                  for f, fm in m.files_metadata.items()}))
"#;
    let out = Command::new(py)
        .args(["-c", script, repo, sha])
        .env("HF_ENDPOINT", &server.url)
        .env("HF_HUB_CACHE", cache.path())
        .env("HF_HUB_DISABLE_TELEMETRY", "1")
        .env("HF_HUB_DISABLE_XET", "1")
        .env_remove("HF_TOKEN")
        .env_remove("HF_HUB_OFFLINE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python get_safetensors_metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn ours(h: &weights::WeightsHeaders) -> BTreeMap<String, BTreeMap<String, serde_json::Value>> {
    let mut m: BTreeMap<String, BTreeMap<String, serde_json::Value>> = BTreeMap::new();
    for t in h.tensors() {
        m.entry(t.shard.clone()).or_default().insert(
            t.name.clone(),
            serde_json::json!([t.dtype, t.shape, t.data_offsets]),
        );
    }
    m
}

#[test]
fn hub_headers_by_range_requests_agree_with_huggingface_hub_and_a_warm_pinned_run_is_free() {
    let Some(fx) = fixtures("hub_headers") else {
        return;
    };
    let server = HubServer::start();
    let (sha, files) = serve(&server, SHARDED, &fx.join("hub/sharded"));
    let size_of = |name: &str| files.iter().find(|f| f.0 == name).unwrap().1.len();
    let cache = tempfile::tempdir().unwrap();

    // Cold, at main.
    let s = settings(&server, cache.path(), false);
    let d = weights::read_hub(&s, &SHARDED.parse().unwrap()).unwrap();
    assert_eq!(d.sha, sha);
    let h = d.headers.clone().unwrap();
    assert_eq!(h.shards.len(), 3);
    assert!(h.missing_shards.is_empty());
    assert_eq!(weights::check(&d.config, &h, None), vec![]);

    let log = server.log();
    let shard_requests: Vec<_> = log
        .iter()
        .filter(|r| r.path.contains("-of-00003.safetensors"))
        .collect();
    for (name, bytes) in files
        .iter()
        .filter(|f| f.0.ends_with("-of-00003.safetensors"))
    {
        let reqs: Vec<_> = shard_requests
            .iter()
            .filter(|r| r.path.ends_with(name.as_str()))
            .collect();
        assert!(
            !reqs.is_empty() && reqs.len() <= 2,
            "{name}: {} requests",
            reqs.len()
        );
        for r in &reqs {
            assert_eq!(r.method, "GET");
            assert!(
                r.path.contains(&format!("/resolve/{sha}/")),
                "at the sha: {}",
                r.path
            );
            assert!(
                r.header("range").is_some(),
                "every shard GET is a range request"
            );
        }
        assert_eq!(reqs[0].header("range"), Some("bytes=0-16383"));
        let body: usize = reqs.iter().map(|r| r.body_bytes).sum();
        assert!(body <= bytes.len().min(16_384), "{name}: {body} bytes");
    }
    // The last shard holds 128 kB of embeddings: only the first 100,001 bytes came.
    let last = "model-00003-of-00003.safetensors";
    assert!(size_of(last) > 16_384);
    let last_body: usize = shard_requests
        .iter()
        .filter(|r| r.path.ends_with(last))
        .map(|r| r.body_bytes)
        .sum();
    assert_eq!(last_body, 16_384, "never the rest of the weights");
    assert_eq!(
        h.requests,
        1 + 3,
        "the model.safetensors probe and one range per shard"
    );
    let total_body: usize = log.iter().map(|r| r.body_bytes).sum();
    let _ = writeln!(
        std::io::stderr(),
        "cold read_hub of a 3-shard drafter: {} requests, {} body bytes ({} of them shard headers)",
        log.len(),
        total_body,
        shard_requests.iter().map(|r| r.body_bytes).sum::<usize>()
    );
    for r in &log {
        let _ = writeln!(
            std::io::stderr(),
            "  {} {} range={:?} body={}",
            r.method,
            r.path,
            r.header("range"),
            r.body_bytes
        );
    }

    // Python huggingface_hub reads the same tensors from the same server.
    if let Some(py) = hf_python("hub_headers") {
        assert_eq!(python_metadata(&py, &server, SHARDED, &sha), ours(&h));
    }

    // Warm, pinned: no request at all; offline too.
    server.clear_log();
    let pinned: RepoRef = format!("{SHARDED}@{sha}").parse().unwrap();
    let warm = weights::read_hub(&s, &pinned).unwrap();
    assert_eq!(server.requests(), 0, "{:?}", server.log());
    assert_eq!(warm.headers.as_ref().unwrap(), &h_without_counts(&h));
    let offline = weights::read_hub(&settings(&server, cache.path(), true), &pinned).unwrap();
    assert_eq!(offline.headers.unwrap(), h_without_counts(&h));
    assert_eq!(server.requests(), 0);

    // The header cache sits beside the standard layout, never under snapshots/.
    let cached = dflash_check::hub::header_cache_path(cache.path(), SHARDED, &sha, last);
    let prefix = std::fs::read(&cached).unwrap();
    let n = u64::from_le_bytes(prefix[..8].try_into().unwrap()) as usize;
    assert_eq!(prefix.len(), 8 + n);
    assert!(!cache
        .path()
        .join("models--z-lab--Tiny-DFlash/snapshots")
        .join(&sha)
        .join(last)
        .exists());
}

fn h_without_counts(h: &weights::WeightsHeaders) -> weights::WeightsHeaders {
    weights::WeightsHeaders {
        requests: 0,
        body_bytes: 0,
        ..h.clone()
    }
}

#[test]
fn a_header_over_100_kb_takes_exactly_a_second_range_request() {
    let Some(fx) = fixtures("big_header") else {
        return;
    };
    let server = HubServer::start();
    let (sha, files) = serve(&server, BIG, &fx.join("hub/big-header"));
    let file = &files.iter().find(|f| f.0 == "model.safetensors").unwrap().1;
    let n = u64::from_le_bytes(file[..8].try_into().unwrap());
    assert!(n > 100_000, "the fixture's header is {n} bytes");
    let cache = tempfile::tempdir().unwrap();
    let s = settings(&server, cache.path(), false);
    let h = weights::read_hub_headers(&s, BIG, &sha).unwrap().unwrap();
    let gets: Vec<_> = server
        .log()
        .into_iter()
        .filter(|r| r.path.ends_with("/model.safetensors"))
        .collect();
    assert_eq!(gets.len(), 2, "{gets:?}");
    assert_eq!(gets[0].header("range"), Some("bytes=0-16383"));
    assert_eq!(
        gets[1].header("range").map(str::to_string),
        Some(format!("bytes=16384-{}", n + 7))
    );
    assert_eq!(
        gets.iter().map(|r| r.body_bytes as u64).sum::<u64>(),
        8 + n,
        "exactly the header, nothing more"
    );
    assert_eq!(h.shards[0].header_bytes, n);
    assert_eq!(h.shards[0].metadata["notes"].len(), 150_000);
    if let Some(py) = hf_python("big_header") {
        assert_eq!(python_metadata(&py, &server, BIG, &sha), ours(&h));
    }
}

/// A Hub checkpoint whose quantization is in hf_quant_config.json (older ModelOpt exports, as
/// vLLM reads them): the file is fetched beside config.json at the same commit, so the Hub run
/// judges the MTP head as the local one does (excluded: clean; not excluded: the finding).
#[test]
fn hub_reads_hf_quant_config_beside_the_config() {
    let Some(fx) = fixtures("hub_hf_quant_config") else {
        return;
    };
    let server = HubServer::start();
    serve(
        &server,
        "nv/Excluded",
        &fx.join("cases/mtp-deepseek-hf-quant-config-excluded"),
    );
    serve(
        &server,
        "nv/Quantized",
        &fx.join("cases/mtp-deepseek-hf-quant-config"),
    );
    let cache = tempfile::tempdir().unwrap();
    let run = |repo: &str| {
        let out = common::dflash()
            .env_remove("HF_HUB_OFFLINE")
            .args([
                "weights",
                &format!("hf://{repo}"),
                "--endpoint",
                &server.url,
            ])
            .arg("--cache-dir")
            .arg(cache.path())
            .args(["--format", "json"])
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), codes_of(&report))
    };
    assert_eq!(run("nv/Excluded"), (Some(0), BTreeSet::new()));
    assert_eq!(
        run("nv/Quantized"),
        (
            Some(1),
            BTreeSet::from(["weights-mtp-unquantized".to_string()])
        )
    );
}

/// Issue 42: an EAGLE-3 head on the Hub whose `d2t` holds target ids. Its map data comes by
/// one range request per map tensor, exactly the tensor's bytes, and the value rule fires as it
/// does locally; a warm run sends nothing and finds the same; offline with an empty cache the
/// maps are not read, and nothing is said about their values.
#[test]
fn hub_map_data_by_one_range_request_per_tensor() {
    let Some(fx) = fixtures("hub_map_data") else {
        return;
    };
    const REPO: &str = "org/Eagle3-Ids";
    let server = HubServer::start();
    let (sha, files) = serve(&server, REPO, &fx.join("hub/eagle3-ids-not-offsets"));
    let file = &files.iter().find(|f| f.0 == "model.safetensors").unwrap().1;
    let cache = tempfile::tempdir().unwrap();
    let s = settings(&server, cache.path(), false);
    let d = weights::read_hub(&s, &REPO.parse().unwrap()).unwrap();
    let h = d.headers.clone().unwrap();
    let codes = |h: &weights::WeightsHeaders| -> Vec<&'static str> {
        weights::run(&d.config, h, None)
            .diagnostics
            .iter()
            .map(|x| x.code.as_str())
            .collect()
    };
    assert_eq!(codes(&h), vec!["weights-d2t-values"]);
    // The data ranges: one GET per map tensor, each exactly its bytes at its offsets.
    let n = u64::from_le_bytes(file[..8].try_into().unwrap());
    let log = server.log();
    let data: Vec<_> = log
        .iter()
        .filter(|r| r.header("range").is_some_and(|r| r != "bytes=0-16383"))
        .collect();
    let mut want = Vec::new();
    for t in h.tensors().filter(|t| t.name == "d2t" || t.name == "t2d") {
        let start = 8 + n + t.data_offsets[0];
        want.push(format!("bytes={start}-{}", start + t.bytes() - 1));
        let got = h.map_data.iter().find(|m| m.name == t.name).unwrap();
        let (a, b) = (start as usize, (start + t.bytes()) as usize);
        assert_eq!(got.bytes, file[a..b], "{}", t.name);
    }
    let mut got: Vec<String> = data
        .iter()
        .map(|r| r.header("range").unwrap().to_string())
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want, "{log:?}");
    let map_bytes: u64 = h.map_data.iter().map(|m| m.bytes.len() as u64).sum();
    assert_eq!(
        data.iter().map(|r| r.body_bytes as u64).sum::<u64>(),
        map_bytes,
        "bytes read = the tensors' size"
    );

    // Warm, pinned: nothing sent, the same finding; offline with another (empty) cache: the
    // headers fail as before (not cached), so offline is tried on the warm cache only.
    server.clear_log();
    let pinned: RepoRef = format!("{REPO}@{sha}").parse().unwrap();
    let warm = weights::read_hub(&s, &pinned).unwrap();
    assert_eq!(server.requests(), 0, "{:?}", server.log());
    assert_eq!(
        codes(warm.headers.as_ref().unwrap()),
        vec!["weights-d2t-values"]
    );
    // The cached headers without the cached data: offline judges without the values.
    let data_dir = cache
        .path()
        .join("models--org--Eagle3-Ids/.dflash-check/safetensors-data");
    std::fs::remove_dir_all(&data_dir).unwrap();
    let offline = weights::read_hub(&settings(&server, cache.path(), true), &pinned).unwrap();
    assert_eq!(server.requests(), 0);
    let h = offline.headers.unwrap();
    assert!(h.map_data.is_empty());
    assert_eq!(codes(&h), Vec::<&str>::new());
}

#[test]
fn hub_index_naming_an_absent_shard_is_a_finding_and_a_hostile_header_exits_2() {
    let Some(fx) = fixtures("hub_findings") else {
        return;
    };
    let server = HubServer::start();
    // The shard-missing case as a repo: its index names a shard the commit does not hold.
    let (sha, _) = serve(&server, "z-lab/Broken", &fx.join("cases/shard-missing"));
    let (evil_sha, _) = serve(
        &server,
        "z-lab/Evil",
        &fx.join("hostile/overlapping-offsets"),
    );
    let cache = tempfile::tempdir().unwrap();
    let cache_s = cache.path().to_str().unwrap();

    let mut cmd = common::dflash();
    let out = cmd
        .env_remove("HF_HUB_OFFLINE")
        .args([
            "weights",
            "hf://z-lab/Broken",
            "--endpoint",
            &server.url,
            "--cache-dir",
            cache_s,
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["hub"]["sha"], sha);
    assert_eq!(
        codes_of(&report),
        BTreeSet::from(["weights-shard-missing".to_string()])
    );
    assert_eq!(
        report["diagnostics"][0]["file"],
        format!("z-lab/Broken@{sha}/model.safetensors.index.json")
    );

    let out = common::dflash()
        .env_remove("HF_HUB_OFFLINE")
        .args([
            "weights",
            "hf://z-lab/Evil",
            "--endpoint",
            &server.url,
            "--cache-dir",
            cache_s,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("z-lab/Evil@{evil_sha}/model.safetensors"))
            && err.contains("invalid offset"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn library_codes_are_weights_codes() {
    // One diagnostic model: the codes are `Code::Weights` and `explain`-able through Code::parse.
    for c in WeightsCode::ALL {
        assert_eq!(Code::parse(c.as_str()), Some(Code::Weights(*c)));
    }
}

#[test]
fn a_transient_hub_failure_is_retried_and_a_gated_repo_is_an_error_naming_the_file() {
    let Some(fx) = fixtures("hub_faults") else {
        return;
    };
    let server = HubServer::start();
    let (sha, _) = serve(&server, SHARDED, &fx.join("cases/clean-dflash"));
    let cache = tempfile::tempdir().unwrap();
    let s = settings(&server, cache.path(), false);

    // A 503 on the range request: retried, then read.
    server.status_fault(Some("GET"), 503, &[]);
    let h = weights::read_hub_headers(&s, SHARDED, &sha)
        .unwrap()
        .unwrap();
    assert_eq!(h.requests, 2, "one failed attempt, one answer");
    assert_eq!(h.shards[0].tensors.len(), 25);

    // A gated repo: no retry, an error that names the file and says what to do; the token is
    // sent to the endpoint and never shown.
    let other = tempfile::tempdir().unwrap();
    let token = "hf_SENTINELweights0000";
    let flags = HubFlags {
        endpoint: Some(server.url.clone()),
        cache_dir: Some(other.path().to_path_buf()),
        timeout_secs: Some(5),
        ..HubFlags::default()
    };
    let s =
        HubSettings::resolve(&flags, &|k| (k == "HF_TOKEN").then(|| token.to_string())).unwrap();
    server.clear_log();
    server.status_fault(Some("GET"), 401, &[("X-Error-Code", "GatedRepo")]);
    let err = weights::read_hub_headers(&s, SHARDED, &sha).unwrap_err();
    assert_eq!(server.requests(), 1);
    assert!(
        err.message.contains("model.safetensors") && err.message.contains("restricted (401)"),
        "{err}"
    );
    assert!(err.hint.clone().unwrap_or_default().contains("HF_TOKEN"));
    assert!(!format!("{err} {err:?}").contains("SENTINEL"));
    assert_eq!(
        server.log()[0].header("authorization").map(str::to_string),
        Some(format!("Bearer {token}"))
    );
    // Nothing was cached for it.
    assert!(!dflash_check::hub::header_cache_path(
        other.path(),
        SHARDED,
        &sha,
        "model.safetensors"
    )
    .exists());
}

/// The sha256 of one tensor's bytes, found by reading the safetensors header by hand (8-byte
/// length, JSON, offsets after the header): what `pin` must record for `d2t`.
fn tensor_sha256(file: &Path, name: &str) -> String {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(file).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let offsets = &header[name]["data_offsets"];
    let (a, b) = (
        offsets[0].as_u64().unwrap() as usize,
        offsets[1].as_u64().unwrap() as usize,
    );
    Sha256::digest(&bytes[8 + n + a..8 + n + b])
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// SpecForge PR 534: fine-tuning regenerated `d2t`. `pin` records the sha256 of the tensor's
/// bytes; the same shapes with another map pass every header check but fail `check` with
/// pin-d2t-changed; weights that are not there are a warning that nothing was verified.
#[test]
fn a_regenerated_d2t_fails_check_against_its_pin() {
    let Some(fx) = fixtures("a_regenerated_d2t_fails_check") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let drafter = dir.path().join("models/eagle");
    std::fs::create_dir_all(&drafter).unwrap();
    let clean = fx.join("cases/clean-eagle3");
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(clean.join(f), drafter.join(f)).unwrap();
    }
    std::fs::copy(clean.join("config.json"), dir.path().join("authority.json")).unwrap();
    let pins = dir.path().join("dflash-check.toml");
    let (pins_s, drafter_s) = (pins.to_str().unwrap(), drafter.to_str().unwrap());
    let authority = dir.path().join("authority.json");
    let (code, out, err) = common::run(&[
        "pin",
        drafter_s,
        "--against",
        authority.to_str().unwrap(),
        "--pins",
        pins_s,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let pinned = std::fs::read_to_string(&pins).unwrap();
    let want = tensor_sha256(&drafter.join("model.safetensors"), "d2t");
    assert!(
        pinned.starts_with("# ") && pinned.contains("version = 2"),
        "{pinned}"
    );
    assert!(
        pinned.contains(&format!("d2t_sha256 = \"{want}\"")),
        "{pinned}"
    );

    let check = || json_run(&["check", drafter_s, "--pins", pins_s, "--format", "json"]);
    // The pin's own findings (the EAGLE-3 config also gets lint's, the same every run).
    let findings = |report: &serde_json::Value| -> Vec<String> {
        report["drafters"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"].as_str().unwrap().starts_with("pin-"))
            .map(|d| {
                format!(
                    "{} {}",
                    d["code"].as_str().unwrap(),
                    d["severity"].as_str().unwrap()
                )
            })
            .collect()
    };
    let (code, report, err) = check();
    assert_eq!(
        (code, findings(&report)),
        (0, Vec::<String>::new()),
        "{report:#}{err}"
    );

    std::fs::copy(
        fx.join("cases/d2t-regenerated/model.safetensors"),
        drafter.join("model.safetensors"),
    )
    .unwrap();
    let (code, report, err) = check();
    let got = (code, findings(&report));
    assert_eq!(
        got,
        (1, vec!["pin-d2t-changed error".into()]),
        "{report:#}{err}"
    );
    let message = report["drafters"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "pin-d2t-changed")
        .unwrap()["message"]
        .as_str()
        .unwrap();
    assert!(
        message.contains(&want) && message.contains("SpecForge PR 534"),
        "{message}"
    );

    // Weights kept out of the checkout: not verified, and said so.
    std::fs::remove_file(drafter.join("model.safetensors")).unwrap();
    let (code, report, err) = check();
    let got = (code, findings(&report));
    let want_unverified = (0, vec!["pin-digest-unverified warning".to_string()]);
    assert_eq!(got, want_unverified, "{report:#}{err}");
}

/// Issue 30: a DeepSeek-V3-sized target index (SYNTHETIC, written by bench/mtp_index.py: about
/// 184,000 names in 17 MB, over the 16 MiB the index was read up to before) is read, its MTP
/// layer found by name with no shard downloaded; the same index without the MTP layer is an
/// error naming the quantizers that drop it; one over the entry cap exits 2 naming the cap.
#[test]
fn a_real_size_target_index_is_read_and_its_mtp_layer_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let make = |name: &str, extra: &[&str]| -> Option<PathBuf> {
        let dir = tmp.path().join(name);
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/mtp_index.py");
        let ok = Command::new("python3")
            .arg(&script)
            .arg(&dir)
            .args(extra)
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            Some(dir)
        } else {
            skip_or_fail(
                "a_real_size_target_index",
                "python3 (for bench/mtp_index.py)",
            )
        }
    };
    let Some(kept) = make("kept", &[]) else {
        return;
    };
    let (code, report, err) = json_run(&["weights", kept.to_str().unwrap(), "--format", "json"]);
    // No shard is there: each is a finding; the MTP layer is present by name.
    assert_eq!(code, 1, "{err}");
    let want: BTreeSet<String> = ["weights-shard-missing".to_string()].into();
    assert_eq!(codes_of(&report), want);

    let Some(dropped) = make("dropped", &["--drop-mtp"]) else {
        return;
    };
    let (code, report, err) = json_run(&["weights", dropped.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1, "{err}");
    let missing: Vec<&serde_json::Value> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "weights-mtp-missing")
        .collect();
    assert_eq!(missing.len(), 1, "{}", report["diagnostics"]);
    let message = missing[0]["message"].as_str().unwrap();
    for part in [
        "model.layers.61.*",
        "Model-Optimizer",
        "auto-round",
        "llm-compressor",
        "vLLM refuses",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }

    let Some(over) = make("over", &["--extra-entries", "320000"]) else {
        return;
    };
    let (code, out, err) = common::run(&["weights", over.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("more than 500000 tensors"), "{err}");
    assert!(out.is_empty());
}

/// A sharded checkpoint on a distant Hub (each answer 150 ms away): the shard headers are asked
/// several at a time, not one round trip after another (a DeepSeek-V3-class target holds 163
/// shards), and come out in the index's order, the same as read from disk.
#[test]
fn hub_shard_headers_are_read_in_parallel_in_index_order() {
    let Some(fx) = fixtures("hub_shard_headers_in_parallel") else {
        return;
    };
    let dir = fx.join("cases/mtp-deepseek-clean");
    let server = HubServer::start();
    let (sha, _) = serve(&server, "org/Sharded", &dir);
    server.delay_each(std::time::Duration::from_millis(150));
    let cache = tempfile::tempdir().unwrap();
    let s = settings(&server, cache.path(), false);
    let hub = weights::read_hub_headers(&s, "org/Sharded", &sha)
        .unwrap()
        .unwrap();
    let disk = weights::read_local(&dir).unwrap().unwrap();
    let files = |h: &weights::WeightsHeaders| -> Vec<(String, usize)> {
        h.shards
            .iter()
            .map(|s| (s.file.clone(), s.tensors.len()))
            .collect()
    };
    assert_eq!(files(&hub), files(&disk));
    assert!(hub.shards.len() >= 3);
    let peak = server.peak_in_flight();
    assert!((2..=8).contains(&peak), "{peak} requests at once");
}

/// Two bad shard headers read at once: the error reported is the first bad shard's in the
/// index's order, whatever finishes first (found in review: a shard claimed after a failure
/// was left unread and hid the real error).
#[test]
fn hub_shard_headers_in_parallel_report_the_first_failure_in_order() {
    let Some(fx) = fixtures("hub_shard_headers_first_failure") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("two-bad-shards");
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(fx.join("cases/mtp-deepseek-clean")).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let mut bytes = std::fs::read(entry.path()).unwrap();
        if name.starts_with("model-00002") || name.starts_with("model-00003") {
            bytes.truncate(5);
        }
        std::fs::write(dir.join(&name), bytes).unwrap();
    }
    for _ in 0..3 {
        let server = HubServer::start();
        let (sha, _) = serve(&server, "org/TwoBad", &dir);
        server.delay_each(std::time::Duration::from_millis(50));
        let cache = tempfile::tempdir().unwrap();
        let s = settings(&server, cache.path(), false);
        let err = weights::read_hub_headers(&s, "org/TwoBad", &sha)
            .expect_err("a truncated shard is an error");
        assert!(
            err.message.contains("model-00002-of-00003.safetensors"),
            "{}",
            err.message
        );
    }
}

/// Issue 39: `weights --engine` judges the engine that loads the checkpoint. An MTP module one
/// engine builds unquantized and the other quantized is a warning without an engine; with one,
/// an error where that engine is the one that fails and nothing where it loads.
#[test]
fn the_engine_decides_who_fails_a_one_engine_exclude_list() {
    let Some(fx) = fixtures("the_engine_decides_who_fails") else {
        return;
    };
    // Both cases fail under SGLang only (its gptq_marlin quantizes experts; its DeepSeek MTP
    // layer is `model.decoder.*`, not the `model.layers.N` the list names).
    for case in ["mtp-qwen35-gptq-dynamic", "mtp-deepseek-awq-layer-index"] {
        let dir = fx.join("cases").join(case);
        let dir = dir.to_str().unwrap();
        let code = "weights-mtp-unquantized-one-engine";
        for (engine, want, exit) in [
            (None, Some("warning"), 0),
            (Some("vllm"), None, 0),
            (Some("sglang@0.5.23"), Some("error"), 1),
        ] {
            let mut args = vec!["weights", dir, "--format", "json"];
            if let Some(e) = engine {
                args.extend(["--engine", e]);
            }
            let (status, report, err) = json_run(&args);
            assert_eq!(status, exit, "{case} {engine:?}: {err}");
            let got = report["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["code"] == code)
                .map(|d| d["severity"].as_str().unwrap().to_string());
            assert_eq!(got.as_deref(), want, "{case} {engine:?}");
        }
    }
}

/// `weights CASE --engine E` for each (engine, severity of weights-mtp-unquantized-one-engine,
/// exit); every message names each of `names`.
fn one_engine_by_release(
    fx: &std::path::Path,
    case: &str,
    expect: &[(Option<&str>, Option<&str>, i32)],
    names: &[&str],
) {
    by_release(
        fx,
        case,
        "weights-mtp-unquantized-one-engine",
        expect,
        names,
    );
}

/// One case's runs: (engine, severity of the code wanted, exit code).
type Expect<'a> = [(Option<&'a str>, Option<&'a str>, i32)];

/// [`by_release`] for each (case, its runs, the names its message must hold).
fn cases_by_release(fx: &std::path::Path, code: &str, cases: &[(&str, &Expect, &[&str])]) {
    for (case, expect, names) in cases {
        by_release(fx, case, code, expect, names);
    }
}

/// `weights CASE --engine E` for each (E, severity of `code` wanted, exit code), the message
/// naming each of `names`.
fn by_release(
    fx: &std::path::Path,
    case: &str,
    code: &str,
    expect: &[(Option<&str>, Option<&str>, i32)],
    names: &[&str],
) {
    let dir = fx.join("cases").join(case);
    let dir = dir.to_str().unwrap();
    for &(engine, want, exit) in expect {
        let mut args = vec!["weights", dir, "--format", "json"];
        if let Some(e) = engine {
            args.extend(["--engine", e]);
        }
        let (status, report, err) = json_run(&args);
        assert_eq!(status, exit, "{case} {engine:?}: {err}");
        let found = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == code);
        let got = found.map(|d| d["severity"].as_str().unwrap().to_string());
        assert_eq!(got.as_deref(), want, "{case} {engine:?}");
        if let Some(d) = found {
            let message = d["message"].as_str().unwrap();
            for name in names {
                assert!(message.contains(name), "{message}");
            }
        }
    }
}

/// Issue 41 (sglang#29781): quark on a GLM-5 DSA checkpoint whose NextN layer is excluded by
/// its checkpoint names loads under vLLM and SGLang 0.5.16+, and fails under SGLang 0.5.11-0.5.15.
#[test]
fn a_glm_nextn_layer_excluded_by_checkpoint_names_is_judged_by_the_sglang_release() {
    let Some(fx) = fixtures("glm_nextn_quark") else {
        return;
    };
    let expect = [
        (None, Some("warning"), 0),
        (Some("vllm"), None, 0),
        (Some("sglang@0.5.15"), Some("error"), 1),
        (Some("sglang@0.5.11"), Some("error"), 1),
        (Some("sglang@0.5.16"), None, 0),
        (Some("sglang"), None, 0),
    ];
    one_engine_by_release(
        &fx,
        "mtp-glm-dsa-quark-entries",
        &expect,
        &["model.eh_proj", "model.layers.2"],
    );
}

/// Issue 41 (sglang#36786): an MXFP4 compressed-tensors head whose experts `ignore` excludes
/// loads under vLLM and SGLang up to 0.5.16, and fails under SGLang 0.5.17 and later (the
/// default window: an error without a release).
#[test]
fn mxfp4_mtp_experts_are_judged_by_the_sglang_release() {
    let Some(fx) = fixtures("mxfp4_mtp_experts") else {
        return;
    };
    let expect = [
        (None, Some("warning"), 0),
        (Some("vllm"), None, 0),
        (Some("sglang@0.5.16"), None, 0),
        (Some("sglang@0.5.17"), Some("error"), 1),
        (Some("sglang"), Some("error"), 1),
    ];
    one_engine_by_release(&fx, "mtp-qwen35-mxfp4-experts", &expect, &["sglang#36786"]);
}

/// Issue 41 (sglang#35887): a compressed-tensors Qwen3.5 head whose `ignore` lists q/k/v and
/// gate/up one by one loads under vLLM and SGLang 0.5.21+, and loses its weights silently under
/// SGLang up to 0.5.20, which matches the fused names whole.
#[test]
fn fused_mtp_projections_excluded_one_by_one_are_judged_by_the_sglang_release() {
    let Some(fx) = fixtures("fused_mtp_projections") else {
        return;
    };
    let expect = [
        (None, Some("warning"), 0),
        (Some("vllm"), None, 0),
        (Some("sglang@0.5.20"), Some("error"), 1),
        (Some("sglang@0.5.10"), Some("error"), 1),
        (Some("sglang@0.5.21"), None, 0),
        (Some("sglang"), None, 0),
    ];
    let fused = [
        "mtp.layers.0.self_attn.qkv_proj",
        "mtp.layers.0.mlp.gate_up_proj",
    ];
    one_engine_by_release(&fx, "mtp-qwen35-ct-individual", &expect, &fused);
}

/// Issue 41: quark on a Qwen3.5 head with `mtp.` entries, none naming the experts. SGLang 0.5.12
/// to 0.5.20 builds the whole head BF16 (qwen3_5_mtp.py): a BF16 expert the list leaves
/// quantized loads there and fails elsewhere (988a43b called it an error at every release);
/// an expert stored quantized fails there only (988a43b said nothing).
#[test]
fn a_quark_qwen35_head_is_judged_by_sglangs_whole_head_rule() {
    let Some(fx) = fixtures("quark_whole_head") else {
        return;
    };
    let partial = [
        (None, Some("error"), 1),
        (Some("vllm"), Some("error"), 1),
        (Some("sglang@0.5.11"), Some("error"), 1),
        (Some("sglang@0.5.15"), None, 0),
        (Some("sglang@0.5.20"), None, 0),
        (Some("sglang@0.5.21"), Some("error"), 1),
        (Some("sglang"), Some("error"), 1),
    ];
    by_release(
        &fx,
        "mtp-qwen35-quark-partial",
        "weights-mtp-unquantized",
        &partial,
        &["mtp.layers.0.mlp.experts.0.down_proj", "0.5.12 to 0.5.20"],
    );
    let mixed = [
        (None, Some("warning"), 0),
        (Some("vllm"), None, 0),
        (Some("sglang@0.5.15"), Some("error"), 1),
        (Some("sglang@0.5.21"), None, 0),
        (Some("sglang"), None, 0),
    ];
    by_release(
        &fx,
        "mtp-qwen35-quark-mixed",
        "weights-mtp-quant-excluded",
        &mixed,
        &["mtp.layers.0.mlp.experts.0.down_proj", "mtp.fc"],
    );
}

/// Issue 41, vLLM's quark handling of a Qwen3.5 head (read in every wheel 0.25.1-0.34.0): the
/// list is matched module by module under the checkpoint's names at every release, as the tool
/// modelled it, a MoE's experts by the MoE's name. Up to 0.25 an excluded MoE fails whether named
/// whole or expert by expert (vllm#46757 fixed both in 0.26.0; 988a43b: clean there). A bare
/// prefix matches nothing at any release; a `re:` on the experts' names only excludes nothing
/// (988a43b: clean everywhere). The same for a DeepSeek-style NextN layer whose experts are named
/// one by one (amd/GLM-5.2-MXFP4's form, ROCm/vllm#1022) or by their MoE.
#[test]
fn vllm_quark_head_is_matched_module_by_module_at_every_release() {
    let Some(fx) = fixtures("vllm_quark_head") else {
        return;
    };
    let code = "weights-mtp-unquantized";
    // The MoE excluded whole (or by a `re:` matching it): nothing without an engine.
    let named = [
        (Some("vllm@0.25.1"), Some("error"), 1),
        (Some("vllm@0.26.0"), None, 0),
        (Some("vllm@0.28"), None, 0),
        (Some("vllm@0.34"), None, 0),
        (Some("vllm"), None, 0),
        (Some("sglang"), None, 0),
        (None, None, 0),
    ];
    // Its experts named one by one: SGLang fails on some releases too (see
    // quark_experts_named_one_by_one_by_sglang_release), so a warning without an engine.
    let one_by_one = [
        (Some("vllm@0.25.1"), Some("error"), 1),
        (Some("vllm@0.26.0"), None, 0),
        (Some("vllm@0.28"), None, 0),
        (Some("vllm@0.34"), None, 0),
        (Some("vllm"), None, 0),
        (Some("sglang"), None, 0),
        (None, Some("warning"), 0),
    ];
    let everywhere = [
        (Some("vllm@0.25.1"), Some("error"), 1),
        (Some("vllm@0.28"), Some("error"), 1),
        (Some("vllm@0.34"), Some("error"), 1),
        (None, Some("error"), 1),
    ];
    let cases: [(&str, &[_], &[&str]); 6] = [
        (
            "mtp-qwen35-quark-named",
            &one_by_one,
            &["mtp.layers.0.mlp.experts", "vllm#46757"],
        ),
        ("mtp-qwen35-quark-regex", &named, &["AssertionError"]),
        ("mtp-qwen35-quark-prefix", &everywhere, &["mtp.fc"]),
        (
            "mtp-qwen35-quark-expert-regex",
            &everywhere,
            &["mtp.layers.0.mlp.experts.0.down_proj"],
        ),
        (
            "mtp-deepseek-quark-experts-named",
            &one_by_one,
            &["model.layers.2.mlp.experts", "ROCm/vllm#1022"],
        ),
        (
            "mtp-deepseek-quark-experts-moe",
            &named,
            &["model.layers.2.mlp.experts", "AssertionError"],
        ),
    ];
    for (case, expect, names) in cases {
        by_release(&fx, case, code, expect, names);
    }
}

/// Issue 41: BF16 routed experts of the head excluded only by entries naming them one by one
/// (amd/GLM-5.2-MXFP4's form). SGLang matches quark's list against the MoE's own name
/// (should_ignore_layer, quark/utils.py) until 0.5.21 adds the clause "excludes may name experts
/// individually"; its GLM-5 DSA NextN class adds the MoE's runtime name itself from 0.5.16; its
/// Qwen3.5 MTP class builds the whole head BF16 for `mtp.` entries from 0.5.12; its GLM-4.5 NextN
/// class never remaps the entries (the naming rule's finding, at every release). The MoE named
/// whole loads at every SGLang release read. 497242d: clean under every SGLang release.
#[test]
fn quark_experts_named_one_by_one_by_sglang_release() {
    let Some(fx) = fixtures("quark_experts_named_one_by_one_by_sglang_release") else {
        return;
    };
    let code = "weights-mtp-unquantized";
    let error = Some("error");
    // (case, [(engine, severity wanted, exit)], names the message must hold)
    let cases: [(&str, &Expect, &[&str]); 5] = [
        (
            "mtp-deepseek-quark-experts-named",
            &[
                (Some("sglang@0.5.10"), error, 1),
                (Some("sglang@0.5.20"), error, 1),
                (Some("sglang@0.5.21"), None, 0),
                (Some("sglang@0.5.23"), None, 0),
            ],
            &[
                "model.layers.2.mlp.experts",
                "SGLang up to 0.5.20",
                "SGLang 0.5.21",
            ],
        ),
        // The MoE named whole: every SGLang release read loads it.
        (
            "mtp-deepseek-quark-experts-moe",
            &[
                (Some("sglang@0.5.10"), None, 0),
                (Some("sglang@0.5.20"), None, 0),
                (Some("sglang@0.5.23"), None, 0),
            ],
            &[],
        ),
        (
            "mtp-qwen35-quark-named",
            &[
                (Some("sglang@0.5.11"), error, 1),
                (Some("sglang@0.5.12"), None, 0),
                (Some("sglang@0.5.20"), None, 0),
                (Some("sglang@0.5.23"), None, 0),
            ],
            &["SGLang 0.5.10 and 0.5.11"],
        ),
        // GLM-5 DSA: the expert rule up to 0.5.15 (the naming rule fires at 0.5.11-0.5.15 too).
        (
            "mtp-glm-dsa-quark-experts-named",
            &[
                (Some("sglang@0.5.15"), error, 1),
                (Some("sglang@0.5.16"), None, 0),
                (Some("sglang@0.5.20"), None, 0),
            ],
            &["SGLang up to 0.5.15"],
        ),
        // The whole NextN layer named as well: SGLang 0.5.11 and later build it unquantized.
        (
            "mtp-glm-dsa-quark-layer",
            &[
                (Some("sglang@0.5.10"), error, 1),
                (Some("sglang@0.5.11"), None, 0),
                (Some("sglang@0.5.16"), None, 0),
                (Some("vllm@0.25.1"), error, 1),
            ],
            &["SGLang 0.5.10 likewise"],
        ),
    ];
    cases_by_release(&fx, code, &cases);
    // GLM-4.5: never remapped; the naming rule is SGLang's finding at every release, naming the
    // MoE's runtime name as the entry to add; the expert rule says nothing for SGLang.
    let glm45_names = [
        (None, Some("warning"), 0),
        (Some("sglang@0.5.10"), Some("error"), 1),
        (Some("sglang@0.5.23"), Some("error"), 1),
        (Some("vllm"), None, 0),
    ];
    one_engine_by_release(
        &fx,
        "mtp-glm45-quark-experts-named",
        &glm45_names,
        &["model.decoder.mlp.experts", "glm4_moe_nextn.py"],
    );
    let glm45_experts = [
        (Some("sglang@0.5.10"), None, 1),
        (Some("sglang@0.5.23"), None, 1),
        (Some("vllm@0.25.1"), Some("error"), 1),
        (Some("vllm@0.26.0"), None, 0),
    ];
    by_release(
        &fx,
        "mtp-glm45-quark-experts-named",
        code,
        &glm45_experts,
        &[],
    );
}

/// Issue 41: a BF16 NextN `eh_proj` quark's list does not name is a plain nn.Linear in vLLM at
/// every release (988a43b: an error there); SGLang quantizes DeepSeek's and GLM-5 DSA's from
/// 0.5.11 and never GLM-4.5's.
#[test]
fn a_bf16_nextn_eh_proj_under_quark_fails_only_where_sglang_quantizes_it() {
    let Some(fx) = fixtures("quark_nextn_eh_proj") else {
        return;
    };
    let code = "weights-mtp-unquantized";
    for case in ["mtp-glm-dsa-quark-eh-proj", "mtp-glm45-quark-eh-proj"] {
        let vllm = [
            (Some("vllm@0.25.1"), None, 0),
            (Some("vllm@0.28"), None, 0),
            (Some("vllm@0.34"), None, 0),
            (None, None, 0),
        ];
        by_release(&fx, case, code, &vllm, &[]);
    }
    let dsa = [
        (None, Some("warning"), 0),
        (Some("vllm"), None, 0),
        (Some("sglang@0.5.10"), None, 0),
        (Some("sglang@0.5.11"), Some("error"), 1),
        (Some("sglang"), Some("error"), 1),
    ];
    one_engine_by_release(
        &fx,
        "mtp-glm-dsa-quark-eh-proj",
        &dsa,
        &["model.eh_proj", "nn.Linear"],
    );
    let glm45 = [(None, None, 0), (Some("sglang"), None, 0)];
    one_engine_by_release(&fx, "mtp-glm45-quark-eh-proj", &glm45, &[]);
}

/// Issue 41: a NextN `eh_proj` is a plain nn.Linear in vLLM at every release read (deepseek_mtp.py,
/// glm4_moe_mtp.py, bailing_moe_mtp.py 0.25.1-0.34.0), so one stored quantized fails there (its
/// scale has no parameter); SGLang builds DeepSeek's plain too except under quark from 0.5.11,
/// and Bailing 2.5's under the quant config (bailing_moe_nextn.py), where a BF16 one fails
/// instead. 497242d: clean on every quantized case, an error under every engine on the BF16
/// Bailing one.
#[test]
fn a_nextn_eh_proj_is_judged_by_who_builds_it_plain() {
    let Some(fx) = fixtures("a_nextn_eh_proj_is_judged_by_who_builds_it_plain") else {
        return;
    };
    let code = "weights-mtp-quant-excluded";
    let error = Some("error");
    let cases: [(&str, &Expect, &[&str]); 3] = [
        (
            "mtp-deepseek-fp8-eh-proj-quantized",
            &[
                (None, error, 1),
                (Some("vllm@0.25.1"), error, 1),
                (Some("vllm"), error, 1),
                (Some("sglang"), error, 1),
            ],
            &["model.layers.2.eh_proj", "plain nn.Linear", "KeyError"],
        ),
        (
            "mtp-glm-dsa-quark-eh-proj-quantized",
            &[
                (None, Some("warning"), 0),
                (Some("vllm"), error, 1),
                (Some("sglang@0.5.10"), error, 1),
                (Some("sglang@0.5.11"), None, 0),
                (Some("sglang"), None, 0),
            ],
            &["quark config from 0.5.11"],
        ),
        (
            "mtp-bailing-eh-proj-quantized",
            &[
                (None, Some("warning"), 0),
                (Some("vllm@0.25.1"), error, 1),
                (Some("vllm"), error, 1),
                (Some("sglang@0.5.10"), None, 0),
                (Some("sglang"), None, 0),
            ],
            &["under the quant config"],
        ),
    ];
    cases_by_release(&fx, code, &cases);
    let bf16 = [
        (None, Some("warning"), 0),
        (Some("vllm"), None, 0),
        (Some("vllm@0.25.1"), None, 0),
        (Some("sglang@0.5.10"), error, 1),
        (Some("sglang"), error, 1),
    ];
    one_engine_by_release(
        &fx,
        "mtp-bailing-eh-proj-bf16",
        &bf16,
        &["bailing_moe_nextn.py", "model.layers.2.eh_proj"],
    );
    let fp4 = [(None, None, 0), (Some("sglang"), None, 0)];
    one_engine_by_release(&fx, "mtp-bailing-modelopt-fp4-eh-proj", &fp4, &[]);
}

/// Issue 41: an exclude entry naming the fused module (`qkv_proj`, `gate_up_proj`) of a Qwen3.5
/// head's BF16 shards. vLLM up to 0.29 matches the shards' names only, from 0.30 the fused name
/// first (find_matching_patterns); SGLang's compressed-tensors honours only an exact fused name,
/// its quark the fused name first from 0.5.21, and its Qwen3.5 MTP class matches the fused name
/// whole up to 0.5.20 (no packed mapping). 497242d: an error under every engine and release.
#[test]
fn fused_module_entries_are_judged_by_release() {
    let Some(fx) = fixtures("fused_module_entries_are_judged_by_release") else {
        return;
    };
    let code = "weights-mtp-unquantized";
    let error = Some("error");
    let cases: [(&str, &Expect, &[&str]); 3] = [
        (
            "mtp-qwen35-ct-fused-exact",
            &[
                (None, None, 0),
                (Some("vllm@0.29"), None, 0),
                (Some("vllm"), None, 0),
                (Some("sglang@0.5.20"), None, 0),
                (Some("sglang"), None, 0),
            ],
            &[],
        ),
        (
            "mtp-qwen35-ct-fused-regex",
            &[
                (None, Some("warning"), 0),
                (Some("vllm@0.29"), error, 1),
                (Some("vllm@0.30"), None, 0),
                (Some("vllm@0.34"), None, 0),
                (Some("sglang@0.5.20"), None, 0),
                (Some("sglang@0.5.23"), error, 1),
            ],
            &["mtp.layers.0.mlp.gate_up_proj", "vLLM 0.30 and later"],
        ),
        (
            "mtp-qwen35-quark-fused",
            &[
                (None, Some("warning"), 0),
                (Some("vllm@0.29"), error, 1),
                (Some("vllm@0.30"), None, 0),
                (Some("sglang@0.5.11"), None, 0),
                (Some("sglang@0.5.23"), None, 0),
            ],
            &["mtp.layers.0.mlp.gate_up_proj"],
        ),
    ];
    cases_by_release(&fx, code, &cases);
}

/// Issue 43: oMLX loads DFlash drafters through dflash-mlx, which refuses a draft-owned lm_head
/// and has no embed_tokens parameter; oMLX then serves the model without its drafter (a
/// warning). vLLM loads both, so nothing without an engine or under vLLM.
#[test]
fn a_dflash_drafter_s_own_head_is_refused_by_omlx_only() {
    let Some(fx) = fixtures("a_dflash_drafter_s_own_head_is_refused_by_omlx_only") else {
        return;
    };
    let code = "weights-draft-head-refused";
    let expect = [
        (None, None, 0),
        (Some("vllm"), None, 0),
        (Some("omlx"), Some("warning"), 0),
    ];
    by_release(
        &fx,
        "dflash-own-lm-head",
        code,
        &expect,
        &["lm_head.weight"],
    );
    let expect_embed = [(None, None, 1), (Some("omlx"), Some("warning"), 1)];
    by_release(
        &fx,
        "vocab-rows-embed",
        code,
        &expect_embed,
        &["embed_tokens.weight"],
    );
}
