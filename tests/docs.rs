//! The documentation's code tables are generated from the registry and must be current:
//! run `cargo run --example gen_docs` after changing a rule.

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

/// docs/rules.md lists every renamed code (an alias until the next release).
#[test]
fn rules_doc_lists_the_renamed_codes() {
    generated_block_is_current("docs/rules.md", "aliases", &registry::aliases_table());
}

/// The README's rules table is the registry's.
#[test]
fn readme_rules_table_is_generated_from_the_registry() {
    generated_block_is_current("README.md", "lint-rules", &registry::readme_table());
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
