//! The documentation names what the code has: every rule and check code, every command.

#[test]
fn readme_lists_every_lint_rule() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    for rule in dflash_check::rules::all_rules() {
        assert!(
            readme.contains(&format!("| `{}` |", rule.code)),
            "README lacks rule {}",
            rule.code
        );
    }
}

#[test]
fn ci_doc_lists_every_check_code() {
    let doc = std::fs::read_to_string("docs/ci.md").unwrap();
    for (code, _, _) in dflash_check::check::CHECK_CODES {
        assert!(
            doc.contains(&format!("| `{code}` |")),
            "docs/ci.md lacks {code}"
        );
    }
}
