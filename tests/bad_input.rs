//! The bad-input corpus: every case of `tests/bad-input/manifest.toml` run through every command
//! of its input surface with the real binary: a drafter's `config.json` through [`RUNS`], its
//! safetensors headers through [`WEIGHTS_RUNS`], a launch command or file through
//! [`LAUNCH_RUNS`], a `/metrics` body (served by a small in-process HTTP server) through
//! [`METRICS_RUNS`], a pin file `dflash-check.toml` through [`PINS_RUNS`], a server's answer
//! about itself (SGLang's `/get_server_info`, vLLM's `/v1/models`) through [`SERVER_RUNS`]; a
//! drafter's config and a pin file also go through `check --format github` with the step
//! summary ([`GITHUB_RUN`], the summary file's text in the snapshot). For each (case, run) the harness checks that the process
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

/// Safetensors headers (`surface = "weights"`): `{path}` is a tiny DFlash drafter directory
/// (its config agrees with the valid weights) holding the case's files.
const WEIGHTS_RUNS: &[Run] = &[
    Run {
        name: "weights",
        args: &["weights", "{path}"],
        writes: false,
    },
    Run {
        name: "lint",
        args: &["lint", "{path}"],
        writes: false,
    },
];

/// A GGUF file (`surface = "gguf"`): `{path}` is the case's file copied to `model.gguf`.
const GGUF_RUNS: &[Run] = &[Run {
    name: "weights",
    args: &["weights", "{path}"],
    writes: false,
}];

/// Launch input (`surface = "launch"`): `{input}` is `--file FILE` or `-- ARGS...`.
const LAUNCH_RUNS: &[Run] = &[Run {
    name: "launch",
    args: &["launch", "{input}"],
    writes: false,
}];

/// A `/metrics` body (`surface = "metrics"`) served at `{url}`; the window is short so that a
/// vLLM case (two scrapes) costs a few milliseconds.
const METRICS_RUNS: &[Run] = &[Run {
    name: "acceptance",
    args: &[
        "acceptance",
        "{url}",
        "--window",
        "0.05",
        "--timeout",
        "10",
        "--min-acceptance-length",
        "2",
    ],
    writes: false,
}];

/// A pin file (`surface = "pins"`): `dflash-check.toml` in the case's temp dir, found from the
/// working directory, beside a clean drafter `models/Qwen3.6-27B-DFlash`.
const PINS_RUNS: &[Run] = &[
    Run {
        name: "check",
        args: &["check", "models"],
        writes: false,
    },
    Run {
        name: "prune",
        args: &["check", "models", "--prune-ignores"],
        writes: true,
    },
];

/// A server's answer about itself (`surface = "server"`), served at `endpoint` beside a valid
/// `/metrics` window (tests/bad-input/cases/metrics/valid-1.txt, then valid-2.txt): `doctor`
/// reads the drafter and target from it, as from a real SGLang or vLLM server.
const SERVER_RUNS: &[Run] = &[Run {
    name: "doctor",
    args: &[
        "doctor",
        "--metrics",
        "{url}",
        "--window",
        "0.05",
        "--server-timeout",
        "10",
        "--min-acceptance-length",
        "2",
        "--offline",
    ],
    writes: false,
}];

/// The CI gate's GitHub output for a drafter's config, with `GITHUB_STEP_SUMMARY` set to a file
/// outside the case directory: its text is appended to the snapshot, and held to the rules of
/// the display filter like stdout (issue 32: input text rendered in the step summary).
const GITHUB_RUN: Run = Run {
    name: "check-github",
    args: &["check", "{path}", "--format", "github"],
    writes: false,
};

/// Which command family a case feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Surface {
    Config,
    Weights,
    Launch,
    Metrics,
    Pins,
    Server,
    Gguf,
}

impl Surface {
    fn runs(self) -> &'static [Run] {
        match self {
            Surface::Config => RUNS,
            Surface::Weights => WEIGHTS_RUNS,
            Surface::Launch => LAUNCH_RUNS,
            Surface::Metrics => METRICS_RUNS,
            Surface::Pins => PINS_RUNS,
            Surface::Server => SERVER_RUNS,
            Surface::Gguf => GGUF_RUNS,
        }
    }
}

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
    /// The input surface (default `config`).
    surface: Option<Surface>,
    /// A file under tests/bad-input/: for `config`, copied to `{path}/config.json`; for
    /// `launch`, copied into the case directory under its own name and given as `--file`; for
    /// `metrics`, the body of the first scrape.
    file: Option<String>,
    /// `metrics`: the body of every later scrape (default: `file` again); `launch`: a second
    /// file copied beside `file` under its own name (a settings file the line reads).
    file2: Option<String>,
    /// `server`: the path `file` is served at (default `/get_server_info`); any other path but
    /// `/metrics` answers 404.
    endpoint: Option<String>,
    /// `weights`: a directory under tests/bad-input/ whose files are copied into `{path}`.
    dir: Option<String>,
    /// `launch`: the command words given after `--` (instead of a file).
    args: Option<Vec<String>>,
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
    /// The exit code `run` of a case on `surface` must give. Outside `config` a single `exit`
    /// holds for every run.
    fn for_surface_run(&self, surface: Surface, run: &str) -> Option<i32> {
        match (surface, self) {
            (Surface::Config, _) => self.for_run(run),
            (_, Expected::All(code)) => Some(*code),
            (_, Expected::PerRun(map)) => map.get(run).copied(),
        }
    }

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
            fs::write(&config, hex_bytes(case)).unwrap();
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

/// A file of the corpus.
fn read_corpus(file: &str) -> Vec<u8> {
    fs::read(corpus_dir().join(file)).unwrap()
}

/// A case's `file`, or the bytes of setup `bytes`; `None` for any other setup.
fn file_or_bytes(case: &Case) -> Option<Vec<u8>> {
    match (&case.file, case.setup.as_deref()) {
        (Some(f), _) => Some(read_corpus(f)),
        (None, Some("bytes")) => Some(hex_bytes(case)),
        _ => None,
    }
}

/// The bytes of a `hex` field: `0xNN` words are bytes, other words their text (`_` for a space).
fn hex_bytes(case: &Case) -> Vec<u8> {
    let hex = case.hex.as_deref().expect("bytes needs hex");
    hex.split_whitespace()
        .flat_map(|word| {
            if let Some(h) = word.strip_prefix("0x") {
                vec![u8::from_str_radix(h, 16).unwrap()]
            } else {
                word.replace('_', " ").into_bytes()
            }
        })
        .collect()
}

/// What the runs of a prepared case are given.
struct Prepared {
    /// `{path}`: the case directory.
    path: PathBuf,
    /// `{input}` (launch): `--file FILE` or `-- ARGS...`.
    input: Vec<String>,
    /// `{url}` (metrics): where the in-process server serves the case's body.
    url: String,
    /// What an error must name: the case's temp path, the URL, or nothing (a command line).
    names: Option<String>,
    runner: Runner,
}

/// Sets a case up on its surface under `root`, or says why it cannot be made here.
fn prepare(case: &Case, root: &Path) -> Result<Prepared, String> {
    let mut p = Prepared {
        path: root.join(DRAFTER_DIR),
        input: Vec::new(),
        url: String::new(),
        names: Some("[TMP]/".to_string()),
        runner: Runner::Direct,
    };
    match case.surface.unwrap_or(Surface::Config) {
        Surface::Config => {
            let (path, runner) = set_up(case, root)?;
            p.path = path;
            p.runner = runner;
        }
        Surface::Weights => p.path = set_up_weights(case, root),
        Surface::Launch => {
            p.path = root.join("launch");
            p.input = set_up_launch(case, &p.path);
            if case.args.is_some() {
                p.names = None;
            }
        }
        Surface::Metrics => {
            p.path = root.join("metrics");
            fs::create_dir(&p.path).unwrap();
            let first = file_or_bytes(case).unwrap_or_else(|| {
                panic!("{}: a metrics case has `file` or setup `bytes`", case.name)
            });
            let later = case
                .file2
                .as_deref()
                .map_or_else(|| first.clone(), read_corpus);
            p.url = serve_metrics(first, later, None);
            p.names = Some("http://127.0.0.1:[PORT]/metrics".to_string());
        }
        Surface::Server => {
            p.path = root.join("server");
            fs::create_dir(&p.path).unwrap();
            let answer = match file_or_bytes(case) {
                Some(body) => body,
                None if case.setup.as_deref() == Some("server-answer-over-cap") => {
                    // A JSON object of `size` bytes naming a model: refused unread past the cap.
                    let size = case.size.expect("server-answer-over-cap needs size") as usize;
                    let mut text = br#"{"model_path": "Qwen/Qwen3-8B", "pad": ""#.to_vec();
                    text.resize(size - 2, b'x');
                    text.extend_from_slice(b"\"}");
                    text
                }
                _ => panic!("{}: a server case has `file` or a setup", case.name),
            };
            let endpoint = case.endpoint.as_deref().unwrap_or("/get_server_info");
            p.url = serve_metrics(
                read_corpus("cases/metrics/valid-1.txt"),
                read_corpus("cases/metrics/valid-2.txt"),
                Some((endpoint.to_string(), answer)),
            );
            // The server's answer is not what doctor fails on: its error names what is missing.
            p.names = None;
        }
        Surface::Pins => {
            set_up_pins(case, root);
            p.path = root.to_path_buf();
        }
        Surface::Gguf => {
            let file = case.file.as_deref().expect("a gguf case names its `file`");
            p.path = root.join("model.gguf");
            fs::copy(corpus_dir().join(file), &p.path).unwrap();
        }
    }
    Ok(p)
}

/// A clean drafter under `root/models` and the case's `root/dflash-check.toml`: a file of the
/// corpus, or what the setup makes in its place.
fn set_up_pins(case: &Case, root: &Path) {
    let drafter = root.join("models").join(DRAFTER_DIR);
    fs::create_dir_all(&drafter).unwrap();
    fs::copy(
        Path::new(AUTHORITY).join("config.json"),
        drafter.join("config.json"),
    )
    .unwrap();
    let pins = root.join("dflash-check.toml");
    match (&case.file, case.setup.as_deref()) {
        (Some(f), extra) => {
            fs::copy(corpus_dir().join(f), &pins).unwrap();
            // What a pin's `against` names, beside the pin file (issue 44).
            let authorities = root.join("authorities");
            match extra {
                None => {}
                Some("pins-against-link") => {
                    fs::create_dir(&authorities).unwrap();
                    std::os::unix::fs::symlink("/etc/passwd", authorities.join("link.json"))
                        .unwrap();
                }
                Some("pins-against-credentials") => {
                    fs::create_dir(&authorities).unwrap();
                    let creds = r#"{"auths": {"registry": {"auth": "c2VjcmV0"}}}"#;
                    fs::write(authorities.join("creds.json"), creds).unwrap();
                }
                Some(other) => panic!("{}: unknown pins setup {other:?}", case.name),
            }
        }
        (None, Some("pins-dangling-symlink")) => {
            std::os::unix::fs::symlink("submodule/dflash-check.toml", &pins).unwrap()
        }
        (None, Some("pins-fifo")) => mkfifo(&pins),
        (None, Some("pins-dev-zero")) => std::os::unix::fs::symlink("/dev/zero", &pins).unwrap(),
        (None, Some("pins-is-dir")) => fs::create_dir(&pins).unwrap(),
        (None, other) => panic!("{}: unknown pins setup {other:?}", case.name),
    }
}

/// A tiny DFlash drafter directory (`tiny-dflash`): the corpus's config, then the case's files
/// (`dir`), then what the setup makes in place of `model.safetensors` or a shard.
fn set_up_weights(case: &Case, root: &Path) -> PathBuf {
    let dir = root.join("tiny-dflash");
    fs::create_dir(&dir).unwrap();
    let cases = corpus_dir().join("cases/weights");
    fs::copy(cases.join("config.json"), dir.join("config.json")).unwrap();
    if let Some(from) = &case.dir {
        for entry in fs::read_dir(corpus_dir().join(from)).unwrap() {
            let entry = entry.unwrap();
            fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
        }
    }
    let st = dir.join("model.safetensors");
    match case.setup.as_deref() {
        None => {}
        Some("weights-fifo") => mkfifo(&st),
        Some("weights-dev-zero") => std::os::unix::fs::symlink("/dev/zero", &st).unwrap(),
        Some("weights-is-dir") => fs::create_dir(&st).unwrap(),
        Some("weights-broken-symlink") => std::os::unix::fs::symlink("blobs/missing", &st).unwrap(),
        Some("weights-symlink-loop") => {
            std::os::unix::fs::symlink("model.safetensors", &st).unwrap()
        }
        Some("weights-shard-is-dir") => {
            fs::create_dir(dir.join("model-00002-of-00002.safetensors")).unwrap()
        }
        Some("weights-shard-fifo") => mkfifo(&dir.join("model-00002-of-00002.safetensors")),
        Some("weights-sparse") => {
            // A header that declares `size` bytes of U8 data, and a file of exactly that size
            // whose data is a hole: a legal file far larger than any read.
            let size = case.size.expect("weights-sparse needs size");
            let json = format!(
                "{{\"blob\":{{\"dtype\":\"U8\",\"shape\":[{size}],\"data_offsets\":[0,{size}]}}}}"
            );
            let mut f = fs::File::create(&st).unwrap();
            f.write_all(&(json.len() as u64).to_le_bytes()).unwrap();
            f.write_all(json.as_bytes()).unwrap();
            f.set_len(8 + json.len() as u64 + size).unwrap();
        }
        Some("weights-mtp-exclude") => {
            // The case's MTP target config with an exclude list of `size` names.
            let n = case.size.expect("weights-mtp-exclude needs size");
            let path = dir.join("config.json");
            let mut config: serde_json::Value =
                serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
            config["quantization_config"]["ignore"] = (0..n)
                .map(|i| format!("model.layers.{i}.mlp.gate"))
                .collect();
            fs::write(&path, serde_json::to_vec(&config).unwrap()).unwrap();
        }
        Some("weights-index-entries") => {
            // An index naming `size` tensors, all in one shard that is not there.
            let n = case.size.expect("weights-index-entries needs size");
            let mut text = String::from("{\"weight_map\": {");
            for i in 0..n {
                if i > 0 {
                    text.push(',');
                }
                text.push_str(&format!("\"t{i}\": \"s.safetensors\""));
            }
            text.push_str("}}");
            fs::write(dir.join("model.safetensors.index.json"), text).unwrap();
        }
        Some(other) => panic!("unknown weights setup `{other}`"),
    }
    dir
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// The launch case directory with the case's file in it; returns `{input}`.
fn set_up_launch(case: &Case, dir: &Path) -> Vec<String> {
    fs::create_dir(dir).unwrap();
    if let Some(args) = &case.args {
        let mut input = vec!["--".to_string()];
        input.extend(args.iter().cloned());
        // `args = []`: `launch` with no command at all.
        if args.is_empty() {
            input.clear();
        }
        return input;
    }
    let file = match (&case.file, case.setup.as_deref()) {
        (Some(f), _) => {
            let name = Path::new(f).file_name().unwrap();
            let to = dir.join(name);
            fs::copy(corpus_dir().join(f), &to).unwrap();
            // A file the line reads beside it (oMLX's model_settings.json), under its own name.
            if let Some(f2) = &case.file2 {
                let name = Path::new(f2).file_name().unwrap();
                fs::copy(corpus_dir().join(f2), dir.join(name)).unwrap();
            }
            to
        }
        (None, Some("bytes")) => {
            let to = dir.join("serve.sh");
            fs::write(&to, hex_bytes(case)).unwrap();
            to
        }
        (None, Some("launch-fifo")) => {
            let to = dir.join("serve.sh");
            mkfifo(&to);
            to
        }
        (None, Some("launch-dev-zero")) => {
            let to = dir.join("serve.sh");
            std::os::unix::fs::symlink("/dev/zero", &to).unwrap();
            to
        }
        (None, Some("launch-is-dir")) => {
            let to = dir.join("serve.sh");
            fs::create_dir(&to).unwrap();
            to
        }
        (None, Some("launch-missing")) => dir.join("serve.sh"),
        (None, Some("launch-huge-line")) => {
            // One command on one line of exactly `size` bytes: a valid vLLM command whose
            // `--served-model-name` value pads it.
            let size = case.size.expect("launch-huge-line needs size") as usize;
            let head = "vllm serve Qwen/Qwen3-8B --speculative-config '{\"method\": \"dflash\", \
                        \"model\": \"z-lab/Qwen3-8B-DFlash-b16\", \"num_speculative_tokens\": 15}' \
                        --served-model-name ";
            let mut text = head.to_string();
            text.push_str(&"x".repeat(size - head.len() - 1));
            text.push('\n');
            let to = dir.join("serve.sh");
            fs::write(&to, text).unwrap();
            to
        }
        (None, Some("launch-open-quote-many-lines")) => {
            // A quote opened on line 1 and never closed, then short lines up to `size` bytes.
            let size = case.size.expect("launch-open-quote-many-lines needs size") as usize;
            let mut text = "vllm serve M --speculative-config '{\n".to_string();
            while text.len() + 2 <= size {
                text.push_str("x\n");
            }
            let to = dir.join("serve.sh");
            fs::write(&to, text).unwrap();
            to
        }
        (None, other) => panic!("{}: unknown launch setup {other:?}", case.name),
    };
    vec!["--file".to_string(), file.to_str().unwrap().to_string()]
}

/// Serves `first` as the body of the first `GET` and `later` for every one after, on an
/// ephemeral port of 127.0.0.1, from a thread that lives as long as the test process (each
/// connection is answered and closed). Returns the `/metrics` URL. With `answer` (a path and
/// a body), that path gets the body, `/metrics` the metrics bodies and any other path a 404.
fn serve_metrics(first: Vec<u8>, later: Vec<u8>, answer: Option<(String, Vec<u8>)>) -> String {
    use std::io::{BufRead, BufReader};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/metrics", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut scrapes = 0;
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            // The request line and headers, up to the blank line.
            let mut line = String::new();
            let mut path = None;
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                path = path.or_else(|| line.split(' ').nth(1).map(str::to_string));
                line.clear();
            }
            let path = path.unwrap_or_default();
            let (status, kind, body) = match &answer {
                Some((at, body)) if *at == path => ("200 OK", "application/json", body),
                Some(_) if path != "/metrics" => ("404 Not Found", "text/plain", &Vec::new()),
                _ => {
                    scrapes += 1;
                    let body = if scrapes == 1 { &first } else { &later };
                    ("200 OK", "text/plain; version=0.0.4; charset=utf-8", body)
                }
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body);
        }
    });
    url
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

/// The arguments of `run` on a prepared case: `{path}`, `{authority}`, `{url}` replaced,
/// `{input}` spread into its words.
fn args_of(run: &Run, p: &Prepared) -> Vec<String> {
    let mut args = Vec::new();
    for a in run.args {
        if *a == "{input}" {
            args.extend(p.input.iter().cloned());
            continue;
        }
        args.push(
            a.replace("{path}", p.path.to_str().unwrap())
                .replace("{authority}", AUTHORITY)
                .replace("{url}", &p.url),
        );
    }
    args
}

/// What the display filter escapes (`dflash_check::display::is_unshowable`), restated so the
/// corpus does not take the tool's word for it.
fn unshowable(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

fn run_one(args: &[String], cwd: &Path, env: &[(&str, PathBuf)], runner: &Runner) -> Outcome {
    let bin = assert_cmd::cargo::cargo_bin("dflash-check");
    let mut cmd = match runner {
        Runner::Direct => Command::new(&bin),
        Runner::Unprivileged => {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&bin);
            c
        }
    };
    cmd.args(args)
        .current_dir(cwd)
        .env_remove("NO_COLOR")
        .env_remove("HF_ENDPOINT")
        .env("HF_HUB_OFFLINE", "1")
        .envs(env.iter().map(|(k, v)| (*k, v.as_os_str())));
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
fn check(case: &Case, run: &Run, root: &Path, p: &Prepared) -> Vec<String> {
    let mut problems = Vec::new();
    let surface = case.surface.unwrap_or(Surface::Config);
    // The config runs name the authority by a path relative to the repository; every other
    // surface runs inside the case's temp dir, so a stray write to the working directory
    // shows up in the byte-identity check too.
    // They also get an empty Hub cache of their own (never created: offline, nothing is
    // written), so messages name it under [TMP] rather than this machine's cache.
    let (cwd, mut env) = match surface {
        Surface::Config => (PathBuf::from(env!("CARGO_MANIFEST_DIR")), vec![]),
        _ => (
            root.to_path_buf(),
            vec![("HF_HUB_CACHE", root.join("hub-cache"))],
        ),
    };
    // The step summary goes outside the case directory (which must stay as it was), to a file
    // that exists and that the unprivileged runner may append to.
    let summary_dir = tempfile::tempdir().unwrap();
    let summary = summary_dir.path().join("step-summary.md");
    if run.name == GITHUB_RUN.name {
        fs::write(&summary, "").unwrap();
        fs::set_permissions(summary_dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(&summary, fs::Permissions::from_mode(0o666)).unwrap();
        env.push(("GITHUB_STEP_SUMMARY", summary.clone()));
    }
    let before = tree_state(root);
    let started = std::time::Instant::now();
    let out = run_one(&args_of(run, p), &cwd, &env, &p.runner);
    let took = started.elapsed();
    let after = tree_state(root);
    let summary_text = fs::read_to_string(&summary).ok();
    let tmp = root.to_str().unwrap();
    let port = p.url.split(':').nth(2).and_then(|s| s.split('/').next());
    let norm = |s: &str| {
        let s = s.replace(tmp, "[TMP]");
        match port {
            Some(port) => s.replace(&format!("127.0.0.1:{port}"), "127.0.0.1:[PORT]"),
            None => s,
        }
    };
    let (stdout, stderr) = (norm(&out.stdout), norm(&out.stderr));
    let summary_text = summary_text.map(|t| norm(&t));

    match out.code {
        None => problems.push("killed by a signal (or timed out)".into()),
        Some(101) => problems.push("exit 101: a panic".into()),
        Some(c) if !(0..=2).contains(&c) => problems.push(format!("exit {c}: not 0, 1 or 2")),
        _ => {}
    }
    if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
        problems.push("stderr shows a panic".into());
    }
    // Issue 32: input text is printed through the display filter: no control character, escape
    // sequence or bidi override of an input reaches the terminal, and no line starts a GitHub
    // workflow command.
    // In `--format github` the tool's own workflow commands start lines; nothing else may.
    let own_command = |l: &str| {
        run.name == GITHUB_RUN.name
            && [
                "::error ",
                "::error::",
                "::warning ",
                "::warning::",
                "::notice ",
                "::notice::",
            ]
            .iter()
            .any(|c| l.starts_with(c))
    };
    let step_summary = summary_text.as_deref().unwrap_or_default();
    for (what, text) in [
        ("stdout", &stdout),
        ("stderr", &stderr),
        ("the step summary", &step_summary.to_string()),
    ] {
        if let Some(c) = text.chars().find(|&c| c != '\n' && unshowable(c)) {
            problems.push(format!("{what} holds {c:?} raw"));
        }
        let forged = |l: &str| l.trim_start().starts_with("::") && !own_command(l);
        if text.lines().any(forged) {
            problems.push(format!("a line of {what} starts a workflow command"));
        }
    }
    // Every case is small or sparse: a run that takes seconds is reading what it should not.
    if surface != Surface::Config && took > Duration::from_secs(10) {
        problems.push(format!("took {took:?}"));
    }
    if let (Some(want), Some(got)) = (case.exit.for_surface_run(surface, run.name), out.code) {
        if want != got {
            problems.push(format!("exit {got}, expected {want}"));
        }
    }
    if out.code == Some(2) {
        if !stdout.is_empty() {
            problems.push("an error printed a report on stdout".into());
        }
        // In `--format github` the error is a workflow command the runner shows as one.
        let prefix = if run.name == GITHUB_RUN.name {
            "::error::"
        } else {
            "error: "
        };
        if !stderr.starts_with(prefix) {
            problems.push(format!("an error without `{prefix}` on stderr"));
        }
        if let Some(names) = &p.names {
            if !stderr.contains(names.as_str()) {
                problems.push(format!("the error does not name the input ({names})"));
            }
        }
        // The newer surfaces hold every error to the message rule: what, where, what to do.
        // (In `--format github` the line break is escaped as workflow data: `%0A`.)
        let hint = if run.name == GITHUB_RUN.name {
            "%0A  hint: "
        } else {
            "\n  hint: "
        };
        if surface != Surface::Config && !stderr.contains(hint) {
            problems.push("the error has no hint (what to do)".into());
        }
        if let Some(text) = &case.error_contains {
            if !stderr.contains(text.as_str()) {
                problems.push(format!("the error does not say {text:?}"));
            }
        }
    }
    // (Annotations escape as workflow data, not as the other formats do: the raw-text checks
    // above hold them.)
    if out.code == Some(1) && run.name != GITHUB_RUN.name {
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

    let mut snapshot = format!(
        "case: {}\nrun: {} {}\nexit: {}\n--- stderr\n{}--- stdout\n{}",
        case.name,
        run.name,
        run.args.join(" "),
        out.code.map_or("signal".to_string(), |c| c.to_string()),
        stderr,
        stdout
    );
    if let Some(text) = &summary_text {
        snapshot.push_str(&format!("--- step summary\n{text}"));
    }
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
    // `BAD_INPUT_ONLY=weights` (or a case name prefix) runs a part of the corpus.
    let only = std::env::var("BAD_INPUT_ONLY").ok();
    let mut names = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut counted: BTreeMap<&str, usize> = BTreeMap::new();
    for case in &manifest.case {
        assert!(names.insert(&case.name), "duplicate case {}", case.name);
        let surface = case.surface.unwrap_or(Surface::Config);
        if let Some(only) = &only {
            let s = format!("{surface:?}").to_lowercase();
            if &s != only && !case.name.starts_with(only.as_str()) {
                continue;
            }
        }
        *counted
            .entry(match surface {
                Surface::Config => "config",
                Surface::Weights => "weights",
                Surface::Launch => "launch",
                Surface::Metrics => "metrics",
                Surface::Pins => "pins",
                Surface::Server => "server",
                Surface::Gguf => "gguf",
            })
            .or_default() += 1;
        let root = tempfile::tempdir().unwrap();
        // Canonical, so messages show the same path the harness normalises.
        let root_path = root.path().canonicalize().unwrap();
        let prepared = match prepare(case, &root_path) {
            Ok(x) => x,
            Err(reason) => {
                eprintln!("skipped {}: {reason}", case.name);
                continue;
            }
        };
        let github = matches!(surface, Surface::Config | Surface::Pins).then_some(&GITHUB_RUN);
        // The GitHub run first, on the input as given (`fix` and `--prune-ignores` write).
        for run in github.into_iter().chain(surface.runs()) {
            ran += 1;
            for p in check(case, run, &root_path, &prepared) {
                failures.push(format!("{} / {}: {p}", case.name, run.name));
            }
        }
        // Let the temp dir be removed even where a case took permissions away.
        let config = prepared.path.join("config.json");
        if fs::symlink_metadata(&config).is_ok_and(|m| m.is_file()) {
            let _ = fs::set_permissions(&config, fs::Permissions::from_mode(0o644));
        }
    }
    eprintln!(
        "bad-input corpus: {} cases ({counted:?}), {ran} runs, {} problem(s)",
        counted.values().sum::<usize>(),
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
