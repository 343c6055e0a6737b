//! `check` finds the deployments of a repository and what they serve (issue 40, part B): the
//! scripts, compose files, Dockerfiles and Kubernetes manifests (YAML in block and flow style,
//! JSON, multi-document, a Helm render with its CRDs) beside the configs, every engine
//! container in each, judged as `launch --file` judges it; a target a deployment serves with
//! its MTP head judged as a drafter, one nothing serves reported as `mtp-not-served`; a
//! deployment file over the size cap a finding (an error of `launch`), never a silent skip; and
//! no plain `OK` over deployments whose models could not be read. Every repository here is
//! written by the test (deployment files written here; models copied from this repository's
//! fixtures or written here), offline with an empty Hub cache.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// Runs the binary offline with an empty Hub cache, in `dir`: (exit code, stdout, stderr).
fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let cache = tempfile::tempdir().unwrap();
    let out = common::dflash()
        .current_dir(dir)
        .args(args)
        .arg("--cache-dir")
        .arg(cache.path())
        .env_remove("HF_ENDPOINT")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `run_in` with `--format json`, the report parsed.
fn json_in(dir: &Path, args: &[&str]) -> (i32, Value, String) {
    let mut with = args.to_vec();
    with.extend(["--format", "json"]);
    let (code, out, err) = run_in(dir, &with);
    let report = serde_json::from_str(&out).unwrap_or(Value::Null);
    (code, report, err)
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// A repository with the README's incident (the hand-guessed Qwen3.6-27B drafter and its
/// target, from fixtures/) under `models/`, and `deploy/` for the deployment files.
fn incident_repo() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    copy_dir(
        &root.join("fixtures/targets/Qwen3.6-27B"),
        &repo.path().join("models/Qwen3.6-27B"),
    );
    copy_dir(
        &root.join("fixtures/incident/Qwen3.6-27B-DFlash"),
        &repo.path().join("models/Qwen3.6-27B-DFlash"),
    );
    fs::create_dir_all(repo.path().join("deploy")).unwrap();
    repo
}

/// The incident's vLLM speculative config (the drafter as `deploy/` names it).
const SPEC: &str = r#"{"method": "dflash", "model": "../models/Qwen3.6-27B-DFlash", "num_speculative_tokens": 15}"#;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path
}

/// The deployment entries of a `check` report: (file, what it judged). (Their family was
/// `manifest` before issue 40: taken too, so a test run on the binary before it fails on what
/// it judged, not on the name.)
fn deployments(report: &Value) -> Vec<(String, String)> {
    report["drafters"]
        .as_array()
        .unwrap_or_else(|| panic!("{report:#}"))
        .iter()
        .filter(|d| d["family"] == "deployment" || d["family"] == "manifest")
        .map(|d| {
            (
                d["file"].as_str().unwrap().to_string(),
                d["deployment"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The codes of a report's findings.
fn code_set(report: &Value) -> BTreeSet<String> {
    common::codes(report).into_iter().map(|(c, _)| c).collect()
}

/// A shell script, a compose file and a Dockerfile that serve the incident are each found by
/// the walk and judged as `launch --file` judges them (the incident's `changed` errors under
/// each); a script that speculates with no engine (a benchmark client) is no deployment, and
/// neither is a compose file that serves no speculation.
#[test]
fn check_finds_scripts_compose_files_and_dockerfiles() {
    let repo = incident_repo();
    let deploy = repo.path().join("deploy");
    write(
        &deploy,
        "serve.sh",
        &format!(
            "#!/bin/sh\nvllm serve ../models/Qwen3.6-27B \\\n  --speculative-config '{SPEC}'\n"
        ),
    );
    write(
        &deploy,
        "compose.yml",
        &format!(
            "services:\n  vllm:\n    image: vllm/vllm-openai:v0.28.0\n    command:\n      - ../models/Qwen3.6-27B\n      - --speculative-config\n      - '{SPEC}'\n"
        ),
    );
    write(
        &deploy,
        "Dockerfile",
        &format!(
            "FROM vllm/vllm-openai:v0.28.0\nCMD [\"../models/Qwen3.6-27B\", \"--speculative-config\", {}]\n",
            serde_json::to_string(SPEC).unwrap()
        ),
    );
    write(
        &deploy,
        "bench.sh",
        "python bench.py --speculative-config '{\"method\": \"dflash\"}' --url http://localhost:8000\n",
    );
    write(
        &deploy,
        "plain-compose.yml",
        "services:\n  embed:\n    image: vllm/vllm-openai:v0.28.0\n    command: [\"BAAI/bge-m3\"]\n",
    );
    let (code, report, err) = json_in(repo.path(), &["check", "."]);
    assert_eq!(code, 1, "{err}{report:#}");
    let found: Vec<String> = deployments(&report).into_iter().map(|(f, _)| f).collect();
    assert_eq!(
        found,
        ["deploy/Dockerfile", "deploy/compose.yml", "deploy/serve.sh"],
        "{report:#}"
    );
    for d in report["drafters"].as_array().unwrap() {
        if d["family"] == "deployment" {
            let codes: Vec<&str> = d["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["code"].as_str().unwrap())
                .collect();
            assert!(codes.contains(&"changed"), "{d:#}");
        }
    }
}

/// Kubernetes manifests in JSON (`kubectl get -o json`: a `List`, `\/` escapes) and in YAML's
/// flow style (after a `---` marker, beside a block document) are manifests: found by the walk
/// and judged; before, neither was recognised and `check` exited 0.
#[test]
fn check_reads_manifests_in_json_and_flow_style() {
    let repo = incident_repo();
    let deploy = repo.path().join("deploy");
    let container = json!({
        "name": "vllm",
        "image": "vllm/vllm-openai:v0.28.0",
        "command": ["vllm", "serve", "../models/Qwen3.6-27B"],
        "args": ["--speculative-config", SPEC],
    });
    let list = json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": [{
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "dflash"},
            "spec": {"template": {"spec": {"containers": [container]}}},
        }],
    });
    let pretty = serde_json::to_string_pretty(&list).unwrap();
    write(
        &deploy,
        "list.json",
        &pretty.replace("apps/v1", "apps\\/v1"),
    );
    let flow = format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n--- {{apiVersion: v1, kind: Pod, metadata: {{name: p}}, spec: {{containers: [{container}]}}}}\n"
    );
    write(&deploy, "flow.yaml", &flow);
    let (code, report, err) = json_in(repo.path(), &["check", "deploy"]);
    assert_eq!(code, 1, "{err}{report:#}");
    let found: Vec<String> = deployments(&report).into_iter().map(|(f, _)| f).collect();
    assert_eq!(
        found,
        ["deploy/flow.yaml", "deploy/list.json"],
        "{report:#}"
    );
    assert!(code_set(&report).contains("changed"), "{report:#}");
}

/// Every engine container of a manifest is judged, each its own entry (before, only the
/// first was, and the second was a note): here a vLLM container and an SGLang container of one
/// Deployment, both serving the incident, and a helper container that starts no engine.
#[test]
fn check_judges_every_engine_container() {
    let repo = incident_repo();
    let manifest = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: two\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.28.0\n          command: [vllm, serve, ../models/Qwen3.6-27B]\n          args: [--speculative-config, '{SPEC}']\n        - name: prefetch\n          image: busybox\n          command: [sh, -c, 'sleep infinity']\n        - name: sglang\n          image: lmsysorg/sglang:v0.5.10\n          command: [python3, -m, sglang.launch_server, --model-path, ../models/Qwen3.6-27B, --speculative-algorithm, DFLASH, --speculative-draft-model-path, ../models/Qwen3.6-27B-DFlash, --speculative-num-draft-tokens, \"16\"]\n"
    );
    write(&repo.path().join("deploy"), "two.yaml", &manifest);
    let (code, report, err) = json_in(repo.path(), &["check", "deploy"]);
    assert_eq!(code, 1, "{err}{report:#}");
    assert_eq!(
        deployments(&report),
        [
            (
                "deploy/two.yaml".to_string(),
                "vLLM serving ../models/Qwen3.6-27B".to_string()
            ),
            (
                "deploy/two.yaml".to_string(),
                "SGLang serving ../models/Qwen3.6-27B".to_string()
            ),
        ],
        "{report:#}"
    );
    let (_, human, _) = run_in(repo.path(), &["check", "deploy"]);
    assert!(
        human.contains("0 drafters and 2 deployments checked"),
        "{human}"
    );
}

/// A DeepSeek-V3-style export that dropped its MTP head (written here, at two layers): its
/// config declares one next-n layer (`num_nextn_predict_layers`), its index names the two
/// decoder layers and no tensor of layer 2, where the engines load the head from.
fn write_mtp_target_without_head(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    let config = json!({
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "torch_dtype": "bfloat16",
        "hidden_size": 7168,
        "num_hidden_layers": 2,
        "first_k_dense_replace": 1,
        "n_routed_experts": 4,
        "num_experts_per_tok": 2,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "vocab_size": 129280,
        "num_nextn_predict_layers": 1
    });
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let mut names = vec![
        "lm_head.weight".to_string(),
        "model.embed_tokens.weight".to_string(),
        "model.norm.weight".to_string(),
    ];
    for i in 0..2 {
        let p = format!("model.layers.{i}");
        for t in ["input_layernorm", "post_attention_layernorm"] {
            names.push(format!("{p}.{t}.weight"));
        }
        for t in [
            "q_a_proj",
            "q_b_proj",
            "kv_a_proj_with_mqa",
            "kv_b_proj",
            "o_proj",
        ] {
            names.push(format!("{p}.self_attn.{t}.weight"));
        }
        let mlp: Vec<String> = match i {
            0 => vec!["mlp".to_string()],
            _ => (0..4).map(|e| format!("mlp.experts.{e}")).collect(),
        };
        for m in mlp {
            for proj in ["gate_proj", "up_proj", "down_proj"] {
                names.push(format!("{p}.{m}.{proj}.weight"));
            }
        }
    }
    let map: serde_json::Map<String, Value> = names
        .into_iter()
        .map(|n| (n, json!("model-00001-of-00001.safetensors")))
        .collect();
    let index = json!({"metadata": {"total_size": 1}, "weight_map": map});
    fs::write(
        dir.join("model.safetensors.index.json"),
        serde_json::to_string_pretty(&index).unwrap(),
    )
    .unwrap();
}

/// The MTP-head class (FIELD2 §1): a target whose config declares an MTP layer and whose
/// index ships none of its tensors, and a manifest that serves it with `method: mtp`. `check`
/// judges the target as a drafter (family `mtp`, with the manifest's engine, vLLM 0.28.0 from
/// its image) and fails on `weights-mtp-missing`; before, it counted the manifest as the one
/// drafter and said `OK`.
#[test]
fn a_target_served_with_mtp_is_judged_as_a_drafter() {
    let repo = tempfile::tempdir().unwrap();
    write_mtp_target_without_head(&repo.path().join("models/deepseek-v3-no-mtp"));
    fs::create_dir_all(repo.path().join("deploy")).unwrap();
    write(
        &repo.path().join("deploy"),
        "mtp.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: mtp\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.28.0\n          command: [vllm, serve, ../models/deepseek-v3-no-mtp]\n          args: [--speculative-config, '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}']\n",
    );
    let (code, report, err) = json_in(repo.path(), &["check", "."]);
    assert_eq!(code, 1, "{err}{report:#}");
    let target = report["drafters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["file"] == "models/deepseek-v3-no-mtp/config.json")
        .unwrap_or_else(|| panic!("the served target is not a drafter: {report:#}"));
    assert_eq!(target["family"], "mtp", "{target:#}");
    assert_eq!(target["assumed"]["engine"], "vllm", "{target:#}");
    assert_eq!(target["assumed"]["version"], "0.28.0", "{target:#}");
    assert!(
        target["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "weights-mtp-missing" && f["severity"] == "error"),
        "{target:#}"
    );
    assert!(!code_set(&report).contains("mtp-not-served"), "{report:#}");
}

/// The same target with nothing here serving it with MTP (alone, or served by a line with a
/// separate EAGLE-3 drafter): not a drafter of the gate, and said as `mtp-not-served` (info),
/// not as `no-drafters`.
#[test]
fn an_mtp_target_nothing_serves_is_info_not_no_drafters() {
    let repo = tempfile::tempdir().unwrap();
    write_mtp_target_without_head(&repo.path().join("models/deepseek-v3-no-mtp"));
    let (code, report, err) = json_in(repo.path(), &["check", "models"]);
    assert_eq!(code, 0, "{err}{report:#}");
    assert_eq!(
        common::codes(&report),
        [("mtp-not-served".to_string(), "info".to_string())],
        "{report:#}"
    );
    let finding = common::finding(&report, "mtp-not-served");
    assert_eq!(finding["file"], "models/deepseek-v3-no-mtp/config.json");
    assert!(finding["message"]
        .as_str()
        .unwrap()
        .contains("not served with MTP by anything here"));
    write(
        repo.path(),
        "serve.sh",
        "vllm serve models/deepseek-v3-no-mtp --speculative-config '{\"method\": \"eagle3\", \"model\": \"org/eagle3\", \"num_speculative_tokens\": 3}'\n",
    );
    let (_, report, err) = json_in(repo.path(), &["check", "."]);
    assert!(
        code_set(&report).contains("mtp-not-served"),
        "{err}{report:#}"
    );
    assert!(
        !report["drafters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["family"] == "mtp"),
        "{report:#}"
    );
}

/// A Helm render as `helm template --include-crds` prints it (written by this generator, not
/// copied): `# Source:` comments, CustomResourceDefinitions with long OpenAPI schemas until
/// the text is at least `size` bytes, then a Deployment whose vLLM container serves the
/// incident.
fn helm_render(size: usize) -> String {
    let mut text = String::with_capacity(size + 4096);
    let mut n = 0;
    while text.len() < size {
        n += 1;
        text.push_str(&format!(
            "---\n# Source: chart/crds/crd-{n}.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things{n}.example.com\nspec:\n  group: example.com\n  names:\n    kind: Thing{n}\n    plural: things{n}\n  scope: Namespaced\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n          type: object\n          properties:\n"
        ));
        for p in 0..200 {
            text.push_str(&format!(
                "            field{p}:\n              description: \"Field {p} of Thing{n}: what the controller reads from it, and what it defaults to when it is left out of the resource.\"\n              type: string\n"
            ));
        }
    }
    text.push_str(&format!(
        "---\n# Source: chart/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dflash\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.28.0\n          command: [vllm, serve, ../models/Qwen3.6-27B]\n          args: [--speculative-config, '{SPEC}']\n"
    ));
    text
}

/// A render larger than the largest public chart measured (docs/launch.md, "Size cap": KServe's
/// kserve-llmisvc-crd v0.20.0, 5,376,865 bytes) is read under the default cap by both gates
/// and judged (the incident's errors, exit 1); before, `launch --file` refused it (exit 2)
/// and `check` skipped it in silence (exit 0).
#[test]
fn a_helm_render_with_its_crds_is_read_under_the_default_cap() {
    let repo = incident_repo();
    let render = write(
        &repo.path().join("deploy"),
        "render.yaml",
        &helm_render(5_500_000),
    );
    assert!(fs::metadata(&render).unwrap().len() > 5_376_865);
    let (code, report, err) = json_in(repo.path(), &["launch", "--file", "deploy/render.yaml"]);
    assert_eq!(code, 1, "{err}");
    assert!(code_set(&report).contains("changed"), "{report:#}");
    let (code, report, err) = json_in(repo.path(), &["check", "deploy"]);
    assert_eq!(code, 1, "{err}{report:#}");
    assert_eq!(deployments(&report).len(), 1, "{report:#}");
}

/// Over the cap: `check` reports the file (`deployment-too-large`, an error: exit 1) naming its
/// size, the cap and `--max-file-size`, which an `[[ignore]]` entry can accept; `launch --file`
/// refuses it (exit 2) with the same words. At the default cap too (a 17 MiB render): before,
/// `check` skipped any manifest over 1 MiB and exited 0.
#[test]
fn a_deployment_over_the_cap_is_a_finding_in_check_and_an_error_in_launch() {
    let big = tempfile::tempdir().unwrap();
    write(big.path(), "render.yaml", &helm_render(17 << 20));
    let (code, report, err) = json_in(big.path(), &["check", "."]);
    assert_eq!(code, 1, "{err}{report:#}");
    let message = common::finding(&report, "deployment-too-large")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("16 MiB cap") && message.contains("--max-file-size 18MiB"),
        "{message}"
    );

    let repo = incident_repo();
    write(
        &repo.path().join("deploy"),
        "render.yaml",
        &helm_render(1_500_000),
    );
    let (code, report, err) = json_in(repo.path(), &["check", "deploy", "--max-file-size", "1MiB"]);
    assert_eq!(code, 1, "{err}{report:#}");
    let finding = common::finding(&report, "deployment-too-large");
    assert_eq!(finding["severity"], "error");
    assert_eq!(finding["file"], "deploy/render.yaml");
    let message = finding["message"].as_str().unwrap();
    assert!(
        message.contains("1 MiB cap") && message.contains("--max-file-size 2MiB"),
        "{message}"
    );
    assert_eq!(report["unverified"], 1, "{report:#}");
    let (code, _, err) = run_in(
        repo.path(),
        &[
            "launch",
            "--file",
            "deploy/render.yaml",
            "--max-file-size",
            "1MiB",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("1 MiB cap") && err.contains("--max-file-size 2MiB"),
        "{err}"
    );
    // Accepted with a reason: the run passes, the entry is listed.
    write(
        repo.path(),
        "dflash-check.toml",
        "version = 2\n\n[[ignore]]\ncode = \"deployment-too-large\"\npath = \"deploy/render.yaml\"\nreason = \"the chart is gated where it is rendered\"\n",
    );
    let (code, report, err) = json_in(repo.path(), &["check", "deploy", "--max-file-size", "1MiB"]);
    assert_eq!(code, 0, "{err}{report:#}");
    assert_eq!(report["suppressed"][0]["code"], "deployment-too-large");
    fs::remove_file(repo.path().join("dflash-check.toml")).unwrap();
}

/// One verdict per deployment: `check` on a deployment file and `launch --file` on the same
/// file give the same set of codes (a Kubernetes manifest, a compose file and a script, each
/// serving the incident with local models).
#[test]
fn check_and_launch_give_the_same_codes() {
    let repo = incident_repo();
    let deploy = repo.path().join("deploy");
    write(
        &deploy,
        "k8s.yaml",
        &format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai:v0.28.0\n      command: [vllm, serve, ../models/Qwen3.6-27B]\n      args: [--speculative-config, '{SPEC}', --max-num-seqs, \"64\"]\n"
        ),
    );
    write(
        &deploy,
        "compose.yml",
        &format!(
            "services:\n  vllm:\n    image: vllm/vllm-openai:v0.26.0\n    command:\n      - ../models/Qwen3.6-27B\n      - --speculative-config\n      - '{SPEC}'\n"
        ),
    );
    write(
        &deploy,
        "serve.sh",
        "python -m sglang.launch_server --model-path ../models/Qwen3.6-27B --speculative-algorithm DFLASH \\\n  --speculative-draft-model-path ../models/Qwen3.6-27B-DFlash --speculative-num-draft-tokens 16 --tp-size 2\n",
    );
    for file in ["deploy/k8s.yaml", "deploy/compose.yml", "deploy/serve.sh"] {
        let (launch_code, launch, err) = json_in(repo.path(), &["launch", "--file", file]);
        assert!(launch_code < 2, "{file}: {err}");
        let (check_code, check, err) = json_in(repo.path(), &["check", file]);
        assert!(!code_set(&launch).is_empty(), "{file}: {launch:#}");
        assert_eq!(code_set(&check), code_set(&launch), "{file}: {err}");
        assert_eq!(check_code, launch_code, "{file}");
        assert_eq!(deployments(&check).len(), 1, "{file}: {check:#}");
    }
}

/// `OK` is said only of what was verified: over a manifest whose drafter and target are Hub
/// repos the run cannot read (offline, empty cache), with warnings only, the verdict is `OK (1
/// unverified)` and the entry says what was not read; before, it was a plain `OK`.
#[test]
fn ok_is_never_said_of_a_deployment_whose_models_were_not_read() {
    let repo = tempfile::tempdir().unwrap();
    write(
        repo.path(),
        "eagle3.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai:v0.28.0\n      command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct]\n      args: [--speculative-config, '{\"method\": \"eagle3\", \"model\": \"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\", \"revision\": \"0123456789abcdef0123456789abcdef01234567\", \"num_speculative_tokens\": 3}']\n",
    );
    let (code, out, err) = run_in(repo.path(), &["check", "."]);
    assert_eq!(code, 0, "{err}{out}");
    let verdict = out.lines().last().unwrap();
    assert!(verdict.starts_with("OK (1 unverified): "), "{out}");
    assert!(
        out.contains("unverified: the drafter could not be read")
            && out.contains("unverified: the target could not be read"),
        "{out}"
    );
    let (_, report, _) = json_in(repo.path(), &["check", "."]);
    assert_eq!(report["unverified"], 1);
}

/// `check` says when it first asks the Hub (one note, naming `--offline` to skip it), so a run
/// without network does not wait in silence; offline it says nothing of the kind (issue 45).
#[test]
fn check_says_it_is_asking_the_hub() {
    let repo = tempfile::tempdir().unwrap();
    fs::write(
        repo.path().join("serve.sh"),
        "vllm serve Qwen/Qwen3-8B --speculative-config \
         '{\"method\": \"dflash\", \"model\": \"z-lab/Qwen3-8B-DFlash-b16\", \"num_speculative_tokens\": 15}'\n",
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let ask = |offline: bool| {
        let mut cmd = common::dflash();
        cmd.current_dir(repo.path())
            .args(["check", ".", "--timeout", "2", "--cache-dir"])
            .arg(cache.path())
            // Nothing listens there: every request fails at once.
            .env("HF_ENDPOINT", "http://127.0.0.1:9")
            .env_remove("HF_HUB_OFFLINE");
        if offline {
            cmd.arg("--offline");
        }
        let out = cmd.output().unwrap();
        String::from_utf8(out.stderr).unwrap()
    };
    let online = ask(false);
    let notes: Vec<&str> = online
        .lines()
        .filter(|l| l.contains("asking the Hub"))
        .collect();
    assert_eq!(notes.len(), 1, "{online}");
    assert!(notes[0].contains("--offline"), "{online}");
    assert!(!ask(true).contains("asking the Hub"));
}
