//! A classic draft model's check reads the target's `tokenizer.json` once (issue 44): the token
//! table the other rules decode ids with is built from the same walk as the vocabulary the
//! draft's is compared with (`vocab::target::read`), and must equal the table
//! `TokenTable::from_dir` reads on its own, field by field, errors included; the vocabulary must
//! equal `vocab::hf::from_dir`'s.
//!
//! Compared over every tokenizer in the repository (the Qwen3.6 target fixture, the mlx
//! vocabulary fixtures, config-only targets), the real Qwen3 and Llama 3 tokenizers when their
//! directories are given, every id asked about, and generated tokenizers that cross the cases
//! where the two readers could part: byte-level, SentencePiece (`▁`) and plain vocabularies, a
//! byte-level step only a streaming reader sees, an id listed twice in `model.vocab`, escaped
//! keys, holes, an empty vocabulary, added tokens above, far above, below and inside the
//! vocabulary, listed twice, without `special`, and `tokenizer_config.json` adding tokens
//! `tokenizer.json` lacks. Files not laid out as `tokenizers` writes them (keys twice, brackets
//! of the other kind, a list vocabulary, trailing bytes, …) are read twice, and must still
//! agree.
//!
//! ```sh
//! export DFLASH_QWEN3_TOKENIZER_DIR=$(bench/fetch-qwen3-tokenizer.sh)
//! export DFLASH_LLAMA3_TOKENIZER_DIR=$(bench/fetch-llama3-tokenizer.sh)
//! cargo test --test vocab_once
//! ```
//!
//! Without the variables the real-tokenizer test says "skipped" on stderr and passes; without
//! `strace` on PATH so do the tests that count the file's opens.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use dflash_check::tokens::TokenTable;
use dflash_check::vocab;

/// `vocab::target::read` against `TokenTable::from_dir` and `vocab::hf::from_dir` on `dir`:
/// `Some(one_read)` when both tables are read and equal, `None` when both refuse the
/// directory with the same error.
fn agree(dir: &Path, wanted: &BTreeSet<u64>, vocab_size: Option<u64>) -> Option<bool> {
    let alone = TokenTable::from_dir(dir, wanted, vocab_size);
    let once = vocab::target::read(dir, wanted, vocab_size);
    let (alone, once) = match (alone, once) {
        (Ok(alone), Ok(once)) => (alone, once),
        (Err(a), Err(b)) => {
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{}", dir.display());
            return None;
        }
        (a, b) => panic!("{}: from_dir {a:?}, read once {b:?}", dir.display()),
    };
    let t = &once.table;
    let at = dir.display();
    assert_eq!(alone.source, t.source, "{at}: source");
    assert_eq!(*alone.added, *t.added, "{at}: added");
    assert_eq!(alone.regular, t.regular, "{at}: regular");
    assert_eq!(alone.tokenizer_len, t.tokenizer_len, "{at}: tokenizer_len");
    assert_eq!(alone.vocab_size, t.vocab_size, "{at}: vocab_size");
    assert_eq!(alone.byte_level, t.byte_level, "{at}: byte_level");
    assert_eq!(alone.has_vocab, t.has_vocab, "{at}: has_vocab");
    // What the comparison would have read on its own.
    let has_tokenizer = dir.join("tokenizer.json").is_file();
    match vocab::hf::from_dir(dir) {
        Ok(v) => assert_eq!(once.vocabulary.as_ref(), Some(&v), "{at}: vocabulary"),
        Err(e) => assert!(
            once.vocabulary.is_none(),
            "{at}: a vocabulary where from_dir says {e:?}"
        ),
    }
    assert!(!once.one_read || has_tokenizer, "{at}");
    Some(once.one_read)
}

/// Ids around everything a generated tokenizer holds, and ones no tokenizer has.
fn generated_ids() -> BTreeSet<u64> {
    let mut ids: BTreeSet<u64> = (0..=40).collect();
    ids.extend([
        99,
        100,
        101,
        102,
        120,
        200,
        u64::from(u32::MAX),
        1 << 40,
        u64::MAX,
    ]);
    ids
}

/// A tokenizer.json laid out as `tokenizers` writes it (keys in its order, `model` last).
fn tokenizer_json(added: &str, pre: &str, decoder: &str, vocab: &str, pretty: bool) -> String {
    let sep = if pretty { "\n  " } else { "" };
    format!(
        "{{{sep}\"version\": \"1.0\",{sep}\"truncation\": null,{sep}\"padding\": null,{sep}\
         \"added_tokens\": {added},{sep}\"normalizer\": null,{sep}\"pre_tokenizer\": {pre},{sep}\
         \"post_processor\": null,{sep}\"decoder\": {decoder},{sep}\"model\": {{{sep}  \
         \"type\": \"BPE\",{sep}  \"dropout\": null,{sep}  \"unk_token\": null,{sep}  \
         \"vocab\": {vocab},{sep}  \"merges\": []{sep}}}\n}}\n"
    )
}

/// A vocabulary map's text: `(key as written in JSON, id)`.
fn vocab_map(entries: &[(String, u64)]) -> String {
    let body: Vec<String> = entries
        .iter()
        .map(|(k, id)| format!("\"{k}\": {id}"))
        .collect();
    format!("{{{}}}", body.join(", "))
}

fn write(dir: &Path, tokenizer: Option<&str>, config: Option<&str>) {
    for (name, text) in [
        ("tokenizer.json", tokenizer),
        ("tokenizer_config.json", config),
    ] {
        let path = dir.join(name);
        match text {
            Some(text) => std::fs::write(&path, text).unwrap(),
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// A generated vocabulary's token text for an id, in one style (byte-level, `▁`, plain).
type TokenText = fn(u64) -> String;

/// A generated `model.vocab`'s entries, `(key as written in JSON, id)`, from a token text.
type Entries = fn(TokenText) -> Vec<(String, u64)>;

/// Every combination of the generated cases is read once, and the two tables agree.
#[test]
fn generated_tokenizers_agree_and_are_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let wanted = generated_ids();
    // (name, pre_tokenizer, decoder, token text of id n)
    let styles: [(&str, &str, &str, TokenText); 4] = [
        (
            "byte-level",
            r#"{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}"#,
            r#"{"type": "ByteLevel"}"#,
            |n| {
                [
                    "\u{120}the",
                    "\u{10a}",
                    "\u{120}",
                    "a\u{120}b",
                    "\u{e3}\u{a9}",
                ][n as usize % 5]
                    .to_string()
                    + &n.to_string()
            },
        ),
        (
            "sentencepiece",
            r#"{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}"#,
            r#"{"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}]}"#,
            |n| ["▁the", "<0x0A>", "▁", "a▁b", "é"][n as usize % 5].to_string() + &n.to_string(),
        ),
        ("plain", "null", "null", |n| format!("t{n}")),
        (
            // A byte-level step under a key written twice: the table's reader counts both
            // values, a tree keeps the last (the vocabulary's `byte_level` is false).
            "byte-level-twice",
            r#"{"type": "Sequence", "x": {"type": "ByteLevel"}, "x": null}"#,
            "null",
            |n| format!("\u{120}x{n}"),
        ),
    ];
    // (name, entries from a token text function): ids 0..20 unless said.
    let vocabs: [(&str, Entries); 7] = [
        ("dense", |t| (0..20).map(|n| (t(n), n)).collect()),
        ("id twice", |t| {
            let mut e: Vec<_> = (0..20).map(|n| (t(n), n)).collect();
            e.push(("again".into(), 3));
            e
        }),
        ("escaped", |t| {
            (0..20)
                .map(|n| match n % 4 {
                    0 => (format!("q\\\"{n}"), n),
                    1 => (format!("\\u00e9t\\u00e9{n}"), n),
                    2 => (format!("s\\/l\\\\{n}"), n),
                    _ => (t(n), n),
                })
                .collect()
        }),
        ("holes, out of order", |t| {
            [7, 3, 0, 1, 15, 16, 2, 30].map(|n| (t(n), n)).to_vec()
        }),
        ("from 3", |t| (3..20).map(|n| (t(n), n)).collect()),
        ("empty", |_| Vec::new()),
        ("long keys", |t| {
            (0..20)
                .map(|n| (t(n) + &"k".repeat(70 * n as usize), n))
                .collect()
        }),
    ];
    let added_lists = [
        ("none", "[]".to_string()),
        ("null", "null".to_string()),
        (
            "above",
            added(&[(20, "<|end|>", Some(true)), (21, "<think>", Some(false))]),
        ),
        ("far above", added(&[(100, "<|im_start|>", Some(true))])),
        (
            "below",
            added(&[
                (0, "<unk>", Some(true)),
                (1, "<s>", Some(true)),
                (2, "</s>", Some(true)),
            ]),
        ),
        (
            "inside the vocabulary",
            added(&[(4, "<mask>", Some(true)), (5, "<x>", Some(false))]),
        ),
        (
            "an id twice",
            added(&[
                (20, "<a>", Some(true)),
                (21, "<b>", None),
                (20, "<c>", Some(false)),
            ]),
        ),
        (
            "special absent",
            added(&[(22, "<tool_call>", None), (23, "</tool_call>", None)]),
        ),
    ];
    let configs = [
        ("no config", None),
        (
            "no added_tokens_decoder",
            Some(
                r#"{"bos_token": "<s>", "eos_token": "<|end|>", "add_bos_token": false}"#
                    .to_string(),
            ),
        ),
        (
            // Tokens tokenizer.json lacks (one without `special`), and ids it has with other
            // text (tokenizer.json's are kept).
            "adds tokens",
            Some(
                r#"{"added_tokens_decoder": {
                    "20": {"content": "<|other|>", "special": false},
                    "24": {"content": "<|image|>", "special": true},
                    "25": {"content": "<|video|>"},
                    "101": {"content": "<|far|>", "special": false},
                    "1": {"content": "<s>", "special": true}
                }, "eos_token": {"content": "<|image|>"}, "add_eos_token": true}"#
                    .to_string(),
            ),
        ),
        (
            "empty decoder",
            Some(r#"{"added_tokens_decoder": {}}"#.to_string()),
        ),
    ];
    let mut cases = 0;
    for (style, pre, decoder, text) in styles {
        for (vocab_name, entries) in vocabs {
            let vocab = vocab_map(&entries(text));
            for (added_name, added) in &added_lists {
                for (config_name, config) in &configs {
                    let pretty = cases % 2 == 0;
                    write(
                        dir.path(),
                        Some(&tokenizer_json(added, pre, decoder, &vocab, pretty)),
                        config.as_deref(),
                    );
                    let vocab_size = (cases % 3 != 0).then_some(64);
                    let case = format!("{style}, {vocab_name}, added {added_name}, {config_name}");
                    let one_read = agree(dir.path(), &wanted, vocab_size)
                        .unwrap_or_else(|| panic!("{case}: refused"));
                    assert!(one_read, "{case}: read twice");
                    // No ids asked about: only the counts and the added tokens.
                    assert_eq!(
                        agree(dir.path(), &BTreeSet::new(), None),
                        Some(true),
                        "{case}"
                    );
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 4 * 7 * 8 * 4);
}

/// `added_tokens` as `tokenizers` writes it: `(id, content, special)`, `special` left out when
/// `None`.
fn added(tokens: &[(u64, &str, Option<bool>)]) -> String {
    let items: Vec<String> = tokens
        .iter()
        .map(|(id, content, special)| {
            let special = special.map_or(String::new(), |s| format!(", \"special\": {s}"));
            format!(
                "{{\"id\": {id}, \"content\": \"{content}\", \"single_word\": false, \"lstrip\": false, \
                 \"rstrip\": false, \"normalized\": false{special}}}"
            )
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// Files not laid out as `tokenizers` writes them, or not valid: the two readers agree (the
/// table read a second time where the walk cannot vouch for it), or refuse alike.
#[test]
fn unusual_and_bad_tokenizers_agree() {
    let dir = tempfile::tempdir().unwrap();
    let wanted = generated_ids();
    let usual = |vocab: &str| tokenizer_json("[]", "null", "null", vocab, false);
    let v = r#"{"a": 0, "b": 1, "c": 2}"#;
    // (case, tokenizer.json, config, read once?) — `None`: both refuse it.
    let cases: Vec<(&str, String, Option<&str>, Option<bool>)> = vec![
        ("usual", usual(v), None, Some(true)),
        (
            "no model.vocab",
            tokenizer_json("[]", "null", "null", "{}", false).replace("\"vocab\": {},", ""),
            None,
            Some(false),
        ),
        ("model null", usual(v).replace(r#""model": {"#, r#""model": null, "x": {"#), None, Some(false)),
        ("model first", format!(r#"{{"model": {{"type": "BPE", "vocab": {v}}}, "added_tokens": [{{"id": 3, "content": "<e>", "special": true}}]}}"#), None, Some(false)),
        ("no post_processor", usual(v).replace(r#""post_processor": null,"#, ""), None, Some(false)),
        (
            "trailing bytes, not read to",
            usual(v) + "garbage",
            None,
            Some(true),
        ),
        (
            // Neither reader stops early (no `decoder`): the table's refuses what follows.
            "trailing bytes, read to",
            usual(v).replace(r#""decoder": null,"#, "") + "garbage",
            None,
            None,
        ),
        (
            "added_tokens twice",
            usual(v).replace(
                r#""normalizer": null"#,
                r#""added_tokens": [{"id": 7, "content": "<x>", "special": true}], "normalizer": null"#,
            ),
            None,
            Some(false),
        ),
        (
            "model.vocab twice, type last",
            format!(
                r#"{{"added_tokens": [], "pre_tokenizer": null, "post_processor": null, "decoder": null, "model": {{"vocab": {v}, "vocab": {{"z": 9}}, "type": "BPE"}}}}"#
            ),
            None,
            Some(false),
        ),
        ("unigram list", usual(r#"[["<unk>", 0.0], ["a", -1.5], ["b", -2.0]]"#), None, Some(false)),
        ("unigram list, bad tail", usual(r#"[["<unk>", 0.0], ["a", -1.5]]"#) + "x", None, None),
        ("leading zero id", usual(r#"{"a": 0, "b": 01}"#), None, None),
        (
            "bracket of the other kind",
            usual(v).replace(r#""normalizer": null"#, r#""normalizer": {"a": [1}]"#),
            None,
            None,
        ),
        // The table's reader skips `: ,` (a space before the comma) and refuses `:,`.
        ("value missing", usual(v).replace(r#""padding": null"#, r#""padding": "#), None, Some(false)),
        ("value missing, no space", usual(v).replace(r#""padding": null"#, r#""padding":"#), None, None),
        ("escaped top-level key", usual(v).replace("\"added_tokens\"", "\"added\\u005ftokens\""), None, Some(false)),
        ("control character in a key", usual("{\"a\": 0, \"b\tc\": 1}"), None, None),
        ("escaped control character", usual(r#"{"a": 0, "b\tc": 1}"#), None, Some(false)),
        ("id over 2^24", usual(r#"{"a": 0, "b": 16777217}"#), None, Some(false)),
        ("added id over 2^24", tokenizer_json(&added(&[(16_777_217, "<big>", Some(true))]), "null", "null", v, false), None, Some(false)),
        ("float id", usual(r#"{"a": 0, "b": 1.5}"#), None, None),
        ("not UTF-8 id text", usual("{\"a\": 0, \"\\ud800\": 1}"), None, None),
        ("not JSON", "{".into(), None, None),
        ("config not JSON", usual(v), Some("{"), None),
        ("config key not an id", usual(v), Some(r#"{"added_tokens_decoder": {"x": {"content": "a"}}}"#), None),
        ("config id over 2^24", usual(v), Some(r#"{"added_tokens_decoder": {"16777217": {"content": "a"}}}"#), Some(true)),
    ];
    for (case, tokenizer, config, read_once) in cases {
        write(dir.path(), Some(&tokenizer), config);
        assert_eq!(agree(dir.path(), &wanted, Some(64)), read_once, "{case}");
    }
    // No tokenizer.json: the config alone, or nothing.
    write(
        dir.path(),
        None,
        Some(r#"{"added_tokens_decoder": {"5": {"content": "<x>"}}}"#),
    );
    assert_eq!(agree(dir.path(), &wanted, None), Some(false), "config only");
    write(dir.path(), None, None);
    assert_eq!(agree(dir.path(), &wanted, None), None, "no files");
    // Over the cap: refused before it is read, with the same words (a sparse file).
    let f = std::fs::File::create(dir.path().join("tokenizer.json")).unwrap();
    f.set_len(dflash_check::tokens::MAX_TOKENIZER_BYTES + 1)
        .unwrap();
    assert_eq!(agree(dir.path(), &wanted, None), None, "over the cap");
}

/// Every tokenizer directory in the repository.
#[test]
fn repository_tokenizers_agree() {
    let mut dirs: Vec<PathBuf> = vec![
        "fixtures/targets/Qwen3.6-27B".into(),
        "tests/lint/targets/Qwen3-8B".into(),
        "tests/lint/targets/Qwen3-8B-YaRN".into(),
    ];
    for entry in std::fs::read_dir("tests/launch/mlx/vocab").unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            dirs.push(path);
        }
    }
    let mut ids: BTreeSet<u64> = (0..300).collect();
    ids.extend(248_000..248_400);
    ids.extend([151_643, 151_645, 151_935, 151_936, u64::MAX]);
    for dir in &dirs {
        let has_tokenizer = dir.join("tokenizer.json").is_file();
        assert_eq!(
            agree(dir, &ids, Some(248_320)),
            Some(has_tokenizer),
            "{}",
            dir.display()
        );
    }
}

/// The real Qwen3 and Llama 3 tokenizers, every id of their embeddings asked about.
#[test]
fn real_tokenizers_agree_and_are_read_once() {
    for (env, vocab_size) in [
        ("DFLASH_QWEN3_TOKENIZER_DIR", 151_936u64),
        ("DFLASH_LLAMA3_TOKENIZER_DIR", 128_256),
    ] {
        let Some(dir) = std::env::var_os(env).filter(|v| !v.is_empty()) else {
            let _ = writeln!(
                std::io::stderr(),
                "real_tokenizers_agree_and_are_read_once: {env}: skipped: set it to the directory \
                 bench/fetch-*-tokenizer.sh prints"
            );
            continue;
        };
        let dir = PathBuf::from(dir);
        let mut ids: BTreeSet<u64> = (0..vocab_size + 8).collect();
        ids.extend([u64::from(u32::MAX), u64::MAX]);
        assert_eq!(agree(&dir, &ids, Some(vocab_size)), Some(true), "{env}");
        assert_eq!(agree(&dir, &BTreeSet::new(), None), Some(true), "{env}");
    }
}

/// How many times `args` opens each of `files` (`strace -f -e trace=openat`), and its stdout;
/// `None` without strace.
fn opens(args: &[&str], files: &[&Path]) -> Option<(Vec<usize>, String)> {
    let trace = tempfile::NamedTempFile::new().unwrap();
    let run = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=openat", "-o"])
        .arg(trace.path())
        .arg(env!("CARGO_BIN_EXE_dflash-check"))
        .args(args)
        .env("HF_HUB_OFFLINE", "1")
        .env_remove("HF_ENDPOINT")
        .output();
    let Ok(out) = run else {
        let _ = writeln!(
            std::io::stderr(),
            "opens of {files:?}: skipped: strace is not on PATH"
        );
        return None;
    };
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(trace.path()).unwrap();
    let count = |file: &&Path| {
        let needle = format!("\"{}\"", file.display());
        log.lines().filter(|l| l.contains(&needle)).count()
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Some((files.iter().map(count).collect(), stdout))
}

/// A draft model and its target, each a small config beside a tokenizer laid out as
/// `tokenizers` writes it (the draft's with one added token of other text).
fn draft_and_target(root: &Path) -> (PathBuf, PathBuf) {
    let config = r#"{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024,
        "num_hidden_layers": 28, "vocab_size": 64, "max_position_embeddings": 40960}"#;
    let vocab = vocab_map(
        &(0..20)
            .map(|n| (format!("\u{120}t{n}"), n))
            .collect::<Vec<_>>(),
    );
    let pre = r#"{"type": "ByteLevel"}"#;
    let mut out = Vec::new();
    for (name, token) in [("draft", "<tool_use>"), ("target", "<tool_call>")] {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), config).unwrap();
        let added = added(&[(20, "<|im_end|>", Some(true)), (21, token, Some(false))]);
        write(
            &dir,
            Some(&tokenizer_json(&added, pre, pre, &vocab, true)),
            Some("{}"),
        );
        out.push(dir);
    }
    (out.remove(0), out.remove(0))
}

/// `args` compares the draft's vocabulary with the target's (its one difference found) and
/// opens each tokenizer.json once: the target's for the comparison and the token table both.
fn opened_once(args: &[&str], draft: &Path, target: &Path) {
    let files = [
        &*target.join("tokenizer.json"),
        &*draft.join("tokenizer.json"),
    ];
    if let Some((n, stdout)) = opens(args, &files) {
        assert!(stdout.contains("draft-model-vocab-mismatch"), "{stdout}");
        assert_eq!(n, [1, 1], "{stdout}");
    }
}

/// `lint --family draft --target T` opens the target's tokenizer.json once (twice before).
#[test]
fn lint_opens_the_target_tokenizer_once() {
    let root = tempfile::tempdir().unwrap();
    let (draft, target) = draft_and_target(root.path());
    let args = [
        "lint",
        draft.to_str().unwrap(),
        "--family",
        "draft",
        "--target",
        target.to_str().unwrap(),
        "--no-weights",
    ];
    opened_once(&args, &draft, &target);
}

/// A `launch` line serving a draft model opens the target's tokenizer.json once.
#[test]
fn launch_opens_the_target_tokenizer_once() {
    let root = tempfile::tempdir().unwrap();
    let (draft, target) = draft_and_target(root.path());
    let cache = root.path().join("hub");
    std::fs::create_dir_all(&cache).unwrap();
    let spec = format!(
        r#"{{"method": "draft_model", "model": "{}", "num_speculative_tokens": 5}}"#,
        draft.display()
    );
    let args = [
        "launch",
        "--cache-dir",
        cache.to_str().unwrap(),
        "--",
        "vllm",
        "serve",
        target.to_str().unwrap(),
        "--speculative-config",
        &spec,
    ];
    opened_once(&args, &draft, &target);
}
