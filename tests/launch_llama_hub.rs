//! `launch` on llama.cpp lines that name their models as Hub repos (`-hf OWNER/REPO[:TAG]`,
//! `-hfd`): the file llama.cpp would load, chosen by its rule, its GGUF header read by range
//! requests, and the same findings as the same files on disk. Before this, every such model was
//! a `launch-*-unavailable` warning and its rules were skipped.
//!
//! The happy paths run against olah, a real Hub-compatible server serving local git repos
//! (opt-in: `scripts/olah-setup.sh`, then `DFLASH_E2E_OLAH=1`); olah ignores `Range` on its git
//! mirrors and streams the file, which the reader takes only as far as it asked. The error
//! paths and the `206 Partial Content` path run against the in-process test server
//! (`tests/support`). The GGUF files are those `tests/gguf/generate.py` writes with llama.cpp's
//! own writer (`scripts/weights-setup.sh`); without them each test says "skipped" and passes,
//! except under `CI=true`.

mod common;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use support::olah::{enabled, Olah, RepoSpec};
use support::{FakeRepo, Fault, HubServer, Tweak};

fn fixtures(test: &str) -> Option<PathBuf> {
    common::gguf_fixtures(test, "target-qwen3.gguf")
}

fn bytes(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap()
}

/// One `launch --format json` run.
struct Run {
    code: i32,
    /// (code, severity, path) of each finding, in order.
    found: Vec<(String, String, String)>,
    json: Value,
    stderr: String,
}

/// `launch --format json -- WORDS` against `endpoint`, with the Hub cache `cache`.
fn launch(endpoint: &str, cache: &Path, offline: bool, words: &str) -> Run {
    let home = cache.join("home");
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["launch", "--format", "json", "--"])
        .args(words.split_whitespace())
        .env("HF_ENDPOINT", endpoint)
        .env("HF_HUB_CACHE", cache)
        .env("HF_HOME", &home)
        .env("HF_HUB_OFFLINE", if offline { "1" } else { "0" })
        .env_remove("HF_TOKEN")
        .output()
        .expect("runs");
    let code = out.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let found = json["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap_or_default().to_string();
            (s("code"), s("severity"), s("path"))
        })
        .collect();
    Run {
        code,
        found,
        json,
        stderr,
    }
}

/// The same line with local files: `@NAME` is `dir/NAME`.
fn local(dir: &Path, cache: &Path, words: &str) -> Run {
    let line: Vec<String> = words
        .split_whitespace()
        .map(|w| match w.strip_prefix('@') {
            Some(f) => dir.join(f).display().to_string(),
            None => w.to_string(),
        })
        .collect();
    launch("http://127.0.0.1:9", cache, true, &line.join(" "))
}

const TARGET: &str = "org/Target-GGUF";
const DRAFT: &str = "org/Draft-GGUF";

/// The target repo ships two quants of different vocabularies (so which one was read shows),
/// the draft repo a plain draft model and a DFlash sidecar.
type Repos = Vec<(&'static str, Vec<(&'static str, Vec<u8>)>)>;

fn repos(dir: &Path) -> Repos {
    vec![
        (
            TARGET,
            vec![
                ("README.md", b"# a GGUF repo\n".to_vec()),
                ("Target-Q8_0.gguf", bytes(dir, "draft-other-text.gguf")),
                ("Target-Q4_K_M.gguf", bytes(dir, "target-qwen3.gguf")),
            ],
        ),
        (
            DRAFT,
            vec![
                ("Draft-Q8_0.gguf", bytes(dir, "draft-llama-spm.gguf")),
                ("dflash-Draft-Q8_0.gguf", bytes(dir, "dflash.gguf")),
            ],
        ),
    ]
}

/// Asserts the Hub run found what the local run found (code, severity, JSON path) and exited
/// the same.
fn same_findings(hub: &Run, disk: &Run) {
    assert_eq!(
        (hub.code, &hub.found),
        (disk.code, &disk.found),
        "hub: {:#}\n{}\ndisk: {:#}",
        hub.json,
        hub.stderr,
        disk.json
    );
}

#[test]
fn hub_models_get_the_findings_of_the_same_files_on_disk() {
    if !enabled() {
        return;
    }
    let Some(dir) = fixtures("hub_models_get_the_findings_of_the_same_files_on_disk") else {
        return;
    };
    let repos = repos(&dir);
    let specs: Vec<RepoSpec> = repos
        .iter()
        .map(|(id, files)| RepoSpec {
            id,
            commits: vec![files.iter().map(|(n, b)| (*n, b.as_slice())).collect()],
        })
        .collect();
    let olah = Olah::start(&specs);
    let cache = tempfile::tempdir().unwrap();
    let c = cache.path();

    // No tag: Q4_K_M (llama.cpp's first default), not the Q8_0 listed before it.
    let line = format!("llama-server -hf {TARGET} -hfd {DRAFT}:q8_0 --spec-type draft-simple");
    let before = olah.requests().len();
    let cold = launch(&olah.url, c, false, &line);
    let cold_requests = olah.requests()[before..].to_vec();
    assert_eq!(cold.json["target"]["kind"], "hub", "{:#}", cold.json);
    assert_eq!(
        cold.json["target"]["path"],
        format!("hf://{TARGET}/Target-Q4_K_M.gguf")
    );
    assert_eq!(
        cold.json["drafter"]["path"],
        format!("hf://{DRAFT}/Draft-Q8_0.gguf")
    );
    assert_eq!(
        cold.json["target"]["sha"].as_str(),
        Some(olah.commits(TARGET)[0].as_str())
    );
    let disk = local(
        &dir,
        c,
        "llama-server -m @target-qwen3.gguf -md @draft-llama-spm.gguf --spec-type draft-simple",
    );
    assert!(!disk.found.is_empty());
    same_findings(&cold, &disk);
    let count = |reqs: &[String], what: &str| reqs.iter().filter(|r| r.contains(what)).count();
    // (olah answers the tree without its trailing slash with a redirect to it.)
    assert_eq!(count(&cold_requests, "/tree/"), 4, "{cold_requests:#?}");
    assert_eq!(count(&cold_requests, "/refs"), 2, "{cold_requests:#?}");
    assert_eq!(cold_requests.len(), 8, "{cold_requests:#?}");
    assert!(
        count(&cold_requests, "/resolve/") >= 2,
        "{cold_requests:#?}"
    );

    // Warm: the branch is asked for again (it may have moved); the listing and the headers at
    // its sha come from the cache.
    let before = olah.requests().len();
    let warm = launch(&olah.url, c, false, &line);
    let warm_requests = olah.requests()[before..].to_vec();
    same_findings(&warm, &disk);
    assert_eq!(warm_requests.len(), 2, "{warm_requests:#?}");
    assert_eq!(count(&warm_requests, "/refs"), 2, "{warm_requests:#?}");
    // Offline: no request at all, the same findings, labelled as the cache's.
    let before = olah.requests().len();
    let offline = launch(&olah.url, c, true, &line);
    assert_eq!(olah.requests().len(), before);
    same_findings(&offline, &disk);
    assert_eq!(offline.json["target"]["freshness"], "cache");

    // Each line: the file llama.cpp loads for it, and the findings of that file on disk.
    let check = |hub_line: &str, role: &str, file: &str, disk_line: &str| {
        let run = launch(&olah.url, c, false, hub_line);
        assert_eq!(run.json[role]["path"], file, "{:#}", run.json);
        same_findings(&run, &local(&dir, c, disk_line));
    };
    // A tag: its file, whatever the default would be.
    check(
        &format!("llama-server -hf {TARGET}:Q8_0 -hfd {DRAFT}:Q8_0 --spec-type draft-simple"),
        "target",
        &format!("hf://{TARGET}/Target-Q8_0.gguf"),
        "llama-server -m @draft-other-text.gguf -md @draft-llama-spm.gguf --spec-type draft-simple",
    );
    // A draft repo and no --spec-type: llama.cpp loads its DFlash sidecar, not its model file.
    check(
        &format!("llama-server -hf {TARGET} -hfd {DRAFT}"),
        "drafter",
        &format!("hf://{DRAFT}/dflash-Draft-Q8_0.gguf"),
        "llama-server -m @target-qwen3.gguf -md @dflash.gguf",
    );
}

/// The test server with the two repos.
fn server(dir: &Path) -> HubServer {
    let hub = HubServer::start();
    for (id, files) in repos(dir) {
        let mut repo = FakeRepo::default();
        let files: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (*n, b.as_slice())).collect();
        repo.commit(&files);
        hub.add_repo(id, repo);
    }
    hub
}

#[test]
fn partial_content_answers_read_only_the_header_and_are_cached_per_sha() {
    let Some(dir) = fixtures("partial_content_answers_read_only_the_header_and_are_cached_per_sha")
    else {
        return;
    };
    let hub = server(&dir);
    let cache = tempfile::tempdir().unwrap();
    let line = format!("llama-server -hf {TARGET} -hfd {DRAFT}:Q8_0 --spec-type draft-simple");
    let cold = launch(&hub.url, cache.path(), false, &line);
    same_findings(
        &cold,
        &local(
            &dir,
            cache.path(),
            "llama-server -m @target-qwen3.gguf -md @draft-llama-spm.gguf --spec-type draft-simple",
        ),
    );
    let log = hub.log();
    let ranged: Vec<_> = log
        .iter()
        .filter(|r| r.path.contains("/resolve/"))
        .collect();
    assert!(!ranged.is_empty());
    for r in &ranged {
        assert_eq!(r.header("range"), Some("bytes=0-16383"), "{r:?}");
    }
    // Only the header's first range crossed the wire, not the files.
    let body: usize = ranged.iter().map(|r| r.body_bytes).sum();
    let files = bytes(&dir, "target-qwen3.gguf").len() + bytes(&dir, "draft-llama-spm.gguf").len();
    assert!(body <= 2 * 16384 && body < files, "{body} of {files}");
    hub.clear_log();
    let warm = launch(&hub.url, cache.path(), false, &line);
    assert_eq!(warm.found, cold.found);
    let paths: Vec<String> = hub.log().iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths.len(), 2, "{paths:#?}");
    assert!(paths.iter().all(|p| p.ends_with("/refs")), "{paths:#?}");
}

#[test]
fn what_the_hub_cannot_give_is_a_warning_that_says_why() {
    let Some(dir) = fixtures("what_the_hub_cannot_give_is_a_warning_that_says_why") else {
        return;
    };
    let hub = server(&dir);
    let cache = tempfile::tempdir().unwrap();
    let warning = |line: &str| {
        let run = launch(&hub.url, cache.path(), false, line);
        assert_eq!(run.code, 0, "{:#}\n{}", run.json, run.stderr);
        let d = run.json["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == "launch-target-unavailable")
            .cloned()
            .unwrap_or_else(|| panic!("{:#}", run.json));
        assert_eq!(d["severity"], "warning");
        d["message"].as_str().unwrap().to_string()
    };
    // A tag no file matches: llama.cpp would not start; the files it could have named.
    let m = warning(&format!(
        "llama-server -hf {TARGET}:Q5_K_M --spec-type draft-simple"
    ));
    assert!(
        m.contains("`Q5_K_M`") && m.contains("`Target-Q8_0.gguf`"),
        "{m}"
    );
    // --hf-file names a file that is not there.
    let m = warning(&format!(
        "llama-server -hf {TARGET} --hf-file nope.gguf --spec-type draft-simple"
    ));
    assert!(m.contains("`nope.gguf` is not a file"), "{m}");
    // A repo that does not exist.
    let m = warning("llama-server -hf org/Nope-GGUF --spec-type draft-simple");
    assert!(m.contains("not found"), "{m}");
    // A gated repo (the Hub's 401 with GatedRepo).
    hub.status_fault(
        Some("GET"),
        401,
        &[
            ("X-Error-Code", "GatedRepo"),
            (
                "X-Error-Message",
                "Access to model org/Target-GGUF is restricted",
            ),
        ],
    );
    let m = warning(&format!(
        "llama-server -hf {TARGET} --spec-type draft-simple"
    ));
    assert!(m.contains("gated") && m.contains("HF_TOKEN"), "{m}");
}

#[test]
fn a_bad_answer_is_bad_input() {
    let Some(dir) = fixtures("a_bad_answer_is_bad_input") else {
        return;
    };
    let line = format!("llama-server -hf {TARGET} --spec-type draft-simple");
    let bad = |hub: &HubServer, want: &str| {
        let cache = tempfile::tempdir().unwrap();
        let run = launch(&hub.url, cache.path(), false, &line);
        assert_eq!(run.code, 2, "{:#}\n{}", run.json, run.stderr);
        assert!(run.stderr.contains(want), "{}", run.stderr);
        // Nothing of a refused answer is cached.
        assert!(
            !walk(cache.path())
                .iter()
                .any(|p| p.contains("gguf-headers")),
            "{:?}",
            walk(cache.path())
        );
    };
    // A listing past its cap: read up to the cap, then refused.
    let hub = server(&dir);
    hub.fault(Some("GET"), Fault::Pass);
    hub.fault(
        Some("GET"),
        Fault::Tweak(Tweak {
            flood: Some(17 << 20),
            ..Tweak::default()
        }),
    );
    bad(&hub, "limit");
    // A Content-Range whose total is not the listed size.
    let hub = server(&dir);
    hub.fault(Some("GET"), Fault::Pass);
    hub.fault(Some("GET"), Fault::Pass);
    hub.fault(
        Some("GET"),
        Fault::Tweak(Tweak {
            headers: vec![("Content-Range".into(), "bytes 0-16383/99999999".into())],
            ..Tweak::default()
        }),
    );
    bad(&hub, "its file list says");
    // A header cut short: the file ends inside its token list.
    let hub = HubServer::start();
    let mut repo = FakeRepo::default();
    let cut = &bytes(&dir, "target-qwen3.gguf")[..600];
    repo.commit(&[("Target-Q4_K_M.gguf", cut)]);
    hub.add_repo(TARGET, repo);
    bad(&hub, "not a valid GGUF file");
}

fn walk(p: &Path) -> Vec<String> {
    let mut out = vec![];
    for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
        let path = e.path();
        if path.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path.display().to_string());
    }
    out
}

#[test]
fn with_no_draft_named_the_target_repos_sidecar_is_the_draft() {
    let Some(dir) = fixtures("with_no_draft_named_the_target_repos_sidecar_is_the_draft") else {
        return;
    };
    let hub = HubServer::start();
    let mut repo = FakeRepo::default();
    let (target, dflash) = (bytes(&dir, "target-qwen3.gguf"), bytes(&dir, "dflash.gguf"));
    repo.commit(&[
        ("T-Q4_K_M.gguf", target.as_slice()),
        ("dflash-T-Q4_K_M.gguf", dflash.as_slice()),
    ]);
    hub.add_repo(TARGET, repo);
    let cache = tempfile::tempdir().unwrap();
    let run = |spec_type: &str| {
        let line = format!("llama-server -hf {TARGET} --spec-type {spec_type}");
        launch(&hub.url, cache.path(), false, &line).json
    };
    let drafter = |spec_type: &str| run(spec_type)["drafter"].clone();
    // As llama.cpp does (common/arg.cpp at 0c1e570, 640-677): the requested type's sidecar.
    let d = drafter("draft-dflash");
    assert_eq!(d["kind"], "hub", "{d:#}");
    assert_eq!(d["path"], format!("hf://{TARGET}/dflash-T-Q4_K_M.gguf"));
    // Found, it is the draft model the type runs: no "names no draft model" note.
    let report = run("draft-dflash").to_string();
    assert!(
        !report.contains("launch-llama-draft-type-without-model"),
        "{report}"
    );
    // Without a type that asks for it, no sidecar is loaded: no draft.
    assert_eq!(drafter("draft-simple")["kind"], "none");
}

/// A server that ignores `Range` (olah answers 200 with the whole file from its git mirror):
/// every request re-sends the file's start, so past the first blocks the reader grows the prefix
/// it holds by half each time rather than by a fixed 1 MiB block. big-header.gguf's header
/// (a million-token vocabulary, about 20 MB) then costs a small multiple of the file in bytes
/// read, where fixed blocks cost about 200 MB (and about 2 GB at the 64 MiB header cap).
#[test]
fn a_server_that_ignores_ranges_costs_a_bounded_multiple_of_the_header() {
    let Some(dir) = fixtures("a_server_that_ignores_ranges_costs_a_bounded_multiple_of_the_header")
    else {
        return;
    };
    let Ok(file) = std::fs::read(dir.join("big-header.gguf")) else {
        eprintln!("skipped: big-header.gguf not generated (scripts/weights-setup.sh)");
        return;
    };
    let hub = HubServer::start();
    let mut repo = FakeRepo::default();
    repo.commit(&[("Big-Q8_0.gguf", file.as_slice())]);
    hub.add_repo("org/Big-GGUF", repo);
    hub.ignore_ranges();
    let cache = tempfile::tempdir().unwrap();
    let line =
        "llama-server -hf org/Big-GGUF --spec-type draft-simple -md tests/no-such-draft.gguf";
    let run = launch(&hub.url, cache.path(), false, line);
    assert_ne!(run.code, 2, "{:#}\n{}", run.json, run.stderr);
    assert_eq!(
        run.json["target"]["path"],
        "hf://org/Big-GGUF/Big-Q8_0.gguf"
    );
    // A 200 carries the file from byte 0: the client reads up to the end it asked for and
    // closes, so what crossed to it is the sum of the asked ends (the server's own count is
    // whatever fit its socket buffers).
    let ends: Vec<usize> = hub
        .log()
        .iter()
        .filter(|r| r.path.contains("/resolve/"))
        .filter_map(|r| r.header("range")?.rsplit_once('-')?.1.parse::<usize>().ok())
        .collect();
    let read: usize = ends.iter().map(|e| e + 1).sum();
    assert!(
        read <= 4 * file.len(),
        "{read} bytes read in {} requests for a {}-byte file: {ends:?}",
        ends.len(),
        file.len()
    );
}

/// Issue 44: a tag llama.cpp cannot compile as a pattern (`std::regex(TAG + "[.-]", icase)`:
/// libstdc++ throws, llama-server stops) was reported as "no file matches" (a warning, exit 0).
/// Now it is bad input (exit 2) naming the tag and libstdc++'s error, before any request; a
/// tag that compiles and matches nothing is still the warning, and a named `--hf-file` makes
/// llama.cpp ignore the tag. No GGUF header is read, so any bytes serve.
#[test]
fn an_invalid_tag_pattern_is_bad_input() {
    let hub = HubServer::start();
    let mut repo = FakeRepo::default();
    repo.commit(&[("Target-Q8_0.gguf", b"GGUF, never read".as_slice())]);
    hub.add_repo(TARGET, repo);
    let cache = tempfile::tempdir().unwrap();
    for (tag, error) in [
        ("Q4[", "error_collate"),
        ("(Q4", "error_paren"),
        ("*Q4", "error_paren"),
        ("Q4{2,1}", "error_badbrace"),
        ("Q4\\x4", "error_escape"),
        ("(?i)q4", "error_paren"),
        ("Q4\\1", "error_backref"),
        ("[z-a]", "error_range"),
    ] {
        hub.clear_log();
        let line = format!("llama-server -hf {TARGET}:{tag} --spec-type draft-simple");
        let run = launch(&hub.url, cache.path(), false, &line);
        assert_eq!(run.code, 2, "{tag}: {:#}\n{}", run.json, run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "its tag `{tag}` is not a pattern llama.cpp can compile"
            )) && run.stderr.contains(error),
            "{tag}: {}",
            run.stderr
        );
        assert!(hub.log().is_empty(), "{tag}: asked the Hub");
    }
    let run = launch(
        &hub.url,
        cache.path(),
        false,
        &format!("llama-server -hf {TARGET}:Q5_K_M --spec-type draft-simple"),
    );
    assert_eq!(run.code, 0, "{:#}\n{}", run.json, run.stderr);
    assert!(
        run.json.to_string().contains("matches the tag `Q5_K_M`"),
        "{:#}",
        run.json
    );
    let run = launch(
        &hub.url,
        cache.path(),
        true,
        &format!(
            "llama-server -hf {TARGET}:Q4[ --hf-file Target-Q8_0.gguf --spec-type draft-simple"
        ),
    );
    assert_ne!(run.code, 2, "{}", run.stderr);
}

/// A GGUF file (version 3, no tensor) with `general.architecture` and one string of `len`
/// bytes: its header takes several range requests (16 KiB, then twice as much each time).
fn big_header_gguf(len: usize) -> Vec<u8> {
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend(2u64.to_le_bytes());
    for (key, value) in [
        ("general.architecture", "llama".to_string()),
        ("general.name", "x".repeat(len)),
    ] {
        b.extend((key.len() as u64).to_le_bytes());
        b.extend(key.as_bytes());
        b.extend(8u32.to_le_bytes());
        b.extend((value.len() as u64).to_le_bytes());
        b.extend(value.as_bytes());
    }
    b
}

/// Issue 44: a GGUF header read from the Hub had a timeout per range request but none for the
/// whole read: a server answering each range in 2.5 s held `launch --timeout 3` for 135 s. A
/// 1 MB header takes six ranges (15 s at 2.5 s each on 309e61e); now `--timeout` is one
/// deadline for the model's read, and the model is unavailable after 3 s, saying so.
#[test]
fn a_slow_range_server_is_cut_at_one_deadline_for_the_whole_read() {
    let hub = HubServer::start();
    let mut repo = FakeRepo::default();
    let gguf = big_header_gguf(1_000_000);
    repo.commit(&[("Target-Q8_0.gguf", gguf.as_slice())]);
    hub.add_repo(TARGET, repo);
    hub.delay_ranges(std::time::Duration::from_millis(2500));
    let cache = tempfile::tempdir().unwrap();
    let start = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(["launch", "--timeout", "3", "--format", "json", "--"])
        .args(["llama-server", "-hf", TARGET, "--spec-type", "draft-simple"])
        .env("HF_ENDPOINT", &hub.url)
        .env("HF_HUB_CACHE", cache.path())
        .env("HF_HOME", cache.path().join("home"))
        .env("HF_HUB_OFFLINE", "0")
        .env_remove("HF_TOKEN")
        .output()
        .unwrap();
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!(
        "{took:?}, {} range requests",
        hub.log()
            .iter()
            .filter(|r| r.header("range").is_some())
            .count()
    );
    assert!(
        took < std::time::Duration::from_secs(8),
        "{took:?}: {stdout}"
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("was not read from") && stdout.contains("within 3 s"),
        "{stdout}"
    );
}
