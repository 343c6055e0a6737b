//! What a release ships agrees with itself (issue 33): the license the crate and the wheel
//! declare is the LICENSE file the wheel carries, every binary the GitHub Action can download
//! is one release.yml builds, and the action installs nothing by a package name. The wheel
//! itself is built and checked by scripts/wheel-test.sh, the action's steps run by
//! scripts/action-test.sh; these are the cheap checks that run with `cargo test`.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

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
