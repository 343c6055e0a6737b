//! End-to-end tests of `dflash-check diff`: the real binary on the fixture folders.

use std::fs;

mod common;

use common::{dflash, run};

/// The incident: all five wrong fields, decoded on both sides, exit 1.
#[test]
fn incident_shows_the_five_wrong_fields_with_tokens() {
    let (code, out, _) = run(&[
        "diff",
        "fixtures/incident/Qwen3.6-27B-DFlash",
        "--against",
        "fixtures/incident/authority",
        "--target",
        "fixtures/targets/Qwen3.6-27B",
    ]);
    assert_eq!(code, 1, "{out}");
    for needle in [
        "dflash_config.mask_token_id",
        "248064 <|repo_name|> (added, not special)",
        "248070 <|audio_start|> (special)",
        "[1, 17, 33, 49, 63]",
        "[1, 16, 31, 46, 61]",
        "5× full_attention",
        "4× sliding_attention, 1× full_attention",
        "sliding_window",
        "use_sliding_window",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    let bos = out.lines().find(|l| l.contains("bos_token_id")).unwrap();
    assert!(
        bos.contains("248044 <|endoftext|> (special) here, null in the authority"),
        "{bos}"
    );
    insta::assert_snapshot!("incident_against_file", out);
}

/// With no authority named, the built-in snapshot is used, offline, and labelled as such.
#[test]
fn incident_against_builtin_snapshot_works_offline() {
    let (code, out, _) = run(&[
        "diff",
        "fixtures/incident/Qwen3.6-27B-DFlash",
        "--target",
        "fixtures/targets/Qwen3.6-27B",
    ]);
    assert_eq!(code, 1);
    assert!(
        out.contains("built-in snapshot of z-lab/Qwen3.6-27B-DFlash (not the live Hub)"),
        "{out}"
    );
    assert!(
        out.contains("target Qwen/Qwen3.6-27B (from --target fixtures/targets/Qwen3.6-27B)"),
        "{out}"
    );
    assert!(out.contains(
        "dflash-check fix fixtures/incident/Qwen3.6-27B-DFlash --snapshot z-lab/Qwen3.6-27B-DFlash"
    ));
    insta::assert_snapshot!("incident_builtin", out);
}

/// The incident matches two snapshots by shape (Qwen3.6-27B and Qwen3.5-27B drafters) and is
/// closer to the wrong one: with nothing naming the target it is reported against both, fails,
/// and no `fix` line is printed, whatever its folder is called.
#[test]
fn incident_without_target_is_reported_against_every_candidate_in_any_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let ordinary = tmp.path().join("models").join("my-drafter");
    std::fs::create_dir_all(&ordinary).unwrap();
    std::fs::copy(
        "fixtures/incident/Qwen3.6-27B-DFlash/config.json",
        ordinary.join("config.json"),
    )
    .unwrap();
    for dir in [
        ordinary.to_str().unwrap(),
        "fixtures/incident/Qwen3.6-27B-DFlash",
    ] {
        let (code, out, _) = run(&["diff", dir]);
        assert_eq!(code, 1, "{out}");
        assert!(out.contains("no single authority"), "{out}");
        assert!(
            out.contains("against built-in snapshot of z-lab/Qwen3.6-27B-DFlash"),
            "{out}"
        );
        assert!(
            out.contains("against built-in snapshot of z-lab/Qwen3.5-27B-DFlash"),
            "{out}"
        );
        assert!(!out.contains("To repair it"), "{out}");
        assert!(!out.contains("dflash-check fix"), "{out}");
        assert!(out.contains("--target hf://Qwen/Qwen3.6-27B"), "{out}");
        let (code, json, _) = run(&["diff", dir, "--format", "json"]);
        assert_eq!(code, 1);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["fix_command"], serde_json::Value::Null);
        assert_eq!(v["ambiguous"]["candidates"].as_array().unwrap().len(), 2);
        assert_eq!(v["diagnostics"][0]["code"], "authority-ambiguous");
    }
}

/// A target directory whose name holds a known target's name with a prefix or suffix
/// (`my-Qwen3.6-27B`, `qwen3.6-27b-local`) picks that target, says so, and so the authority:
/// the incident is compared with z-lab/Qwen3.6-27B-DFlash, not reported as ambiguous (issue 32).
#[test]
fn a_target_directory_named_with_a_prefix_or_suffix_picks_the_known_target() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["my-Qwen3.6-27B", "qwen3.6-27b-local"] {
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        for f in ["config.json", "tokenizer.json", "tokenizer_config.json"] {
            std::fs::copy(format!("fixtures/targets/Qwen3.6-27B/{f}"), dir.join(f)).unwrap();
        }
        let (code, out, _) = run(&[
            "diff",
            "fixtures/incident/Qwen3.6-27B-DFlash",
            "--target",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("its name holds the known target name Qwen3.6-27B"),
            "{out}"
        );
        assert!(
            out.contains("against     built-in snapshot of z-lab/Qwen3.6-27B-DFlash"),
            "{out}"
        );
        assert!(out.contains("FAIL: 5 errors, 2 warnings"), "{out}");
        assert!(!out.contains("no single authority"), "{out}");
    }
}

/// Identical files exit 0.
#[test]
fn identical_files_exit_zero() {
    let (code, out, _) = run(&[
        "diff",
        "fixtures/incident/authority",
        "--against",
        "fixtures/incident/authority/config.json",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("OK: 0 errors, 0 warnings, 0 info; identical to the authority"),
        "{out}"
    );
}

/// Flat and nested layouts of the same values exit 0 with one layout line.
#[test]
fn flat_vs_nested_is_a_layout_line_not_a_change() {
    let (code, out, _) = run(&[
        "diff",
        "fixtures/layout/flat",
        "--against",
        "fixtures/layout/nested",
    ]);
    assert_eq!(code, 0, "{out}");
    let layout_lines = out
        .lines()
        .filter(|l| l.starts_with("info[layout]"))
        .count();
    assert_eq!(layout_lines, 1, "{out}");
    assert!(!out.lines().any(|l| l.starts_with("error")), "{out}");
    assert!(
        out.contains("block_size: local flat, authority nested"),
        "{out}"
    );
    let (code, _, _) = run(&[
        "diff",
        "fixtures/layout/nested",
        "--against",
        "fixtures/layout/flat",
    ]);
    assert_eq!(code, 0);
}

/// `1e7` equals `10000000`, `0.000001` equals `1e-06`.
#[test]
fn numbers_compare_by_value() {
    let (code, out, _) = run(&[
        "diff",
        "fixtures/numbers",
        "--against",
        "fixtures/incident/authority",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("identical"), "{out}");
}

/// `"248070"` vs `248070` is a type difference.
#[test]
fn type_mismatch_is_flagged() {
    let (code, out, _) = run(&[
        "diff",
        "fixtures/type-mismatch",
        "--against",
        "fixtures/incident/authority",
    ]);
    assert_eq!(code, 1);
    assert!(out.contains("\"248070\""), "{out}");
    assert!(out.contains("\n  type: string vs number\n"), "{out}");
}

/// An id between the tokenizer length and vocab_size is named an unused embedding row.
#[test]
fn unused_embedding_row_is_named() {
    let (code, out, _) = run(&["diff", "fixtures/qwen3-8b/Qwen3-8B-DFlash-b16"]);
    assert_eq!(code, 1);
    assert!(out.contains("151700 (unused embedding row)"), "{out}");
    assert!(out.contains("valid as a mask id, not text"), "{out}");
}

/// A mask id at or above vocab_size is critical even when both sides agree; a pad id no
/// engine reads is shown as a warning (it fails only with --deny warnings).
#[test]
fn out_of_range_id_is_critical_even_if_equal() {
    let dir = tempfile::tempdir().unwrap();
    let text = fs::read_to_string("fixtures/incident/authority/config.json")
        .unwrap()
        .replace("\"mask_token_id\": 248070", "\"mask_token_id\": 300000");
    fs::write(dir.path().join("config.json"), &text).unwrap();
    let p = dir.path().to_str().unwrap();
    let (code, out, _) = run(&["diff", p, "--against", p]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("300000 (out of range: ≥ vocab_size 248320)"),
        "{out}"
    );
    let text = fs::read_to_string("fixtures/incident/authority/config.json")
        .unwrap()
        .replace("\"pad_token_id\": 248044", "\"pad_token_id\": 300000");
    fs::write(dir.path().join("config.json"), &text).unwrap();
    let (code, out, _) = run(&["diff", p, "--against", p]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("warning[") && l.contains("] pad_token_id: ")),
        "{out}"
    );
    let (code, _, _) = run(&["diff", p, "--against", p, "--deny", "warnings"]);
    assert_eq!(code, 1);
}

/// Invalid JSON: exit 2 with file, line and column; a missing file: exit 2 with a hint.
#[test]
fn invalid_json_and_missing_file_exit_two() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("config.json"), "{\n  \"a\": 1,\n}\n").unwrap();
    let (code, out, err) = run(&[
        "diff",
        dir.path().to_str().unwrap(),
        "--against",
        "fixtures/incident/authority",
    ]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.contains("config.json`: invalid JSON at line 3, column 1: trailing comma"),
        "{err}"
    );
    let (code, _, err) = run(&["diff", "fixtures/does-not-exist"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("`fixtures/does-not-exist` does not exist"),
        "{err}"
    );
    let (code, _, err) = run(&["diff", "fixtures"]);
    assert_eq!(code, 2);
    assert!(err.contains("no `config.json` in `fixtures`"), "{err}");
}

/// `--full-tokenizer` has a byte cap of its own (64 MiB, under the default reader's 256 MiB):
/// a larger tokenizer.json is refused with exit 2 before it is read, naming the flag; the same
/// target works with the flag when its tokenizer is small.
#[test]
fn full_tokenizer_over_its_cap_exits_two() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    fs::create_dir(&target).unwrap();
    fs::copy(
        "fixtures/targets/Qwen3.6-27B/config.json",
        target.join("config.json"),
    )
    .unwrap();
    let t = target.to_str().unwrap();
    let args = |t| {
        [
            "diff",
            "fixtures/incident/Qwen3.6-27B-DFlash",
            "--against",
            "fixtures/incident/authority",
            "--target",
            t,
            "--full-tokenizer",
        ]
    };
    let (code, _, err) = run(&args("fixtures/targets/Qwen3.6-27B"));
    assert_eq!(code, 1, "{err}");
    // Sparse: 64 MiB + 1 byte without writing them.
    let f = fs::File::create(target.join("tokenizer.json")).unwrap();
    f.set_len((64 << 20) + 1).unwrap();
    let (code, out, err) = run(&args(t));
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("tokenizer.json` is 67108865 bytes, over the 64 MiB limit"),
        "{err}"
    );
    assert!(
        err.contains("--full-tokenizer loads at most 64 MiB"),
        "{err}"
    );
}

/// No built-in snapshot matches: exit 2 naming the flags that would help.
#[test]
fn no_authority_exits_two_with_hint() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("config.json"),
        r#"{"architectures": ["DFlashDraftModel"], "hidden_size": 7}"#,
    )
    .unwrap();
    let (code, _, err) = run(&["diff", dir.path().to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--from-hub") && err.contains("--against"),
        "{err}"
    );
}

/// The JSON output matches its snapshot (schema version 2).
#[test]
fn json_output_matches_snapshot() {
    let (code, out, _) = run(&[
        "diff",
        "fixtures/incident/Qwen3.6-27B-DFlash",
        "--against",
        "fixtures/incident/authority",
        "--target",
        "fixtures/targets/Qwen3.6-27B",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1);
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["schema_version"], 2);
    insta::assert_json_snapshot!("incident_json", value);
}

/// `--strict` fails on minor differences too.
#[test]
fn strict_fails_on_minor_differences() {
    let dir = tempfile::tempdir().unwrap();
    let text = fs::read_to_string("fixtures/incident/authority/config.json")
        .unwrap()
        .replace("5.5.3", "5.6.0");
    fs::write(dir.path().join("config.json"), &text).unwrap();
    let p = dir.path().to_str().unwrap();
    let (code, _, _) = run(&["diff", p, "--against", "fixtures/incident/authority"]);
    assert_eq!(code, 0);
    let (code, _, _) = run(&[
        "diff",
        p,
        "--against",
        "fixtures/incident/authority",
        "--strict",
    ]);
    assert_eq!(code, 1);
}

/// Colour only when asked or on a terminal; NO_COLOR wins over auto.
#[test]
fn colour_is_opt_in_off_a_terminal() {
    let (_, out, _) = run(&["diff", "fixtures/incident/Qwen3.6-27B-DFlash"]);
    assert!(!out.contains('\x1b'));
    let (_, out, _) = run(&[
        "diff",
        "fixtures/incident/Qwen3.6-27B-DFlash",
        "--color",
        "always",
    ]);
    assert!(out.contains("\x1b[1;31m"));
}

/// Usage errors exit 2, never 1.
#[test]
fn usage_errors_exit_two() {
    let (code, _, _) = run(&["diff"]);
    assert_eq!(code, 2);
    let (code, _, _) = run(&["diff", "x", "--against", "a", "--snapshot", "b"]);
    assert_eq!(code, 2);
}

/// `--help` shows examples; the clap definition is consistent.
#[test]
fn help_shows_examples() {
    let out = dflash().args(["diff", "--help"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Examples:"), "{text}");
    assert!(text.contains("Exit codes"), "{text}");
}

/// Writes the incident's authority with `from` replaced by `to` into `dir/name/config.json`.
fn authority_with(dir: &std::path::Path, name: &str, from: &str, to: &str) -> String {
    let text = fs::read_to_string("fixtures/incident/authority/config.json").unwrap();
    assert!(text.contains(from), "{from}");
    let d = dir.join(name);
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("config.json"), text.replace(from, to)).unwrap();
    d.to_str().unwrap().to_string()
}

/// A negative mask_token_id that both sides agree on is out of range (an error, exit 1): the
/// engine indexes the embedding with it, so -1 cannot mean "none" there.
#[test]
fn negative_mask_id_agreed_on_both_sides_is_out_of_range() {
    let tmp = tempfile::tempdir().unwrap();
    for mask in ["-1", "-248070"] {
        let to = format!("\"mask_token_id\": {mask}");
        let local = authority_with(tmp.path(), "local", "\"mask_token_id\": 248070", &to);
        let auth = authority_with(tmp.path(), "auth", "\"mask_token_id\": 248070", &to);
        let (code, out, _) = run(&["diff", &local, "--against", &auth, "--format", "json"]);
        assert_eq!(code, 1, "{out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let d = &v["differences"][0];
        assert_eq!(d["path"], "dflash_config.mask_token_id", "{out}");
        assert_eq!(d["kind"], "out_of_range", "{out}");
        assert_eq!(d["severity"], "error", "{out}");
        assert!(d["note"].as_str().unwrap().contains("negative id"), "{out}");
    }
}

/// `"pad_token_id": -1` (the old "no pad token" convention) agreed on by both sides is not a
/// finding; another negative pad id is.
#[test]
fn pad_token_id_minus_one_means_none() {
    let tmp = tempfile::tempdir().unwrap();
    let from = "\"pad_token_id\": 248044";
    let local = authority_with(tmp.path(), "local", from, "\"pad_token_id\": -1");
    let auth = authority_with(tmp.path(), "auth", from, "\"pad_token_id\": -1");
    let (code, out, _) = run(&["diff", &local, "--against", &auth]);
    assert_eq!(code, 0, "{out}");
    let local = authority_with(tmp.path(), "local2", from, "\"pad_token_id\": -5");
    let auth = authority_with(tmp.path(), "auth2", from, "\"pad_token_id\": -5");
    // No engine reads a drafter's pad id: a warning, shown, failing with --deny warnings.
    let (code, out, _) = run(&["diff", &local, "--against", &auth]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("pad_token_id: -5 here") && out.contains("no embedding row"),
        "{out}"
    );
    let (code, _, _) = run(&["diff", &local, "--against", &auth, "--deny", "warnings"]);
    assert_eq!(code, 1);
}

/// Every command takes `--format`; the ones that list facts (explain, pin, snapshots, env)
/// answer in human or JSON and refuse the formats made of findings instead of printing text.
#[test]
fn listing_commands_take_json_and_refuse_finding_formats() {
    let (code, out, _) = run(&["explain", "authority-ambiguous", "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["codes"][0]["code"], "authority-ambiguous");
    assert_eq!(v["codes"][0]["severity"], "error");
    for args in [
        vec!["explain", "--format", "sarif"],
        vec!["snapshots", "--format", "github"],
        vec!["env", "--format", "sarif"],
        vec!["pin", ".", "--format", "github"],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(err.contains("lists facts, not findings"), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
    }
}

/// Hub settings that cannot be resolved are the error of the input that needs the Hub, not a
/// silent "no Hub": a drafter inside a Hub cache snapshot names its repo (the authority), and a
/// bad `HF_ENDPOINT` stops `diff` (exit 2, what and where) instead of falling back to the
/// built-in snapshot. The same run with every input local does not need the settings at all.
#[test]
fn a_hub_settings_error_is_returned_not_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let snapshot = tmp
        .path()
        .join("models--z-lab--Qwen3.6-27B-DFlash/snapshots")
        .join("0123456789abcdef0123456789abcdef01234567");
    fs::create_dir_all(&snapshot).unwrap();
    fs::copy(
        "fixtures/incident/Qwen3.6-27B-DFlash/config.json",
        snapshot.join("config.json"),
    )
    .unwrap();
    let out = dflash()
        .env("HF_ENDPOINT", "ftp://mirror.example")
        .arg("diff")
        .arg(&snapshot)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("invalid Hub endpoint `ftp://mirror.example` (from env HF_ENDPOINT)"),
        "{stderr}"
    );
    let out = dflash()
        .env("HF_ENDPOINT", "ftp://mirror.example")
        .args(["diff", "fixtures/incident/Qwen3.6-27B-DFlash"])
        .args(["--against", "fixtures/incident/authority"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Without `--target` the incident matches 2 candidates and the findings list each field once
/// per candidate; the counts count each field once, at its worst (issue 45: "9 errors,
/// 3 warnings" for 7 differing fields). 6 errors = the ambiguous authority + 5 fields.
#[test]
fn ambiguous_counts_each_field_once() {
    let (code, out, _) = run(&["diff", "fixtures/incident/Qwen3.6-27B-DFlash"]);
    assert_eq!(code, 1);
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with("FAIL: 6 errors, 2 warnings, 0 info; 7 fields differ"),
        "{last}"
    );
    let (_, json, _) = run(&[
        "diff",
        "fixtures/incident/Qwen3.6-27B-DFlash",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["summary"]["errors"], 6, "{}", v["summary"]);
    assert_eq!(v["summary"]["warnings"], 2);
}
