//! Inputs that are not regular files — a FIFO made with mkfifo(1), a character device — are
//! refused at once with exit 2 through the real binary; none may block. Each run has a timeout:
//! a FIFO with no writer would hang a plain `open` forever.
#![cfg(unix)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

mod common;

use common::dflash;

const DRAFTER: &str = "fixtures/incident/Qwen3.6-27B-DFlash";
const AUTHORITY: &str = "fixtures/incident/authority";
const TARGET: &str = "fixtures/targets/Qwen3.6-27B";

/// Far longer than any of these runs takes, far shorter than "forever".
const TIMEOUT: Duration = Duration::from_secs(20);

/// Makes a FIFO at `path` with the real mkfifo(1).
fn mkfifo(path: &Path) {
    let status = StdCommand::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// A copy of the fixture target whose `name` is replaced by a FIFO.
fn target_with_fifo(tmp: &Path, name: &str) -> PathBuf {
    let dir = tmp.join("target");
    fs::create_dir(&dir).unwrap();
    for f in ["config.json", "tokenizer.json", "tokenizer_config.json"] {
        if f != name {
            fs::copy(Path::new(TARGET).join(f), dir.join(f)).unwrap();
        }
    }
    mkfifo(&dir.join(name));
    dir
}

/// Runs the binary with a timeout; (exit code, stderr). A run that hits the timeout fails the
/// test (assert_cmd kills it).
fn run_bounded(args: &[&str]) -> (i32, String) {
    let start = Instant::now();
    let out = dflash().args(args).timeout(TIMEOUT).output().unwrap();
    assert!(
        start.elapsed() < TIMEOUT,
        "`dflash-check {}` blocked until the {TIMEOUT:?} timeout",
        args.join(" ")
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn assert_refused(args: &[&str], path: &Path, kind: &str) {
    let (code, err) = run_bounded(args);
    assert_eq!(code, 2, "`{}`: {err}", args.join(" "));
    let expected = format!("`{}` is {kind}, not a regular file", path.display());
    assert!(err.contains(&expected), "`{}`: {err}", args.join(" "));
}

/// A drafter `config.json` that is a FIFO is refused by diff, lint and fix, named directly or
/// through its directory, and as the authority of `--against`.
#[test]
fn fifo_config_json_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("Qwen3.6-27B-DFlash");
    fs::create_dir(&dir).unwrap();
    let fifo = dir.join("config.json");
    mkfifo(&fifo);
    let d = dir.to_str().unwrap();
    let f = fifo.to_str().unwrap();
    let kind = "a FIFO (named pipe)";
    assert_refused(&["diff", d, "--against", AUTHORITY], &fifo, kind);
    assert_refused(&["diff", f, "--against", AUTHORITY], &fifo, kind);
    assert_refused(&["diff", d], &fifo, kind);
    assert_refused(&["diff", DRAFTER, "--against", d], &fifo, kind);
    assert_refused(&["lint", d], &fifo, kind);
    assert_refused(
        &["fix", d, "--against", AUTHORITY, "--dry-run"],
        &fifo,
        kind,
    );
}

/// The target's `config.json`, `tokenizer.json` or `tokenizer_config.json` as a FIFO is refused
/// too — never read (blocking) and never silently taken as "absent".
#[test]
fn fifo_target_and_tokenizer_files_are_refused_at_once() {
    for name in ["config.json", "tokenizer.json", "tokenizer_config.json"] {
        let tmp = tempfile::tempdir().unwrap();
        let target = target_with_fifo(tmp.path(), name);
        let fifo = target.join(name);
        let t = target.to_str().unwrap();
        let kind = "a FIFO (named pipe)";
        assert_refused(
            &["diff", DRAFTER, "--against", AUTHORITY, "--target", t],
            &fifo,
            kind,
        );
        assert_refused(&["lint", DRAFTER, "--target", t], &fifo, kind);
        if name != "config.json" {
            assert_refused(
                &["diff", DRAFTER, "--against", AUTHORITY, "--tokenizer", t],
                &fifo,
                kind,
            );
        }
        if name == "tokenizer.json" {
            assert_refused(
                &[
                    "diff",
                    DRAFTER,
                    "--against",
                    AUTHORITY,
                    "--target",
                    t,
                    "--full-tokenizer",
                ],
                &fifo,
                kind,
            );
        }
    }
}

/// A character device (a symlink to /dev/zero: endless, size 0) is refused before any read.
#[test]
fn character_device_config_is_refused_before_reading() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drafter");
    fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("config.json")).unwrap();
    assert_refused(
        &["diff", dir.to_str().unwrap(), "--against", AUTHORITY],
        &dir.join("config.json"),
        "a character device",
    );
}

/// `check` over a tree holding a FIFO `config.json` finishes, names the FIFO, and does not
/// pass the gate.
#[test]
fn check_over_a_tree_with_a_fifo_finishes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("models").join("broken");
    fs::create_dir_all(&dir).unwrap();
    mkfifo(&dir.join("config.json"));
    let (code, err) = run_bounded(&["check", tmp.path().join("models").to_str().unwrap()]);
    assert_ne!(code, 0, "{err}");
    let out = dflash()
        .args(["check", tmp.path().join("models").to_str().unwrap()])
        .timeout(TIMEOUT)
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("FIFO"), "{all}");
}

/// Issue 32: a `dflash-check.toml` that is not a regular file was skipped in silence and
/// `check` passed on the built-in snapshots, or used a stray pin file above the checkout. It is
/// the pin file in any form: a dangling symlink (a link into a submodule CI did not fetch), a
/// FIFO (never blocking), a link to /dev/zero, a directory and a link to itself are each an
/// exit-2 error naming it, for `check` and for `pin`. A symlink to a regular file is a pin file
/// like any other.
#[test]
fn a_pin_file_that_is_not_a_regular_file_is_an_error() {
    let cases: &[(&str, &str)] = &[
        (
            "dangling",
            "is a symbolic link to `submodule/dflash-check.toml`, which does not exist",
        ),
        ("fifo", "is a FIFO (named pipe), not a regular file"),
        ("dev-zero", "is a character device, not a regular file"),
        ("directory", "is a directory, not a file"),
        ("loop", "cannot be read: it is a loop of symbolic links"),
        ("link-to-file", ""),
    ];
    for (kind, says) in cases {
        let tmp = tempfile::tempdir().unwrap();
        // A stray pin file above the checkout, which must not be used instead.
        fs::write(tmp.path().join("dflash-check.toml"), "version = 2\n").unwrap();
        let repo = tmp.path().join("repo");
        let drafter = repo.join("models/Qwen3.6-27B-DFlash");
        fs::create_dir_all(&drafter).unwrap();
        fs::copy(
            Path::new(AUTHORITY).join("config.json"),
            drafter.join("config.json"),
        )
        .unwrap();
        let pins = repo.join("dflash-check.toml");
        match *kind {
            "dangling" => std::os::unix::fs::symlink("submodule/dflash-check.toml", &pins).unwrap(),
            "fifo" => mkfifo(&pins),
            "dev-zero" => std::os::unix::fs::symlink("/dev/zero", &pins).unwrap(),
            "directory" => fs::create_dir(&pins).unwrap(),
            "loop" => std::os::unix::fs::symlink("dflash-check.toml", &pins).unwrap(),
            _ => {
                fs::write(repo.join("real.toml"), "version = 2\n").unwrap();
                std::os::unix::fs::symlink("real.toml", &pins).unwrap();
            }
        }
        let start = Instant::now();
        let out = dflash()
            .args(["check", "models", "--format", "json"])
            .current_dir(&repo)
            .timeout(TIMEOUT)
            .output()
            .unwrap();
        assert!(start.elapsed() < TIMEOUT, "{kind}: blocked");
        let err = String::from_utf8_lossy(&out.stderr);
        if kind == &"link-to-file" {
            assert_eq!(out.status.code(), Some(0), "{kind}: {err}");
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["pins"], "dflash-check.toml", "{kind}");
            continue;
        }
        assert_eq!(out.status.code(), Some(2), "{kind}: {err}");
        assert!(
            err.contains(&format!("`{}` {says}", pins.display())),
            "{kind}: {err}"
        );
        assert!(err.contains("hint: "), "{kind}: {err}");
        // `pin` finds the same file and refuses it too, rather than writing the stray one.
        let start = Instant::now();
        let out = dflash()
            .args(["pin", "models/Qwen3.6-27B-DFlash", "--snapshot"])
            .arg("z-lab/Qwen3.6-27B-DFlash")
            .current_dir(&repo)
            .timeout(TIMEOUT)
            .output()
            .unwrap();
        assert!(start.elapsed() < TIMEOUT, "{kind}: pin blocked");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "pin, {kind}: {err}");
        assert!(
            err.contains(&pins.display().to_string()),
            "pin, {kind}: {err}"
        );
        assert_eq!(
            fs::read_to_string(tmp.path().join("dflash-check.toml")).unwrap(),
            "version = 2\n",
            "pin, {kind}: the stray pin file above was written"
        );
    }
}
