//! text -> Kubernetes' `$(VAR)` expansion (`launch::k8s::kube_expand`, issue 44): the input
//! split at its first NUL into variable lines (`NAME=VALUE`, each value expanded with the ones
//! before it, as the kubelet expands env values) and a word. Invariants: no panic; an answer
//! within libFuzzer's timeout and under the byte cap; when the budget holds, the same text as
//! the kubelet's own algorithm (`expansion.Expand`, written again below in its quadratic form
//! for inputs small enough); a word without `$` is itself; `$$` is one `$`.
#![no_main]

use dflash_check::launch::k8s::{kube_expand, Budget, Vars, MAX_KUBE_EXPANDED_BYTES};
use libfuzzer_sys::fuzz_target;

/// The kubelet's `Expand`: an operator `$`, `$$` is `$`, `$(NAME)` the mapping's value or
/// itself when unset, `$(` without `)` and `$x` as written.
fn reference(input: &str, get: &dyn Fn(&str) -> Option<String>) -> String {
    let b = input.as_bytes();
    let mut out: Vec<u8> = Vec::new();
    let (mut checkpoint, mut cursor) = (0, 0);
    while cursor < b.len() {
        if b[cursor] == b'$' && cursor + 1 < b.len() {
            out.extend_from_slice(&b[checkpoint..cursor]);
            let rest = &input[cursor + 1..];
            let advance = match rest.as_bytes()[0] {
                b'$' => {
                    out.push(b'$');
                    1
                }
                b'(' => match rest[1..].find(')') {
                    Some(j) => {
                        let name = &rest[1..1 + j];
                        match get(name) {
                            Some(v) => out.extend_from_slice(v.as_bytes()),
                            None => out.extend_from_slice(format!("$({name})").as_bytes()),
                        }
                        j + 2
                    }
                    None => {
                        out.extend_from_slice(b"$(");
                        1
                    }
                },
                _ => {
                    out.push(b'$');
                    0
                }
            };
            cursor += advance;
            checkpoint = cursor + 1;
        }
        cursor += 1;
    }
    out.extend_from_slice(&b[checkpoint.min(b.len())..]);
    String::from_utf8(out).unwrap()
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (defs, word) = text.split_once('\0').unwrap_or(("", &text));
    let mut vars = Vars::default();
    let mut budget = Budget::default();
    let mut plain: Vec<(String, String)> = Vec::new();
    for line in defs.lines() {
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        let Ok(value) = kube_expand(value, &vars, &mut budget) else {
            return;
        };
        vars.set(name.to_string(), value.clone());
        plain.push((name.to_string(), value));
    }
    let Ok(out) = kube_expand(word, &vars, &mut budget) else {
        return;
    };
    assert!(out.len() <= MAX_KUBE_EXPANDED_BYTES);
    if !word.contains('$') {
        assert_eq!(out, word);
    }
    if word.len() < 4096 {
        let get = |n: &str| {
            plain
                .iter()
                .rev()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(out, reference(word, &get), "{word:?}");
    }
});
