//! GGUF headers written by llama.cpp's own writer (the `gguf` package on PyPI): the core's
//! reader against them (metadata of every kind the writer emits, the tokenizer arrays, the
//! tensor table, bytes read bounded by the header plus one read block), and `weights FILE.gguf`
//! end to end, one case per GGUF rule (on main, `weights` said "no model.safetensors" for
//! every one of them).
//!
//! The fixtures are generated, not committed: `scripts/weights-setup.sh` installs `gguf` into
//! `.venv-hf` and runs `tests/gguf/generate.py` into `target/gguf-fixtures` (or
//! `DFLASH_GGUF_FIXTURES`). Without them each test says "skipped" on stderr and passes, except
//! under `CI=true`, where it fails.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use dflash_check::gguf::{self, Limits};

fn fixtures(test: &str) -> Option<PathBuf> {
    common::gguf_fixtures(test, "draft-qwen3.gguf")
}

fn weights(file: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["weights", "--format", "json"])
        .arg(file)
        .output()
        .expect("runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn reads_what_llama_cpps_writer_wrote() {
    let Some(dir) = fixtures("reads_what_llama_cpps_writer_wrote") else {
        return;
    };
    let h = gguf::read_path(&dir.join("draft-qwen3.gguf"), Limits::default()).unwrap();
    assert_eq!(h.version, 3);
    assert_eq!(h.architecture(), Some("qwen3"));
    assert_eq!(h.u64("qwen3.block_count"), Some(2));
    let tok = h.tokenizer();
    assert_eq!(tok.model, Some("gpt2"));
    assert_eq!(tok.pre, Some("qwen2"));
    assert_eq!(tok.vocab_size(), Some(300));
    assert_eq!(tok.tokens.unwrap().get(299).unwrap(), "<|im_end|>");
    assert_eq!(tok.token_types().unwrap()[299], 3);
    assert_eq!(
        (tok.bos(), tok.eos(), tok.add_bos()),
        (Some(297), Some(299), Some(false))
    );
    let q = h
        .tensors
        .iter()
        .find(|t| t.name == "blk.0.attn_q.weight")
        .unwrap();
    assert_eq!(
        (q.type_name().as_str(), q.dims.clone()),
        ("Q8_0", vec![64, 64])
    );
    assert_eq!(q.bytes, Some(64 * 64 / 32 * 34));
    let e = h
        .tensors
        .iter()
        .find(|t| t.name == "token_embd.weight")
        .unwrap();
    assert_eq!(
        (e.type_name().as_str(), e.torch_shape()),
        ("F16", vec![300, 64])
    );
    // A small file is read whole (it is less than one block); the data's end is the file's.
    assert_eq!(h.bytes_read, h.file_size);
    let d = gguf::read_path(&dir.join("dflash.gguf"), Limits::default()).unwrap();
    let layers = d
        .get("dflash.target_layers")
        .and_then(|v| v.as_array())
        .unwrap();
    assert_eq!(layers.integers(), Some(vec![2, 10, 18, 26, 34]));
    assert_eq!(d.tokenizer().id("mask"), Some(298));
}

/// A 4 GiB file: only the header is read, plus at most one block.
#[test]
fn a_multi_gb_file_reads_only_its_header() {
    let Some(dir) = fixtures("a_multi_gb_file_reads_only_its_header") else {
        return;
    };
    let h = gguf::read_path(&dir.join("big.gguf"), Limits::default()).unwrap();
    assert!(h.file_size > 4 << 30, "{}", h.file_size);
    assert_eq!(h.tokenizer().vocab_size(), Some(151_936));
    // The vocabulary spans the reader's 1 MiB blocks: its last token is whole.
    assert_eq!(
        h.tokenizer().tokens.unwrap().get(151_935),
        Some("<|im_end|>")
    );
    assert_eq!(h.tensors.len(), 252);
    assert!(h.bytes_read >= h.header_bytes);
    assert!(
        h.bytes_read <= h.header_bytes + gguf::READ_BLOCK as u64,
        "{h:?}"
    );
}

/// One file per GGUF rule, and the clean ones clean.
#[test]
fn weights_checks_gguf_files() {
    let Some(dir) = fixtures("weights_checks_gguf_files") else {
        return;
    };
    let cases: &[(&str, i32, &[&str])] = &[
        ("draft-qwen3.gguf", 0, &[]),
        ("mtp-qwen35.gguf", 0, &[]),
        ("dflash.gguf", 0, &[]),
        ("mtp-only.gguf", 0, &["weights-gguf-mtp-only"]),
        (
            "mtp-key-missing.gguf",
            0,
            &["weights-gguf-nextn-key-missing"],
        ),
        (
            "mtp-wrong-index.gguf",
            1,
            &["weights-gguf-nextn-index", "blk.2.nextn.eh_proj.weight"],
        ),
        ("mtp-count-over.gguf", 1, &["weights-gguf-nextn-count"]),
        (
            "dflash-no-target-layers.gguf",
            1,
            &["weights-gguf-dflash-target-layers"],
        ),
        (
            "embd-rows.gguf",
            1,
            &["weights-gguf-embedding-rows", "[64, 301]"],
        ),
        // A converter's empty output (ik_llama.cpp#2043): on main, exit 0.
        (
            "dflash-empty.gguf",
            1,
            &["weights-gguf-dflash-empty", "no tensors"],
        ),
        // A no_vocab DSpark draft whose mask id llama.cpp ignores (llama.cpp#26761): on main,
        // exit 0. dflash.gguf above, with a vocabulary and its mask id, is the control.
        (
            "dspark-no-vocab.gguf",
            1,
            &[
                "weights-gguf-dflash-mask-token",
                "`tokenizer.ggml.model` is `no_vocab`",
            ],
        ),
    ];
    // Every GGUF rule has a case here (tests/weights.rs covers the safetensors ones), or, for
    // the rule that needs the target, in weights_judges_a_gguf_drafts_target_layers.
    let with_target = ["weights-gguf-dflash-target-layer-range"];
    for code in dflash_check::weights::WeightsCode::ALL {
        let c = code.as_str();
        assert!(
            !c.starts_with("weights-gguf-")
                || with_target.contains(&c)
                || cases.iter().any(|k| k.2.contains(&c)),
            "{c} has no case"
        );
    }
    for (file, code, want) in cases {
        let (got, text) = weights(&dir.join(file));
        assert_eq!(got, *code, "{file}: {text}");
        for w in *want {
            assert!(text.contains(w), "{file}: want {w} in {text}");
        }
        if want.is_empty() {
            assert!(!text.contains("weights-gguf-"), "{file}: {text}");
        }
        assert!(
            text.contains("\"gguf.version\""),
            "{file}: the metadata is in the JSON: {text}"
        );
    }
}

/// `weights DRAFT.gguf --target TARGET`: a DFlash draft's target layers against the target's
/// layers, the target a GGUF (its block count) or an HF config (`num_hidden_layers`). On main
/// each of these passed (exit 0), or refused the GGUF `--target` (exit 2).
#[test]
fn weights_judges_a_gguf_drafts_target_layers() {
    let Some(dir) = fixtures("weights_judges_a_gguf_drafts_target_layers") else {
        return;
    };
    let run = |draft: &str, target: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
            .args(["weights", "--format", "json"])
            .arg(dir.join(draft))
            .arg("--target")
            .arg(target)
            .output()
            .expect("runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.code().unwrap_or(-1), text)
    };
    let code = "weights-gguf-dflash-target-layer-range";
    // Layers [2, 10, 18, 26, 34] on a 4-block target: past its last layer, an abort at start.
    let (exit, text) = run("dflash.gguf", &dir.join("target-qwen3.gguf"));
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.contains(code) && text.contains("[10, 18, 26, 34]") && text.contains("4 layers"),
        "{text}"
    );
    // The control: the same draft on a 36-block target.
    let (exit, text) = run("dflash.gguf", &dir.join("target-qwen3-36.gguf"));
    assert_eq!(exit, 0, "{text}");
    assert!(!text.contains(code), "{text}");
    // Id 4 on the 4-block qwen3 target: its last layer's output, which a qwen3 graph does not
    // publish (FIELD row 23's 48 for a 48-block target).
    let (exit, text) = run("dflash-last-layer.gguf", &dir.join("target-qwen3.gguf"));
    assert_eq!(exit, 1, "{text}");
    assert!(
        text.contains("`qwen3` target's graph does not publish it"),
        "{text}"
    );
    // An HF target config: its num_hidden_layers, and the last-layer id a warning there.
    let hf = tempfile::tempdir().unwrap();
    std::fs::write(
        hf.path().join("config.json"),
        r#"{"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "num_hidden_layers": 4,
            "hidden_size": 64, "vocab_size": 300}"#,
    )
    .unwrap();
    let (exit, text) = run("dflash.gguf", hf.path());
    assert_eq!(exit, 1, "{text}");
    assert!(text.contains("`num_hidden_layers` = 4"), "{text}");
    let (exit, text) = run("dflash-last-layer.gguf", hf.path());
    assert_eq!(exit, 0, "{text}");
    assert!(
        text.contains(code) && text.contains("\"warning\""),
        "{text}"
    );
}

/// A GGUF cut inside its vocabulary: exit 2, the key index and name, "truncated".
#[test]
fn a_truncated_gguf_is_refused_with_where() {
    let Some(dir) = fixtures("a_truncated_gguf_is_refused_with_where") else {
        return;
    };
    let bytes = std::fs::read(dir.join("draft-qwen3.gguf")).unwrap();
    let tmp = std::env::temp_dir().join(format!("dflash-gguf-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let cut = tmp.join("cut.gguf");
    std::fs::write(&cut, &bytes[..2000]).unwrap();
    let (code, text) = weights(&cut);
    std::fs::remove_dir_all(&tmp).ok();
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("truncated") && text.contains("`tokenizer.ggml.tokens`"),
        "{text}"
    );
    assert!(text.contains("hint:"), "{text}");
}
