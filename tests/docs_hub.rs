//! The README's and docs/'s examples that read the Hub (`--from-hub`, `hf://`), run as written
//! against olah, a real Hub-compatible server, serving the repositories they name with the
//! repository's own files: the incident's authority as `z-lab/Qwen3.6-27B-DFlash` and
//! fixtures/targets/Qwen3.6-27B as `Qwen/Qwen3.6-27B` (issue 45: the docs test ran only the
//! examples that need no Hub). `@<sha>` is the commit olah serves. Each runs in a copy of
//! `fixtures/`, so an example that writes (`fix`, `pin`) writes there; each must exit 0 or 1,
//! never 2.
//!
//! Opt-in as the other olah tests are: `scripts/olah-setup.sh`, then `DFLASH_E2E_OLAH=1`
//! (scripts/test.sh sets both).

mod support;

use std::path::Path;
use std::process::Command;

use support::olah::{enabled, IncidentRepos, Olah};

const DRAFTER: &str = IncidentRepos::DRAFTER;
const TARGET: &str = IncidentRepos::TARGET;

/// Every `dflash-check` example line (one line, no continuation) in README.md and docs/*.md
/// that reads the Hub, with the page it is on.
fn hub_examples() -> Vec<(String, String)> {
    let mut pages = vec!["README.md".to_string()];
    for entry in std::fs::read_dir("docs").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path.display().to_string());
        }
    }
    let mut out = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for line in text.lines() {
            let command = line.split(" #").next().unwrap().trim();
            if !command.starts_with("dflash-check ") || command.ends_with('\\') {
                continue;
            }
            if command.contains("--from-hub") || command.contains("hf://") {
                out.push((page.clone(), command.to_string()));
            }
        }
    }
    out
}

/// A copy of the repository's `fixtures/` in `dir`, for examples that write.
fn copy_fixtures(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_fixtures(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn hub_examples_run_against_a_real_hub_server() {
    if !enabled() {
        return;
    }
    let repos = IncidentRepos::read();
    let mut olah = Olah::start(&repos.specs());
    let sha = olah.commits(DRAFTER)[0].clone();
    let served = [DRAFTER, TARGET];
    let mut ran = 0;
    for (page, command) in hub_examples() {
        // Only the repositories served here; an example on another (a weights repo) is left to
        // the weights tests, which serve safetensors.
        let names_other = command.split_whitespace().any(|w| {
            let repo = w.trim_start_matches("hf://").split('@').next().unwrap();
            repo.matches('/').count() == 1
                && !repo.starts_with("fixtures/")
                && !repo.starts_with("models/")
                && !served.contains(&repo)
        });
        if names_other {
            eprintln!("skipped `{command}` ({page}): names a repository not served here");
            continue;
        }
        let work = tempfile::tempdir().unwrap();
        copy_fixtures(Path::new("fixtures"), &work.path().join("fixtures"));
        // `pin models/…` names a folder of the user's: the incident drafter stands in for it.
        copy_fixtures(
            Path::new("fixtures/incident/Qwen3.6-27B-DFlash"),
            &work.path().join("models/Qwen3.6-27B-DFlash"),
        );
        // The docs' placeholders: the commit served, and the incident drafter for a drafter
        // folder of the user's.
        let args: Vec<String> = command
            .split_whitespace()
            .skip(1)
            .map(|w| {
                w.replace("<sha>", &sha)
                    .replace("DRAFTER_DIR", "fixtures/incident/Qwen3.6-27B-DFlash")
            })
            .collect();
        let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
            .args(&args)
            .current_dir(work.path())
            .env("HF_ENDPOINT", &olah.url)
            .env("HF_HOME", work.path().join("hf-home"))
            .env_remove("HF_HUB_OFFLINE")
            .env_remove("HF_TOKEN")
            .output()
            .unwrap();
        let code = out.status.code().unwrap_or(-1);
        assert!(
            code == 0 || code == 1,
            "{page}: `{command}` exited {code}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    // They read the server, not a built-in snapshot or a cache.
    let requests = olah.requests();
    assert!(
        requests.iter().any(|r| r.contains(DRAFTER)) && requests.iter().any(|r| r.contains(TARGET)),
        "{requests:#?}"
    );
    olah.stop();
    eprintln!("{ran} Hub examples ran");
    assert!(ran >= 5, "only {ran} Hub examples ran");
}
