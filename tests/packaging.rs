//! What a release ships agrees with itself (issue 33): the license the crate and the wheel
//! declare is the LICENSE file the wheel carries, every binary the GitHub Action can download
//! is one release.yml builds, and the action installs nothing by a package name. The wheel
//! itself is built and checked by scripts/wheel-test.sh, the action's steps run by
//! scripts/action-test.sh; these are the cheap checks that run with `cargo test`.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

fn toml_file(path: &str) -> toml::Table {
    read(path).parse().unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_declared_license_is_the_license_file_the_wheel_carries() {
    let cargo = toml_file("Cargo.toml");
    let license = cargo["package"]["license"]
        .as_str()
        .expect("Cargo.toml declares a license");
    assert_eq!(license, "Apache-2.0");
    let pyproject = toml_file("pyproject.toml");
    let project = &pyproject["project"];
    // PEP 639: an SPDX expression, equal to the crate's, and the file maturin puts in the wheel.
    assert_eq!(
        project["license"].as_str(),
        Some(license),
        "pyproject.toml's license"
    );
    let files: Vec<_> = project["license-files"]
        .as_array()
        .expect("pyproject.toml lists license-files")
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    assert_eq!(files, ["LICENSE"]);
    let text = read("LICENSE");
    assert!(
        text.contains("Apache License") && text.contains("Version 2.0, January 2004"),
        "LICENSE is not the Apache License 2.0 text"
    );
}

/// The targets of `VAR=value` assignments and `key: value` lines in a file's text.
fn values_after(text: &str, marker: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| line.split_once(marker).map(|(_, rest)| rest))
        .map(|rest| {
            rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .filter(|t| !t.is_empty() && !t.starts_with('$'))
        .collect()
}

#[test]
fn every_binary_the_action_downloads_is_one_the_release_builds() {
    let action = read("action.yml");
    let release = read(".github/workflows/release.yml");
    let downloads = values_after(&action, ") target=");
    let built = values_after(&release, "target: ");
    assert!(
        downloads.contains("x86_64-unknown-linux-gnu"),
        "no targets read from action.yml: {downloads:?}"
    );
    let missing: Vec<_> = downloads.difference(&built).collect();
    assert!(
        missing.is_empty(),
        "the action downloads {missing:?}, which release.yml does not build (builds {built:?})"
    );
    // The tag the action's `version` and pre-commit's `rev:` name is what triggers a release.
    assert!(
        release.contains("tags: [\"v*\"]"),
        "release.yml runs on tags v*"
    );
    assert!(
        action.contains("releases/download/v$version"),
        "the action downloads the release of tag v<version>"
    );
}

#[test]
fn the_action_installs_nothing_by_a_package_name() {
    let action = read("action.yml");
    for forbidden in [
        "pip install",
        "pip3 install",
        "cargo install dflash-check",
        "cargo binstall",
    ] {
        assert!(
            !action.contains(forbidden),
            "action.yml runs `{forbidden}`: a name anyone can claim"
        );
    }
    assert!(action.contains("cargo install --locked --path \"$GITHUB_ACTION_PATH\""));
}

/// The action caches its build under a hash of the source (issue 45): every file compiled into
/// the binary must be in that hash, or a cached build serves stale text. The files are those
/// `include_str!`/`include_bytes!` name outside test code and those a build script reads (the
/// paths it joins to its crate's directory); each must lie under one of the paths the action's
/// `find` hashes.
#[test]
fn the_action_cache_key_covers_every_file_compiled_in() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let action = read("action.yml");
    let find = action
        .lines()
        .find(|l| l.contains("source_hash=\"$(find "))
        .expect("action.yml hashes its source with find");
    let hashed: Vec<&str> = find
        .split("$(find ")
        .nth(1)
        .unwrap()
        .split(" -type f")
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    let covered = |file: &Path| {
        let rel = file.strip_prefix(root).unwrap_or(file);
        hashed.iter().any(|h| rel.starts_with(h))
    };
    let mut compiled_in = Vec::new();
    let mut rust_files = Vec::new();
    collect_rs(&root.join("src"), &mut rust_files);
    collect_rs(&root.join("crates"), &mut rust_files);
    for file in &rust_files {
        let text = fs::read_to_string(file).unwrap();
        // Test code ends the library part of a file (the `#[cfg(test)] mod tests` at the end).
        let code = text.split("#[cfg(test)]").next().unwrap();
        let build_script = file.file_name().is_some_and(|n| n == "build.rs");
        let dir = file.parent().unwrap();
        let mut named = |text: &str, marker: &str| {
            for piece in text.split(marker).skip(1) {
                let path = &piece[..piece.find('"').unwrap()];
                compiled_in.push(normalize(&dir.join(path)));
            }
        };
        named(code, "include_str!(\"");
        named(code, "include_bytes!(\"");
        if build_script {
            // What it reads is joined to its crate's directory (what it writes, to OUT_DIR).
            for line in code.lines().filter(|l| l.contains("CARGO_MANIFEST_DIR")) {
                named(line, ".join(\"");
            }
        }
    }
    assert!(
        compiled_in
            .iter()
            .any(|f| f.ends_with("evidence/evidence.toml")),
        "the build script's evidence.toml was not found: {compiled_in:?}"
    );
    for file in &compiled_in {
        assert!(file.exists(), "{} does not exist", file.display());
        assert!(
            covered(file),
            "{} is compiled into the binary but not in the action's cache key ({hashed:?})",
            file.display()
        );
    }
}

fn collect_rs(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `a/b/../c` as `a/c`, without touching the file system.
fn normalize(path: &Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The pre-commit mirror installs the release's wheel by its URL, never `dflash-check==X` from
/// an index where nobody has claimed the name (issue 45); the URL's version is the crate's.
#[test]
fn the_pre_commit_mirror_names_its_wheel_not_an_index_name() {
    let version = toml_file("Cargo.toml")["package"]["version"]
        .as_str()
        .unwrap()
        .to_string();
    let mirror = toml_file("docs/pre-commit-mirror/pyproject.toml");
    let deps: Vec<&str> = mirror["project"]["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(deps.len(), 1, "{deps:?}");
    let url = deps[0]
        .strip_prefix("dflash-check @ ")
        .unwrap_or_else(|| panic!("the mirror installs `{}` by name", deps[0]));
    assert!(
        url.starts_with(&format!(
            "https://github.com/OWNER/dflash-check/releases/download/v{version}/dflash_check-{version}-"
        )) && url.ends_with(".whl"),
        "{url}"
    );
}

/// No release exists yet (issue 45): every CI or install recipe in the docs that names the
/// release (its tag, its assets, its version input) says so beside it, and each page gives the
/// recipe that works today, pinned to a commit sha.
#[test]
fn release_recipes_say_the_release_does_not_exist_yet() {
    let version = toml_file("Cargo.toml")["package"]["version"]
        .as_str()
        .unwrap()
        .to_string();
    let names_release = [
        format!("@v{version}"),
        format!("rev: v{version}"),
        format!("--tag v{version}"),
        format!("version: {version}"),
        format!("releases/download/v{version}"),
    ];
    let says_so = ["not yet", "no release", "does not exist", "no tag"];
    for page in [
        "README.md",
        "docs/ci.md",
        "docs/pre-commit-mirror/README.md",
    ] {
        let text = read(page);
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !names_release.iter().any(|n| line.contains(n.as_str())) {
                continue;
            }
            let near = lines[i.saturating_sub(3)..(i + 4).min(lines.len())].join(" ");
            assert!(
                says_so.iter().any(|s| near.contains(s)),
                "{page}:{}: `{line}` names a release that does not exist, without saying so",
                i + 1
            );
        }
        assert!(
            text.contains("COMMIT_SHA"),
            "{page} gives no recipe pinned to a commit"
        );
    }
}

/// `cargo install --git` searches every Cargo.toml of the repository, and this one holds two
/// packages with binaries (dflash-check and the fuzz targets): without a package name the
/// recipe fails with "multiple packages with binaries found" (found by running the GitLab recipe
/// as written on a fresh clone). Every such line in the docs names `dflash-check`, and cargo,
/// given this repository by URL and that name, selects the package: a feature it does not have
/// stops it right after selection, before anything is built.
#[test]
fn cargo_install_from_git_names_the_package() {
    for doc in ["README.md", "docs/install.md", "docs/ci.md"] {
        for line in read(doc)
            .lines()
            // A recipe, not prose about one: `--git` followed by a URL.
            .filter(|l| l.contains("cargo install") && l.contains("--git http"))
        {
            assert!(
                line.split_whitespace()
                    .any(|w| w.trim_matches('`') == "dflash-check"),
                "{doc}: `cargo install --git` without the package name fails here: {line}"
            );
        }
    }
    let repo = std::env::current_dir().unwrap();
    if !repo.join(".git").exists() {
        eprintln!(
            "cargo_install_from_git_names_the_package: skipped the cargo run (not a git checkout)"
        );
        return;
    }
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    let head = String::from_utf8(head.stdout).unwrap();
    let url = format!("file://{}", repo.display());
    let root = std::env::temp_dir().join(format!("dflash-install-probe-{}", std::process::id()));
    let probe = |package: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args([
            "install",
            "--locked",
            "--git",
            &url,
            "--rev",
            head.trim(),
            "--root",
        ])
        .arg(&root)
        .args(["--features", "no-such-feature-probe"]);
        cmd.args(package);
        let out = cmd.output().unwrap();
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let without = probe(None);
    assert!(
        without.contains("multiple packages with binaries"),
        "{without}"
    );
    let with = probe(Some("dflash-check"));
    assert!(
        !with.contains("multiple packages") && with.contains("no-such-feature-probe"),
        "cargo did not select the package: {with}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
