//! One deployment, one verdict (issue 29): the same `Deployment` built from `lint`'s flags and
//! from an engine command line gives identical findings of the deployment rules (code,
//! severity, message), on the incident drafter, its corrected config, a DSpark drafter and an
//! EAGLE-3 head, under vLLM and SGLang. Both sides are run as the commands run them:
//! `rules::lint` (what `dflash-check lint --engine …` does) and `launch::check` (what
//! `dflash-check launch` does), keeping the deployment codes.

use dflash_check::diagnostic::{Code, Diagnostic};
use dflash_check::launch::{self, CheckOptions};
use dflash_check::rules::{self, Engine, LintOptions};
use dflash_check::target::TargetContext;

const INCIDENT: &str = "fixtures/incident/Qwen3.6-27B-DFlash";
/// The incident drafter as published: 4 sliding layers and 1 full one.
const AUTHORITY: &str = "fixtures/incident/authority";
const DSPARK: &str = "tests/launch/models/dspark-qwen3-b7";
const EAGLE3: &str = "tests/launch/models/eagle3-qwen3-8b";
const DOMINO: &str = "tests/fixtures/real-configs/sgl-project__SpecForge-qwen3-8b-domino";

/// (code, severity, message) of the deployment rules' findings.
fn judged(findings: &[Diagnostic]) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = findings
        .iter()
        .filter(|d| matches!(d.code, Code::Deployment(_)))
        .map(|d| {
            (
                d.code.as_str().to_string(),
                d.severity.as_str().to_string(),
                d.message.clone(),
            )
        })
        .collect();
    out.sort();
    out
}

/// `lint DRAFTER --engine ENGINE [--speculative-config JSON] [--num-draft-tokens N]`.
fn from_lint_flags(
    drafter: &str,
    engine: Engine,
    spec: Option<&str>,
    num_draft_tokens: Option<u64>,
) -> Vec<(String, String, String)> {
    let config = dflash_check::config::load(std::path::Path::new(drafter)).unwrap();
    let options = LintOptions {
        engine: Some(engine.into()),
        speculative_config: spec.map(|s| serde_json::from_str(s).unwrap()),
        num_draft_tokens,
        ..LintOptions::default()
    };
    let report = rules::lint(&config, &options, &TargetContext::none()).unwrap();
    judged(&report.findings)
}

/// `launch -- COMMAND`, the drafter read from the local path the command names.
fn from_launch_line(command: &str) -> Vec<(String, String, String)> {
    let (parsed, notes) = launch::parse_input(&[command.to_string()], None).unwrap();
    let report = launch::check(parsed, notes, &CheckOptions::default()).unwrap();
    judged(&report.diagnostics)
}

/// The same deployment from both inputs: identical findings, and at least `want` of them.
fn same(lint: Vec<(String, String, String)>, launch: Vec<(String, String, String)>, want: &[&str]) {
    assert_eq!(lint, launch, "lint's flags and the launch line disagree");
    let codes: Vec<&str> = lint.iter().map(|(c, _, _)| c.as_str()).collect();
    for w in want {
        assert!(codes.contains(w), "expected {w} in {codes:?}");
    }
}

fn vllm_spec(method: Option<&str>, drafter: &str, k: Option<u64>) -> String {
    let mut spec = serde_json::json!({ "model": drafter });
    if let Some(m) = method {
        spec["method"] = m.into();
    }
    if let Some(k) = k {
        spec["num_speculative_tokens"] = k.into();
    }
    spec.to_string()
}

/// vLLM: the incident drafter (all full layers, block 16) with K 16 and with no K; its
/// published config (4 sliding + 1 full) with K 15, the runner variable unset.
#[test]
fn vllm_from_lint_flags_and_from_a_launch_line_agree() {
    for (drafter, method, k, want) in [
        (
            INCIDENT,
            Some("dflash"),
            Some(16),
            &["num-speculative-tokens-too-large"][..],
        ),
        (
            INCIDENT,
            Some("dflash"),
            None,
            &["num-speculative-tokens-missing"][..],
        ),
        (
            INCIDENT,
            Some("eagle3"),
            Some(15),
            &["speculative-config-method"][..],
        ),
        // Mixed sliding/full layers: vLLM 0.26+ forces the V2 runner for them (issue 30).
        (AUTHORITY, Some("dflash"), Some(15), &[][..]),
        // No method: vLLM infers it from the name, which says nothing here.
        (
            AUTHORITY,
            None,
            Some(15),
            &["speculative-config-method"][..],
        ),
        (
            EAGLE3,
            Some("dflash"),
            Some(3),
            &["speculative-config-method"][..],
        ),
        // Domino has no vLLM method (the family table: none at vLLM 002e77c; SGLang serves it
        // with DFLASH), so the method is not judged under vLLM: both inputs say nothing of it.
        (DOMINO, Some("eagle3"), Some(15), &[][..]),
    ] {
        let spec = vllm_spec(method, drafter, k);
        let lint = from_lint_flags(drafter, Engine::Vllm, Some(&spec), None);
        let line = from_launch_line(&format!(
            "vllm serve Qwen/Qwen3.6-27B --speculative-config '{spec}'"
        ));
        same(lint, line, want);
    }
}

/// A DSpark drafter (block 7, anchor sampled by default): K 7 is legal, K 8 exceeds the block,
/// and method "dflash" is the wrong proposer (a warning: the config does not write
/// `sample_from_anchor: true`, which vLLM's DFlash speculator refuses).
#[test]
fn dspark_from_lint_flags_and_from_a_launch_line_agree() {
    for (method, k, want) in [
        ("dspark", 7, &[][..]),
        ("dspark", 8, &["num-speculative-tokens-too-large"][..]),
        ("dflash", 7, &["speculative-config-method"][..]),
    ] {
        let spec = vllm_spec(Some(method), DSPARK, Some(k));
        let lint = from_lint_flags(DSPARK, Engine::Vllm, Some(&spec), None);
        let line = from_launch_line(&format!(
            "vllm serve Qwen/Qwen3-8B --speculative-config '{spec}'"
        ));
        same(lint.clone(), line, want);
        if want.is_empty() {
            assert!(lint.is_empty(), "{lint:?}");
        }
        if method == "dflash" {
            assert_eq!(lint[0].1, "warning", "{lint:?}");
        }
    }
}

/// SGLang: draft tokens that differ from the incident drafter's block, and the ones that match.
#[test]
fn sglang_from_lint_flags_and_from_a_launch_line_agree() {
    for (tokens, want) in [(8, &["num-draft-tokens-mismatch"][..]), (16, &[][..])] {
        let lint = from_lint_flags(INCIDENT, Engine::Sglang, None, Some(tokens));
        let line = from_launch_line(&format!(
            "python -m sglang.launch_server --model-path Qwen/Qwen3.6-27B --speculative-algorithm DFLASH \
             --speculative-draft-model-path {INCIDENT} --speculative-num-draft-tokens {tokens}"
        ));
        same(lint.clone(), line, want);
        if want.is_empty() {
            assert!(lint.is_empty(), "{lint:?}");
        }
    }
}

/// The Deployment both builders make holds the same engine, method, K and draft tokens.
#[test]
fn the_two_builders_make_the_same_deployment() {
    let spec = vllm_spec(Some("dflash"), INCIDENT, Some(15));
    let options = LintOptions {
        engine: Some(Engine::Vllm.into()),
        speculative_config: Some(serde_json::from_str(&spec).unwrap()),
        ..LintOptions::default()
    };
    let from_flags = options.deployment(None);
    let command = format!("vllm serve T --speculative-config '{spec}'");
    let (parsed, _) = launch::parse_input(&[command], None).unwrap();
    let from_line = launch::deployment::of(&parsed, parsed.engine.into(), None);
    assert_eq!(from_flags.engine, from_line.engine);
    assert_eq!(from_flags.method, from_line.method);
    assert_eq!(from_flags.speculative_config, from_line.speculative_config);
    assert_eq!(from_flags.k(), Some(15));
    assert_eq!(from_flags.draft_tokens, from_line.draft_tokens);
    // What lint's flags cannot state is unknown there, stated by the command line.
    assert_eq!(from_flags.env, None);
    assert_eq!(from_line.env, Some(vec![]));
    assert!(from_flags.quantization.is_none() && from_line.quantization.is_some());
}

/// `explain OLD-CODE` prints the surviving code's page, saying the old name is an alias.
#[test]
fn an_old_code_explains_as_the_surviving_one() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["explain", "launch-k-exceeds-block"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(
            "`launch-k-exceeds-block` is an alias of `num-speculative-tokens-too-large` until the next release"
        ),
        "{text}"
    );
    assert!(
        text.contains("num-speculative-tokens-too-large (deployment, warning)"),
        "{text}"
    );
}
