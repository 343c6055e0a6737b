//! Issue 32: text from inputs, as displayed. A token's text from the target's tokenizer (a Hub
//! target brings it from whoever publishes it), a path name, a server's answer are printed
//! through one display filter: no control character, escape sequence or bidi override of an
//! input reaches a terminal or a CI log, and under `--format github` no input can start a
//! workflow command of its own (a forged `::error` annotation, an `::add-mask::`). JSON keeps
//! the text exact. SARIF and GitLab name files from the repository root, percent-encoded.

use std::fs;
use std::path::Path;
use std::process::Command;

/// An added token's text as a hostile publisher would write it.
const HOSTILE: &str = "x\n::error file=README.md::INJECTED\r\n::add-mask::OK \u{1b}]0;pwned\u{7}\u{1b}[2J \u{202e}desrever ##[add-mask]word";

fn dflash(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(args)
        .current_dir(dir)
        .env("HF_HUB_OFFLINE", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_WORKSPACE")
        .env_remove("CI_PROJECT_DIR")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A copy of the incident's drafter, its authority, and the target whose added token 248064
/// (the drafter's wrong `mask_token_id`, named in the finding) holds [`HOSTILE`].
fn hostile_target() -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let copy = |from: &str, to: &str| {
        let to = dir.path().join(to);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        let text = fs::read_to_string(repo.join(from)).unwrap();
        let quoted = serde_json::to_string(HOSTILE).unwrap();
        fs::write(to, text.replace("\"<|repo_name|>\"", &quoted)).unwrap();
    };
    copy(
        "fixtures/incident/Qwen3.6-27B-DFlash/config.json",
        "drafter/config.json",
    );
    copy("fixtures/incident/authority/config.json", "authority.json");
    for f in ["config.json", "tokenizer.json", "tokenizer_config.json"] {
        copy(
            &format!("fixtures/targets/Qwen3.6-27B/{f}"),
            &format!("target/{f}"),
        );
    }
    dir
}

const DIFF: &[&str] = &[
    "diff",
    "drafter",
    "--against",
    "authority.json",
    "--target",
    "target",
];

/// No line holds a control character or a bidi override of the input, nor the runner's older
/// `##[` command syntax.
fn assert_inert(what: &str, text: &str) {
    for (n, line) in text.lines().enumerate() {
        assert!(
            !line
                .chars()
                .any(|c| matches!(c, '\u{1b}' | '\u{7}' | '\r' | '\u{202e}')),
            "{what}, line {}: a control character was printed raw: {line:?}",
            n + 1
        );
        assert!(!line.contains("##["), "{what}, line {}: {line:?}", n + 1);
    }
}

/// Every line that starts a workflow command (the runner trims the line first) is one of the
/// tool's own annotations, whose properties the tool wrote: `::error file=…,title=…::message`
/// or `::error::message`.
fn assert_no_forged_command(what: &str, text: &str) {
    for line in text.lines() {
        let t = line.trim();
        if !t.starts_with("::") {
            continue;
        }
        let (command, rest) = t[2..].split_once("::").unwrap_or((t, ""));
        let name = command.split(' ').next().unwrap_or("");
        assert!(
            matches!(name, "error" | "warning" | "notice"),
            "{what}: a workflow command not the tool's: {line:?}"
        );
        assert!(
            !command.contains("README.md") && !rest.starts_with(':'),
            "{what}: a forged annotation: {line:?}"
        );
    }
}

#[test]
fn a_hostile_token_forges_nothing_in_github_output() {
    let dir = hostile_target();
    let mut args = DIFF.to_vec();
    args.extend(["--format", "github"]);
    let (code, out, err) = dflash(dir.path(), &args);
    assert_eq!(code, 1, "{out}{err}");
    // The token is named in the finding, escaped.
    assert!(
        out.contains("x\\n::error file=README.md::INJECTED"),
        "{out}"
    );
    for (what, text) in [("stdout", &out), ("stderr", &err)] {
        assert_no_forged_command(what, text);
        assert_inert(what, text);
    }
}

#[test]
fn a_hostile_token_is_shown_escaped_in_human_output_and_exact_in_json() {
    let dir = hostile_target();
    let mut args = DIFF.to_vec();
    args.extend(["--color", "always"]);
    let (code, out, err) = dflash(dir.path(), &args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("x\\n::error file=README.md::INJECTED\\r\\n::add-mask::OK \\u{1b}]0;pwned\\u{7}\\u{1b}[2J \\u{202e}desrever #\\u{23}[add-mask]word"), "{out}");
    assert!(
        out.lines().all(|l| !l.trim_start().starts_with("::")),
        "{out}"
    );
    // Colours on: only the painter's own sequences remain.
    let colourless = out
        .replace("\u{1b}[1;31m", "")
        .replace("\u{1b}[33m", "")
        .replace("\u{1b}[32m", "")
        .replace("\u{1b}[2m", "")
        .replace("\u{1b}[1m", "")
        .replace("\u{1b}[0m", "");
    assert_inert("human", &colourless);

    let mut args = DIFF.to_vec();
    args.extend(["--format", "json"]);
    let (_, out, _) = dflash(dir.path(), &args);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let all = v["diagnostics"].to_string();
    let exact = serde_json::to_string(HOSTILE).unwrap();
    assert!(all.contains(exact.trim_matches('"')), "{all}");
}

/// An error that quotes input (here a path name) is one line of stderr in human output (plus
/// its hint), and under `--format github` one escaped `::error::` command.
#[test]
fn errors_quoting_input_forge_nothing_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let name = "m\n::error file=README.md::INJECTED\u{1b}]0;t\u{7}";
    for format in ["human", "github"] {
        let (code, out, err) = dflash(dir.path(), &["lint", name, "--format", format]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains("INJECTED"), "{err}");
        assert_no_forged_command(format, &err);
        assert_inert(format, &err);
        if format == "human" {
            assert!(
                err.lines().all(|l| !l.trim_start().starts_with("::")),
                "{err}"
            );
        } else {
            assert!(err.lines().all(|l| l.starts_with("::error::")), "{err}");
        }
    }
}

/// clap's usage errors quote the bad value: shown escaped too.
#[test]
fn usage_errors_quote_arguments_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let value = "x\n::error file=README.md::INJECTED\u{1b}]0;t\u{7}";
    for args in [
        &["lint", "--format", value][..],
        &["lint", value, "--nope"][..],
    ] {
        let (code, out, err) = dflash(dir.path(), args);
        assert_eq!(code, 2, "{out}{err}");
        // The bad value is quoted (the second is a bad flag: the value is not quoted at all).
        if args[1] == "--format" {
            assert!(
                err.contains("x\\n::error file=README.md::INJECTED"),
                "{err}"
            );
        }
        assert!(
            err.lines().all(|l| !l.trim_start().starts_with("::")),
            "{err}"
        );
        assert_inert("usage error", &err);
    }
}

/// SARIF and GitLab name files from the repository root, even when the command runs in a
/// subfolder; the SARIF URI is percent-encoded (`%41` in a name is that name, not `A`).
#[test]
fn code_host_paths_are_from_the_repository_root() {
    let dir = hostile_target();
    fs::create_dir(dir.path().join(".git")).unwrap();
    let sub = dir.path().join("sub");
    fs::create_dir_all(sub.join("m%41 x")).unwrap();
    fs::rename(
        dir.path().join("drafter/config.json"),
        sub.join("m%41 x/config.json"),
    )
    .unwrap();
    let args = [
        "diff",
        "m%41 x",
        "--against",
        "../authority.json",
        "--format",
    ];
    let (code, out, err) = dflash(&sub, &[&args[..], &["sarif"]].concat());
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let location = &v["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(
        location["artifactLocation"]["uri"], "sub/m%2541%20x/config.json",
        "{location}"
    );
    assert_eq!(location["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    let (code, out, err) = dflash(&sub, &[&args[..], &["gitlab"]].concat());
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["location"]["path"], "sub/m%41 x/config.json", "{v}");
}
