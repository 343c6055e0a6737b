//! `acceptance` and `doctor` against the drafter's own `speculation_profile.json`, with the
//! metrics server the acceptance tests run (tests/acceptance/metrics_server.py): the threshold
//! becomes the profile's acceptance length × (1 − --profile-tolerance), the positions below the
//! profile are named on vLLM (per-position counters) and the mean is compared on SGLang; a
//! stub or a missing profile falls back to the break-even point and says so; a broken profile
//! is bad input before any request. Profiles: tests/acceptance/profiles (SOURCE.txt).

mod support;

use std::process::Command;

use serde_json::Value;
use support::metrics::MetricsServer;

const PROFILES: &str = "tests/acceptance/profiles";

/// `dflash-check acceptance URL --window 0.2 --format json ARGS`: (exit code, report, stderr).
fn acceptance(url: &str, args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["acceptance", url, "--window", "0.2", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        report,
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn has(report: &Value, code: &str, severity: &str) -> bool {
    report["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|d| d["code"] == code && d["severity"] == severity)
}

fn drafter(name: &str) -> String {
    format!("{PROFILES}/{name}")
}

/// A healthy server and the profile measured on it: at the profile, so it passes; the
/// threshold is the profile's, not the break-even point.
#[test]
fn a_healthy_drafter_meets_its_profile() {
    let Some(server) = MetricsServer::start("vllm-healthy", &[]) else {
        return;
    };
    let (code, report, err) = acceptance(&server.url(), &["--drafter", &drafter("dflash-k15")]);
    assert_eq!(code, 0, "{err}{report:#}");
    let t = &report["threshold"];
    assert!(
        t["source"].as_str().unwrap().contains("drafter's profile"),
        "{t}"
    );
    assert_eq!(t["profile"]["tolerance"], 0.1);
    let al = t["profile"]["mean_accept_length"].as_f64().unwrap();
    assert!((t["value"].as_f64().unwrap() - al * 0.9).abs() < 1e-9);
    assert!(!has(&report, "acceptance-below-profile", "warning"));
}

/// The same profile against a server whose acceptance falls off a cliff at position 5: below
/// the profile's acceptance length (an error, exit 1), and the positions named with the
/// profile's measurement conditions and the likely cause.
#[test]
fn a_cliff_fails_against_the_profile_naming_positions() {
    let Some(server) = MetricsServer::start("vllm-cliff", &[]) else {
        return;
    };
    let (code, report, err) = acceptance(&server.url(), &["--drafter", &drafter("dflash-k15")]);
    assert_eq!(code, 1, "{err}{report:#}");
    assert!(
        has(&report, "acceptance-below-threshold", "error"),
        "{report:#}"
    );
    let d = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "acceptance-below-profile")
        .unwrap_or_else(|| panic!("{report:#}"));
    let message = d["message"].as_str().unwrap();
    assert!(message.contains("position 5:"), "{message}");
    assert!(!message.contains("position 1:"), "{message}");
    assert!(message.contains("mt_bench"), "{message}");
    assert!(message.contains("a cliff"), "{message}");
    // A looser tolerance moves the bar, not the per-position verdict of a cliff to ~0.
    let (_, loose, _) = acceptance(
        &server.url(),
        &[
            "--drafter",
            &drafter("dflash-k15"),
            "--profile-tolerance",
            "0.5",
        ],
    );
    assert_eq!(loose["threshold"]["profile"]["tolerance"], 0.5);
    assert!(has(&loose, "acceptance-below-profile", "warning"));
}

/// SGLang exports the mean only: the mean is held to the profile (3.75 × 0.9 = 3.375 against
/// a gauge of 3.1 to 3.4), and no per-position finding is made.
#[test]
fn sglang_compares_the_mean() {
    let Some(server) = MetricsServer::start("sglang", &[]) else {
        return;
    };
    let (code, report, err) = acceptance(
        &server.url(),
        &[
            "--profile",
            &format!("{PROFILES}/eagle3-k4-ar-validate/speculation_profile.json"),
        ],
    );
    assert_eq!(code, 1, "{err}{report:#}");
    assert!(
        has(&report, "acceptance-below-threshold", "error"),
        "{report:#}"
    );
    assert!(!has(&report, "acceptance-below-profile", "warning"));
    assert!(report["threshold"]["source"]
        .as_str()
        .unwrap()
        .contains("online (ground truth"));
}

/// A drafter with no profile, or a stub, gets the default break-even point, and the
/// threshold says why.
#[test]
fn without_a_usable_profile_the_break_even_is_said() {
    let Some(server) = MetricsServer::start("vllm-healthy", &[]) else {
        return;
    };
    for (dir, says) in [
        ("no-profile", "no speculation_profile.json in"),
        ("stub", "unmeasured stub"),
    ] {
        let (code, report, err) = acceptance(&server.url(), &["--drafter", &drafter(dir)]);
        assert_eq!(code, 0, "{err}");
        let source = report["threshold"]["source"].as_str().unwrap();
        assert!(source.starts_with("break-even"), "{source}");
        assert!(source.contains(says), "{source}");
        assert!(source.contains("default break-even"), "{source}");
    }
}

/// A profile with a wrong type is bad input: exit 2, its file and JSON path, before any
/// request (the URL is never asked).
#[test]
fn a_broken_profile_exits_2_before_scraping() {
    let (code, report, err) =
        acceptance("http://127.0.0.1:9", &["--drafter", &drafter("bad-rate")]);
    assert_eq!(code, 2, "{report:#}");
    assert!(err.contains("marginal_accept_rates[1]"), "{err}");
    assert!(err.contains("speculation_profile.json"), "{err}");
    let (code, _, err) = acceptance("http://127.0.0.1:9", &["--profile-tolerance", "1.5"]);
    assert_eq!(code, 2);
    assert!(err.contains("tolerance"), "{err}");
}

/// A drafter directory holding the authority's config (and `profile` beside it, when given).
fn drafter_dir(profile: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        "fixtures/incident/authority/config.json",
        dir.path().join("config.json"),
    )
    .unwrap();
    if let Some(profile) = profile {
        std::fs::copy(
            format!("{PROFILES}/{profile}/speculation_profile.json"),
            dir.path().join("speculation_profile.json"),
        )
        .unwrap();
    }
    dir
}

/// `doctor --metrics URL --drafter DIR --format json EXTRA…`, offline, with its own cache.
fn doctor(server: &MetricsServer, dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let cache = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["doctor", "--metrics", &server.url(), "--window", "0.2"])
        .args(["--format", "json", "--cache-dir"])
        .arg(cache.path())
        .arg("--drafter")
        .arg(dir)
        .args(extra)
        .env("HF_HUB_OFFLINE", "1")
        .env_remove("HF_ENDPOINT")
        .output()
        .unwrap()
}

/// `doctor --drafter DIR` reads the profile beside the drafter's config: its acceptance is held
/// to the profile and the positions below it are findings, as in `acceptance --drafter`.
#[test]
fn doctor_compares_with_the_drafters_profile() {
    let Some(server) = MetricsServer::start("vllm-cliff", &[]) else {
        return;
    };
    let dir = drafter_dir(Some("dflash-k15"));
    let out = doctor(&server, dir.path(), &[]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let text = report.to_string();
    assert!(text.contains("acceptance-below-profile"), "{report:#}");
    assert!(text.contains("the drafter's profile"), "{report:#}");
}

/// `doctor --profile FILE` names the profile directly, as `acceptance --profile` does, for a
/// drafter directory that has none beside its config; a broken one is bad input before any
/// request.
#[test]
fn doctor_takes_a_profile_by_name() {
    let Some(server) = MetricsServer::start("vllm-cliff", &[]) else {
        return;
    };
    let dir = drafter_dir(None);
    let doctor = |profile: &str| doctor(&server, dir.path(), &["--profile", profile]);
    let out = doctor(&format!("{PROFILES}/dflash-k15/speculation_profile.json"));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("acceptance-below-profile"), "{stdout}");
    let out = doctor(&format!("{PROFILES}/bad-rate/speculation_profile.json"));
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `lint` reads the profile beside a local drafter: a broken one is bad input (exit 2, the
/// file and JSON path), never a silent pass.
#[test]
fn lint_refuses_a_broken_profile() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        "fixtures/incident/authority/config.json",
        dir.path().join("config.json"),
    )
    .unwrap();
    std::fs::copy(
        format!("{PROFILES}/bad-rate/speculation_profile.json"),
        dir.path().join("speculation_profile.json"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .arg("lint")
        .arg(dir.path())
        .arg("--no-weights")
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("marginal_accept_rates[1]"), "{err}");
    assert!(out.stdout.is_empty());
}
