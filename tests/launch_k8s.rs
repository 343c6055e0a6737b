//! `dflash-check launch --file` on Kubernetes manifests through the binary: a KServe
//! `LLMInferenceService` in the shape of kserve#5687 checked as the command the controller
//! renders, a kustomize-style Deployment whose models sit on a bucket mount, read from local
//! directories through `--volume`, and the shapes vLLM's production-stack chart renders
//! (written here, not copied: a developer commits no file taken from a public repository). Offline, with an empty Hub
//! cache: a Hub repo the manifest names is reported as unavailable, never fetched. Fixtures and
//! their sources: tests/launch/k8s/SOURCE.txt.

use std::process::Command;

use serde_json::Value;

/// Runs `dflash-check launch --format json ARGS` offline; (exit code, report, stderr).
fn launch(args: &[&str]) -> (i32, Value, String) {
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["launch", "--format", "json", "--cache-dir"])
        .arg(cache.path())
        .args(args)
        .env("HF_HUB_OFFLINE", "1")
        .env_remove("HF_ENDPOINT")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), report, stderr)
}

/// An eagle3 LLMInferenceService: the model URIs become the target and the drafter, the
/// `spec.speculator.config` strings are typed as the controller types them ("6" is the number
/// 6), `spec.parallelism.tensor` is `--tensor-parallel-size`, and a note says how the command
/// was rendered.
#[test]
fn a_kserve_llm_inference_service() {
    let (code, report, err) = launch(&["--file", "tests/launch/k8s/kserve-llmisvc-eagle3.yaml"]);
    assert_eq!(code, 0, "{err}{report:#}");
    let l = &report["launch"];
    assert_eq!(l["entrypoint"], "vllm serve");
    assert_eq!(l["target"], "RedHatAI/Qwen3-32B-FP8-dynamic");
    assert_eq!(l["drafter"], "RedHatAI/Qwen3-32B-speculator.eagle3");
    assert_eq!(l["speculative_config"]["method"], "eagle3");
    assert_eq!(l["speculative_config"]["num_speculative_tokens"], 6);
    assert_eq!(l["speculative_config"]["draft_tensor_parallel_size"], 1);
    let tp = l["flags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "--tensor-parallel-size")
        .unwrap();
    assert_eq!(tp["value"], "2");
    assert!(l["env"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["name"] == "VLLM_USE_V1"));
    // Offline with an empty cache: both repos are named, neither is read.
    assert_eq!(
        report["drafter"]["repo"],
        "RedHatAI/Qwen3-32B-speculator.eagle3"
    );
    let codes = report["diagnostics"].to_string();
    assert!(codes.contains("\"launch-drafter-unavailable\""), "{codes}");
    // draft_tensor_parallel_size 1 under tensor parallel 2: the engine claim fires on the CRD.
    assert!(codes.contains("\"launch-draft-tp-ignored\""), "{codes}");
    let notes = report["notes"].to_string();
    assert!(notes.contains("kserve#5687"), "{notes}");
}

/// A kustomize-style Deployment: the env comes from the rendered ConfigMap through
/// `configMapKeyRef`, `$(MODEL_ID)` is expanded as Kubernetes does, the busybox prefetch
/// container beside vLLM is not the engine, and `--volume` maps the bucket mount to local
/// directories so both models are read.
#[test]
fn a_kustomize_style_deployment_with_volumes() {
    let file = "tests/launch/k8s/kustomize-gcs-bucket-eagle3.yaml";
    let (code, report, err) = launch(&["--file", file]);
    assert_ne!(code, 2, "{err}");
    let l = &report["launch"];
    assert_eq!(
        l["entrypoint"],
        "python -m vllm.entrypoints.openai.api_server"
    );
    assert_eq!(l["target"], "/gcs/meta-llama/llama-3.3-70b-instruct");
    assert_eq!(l["drafter"], "/gcs/yuhuili/eagle3-llama3.3-instruct-70b");
    assert_eq!(report["target"]["kind"], "unavailable");

    let (code, report, err) = launch(&[
        "--file",
        file,
        "--volume",
        "/gcs/yuhuili/eagle3-llama3.3-instruct-70b=tests/launch/models/eagle3-qwen3-8b",
        "--volume",
        "/gcs/meta-llama=tests/launch/models",
    ]);
    assert_ne!(code, 2, "{err}");
    assert_eq!(report["drafter"]["kind"], "local", "{report:#}");
    assert!(report["drafter"]["path"]
        .as_str()
        .unwrap()
        .contains("tests/launch/models/eagle3-qwen3-8b"));
    // `/gcs/meta-llama/llama-3.3-70b-instruct` under `/gcs/meta-llama`: no such local copy, so
    // the longest volume maps it to a path that does not exist and it is reported, not guessed.
    assert_eq!(report["target"]["kind"], "unavailable");
}

const HELM: &str = "tests/launch/k8s/stack";

/// The vLLM production-stack chart's engine Deployment, in the shape `helm template` renders, with the incident's drafter
/// and target read from local directories: the engine Deployment's command (the whole command
/// line in `command:`, the JSON a separate item) is found among the router, the Services and the
/// RBAC objects, and the incident fails as it does from a script.
#[test]
fn a_production_stack_deployment_fails_the_incident() {
    fails_the_incident("stack-dflash-deployment.yaml");

    // The EAGLE-3 values: `--speculative-config={...}` as one item, the target positional.
    let file = format!("{HELM}/stack-eagle3-deployment.yaml");
    let (code, report, err) = launch(&["--file", &file]);
    assert_eq!(code, 0, "{err}{report:#}");
    assert_eq!(
        report["launch"]["target"],
        "meta-llama/Llama-3.1-8B-Instruct"
    );
    assert_eq!(
        report["launch"]["drafter"],
        "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
    );
}

/// The same chart under Ray renders no engine Deployment: KubeRay runs the head container's
/// one-string `/bin/bash -c "…"` command as a script, which runs a script from a mounted
/// ConfigMap, which builds the vLLM command as a bash array and `exec "${ARGS[@]}"`s it. All
/// three levels are followed, so the incident fails here too (before: exit 2, "no vLLM …
/// command found").
#[test]
fn a_production_stack_ray_cluster_runs_the_configmap_script() {
    fails_the_incident("stack-dflash-raycluster.yaml");
}

/// `launch --file HELM/FILE` with the incident's drafter and target read locally: the command
/// is found (`vllm serve` of the chart's models) and the incident's errors are reported.
fn fails_the_incident(file: &str) {
    let (code, report, err) = launch(&[
        "--file",
        &format!("{HELM}/{file}"),
        "--drafter",
        "fixtures/incident/Qwen3.6-27B-DFlash",
        "--target",
        "fixtures/targets/Qwen3.6-27B",
    ]);
    assert_eq!(code, 1, "{file}: {err}{report:#}");
    let l = &report["launch"];
    assert_eq!(l["entrypoint"], "vllm serve");
    assert_eq!(l["target"], "Qwen/Qwen3.6-27B");
    assert_eq!(l["drafter"], "z-lab/Qwen3.6-27B-DFlash");
    let text = report.to_string();
    assert!(
        text.contains("dflash_config.target_layer_ids"),
        "{report:#}"
    );
}

/// A manifest naming no engine, and a `--volume` that is not MOUNT=DIR, exit 2 with what and
/// where.
#[test]
fn bad_manifest_input_exits_2() {
    let (code, _, err) = launch(&[
        "--file",
        "tests/launch/k8s/kserve-llmisvc-eagle3.yaml",
        "--volume",
        "models",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("MOUNT=DIR"), "{err}");
}

/// `dflash-check check` runs into the same manifests: the walk finds every `*.yaml`/`*.yml`
/// that is Kubernetes manifests (or a compose file) configuring speculative decoding (one
/// discovery rule, `pipeline::discover`) and checks each as `launch --file` does; a YAML file
/// named on the command line that is no deployment (a chart's values file) is skipped and
/// listed, as a `config.json` that is no drafter is.
#[test]
fn check_finds_and_gates_manifests() {
    let cache = tempfile::tempdir().unwrap();
    let run = |paths: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
            .args(["check", "--format", "json", "--cache-dir"])
            .arg(cache.path())
            .args(paths)
            .env("HF_HUB_OFFLINE", "1")
            .env_remove("HF_ENDPOINT")
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code().unwrap_or(-1), report)
    };
    let (code, report) = run(&["tests/launch/k8s"]);
    assert_eq!(code, 0, "{report:#}");
    let files: Vec<&str> = report["drafters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap())
        .collect();
    // The helm values file beside the manifests is YAML but no manifest: not gated.
    assert_eq!(
        files,
        [
            "tests/launch/k8s/kserve-llmisvc-eagle3.yaml",
            "tests/launch/k8s/kustomize-gcs-bucket-eagle3.yaml",
            "tests/launch/k8s/stack/stack-dflash-deployment.yaml",
            "tests/launch/k8s/stack/stack-dflash-raycluster.yaml",
            "tests/launch/k8s/stack/stack-eagle3-deployment.yaml"
        ]
    );
    assert!(report.to_string().contains("launch-draft-tp-ignored"));
    assert_eq!(report["drafters"][0]["family"], "deployment");

    let values = "tests/launch/k8s/stack/values-not-a-manifest.yaml";
    let (code, report) = run(&[values]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["drafters"], serde_json::json!([]));
    assert_eq!(report["skipped"], serde_json::json!([values]));
}

/// Issue 44: Kubernetes `$(VAR)` expansion had no bound: a 500 kB manifest asked for 6.5 GB
/// and aborted, 90 kB took 593 MB. Each hostile shape (written at test time, about 500 kB):
/// one `args` word of `$(A)` repeated with a 250 kB `A`; 60,000 words `$(A)`; env values that
/// each name the one before 16 times; a `sh -c` script of references. Each now exits 2 at once
/// naming the file, the container and the cap (on 309e61e: signal 6 after 2.2 GB for the
/// first two under a 4 GB limit, 4 GB and 34 s for the `sh -c` shape at 90 kB).
#[test]
fn hostile_variable_expansion_is_refused_at_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(250_000);
    let refs = "$(A)".repeat(62_500);
    let mut nested = String::from("        - name: V0\n          value: \"yyyyyyyy\"\n");
    for i in 1..12 {
        let value = format!("$(V{})", i - 1).repeat(16);
        nested.push_str(&format!(
            "        - name: V{i}\n          value: \"{value}\"\n"
        ));
    }
    let shapes = [
        (
            "one-word",
            format!("        - name: A\n          value: \"{long}\"\n"),
            format!("        args: [\"{refs}\"]\n"),
        ),
        (
            "many-words",
            format!("        - name: A\n          value: \"{long}\"\n"),
            format!("        args: [{}]\n", vec!["\"$(A)\""; 60_000].join(",")),
        ),
        ("nested", nested, "        args: [\"$(V11)\"]\n".to_string()),
        (
            "sh-c",
            format!("        - name: A\n          value: \"{long}\"\n"),
            format!("        command: [\"sh\", \"-c\", \"vllm serve m {refs}\"]\n"),
        ),
    ];
    for (name, env, args) in shapes {
        let file = dir.path().join(format!("{name}.yaml"));
        let text = format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: vllm/vllm-openai\n        env:\n{env}{args}"
        );
        std::fs::write(&file, text).unwrap();
        let start = std::time::Instant::now();
        let (code, report, err) = launch(&["--file", file.to_str().unwrap()]);
        let took = start.elapsed();
        eprintln!("{name}: exit {code} in {took:?}");
        assert_eq!(code, 2, "{name}: {err}{report:#}");
        assert!(
            err.contains(&format!(
                "{name}.yaml: the `$(VAR)` references of container `c` of Deployment `x` expand"
            )),
            "{name}: {err}"
        );
        assert!(
            took < std::time::Duration::from_secs(20),
            "{name}: {took:?}"
        );
    }
}
