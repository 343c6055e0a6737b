//! Classic draft models (issue 31): `lint DRAFT --family draft --target TARGET` and `launch`
//! lines serving one, checked by vocabulary on real tokenizers: the Qwen3 tokenizer
//! (bench/fetch-qwen3-tokenizer.sh) and Meta-Llama-3's (bench/fetch-llama3-tokenizer.sh), each
//! sha256-checked by its script and here. Each model directory is a real tokenizer beside a
//! small config written by the test (configs of the published Qwen3-0.6B / Llama-3.2-1B shape).
//!
//! ```sh
//! export DFLASH_QWEN3_TOKENIZER_DIR=$(bench/fetch-qwen3-tokenizer.sh)
//! export DFLASH_LLAMA3_TOKENIZER_DIR=$(bench/fetch-llama3-tokenizer.sh)
//! cargo test --test draft_vocab
//! ```
//!
//! Without the variables the tokenizer tests say "skipped" on stderr and pass; the exit-code
//! tests need no tokenizer and always run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use sha2::{Digest, Sha256};

const QWEN3: (&str, &str) = (
    "DFLASH_QWEN3_TOKENIZER_DIR",
    "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4",
);
const LLAMA3: (&str, &str) = (
    "DFLASH_LLAMA3_TOKENIZER_DIR",
    "c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78",
);

const QWEN3_CONFIG: &str = r#"{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
  "hidden_size": 1024, "num_hidden_layers": 28, "vocab_size": 151936,
  "bos_token_id": 151643, "eos_token_id": 151645, "max_position_embeddings": 40960}"#;
const QWEN3_TARGET_CONFIG: &str = r#"{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
  "hidden_size": 5120, "num_hidden_layers": 64, "vocab_size": 151936,
  "bos_token_id": 151643, "eos_token_id": 151645, "max_position_embeddings": 40960}"#;
const LLAMA3_CONFIG: &str = r#"{"architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 2048, "num_hidden_layers": 16, "vocab_size": 128256,
  "bos_token_id": 128000, "eos_token_id": 128001, "max_position_embeddings": 131072}"#;

/// The tokenizer directory from the environment, its tokenizer.json checked; `None` (and a line
/// on stderr) when the variable is not set.
fn tokenizer((env, sha): (&str, &str), test: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os(env).filter(|v| !v.is_empty()) else {
        let _ = writeln!(
            std::io::stderr(),
            "{test}: skipped: set {env} (bench/fetch-*-tokenizer.sh prints the directory)"
        );
        return None;
    };
    let dir = PathBuf::from(dir);
    let bytes = std::fs::read(dir.join("tokenizer.json")).expect("tokenizer.json");
    let got: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(got, sha, "{env}: not the tokenizer this test knows");
    Some(dir)
}

/// A model directory: `config` and the two tokenizer files of `tokenizer_dir`, each passed
/// through `edit` (file name, text) first.
fn model(
    root: &Path,
    name: &str,
    config: &str,
    tokenizer_dir: &Path,
    edit: &dyn Fn(&str, String) -> String,
) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), config).unwrap();
    for file in ["tokenizer.json", "tokenizer_config.json"] {
        let text = std::fs::read_to_string(tokenizer_dir.join(file)).unwrap();
        std::fs::write(dir.join(file), edit(file, text)).unwrap();
    }
    dir
}

fn as_is(_: &str, text: String) -> String {
    text
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(args)
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn lint_json(draft: &Path, target: &Path, extra: &[&str]) -> (i32, Value) {
    let (draft, target) = (draft.to_str().unwrap(), target.to_str().unwrap());
    let mut args = vec!["lint", draft, "--family", "draft", "--target", target];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--format", "json"]);
    let (code, stdout, stderr) = run(&args);
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\nstderr: {stderr}"));
    (code, report)
}

fn findings(report: &Value) -> Vec<(String, String)> {
    report["diagnostics"]
        .as_array()
        .unwrap_or_else(|| panic!("no diagnostics: {report:#}"))
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn message<'a>(report: &'a Value, code: &str) -> &'a str {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == code)
        .and_then(|d| d["message"].as_str())
        .unwrap_or_else(|| panic!("no {code}: {report:#}"))
}

/// A Llama 3 draft for a Qwen3 target: refused by size, and every id named by its text.
#[test]
fn a_llama3_draft_for_a_qwen3_target_fails_by_token_text() {
    let (Some(q), Some(l)) = (
        tokenizer(QWEN3, "llama3_draft"),
        tokenizer(LLAMA3, "llama3_draft"),
    ) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let target = model(tmp.path(), "qwen3-32b", QWEN3_TARGET_CONFIG, &q, &as_is);
    let draft = model(tmp.path(), "llama3-1b", LLAMA3_CONFIG, &l, &as_is);
    let (code, report) = lint_json(&draft, &target, &[]);
    assert_eq!(code, 1, "{report:#}");
    let found = findings(&report);
    for (c, s) in [
        ("draft-model-vocab-size-mismatch", "error"),
        ("draft-model-vocab-mismatch", "error"),
        ("draft-model-special-tokens-mismatch", "warning"),
        ("draft-model-pre-tokenizer-mismatch", "info"),
    ] {
        assert!(found.contains(&(c.into(), s.into())), "{c}: {found:?}");
    }
    // No drafter rule (hidden size, target ids) runs on a classic draft model.
    assert!(
        !found.iter().any(|(c, _)| c == "hidden-size-mismatch"),
        "{found:?}"
    );
    let m = message(&report, "draft-model-vocab-mismatch");
    assert!(
        m.starts_with("the draft's tokenizer has 128256 tokens, the target's 151669"),
        "{m}"
    );
    // The first ids, decoded on both sides (byte-level `Ġ` read as a space).
    assert!(m.contains(r#"410 "00" here, "ith" in the target"#), "{m}");
    assert!(
        m.contains(r#"128000 "<|begin_of_text|>" here, "ыш" in the target"#),
        "{m}"
    );
}

/// The same tokenizer on both sides (Qwen3-0.6B drafting for Qwen3-32B): nothing to say.
#[test]
fn a_qwen3_draft_for_a_qwen3_target_passes() {
    let Some(q) = tokenizer(QWEN3, "qwen3_draft") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let target = model(tmp.path(), "qwen3-32b", QWEN3_TARGET_CONFIG, &q, &as_is);
    let draft = model(tmp.path(), "qwen3-0.6b", QWEN3_CONFIG, &q, &as_is);
    let (code, report) = lint_json(&draft, &target, &[]);
    assert_eq!((code, findings(&report)), (0, vec![]), "{report:#}");
}

/// vllm#42775: a draft config's vocab_size edited to the target's gets past vLLM's only check;
/// the tokenizers still differ, and the message says why vLLM would load it.
#[test]
fn a_hand_edited_vocab_size_does_not_hide_the_mismatch() {
    let (Some(q), Some(l)) = (
        tokenizer(QWEN3, "hand_edited"),
        tokenizer(LLAMA3, "hand_edited"),
    ) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let target = model(tmp.path(), "qwen3-32b", QWEN3_TARGET_CONFIG, &q, &as_is);
    let edited = LLAMA3_CONFIG.replace("128256", "151936");
    let draft = model(tmp.path(), "llama3-1b", &edited, &l, &as_is);
    let (code, report) = lint_json(&draft, &target, &["--engine", "vllm"]);
    assert_eq!(code, 1, "{report:#}");
    let found = findings(&report);
    assert!(
        !found
            .iter()
            .any(|(c, _)| c == "draft-model-vocab-size-mismatch"),
        "{found:?}"
    );
    let m = message(&report, "draft-model-vocab-mismatch");
    assert!(m.contains("vllm#42775"), "{m}");
    // vLLM's heterogeneous-vocabulary mode (up to 0.33) maps ids between the tokenizers: info.
    let heterogeneous = r#"{"method": "draft_model", "num_speculative_tokens": 4, "use_heterogeneous_vocab": true}"#;
    let (code, report) = lint_json(
        &draft,
        &target,
        &[
            "--engine",
            "vllm@0.33.0",
            "--speculative-config",
            heterogeneous,
        ],
    );
    assert!(
        findings(&report).contains(&("draft-model-vocab-mismatch".into(), "info".into())),
        "{report:#}"
    );
    assert_eq!(code, 0, "{report:#}");
    // With no release named, the window reaches 0.34, which has no such mode: still an error.
    let (code, report) = lint_json(
        &draft,
        &target,
        &["--engine", "vllm", "--speculative-config", heterogeneous],
    );
    assert!(
        findings(&report).contains(&("draft-model-vocab-mismatch".into(), "error".into())),
        "{report:#}"
    );
    assert_eq!(code, 1, "{report:#}");
}

/// One added token renamed on the draft's side (both files, as a fine-tune that repurposes a
/// token would): the base vocabulary agrees, the added tokens do not.
#[test]
fn an_added_token_that_differs_is_caught() {
    let Some(q) = tokenizer(QWEN3, "added_token") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let target = model(tmp.path(), "qwen3-32b", QWEN3_TARGET_CONFIG, &q, &as_is);
    let rename = |_: &str, text: String| {
        assert!(text.contains("\"<tool_call>\""));
        text.replace("\"<tool_call>\"", "\"<tool_use>\"")
    };
    let draft = model(tmp.path(), "qwen3-0.6b", QWEN3_CONFIG, &q, &rename);
    // Issue 42: the severity follows the engine: vLLM (and SGLang up to 0.5.14) loads the pair
    // and loses only drafts of that token; SGLang from 0.5.15 refuses it (get_vocab() differs).
    for (engine, severity, exit) in [
        (None, "warning", 0),
        (Some("vllm"), "warning", 0),
        (Some("sglang@0.5.14"), "warning", 0),
        (Some("sglang"), "error", 1),
    ] {
        let flags: Vec<&str> = engine.map(|e| vec!["--engine", e]).unwrap_or_default();
        let (code, report) = lint_json(&draft, &target, &flags);
        assert_eq!(code, exit, "{engine:?}: {report:#}");
        assert_eq!(
            findings(&report),
            vec![("draft-model-vocab-mismatch".into(), severity.into())],
            "{engine:?}"
        );
    }
    let (_, report) = lint_json(&draft, &target, &[]);
    let m = message(&report, "draft-model-vocab-mismatch");
    assert!(
        m.contains(r#"1 added or special token differs: 151657 "<tool_use>" here, "<tool_call>" in the target"#),
        "{m}"
    );
    assert!(!m.contains("ids have other text"), "{m}");
}

/// A launch line serving a Llama 3 draft for a Qwen3 target, under vLLM and SGLang: checked,
/// not skipped.
#[test]
fn launch_lines_check_the_draft_model_against_the_target() {
    let (Some(q), Some(l)) = (tokenizer(QWEN3, "launch"), tokenizer(LLAMA3, "launch")) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let target = model(tmp.path(), "qwen3-32b", QWEN3_TARGET_CONFIG, &q, &as_is);
    let draft = model(tmp.path(), "llama3-1b", LLAMA3_CONFIG, &l, &as_is);
    let (t, d) = (target.to_str().unwrap(), draft.to_str().unwrap());
    let spec =
        format!(r#"{{"method": "draft_model", "model": "{d}", "num_speculative_tokens": 4}}"#);
    let vllm = ["vllm", "serve", t, "--speculative-config", &spec];
    let sglang = [
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        t,
        "--speculative-algorithm",
        "STANDALONE",
        "--speculative-draft-model-path",
        d,
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "4",
    ];
    for command in [&vllm[..], &sglang[..]] {
        let mut args = vec!["launch", "--format", "json", "--"];
        args.extend_from_slice(command);
        let (code, stdout, stderr) = run(&args);
        let report: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\n{stderr}"));
        let found = findings(&report);
        assert!(
            found.contains(&("draft-model-vocab-mismatch".into(), "error".into())),
            "{command:?}: {found:?}"
        );
        assert!(
            !found.iter().any(|(c, _)| c == "launch-lint-skipped"),
            "{found:?}"
        );
        assert_eq!(code, 1);
    }
}

/// `--family draft` without `--target`: exit 2, naming the form that works.
#[test]
fn family_draft_needs_a_target() {
    let (code, _, stderr) = run(&[
        "lint",
        "tests/launch/models/qwen3-0.6b-draft-lm",
        "--family",
        "draft",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--family draft --target"), "{stderr}");
}

/// A plain causal LM without `--family`: exit 2, the hint naming `--family draft --target`.
#[test]
fn a_plain_lm_without_family_names_the_draft_form() {
    let (code, _, stderr) = run(&["lint", "tests/launch/models/qwen3-0.6b-draft-lm"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a drafter config"), "{stderr}");
    assert!(
        stderr.contains("--family draft --target TARGET"),
        "{stderr}"
    );
}

/// Without tokenizers beside the configs, the sizes are still compared (the engines' own check),
/// and the vocabulary rules are listed as skipped, not passed.
#[test]
fn without_tokenizers_the_sizes_are_compared_and_the_rest_skipped() {
    let (code, report) = lint_json(
        Path::new("tests/launch/models/qwen3-0.6b-draft-lm"),
        Path::new("tests/launch/models/llama3-8b-target"),
        &[],
    );
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        findings(&report),
        vec![("draft-model-vocab-size-mismatch".into(), "error".into())]
    );
    let skipped: Vec<&str> = report["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["code"].as_str().unwrap())
        .collect();
    assert!(
        skipped.contains(&"draft-model-vocab-mismatch"),
        "{report:#}"
    );
}

/// The reader behind the comparison (`vocab::hf`, no `tokenizers::Tokenizer` built) reads every
/// id of both real tokenizers exactly as the `tokenizers` crate does: the same token count, the
/// same stored text for every id, the same added tokens and special flags.
#[test]
fn the_vocabulary_reader_equals_the_tokenizers_crate() {
    for (which, name) in [(QWEN3, "reader_qwen3"), (LLAMA3, "reader_llama3")] {
        let Some(dir) = tokenizer(which, name) else {
            continue;
        };
        let ours = dflash_check::vocab::hf::from_dir(&dir).unwrap();
        let theirs = tokenizers::Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
        let by_id: std::collections::HashMap<u32, String> = theirs
            .get_vocab(true)
            .into_iter()
            .map(|(t, i)| (i, t))
            .collect();
        assert_eq!(ours.tokens.len() as usize, by_id.len(), "{name}");
        for id in 0..ours.tokens.len() {
            assert_eq!(
                ours.tokens.get(id),
                by_id.get(&id).map(String::as_str),
                "{name} id {id}"
            );
        }
        for (id, added) in theirs.get_added_tokens_decoder() {
            assert_eq!(
                ours.added.get(&id),
                Some(&(added.content.clone(), added.special)),
                "{name} added {id}"
            );
        }
    }
}

/// A draft tokenizer.json that is not one (a float id, a cut file): exit 2 naming the file,
/// nothing judged from half a vocabulary.
#[test]
fn an_unreadable_draft_tokenizer_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let target = Path::new("tests/launch/models/qwen3-0.6b-draft-lm");
    for bad in [
        r#"{"model": {"vocab": {"a": 1e5}}}"#,
        r#"{"model": {"vocab": {"a": 0, "#,
    ] {
        let draft = tmp.path().join("draft");
        std::fs::create_dir_all(&draft).unwrap();
        std::fs::write(draft.join("config.json"), QWEN3_CONFIG).unwrap();
        std::fs::write(draft.join("tokenizer.json"), bad).unwrap();
        // The target needs a tokenizer too, or the comparison is skipped before reading.
        let t = tmp.path().join("target");
        std::fs::create_dir_all(&t).unwrap();
        std::fs::copy(target.join("config.json"), t.join("config.json")).unwrap();
        std::fs::write(
            t.join("tokenizer.json"),
            r#"{"model": {"type": "BPE", "vocab": {"a": 0}}}"#,
        )
        .unwrap();
        let (code, stdout, stderr) = run(&[
            "lint",
            draft.to_str().unwrap(),
            "--family",
            "draft",
            "--target",
            t.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{bad}: {stdout}{stderr}");
        assert!(
            stderr.contains("draft/tokenizer.json`: cannot read the tokenizer"),
            "{stderr}"
        );
        assert!(stdout.is_empty(), "{stdout}");
    }
}

/// `doctor` given the launch line runs launch's pipeline: the draft model's vocabulary findings
/// are one cause, "drafter and target do not belong together".
#[test]
fn doctor_groups_the_vocabulary_under_pairing() {
    let (Some(q), Some(l)) = (tokenizer(QWEN3, "doctor"), tokenizer(LLAMA3, "doctor")) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let target = model(tmp.path(), "qwen3-32b", QWEN3_TARGET_CONFIG, &q, &as_is);
    let draft = model(tmp.path(), "llama3-1b", LLAMA3_CONFIG, &l, &as_is);
    let spec = format!(
        r#"{{"method": "draft_model", "model": "{}", "num_speculative_tokens": 4}}"#,
        draft.display()
    );
    let t = target.to_str().unwrap();
    let (_, stdout, stderr) = run(&[
        "doctor",
        "--",
        "vllm",
        "serve",
        t,
        "--speculative-config",
        &spec,
    ]);
    let first = stdout
        .split("Causes, most likely first:")
        .nth(1)
        .unwrap_or_else(|| panic!("{stdout}{stderr}"));
    let pairing = first.split(" 2. ").next().unwrap();
    assert!(
        pairing.contains("drafter and target do not belong together"),
        "{stdout}"
    );
    for code in [
        "draft-model-vocab-size-mismatch",
        "draft-model-vocab-mismatch",
    ] {
        assert!(pairing.contains(code), "{code}: {stdout}");
    }
}

/// `--target` given but holding no tokenizer.json: the skipped comparison says what the target
/// lacks, not "pass --target DIR", which the user did (issue 40).
#[test]
fn a_target_without_a_tokenizer_is_named_as_lacking_it() {
    let tmp = tempfile::tempdir().unwrap();
    let source = Path::new("tests/launch/models/qwen3-0.6b-draft-lm");
    let draft = tmp.path().join("draft");
    std::fs::create_dir_all(&draft).unwrap();
    std::fs::write(draft.join("config.json"), QWEN3_CONFIG).unwrap();
    std::fs::write(
        draft.join("tokenizer.json"),
        r#"{"model": {"type": "BPE", "vocab": {"a": 0}}}"#,
    )
    .unwrap();
    let t = tmp.path().join("target");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::copy(source.join("config.json"), t.join("config.json")).unwrap();
    let (code, stdout, stderr) = run(&[
        "lint",
        draft.to_str().unwrap(),
        "--family",
        "draft",
        "--target",
        t.to_str().unwrap(),
    ]);
    assert_ne!(code, 2, "{stdout}{stderr}");
    assert!(!stdout.contains("pass --target DIR"), "{stdout}");
    assert!(
        stdout.contains("skipped for want of both tokenizers (tokenizer.json beside"),
        "{stdout}"
    );
    assert!(stdout.contains("which the target ("), "{stdout}");
}
