//! End to end against olah, a real Hub-compatible server, serving local git repos offline; and
//! cache interoperability with Python `huggingface_hub` both ways.
//!
//! Opt-in: run `scripts/olah-setup.sh` once, then `DFLASH_E2E_OLAH=1 cargo test --test hub_olah`.
//! Without `DFLASH_E2E_OLAH=1` every test prints "skipped: set DFLASH_E2E_OLAH=1" and passes.
//! `DFLASH_OLAH_VENV` / `DFLASH_HF_VENV` override the venv locations (default: `.venv-olah`,
//! `.venv-hf` at the crate root).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dflash_check::hub::{
    fetch_file, fetch_optional_file, Freshness, HubErrorKind, HubFlags, HubSettings, RepoRef,
};

const REPO: &str = "z-lab/Olah-DFlash-b16";
const OLD_CONFIG: &str = "{\n  \"architectures\": [\"DFlashDraftModel\"],\n  \"num_hidden_layers\": 8,\n  \"block_size\": 16\n}\n";
const NEW_CONFIG: &str = "{\n  \"architectures\": [\"DFlashDraftModel\"],\n  \"num_hidden_layers\": 6,\n  \"dflash_config\": {\"block_size\": 16}\n}\n";
const TOK_CONFIG: &str = "{\"added_tokens_decoder\": {}}\n";

fn enabled() -> bool {
    if std::env::var("DFLASH_E2E_OLAH").as_deref() == Ok("1") {
        return true;
    }
    println!("skipped: set DFLASH_E2E_OLAH=1 (after scripts/olah-setup.sh) to run the olah end-to-end tests");
    false
}

fn venv(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(default))
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

struct Olah {
    child: Option<Child>,
    url: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
    old: String,
    new: String,
}

impl Olah {
    /// A drafter repo with two commits whose config.json differ, served by olah on a free port.
    fn start() -> Olah {
        let dir = tempfile::tempdir().unwrap();
        let repo_dir = dir.path().join("mirrors/models").join(REPO);
        std::fs::create_dir_all(&repo_dir).unwrap();
        std::fs::create_dir_all(dir.path().join("repos")).unwrap();
        git(&repo_dir, &["init", "-q", "-b", "main"]);
        std::fs::write(repo_dir.join("config.json"), OLD_CONFIG).unwrap();
        git(&repo_dir, &["add", "."]);
        git(&repo_dir, &["commit", "-q", "-m", "flat layout, 8 layers"]);
        let old = git(&repo_dir, &["rev-parse", "HEAD"]);
        std::fs::write(repo_dir.join("config.json"), NEW_CONFIG).unwrap();
        std::fs::write(repo_dir.join("tokenizer_config.json"), TOK_CONFIG).unwrap();
        git(&repo_dir, &["add", "."]);
        git(
            &repo_dir,
            &["commit", "-q", "-m", "nested layout, 6 layers"],
        );
        let new = git(&repo_dir, &["rev-parse", "HEAD"]);

        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let d = dir.path().display();
        let toml = format!(
            "[basic]\nhost = \"127.0.0.1\"\nport = {port}\nrepos-path = \"{d}/repos\"\n\
             mirrors-path = [\"{d}/mirrors\"]\nmirror-netloc = \"127.0.0.1:{port}\"\n\
             mirror-lfs-netloc = \"127.0.0.1:{port}\"\nhf-scheme = \"http\"\n\
             hf-netloc = \"127.0.0.1:9\"\nhf-lfs-netloc = \"127.0.0.1:9\"\n\
             [accessibility]\noffline = true\n"
        );
        std::fs::write(dir.path().join("olah.toml"), toml).unwrap();
        let log = dir.path().join("olah.log");
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(venv("DFLASH_OLAH_VENV", ".venv-olah").join("bin/olah-cli"))
            .args(["-c", "olah.toml"])
            .current_dir(dir.path())
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("olah-cli (run scripts/olah-setup.sh)");
        let url = format!("http://127.0.0.1:{port}");
        let olah = Olah {
            child: Some(child),
            url,
            log,
            _dir: dir,
            old,
            new,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        let probe = format!("/api/models/{REPO}/revision/main");
        while http_status(port, &probe) != Some(200) {
            assert!(
                Instant::now() < deadline,
                "olah did not start: {}",
                olah.log_text()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        olah
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Requests olah has logged so far (uvicorn access lines), the readiness probes included.
    fn requests(&self) -> Vec<String> {
        self.log_text()
            .lines()
            .filter(|l| l.contains(" - \"HEAD ") || l.contains(" - \"GET "))
            .map(|l| l.split(" - \"").nth(1).unwrap_or("").to_string())
            .collect()
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Olah {
    fn drop(&mut self) {
        self.stop();
    }
}

fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).ok()?;
    buf.split_whitespace().nth(1)?.parse().ok()
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
    let mut olah = Olah::start();
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
    let olah = Olah::start();

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
