//! The layers go one way: every library module may use only modules of a lower layer (see
//! ARCHITECTURE.md). Read from the source with comments and strings removed: each module a
//! file names — `crate::module`, the items of a `use crate::{…}` group over any number of
//! lines, and `super::` paths that climb to the crate root — must rank below the file's own
//! module. A new module must be given a layer here. A core module that shares its name with a
//! main-crate module (the main crate's part does the I/O and re-exports the core's, like
//! `weights`) is ranked as `core::NAME` when a core file uses it. Inside a folder, the modules
//! use one another without a circle; no library function is over 100 lines; only `src/net.rs`
//! names the HTTP stack; the CLI reads no input itself; only the family module matches on a
//! drafter family.

use std::collections::BTreeMap;
use std::path::Path;

/// The layers, bottom first. Modules on one line share a layer and may not use each other.
const LAYERS: &[&[&str]] = &[
    &["json", "exit", "error", "display"],
    // YAML read from files that may be hostile (compose, manifests, engines' options files).
    &["config", "yaml"],
    // The family table reads a config to detect a family; nothing below the rules needs it.
    &["tokens", "family", "gguf"],
    // A draft model's vocabulary against its target's (reads tokenizer files, decodes by tokens).
    &["vocab"],
    // Evidence for the rules (evidence/evidence.toml, compiled in): data and its parsing only,
    // so that a diagnostic's source, explain, SARIF and the docs render provenance from it.
    &["evidence"],
    // The built-in snapshots of known drafters and their targets: compiled-in data.
    &["builtin"],
    &["text", "diagnostic", "target"],
    // The engines as a table (names, entrypoints, flags, releases read, default windows), what
    // each does at which release (`ByEngine`), the exclude-list matching each engine does.
    &["engine"],
    &["diff"],
    // One deployment (engine, method, K, flags, environment): what the engine rules read.
    &["deployment"],
    &["rules"],
    // The core's part of the other check families: weights reads the family lint detects;
    // launch's parsed command and its rules read the deployment rules' judgement.
    &["core::weights", "core::acceptance", "core::launch"],
    // Every code's documentation, gathered from every family's rules: above all of them.
    &["registry"],
    // Pure judgement ends here: no I/O below this line is reachable from rules. Everything up
    // to here is the core crate (crates/core), which has no network dependency to import.
    // The one HTTP client (redirects, deadline, caps, proxy and loopback, the token's origin):
    // below the Hub and the scraper, which both use it.
    &["net"],
    &["hub"],
    &["source"],
    &["analysis"],
    &["fix", "weights", "acceptance"],
    // Every input a command names, resolved (configs, weights, Hub repos): above what it reads.
    &["input"],
    // The pin file is written with fix's safe writer and lock.
    &["pins"],
    &["suppress"],
    // A classic draft model's tokenizer and its target's, read and compared for the rules.
    &["draft"],
    // One drafter through authority, target, diff, lint and weights, each input read once
    // through `input`: what check, lint, launch and doctor report differently.
    &["pipeline"],
    // `check` gates the Kubernetes manifests it finds through `launch` (issue 33).
    &["launch"],
    &["check"],
    &["doctor"],
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

/// The core crate's source root.
const CORE_ROOT: &str = "crates/core/src";

/// The layer of `module` as a file under `root` names it: from the core, a module the main
/// crate also has is the core's (`core::NAME`); from the main crate, the main crate's.
fn rank_in(root: &str, module: &str) -> Option<usize> {
    match root {
        CORE_ROOT => rank(&format!("core::{module}")).or_else(|| rank(module)),
        _ => rank(module),
    }
}

/// The source without comments (`//…` to the end of the line, `/* … */`) and without the
/// contents of string literals (plain, byte and raw: `r#"…"#`) and char literals (`'"'`,
/// `'{'`), so that none can name a module or open a brace; line breaks are kept.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    // Blanks `b[from..to]` into `out`, keeping its line breaks.
    let blank = |out: &mut String, from: usize, to: usize| {
        for &c in &b[from..to.min(b.len())] {
            out.push(if c == b'\n' { '\n' } else { ' ' });
        }
    };
    let mut i = 0;
    while i < b.len() {
        let after_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        match (b[i], b.get(i + 1)) {
            (b'/', Some(b'/')) => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
                blank(&mut out, i, end);
                i = end;
            }
            // A raw string: `r"…"`, `r#"…"#`, `br##"…"##`.
            (b'r', Some(b'"' | b'#'))
                if !after_ident
                    || (b[i - 1] == b'b'
                        && (i < 2 || !(b[i - 2].is_ascii_alphanumeric() || b[i - 2] == b'_'))) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let body = i + 2 + hashes;
                let end = text[body..].find(&close).map_or(b.len(), |e| body + e);
                out.push_str("r\"");
                blank(&mut out, body, end);
                out.push('"');
                i = end + close.len();
            }
            (b'"', _) => {
                out.push('"');
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        out.push(' ');
                        i += 1;
                    }
                    if i < b.len() {
                        out.push(if b[i] == b'\n' { '\n' } else { ' ' });
                    }
                    i += 1;
                }
                out.push('"');
                i += 1;
            }
            // A char literal (`'"'`, `'\''`, `'é'`); a lifetime (`'a`) has no closing quote.
            (b'\'', Some(_)) => {
                // The whole literal's length, quotes included.
                let len = if b[i + 1] == b'\\' {
                    b.get(i + 3..)
                        .and_then(|r| r.iter().position(|&c| c == b'\''))
                        .map(|p| p + 4)
                } else {
                    text[i + 1..]
                        .chars()
                        .next()
                        .map(char::len_utf8)
                        .filter(|&n| b.get(i + 1 + n) == Some(&b'\''))
                        .map(|n| n + 2)
                };
                match len {
                    Some(n) => {
                        out.push_str("' '");
                        i += n;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            _ => {
                let ch = text[i..].chars().next().unwrap();
                out.push(ch);
                i += ch.len_utf8();
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
        // The binary (cli, main, its allocator) sits on top; lib.rs only declares modules.
        if matches!(module.as_str(), "cli" | "main" | "allocator" | "lib") {
            continue;
        }
        let own = rank_in(root, &module)
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
                match rank_in(root, &used) {
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
    "acceptance",
    "builtin",
    "config",
    "deployment",
    "diagnostic",
    "diff",
    "display",
    "engine",
    "error",
    "evidence",
    "family",
    "gguf",
    "json",
    "launch",
    "registry",
    "rules",
    "target",
    "text",
    "tokens",
    "vocab",
    "weights",
    "yaml",
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
    assert_eq!(top(CORE_ROOT), CORE_MODULES);
    let hub = rank("hub").unwrap();
    for m in CORE_MODULES {
        assert!(
            rank_in(CORE_ROOT, m).unwrap() < hub,
            "{m} is a core module at or above the Hub's layer"
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

/// The commands that run a drafter read their inputs through `input::Resolver` (and the drafter
/// pipeline), never around it: no config, Hub repo or target is read here directly.
#[test]
fn commands_read_inputs_through_the_resolver() {
    const FILES: &[&str] = &[
        "src/check.rs",
        "src/doctor/mod.rs",
        "src/doctor/gather.rs",
        "src/doctor/server.rs",
        "src/pins.rs",
        "src/launch/mod.rs",
        "src/launch/locate.rs",
    ];
    const AROUND: &[&str] = &[
        "config::load(",
        "hub::load(",
        "fetch_target(",
        "resolve_target(",
        "resolve_authority(",
    ];
    let mut found = Vec::new();
    for file in FILES {
        let code = non_test_code(Path::new(file));
        for (n, line) in code.lines().enumerate() {
            for word in AROUND {
                if line.contains(word) {
                    found.push(format!("{file}:{}: `{word}`", n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "read through input::Resolver or crate::pipeline instead:\n{}",
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

/// TEMPORARY (issue 29): what other branches are fixing at the same time as this test was
/// written, so that it passes meanwhile: `fn FILE NAME` for a function over 100 lines,
/// `circle FOLDER: MODULES` for an import circle as [`import_circles`] names it. The lead
/// empties it after merging those branches; an entry that no longer matches anything fails
/// its test, so none outlives its fix.
const PENDING_OTHER_BRANCHES: &[&str] = &[];

/// The entries of [`PENDING_OTHER_BRANCHES`] of one kind (`fn`, `circle`), without the kind.
fn pending(kind: &str) -> Vec<&'static str> {
    PENDING_OTHER_BRANCHES
        .iter()
        .filter_map(|e| e.strip_prefix(kind)?.strip_prefix(' '))
        .collect()
}

/// No library function (all of `src/`, the binary's `src/cli/` included, and `crates/`) is
/// longer than 100 lines: code reads as named steps (issue 21 for the rules, issue 29 for the
/// rest), not as a walk through a long function. `#[cfg(test)]` items are not counted: a test
/// is one scenario, read top to bottom.
#[test]
fn library_functions_are_short() {
    let mut long = Vec::new();
    let mut pending_seen = Vec::new();
    for (file, _, code) in library_files() {
        for (name, line, len) in function_lengths(&code) {
            if len <= MAX_FUNCTION_LINES {
                continue;
            }
            let file = file.display().to_string();
            let entry = format!("{file} {name}");
            if pending("fn").contains(&entry.as_str()) {
                pending_seen.push(entry);
                continue;
            }
            long.push(format!("{file}:{line} fn {name}: {len} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines:\n{}",
        long.join("\n")
    );
    let stale: Vec<_> = pending("fn")
        .into_iter()
        .filter(|e| !pending_seen.iter().any(|s| s == e))
        .collect();
    assert!(
        stale.is_empty(),
        "PENDING_OTHER_BRANCHES lists functions that are short now (or gone): remove {stale:?}"
    );
}

/// Char literals and raw strings hide their quotes and braces; test items are blanked.
#[test]
fn code_only_blanks_chars_raw_strings_and_test_items() {
    let code = code_only(
        "let q = '\"'; let b = '{'; let e = '\\''; fn f<'a>() {}\nlet r = br#\"}\"\"#; x",
    );
    assert_eq!(code.matches('{').count(), 1, "{code}");
    assert!(code.ends_with("; x"), "{code}");
    let kept =
        without_test_items("fn a() {}\n#[cfg(test)]\nmod tests {\n fn b() {}\n}\nfn c() {}\n");
    assert_eq!(
        function_lengths(&kept),
        vec![("a".into(), 1, 1), ("c".into(), 6, 1)]
    );
}

/// A circle is found through `super::` and `crate::` paths and through a face's re-exports.
#[test]
fn module_paths_are_made_absolute() {
    let own: Vec<String> = vec!["hub".into(), "http".into()];
    assert_eq!(
        module_paths("use super::{error::X, fetch};", &own),
        vec![vec!["hub", "error"], vec!["hub", "fetch"]]
    );
    assert_eq!(
        module_paths("crate::hub::cache::write(super::super::json::x)", &own),
        vec![vec!["hub", "cache", "write"], vec!["json", "x"]]
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

/// Every library source file under the roots, with its module path (`src/hub/http.rs` is
/// `["hub", "http"]`; `src/hub/mod.rs` and `src/pins.rs` are the folder's face, `["hub"]`,
/// `["pins"]`), comments, strings and `#[cfg(test)]` items removed.
fn library_files() -> Vec<(std::path::PathBuf, Vec<String>, String)> {
    let mut out = Vec::new();
    for root in ROOTS {
        let mut files = Vec::new();
        walk(Path::new(root), &mut files);
        files.sort();
        for file in files {
            let rel = file.strip_prefix(root).unwrap();
            let mut path: Vec<String> = rel
                .components()
                .map(|c| {
                    c.as_os_str()
                        .to_string_lossy()
                        .trim_end_matches(".rs")
                        .to_string()
                })
                .collect();
            if path.last().is_some_and(|l| l == "mod") {
                path.pop();
            }
            let code = without_test_items(&code_only(&std::fs::read_to_string(&file).unwrap()));
            out.push((file, path, code));
        }
    }
    out
}

/// `code` with every item marked `#[cfg(test)]` (a test module, a test-only function or
/// import) blanked out, its line breaks kept so that line numbers still match the file.
fn without_test_items(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    let mut search = 0;
    while let Some(found) = code[search..].find("#[cfg(test)]") {
        let at = search + found;
        let rest = &code[at..];
        // The item ends at its first `;` if that comes before its first `{`, else at the
        // brace that closes that `{`.
        let end = match (rest.find('{'), rest.find(';')) {
            (Some(open), semi) if semi.is_none_or(|s| open < s) => {
                let mut depth = 0usize;
                let mut end = rest.len();
                for (i, b) in rest.bytes().enumerate().skip(open) {
                    match b {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (_, Some(semi)) => semi + 1,
            _ => rest.len(),
        };
        for b in &mut out[at..at + end] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        search = at + end;
    }
    String::from_utf8(out).unwrap()
}

/// The module paths a file's code names, made absolute: `super::…` (climbing from the file's
/// own module `own`) and `crate::…`, each followed as far as its `a::b::c` chain goes, and each
/// item of a `{…}` group after it as one more path.
fn module_paths(code: &str, own: &[String]) -> Vec<Vec<String>> {
    let chain = |mut s: &str, mut base: Vec<String>| -> Vec<Vec<String>> {
        loop {
            if let Some(group) = s.strip_prefix('{') {
                return group_items(group)
                    .into_iter()
                    .filter(|i| !i.is_empty() && i != "self")
                    .map(|i| [base.clone(), vec![i]].concat())
                    .collect();
            }
            let name = ident(s);
            if name.is_empty() {
                return vec![base];
            }
            s = &s[name.len()..];
            base.push(name);
            match s.strip_prefix("::") {
                Some(t) => s = t,
                None => return vec![base],
            }
        }
    };
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let before = code[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
            continue;
        }
        out.extend(chain(&code[i + "crate::".len()..], Vec::new()));
    }
    for (i, _) in code.match_indices("super::") {
        let before = code[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue; // counted with the first `super::` of the chain
        }
        let mut tail = &code[i..];
        let mut climbs = 0;
        while let Some(t) = tail.strip_prefix("super::") {
            climbs += 1;
            tail = t;
        }
        let Some(keep) = own.len().checked_sub(climbs) else {
            continue;
        };
        out.extend(chain(tail, own[..keep].to_vec()));
    }
    out
}

/// For each folder (a module with a directory), the names its face (`mod.rs` or `x.rs`)
/// re-exports from its children: `pub use child::{A, b::C as D}` maps `A` and `D` to `child`.
fn re_exports(
    files: &[(std::path::PathBuf, Vec<String>, String)],
) -> BTreeMap<Vec<String>, BTreeMap<String, String>> {
    let mut out: BTreeMap<Vec<String>, BTreeMap<String, String>> = BTreeMap::new();
    for (_, path, code) in files {
        let map = out.entry(path.clone()).or_default();
        for (i, _) in code.match_indices("pub use ") {
            let stmt = &code[i + "pub use ".len()..];
            let stmt = &stmt[..stmt.find(';').unwrap_or(stmt.len())];
            let child = ident(stmt);
            let Some(rest) = stmt[child.len()..].strip_prefix("::") else {
                continue;
            };
            if child.is_empty() || matches!(child.as_str(), "crate" | "super" | "self") {
                continue;
            }
            // The names a `use` tree brings in: each leaf's last segment, or its alias.
            let flat: String = rest
                .chars()
                .filter(|c| !c.is_whitespace() || *c == ' ')
                .collect();
            for leaf in flat.split([',', '{', '}']) {
                let leaf = leaf.trim();
                let name = match leaf.split_once(" as ") {
                    Some((_, alias)) => alias.trim().to_string(),
                    None => leaf.rsplit("::").next().unwrap_or("").trim().to_string(),
                };
                if !name.is_empty() && name != "self" && name != "*" {
                    map.insert(name, child.clone());
                }
            }
        }
    }
    out
}

/// The uses between the modules of each folder: `(folder, from, to)` → the first place seen.
/// A use of a folder's face (`mod.rs`) is not counted: the face declares and re-exports every
/// child by nature; a name the face re-exports counts as a use of the child it comes from.
fn folder_uses() -> BTreeMap<(String, String, String), String> {
    let files = library_files();
    let faces = re_exports(&files);
    let children: std::collections::BTreeSet<Vec<String>> =
        files.iter().map(|(_, p, _)| p.clone()).collect();
    let mut uses = BTreeMap::new();
    for (file, own, code) in &files {
        for (n, line) in code.lines().enumerate() {
            let from = &code[code.lines().take(n).map(|l| l.len() + 1).sum::<usize>()..];
            let statement = if line.contains("::{") {
                &from[..from.find(';').map_or(from.len(), |e| e + 1)]
            } else {
                line
            };
            for used in module_paths(statement, own) {
                let common = own.iter().zip(&used).take_while(|(a, b)| a == b).count();
                // Uses across the crate root are the layers' business; uses of the face or of
                // the file's own module, no circle of the folder's.
                if common == 0 || common >= own.len() || common >= used.len() {
                    continue;
                }
                let folder = &own[..common];
                let mut to = used[common].clone();
                let child = [folder.to_vec(), vec![to.clone()]].concat();
                if !children.iter().any(|c| c.starts_with(&child)) {
                    match faces.get(folder).and_then(|m| m.get(&to)) {
                        Some(c) => to = c.clone(),
                        None => continue, // an item of the face itself
                    }
                }
                if to == own[common] {
                    continue;
                }
                uses.entry((folder.join("/"), own[common].clone(), to))
                    .or_insert_with(|| format!("{}:{}", file.display(), n + 1));
            }
        }
    }
    uses
}

/// The import circles among one folder's modules: each strongly connected group of two or
/// more modules, as `folder: a, b, c` with the uses that make it.
fn import_circles() -> BTreeMap<String, Vec<String>> {
    let uses = folder_uses();
    let mut graph: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (folder, from, to) in uses.keys() {
        graph
            .entry((folder.clone(), from.clone()))
            .or_default()
            .push(to.clone());
    }
    // Which modules of the folder `start` reaches.
    let reach = |folder: &str, start: &str| {
        let mut seen = std::collections::BTreeSet::new();
        let mut todo = vec![start.to_string()];
        while let Some(m) = todo.pop() {
            for next in graph.get(&(folder.to_string(), m)).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let mut circles = BTreeMap::new();
    for (folder, module) in graph.keys() {
        let mut group: Vec<String> = reach(folder, module)
            .into_iter()
            .filter(|other| reach(folder, other).contains(module))
            .collect();
        if group.is_empty() {
            continue;
        }
        if !group.contains(module) {
            group.push(module.clone());
        }
        group.sort();
        let name = format!("{folder}: {}", group.join(", "));
        let edges = uses
            .iter()
            .filter(|((f, a, b), _)| f == folder && group.contains(a) && group.contains(b))
            .map(|((_, a, b), at)| format!("{a} -> {b} ({at})"))
            .collect();
        circles.insert(name, edges);
    }
    circles
}

/// No import circle among the modules of one folder (issue 29): within a folder, as across
/// the crate root, uses go one way, so each module can be read knowing only what it uses.
#[test]
fn no_import_circle_inside_a_folder() {
    let circles = import_circles();
    let found: Vec<String> = circles
        .iter()
        .filter(|(name, _)| !pending("circle").contains(&name.as_str()))
        .map(|(name, edges)| format!("{name}\n    {}", edges.join("\n    ")))
        .collect();
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
    let stale: Vec<_> = pending("circle")
        .into_iter()
        .filter(|c| !circles.contains_key(*c))
        .collect();
    assert!(
        stale.is_empty(),
        "PENDING_OTHER_BRANCHES lists circles that are gone: remove {stale:?}"
    );
}

/// One HTTP client (issue 29): only `src/net.rs` names the HTTP stack or its runtime, so every
/// request gets its redirects, token rule, deadline, caps and proxy rule from one place.
#[test]
fn only_net_names_the_http_stack() {
    let mut found = Vec::new();
    for (file, path, code) in library_files() {
        if path == ["net"] {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            for word in ["reqwest", "tokio", "hyper"] {
                if line.contains(word) {
                    found.push(format!("{}:{}: `{word}`", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "HTTP outside src/net.rs (use crate::net):\n{}",
        found.join("\n")
    );
}

/// The family module, where every per-family fact is a row of its table.
const FAMILY_MODULE: &str = "crates/core/src/family/";
/// The enums whose variants only the family module may match on.
const FAMILY_ENUMS: &[&str] = &["Family", "DrafterLocation"];

/// The end of a delimited group opening at `code[open]` (`(`, `[` or `{`).
fn group_end(code: &str, open: usize) -> usize {
    let mut depth = 0i32;
    for (i, c) in code[open..].char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The patterns of a `match` body (the text inside its braces): each arm's text before its
/// `=>`, arms split at top-level commas or after a braced arm.
fn arm_patterns(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let rest = &body[i..];
        let mut depth = 0i32;
        let Some(arrow) = rest.char_indices().find_map(|(j, c)| {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                '=' if depth == 0 && rest[j..].starts_with("=>") => return Some(j),
                _ => {}
            }
            None
        }) else {
            break;
        };
        out.push(&rest[..arrow]);
        // The arm's expression: a block, or everything up to the next top-level comma.
        let expr = arrow + 2;
        let trimmed = rest[expr..].trim_start();
        let start = expr + (rest[expr..].len() - trimmed.len());
        let end = if trimmed.starts_with('{') {
            group_end(rest, start) + 1
        } else {
            let mut depth = 0i32;
            rest[start..]
                .char_indices()
                .find_map(|(j, c)| {
                    match c {
                        '(' | '[' | '{' => depth += 1,
                        ')' | ']' | '}' => depth -= 1,
                        ',' if depth == 0 => return Some(start + j),
                        _ => {}
                    }
                    None
                })
                .unwrap_or(rest.len())
        };
        i += end + 1;
    }
    out
}

/// Whether `pattern` names a variant of one of `enums` (`Family::Dflash`, not `RuleFamily::` or
/// `DraftFamily::`; `Engine::Vllm`, not `EngineRelease::`).
fn names_a_variant(pattern: &str, enums: &[&str]) -> bool {
    enums.iter().any(|e| {
        let needle = format!("{e}::");
        pattern.match_indices(&needle).any(|(at, _)| {
            let before = pattern[..at].chars().last();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    })
}

/// Each `match` (and `matches!`) in `code` whose patterns name a family variant, by line.
fn family_matches(code: &str) -> Vec<usize> {
    matches_over(code, FAMILY_ENUMS)
}

/// Each `match` (and `matches!`) in `code` whose patterns name a variant of one of `enums`.
fn matches_over(code: &str, enums: &[&str]) -> Vec<usize> {
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut out = Vec::new();
    for (at, _) in code.match_indices("match") {
        let before = code[..at].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "match".len()..];
        let patterns: Vec<&str> = if rest.starts_with("es!(") {
            // `matches!(value, patterns)`: everything after the first top-level comma.
            let open = at + "matches!".len();
            let inside = &code[open + 1..group_end(code, open)];
            let mut depth = 0i32;
            let comma = inside.char_indices().find_map(|(j, c)| {
                match c {
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => depth -= 1,
                    ',' if depth == 0 => return Some(j),
                    _ => {}
                }
                None
            });
            comma.map(|j| vec![&inside[j + 1..]]).unwrap_or_default()
        } else if rest.starts_with(|c: char| c.is_whitespace()) {
            // `match scrutinee { arms }`: the body is the first top-level `{`.
            let mut depth = 0i32;
            let Some(open) = rest.char_indices().find_map(|(j, c)| match c {
                '(' | '[' => {
                    depth += 1;
                    None
                }
                ')' | ']' => {
                    depth -= 1;
                    None
                }
                '{' if depth == 0 => Some(j),
                _ => None,
            }) else {
                continue;
            };
            let open = at + "match".len() + open;
            arm_patterns(&code[open + 1..group_end(code, open)])
        } else {
            continue;
        };
        // A guard (`Some(t) if name == Family::Speculators`) is a comparison, not a pattern.
        let without_guard = |p: &&str| -> bool {
            let cut = p
                .match_indices("if")
                .find(|(i, _)| {
                    let b = p[..*i].chars().last();
                    let a = p[i + 2..].chars().next();
                    b.is_some_and(char::is_whitespace) && a.is_some_and(char::is_whitespace)
                })
                .map_or(p.len(), |(i, _)| i);
            names_a_variant(&p[..cut], enums)
        };
        if patterns.iter().any(without_guard) {
            out.push(line_of(at));
        }
    }
    out
}

/// Every per-family fact is a row of the family table (crates/core/src/family/table.rs): a
/// `match` over `Family::` (or `DrafterLocation::`) variants anywhere else is a second table
/// that a new family would have to be added to (issue 29). Comparing with one variant
/// (`detection.name == Family::Speculators`) and listing the families a rule applies to stay
/// legal: they are a rule's own scope.
#[test]
fn only_the_family_module_matches_on_a_family() {
    let mut found = Vec::new();
    for root in ROOTS {
        let mut files = Vec::new();
        walk(Path::new(root), &mut files);
        for file in files {
            let shown = file.display().to_string();
            if shown.starts_with(FAMILY_MODULE) {
                continue;
            }
            let code = code_only(&std::fs::read_to_string(&file).unwrap());
            for line in family_matches(&code) {
                found.push(format!("{shown}:{line}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a match over the drafter family outside {FAMILY_MODULE} (read the fact from the family's \
         row, `family.spec()`, instead):\n{}",
        found.join("\n")
    );
}

/// The engine module, where every per-engine fact is a row of its table or its own code file.
const ENGINE_MODULE: &str = "crates/core/src/engine/";

/// Every per-engine fact is a row of the engine table (crates/core/src/engine/table.rs) or code
/// in the engine's own file (issue 39): outside the engine module no non-test code matches on an
/// `Engine` variant or compares a value with one (`engine == Engine::Vllm` is a branch on the
/// engine a new engine would have to be added to). Listing engines (a rule's scope, the rows of
/// what each engine does at which release) stays legal: it is data.
#[test]
fn only_the_engine_module_branches_on_an_engine() {
    let mut found = Vec::new();
    for root in ROOTS {
        let mut files = Vec::new();
        walk(Path::new(root), &mut files);
        for file in files {
            let shown = file.display().to_string();
            if shown.starts_with(ENGINE_MODULE) {
                continue;
            }
            let code = without_test_items(&code_only(&std::fs::read_to_string(&file).unwrap()));
            for line in matches_over(&code, &["Engine"]) {
                found.push(format!("{shown}:{line}: a match over an engine"));
            }
            for (at, _) in code.match_indices("Engine::") {
                let before = code[..at].trim_end();
                let named = !code[..at]
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_');
                if named
                    && (before.ends_with("==")
                        || before.ends_with("!=")
                        || before.ends_with("Some("))
                    && code[..at].trim_end().len() == before.len()
                {
                    let line = code[..at].matches('\n').count() + 1;
                    found.push(format!("{shown}:{line}: a comparison with an engine"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "outside {ENGINE_MODULE}, read the engine's row (`engine.spec()`) or call its code \
         (`engine.code()`), or declare what it does at which release as rows (`ByEngine`):\n{}",
        found.join("\n")
    );
}

/// The string literals of `text` (a file's source), with their lines: `"…"` only, escapes kept.
fn string_literals(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut line = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\'' if bytes.get(i + 2) == Some(&b'\'') || bytes.get(i + 1) == Some(&b'\\') => {
                // A char literal (`'"'`, `'\\''`): skip it whole.
                let close = text[i + 1..].find('\'').map_or(bytes.len(), |c| i + 1 + c);
                i = close.max(i + 2) + 1;
                continue;
            }
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < bytes.len() && bytes[j] != b'"' {
                    if bytes[j] == b'\\' {
                        j += 1;
                    }
                    if bytes.get(j) == Some(&b'\n') {
                        line += 1;
                    }
                    j += 1;
                }
                out.push((line, text[start..j.min(text.len())].to_string()));
                i = j + 1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The flags the engine table names: every `-`-led string literal of its rows and each engine
/// file's code.
fn engine_flags() -> std::collections::BTreeSet<String> {
    let mut flags = std::collections::BTreeSet::new();
    let mut files = Vec::new();
    walk(Path::new(ENGINE_MODULE), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut text = match text.find("#[cfg(test)]") {
            Some(i) => text[..i].to_string(),
            None => text,
        };
        // The switch lists say which flags take no value: they name no flag of the table's own
        // (`--offline` is also dflash-check's).
        while let Some(at) = text.find("_SWITCHES: &[&str] = &[") {
            let end = text[at..].find("];").map_or(text.len(), |e| at + e);
            text.replace_range(at..end, "");
        }
        for (_, s) in string_literals(&text) {
            let flag = s.len() > 1
                && s.starts_with('-')
                && s.chars()
                    .skip(1)
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
                && s.chars().any(|c| c.is_ascii_alphabetic());
            if flag {
                flags.insert(s);
            }
        }
    }
    flags
}

/// A flag the engine table names is spelled once, in the engine module (issue 39: the quoted
/// `"--speculative-config"` was in 12 files): non-test code elsewhere uses the engine file's
/// constant or the row's field.
#[test]
fn flag_literals_live_in_the_engine_module() {
    let flags = engine_flags();
    assert!(
        flags.contains("--speculative-config") && flags.contains("-md"),
        "{flags:?}"
    );
    let mut found = Vec::new();
    for root in ROOTS {
        let mut files = Vec::new();
        walk(Path::new(root), &mut files);
        for file in files {
            let shown = file.display().to_string();
            if shown.starts_with(ENGINE_MODULE) {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            let text = match text.find("#[cfg(test)]") {
                Some(i) => &text[..i],
                None => &text[..],
            };
            for (line, s) in string_literals(text) {
                if flags.contains(&s) {
                    found.push(format!("{shown}:{line}: {s:?}"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a flag the engine table names, spelled outside {ENGINE_MODULE}:\n{}",
        found.join("\n")
    );
}

#[test]
fn family_matches_are_found_in_match_arms_only() {
    let flagged = "fn f(x: Family) -> u8 {\n    match x {\n        Family::Dflash | Family::Dflash2 => 1,\n        _ => 2,\n    }\n}\n";
    assert_eq!(family_matches(flagged), vec![2]);
    let nested = "let k = match d {\n    Some(d) => match d.name {\n        (Family::Mtp, _) => 1,\n        _ => 0,\n    },\n    None => 0,\n};";
    assert_eq!(family_matches(nested), vec![2]);
    let macro_form = "if matches!(kind, Some(Family::Dspark)) {}";
    let guarded = "match t {\n    Some(t) if name == Family::Speculators => 1,\n    _ => 0,\n}";
    assert!(family_matches(guarded).is_empty());
    assert_eq!(family_matches(macro_form), vec![1]);
    // A family in an arm's value, a comparison, a list, another enum: not a match over it.
    let legal = "let f = match arg {\n    Arg::Dflash => Family::Dflash,\n    Arg::Mtp => { Family::Mtp }\n};\n\
                 if name == Family::Dspark {}\nconst A: &[Family] = &[Family::Domino];\n\
                 match self { RuleFamily::X => 1, DraftFamily::Eagle => 2 }";
    assert!(
        family_matches(legal).is_empty(),
        "{:?}",
        family_matches(legal)
    );
}

/// Provenance is written once, in evidence/evidence.toml: no `CodeInfo` literal carries a
/// `source:` field any more (`explain`, SARIF, docs and each diagnostic's `source` render it
/// with `evidence::source_text`), so a rule's cited source cannot drift from its evidence
/// (issue 29: 15 rules named commits none of their evidence used).
#[test]
fn no_source_literal_beside_the_evidence() {
    let mut found = Vec::new();
    for root in ROOTS {
        let mut files = Vec::new();
        walk(Path::new(root), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let code = code_only(&text);
            for (at, _) in code.match_indices("CodeInfo {") {
                let body = &code[at..];
                let end = body.find('}').unwrap_or(body.len());
                if body[..end].contains("source:") {
                    let line = code[..at].lines().count() + 1;
                    found.push(format!("{}:{line}", file.display()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "CodeInfo with a source: field (cite it in evidence/evidence.toml instead):\n{}",
        found.join("\n")
    );
}
