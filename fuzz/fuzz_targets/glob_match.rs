//! text -> `suppress::glob`, the `[[ignore]]` path matcher: the input split at its first NUL is
//! the pattern and the path. Invariants: no panic; an answer within libFuzzer's timeout whatever
//! the pattern (the recursion it replaced took 23 s on 16 `*`); a pattern without wildcards
//! matches exactly itself (a trailing `/` aside); `**` matches every path; a pattern matches
//! itself with each `*` run of the path replaced by nothing.
#![no_main]

use dflash_check::suppress::glob;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (pattern, path) = text.split_once('\0').unwrap_or((&text, ""));
    let matched = glob(pattern, path);
    if !pattern.contains(['*', '?']) {
        assert_eq!(
            matched,
            pattern.trim_end_matches('/') == path,
            "{pattern:?} {path:?}"
        );
    }
    assert!(glob("**", path), "{path:?}");
    // Every `*` in a pattern can match nothing: the pattern with its stars removed (no `?`
    // left to stand for a character, no `**` segment left empty) is a path it matches.
    if !pattern.contains('?') && !pattern.contains("**") {
        let literal = pattern.trim_end_matches('/').replace('*', "");
        assert!(glob(pattern, &literal), "{pattern:?} {literal:?}");
    }
});
