//! `check --format json` over many drafters holds no copy of them beyond what the human page
//! holds, plus the JSON text itself (issue 32: 10,000 drafters peaked at 254 MB, the drafters
//! copied into a `serde_json::Value` before they were written). Peak memory is the child's
//! `ru_maxrss`, read with `wait4`, so the test needs no tool.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

/// Lays out `n` drafters as bench/check-scale.sh does: a third wrong and pinned to a file
/// authority, a third clean and pinned to a snapshot, a third unpinned.
fn tree(root: &Path, n: usize) {
    let copy = |from: &str, to: &Path| {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
    };
    copy(
        "fixtures/incident/authority/config.json",
        &root.join("authorities/qwen3.6-27b.json"),
    );
    for f in ["config.json", "tokenizer.json", "tokenizer_config.json"] {
        let from = format!("fixtures/targets/Qwen3.6-27B/{f}");
        if Path::new(&from).exists() {
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
    tree(dir.path(), 2000);
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
