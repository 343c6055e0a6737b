//! Every code's evidence is present and well formed, and its recorded verification is green
//! (issue 22). Needs no network: it reads evidence/evidence.toml (compiled into the binary) and
//! evidence/verified.toml (written by scripts/verify-evidence.py), and runs the script's own
//! tests on a git repository made in a temporary directory.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use dflash_check::diagnostic::{Code, Severity};
use dflash_check::evidence::{self, Entry};
use dflash_check::registry;

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn is_repo(s: &str) -> bool {
    let mut parts = s.split('/');
    matches!((parts.next(), parts.next(), parts.next()), (Some(o), Some(n), None) if !o.is_empty() && !n.is_empty())
}

/// Every code is accounted for: evidence, a judgement (the tool's own), or an explicit pending
/// note saying what its engine claim lacks. Prints the coverage so CI logs show it.
#[test]
fn every_code_has_evidence_a_judgement_or_a_pending_note() {
    let mut uncovered = Vec::new();
    let (mut evidenced, mut full, mut judged, mut pending_only) = (0, 0, 0, 0);
    let mut errors_pending = Vec::new();
    for code in Code::all() {
        let name = code.as_str();
        let has_source = evidence::for_code(name)
            .any(|e| matches!(e, Entry::Source { .. } | Entry::Absence { .. }));
        let has_any = evidence::for_code(name).next().is_some();
        let judgement = evidence::judgement(name).is_some();
        let pending = evidence::pending(name).is_some();
        match (has_any, judgement, pending) {
            (false, false, false) => uncovered.push(name),
            (false, true, _) => judged += 1,
            (false, false, true) => pending_only += 1,
            (true, _, _) => evidenced += 1,
        }
        if has_source && !pending {
            full += 1;
        }
        if pending && registry::info(code).severity == Severity::Error {
            errors_pending.push(name);
        }
    }
    eprintln!(
        "evidence: {} codes; {evidenced} with evidence ({full} with line-level evidence and nothing \
         pending), {judged} the tool's own judgement, {pending_only} with nothing yet; error-level \
         codes with a pending part: {}",
        Code::all().len(),
        errors_pending.join(", ")
    );
    assert!(
        uncovered.is_empty(),
        "codes with neither evidence, a judgement nor a pending note in evidence/evidence.toml: {uncovered:?}"
    );
}

/// No entry names a code that does not exist (a typo would silently evidence nothing).
#[test]
fn evidence_names_only_known_codes() {
    let known: BTreeSet<&str> = Code::all().iter().map(|c| c.as_str()).collect();
    let ev = evidence::evidence();
    let named = ev
        .evidence
        .iter()
        .map(|e| e.code())
        .chain(ev.judgement.iter().map(|n| n.code))
        .chain(ev.pending.iter().map(|n| n.code));
    let unknown: Vec<&str> = named.filter(|c| !known.contains(c)).collect();
    assert!(unknown.is_empty(), "unknown codes: {unknown:?}");
}

/// Every entry is complete: a full commit (or a PyPI release), a line range, a sha256, a claim in our words; an
/// absence names files and identifiers; a report is a public thread with what it shows.
#[test]
fn every_entry_is_complete() {
    for e in evidence::evidence().evidence {
        let code = e.code();
        match e {
            Entry::Source {
                repo,
                path,
                commit,
                release,
                lines,
                sha256,
                claim,
                ..
            } => {
                assert!(is_repo(repo), "{code}: repo {repo:?} is not owner/name");
                assert!(
                    !path.is_empty() && !path.starts_with('/'),
                    "{code}: path {path:?}"
                );
                match (commit, release) {
                    (Some(commit), None) => assert!(
                        is_hex(commit, 40),
                        "{code}: commit {commit:?} is not 40 hex digits"
                    ),
                    (None, Some(release)) => {
                        assert!(
                            release.split_once("==").is_some_and(|(p, v)| !p.is_empty()
                                && v.starts_with(|c: char| c.is_ascii_digit())),
                            "{code}: release {release:?} is not package==version"
                        )
                    }
                    _ => panic!("{code}: give a commit or a release, one of them"),
                }
                assert!(
                    lines[0] >= 1 && lines[0] <= lines[1],
                    "{code}: line range {lines:?}"
                );
                assert!(
                    is_hex(sha256, 64),
                    "{code}: sha256 {sha256:?} is not 64 hex digits"
                );
                assert!(claim.len() > 20, "{code}: claim {claim:?} says too little");
            }
            Entry::Absence {
                repo,
                commit,
                paths,
                identifiers,
                claim,
                ..
            } => {
                assert!(is_repo(repo), "{code}: repo {repo:?}");
                assert!(is_hex(commit, 40), "{code}: commit {commit:?}");
                assert!(
                    !paths.is_empty() && !identifiers.is_empty(),
                    "{code}: absence of what, where?"
                );
                assert!(claim.len() > 20, "{code}: claim {claim:?}");
            }
            Entry::Report { url, shows, .. } => {
                assert!(
                    url.starts_with("https://github.com/")
                        && (url.contains("/issues/") || url.contains("/pull/")),
                    "{code}: {url:?} is not a GitHub issue or pull request"
                );
                assert!(shows.len() > 20, "{code}: what does {url} show?");
            }
        }
    }
    for n in evidence::evidence()
        .judgement
        .iter()
        .chain(evidence::evidence().pending)
    {
        assert!(n.why.len() > 10, "{}: say why", n.code);
    }
}

/// The tables the build step compiled in (crates/core/build.rs) are the file: every entry and
/// note in its order, field by field, escapes and optional fields included.
#[test]
fn compiled_tables_are_the_file() {
    let text = std::fs::read_to_string("evidence/evidence.toml").expect("evidence/evidence.toml");
    let file: toml::Table = toml::from_str(&text).expect("evidence/evidence.toml parses");
    let list = |key: &str| -> Vec<toml::Value> {
        file.get(key)
            .and_then(toml::Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let ev = evidence::evidence();
    let entries = list("evidence");
    assert_eq!(entries.len(), ev.evidence.len(), "[[evidence]] entries");
    for (written, compiled) in entries.iter().zip(ev.evidence) {
        assert_eq!(
            written.as_table(),
            Some(&entry_table(compiled)),
            "{}",
            compiled.location()
        );
    }
    for (key, notes) in [("judgement", ev.judgement), ("pending", ev.pending)] {
        let written = list(key);
        assert_eq!(written.len(), notes.len(), "[[{key}]] notes");
        for (w, n) in written.iter().zip(notes) {
            let mut t = toml::Table::new();
            t.insert("code".into(), n.code.into());
            t.insert("why".into(), n.why.into());
            assert_eq!(w.as_table(), Some(&t), "[[{key}]] {}", n.code);
        }
    }
}

/// A compiled entry as the TOML table it was written as.
fn entry_table(e: &Entry) -> toml::Table {
    let mut t = toml::Table::new();
    let strings = |t: &mut toml::Table, fields: &[(&str, &str)]| {
        for (k, v) in fields {
            t.insert(k.to_string(), (*v).into());
        }
    };
    let list = |v: &[&str]| toml::Value::Array(v.iter().map(|s| (*s).into()).collect());
    match e {
        Entry::Source {
            code,
            repo,
            path,
            commit,
            release,
            lines,
            sha256,
            claim,
        } => {
            let fields = [
                ("kind", "source"),
                ("code", code),
                ("repo", repo),
                ("path", path),
            ];
            strings(&mut t, &fields);
            strings(&mut t, &[("sha256", sha256), ("claim", claim)]);
            for (k, v) in [("commit", commit), ("release", release)] {
                if let Some(v) = v {
                    t.insert(k.into(), (*v).into());
                }
            }
            let lines = lines.iter().map(|&l| i64::from(l).into()).collect();
            t.insert("lines".into(), toml::Value::Array(lines));
        }
        Entry::Absence {
            code,
            repo,
            commit,
            paths,
            identifiers,
            claim,
        } => {
            let fields = [("kind", "absence"), ("code", code), ("repo", repo)];
            strings(&mut t, &fields);
            strings(&mut t, &[("commit", commit), ("claim", claim)]);
            t.insert("paths".into(), list(paths));
            t.insert("identifiers".into(), list(identifiers));
        }
        Entry::Report { code, url, shows } => {
            let fields = [
                ("kind", "report"),
                ("code", code),
                ("url", url),
                ("shows", shows),
            ];
            strings(&mut t, &fields);
        }
    }
    t
}

/// The recorded verification exists, covers every source and absence entry with the same
/// commit, lines and hash, and every result is ok.
#[test]
fn recorded_verification_covers_every_entry_and_is_green() {
    let text = std::fs::read_to_string("evidence/verified.toml")
        .expect("evidence/verified.toml: run scripts/verify-evidence.py (docs/evidence.md)");
    let verified: toml::Value = toml::from_str(&text).expect("evidence/verified.toml parses");
    let repos = verified["repos"].as_table().expect("[repos.*] tables");
    for (repo, r) in repos {
        assert!(
            r["commits"].as_array().is_some_and(|c| !c.is_empty()),
            "{repo}: commits"
        );
        assert!(
            r["verified"].as_str().is_some_and(|d| d.len() >= 10),
            "{repo}: date"
        );
    }
    let mut recorded: BTreeMap<String, &str> = BTreeMap::new();
    for e in verified["entry"].as_array().expect("[[entry]] records") {
        let key = format!(
            "{} {} {} {} {} {}",
            e["code"].as_str().unwrap_or(""),
            e["repo"].as_str().unwrap_or(""),
            e.get("commit")
                .or_else(|| e.get("release"))
                .and_then(|c| c.as_str())
                .unwrap_or(""),
            e.get("path").and_then(|p| p.as_str()).unwrap_or(""),
            e.get("lines").map(|l| l.to_string()).unwrap_or_default(),
            e.get("sha256").and_then(|p| p.as_str()).unwrap_or(""),
        );
        recorded.insert(key, e["result"].as_str().unwrap_or(""));
    }
    let mut unverified = Vec::new();
    for e in evidence::evidence().evidence {
        let key = match e {
            Entry::Source {
                code,
                repo,
                path,
                lines,
                sha256,
                ..
            } => format!(
                "{code} {repo} {} {path} [{}, {}] {sha256}",
                e.revision().unwrap_or_default(),
                lines[0],
                lines[1]
            ),
            Entry::Absence {
                code, repo, commit, ..
            } => format!("{code} {repo} {commit}   "),
            Entry::Report { .. } => continue,
        };
        match recorded.get(&key) {
            Some(&"ok") => {}
            other => unverified.push(format!(
                "{} ({})",
                e.location(),
                other.unwrap_or(&"not recorded")
            )),
        }
    }
    assert!(
        unverified.is_empty(),
        "evidence not verified as recorded (re-run scripts/verify-evidence.py):\n{}",
        unverified.join("\n")
    );
}

/// The script's own logic on a fixture repository: ok, a changed hash reported, a missing
/// source, moved and vanished lines at a newer commit, an absence re-searched.
#[test]
fn verify_script_passes_its_own_tests() {
    let python = ["python3", "python"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok());
    let Some(python) = python else {
        eprintln!("no python3: scripts/test_verify_evidence.py not run");
        return;
    };
    let out = Command::new(python)
        .arg("scripts/test_verify_evidence.py")
        .output()
        .expect("runs python");
    assert!(
        out.status.success(),
        "scripts/test_verify_evidence.py failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `explain` prints the claim with where to check it.
#[test]
fn explain_prints_the_evidence_location() {
    let mut out = Vec::new();
    let code = Code::all()
        .into_iter()
        .find(|c| c.as_str() == "sliding-window-missing")
        .unwrap();
    dflash_check::report::explain::write_explanation(&mut out, code).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("Evidence:"), "{out}");
    assert!(
        out.contains("sgl-project/SpecForge specforge/modeling/draft/dflash.py@a6b6b0230009d15ec2a97a57384e6f53f0f96946:59-67"),
        "{out}"
    );
}

/// SARIF's rule help carries the same evidence as `explain`.
#[test]
fn sarif_rule_help_carries_the_evidence() {
    let sarif = dflash_check::report::sarif::sarif("check", &[]);
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules");
    let rule = rules
        .iter()
        .find(|r| r["id"] == "mask-token-out-of-range")
        .expect("the rule is listed");
    let help = rule["help"]["text"].as_str().unwrap();
    assert!(help.contains("Evidence:"), "{help}");
    assert!(
        help.contains("sgl-project/sglang python/sglang/srt/speculative/dflash_worker.py@7f151c5ebdb3af4467c2a5d3ccc5f54e71d2ba35:232-238"),
        "{help}"
    );
}
