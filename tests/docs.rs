//! The documentation's code tables are generated from the registry and must be current:
//! run `cargo run --example gen_docs` after changing a rule. The README's statements about the
//! incident and its output samples are checked against what the binary prints, its install
//! figures against the measurements in bench/install-figures.toml, and docs/ci.md's JSON keys
//! against `check --format json`.

use dflash_check::registry;

fn generated_block_is_current(file: &str, name: &str, body: &str) {
    let doc = std::fs::read_to_string(file).unwrap();
    let want = registry::replace_generated(&doc, name, body)
        .unwrap_or_else(|| panic!("{file} lacks the GENERATED: {name} markers"));
    assert!(
        want == doc,
        "{file} is stale: run `cargo run --example gen_docs` and commit the result"
    );
}

/// docs/rules.md lists every code of every family, as the registry documents it.
#[test]
fn rules_doc_is_generated_from_the_registry() {
    generated_block_is_current("docs/rules.md", "codes", &registry::codes_table());
}

/// docs/engines.md's engine table and capability rows are the engine table's.
#[test]
fn engines_doc_is_generated_from_the_engine_table() {
    generated_block_is_current("docs/engines.md", "engines", &registry::engines_table());
    generated_block_is_current(
        "docs/engines.md",
        "capabilities",
        &registry::capabilities_table(),
    );
}

/// docs/rules.md lists every renamed code (an alias until the next release).
#[test]
fn rules_doc_lists_the_renamed_codes() {
    generated_block_is_current("docs/rules.md", "aliases", &registry::aliases_table());
}

/// The rules table of docs/commands.md (`lint`'s section) is the registry's.
#[test]
fn commands_doc_rules_table_is_generated_from_the_registry() {
    generated_block_is_current("docs/commands.md", "lint-rules", &registry::readme_table());
}

/// docs/weights.md's and docs/launch.md's code tables are the registry's, family by family.
#[test]
fn family_docs_are_generated_from_the_registry() {
    for (file, family) in [("docs/weights.md", "weights"), ("docs/launch.md", "launch")] {
        generated_block_is_current(
            file,
            &format!("{family}-codes"),
            &registry::family_table(family),
        );
    }
}

/// docs/evidence.md lists every code's evidence as evidence/evidence.toml has it.
#[test]
fn evidence_doc_is_generated_from_the_evidence_file() {
    generated_block_is_current(
        "docs/evidence.md",
        "evidence",
        &dflash_check::registry::evidence_markdown(),
    );
}

// ---------------------------------------------------------------------------------------------
// Issue 32: the README's statements about the incident and its figures are checked against
// what the tool prints and what was measured, so they cannot drift from either again.

#[path = "support/metrics.rs"]
mod metrics;

/// The README with every run of whitespace made one space: a wrapped phrase is found whole.
fn readme_flat() -> String {
    flat("README.md")
}

/// `file` with every run of whitespace made one space.
fn flat(file: &str) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn in_words(n: usize) -> &'static str {
    [
        "no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ]
    .get(n)
    .unwrap_or_else(|| panic!("{n} has no word here: add it"))
}

fn run(args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(args)
        .env("HF_HUB_OFFLINE", "1")
        .env_remove("HF_ENDPOINT")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

/// What the README says of the incident — how many fields differ, how many are errors and
/// warnings, which fields — is what the README's main command reports.
#[test]
fn readme_states_the_incident_as_its_main_command_reports_it() {
    let (code, out) = run(&[
        "diff",
        "fixtures/incident/Qwen3.6-27B-DFlash",
        "--target",
        "fixtures/targets/Qwen3.6-27B",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let differences = report["differences"].as_array().unwrap();
    let of = |severity: &str| -> Vec<&str> {
        differences
            .iter()
            .filter(|d| d["severity"] == severity)
            .map(|d| d["path"].as_str().unwrap())
            .collect()
    };
    let (errors, warnings) = (of("error"), of("warning"));
    assert_eq!(errors.len() + warnings.len(), differences.len(), "{out}");
    let phrase = format!(
        "{} differing fields ({} errors, {} warnings)",
        in_words(differences.len()),
        in_words(errors.len()),
        in_words(warnings.len())
    );
    let readme = readme_flat();
    // The introduction and "Two commands" say it, and docs/commands.md's acceptance section,
    // each in these words.
    assert_eq!(
        readme.matches(&phrase).count(),
        2,
        "README lacks {phrase:?}"
    );
    assert_eq!(readme.matches("differing fields").count(), 2);
    assert!(!readme.contains("wrong fields"), "a count in other words");
    let commands = flat("docs/commands.md");
    assert_eq!(
        commands.matches(&phrase).count(),
        1,
        "docs/commands.md lacks {phrase:?}"
    );
    assert_eq!(commands.matches("differing fields").count(), 1);
    // Every field is named in the introduction, errors before warnings.
    let intro = readme.split(" `dflash-check` makes").next().unwrap();
    let warned = intro
        .find("warnings:")
        .expect("the introduction lists the warnings");
    for (fields, before) in [(&errors, true), (&warnings, false)] {
        for path in fields {
            let leaf = format!("`{}`", path.rsplit('.').next().unwrap());
            let at = intro
                .find(&leaf)
                .unwrap_or_else(|| panic!("intro lacks {leaf}"));
            assert_eq!(
                at < warned,
                before,
                "{leaf} is listed with the wrong severity"
            );
        }
    }
}

/// docs/commands.md's acceptance sample: its command, run against the test server's collapse
/// scenario (the incident's 1.12 with K = 15), prints exactly the sample (the server's
/// ephemeral port written as the sample's 8000).
#[test]
fn readme_acceptance_sample_is_what_the_binary_prints() {
    let Some(server) = metrics::MetricsServer::start("vllm-collapse", &[]) else {
        return;
    };
    let (code, out) = run(&[
        "acceptance",
        &server.url(),
        "--min-acceptance-length",
        "5",
        "--color",
        "never",
    ]);
    assert_eq!(code, 1, "{out}");
    let out = out.replace(&server.url(), "http://127.0.0.1:8000");
    let doc = std::fs::read_to_string("docs/commands.md").unwrap();
    let sample = format!(
        "```text\n$ dflash-check acceptance http://127.0.0.1:8000 --min-acceptance-length 5\n{out}```"
    );
    assert!(
        doc.contains(&sample),
        "docs/commands.md's acceptance sample differs from:\n{out}"
    );
}

/// The README introduction's acceptance length is docs/commands.md's sample's, in words that
/// say what the maximum is: 1 + K (the bonus token), as the tool prints it.
#[test]
fn readme_acceptance_length_is_the_samples() {
    let doc = std::fs::read_to_string("docs/commands.md").unwrap();
    let line = doc
        .lines()
        .find(|l| l.trim_start().starts_with("acceptance length ") && l.contains("(K="))
        .expect("the acceptance sample's length line");
    // "  acceptance length 1.12 of 16 (K=15); draft-token acceptance 0.8%"
    let words: Vec<&str> = line.split_whitespace().collect();
    let (length, max) = (words[2], words[4]);
    let k = words[5]
        .trim_start_matches("(K=")
        .trim_end_matches(");")
        .parse::<u32>()
        .unwrap();
    assert_eq!(max.parse::<u32>().unwrap(), k + 1, "{line}");
    let phrase = format!("acceptance length of {length} of a possible {max} (K = {k})");
    assert!(readme_flat().contains(&phrase), "README lacks {phrase:?}");
}

/// docs/install.md's sizes and durations are the measurements in bench/install-figures.toml,
/// word for word, and it states no other; the README's Install section states none (each
/// figure once, where it was measured).
#[test]
fn install_figures_are_the_measured_ones() {
    #[derive(serde::Deserialize)]
    struct Figures {
        figure: Vec<Figure>,
    }
    #[derive(serde::Deserialize)]
    struct Figure {
        readme: String,
        what: String,
        measured: String,
    }
    let figures: Figures =
        toml::from_str(&std::fs::read_to_string("bench/install-figures.toml").unwrap()).unwrap();
    let readme = readme_flat();
    let start = readme.find("## Install").unwrap();
    let end = start + 2 + readme[start + 2..].find(" ## ").unwrap();
    assert_eq!(
        figures_in(&readme[start..end]),
        Vec::new(),
        "the README's Install section states figures: they belong in docs/install.md"
    );
    let page = flat("docs/install.md");
    let section = page.as_str();
    let mut covered = Vec::new();
    for f in &figures.figure {
        assert!(!f.what.is_empty() && !f.measured.is_empty(), "{}", f.readme);
        let found: Vec<_> = section.match_indices(&f.readme).collect();
        assert!(!found.is_empty(), "docs/install.md lacks {:?}", f.readme);
        covered.extend(found.iter().map(|(at, s)| *at..at + s.len()));
    }
    for (at, figure) in figures_in(section) {
        assert!(
            covered.iter().any(|r| r.contains(&at)),
            "docs/install.md states {figure:?}, which bench/install-figures.toml lacks"
        );
    }
}

/// Every number followed by a unit of size or time, with its position.
fn figures_in(text: &str) -> Vec<(usize, String)> {
    const UNITS: [&str; 8] = ["MB", "KB", "KiB", "MiB", "GB", "ms", "s", "min"];
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < bytes.len() && (bytes[j].is_ascii_digit() || b".,".contains(&bytes[j])) {
            j += 1;
        }
        let rest = &text[j..];
        let unit = UNITS.iter().find(|u| {
            rest.strip_prefix(' ')
                .and_then(|r| r.strip_prefix(**u))
                .is_some_and(|r| !r.starts_with(|c: char| c.is_alphanumeric()))
        });
        if let Some(u) = unit {
            out.push((i, format!("{} {u}", &text[i..j])));
        }
        i = j;
    }
    out
}

/// docs/ci.md names the keys of `check --format json`'s findings as `check` writes them (it
/// said `level` for `severity`).
#[test]
fn ci_doc_names_the_json_keys_check_writes() {
    let doc = std::fs::read_to_string("docs/ci.md").unwrap();
    let keys = doc
        .split("findings[{")
        .nth(1)
        .and_then(|rest| rest.split("}]").next())
        .expect("docs/ci.md describes check's JSON findings");
    let (_, out) = run(&["check", "fixtures/incident", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let finding = &report["drafters"][0]["findings"][0];
    let written: Vec<&String> = finding.as_object().unwrap().keys().collect();
    for key in keys.split(", ") {
        assert!(
            finding.get(key).is_some(),
            "docs/ci.md names `{key}`; check writes {written:?}"
        );
    }
}

/// Every `dflash-check` example in README.md and docs/ that runs on the repository's own files
/// (no Hub, no server, nothing written: `fix` only with `--dry-run`) runs: exit 0 or 1, never 2
/// (issue 45: the README's `weights` example and docs/fix.md's `fix` example exited 2). An
/// example on generated fixtures (target/…) runs when they have been generated.
#[test]
fn examples_on_the_repository_files_run() {
    let mut pages = vec!["README.md".to_string()];
    for entry in std::fs::read_dir("docs").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path.display().to_string());
        }
    }
    let mut ran = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for line in text.lines() {
            let command = line.split(" #").next().unwrap().trim();
            let Some(rest) = command.strip_prefix("dflash-check ") else {
                continue;
            };
            let args: Vec<&str> = rest.split_whitespace().collect();
            let offline = !["hf://", "--from-hub", "http", "<", "|", ">", "\\", "'", "$"]
                .iter()
                .any(|s| command.contains(s));
            let writes = args.first() == Some(&"fix") && !args.contains(&"--dry-run")
                || args.first() == Some(&"pin")
                || args.contains(&"--baseline");
            let on_files = args.iter().any(|a| a.contains("fixtures/"));
            if !offline || writes || !on_files {
                continue;
            }
            // Generated fixtures (target/…) exist only once generated; committed ones always.
            let missing = args
                .iter()
                .filter(|a| {
                    ["fixtures/", "target/", "tests/"]
                        .iter()
                        .any(|p| a.starts_with(p))
                })
                .find(|a| !std::path::Path::new(a).exists());
            if let Some(missing) = missing {
                assert!(
                    missing.starts_with("target/"),
                    "{page}: `{command}` names {missing}, which is not in the repository"
                );
                eprintln!(
                    "skipped `{command}`: {missing} not generated (scripts/weights-setup.sh)"
                );
                continue;
            }
            let (code, out) = run(&args);
            assert!(
                code == 0 || code == 1,
                "{page}: `{command}` exited {code}:\n{out}"
            );
            ran += 1;
        }
    }
    eprintln!("{ran} examples ran");
    assert!(ran >= 8, "only {ran} examples ran");
}

/// The README is a front page (issue 45): under 250 lines, and its `diff` sample is exactly
/// what its main command prints.
#[test]
fn readme_is_a_front_page_with_real_output() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    assert!(
        readme.lines().count() < 250,
        "README.md has {} lines: move the detail into docs/",
        readme.lines().count()
    );
    let args = [
        "diff",
        "fixtures/incident/Qwen3.6-27B-DFlash",
        "--target",
        "fixtures/targets/Qwen3.6-27B",
    ];
    let (code, out) = run(&[&args[..], &["--color", "never"]].concat());
    assert_eq!(code, 1, "{out}");
    let sample = format!("```text\n$ dflash-check {}\n{out}```", args.join(" "));
    assert!(
        readme.contains(&sample),
        "README.md's diff sample differs from:\n{out}"
    );
}
