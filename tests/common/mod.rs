//! Running the real binary in tests: offline, colour decided by flags only.
#![allow(dead_code)]

use assert_cmd::Command;

/// The binary, with the Hub off and NO_COLOR unset (tests pass --color themselves).
pub fn dflash() -> Command {
    let mut cmd = Command::cargo_bin("dflash-check").unwrap();
    cmd.env_remove("NO_COLOR").env("HF_HUB_OFFLINE", "1");
    cmd
}

/// Runs it with `args`: (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    run_in(std::path::Path::new("."), args)
}

/// Runs it in `cwd` with `args`: (exit code, stdout, stderr).
pub fn run_in(cwd: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = dflash().current_dir(cwd).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The `(code, severity)` pairs of a JSON report's `diagnostics`, in order.
pub fn codes(report: &serde_json::Value) -> Vec<(String, String)> {
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

/// The first finding of a JSON report with `code` (panics, showing the report, when none).
pub fn finding<'a>(report: &'a serde_json::Value, code: &str) -> &'a serde_json::Value {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {report:#}"))
}

/// The GGUF fixtures `scripts/weights-setup.sh` writes with llama.cpp's own writer
/// (`tests/gguf/generate.py` into `target/gguf-fixtures`, or `DFLASH_GGUF_FIXTURES`), when
/// `marker` is among them. Without them the test says "skipped" on stderr and passes, except
/// under `CI=true`, where it fails.
pub fn gguf_fixtures(test: &str, marker: &str) -> Option<std::path::PathBuf> {
    use std::io::Write;
    let dir = std::env::var_os("DFLASH_GGUF_FIXTURES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/gguf-fixtures")
        });
    if dir.join(marker).is_file() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test}: the GGUF fixtures are missing; run scripts/weights-setup.sh (CI must not skip this)");
    }
    let _ = writeln!(
        std::io::stderr(),
        "{test}: skipped: {} is missing; run scripts/weights-setup.sh",
        dir.display()
    );
    None
}

/// Waits for `child` with `wait4`, which std does not offer, for its resource usage: (exit
/// code, or -1 when a signal ended it; peak RSS in bytes).
#[allow(clippy::zombie_processes)]
pub fn wait_peak(child: std::process::Child) -> (i32, u64) {
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid, and wait4 writes it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: `pid` is our child, not yet waited for; both pointers are to live locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, usage.ru_maxrss as u64 * 1024)
}

/// Lays out `n` drafters under `root` as bench/check-scale.sh does: a third wrong and pinned to
/// a file authority, a third clean and pinned to a snapshot, a third unpinned (fixture paths
/// are relative to the crate root, the tests' working directory).
pub fn check_tree(root: &std::path::Path, n: usize) {
    let copy = |from: &str, to: &std::path::Path| {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
    };
    copy(
        "fixtures/incident/authority/config.json",
        &root.join("authorities/qwen3.6-27b.json"),
    );
    for f in ["config.json", "tokenizer.json", "tokenizer_config.json"] {
        let from = format!("fixtures/targets/Qwen3.6-27B/{f}");
        if std::path::Path::new(&from).exists() {
            copy(&from, &root.join("targets/Qwen3.6-27B").join(f));
        }
    }
    let mut pins = String::from("version = 1\n");
    for i in 1..=n {
        let (dir, from, pin) = match i % 3 {
            0 => (
                format!("models/wrong-{i}"),
                "fixtures/incident/Qwen3.6-27B-DFlash/config.json",
                "against = \"authorities/qwen3.6-27b.json\"\ntarget = \"targets/Qwen3.6-27B\"\n",
            ),
            1 => (
                format!("models/good-{i}"),
                "fixtures/incident/authority/config.json",
                "snapshot = \"z-lab/Qwen3.6-27B-DFlash\"\n",
            ),
            _ => (
                format!("models/Qwen3-8B-DFlash-b16-{i}"),
                "fixtures/qwen3-8b/Qwen3-8B-DFlash-b16/config.json",
                "",
            ),
        };
        copy(from, &root.join(&dir).join("config.json"));
        if !pin.is_empty() {
            pins.push_str(&format!("\n[drafters.\"{dir}\"]\n{pin}"));
        }
    }
    std::fs::write(root.join("dflash-check.toml"), pins).unwrap();
}
