//! `dflash-check check` and `pin` end to end: a fixture tree with good, wrong, unreadable and
//! unpinned drafters (plus a target model and a hidden folder), in every output format.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn copy(from: &str, to: &Path) {
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    fs::copy(from, to).unwrap();
}

/// The tree: models/{good,wrong,broken,unpinned}, targets/Qwen3.6-27B, .git/config.json.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy(
        "fixtures/incident/authority/config.json",
        &d.join("models/good/config.json"),
    );
    copy(
        "fixtures/incident/authority/config.json",
        &d.join("authorities/qwen3.6-27b.json"),
    );
    copy(
        "fixtures/incident/Qwen3.6-27B-DFlash/config.json",
        &d.join("models/wrong/config.json"),
    );
    fs::create_dir_all(d.join("models/broken")).unwrap();
    fs::write(
        d.join("models/broken/config.json"),
        "{\n  \"architectures\": [\"DFlashDraftModel\"],\n  \"block_size\": 16,\n}\n",
    )
    .unwrap();
    copy(
        "fixtures/qwen3-8b/Qwen3-8B-DFlash-b16/config.json",
        &d.join("models/Qwen3-8B-DFlash-b16/config.json"),
    );
    for f in ["config.json", "tokenizer.json", "tokenizer_config.json"] {
        copy(
            &format!("fixtures/targets/Qwen3.6-27B/{f}"),
            &d.join("targets/Qwen3.6-27B").join(f),
        );
    }
    copy(
        "fixtures/incident/Qwen3.6-27B-DFlash/config.json",
        &d.join(".git/config.json"),
    );
    dir
}

fn dflash(dir: &Path, args: &[&str]) -> (i32, String, String) {
    dflash_with(dir, args, None)
}

/// Runs in `dir` with `$GITHUB_STEP_SUMMARY` set to `summary` (unset when `None`).
fn dflash_with(dir: &Path, args: &[&str], summary: Option<&Path>) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dflash-check"));
    cmd.args(args)
        .current_dir(dir)
        .env("HF_HUB_OFFLINE", "1")
        .env_remove("NO_COLOR")
        .env_remove("GITHUB_STEP_SUMMARY");
    if let Some(path) = summary {
        cmd.env("GITHUB_STEP_SUMMARY", path);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Pins models/good to its built-in snapshot.
const PIN_GOOD: &[&str] = &[
    "pin",
    "models/good",
    "--snapshot",
    "z-lab/Qwen3.6-27B-DFlash",
    "--target",
    "targets/Qwen3.6-27B",
];

fn pin_all(dir: &Path) {
    let (code, out, err) = dflash(dir, PIN_GOOD);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = dflash(
        dir,
        &[
            "pin",
            "models/wrong",
            "--against",
            "authorities/qwen3.6-27b.json",
            "--target",
            "targets/Qwen3.6-27B",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
}

/// Every drafter is reported; one bad drafter does not stop the others; exit 1 for errors.
#[test]
fn check_reports_every_drafter() {
    let dir = tree();
    pin_all(dir.path());
    let pins = fs::read_to_string(dir.path().join("dflash-check.toml")).unwrap();
    assert!(
        pins.contains("[drafters.\"models/wrong\"]\nagainst = \"authorities/qwen3.6-27b.json\""),
        "{pins}"
    );
    let (code, out, err) = dflash(dir.path(), &["check", "models", "targets"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("  drafter  models/good/config.json  [dflash] against builtin z-lab/Qwen3.6-27B-DFlash (pin)  (clean)"), "{out}");
    assert!(
        out.contains("models/wrong/config.json  [dflash] against file"),
        "{out}"
    );
    assert!(
        out.contains("error[changed] dflash_config.mask_token_id: 248064 <|repo_name|>")
            && out.contains("  --> models/wrong/config.json:13:5"),
        "{out}"
    );
    assert!(
        out.contains("error[config-unreadable] `models/broken/config.json`: invalid JSON")
            && out.contains("  --> models/broken/config.json:4:1"),
        "{out}"
    );
    assert!(out.contains("models/Qwen3-8B-DFlash-b16/config.json  [dflash] against builtin z-lab/Qwen3-8B-DFlash-b16 (builtin-match)"), "{out}");
    assert!(
        out.contains("\n  skipped  targets/Qwen3.6-27B/config.json (not drafters)\n"),
        "{out}"
    );
    assert!(!out.contains(".git"), "hidden folders are skipped: {out}");
    // --require-pin makes the unpinned drafters errors.
    let (_, out, _) = dflash(dir.path(), &["check", "models", "--require-pin"]);
    assert!(
        out.contains("error[pin-missing] no pin for this drafter")
            && out.contains("  --> models/Qwen3-8B-DFlash-b16/config.json:1:1"),
        "{out}"
    );
    // A clean drafter alone exits 0.
    let (code, out, _) = dflash(dir.path(), &["check", "models/good"]);
    assert_eq!(code, 0, "{out}");
}

/// The incident in an ordinary folder fails the gate with no flag: it matches two published
/// configs by shape and equals neither. The gate never suggests the closer, wrong one.
#[test]
fn the_incident_in_an_ordinary_folder_fails_check() {
    let dir = tempfile::tempdir().unwrap();
    copy(
        "fixtures/incident/Qwen3.6-27B-DFlash/config.json",
        &dir.path().join("models/my-drafter/config.json"),
    );
    let (code, out, err) = dflash(dir.path(), &["check", "."]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("error[authority-ambiguous] equal to none of 2 published configs")
            && out.contains("  --> models/my-drafter/config.json:1:1"),
        "{out}"
    );
    assert!(
        out.contains("z-lab/Qwen3.6-27B-DFlash differs in 5 field(s)"),
        "{out}"
    );
    assert!(
        out.contains("z-lab/Qwen3.5-27B-DFlash differs in 3 field(s)"),
        "{out}"
    );
    assert!(
        out.contains("\n  drafter  models/my-drafter/config.json  [dflash] no single authority"),
        "{out}"
    );
    assert!(
        out.contains("\nFAIL: 1 error, 3 warnings, 0 info; 1 drafter checked\n"),
        "{out}"
    );
    // Fixed against its real authority, the same folder passes with no flag.
    let (code, out, err) = dflash(
        dir.path(),
        &[
            "fix",
            "models/my-drafter",
            "--snapshot",
            "z-lab/Qwen3.6-27B-DFlash",
            "--no-backup",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, _) = dflash(dir.path(), &["check", "."]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("against builtin z-lab/Qwen3.6-27B-DFlash (builtin-match)  (clean)"),
        "{out}"
    );
}

/// `OK` only for what was verified: a drafter nothing can be compared with is a warning and
/// the verdict counts it; an empty tree says it checked nothing; a stale pin is reported.
#[test]
fn unverified_drafters_empty_trees_and_stale_pins_are_not_ok() {
    let dir = tempfile::tempdir().unwrap();
    let other = std::fs::read_to_string("fixtures/incident/authority/config.json")
        .unwrap()
        .replace("\"hidden_size\": 5120", "\"hidden_size\": 4096");
    fs::create_dir_all(dir.path().join("models/odd")).unwrap();
    fs::write(dir.path().join("models/odd/config.json"), other).unwrap();
    let (code, out, _) = dflash(dir.path(), &["check", "."]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("warning[no-authority] unverified: no pin")
            && out.contains("  --> models/odd/config.json:1:1"),
        "{out}"
    );
    assert!(
        out.contains("OK (1 unverified): 0 errors, 1 warning, 0 info; 1 drafter checked"),
        "{out}"
    );
    let (code, out, _) = dflash(dir.path(), &["check", ".", "--deny", "warnings"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "FAIL: 0 errors, 1 warning, 0 info (warnings denied); 1 drafter checked, 1 unverified"
        ),
        "{out}"
    );

    let empty = tempfile::tempdir().unwrap();
    fs::create_dir_all(empty.path().join("docs")).unwrap();
    let (code, out, _) = dflash(empty.path(), &["check", "."]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("warning[no-drafters]"), "{out}");
    assert!(
        out.contains("NOTHING CHECKED: 0 errors, 1 warning, 0 info; 0 drafters checked"),
        "{out}"
    );
    assert!(!out.contains("OK"), "{out}");
    let (code, _, _) = dflash(empty.path(), &["check", ".", "--deny", "warnings"]);
    assert_eq!(code, 1);

    fs::write(
        dir.path().join("dflash-check.toml"),
        "version = 1\n\n[drafters.\"models/gone\"]\nsnapshot = \"z-lab/Qwen3.6-27B-DFlash\"\n",
    )
    .unwrap();
    let (_, out, err) = dflash(dir.path(), &["check", "."]);
    assert!(
        out.contains("warning[pin-path-missing] the pin `models/gone`")
            && out.contains("  --> dflash-check.toml:3:1"),
        "{out}{err}"
    );
}

/// GitHub annotations land on the line of the offending key, escaped.
#[test]
fn github_annotations_point_at_the_key() {
    let dir = tree();
    pin_all(dir.path());
    let (code, out, _) = dflash(dir.path(), &["check", "models", "--format", "github"]);
    assert_eq!(code, 1);
    let mut checked = 0;
    for line in out.lines().filter(|l| l.starts_with("::")) {
        let props = line.split("::").nth(1).unwrap().split_once(' ').unwrap().1;
        let get = |k: &str| {
            props
                .split(',')
                .find_map(|p| p.strip_prefix(&format!("{k}=")))
                .unwrap()
                .to_string()
        };
        let (file, line_no) = (get("file"), get("line").parse::<usize>().unwrap());
        let title = get("title");
        // title=CODE (json.path): the key named by the path is on that line.
        if let Some(path) = title.split(" (").nth(1) {
            let key = path
                .trim_end_matches(')')
                .rsplit('.')
                .next()
                .unwrap()
                .split('[')
                .next()
                .unwrap();
            let text = fs::read_to_string(dir.path().join(&file)).unwrap();
            let at = text.lines().nth(line_no - 1).unwrap();
            if text.contains(&format!("\"{key}\"")) {
                // The key is in the file: the annotation is on its line (or on the list element).
                assert!(
                    at.contains(&format!("\"{key}\""))
                        || at.trim_start().starts_with(char::is_numeric),
                    "{line} -> line {line_no}: {at}"
                );
                checked += 1;
            } else {
                // Absent here: the annotation points at the object that lacks it.
                assert_eq!(line_no, 1, "{line}");
            }
        }
        assert!(!line.contains('\n'));
    }
    assert!(checked >= 8, "{out}");
    assert!(
        out.contains(
            "::error file=models/broken/config.json,line=4,col=1,title=config-unreadable::"
        ),
        "{out}"
    );
}

/// JSON output has a schema version, per-drafter findings and a summary.
#[test]
fn json_output_is_versioned() {
    let dir = tree();
    pin_all(dir.path());
    let (code, out, _) = dflash(dir.path(), &["check", "models", "--format", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["command"], "check");
    assert_eq!(v["drafters"].as_array().unwrap().len(), 4);
    assert_eq!(v["summary"]["fails"], true);
    // One diagnostic shape for every command: the same fields as lint's.
    let d = &v["diagnostics"][0];
    for key in [
        "code", "severity", "file", "path", "line", "column", "message", "source",
    ] {
        assert!(d.get(key).is_some(), "diagnostic lacks {key}: {d}");
    }
    let wrong = v["drafters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["file"] == "models/wrong/config.json")
        .unwrap();
    assert_eq!(wrong["authority"]["chosen_by"], "pin");
}

/// SARIF 2.1.0, validated against the official schema when the test script provides it.
#[test]
fn sarif_is_valid_2_1_0() {
    let dir = tree();
    pin_all(dir.path());
    let (code, out, _) = dflash(
        dir.path(),
        &[
            "check",
            "models",
            "--format",
            "sarif",
            "--engine",
            "vllm@0.26",
        ],
    );
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], "2.1.0");
    // The run's property bag says which engine the verdict assumed.
    assert_eq!(v["runs"][0]["properties"]["engine"], "vllm");
    assert_eq!(v["runs"][0]["properties"]["version"], "0.26");
    let results = v["runs"][0]["results"].as_array().unwrap();
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    for r in results {
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], r["ruleId"]);
        let loc = &r["locations"][0]["physicalLocation"];
        assert!(!loc["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .starts_with('/'));
        assert!(loc["region"]["startLine"].as_u64().unwrap() >= 1);
    }
    let (Some(schema), Some(python)) = (
        std::env::var_os("DFLASH_SARIF_SCHEMA"),
        std::env::var_os("DFLASH_SARIF_PYTHON"),
    ) else {
        println!("skipped schema validation: set DFLASH_SARIF_SCHEMA and DFLASH_SARIF_PYTHON (scripts/test.sh does)");
        return;
    };
    let sarif = dir.path().join("out.sarif");
    fs::write(&sarif, &out).unwrap();
    let script = "import json,sys,jsonschema\nschema=json.load(open(sys.argv[1]))\njsonschema.validate(json.load(open(sys.argv[2])), schema)\nprint('valid')\n";
    let status = Command::new(PathBuf::from(python))
        .args(["-c", script])
        .arg(schema)
        .arg(&sarif)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "SARIF invalid: {}",
        String::from_utf8_lossy(&status.stderr)
    );
}

/// A drafter whose `dflash-use-swa` is info under vLLM and a warning elsewhere, alone in a tree.
fn swa_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy(
        "tests/lint/cases/dflash-use-swa/config.json",
        &dir.path().join("d/config.json"),
    );
    dir
}

/// `(assumed, the drafter's assumed, dflash-use-swa's severity)` of `check d --format json`.
fn swa_check(dir: &Path, extra: &[&str]) -> (serde_json::Value, serde_json::Value, String) {
    let mut args = vec!["check", "d", "--format", "json"];
    args.extend_from_slice(extra);
    let (_, out, err) = dflash(dir, &args);
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    let swa = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "dflash-use-swa")
        .map(|d| d["severity"].as_str().unwrap().to_string())
        .unwrap_or_default();
    (
        v["assumed"].clone(),
        v["drafters"][0]["assumed"].clone(),
        swa,
    )
}

/// `check` lints for the engine of `--engine`, else the pin file's `engine`, else a pin's own;
/// JSON says which it assumed, for the run and per drafter.
#[test]
fn check_follows_the_engine_of_flag_file_and_pin() {
    let dir = swa_tree();
    let d = dir.path();
    let vllm = serde_json::json!({"engine": "vllm", "version": null, "from": null});
    // No engine anywhere: the statement for every engine, and `assumed` is null.
    let (run, drafter, swa) = swa_check(d, &[]);
    assert_eq!(
        (run, drafter, swa.as_str()),
        (serde_json::Value::Null, serde_json::Value::Null, "warning")
    );
    let (run, drafter, swa) = swa_check(d, &["--engine", "vllm"]);
    assert_eq!((&run, &drafter, swa.as_str()), (&vllm, &vllm, "info"));
    // The pin file's top-level engine changes the verdict; the flag wins over it.
    fs::write(
        d.join("dflash-check.toml"),
        "version = 1\nengine = \"vllm\"\n",
    )
    .unwrap();
    let (run, drafter, swa) = swa_check(d, &[]);
    assert_eq!((&run, &drafter, swa.as_str()), (&vllm, &vllm, "info"));
    let (run, _, swa) = swa_check(d, &["--engine", "sglang@0.5"]);
    assert_eq!(
        run,
        serde_json::json!({"engine": "sglang", "version": "0.5", "from": "--engine"})
    );
    assert_eq!(swa, "warning");
    // A pin reviewed for an engine: `pin --engine` records it, check lints for it.
    fs::remove_file(d.join("dflash-check.toml")).unwrap();
    let (code, _, err) = dflash(
        d,
        &[
            "pin",
            "d",
            "--snapshot",
            "z-lab/Qwen3.6-27B-DFlash",
            "--engine",
            "vllm@0.26",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let toml = fs::read_to_string(d.join("dflash-check.toml")).unwrap();
    assert!(toml.contains("engine = \"vllm@0.26\""), "{toml}");
    let (run, drafter, swa) = swa_check(d, &[]);
    assert_eq!(run, serde_json::Value::Null);
    assert_eq!(
        drafter,
        serde_json::json!({"engine": "vllm", "version": "0.26", "from": "dflash-check.toml"})
    );
    assert_eq!(swa, "info");
    let (_, drafter, swa) = swa_check(d, &["--engine", "sglang"]);
    assert_eq!(drafter["engine"], "sglang");
    assert_eq!(swa, "warning");
}

/// A pin file written before engines were recorded still loads and checks; a bad engine in the
/// file is refused with exit 2 and says what and where.
#[test]
fn pin_file_engine_is_optional_and_validated() {
    let dir = swa_tree();
    let d = dir.path();
    fs::write(
        d.join("dflash-check.toml"),
        "version = 1\n[drafters.d]\nsnapshot = \"z-lab/Qwen3.6-27B-DFlash\"\npinned = \"2026-01-01\"\n",
    )
    .unwrap();
    let (run, drafter, swa) = swa_check(d, &[]);
    assert_eq!(
        (run, drafter),
        (serde_json::Value::Null, serde_json::Value::Null)
    );
    assert_eq!(swa, "warning");
    fs::write(
        d.join("dflash-check.toml"),
        "version = 1\nengine = \"tgi\"\n",
    )
    .unwrap();
    let (code, _, err) = dflash(d, &["check", "d"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("dflash-check.toml") && err.contains("unknown engine `tgi`"),
        "{err}"
    );
}

/// The pin file is validated: a Hub pin without a sha is refused with exit 2.
#[test]
fn invalid_pin_file_exits_two() {
    let dir = tree();
    fs::write(
        dir.path().join("dflash-check.toml"),
        "version = 1\n[drafters.\"models/good\"]\nhub = \"z-lab/Qwen3.6-27B-DFlash\"\n",
    )
    .unwrap();
    let (code, _, err) = dflash(dir.path(), &["check", "models"]);
    assert_eq!(code, 2);
    assert!(err.contains("40-hex"), "{err}");
}

/// The pre-commit hook as pre-commit would run it: its `entry` on the changed config.json files
/// its `files` pattern selects (`pre-commit validate-manifest` checks the manifest in scripts/test.sh).
#[test]
fn pre_commit_hook_entry_gates_changed_configs() {
    let manifest = fs::read_to_string(".pre-commit-hooks.yaml").unwrap();
    let field = |k: &str| {
        manifest
            .lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{k}: ")))
            .unwrap()
            .to_string()
    };
    assert_eq!(field("- id"), "dflash-check");
    assert_eq!(
        field("files"),
        r"(^|/)config\.json$|\.ya?ml$|\.(ba)?sh$|(^|/)(Dockerfile|Containerfile)(\.[^/]*)?$|\.[Dd]ockerfile$"
    );
    let entry = field("entry");
    let mut words = entry.split_whitespace();
    assert_eq!(words.next(), Some("dflash-check"));
    let args: Vec<&str> = words.collect();
    let dir = tree();
    pin_all(dir.path());
    let staged = |files: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_dflash-check"))
            .args(&args)
            .args(files)
            .current_dir(dir.path())
            .env("HF_HUB_OFFLINE", "1")
            .status()
            .unwrap()
            .code()
    };
    assert_eq!(staged(&["models/good/config.json"]), Some(0));
    assert_eq!(
        staged(&["models/good/config.json", "models/wrong/config.json"]),
        Some(1)
    );
    assert_eq!(
        staged(&["targets/Qwen3.6-27B/config.json"]),
        Some(0),
        "a target config is skipped"
    );
    // A YAML file that is no Kubernetes manifest with speculative decoding is skipped too.
    fs::write(dir.path().join("ci.yml"), "on: push\njobs: {}\n").unwrap();
    assert_eq!(staged(&["models/good/config.json", "ci.yml"]), Some(0));
    // So is a script that deploys no speculative decoding.
    fs::write(dir.path().join("build.sh"), "cargo build --release\n").unwrap();
    assert_eq!(staged(&["models/good/config.json", "build.sh"]), Some(0));
}

/// `(ruleId, uri, logical location) -> (fingerprint, startLine)` of a SARIF log's results.
fn sarif_results(out: &str) -> BTreeMap<(String, String, String), (String, u64)> {
    let v: serde_json::Value = serde_json::from_str(out).unwrap();
    v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let loc = &r["locations"][0];
            (
                (
                    r["ruleId"].as_str().unwrap().to_string(),
                    loc["physicalLocation"]["artifactLocation"]["uri"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                    loc["logicalLocations"][0]["fullyQualifiedName"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                ),
                (
                    r["partialFingerprints"]["dflashCheck/v1"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                    loc["physicalLocation"]["region"]["startLine"]
                        .as_u64()
                        .unwrap(),
                ),
            )
        })
        .collect()
}

/// SARIF alerts keep their identity when lines shift: the fingerprint is (code, repository path,
/// JSON pointer); `automationDetails.id` names the command; each rule's help is Markdown with its
/// explanation and source.
#[test]
fn sarif_fingerprints_survive_line_shifts() {
    let dir = tree();
    pin_all(dir.path());
    let (code, before, _) = dflash(dir.path(), &["check", "models", "--format", "sarif"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&before).unwrap();
    assert_eq!(
        v["runs"][0]["automationDetails"]["id"],
        "dflash-check/check/"
    );
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    let mismatch = rules.iter().find(|r| r["id"] == "changed").unwrap();
    let md = mismatch["help"]["markdown"].as_str().unwrap();
    assert!(
        md.starts_with("**a field has a different value than in the authority** (error)\n\n"),
        "{md}"
    );
    assert!(
        md.contains("Both sides have the field with different values"),
        "{md}"
    );
    // The source is rendered from evidence/evidence.toml: `changed` is a judgement of the tool's.
    assert!(
        md.contains("**Source:** dflash-check's own judgement (no engine claim)"),
        "{md}"
    );
    assert!(mismatch["help"]["text"]
        .as_str()
        .unwrap()
        .contains("Source: "));

    // Three new lines above every key of the wrong drafter: lines move, identities do not.
    let wrong = dir.path().join("models/wrong/config.json");
    let text = fs::read_to_string(&wrong).unwrap();
    fs::write(&wrong, format!("\n\n\n{text}")).unwrap();
    let (code, after, _) = dflash(dir.path(), &["check", "models", "--format", "sarif"]);
    assert_eq!(code, 1);
    let (before, after) = (sarif_results(&before), sarif_results(&after));
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    let mut shifted = 0;
    for (key, (fingerprint, line)) in &before {
        let (fingerprint_after, line_after) = &after[key];
        assert_eq!(fingerprint, fingerprint_after, "{key:?}");
        assert_eq!(fingerprint.len(), 64, "sha256 hex: {fingerprint}");
        if key.1 == "models/wrong/config.json" {
            assert_eq!(*line_after, line + 3, "{key:?}");
            shifted += 1;
        }
    }
    assert!(shifted >= 6, "{before:?}");
    // Distinct places, distinct fingerprints.
    let distinct: std::collections::BTreeSet<_> = before.values().map(|(f, _)| f).collect();
    assert_eq!(distinct.len(), before.len());

    // Another command, another category: lint's uploads do not close check's alerts.
    let (_, lint, _) = dflash(dir.path(), &["lint", "models/wrong", "--format", "sarif"]);
    let v: serde_json::Value = serde_json::from_str(&lint).unwrap();
    assert_eq!(
        v["runs"][0]["automationDetails"]["id"],
        "dflash-check/lint/"
    );
}

/// GitLab Code Quality: one issue per finding, with GitLab's severities, the SARIF fingerprint,
/// and the file and line of the key.
#[test]
fn gitlab_code_quality_report() {
    let dir = tree();
    pin_all(dir.path());
    let (code, out, err) = dflash(dir.path(), &["check", "models", "--format", "gitlab"]);
    assert_eq!(code, 1, "{err}");
    let issues: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let (_, sarif, _) = dflash(dir.path(), &["check", "models", "--format", "sarif"]);
    let sarif = sarif_results(&sarif);
    assert_eq!(issues.len(), sarif.len());
    for issue in &issues {
        let keys: Vec<&str> = issue
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "description",
                "check_name",
                "fingerprint",
                "severity",
                "location"
            ],
            "{issue}"
        );
        assert!(["info", "major", "critical"].contains(&issue["severity"].as_str().unwrap()));
        assert!(!issue["location"]["path"]
            .as_str()
            .unwrap()
            .starts_with("./"));
        // The same identity as the SARIF result for the same finding.
        assert!(
            sarif.values().any(|(f, line)| f == &issue["fingerprint"]
                && *line == issue["location"]["lines"]["begin"].as_u64().unwrap()),
            "{issue}"
        );
    }
    let mask = issues
        .iter()
        .find(|i| {
            i["description"]
                .as_str()
                .unwrap()
                .starts_with("dflash_config.mask_token_id: ")
                && i["check_name"] == "changed"
                && i["location"]["path"] == "models/wrong/config.json"
        })
        .unwrap();
    assert_eq!(mask["severity"], "critical");
    assert_eq!(mask["location"]["lines"]["begin"], 13);
    let broken = issues
        .iter()
        .find(|i| i["check_name"] == "config-unreadable")
        .unwrap();
    assert_eq!(broken["location"]["path"], "models/broken/config.json");
    assert_eq!(broken["location"]["lines"]["begin"], 4);
    assert!(issues.iter().any(|i| i["severity"] == "major"));
}

/// `--format github` appends a Markdown table of the findings to `$GITHUB_STEP_SUMMARY`; other
/// formats leave it alone; an unwritable summary is an error, not a silent pass.
#[test]
fn github_step_summary_gets_a_table() {
    let dir = tree();
    pin_all(dir.path());
    let summary = dir.path().join("summary.md");
    fs::write(&summary, "earlier step\n").unwrap();
    let (code, out, _) = dflash_with(
        dir.path(),
        &["check", "models", "--format", "github"],
        Some(&summary),
    );
    assert_eq!(code, 1);
    let md = fs::read_to_string(&summary).unwrap();
    assert!(
        md.starts_with("earlier step\n### dflash-check check: ❌ "),
        "{md}"
    );
    assert!(
        md.contains("| severity | code | file | path | message |\n|---|---|---|---|---|\n"),
        "{md}"
    );
    assert!(md.contains("| error | `changed` | <code>models/wrong/config.json:13</code> | <code>dflash_config.mask_token_id</code> | "), "{md}");
    // One row per finding, as many as annotations.
    let rows = md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| severity"))
        .count();
    assert_eq!(rows, out.lines().filter(|l| l.starts_with("::")).count());

    // A clean run says so.
    let (code, _, _) = dflash_with(
        dir.path(),
        &["check", "models/good", "--format", "github"],
        Some(&summary),
    );
    assert_eq!(code, 0);
    let md = fs::read_to_string(&summary).unwrap();
    assert!(
        md.ends_with(
            "### dflash-check check: ✅ OK: 0 errors, 0 warnings, 0 info; 1 drafter checked\n\nNo findings.\n\n"
        ),
        "{md}"
    );

    // Other formats do not write it.
    let len = md.len();
    dflash_with(
        dir.path(),
        &["check", "models", "--format", "sarif"],
        Some(&summary),
    );
    assert_eq!(fs::read_to_string(&summary).unwrap().len(), len);

    // A directory is not a summary file: exit 2 with the variable named.
    let (code, _, err) = dflash_with(
        dir.path(),
        &["check", "models", "--format", "github"],
        Some(dir.path()),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("GITHUB_STEP_SUMMARY"), "{err}");
}

/// Issue 32: `GITHUB_STEP_SUMMARY` naming a FIFO blocked forever (opening it for writing waits
/// for a reader). It is refused at once, exit 2, saying the file is not a regular file.
#[cfg(unix)]
#[test]
fn a_fifo_step_summary_is_refused_not_waited_on() {
    let dir = tree();
    pin_all(dir.path());
    let fifo = dir.path().join("summary.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["check", "models/good", "--format", "github"])
        .current_dir(dir.path())
        .env("HF_HUB_OFFLINE", "1")
        .env("GITHUB_STEP_SUMMARY", &fifo)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("dflash-check blocked on a FIFO named by GITHUB_STEP_SUMMARY");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not a regular file") && err.contains("GITHUB_STEP_SUMMARY"),
        "{err}"
    );
}

/// `[[ignore]]` entries: a matching finding leaves the verdict with its reason; an unused or
/// expired entry is an error on its line of the pin file; entries for drafters the run did not
/// check are left alone; a bad entry stops the run (exit 2); `pin` keeps the entries.
#[test]
fn suppressions_need_reasons_and_must_stay_used() {
    let dir = tree();
    pin_all(dir.path());
    let pins = dir.path().join("dflash-check.toml");
    let pinned = fs::read_to_string(&pins).unwrap();
    let entries = "\n[[ignore]]\ncode = \"changed\"\npath = \"models/wrong\"\n\
pointer = \"/dflash_config/mask_token_id\"\nreason = \"tested with this mask, acceptance 6.1\"\n\
\n[[ignore]]\ncode = \"changed\"\npath = \"models/w*/config.json\"\npointer = \"/no_such_key\"\nreason = \"stale\"\n";
    fs::write(&pins, format!("{pinned}{entries}")).unwrap();
    let unused_line = pinned.lines().count() + 8;
    let mask = |v: &serde_json::Value| {
        v["diagnostics"].as_array().unwrap().iter().any(|d| {
            d["file"] == "models/wrong/config.json"
                && d["path"] == "dflash_config.mask_token_id"
                && d["code"] == "changed"
        })
    };
    let (code, out, err) = dflash(dir.path(), &["check", "models", "--format", "json"]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(!mask(&v), "suppressed: {out}");
    assert_eq!(
        v["suppressed"],
        serde_json::json!([{"code": "changed", "file": "models/wrong/config.json",
            "pointer": "/dflash_config/mask_token_id", "reason": "tested with this mask, acceptance 6.1",
            "baseline": false}])
    );
    let unused: Vec<_> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "suppression-unused")
        .collect();
    assert_eq!(unused.len(), 1, "{out}");
    assert_eq!(unused[0]["severity"], "error");
    assert_eq!(unused[0]["file"], "dflash-check.toml");
    assert_eq!(unused[0]["line"], unused_line, "{pinned}{entries}");
    assert!(unused[0]["message"]
        .as_str()
        .unwrap()
        .contains("/no_such_key"));

    // Only the good drafter checked (as pre-commit does for one changed file): the entries for
    // models/wrong are neither used nor reported.
    let (code, out, _) = dflash(dir.path(), &["check", "models/good"]);
    assert_eq!(code, 0, "{out}");

    // `pin` rewrites the file and keeps the entries.
    let (code, _, err) = dflash(dir.path(), PIN_GOOD);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = dflash(dir.path(), &["check", "models", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["suppressed"].as_array().unwrap().len(), 1, "{out}");

    // Expired: the finding is back, and the entry is an error.
    let expired = entries.replacen(
        "reason = \"tested",
        "expires = 2020-01-31\nreason = \"tested",
        1,
    );
    fs::write(&pins, format!("{pinned}{expired}")).unwrap();
    let (code, out, _) = dflash(dir.path(), &["check", "models", "--format", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(mask(&v), "expired entries do not suppress: {out}");
    assert!(out.contains("expired on 2020-01-31"), "{out}");
    assert_eq!(v["suppressed"], serde_json::json!([]));

    // Bad entries: exit 2, the entry named, nothing checked.
    for (bad, says) in [
        (
            entries.replace("reason = \"stale\"", "reason = \"\""),
            "entry 2 has no reason",
        ),
        (
            entries.replacen("changed", "no-such-code", 1),
            "entry 1 names no code `no-such-code`",
        ),
        (
            entries.replace("reason = \"stale\"", "reason = \"s\"\nexpires = \"soon\""),
            "entry 2 has expires `soon`",
        ),
        (
            entries.replace("pointer = \"/no_such_key\"", "pointer = \"no_such_key\""),
            "not a JSON pointer",
        ),
    ] {
        fs::write(&pins, format!("{pinned}{bad}")).unwrap();
        let (code, out, err) = dflash(dir.path(), &["check", "models"]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains(says), "{says}: {err}");
    }
}

/// `--baseline` appends an entry per finding with the reason `baseline of DATE`, which the
/// next run accepts (issue 32: the tool's own output must be a file the tool accepts), listed
/// as the baseline's in JSON; the old placeholder reason is still refused; `--prune-ignores`
/// removes the entries a fix made stale and leaves the rest of the file as it was.
#[test]
fn baseline_then_prune() {
    let dir = tree();
    pin_all(dir.path());
    let pins = dir.path().join("dflash-check.toml");
    let pinned = format!(
        "# reviewed by the serving team\n{}",
        fs::read_to_string(&pins).unwrap()
    );
    fs::write(&pins, &pinned).unwrap();
    let (code, _, err) = dflash(dir.path(), &["check", "models", "--baseline"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("entries appended to `"), "{err}");
    let written = fs::read_to_string(&pins).unwrap();
    assert!(
        written.starts_with(&pinned),
        "appended, not rewritten: {written}"
    );
    let reason = format!("baseline of {}", dflash_check::pins::today());
    assert!(written.contains(&format!("\n[[ignore]]\ncode = \"changed\"\npath = \"models/wrong/config.json\"\npointer = \"/dflash_config/mask_token_id\"\nreason = \"{reason}\"\n")), "{written}");
    // The baseline is accepted as written: every error and warning is suppressed, as the
    // baseline's.
    let (code, out, err) = dflash(dir.path(), &["check", "models"]);
    assert_eq!(code, 0, "every error and warning is accepted: {out}{err}");
    assert!(
        out.contains("\nsuppressed by [[ignore]]:\n  ")
            && out.contains(&format!(
                "\n  changed models/wrong/config.json/dflash_config/mask_token_id ({reason})\n"
            )),
        "{out}"
    );
    let (_, out, _) = dflash(dir.path(), &["check", "models", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let suppressed = v["suppressed"].as_array().unwrap();
    assert!(
        !suppressed.is_empty() && suppressed.iter().all(|s| s["baseline"] == true),
        "{out}"
    );
    // A second baseline finds nothing new to accept.
    let (code, _, err) = dflash(dir.path(), &["check", "models", "--baseline"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(fs::read_to_string(&pins).unwrap(), written);
    // The placeholder older versions wrote is still not a reason.
    let placeholder = written.replace(&reason, "TODO: why is this accepted?");
    fs::write(&pins, &placeholder).unwrap();
    let (code, _, err) = dflash(dir.path(), &["check", "models"]);
    assert_eq!(code, 2);
    assert!(err.contains("has no reason"), "{err}");
    fs::write(&pins, &written).unwrap();

    // Fix the wrong drafter: its entries are now unused, and fail the gate until pruned.
    fs::copy(
        "fixtures/incident/authority/config.json",
        dir.path().join("models/wrong/config.json"),
    )
    .unwrap();
    let (code, out, _) = dflash(dir.path(), &["check", "models"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("error[suppression-unused] ignore[")
            && out.contains("  --> dflash-check.toml:"),
        "{out}"
    );
    let (code, out, err) = dflash(dir.path(), &["check", "models", "--prune-ignores"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("stale [[ignore]] entries from `"), "{err}");
    let pruned = fs::read_to_string(&pins).unwrap();
    assert!(pruned.starts_with(&pinned), "{pruned}");
    assert!(!pruned.contains("models/wrong/config.json"), "{pruned}");
    assert!(
        pruned.contains("path = \"models/broken/config.json\""),
        "{pruned}"
    );
    let (code, out, _) = dflash(dir.path(), &["check", "models"]);
    assert_eq!(code, 0, "{out}");
}

/// Issue 32: `--prune-ignores` removed the live, reviewed entry when the stale one's header was
/// written `[[ignore]]  # old` or a multi-line reason held a line `[[ignore]]`, and left the
/// file unparsable when a stale reason had a line starting with `[`. It also turned the file's
/// mode to 0600.
#[test]
fn prune_removes_the_stale_entry_whatever_its_header() {
    let dir = tree();
    pin_all(dir.path());
    let pins = dir.path().join("dflash-check.toml");
    let live = "\n# reviewed in PR 42\n[[ignore]]\ncode = \"changed\"\npath = \"models/wrong\"\n\
pointer = \"/dflash_config/mask_token_id\"\nreason = \"\"\"\nmask measured in PR 42:\n[[ignore]]\n\"\"\"\n";
    for stale_header in ["[[ignore]]  # old", "[[ ignore ]]", "[[ignore]]"] {
        let stale = format!(
            "\n{stale_header}\ncode = \"changed\"\npath = \"models/wrong\"\npointer = \"/no_such_key\"\n\
reason = \"\"\"\n[see PR 7]\n\"\"\"\n"
        );
        let pinned = fs::read_to_string(&pins).unwrap();
        let pinned = pinned
            .split("\n# reviewed in PR 42")
            .next()
            .unwrap()
            .to_string();
        fs::write(&pins, format!("{pinned}{live}{stale}")).unwrap();
        fs::set_permissions(&pins, fs::Permissions::from_mode(0o640)).unwrap();
        let (code, out, err) = dflash(dir.path(), &["check", "models", "--prune-ignores"]);
        assert_eq!(code, 1, "{stale_header}: {out}{err}");
        assert!(
            err.contains("removed 1 stale [[ignore]] entry"),
            "{stale_header}: {err}"
        );
        let pruned = fs::read_to_string(&pins).unwrap();
        assert_eq!(pruned, format!("{pinned}{live}"), "{stale_header}");
        assert_eq!(
            fs::metadata(&pins).unwrap().permissions().mode() & 0o777,
            0o640,
            "{stale_header}: the mode changed"
        );
        // The live entry still suppresses its finding; nothing is stale.
        let (code, out, err) = dflash(dir.path(), &["check", "models", "--format", "json"]);
        assert_eq!(code, 1, "{out}{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["suppressed"].as_array().unwrap().len(), 1, "{out}");
        assert!(!out.contains("suppression-unused"), "{out}");
    }
}

/// A new pin file written by `--baseline` gets the mode of any new file (0666 minus the
/// umask), not a temp file's 0600.
#[test]
fn a_baseline_pin_file_is_not_private_to_its_writer() {
    let dir = tree();
    let out = Command::new("sh")
        .arg("-c")
        .arg("umask 022 && exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["check", "models", "--baseline"])
        .current_dir(dir.path())
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pins = dir.path().join("dflash-check.toml");
    assert_eq!(
        fs::metadata(&pins).unwrap().permissions().mode() & 0o777,
        0o644
    );
}

/// Issue 32: a path glob of 16 `*` took 23-49 s (each `*` multiplied the time), 20 no answer in
/// 60 s. Now 20 answer at once (the time is printed) and more than 32 wildcards are refused
/// with exit 2 naming the file, the entry and the field.
#[test]
fn hostile_ignore_globs_answer_at_once() {
    let dir = tree();
    pin_all(dir.path());
    let pins = dir.path().join("dflash-check.toml");
    let pinned = fs::read_to_string(&pins).unwrap();
    for stars in [20, 200] {
        let entry = format!(
            "\n[[ignore]]\ncode = \"changed\"\npath = \"models/{}Z\"\nreason = \"hostile\"\n",
            "*".repeat(stars)
        );
        fs::write(&pins, format!("{pinned}{entry}")).unwrap();
        let start = std::time::Instant::now();
        let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_dflash-check"))
            .args(["check", "models"])
            .current_dir(dir.path())
            .env("HF_HUB_OFFLINE", "1")
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        eprintln!("{stars} stars: check answered in {:?}", start.elapsed());
        let err = String::from_utf8_lossy(&out.stderr);
        if stars > 32 {
            assert_eq!(out.status.code(), Some(2), "{err}");
            assert!(
                err.contains(
                    "dflash-check.toml`: [[ignore]] entry 1 has a `path` with 200 wildcards"
                ),
                "{err}"
            );
        } else {
            // The entry covers no drafter: left alone, the gate as without it.
            assert_eq!(out.status.code(), Some(1), "{err}");
        }
    }
}

/// Issue 44: a pin's `against` was read wherever it pointed, and its values printed as
/// `only-authority` lines (in the GitHub annotations too): a credential one level above the
/// checkout, reached by `../`, by an absolute path or by a link in the repository, was shown
/// in the CI log. Now each is refused (exit 2) naming the pin and the file, with none of its
/// values; so is a credential-shaped JSON inside the repository (not a model config). A link
/// inside the repository to a config inside it is still followed.
#[test]
fn a_pin_against_a_file_outside_the_repository_is_refused_unshown() {
    let outer = tempfile::tempdir().unwrap();
    let creds = outer.path().join("creds.json");
    fs::write(&creds, r#"{"auths": {"registry": {"auth": "c2VjcmV0"}}}"#).unwrap();
    let repo = outer.path().join("repo");
    copy(
        "fixtures/incident/Qwen3.6-27B-DFlash/config.json",
        &repo.join("models/d/config.json"),
    );
    copy(
        "fixtures/incident/authority/config.json",
        &repo.join("authorities/real.json"),
    );
    fs::create_dir_all(repo.join(".git")).unwrap();
    std::os::unix::fs::symlink("../../creds.json", repo.join("authorities/link.json")).unwrap();
    std::os::unix::fs::symlink("real.json", repo.join("authorities/inside.json")).unwrap();
    fs::write(
        repo.join("authorities/creds.json"),
        fs::read(&creds).unwrap(),
    )
    .unwrap();
    let pin_to = |against: &str| {
        let text = format!("version = 2\n[drafters.\"models/d\"]\nagainst = \"{against}\"\n");
        fs::write(repo.join("dflash-check.toml"), text).unwrap();
    };
    let absolute = creds.display().to_string();
    for (against, why) in [
        ("../creds.json", "outside the repository"),
        (absolute.as_str(), "outside the repository"),
        ("authorities/link.json", "outside the repository"),
        ("authorities/creds.json", "not a model config"),
    ] {
        pin_to(against);
        for format in ["human", "github"] {
            let (code, out, err) = dflash(&repo, &["check", "models", "--format", format]);
            assert_eq!(code, 2, "{against} ({format}): {out}{err}");
            assert!(out.is_empty(), "{against}: {out}");
            assert!(
                err.contains("the pin `models/d`") && err.contains(why),
                "{err}"
            );
            for secret in ["c2VjcmV0", "registry", "auths"] {
                assert!(
                    !err.contains(secret),
                    "{against} ({format}) shows `{secret}`: {err}"
                );
            }
        }
    }
    // `pin` refuses to record such a pin, and writes nothing.
    pin_to("authorities/real.json");
    let before = fs::read(repo.join("dflash-check.toml")).unwrap();
    let (code, out, err) = dflash(&repo, &["pin", "models/d", "--against", "../creds.json"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("outside the repository") && !err.contains("c2VjcmV0"),
        "{err}"
    );
    assert_eq!(fs::read(repo.join("dflash-check.toml")).unwrap(), before);
    // A config inside the repository, named directly or through a link inside it: read.
    for against in ["authorities/real.json", "authorities/inside.json"] {
        pin_to(against);
        let (code, out, err) = dflash(&repo, &["check", "models"]);
        assert_eq!(code, 1, "{against}: {out}{err}");
        assert!(out.contains("authorities/real.json"), "{out}");
    }
}

/// Issue 44: `pin`, `check --baseline` and `check --prune-ignores` replaced a symlinked
/// `dflash-check.toml` with a regular file, silently. Now a link to a file inside the
/// repository is written through (the link kept, the message says so), and one to a file
/// outside is refused: exit 2, the link and its target unchanged.
#[test]
fn a_symlinked_pin_file_is_written_through_inside_and_refused_outside() {
    let outer = tempfile::tempdir().unwrap();
    let repo = outer.path().join("repo");
    copy(
        "fixtures/incident/Qwen3.6-27B-DFlash/config.json",
        &repo.join("models/wrong/config.json"),
    );
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::create_dir_all(repo.join("conf")).unwrap();
    let link = repo.join("dflash-check.toml");
    let is_link = |p: &Path| fs::symlink_metadata(p).unwrap().file_type().is_symlink();
    let pin = [
        "pin",
        "models/wrong",
        "--snapshot",
        "z-lab/Qwen3.6-27B-DFlash",
    ];
    // Inside: written through, each time, and said.
    fs::write(repo.join("conf/pins.toml"), "version = 2\n").unwrap();
    std::os::unix::fs::symlink("conf/pins.toml", &link).unwrap();
    let through = "through the symbolic link";
    let (code, out, err) = dflash(&repo, &pin);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("conf/pins.toml") && out.contains(through),
        "{out}"
    );
    let (code, out, err) = dflash(&repo, &["check", "models", "--baseline"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("appended to `") && err.contains(through),
        "{err}"
    );
    fs::copy(
        "fixtures/incident/authority/config.json",
        repo.join("models/wrong/config.json"),
    )
    .unwrap();
    let (code, out, err) = dflash(&repo, &["check", "models", "--prune-ignores"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("stale [[ignore]]") && err.contains(through),
        "{err}"
    );
    assert!(is_link(&link), "the link was replaced");
    let written = fs::read_to_string(repo.join("conf/pins.toml")).unwrap();
    assert!(written.contains("[drafters.\"models/wrong\"]"), "{written}");
    assert!(!written.contains("[[ignore]]"), "{written}");
    // Outside: refused, nothing written.
    fs::remove_file(&link).unwrap();
    let outside = outer.path().join("pins.toml");
    // With a stale entry, so that `--prune-ignores` has something to write.
    let written = format!(
        "{written}\n[[ignore]]\ncode = \"changed\"\npath = \"models/wrong\"\npointer = \"/x\"\nreason = \"r\"\n"
    );
    fs::write(&outside, written.as_bytes()).unwrap();
    std::os::unix::fs::symlink("../pins.toml", &link).unwrap();
    copy(
        "fixtures/incident/Qwen3.6-27B-DFlash/config.json",
        &repo.join("models/wrong/config.json"),
    );
    for args in [
        &pin[..],
        &["check", "models", "--baseline"],
        &["check", "models", "--prune-ignores"],
    ] {
        let (code, out, err) = dflash(&repo, args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(
            err.contains("is a symbolic link to") && err.contains("outside the repository"),
            "{err}"
        );
        assert!(err.contains("nothing was written"), "{err}");
        assert!(is_link(&link));
        assert_eq!(fs::read_to_string(&outside).unwrap(), written);
    }
}

/// Issue 44: a pin file of many `[[ignore]]` entries was quadratic again: every finding was
/// matched against every entry, and each entry's line counted from the top of the file. A
/// drafter with 5,000 keys its snapshot lacks, baselined (5,000 entries), then checked: the
/// check took 516 s on the code before (debug build); now about a second, as does pruning
/// them all once the keys are gone.
#[test]
fn a_baseline_of_thousands_of_findings_is_checked_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = fs::read_to_string("fixtures/incident/authority/config.json").unwrap();
    let extra: String = (0..5000).map(|i| format!("  \"k{i}\": {i},\n")).collect();
    let drafter = d.join("models/Qwen3.6-27B-DFlash/config.json");
    fs::create_dir_all(drafter.parent().unwrap()).unwrap();
    fs::write(&drafter, config.replacen("{\n", &format!("{{\n{extra}"), 1)).unwrap();
    fs::write(
        d.join("dflash-check.toml"),
        "version = 2\n[drafters.\"models/Qwen3.6-27B-DFlash\"]\nsnapshot = \"z-lab/Qwen3.6-27B-DFlash\"\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let start = std::time::Instant::now();
        let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_dflash-check"))
            .args(args)
            .current_dir(d)
            .env("HF_HUB_OFFLINE", "1")
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        eprintln!("{args:?}: {:?}", start.elapsed());
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), err)
    };
    let (code, err) = run(&["check", "models", "--baseline"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("5000 [[ignore]] entries appended"), "{err}");
    let (code, err) = run(&["check", "models"]);
    assert_eq!(code, Some(0), "5,000 findings, each suppressed: {err}");
    fs::write(&drafter, &config).unwrap();
    let (code, err) = run(&["check", "models", "--prune-ignores"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("removed 5000 stale [[ignore]] entries"),
        "{err}"
    );
    let pins = fs::read_to_string(d.join("dflash-check.toml")).unwrap();
    assert!(!pins.contains("[[ignore]]"), "{pins}");
}

/// Issue 32: `expires = "2027-02-31"` was accepted.
#[test]
fn an_impossible_expiry_date_exits_two() {
    let dir = tree();
    pin_all(dir.path());
    let pins = dir.path().join("dflash-check.toml");
    let pinned = fs::read_to_string(&pins).unwrap();
    fs::write(
        &pins,
        format!("{pinned}\n[[ignore]]\ncode = \"changed\"\npath = \"models/wrong\"\nreason = \"r\"\nexpires = \"2027-02-31\"\n"),
    )
    .unwrap();
    let (code, out, err) = dflash(dir.path(), &["check", "models"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("dflash-check.toml`: [[ignore]] entry 1 has expires `2027-02-31`"),
        "{err}"
    );
}

fn set_chat_template(target: &Path, template: &str) {
    let path = target.join("tokenizer_config.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    config["chat_template"] = serde_json::Value::String(template.into());
    fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
}

/// Luce-Org/lucebox PR 293: the target served with another chat template than the drafter was
/// distilled with. `pin` records the target directory's template digest; `check` fails with
/// pin-chat-template-changed when it changes (a `chat_template.jinja` added counts), and warns
/// that it could not verify when the target directory is gone.
#[test]
fn a_changed_chat_template_fails_check() {
    let dir = tree();
    let target = dir.path().join("targets/Qwen3.6-27B");
    let think =
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\
                 <|im_start|>assistant\n<think>\n\n</think>\n\n";
    set_chat_template(&target, think);
    let (code, out, err) = dflash(dir.path(), PIN_GOOD);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("chat template sha256"), "{out}");
    let pins = fs::read_to_string(dir.path().join("dflash-check.toml")).unwrap();
    assert!(pins.contains("version = 2"), "{pins}");
    assert!(pins.contains("target_chat_template_sha256 = \""), "{pins}");

    let (code, out, _) = dflash(dir.path(), &["check", "models/good"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("pin-chat-template"), "{out}");

    // The same template without the empty think prefill.
    set_chat_template(&target, &think.replace("<think>\n\n</think>\n\n", ""));
    let (code, out, _) = dflash(dir.path(), &["check", "models/good"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("error[pin-chat-template-changed] ")
            && out.contains("  --> models/good/config.json:1:1"),
        "{out}"
    );
    assert!(out.contains("Luce-Org/lucebox PR 293"), "{out}");

    // Back to the pinned template: clean; a chat_template.jinja beside it changes it again.
    set_chat_template(&target, think);
    assert_eq!(dflash(dir.path(), &["check", "models/good"]).0, 0);
    fs::write(target.join("chat_template.jinja"), "{{ messages }}").unwrap();
    let (code, out, _) = dflash(dir.path(), &["check", "models/good"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error[pin-chat-template-changed]"), "{out}");

    // No target files where check runs: a warning that nothing was verified, not silence.
    fs::remove_dir_all(&target).unwrap();
    let (code, out, _) = dflash(dir.path(), &["check", "models/good", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let codes: Vec<(&str, &str)> = report["drafters"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["severity"].as_str().unwrap()))
        .collect();
    assert!(
        codes.contains(&("pin-digest-unverified", "warning")),
        "{report:#}"
    );
    assert!(!codes.iter().any(|c| c.0 == "pin-chat-template-changed"));
    // (The pinned target itself is gone too, which check reports as an error of its own.)
    assert!(
        codes.contains(&("authority-unavailable", "error")),
        "{report:#}"
    );
    assert_eq!(code, 1);
}

/// A version-1 pin file (written before the digests) still checks as before, and `pin` writes
/// it back as version 2 keeping the other pins.
#[test]
fn a_version_one_pin_file_still_checks() {
    let dir = tree();
    fs::write(
        dir.path().join("dflash-check.toml"),
        "version = 1\n\n[drafters.\"models/good\"]\nsnapshot = \"z-lab/Qwen3.6-27B-DFlash\"\n\
         target = \"targets/Qwen3.6-27B\"\n\n[drafters.\"models/wrong\"]\nagainst = \"authorities/qwen3.6-27b.json\"\n",
    )
    .unwrap();
    let (code, out, err) = dflash(dir.path(), &["check", "models/good", "models/wrong"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("  drafter  models/good/config.json  [dflash] against builtin z-lab/Qwen3.6-27B-DFlash (pin)  (clean)"),
        "{out}"
    );
    assert!(out.contains("models/wrong/config.json"), "{out}");
    assert!(!out.contains("pin-digest"), "{out}");
    set_chat_template(&dir.path().join("targets/Qwen3.6-27B"), "{{ messages }}");
    let (code, out, err) = dflash(dir.path(), PIN_GOOD);
    assert_eq!(code, 0, "{out}{err}");
    let pins = fs::read_to_string(dir.path().join("dflash-check.toml")).unwrap();
    assert!(pins.contains("version = 2"), "{pins}");
    assert!(pins.contains("[drafters.\"models/wrong\"]"), "{pins}");
    assert!(pins.contains("target_chat_template_sha256"), "{pins}");
}

/// `pin` edits dflash-check.toml in place: the reviewers' comments, the `[[ignore]]` entries
/// and the other pins stay as written; re-pinning a drafter keeps the comment above its table.
#[test]
fn pin_edits_the_pin_file_in_place() {
    let dir = tree();
    pin_all(dir.path());
    let pins = dir.path().join("dflash-check.toml");
    let written = fs::read_to_string(&pins).unwrap();
    let annotated = written.replace(
        "[drafters.\"models/good\"]",
        "# good: reviewed by the serving team on 2026-12-01\n[drafters.\"models/good\"]",
    ) + "\n# accepted: the metadata field is the trainer's\n[[ignore]]\ncode = \"changed\"\npath = \"models/wrong/config.json\"\npointer = \"/transformers_version\"\nreason = \"trainer's metadata\"\n";
    fs::write(&pins, &annotated).unwrap();
    // A new drafter's pin is added; everything else is byte for byte what it was.
    let (code, out, err) = dflash(
        dir.path(),
        &[
            "pin",
            "models/Qwen3-8B-DFlash-b16",
            "--snapshot",
            "z-lab/Qwen3-8B-DFlash-b16",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let after = fs::read_to_string(&pins).unwrap();
    let start = after
        .find("[drafters.\"models/Qwen3-8B-DFlash-b16\"]")
        .expect(&after);
    let end = start + after[start..].find("\n\n").expect(&after) + 2;
    let without_new = format!("{}{}", &after[..start], &after[end..]);
    assert_eq!(
        without_new, annotated,
        "only the new table was added:\n{after}"
    );
    // Re-pinning a drafter keeps the comment above its table and the rest of the file.
    let (code, out, err) = dflash(
        dir.path(),
        &[
            "pin",
            "models/good",
            "--snapshot",
            "z-lab/Qwen3.6-27B-DFlash",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let again = fs::read_to_string(&pins).unwrap();
    assert!(
        again.contains(
            "# good: reviewed by the serving team on 2026-12-01\n[drafters.\"models/good\"]"
        ),
        "{again}"
    );
    assert!(
        again.contains("# accepted: the metadata field is the trainer's\n[[ignore]]"),
        "{again}"
    );
    assert!(
        again.contains("[drafters.\"models/Qwen3-8B-DFlash-b16\"]"),
        "{again}"
    );
}
