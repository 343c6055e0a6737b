//! The committed test inputs are what their generators write, and the fuzz crate's lockfile
//! agrees with the workspace (issue 32): a generator that no longer writes a committed case
//! would delete it at the next regeneration, and a stale lockfile fails `cargo fuzz build`.
//!
//! Each generator runs on a copy of the files it reads, in a temporary directory laid out as the
//! repository is, so the test never writes into the checkout while other tests read it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A generator, the committed files it reads, and the folders whose every file it writes.
struct Generator {
    script: &'static str,
    reads: &'static [&'static str],
    owns: &'static [&'static str],
}

const GENERATORS: &[Generator] = &[
    Generator {
        script: "tests/bad-input/generate.py",
        reads: &["fixtures/incident/authority/config.json"],
        owns: &["tests/bad-input/cases"],
    },
    Generator {
        script: "tests/lint/generate.py",
        reads: &[],
        owns: &[
            "tests/lint/cases",
            "tests/lint/clean",
            "tests/lint/real",
            "tests/lint/targets",
        ],
    },
    Generator {
        script: "tests/fix/generate.py",
        reads: &[],
        owns: &[],
    },
    Generator {
        script: "fixtures/generate.py",
        reads: &[],
        owns: &[],
    },
];

fn python() -> Option<&'static str> {
    ["python3", "python"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok())
}

fn files_under(root: &Path, dir: &Path, out: &mut BTreeSet<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            files_under(root, &path, out);
        } else {
            out.insert(path.strip_prefix(root).unwrap().to_path_buf());
        }
    }
}

fn copy(from: &str, root: &Path) {
    let to = root.join(from);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

/// Every file a generator writes is byte for byte the committed one, and every committed file
/// in a folder it owns is one it writes.
#[test]
fn generators_write_exactly_what_is_committed() {
    let Some(python) = python() else {
        eprintln!("no python3: the generators were not run");
        return;
    };
    let mut problems = Vec::new();
    for g in GENERATORS {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for f in std::iter::once(&g.script).chain(g.reads) {
            copy(f, root);
        }
        let out = Command::new(python)
            .arg(root.join(g.script))
            .current_dir(root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{} failed: {}",
            g.script,
            String::from_utf8_lossy(&out.stderr)
        );
        let mut written = BTreeSet::new();
        files_under(root, root, &mut written);
        for f in &written {
            let name = f.to_str().unwrap();
            if name == g.script || g.reads.contains(&name) {
                continue;
            }
            match std::fs::read(f) {
                Ok(committed) if committed == std::fs::read(root.join(f)).unwrap() => {}
                Ok(_) => problems.push(format!("{}: writes {name} differently", g.script)),
                Err(_) => problems.push(format!("{}: writes {name}, not committed", g.script)),
            }
        }
        for dir in g.owns {
            let mut committed = BTreeSet::new();
            files_under(Path::new(""), Path::new(dir), &mut committed);
            for f in committed {
                if !written.contains(&f) {
                    problems.push(format!(
                        "{}: does not write the committed {}",
                        g.script,
                        f.display()
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "generators and committed files disagree (change the generator, run it, commit both):\n{}",
        problems.join("\n")
    );
}

/// fuzz/Cargo.lock resolves the fuzz crate, and through it the workspace, without changes.
/// Not `--offline`: on a fresh machine the fuzz crate's own dependencies (`libfuzzer-sys`) are
/// in no local registry cache until cargo fetches them, and an offline resolution then fails
/// for want of the index, not because the lockfile is stale.
#[test]
fn fuzz_lockfile_is_current() {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--manifest-path",
            "fuzz/Cargo.toml",
            "--locked",
            "--format-version",
            "1",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{}\n{stderr}",
        if stderr.contains("needs to be updated") {
            "fuzz/Cargo.lock is stale: run `cargo update -w --manifest-path fuzz/Cargo.toml` and commit it"
        } else {
            "cargo could not resolve fuzz/Cargo.toml (is crates.io reachable?)"
        }
    );
}
