//! The corpus of real drafter configs published by other trainers (SpecForge, AngelSlim,
//! SafeAILab/EAGLE, an inlined gpt-oss DFlash config), copied verbatim with their SOURCE.txt into
//! tests/fixtures/real-configs/ (and configs written in the shape of
//! published templates in tests/fixtures/written-configs/). For each config, `lint` must detect the family the
//! trainer meant and give exactly the findings in EXPECTED.json (the knowledge issue's
//! specification, each with its reason), plain, without built-in facts, against the real target
//! config where one was found, and under the engine launches listed; and no plain or target run
//! may raise an error: a false error on a real drafter is as serious as a missed one.

use std::path::Path;

use serde_json::Value;

mod common;

use common::run;

type Findings = Vec<(String, String)>;

fn expected() -> Value {
    let text = std::fs::read_to_string("tests/fixtures/real-configs/EXPECTED.json").unwrap();
    serde_json::from_str(&text).unwrap()
}

fn pairs(v: &Value) -> Findings {
    let mut out: Findings = v
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_str().unwrap().to_string(),
                p[1].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Runs `lint DIR --format json EXTRA…`: (exit code, family, sorted (code, severity) pairs).
fn lint(dir: &str, extra: &[&str]) -> (i32, String, Findings) {
    let mut args = vec!["lint", dir, "--format", "json"];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args);
    let v: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("{dir} {extra:?}: {e}\nstdout: {out}\nstderr: {err}"));
    let mut found: Findings = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    found.sort();
    (
        code,
        v["family"]["name"].as_str().unwrap_or_default().to_string(),
        found,
    )
}

/// Every expected run of every config: (label, exit, family, findings) mismatches are
/// collected so one run shows all of them.
#[test]
fn every_real_config_gets_exactly_its_expected_findings() {
    let spec = expected();
    let mut failures = Vec::new();
    let mut runs = 0;
    for section in ["real-configs", "written-configs"] {
        for (name, case) in spec[section].as_object().unwrap() {
            let dir = format!("tests/fixtures/{section}/{name}");
            assert!(Path::new(&dir).join("config.json").is_file(), "{dir}");
            let family = case["family"].as_str().unwrap();
            let mut check = |label: String, extra: Vec<String>, want: &Value, exit: i64| {
                let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
                let (code, fam, got) = lint(&dir, &extra);
                runs += 1;
                let want = pairs(want);
                if got != want || fam != family || i64::from(code) != exit {
                    failures.push(format!(
                        "{name} [{label}]: family {fam} (want {family}), exit {code} (want {exit})\n  got  {got:?}\n  want {want:?}"
                    ));
                }
            };
            check("plain".into(), vec![], &case["plain"], 0);
            check(
                "no_builtin".into(),
                vec!["--no-builtin".into()],
                &case["no_builtin"],
                0,
            );
            if let Some(want) = case.get("target") {
                let tmp = tempfile::tempdir().unwrap();
                std::fs::copy(
                    Path::new(&dir).join("target-config.json"),
                    tmp.path().join("config.json"),
                )
                .unwrap();
                let target = tmp.path().display().to_string();
                check(
                    "target".into(),
                    vec!["--target".into(), target, "--no-builtin".into()],
                    want,
                    0,
                );
            }
            if let Some(engine_runs) = case.get("engine").and_then(Value::as_array) {
                for r in engine_runs {
                    let args: Vec<String> = r["args"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|a| a.as_str().unwrap().to_string())
                        .collect();
                    let exit = r.get("exit").and_then(Value::as_i64).unwrap_or(0);
                    check(args.join(" "), args, &r["findings"], exit);
                }
            }
        }
    }
    assert!(runs >= 50, "only {runs} runs");
    assert!(
        failures.is_empty(),
        "{} of {runs} runs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// No plain or target run of a corpus config raises an error (the expectations say so too;
/// this states the policy on its own, so an EXPECTED.json edit cannot quietly allow one).
#[test]
fn no_real_config_gets_a_false_error() {
    let spec = expected();
    for section in ["real-configs", "written-configs"] {
        for (name, _) in spec[section].as_object().unwrap() {
            let dir = format!("tests/fixtures/{section}/{name}");
            let (code, _, got) = lint(&dir, &[]);
            let errors: Vec<_> = got.iter().filter(|(_, s)| s == "error").collect();
            assert!(errors.is_empty(), "{name}: {errors:?}");
            assert_eq!(code, 0, "{name}");
        }
    }
}
