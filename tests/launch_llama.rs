//! `launch` on llama.cpp and koboldcpp lines, end to end, against GGUF files written by
//! llama.cpp's own writer (the `gguf` package; `tests/gguf/generate.py`): the draft's
//! vocabulary compared with the target's by token text, and the llama.cpp rules read at
//! 0c1e570. On main before this, every one of these lines was "unknown engine `llama-server`"
//! (exit 2).
//!
//! The fixtures are generated, not committed (`scripts/weights-setup.sh`); without them each
//! test says "skipped" and passes, except under `CI=true`, where it fails.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn fixtures(test: &str) -> Option<PathBuf> {
    common::gguf_fixtures(test, "target-qwen3.gguf")
}

/// `launch --format json -- WORDS`: the exit code and the findings as (code, severity).
fn launch(words: &[String]) -> (i32, Vec<(String, String)>, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["launch", "--format", "json", "--"])
        .args(words)
        // Local files only: a Hub repo the line names is read from the cache, never the network.
        .env("HF_HUB_OFFLINE", "1")
        .env(
            "HF_HUB_CACHE",
            std::env::temp_dir().join("dflash-launch-llama-empty-cache"),
        )
        .output()
        .expect("runs");
    let code = out.status.code().unwrap_or(-1);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "not JSON (exit {code}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let findings = json["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or_default().to_string(),
                d["severity"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    (code, findings, json)
}

fn line(dir: &Path, text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| match w.strip_prefix('@') {
            Some(file) => dir.join(file).display().to_string(),
            None => w.to_string(),
        })
        .collect()
}

fn pair(code: &str, severity: &str) -> (String, String) {
    (code.to_string(), severity.to_string())
}

#[test]
fn a_compatible_draft_with_its_type_passes() {
    let Some(dir) = fixtures("a_compatible_draft_with_its_type_passes") else {
        return;
    };
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3.gguf -md @draft-qwen3.gguf --spec-type draft-simple --spec-draft-n-max 8",
    ));
    assert_eq!((code, found), (0, vec![]), "{json:#}");
    assert_eq!(json["launch"]["engine"], "llama.cpp");
    assert_eq!(json["drafter"]["kind"], "local");
}

#[test]
fn a_line_of_the_older_docs_is_refused_and_would_not_draft() {
    let Some(dir) = fixtures("a_line_of_the_older_docs_is_refused_and_would_not_draft") else {
        return;
    };
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3.gguf -md @draft-qwen3.gguf --draft-max 16 -cd 4096",
    ));
    assert_eq!(code, 1, "{json:#}");
    assert_eq!(
        found,
        vec![
            pair("launch-llama-flag-removed", "error"),
            pair("launch-llama-flag-removed", "error"),
            pair("launch-llama-draft-not-used", "error"),
        ]
    );
}

#[test]
fn vocabularies_are_compared_by_token_text() {
    let Some(dir) = fixtures("vocabularies_are_compared_by_token_text") else {
        return;
    };
    // A SentencePiece Llama draft for a byte-level BPE Qwen target: type, text, bos all differ.
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3.gguf -md @draft-llama-spm.gguf --spec-type draft-simple",
    ));
    assert_eq!(code, 1);
    assert_eq!(
        found,
        vec![
            pair("draft-model-vocab-mismatch", "error"),
            pair("draft-model-tokenizer-type-mismatch", "error"),
            pair("draft-model-special-tokens-mismatch", "error"),
            pair("draft-model-pre-tokenizer-mismatch", "info"),
        ],
        "{json:#}"
    );
    // Same type, same size, ten ids of other text: the first ones named on both sides.
    let (code, found, json) = launch(&line(
        &dir,
        "koboldcpp --model @target-qwen3.gguf --draftmodel @draft-other-text.gguf --draftamount 8",
    ));
    assert_eq!(code, 1);
    assert_eq!(found, vec![pair("draft-model-vocab-mismatch", "error")]);
    let message = json["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("10 ids have other text: 100 \"other0\" here, \"tok100\" in the target"),
        "{message}"
    );
    assert!(message.contains("koboldcpp 1.115"), "{message}");
    // 64 more tokens, the same text: llama.cpp allows 128; a warning, exit 0.
    let (code, found, _) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3.gguf -md @draft-wider.gguf --spec-type draft-simple",
    ));
    assert_eq!(
        (code, found),
        (0, vec![pair("draft-model-vocab-mismatch", "warning")])
    );
}

#[test]
fn a_head_is_typed_by_its_metadata() {
    let Some(dir) = fixtures("a_head_is_typed_by_its_metadata") else {
        return;
    };
    // A DFlash GGUF needs no --spec-type and has no vocabulary of its own to compare (its target
    // layers, up to 34, fit the 36-block target: see a_dflash_drafts_target_layers); without
    // --spec-draft-n-max it drafts llama.cpp's default 3 of the 15 its block of 16 allows.
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3-36.gguf -md @dflash.gguf",
    ));
    assert_eq!(
        (code, found),
        (0, vec![pair("launch-llama-k-block", "info")])
    );
    assert_eq!(json["diagnostics"][0]["expected"], 15);
    let (code, found, _) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3-36.gguf -md @dflash.gguf --spec-draft-n-max 15",
    ));
    assert_eq!((code, found), (0, vec![]));
    // draft-simple on a DFlash head contradicts its metadata.
    let (code, found, _) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3-36.gguf -md @dflash.gguf --spec-type draft-simple",
    ));
    assert_eq!(
        (code, found),
        (0, vec![pair("launch-llama-spec-type-draft", "warning")])
    );
}

#[test]
fn draft_mtp_needs_the_targets_mtp_layers() {
    let Some(dir) = fixtures("draft_mtp_needs_the_targets_mtp_layers") else {
        return;
    };
    // A plain target has no nextn_predict_layers: llama-server would not start.
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3.gguf --spec-type draft-mtp --spec-draft-n-max 3",
    ));
    assert_eq!(code, 1, "{json:#}");
    assert_eq!(found, vec![pair("launch-llama-mtp-head-missing", "error")]);
    // A Qwen3.5 GGUF converted with its MTP block: clean.
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @mtp-qwen35.gguf --spec-type draft-mtp --spec-draft-n-max 3",
    ));
    assert_eq!((code, found), (0, vec![]), "{json:#}");
}

/// A DSpark GGUF (block 8, no confidence head): --spec-draft-p-min above 0 makes llama.cpp
/// throw at start; a K above the block is clamped (info).
#[test]
fn a_dspark_draft_without_its_confidence_head() {
    let Some(dir) = fixtures("a_dspark_draft_without_its_confidence_head") else {
        return;
    };
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3-36.gguf -md @dspark-no-confidence.gguf --spec-draft-p-min 0.5 --spec-draft-n-max 12",
    ));
    assert_eq!(code, 1, "{json:#}");
    assert_eq!(
        found,
        vec![
            pair("launch-llama-dspark-confidence", "error"),
            pair("launch-llama-k-block", "info"),
        ]
    );
    assert_eq!(json["diagnostics"][1]["expected"], 7, "{json:#}");
    let (code, found, _) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3-36.gguf -md @dspark-no-confidence.gguf --spec-draft-p-min 0 --spec-draft-n-max 7",
    ));
    assert_eq!((code, found), (0, vec![]));
}

/// A DFlash draft's target layers against the target GGUF's layers (FIELD row 23), and the
/// draft files llama.cpp cannot draft with: an empty conversion (ik_llama.cpp#2043) and a
/// no_vocab DSpark draft whose mask id it ignores (llama.cpp#26761). On main each of these
/// lines passed (exit 0, the K info aside).
#[test]
fn a_dflash_drafts_target_layers_and_files_llama_cpp_cannot_draft_with() {
    let Some(dir) = fixtures("a_dflash_drafts_target_layers_and_files_llama_cpp_cannot_draft_with")
    else {
        return;
    };
    let error = |code: &str| pair(code, "error");
    let range = "weights-gguf-dflash-target-layer-range";
    // Layers up to 34 on a 4-block target: an abort when the draft is set up.
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3.gguf -md @dflash.gguf --spec-draft-n-max 15",
    ));
    assert_eq!((code, found), (1, vec![error(range)]), "{json:#}");
    let message = json["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("[10, 18, 26, 34]") && message.contains("`qwen3.block_count` = 4"),
        "{message}"
    );
    // The last layer's output (4 of 4 blocks), which a qwen3 graph does not publish.
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3.gguf -md @dflash-last-layer.gguf --spec-draft-n-max 15",
    ));
    assert_eq!((code, found), (1, vec![error(range)]), "{json:#}");
    // The same draft on the 36-block target is clean (a_head_is_typed_by_its_metadata).
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3-36.gguf -md @dflash-last-layer.gguf --spec-draft-n-max 15",
    ));
    assert_eq!((code, found), (0, vec![]), "{json:#}");
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3-36.gguf -md @dflash-empty.gguf --spec-draft-n-max 15",
    ));
    assert_eq!(
        (code, found),
        (1, vec![error("weights-gguf-dflash-empty")]),
        "{json:#}"
    );
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3-36.gguf -md @dspark-no-vocab.gguf --spec-draft-n-max 8",
    ));
    assert_eq!(
        (code, found),
        (1, vec![error("weights-gguf-dflash-mask-token")]),
        "{json:#}"
    );
}

/// draft-mtp with a separate MTP GGUF: llama.cpp checks no vocabulary there (only draft-simple
/// does), so a head of another vocabulary is caught here (FIELD row 12, pocketpal-ai#876). On
/// main: exit 0, the MTP-only info alone.
#[test]
fn an_mtp_draft_of_another_vocabulary() {
    let Some(dir) = fixtures("an_mtp_draft_of_another_vocabulary") else {
        return;
    };
    let info = pair("weights-gguf-mtp-only", "info");
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @mtp-qwen35.gguf -md @mtp-only-other-vocab.gguf --spec-type draft-mtp",
    ));
    assert_eq!(
        (code, found),
        (
            1,
            vec![pair("launch-llama-mtp-draft-vocab", "error"), info.clone()]
        ),
        "{json:#}"
    );
    let message = json["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("10 ids have other text: 100 \"other0\" here, \"tok100\" in the target"),
        "{message}"
    );
    // The type inferred from the head's metadata runs it as draft-mtp too.
    let (code, found, _) = launch(&line(
        &dir,
        "llama-server -m @mtp-qwen35.gguf -md @mtp-only-other-vocab.gguf",
    ));
    assert_eq!(code, 1);
    assert!(found.contains(&pair("launch-llama-mtp-draft-vocab", "error")));
    // The control: the MTP head converted from the target.
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @mtp-qwen35.gguf -md @mtp-only.gguf --spec-type draft-mtp",
    ));
    assert_eq!((code, found), (0, vec![info]), "{json:#}");
}

#[test]
fn what_cannot_be_read_is_said_and_bad_files_are_bad_input() {
    let Some(dir) = fixtures("what_cannot_be_read_is_said_and_bad_files_are_bad_input") else {
        return;
    };
    // A draft on the Hub that cannot be had (offline, not cached): a warning, and the rules
    // that need it skipped (tests/launch_llama_hub.rs reads one that can).
    let (code, found, json) = launch(&line(
        &dir,
        "llama-server -m @target-qwen3.gguf -hfd org/Draft-GGUF:Q8_0",
    ));
    assert_eq!(code, 0, "{json:#}");
    assert_eq!(found, vec![pair("launch-drafter-unavailable", "warning")]);
    let skipped: Vec<&str> = json["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["code"].as_str())
        .collect();
    assert!(
        skipped.contains(&"launch-llama-draft-not-used"),
        "{skipped:?}"
    );
    // --drafter FILE reads a local copy instead.
    let mut words = vec![
        "--drafter".to_string(),
        dir.join("draft-qwen3.gguf").display().to_string(),
    ];
    words.extend(line(
        &dir,
        "-- llama-server -m @target-qwen3.gguf -hfd org/Draft-GGUF:Q8_0",
    ));
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["launch", "--format", "json"])
        .args(&words)
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["drafter"]["kind"], "local", "{json:#}");
    assert_eq!(
        json["diagnostics"][0]["code"],
        "launch-llama-draft-not-used"
    );
    // A file that is not GGUF is bad input: exit 2 and where.
    let bad = std::env::temp_dir().join(format!("dflash-not-gguf-{}.gguf", std::process::id()));
    std::fs::write(&bad, b"not a gguf file at all").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["launch", "--", "llama-server", "-m"])
        .arg(dir.join("target-qwen3.gguf"))
        .arg("-md")
        .arg(&bad)
        .output()
        .unwrap();
    std::fs::remove_file(&bad).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("dflash-not-gguf"), "{stderr}");
}

/// `--drafter FILE` says where the draft is for dflash-check, not for llama-server: a line that
/// names no draft model still never drafts, whatever file dflash-check was given.
#[test]
fn a_drafter_given_to_dflash_check_is_not_one_the_line_names() {
    let Some(dir) = fixtures("a_drafter_given_to_dflash_check_is_not_one_the_line_names") else {
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["launch", "--format", "json", "--drafter"])
        .arg(dir.join("dflash.gguf"))
        .args(["--", "llama-server", "-m"])
        .arg(dir.join("target-qwen3.gguf"))
        .args(["--spec-type", "draft-dflash"])
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("launch-llama-draft-type-without-model"),
        "{report}"
    );
}

#[test]
fn llama_lines_need_no_fixtures_to_be_judged() {
    // Rules of the command alone: an unknown type, a draft type with no draft model.
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let (code, found, _) = launch(&words("llama-server -m t.gguf --spec-type draft-eagle4"));
    assert_eq!(code, 1);
    assert!(found.contains(&pair("launch-llama-spec-type-unknown", "error")));
    let (code, found, _) = launch(&words("llama-server -m t.gguf --spec-type draft-dflash"));
    assert_eq!(code, 1);
    assert!(found.contains(&pair("launch-llama-draft-type-without-model", "error")));
    // Not speculative at all: nothing to check, exit 2 with what.
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["launch", "--", "llama-server", "-m", "t.gguf", "-c", "8192"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("no -md/--spec-draft-model and no --spec-type"),
        "{stderr}"
    );
}

/// `check` gates a Kubernetes manifest that starts llama-server with a draft (the same
/// discovery rule as vLLM's and SGLang's manifests), through the same llama.cpp checks; the
/// container's `/models` is read from a local directory with `--volume`, as in `launch`.
#[test]
fn check_gates_a_llama_cpp_manifest() {
    let Some(dir) = fixtures("check_gates_a_llama_cpp_manifest") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let manifest = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llama\nspec:\n  template:\n    \
         spec:\n      containers:\n        - name: server\n          image: ghcr.io/ggml-org/llama.cpp:server-cuda\n          \
         args: [\"-m\", \"/models/target-qwen3.gguf\", \"-md\", \"/models/draft-qwen3.gguf\", \"--draft-max\", \"16\"]\n";
    std::fs::write(work.path().join("llama.yaml"), manifest).unwrap();
    let check = |volume: Option<String>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dflash-check"));
        cmd.args(["check", "--format", "json"]).arg(work.path());
        if let Some(v) = volume {
            cmd.args(["--volume", &v]);
        }
        let out = cmd.env("HF_HUB_OFFLINE", "1").output().unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code(), report.to_string(), report)
    };
    // Without --volume the models are not here: the flag rule still fails the gate, and the
    // draft's rules are listed as unavailable.
    let (code, text, report) = check(None);
    assert_eq!(code, Some(1), "{report:#}");
    assert!(text.contains("launch-llama-flag-removed"), "{report:#}");
    assert!(text.contains("launch-drafter-unavailable"), "{report:#}");
    // Not a finding: only named among the rules not checked for want of the draft's header.
    let codes: Vec<&str> = report["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert!(
        !codes.contains(&"launch-llama-draft-not-used"),
        "{report:#}"
    );
    assert!(
        text.contains("the rules that need the draft's GGUF header"),
        "{report:#}"
    );
    // With the volume mapped, the draft is read: it would never draft without --spec-type.
    let (code, text, report) = check(Some(format!("/models={}", dir.display())));
    assert_eq!(code, Some(1), "{report:#}");
    assert!(text.contains("launch-llama-draft-not-used"), "{report:#}");
    assert!(!text.contains("unavailable"), "{report:#}");
}

/// `doctor` given a llama.cpp line: the vocabulary is the pairing cause; the DFlash causes
/// (mask token, layer ids, sliding window) do not apply to a GGUF draft and are not listed.
#[test]
fn doctor_on_a_llama_cpp_line() {
    let Some(dir) = fixtures("doctor_on_a_llama_cpp_line") else {
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["doctor", "--"])
        .args(line(
            &dir,
            "llama-server -m @target-qwen3.gguf -md @draft-llama-spm.gguf --spec-type draft-simple",
        ))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("1. drafter and target do not belong together"),
        "{text}"
    );
    assert!(text.contains("error[draft-model-vocab-mismatch]"), "{text}");
    assert!(!text.contains("mask token id"), "{text}");
}
