//! `check`'s output over a tree of drafters is byte-identical, in every format, to what the
//! binary before the speed work wrote (issue 44: the speed work changes how findings are
//! computed, never what is printed): human, JSON and GitHub as 496a057 wrote them; the SARIF
//! log, which embeds every rule's text, as main wrote it after its rules last changed (issue 41's
//! engine rows of 2026-12-06, re-recorded from that commit's binary: rows and evidence change
//! those texts, not the findings; human, JSON and GitHub were unchanged by it).
//! The tree is bench/check-scale.sh's layout (a third pinned to a file and
//! wrong, a third pinned to a snapshot, a third unpinned), nine drafters. The run's root (a
//! temporary directory) is replaced by `ROOT` and the crate's version by `VERSION`; the SARIF
//! log (about 1 MB, its rules' evidence included) is kept as its SHA-256.
//!
//! To write the expected files from a given binary (only for an intended change of output):
//! `DFLASH_CHECK_GOLDEN_WRITE=path/to/dflash-check cargo test --test check_golden`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

const FORMATS: &[&str] = &["human", "json", "github", "sarif"];

fn expected_dir() -> PathBuf {
    Path::new("tests/fixtures/check-golden").to_path_buf()
}

/// `check models --format FORMAT` in `root` with `bin`: (exit code, output made independent of
/// where the tree is and of the version).
fn output(bin: &Path, root: &Path, format: &str) -> (i32, String) {
    let out = Command::new(bin)
        .args(["check", "models", "--format", format])
        .current_dir(root)
        .env("HF_HUB_OFFLINE", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    let mut text = String::from_utf8(out.stdout).unwrap();
    for shown in [root.canonicalize().unwrap(), root.to_path_buf()] {
        text = text.replace(shown.to_str().unwrap(), "ROOT");
    }
    let text = text.replace(env!("CARGO_PKG_VERSION"), "VERSION");
    (out.status.code().unwrap_or(-1), text)
}

/// What is kept of an output: the text, or for SARIF its digest.
fn kept(format: &str, text: &str) -> String {
    if format == "sarif" {
        let digest = Sha256::digest(text.as_bytes());
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
            + "\n"
    } else {
        text.to_string()
    }
}

#[test]
fn check_output_is_byte_identical_to_the_output_before_the_speed_work() {
    let dir = tempfile::tempdir().unwrap();
    common::check_tree(dir.path(), 9);
    let writer = std::env::var_os("DFLASH_CHECK_GOLDEN_WRITE").map(PathBuf::from);
    let bin = writer
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_dflash-check")));
    for format in FORMATS {
        let (code, text) = output(&bin, dir.path(), format);
        assert_eq!(code, 1, "{format}: the wrong drafters fail the run");
        let file = expected_dir().join(format!("check.{format}"));
        if writer.is_some() {
            std::fs::write(&file, kept(format, &text)).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&file).unwrap();
        let got = kept(format, &text);
        if got != expected {
            let line = got
                .lines()
                .zip(expected.lines())
                .position(|(a, b)| a != b)
                .map_or(got.lines().count().min(expected.lines().count()), |i| i);
            panic!(
                "`check --format {format}` differs from {} from line {}:\n  got:      {:?}\n  expected: {:?}",
                file.display(),
                line + 1,
                got.lines().nth(line),
                expected.lines().nth(line)
            );
        }
    }
}
