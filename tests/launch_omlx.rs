//! oMLX lines (issue 43), end to end: `omlx serve --model-dir DIR --base-path BASE` names its
//! drafters in `BASE/model_settings.json`, which is read as the line's options file; one line is
//! a deployment per model it enables. The binary before this engine row (988a43b) refused every
//! oMLX line as an unknown engine (exit 2), so the incident served through oMLX went unjudged.
//! The trees are built at test time from the project's own fixtures (the incident drafter, the
//! Qwen3.6-27B target config) in a temporary directory.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::codes;
use serde_json::{json, Value};

const TARGET: &str = "fixtures/targets/Qwen3.6-27B/config.json";
const INCIDENT: &str = "fixtures/incident/Qwen3.6-27B-DFlash/config.json";
const FALLBACK: &str = "omlx-draft-fallback";

/// A temporary tree: `models/ID/config.json` per target id, drafters beside it, `base/`.
struct Tree {
    root: PathBuf,
}

impl Tree {
    fn new(name: &str) -> Tree {
        let root = std::env::temp_dir().join(format!("dflash-omlx-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("base")).unwrap();
        Tree { root }
    }

    fn target(&self, id: &str) {
        let dir = self.root.join("models").join(id);
        fs::create_dir_all(&dir).unwrap();
        fs::copy(TARGET, dir.join("config.json")).unwrap();
    }

    /// A drafter directory holding the incident config, edited by `edit`.
    fn drafter(&self, name: &str, edit: impl Fn(&mut serde_json::Map<String, Value>)) -> String {
        let dir = self.root.join(name);
        fs::create_dir_all(&dir).unwrap();
        let mut config: Value =
            serde_json::from_str(&fs::read_to_string(INCIDENT).unwrap()).unwrap();
        edit(config.as_object_mut().unwrap());
        fs::write(
            dir.join("config.json"),
            serde_json::to_string_pretty(&config).unwrap(),
        )
        .unwrap();
        dir.display().to_string()
    }

    fn settings(&self, models: Value) {
        let text = json!({"version": 1, "models": models}).to_string();
        fs::write(self.root.join("base/model_settings.json"), text).unwrap();
    }

    fn line(&self) -> Vec<String> {
        let p = |s: &str| self.root.join(s).display().to_string();
        [
            "omlx",
            "serve",
            "--model-dir",
            &p("models"),
            "--base-path",
            &p("base"),
        ]
        .map(str::to_string)
        .to_vec()
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

/// `dflash-check SUB --format json ARGS`: exit code, report (or stderr when there is none).
fn run(sub: &str, args: &[String]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .arg(sub)
        .args(["--format", "json"])
        .args(args)
        .env("HF_HUB_OFFLINE", "1")
        .env("DFLASH_CHECK_OFFLINE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        report,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn launch(tree: &Tree) -> (i32, Value, String) {
    let mut args = vec!["--".to_string()];
    args.extend(tree.line());
    run("launch", &args)
}

fn has(report: &Value, code: &str, severity: &str) -> bool {
    codes(report)
        .iter()
        .any(|(c, s)| c == code && s == severity)
}

#[test]
fn the_incident_drafter_switched_on_in_omlx_settings_is_caught() {
    let tree = Tree::new("incident");
    tree.target("Qwen3.6-27B");
    let draft = tree.drafter("draft", |_| {});
    tree.settings(json!({"Qwen3.6-27B": {"dflash_enabled": true, "dflash_draft_model": draft}}));
    let (code, report, err) = launch(&tree);
    assert_eq!(code, 1, "{report} {err}");
    let errors: Vec<_> = codes(&report)
        .into_iter()
        .filter(|(_, s)| s == "error")
        .collect();
    assert!(errors.len() >= 5, "the incident's wrong fields: {errors:?}");
    // The complete drafter loads in dflash-mlx: no fallback.
    assert!(!has(&report, FALLBACK, "warning"), "{report}");
}

#[test]
fn a_drafter_dflash_mlx_cannot_build_is_a_fallback_warning() {
    let tree = Tree::new("fallback");
    tree.target("Qwen3.6-27B");
    // Written with transformers 5: the rope base under rope_parameters, none at the top level
    // (omlx#2317, omlx#2557).
    let draft = tree.drafter("draft", |c| {
        let theta = c.remove("rope_theta").unwrap();
        c.insert(
            "rope_parameters".into(),
            json!({"rope_type": "default", "rope_theta": theta}),
        );
    });
    tree.settings(json!({"Qwen3.6-27B": {"dflash_enabled": true, "dflash_draft_model": draft}}));
    let (_, report, err) = launch(&tree);
    assert!(has(&report, FALLBACK, "warning"), "{report} {err}");
    let text = report.to_string();
    assert!(
        text.contains("rope_theta") && text.contains("rope_parameters"),
        "{text}"
    );
}

#[test]
fn check_judges_every_model_the_settings_enable() {
    let tree = Tree::new("check");
    tree.target("Qwen3.6-27B");
    tree.target("Qwen3.6-27B-copy");
    let draft = tree.drafter("draft", |_| {});
    // A bare name is neither a path nor a repository id: dflash-mlx asks the Hub for it and oMLX
    // falls back (omlx#3019). A model switched off is not a deployment.
    tree.settings(json!({
        "Qwen3.6-27B": {"dflash_enabled": true, "dflash_draft_model": draft},
        "Qwen3.6-27B-copy": {"dflash_enabled": true, "dflash_draft_model": "Qwen3.6-27B-DFlash"},
        "plain": {"dflash_enabled": false, "dflash_draft_model": draft}
    }));
    let script = tree.path("serve.sh");
    fs::write(&script, format!("#!/bin/sh\n{}\n", tree.line().join(" "))).unwrap();
    let (code, report, err) = run("check", &["--offline".into(), script.display().to_string()]);
    assert_eq!(code, 1, "{report} {err}");
    assert!(has(&report, FALLBACK, "warning"), "the bare name: {report}");
    let text = report.to_string();
    assert!(
        text.contains("Qwen3.6-27B-copy"),
        "the second deployment is judged: {text}"
    );
    assert!(
        !text.contains("/plain"),
        "a model switched off is no deployment: {text}"
    );
}

#[test]
fn settings_of_another_shape_are_bad_input_named_by_path() {
    let tree = Tree::new("bad");
    tree.settings(json!({"Qwen3.6-27B": {"dflash_enabled": "yes"}}));
    let before = fs::read(tree.path("base/model_settings.json")).unwrap();
    let (code, _, err) = launch(&tree);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("model_settings.json") && err.contains("/models/Qwen3.6-27B/dflash_enabled"),
        "{err}"
    );
    assert_eq!(
        fs::read(tree.path("base/model_settings.json")).unwrap(),
        before
    );
    // A file that is there but is not the settings' shape, or not text, is bad input too (a
    // file that is not there only leaves the line without drafters).
    for bytes in [&b"[1, 2]"[..], &b"\xff\xfe{}"[..]] {
        fs::write(tree.path("base/model_settings.json"), bytes).unwrap();
        let (code, _, err) = launch(&tree);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("model_settings.json"), "{err}");
        assert!(!err.contains("configures no speculative decoding"), "{err}");
    }
}

#[test]
fn a_line_without_its_settings_file_says_where_omlx_reads_drafters() {
    let tree = Tree::new("none");
    fs::remove_dir_all(tree.path("base")).unwrap();
    let (code, _, err) = launch(&tree);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("model_settings.json") && err.contains("--base-path"),
        "{err}"
    );
    assert!(
        err.contains("(not read: "),
        "the file it looked for and why: {err}"
    );
    assert!(Path::new(INCIDENT).exists());
}

/// Copies a checkpoint directory (config and safetensors) under the tree's models.
fn copy_checkpoint(from: &str, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn mtp_enabled_on_a_checkpoint_saved_without_its_head_is_a_warning() {
    // omlx#1147: an MLX quant that declares its MTP layer and holds none of it. oMLX attaches no
    // MTP module then (`_checkpoint_has_mtp_weights`): served, without MTP.
    let tree = Tree::new("mtp");
    copy_checkpoint(
        "tests/launch/mlx/qwen3.5-mlx-mtp-declared",
        &tree.path("models/q35"),
    );
    tree.settings(json!({"q35": {"mtp_enabled": true}}));
    let (code, report, err) = launch(&tree);
    assert_eq!(code, 0, "{report} {err}");
    assert!(has(&report, "weights-mtp-missing", "warning"), "{report}");
    // The same checkpoint with no engine named is the error vLLM gives.
    let (_, plain, _) = run("weights", &[tree.path("models/q35").display().to_string()]);
    assert!(has(&plain, "weights-mtp-missing", "error"), "{plain}");
}
