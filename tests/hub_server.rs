//! The Hub client against an in-process imitation of the Hub (tests/support): every success and
//! failure path, the request counts, and that the token never leaks.

mod support;

use std::path::Path;
use std::time::Duration;

use dflash_check::hub::{
    fetch_file, fetch_optional_file, Freshness, HubError, HubErrorKind, HubFlags, HubSettings,
    RepoRef,
};
use support::{dead_endpoint, FakeRepo, Fault, HubServer};

const TOKEN: &str = "hf_SENTINELxxxxTOKEN1234";
const REPO: &str = "z-lab/Test-DFlash-b16";
const OLD_CONFIG: &[u8] =
    b"{\n  \"architectures\": [\"DFlashDraftModel\"],\n  \"num_hidden_layers\": 8\n}\n";
const NEW_CONFIG: &[u8] =
    b"{\n  \"architectures\": [\"DFlashDraftModel\"],\n  \"num_hidden_layers\": 6\n}\n";
const TOK_CONFIG: &[u8] = b"{\"added_tokens_decoder\": {}}\n";

struct Fixture {
    server: HubServer,
    cache: tempfile::TempDir,
    old: String,
    new: String,
}

fn fixture() -> Fixture {
    let server = HubServer::start();
    let mut repo = FakeRepo::default();
    let old = repo.commit(&[("config.json", OLD_CONFIG)]);
    let new = repo.commit(&[
        ("config.json", NEW_CONFIG),
        ("tokenizer_config.json", TOK_CONFIG),
    ]);
    server.add_repo(REPO, repo);
    Fixture {
        server,
        cache: tempfile::tempdir().unwrap(),
        old,
        new,
    }
}

fn settings_for(endpoint: &str, cache: &Path, tweak: impl FnOnce(&mut HubFlags)) -> HubSettings {
    let mut flags = HubFlags {
        endpoint: Some(endpoint.to_string()),
        cache_dir: Some(cache.to_path_buf()),
        timeout_secs: Some(2),
        ..HubFlags::default()
    };
    tweak(&mut flags);
    HubSettings::resolve(&flags, &|k| match k {
        "HF_TOKEN" => Some(TOKEN.to_string()),
        "HOME" => Some("/nonexistent-home".to_string()),
        _ => None,
    })
    .unwrap()
}

impl Fixture {
    fn settings(&self) -> HubSettings {
        settings_for(&self.server.url, self.cache.path(), |_| {})
    }
    fn with(&self, tweak: impl FnOnce(&mut HubFlags)) -> HubSettings {
        settings_for(&self.server.url, self.cache.path(), tweak)
    }
}

fn repo(s: &str) -> RepoRef {
    s.parse().unwrap()
}

/// The error, after checking it names repo/revision/file and never shows the token.
fn failing(settings: &HubSettings, r: &str, file: &str) -> HubError {
    let err = fetch_file(settings, &repo(r), file).expect_err("expected an error");
    let shown = format!("{err} {err:?} {}", dflash_check::Error::from(err.clone()));
    assert!(!shown.contains(TOKEN), "token leaked: {shown}");
    assert!(!shown.contains("SENTINEL"), "token leaked: {shown}");
    assert!(
        err.message.contains(REPO) || err.message.contains(r),
        "{shown}"
    );
    err
}

fn no_partial_files(cache: &Path) {
    let mut stack = vec![cache.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            assert!(
                !p.to_string_lossy().contains("incomplete"),
                "partial file left: {p:?}"
            );
            if p.is_dir() && !p.is_symlink() {
                stack.push(p);
            }
        }
    }
}

fn blobs(cache: &Path) -> usize {
    std::fs::read_dir(cache.join("models--z-lab--Test-DFlash-b16/blobs"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn cold_then_warm_fetch_resolves_the_branch_and_counts_requests() {
    let f = fixture();
    let s = f.settings();
    let got = fetch_file(&s, &repo(REPO), "config.json").unwrap();
    assert_eq!(got.sha, f.new);
    assert_eq!(got.revision, "main");
    assert_eq!(got.bytes, NEW_CONFIG);
    assert_eq!(got.freshness, Freshness::Hub);
    assert!(got
        .path
        .ends_with(format!("snapshots/{}/config.json", f.new)));
    let tok = fetch_optional_file(&s, &repo(REPO), "tokenizer_config.json")
        .unwrap()
        .unwrap();
    assert_eq!(tok.bytes, TOK_CONFIG);
    let cold = f.server.log();
    // What hf-hub 1.0 asks: our HEAD (sha, ETag, size), its own HEAD, then the GET at the sha.
    let shape: Vec<String> = cold
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        shape,
        [
            format!("HEAD /{REPO}/resolve/main/config.json"),
            format!("HEAD /{REPO}/resolve/{}/config.json", f.new),
            format!("GET /{REPO}/resolve/{}/config.json", f.new),
            format!("HEAD /{REPO}/resolve/main/tokenizer_config.json"),
            format!("HEAD /{REPO}/resolve/{}/tokenizer_config.json", f.new),
            format!("GET /{REPO}/resolve/{}/tokenizer_config.json", f.new),
        ]
    );
    for r in &cold {
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        assert!(r.header("user-agent").unwrap().starts_with("dflash-check/"));
    }
    let cold_body: usize = cold.iter().map(|r| r.body_bytes).sum();
    assert_eq!(cold_body, NEW_CONFIG.len() + TOK_CONFIG.len());

    f.server.clear_log();
    let again = fetch_file(&s, &repo(REPO), "config.json").unwrap();
    fetch_optional_file(&s, &repo(REPO), "tokenizer_config.json")
        .unwrap()
        .unwrap();
    assert_eq!(
        (again.sha.as_str(), again.freshness.clone()),
        (f.new.as_str(), Freshness::Hub)
    );
    let warm = f.server.log();
    assert_eq!(
        warm.len(),
        2,
        "warm fetch of a branch = one HEAD per file: {warm:?}"
    );
    assert!(warm.iter().all(|r| r.method == "HEAD" && r.body_bytes == 0));
    eprintln!(
        "measured: cold {} requests / {} body bytes, warm {} requests / 0 body bytes",
        cold.len(),
        cold_body,
        warm.len()
    );
    no_partial_files(f.cache.path());
}

#[test]
fn pinned_sha_in_cache_needs_zero_requests_and_drift_is_visible() {
    let f = fixture();
    let s = f.settings();
    let pinned = repo(&format!("{REPO}@{}", f.old));
    let first = fetch_file(&s, &pinned, "config.json").unwrap();
    assert_eq!(
        (first.sha.as_str(), first.bytes.as_slice()),
        (f.old.as_str(), OLD_CONFIG)
    );
    assert_eq!(first.freshness, Freshness::Hub);
    let before = f.server.requests();
    let second = fetch_file(&s, &pinned, "config.json").unwrap();
    assert_eq!(second.freshness, Freshness::Pinned);
    assert_eq!(second.bytes, OLD_CONFIG);
    assert_eq!(
        f.server.requests(),
        before,
        "a cached pinned sha must not touch the network"
    );
    // Even with a dead endpoint.
    let dead = settings_for(&dead_endpoint(), f.cache.path(), |fl| {
        fl.require_fresh = true
    });
    assert_eq!(
        fetch_file(&dead, &pinned, "config.json").unwrap().freshness,
        Freshness::Pinned
    );

    // A file missing at a pinned sha is remembered in .no_exist: no request the second time.
    assert!(fetch_optional_file(&s, &pinned, "tokenizer_config.json")
        .unwrap()
        .is_none());
    let before = f.server.requests();
    assert!(fetch_optional_file(&s, &pinned, "tokenizer_config.json")
        .unwrap()
        .is_none());
    assert_eq!(f.server.requests(), before);

    // The branch moves: the answer follows and says so by its sha.
    let main = fetch_file(&s, &repo(REPO), "config.json").unwrap();
    assert_eq!(main.sha, f.new);
    f.server.set_ref(REPO, "main", &f.old);
    let moved = fetch_file(&s, &repo(REPO), "config.json").unwrap();
    assert_eq!(
        (moved.sha.as_str(), moved.bytes.as_slice()),
        (f.old.as_str(), OLD_CONFIG)
    );
}

#[test]
fn offline_reads_the_cache_without_any_request() {
    let f = fixture();
    fetch_file(&f.settings(), &repo(REPO), "config.json").unwrap();
    let before = f.server.requests();
    let offline = f.with(|fl| fl.offline = true);
    let got = fetch_file(&offline, &repo(REPO), "config.json").unwrap();
    assert_eq!(got.sha, f.new, "refs/main gives the sha offline");
    assert_eq!(
        got.freshness,
        Freshness::Cache {
            reason: "offline (--offline)".into()
        }
    );
    let err = failing(&offline, REPO, "generation_config.json");
    assert_eq!(err.kind, HubErrorKind::NotInCache);
    assert!(err.message.contains("generation_config.json") && err.message.contains("main"));
    let err = failing(
        &f.with(|fl| {
            fl.offline = true;
            fl.require_fresh = true
        }),
        REPO,
        "config.json",
    );
    assert_eq!(err.kind, HubErrorKind::NotFresh);
    assert_eq!(
        f.server.requests(),
        before,
        "offline must not send requests"
    );

    // HF_HUB_OFFLINE=1 in the environment does the same.
    let env_offline = HubSettings::resolve(
        &HubFlags {
            endpoint: Some(f.server.url.clone()),
            cache_dir: Some(f.cache.path().to_path_buf()),
            ..HubFlags::default()
        },
        &|k| (k == "HF_HUB_OFFLINE").then(|| "1".to_string()),
    )
    .unwrap();
    let got = fetch_file(&env_offline, &repo(REPO), "config.json").unwrap();
    assert!(
        matches!(got.freshness, Freshness::Cache { ref reason } if reason.contains("HF_HUB_OFFLINE"))
    );
    assert_eq!(f.server.requests(), before);
}

#[test]
fn unreachable_hub_falls_back_to_a_labelled_cached_copy() {
    let f = fixture();
    fetch_file(&f.settings(), &repo(REPO), "config.json").unwrap();
    let dead = settings_for(&dead_endpoint(), f.cache.path(), |_| {});
    let got = fetch_file(&dead, &repo(REPO), "config.json").unwrap();
    assert_eq!(got.sha, f.new);
    match &got.freshness {
        Freshness::Cache { reason } => assert!(reason.starts_with("Hub unreachable: "), "{reason}"),
        other => panic!("expected a cached answer, got {other:?}"),
    }
    let strict = settings_for(&dead_endpoint(), f.cache.path(), |fl| {
        fl.require_fresh = true
    });
    let err = failing(&strict, REPO, "config.json");
    assert_eq!(err.kind, HubErrorKind::NotFresh);
    assert!(err.hint.unwrap().contains(&f.new));
    // Nothing cached for this file: the unreachable error itself.
    let err = failing(&dead, REPO, "tokenizer_config.json");
    assert_eq!(err.kind, HubErrorKind::Unreachable);
    assert!(err.message.contains("cannot reach"), "{err}");
}

#[test]
fn not_found_errors_are_told_apart() {
    let f = fixture();
    let s = f.settings();
    let err = failing(&s, "z-lab/No-Such-Repo", "config.json");
    assert_eq!(err.kind, HubErrorKind::RepoNotFound);
    assert!(err.message.contains("z-lab/No-Such-Repo"), "{err}");
    let err = failing(&s, &format!("{REPO}@no-such-branch"), "config.json");
    assert_eq!(err.kind, HubErrorKind::RevisionNotFound);
    assert!(
        err.message.contains("no-such-branch") && err.message.contains("config.json"),
        "{err}"
    );
    let err = failing(&s, REPO, "generation_config.json");
    assert_eq!(err.kind, HubErrorKind::EntryNotFound);
    assert!(
        err.message.contains("generation_config.json") && err.message.contains("main"),
        "{err}"
    );
    assert!(
        fetch_optional_file(&s, &repo(REPO), "generation_config.json")
            .unwrap()
            .is_none()
    );
    // The real Hub answers 401 + RepoNotFound for a repo it will not admit exists.
    f.server
        .status_fault(Some("HEAD"), 401, &[("X-Error-Code", "RepoNotFound")]);
    assert_eq!(
        failing(&s, REPO, "config.json").kind,
        HubErrorKind::RepoNotFound
    );
}

#[test]
fn gated_and_forbidden_say_what_to_do() {
    let f = fixture();
    let s = f.settings();
    f.server.status_fault(
        Some("HEAD"),
        401,
        &[
            ("X-Error-Code", "GatedRepo"),
            ("X-Error-Message", "Access to model is restricted."),
        ],
    );
    let err = failing(&s, REPO, "config.json");
    assert_eq!(err.kind, HubErrorKind::AuthRequired);
    let hint = err.hint.clone().unwrap();
    assert!(
        hint.contains("HF_TOKEN") && hint.contains(&format!("{}/{REPO}", f.server.url)),
        "{hint}"
    );
    assert!(
        err.message.contains("config.json") && err.message.contains("main"),
        "{err}"
    );

    f.server
        .status_fault(Some("HEAD"), 403, &[("X-Error-Code", "GatedRepo")]);
    let err = failing(&s, REPO, "config.json");
    assert_eq!(err.kind, HubErrorKind::Forbidden);
    assert!(
        err.hint.unwrap().contains("accept"),
        "gated 403 should mention accepting the terms"
    );

    // A server that echoes the token back must not get it into our message.
    f.server.status_fault(
        Some("HEAD"),
        403,
        &[("X-Error-Message", &format!("token {TOKEN} lacks scope"))],
    );
    let err = failing(&s, REPO, "config.json");
    assert!(err.message.contains("<redacted>"), "{err}");
}

#[test]
fn rate_limit_says_when_to_retry() {
    let f = fixture();
    for _ in 0..3 {
        f.server
            .status_fault(Some("HEAD"), 429, &[("Retry-After", "7")]);
    }
    let err = failing(&f.settings(), REPO, "config.json");
    assert_eq!(err.kind, HubErrorKind::RateLimited);
    assert!(err.hint.unwrap().contains("retry in 7 s"));
    assert_eq!(f.server.requests(), 3, "bounded retries");
}

#[test]
fn server_errors_are_retried_then_reported() {
    let f = fixture();
    f.server.status_fault(Some("HEAD"), 503, &[]);
    f.server.status_fault(Some("HEAD"), 502, &[]);
    let got = fetch_file(&f.settings(), &repo(REPO), "config.json").unwrap();
    assert_eq!(got.freshness, Freshness::Hub);
    assert_eq!(f.server.requests(), 5, "two failures, then HEAD, HEAD, GET");

    let g = fixture();
    for _ in 0..3 {
        g.server.status_fault(Some("HEAD"), 500, &[]);
    }
    let err = failing(&g.settings(), REPO, "config.json");
    assert_eq!(err.kind, HubErrorKind::Server);
    assert!(
        err.message.contains("500") && err.message.contains("3 attempts"),
        "{err}"
    );

    // With a cached copy the same failure yields the copy, labelled.
    fetch_file(&g.settings(), &repo(REPO), "config.json").unwrap();
    for _ in 0..3 {
        g.server.status_fault(Some("HEAD"), 503, &[]);
    }
    let got = fetch_file(&g.settings(), &repo(REPO), "config.json").unwrap();
    assert!(
        matches!(got.freshness, Freshness::Cache { ref reason } if reason.starts_with("Hub unavailable"))
    );
}

#[test]
fn stalled_body_times_out_and_caches_nothing() {
    let f = fixture();
    f.server
        .fault(Some("GET"), Fault::StallBody(Duration::from_secs(4)));
    let s = f.with(|fl| fl.timeout_secs = Some(1));
    let started = std::time::Instant::now();
    let err = failing(&s, REPO, "config.json");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(err.kind, HubErrorKind::Timeout, "{err}");
    assert!(err.message.contains("within 1 s"), "{err}");
    assert_eq!(blobs(f.cache.path()), 0);
    no_partial_files(f.cache.path());
}

#[test]
fn truncated_or_corrupt_bodies_never_reach_the_cache() {
    let f = fixture();
    let s = f.settings();
    f.server.fault(Some("GET"), Fault::Truncate);
    let err = failing(&s, REPO, "config.json");
    assert_eq!(err.kind, HubErrorKind::BadResponse, "{err}");
    f.server.fault(Some("GET"), Fault::Corrupt);
    let err = failing(&s, REPO, "config.json");
    assert!(err.message.contains("does not match its ETag"), "{err}");
    assert_eq!(blobs(f.cache.path()), 0);
    assert!(!f
        .cache
        .path()
        .join(format!(
            "models--z-lab--Test-DFlash-b16/snapshots/{}/config.json",
            f.new
        ))
        .exists());
    no_partial_files(f.cache.path());
    // And the next clean fetch works.
    assert_eq!(
        fetch_file(&s, &repo(REPO), "config.json").unwrap().bytes,
        NEW_CONFIG
    );
}

#[test]
fn enormous_files_are_refused_before_download() {
    let f = fixture();
    f.server.fault(Some("HEAD"), Fault::HugeLength(10 << 30));
    let err = failing(&f.settings(), REPO, "config.json");
    assert_eq!(err.kind, HubErrorKind::TooLarge);
    assert!(err.message.contains("4.0 MiB"), "{err}");
    assert_eq!(
        f.server.requests(),
        1,
        "only the HEAD: {:?}",
        f.server.log()
    );
}

#[test]
fn the_token_is_not_sent_to_another_host() {
    let f = fixture();
    let other = HubServer::start();
    let mut r = FakeRepo::default();
    r.commit(&[("config.json", NEW_CONFIG)]);
    other.add_repo(REPO, r);
    f.server
        .fault(Some("HEAD"), Fault::Redirect(other.url.clone()));
    let _ = fetch_file(&f.settings(), &repo(REPO), "config.json");
    assert!(other.requests() > 0, "the redirect was followed");
    for r in other.log() {
        assert_eq!(
            r.header("authorization"),
            None,
            "token sent to {}: {r:?}",
            other.url
        );
    }
}

#[test]
fn hostile_file_names_are_refused_without_requests() {
    let f = fixture();
    for name in ["../config.json", "/etc/passwd", "a//b", "a\\b", ""] {
        let err = fetch_file(&f.settings(), &repo(REPO), name).unwrap_err();
        assert_eq!(err.kind, HubErrorKind::InvalidInput, "{name}");
    }
    assert_eq!(f.server.requests(), 0);
}
