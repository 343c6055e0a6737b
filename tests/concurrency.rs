//! Concurrent writers (issue 20, items 5 and 7): several `fix` runs on one config and several
//! `pin` runs on one pin file, spawned at once through the real binary. A run either applies on
//! top of what it read or fails with exit 2; no run that reported success loses its write. And
//! `pin` never writes through a symlink planted where its temp file could be, and keeps the pin
//! file's mode.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_dflash-check");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn incident() -> Vec<u8> {
    fs::read(root().join("fixtures/incident/Qwen3.6-27B-DFlash/config.json")).unwrap()
}

fn authority() -> serde_json::Value {
    let bytes = fs::read(root().join("fixtures/incident/authority/config.json")).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn spawn(args: &[&Path], extra: &[&str], delay_ms: &str) -> Child {
    Command::new(BIN)
        .args(args)
        .args(extra)
        .env("DFLASH_CHECK_STEP_DELAY_MS", delay_ms)
        .env_remove("DFLASH_CHECK_FAIL_AT")
        .env("HF_HUB_OFFLINE", "1")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(child: Child) -> (i32, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Six `fix` runs against two authorities that disagree on `rope_theta`, each step slowed down
/// so the runs overlap. Before the lock, a run whose verification saw the other run's file
/// "restored the original" over a fix that had been reported as verified.
#[test]
fn concurrent_fixes_never_lose_a_reported_success() {
    let a = authority();
    let mut b = a.clone();
    b["rope_theta"] = serde_json::json!(12345);
    for round in 0..3 {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("drafter");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("config.json"), incident()).unwrap();
        let auths: Vec<PathBuf> = [&a, &b]
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let p = tmp.path().join(format!("auth{i}.json"));
                fs::write(&p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
                p
            })
            .collect();
        let children: Vec<(usize, Child)> = (0..6)
            .map(|i| {
                let which = i % 2;
                let child = spawn(
                    &[
                        Path::new("fix"),
                        &dir,
                        Path::new("--against"),
                        &auths[which],
                    ],
                    &["--no-backup"],
                    "40",
                );
                (which, child)
            })
            .collect();
        let mut succeeded = [false, false];
        for (which, child) in children {
            let (code, stderr) = finish(child);
            assert!(
                code == 0 || code == 2,
                "round {round}: exit {code}: {stderr}"
            );
            if code == 0 {
                succeeded[which] = true;
            } else {
                assert!(
                    stderr.contains("changed on disk while it was being fixed"),
                    "round {round}: a losing run must say why: {stderr}"
                );
            }
        }
        assert!(
            succeeded.iter().any(|s| *s),
            "round {round}: no run succeeded"
        );
        let now = fs::read(dir.join("config.json")).unwrap();
        assert_ne!(
            now,
            incident(),
            "round {round}: a run reported a verified fix, but the file is the original again"
        );
        let theta =
            serde_json::from_slice::<serde_json::Value>(&now).unwrap()["rope_theta"].clone();
        let which = if theta == b["rope_theta"] { 1 } else { 0 };
        assert_eq!(theta, [&a, &b][which]["rope_theta"], "round {round}");
        assert!(
            succeeded[which],
            "round {round}: the file holds authority {which}'s fix, but that run did not succeed"
        );
        // The file is exactly that authority's fix: `diff` against it is clean.
        let out = Command::new(BIN)
            .args([
                Path::new("diff"),
                &dir,
                Path::new("--against"),
                &auths[which],
            ])
            .env("HF_HUB_OFFLINE", "1")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "round {round}");
        let left: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            left,
            ["config.json"],
            "round {round}: no lock or temp file left"
        );
    }
}

/// A drafter directory `models/dN` holding the incident's config, under `root`.
fn drafters(root: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let d = root.join(format!("models/d{i}"));
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("config.json"), incident()).unwrap();
            d
        })
        .collect()
}

/// A temp dir with an authority file, the pin file's path and `n` drafters.
fn pin_setup(n: usize) -> (tempfile::TempDir, PathBuf, PathBuf, Vec<PathBuf>) {
    let tmp = tempfile::tempdir().unwrap();
    let auth = tmp.path().join("authority.json");
    fs::write(&auth, serde_json::to_vec_pretty(&authority()).unwrap()).unwrap();
    let pins = tmp.path().join("dflash-check.toml");
    let dirs = drafters(tmp.path(), n);
    (tmp, auth, pins, dirs)
}

/// Eight `pin` runs on eight drafters, one pin file: every run that exits 0 has its pin in
/// the file. Before the lock, 4 of 8 were kept and every run exited 0.
#[test]
fn concurrent_pins_keep_every_pin() {
    for round in 0..3 {
        let (tmp, auth, pins, dirs) = pin_setup(8);
        let children: Vec<Child> = dirs
            .iter()
            .map(|d| {
                spawn(
                    &[Path::new("pin"), d, Path::new("--against"), &auth],
                    &["--pins", pins.to_str().unwrap()],
                    "0",
                )
            })
            .collect();
        let mut ok = Vec::new();
        for (i, child) in children.into_iter().enumerate() {
            let (code, stderr) = finish(child);
            assert!(
                code == 0 || code == 2,
                "round {round}: exit {code}: {stderr}"
            );
            if code == 0 {
                ok.push(i);
            }
        }
        let text = fs::read_to_string(&pins).unwrap();
        for i in &ok {
            assert!(
                text.contains(&format!("[drafters.\"models/d{i}\"]")),
                "round {round}: pin {i} reported success but is missing:\n{text}"
            );
        }
        assert_eq!(
            ok.len(),
            8,
            "round {round}: runs waited for the lock:\n{text}"
        );
        let left: Vec<String> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(left.is_empty(), "round {round}: left behind: {left:?}");
    }
}

/// The next process ids, from the kernel's last one (Linux hands them out in order).
fn next_pids(n: u32) -> Vec<u32> {
    let last: u32 = fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (last + 1..last + 1 + n).collect()
}

fn pin(dir: &Path, auth: &Path, pins: &Path) -> std::process::Output {
    Command::new(BIN)
        .args([Path::new("pin"), dir, Path::new("--against"), auth])
        .args([Path::new("--pins"), pins])
        .output()
        .unwrap()
}

/// A symlink planted at every name the old writer could pick (`.dflash-check.toml.tmp-PID`)
/// is not followed: its target stays as it was, the pin file is a regular file with its mode.
#[test]
fn pin_does_not_follow_a_planted_temp_symlink_and_keeps_the_mode() {
    let (tmp, auth, pins, dirs) = pin_setup(2);
    assert_eq!(pin(&dirs[0], &auth, &pins).status.code(), Some(0));
    fs::set_permissions(&pins, fs::Permissions::from_mode(0o640)).unwrap();

    let victim = tmp.path().join("victim.txt");
    fs::write(&victim, "precious\n").unwrap();
    for pid in next_pids(2000) {
        let link = tmp.path().join(format!(".dflash-check.toml.tmp-{pid}"));
        std::os::unix::fs::symlink(&victim, link).unwrap();
    }
    let out = pin(&dirs[1], &auth, &pins);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    let meta = fs::symlink_metadata(&pins).unwrap();
    assert!(meta.file_type().is_file(), "the pin file became a symlink");
    assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
    let text = fs::read_to_string(&pins).unwrap();
    assert!(text.contains("[drafters.\"models/d0\"]") && text.contains("[drafters.\"models/d1\"]"));
}

/// A new pin file gets the usual mode of a new file (0666 minus the umask), not a temp
/// file's 0600.
#[test]
fn a_new_pin_file_is_not_private_to_its_writer() {
    let (_tmp, auth, pins, dirs) = pin_setup(1);
    let out = Command::new("sh")
        .arg("-c")
        .arg("umask 022 && exec \"$@\"")
        .arg("sh")
        .arg(BIN)
        .args([Path::new("pin"), &dirs[0], Path::new("--against"), &auth])
        .args(["--pins", pins.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        fs::metadata(&pins).unwrap().permissions().mode() & 0o777,
        0o644
    );
}

/// `check PATH FLAG --pins PINS` run in `dir`, its output piped.
fn spawn_check(dir: &Path, path: &str, flag: &str, pins: &Path) -> Child {
    Command::new(BIN)
        .args(["check", path, flag, "--pins"])
        .arg(pins)
        .current_dir(dir)
        .env("HF_HUB_OFFLINE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Issue 32: `check --prune-ignores` and `check --baseline` took no lock, so a `pin` run that
/// wrote meanwhile lost its pin (both exiting 0). Each now waits for the pin file's lock (the
/// one `pin` holds while it reads and writes), reads the file under it, and keeps what the
/// holder wrote. The lock is held here by the test, standing in for a `pin` run: while it is
/// held the file does not change; the pin written under it survives the run's own edit.
#[test]
fn prune_and_baseline_wait_for_the_pin_file_lock() {
    for flag in ["--prune-ignores", "--baseline"] {
        let (tmp, auth, pins, dirs) = pin_setup(2);
        assert_eq!(pin(&dirs[0], &auth, &pins).status.code(), Some(0));
        let stale = "\n[[ignore]]\ncode = \"changed\"\npath = \"models/d0\"\npointer = \"/no_such_key\"\nreason = \"stale\"\n";
        fs::write(
            &pins,
            format!("{}{stale}", fs::read_to_string(&pins).unwrap()),
        )
        .unwrap();
        let before = fs::read_to_string(&pins).unwrap();

        let lock = dflash_check::fix::write::lock(&pins).unwrap();
        let child = spawn_check(tmp.path(), "models/d0", flag, &pins);
        // Long enough for the run to check one drafter and reach its write.
        std::thread::sleep(std::time::Duration::from_millis(3000));
        assert_eq!(
            fs::read_to_string(&pins).unwrap(),
            before,
            "{flag} wrote while another run held the lock"
        );
        // What a `pin` run holding the lock would write: another drafter's pin.
        let pinned = format!("{before}\n[drafters.\"models/d1\"]\nagainst = \"authority.json\"\n");
        fs::write(&pins, &pinned).unwrap();
        drop(lock);
        let (code, stderr) = finish(child);
        assert_eq!(
            code,
            if flag == "--baseline" { 0 } else { 1 },
            "{flag}: {stderr}"
        );
        let text = fs::read_to_string(&pins).unwrap();
        assert!(
            text.contains("[drafters.\"models/d1\"]"),
            "{flag} lost the pin written under the lock:\n{text}"
        );
        if flag == "--prune-ignores" {
            assert!(!text.contains("reason = \"stale\""), "{text}");
        } else {
            assert!(text.contains("reason = \"baseline of "), "{text}");
        }
    }
}

/// Issue 32, as reported: `pin` runs racing `check --baseline` and `check --prune-ignores` on
/// one pin file. Every pin whose run exits 0 is in the file afterwards, no run fails, and the
/// file still loads.
#[test]
fn pins_racing_baseline_and_prune_are_all_kept() {
    for round in 0..2 {
        let (tmp, auth, pins, dirs) = pin_setup(6);
        fs::write(
            &pins,
            "version = 2\n\n[[ignore]]\ncode = \"changed\"\npath = \"models/d0\"\n\
pointer = \"/no_such_key\"\nreason = \"stale\"\n",
        )
        .unwrap();
        let check = |flag: &str| spawn_check(tmp.path(), "models", flag, &pins);
        let mut children = vec![check("--baseline"), check("--prune-ignores")];
        for d in &dirs {
            children.push(spawn(
                &[Path::new("pin"), d, Path::new("--against"), &auth],
                &["--pins", pins.to_str().unwrap()],
                "0",
            ));
        }
        children.push(check("--baseline"));
        children.push(check("--prune-ignores"));
        let mut pinned = Vec::new();
        for (i, child) in children.into_iter().enumerate() {
            let (code, stderr) = finish(child);
            assert!(
                code == 0 || code == 1,
                "round {round}, run {i}: exit {code}: {stderr}"
            );
            if (2..2 + dirs.len()).contains(&i) {
                assert_eq!(code, 0, "round {round}: pin {}: {stderr}", i - 2);
                pinned.push(i - 2);
            }
        }
        let text = fs::read_to_string(&pins).unwrap();
        for i in pinned {
            assert!(
                text.contains(&format!("[drafters.\"models/d{i}\"]")),
                "round {round}: pin {i} reported success but is missing:\n{text}"
            );
        }
        let out = Command::new(BIN)
            .args(["check", "models", "--pins"])
            .arg(&pins)
            .current_dir(tmp.path())
            .env("HF_HUB_OFFLINE", "1")
            .output()
            .unwrap();
        assert_ne!(
            out.status.code(),
            Some(2),
            "round {round}: the pin file no longer loads: {}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
