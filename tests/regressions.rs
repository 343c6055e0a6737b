//! One regression test per bug found by the bad-input corpus (tests/bad-input/), named after
//! the bug. See RELIABILITY.md, "Bugs found and fixed".

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use dflash_check::config;
use dflash_check::diff::{self, DiffKind};
use dflash_check::json::Document;

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("dflash-check")
}

fn compare(local: &str, authority: &str) -> Vec<diff::Difference> {
    diff::compare(
        &Document::parse(local).unwrap().root,
        &Document::parse(authority).unwrap().root,
    )
}

/// `248070.0` (and `2.4807e5`, `[1.0, 16.0]`, `block_size: 16.0`) compared equal to the
/// integer and the gate said "identical" (exit 0), though Python reads a float there.
#[test]
fn bug_float_id_reported_identical() {
    for (local, authority) in [
        (
            r#"{"mask_token_id": 248070.0}"#,
            r#"{"mask_token_id": 248070}"#,
        ),
        (
            r#"{"mask_token_id": 2.4807e5}"#,
            r#"{"mask_token_id": 248070}"#,
        ),
        (
            r#"{"target_layer_ids": [1.0, 16]}"#,
            r#"{"target_layer_ids": [1, 16]}"#,
        ),
        (
            r#"{"block_size": 16}"#,
            r#"{"dflash_config": {"block_size": 16.0}}"#,
        ),
    ] {
        let d = compare(local, authority);
        assert_eq!(d.len(), 1, "{local} vs {authority}: {d:?}");
        assert_eq!(d[0].kind, DiffKind::Type);
    }
    // Float fields still compare by value.
    assert!(compare(r#"{"rope_theta": 1e7}"#, r#"{"rope_theta": 10000000}"#).is_empty());
}

/// An id past 2^64 on both sides was not out of range: `diff` exited 0 for an id that no
/// embedding has, and showed it undecoded.
#[test]
fn bug_id_past_u64_not_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let text = fs::read_to_string("fixtures/incident/authority/config.json")
        .unwrap()
        .replace(
            "\"pad_token_id\": 248044",
            "\"pad_token_id\": 18446744073709551616",
        );
    fs::write(dir.path().join("config.json"), text).unwrap();
    let p = dir.path().to_str().unwrap();
    let out = Command::new(bin())
        .args(["diff", p, "--against", p])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("18446744073709551616 (out of range: past 2^64)"),
        "{stdout}"
    );
}

/// A string inside an id list vanished from the display: `[248044, "248046"]` was shown as
/// `[248044 <|endoftext|>]`.
#[test]
fn bug_string_in_id_list_hidden() {
    let doc = Document::parse(r#"[248044, "248046", 1.5]"#).unwrap();
    let tokens = vec![dflash_check::tokens::TokenTable::empty(None).decode(248044)];
    let shown = dflash_check::text::short_ids(Some(&doc.root), &tokens);
    assert_eq!(shown, r#"[248044, "248046", 1.5]"#);
}

/// A file of spaces and newlines was called "empty", at the position of its end.
#[test]
fn bug_whitespace_only_called_empty() {
    let err = Document::parse(" \n\t\n").unwrap_err();
    assert!(err.message.contains("only whitespace"), "{}", err.message);
    let err = Document::parse("").unwrap_err();
    assert!(err.message.contains("the file is empty"), "{}", err.message);
}

/// `null` at the top level was "a null".
#[test]
fn bug_top_level_null_article() {
    let err = config::parse(Path::new("config.json"), b"null").unwrap_err();
    assert!(
        err.message.contains("the top-level value is null;"),
        "{}",
        err.message
    );
}

/// A device or stream (no size up front) was read to the cap plus one byte and then parsed
/// anyway, instead of being refused. Now it is refused before any read, as not a regular file.
#[test]
fn bug_device_read_past_cap() {
    let err = config::read_capped(Path::new("/dev/zero"), 1024).unwrap_err();
    assert!(
        err.message
            .contains("is a character device, not a regular file"),
        "{}",
        err.message
    );
}

/// A symlink loop said "Too many levels of symbolic links (os error 40)".
#[test]
fn bug_symlink_loop_message() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("config.json");
    std::os::unix::fs::symlink("config.json", &link).unwrap();
    let err = config::load(dir.path()).unwrap_err();
    assert!(
        err.message.contains("loop of symbolic links"),
        "{}",
        err.message
    );
}

/// A closed stdout (`diff … | head -1` under `set -o pipefail`) turned exit 1 (findings)
/// into exit 0: a finding lost, and the gate passed.
#[test]
fn bug_broken_pipe_exit_code_lost() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = Command::new(bin())
        .args([
            "diff",
            "fixtures/incident/Qwen3.6-27B-DFlash",
            "--against",
            "fixtures/incident/authority",
        ])
        .stdout(Stdio::from(writer))
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
}
