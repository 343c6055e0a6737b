//! Library tests of the rule table: the list of codes and severities is snapshotted so that a
//! rename or a severity change shows in review.

use dflash_check::rules;

#[test]
fn rule_codes_and_severities() {
    let list: Vec<String> = rules::all_rules()
        .iter()
        .map(|r| format!("{} {}", r.code, r.severity.as_str()))
        .collect();
    insta::assert_json_snapshot!("rule_codes", list);
}

/// Every rule can be looked up by its code, and has an explanation and a source.
#[test]
fn every_rule_is_explained() {
    for r in rules::all_rules() {
        let found = rules::rule(r.code).unwrap();
        assert!(found.explanation.len() > 40, "{}", r.code);
        assert!(!found.source.is_empty(), "{}", r.code);
    }
}

/// docs/rules.md has a row for every rule, with its severity.
#[test]
fn docs_table_lists_every_rule() {
    let doc = std::fs::read_to_string("docs/rules.md").unwrap();
    for r in rules::all_rules() {
        let row = format!("| `{}` | {} |", r.code, r.severity.as_str());
        assert!(doc.contains(&row), "docs/rules.md lacks {row}");
    }
}
