//! The layers go one way: every library module may use only modules of a lower layer (see
//! ARCHITECTURE.md). Read from the source: each `crate::module` a file names (outside comments)
//! must rank below the file's own module. A new module must be given a layer here.

use std::collections::BTreeMap;
use std::path::Path;

/// The layers, bottom first. Modules on one line share a layer and may not use each other.
const LAYERS: &[&[&str]] = &[
    &["json", "exit", "error"],
    &["config"],
    &["tokens"],
    &["text", "diagnostic", "target"],
    &["diff"],
    // Pure judgement ends here: no I/O below this line is reachable from rules.
    &["rules"],
    &["hub"],
    &["source", "input"],
    &["analysis"],
    &["pins", "fix", "weights", "acceptance"],
    &["check"],
    &["launch"],
    &["registry"],
    // Evidence for the rules (evidence/evidence.toml): read by explain and SARIF.
    &["evidence"],
    &["report"],
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The crate-level names a line refers to: `crate::x::…`, and the items of `crate::{…}`.
fn references(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out.into_iter()
        .map(|n| match n.as_str() {
            // Re-exports and macros at the crate root, by the module that defines them.
            "Error" | "Result" => "error".to_string(),
            "declare_code_names" => "diagnostic".to_string(),
            _ => n,
        })
        .filter(|n| !n.is_empty())
        .collect()
}

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn library_layers_go_one_way() {
    let mut files = Vec::new();
    walk(Path::new("src"), &mut files);
    let mut violations: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix("src").unwrap();
        let module = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        // The binary (cli, main) sits on top; lib.rs only declares modules.
        if matches!(module.as_str(), "cli" | "main" | "lib") {
            continue;
        }
        let own = rank(&module)
            .unwrap_or_else(|| panic!("module `{module}` has no layer in tests/architecture.rs"));
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for used in references(line) {
                if used == module {
                    continue;
                }
                match rank(&used) {
                    Some(r) if r < own => {}
                    _ => violations.entry(module.clone()).or_default().push(format!(
                        "{}:{} uses crate::{used}",
                        file.display(),
                        n + 1
                    )),
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "upward or sideways uses:\n{}",
        violations
            .values()
            .flatten()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The parser of references sees grouped imports and crate-root re-exports.
#[test]
fn references_are_read_from_grouped_imports() {
    assert_eq!(
        references("use crate::{config::ConfigFile, Error, tokens};"),
        vec!["config", "error", "tokens"]
    );
    assert_eq!(
        references("let x = crate::hub::fetch(crate::json::Path::root());"),
        vec!["hub", "json"]
    );
}
