//! The one drafter pipeline (issue 29): every command reads a drafter's target once, and lists
//! the weights rules it could not run. Library calls count the resolver's target resolutions;
//! the binary shows the skipped weights rules in `lint`, `check` and `doctor`.

mod common;

use std::path::{Path, PathBuf};

use dflash_check::hub::{HubFlags, ProgressSink, SettingsCell};
use dflash_check::input::{Resolver, TargetSpec};
use dflash_check::{check, doctor, launch, pipeline, rules};

const INCIDENT: &str = "fixtures/incident/Qwen3.6-27B-DFlash";
const TARGET: &str = "fixtures/targets/Qwen3.6-27B";

/// A resolver whose Hub is never needed: every input here is local (an empty environment, so
/// nothing of the machine's Hub settings leaks in).
fn resolver() -> Resolver {
    Resolver::new(SettingsCell::with_env(
        HubFlags::default(),
        Box::new(|_| None),
        ProgressSink::default(),
    ))
}

/// The incident's drafter served behind its target (a local directory), parsed.
fn incident_launch() -> (launch::Launch, Vec<String>) {
    let command: Vec<String> = [
        "vllm",
        "serve",
        TARGET,
        "--speculative-config",
        r#"{"method": "dflash", "model": "fixtures/incident/Qwen3.6-27B-DFlash", "num_speculative_tokens": 15}"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    launch::parse_input(&command, None).unwrap()
}

/// `check` over a tree of N drafters (and a plain model, which is no drafter) resolves N targets:
/// one per drafter.
#[test]
fn check_resolves_one_target_per_drafter() {
    let tmp = tempfile::tempdir().unwrap();
    let config = std::fs::read(Path::new(INCIDENT).join("config.json")).unwrap();
    for name in ["a", "b/nested", "c"] {
        let dir = tmp.path().join("models").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), &config).unwrap();
    }
    let target = tmp.path().join("models/llama");
    std::fs::create_dir_all(&target).unwrap();
    std::fs::copy(
        Path::new(TARGET).join("config.json"),
        target.join("config.json"),
    )
    .unwrap();
    let inputs = resolver();
    let options = check::CheckOptions {
        hub: Some(inputs.clone()),
        root: tmp.path().to_path_buf(),
        ..check::CheckOptions::default()
    };
    let report = check::run(&[tmp.path().to_path_buf()], &options).unwrap();
    assert_eq!(report.drafters.len(), 3, "{report:?}");
    assert_eq!(report.skipped, vec!["models/llama/config.json".to_string()]);
    assert_eq!(inputs.target_resolutions(), 3);
}

/// `doctor --drafter DIR --target DIR`: the target was read for lint, again for the comparison
/// (and a third time for the weights when lint had not run); now once.
#[test]
fn doctor_resolves_the_target_once() {
    let inputs = resolver();
    let doctor_inputs = doctor::DoctorInputs {
        drafter_dir: Some(PathBuf::from(INCIDENT)),
        target: Some(TARGET.into()),
        hub: Some(inputs.clone()),
        ..doctor::DoctorInputs::default()
    };
    let report = doctor::run(&doctor_inputs, None, None, &mut |_| {}).unwrap();
    assert!(report.fails());
    assert_eq!(inputs.target_resolutions(), 1);
}

/// `doctor` given the launch command: launch read the target for lint, doctor again for the
/// comparison; now the launch's pipeline run is the doctor's.
#[test]
fn doctor_with_a_launch_resolves_the_target_once() {
    let inputs = resolver();
    let (parsed, notes) = incident_launch();
    let doctor_inputs = doctor::DoctorInputs {
        launch: Some((parsed, notes, None)),
        hub: Some(inputs.clone()),
        ..doctor::DoctorInputs::default()
    };
    let report = doctor::run(&doctor_inputs, None, None, &mut |_| {}).unwrap();
    assert!(report.fails());
    assert_eq!(
        report.located.authority.as_deref(),
        Some("built-in snapshot of z-lab/Qwen3.6-27B-DFlash (not the live Hub)")
    );
    // The comparison's findings come once, from the launch's run.
    let mask: Vec<_> = report
        .diagnostics()
        .into_iter()
        .filter(|d| d.path == "dflash_config.mask_token_id")
        .collect();
    assert_eq!(mask.len(), 1, "{mask:?}");
    assert_eq!(inputs.target_resolutions(), 1);
}

/// `launch` and `lint` read the target once too.
#[test]
fn launch_and_lint_resolve_the_target_once() {
    let inputs = resolver();
    let (parsed, notes) = incident_launch();
    let options = launch::CheckOptions {
        inputs: Some(inputs.clone()),
        ..launch::CheckOptions::default()
    };
    let report = launch::check(parsed, notes, &options).unwrap();
    assert_eq!(report.summary.errors, 5, "{:?}", report.diagnostics);
    assert_eq!(inputs.target_resolutions(), 1);

    let inputs = resolver();
    let spec = TargetSpec {
        target: Some(TARGET.into()),
        ..TargetSpec::default()
    };
    pipeline::lint(
        &inputs,
        INCIDENT,
        &spec,
        rules::LintOptions::default(),
        true,
    )
    .unwrap();
    assert_eq!(inputs.target_resolutions(), 1);
}

/// An EAGLE-3 drafter whose config names no vocabulary size, with a `d2t` in its weights: the
/// vocabulary rules of `weights` cannot run, and `lint`, `check` and `doctor` say which (they
/// dropped the list before).
#[test]
fn the_weights_skipped_list_is_in_lint_check_and_doctor() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("drafter");
    std::fs::create_dir_all(&dir).unwrap();
    let mut config: serde_json::Value = serde_json::from_slice(
        &std::fs::read("tests/launch/models/eagle3-qwen3-8b/config.json").unwrap(),
    )
    .unwrap();
    let map = config.as_object_mut().unwrap();
    map.remove("vocab_size");
    map.remove("draft_vocab_size");
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let header = br#"{"d2t":{"dtype":"I64","shape":[4],"data_offsets":[0,32]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.extend_from_slice(&[0; 32]);
    std::fs::write(dir.join("model.safetensors"), bytes).unwrap();
    let drafter = dir.display().to_string();
    let line =
        "weights: skipped for want of the draft vocabulary size (the config's draft_vocab_size or \
                vocab_size): weights-d2t-length";

    let (_, out, _) = common::run(&["lint", &drafter]);
    assert!(out.contains(line), "{out}");
    let (_, out, _) = common::run(&["lint", &drafter, "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        json["weights_skipped"][1],
        serde_json::json!({"code": "weights-d2t-length", "needs": ["draft_vocab"]}),
        "{out}"
    );

    let (_, out, _) = common::run(&["check", &tmp.path().display().to_string()]);
    assert!(out.contains(line), "{out}");
    let (_, out, _) = common::run(&[
        "check",
        &tmp.path().display().to_string(),
        "--format",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let codes: Vec<&str> = json["drafters"][0]["weights_skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        [
            "weights-d2t-missing",
            "weights-d2t-length",
            "weights-t2d-length",
            "weights-d2t-values",
            "weights-d2t-duplicates",
            "weights-t2d-disagrees"
        ]
    );

    let (_, out, _) = common::run(&["doctor", "--drafter", &drafter, "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let not_checked: Vec<&str> = json["not_checked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(not_checked.contains(&line), "{not_checked:?}");
}

/// With no target to pick one of several published configs, `doctor` keeps its own wording of
/// `authority-ambiguous` (the flags that pick the authority) and its file, through the pipeline.
#[test]
fn doctor_names_the_flags_that_pick_the_authority() {
    let doctor_inputs = doctor::DoctorInputs {
        drafter_dir: Some(PathBuf::from(INCIDENT)),
        hub: Some(resolver()),
        ..doctor::DoctorInputs::default()
    };
    let report = doctor::run(&doctor_inputs, None, None, &mut |_| {}).unwrap();
    let ambiguous: Vec<_> = report
        .diagnostics()
        .into_iter()
        .filter(|d| d.code.as_str() == "authority-ambiguous")
        .collect();
    assert_eq!(ambiguous.len(), 1, "{ambiguous:?}");
    assert!(
        ambiguous[0]
            .message
            .contains("pick its authority: --target"),
        "{}",
        ambiguous[0].message
    );
    assert_eq!(
        ambiguous[0].file.as_deref(),
        Some("fixtures/incident/Qwen3.6-27B-DFlash/config.json")
    );
}
