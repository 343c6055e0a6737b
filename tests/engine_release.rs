//! The engine release as an input, end to end (issue 39's cases): a line is judged at the
//! release that serves it — `--engine ENGINE@X`, the image tag of a compose file or a
//! Kubernetes Deployment, the pin file's `engine` key (one release per engine) — and, when none
//! is stated, across the engine's default window at the worst verdict with the releases named.
//!
//! The case: an MTP target stored under a folder whose name holds `dflash`, served with
//! `method: mtp` and no draft model. vLLM up to 0.33 replaces the method by the one the name says
//! and loads the target's head with the DFlash proposer (method-overridden-by-name, an error);
//! 0.34 keeps the written method (info). The target is the project's own Qwen3.5-27B MTP config
//! (tests/fixtures/mtp-targets/qwen3.5-27b), copied under such a name.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::{codes, finding};
use serde_json::Value;

const MTP_SPEC: &str = r#"{"method": "mtp", "num_speculative_tokens": 1}"#;

/// A temp dir holding the MTP target under a `dflash` name; returns (dir, target path).
fn dflash_named_target() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("Qwen3.5-27B-dflash-ready");
    fs::create_dir(&target).unwrap();
    fs::copy(
        "tests/fixtures/mtp-targets/qwen3.5-27b/config.json",
        target.join("config.json"),
    )
    .unwrap();
    let path = target.display().to_string();
    (dir, path)
}

/// Runs the binary in `cwd` with `args`, offline; (exit code, stdout, stderr).
fn run(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(args)
        .current_dir(cwd)
        .env("HF_HUB_OFFLINE", "1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `launch --format json FLAGS -- vllm serve TARGET --speculative-config SPEC`.
fn launch_json(cwd: &Path, flags: &[&str], target: &str, spec: &str) -> (i32, Value) {
    let mut args = vec!["launch", "--format", "json"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--", "vllm", "serve", target, "--speculative-config", spec]);
    let (code, out, err) = run(cwd, &args);
    let report = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, report)
}

fn severity_of(report: &Value, code: &str) -> Option<String> {
    codes(report)
        .into_iter()
        .find(|(c, _)| c == code)
        .map(|(_, s)| s)
}

const OVERRIDDEN: &str = "method-overridden-by-name";

#[test]
fn the_release_flag_decides_and_an_unknown_release_is_judged_across_the_window() {
    let (dir, target) = dflash_named_target();
    let d = dir.path();

    let (code, report) = launch_json(d, &["--engine", "vllm@0.30"], &target, MTP_SPEC);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(severity_of(&report, OVERRIDDEN).as_deref(), Some("error"));
    assert_eq!(
        report["assumed"],
        serde_json::json!({"engine": "vllm", "version": "0.30", "from": "--engine"})
    );

    let (code, report) = launch_json(d, &["--engine", "vllm@0.34"], &target, MTP_SPEC);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(severity_of(&report, OVERRIDDEN).as_deref(), Some("info"));
    // On a release that keeps the method the message says so.
    let message = finding(&report, OVERRIDDEN)["message"].as_str().unwrap();
    assert!(message.contains("is kept by this release"), "{message}");

    // No release stated: the worst verdict of the window, the releases and the way to pin named.
    let (code, report) = launch_json(d, &[], &target, MTP_SPEC);
    assert_eq!(code, 1, "{report:#}");
    let releases = finding(&report, OVERRIDDEN)["releases"].as_str().unwrap();
    for part in [
        "error on vLLM 0.28–0.33",
        "info on 0.34",
        "--engine vllm@0.34",
    ] {
        assert!(releases.contains(part), "{part}: {releases}");
    }

    // A release newer than those read is judged as the newest, and the header says so.
    let (_, out, _) = run(
        d,
        &[
            "launch",
            "--engine",
            "vllm@0.35",
            "--",
            "vllm",
            "serve",
            &target,
            "--speculative-config",
            MTP_SPEC,
        ],
    );
    assert!(out.contains("newer than the releases read"), "{out}");
    assert!(out.contains("judged as 0.34"), "{out}");
}

#[test]
fn a_compose_files_image_tag_is_the_release() {
    let (dir, target) = dflash_named_target();
    let d = dir.path();
    let compose = |tag: &str| {
        format!(
            "services:\n  vllm:\n    image: vllm/vllm-openai:{tag}\n    command: >\n      \
             {target} --speculative-config '{MTP_SPEC}'\n"
        )
    };
    fs::write(d.join("compose.yaml"), compose("v0.28.0")).unwrap();
    let (code, out, err) = run(d, &["launch", "--file", "compose.yaml"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("vllm 0.28.0 (vllm/vllm-openai image's entrypoint (vLLM); image vllm/vllm-openai:v0.28.0)"),
        "{out}"
    );
    assert!(out.contains(&format!("error[{OVERRIDDEN}]")), "{out}");

    fs::write(d.join("compose.yaml"), compose("v0.34.0")).unwrap();
    let (code, out, err) = run(d, &["launch", "--file", "compose.yaml"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("info[{OVERRIDDEN}]")), "{out}");

    // The flag states the release over the image.
    let (code, out, _) = run(
        d,
        &["launch", "--engine", "vllm@0.30", "--file", "compose.yaml"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("vllm 0.30 (vllm/vllm-openai image's entrypoint (vLLM); --engine)"),
        "{out}"
    );
}

/// A Kubernetes Deployment running the line, `check`ed as a CI gate would.
fn deployment(target: &str, image: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: qwen\nspec:\n  template:\n    spec:\n      \
         containers:\n        - name: vllm\n          image: {image}\n          args:\n            - {target}\n            - --speculative-config\n            - '{MTP_SPEC}'\n"
    )
}

fn check_json(cwd: &Path, flags: &[&str]) -> (i32, Value) {
    let mut args = vec!["check", "--format", "json"];
    args.extend_from_slice(flags);
    args.push("deploy");
    let (code, out, err) = run(cwd, &args);
    let report = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, report)
}

/// Every finding of a `check` report, as (code, severity).
fn check_codes(report: &Value) -> Vec<(String, String)> {
    report["drafters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["findings"].as_array().unwrap().iter())
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn check_judges_a_manifest_at_its_image_the_flag_and_the_pin_file() {
    let (dir, target) = dflash_named_target();
    let d = dir.path();
    fs::create_dir(d.join("deploy")).unwrap();
    let manifest = d.join("deploy/qwen.yaml");
    let has = |report: &Value, severity: &str| {
        check_codes(report).contains(&(OVERRIDDEN.to_string(), severity.to_string()))
    };

    fs::write(&manifest, deployment(&target, "vllm/vllm-openai:v0.28.0")).unwrap();
    let (code, report) = check_json(d, &[]);
    assert_eq!(code, 1, "{report:#}");
    assert!(has(&report, "error"), "{report:#}");
    assert_eq!(
        report["drafters"][0]["assumed"],
        serde_json::json!({"engine": "vllm", "version": "0.28.0", "from": "image vllm/vllm-openai:v0.28.0"})
    );
    // --engine applies to the lines of its engine, over the image.
    let (code, report) = check_json(d, &["--engine", "vllm@0.34"]);
    assert_eq!(code, 0, "{report:#}");
    assert!(has(&report, "info"), "{report:#}");
    // --engine for another engine leaves this line to its image.
    let (code, _) = check_json(d, &["--engine", "sglang@0.5.23"]);
    assert_eq!(code, 1);

    // An image whose tag names no release: the pin file's entry for the engine decides.
    fs::write(&manifest, deployment(&target, "vllm/vllm-openai:latest")).unwrap();
    fs::write(
        d.join("dflash-check.toml"),
        "version = 1\nengine = [\"sglang@0.5.23\", \"vllm@0.34\"]\n",
    )
    .unwrap();
    let (code, report) = check_json(d, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert!(has(&report, "info"), "{report:#}");
    fs::write(
        d.join("dflash-check.toml"),
        "version = 1\nengine = [\"sglang@0.5.23\", \"vllm@0.30\"]\n",
    )
    .unwrap();
    let (code, report) = check_json(d, &[]);
    assert_eq!(code, 1, "{report:#}");
    assert!(has(&report, "error"), "{report:#}");

    // One release per engine: an engine named twice is bad input, said where.
    fs::write(
        d.join("dflash-check.toml"),
        "version = 1\nengine = [\"vllm@0.30\", \"vllm@0.34\"]\n",
    )
    .unwrap();
    let (code, out, err) = run(d, &["check", "deploy"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("dflash-check.toml") && err.contains("vllm is named twice"),
        "{err}"
    );
}

#[test]
fn a_launch_line_sets_what_lint_flags_set() {
    // draft-sample-probabilistic: a warning up to 0.28, nothing from 0.29 — fired from the line.
    let (dir, _) = dflash_named_target();
    let spec = r#"{"method": "eagle3", "model": "tests/launch/models/eagle3-qwen3-8b", "num_speculative_tokens": 3, "draft_sample_method": "probabilistic"}"#;
    let root = std::env::current_dir().unwrap();
    let run_at = |flags: &[&str]| {
        let (_, report) = launch_json(&root, flags, "tests/lint/targets/Qwen3-8B", spec);
        severity_of(&report, "draft-sample-probabilistic")
    };
    assert_eq!(
        run_at(&["--engine", "vllm@0.28"]).as_deref(),
        Some("warning")
    );
    assert_eq!(run_at(&["--engine", "vllm@0.29"]), None);
    assert_eq!(run_at(&[]).as_deref(), Some("warning"));
    drop(dir);
}

/// `launch --format json --engine vllm@X -- vllm serve TARGET SWITCHES --speculative-config SPEC`:
/// whether `engine-unsupported` fires, and its message.
fn async_verdict(release: &str, switches: &[&str], spec: &str) -> (i32, Option<String>) {
    let target = "tests/fixtures/mtp-targets/qwen3.5-27b";
    let mut args = vec!["launch", "--format", "json"];
    if !release.is_empty() {
        args.extend_from_slice(&["--engine", release]);
    }
    args.extend_from_slice(&["--", "vllm", "serve", target]);
    args.extend_from_slice(switches);
    args.extend_from_slice(&["--speculative-config", spec]);
    let (code, out, err) = run(Path::new(env!("CARGO_MANIFEST_DIR")), &args);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    let message = codes(&report)
        .iter()
        .any(|(c, _)| c == "engine-unsupported")
        .then(|| finding(&report, "engine-unsupported")["message"].to_string());
    (code, message)
}

#[test]
fn async_scheduling_asked_for_is_judged_by_the_release_that_serves_the_line() {
    const ON: &[&str] = &["--async-scheduling"];
    let ngram = r#"{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}"#;
    // Up to 0.32 vLLM refuses an explicit --async-scheduling with ngram; 0.33's V2 runner runs it.
    let (code, message) = async_verdict("vllm@0.30", ON, ngram);
    assert_eq!(code, 1);
    let message = message.expect("engine-unsupported at 0.30");
    assert!(message.contains("--async-scheduling"), "{message}");
    assert!(message.contains("0.33 and later"), "{message}");
    assert_eq!(async_verdict("vllm@0.33", ON, ngram).1, None);
    // Release not known: the window's refusing releases named.
    let (code, message) = async_verdict("", ON, ngram);
    assert_eq!(code, 1);
    assert!(message.unwrap().contains("0.28–0.32"));
    // Not asked for (or undone by a later switch): vLLM turns it off itself.
    assert_eq!(async_verdict("vllm@0.30", &[], ngram).1, None);
    let undone = ["--async-scheduling", "--no-async-scheduling"];
    assert_eq!(async_verdict("vllm@0.30", &undone, ngram).1, None);
    // EAGLE's kind (here the target's own MTP head) is scheduled asynchronously everywhere.
    let mtp = r#"{"method": "mtp", "num_speculative_tokens": 1}"#;
    assert_eq!(async_verdict("vllm@0.30", ON, mtp).1, None);
    assert_eq!(async_verdict("", ON, mtp).1, None);
    // suffix: refused up to 0.33 (its V1 fallback), accepted on 0.34.
    let suffix = r#"{"method": "suffix", "num_speculative_tokens": 8}"#;
    assert!(async_verdict("vllm@0.33", ON, suffix).1.is_some());
    assert_eq!(async_verdict("vllm@0.34", ON, suffix).1, None);
    // An unpadded drafter batch: refused up to 0.32 whatever the method, not on 0.33's V2 runner.
    let unpadded =
        r#"{"method": "mtp", "num_speculative_tokens": 1, "disable_padded_drafter_batch": true}"#;
    let message = async_verdict("vllm@0.32", ON, unpadded)
        .1
        .expect("0.32 refuses it");
    assert!(
        message.contains("disable_padded_drafter_batch"),
        "{message}"
    );
    assert_eq!(async_verdict("vllm@0.33", ON, unpadded).1, None);
}

#[test]
fn async_scheduling_in_a_compose_file_is_judged_at_its_image() {
    let dir = tempfile::tempdir().unwrap();
    let compose = |tag: &str| {
        format!(
            "services:\n  vllm:\n    image: vllm/vllm-openai:{tag}\n    command: >\n      \
             Qwen/Qwen3-8B --async-scheduling --speculative-config \
             '{{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"prompt_lookup_max\": 4}}'\n"
        )
    };
    fs::write(dir.path().join("compose.yaml"), compose("v0.29.0")).unwrap();
    let (code, out, err) = run(dir.path(), &["launch", "--file", "compose.yaml"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("error[engine-unsupported]"), "{out}");
    fs::write(dir.path().join("compose.yaml"), compose("v0.34.0")).unwrap();
    let (_, out, err) = run(dir.path(), &["launch", "--file", "compose.yaml"]);
    assert!(!out.contains("engine-unsupported"), "{out}{err}");
}

/// `launch --engine vllm@X -- VLLM_USE_V2_MODEL_RUNNER=VALUE vllm serve TARGET --speculative-config
/// SPEC`: whether `engine-unsupported` fires.
fn v2_runner_refused(release: &str, value: &str, spec: &str) -> bool {
    let target = "tests/fixtures/mtp-targets/qwen3.5-27b";
    let var = format!("VLLM_USE_V2_MODEL_RUNNER={value}");
    let mut args = vec!["launch", "--format", "json"];
    if !release.is_empty() {
        args.extend_from_slice(&["--engine", release]);
    }
    args.extend_from_slice(&["--", &var, "vllm", "serve", target]);
    args.extend_from_slice(&["--speculative-config", spec]);
    let (_, out, err) = run(Path::new(env!("CARGO_MANIFEST_DIR")), &args);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    codes(&report)
        .iter()
        .any(|(c, _)| c == "engine-unsupported")
}

#[test]
fn the_v2_runner_asked_for_is_judged_by_the_methods_each_release_runs_on_it() {
    let ngram = r#"{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}"#;
    let mtp = r#"{"method": "mtp", "num_speculative_tokens": 1}"#;
    let suffix = r#"{"method": "suffix", "num_speculative_tokens": 8}"#;
    // ngram runs on V2 from 0.32; asked for before, vLLM refuses to start.
    assert!(v2_runner_refused("vllm@0.30", "1", ngram));
    assert!(!v2_runner_refused("vllm@0.32", "1", ngram));
    assert!(
        v2_runner_refused("", "1", ngram),
        "the window holds 0.28-0.31"
    );
    // Not asked for (0 is the V1 runner; vLLM then runs ngram there).
    assert!(!v2_runner_refused("vllm@0.30", "0", ngram));
    // MTP runs on V2 at every release; suffix only from 0.34, the first without V1.
    assert!(!v2_runner_refused("", "1", mtp));
    assert!(v2_runner_refused("vllm@0.33", "1", suffix));
    assert!(!v2_runner_refused("vllm@0.34", "1", suffix));
    // A method vLLM up to 0.33 replaces by the draft's name (draft_model, "dflash" in the name:
    // DFlash, which V2 runs) is method-overridden-by-name's to judge, not refused here.
    let renamed = r#"{"method": "draft_model", "model": "z-lab/Qwen3-8B-DFlash-b16", "num_speculative_tokens": 4}"#;
    assert!(!v2_runner_refused("vllm@0.30", "1", renamed));
}

/// A target directory holding a config of `architectures` (a toy Llama-shaped text model).
fn target_of(dir: &Path, name: &str, architectures: &[&str]) -> String {
    let t = dir.join(name);
    fs::create_dir_all(&t).unwrap();
    let config = serde_json::json!({
        "architectures": architectures,
        "model_type": "llama",
        "hidden_size": 4096,
        "num_hidden_layers": 32,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
    });
    fs::write(t.join("config.json"), config.to_string()).unwrap();
    t.display().to_string()
}

/// Whether `dflash-check ARGS` (a `launch --format json` run) finds `engine-unsupported`.
fn refused(dir: &Path, args: &[&str]) -> bool {
    let (_, out, err) = run(dir, args);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    codes(&report)
        .iter()
        .any(|(c, _)| c == "engine-unsupported")
}

/// A local EAGLE-3 drafter folder (`eagle_config.use_aux_hidden_state` = `aux` when given);
/// returns its path.
fn eagle3_drafter(dir: &Path, name: &str, aux: Option<bool>) -> String {
    let p = dir.join(name);
    fs::create_dir_all(&p).unwrap();
    let mut config = serde_json::json!({
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": 4096,
        "num_hidden_layers": 1,
        "vocab_size": 128256,
        "draft_vocab_size": 32000,
    });
    if let Some(aux) = aux {
        config["eagle_config"] = serde_json::json!({"use_aux_hidden_state": aux});
    }
    fs::write(p.join("config.json"), config.to_string()).unwrap();
    p.display().to_string()
}

/// Whether `launch --engine vllm@0.30 -- vllm serve TARGET FLAGS --speculative-config SPEC`
/// finds `engine-unsupported`.
fn hidden_states_refused(dir: &Path, target: &str, flags: &[&str], spec: &str) -> bool {
    let mut args = vec!["launch", "--format", "json", "--engine", "vllm@0.30", "--"];
    args.extend_from_slice(&["vllm", "serve", target]);
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--speculative-config", spec]);
    refused(dir, &args)
}

#[test]
fn a_target_class_without_the_hidden_state_interface_refuses_a_hidden_state_drafter() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dflash =
        r#"{"method": "dflash", "model": "z-lab/Example-DFlash", "num_speculative_tokens": 8}"#;
    // Gemma3ForCausalLM's vLLM class has no SupportsEagle3: the load raises.
    let gemma3 = target_of(d, "gemma3", &["Gemma3ForCausalLM"]);
    assert!(hidden_states_refused(d, &gemma3, &[], dflash));
    // The transformers backend implements it.
    let backend = ["--model-impl", "transformers"];
    assert!(!hidden_states_refused(d, &gemma3, &backend, dflash));
    // Llama's class has it; an architecture the registry lacks is served by the backend; two
    // architectures are not judged.
    let llama = target_of(d, "llama", &["LlamaForCausalLM"]);
    assert!(!hidden_states_refused(d, &llama, &[], dflash));
    let unknown = target_of(d, "madeup", &["MadeUpForCausalLM"]);
    assert!(!hidden_states_refused(d, &unknown, &[], dflash));
    let two = target_of(d, "two", &["Gemma3ForCausalLM", "LlamaForCausalLM"]);
    assert!(!hidden_states_refused(d, &two, &[], dflash));
    // MTP and EAGLE (1/2) never read the hidden states.
    let mtp = r#"{"method": "mtp", "num_speculative_tokens": 1}"#;
    assert!(!hidden_states_refused(d, &gemma3, &[], mtp));
    // An EAGLE-3 drafter that turns them off is not judged; one that keeps them is refused.
    let eagle3 = |name: &str, aux: Option<bool>| {
        let p = eagle3_drafter(d, name, aux);
        format!(r#"{{"method": "eagle3", "model": "{p}", "num_speculative_tokens": 3}}"#)
    };
    assert!(!hidden_states_refused(
        d,
        &gemma3,
        &[],
        &eagle3("off", Some(false))
    ));
    assert!(hidden_states_refused(d, &gemma3, &[], &eagle3("on", None)));
}

/// Whether `launch --engine RELEASE -- python -m sglang.launch_server --model-path TARGET
/// --speculative-algorithm ALGO --speculative-draft-model-path DRAFT …` finds `engine-unsupported`.
fn sglang_hook_refused(dir: &Path, release: &str, target: &str, algo: &str, draft: &str) -> bool {
    let args = [
        "launch",
        "--format",
        "json",
        "--engine",
        release,
        "--",
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        target,
        "--speculative-algorithm",
        algo,
        "--speculative-draft-model-path",
        draft,
        "--speculative-num-draft-tokens",
        "8",
    ];
    refused(dir, &args)
}

#[test]
fn sglang_needs_the_methods_capture_hook_on_the_target_class() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let gemma3 = target_of(d, "gemma3", &["Gemma3ForCausalLM"]);
    let llama = target_of(d, "llama", &["LlamaForCausalLM"]);
    let glm = target_of(d, "glm", &["Glm4MoeForCausalLM"]);
    let madeup = target_of(d, "madeup", &["MadeUpForCausalLM"]);
    let dflash = "z-lab/Example-DFlash";
    // Gemma3's class has no set_dflash_layers_to_capture at any release read.
    assert!(sglang_hook_refused(
        d,
        "sglang@0.5.20",
        &gemma3,
        "DFLASH",
        dflash
    ));
    assert!(sglang_hook_refused(d, "sglang", &gemma3, "DFLASH", dflash));
    assert!(!sglang_hook_refused(d, "sglang", &llama, "DFLASH", dflash));
    assert!(!sglang_hook_refused(d, "sglang", &madeup, "DFLASH", dflash));
    // An EAGLE-3 drafter on GLM-4.5: SGLang's class has the hook, vLLM's lacks the interface.
    let eagle = eagle3_drafter(d, "glm-eagle3", None);
    assert!(!sglang_hook_refused(d, "sglang", &glm, "EAGLE3", &eagle));
    let spec =
        format!(r#"{{"method": "eagle3", "model": "{eagle}", "num_speculative_tokens": 3}}"#);
    assert!(hidden_states_refused(d, &glm, &[], &spec));
}

/// The severity of `vllm-runner-env-invalid` on `launch --engine RELEASE -- VLLM_USE_V2_MODEL_RUNNER=VALUE
/// vllm serve …` (an MTP line, which no runner rule judges otherwise).
fn runner_env_verdict(release: &str, value: &str) -> Option<String> {
    let var = format!("VLLM_USE_V2_MODEL_RUNNER={value}");
    let args = [
        "launch",
        "--format",
        "json",
        "--engine",
        release,
        "--",
        &var,
        "vllm",
        "serve",
        "tests/fixtures/mtp-targets/qwen3.5-27b",
        "--speculative-config",
        r#"{"method": "mtp", "num_speculative_tokens": 1}"#,
    ];
    let (_, out, err) = run(Path::new(env!("CARGO_MANIFEST_DIR")), &args);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    codes(&report)
        .into_iter()
        .find(|(c, _)| c == "vllm-runner-env-invalid")
        .map(|(_, s)| s)
}

#[test]
fn a_runner_variable_the_release_refuses_is_an_error() {
    let error = Some("error".to_string());
    // Not an integer: vLLM up to 0.33 fails on int(), 0.34 refuses any value but 1.
    assert_eq!(runner_env_verdict("vllm@0.30", "true"), error);
    assert_eq!(runner_env_verdict("vllm@0.34", "true"), error);
    // 0 picks the V1 runner up to 0.33; 0.34 has none and refuses it.
    assert_eq!(runner_env_verdict("vllm@0.30", "0"), None);
    assert_eq!(runner_env_verdict("vllm@0.34", "0"), error);
    assert_eq!(runner_env_verdict("vllm", "0"), error);
    // 1 is fine everywhere.
    assert_eq!(runner_env_verdict("vllm", "1"), None);
}
