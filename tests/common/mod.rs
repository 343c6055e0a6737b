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
    let out = dflash().args(args).output().unwrap();
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
