//! `dflash-check launch` end to end through the binary: real command lines from the engines'
//! docs and recipes (each with its source; changes to fire a rule are said beside it), each
//! launch rule firing on its own case, a clean case firing nothing, scripts, Dockerfiles and
//! compose files, bad input (exit 2), and drafters on the Hub (its cache, an in-process Hub on
//! 127.0.0.1, a Hub that is down). Fixtures: tests/launch/ (see tests/launch/SOURCES.md).

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// The commit the test Hub cache holds for every repo.
const SHA: &str = "5ab0e2c2d1f74f6b8a1b3e9c7d0f1a2b3c4d5e6f";

const QWEN36_TARGET: &[(&str, &str)] = &[
    ("config.json", "fixtures/targets/Qwen3.6-27B/config.json"),
    (
        "tokenizer_config.json",
        "fixtures/targets/Qwen3.6-27B/tokenizer_config.json",
    ),
];

/// Hub repos the commands name, and the project files that stand in for them in the cache.
/// Qwen3.5-27B and Qwen3.6-27B share their facts and added tokens (crates/core/src/builtin.rs).
const REPOS: &[(&str, &[(&str, &str)])] = &[
    (
        "z-lab/Qwen3.5-27B-DFlash",
        &[(
            "config.json",
            "crates/core/snapshots/z-lab__Qwen3.5-27B-DFlash.json",
        )],
    ),
    (
        "z-lab/Qwen3.6-27B-DFlash",
        &[("config.json", "fixtures/incident/authority/config.json")],
    ),
    ("Qwen/Qwen3.5-27B", QWEN36_TARGET),
    ("Qwen/Qwen3.6-27B", QWEN36_TARGET),
];

/// A Hub cache (standard layout) holding [`REPOS`] at [`SHA`], with `main` pointing at it.
fn hub_cache() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (repo, files) in REPOS {
        let root = dir
            .path()
            .join(format!("models--{}", repo.replace('/', "--")));
        std::fs::create_dir_all(root.join("refs")).unwrap();
        std::fs::write(root.join("refs/main"), SHA).unwrap();
        let snap = root.join("snapshots").join(SHA);
        std::fs::create_dir_all(&snap).unwrap();
        for (name, from) in *files {
            std::fs::copy(from, snap.join(name)).unwrap();
        }
    }
    dir
}

/// Runs `dflash-check launch FLAGS -- COMMAND` offline against the test Hub cache.
fn launch(flags: &[&str], command: &[&str]) -> (i32, String, String) {
    let cache = hub_cache();
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .arg("launch")
        .arg("--cache-dir")
        .arg(cache.path())
        .args(flags)
        .arg("--")
        .args(command)
        .env("HF_HUB_OFFLINE", "1")
        .env_remove("HF_ENDPOINT")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `launch --format json`: the exit code and the report.
fn launch_json(flags: &[&str], command: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(flags);
    let (code, out, err) = launch(&all, command);
    assert!(err.is_empty(), "stderr: {err}");
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}")),
    )
}

/// (code, severity) of every diagnostic.
fn codes(report: &Value) -> Vec<(String, String)> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn diagnostic<'a>(report: &'a Value, code: &str) -> &'a Value {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {report:#}"))
}

fn has(report: &Value, code: &str, severity: &str) -> bool {
    codes(report).contains(&(code.to_string(), severity.to_string()))
}

/// z-lab/dflash README.md@44947fb, "vLLM" (verbatim): `vllm serve Qwen/Qwen3.5-27B
/// --speculative-config '{"method": "dflash", "model": "z-lab/Qwen3.5-27B-DFlash",
/// "num_speculative_tokens": 15}' --attention-backend flash_attn --max-num-batched-tokens 32768`,
/// with the speculative config replaced by `spec`.
fn zlab_vllm(spec: &str) -> Vec<String> {
    vec![
        "vllm".into(),
        "serve".into(),
        "Qwen/Qwen3.5-27B".into(),
        "--speculative-config".into(),
        spec.into(),
        "--attention-backend".into(),
        "flash_attn".into(),
        "--max-num-batched-tokens".into(),
        "32768".into(),
    ]
}

const ZLAB_SPEC: &str =
    r#"{"method": "dflash", "model": "z-lab/Qwen3.5-27B-DFlash", "num_speculative_tokens": 15}"#;

fn pinned(spec: &str) -> String {
    spec.replacen('{', &format!(r#"{{"revision": "{SHA}", "#), 1)
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The clean case: the z-lab README command with the drafter pinned to the commit it was
/// checked at fires nothing, and the report lists what it parsed and found.
#[test]
fn the_zlab_readme_command_pinned_is_clean() {
    let cmd = zlab_vllm(&pinned(ZLAB_SPEC));
    let (code, report) = launch_json(&[], &strs(&cmd));
    assert_eq!(codes(&report), Vec::<(String, String)>::new(), "{report:#}");
    assert_eq!(code, 0);
    assert_eq!(report["command"], "launch");
    assert_eq!(report["launch"]["engine"], "vllm");
    // The verdict assumed the command's engine; its version is not in the command.
    assert_eq!(
        report["assumed"],
        serde_json::json!({"engine": "vllm", "version": null, "from": null})
    );
    assert_eq!(report["launch"]["target"], "Qwen/Qwen3.5-27B");
    assert_eq!(report["drafter"]["kind"], "hub");
    assert_eq!(report["drafter"]["sha"], SHA);
    assert_eq!(report["drafter_facts"]["kind"], "dflash");
    assert_eq!(report["drafter_facts"]["block_size"], 16);
    assert_eq!(report["target"]["kind"], "hub");
    // --max-num-seqs is left to vLLM's default: said, not guessed.
    let not_checked = report["not_checked"].to_string();
    assert!(
        not_checked.contains("--max-num-seqs is not given"),
        "{not_checked}"
    );
    assert!(not_checked.contains("2048 = 32768 / 16"), "{not_checked}");
}

/// Human output lists the parsed launch (engine, target, drafter, K) before the verdict.
#[test]
fn human_output_lists_the_parsed_launch() {
    let cmd = zlab_vllm(&pinned(ZLAB_SPEC));
    let (code, out, err) = launch(&["--color", "never"], &strs(&cmd));
    assert_eq!((code, err.as_str()), (0, ""));
    for needle in [
        "engine    vllm (vllm serve), release not known: judged across",
        "target    Qwen/Qwen3.5-27B  (Hub, commit 5ab0e2c2",
        "drafter   z-lab/Qwen3.5-27B-DFlash  (Hub, commit 5ab0e2c2",
        "dflash drafter; block_size 16",
        "method dflash; K (num_speculative_tokens) 15; max_num_batched_tokens 32768",
        // vLLM's default --max-num-seqs is not known, and offline the Hub gives neither model's
        // weights: the verdict says three checks were not made.
        "not checked: weights: not read from the Hub: `z-lab/Qwen3.5-27B-DFlash`",
        "not checked: the target's weights: not read from the Hub: `Qwen/Qwen3.5-27B`",
        "OK (unverified: 3 checks not made (see \"not checked\")): 0 errors, 0 warnings, 0 info",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

/// launch-revision-unpinned: the README command verbatim loads the drafter's `main`; the
/// expected value is the commit the cache resolved.
#[test]
fn revision_unpinned_fires_on_the_verbatim_readme_command() {
    let (code, report) = launch_json(&[], &strs(&zlab_vllm(ZLAB_SPEC)));
    assert_eq!(
        codes(&report),
        vec![("launch-revision-unpinned".into(), "warning".into())]
    );
    assert_eq!(
        diagnostic(&report, "launch-revision-unpinned")["expected"],
        SHA
    );
    assert_eq!(code, 0, "a warning does not fail the gate");
    let (code, _) = launch_json(&["--deny", "warnings"], &strs(&zlab_vllm(ZLAB_SPEC)));
    assert_eq!(code, 1, "--deny warnings does");
}

/// One case per vLLM rule: (what, command, code, severity, exit code).
#[test]
fn each_vllm_rule_fires_on_its_own_case() {
    let cases: Vec<(&str, Vec<String>, &str, &str, i32)> = vec![
        (
            // z-lab README, method changed to eagle3.
            "method vs family",
            zlab_vllm(&pinned(&ZLAB_SPEC.replace("\"dflash\"", "\"eagle3\""))),
            "speculative-config-method",
            "warning",
            0,
        ),
        (
            // z-lab README, K raised to 16 (block_size 16).
            "K vs block_size",
            zlab_vllm(&pinned(&ZLAB_SPEC.replace("15", "16"))),
            "num-speculative-tokens-too-large",
            "warning",
            0,
        ),
        (
            // z-lab README with --max-num-seqs 4096: 4096 × 16 > 32768.
            "batched tokens",
            {
                let mut c = zlab_vllm(&pinned(ZLAB_SPEC));
                c.extend(["--max-num-seqs".into(), "4096".into()]);
                c
            },
            "launch-batched-tokens",
            "error",
            1,
        ),
        (
            // vllm-project/recipes OpenAI/GPT-OSS_EAGLE3_Hopper.yaml@8959cf6's speculative config
            // on the z-lab drafter, draft_tensor_parallel_size misspelt as tensor_parallel_size.
            "rejected key",
            zlab_vllm(&pinned(
                r#"{"model": "z-lab/Qwen3.5-27B-DFlash", "num_speculative_tokens": 15, "method": "dflash", "tensor_parallel_size": 1}"#,
            )),
            "launch-rejected-key",
            "error",
            1,
        ),
        (
            // vllm-project/recipes GLM/GLM5.md@8959cf6's dotted form
            // (--speculative-config.method mtp --speculative-config.num_speculative_tokens 3),
            // pointed at the z-lab drafter, without num_speculative_tokens.
            "num_speculative_tokens missing",
            [
                "vllm",
                "serve",
                "Qwen/Qwen3.5-27B",
                "--speculative-config.method",
                "dflash",
                "--speculative-config.model",
                "z-lab/Qwen3.5-27B-DFlash",
                "--speculative-config.revision",
                SHA,
            ]
            .map(String::from)
            .to_vec(),
            "num-speculative-tokens-missing",
            "error",
            1,
        ),
    ];
    for (what, cmd, code, severity, exit) in cases {
        let (got_exit, report) = launch_json(&[], &strs(&cmd));
        assert_eq!(
            codes(&report),
            vec![(code.to_string(), severity.to_string())],
            "{what}: {report:#}"
        );
        assert_eq!(got_exit, exit, "{what}");
    }
}

/// mixed-attention-vllm on the Qwen3.6-27B drafter (4 sliding + 1 full layers): an
/// error when VLLM_USE_V2_MODEL_RUNNER=0 forces V1, nothing when it is unset (vLLM 0.26 to
/// 0.33 force the V2 runner for such a drafter, 0.34 has no other; issue 30), nothing with =1.
#[test]
fn mixed_attention_depends_on_the_runner_variable() {
    let spec = pinned(&ZLAB_SPEC.replace("3.5", "3.6"));
    let base = [
        "vllm",
        "serve",
        "Qwen/Qwen3.6-27B",
        "--speculative-config",
        &spec,
    ];
    let with = |env: Option<&str>| {
        let mut c: Vec<&str> = env.into_iter().collect();
        c.extend(base);
        launch_json(&[], &c)
    };
    let (code, report) = with(Some("VLLM_USE_V2_MODEL_RUNNER=0"));
    assert_eq!(
        codes(&report),
        vec![("mixed-attention-vllm".into(), "error".into())]
    );
    assert_eq!(code, 1);
    let (code, report) = with(None);
    assert_eq!((code, codes(&report)), (0, vec![]));
    let (code, report) = with(Some("VLLM_USE_V2_MODEL_RUNNER=1"));
    assert_eq!((code, codes(&report)), (0, vec![]));
}

/// A DSpark drafter with vLLM's `dspark` method and K = block_size is legal: neither the
/// method nor K is flagged. vllm-project/recipes models/deepseek-ai/DeepSeek-V4-Flash.yaml@8959cf6
/// speculative config, with a standalone DSpark drafter named as its model.
#[test]
fn dspark_method_and_k_equal_to_block_size_are_not_flagged() {
    let (code, report) = launch_json(
        &[],
        &[
            "vllm",
            "serve",
            "tests/launch/models/llama3-8b-target",
            "--speculative-config",
            r#"{"method":"dspark","model":"tests/launch/models/dspark-qwen3-b7","num_speculative_tokens":7,"draft_sample_method":"probabilistic"}"#,
        ],
    );
    assert_eq!(report["drafter_facts"]["kind"], "dspark");
    let launch_codes: Vec<_> = codes(&report)
        .into_iter()
        .filter(|(c, _)| c.starts_with("launch-"))
        .collect();
    assert_eq!(launch_codes, vec![], "{report:#}");
    assert!(code == 0 || code == 1);
    // The same drafter under method dflash is a mismatch.
    let (_, report) = launch_json(
        &[],
        &[
            "vllm",
            "serve",
            "tests/launch/models/llama3-8b-target",
            "--speculative-config",
            r#"{"method":"dflash","model":"tests/launch/models/dspark-qwen3-b7","num_speculative_tokens":7}"#,
        ],
    );
    assert!(
        has(&report, "speculative-config-method", "warning"),
        "{report:#}"
    );
}

/// A DFlash2 drafter with VLLM_USE_V2_MODEL_RUNNER=0: vLLM 0.29 to 0.33 refuse the V1 runner for
/// it and 0.34 refuses the variable (an error at the newest release; 0.28 drafted DFlash1
/// silently); unset, vLLM runs the V2 speculator and nothing is said (issue 30).
#[test]
fn a_dflash2_drafter_needs_the_v2_runner() {
    let spec = r#"{"method":"dflash","model":"tests/launch/models/dflash2-qwen3-8b","num_speculative_tokens":15}"#;
    let with = |env: Option<&str>| {
        let mut c: Vec<&str> = env.into_iter().collect();
        c.extend([
            "vllm",
            "serve",
            "tests/launch/models/llama3-8b-target",
            "--speculative-config",
            spec,
        ]);
        launch_json(&[], &c)
    };
    let (code, report) = with(Some("VLLM_USE_V2_MODEL_RUNNER=0"));
    assert_eq!(report["drafter_facts"]["kind"], "dflash2", "{report:#}");
    assert!(has(&report, "dflash2-v1-runner", "error"), "{report:#}");
    assert_eq!(code, 1);
    let (_, report) = with(None);
    assert!(
        !codes(&report).iter().any(|(c, _)| c == "dflash2-v1-runner"),
        "{report:#}"
    );
}

/// Issue 42: the length a line serves the target at is what the drafter's positions must cover,
/// not the target config's alone: `--max-model-len` (as vLLM reads `128k`) or an
/// `--hf-overrides` beyond a 40,960-position DFlash2 drafter is an error on vLLM 0.30 (the V2
/// runner reads past the draft's rotary cache, vllm#57941), a shorter served length clears a
/// drafter shorter than its target; SGLang's `--context-length` refuses to start the draft
/// unless its override variable raises the draft, and `--json-model-override-args` sets both.
#[test]
fn the_served_length_is_what_the_drafter_must_cover() {
    const TARGET: &str = "tests/lint/targets/Qwen3-8B";
    let fired = |report: &Value| {
        codes(report)
            .into_iter()
            .find(|(c, _)| c == "draft-max-position-short")
            .map(|(_, s)| s)
    };
    let vllm = |drafter: &str, extra: &[&str]| {
        let spec =
            format!(r#"{{"method":"dflash","model":"{drafter}","num_speculative_tokens":15}}"#);
        let mut c = vec!["vllm", "serve", TARGET, "--speculative-config", &spec];
        c.extend_from_slice(extra);
        launch_json(&["--engine", "vllm@0.30"], &c).1
    };
    let long = "tests/launch/models/dflash2-qwen3-8b";
    assert_eq!(fired(&vllm(long, &[])), None);
    let report = vllm(long, &["--max-model-len", "128k"]);
    assert_eq!(fired(&report).as_deref(), Some("error"), "{report:#}");
    let d = diagnostic(&report, "draft-max-position-short");
    assert_eq!(d["expected"], 128000, "{d:#}");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("--max-model-len 128k"),
        "{d:#}"
    );
    let report = vllm(
        long,
        &["--hf-overrides", r#"{"max_position_embeddings": 131072}"#],
    );
    assert_eq!(fired(&report).as_deref(), Some("error"), "{report:#}");
    assert_eq!(fired(&vllm(long, &["--max-model-len", "40K"])), None);
    assert_eq!(fired(&vllm(long, &["--max-model-len", "auto"])), None);

    let sglang = |env: &[&str], extra: &[&str]| {
        let mut c: Vec<&str> = env.to_vec();
        c.extend([
            "python",
            "-m",
            "sglang.launch_server",
            "--model-path",
            TARGET,
            "--speculative-algorithm",
            "DFLASH",
            "--speculative-draft-model-path",
            long,
        ]);
        c.extend_from_slice(extra);
        launch_json(&["--engine", "sglang@0.5.23"], &c).1
    };
    assert_eq!(fired(&sglang(&[], &[])), None);
    let report = sglang(&[], &["--context-length", "131072"]);
    assert_eq!(fired(&report).as_deref(), Some("error"), "{report:#}");
    let raised = ["env", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"];
    assert_eq!(
        fired(&sglang(&raised, &["--context-length", "131072"])),
        None
    );
    let both = [
        "--json-model-override-args",
        r#"{"max_position_embeddings": 131072}"#,
    ];
    assert_eq!(fired(&sglang(&[], &both)), None);
}

/// z-lab/dflash README.md@44947fb "SGLang", pointed at the Qwen3.5-27B drafter in the cache and
/// pinned; `extra` flags added.
fn zlab_sglang(extra: &[&str]) -> Vec<String> {
    let mut c: Vec<String> = [
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "Qwen/Qwen3.5-27B",
        "--speculative-algorithm",
        "DFLASH",
        "--speculative-draft-model-path",
        "z-lab/Qwen3.5-27B-DFlash",
        "--speculative-draft-model-revision",
        SHA,
        "--tp-size",
        "1",
        "--mem-fraction-static",
        "0.75",
        "--trust-remote-code",
    ]
    .map(String::from)
    .to_vec();
    c.extend(extra.iter().map(|s| s.to_string()));
    c
}

/// One case per SGLang DFLASH rule; the README's own flags fire nothing.
#[test]
fn each_sglang_dflash_rule_fires_on_its_own_case() {
    let (code, report) = launch_json(
        &[],
        &strs(&zlab_sglang(&["--speculative-num-draft-tokens", "16"])),
    );
    assert_eq!((code, codes(&report)), (0, vec![]), "{report:#}");
    assert_eq!(report["assumed"]["engine"], "sglang");
    let cases: &[(&[&str], &str, &str, i32)] = &[
        (
            &[
                "--speculative-num-draft-tokens",
                "16",
                "--speculative-dflash-block-size",
                "8",
            ],
            "launch-sglang-block-size-conflict",
            "error",
            1,
        ),
        (
            &["--speculative-num-draft-tokens", "8"],
            "num-draft-tokens-mismatch",
            "warning",
            0,
        ),
        (
            &["--speculative-dflash-draft-window-size", "8"],
            "launch-sglang-window-too-small",
            "error",
            1,
        ),
    ];
    for (extra, code, severity, exit) in cases {
        let (got, report) = launch_json(&[], &strs(&zlab_sglang(extra)));
        assert_eq!(
            codes(&report),
            vec![(code.to_string(), severity.to_string())],
            "{extra:?}: {report:#}"
        );
        assert_eq!(got, *exit, "{extra:?}");
    }
    // DFLASH without a drafter path: SGLang refuses to start.
    let (code, report) = launch_json(
        &[],
        &[
            "python3",
            "-m",
            "sglang.launch_server",
            "--model-path",
            "Qwen/Qwen3.5-27B",
            "--speculative-algorithm",
            "DFLASH",
        ],
    );
    assert!(
        has(&report, "launch-drafter-missing", "error"),
        "{report:#}"
    );
    assert_eq!(code, 1);
}

/// SGLang docs/advanced_features/speculative_decoding.md@067ad4d EAGLE examples: as written they
/// fire no arithmetic rule; each change fires its own. Their drafters are not in the cache, so
/// every case also says the drafter could not be read (a warning, not a crash).
#[test]
fn each_sglang_eagle_rule_fires_on_its_own_case() {
    let docs = |algorithm: &str, draft: &str, flags: &[&str]| -> Vec<String> {
        let mut c: Vec<String> = [
            "python3",
            "-m",
            "sglang.launch_server",
            "--model",
            "meta-llama/Meta-Llama-3.1-8B-Instruct",
            "--speculative-algorithm",
            algorithm,
            "--speculative-draft-model-path",
            draft,
        ]
        .map(String::from)
        .to_vec();
        c.extend(flags.iter().map(|s| s.to_string()));
        c.extend(["--mem-fraction-static", "0.7", "--cuda-graph-max-bs", "8"].map(String::from));
        c
    };
    let eagle3 = "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B";
    let arithmetic = |r: &Value| -> Vec<(String, String)> {
        codes(r)
            .into_iter()
            .filter(|(c, _)| c.starts_with("launch-sglang-eagle"))
            .collect()
    };
    // The EAGLE-3 example as written (steps 3, topk 4, draft tokens 16) and the MTP example
    // (steps 1, topk 1, draft tokens 2).
    for flags in [
        &[
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "4",
            "--speculative-num-draft-tokens",
            "16",
        ][..],
        &[
            "--speculative-num-steps",
            "1",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "2",
        ][..],
    ] {
        let (code, report) = launch_json(&[], &strs(&docs("EAGLE3", eagle3, flags)));
        assert_eq!(arithmetic(&report), vec![], "{flags:?}");
        assert!(has(&report, "launch-drafter-unavailable", "warning"));
        assert!(diagnostic(&report, "launch-drafter-unavailable")["message"]
            .as_str()
            .unwrap()
            .contains(eagle3));
        assert_eq!(code, 0);
    }
    let cases: &[(&[&str], &str, &str, i32)] = &[
        // The EAGLE-3 example without --speculative-num-steps.
        (
            &[
                "--speculative-eagle-topk",
                "4",
                "--speculative-num-draft-tokens",
                "16",
            ],
            "launch-sglang-eagle-partial",
            "error",
            1,
        ),
        // The MTP example with 4 draft tokens for a chain of 1 step.
        (
            &[
                "--speculative-num-steps",
                "1",
                "--speculative-eagle-topk",
                "1",
                "--speculative-num-draft-tokens",
                "4",
            ],
            "launch-sglang-eagle-chain",
            "warning",
            0,
        ),
        // The EAGLE-3 example with 1 step: 15 drafted tokens from a tree of at most 4.
        (
            &[
                "--speculative-num-steps",
                "1",
                "--speculative-eagle-topk",
                "4",
                "--speculative-num-draft-tokens",
                "16",
            ],
            "launch-sglang-eagle-tree",
            "warning",
            0,
        ),
    ];
    for (flags, code, severity, exit) in cases {
        let (got, report) = launch_json(&[], &strs(&docs("EAGLE3", eagle3, flags)));
        assert_eq!(
            arithmetic(&report),
            vec![(code.to_string(), severity.to_string())],
            "{flags:?}"
        );
        assert_eq!(got, *exit, "{flags:?}");
    }
}

/// launch-sglang-token-map: the SGLang docs' FR-Spec example without its
/// --speculative-token-map, for an EAGLE-2 head with a 32768-id output layer on a 128256-id
/// Llama-3 target (local copies given with --drafter / --target); and a token map given to
/// EAGLE-3, which SGLang ignores (info).
#[test]
fn token_map_rule() {
    let cmd = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--model",
        "meta-llama/Meta-Llama-3-8B-Instruct",
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-draft-model-path",
        "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "4",
        "--speculative-num-draft-tokens",
        "16",
    ];
    let local = [
        "--drafter",
        "tests/launch/models/eagle2-llama3-truncated",
        "--target",
        "tests/launch/models/llama3-8b-target",
    ];
    let (code, report) = launch_json(&local, &cmd);
    assert!(
        has(&report, "launch-sglang-token-map", "warning"),
        "{report:#}"
    );
    assert_eq!(report["drafter"]["note"], "--drafter");
    // --drafter only says where to read a copy: the engine still loads the unpinned Hub repo.
    assert!(
        has(&report, "launch-revision-unpinned", "warning"),
        "{report:#}"
    );
    assert_eq!(code, 0);
    let mut with_map = cmd.to_vec();
    with_map.extend([
        "--speculative-token-map",
        "thunlp/LLaMA3-Instruct-8B-FR-Spec/freq_32768.pt",
    ]);
    let (_, report) = launch_json(&local, &with_map);
    assert!(
        !has(&report, "launch-sglang-token-map", "warning"),
        "{report:#}"
    );
    let eagle3: Vec<&str> = with_map
        .iter()
        .map(|w| if *w == "EAGLE" { "EAGLE3" } else { w })
        .collect();
    let (_, report) = launch_json(&local, &eagle3);
    assert!(
        has(&report, "launch-sglang-token-map", "info"),
        "{report:#}"
    );
}

/// A plain language model as vLLM's draft model is checked against its target (issue 31; it
/// was `launch-lint-skipped` before): a Qwen3 draft for a Llama 3 target, refused by vLLM's
/// vocab size check.
#[test]
fn a_plain_draft_model_is_checked_against_its_target() {
    let (code, report) = launch_json(
        &[],
        &[
            "vllm",
            "serve",
            "tests/launch/models/llama3-8b-target",
            "--speculative-config",
            r#"{"method": "draft_model", "model": "tests/launch/models/qwen3-0.6b-draft-lm", "num_speculative_tokens": 5}"#,
        ],
    );
    assert_eq!(
        codes(&report),
        vec![("draft-model-vocab-size-mismatch".into(), "error".into())]
    );
    assert_eq!(code, 1);
}

/// Issue 23: quantization inherited by the draft in SGLang (sglang PRs 28196, 34622), the draft
/// TP vLLM ignores (vllm issue 31345) and drafter heads the TP does not divide. The commands are
/// the SGLang docs' EAGLE-3 example and vllm issue 31345's, with local models (SOURCES.md).
#[test]
fn draft_quantization_and_parallelism() {
    let sglang = |model: &str, algorithm: &str, draft: &str, extra: &[&str]| -> Vec<String> {
        let mut c: Vec<String> = [
            "python3",
            "-m",
            "sglang.launch_server",
            "--model-path",
            model,
            "--speculative-algorithm",
            algorithm,
            "--speculative-draft-model-path",
            draft,
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ]
        .map(String::from)
        .to_vec();
        c.extend(extra.iter().map(|s| s.to_string()));
        c
    };
    let awq = "tests/launch/models/qwen3-8b-awq-target";
    let eagle = "tests/launch/models/eagle3-qwen3-8b";
    let mtp = "tests/launch/models/qwen3.5-gptq-mtp";
    let code = "draft-quant-inherited";
    // (command, severity of draft-quant-inherited or None, exit)
    let cases: Vec<(Vec<String>, Option<&str>, i32)> = vec![
        // [4] sglang PR 28196: --quantization awq, an unquantized EAGLE-3 draft, no draft flag.
        (
            sglang(awq, "EAGLE3", eagle, &["--quantization", "awq"]),
            Some("error"),
            1,
        ),
        // The documented way out.
        (
            sglang(
                awq,
                "EAGLE3",
                eagle,
                &[
                    "--quantization",
                    "awq",
                    "--speculative-draft-model-quantization",
                    "unquant",
                ],
            ),
            None,
            0,
        ),
        // Without --quantization the checkpoint's own method is not copied: nothing.
        (sglang(awq, "EAGLE3", eagle, &[]), None, 0),
        // [5] sglang PR 34622, its command: unquant is not honoured for a Qwen3.5 GPTQ MTP draft.
        (
            sglang(
                mtp,
                "NEXTN",
                mtp,
                &[
                    "--quantization",
                    "moe_wna16",
                    "--speculative-draft-model-quantization",
                    "unquant",
                ],
            ),
            Some("warning"),
            0,
        ),
    ];
    for (command, want, exit) in cases {
        let (got_exit, report) = launch_json(&[], &strs(&command));
        let got: Vec<(String, String)> = codes(&report)
            .into_iter()
            .filter(|(c, _)| c == code)
            .collect();
        assert_eq!(
            got,
            want.map_or(vec![], |w| vec![(code.to_string(), w.to_string())]),
            "{command:?}"
        );
        // One rule says it, once: lint's config rules no longer carry a copy (issue 29), so
        // `got` above holds at most one finding of the code.
        assert_eq!(got_exit, exit, "{command:?}: {:?}", codes(&report));
    }

    // [16] vllm issue 31345: draft_tensor_parallel_size 1 under TP 4 is ignored (a warning); a
    // drafter with 12 heads at TP 8 cannot be split (an error); 32/8 heads at TP 4 can.
    let vllm = |tp: &str, draft: &str| -> Vec<String> {
        [
            "vllm",
            "serve",
            awq,
            "--tensor-parallel-size",
            tp,
            "--speculative-config",
            &format!(
                r#"{{"method": "eagle3", "model": "{draft}", "draft_tensor_parallel_size": 1, "num_speculative_tokens": 3}}"#
            ),
        ]
        .map(String::from)
        .to_vec()
    };
    let (exit, report) = launch_json(&[], &strs(&vllm("4", eagle)));
    assert!(
        has(&report, "launch-draft-tp-ignored", "warning"),
        "{report:#}"
    );
    assert!(!codes(&report)
        .iter()
        .any(|(c, _)| c == "launch-draft-heads-tp"));
    assert_eq!(exit, 0);
    let (exit, report) = launch_json(
        &[],
        &strs(&vllm("8", "tests/launch/models/eagle3-qwen3-8b-12heads")),
    );
    assert!(has(&report, "launch-draft-heads-tp", "error"), "{report:#}");
    assert!(diagnostic(&report, "launch-draft-heads-tp")["message"]
        .as_str()
        .unwrap()
        .contains("12 attention heads"));
    assert_eq!(exit, 1);
    // TP 1 with draft TP 1: nothing.
    let (exit, report) = launch_json(&[], &strs(&vllm("1", eagle)));
    assert!(!codes(&report)
        .iter()
        .any(|(c, _)| c.starts_with("launch-draft-")));
    assert_eq!(exit, 0);
    // SGLang runs the draft at --tp-size too.
    let (_, report) = launch_json(
        &[],
        &strs(&sglang(
            awq,
            "EAGLE3",
            "tests/launch/models/eagle3-qwen3-8b-12heads",
            &["--tp-size", "8"],
        )),
    );
    assert!(has(&report, "launch-draft-heads-tp", "error"), "{report:#}");
}

/// Lint runs on the drafter with the engine, and a local drafter is compared with the
/// authority its target picks, as in `check`: the incident's hand-written config (local path)
/// gets the comparison's error at `target_layer_ids`, with its file and line, and lint's
/// warning for the same field is not said twice (one finding per problem). A drafter with no
/// authority gets lint's findings.
#[test]
fn lint_runs_on_the_drafter() {
    let serve = |spec: &str| {
        launch_json(
            &[],
            &[
                "vllm",
                "serve",
                "Qwen/Qwen3.6-27B",
                "--speculative-config",
                spec,
            ],
        )
        .1
    };
    let report = serve(
        r#"{"method": "dflash", "model": "fixtures/incident/Qwen3.6-27B-DFlash", "num_speculative_tokens": 15}"#,
    );
    let d = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"] == "dflash_config.target_layer_ids")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(
        (&d["code"], &d["severity"]),
        (&Value::from("changed"), &Value::from("error"))
    );
    assert_eq!(
        d["file"],
        "fixtures/incident/Qwen3.6-27B-DFlash/config.json"
    );
    assert!(d["line"].as_u64().unwrap() > 1);
    assert!(
        !has(&report, "target-layer-ids-formula", "warning"),
        "{report:#}"
    );
    assert_eq!(report["drafter"]["kind"], "local");

    let report = serve(
        r#"{"method": "dspark", "model": "tests/launch/models/dspark-qwen3-b7", "num_speculative_tokens": 7}"#,
    );
    let d = diagnostic(&report, "dspark-sample-from-anchor-implicit");
    assert_eq!(d["file"], "tests/launch/models/dspark-qwen3-b7/config.json");
    assert!(report.get("authority").is_none(), "{report:#}");
}

/// --file with a shell script: the z-lab README's SGLang launch (an export, comments, `\`
/// continuations). Its drafter is not in the cache: a warning naming the repo, not a failure.
#[test]
fn a_shell_script() {
    let (code, report) = launch_json(&["--file", "tests/launch/files/zlab-sglang.sh"], &[]);
    let l = &report["launch"];
    assert_eq!(l["engine"], "sglang");
    assert_eq!(l["target"], "Qwen/Qwen3.5-35B-A3B");
    assert_eq!(l["drafter"], "z-lab/Qwen3.5-35B-A3B-DFlash");
    assert_eq!(l["sglang"]["num_draft_tokens"], 16);
    assert_eq!(
        l["env"],
        serde_json::json!([{"name": "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "value": "1"}])
    );
    assert_eq!(report["file"], "tests/launch/files/zlab-sglang.sh");
    let d = diagnostic(&report, "launch-drafter-unavailable");
    assert!(d["message"]
        .as_str()
        .unwrap()
        .contains("z-lab/Qwen3.5-35B-A3B-DFlash"));
    assert_eq!(
        (d["line"].clone(), d["column"].clone()),
        (serde_json::json!(12), serde_json::json!(36))
    );
    // The unpinned drafter is located on its line of the script.
    let d = diagnostic(&report, "launch-revision-unpinned");
    assert_eq!(d["file"], "tests/launch/files/zlab-sglang.sh");
    assert_eq!(
        (d["line"].clone(), d["column"].clone()),
        (serde_json::json!(12), serde_json::json!(5))
    );
    assert_eq!(code, 0);
}

/// The incident's launch line (tests/launch/files/incident.sh: the hand-guessed drafter served
/// behind Qwen3.6-27B): the drafter is compared with the authority its target picks, as `check`
/// compares it, and the launch fails with the incident's five errors (it passed before: launch
/// linted the drafter but never compared it).
#[test]
fn the_incident_launch_fails_with_its_five_errors() {
    let (code, report) = launch_json(&["--file", "tests/launch/files/incident.sh"], &[]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        report["authority"],
        "built-in snapshot of z-lab/Qwen3.6-27B-DFlash (not the live Hub)"
    );
    let errors: Vec<(String, String)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("changed", "dflash_config.mask_token_id"),
        ("changed", "dflash_config.target_layer_ids"),
        ("changed", "layer_types"),
        ("changed", "use_sliding_window"),
        ("only-authority", "sliding_window"),
    ];
    assert_eq!(
        errors,
        expected
            .iter()
            .map(|(c, p)| (c.to_string(), p.to_string()))
            .collect::<Vec<_>>()
    );
    assert_eq!(report["summary"]["errors"], 5);
}

/// --file with a Dockerfile: ENV, and CMD in exec form appended to the vLLM image's entrypoint;
/// the finding points at the line of the value in the Dockerfile.
#[test]
fn a_dockerfile() {
    let (code, report) = launch_json(&["--file", "tests/launch/files/Dockerfile"], &[]);
    assert_eq!(
        codes(&report),
        vec![("num-speculative-tokens-too-large".into(), "warning".into())]
    );
    let d = diagnostic(&report, "num-speculative-tokens-too-large");
    assert_eq!(d["line"], 6);
    assert_eq!(
        report["launch"]["env"][0]["name"],
        "VLLM_USE_V2_MODEL_RUNNER"
    );
    assert_eq!(code, 0);
}

/// --file with a docker-compose file: `command:` as a list, `environment:` as a map; the
/// secret in its environment never reaches the output.
#[test]
fn a_compose_file() {
    let (code, out, err) = launch(
        &[
            "--format",
            "json",
            "--file",
            "tests/launch/files/docker-compose.yml",
        ],
        &[],
    );
    assert!(err.is_empty(), "{err}");
    assert!(!out.contains("hf_SENTINELlaunchTOKEN"), "token leaked");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert!(has(&report, "mixed-attention-vllm", "error"), "{report:#}");
    assert_eq!(diagnostic(&report, "mixed-attention-vllm")["line"], 7);
    assert_eq!(report["launch"]["max_num_seqs"], 64);
    assert_eq!(code, 1);
    let (_, human, _) = launch(
        &[
            "--color",
            "never",
            "--file",
            "tests/launch/files/docker-compose.yml",
        ],
        &[],
    );
    assert!(human.contains("HF_TOKEN=<redacted>"), "{human}");
    assert!(!human.contains("hf_SENTINEL"), "token leaked");
}

/// Bad input exits 2 with a message that says what and where, and writes nothing to stdout.
#[test]
fn bad_input_exits_2() {
    let cases: &[(&[&str], &[&str], &str)] = &[
        (
            &["--file", "tests/launch/files/unbalanced.sh"],
            &[],
            "unbalanced quote in tests/launch/files/unbalanced.sh:2",
        ),
        (
            &[],
            &["vllm serve M --speculative-config '{\"method\": \"dflash\"}"],
            "unbalanced quote",
        ),
        (
            &[],
            &[
                "vllm",
                "serve",
                "M",
                "--speculative-config",
                "{\"method\": dflash}",
            ],
            "--speculative-config is not valid JSON",
        ),
        (
            &[],
            &["trtllm-serve", "Qwen/Qwen3-8B", "--backend", "pytorch"],
            // A TensorRT-LLM row since issue 39: without its options file nothing speculates.
            "configures no speculative decoding (no --extra_llm_api_options file)",
        ),
        (&[], &["echo", "hello"], "no vLLM, SGLang, "),
        (
            &[],
            &["vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "8192"],
            "configures no speculative decoding",
        ),
        (
            &[],
            &[
                "vllm",
                "serve",
                "M",
                "--speculative-config",
                "{}",
                "--max-num-seqs",
                "many",
            ],
            "--max-num-seqs \"many\" is not a non-negative integer",
        ),
        (&[], &[], "no engine command given"),
    ];
    for (flags, cmd, message) in cases {
        let (code, out, err) = if cmd.is_empty() && flags.is_empty() {
            let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
                .arg("launch")
                .output()
                .unwrap();
            (
                out.status.code().unwrap(),
                String::from_utf8(out.stdout).unwrap(),
                String::from_utf8(out.stderr).unwrap(),
            )
        } else {
            launch(flags, cmd)
        };
        assert_eq!(code, 2, "{cmd:?}: {out}{err}");
        assert!(out.is_empty(), "{cmd:?}: {out}");
        assert!(err.contains(message), "{cmd:?}: {err}");
    }
}

/// The other entrypoints: `python -m vllm.entrypoints.openai.api_server --model`, `vllm serve
/// --model` (vllm-project/vllm-xpu-kernels#569, a validated DFlash2 command), and `docker run`
/// of the vLLM image with `-e` environment.
#[test]
fn other_vllm_entrypoints() {
    let (_, report) = launch_json(
        &[],
        &[
            "vllm serve --model Qwen/Qwen3.8-27B-FP8 --enforce-eager --host 0.0.0.0 --port 8037 --trust-remote-code  \
             --no-enable-prefix-caching   --tensor-parallel-size 4  --max-model-len 8192 --max-num-batched-tokens 8192  \
             --gpu-memory-util 0.9  --speculative-config '{\"method\": \"dflash\", \"model\": \"z-lab/Qwen3.8-27B-DFlash2\", \"num_speculative_tokens\": 3}'",
        ],
    );
    assert_eq!(report["launch"]["target"], "Qwen/Qwen3.8-27B-FP8");
    assert_eq!(report["launch"]["drafter"], "z-lab/Qwen3.8-27B-DFlash2");
    assert_eq!(report["drafter"]["kind"], "unavailable");
    assert_eq!(report["target"]["kind"], "unavailable");

    let (_, report) = launch_json(
        &[],
        &[
            "python",
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            "Qwen/Qwen3.5-27B",
            "--speculative-config",
            &pinned(ZLAB_SPEC),
        ],
    );
    assert_eq!(
        report["launch"]["entrypoint"],
        "python -m vllm.entrypoints.openai.api_server"
    );
    assert_eq!(report["drafter"]["kind"], "hub");
    assert_eq!(codes(&report), vec![]);

    let (code, report) = launch_json(
        &[],
        &[
            "docker",
            "run",
            "--gpus",
            "all",
            "-e",
            "VLLM_USE_V2_MODEL_RUNNER=0",
            "vllm/vllm-openai:latest",
            "Qwen/Qwen3.6-27B",
            "--speculative-config",
            &pinned(&ZLAB_SPEC.replace("3.5", "3.6")),
        ],
    );
    assert!(has(&report, "mixed-attention-vllm", "error"), "{report:#}");
    assert_eq!(code, 1);
}

/// A drafter on the Hub, asked now (an in-process Hub on 127.0.0.1): located at the commit the
/// Hub answered; a target the Hub does not have is a warning naming it; a Hub that is down is a
/// warning naming the drafter, and the command still exits 0 or 1, never crashes.
#[test]
fn drafters_on_a_live_hub_and_a_dead_one() {
    use support::{dead_endpoint, FakeRepo, HubServer};
    let server = HubServer::start();
    let mut repo = FakeRepo::default();
    let sha = repo.commit(&[(
        "config.json",
        &std::fs::read("crates/core/snapshots/z-lab__Qwen3.5-27B-DFlash.json").unwrap(),
    )]);
    server.add_repo("z-lab/Qwen3.5-27B-DFlash", repo);
    let run = |endpoint: &str| {
        let cache = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
            .args([
                "launch",
                "--format",
                "json",
                "--timeout",
                "2",
                "--endpoint",
                endpoint,
            ])
            .arg("--cache-dir")
            .arg(cache.path())
            .arg("--")
            .args(zlab_vllm(ZLAB_SPEC))
            .env_remove("HF_HUB_OFFLINE")
            .env_remove("HF_TOKEN")
            .env("HOME", "/nonexistent-home")
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code().unwrap(), report)
    };
    let (code, report) = run(&server.url);
    assert_eq!(report["drafter"]["kind"], "hub");
    assert_eq!(report["drafter"]["freshness"], "hub");
    assert_eq!(report["drafter"]["sha"], sha.as_str());
    assert_eq!(
        diagnostic(&report, "launch-revision-unpinned")["expected"],
        sha.as_str()
    );
    let target = diagnostic(&report, "launch-target-unavailable");
    assert!(
        target["message"]
            .as_str()
            .unwrap()
            .contains("Qwen/Qwen3.5-27B"),
        "{target}"
    );
    assert_eq!(code, 0);

    let (code, report) = run(&dead_endpoint());
    let d = diagnostic(&report, "launch-drafter-unavailable");
    assert!(d["message"]
        .as_str()
        .unwrap()
        .contains("z-lab/Qwen3.5-27B-DFlash"));
    assert_eq!(report["drafter"]["kind"], "unavailable");
    assert!(report["not_checked"]
        .to_string()
        .contains("drafter's config.json could not be read"));
    assert_eq!(code, 0);
}

/// Every launch code is declared with a source, and `LaunchCode::ALL` lists them.
#[test]
fn launch_codes_cite_sources() {
    for c in dflash_check::launch::LaunchCode::ALL {
        assert!(c.as_str().starts_with("launch-"));
        // The source is rendered from evidence/evidence.toml, never written beside the rule.
        assert!(!dflash_check::evidence::source_text(c.as_str()).is_empty());
    }
    assert!(Path::new("tests/launch/SOURCES.md").is_file());
}

/// Issue 32: the window check is cited where SGLang 0.5.23 has it (speculative_hook.py
/// 427-434), not in server_args.py.
#[test]
fn the_window_check_cites_the_release_lines() {
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["explain", "launch-sglang-window-too-small"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.contains("speculative_hook.py@sglang==0.5.23:427-434")
            && !out.contains("server_args.py"),
        "{out}"
    );
}

/// docs/launch.md lists every launch code with its severity.
#[test]
fn the_doc_lists_every_launch_code() {
    let doc = std::fs::read_to_string("docs/launch.md").unwrap();
    for c in dflash_check::launch::LaunchCode::ALL {
        let row = format!(
            "| `{}` | {} |",
            c.as_str(),
            dflash_check::launch::info(*c).severity
        );
        assert!(doc.contains(&row), "docs/launch.md lacks {row}");
    }
}

/// The "Before and after deploy" example of docs/commands.md prints exactly what it shows.
#[test]
fn the_commands_doc_example_is_what_the_binary_prints() {
    let (code, out, err) = launch(
        &[
            "--color",
            "never",
            "--target",
            "fixtures/targets/Qwen3.6-27B",
        ],
        &[
            "vllm",
            "serve",
            "Qwen/Qwen3.6-27B",
            "--speculative-config",
            r#"{"method": "dflash", "model": "fixtures/incident/Qwen3.6-27B-DFlash", "num_speculative_tokens": 15}"#,
        ],
    );
    // The drafter differs from the authority its target picks: five errors, exit 1.
    assert_eq!((code, err.as_str()), (1, ""));
    let doc = std::fs::read_to_string("docs/commands.md").unwrap();
    assert!(
        doc.contains(&format!("```text\n{out}```")),
        "docs/commands.md's launch example differs from:\n{out}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Arbitrary text as a pasted command or as a script, Dockerfile or compose file never
    /// panics: it parses or it is an error with a message.
    #[test]
    fn arbitrary_input_never_panics(text in "(vllm serve |python -m sglang.launch_server |FROM |services:\n  a:\n    command: |--[a-z-]{1,12}[ =]|--speculative-(num-steps|eagle-topk|num-draft-tokens|algorithm|dflash-block-size) |(EAGLE|DFLASH|1|18446744073709551615) |--speculative-config '\\{\"num_speculative_tokens\": 18446744073709551615, \"method\": \"dflash\"\\}' |--max-model-len (128k|1.5K|99999999999999999999T|auto|-1) |--context-length 0 |--hf-overrides '\\{\"max_position_embeddings\": 18446744073709551615\\}' |[-{}\"' \\\\$=\n\t:\\[\\],a-zA-Z0-9_.]){0,40}") {
        match dflash_check::launch::parse_input(std::slice::from_ref(&text), None) {
            Err(e) => proptest::prop_assert!(!e.message.is_empty()),
            // The rules run on whatever parsed (no Hub; paths are only read).
            Ok((launch, notes)) => {
                let _ = launch.engine.code().served_length(&launch);
                let options = dflash_check::launch::CheckOptions::default();
                if let Err(e) = dflash_check::launch::check(launch, notes, &options) {
                    proptest::prop_assert!(!e.message.is_empty());
                }
            }
        }
        for name in ["run.sh", "Dockerfile", "docker-compose.yml"] {
            if let Err(e) = dflash_check::launch::parse_input(&[], Some((name, &text))) {
                proptest::prop_assert!(!e.message.is_empty());
            }
        }
    }
}

/// Issue 23, class 5: a chat template other than the target's own (Luce-Org/lucebox PR 293)
/// and a server-wide thinking default (z-lab/dflash issue 60) are warnings under each engine.
#[test]
fn chat_template_overrides_and_thinking_defaults() {
    let vllm = |extra: &[&str]| {
        let mut c = zlab_vllm(&pinned(ZLAB_SPEC));
        c.extend(extra.iter().map(|s| s.to_string()));
        c
    };
    // [lucebox#293] vLLM --chat-template.
    let (code, report) = launch_json(&[], &strs(&vllm(&["--chat-template", "./no-think.jinja"])));
    assert_eq!(
        codes(&report),
        vec![(
            "launch-chat-template-override".to_string(),
            "warning".to_string()
        )],
        "{report:#}"
    );
    assert_eq!(code, 0);
    assert!(
        diagnostic(&report, "launch-chat-template-override")["message"]
            .as_str()
            .unwrap()
            .contains("./no-think.jinja")
    );
    // [lucebox#293] SGLang --chat-template.
    let (code, report) = launch_json(
        &[],
        &strs(&zlab_sglang(&["--chat-template", "qwen3-no-think.jinja"])),
    );
    assert!(
        has(&report, "launch-chat-template-override", "warning"),
        "{report:#}"
    );
    assert_eq!(code, 0);
    // [dflash#60] vLLM --default-chat-template-kwargs with enable_thinking (and the alias).
    for kwargs in [r#"{"enable_thinking": false}"#, r#"{"thinking": true}"#] {
        let (code, report) = launch_json(
            &[],
            &strs(&vllm(&["--default-chat-template-kwargs", kwargs])),
        );
        assert_eq!(
            codes(&report),
            vec![("launch-thinking-default".to_string(), "warning".to_string())],
            "{kwargs}: {report:#}"
        );
        assert_eq!(code, 0);
    }
    // [dflash#60] SGLang's flag of the same name.
    let (code, report) = launch_json(
        &[],
        &strs(&zlab_sglang(&[
            "--default-chat-template-kwargs",
            r#"{"enable_thinking": false}"#,
        ])),
    );
    assert!(
        has(&report, "launch-thinking-default", "warning"),
        "{report:#}"
    );
    assert_eq!(code, 0);
    // Other kwargs are not about thinking; --deny warnings makes the override fail.
    let (_, report) = launch_json(
        &[],
        &strs(&vllm(&[
            "--default-chat-template-kwargs",
            r#"{"reasoning_effort": "low"}"#,
        ])),
    );
    assert_eq!(codes(&report), Vec::<(String, String)>::new(), "{report:#}");
    let (code, _) = launch_json(
        &["--deny", "warnings"],
        &strs(&vllm(&["--chat-template", "t.jinja"])),
    );
    assert_eq!(code, 1);
}

/// The drafter's family comes from the one family table, so launch names the same engine
/// method as lint does (issue 29). A Domino drafter: SGLang serves it with DFLASH, vLLM has no
/// Domino method (launch used to ask vLLM for `dflash`); an EAGLE-3 head accepts vLLM's
/// `eagle`, as lint does; and the JSON names the family (`domino`, formerly `dflash`).
#[test]
fn launch_reads_the_family_table() {
    let domino = [
        "--drafter",
        "tests/fixtures/real-configs/sgl-project__SpecForge-qwen3-8b-domino",
    ];
    let vllm = [
        "vllm",
        "serve",
        "Qwen/Qwen3-8B",
        "--speculative-config",
        r#"{"method": "eagle3", "model": "sgl-project/domino@0123456789abcdef0123456789abcdef01234567", "num_speculative_tokens": 15}"#,
    ];
    let (_, report) = launch_json(&domino, &vllm);
    assert_eq!(report["drafter_facts"]["kind"], "domino", "{report:#}");
    assert!(
        !codes(&report)
            .iter()
            .any(|(c, _)| c == "speculative-config-method"),
        "{report:#}"
    );
    let sglang = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "Qwen/Qwen3-8B",
        "--speculative-algorithm",
        "EAGLE3",
        "--speculative-draft-model-path",
        "sgl-project/domino",
    ];
    let (_, report) = launch_json(&domino, &sglang);
    let d = diagnostic(&report, "speculative-config-method");
    assert_eq!(d["expected"], "DFLASH", "{report:#}");
    let eagle3 = ["--drafter", "tests/launch/models/eagle3-qwen3-8b"];
    let eagle = [
        "vllm",
        "serve",
        "Qwen/Qwen3-8B",
        "--speculative-config",
        r#"{"method": "eagle", "model": "a/b@0123456789abcdef0123456789abcdef01234567", "num_speculative_tokens": 3}"#,
    ];
    let (_, report) = launch_json(&eagle3, &eagle);
    assert_eq!(report["drafter_facts"]["kind"], "eagle3", "{report:#}");
    assert!(
        !codes(&report)
            .iter()
            .any(|(c, _)| c == "speculative-config-method"),
        "{report:#}"
    );
}
