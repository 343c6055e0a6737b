//! Memory within a small multiple of the input, for the inputs that are lists (issue 44): a
//! Hub tree listing and a target's `tokenizer.json`, each generated at test time in the shape
//! that cost the most. Peak memory is the child's `ru_maxrss`, read with `wait4` (as
//! `tests/check_memory.rs` does), minus the same command's peak on a small input: what the
//! input itself costs. Before, each of these was built into a `serde_json::Value` tree (or
//! held twice): the listing of one entry holding 8 million numbers peaked at 630 MB for 16
//! MiB, a 32 MiB tokenizer whose decoder is a list 770 MB, one of 700,000 added tokens 167 MB.

mod common;
mod support;

use std::path::Path;
use std::process::{Command, Stdio};

use support::{FakeRepo, Fault, HubServer};

/// Runs the binary with `args` and `envs`: (exit code, peak RSS in bytes).
fn peak(args: &[&str], envs: &[(&str, &str)]) -> (i32, u64) {
    let child = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(args)
        .envs(envs.iter().copied())
        .env_remove("HF_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    common::wait_peak(child)
}

/// Asserts that `used` (peak minus the small input's peak) is under `times` the input.
fn within(what: &str, used: u64, baseline: u64, input: u64, times: u64) {
    let extra = used.saturating_sub(baseline);
    println!(
        "{what}: peak {} MiB, baseline {} MiB, input {} MiB",
        used >> 20,
        baseline >> 20,
        input >> 20
    );
    assert!(
        extra < times * input,
        "{what}: {} MiB over the baseline for {} MiB of input",
        extra >> 20,
        input >> 20
    );
}

/// `launch -- llama-server -hf org/x` against the test server, whose tree listing is `listing`.
fn launch_with_listing(listing: String) -> (i32, u64) {
    let hub = HubServer::start();
    let mut repo = FakeRepo::default();
    repo.commit(&[("m-Q8_0.gguf", b"GGUF".as_slice())]);
    hub.add_repo("org/x", repo);
    // The refs answer as usual; the tree answer is the listing.
    hub.fault(Some("GET"), Fault::Pass);
    hub.fault(
        Some("GET"),
        Fault::Status {
            code: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: listing,
        },
    );
    let cache = tempfile::tempdir().unwrap();
    let home = cache.path().join("home");
    peak(
        &[
            "launch",
            "--",
            "llama-server",
            "-hf",
            "org/x",
            "--spec-type",
            "draft-simple",
        ],
        &[
            ("HF_ENDPOINT", &hub.url),
            ("HF_HUB_CACHE", cache.path().to_str().unwrap()),
            ("HF_HOME", home.to_str().unwrap()),
            ("HF_HUB_OFFLINE", "0"),
        ],
    )
}

/// A 16 MiB listing (the cap) whose one entry holds 8 million numbers: 630 MB before.
#[test]
fn a_hub_listing_costs_about_its_bytes() {
    let cap = 16 << 20;
    let head = r#"[{"type":"file","path":"m-Q8_0.gguf","size":4,"x":["#;
    let small = format!("{head}0]}}]");
    let mut big = String::with_capacity(cap);
    big.push_str(head);
    while big.len() + 8 < cap {
        big.push_str("0,");
    }
    big.push_str("0]}]");
    let input = big.len() as u64;
    let (_, baseline) = launch_with_listing(small);
    let (code, used) = launch_with_listing(big);
    assert_ne!(code, -1, "killed");
    within("16 MiB listing", used, baseline, input, 3);
}

/// A target directory whose `tokenizer.json` is `body` (with the Qwen3.6-27B config).
fn target(dir: &Path, body: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(
        "fixtures/targets/Qwen3.6-27B/config.json",
        dir.join("config.json"),
    )
    .unwrap();
    std::fs::write(dir.join("tokenizer.json"), body).unwrap();
}

fn lint_against(dir: &Path) -> (i32, u64) {
    peak(
        &[
            "lint",
            "fixtures/incident/Qwen3.6-27B-DFlash",
            "--target",
            dir.to_str().unwrap(),
            "--offline",
        ],
        &[],
    )
}

/// 32 MiB tokenizers: a decoder that is a list of steps (770 MB before: a `Value` tree), and
/// 700,000 added tokens (167 MB before: the list held beside the tokens read from it, and the
/// table copied for each command stage).
#[test]
fn a_target_tokenizer_costs_a_small_multiple_of_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let size = 32 << 20;
    let byte_level = r#""pre_tokenizer":{"type":"ByteLevel"}"#;
    let model = r#""model":{"type":"BPE","vocab":{"a":0},"merges":[]}"#;
    let fill = |head: &str, item: &dyn Fn(usize) -> String, tail: &str| {
        let mut s = String::with_capacity(size + 100);
        s.push_str(head);
        let mut i = 0;
        while s.len() < size {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&item(i));
            i += 1;
        }
        s.push_str(tail);
        s
    };
    let small = format!(r#"{{"added_tokens":[],{byte_level},{model}}}"#);
    target(&dir.path().join("small"), &small);
    let (_, baseline) = lint_against(&dir.path().join("small"));
    let decoder = fill(
        r#"{"added_tokens":[],"decoder":{"type":"Sequence","decoders":["#,
        &|_| r#"{"type":"Strip","content":" ","start":1,"stop":0}"#.to_string(),
        &format!(r#"]}},{byte_level},{model}}}"#),
    );
    let added = fill(
        r#"{"added_tokens":["#,
        &|i| format!(r#"{{"id":{i},"content":"<t{i}>","special":true}}"#),
        &format!(r#"],{byte_level},{model}}}"#),
    );
    for (name, body) in [("decoder", decoder), ("added", added)] {
        let path = dir.path().join(name);
        target(&path, &body);
        let (code, used) = lint_against(&path);
        assert!(code == 0 || code == 1, "{name}: exit {code}");
        within(name, used, baseline, body.len() as u64, 3);
    }
}
