//! `launch` on TensorRT-LLM lines, end to end: `trtllm-serve MODEL --extra_llm_api_options
//! FILE.yaml`, the LLM API options file read like `--file`, its `speculative_config` judged
//! against the drafter and target like every other engine's, at the release the line states
//! (`--engine trtllm@X`, an NGC image tag) or across the default window. The two changes of
//! FIELD2 §3 are rows with both sides: `Eagle` → `Eagle3` (PR 10124) and the MTP draft length
//! (`num_nextn_predict_layers` → `max_draft_len`, PR 12341). The options files are ours
//! (tests/launch/trtllm/), the models the project's own test configs.

mod common;

use std::path::Path;
use std::process::Command;

use common::{codes, finding};
use serde_json::Value;

const EAGLE3_TARGET: &str = "tests/lint/targets/Qwen3-8B";
const MTP_TARGET: &str = "tests/launch/models/qwen3.5-gptq-mtp";

/// `launch --format json [FLAGS] -- trtllm-serve TARGET [EXTRA] --extra_llm_api_options FILE`
/// (FILE under tests/launch/trtllm/ unless absolute): the exit code and the JSON report.
fn trtllm(flags: &[&str], target: &str, options: &str, extra: &[&str]) -> (i32, Value) {
    let options = Path::new("tests/launch/trtllm").join(options);
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["launch", "--format", "json"])
        .args(flags)
        .args(["--", "trtllm-serve", target])
        .args(extra)
        .arg("--extra_llm_api_options")
        .arg(&options)
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout} {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), report)
}

fn pair(code: &str, severity: &str) -> (String, String) {
    (code.to_string(), severity.to_string())
}

#[test]
fn an_eagle3_options_file_is_clean_on_the_releases_that_name_it() {
    for flags in [
        &[][..],
        &["--engine", "trtllm@1.4"],
        &["--engine", "trtllm@1.2"],
    ] {
        let (code, report) = trtllm(flags, EAGLE3_TARGET, "eagle3.yaml", &[]);
        let errors_or_warnings: Vec<_> = codes(&report)
            .into_iter()
            .filter(|(_, s)| s != "info")
            .collect();
        assert_eq!(code, 0, "{flags:?}: {report:#}");
        assert!(
            errors_or_warnings.is_empty(),
            "{flags:?}: {errors_or_warnings:?}"
        );
        assert_eq!(report["assumed"]["engine"], "trtllm", "{report:#}");
    }
}

#[test]
fn the_eagle_alias_is_a_row_with_both_sides() {
    // 1.2: Eagle is the only EAGLE type and runs EAGLE-3 on the PyTorch backend.
    let (code, report) = trtllm(
        &["--engine", "trtllm@1.2"],
        EAGLE3_TARGET,
        "eagle-alias.yaml",
        &[],
    );
    assert_eq!(code, 0);
    assert!(
        !codes(&report)
            .iter()
            .any(|(c, _)| c == "trtllm-eagle-alias"),
        "{report:#}"
    );

    // 1.4: rebuilt as Eagle3 silently (PR 10124): a warning with the fix.
    let (code, report) = trtllm(
        &["--engine", "trtllm@1.4"],
        EAGLE3_TARGET,
        "eagle-alias.yaml",
        &[],
    );
    assert_eq!(code, 0);
    assert!(codes(&report).contains(&pair("trtllm-eagle-alias", "warning")));
    assert_eq!(finding(&report, "trtllm-eagle-alias")["expected"], "Eagle3");

    // Release not stated: judged across the window, the releases named.
    let (_, report) = trtllm(&[], EAGLE3_TARGET, "eagle-alias.yaml", &[]);
    let alias = finding(&report, "trtllm-eagle-alias");
    assert_eq!(alias["severity"], "warning");
    let releases = alias["releases"].as_str().unwrap();
    assert!(
        releases.contains("1.3–1.4") && releases.contains("not reported on 1.2"),
        "{releases}"
    );
    assert!(releases.contains("--engine trtllm@"), "{releases}");

    // On the TensorRT backend Eagle is the EAGLE-1/2 engine path: an error on every release.
    let (code, report) = trtllm(
        &["--engine", "trtllm@1.2"],
        EAGLE3_TARGET,
        "eagle-alias.yaml",
        &["--backend", "tensorrt"],
    );
    assert_eq!(code, 1, "{report:#}");
    assert!(codes(&report).contains(&pair("trtllm-eagle-alias", "error")));
}

#[test]
fn the_mtp_draft_length_is_a_row_with_both_sides() {
    // max_draft_len alone: overwritten by num_nextn_predict_layers (default 1) up to 1.2.
    let (code, report) = trtllm(
        &["--engine", "trtllm@1.2"],
        MTP_TARGET,
        "mtp-max-draft-len.yaml",
        &[],
    );
    assert_eq!(code, 0);
    assert!(
        codes(&report).contains(&pair("trtllm-mtp-draft-len", "warning")),
        "{report:#}"
    );

    // From PR 12341 it is the draft length: nothing to say.
    let (code, report) = trtllm(
        &["--engine", "trtllm@1.4"],
        MTP_TARGET,
        "mtp-max-draft-len.yaml",
        &[],
    );
    assert_eq!(code, 0);
    assert!(codes(&report).is_empty(), "{report:#}");
    assert_eq!(report["assumed"]["version"], "1.4", "{report:#}");
}

#[test]
fn another_engines_keys_and_a_missing_draft_length_are_refused() {
    // vLLM's num_speculative_tokens: TensorRT-LLM's config classes forbid extra keys.
    let (code, report) = trtllm(
        &["--engine", "trtllm@1.4"],
        EAGLE3_TARGET,
        "vllm-keys.yaml",
        &[],
    );
    assert_eq!(code, 1);
    assert!(
        codes(&report).contains(&pair("trtllm-foreign-key", "error")),
        "{report:#}"
    );
    assert!(
        finding(&report, "trtllm-foreign-key")["message"]
            .as_str()
            .unwrap()
            .contains("num_speculative_tokens"),
        "{report:#}"
    );

    // An EAGLE-3 config without max_draft_len does not start.
    let (code, report) = trtllm(
        &["--engine", "trtllm@1.4"],
        EAGLE3_TARGET,
        "eagle3-no-draft-len.yaml",
        &[],
    );
    assert_eq!(code, 1);
    assert!(
        codes(&report).contains(&pair("trtllm-required-key", "error")),
        "{report:#}"
    );
}

#[test]
fn the_release_is_read_from_an_ngc_image_in_a_compose_file() {
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["launch", "--file", "tests/launch/trtllm/docker-compose.yml"])
        .env("HF_HUB_OFFLINE", "1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains(
            "trtllm 1.2.0rc8 (trtllm-serve; image nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc8)"
        ),
        "{stdout}"
    );
    // The options file beside the compose file was read: its type is in the header.
    assert!(stdout.contains("decoding_type Eagle3"), "{stdout}");
}

#[test]
fn a_missing_options_file_is_bad_input() {
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["launch", "--", "trtllm-serve", EAGLE3_TARGET])
        .args(["--extra_llm_api_options", "tests/launch/trtllm/absent.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("absent.yaml") && stderr.contains("does not exist"),
        "{stderr}"
    );
}

#[test]
fn an_unknown_decoding_type_is_refused_where_no_release_reads_it() {
    // DFlash is a decoding type of the newest code read, not of the 1.2 line.
    let dir = tempfile::tempdir().unwrap();
    let options = dir.path().join("dflash.yaml");
    std::fs::write(
        &options,
        "speculative_config:\n  decoding_type: DFlash\n  max_draft_len: 8\n  \
         speculative_model_dir: tests/launch/models/dflash2-qwen3-8b\n",
    )
    .unwrap();
    let run = |engine: &str| {
        let (code, report) = trtllm(
            &["--engine", engine],
            EAGLE3_TARGET,
            options.to_str().unwrap(),
            &[],
        );
        (code, codes(&report))
    };
    let (code, found) = run("trtllm@1.2");
    assert_eq!(code, 1);
    assert!(
        found.contains(&pair("engine-unsupported", "error")),
        "{found:?}"
    );
    let (_, found) = run("trtllm@1.4");
    assert!(
        !found.iter().any(|(c, _)| c == "engine-unsupported"),
        "{found:?}"
    );
}
