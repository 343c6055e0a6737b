//! End to end against olah, a real Hub-compatible server, serving local git repos offline; and
//! cache interoperability with Python `huggingface_hub` both ways.
//!
//! Opt-in: run `scripts/olah-setup.sh` once, then `DFLASH_E2E_OLAH=1 cargo test --test hub_olah`.
//! Without `DFLASH_E2E_OLAH=1` every test prints "skipped: set DFLASH_E2E_OLAH=1" and passes.
//! `DFLASH_OLAH_VENV` / `DFLASH_HF_VENV` override the venv locations (default: `.venv-olah`,
//! `.venv-hf` at the crate root).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::olah::{enabled, venv, Olah, RepoSpec};

use dflash_check::hub::{
    fetch_file, fetch_optional_file, Freshness, HubErrorKind, HubFlags, HubSettings, RepoRef,
};

const REPO: &str = "z-lab/Olah-DFlash-b16";
const OLD_CONFIG: &str = "{\n  \"architectures\": [\"DFlashDraftModel\"],\n  \"num_hidden_layers\": 8,\n  \"block_size\": 16\n}\n";
const NEW_CONFIG: &str = "{\n  \"architectures\": [\"DFlashDraftModel\"],\n  \"num_hidden_layers\": 6,\n  \"dflash_config\": {\"block_size\": 16}\n}\n";
const TOK_CONFIG: &str = "{\"added_tokens_decoder\": {}}\n";

/// olah serving the drafter repo: commit 0 (old, flat) and commit 1 (new, nested).
struct Fixture {
    olah: Olah,
    url: String,
    old: String,
    new: String,
}

impl Fixture {
    fn start() -> Fixture {
        let olah = Olah::start(&[RepoSpec {
            id: REPO,
            commits: vec![
                vec![("config.json", OLD_CONFIG.as_bytes())],
                vec![
                    ("config.json", NEW_CONFIG.as_bytes()),
                    ("tokenizer_config.json", TOK_CONFIG.as_bytes()),
                ],
            ],
        }]);
        let shas = olah.commits(REPO).to_vec();
        Fixture {
            url: olah.url.clone(),
            old: shas[0].clone(),
            new: shas[1].clone(),
            olah,
        }
    }

    fn requests(&self) -> Vec<String> {
        self.olah.requests()
    }

    fn stop(&mut self) {
        self.olah.stop();
    }
}

fn settings(endpoint: &str, cache: &Path, tweak: impl FnOnce(&mut HubFlags)) -> HubSettings {
    let mut flags = HubFlags {
        endpoint: Some(endpoint.to_string()),
        cache_dir: Some(cache.to_path_buf()),
        timeout_secs: Some(10),
        ..HubFlags::default()
    };
    tweak(&mut flags);
    HubSettings::resolve(&flags, &|k| {
        (k == "HOME").then(|| "/nonexistent".to_string())
    })
    .unwrap()
}

fn repo(s: &str) -> RepoRef {
    s.parse().unwrap()
}

/// Runs `hf_hub_download` in the huggingface_hub venv; returns (path, content).
fn python_download(
    endpoint: &str,
    cache: &Path,
    revision: Option<&str>,
    offline: bool,
) -> (PathBuf, String) {
    let py = venv("DFLASH_HF_VENV", ".venv-hf").join("bin/python");
    let rev = revision.map(|r| format!("'{r}'")).unwrap_or("None".into());
    let script = format!(
        "from huggingface_hub import hf_hub_download\n\
         p = hf_hub_download('{REPO}', 'config.json', revision={rev})\n\
         print(p)\nprint(open(p).read(), end='')\n"
    );
    let out = Command::new(py)
        .args(["-c", &script])
        .env("HF_ENDPOINT", endpoint)
        .env("HF_HUB_CACHE", cache)
        .env("HF_HUB_OFFLINE", if offline { "1" } else { "0" })
        .env("HF_HUB_DISABLE_TELEMETRY", "1")
        .env("HF_HUB_DISABLE_XET", "1")
        .env_remove("HF_TOKEN")
        .output()
        .expect("python (run scripts/olah-setup.sh)");
    assert!(
        out.status.success(),
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (path, content) = text.split_once('\n').unwrap();
    (PathBuf::from(path), content.to_string())
}

#[test]
fn branch_pinned_sha_drift_and_server_gone() {
    if !enabled() {
        return;
    }
    let mut olah = Fixture::start();
    let cache = tempfile::tempdir().unwrap();
    let s = settings(&olah.url, cache.path(), |_| {});

    let before = olah.requests().len();
    let main = fetch_file(&s, &repo(REPO), "config.json").unwrap();
    assert_eq!(main.sha, olah.new, "main resolves to the newest commit");
    assert_eq!(main.bytes, NEW_CONFIG.as_bytes());
    assert_eq!(main.freshness, Freshness::Hub);
    let tok = fetch_optional_file(&s, &repo(REPO), "tokenizer_config.json")
        .unwrap()
        .unwrap();
    assert_eq!(tok.bytes, TOK_CONFIG.as_bytes());
    let cold = olah.requests()[before..].to_vec();

    let pinned = repo(&format!("{REPO}@{}", olah.old));
    let old = fetch_file(&s, &pinned, "config.json").unwrap();
    assert_eq!(
        (old.sha.as_str(), old.bytes.as_slice()),
        (olah.old.as_str(), OLD_CONFIG.as_bytes())
    );
    assert!(fetch_optional_file(&s, &pinned, "tokenizer_config.json")
        .unwrap()
        .is_none());

    let before = olah.requests().len();
    fetch_file(&s, &repo(REPO), "config.json").unwrap();
    fetch_optional_file(&s, &repo(REPO), "tokenizer_config.json")
        .unwrap()
        .unwrap();
    let warm = olah.requests()[before..].to_vec();
    let before = olah.requests().len();
    assert_eq!(
        fetch_file(&s, &pinned, "config.json").unwrap().freshness,
        Freshness::Pinned
    );
    assert_eq!(
        olah.requests().len(),
        before,
        "cached pinned sha: zero requests"
    );
    println!(
        "olah cold config.json + tokenizer_config.json: {} requests {cold:?}",
        cold.len()
    );
    println!("olah warm: {} requests {warm:?}", warm.len());

    olah.stop();
    let gone = fetch_file(&s, &repo(REPO), "config.json").unwrap();
    assert_eq!(gone.sha, olah.new);
    assert!(
        matches!(&gone.freshness, Freshness::Cache { reason } if reason.starts_with("Hub unreachable")),
        "{:?}",
        gone.freshness
    );
    let strict = settings(&olah.url, cache.path(), |f| f.require_fresh = true);
    let err = fetch_file(&strict, &repo(REPO), "config.json").unwrap_err();
    assert_eq!(err.kind, HubErrorKind::NotFresh, "{err}");
}

#[test]
fn python_reads_our_cache_and_we_read_pythons() {
    if !enabled() {
        return;
    }
    let olah = Fixture::start();

    // Ours → Python (offline: Python must find everything in the cache we wrote).
    let ours = tempfile::tempdir().unwrap();
    let s = settings(&olah.url, ours.path(), |_| {});
    let main = fetch_file(&s, &repo(REPO), "config.json").unwrap();
    let old = fetch_file(&s, &repo(&format!("{REPO}@{}", olah.old)), "config.json").unwrap();
    let (p, text) = python_download(&olah.url, ours.path(), None, true);
    assert_eq!((p, text.as_str()), (main.path.clone(), NEW_CONFIG));
    let (p, text) = python_download(&olah.url, ours.path(), Some(&olah.old), true);
    assert_eq!((p, text.as_str()), (old.path.clone(), OLD_CONFIG));

    // Python → ours, with zero requests.
    let theirs = tempfile::tempdir().unwrap();
    python_download(&olah.url, theirs.path(), None, false);
    python_download(&olah.url, theirs.path(), Some(&olah.old), false);
    let before = olah.requests().len();
    let offline = settings(&olah.url, theirs.path(), |f| f.offline = true);
    let main = fetch_file(&offline, &repo(REPO), "config.json").unwrap();
    assert_eq!(
        (main.sha.as_str(), main.bytes.as_slice()),
        (olah.new.as_str(), NEW_CONFIG.as_bytes())
    );
    assert!(matches!(main.freshness, Freshness::Cache { .. }));
    let online = settings(&olah.url, theirs.path(), |_| {});
    let old = fetch_file(
        &online,
        &repo(&format!("{REPO}@{}", olah.old)),
        "config.json",
    )
    .unwrap();
    assert_eq!(
        (old.bytes.as_slice(), old.freshness),
        (OLD_CONFIG.as_bytes(), Freshness::Pinned)
    );
    assert_eq!(
        olah.requests().len(),
        before,
        "reading Python's cache sent requests"
    );
}
