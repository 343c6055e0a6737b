//! olah, a real Hub-compatible server, serving local git repos offline on a free 127.0.0.1
//! port, for end-to-end tests. Opt-in: `scripts/olah-setup.sh` once, then `DFLASH_E2E_OLAH=1`.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether the olah tests are enabled; prints why not otherwise.
pub fn enabled() -> bool {
    if std::env::var("DFLASH_E2E_OLAH").as_deref() == Ok("1") {
        return true;
    }
    println!("skipped: set DFLASH_E2E_OLAH=1 (after scripts/olah-setup.sh) to run the olah end-to-end tests");
    false
}

/// A venv named by `var`, else `default` at the crate root.
pub fn venv(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(default))
}

pub fn git(dir: &Path, args: &[&str]) -> String {
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

/// One repo: its id and its commits, oldest first, each a list of files written then committed.
pub struct RepoSpec<'a> {
    pub id: &'a str,
    pub commits: Vec<Vec<(&'a str, &'a [u8])>>,
}

pub struct Olah {
    child: Option<Child>,
    pub url: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
    /// repo id -> commit shas, oldest first.
    pub shas: BTreeMap<String, Vec<String>>,
}

impl Olah {
    pub fn start(repos: &[RepoSpec]) -> Olah {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("repos")).unwrap();
        let mut shas = BTreeMap::new();
        for spec in repos {
            let repo_dir = dir.path().join("mirrors/models").join(spec.id);
            std::fs::create_dir_all(&repo_dir).unwrap();
            git(&repo_dir, &["init", "-q", "-b", "main"]);
            let mut list = Vec::new();
            for (i, files) in spec.commits.iter().enumerate() {
                for (name, bytes) in files {
                    std::fs::write(repo_dir.join(name), bytes).unwrap();
                }
                git(&repo_dir, &["add", "."]);
                git(&repo_dir, &["commit", "-q", "-m", &format!("commit {i}")]);
                list.push(git(&repo_dir, &["rev-parse", "HEAD"]));
            }
            shas.insert(spec.id.to_string(), list);
        }
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
        let olah = Olah {
            child: Some(child),
            url: format!("http://127.0.0.1:{port}"),
            log,
            _dir: dir,
            shas,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        let probe = format!("/api/models/{}/revision/main", repos[0].id);
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

    /// The shas of `repo`, oldest first.
    pub fn commits(&self, repo: &str) -> &[String] {
        &self.shas[repo]
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Requests olah has logged so far (uvicorn access lines), the readiness probes included.
    pub fn requests(&self) -> Vec<String> {
        self.log_text()
            .lines()
            .filter(|l| l.contains(" - \"HEAD ") || l.contains(" - \"GET "))
            .map(|l| l.split(" - \"").nth(1).unwrap_or("").to_string())
            .collect()
    }

    pub fn stop(&mut self) {
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

/// The incident's drafter and target as the Hub serves them, from the repository's own files:
/// `z-lab/Qwen3.6-27B-DFlash` (the authority's config) and `Qwen/Qwen3.6-27B`
/// (fixtures/targets/Qwen3.6-27B: config and tokenizer files), one commit each.
pub struct IncidentRepos {
    authority: Vec<u8>,
    target: Vec<(&'static str, Vec<u8>)>,
}

impl IncidentRepos {
    pub const DRAFTER: &'static str = "z-lab/Qwen3.6-27B-DFlash";
    pub const TARGET: &'static str = "Qwen/Qwen3.6-27B";

    pub fn read() -> IncidentRepos {
        let read = |p: &str| std::fs::read(p).unwrap();
        IncidentRepos {
            authority: read("fixtures/incident/authority/config.json"),
            target: ["config.json", "tokenizer.json", "tokenizer_config.json"]
                .into_iter()
                .map(|f| (f, read(&format!("fixtures/targets/Qwen3.6-27B/{f}"))))
                .collect(),
        }
    }

    /// The two repos, for [`Olah::start`].
    pub fn specs(&self) -> Vec<RepoSpec<'_>> {
        vec![
            RepoSpec {
                id: Self::DRAFTER,
                commits: vec![vec![("config.json", &self.authority)]],
            },
            RepoSpec {
                id: Self::TARGET,
                commits: vec![self
                    .target
                    .iter()
                    .map(|(f, bytes)| (*f, bytes.as_slice()))
                    .collect()],
            },
        ]
    }
}
