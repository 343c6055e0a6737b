//! Published checkpoints that declare an MTP head (issue 41), read from
//! `$DFLASH_CHECK_REFERENCE/quantized-mtp` (config and index as published, no shards; each
//! folder's SOURCE.txt says where they come from). They are public files, so they live outside
//! the project: the test says "skipped" where the variable is unset.
//!
//! Expected verdicts, per engine: every folder's shards are absent (`weights-shard-missing`,
//! true for the folder); beyond that the compressed-tensors W4A16 Qwen3.6 keeps its head (packed
//! `mtp.*_proj`, plain `mtp.fc` as `ignore` says) and the MiMo fine-tune keeps its head as
//! `model.mtp_layers.0.*` (MiMo's spelling, family::heads): no MTP finding; the MLX 8-bit Qwen3.5
//! declares its head and ships none of it: `weights-mtp-missing`, an error under every engine,
//! and its `quantization` reads as declared (no `weights-quantized-undeclared`).

use std::io::Write;
use std::path::PathBuf;

mod common;

use common::{codes, run};

const ENV: &str = "DFLASH_CHECK_REFERENCE";

fn corpus(test: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os(ENV).filter(|v| !v.is_empty()) else {
        let _ = writeln!(
            std::io::stderr(),
            "{test}: skipped: set {ENV} to the folder of published reference files (.ci/run sets it)"
        );
        return None;
    };
    let dir = PathBuf::from(dir).join("quantized-mtp");
    if !dir.is_dir() {
        let _ = writeln!(
            std::io::stderr(),
            "{test}: skipped: {} does not exist",
            dir.display()
        );
        return None;
    }
    Some(dir)
}

/// `(folder, the codes besides weights-shard-missing, each an error)`.
const EXPECTED: &[(&str, &[&str])] = &[
    ("fantasylord__Qwen36", &[]),
    ("jj8127__mimo_kor", &[]),
    (
        "leo-kreisman__Qwen3.5-9B-MLX-8bit",
        &["weights-mtp-missing"],
    ),
];

#[test]
fn each_reference_checkpoint_gets_its_verdict_under_each_engine() {
    let Some(dir) = corpus("each_reference_checkpoint_gets_its_verdict_under_each_engine") else {
        return;
    };
    for (folder, expected) in EXPECTED {
        let path = dir.join(folder);
        let path = path.to_str().unwrap();
        for engine in [None, Some("vllm"), Some("sglang")] {
            let mut args = vec!["weights", path, "--format", "json"];
            if let Some(e) = engine {
                args.extend(["--engine", e]);
            }
            let (code, out, err) = run(&args);
            assert_eq!(code, 1, "{folder} {engine:?}: {err}\n{out}");
            let report: serde_json::Value = serde_json::from_str(&out).unwrap();
            let found: Vec<(String, String)> = codes(&report)
                .into_iter()
                .filter(|(c, _)| c != "weights-shard-missing")
                .collect();
            let want: Vec<(String, String)> = expected
                .iter()
                .map(|c| (c.to_string(), "error".to_string()))
                .collect();
            assert_eq!(found, want, "{folder} under {engine:?}:\n{out}");
        }
    }
}
