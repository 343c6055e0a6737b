//! `dflash-check doctor` end to end: the incident as it happened. A vLLM server (its /metrics
//! rendered by `prometheus_client`, its /v1/models naming the target) serving acceptance 1.12 of
//! 16 with the hand-guessed config in an ordinary folder; the launch command that served it; the
//! drafter's authority and the target on a real Hub-compatible server (olah). `doctor` must name
//! the wrong fields with decoded tokens and print the `fix` against z-lab/Qwen3.6-27B-DFlash;
//! after that fix a healthy server passes. A cliff, and SGLang (whose server names its drafter),
//! too.

mod support;

use std::path::Path;
use std::process::Command;

use support::metrics::MetricsServer;
use support::olah::{enabled, IncidentRepos, Olah};

const DRAFTER: &str = IncidentRepos::DRAFTER;
const TARGET: &str = IncidentRepos::TARGET;

fn doctor(args: &[&str], cache: &Path) -> (i32, String, String) {
    doctor_at(args, cache, None)
}

/// `doctor` with the Hub at `endpoint` (`HF_ENDPOINT`), or the default when `None`.
fn doctor_at(args: &[&str], cache: &Path, endpoint: Option<&str>) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dflash-check"));
    command
        .arg("doctor")
        .args(args)
        .env("HF_HUB_CACHE", cache)
        .env_remove("HF_ENDPOINT")
        .env_remove("HF_HUB_OFFLINE")
        .env_remove("HF_TOKEN")
        .env("NO_COLOR", "1");
    if let Some(endpoint) = endpoint {
        command.env("HF_ENDPOINT", endpoint);
    }
    let out = command.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The vLLM command that served the drafter in `dir`, as one argument list after `--`.
fn vllm_command(dir: &str, env: &[&str]) -> Vec<String> {
    let mut words: Vec<String> = env.iter().map(|e| e.to_string()).collect();
    words.extend(
        [
            "vllm",
            "serve",
            TARGET,
            "--speculative-config",
            &format!(r#"{{"method": "dflash", "model": "{dir}", "num_speculative_tokens": 15}}"#),
        ]
        .map(str::to_string),
    );
    words
}

#[test]
fn the_incident_from_symptom_to_fix() {
    if !enabled() {
        return;
    }
    let Some(collapse) = MetricsServer::start("vllm-collapse", &[]) else {
        return;
    };
    let repos = IncidentRepos::read();
    let olah = Olah::start(&repos.specs());
    let sha = olah.commits(DRAFTER)[0].clone();
    let work = tempfile::tempdir().unwrap();
    let cache = work.path().join("cache");
    let dir = work.path().join("models").join("my-drafter");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        "fixtures/incident/Qwen3.6-27B-DFlash/config.json",
        dir.join("config.json"),
    )
    .unwrap();
    let dir_s = dir.to_str().unwrap().to_string();
    let url = collapse.url();
    let command = vllm_command(&dir_s, &[]);
    let mut args: Vec<&str> = vec!["--metrics", &url, "--window", "1", "--endpoint", &olah.url];
    args.push("--");
    args.extend(command.iter().map(String::as_str));
    let (code, out, err) = doctor(&args, &cache);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("acceptance length 1.12 of 16"), "{out}");
    assert!(out.contains("collapse from the first position"), "{out}");
    assert!(
        out.contains(&format!("target     {TARGET}  (from the launch command)")),
        "{out}"
    );
    assert!(out.contains(&format!("{DRAFTER} at {sha}")), "{out}");
    // The causes that explain a first-position collapse come first, with decoded tokens.
    let mask = out
        .find("1. mask token id — explains the symptom")
        .expect(&out);
    let layers = out
        .find("2. target layer ids — explains the symptom")
        .expect(&out);
    assert!(mask < layers);
    assert!(out.contains("248064 <|repo_name|>"), "{out}");
    assert!(out.contains("248070 <|audio_start|>"), "{out}");
    assert!(out.contains("sliding-window layers"), "{out}");
    let fix = format!("dflash-check fix {dir_s} --from-hub {DRAFTER}@{sha}");
    assert!(out.contains(&format!("repair: {fix}")), "{out}");
    assert!(out.contains("restart the server"), "{out}");
    // JSON carries the same ranking.
    let mut json_args = args.clone();
    json_args.splice(0..0, ["--format", "json"]);
    let (code, json, _) = doctor(&json_args, &cache);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["symptom"], "first_position_collapse");
    assert_eq!(v["causes"][0]["kind"], "mask_token");
    // The engine the server's metrics came from, which the lint ran for.
    assert_eq!(v["assumed"]["engine"], "vllm");

    // The printed repair, run as printed.
    let fixed = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["fix", &dir_s, "--from-hub", &format!("{DRAFTER}@{sha}")])
        .args(["--endpoint", &olah.url])
        .env("HF_HUB_CACHE", &cache)
        .output()
        .unwrap();
    assert_eq!(
        fixed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&fixed.stderr)
    );

    // After the fix (and the runner the mixed layers need), a healthy server: nothing wrong.
    drop(collapse);
    let healthy = MetricsServer::start("vllm-healthy", &[]).unwrap();
    let url = healthy.url();
    let command = vllm_command(&dir_s, &["VLLM_USE_V2_MODEL_RUNNER=1"]);
    let mut args: Vec<&str> = vec!["--metrics", &url, "--window", "1", "--endpoint", &olah.url];
    args.push("--");
    args.extend(command.iter().map(String::as_str));
    let (code, out, err) = doctor(&args, &cache);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("acceptance is healthy"), "{out}");
    assert!(out.contains("No cause found"), "{out}");
    drop(healthy);

    // A cliff with the fixed config but with the V1 runner forced: the runner is the cause.
    // (Unset, vLLM 0.26 and later force the V2 runner for mixed layers: issue 30.)
    let cliff = MetricsServer::start("vllm-cliff", &[]).unwrap();
    let url = cliff.url();
    let command = vllm_command(&dir_s, &["VLLM_USE_V2_MODEL_RUNNER=0"]);
    let mut args: Vec<&str> = vec!["--metrics", &url, "--window", "1", "--endpoint", &olah.url];
    args.push("--");
    args.extend(command.iter().map(String::as_str));
    let (code, out, err) = doctor(&args, &cache);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("a cliff"), "{out}");
    assert!(
        out.contains("1. sliding-window layers — explains the symptom"),
        "{out}"
    );
    assert!(out.contains("VLLM_USE_V2_MODEL_RUNNER=1"), "{out}");
}

/// SGLang names its drafter: the URL alone is enough. vLLM does not: without the launch command
/// or --drafter, doctor exits 2 and says what to pass.
#[test]
fn sglang_names_its_drafter_vllm_needs_the_command() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("srv").join("drafter");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        "fixtures/incident/Qwen3.6-27B-DFlash/config.json",
        dir.join("config.json"),
    )
    .unwrap();
    let Some(sglang) = MetricsServer::start("sglang", &["--drafter", dir.to_str().unwrap()]) else {
        return;
    };
    let url = sglang.url();
    let cache = work.path().join("cache");
    let (code, out, err) = doctor(&["--metrics", &url, "--window", "1", "--offline"], &cache);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("(from the server's arguments (SGLang /get_server_info))"),
        "{out}"
    );
    assert!(out.contains("mask token id"), "{out}");
    // Offline, the authority is the built-in snapshot the served target picks.
    assert!(
        out.contains("built-in snapshot of z-lab/Qwen3.6-27B-DFlash"),
        "{out}"
    );
    drop(sglang);

    let vllm = MetricsServer::start("vllm-collapse", &[]).unwrap();
    let url = vllm.url();
    let (code, out, err) = doctor(&["--metrics", &url, "--window", "1", "--offline"], &cache);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("names the served target (Qwen/Qwen3.6-27B) but not the drafter"),
        "{err}"
    );
    assert!(err.contains("--drafter DIR"), "{err}");
}

/// Without a server, the files alone: causes ranked by severity, the fix line, exit 1; a clean
/// drafter exits 0.
#[test]
fn doctor_on_files_alone() {
    let cache = tempfile::tempdir().unwrap();
    let (code, out, err) = doctor(
        &[
            "--drafter",
            "fixtures/incident/Qwen3.6-27B-DFlash",
            "--target",
            "fixtures/targets/Qwen3.6-27B",
            "--offline",
        ],
        cache.path(),
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("not measured"), "{out}");
    assert!(out.contains(
        "repair: dflash-check fix fixtures/incident/Qwen3.6-27B-DFlash --snapshot z-lab/Qwen3.6-27B-DFlash"
    ), "{out}");
    assert!(out.lines().count() < 40, "one screen: {out}");
    let (code, out, err) = doctor(
        &[
            "--drafter",
            "fixtures/incident/authority",
            "--target",
            "fixtures/targets/Qwen3.6-27B",
            "--offline",
        ],
        cache.path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("No cause found"), "{out}");
    let (code, _, err) = doctor(&["--offline"], cache.path());
    assert_eq!(code, 2);
    assert!(err.contains("doctor needs something to look at"), "{err}");
}

/// Healthy-shaped acceptance that does not pay: a gradual curve of length 1.42 with K = 15
/// drafted tokens per step by an EAGLE-style head (one forward per token) is below its
/// break-even point; the cause is K itself, and the repair is to draft fewer tokens.
#[test]
fn healthy_shape_but_no_speed_up_is_break_even() {
    let Some(slow) = MetricsServer::start("vllm-short", &[]) else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let url = slow.url();
    let spec = r#"{"method": "eagle3", "model": "fixtures/incident/authority", "num_speculative_tokens": 15}"#;
    let (code, out, err) = doctor(
        &[
            "--metrics",
            &url,
            "--window",
            "1",
            "--offline",
            "--",
            "vllm",
            "serve",
            TARGET,
            "--speculative-config",
            spec,
        ],
        cache.path(),
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("acceptance length 1.42"), "{out}");
    assert!(
        out.contains("acceptance below what pays for drafting"),
        "{out}"
    );
    assert!(
        out.contains("1. speculation does not pay at this K — explains the symptom"),
        "{out}"
    );
    assert!(out.contains("break-even"), "{out}");
    assert!(out.contains("lower num_speculative_tokens"), "{out}");
}

/// A Hub that cannot be reached is said, not silently replaced: doctor compares with the
/// built-in snapshot and lists the failed fresh read among what it did not check.
#[test]
fn an_unreachable_hub_is_listed_not_hidden() {
    let cache = tempfile::tempdir().unwrap();
    // Port 9 (discard) on loopback: nothing listens there, the connection is refused.
    let (code, stdout, _) = doctor_at(
        &[
            "--drafter",
            "fixtures/incident/authority",
            "--target",
            "fixtures/targets/Qwen3.6-27B",
        ],
        cache.path(),
        Some("http://127.0.0.1:9"),
    );
    assert_eq!(code, 0, "{stdout}");
    // The conclusion comes first: the human report cuts a "Not checked" line at 150
    // characters (a newcomer offline read only "the authority was not read from the Hub").
    assert!(
        stdout.contains(
            "Not checked: diff: compared with the built-in snapshot, not the live Hub, which was \
             not read (cannot reach http://127.0.0.1:9"
        ),
        "{stdout}"
    );
}

/// One value parser for `acceptance` and `doctor`: a threshold of NaN or 0 would pass a
/// collapsed server, a cost ratio of 0 or a window of NaN means nothing; each is a usage error
/// (exit 2) before anything is read (issue 32, item 7).
#[test]
fn doctor_refuses_the_values_acceptance_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    for (flag, value) in [
        ("--min-acceptance-length", "NaN"),
        ("--min-acceptance-length", "0"),
        ("--min-acceptance-length", "inf"),
        ("--draft-cost-ratio", "0"),
        ("--window", "NaN"),
        ("--server-timeout", "0"),
    ] {
        for command in ["doctor", "acceptance"] {
            let mut args = vec![command, flag, value];
            if command == "acceptance" {
                args.push("http://127.0.0.1:9/metrics");
            } else {
                args.extend(["--drafter", "fixtures/incident/Qwen3.6-27B-DFlash"]);
            }
            if command == "acceptance" && flag == "--server-timeout" {
                continue; // acceptance's is --timeout, with the same parser
            }
            let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
                .args(&args)
                .env("HF_HOME", tmp.path())
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains(&format!("invalid value '{value}' for '{flag}")),
                "{args:?}: {err}"
            );
        }
    }
}

/// A cause is ruled out only by a check that ran with the inputs it needs: with the drafter's
/// files and no authority (the incident fits two published configs), its wrong `layer_types`
/// cannot be told, so sliding-window layers are "not ruled out", never "Ruled out" (issue 32).
#[test]
fn causes_are_ruled_out_only_by_checks_that_ran() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args([
            "doctor",
            "--drafter",
            "fixtures/incident/Qwen3.6-27B-DFlash",
        ])
        .env("HF_HOME", tmp.path())
        .env("HF_HUB_OFFLINE", "1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let ruled_out = text
        .lines()
        .find(|l| l.starts_with("Ruled out:"))
        .unwrap_or("");
    assert!(!ruled_out.contains("sliding-window"), "{text}");
    assert!(
        text.contains("Not checked: sliding-window layers: not ruled out, no authority"),
        "{text}"
    );
    // With the target, the authority is known and the comparison finds the wrong layers.
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args([
            "doctor",
            "--drafter",
            "fixtures/incident/Qwen3.6-27B-DFlash",
            "--target",
            "fixtures/targets/Qwen3.6-27B",
        ])
        .env("HF_HOME", tmp.path())
        .env("HF_HUB_OFFLINE", "1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("not ruled out, no authority"), "{text}");
}

/// A line that serves the target's own MTP head (vLLM `method: mtp`, no drafter): collapsed
/// acceptance is the head's, and the next steps are the target's weights and lint, not a
/// drafter's config.
#[test]
fn a_collapsed_mtp_head_points_at_the_target() {
    let Some(server) = MetricsServer::start("vllm-collapse", &[]) else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let url = server.url();
    let spec = r#"{"method": "mtp", "num_speculative_tokens": 3}"#;
    let (code, out, err) = doctor(
        &[
            "--metrics",
            &url,
            "--window",
            "1",
            "--offline",
            "--",
            "vllm",
            "serve",
            TARGET,
            "--speculative-config",
            spec,
        ],
        cache.path(),
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("the MTP head's first guess"), "{out}");
    assert!(!out.contains("the drafter's first guess"), "{out}");
    assert!(
        out.contains("the MTP head inside Qwen/Qwen3.6-27B"),
        "{out}"
    );
    // Offline, the target's weights could not be read: the head's first cause is not ruled out.
    assert!(
        out.contains("Not checked: weights: not ruled out, the target's weights were not read"),
        "{out}"
    );
    assert!(!out.contains("mask token id: not ruled out"), "{out}");
}
