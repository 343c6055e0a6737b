//! MTP heads inside a target checkpoint (issue 30), from files: target configs that declare a
//! head (tests/fixtures/mtp-targets/, each with its SOURCE.txt) are linted without `--family`
//! (exit 0 or 1, never 2, the MTP rules that ran listed), judged with an engine (K against the
//! depth, the method vLLM rewrites from a name), served by `launch` (lint runs on the target's
//! own config: no `launch-lint-skipped`; `mtp` on a target without a head is an error), skipped
//! by `check` as targets, not drafters; and a config whose two depth spellings disagree is refused (exit 2).
//! Beside them, SGLang's draft attention backend inherited from an MLA target (sglang#23490).

use serde_json::Value;

mod common;

use common::{codes, run};

const TARGETS: &[&str] = &[
    "tests/fixtures/mtp-targets/deepseek-v3-defaults",
    "tests/fixtures/mtp-targets/glm4.5-defaults",
    "tests/fixtures/mtp-targets/qwen3.5-moe-defaults",
    // Published configs, verbatim (each folder's SOURCE.txt), quantized ones among them.
    "tests/fixtures/mtp-targets/deepseek-v3",
    "tests/fixtures/mtp-targets/deepseek-r1",
    "tests/fixtures/mtp-targets/deepseek-v3.2",
    "tests/fixtures/mtp-targets/deepseek-v3.1-nvfp4",
    "tests/fixtures/mtp-targets/deepseek-v3.2-nvfp4",
    "tests/fixtures/mtp-targets/glm-5",
    "tests/fixtures/mtp-targets/glm-5-fp8",
    "tests/fixtures/mtp-targets/glm-5.1",
    "tests/fixtures/mtp-targets/glm-5.1-fp8",
    "tests/fixtures/mtp-targets/glm-5.1-nvfp4",
    "tests/fixtures/mtp-targets/qwen3.5-27b",
    "tests/fixtures/mtp-targets/qwen3.5-35b-a3b",
    "tests/fixtures/mtp-targets/qwen3.5-122b-a10b",
    "tests/fixtures/mtp-targets/qwen3.5-122b-a10b-nvfp4",
    "tests/fixtures/mtp-targets/qwen3.5-397b-a17b",
    "tests/fixtures/mtp-targets/qwen3.5-397b-a17b-nvfp4",
    "tests/fixtures/mtp-targets/qwen3.6-27b-nvfp4",
    "tests/fixtures/mtp-targets/qwen3.6-35b-a3b-nvfp4",
];

fn json(out: &str, err: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}\nstdout: {out}\nstderr: {err}"))
}

#[test]
fn every_mtp_target_lints_without_family_and_lists_the_mtp_rules() {
    for dir in TARGETS {
        let (code, out, err) = run(&["lint", dir, "--format", "json"]);
        assert!(code == 0 || code == 1, "{dir}: exit {code}\n{err}");
        let v = json(&out, &err);
        assert_eq!(v["family"]["name"], "mtp", "{dir}");
        let rules: Vec<&str> = v["mtp_rules"]
            .as_array()
            .unwrap_or_else(|| panic!("{dir}: no mtp_rules in {out}"))
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(
            rules,
            ["mtp-base-layers-missing", "mtp-layers-unused"],
            "{dir}"
        );
        assert!(
            !codes(&v).iter().any(|(_, s)| s == "error"),
            "{dir}: {:?}",
            codes(&v)
        );
        // No error under either engine either: a false error on a published model is a bug.
        for engine in ["vllm", "sglang"] {
            let (code, out, err) = run(&["lint", dir, "--format", "json", "--engine", engine]);
            assert!(
                code == 0 || code == 1,
                "{dir} --engine {engine}: exit {code}\n{err}"
            );
            let v = json(&out, &err);
            assert!(
                !codes(&v).iter().any(|(_, s)| s == "error"),
                "{dir} --engine {engine}: {:?}",
                codes(&v)
            );
        }
        let (code, human, _) = run(&["lint", dir]);
        assert!(code == 0 || code == 1, "{dir}");
        assert!(
            human.contains("  mtp      rules run: mtp-base-layers-missing, mtp-layers-unused"),
            "{human}"
        );
    }
}

/// `lint DIR --format json --engine ENGINE --speculative-config SPEC`: the exit code and report.
fn lint_with(dir: &str, engine: &str, spec: &str) -> (i32, Value) {
    let (code, out, err) = run(&[
        "lint",
        dir,
        "--format",
        "json",
        "--engine",
        engine,
        "--speculative-config",
        spec,
    ]);
    (code, json(&out, &err))
}

#[test]
fn with_vllm_the_deployment_rules_about_mtp_run_and_judge_k() {
    let dir = TARGETS[0];
    let (code, v) = lint_with(
        dir,
        "vllm",
        r#"{"method": "mtp", "num_speculative_tokens": 3}"#,
    );
    assert_eq!(code, 0);
    assert!(codes(&v).contains(&("mtp-k-depth".into(), "warning".into())));
    let rules = v["mtp_rules"].as_array().unwrap();
    assert!(rules.iter().any(|c| c == "mtp-k-depth"), "{rules:?}");
    assert!(rules.iter().any(|c| c == "method-overridden-by-name"));
    // No K: vLLM takes the depth (n_predict), whichever spelling declares it (Qwen3.5's is
    // under text_config): not num-speculative-tokens-missing.
    let (code, v) = lint_with(TARGETS[2], "vllm", r#"{"method": "mtp"}"#);
    assert_eq!(code, 0, "{v}");
    assert!(codes(&v).is_empty(), "{v}");
    // K equal to the depth: nothing.
    let (code, v) = lint_with(
        dir,
        "vllm",
        r#"{"method": "mtp", "num_speculative_tokens": 1}"#,
    );
    assert_eq!(code, 0);
    assert!(codes(&v).is_empty(), "{v}");
}

#[test]
fn a_draft_name_that_rewrites_the_method_is_an_error_where_vllm_rewrites_it() {
    let spec =
        r#"{"method": "mtp", "model": "/models/GLM-4.5-dflash-eval", "num_speculative_tokens": 1}"#;
    let lint = |engine: &str| {
        let (code, v) = lint_with(TARGETS[1], engine, spec);
        (code, codes(&v))
    };
    let (code, found) = lint("vllm@0.33");
    assert_eq!(code, 1);
    assert!(found.contains(&("method-overridden-by-name".into(), "error".into())));
    let (code, found) = lint("vllm@0.34");
    assert_eq!(code, 0);
    assert!(found.contains(&("method-overridden-by-name".into(), "info".into())));
}

#[test]
fn two_depth_spellings_that_disagree_are_bad_input() {
    let (code, out, err) = run(&["lint", "tests/fixtures/mtp-targets/bad-two-depths"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.is_empty(), "nothing written: {out}");
    assert!(err.contains("bad-two-depths/config.json"), "{err}");
    assert!(
        err.contains("`mtp_num_hidden_layers` is 1")
            && err.contains("`text_config.mtp_num_hidden_layers` is 2"),
        "{err}"
    );
}

/// `launch --format json -- vllm serve MODEL --speculative-config SPEC`: exit code and report.
fn vllm_serve(model: &str, spec: &str) -> (i32, Value) {
    let (code, out, err) = run(&[
        "launch",
        "--format",
        "json",
        "--",
        "vllm",
        "serve",
        model,
        "--speculative-config",
        spec,
    ]);
    (code, json(&out, &err))
}

/// `launch --format json -- python3 -m sglang.launch_server --model-path MODEL FLAGS…`.
fn sglang_launch(model: &str, flags: &[&str]) -> (i32, Value) {
    let mut args = vec![
        "launch",
        "--format",
        "json",
        "--",
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        model,
    ];
    args.extend_from_slice(flags);
    let (code, out, err) = run(&args);
    (code, json(&out, &err))
}

/// An EAGLE chain of `steps` steps, top-k 1 and `tokens` draft tokens, then `flags`.
fn chain<'a>(steps: &'a str, tokens: &'a str, flags: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--speculative-num-steps",
        steps,
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        tokens,
    ];
    args.extend_from_slice(flags);
    args
}

#[test]
fn launch_lints_the_targets_own_head() {
    for dir in TARGETS {
        let (code, v) = vllm_serve(dir, r#"{"method": "mtp", "num_speculative_tokens": 1}"#);
        assert_eq!(code, 0, "{dir}");
        let found = codes(&v);
        assert!(
            !found.iter().any(|(c, _)| c == "launch-lint-skipped"),
            "{dir}: {found:?}"
        );
    }
    // SGLang serves MTP with EAGLE (NEXTN is read as EAGLE): no method finding.
    let (code, v) = sglang_launch(
        TARGETS[0],
        &chain("1", "2", &["--speculative-algorithm", "NEXTN"]),
    );
    assert_eq!(code, 0, "{v}");
    let found = codes(&v);
    assert!(
        !found
            .iter()
            .any(|(c, _)| c == "launch-lint-skipped" || c == "speculative-config-method"),
        "{found:?}"
    );
}

#[test]
fn mtp_on_a_target_without_a_head_is_an_error() {
    let (code, v) = vllm_serve(
        "tests/launch/models/qwen3-0.6b-draft-lm",
        r#"{"method": "mtp", "num_speculative_tokens": 1}"#,
    );
    assert_eq!(code, 1);
    assert!(codes(&v).contains(&("mtp-head-missing".into(), "error".into())));
}

/// SGLang serves a DeepSeek-V3 target as its own NextN draft and its loader takes exactly one
/// MTP layer (sglang 0.5.23): a config with 2, or 0 (a quantization that dropped the head), or
/// no key, does not start; GLM-4.5 is loaded by another class and not judged by this rule.
#[test]
fn sglang_nextn_needs_exactly_one_mtp_layer() {
    let nextn = |dir: &str| {
        let (code, v) = sglang_launch(dir, &chain("1", "2", &["--speculative-algorithm", "NEXTN"]));
        (code, codes(&v))
    };
    let error = ("mtp-nextn-layers-sglang".to_string(), "error".to_string());
    for dir in [
        "tests/lint/cases/mtp-target-two-layers",
        "tests/lint/cases/mtp-target-no-head",
    ] {
        let (code, found) = nextn(dir);
        assert_eq!(code, 1, "{dir}: {found:?}");
        assert!(found.contains(&error), "{dir}: {found:?}");
    }
    for dir in [TARGETS[0], TARGETS[1], "tests/lint/cases/mtp-target"] {
        let (code, found) = nextn(dir);
        assert_eq!(code, 0, "{dir}: {found:?}");
        assert!(!found.contains(&error), "{dir}: {found:?}");
    }
    // GLM: the published GLM-5 and GLM-5.1 configs (one layer) start; a GLM-5 or GLM-4.5 config
    // whose key was dropped or zeroed (a quantizer's doing) does not.
    for dir in [
        "tests/fixtures/mtp-targets/glm-5",
        "tests/fixtures/mtp-targets/glm-5.1-fp8",
        "tests/fixtures/mtp-targets/glm4.5-defaults",
    ] {
        let (code, found) = nextn(dir);
        assert_eq!(code, 0, "{dir}: {found:?}");
        let tmp = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(format!("{dir}/config.json")).unwrap();
        let mut config: Value = serde_json::from_str(&text).unwrap();
        for depth in [Some(0), None] {
            match depth {
                Some(n) => config["num_nextn_predict_layers"] = n.into(),
                None => {
                    config
                        .as_object_mut()
                        .unwrap()
                        .remove("num_nextn_predict_layers");
                }
            }
            std::fs::write(tmp.path().join("config.json"), config.to_string()).unwrap();
            let (code, found) = nextn(tmp.path().to_str().unwrap());
            assert_eq!(code, 1, "{dir} with {depth:?}: {found:?}");
            assert!(found.contains(&error), "{dir} with {depth:?}: {found:?}");
        }
    }
    // Bailing (Ling) V1, V2, V2.5: renamed BailingMoeForCausalLMNextN, whose three loaders check
    // the key as DeepSeek's does (configs written here with the key SGLang reads; no published
    // Ling config is committed). V3 is not served as its own draft without a draft path.
    for (arch, model_type) in [
        ("BailingMoeForCausalLM", "bailing_moe"),
        ("BailingMoeV2ForCausalLM", "bailing_moe_v2"),
        ("BailingMoeV2_5ForCausalLM", "bailing_hybrid"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        for (depth, starts) in [(Some(1), true), (Some(2), false), (None, false)] {
            let mut config = serde_json::json!({
                "architectures": [arch], "model_type": model_type, "num_hidden_layers": 20,
                "hidden_size": 2048, "vocab_size": 157184
            });
            if let Some(n) = depth {
                config["num_nextn_predict_layers"] = n.into();
            }
            std::fs::write(tmp.path().join("config.json"), config.to_string()).unwrap();
            let (code, found) = nextn(tmp.path().to_str().unwrap());
            assert_eq!(
                found.contains(&error),
                !starts,
                "{arch} {depth:?}: {found:?}"
            );
            assert_eq!(code, i32::from(!starts), "{arch} {depth:?}: {found:?}");
        }
    }
    // Qwen3.5: SGLang sets the draft's depth to 1 itself, so a published config starts.
    let (code, found) = nextn("tests/fixtures/mtp-targets/qwen3.5-27b");
    assert!(code == 0 && !found.contains(&error), "{found:?}");
    // A separate draft model is not the target's head: not this rule's.
    let (_, v) = sglang_launch(
        "tests/lint/cases/mtp-target-two-layers",
        &chain(
            "1",
            "2",
            &[
                "--speculative-algorithm",
                "NEXTN",
                "--speculative-draft-model-path",
                TARGETS[0],
            ],
        ),
    );
    assert!(!codes(&v).contains(&error), "{v}");
}

/// An export that dropped its MTP head, in the shape of one published on GitHub (a REAP
/// expert-pruned Qwen3.5-35B-A3B, bryce-hoehn/Qwen3.5-18B-REAP-A3B-Coding: its config still
/// declares one MTP layer, its 15,973-entry index names no `mtp.*` tensor). Written here with
/// that export's naming and counts (40 layers, 3 of 4 linear attention, 128 experts), not
/// copied: the index alone shows the dropped head, as weights-mtp-missing, from `weights` and
/// from `lint`; the same index with the head's tensors added passes.
#[test]
fn an_export_that_dropped_its_head() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("qwen3.5-reap-no-mtp");
    write_qwen35_moe_export(&dir, false);
    let dir = dir.to_str().unwrap();
    for cmd in ["weights", "lint"] {
        let (code, out, err) = run(&[cmd, dir, "--format", "json"]);
        assert_eq!(code, 1, "{cmd}: {err}");
        let found = codes(&json(&out, &err));
        assert!(
            found.contains(&("weights-mtp-missing".to_string(), "error".to_string())),
            "{cmd}: {found:?}"
        );
    }
    let kept = tmp.path().join("qwen3.5-with-mtp");
    write_qwen35_moe_export(&kept, true);
    let (_, out, err) = run(&["weights", kept.to_str().unwrap(), "--format", "json"]);
    let found = codes(&json(&out, &err));
    assert!(
        !found.iter().any(|(c, _)| c == "weights-mtp-missing"),
        "{found:?}"
    );
}

/// A Qwen3.5-MoE text checkpoint's config.json (one MTP layer declared) and
/// model.safetensors.index.json: 40 layers, every fourth full attention, 128 experts of three
/// projections each, seven shards; `mtp.*` tensors only when `with_mtp`.
fn write_qwen35_moe_export(dir: &std::path::Path, with_mtp: bool) {
    std::fs::create_dir_all(dir).unwrap();
    let layers = 40;
    let layer_types: Vec<&str> = (0..layers)
        .map(|i| {
            if i % 4 == 3 {
                "full_attention"
            } else {
                "linear_attention"
            }
        })
        .collect();
    let config = serde_json::json!({
        "architectures": ["Qwen3_5MoeForConditionalGeneration"],
        "model_type": "qwen3_5_moe_text",
        "dtype": "float16",
        "hidden_size": 2048,
        "num_hidden_layers": layers,
        "layer_types": layer_types,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "vocab_size": 248320,
        "eos_token_id": 248044,
        "mtp_num_hidden_layers": 1,
        "tie_word_embeddings": false
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let lm = "model.language_model";
    let mut names = vec![
        "lm_head.weight".to_string(),
        format!("{lm}.embed_tokens.weight"),
        format!("{lm}.norm.weight"),
    ];
    for (i, kind) in layer_types.iter().enumerate() {
        let p = format!("{lm}.layers.{i}");
        let attn: &[&str] = if *kind == "full_attention" {
            &[
                "self_attn.q_proj.weight",
                "self_attn.k_proj.weight",
                "self_attn.v_proj.weight",
                "self_attn.o_proj.weight",
                "self_attn.q_norm.weight",
                "self_attn.k_norm.weight",
            ]
        } else {
            &[
                "linear_attn.A_log",
                "linear_attn.conv1d.weight",
                "linear_attn.dt_bias",
                "linear_attn.in_proj_a.weight",
                "linear_attn.in_proj_b.weight",
                "linear_attn.in_proj_qkv.weight",
                "linear_attn.in_proj_z.weight",
                "linear_attn.norm.weight",
                "linear_attn.out_proj.weight",
            ]
        };
        names.extend(attn.iter().map(|t| format!("{p}.{t}")));
        for t in [
            "input_layernorm.weight",
            "post_attention_layernorm.weight",
            "mlp.gate.weight",
            "mlp.shared_expert.gate_proj.weight",
            "mlp.shared_expert.up_proj.weight",
            "mlp.shared_expert.down_proj.weight",
            "mlp.shared_expert_gate.weight",
        ] {
            names.push(format!("{p}.{t}"));
        }
        for e in 0..128 {
            for proj in ["gate_proj", "up_proj", "down_proj"] {
                names.push(format!("{p}.mlp.experts.{e}.{proj}.weight"));
            }
        }
    }
    if with_mtp {
        for t in [
            "mtp.fc.weight",
            "mtp.pre_fc_norm_embedding.weight",
            "mtp.pre_fc_norm_hidden.weight",
            "mtp.norm.weight",
            "mtp.layers.0.self_attn.q_proj.weight",
            "mtp.layers.0.mlp.gate.weight",
        ] {
            names.push(t.to_string());
        }
    }
    let shards = 7;
    let per = names.len().div_ceil(shards);
    let weight_map: serde_json::Map<String, serde_json::Value> = names
        .into_iter()
        .enumerate()
        .map(|(n, name)| {
            let shard = format!("model-{:05}-of-{shards:05}.safetensors", n / per + 1);
            (name, serde_json::Value::String(shard))
        })
        .collect();
    let index =
        serde_json::json!({"metadata": {"total_size": 37087995136u64}, "weight_map": weight_map});
    std::fs::write(dir.join("model.safetensors.index.json"), index.to_string()).unwrap();
}

/// `check` over the target configs with nothing serving them: not drafters (no `no-authority`
/// warning per target checkout), each the info `mtp-not-served` at its config; the drafter
/// beside them is still checked (issue 40: before, they were listed as skipped).
#[test]
fn check_reports_a_target_nothing_serves_with_mtp() {
    let mut args = vec!["check"];
    args.extend(TARGETS);
    args.extend([
        "tests/fixtures/real-configs/sgl-project__SpecForge-qwen3.6-27b-dflash",
        "--format",
        "json",
    ]);
    let (code, out, err) = run(&args);
    assert!(code == 0 || code == 1, "{err}");
    let v = json(&out, &err);
    let unserved: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "mtp-not-served" && d["severity"] == "info")
        .map(|d| d["file"].as_str().unwrap())
        .collect();
    for dir in TARGETS {
        assert!(
            unserved.contains(&format!("{dir}/config.json").as_str()),
            "{dir} not reported: {unserved:?}"
        );
    }
    // The drafter beside them is still checked.
    assert_eq!(v["drafters"].as_array().unwrap().len(), 1, "{out}");
}

/// SGLang: an EAGLE-3 (MHA) draft beside an MLA target (DeepSeek-V3's architecture) runs the
/// target's `--attention-backend` unless it is given its own (sglang#23490).
#[test]
fn sglang_draft_on_an_mla_backend_needs_its_own() {
    let sglang = |extra: &[&str]| {
        let mut args = vec![
            "--speculative-algorithm",
            "EAGLE3",
            "--speculative-draft-model-path",
            "tests/launch/models/eagle3-qwen3-8b",
        ];
        args.extend_from_slice(extra);
        codes(&sglang_launch(TARGETS[0], &chain("3", "4", &args)).1)
    };
    let inherited = (
        "draft-attention-backend-inherited".to_string(),
        "error".to_string(),
    );
    assert!(sglang(&["--attention-backend", "trtllm_mla"]).contains(&inherited));
    let own = sglang(&[
        "--attention-backend",
        "trtllm_mla",
        "--speculative-draft-attention-backend",
        "trtllm_mha",
    ]);
    assert!(!own.contains(&inherited), "{own:?}");
    // No backend given: SGLang picks one by platform; nothing said.
    assert!(!sglang(&[]).contains(&inherited));
}

/// SGLang: EAGLE (or NEXTN) on an EAGLE-3 head is an error (accept length exactly 1.0,
/// sglang#21272); EAGLE3 is what it expects.
#[test]
fn sglang_eagle_on_an_eagle3_head_collapses() {
    let run_with = |algorithm: &str| {
        let flags = [
            "--speculative-algorithm",
            algorithm,
            "--speculative-draft-model-path",
            "tests/launch/models/eagle3-qwen3-8b",
        ];
        codes(&sglang_launch("tests/lint/targets/Qwen3-8B", &flags).1)
    };
    let collapse = ("speculative-config-method".to_string(), "error".to_string());
    assert!(run_with("EAGLE").contains(&collapse));
    assert!(run_with("NEXTN").contains(&collapse));
    assert!(!run_with("EAGLE3")
        .iter()
        .any(|(c, _)| c == "speculative-config-method"));
}

/// Issue 42: a DeepSeek-V4 checkpoint whose config carries no DSpark key has a classic MTP
/// layer (the base V4-Flash shape) and serves as `mtp`; the same config with `dspark_block_size`
/// is a DSpark checkpoint vLLM's MTP loader dies on (vllm#52111), at every release read.
#[test]
fn a_deepseek_v4_with_a_classic_mtp_layer_serves_as_mtp() {
    let spec = r#"{"method": "mtp", "num_speculative_tokens": 1}"#;
    for engine in ["vllm", "vllm@0.28", "vllm@0.34"] {
        let (_, v) = lint_with("tests/lint/cases/mtp-target-v4", engine, spec);
        assert!(
            !codes(&v).iter().any(|(c, _)| c == "mtp-dspark-stages"),
            "{engine}: {v}"
        );
        let (code, v) = lint_with("tests/lint/cases/dspark-embedded-block-only", engine, spec);
        assert_eq!(code, 1, "{engine}: {v}");
        assert!(
            codes(&v).contains(&("mtp-dspark-stages".into(), "error".into())),
            "{engine}: {v}"
        );
    }
}
