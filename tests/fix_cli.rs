//! End-to-end tests of `dflash-check fix` through the real binary: dry run, write, backup,
//! idempotence, refusals (invalid JSON, read-only file or directory), injected write failures,
//! symlinked configs (Hub cache layout), and SIGKILL at random points during a fix.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_dflash-check");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn incident() -> Vec<u8> {
    fs::read(root().join("fixtures/incident/Qwen3.6-27B-DFlash/config.json")).unwrap()
}

fn authority_dir() -> PathBuf {
    root().join("fixtures/incident/authority")
}

fn authority() -> Vec<u8> {
    fs::read(authority_dir().join("config.json")).unwrap()
}

/// A temp dir holding `Qwen3.6-27B-DFlash/config.json` with the incident's guessed config.
fn drafter() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("Qwen3.6-27B-DFlash");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("config.json"), incident()).unwrap();
    (tmp, dir)
}

fn fix(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("fix")
        .arg(dir)
        .arg("--against")
        .arg(authority_dir())
        .args(extra)
        .env_remove("DFLASH_CHECK_FAIL_AT")
        .env_remove("DFLASH_CHECK_STEP_DELAY_MS")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn dry_run_prints_a_unified_diff_writes_nothing_and_exits_1() {
    let (_t, dir) = drafter();
    let cfg = dir.join("config.json");
    let out = fix(&dir, &["--dry-run"], &[]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    let label = cfg.display().to_string();
    assert!(
        stdout.contains(&format!("--- {label}\n+++ {label}\n")),
        "{stdout}"
    );
    assert!(stdout.contains("\n-    \"mask_token_id\": 248064,\n+    \"mask_token_id\": 248070,\n"));
    assert!(stdout.contains("\n+  \"sliding_window\": 2048,\n"));
    assert!(stdout.contains("nothing written"), "{stdout}");
    assert_eq!(fs::read(&cfg).unwrap(), incident());
    assert_eq!(names(&dir), ["config.json"]);
}

#[test]
fn dry_run_of_a_matching_file_exits_0() {
    let (_t, dir) = drafter();
    fs::write(dir.join("config.json"), authority()).unwrap();
    let out = fix(&dir, &["--dry-run"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn fix_writes_backs_up_verifies_and_a_second_fix_is_a_no_op() {
    let (_t, dir) = drafter();
    let cfg = dir.join("config.json");
    fs::set_permissions(&cfg, fs::Permissions::from_mode(0o640)).unwrap();
    let out = fix(&dir, &["--target", "fixtures/targets/Qwen3.6-27B"], &[]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    // Minimal edits of a file in the authority's own style reproduce it byte for byte.
    assert_eq!(fs::read(&cfg).unwrap(), authority());
    assert_eq!(fs::read(dir.join("config.json.bak")).unwrap(), incident());
    assert_eq!(mode(&cfg), 0o640);
    assert_eq!(mode(&dir.join("config.json.bak")), 0o640);
    for needle in [
        "backup      ",
        "config.json.bak",
        "Verified: re-read from disk",
        "dflash_config.mask_token_id     248070 <|audio_start|> (special)   (fixed)",
        "dflash_config.target_layer_ids  [1, 16, 31, 46, 61]   (fixed)",
        "layer_types                     4× sliding_attention, 1× full_attention   (fixed)",
        "sliding_window                  2048   (fixed)",
        "use_sliding_window              true   (fixed)",
        "bos_token_id                    null   (fixed)",
        "restart it",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in\n{stdout}");
    }
    let mtime = fs::metadata(&cfg).unwrap().modified().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let out = fix(&dir, &[], &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).contains("already matches"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(fs::metadata(&cfg).unwrap().modified().unwrap(), mtime);
    assert_eq!(names(&dir), ["config.json", "config.json.bak"]);
}

#[test]
fn backups_are_never_overwritten() {
    let (_t, dir) = drafter();
    let cfg = dir.join("config.json");
    fs::write(dir.join("config.json.bak"), b"older backup").unwrap();
    fs::write(dir.join("config.json.bak.1"), b"oldest backup").unwrap();
    let out = fix(&dir, &[], &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("config.json.bak.2"));
    assert_eq!(
        fs::read(dir.join("config.json.bak")).unwrap(),
        b"older backup"
    );
    assert_eq!(
        fs::read(dir.join("config.json.bak.1")).unwrap(),
        b"oldest backup"
    );
    assert_eq!(fs::read(dir.join("config.json.bak.2")).unwrap(), incident());
    fs::write(&cfg, incident()).unwrap();
    let out = fix(&dir, &["--no-backup"], &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("none (--no-backup)"));
    assert_eq!(names(&dir).len(), 4);
}

#[test]
fn exact_writes_the_authoritys_bytes_and_prune_removes_local_keys() {
    let (_t, dir) = drafter();
    let cfg = dir.join("config.json");
    let local = text(&incident()).replacen("{\n", "{\n  \"my_key\": 1,\n", 1);
    fs::write(&cfg, &local).unwrap();
    let out = fix(&dir, &["--no-backup", "--dry-run"], &[]);
    assert!(
        text(&out.stdout).contains("my_key"),
        "{}",
        text(&out.stdout)
    );
    // Minimal mode keeps the unknown key; `diff` counts it as an error, so `fix` does not
    // call the file fixed: exit 1, no "Verified", and it names --prune.
    let out = fix(&dir, &["--no-backup"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let after = text(&fs::read(&cfg).unwrap());
    assert!(after.contains("\"my_key\": 1,"));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("kept my_key: only in this file (--prune removes it)"),
        "{stdout}"
    );
    assert!(!stdout.contains("Verified"), "{stdout}");
    assert!(stdout.contains("Remove them with --prune"), "{stdout}");
    // `diff` agrees, and the fix line it prints is the one that repairs the file.
    let diff = Command::new(BIN)
        .args(["diff", dir.to_str().unwrap(), "--against"])
        .arg(authority_dir())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(diff.status.code(), Some(1));
    assert!(
        text(&diff.stdout).contains("--prune"),
        "{}",
        text(&diff.stdout)
    );
    // A second minimal run writes nothing and still refuses to say OK.
    let out = fix(&dir, &["--no-backup"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("FAIL: 0 errors, 0 warnings, 0 info; not fixed"),
        "{}",
        text(&out.stdout)
    );
    let out = fix(&dir, &["--no-backup", "--prune"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(fs::read(&cfg).unwrap(), authority());
    fs::write(&cfg, local.replace("  ", "    ")).unwrap();
    let out = fix(&dir, &["--no-backup", "--exact"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(fs::read(&cfg).unwrap(), authority());
}

#[test]
fn json_output_has_the_documented_fields() {
    let (_t, dir) = drafter();
    let out = fix(&dir, &["--format", "json"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["command"], "fix");
    assert_eq!(v["mode"], "minimal");
    assert_eq!(v["dry_run"], false);
    assert_eq!(v["changed"], true);
    assert_eq!(v["verified"], true);
    assert_eq!(v["replaced_symlink"], false);
    assert_eq!(v["authority"]["kind"], "file");
    assert!(v["backup"].as_str().unwrap().ends_with("config.json.bak"));
    let edits = v["edits"].as_array().unwrap();
    let mask = edits
        .iter()
        .find(|e| e["path"] == "dflash_config.mask_token_id")
        .unwrap();
    assert_eq!(mask["action"], "set");
    assert_eq!(mask["old"], 248064);
    assert_eq!(mask["new"], 248070);
    let sw = edits
        .iter()
        .find(|e| e["path"] == "sliding_window")
        .unwrap();
    assert_eq!(sw["action"], "add");
    assert!(sw["old"].is_null());
    assert_eq!(v["kept_local_only"], serde_json::json!([]));
}

#[test]
fn built_in_snapshot_is_chosen_by_evidence_not_by_the_folder() {
    let (_t, dir) = drafter();
    let before = fs::read(dir.join("config.json")).unwrap();
    // The incident matches two snapshots by shape and equals neither: no authority is guessed,
    // nothing is written, and the message names the flags that pick one.
    let out = Command::new(BIN)
        .args(["fix", dir.to_str().unwrap(), "--no-backup"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("no single authority"), "{err}");
    assert!(err.contains("--target hf://Qwen/Qwen3.6-27B"), "{err}");
    assert_eq!(fs::read(dir.join("config.json")).unwrap(), before);
    // The target names the authority.
    let target = root().join("fixtures/targets/Qwen3.6-27B");
    let out = Command::new(BIN)
        .args(["fix", dir.to_str().unwrap(), "--no-backup", "--target"])
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("built-in snapshot of z-lab/Qwen3.6-27B-DFlash"));
    // Fixed against a snapshot, it passes `diff` with no flag, in any folder.
    let elsewhere = dir.parent().unwrap().join("models").join("my-drafter");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::copy(dir.join("config.json"), elsewhere.join("config.json")).unwrap();
    for d in [&dir, &elsewhere] {
        let diff = Command::new(BIN)
            .args(["diff", d.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(diff.status.code(), Some(0), "{}", text(&diff.stdout));
        assert!(text(&diff.stdout).contains("equal in every field that matters"));
    }
}

#[test]
fn invalid_json_is_refused_with_exit_2_and_left_untouched() {
    let (_t, dir) = drafter();
    let cfg = dir.join("config.json");
    let broken = text(&incident()).replace("\"dtype\": \"bfloat16\",", "\"dtype\": \"bfloat16\",,");
    fs::write(&cfg, &broken).unwrap();
    let out = fix(&dir, &[], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("config.json") && err.contains("invalid JSON at line 22"),
        "{err}"
    );
    assert_eq!(fs::read(&cfg).unwrap(), broken.as_bytes());
    assert_eq!(names(&dir), ["config.json"]);
}

/// Read-only file and directory. These are meaningful as root too (tests run as root in CI):
/// `fix` checks the permission bits itself, besides access(2), and refuses a file or
/// directory with no write bit even though root could write it.
#[test]
fn read_only_file_or_directory_is_refused_with_exit_2() {
    let (_t, dir) = drafter();
    let cfg = dir.join("config.json");
    fs::set_permissions(&cfg, fs::Permissions::from_mode(0o444)).unwrap();
    let out = fix(&dir, &[], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("not writable (mode 0444)"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(fs::read(&cfg).unwrap(), incident());
    assert_eq!(mode(&cfg), 0o444);

    fs::set_permissions(&cfg, fs::Permissions::from_mode(0o644)).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    let out = fix(&dir, &[], &[]);
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("directory"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(fs::read(&cfg).unwrap(), incident());
    assert_eq!(names(&dir), ["config.json"]);
}

#[test]
fn injected_write_failures_exit_2_and_leave_the_original_intact() {
    for step in ["backup", "temp-write", "sync", "rename"] {
        let (_t, dir) = drafter();
        let cfg = dir.join("config.json");
        fs::set_permissions(&cfg, fs::Permissions::from_mode(0o600)).unwrap();
        let out = fix(&dir, &[], &[("DFLASH_CHECK_FAIL_AT", step)]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{step}: {err}");
        assert!(
            err.contains("injected failure") && err.contains("the file is unchanged"),
            "{step}: {err}"
        );
        assert_eq!(fs::read(&cfg).unwrap(), incident(), "{step}");
        assert_eq!(mode(&cfg), 0o600);
        // No backup, no temp file left behind.
        assert_eq!(names(&dir), ["config.json"], "{step}");
    }
}

#[test]
fn failed_verification_restores_the_original() {
    let (_t, dir) = drafter();
    let cfg = dir.join("config.json");
    fs::set_permissions(&cfg, fs::Permissions::from_mode(0o640)).unwrap();
    let out = fix(&dir, &[], &[("DFLASH_CHECK_FAIL_AT", "verify")]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("verification failed") && err.contains("original was restored"),
        "{err}"
    );
    assert_eq!(fs::read(&cfg).unwrap(), incident());
    assert_eq!(mode(&cfg), 0o640);
    assert_eq!(names(&dir), ["config.json"]);
}

/// Hub cache layout: snapshots/<sha>/config.json -> ../blobs/<etag>. The blob is never edited.
fn hub_layout() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let blobs = tmp.path().join("blobs");
    let snap = tmp.path().join("snap");
    fs::create_dir(&blobs).unwrap();
    fs::create_dir(&snap).unwrap();
    let blob = blobs.join("x");
    fs::write(&blob, incident()).unwrap();
    std::os::unix::fs::symlink("../blobs/x", snap.join("config.json")).unwrap();
    (tmp, snap, blob)
}

#[test]
fn a_symlinked_config_is_replaced_by_a_regular_file_and_the_blob_is_untouched() {
    let (_t, snap, blob) = hub_layout();
    let cfg = snap.join("config.json");
    let out = fix(&snap, &["--format", "json"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["replaced_symlink"], true);
    assert_eq!(fs::read(&blob).unwrap(), incident());
    assert!(fs::symlink_metadata(&cfg).unwrap().file_type().is_file());
    assert_eq!(fs::read(&cfg).unwrap(), authority());

    // Human output says so; a failed verification puts the link back.
    let (_t, snap, blob) = hub_layout();
    let out = fix(&snap, &[], &[]);
    assert!(
        text(&out.stdout).contains("was a symbolic link"),
        "{}",
        text(&out.stdout)
    );
    let (_t2, snap2, blob2) = hub_layout();
    let out = fix(&snap2, &[], &[("DFLASH_CHECK_FAIL_AT", "verify")]);
    assert_eq!(out.status.code(), Some(2));
    let link = snap2.join("config.json");
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read_link(&link).unwrap(), Path::new("../blobs/x"));
    assert_eq!(fs::read(&blob2).unwrap(), incident());
    assert_eq!(fs::read(&blob).unwrap(), incident());
}

/// SIGKILL at random points: after every kill the config is the complete original or the
/// complete fixed file, with its permissions, and any backup is a complete copy.
#[test]
fn sigkill_at_random_points_never_leaves_a_partial_file() {
    let (_t, dir) = drafter();
    let cfg = dir.join("config.json");
    let original = incident();
    let fixed = authority();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let runs = 200;
    let (mut saw_original, mut saw_fixed, mut mid_write) = (0, 0, 0);
    for i in 0..runs {
        fs::write(&cfg, &original).unwrap();
        fs::set_permissions(&cfg, fs::Permissions::from_mode(0o640)).unwrap();
        for n in names(&dir) {
            if n != "config.json" {
                fs::remove_file(dir.join(n)).unwrap();
            }
        }
        // Half the runs sleep 1 ms before each write step, so kills also land between them.
        let delay = if i % 2 == 0 { "1" } else { "0" };
        let mut child = Command::new(BIN)
            .arg("fix")
            .arg(&dir)
            .arg("--against")
            .arg(authority_dir())
            .env("DFLASH_CHECK_STEP_DELAY_MS", delay)
            .env_remove("DFLASH_CHECK_FAIL_AT")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(next() % 25_000));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let now = fs::read(&cfg).unwrap();
        assert!(
            now == original || now == fixed,
            "run {i}: partial file:\n{}",
            text(&now)
        );
        if now == original {
            saw_original += 1;
        } else {
            saw_fixed += 1;
        }
        assert_eq!(mode(&cfg), 0o640, "run {i}");
        let left = names(&dir);
        if left.iter().any(|n| n.ends_with(".dflash-check.tmp"))
            || (now == original && left.len() > 1)
        {
            mid_write += 1;
        }
        for n in left {
            if n.starts_with("config.json.bak") {
                assert_eq!(
                    fs::read(dir.join(&n)).unwrap(),
                    original,
                    "run {i}: partial backup {n}"
                );
            }
        }
    }
    eprintln!(
        "{runs} kills: {saw_original} left the original, {saw_fixed} the fixed file, \
         {mid_write} landed between the backup and the rename"
    );
    assert!(
        saw_original > 0 && saw_fixed > 0,
        "{saw_original} / {saw_fixed}: kills did not span the write"
    );
}

/// One code and one severity per finding in every command: a dry run names each edit with the
/// code and severity `diff` gives the same difference (two warnings and an `only-authority` in
/// the incident, not seven `error[changed]`), and still exits 1 because it would write (issue 32).
#[test]
fn dry_run_edits_carry_the_diffs_codes_and_severities() {
    let dir = "fixtures/incident/Qwen3.6-27B-DFlash";
    let findings = |args: &[&str]| -> (i32, Vec<(String, String, String)>) {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_dflash-check"))
            .args(args)
            .env("HF_HUB_OFFLINE", "1")
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut f: Vec<(String, String, String)> = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["path"].as_str().unwrap().to_string(),
                    d["code"].as_str().unwrap().to_string(),
                    d["severity"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        f.sort();
        (out.status.code().unwrap(), f)
    };
    let snapshot = ["--snapshot", "z-lab/Qwen3.6-27B-DFlash", "--format", "json"];
    let (diff_code, diff) = findings(&[&["diff", dir][..], &snapshot[..]].concat());
    let (fix_code, fix) = findings(&[&["fix", dir, "--dry-run"][..], &snapshot[..]].concat());
    assert_eq!((diff_code, fix_code), (1, 1));
    assert_eq!(diff, fix);
    assert!(fix.contains(&(
        "sliding_window".to_string(),
        "only-authority".to_string(),
        "error".to_string()
    )));
    assert_eq!(fix.iter().filter(|f| f.2 == "warning").count(), 2);
}

/// An applied fix lists what it changed as edits (`Edited:`, `set`/`added` and the field),
/// never as `info[changed]` findings (issue 45); a dry run still shows the findings it would fix.
#[test]
fn applied_edits_are_listed_as_edits_not_findings() {
    let (_tmp, dir) = drafter();
    let out = fix(&dir, &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let page = text(&out.stdout);
    assert!(!page.contains("info["), "{page}");
    assert!(page.contains("Edited:"), "{page}");
    assert!(
        page.contains("  set    dflash_config.mask_token_id: 248064"),
        "{page}"
    );
    assert!(
        page.contains("  added  sliding_window: (absent) → 2048"),
        "{page}"
    );
    let (_tmp, dir) = drafter();
    let out = fix(&dir, &["--dry-run"], &[]);
    assert!(text(&out.stdout).contains("error[changed]"));
}
