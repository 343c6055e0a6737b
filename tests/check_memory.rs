//! `check --format json` over many drafters holds no copy of them beyond what the human page
//! holds, plus the JSON text itself (issue 32: 10,000 drafters peaked at 254 MB, the drafters
//! copied into a `serde_json::Value` before they were written). Peak memory is the child's
//! `ru_maxrss`, read with `wait4`, so the test needs no tool.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `check models --format FORMAT` in `root`: (exit code, peak RSS in bytes, output bytes).
fn peak(root: &Path, format: &str) -> (i32, u64, u64) {
    let out_path = root.join(format!("out.{format}"));
    let child = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["check", "models", "--format", format])
        .current_dir(root)
        .env("HF_HUB_OFFLINE", "1")
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (code, peak) = common::wait_peak(child);
    let len = std::fs::metadata(&out_path).unwrap().len();
    (code, peak, len)
}

#[test]
fn json_over_many_drafters_costs_about_its_text_more_than_human() {
    let dir = tempfile::tempdir().unwrap();
    common::check_tree(dir.path(), 2000);
    let (human_code, human, _) = peak(dir.path(), "human");
    let (json_code, json, text) = peak(dir.path(), "json");
    assert_eq!((human_code, json_code), (1, 1));
    // The JSON text is held until the command succeeds (nothing half-written on stdout); beyond
    // it (and the growth of its buffer), JSON holds what the human page holds. Before the fix
    // the drafters' `Value` copy alone was about three times the text.
    let extra = json.saturating_sub(human);
    println!(
        "peak RSS: json {} KiB, human {} KiB; JSON text {} KiB",
        json >> 10,
        human >> 10,
        text >> 10
    );
    assert!(
        extra < 2 * text,
        "json peaked at {} MB, human at {} MB, for {} MB of JSON text",
        json >> 20,
        human >> 20,
        text >> 20
    );
}
