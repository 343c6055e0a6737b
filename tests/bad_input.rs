//! The bad-input corpus: every case of `tests/bad-input/manifest.toml` run through every command
//! of [`RUNS`] with the real binary. For each (case, run) the harness checks that the process
//! exited 0, 1 or 2 by itself (never a panic, exit 101 or a signal), that an error (exit 2)
//! prints nothing on stdout and names the file, that the exit code is the one the manifest
//! expects, that nothing under the case's directory changed (or, for runs that write, that
//! nothing changed when the run failed), and that stdout/stderr match an insta snapshot
//! (`tests/bad-input/snapshots/`, temp paths normalised to `[TMP]`).
//!
//! All cases run in one test so a failure lists every broken case at once. Review new
//! snapshots with `cargo insta review`, or accept them with `INSTA_UPDATE=always cargo test
//! --test bad_input`.

use std::collections::BTreeMap;
use std::fs;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::Deserialize;

/// One command run on every case. `{path}` is the case (a drafter directory named
/// `Qwen3.6-27B-DFlash`, so the built-in snapshot matches it by name), `{authority}` the
/// incident's authoritative config.
struct Run {
    name: &'static str,
    args: &'static [&'static str],
    /// Whether the command may write to `{path}` (then only a failed run must leave it as it was).
    writes: bool,
}

/// Every command every case goes through. When the other commands land, add one line each:
///
/// ```text
///     Run { name: "lint", args: &["lint", "{path}"], writes: false },
///     Run { name: "fix", args: &["fix", "{path}", "--against", "{authority}"], writes: true },
///     Run { name: "check", args: &["check", "{path}", "--against", "{authority}"], writes: false },
/// ```
///
/// then run `INSTA_UPDATE=always cargo test --test bad_input` and review the new snapshots
/// (and, if wanted, add the run's expected exit code to the manifest's per-run `exit` tables;
/// a case with `exit = 2` already expects 2 from every run).
const RUNS: &[Run] = &[
    Run {
        name: "diff-against",
        args: &["diff", "{path}", "--against", "{authority}"],
        writes: false,
    },
    Run {
        name: "diff-auto",
        args: &["diff", "{path}"],
        writes: false,
    },
    Run {
        name: "diff-as-authority",
        args: &["diff", "{authority}", "--against", "{path}"],
        writes: false,
    },
    Run {
        name: "lint",
        args: &["lint", "{path}"],
        writes: false,
    },
    Run {
        name: "fix",
        args: &["fix", "{path}", "--against", "{authority}"],
        writes: true,
    },
    Run {
        name: "check",
        args: &["check", "{path}"],
        writes: false,
    },
];

const AUTHORITY: &str = "fixtures/incident/authority";
const DRAFTER_DIR: &str = "Qwen3.6-27B-DFlash";
/// Files up to this size are hashed whole by [`tree_state`]; larger ones by size and mtime.
const HASH_WHOLE_BYTES: u64 = 32 * 1024 * 1024;

#[derive(Debug, Deserialize)]
struct Manifest {
    case: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    /// What the case is and what the tool should say.
    why: String,
    /// A file under tests/bad-input/, copied to `{path}/config.json`.
    file: Option<String>,
    /// Or a setup made at test time (see [`set_up`]).
    setup: Option<String>,
    /// Parameter of the setup: size in bytes, depth, hex bytes.
    size: Option<u64>,
    depth: Option<usize>,
    hex: Option<String>,
    exit: Expected,
    /// Text that every exit-2 stderr must contain (e.g. "line 3, column 1").
    error_contains: Option<String>,
    /// Text that every exit-1 stdout must contain (a JSON path).
    finding_contains: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Expected {
    All(i32),
    PerRun(BTreeMap<String, i32>),
}

impl Expected {
    /// A single `exit` states what `diff` does. Input `diff` cannot read, `fix` must refuse
    /// too (exit 2, file untouched); `lint` and `check` are held to the crash, message and
    /// byte-identity checks and their snapshots (`check` reports an unreadable drafter as a
    /// finding, exit 1, so one bad drafter does not stop the others).
    fn for_run(&self, run: &str) -> Option<i32> {
        match self {
            Expected::All(code) if run.starts_with("diff") => Some(*code),
            Expected::All(2) if run == "fix" => Some(2),
            Expected::All(_) => None,
            Expected::PerRun(map) => map.get(run).copied(),
        }
    }
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad-input")
}

fn load_manifest() -> Manifest {
    let text = fs::read_to_string(corpus_dir().join("manifest.toml")).unwrap();
    toml::from_str(&text).unwrap()
}

/// Whether this process runs as root (owner of a file it just made), where permission bits
/// do not stop reads.
fn running_as_root(dir: &Path) -> bool {
    let probe = dir.join(".uid-probe");
    fs::write(&probe, b"").unwrap();
    let uid = fs::metadata(&probe).unwrap().uid();
    fs::remove_file(&probe).unwrap();
    uid == 0
}

fn setpriv_available() -> bool {
    Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// How a case's runs are started.
enum Runner {
    Direct,
    /// As uid/gid 65534 (nobody) through setpriv, so permission bits count even under root.
    Unprivileged,
}

/// Makes the case under `root`; returns the case path and how to run commands on it, or why
/// the case cannot be made here.
fn set_up(case: &Case, root: &Path) -> Result<(PathBuf, Runner), String> {
    let dir = root.join(DRAFTER_DIR);
    let config = dir.join("config.json");
    if let Some(file) = &case.file {
        fs::create_dir(&dir).unwrap();
        fs::copy(corpus_dir().join(file), &config).unwrap();
        return Ok((dir, Runner::Direct));
    }
    let setup = case.setup.as_deref().expect("a case has `file` or `setup`");
    let mut runner = Runner::Direct;
    match setup {
        "missing" => {}
        "no-config" => fs::create_dir(&dir).unwrap(),
        "config-is-dir" => fs::create_dir_all(&config).unwrap(),
        "broken-symlink" => {
            fs::create_dir(&dir).unwrap();
            std::os::unix::fs::symlink("does-not-exist.json", &config).unwrap();
        }
        "symlink-loop" => {
            fs::create_dir(&dir).unwrap();
            std::os::unix::fs::symlink("config.json", &config).unwrap();
        }
        "symlink-loop-pair" => {
            fs::create_dir(&dir).unwrap();
            std::os::unix::fs::symlink("b.json", &config).unwrap();
            std::os::unix::fs::symlink("config.json", dir.join("b.json")).unwrap();
        }
        "dir-symlink-loop" => std::os::unix::fs::symlink(DRAFTER_DIR, &dir).unwrap(),
        "symlink-to-valid" => {
            fs::create_dir(&dir).unwrap();
            fs::copy(
                Path::new(AUTHORITY).join("config.json"),
                dir.join("real.json"),
            )
            .unwrap();
            std::os::unix::fs::symlink("real.json", &config).unwrap();
        }
        "dev-zero" => {
            fs::create_dir(&dir).unwrap();
            std::os::unix::fs::symlink("/dev/zero", &config).unwrap();
        }
        "sparse" => {
            // A file of `size` bytes that starts like a config; the rest is a hole (NUL bytes).
            fs::create_dir(&dir).unwrap();
            let mut f = fs::File::create(&config).unwrap();
            f.write_all(b"{\"architectures\": [\"DFlashDraftModel\"], \"pad\": \"")
                .unwrap();
            f.set_len(case.size.expect("sparse needs size")).unwrap();
        }
        "sized-valid" => {
            // The authoritative config padded with trailing whitespace to exactly `size` bytes.
            fs::create_dir(&dir).unwrap();
            let mut text = fs::read(Path::new(AUTHORITY).join("config.json")).unwrap();
            let size = case.size.expect("sized-valid needs size") as usize;
            assert!(size >= text.len());
            text.resize(size, b' ');
            fs::write(&config, text).unwrap();
        }
        "deep" => {
            let depth = case.depth.expect("deep needs depth");
            fs::create_dir(&dir).unwrap();
            let text = format!(
                "{{\"architectures\": [\"DFlashDraftModel\"], \"x\": {}{}}}\n",
                "[".repeat(depth),
                "]".repeat(depth)
            );
            fs::write(&config, text).unwrap();
        }
        "bytes" => {
            fs::create_dir(&dir).unwrap();
            let hex = case.hex.as_deref().expect("bytes needs hex");
            let bytes: Vec<u8> = hex
                .split_whitespace()
                .flat_map(|word| {
                    if let Some(h) = word.strip_prefix("0x") {
                        vec![u8::from_str_radix(h, 16).unwrap()]
                    } else {
                        word.replace('_', " ").into_bytes()
                    }
                })
                .collect();
            fs::write(&config, bytes).unwrap();
        }
        "unreadable" => {
            fs::create_dir(&dir).unwrap();
            fs::copy(Path::new(AUTHORITY).join("config.json"), &config).unwrap();
            fs::set_permissions(&config, fs::Permissions::from_mode(0o000)).unwrap();
            if running_as_root(root) {
                if !setpriv_available() {
                    return Err(
                        "running as root (permission bits do not stop root's reads) and \
                         setpriv is not installed to run the binary as an unprivileged user"
                            .into(),
                    );
                }
                // Root ignores the mode, so run the binary as nobody: the failure is then
                // real. The case's directories must be reachable for nobody.
                fs::set_permissions(root, fs::Permissions::from_mode(0o755)).unwrap();
                fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
                runner = Runner::Unprivileged;
            }
        }
        other => panic!("unknown setup `{other}`"),
    }
    Ok((dir, runner))
}

/// What a directory tree holds, to tell whether a run changed anything in it.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    Dir(u32),
    File { len: u64, mode: u32, content: u64 },
    Symlink(PathBuf),
    Other(u32),
}

/// Every entry under `root` (symlinks not followed), each file hashed whole when it is at most
/// [`HASH_WHOLE_BYTES`], otherwise by size and modification time. This is the byte-identity
/// check for `fix`: the tree after a failed run must equal the tree before it.
fn tree_state(root: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = fs::symlink_metadata(&p) else {
            continue;
        };
        let mode = meta.mode();
        let entry = if meta.file_type().is_symlink() {
            Entry::Symlink(fs::read_link(&p).unwrap())
        } else if meta.is_dir() {
            if let Ok(rd) = fs::read_dir(&p) {
                stack.extend(rd.map(|e| e.unwrap().path()));
            }
            Entry::Dir(mode)
        } else if meta.is_file() {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            if meta.len() <= HASH_WHOLE_BYTES {
                // Root can read a 0o000 file; otherwise an unreadable file counts by metadata.
                match fs::read(&p) {
                    Ok(bytes) => bytes.hash(&mut h),
                    Err(_) => meta.mtime_nsec().hash(&mut h),
                }
            } else {
                (meta.mtime(), meta.mtime_nsec()).hash(&mut h);
            }
            Entry::File {
                len: meta.len(),
                mode,
                content: h.finish(),
            }
        } else {
            Entry::Other(mode)
        };
        out.insert(p, entry);
    }
    out
}

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run_one(run: &Run, case_path: &Path, runner: &Runner) -> Outcome {
    let bin = assert_cmd::cargo::cargo_bin("dflash-check");
    let args: Vec<String> = run
        .args
        .iter()
        .map(|a| {
            a.replace("{path}", case_path.to_str().unwrap())
                .replace("{authority}", AUTHORITY)
        })
        .collect();
    let mut cmd = match runner {
        Runner::Direct => Command::new(&bin),
        Runner::Unprivileged => {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&bin);
            c
        }
    };
    cmd.args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("NO_COLOR")
        .env("HF_HUB_OFFLINE", "1");
    let out = assert_cmd::Command::from_std(cmd)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    Outcome {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Checks one (case, run); returns the problems found.
fn check(case: &Case, run: &Run, root: &Path, case_path: &Path, runner: &Runner) -> Vec<String> {
    let mut problems = Vec::new();
    let before = tree_state(root);
    let out = run_one(run, case_path, runner);
    let after = tree_state(root);
    let tmp = root.to_str().unwrap();
    let norm = |s: &str| s.replace(tmp, "[TMP]");
    let (stdout, stderr) = (norm(&out.stdout), norm(&out.stderr));

    match out.code {
        None => problems.push("killed by a signal (or timed out)".into()),
        Some(101) => problems.push("exit 101: a panic".into()),
        Some(c) if !(0..=2).contains(&c) => problems.push(format!("exit {c}: not 0, 1 or 2")),
        _ => {}
    }
    if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
        problems.push("stderr shows a panic".into());
    }
    if let (Some(want), Some(got)) = (case.exit.for_run(run.name), out.code) {
        if want != got {
            problems.push(format!("exit {got}, expected {want}"));
        }
    }
    if out.code == Some(2) {
        if !stdout.is_empty() {
            problems.push("an error printed a report on stdout".into());
        }
        if !stderr.starts_with("error: ") {
            problems.push("an error without `error: ` on stderr".into());
        }
        if !stderr.contains("[TMP]/") {
            problems.push("the error does not name the file".into());
        }
        if let Some(text) = &case.error_contains {
            if !stderr.contains(text.as_str()) {
                problems.push(format!("the error does not say {text:?}"));
            }
        }
    }
    if out.code == Some(1) {
        if let Some(text) = &case.finding_contains {
            if !stdout.contains(text.as_str()) {
                problems.push(format!("the findings do not mention {text:?}"));
            }
        }
    }
    let must_be_untouched = !run.writes || out.code == Some(2);
    if must_be_untouched && before != after {
        problems.push("the run changed files under the case directory".into());
    }

    let snapshot = format!(
        "case: {}\nrun: {} {}\nexit: {}\n--- stderr\n{}--- stdout\n{}",
        case.name,
        run.name,
        run.args.join(" "),
        out.code.map_or("signal".to_string(), |c| c.to_string()),
        stderr,
        stdout
    );
    let name = format!("{}__{}", case.name, run.name);
    let snap = std::panic::catch_unwind(|| {
        insta::with_settings!({
            snapshot_path => corpus_dir().join("snapshots"),
            prepend_module_to_snapshot => false,
            description => case.why.clone(),
        }, {
            insta::assert_snapshot!(name, snapshot);
        });
    });
    if snap.is_err() {
        problems.push("output differs from its snapshot".into());
    }
    problems
}

#[test]
fn bad_input_corpus() {
    let manifest = load_manifest();
    assert!(
        manifest.case.len() >= 40,
        "the corpus has at least 40 cases"
    );
    let mut names = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in &manifest.case {
        assert!(names.insert(&case.name), "duplicate case {}", case.name);
        let root = tempfile::tempdir().unwrap();
        // Canonical, so messages show the same path the harness normalises.
        let root_path = root.path().canonicalize().unwrap();
        let (case_path, runner) = match set_up(case, &root_path) {
            Ok(x) => x,
            Err(reason) => {
                eprintln!("skipped {}: {reason}", case.name);
                continue;
            }
        };
        for run in RUNS {
            ran += 1;
            for p in check(case, run, &root_path, &case_path, &runner) {
                failures.push(format!("{} / {}: {p}", case.name, run.name));
            }
        }
        // Let the temp dir be removed even where a case took permissions away.
        let config = case_path.join("config.json");
        if fs::symlink_metadata(&config).is_ok_and(|m| m.is_file()) {
            let _ = fs::set_permissions(&config, fs::Permissions::from_mode(0o644));
        }
    }
    eprintln!(
        "bad-input corpus: {} cases, {ran} runs, {} problem(s)",
        manifest.case.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// The byte-identity helper itself: it notices a one-byte change, a new file and a mode change.
#[test]
fn tree_state_notices_changes() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("config.json");
    fs::write(&f, b"{\"a\": 1}").unwrap();
    let s0 = tree_state(dir.path());
    fs::write(&f, b"{\"a\": 2}").unwrap();
    let s1 = tree_state(dir.path());
    assert_ne!(s0, s1);
    fs::write(dir.path().join("config.json.tmp"), b"").unwrap();
    let s2 = tree_state(dir.path());
    assert_ne!(s1, s2);
    fs::set_permissions(&f, fs::Permissions::from_mode(0o600)).unwrap();
    assert_ne!(s2, tree_state(dir.path()));
}
