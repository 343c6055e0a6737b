//! `dflash-check diff --from-hub` end to end through the binary: happy paths against olah (a
//! real Hub-compatible server), failure paths against the in-process imitation (tests/support).

mod support;

use std::path::Path;
use std::process::Command;

use support::olah::{enabled, IncidentRepos, Olah, RepoSpec};
use support::{FakeRepo, Fault, HubServer, Tweak};

const DRAFTER: &str = IncidentRepos::DRAFTER;
const TARGET: &str = IncidentRepos::TARGET;
/// The target in the explicit Hub form a typo cannot produce.
const TARGET_HF: &str = "hf://Qwen/Qwen3.6-27B";
const TOKEN: &str = "hf_SENTINELcliTOKEN9876";
const CARD: &str = "---\nlicense: mit\nbase_model: Qwen/Qwen3.6-27B\n---\n# DFlash drafter\n";

fn read(p: &str) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

/// Runs the binary with a clean Hub environment; returns (exit code, stdout, stderr).
fn dflash(args: &[&str], cache: &Path, extra_env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dflash-check"));
    cmd.args(args)
        .arg("--cache-dir")
        .arg(cache)
        .env_remove("HF_ENDPOINT")
        .env_remove("HF_HUB_OFFLINE")
        .env("HF_TOKEN", TOKEN)
        .env("HOME", "/nonexistent-home");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(
        !stdout.contains(TOKEN) && !stderr.contains(TOKEN),
        "token leaked"
    );
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

/// Branch vs pinned sha, revision drift, target from the model card, freshness labels, the
/// server going away, `--require-fresh`, and a path inside the Hub cache.
#[test]
fn from_hub_against_olah() {
    if !enabled() {
        return;
    }
    let authority = read("fixtures/incident/authority/config.json");
    let old = String::from_utf8(authority.clone())
        .unwrap()
        .replace("\"sliding_window\": 2048", "\"sliding_window\": 4096");
    let mut olah = Olah::start(&[
        RepoSpec {
            id: DRAFTER,
            commits: vec![
                vec![("config.json", old.as_bytes())],
                vec![("config.json", &authority), ("README.md", CARD.as_bytes())],
            ],
        },
        RepoSpec {
            id: TARGET,
            commits: vec![vec![
                (
                    "config.json",
                    &read("fixtures/targets/Qwen3.6-27B/config.json"),
                ),
                (
                    "tokenizer_config.json",
                    &read("fixtures/targets/Qwen3.6-27B/tokenizer_config.json"),
                ),
                (
                    "tokenizer.json",
                    &read("fixtures/targets/Qwen3.6-27B/tokenizer.json"),
                ),
            ]],
        },
    ]);
    let shas = olah.commits(DRAFTER).to_vec();
    let (old_sha, new_sha) = (&shas[0], &shas[1]);
    let cache = tempfile::tempdir().unwrap();
    let c = cache.path();
    let url = olah.url.clone();
    let guessed = "fixtures/incident/Qwen3.6-27B-DFlash";

    // Branch: fresh from the Hub, names the sha; the target comes from the card's base_model.
    let (code, out, err) = dflash(
        &["diff", guessed, "--from-hub", DRAFTER, "--endpoint", &url],
        c,
        &[],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(&format!(
            "{DRAFTER} at {new_sha} (main), fresh from the Hub"
        )),
        "{out}"
    );
    assert!(out.contains("Qwen/Qwen3.6-27B at "), "{out}");
    assert!(out.contains("248070 <|audio_start|> (special)"), "{out}");
    assert!(
        out.contains(&format!("--from-hub {DRAFTER}@{new_sha}")),
        "{out}"
    );
    // The tokenizer tables were enough: tokenizer.json was never downloaded.
    assert!(
        !olah
            .requests()
            .iter()
            .any(|r| r.contains("tokenizer.json ")),
        "{:?}",
        olah.requests()
    );

    // Pinned sha: the old revision, with its own sliding_window.
    let (code, out, _) = dflash(
        &[
            "diff",
            "fixtures/incident/authority",
            "--from-hub",
            &format!("{DRAFTER}@{old_sha}"),
            "--endpoint",
            &url,
        ],
        c,
        &[],
    );
    assert_eq!(code, 1);
    assert!(
        out.contains("2048") && out.contains("4096") && out.contains(old_sha.as_str()),
        "{out}"
    );

    // The authority itself is clean; JSON names kind and sha.
    let (code, out, _) = dflash(
        &[
            "diff",
            "fixtures/incident/authority",
            "--from-hub",
            DRAFTER,
            "--endpoint",
            &url,
            "--format",
            "json",
        ],
        c,
        &[],
    );
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (
            v["authority"]["kind"].as_str(),
            v["authority"]["sha"].as_str()
        ),
        (Some("hub"), Some(new_sha.as_str()))
    );

    // Pinned sha again: answered from the cache without a request.
    let before = olah.requests().len();
    let (code, out, _) = dflash(
        &[
            "diff",
            "fixtures/incident/authority",
            "--from-hub",
            &format!("{DRAFTER}@{new_sha}"),
            "--endpoint",
            &url,
            "--target",
            TARGET_HF,
        ],
        c,
        &[],
    );
    let after = olah.requests().len();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("without a request"), "{out}");
    // The target at a branch still asks the Hub (one HEAD per small file); the drafter does not.
    assert!(
        olah.requests()[before..after]
            .iter()
            .all(|r| !r.contains(DRAFTER)),
        "{:?}",
        &olah.requests()[before..]
    );

    // Offline: labelled cache, zero requests.
    let before = olah.requests().len();
    let (code, out, _) = dflash(
        &["diff", guessed, "--from-hub", DRAFTER, "--endpoint", &url],
        c,
        &[("HF_HUB_OFFLINE", "1")],
    );
    assert_eq!(code, 1);
    assert!(
        out.contains("from the local Hub cache") && out.contains("offline (HF_HUB_OFFLINE is set)"),
        "{out}"
    );
    assert_eq!(olah.requests().len(), before);

    // A path inside the cache names its repo and commit.
    let snapshot = c
        .join("models--z-lab--Qwen3.6-27B-DFlash/snapshots")
        .join(new_sha);
    let (code, out, err) = dflash(
        &["diff", snapshot.to_str().unwrap(), "--endpoint", &url],
        c,
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!(
            "Hub cache snapshot of {DRAFTER} at commit {new_sha}"
        )),
        "{out}"
    );

    // The server goes away: the cached answer is labelled; --require-fresh refuses it.
    olah.stop();
    let (code, out, _) = dflash(
        &[
            "diff",
            guessed,
            "--from-hub",
            DRAFTER,
            "--endpoint",
            &url,
            "--timeout",
            "2",
        ],
        c,
        &[],
    );
    assert_eq!(code, 1);
    assert!(
        out.contains("from the local Hub cache") && out.contains("Hub unreachable"),
        "{out}"
    );
    let (code, out, err) = dflash(
        &[
            "diff",
            guessed,
            "--from-hub",
            DRAFTER,
            "--endpoint",
            &url,
            "--timeout",
            "2",
            "--require-fresh",
        ],
        c,
        &[],
    );
    assert_eq!(code, 2, "{out}");
    assert!(err.contains(DRAFTER), "{err}");
}

/// The in-process Hub serving the incident's authority as `DRAFTER`, and an empty cache.
fn incident_hub() -> (HubServer, tempfile::TempDir) {
    let server = HubServer::start();
    let mut repo = FakeRepo::default();
    repo.commit(&[(
        "config.json",
        &read("fixtures/incident/authority/config.json"),
    )]);
    server.add_repo(DRAFTER, repo);
    (server, tempfile::tempdir().unwrap())
}

/// Failures through the binary: exit 2, a message naming repo and file, the token never shown.
#[test]
fn hub_failures_exit_two_with_clear_messages() {
    let (server, cache) = incident_hub();
    let c = cache.path();
    let url = server.url.clone();
    let guessed = "fixtures/incident/Qwen3.6-27B-DFlash";
    let run = |args: &[&str]| {
        let mut all = vec![
            "diff",
            guessed,
            "--endpoint",
            url.as_str(),
            "--timeout",
            "2",
        ];
        all.extend_from_slice(args);
        dflash(&all, c, &[])
    };

    server.status_fault(Some("HEAD"), 401, &[("X-Error-Code", "GatedRepo")]);
    let (code, _, err) = run(&["--from-hub", DRAFTER]);
    assert_eq!(code, 2);
    assert!(err.contains(DRAFTER) && err.contains("HF_TOKEN"), "{err}");

    let (code, _, err) = run(&["--from-hub", "z-lab/No-Such-Repo"]);
    assert_eq!(code, 2);
    assert!(err.contains("z-lab/No-Such-Repo"), "{err}");

    let (code, _, err) = run(&["--from-hub", &format!("{DRAFTER}@no-such-branch")]);
    assert_eq!(code, 2);
    assert!(err.contains("no-such-branch"), "{err}");

    for bad in ["../etc/passwd", "/abs/path", "a/b/c", "org/name@../../x"] {
        let (code, _, err) = run(&["--from-hub", bad]);
        assert_eq!(code, 2, "{bad}");
        assert!(
            err.contains(bad.split('@').next().unwrap()) || err.contains(bad),
            "{bad}: {err}"
        );
    }
    let requests_before = server.requests();
    let (code, _, _) = run(&["--from-hub", "../x"]);
    assert_eq!(
        (code, server.requests()),
        (2, requests_before),
        "an invalid repo id must not reach the network"
    );

    // The working case, for contrast: exit 1 with the five fields.
    let (code, out, _) = run(&["--from-hub", DRAFTER]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("fresh from the Hub"), "{out}");
}

/// Issue 20's hostile answers through the binary: each ends in exit 2 with a message naming the
/// file, none in a crash (a lying `X-Linked-Size` used to abort the process), a hang past
/// `--timeout`, or an altered file accepted.
#[test]
fn hostile_hub_answers_exit_two_not_a_crash() {
    let (server, cache) = incident_hub();
    let url = server.url.clone();
    let run = || {
        let started = std::time::Instant::now();
        let args = [
            "diff",
            "fixtures/incident/Qwen3.6-27B-DFlash",
            "--from-hub",
            DRAFTER,
            "--endpoint",
            url.as_str(),
            "--timeout",
            "2",
        ];
        let (code, _, err) = dflash(&args, cache.path(), &[]);
        (code, err, started.elapsed())
    };
    let tweak = |headers: &[(&str, &str)], drip: bool| {
        Fault::Tweak(Tweak {
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            corrupt: false,
            drip: drip.then(|| std::time::Duration::from_millis(300)),
            flood: None,
        })
    };
    let huge = u64::MAX.to_string();
    let cases = [
        (
            "X-Linked-Size: u64::MAX",
            tweak(&[("X-Linked-Size", &huge)], false),
            "over the 4.0 MiB limit",
        ),
        (
            "ETag \"abc\"",
            tweak(&[("ETag", "\"abc\"")], false),
            "not a content hash",
        ),
        (
            "X-Xet-Hash and a dripping body",
            tweak(&[("X-Xet-Hash", &"a".repeat(64))], true),
            "within 2 s",
        ),
    ];
    for (what, fault, says) in cases {
        // The ETag is refused at the HEAD, before any body (`tests/hub_server.rs` also
        // alters the body); the others are in the GET.
        let method = if what.starts_with("ETag") {
            "HEAD"
        } else {
            "GET"
        };
        server.fault(Some(method), fault);
        let (code, err, took) = run();
        assert_eq!(code, 2, "{what}: {err}");
        assert!(
            err.contains("config.json") && err.contains(says),
            "{what}: {err}"
        );
        assert!(
            took < std::time::Duration::from_secs(8),
            "{what}: took {took:?}"
        );
    }
    // Nothing of it reached the cache: the clean run afterwards downloads the file.
    let (code, err, _) = run();
    assert_eq!(code, 1, "{err}");
}

/// `dflash-check env` shows where each setting came from and never the token.
#[test]
fn env_shows_sources_not_the_token() {
    let cache = tempfile::tempdir().unwrap();
    let (code, out, _) = dflash(
        &["env", "--endpoint", "http://127.0.0.1:9"],
        cache.path(),
        &[("HF_HUB_OFFLINE", "1")],
    );
    assert_eq!(code, 0);
    assert!(
        out.contains("http://127.0.0.1:9") && out.contains("(flag)"),
        "{out}"
    );
    assert!(
        out.contains("HF_TOKEN") && out.contains("HF_HUB_OFFLINE"),
        "{out}"
    );
}

/// `pin` resolves shas from the Hub; `check` then needs no network: the server is stopped.
#[test]
fn pin_then_check_with_the_hub_gone() {
    if !enabled() {
        return;
    }
    let repos = IncidentRepos::read();
    let mut olah = Olah::start(&repos.specs());
    let sha = olah.commits(DRAFTER)[0].clone();
    let target_sha = olah.commits(TARGET)[0].clone();
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    for (name, src) in [
        ("good", "fixtures/incident/authority/config.json"),
        ("wrong", "fixtures/incident/Qwen3.6-27B-DFlash/config.json"),
    ] {
        std::fs::create_dir_all(repo.path().join("models").join(name)).unwrap();
        std::fs::copy(
            src,
            repo.path().join("models").join(name).join("config.json"),
        )
        .unwrap();
    }
    let url = olah.url.clone();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
            .args(args)
            .args([
                "--endpoint",
                &url,
                "--cache-dir",
                cache.path().to_str().unwrap(),
                "--timeout",
                "2",
            ])
            .current_dir(repo.path())
            .env_remove("HF_HUB_OFFLINE")
            .env("HOME", "/nonexistent-home")
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    for name in ["models/good", "models/wrong"] {
        let (code, out, err) = run(&["pin", name, "--from-hub", DRAFTER, "--target", TARGET_HF]);
        assert_eq!(code, 0, "{out}{err}");
    }
    let pins = std::fs::read_to_string(repo.path().join("dflash-check.toml")).unwrap();
    assert!(
        pins.contains(&format!("revision = \"{sha}\""))
            && pins.contains(&format!("target_revision = \"{target_sha}\"")),
        "{pins}"
    );

    olah.stop();
    let (code, out, err) = run(&["check", "models", "--require-pin"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(&format!(
            "  drafter  models/good/config.json  [dflash] against cache {DRAFTER}@{sha} (pin)  (clean)"
        )),
        "{out}"
    );
    assert!(
        out.contains(
            "error[changed] dflash_config.mask_token_id: 248064 <|repo_name|> (added, not special)"
        ) && out.contains("  --> models/wrong/config.json:13:5"),
        "{out}"
    );
    assert!(
        !out.contains("authority-unavailable") && !out.contains("pin-missing"),
        "{out}"
    );
}

/// A Hub file that is not JSON (an HTML error page served as config.json): exit 2, with the
/// repo, sha and line in the message.
#[test]
fn non_json_body_from_the_hub_exits_two() {
    let server = HubServer::start();
    let mut repo = FakeRepo::default();
    let sha = repo.commit(&[("config.json", b"<html>502 Bad Gateway</html>\n")]);
    server.add_repo(DRAFTER, repo);
    let cache = tempfile::tempdir().unwrap();
    let (code, out, err) = dflash(
        &[
            "diff",
            "fixtures/incident/authority",
            "--from-hub",
            DRAFTER,
            "--endpoint",
            &server.url,
        ],
        cache.path(),
        &[],
    );
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains(&format!("{DRAFTER}@{}", &sha[..12]))
            && err.contains("invalid JSON at line 1, column 1"),
        "{err}"
    );
}

/// What a whole `diff --from-hub` costs through the binary, with real-size files: the drafter's
/// config and model card, the target's config and tokenizer_config (tokenizer.json is never
/// needed: every id is an added token). Cold: a handful of requests, well under 100 KB; warm with
/// pinned shas: no request at all. Prints the figures recorded in docs/hub.md.
#[test]
fn cost_of_a_cold_and_a_warm_diff_from_hub() {
    let server = HubServer::start();
    let mut drafter = FakeRepo::default();
    let sha = drafter.commit(&[
        (
            "config.json",
            &read("fixtures/incident/authority/config.json"),
        ),
        ("README.md", CARD.as_bytes()),
    ]);
    server.add_repo(DRAFTER, drafter);
    let mut target = FakeRepo::default();
    let target_sha = target.commit(&[
        (
            "config.json",
            &read("fixtures/targets/Qwen3.6-27B/config.json"),
        ),
        (
            "tokenizer_config.json",
            &read("fixtures/targets/Qwen3.6-27B/tokenizer_config.json"),
        ),
        (
            "tokenizer.json",
            &read("fixtures/targets/Qwen3.6-27B/tokenizer.json"),
        ),
    ]);
    server.add_repo(TARGET, target);
    let cache = tempfile::tempdir().unwrap();
    let guessed = "fixtures/incident/Qwen3.6-27B-DFlash";

    let (code, out, _) = dflash(
        &[
            "diff",
            guessed,
            "--from-hub",
            DRAFTER,
            "--endpoint",
            &server.url,
        ],
        cache.path(),
        &[],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("248070 <|audio_start|> (special)"), "{out}");
    let cold = server.log();
    let bytes: usize = cold.iter().map(|r| r.body_bytes).sum();
    assert!(
        !cold.iter().any(|r| r.path.ends_with("/tokenizer.json")),
        "tokenizer.json fetched: {cold:?}"
    );
    assert!(bytes < 100 * 1024, "{bytes} bytes");
    println!("cold diff --from-hub (drafter at main, target from the card): {} requests, {bytes} body bytes", cold.len());
    for r in &cold {
        println!("  {} {} ({} bytes)", r.method, r.path, r.body_bytes);
    }

    server.clear_log();
    let pinned = format!("{DRAFTER}@{sha}");
    let target_pinned = format!("{TARGET}@{target_sha}");
    let (code, _, _) = dflash(
        &[
            "diff",
            guessed,
            "--from-hub",
            &pinned,
            "--target",
            &target_pinned,
            "--endpoint",
            &server.url,
        ],
        cache.path(),
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(server.requests(), 0, "warm, pinned: {:?}", server.log());
    println!("warm diff --from-hub with pinned shas: 0 requests");
}

/// `fix --from-hub` repairs the incident's file to the Hub's bytes and names the commit.
#[test]
fn fix_from_hub_repairs_the_incident() {
    let server = HubServer::start();
    let mut drafter = FakeRepo::default();
    let authority = read("fixtures/incident/authority/config.json");
    let sha = drafter.commit(&[("config.json", &authority)]);
    server.add_repo(DRAFTER, drafter);
    let cache = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("Qwen3.6-27B-DFlash");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        "fixtures/incident/Qwen3.6-27B-DFlash/config.json",
        dir.join("config.json"),
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let (code, out, err) = dflash(
        &["fix", d, "--from-hub", DRAFTER, "--endpoint", &server.url],
        cache.path(),
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&sha), "{out}");
    assert_eq!(
        std::fs::read(dir.join("config.json")).unwrap(),
        authority,
        "minimal edits reproduce the Hub's file"
    );
    let (code, _, _) = dflash(
        &["diff", d, "--from-hub", &format!("{DRAFTER}@{sha}")],
        cache.path(),
        &[],
    );
    assert_eq!(code, 0);
}

/// A copy of the incident's drafter with one more id (13, a regular vocabulary token) that only
/// `tokenizer.json` can decode.
fn drafter_needing_the_vocabulary(dir: &Path) -> String {
    let text = String::from_utf8(read("fixtures/incident/Qwen3.6-27B-DFlash/config.json"))
        .unwrap()
        .replace("\"eos_token_id\": 248044", "\"eos_token_id\": [248044, 13]");
    let drafter = dir.join("Qwen3.6-27B-DFlash");
    std::fs::create_dir_all(&drafter).unwrap();
    std::fs::write(drafter.join("config.json"), text).unwrap();
    drafter.to_str().unwrap().to_string()
}

/// An input the user did not name that cannot be had — the target named by the drafter's model
/// card absent, gated (401), or the Hub down with only the drafter cached; `tokenizer.json`
/// found through a named target gated — is a warning naming it and the flag to supply it, and
/// the diff goes on: ids decoded with the built-in table (JSON: `tokens.decoded_with`,
/// `warnings`), exit code from the findings. A target the user named still fails with exit 2,
/// and `--require-fresh` still refuses a Hub that cannot be asked.
#[test]
fn unnamed_inputs_that_cannot_be_had_are_warnings() {
    let server = HubServer::start();
    let mut repo = FakeRepo::default();
    let sha = repo.commit(&[
        (
            "config.json",
            &read("fixtures/incident/authority/config.json"),
        ),
        ("README.md", CARD.as_bytes()),
    ]);
    server.add_repo(DRAFTER, repo);
    let cache = tempfile::tempdir().unwrap();
    let c = cache.path();
    let url = server.url.clone();
    let guessed = "fixtures/incident/Qwen3.6-27B-DFlash";
    let pinned = format!("{DRAFTER}@{sha}");
    let diff = |endpoint: &str, args: &[&str]| {
        let mut all = vec!["diff", guessed, "--endpoint", endpoint, "--timeout", "2"];
        all.extend_from_slice(args);
        dflash(&all, c, &[])
    };
    let warned_about_target = |out: &str| {
        out.contains("warning")
            && out.contains(&format!(
                "target {TARGET} (base_model in the model card of {DRAFTER}) could not be had"
            ))
            && out.contains("pass --target to supply it")
            && out.contains("decoded with the built-in added-token table of Qwen/Qwen3.6-27B")
    };

    // 1. The card's target is not on the Hub: a warning, the five fields decoded, exit 1.
    let (code, out, err) = diff(&url, &["--from-hub", DRAFTER]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(warned_about_target(&out), "{out}");
    assert!(out.contains("248070 <|audio_start|>"), "{out}");
    let (code, out, _) = diff(&url, &["--from-hub", DRAFTER, "--format", "json"]);
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tokens"]["decoded_with"], "builtin", "{out}");
    assert_eq!(v["warnings"][0]["flag"], "--target", "{out}");
    assert!(
        v["warnings"][0]["input"]
            .as_str()
            .unwrap()
            .starts_with(&format!("target {TARGET}")),
        "{out}"
    );
    assert_eq!(v["summary"]["fails"], true, "{out}");
    // Named by the user, the same target is an error.
    let (code, _, err) = diff(&url, &["--from-hub", DRAFTER, "--target", TARGET_HF]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(TARGET), "{err}");

    // 2. The target exists but is gated (401): a warning; the drafter comes from the cache at
    //    its sha without a request, so the 401 answers the target's first request.
    let mut target = FakeRepo::default();
    let target_sha = target.commit(&[
        (
            "config.json",
            &read("fixtures/targets/Qwen3.6-27B/config.json"),
        ),
        (
            "tokenizer_config.json",
            &read("fixtures/targets/Qwen3.6-27B/tokenizer_config.json"),
        ),
        (
            "tokenizer.json",
            &read("fixtures/targets/Qwen3.6-27B/tokenizer.json"),
        ),
    ]);
    server.add_repo(TARGET, target);
    server.status_fault(Some("HEAD"), 401, &[("X-Error-Code", "GatedRepo")]);
    let (code, out, err) = diff(&url, &["--from-hub", &pinned]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(warned_about_target(&out), "{out}");
    assert!(out.contains("restricted") || out.contains("401"), "{out}");

    // 3. The Hub is down; the drafter and its card are cached, the target is not.
    let dead = support::dead_endpoint();
    let (code, out, err) = diff(&dead, &["--from-hub", DRAFTER]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("Hub unreachable"), "{out}");
    assert!(warned_about_target(&out), "{out}");
    // --require-fresh keeps its meaning: the Hub could not be asked, exit 2.
    let (code, _, err) = diff(&dead, &["--from-hub", DRAFTER, "--require-fresh"]);
    assert_eq!(code, 2, "{err}");

    // 4. A named target's tokenizer.json (needed for id 13) is gated: a warning naming it and
    //    --tokenizer; 13 is shown undecoded, the added tokens still decoded.
    let work = tempfile::tempdir().unwrap();
    let drafter = drafter_needing_the_vocabulary(work.path());
    let target_at = format!("{TARGET}@{target_sha}");
    // First cache the target's small files at its sha (the incident's ids need no vocabulary).
    let (code, out, err) = diff(&url, &["--from-hub", &pinned, "--target", &target_at]);
    assert_eq!(code, 1, "{out}{err}");
    server.status_fault(Some("HEAD"), 401, &[("X-Error-Code", "GatedRepo")]);
    let (code, out, err) = dflash(
        &[
            "diff",
            &drafter,
            "--from-hub",
            &pinned,
            "--target",
            &target_at,
            "--endpoint",
            &url,
            "--timeout",
            "2",
        ],
        c,
        &[],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(&format!(
            "tokenizer.json of target {TARGET} could not be had"
        )) && out.contains("pass --tokenizer to supply it"),
        "{out}"
    );
    assert!(
        out.contains("[248044 <|endoftext|> (special), 13]"),
        "{out}"
    );
}

/// The same against olah, a real Hub-compatible server: the card's target is absent from the
/// mirror, then the server is gone with the drafter cached. Both: a warning, exit 1.
#[test]
fn unnamed_target_missing_from_olah_is_a_warning() {
    if !enabled() {
        return;
    }
    let mut olah = Olah::start(&[RepoSpec {
        id: DRAFTER,
        commits: vec![vec![
            (
                "config.json",
                &read("fixtures/incident/authority/config.json"),
            ),
            ("README.md", CARD.as_bytes()),
        ]],
    }]);
    let cache = tempfile::tempdir().unwrap();
    let c = cache.path();
    let url = olah.url.clone();
    let guessed = "fixtures/incident/Qwen3.6-27B-DFlash";
    let args = [
        "diff",
        guessed,
        "--from-hub",
        DRAFTER,
        "--endpoint",
        &url,
        "--timeout",
        "2",
    ];
    let (code, out, err) = dflash(&args, c, &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("fresh from the Hub"), "{out}");
    assert!(
        out.contains(&format!("target {TARGET} (base_model in the model card"))
            && out.contains("pass --target to supply it"),
        "{out}"
    );
    assert!(out.contains("248070 <|audio_start|>"), "{out}");
    olah.stop();
    let (code, out, err) = dflash(&args, c, &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("Hub unreachable") && out.contains("pass --target to supply it"),
        "{out}"
    );
}

/// A drafter repo and a target whose `tokenizer.json` is padded past 1 MB, both served by the
/// in-process Hub; the small files already cached at their shas by a first run, so the next
/// run with `drafter` (which needs the vocabulary) downloads only `tokenizer.json`.
/// Returns (server, cache, drafter args).
fn large_tokenizer_setup(work: &Path) -> (HubServer, tempfile::TempDir, Vec<String>) {
    let server = HubServer::start();
    let mut repo = FakeRepo::default();
    let sha = repo.commit(&[
        (
            "config.json",
            &read("fixtures/incident/authority/config.json"),
        ),
        ("README.md", CARD.as_bytes()),
    ]);
    server.add_repo(DRAFTER, repo);
    let tokenizer = String::from_utf8(read("fixtures/targets/Qwen3.6-27B/tokenizer.json"))
        .unwrap()
        .replacen(
            "{\"version\"",
            &format!(
                "{{\"x_padding\": \"{}\", \"version\"",
                "a".repeat(1_500_000)
            ),
            1,
        );
    let mut target = FakeRepo::default();
    let target_sha = target.commit(&[
        (
            "config.json",
            &read("fixtures/targets/Qwen3.6-27B/config.json"),
        ),
        (
            "tokenizer_config.json",
            &read("fixtures/targets/Qwen3.6-27B/tokenizer_config.json"),
        ),
        ("tokenizer.json", tokenizer.as_bytes()),
    ]);
    server.add_repo(TARGET, target);
    let cache = tempfile::tempdir().unwrap();
    let url = server.url.clone();
    let common = [
        "--from-hub".to_string(),
        format!("{DRAFTER}@{sha}"),
        "--target".to_string(),
        format!("{TARGET}@{target_sha}"),
        "--endpoint".to_string(),
        url,
    ];
    let mut first: Vec<&str> = vec!["diff", "fixtures/incident/Qwen3.6-27B-DFlash"];
    first.extend(common.iter().map(String::as_str));
    let (code, out, err) = dflash(&first, cache.path(), &[]);
    assert_eq!(code, 1, "{out}{err}");
    let mut args = vec!["diff".to_string(), drafter_needing_the_vocabulary(work)];
    args.extend(common);
    (server, cache, args)
}

/// Not on a terminal (stderr is a pipe here), a 1.5 MB tokenizer.json downloads without a
/// word on stderr, and the id it was needed for is decoded.
#[test]
fn large_download_prints_nothing_when_stderr_is_not_a_terminal() {
    let work = tempfile::tempdir().unwrap();
    let (server, cache, args) = large_tokenizer_setup(work.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = dflash(&args, cache.path(), &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(err, "", "stderr must stay empty off a terminal");
    assert!(out.contains("13 \"\\r\" (vocab)"), "{out}");
    assert!(
        server
            .log()
            .iter()
            .any(|r| r.method == "GET" && r.path.ends_with("/tokenizer.json")),
        "tokenizer.json was not downloaded"
    );
}

/// On a terminal (a pty from script(1)), the same download draws a progress bar naming the file;
/// `--quiet` draws none.
#[test]
fn large_download_draws_a_progress_bar_on_a_terminal() {
    if Command::new("script").arg("--version").output().is_err() {
        assert!(
            std::env::var("CI").is_err(),
            "script(1) (util-linux) is needed for the terminal test"
        );
        eprintln!("skipped: script(1) not installed");
        return;
    }
    for quiet in [false, true] {
        let work = tempfile::tempdir().unwrap();
        let (server, cache, mut args) = large_tokenizer_setup(work.path());
        if quiet {
            args.push("--quiet".into());
        }
        // Hold the body back a little so the bar is on screen while bytes are awaited.
        server.fault(
            Some("GET"),
            support::Fault::StallBody(std::time::Duration::from_millis(300)),
        );
        let line = format!(
            "{} {} --cache-dir {}",
            env!("CARGO_BIN_EXE_dflash-check"),
            args.join(" "),
            cache.path().display()
        );
        let out = Command::new("script")
            .args(["-qefc", &line, "/dev/null"])
            .env_remove("HF_ENDPOINT")
            .env_remove("HF_HUB_OFFLINE")
            .env("HF_TOKEN", TOKEN)
            .env("HOME", "/nonexistent-home")
            .env("TERM", "xterm")
            .output()
            .unwrap();
        let screen = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{screen}");
        let drew = screen.contains(&format!("downloading {TARGET} tokenizer.json"));
        assert_eq!(drew, !quiet, "quiet={quiet}:\n{screen}");
        assert!(screen.contains("13 \"\\r\" (vocab)"), "{screen}");
    }
}

/// A cached file is verified before it is trusted: a hand-edited cached config.json (its blob
/// no longer hashes to its name) is refused with exit 2, not answered "identical".
#[test]
fn an_edited_cache_blob_is_not_trusted() {
    let server = HubServer::start();
    let mut repo = FakeRepo::default();
    let authority = read("fixtures/incident/authority/config.json");
    let sha = repo.commit(&[("config.json", &authority)]);
    server.add_repo(DRAFTER, repo);
    let cache = tempfile::tempdir().unwrap();
    let pinned = format!("{DRAFTER}@{sha}");
    // First run fills the cache.
    let (code, out, err) = dflash(
        &[
            "diff",
            "fixtures/incident/authority",
            "--from-hub",
            &pinned,
            "--endpoint",
            &server.url,
        ],
        cache.path(),
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    let snapshot = cache
        .path()
        .join("models--z-lab--Qwen3.6-27B-DFlash/snapshots")
        .join(&sha);
    let cached = snapshot.join("config.json");
    let blob = std::fs::canonicalize(&cached).unwrap();
    let edited = String::from_utf8(authority)
        .unwrap()
        .replace("248070", "248064");
    std::fs::write(&blob, &edited).unwrap();
    // The cache snapshot diffed against its own repo at that sha, offline: the edited blob
    // must not be both sides of an "identical".
    let (code, out, err) = dflash(
        &[
            "diff",
            snapshot.to_str().unwrap(),
            "--from-hub",
            &pinned,
            "--offline",
        ],
        cache.path(),
        &[],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("cannot be trusted"), "{err}");
    assert!(err.contains("does not hash to its blob name"), "{err}");
    assert!(!out.contains("identical"), "{out}");
}

/// A mistyped local path is never a Hub lookup: `weights`, `lint` and `--target` say the path
/// does not exist and show the explicit Hub form, and nothing is sent to the endpoint (a fake
/// Hub that records requests sees none), online or with the Hub unreachable.
#[test]
fn a_mistyped_local_path_is_not_sent_to_the_hub() {
    let server = HubServer::start();
    let cache = tempfile::tempdir().unwrap();
    for endpoint in [server.url.clone(), support::dead_endpoint()] {
        for args in [
            vec!["weights", "models/nothing"],
            vec!["lint", "models/nothing"],
            vec![
                "diff",
                "fixtures/incident/authority",
                "--target",
                "models/nothing",
            ],
            vec![
                "lint",
                "fixtures/incident/authority",
                "--target",
                "models/nothing",
            ],
        ] {
            let mut all = args.clone();
            all.extend(["--endpoint", &endpoint]);
            let (code, out, err) = dflash(&all, cache.path(), &[]);
            assert_eq!(code, 2, "{args:?}: {out}{err}");
            assert!(
                err.contains("`models/nothing` does not exist"),
                "{args:?}: {err}"
            );
            assert!(err.contains("hf://models/nothing"), "{args:?}: {err}");
            assert!(
                !err.contains("reach") && !err.contains("unreachable"),
                "{args:?}: {err}"
            );
        }
    }
    assert_eq!(server.requests(), 0, "{:?}", server.log());
    // The explicit form does reach the Hub.
    let (code, _, err) = dflash(
        &["lint", "hf://models/nothing", "--endpoint", &server.url],
        cache.path(),
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert!(server.requests() > 0);
}

/// Offline with nothing cached, `--from-hub` of a repository the tool holds a built-in snapshot
/// of: the hint names `--snapshot REPO`, the one thing that works with no network (issue 45).
/// A repository without a snapshot gets no such hint.
#[test]
fn offline_from_hub_suggests_the_builtin_snapshot() {
    let cache = tempfile::tempdir().unwrap();
    let (code, _, err) = dflash(
        &[
            "diff",
            "fixtures/incident/Qwen3.6-27B-DFlash",
            "--from-hub",
            DRAFTER,
            "--offline",
        ],
        cache.path(),
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--snapshot z-lab/Qwen3.6-27B-DFlash"),
        "no --snapshot hint: {err}"
    );
    let (code, _, err) = dflash(
        &[
            "diff",
            "fixtures/incident/Qwen3.6-27B-DFlash",
            "--from-hub",
            "someone/Unknown-DFlash",
            "--offline",
        ],
        cache.path(),
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("--snapshot"), "{err}");
}
