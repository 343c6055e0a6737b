//! Every package in the dependency tree has a license expression that the allow-list of
//! `docs/licenses.md` satisfies (issue 25: a prebuilt binary must be clean to redistribute).
//! Reads `cargo metadata` (offline: the lock file and the local registry), so it needs no
//! network and no cargo-deny. Every package `cargo metadata` lists is checked, for every
//! platform and dev-dependencies included: stricter than what one binary links.

use std::process::Command;

/// SPDX identifiers a dependency may be used under, with why in docs/licenses.md. Keep the two
/// in step.
const ALLOWED: &[&str] = &[
    "Apache-2.0",
    "Apache-2.0 WITH LLVM-exception",
    "MIT",
    "MIT-0",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "ISC",
    "Zlib",
    "BSL-1.0",
    "Unlicense",
    "CC0-1.0",
    "Unicode-3.0",
    "CDLA-Permissive-2.0",
    "MPL-2.0",
];

/// Whether an SPDX license expression (`A OR B`, `A AND (B OR C)`, `A WITH E`, and the legacy
/// `A/B` for OR) is satisfied by the allow-list. `None` when it cannot be read.
fn satisfied(expression: &str) -> Option<bool> {
    let spaced = expression
        .replace('(', " ( ")
        .replace(')', " ) ")
        .replace('/', " OR ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let mut pos = 0;
    let value = or_expr(&tokens, &mut pos)?;
    (pos == tokens.len()).then_some(value)
}

fn or_expr(t: &[&str], pos: &mut usize) -> Option<bool> {
    let mut value = and_expr(t, pos)?;
    while t.get(*pos) == Some(&"OR") {
        *pos += 1;
        value |= and_expr(t, pos)?;
    }
    Some(value)
}

fn and_expr(t: &[&str], pos: &mut usize) -> Option<bool> {
    let mut value = term(t, pos)?;
    while t.get(*pos) == Some(&"AND") {
        *pos += 1;
        value &= term(t, pos)?;
    }
    Some(value)
}

fn term(t: &[&str], pos: &mut usize) -> Option<bool> {
    let first = *t.get(*pos)?;
    *pos += 1;
    if first == "(" {
        let value = or_expr(t, pos)?;
        (t.get(*pos) == Some(&")")).then_some(())?;
        *pos += 1;
        return Some(value);
    }
    if matches!(first, ")" | "OR" | "AND" | "WITH") {
        return None;
    }
    let mut id = first.to_string();
    if t.get(*pos) == Some(&"WITH") {
        id = format!("{first} WITH {}", t.get(*pos + 1)?);
        *pos += 2;
    }
    Some(ALLOWED.contains(&id.as_str()))
}

#[test]
fn every_dependency_license_is_allowed() {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    assert!(packages.len() > 100, "{} packages", packages.len());
    let mut refused = Vec::new();
    for p in packages {
        let who = format!("{} {}", p["name"].as_str().unwrap(), p["version"]);
        match p["license"].as_str() {
            Some(expr) => match satisfied(expr) {
                Some(true) => {}
                Some(false) => refused.push(format!("{who}: `{expr}` is not on the allow-list")),
                None => refused.push(format!("{who}: `{expr}` is not an SPDX expression")),
            },
            None => refused.push(format!(
                "{who}: no license expression (license-file {})",
                p["license_file"]
            )),
        }
    }
    assert!(
        refused.is_empty(),
        "licenses outside docs/licenses.md's allow-list:\n{}",
        refused.join("\n")
    );
}

/// The evaluator: OR needs one allowed side, AND both, WITH names one identifier, legacy `/`.
#[test]
fn expressions() {
    assert_eq!(satisfied("MIT OR Apache-2.0"), Some(true));
    assert_eq!(satisfied("MIT/Apache-2.0"), Some(true));
    assert_eq!(satisfied("LGPL-3.0"), Some(false));
    assert_eq!(satisfied("LGPL-3.0-only OR MIT"), Some(true));
    assert_eq!(satisfied("MIT AND GPL-2.0-only"), Some(false));
    assert_eq!(satisfied("(MIT OR Apache-2.0) AND Unicode-3.0"), Some(true));
    assert_eq!(satisfied("Apache-2.0 WITH LLVM-exception"), Some(true));
    assert_eq!(
        satisfied("GPL-2.0 WITH Classpath-exception-2.0"),
        Some(false)
    );
    assert_eq!(satisfied("MIT OR"), None);
    assert_eq!(satisfied("(MIT"), None);
}
