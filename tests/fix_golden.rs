//! Golden tests of `fix`'s minimal edits, byte for byte: each folder under tests/fix/ holds an
//! input, an authority and the expected output (generated once with tests/fix/generate.py and
//! the tool, read line by line, committed). Besides the bytes, every line of the input that no
//! edit touches must appear unchanged at its shifted position in the output.
//!
//! `UPDATE_GOLDEN=1 cargo test --test fix_golden` rewrites the expected files (then review them).

use std::fs;
use std::path::{Path, PathBuf};

use dflash_check::fix::edit::{self, Plan};
use dflash_check::json::Document;

fn case_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fix")
        .join(name)
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every input line that no splice touches is in the output, unchanged, where the splices
/// before it have shifted it.
fn assert_untouched_lines(input: &str, plan: &Plan) {
    let mut start = 0;
    let mut checked = 0;
    for line in input.split_inclusive('\n') {
        let (ls, le) = (start, start + line.len());
        start = le;
        let touched = plan.splices.iter().any(|s| {
            (s.range.start < le && s.range.end > ls)
                || (s.range.is_empty() && s.range.start > ls && s.range.start < le)
        });
        if touched {
            continue;
        }
        let shift: isize = plan
            .splices
            .iter()
            .filter(|s| s.range.end <= ls)
            .map(|s| s.text.len() as isize - s.range.len() as isize)
            .sum();
        let at = (ls as isize + shift) as usize;
        assert_eq!(
            plan.text.get(at..at + line.len()),
            Some(line),
            "untouched input line {line:?} is not at its place in the output"
        );
        checked += 1;
    }
    assert!(checked > 0 || input.lines().count() <= 1);
}

fn golden(name: &str, prune: bool) -> Plan {
    let dir = case_dir(name);
    let input = read(&dir.join("input.json"));
    let authority = read(&dir.join("authority.json"));
    golden_from(&dir, &input, &authority, prune)
}

fn golden_from(dir: &Path, input: &str, authority: &str, prune: bool) -> Plan {
    let doc = Document::parse(input).unwrap();
    let auth = Document::parse(authority).unwrap();
    let plan = edit::plan(&doc, &auth.root, prune).unwrap();
    let expected_path = dir.join(if prune {
        "expected.prune.json"
    } else {
        "expected.json"
    });
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::write(&expected_path, &plan.text).unwrap();
    }
    let expected = read(&expected_path);
    assert!(
        plan.text == expected,
        "{} differs from the golden file:\n{}",
        expected_path.display(),
        similar::TextDiff::from_lines(&expected, &plan.text).unified_diff()
    );
    assert_untouched_lines(input, &plan);
    // Fixing the output again changes nothing.
    let again = edit::plan(&Document::parse(&plan.text).unwrap(), &auth.root, prune).unwrap();
    assert_eq!(again.text, plan.text, "a second fix must be a no-op");
    assert!(again.edits.is_empty());
    plan
}

fn paths(plan: &Plan) -> Vec<String> {
    plan.edits
        .iter()
        .map(|e| format!("{} {}", e.action.as_str(), e.path))
        .collect()
}

const INCIDENT_EDITS: &[&str] = &[
    "set bos_token_id",
    "set dflash_config.mask_token_id",
    "set dflash_config.target_layer_ids",
    "set layer_types",
    "add sliding_window",
    "set use_sliding_window",
];

#[test]
fn incident_fixture_becomes_the_authority_byte_for_byte() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let input = read(&root.join("fixtures/incident/Qwen3.6-27B-DFlash/config.json"));
    let authority = read(&root.join("fixtures/incident/authority/config.json"));
    let plan = golden_from(&case_dir("incident"), &input, &authority, false);
    // The authority is the same file in the same style: the minimal fix reproduces it exactly.
    assert_eq!(plan.text, authority);
    let mut want: Vec<String> = INCIDENT_EDITS.iter().map(|s| s.to_string()).collect();
    want.push("set transformers_version".into());
    want.sort();
    let mut got = paths(&plan);
    got.sort();
    assert_eq!(got, want);
}

#[test]
fn two_space_indent() {
    let plan = golden("indent2", false);
    assert_eq!(paths(&plan), INCIDENT_EDITS);
}

#[test]
fn four_space_indent() {
    let plan = golden("indent4", false);
    assert!(plan.text.contains("\n    \"sliding_window\": 2048,\n"));
    assert!(plan.text.contains("\n            16,\n"));
}

#[test]
fn tab_indent() {
    let plan = golden("tab", false);
    assert!(plan.text.contains("\n\t\"sliding_window\": 2048,\n"));
    assert!(plan.text.contains("\n\t\t\t16,\n"));
}

#[test]
fn crlf_line_endings_and_no_final_newline() {
    let plan = golden("crlf", false);
    assert!(
        !plan.text.replace("\r\n", "").contains('\n'),
        "a bare LF was written"
    );
    assert!(plan.text.contains("\r\n  \"sliding_window\": 2048,\r\n"));
    assert!(plan.text.ends_with('}'));
}

#[test]
fn number_text_is_kept_and_new_numbers_use_the_authoritys_text() {
    let plan = golden("numbers", false);
    assert!(plan.text.contains("\"rms_norm_eps\": 1e-06,"));
    assert!(plan.text.contains("\"rope_theta\": 1E7,"));
    assert!(plan.text.ends_with(",\n  \"initializer_range\": 1e-5\n}\n"));
}

#[test]
fn non_ascii_escapes_stay_escaped() {
    let plan = golden("escapes", false);
    assert!(plan.text.contains(r#""name_or_path": "caf\u00e9""#));
    assert!(plan
        .text
        .contains(r#""note": "r\u00e9sum\u00e9 \ud83d\ude00\ttab""#));
}

#[test]
fn raw_utf8_file_gets_raw_utf8() {
    let plan = golden("utf8", false);
    assert!(plan.text.contains("\"note\": \"résumé\""));
}

#[test]
fn compact_one_line_file_stays_one_line() {
    let plan = golden("compact", false);
    assert_eq!(plan.text.lines().count(), 1);
    assert!(plan.text.contains(", \"sliding_window\": 2048, "));
    let plan = golden("compact-nospace", false);
    assert_eq!(plan.text.lines().count(), 1);
    assert!(plan.text.contains(",\"sliding_window\":2048,"));
    assert!(plan.text.contains("\"target_layer_ids\":[1,16,31,46,61]"));
}

#[test]
fn local_only_keys_are_kept_then_pruned_cleanly() {
    let plan = golden("local-only", false);
    assert_eq!(
        plan.kept_local_only
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["aaa_first", "my_note", "zzz_last"]
    );
    assert!(plan.text.contains("\"aaa_first\": 1,") && plan.text.contains("\"zzz_last\": true"));
    let pruned = golden("local-only", true);
    assert!(pruned.kept_local_only.is_empty());
    for k in ["aaa_first", "my_note", "zzz_last"] {
        assert!(!pruned.text.contains(k), "{k} not removed");
    }
    // Pruned, the guessed file becomes the authority exactly (same style).
    assert_eq!(
        pruned.text,
        read(&case_dir("local-only").join("authority.json"))
    );
}

#[test]
fn layout_values_are_edited_where_the_local_file_has_them() {
    let plan = golden("layout", false);
    assert!(plan.text.contains("\n  \"block_size\": 16,\n"));
    assert!(
        !plan.text.contains("rope_parameters"),
        "agreeing layout must be left alone"
    );
    assert!(plan.text.contains("\"rope_theta\": 10000000,"));
}
