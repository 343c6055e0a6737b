//! The documentation's source paths are the code's (issue 45: BENCHMARKS.md, docs/rules.md and
//! the README named files that had moved): every `crates/…` path and every `src/….rs` path a
//! markdown file of the repository names exists, and ARCHITECTURE.md's code layout lists every
//! module of both crates, and nothing that is gone.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Paths that are not this repository's: `src/` paths of other projects a page quotes, and
/// a module named as it was then.
const NOT_OURS: &[(&str, &str)] = &[
    // openmetrics-parser 0.5.1's file, the old acceptance parser (BENCHMARKS.md).
    ("BENCHMARKS.md", "src/internal/marshals.rs"),
    // The baseline of a benchmark, named by the path it had at that commit (BENCHMARKS.md).
    ("BENCHMARKS.md", "src/tokens.rs"),
];

/// Every markdown file of the repository, outside build output and hidden folders.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            markdown_files(&path, out);
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The `src/…` and `crates/…` paths a line names, each starting at a word boundary.
fn paths_in(line: &str) -> Vec<String> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut found = Vec::new();
    for (at, _) in line.match_indices(['s', 'c']) {
        let rest = &line[at..];
        if !(rest.starts_with("src/") || rest.starts_with("crates/")) {
            continue;
        }
        if line[..at].chars().next_back().is_some_and(is_path_char) {
            continue;
        }
        let end = rest.find(|c: char| !is_path_char(c)).unwrap_or(rest.len());
        found.push(rest[..end].trim_end_matches('.').to_string());
    }
    found
}

/// Every `crates/…` path and every `src/….rs` path in the repository's markdown exists. A
/// line indented under `crates/core/` in ARCHITECTURE.md's layout (`  src/json.rs`) is read
/// relative to that crate; a path with NAME in it is a placeholder.
#[test]
fn markdown_names_only_source_paths_that_exist() {
    let mut pages = Vec::new();
    markdown_files(Path::new("."), &mut pages);
    assert!(pages.len() > 10, "found only {pages:?}");
    let mut stale = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let page_name = page.strip_prefix(".").unwrap_or(page).display().to_string();
        let text = std::fs::read_to_string(page).unwrap();
        for (number, line) in text.lines().enumerate() {
            let in_core = line.starts_with("  src/");
            for path in paths_in(line) {
                let ours = path.starts_with("crates/") || path.ends_with(".rs");
                if !ours
                    || path.contains("NAME")
                    || NOT_OURS.contains(&(page_name.as_str(), path.as_str()))
                {
                    continue;
                }
                let on_disk = if in_core && path.starts_with("src/") {
                    Path::new("crates/core").join(&path)
                } else {
                    PathBuf::from(&path)
                };
                checked += 1;
                if !on_disk.exists() {
                    stale.push(format!("{page_name}:{}: {path}", number + 1));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} paths checked");
    assert!(
        stale.is_empty(),
        "markdown names source files that do not exist (moved? fix the page):\n{}",
        stale.join("\n")
    );
}

/// The fenced block under ARCHITECTURE.md's "Layout of the code": the main crate's entries
/// (lines starting `src/`) and the core crate's (indented `  src/`), each as `src/NAME.rs` or
/// `src/NAME/`.
fn layout_entries() -> (BTreeSet<String>, BTreeSet<String>) {
    let text = std::fs::read_to_string("ARCHITECTURE.md").unwrap();
    let section = text
        .split("## Layout of the code")
        .nth(1)
        .expect("ARCHITECTURE.md has no \"Layout of the code\" section");
    let block = section.split("```").nth(1).expect("no fenced layout block");
    let (mut main, mut core) = (BTreeSet::new(), BTreeSet::new());
    for line in block.lines() {
        let first = |l: &str| l.split_whitespace().next().unwrap_or("").to_string();
        if line.starts_with("src/") {
            main.insert(first(line));
        } else if line.starts_with("  src/") {
            core.insert(first(line));
        }
    }
    (main, core)
}

/// A crate's modules as the layout names them: `src/NAME.rs` for a file, `src/NAME/` for a
/// folder (a module's submodules, or a module of its own with mod.rs).
fn modules_of(src: &str) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                format!("src/{name}/")
            } else {
                format!("src/{name}")
            }
        })
        .filter(|entry| entry.ends_with('/') || entry.ends_with(".rs"))
        .collect()
}

/// ARCHITECTURE.md's code layout lists every module of `src/` and `crates/core/src/` (issue
/// 45: it missed ten), and no module that is gone.
#[test]
fn architecture_layout_lists_every_module() {
    let (main, core) = layout_entries();
    for (crate_src, listed) in [("src", &main), ("crates/core/src", &core)] {
        let modules = modules_of(crate_src);
        let missing: Vec<_> = modules.difference(listed).collect();
        let gone: Vec<_> = listed.difference(&modules).collect();
        assert!(
            missing.is_empty(),
            "ARCHITECTURE.md's layout of the code does not list {crate_src}'s {missing:?}: add a line for each"
        );
        assert!(
            gone.is_empty(),
            "ARCHITECTURE.md's layout of the code lists {gone:?}, not in {crate_src}"
        );
    }
}

#[test]
fn paths_are_found_at_word_boundaries() {
    assert_eq!(
        paths_in("see `crates/core/src/diff/mod.rs`, and src/cli/ or a/src/x.rs."),
        ["crates/core/src/diff/mod.rs", "src/cli/"]
    );
}
