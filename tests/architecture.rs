//! The layers go one way: every library module may use only modules of a lower layer (see
//! ARCHITECTURE.md). Read from the source with comments and strings removed: each module a
//! file names — `crate::module`, the items of a `use crate::{…}` group over any number of
//! lines, and `super::` paths that climb to the crate root — must rank below the file's own
//! module. A new module must be given a layer here.

use std::collections::BTreeMap;
use std::path::Path;

/// The layers, bottom first. Modules on one line share a layer and may not use each other.
const LAYERS: &[&[&str]] = &[
    &["json", "exit", "error", "display"],
    &["config"],
    &["tokens"],
    &["text", "diagnostic", "target"],
    &["diff"],
    // Pure judgement ends here: no I/O below this line is reachable from rules. Everything up
    // to here is the core crate (crates/core), which has no network dependency to import.
    &["rules"],
    &["hub"],
    &["source"],
    &["analysis"],
    &["fix", "weights", "acceptance"],
    // Every input a command names, resolved (configs, weights, Hub repos): above what it reads.
    &["input"],
    // The pin file is written with fix's safe writer and lock.
    &["pins"],
    &["suppress"],
    &["check"],
    &["launch"],
    &["doctor"],
    &["registry"],
    // Evidence for the rules (evidence/evidence.toml): read by explain and SARIF.
    &["evidence"],
    &["report"],
];

/// The library's source roots: the no-network core crate (json … rules) and the main crate,
/// which re-exports the core's modules under the same names, so one layer list covers both.
const ROOTS: &[&str] = &["crates/core/src", "src"];

/// Whether `name` is a top-level module of the library (a file or folder under a root).
fn is_module(name: &str) -> bool {
    ROOTS.iter().map(Path::new).any(|src| {
        src.join(format!("{name}.rs")).is_file() || src.join(name).join("mod.rs").is_file()
    })
}

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The source without comments (`//…` to the end of the line, `/* … */`) and without the
/// contents of string literals, so that neither can name a module.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1)) {
            (b'/', Some(b'/')) => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    out.push(if b[i] == b'\n' { '\n' } else { ' ' });
                    i += 1;
                }
                i += 2;
            }
            (b'"', _) => {
                out.push('"');
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    if i < b.len() && b[i] == b'\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
                out.push('"');
                i += 1;
            }
            (c, _) => {
                out.push(c as char);
                i += 1;
            }
        }
    }
    out
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The top-level items of a `{…}` group starting right after its `{` (nested groups skipped).
fn group_items(group: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(ident(group[start..i].trim()));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(ident(group[start..i].trim()));
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// The crate-level names a piece of code refers to: `crate::x::…`, the items of `crate::{…}`
/// (over several lines too), and `super::…` paths that climb to the crate root from a file
/// `depth` modules deep (`src/a.rs` is 1, `src/a/b.rs` 2).
fn references_at(code: &str, depth: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::` in macros, or a longer identifier
        }
        match rest.strip_prefix('{') {
            Some(group) => out.extend(group_items(group)),
            None => out.push(ident(rest)),
        }
    }
    let mut rest = code;
    while let Some(i) = rest.find("super::") {
        let before = rest[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            rest = &rest[i + "super::".len()..];
            continue; // counted with the first `super::` of the chain
        }
        let mut tail = &rest[i..];
        let mut climbs = 0;
        while let Some(t) = tail.strip_prefix("super::") {
            climbs += 1;
            tail = t;
        }
        rest = tail;
        if climbs < depth {
            continue; // still inside the file's own top-level module
        }
        match tail.strip_prefix('{') {
            Some(group) => out.extend(group_items(group)),
            None => out.push(ident(tail)),
        }
    }
    out.into_iter()
        .map(|n| match n.as_str() {
            // Re-exports and macros at the crate root, by the module that defines them.
            "Error" | "Result" => "error".to_string(),
            "declare_code_names" => "diagnostic".to_string(),
            _ => n,
        })
        .filter(|n| !n.is_empty() && n != "self")
        .collect()
}

/// [`references_at`] for one line of a top-level file.
fn references(line: &str) -> Vec<String> {
    references_at(line, 1)
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
    for root in ROOTS {
        let mut found = Vec::new();
        walk(Path::new(root), &mut found);
        files.extend(found.into_iter().map(|f| (*root, f)));
    }
    let mut violations: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (root, file) in files {
        let rel = file.strip_prefix(root).unwrap();
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
        let text = code_only(&std::fs::read_to_string(&file).unwrap());
        // `src/a.rs` and `src/a/mod.rs` are one module deep, `src/a/b.rs` two.
        let depth = rel.components().count() - usize::from(rel.ends_with("mod.rs"));
        for (n, line) in text.lines().enumerate() {
            // A grouped import may span lines: read each statement from where it starts.
            let from = &text[text.lines().take(n).map(|l| l.len() + 1).sum::<usize>()..];
            let statement = if line.contains("crate::{") || line.contains("super::{") {
                &from[..from.find(';').map_or(from.len(), |e| e + 1)]
            } else {
                line
            };
            for used in references_at(statement, depth) {
                if used == module {
                    continue;
                }
                match rank(&used) {
                    Some(r) if r < own => {}
                    // Names that are no module (a type re-exported at the root) are not layers.
                    None if !is_module(&used) => {}
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

/// Multi-line groups, nested groups, `super::` paths that climb to the crate root, and
/// comments or strings that merely mention a module.
#[test]
fn references_see_multiline_groups_super_paths_and_skip_comments() {
    let code = code_only(
        "use crate::{\n    config::{self, ConfigFile},\n    report::Report,\n};\n// crate::check is a comment\nlet s = \"crate::launch\";\n",
    );
    assert_eq!(references_at(&code, 1), vec!["config", "report"]);
    // From src/a/b.rs, `super::` is src/a; `super::super::` is the crate root.
    assert_eq!(
        references_at("use super::sibling;", 2),
        Vec::<String>::new()
    );
    assert_eq!(
        references_at("use super::super::report::x;", 2),
        vec!["report"]
    );
    // From src/a.rs, `super::` is the crate root.
    assert_eq!(
        references_at("use super::{check, hub};", 1),
        vec!["check", "hub"]
    );
}

/// Modules of the core crate, and the crates that would give it a network or an async runtime.
const CORE_MODULES: &[&str] = &[
    "config",
    "diagnostic",
    "diff",
    "display",
    "error",
    "json",
    "rules",
    "target",
    "text",
    "tokens",
];
const NETWORK_CRATES: &[&str] = &[
    "reqwest",
    "hyper",
    "h2",
    "http",
    "tokio",
    "mio",
    "socket2",
    "rustls",
    "native-tls",
    "openssl",
    "ureq",
    "curl",
    "async-std",
    "futures",
    "hf-hub",
];

/// The core crate holds exactly the bottom layers, and nothing it depends on, directly or not,
/// opens a socket or runs an async runtime: `cargo tree` of its normal dependencies.
#[test]
fn core_crate_has_no_network_dependency() {
    let top = |root: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .map(|n| n.trim_end_matches(".rs").to_string())
            .filter(|n| n != "lib")
            .collect();
        names.sort();
        names.dedup();
        names
    };
    assert_eq!(top("crates/core/src"), CORE_MODULES);
    let core_rank = rank("rules").unwrap();
    for m in CORE_MODULES {
        assert!(
            rank(m).unwrap() <= core_rank,
            "{m} is a core module above rules"
        );
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-p",
            "dflash-check-core",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains(&"tokenizers"), "cargo tree read: {tree}");
    let network: Vec<&&str> = names
        .iter()
        .filter(|n| NETWORK_CRATES.contains(n))
        .collect();
    assert!(network.is_empty(), "the core crate depends on {network:?}");
}

/// Each file of the binary's `src/cli/`, comments and strings removed.
fn cli_files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir("src/cli")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| {
            let text = code_only(&std::fs::read_to_string(&p).unwrap());
            (p.display().to_string(), text)
        })
        .collect();
    files.sort();
    files
}

/// What the command line may not do itself: read configs, weights or pin files, fetch from the
/// Hub, probe paths, or resolve Hub settings; those are the library's (`input::Resolver`, one
/// per command). It writes its outputs (stdout, stderr, the GitHub step summary), so
/// `std::fs::OpenOptions` for appending is not on the list.
const CLI_FORBIDDEN: &[&str] = &[
    "config::load",
    "read_capped",
    "read_local",
    "read_hub",
    "read_file",
    "fetch",
    "pins::load",
    "pins::discover",
    ".is_file()",
    ".is_dir()",
    ".exists()",
    ".is_symlink()",
    "fs::read",
    "fs::metadata",
    "fs::symlink_metadata",
    "fs::canonicalize",
    "File::open",
    "HubSettings",
    "InputRef::parse",
];

/// Issue 21, "inputs resolved once": the CLI only defines arguments, builds the library's
/// request and dispatches.
#[test]
fn cli_reads_no_input_itself() {
    let mut found = Vec::new();
    for (file, text) in cli_files() {
        for (n, line) in text.lines().enumerate() {
            for word in CLI_FORBIDDEN {
                if line.contains(word) {
                    found.push(format!("{file}:{}: `{word}`", n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "the CLI reads or probes inputs itself (move it into the library):\n{}",
        found.join("\n")
    );
}

/// The library's non-test source of `file`: up to its `#[cfg(test)]` module.
fn non_test_code(file: &Path) -> String {
    let text = code_only(&std::fs::read_to_string(file).unwrap());
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Hub settings are resolved once per command: `HubSettings::resolve` is called in one place,
/// `SettingsCell::get` (a `OnceLock`: once per cell, its error kept for every caller; see
/// `input::tests::a_diff_resolves_the_hub_settings_once`); the binary builds one cell, in
/// `HubArgs::resolver`, and each command asks for its resolver at most once.
#[test]
fn hub_settings_are_resolved_once_per_command() {
    let mut files = Vec::new();
    walk(Path::new("src"), &mut files);
    let mut resolve_calls = Vec::new();
    let mut cells = Vec::new();
    for file in &files {
        let code = non_test_code(file);
        for (n, line) in code.lines().enumerate() {
            let at = format!("{}:{}", file.display(), n + 1);
            if line.contains("HubSettings::resolve(") {
                resolve_calls.push(at.clone());
            }
            if line.contains("SettingsCell::from_env(") {
                cells.push(at);
            }
        }
    }
    assert_eq!(resolve_calls.len(), 1, "{resolve_calls:?}");
    assert!(
        resolve_calls[0].starts_with("src/hub/settings.rs"),
        "{resolve_calls:?}"
    );
    assert_eq!(cells.len(), 1, "{cells:?}");
    assert!(cells[0].starts_with("src/cli/mod.rs"), "{cells:?}");
    for (file, text) in cli_files() {
        let asked = text.matches(".resolver()").count();
        assert!(
            asked <= 1,
            "{file} builds {asked} resolvers: one command, one set of Hub settings"
        );
    }
}

/// The rule layers: where every check that turns inputs into diagnostics lives.
const RULE_LAYERS: &[&str] = &[
    "crates/core/src/rules",
    "crates/core/src/diff",
    "src/weights",
    "src/launch",
    "src/acceptance",
];
const MAX_FUNCTION_LINES: usize = 100;

/// Every function in `code` (comments and strings removed): its name, first line and length in
/// lines from `fn` to its closing brace.
fn function_lengths(code: &str) -> Vec<(String, usize, usize)> {
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut search = 0;
    while let Some(found) = code[search..].find("fn ") {
        let at = search + found;
        search = at + 3;
        let word_start =
            at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let name = ident(&code[at + 3..]);
        if !word_start || name.is_empty() {
            continue;
        }
        // The body opens at the first `{` before any `;` (a declaration without a body).
        let rest = &code[at..];
        let (Some(open), semi) = (rest.find('{'), rest.find(';')) else {
            continue;
        };
        if semi.is_some_and(|s| s < open) {
            continue;
        }
        let mut depth = 0usize;
        let mut end = None;
        let body = &rest.as_bytes()[open..];
        let mut i = 0;
        while i < body.len() {
            match body[i] {
                // A char literal (`'{'`, `'\''`) is no brace; a lifetime (`'a`) has no closing quote.
                b'\'' if body.get(i + 1) == Some(&b'\\') => {
                    i += 2 + body[i + 2..].iter().position(|&b| b == b'\'').unwrap_or(0);
                }
                b'\'' if body.get(i + 2) == Some(&b'\'') => i += 2,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(at + open + i);
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if let Some(end) = end {
            out.push((name, line_of(at), line_of(end) - line_of(at) + 1));
        }
    }
    out
}

/// No function in the rule layers is longer than 100 lines: a rule reads as its knowledge
/// (issue 21), not as a walk through a long function.
#[test]
fn rule_layer_functions_are_short() {
    let mut long = Vec::new();
    for root in RULE_LAYERS {
        let mut files = Vec::new();
        walk(Path::new(root), &mut files);
        for file in files {
            let code = code_only(&std::fs::read_to_string(&file).unwrap());
            for (name, line, len) in function_lengths(&code) {
                if len > MAX_FUNCTION_LINES {
                    long.push(format!("{}:{line} fn {name}: {len} lines", file.display()));
                }
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines in the rule layers:\n{}",
        long.join("\n")
    );
}

#[test]
fn function_lengths_are_counted_from_fn_to_its_brace() {
    let code = "fn a() {\n    if x { y }\n}\ntrait T { fn b(&self); }\nfn c() -> u8 { 1 }\n\
                fn d<'a>(s: &'a str) -> bool {\n    s.starts_with('{') || s.ends_with('\\'')\n}\n";
    assert_eq!(
        function_lengths(code),
        vec![("a".into(), 1, 3), ("c".into(), 5, 1), ("d".into(), 6, 3)]
    );
}
