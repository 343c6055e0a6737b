//! Every command's human output has one layout (issue 21): a header that starts
//! `dflash-check COMMAND`, one `severity[code] …` line per finding with its location under it,
//! and one summary line in one wording, `STATUS: N errors, N warnings, N info[; detail]`, with
//! one of check's statuses (`FAIL`, `OK`, `OK (…)`, `NOTHING CHECKED`). `acceptance` needs a
//! server and is covered by tests/acceptance.rs.

use std::path::Path;
use std::process::Command;

const INCIDENT: &str = "fixtures/incident/Qwen3.6-27B-DFlash";
const TARGET: &str = "fixtures/targets/Qwen3.6-27B";

fn run(dir: Option<&Path>, args: &[&str]) -> (i32, String) {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("dflash-check"));
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let out = cmd
        .args(args)
        .args(["--color", "never"])
        .env("NO_COLOR", "1")
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

/// `2 errors`, `1 warning`: a count with its noun, plural unless one.
fn is_count(text: &str, noun: &str) -> bool {
    let Some((n, word)) = text.split_once(' ') else {
        return false;
    };
    let Ok(n) = n.parse::<usize>() else {
        return false;
    };
    let plural = if n == 1 || noun == "info" { "" } else { "s" };
    word == format!("{noun}{plural}")
}

/// `OK (unverified: a (b)): 0 errors, …` → (`OK (unverified: a (b))`, `0 errors, …`): the status
/// ends at the `: ` after its balanced parentheses.
fn split_status(line: &str) -> Option<(&str, &str)> {
    let mut depth = 0usize;
    for (i, c) in line.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.checked_sub(1)?,
            ':' if depth == 0 && line[i..].starts_with(": ") => {
                return Some((&line[..i], &line[i + 2..]))
            }
            _ => {}
        }
    }
    None
}

/// Checks the layout of one command's output; returns its summary line.
fn assert_layout(command: &str, out: &str) -> String {
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with(&format!("dflash-check {command}")),
        "{command}: header\n{out}"
    );
    let last = *lines.last().unwrap();
    let (status, rest) =
        split_status(last).unwrap_or_else(|| panic!("{command}: summary line\n{out}"));
    assert!(
        matches!(status, "FAIL" | "OK" | "NOTHING CHECKED")
            || (status.starts_with("OK (") && status.ends_with(')')),
        "{command}: status {status:?}\n{out}"
    );
    let counts = rest.split(';').next().unwrap();
    let counts = counts.trim_end_matches(" (warnings denied)");
    let parts: Vec<&str> = counts.split(", ").collect();
    assert!(
        parts.len() == 3
            && is_count(parts[0], "error")
            && is_count(parts[1], "warning")
            && is_count(parts[2], "info"),
        "{command}: counts in {last:?}"
    );
    // The summary line is the only verdict; no command keeps a writer of its own.
    for line in &lines[..lines.len() - 1] {
        for old in ["ok:", "OK:", "FAIL:", "verdict", "DRY RUN", "NOT FIXED"] {
            assert!(
                !line.trim_start().starts_with(old),
                "{command}: a second verdict {line:?}\n{out}"
            );
        }
    }
    // Every finding line is `severity[code] …`, at the start of the line.
    for line in &lines {
        for sev in ["error", "warning", "info"] {
            if let Some(rest) = line.strip_prefix(sev) {
                if rest.starts_with('[') {
                    let code = &rest[1..rest.find(']').expect("closed code")];
                    assert!(
                        code.chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                        "{command}: code in {line:?}"
                    );
                }
            }
        }
    }
    last.to_string()
}

#[test]
fn every_command_has_one_layout_and_one_summary_line() {
    let (code, out) = run(None, &["diff", INCIDENT, "--target", TARGET]);
    assert_eq!(code, 1, "{out}");
    let last = assert_layout("diff", &out);
    assert_eq!(
        last,
        "FAIL: 5 errors, 2 warnings, 0 info; this drafter does not match its authority"
    );
    assert!(out.contains(
        "\nerror[changed] dflash_config.mask_token_id: 248064 <|repo_name|> (added, not special) here, \
         248070 <|audio_start|> (special) in the authority\n  --> fixtures/incident/Qwen3.6-27B-DFlash/config.json:13:5\n"
    ), "{out}");
    assert!(
        out.contains("\nTo repair it: dflash-check fix "),
        "the fix line is a section before the summary: {out}"
    );

    // Ambiguous: the candidates are a section, the verdict names why there is no fix line.
    let (code, out) = run(None, &["diff", INCIDENT]);
    assert_eq!(code, 1, "{out}");
    assert!(assert_layout("diff", &out).contains("published configs of its shape"));
    assert!(out.contains("\nPick its authority: "), "{out}");

    // The target picks the authority the drafter's name claims: lint fails as diff does.
    let (code, out) = run(None, &["lint", INCIDENT, "--target", TARGET]);
    assert_eq!(code, 1, "{out}");
    assert!(assert_layout("lint", &out).starts_with("FAIL: 5 errors, "));
    assert!(
        out.contains("  authority built-in snapshot of z-lab/Qwen3.6-27B-DFlash"),
        "{out}"
    );
    assert!(!out.contains("\npublished: "), "{out}");
    // Equal to no published config of its shape, and no target to pick one: lint's OK says it
    // is unverified (issue 32).
    let (code, out) = run(None, &["lint", INCIDENT]);
    assert_eq!(code, 0, "{out}");
    assert!(assert_layout("lint", &out)
        .starts_with("OK (unverified: equals none of 2 published configs of its shape (settle it with `dflash-check diff fixtures/incident/Qwen3.6-27B-DFlash --snapshot z-lab/Qwen3.6-27B-DFlash` or `dflash-check diff fixtures/incident/Qwen3.6-27B-DFlash --snapshot z-lab/Qwen3.5-27B-DFlash`)): 0 errors, "));
    let (code, out) = run(
        None,
        &["lint", INCIDENT, "--target", TARGET, "--deny", "warnings"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(assert_layout("lint", &out).contains(" info (warnings denied)"));

    let tmp = tempfile::tempdir().unwrap();
    let drafter = tmp.path().join("models/my-drafter");
    std::fs::create_dir_all(&drafter).unwrap();
    std::fs::copy(
        format!("{INCIDENT}/config.json"),
        drafter.join("config.json"),
    )
    .unwrap();
    let (code, out) = run(Some(tmp.path()), &["check", "."]);
    assert_eq!(code, 1, "{out}");
    assert!(assert_layout("check", &out).ends_with("; 1 drafter checked"));

    let target = std::fs::canonicalize(TARGET).unwrap();
    let target = target.to_str().unwrap();
    let (code, out) = run(
        Some(tmp.path()),
        &["fix", "models/my-drafter", "--target", target, "--dry-run"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(assert_layout("fix", &out).contains("; dry run: 7 edits would be made"));
    let (code, out) = run(
        Some(tmp.path()),
        &["fix", "models/my-drafter", "--target", target],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        assert_layout("fix", &out),
        "OK: 0 errors, 0 warnings, 7 info; 7 edits written and verified"
    );
    let (code, out) = run(Some(tmp.path()), &["check", "."]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        assert_layout("check", &out),
        "OK: 0 errors, 0 warnings, 0 info; 1 drafter checked"
    );

    // No config beside the weights: nothing checked, and the status says so.
    let (code, out) = run(
        None,
        &[
            "weights",
            "tests/bad-input/cases/weights/weights-no-tensors",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(assert_layout("weights", &out).starts_with("NOTHING CHECKED: "));

    let (code, out) = run(
        None,
        &[
            "launch",
            "--target",
            TARGET,
            "--",
            "vllm",
            "serve",
            "Qwen/Qwen3.6-27B",
            "--speculative-config",
            r#"{"method": "dflash", "model": "fixtures/incident/Qwen3.6-27B-DFlash", "num_speculative_tokens": 15}"#,
        ],
    );
    // The incident's drafter is compared with the authority its target picks, as `check`
    // compares it (issue 29): its five wrong fields fail the launch.
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        assert_layout("launch", &out),
        "FAIL: 5 errors, 2 warnings, 0 info"
    );

    let (code, out) = run(None, &["doctor", "--drafter", INCIDENT, "--target", TARGET]);
    assert_eq!(code, 1, "{out}");
    assert!(assert_layout("doctor", &out).ends_with("; 4 causes"));
}
