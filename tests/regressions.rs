//! One regression test per bug found by the bad-input corpus (tests/bad-input/), named after
//! the bug. See RELIABILITY.md, "Bugs found and fixed".

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use dflash_check::config;
use dflash_check::diff::{self, DiffKind};
use dflash_check::json::Document;

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("dflash-check")
}

fn compare(local: &str, authority: &str) -> Vec<diff::Difference> {
    diff::compare(
        &Document::parse(local).unwrap().root,
        &Document::parse(authority).unwrap().root,
    )
}

/// `248070.0` (and `2.4807e5`, `[1.0, 16.0]`, `block_size: 16.0`) compared equal to the
/// integer and the gate said "identical" (exit 0), though Python reads a float there.
#[test]
fn bug_float_id_reported_identical() {
    for (local, authority) in [
        (
            r#"{"mask_token_id": 248070.0}"#,
            r#"{"mask_token_id": 248070}"#,
        ),
        (
            r#"{"mask_token_id": 2.4807e5}"#,
            r#"{"mask_token_id": 248070}"#,
        ),
        (
            r#"{"target_layer_ids": [1.0, 16]}"#,
            r#"{"target_layer_ids": [1, 16]}"#,
        ),
        (
            r#"{"block_size": 16}"#,
            r#"{"dflash_config": {"block_size": 16.0}}"#,
        ),
    ] {
        let d = compare(local, authority);
        assert_eq!(d.len(), 1, "{local} vs {authority}: {d:?}");
        assert_eq!(d[0].kind, DiffKind::Type);
    }
    // Float fields still compare by value.
    assert!(compare(r#"{"rope_theta": 1e7}"#, r#"{"rope_theta": 10000000}"#).is_empty());
}

/// An id past 2^64 on both sides was not out of range: `diff` exited 0 for an id that no
/// embedding has, and showed it undecoded.
#[test]
fn bug_id_past_u64_not_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let text = fs::read_to_string("fixtures/incident/authority/config.json")
        .unwrap()
        .replace(
            "\"mask_token_id\": 248070",
            "\"mask_token_id\": 18446744073709551616",
        );
    fs::write(dir.path().join("config.json"), text).unwrap();
    let p = dir.path().to_str().unwrap();
    let out = Command::new(bin())
        .args(["diff", p, "--against", p])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("18446744073709551616 (out of range: past 2^64)"),
        "{stdout}"
    );
}

/// A string inside an id list vanished from the display: `[248044, "248046"]` was shown as
/// `[248044 <|endoftext|>]`.
#[test]
fn bug_string_in_id_list_hidden() {
    let doc = Document::parse(r#"[248044, "248046", 1.5]"#).unwrap();
    let tokens = vec![dflash_check::tokens::TokenTable::empty(None).decode(248044)];
    let shown = dflash_check::text::short_ids(Some(&doc.root), &tokens);
    assert_eq!(shown, r#"[248044, "248046", 1.5]"#);
}

/// A file of spaces and newlines was called "empty", at the position of its end.
#[test]
fn bug_whitespace_only_called_empty() {
    let err = Document::parse(" \n\t\n").unwrap_err();
    assert!(err.message.contains("only whitespace"), "{}", err.message);
    let err = Document::parse("").unwrap_err();
    assert!(err.message.contains("the file is empty"), "{}", err.message);
}

/// `null` at the top level was "a null".
#[test]
fn bug_top_level_null_article() {
    let err = config::parse(Path::new("config.json"), b"null").unwrap_err();
    assert!(
        err.message.contains("the top-level value is null;"),
        "{}",
        err.message
    );
}

/// A device or stream (no size up front) was read to the cap plus one byte and then parsed
/// anyway, instead of being refused. Now it is refused before any read, as not a regular file.
#[test]
fn bug_device_read_past_cap() {
    let err = config::read_capped(Path::new("/dev/zero"), 1024).unwrap_err();
    assert!(
        err.message
            .contains("is a character device, not a regular file"),
        "{}",
        err.message
    );
}

/// A symlink loop said "Too many levels of symbolic links (os error 40)".
#[test]
fn bug_symlink_loop_message() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("config.json");
    std::os::unix::fs::symlink("config.json", &link).unwrap();
    let err = config::load(dir.path()).unwrap_err();
    assert!(
        err.message.contains("loop of symbolic links"),
        "{}",
        err.message
    );
}

/// A closed stdout (`diff … | head -1` under `set -o pipefail`) turned exit 1 (findings)
/// into exit 0: a finding lost, and the gate passed.
#[test]
fn bug_broken_pipe_exit_code_lost() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = Command::new(bin())
        .args([
            "diff",
            "fixtures/incident/Qwen3.6-27B-DFlash",
            "--against",
            "fixtures/incident/authority",
        ])
        .stdout(Stdio::from(writer))
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
}

/// Runs `f` on a thread and fails the test if it has not answered within `secs` (a hang found
/// by the corpus must fail its regression test, not stall the suite; the stuck thread is left
/// behind and ends with the process).
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("no answer within {secs} s"))
}

/// A `model.safetensors` (or a shard) that is a FIFO with no writer blocked `weights` and
/// `lint` forever in open(2). Now it is refused at once, as config files are.
#[test]
fn bug_safetensors_fifo_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("model.safetensors");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let err = within(10, move || {
        dflash_check::weights::header::read_file(&fifo, "model.safetensors")
    })
    .unwrap_err();
    assert!(err.message.contains("FIFO"), "{}", err.message);
}

/// A header whose data offsets reach 2^64 - 8 (8 tensors of 2^61 - 1 bytes: each offset fits a
/// u64) overflowed `header end + data length`: a panic in debug builds, and in release a wrapped
/// sum that called the file "followed by bytes" instead of truncated.
#[test]
fn bug_safetensors_offsets_wrap_u64() {
    let big = (1u64 << 61) - 1;
    let tensors: Vec<String> = (0..8)
        .map(|i| {
            format!(
                "\"t{i}\":{{\"dtype\":\"U8\",\"shape\":[{big}],\"data_offsets\":[{},{}]}}",
                i * big,
                (i + 1) * big
            )
        })
        .collect();
    let json = format!("{{{}}}", tensors.join(","));
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(json.as_bytes());
    let size = bytes.len() as u64;
    let err = dflash_check::weights::header::parse_prefix("w.safetensors", "w", &bytes, size)
        .unwrap_err();
    assert!(err.message.contains("truncated"), "{}", err.message);
}

/// A launch file whose first line has a multi-byte character across byte 5 (`vllmé …`)
/// panicked in the Dockerfile detection (`line[..5]` off a character boundary).
#[test]
fn bug_launch_multibyte_first_line_panics() {
    for text in ["vllmé serve M\n", "FROMé x\n", "abcd\u{1F600}\n"] {
        let err = dflash_check::launch::parse_input(&[], Some(("serve.sh", text))).unwrap_err();
        assert!(
            err.message.contains("no vLLM, SGLang, "),
            "{text:?}: {}",
            err.message
        );
    }
}

/// A quote opened on line 1 and never closed re-split the whole growing command at every
/// further line: quadratic, so a 1 MB script of short lines never finished. Now the quote
/// state is carried from line to line and the error comes at once.
#[test]
fn bug_launch_open_quote_quadratic() {
    let mut text = "vllm serve M --speculative-config '{\n".to_string();
    while text.len() < 1_000_000 {
        text.push_str("x\n");
    }
    let err = within(20, move || {
        dflash_check::launch::parse_input(&[], Some(("serve.sh", text.as_str()))).map(|_| ())
    })
    .unwrap_err();
    assert!(err.message.contains("serve.sh:1"), "{}", err.message);
}

/// A compose file of ten levels of ten aliases (a few hundred bytes) made the YAML loader copy
/// 10^10 nodes: memory and time without bound. Now the nodes are counted from the parser's
/// events first and such a file is refused.
#[test]
fn bug_launch_compose_alias_bomb() {
    let mut text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n".to_string();
    for i in 0..9u8 {
        let (name, prev) = ((b'b' + i) as char, (b'a' + i) as char);
        let refs = vec![format!("*{prev}"); 10].join(", ");
        text.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    text.push_str("services:\n  vllm:\n    image: vllm/vllm-openai\n    command: *j\n");
    let err = within(20, move || {
        dflash_check::launch::parse_input(&[], Some(("docker-compose.yml", text.as_str())))
            .map(|_| ())
    })
    .unwrap_err();
    assert!(err.message.contains("aliases"), "{}", err.message);
}

/// `B=$A$A…`, `C=$B$B…`: each line multiplies the expanded length, so a short script expanded
/// variables to gigabytes. Expansion now has a budget (16 MiB over the input).
#[test]
fn bug_launch_variable_expansion_bomb() {
    let mut text = format!("V0={}\n", "x".repeat(100));
    for i in 1..12 {
        text.push_str(&format!("V{i}={}\n", format!("$V{}", i - 1).repeat(10)));
    }
    text.push_str("vllm serve $V11 --speculative-config '{\"method\": \"dflash\"}'\n");
    let err = within(20, move || {
        dflash_check::launch::parse_input(&[], Some(("serve.sh", text.as_str()))).map(|_| ())
    })
    .unwrap_err();
    assert!(
        err.message.contains("expands its variables"),
        "{}",
        err.message
    );
}

/// Every command of a script carried its own copy of the line it came from (and of the
/// environment exported before it): `x;x;x;…` on one 1 MB line needed about 250 GB. The text is
/// now shared, and a script holds at most 1000 commands and 1000 exported variables.
#[test]
fn bug_launch_many_commands_memory() {
    let text = "x ; ".repeat(250_000);
    let err = within(20, move || {
        dflash_check::launch::parse_input(&[], Some(("serve.sh", text.as_str()))).map(|_| ())
    })
    .unwrap_err();
    assert!(
        err.message.contains("more than 1000 commands"),
        "{}",
        err.message
    );
    let mut text = String::new();
    for i in 0..5000 {
        text.push_str(&format!("export V{i}=1\necho {i}\n"));
    }
    let err = dflash_check::launch::parse_input(&[], Some(("serve.sh", text.as_str())))
        .map(|_| ())
        .unwrap_err();
    assert!(
        err.message.contains("more than 1000 variables"),
        "{}",
        err.message
    );
}

/// A first scrape without vLLM's per-position counter and a last scrape with it: the end's
/// totals were taken as the window's deltas, and position 1 showed 170 accepted tokens in 100
/// drafts, "170%". The per-position shape is now not measured then (the totals still are).
#[test]
fn bug_acceptance_per_position_over_100_percent() {
    use dflash_check::acceptance::{compute, metrics};
    let read = |name: &str| {
        let text = fs::read_to_string(format!("tests/bad-input/cases/metrics/{name}")).unwrap();
        let e = metrics::parse(&text, "u").unwrap();
        compute::vllm_counters(&e, None, "u").unwrap()
    };
    let w = compute::vllm_window(
        dflash_check::engine::Engine::Vllm,
        &read("truncated-after-family.txt"),
        &read("valid-2.txt"),
        "u",
    )
    .unwrap();
    assert_eq!(w.acceptance_length, 3.0);
    assert!(
        w.per_position.iter().all(|p| p.acceptance <= 1.0),
        "{:?}",
        w.per_position
    );
}
