//! Library tests of the registry: the list of codes and default severities of every family is
//! snapshotted so that a rename or a severity change shows in review.

use dflash_check::diagnostic::Code;
use dflash_check::registry;

#[test]
fn rule_codes_and_severities() {
    let list: Vec<String> = Code::all()
        .into_iter()
        .map(|c| {
            format!(
                "{} {} {}",
                c.family(),
                c.as_str(),
                registry::info(c).severity.as_str()
            )
        })
        .collect();
    insta::assert_json_snapshot!("rule_codes", list);
}

/// Every code has an explanation of substance and a cited source.
#[test]
fn every_code_is_explained() {
    for c in Code::all() {
        let i = registry::info(c);
        assert!(i.explanation.len() > 40, "{c}");
    }
}
