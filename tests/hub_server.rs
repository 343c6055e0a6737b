//! The Hub client against an in-process imitation of the Hub (tests/support): every success and
//! failure path, the request counts, and that the token never leaks.

mod support;

use std::path::Path;
use std::time::Duration;

use dflash_check::hub::{
    fetch_file, fetch_optional_file, fetch_safetensors_header, Freshness, HeaderAnswer, HubError,
    HubErrorKind, HubFlags, HubSettings, RepoRef, MAX_CONFIG_BYTES,
};
use support::{dead_endpoint, FakeRepo, Fault, HubServer, Tweak};

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

/// The fixture's repo and its (old, new) shas: the same wherever it is served.
fn same_repo() -> (FakeRepo, String, String) {
    let mut repo = FakeRepo::default();
    let old = repo.commit(&[("config.json", OLD_CONFIG)]);
    let new = repo.commit(&[
        ("config.json", NEW_CONFIG),
        ("tokenizer_config.json", TOK_CONFIG),
    ]);
    (repo, old, new)
}

fn fixture() -> Fixture {
    let server = HubServer::start();
    let (repo, old, new) = same_repo();
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
    // One HEAD (sha, ETag, size), then one GET at the sha.
    let shape: Vec<String> = cold
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        shape,
        [
            format!("HEAD /{REPO}/resolve/main/config.json"),
            format!("GET /{REPO}/resolve/{}/config.json", f.new),
            format!("HEAD /{REPO}/resolve/main/tokenizer_config.json"),
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
    assert_eq!(f.server.requests(), 4, "two failures, then HEAD, GET");

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
    // A HEAD is not followed off the endpoint: the redirect itself is the answer (and
    // this one lacks the Hub's headers).
    f.server
        .fault(Some("HEAD"), Fault::Redirect(other.url.clone()));
    let err = failing(&f.settings(), REPO, "config.json");
    assert_eq!(err.kind, HubErrorKind::BadResponse, "{err}");
    assert_eq!(other.requests(), 0);
    // A GET is (the Hub sends downloads to its CDN), without the token.
    f.server
        .fault(Some("GET"), Fault::Redirect(other.url.clone()));
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

// Hostile servers (issue 20): the token stays with the endpoint, sizes from the network are
// checked before use, every request ends within --timeout, bodies are read up to the cap only,
// and an ETag that is not a content hash is refused.

/// `Authorization` as each request to `server` carried it.
fn auth_seen(server: &HubServer) -> Vec<(String, Option<String>)> {
    server
        .log()
        .into_iter()
        .map(|r| {
            let auth = r.header("authorization").map(str::to_string);
            (format!("{} {}", r.method, r.path), auth)
        })
        .collect()
}

fn tweak(t: Tweak) -> Fault {
    Fault::Tweak(t)
}

fn header(k: &str, v: &str) -> Vec<(String, String)> {
    vec![(k.to_string(), v.to_string())]
}

/// Runs `f` on a thread and gives up after `limit`: a test of a hang must not hang itself.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).ok()
}

#[test]
fn the_token_stays_with_the_endpoint_through_a_redirect_chain() {
    // A (the endpoint) -> B -> B, B under another host name (`localhost`) and under another
    // port of the same host: B must never see the token, on any hop.
    for other_host in ["localhost", "127.0.0.1"] {
        let f = fixture();
        let b = HubServer::start();
        b.add_repo(REPO, same_repo().0);
        let b_url = b.url_as(other_host);
        f.server.fault(Some("GET"), Fault::Redirect(b_url.clone()));
        b.fault(Some("GET"), Fault::Redirect(b_url.clone()));
        let got = fetch_file(&f.settings(), &repo(REPO), "config.json");
        let seen = auth_seen(&b);
        assert!(seen.len() >= 2, "the chain reached B twice: {seen:?}");
        assert!(
            seen.iter().all(|(_, auth)| auth.is_none()),
            "token sent to {b_url}: {seen:?}"
        );
        // The file B served is the one the endpoint's ETag names: the fetch succeeds.
        assert_eq!(got.unwrap().bytes, NEW_CONFIG);
        // The endpoint itself did get it (that is where it belongs).
        assert!(auth_seen(&f.server).iter().all(|(_, a)| a.is_some()));
    }
}

#[test]
fn a_chain_that_left_the_endpoint_does_not_get_the_token_back() {
    // A -> B -> A: the second request to A was chosen by B, so it goes without the token.
    let f = fixture();
    let b = HubServer::start();
    let b_url = b.url_as("localhost");
    f.server.fault(Some("GET"), Fault::Redirect(b_url));
    b.fault(Some("GET"), Fault::Redirect(f.server.url.clone()));
    let got = fetch_file(&f.settings(), &repo(REPO), "config.json").unwrap();
    assert_eq!(got.bytes, NEW_CONFIG);
    let a = auth_seen(&f.server);
    let gets: Vec<_> = a.iter().filter(|(r, _)| r.starts_with("GET")).collect();
    assert_eq!(gets.len(), 2, "{a:?}");
    assert!(
        gets[0].1.is_some(),
        "the first hop is the endpoint's: {a:?}"
    );
    assert!(gets[1].1.is_none(), "token sent back after leaving: {a:?}");
    assert!(auth_seen(&b).iter().all(|(_, a)| a.is_none()));
}

#[test]
fn range_reads_keep_the_token_with_the_endpoint_too() {
    let header_file: Vec<u8> = {
        let json = b"{\"__metadata__\":{}}";
        let mut v = (json.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(json);
        v
    };
    let f = fixture();
    let mut r = FakeRepo::default();
    let sha = r.commit(&[("model.safetensors", &header_file)]);
    f.server.add_repo("z-lab/Weights", r.clone());
    let b = HubServer::start();
    b.add_repo("z-lab/Weights", r);
    let b_url = b.url_as("localhost");
    f.server.fault(Some("GET"), Fault::Redirect(b_url.clone()));
    b.fault(Some("GET"), Fault::Redirect(b_url.clone()));
    let got = fetch_safetensors_header(&f.settings(), "z-lab/Weights", &sha, "model.safetensors");
    let seen = auth_seen(&b);
    assert!(seen.len() >= 2, "the chain reached B twice: {seen:?}");
    assert!(
        seen.iter().all(|(_, auth)| auth.is_none()),
        "token sent to {b_url}: {seen:?}"
    );
    match got.unwrap() {
        HeaderAnswer::Found(h) => assert_eq!(h.prefix, header_file),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_size_no_file_can_have_is_refused_not_a_crash() {
    // X-Linked-Size: u64::MAX on the GET (hf-hub preallocated its buffer from it and
    // aborted): refused before use.
    let f = fixture();
    f.server.fault(
        Some("GET"),
        tweak(Tweak {
            headers: header("X-Linked-Size", &u64::MAX.to_string()),
            ..Tweak::default()
        }),
    );
    let got = within(Duration::from_secs(20), {
        let s = f.settings();
        move || fetch_file(&s, &repo(REPO), "config.json").map(|f| f.bytes)
    })
    .expect("no answer within 20 s");
    let err = got.expect_err("a size over the cap is an error");
    assert_eq!(err.kind, HubErrorKind::TooLarge, "{err}");
    assert!(err.message.contains("4.0 MiB"), "{err}");
    assert_eq!(blobs(f.cache.path()), 0);

    // The same number as the GET's Content-Length: refused before reading the body.
    let g = fixture();
    g.server.fault(Some("GET"), Fault::HugeLength(u64::MAX));
    let err = failing(&g.settings(), REPO, "config.json");
    assert!(
        matches!(err.kind, HubErrorKind::TooLarge | HubErrorKind::BadResponse),
        "{err}"
    );
    assert_eq!(blobs(g.cache.path()), 0);
}

#[test]
fn a_xet_file_with_a_dripping_body_ends_within_the_timeout() {
    // The answer names a xet hash (hf-hub then downloads from the CAS server the Hub names,
    // without our timeout: ours never answers) and the body arrives a byte every 300 ms.
    let f = fixture();
    let xet = "a".repeat(64);
    f.server.fault(Some("HEAD"), Fault::Pass);
    f.server.fault(
        None,
        tweak(Tweak {
            headers: header("X-Xet-Hash", &xet),
            drip: Some(Duration::from_millis(300)),
            ..Tweak::default()
        }),
    );
    let s = f.with(|fl| fl.timeout_secs = Some(2));
    let started = std::time::Instant::now();
    let got = within(Duration::from_secs(30), move || {
        fetch_file(&s, &repo(REPO), "config.json").map(|f| f.bytes)
    });
    let took = started.elapsed();
    let got = got.unwrap_or_else(|| panic!("still running after {took:?} with --timeout 2"));
    let err = got.expect_err("a body slower than the timeout is an error");
    assert_eq!(err.kind, HubErrorKind::Timeout, "{err}");
    assert!(
        took < Duration::from_secs(5),
        "took {took:?} with --timeout 2"
    );
    assert_eq!(blobs(f.cache.path()), 0);
    no_partial_files(f.cache.path());
}

#[test]
fn a_body_over_the_cap_is_read_up_to_the_cap_only() {
    // No size anywhere (HEAD and GET give no Content-Length), then 256 MiB of body.
    let f = fixture();
    let flood = Tweak {
        flood: Some(256 << 20),
        ..Tweak::default()
    };
    f.server.fault(Some("HEAD"), tweak(flood.clone()));
    f.server.fault(Some("HEAD"), tweak(flood.clone()));
    f.server.fault(Some("GET"), tweak(flood));
    let err = failing(
        &f.with(|fl| fl.timeout_secs = Some(20)),
        REPO,
        "config.json",
    );
    assert_eq!(err.kind, HubErrorKind::TooLarge, "{err}");
    assert!(err.message.contains("4.0 MiB"), "{err}");
    // The server logs a flood once the client hangs up: how much it managed to send.
    let mut sent = None;
    for _ in 0..100 {
        sent = f
            .server
            .log()
            .iter()
            .find(|r| r.method == "GET")
            .map(|r| r.body_bytes);
        if sent.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let sent = sent.expect("the GET was logged") as u64;
    eprintln!(
        "measured: the client took {sent} of 268435456 flooded bytes (cap {MAX_CONFIG_BYTES})"
    );
    // The cap plus what the kernel's socket buffers hold, not the whole stream.
    assert!(sent < 64 << 20, "read {sent} bytes of a 256 MiB flood");
    assert_eq!(blobs(f.cache.path()), 0);
    no_partial_files(f.cache.path());
}

#[test]
fn an_etag_that_is_not_a_hash_cannot_vouch_for_altered_content() {
    let f = fixture();
    let etag = header("ETag", "\"abc\"");
    let plain = Tweak {
        headers: etag.clone(),
        ..Tweak::default()
    };
    f.server.fault(Some("HEAD"), tweak(plain.clone()));
    f.server.fault(Some("HEAD"), tweak(plain));
    f.server.fault(
        Some("GET"),
        tweak(Tweak {
            headers: etag,
            corrupt: true,
            ..Tweak::default()
        }),
    );
    let err = failing(&f.settings(), REPO, "config.json");
    assert_eq!(err.kind, HubErrorKind::BadResponse, "{err}");
    assert!(err.message.contains("abc"), "{err}");
    assert_eq!(blobs(f.cache.path()), 0);
    no_partial_files(f.cache.path());
}

#[test]
fn an_lfs_file_redirected_to_a_cdn_is_resolved_from_the_redirect_and_checked_by_sha256() {
    // As the Hub serves LFS files: the HEAD and the GET at the endpoint answer 302 to a CDN
    // (another origin); the 302 itself carries X-Repo-Commit, X-Linked-Etag (sha256) and
    // X-Linked-Size. The HEAD reads them there; the GET follows to the CDN without the token.
    let f = fixture();
    let cdn = HubServer::start();
    cdn.add_repo(REPO, same_repo().0);
    let sha256: String = {
        use sha2::{Digest, Sha256};
        Sha256::digest(NEW_CONFIG)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let size = NEW_CONFIG.len().to_string();
    let location = format!(
        "{}/{REPO}/resolve/{}/config.json",
        cdn.url_as("localhost"),
        f.new
    );
    let redirect = [
        ("Location", location.as_str()),
        ("X-Repo-Commit", f.new.as_str()),
        ("X-Linked-Etag", &format!("\"{sha256}\"")),
        ("X-Linked-Size", size.as_str()),
    ];
    f.server.status_fault(Some("HEAD"), 302, &redirect);
    f.server.status_fault(Some("GET"), 302, &redirect);
    let got = fetch_file(&f.settings(), &repo(REPO), "config.json").unwrap();
    assert_eq!(
        (got.sha.as_str(), got.bytes.as_slice()),
        (f.new.as_str(), NEW_CONFIG)
    );
    let cdn_log = auth_seen(&cdn);
    assert_eq!(
        cdn_log.len(),
        1,
        "only the GET reaches the CDN: {cdn_log:?}"
    );
    assert!(
        cdn_log[0].0.starts_with("GET") && cdn_log[0].1.is_none(),
        "{cdn_log:?}"
    );
    // Cached under the sha256, as huggingface_hub names LFS blobs.
    assert!(f
        .cache
        .path()
        .join("models--z-lab--Test-DFlash-b16/blobs")
        .join(&sha256)
        .is_file());
}
