//! Platforms built on another engine (issue 43): vllm-ascend and tpu-inference run `vllm serve`
//! with their own proposers and releases. A line is vllm-ascend's when its image
//! (`quay.io/ascend/vllm-ascend:TAG`), `--engine vllm-ascend@X`, the pin file's engine key or an
//! environment variable only it reads (`VLLM_ASCEND_…`) says so; a bare `vllm serve` line stays
//! upstream vLLM and its header says how a platform is named.
//!
//! The cases are its rows read from its wheels: the QuaRot draft rotation (an EAGLE-3 head from
//! 0.16.0rc1, PR 6914; DFlash and DSpark from 0.26.0rc1), the target's lm_head over a DFlash
//! drafter's own (0.19–0.20, issue 11374), and the methods its proposer dispatch accepts. The
//! files are the project's own: tests/lint/targets/Qwen3-8B-QuaRot (a target whose
//! quantization_config marks a rotation) and the drafters under tests/lint/cases.

mod common;

use std::fs;
use std::path::Path;

use common::{codes, finding};
use serde_json::Value;

const QUAROT: &str = "tests/lint/targets/Qwen3-8B-QuaRot";
const EAGLE3: &str = "tests/lint/cases/eagle3-quarot";
const DFLASH: &str = "tests/lint/cases/dflash-quarot";
const ROTATED: &str = "target-quant-rotated";

/// Runs the binary in `cwd` with `args`, offline; (exit code, stdout, stderr).
fn run(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    common::run_in(cwd, args)
}

fn root() -> std::path::PathBuf {
    std::env::current_dir().unwrap()
}

/// `launch --format json FLAGS -- LINE…`, run from the repository root.
fn launch_json(flags: &[&str], line: &[&str]) -> (i32, Value) {
    let mut args = vec!["launch", "--format", "json"];
    args.extend_from_slice(flags);
    args.push("--");
    args.extend_from_slice(line);
    let (code, out, err) = run(&root(), &args);
    let report = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, report)
}

fn severity_of(report: &Value, code: &str) -> Option<String> {
    codes(report)
        .into_iter()
        .find(|(c, _)| c == code)
        .map(|(_, s)| s)
}

/// `vllm serve QUAROT --speculative-config SPEC`, nothing around it.
fn bare_line(spec: &str) -> [&str; 5] {
    ["vllm", "serve", QUAROT, "--speculative-config", spec]
}

fn spec(method: &str, drafter: &str) -> String {
    format!(r#"{{"method": "{method}", "model": "{drafter}", "num_speculative_tokens": 3}}"#)
}

/// `lint DRAFTER --target QUAROT --engine ENGINE --format json`: the severity of `code`.
fn lint_at(drafter: &str, engine: &str, code: &str) -> Option<String> {
    let (_, out, err) = run(
        &root(),
        &[
            "lint", drafter, "--target", QUAROT, "--engine", engine, "--format", "json",
        ],
    );
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    severity_of(&report, code)
}

#[test]
fn the_image_names_the_platform_and_its_release_decides_the_rotation() {
    let eagle = spec("eagle3", EAGLE3);
    let line = |image: &'static str| {
        [
            "docker",
            "run",
            image,
            "vllm",
            "serve",
            QUAROT,
            "--speculative-config",
        ]
    };
    // Before PR 6914 (0.15.0rc1) the EAGLE-3 draft fc is not rotated: acceptance 1.07 vs 3.09.
    let mut words = line("quay.io/ascend/vllm-ascend:v0.15.0rc1").to_vec();
    words.push(&eagle);
    let (code, report) = launch_json(&[], &words);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(severity_of(&report, ROTATED).as_deref(), Some("error"));
    assert_eq!(
        report["assumed"],
        serde_json::json!({"engine": "vllm-ascend", "version": "0.15.0rc1",
            "from": "image quay.io/ascend/vllm-ascend:v0.15.0rc1"})
    );
    // From 0.16.0rc1 it rotates the fc at load: nothing to say. An image variant's suffix
    // (`-a3`) still names the release.
    let mut words = line("quay.io/ascend/vllm-ascend:v0.16.0rc1-a3").to_vec();
    words.push(&eagle);
    let (code, report) = launch_json(&[], &words);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(severity_of(&report, ROTATED), None, "{report:#}");
    assert_eq!(report["assumed"]["version"], "0.16.0rc1");

    // A floating tag names the platform, not its release: the window, with the releases named.
    let mut words = line("quay.io/ascend/vllm-ascend:latest").to_vec();
    words.push(&eagle);
    let (code, report) = launch_json(&[], &words);
    assert_eq!(code, 1, "{report:#}");
    let releases = finding(&report, ROTATED)["releases"].as_str().unwrap();
    for part in [
        "error on vLLM Ascend 0.13–0.15",
        "not reported on 0.16–0.26",
    ] {
        assert!(releases.contains(part), "{part}: {releases}");
    }
}

#[test]
fn a_bare_line_stays_upstream_vllm_and_says_how_a_platform_is_named() {
    let eagle = spec("eagle3", EAGLE3);
    let words = bare_line(&eagle);
    // Upstream vLLM does not rotate the draft fc at any release (its PR 36225 is open).
    let (code, report) = launch_json(&[], &words);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(severity_of(&report, ROTATED).as_deref(), Some("error"));
    assert_eq!(report["assumed"]["engine"], "vllm");
    let (_, out, _) = run(&root(), &[&["launch", "--"][..], &words[..]].concat());
    assert!(
        out.contains(
            "upstream vLLM, not vllm-ascend or tpu-inference (named by an image, --engine vllm-ascend@X"
        ),
        "{out}"
    );
    // The same line pinned to upstream vLLM: as before, an error.
    let (code, report) = launch_json(&["--engine", "vllm@0.34"], &words);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(severity_of(&report, ROTATED).as_deref(), Some("error"));
}

#[test]
fn the_flag_the_environment_and_the_pin_file_name_the_platform() {
    let eagle = spec("eagle3", EAGLE3);
    let words = bare_line(&eagle);
    let (code, report) = launch_json(&["--engine", "vllm-ascend@0.26.0rc1"], &words);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(
        report["assumed"],
        serde_json::json!({"engine": "vllm-ascend", "version": "0.26.0rc1", "from": "--engine"})
    );
    let (code, report) = launch_json(&["--engine", "vllm-ascend@0.13.0"], &words);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(severity_of(&report, ROTATED).as_deref(), Some("error"));
    // The header says the vLLM release it pins and that it is older than vLLM's reads.
    let (_, out, _) = run(
        &root(),
        &[
            &["launch", "--engine", "vllm-ascend@0.18.0", "--"][..],
            &words[..],
        ]
        .concat(),
    );
    assert!(
        out.contains("vllm-ascend 0.18.0 (vllm serve; --engine); vLLM 0.18 (the release it pins"),
        "{out}"
    );

    // An environment variable only vllm-ascend reads names it (release not known).
    let env_line = [&["VLLM_ASCEND_ENABLE_FLASHCOMM=1"][..], &words[..]].concat();
    let (code, report) = launch_json(&[], &env_line);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["assumed"]["engine"], "vllm-ascend");
    assert_eq!(
        report["assumed"]["from"],
        "environment VLLM_ASCEND_ENABLE_FLASHCOMM"
    );

    // The pin file's engine key: vllm-ascend alone names it; with vLLM's own entry beside it,
    // a bare line is vLLM's.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let line = format!(
        "vllm serve {} --speculative-config '{eagle}'\n",
        root().join(QUAROT).display()
    );
    let line = line.replace(EAGLE3, &root().join(EAGLE3).display().to_string());
    fs::write(d.join("serve.sh"), line).unwrap();
    for (engines, exit, header) in [
        (
            r#"["vllm-ascend@0.16.0rc1"]"#,
            0,
            "vllm-ascend 0.16.0rc1 (vllm serve; dflash-check.toml)",
        ),
        (
            r#"["vllm-ascend@0.16.0rc1", "vllm@0.34"]"#,
            1,
            "vllm 0.34 (vllm serve; dflash-check.toml)",
        ),
    ] {
        let pins = format!("version = 1\nengine = {engines}\n");
        fs::write(d.join("dflash-check.toml"), pins).unwrap();
        let (code, out, err) = run(d, &["launch", "--file", "serve.sh"]);
        assert_eq!(code, exit, "{engines}: {out}{err}");
        assert!(out.contains(header), "{engines}: {out}");
    }
}

#[test]
fn a_compose_service_or_a_manifest_on_a_vllm_ascend_image_is_vllm_ascend() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let compose = |tag: &str| {
        format!(
            "services:\n  npu:\n    image: quay.io/ascend/vllm-ascend:{tag}\n    command: >\n      \
             vllm serve {} --speculative-config '{}'\n",
            root().join(QUAROT).display(),
            spec("eagle3", &root().join(EAGLE3).display().to_string()),
        )
    };
    fs::write(d.join("compose.yaml"), compose("v0.13.0")).unwrap();
    let (code, out, err) = run(d, &["launch", "--file", "compose.yaml"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("vllm-ascend 0.13.0 (vllm serve; image quay.io/ascend/vllm-ascend:v0.13.0)"),
        "{out}"
    );
    assert!(out.contains(&format!("error[{ROTATED}]")), "{out}");

    fs::write(d.join("compose.yaml"), compose("v0.23.0")).unwrap();
    let (code, out, err) = run(d, &["launch", "--file", "compose.yaml"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains(ROTATED), "{out}");
    // `check` finds the compose file and judges the service at the image's release.
    let (code, out, err) = run(d, &["check", ".", "--format", "json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(r#""engine": "vllm-ascend""#), "{out}");
    assert!(!out.contains(ROTATED), "{out}");
    fs::write(d.join("compose.yaml"), compose("v0.13.0")).unwrap();
    let (code, out, err) = run(d, &["check", "."]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains(&format!("error[{ROTATED}]")), "{out}");
    assert!(out.contains("vLLM Ascend serving"), "{out}");

    // `check` finds a Kubernetes Deployment on the image and judges it at the image's release.
    let manifest = |tag: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: npu\nspec:\n  template:\n    spec:\n      \
             containers:\n        - name: vllm\n          image: quay.io/ascend/vllm-ascend:{tag}\n          \
             command: [\"vllm\", \"serve\"]\n          args:\n            - {}\n            - --speculative-config\n            \
             - '{}'\n",
            root().join(QUAROT).display(),
            spec("eagle3", &root().join(EAGLE3).display().to_string()),
        )
    };
    fs::remove_file(d.join("compose.yaml")).unwrap();
    fs::write(d.join("npu.yaml"), manifest("v0.15.0rc1")).unwrap();
    let (code, out, err) = run(d, &["check", "."]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains(ROTATED), "{out}");
    fs::write(d.join("npu.yaml"), manifest("v0.16.0rc1")).unwrap();
    let (code, out, err) = run(d, &["check", "."]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains(ROTATED), "{out}");
}

#[test]
fn dflash_and_dspark_are_rotated_from_0_26() {
    assert_eq!(
        lint_at(DFLASH, "vllm-ascend@0.25.1rc1", ROTATED).as_deref(),
        Some("error")
    );
    assert_eq!(lint_at(DFLASH, "vllm-ascend@0.26.0rc1", ROTATED), None);
    // Upstream engines rotate no DFlash drafter.
    assert_eq!(
        lint_at(DFLASH, "vllm@0.34", ROTATED).as_deref(),
        Some("error")
    );
    assert_eq!(
        lint_at(DFLASH, "sglang@0.5.23", ROTATED).as_deref(),
        Some("error")
    );
    // DSpark: 0.25.1rc1 rotates only the Qwen3DSparkModel it registers (a warning: which class
    // loads a DSparkDraftModel export is not read there); 0.26.0rc1 every dspark drafter.
    let dspark = "tests/launch/models/dspark-qwen3-b7";
    assert_eq!(
        lint_at(dspark, "vllm-ascend@0.24.0rc1", ROTATED).as_deref(),
        Some("error")
    );
    assert_eq!(
        lint_at(dspark, "vllm-ascend@0.25.1rc1", ROTATED).as_deref(),
        Some("warning")
    );
    assert_eq!(lint_at(dspark, "vllm-ascend@0.26.0rc1", ROTATED), None);
    // EAGLE-3 through the lint command: 0.15 no, 0.16 yes.
    assert_eq!(
        lint_at(EAGLE3, "vllm-ascend@0.15.0rc1", ROTATED).as_deref(),
        Some("error")
    );
    assert_eq!(lint_at(EAGLE3, "vllm-ascend@0.16.0rc1", ROTATED), None);
}

/// A DFlash drafter with its own 32000-row head (`draft_vocab_size`): vllm-ascend 0.20
/// replaced it with the target's (acceptance 25% → 1.7%, issue 11374); 0.21.0rc1 keeps it.
#[test]
fn a_dflash_drafters_own_head_is_overwritten_on_0_20_only() {
    let dir = tempfile::tempdir().unwrap();
    let drafter = dir.path().join("dflash-reduced-vocab");
    fs::create_dir(&drafter).unwrap();
    let config: Value =
        serde_json::from_str(&fs::read_to_string(format!("{DFLASH}/config.json")).unwrap())
            .unwrap();
    let mut config = config.as_object().unwrap().clone();
    config.insert("draft_vocab_size".into(), 32000.into());
    fs::write(
        drafter.join("config.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
    let drafter = drafter.display().to_string();
    let shared = "draft-lm-head-shared";
    assert_eq!(
        lint_at(&drafter, "vllm-ascend@0.20.2rc1", shared).as_deref(),
        Some("error")
    );
    assert_eq!(lint_at(&drafter, "vllm-ascend@0.21.0rc1", shared), None);
    // Before 0.19 it has no DFlash proposer (engine-unsupported's matter): vLLM's row, nothing.
    assert_eq!(lint_at(&drafter, "vllm-ascend@0.18.0", shared), None);
    // Upstream vLLM keeps a DFlash drafter's own head.
    assert_eq!(lint_at(&drafter, "vllm@0.34", shared), None);
    assert_eq!(lint_at(&drafter, "vllm", shared), None);
}

#[test]
fn its_own_proposer_dispatch_decides_the_methods() {
    let dflash = spec("dflash", DFLASH);
    let words = |image: &'static str| {
        vec![
            "docker",
            "run",
            image,
            "vllm",
            "serve",
            "tests/lint/targets/Qwen3-8B",
            "--speculative-config",
        ]
    };
    // 0.18.0 has no DFlash proposer; 0.20.2rc1 has.
    let mut line = words("quay.io/ascend/vllm-ascend:v0.18.0");
    line.push(&dflash);
    let (code, report) = launch_json(&[], &line);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        severity_of(&report, "engine-unsupported").as_deref(),
        Some("error")
    );
    let mut line = words("quay.io/ascend/vllm-ascend:v0.20.2rc1");
    line.push(&dflash);
    let (_, report) = launch_json(&[], &line);
    assert_eq!(
        severity_of(&report, "engine-unsupported"),
        None,
        "{report:#}"
    );
}

/// tpu-inference (the `vllm/vllm-tpu` image, `--engine tpu-inference@X`, its own variables): an
/// EAGLE-3 head with `use_aux_hidden_state: false` is served by upstream vLLM (which reads the
/// key) and refused by tpu-inference at every release read, whose EAGLE-3 model always builds
/// fc for three hidden states (tpu-inference#2841); its proposer dispatch serves DFlash from
/// 0.25 and never a draft model. The head is tests/lint/cases/eagle-aux-unused.
#[test]
fn tpu_inference_is_named_by_its_image_and_refuses_an_aux_off_eagle3_head() {
    const TARGET: &str = "tests/lint/targets/Qwen3-8B";
    const AUX_OFF: &str = "tests/lint/cases/eagle-aux-unused";
    let head = spec("eagle3", AUX_OFF);
    let upstream = ["vllm", "serve", TARGET, "--speculative-config", &head];
    let (code, report) = launch_json(&["--engine", "vllm@0.31"], &upstream);
    assert_eq!(
        severity_of(&report, "engine-unsupported"),
        None,
        "{report:#}"
    );
    assert_eq!(code, 0, "{report:#}");

    let mut on_tpu = vec!["docker", "run", "vllm/vllm-tpu:v0.31.0"];
    on_tpu.extend_from_slice(&upstream);
    let (code, report) = launch_json(&[], &on_tpu);
    assert_eq!(report["assumed"]["engine"], "tpu-inference", "{report:#}");
    assert_eq!(
        severity_of(&report, "engine-unsupported").as_deref(),
        Some("error"),
        "{report:#}"
    );
    let f = finding(&report, "engine-unsupported");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("use_aux_hidden_state"),
        "{f:#}"
    );
    assert_eq!(code, 1);

    // Its own variables name it (release not known: its default window).
    let mut with_env = vec!["env", "SKIP_JAX_PRECOMPILE=1"];
    with_env.extend_from_slice(&upstream);
    let (_, report) = launch_json(&[], &with_env);
    assert_eq!(report["assumed"]["engine"], "tpu-inference", "{report:#}");
    assert_eq!(
        severity_of(&report, "engine-unsupported").as_deref(),
        Some("error")
    );

    // The methods its dispatch builds: DFlash from 0.25, a draft model never.
    let dflash = spec("dflash", "tests/launch/models/dflash2-qwen3-8b");
    let line = ["vllm", "serve", TARGET, "--speculative-config", &dflash];
    let method_refused = |engine: &str| {
        let (_, report) = launch_json(&["--engine", engine], &line);
        report["diagnostics"].as_array().unwrap().iter().any(|d| {
            d["code"] == "engine-unsupported"
                && d["severity"] == "error"
                && d["message"]
                    .as_str()
                    .unwrap()
                    .contains("speculative method \"dflash\"")
        })
    };
    assert!(method_refused("tpu-inference@0.24"));
    assert!(!method_refused("tpu-inference@0.25"));
    let draft = spec("draft_model", "tests/launch/models/qwen3-0.6b-draft-lm");
    let line = ["vllm", "serve", TARGET, "--speculative-config", &draft];
    let (_, report) = launch_json(&["--engine", "tpu-inference@0.32"], &line);
    assert!(
        finding(&report, "engine-unsupported")["message"]
            .as_str()
            .unwrap()
            .contains("\"draft_model\""),
        "{report:#}"
    );
}
