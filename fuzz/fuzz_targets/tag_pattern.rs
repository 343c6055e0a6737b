//! text -> whether llama.cpp can compile a `-hf REPO:TAG` tag (`launch::ecma::compiles` on
//! `TAG[.-]`, libstdc++'s ECMAScript grammar, issue 44) and `launch::hf::tag_problem`.
//! Invariants: no panic; an answer within libFuzzer's timeout whatever the tag (the automaton
//! is capped at 100,000 states, as libstdc++ caps it); the two agree (a tag is invalid exactly
//! when the grammar refuses it); the same answer twice. Differential seeds: the tags of
//! tests/launch/ecma/verdicts.tsv, checked there against g++'s own `std::regex`.
#![no_main]

use dflash_check::launch::{ecma, hf};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(tag) = std::str::from_utf8(data) else {
        return;
    };
    let compiled = ecma::compiles(&format!("{tag}[.-]"));
    assert_eq!(compiled, ecma::compiles(&format!("{tag}[.-]")));
    let problem = hf::tag_problem(tag);
    match compiled {
        Err(why) if !tag.is_empty() => {
            assert_eq!(problem, Some(hf::TagProblem::Invalid(why)), "{tag:?}")
        }
        _ => assert!(
            !matches!(problem, Some(hf::TagProblem::Invalid(_))),
            "{tag:?}"
        ),
    }
});
