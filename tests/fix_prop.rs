//! Property test of `fix`'s minimal edits: for generated configs and authorities (random key
//! subsets and orders, values of every JSON type, nested objects, random indentation, line
//! endings and separators) the fixed text parses, equals the authority plus the kept local-only
//! keys by value (`Node::same_value`), and differs from the input only inside the edit splices.

use dflash_check::fix::edit;
use dflash_check::json::{Document, Member, Node, Value};
use proptest::prelude::*;

/// A JSON value to generate (keys from a small pool so local and authority overlap).
#[derive(Debug, Clone)]
enum J {
    Null,
    Bool(bool),
    Int(i64),
    Float(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

const KEYS: &[&str] = &["a", "b", "c", "d", "e", "f", "g", "h", "caf\u{e9}", "q\"k"];

fn leaf() -> impl Strategy<Value = J> + Clone {
    prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        (-1000i64..1000).prop_map(J::Int),
        prop_oneof![
            Just("1e-06"),
            Just("0.000001"),
            Just("2.5"),
            Just("1E7"),
            Just("-0.0")
        ]
        .prop_map(|s| J::Float(s.to_string())),
        "[a-z\u{e9}\"\\\\\n ]{0,6}".prop_map(J::Str),
    ]
}

fn value() -> impl Strategy<Value = J> + Clone {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(J::Arr),
            object(inner),
        ]
    })
}

fn object(inner: impl Strategy<Value = J> + Clone) -> impl Strategy<Value = J> {
    prop::collection::vec((prop::sample::select(KEYS), inner), 0..6).prop_map(|kvs| {
        let mut seen: Vec<(String, J)> = Vec::new();
        for (k, v) in kvs {
            if !seen.iter().any(|(s, _)| s == k) {
                seen.push((k.to_string(), v));
            }
        }
        J::Obj(seen)
    })
}

/// How to write a document.
#[derive(Debug, Clone)]
struct Fmt {
    indent: Option<&'static str>,
    eol: &'static str,
    key_sep: &'static str,
    item_sep: &'static str,
    ascii: bool,
    final_eol: bool,
}

fn fmt() -> impl Strategy<Value = Fmt> {
    (
        prop_oneof![
            Just(None),
            Just(Some("  ")),
            Just(Some("    ")),
            Just(Some("\t"))
        ],
        prop_oneof![Just("\n"), Just("\r\n")],
        prop_oneof![Just(": "), Just(":"), Just(" : ")],
        prop_oneof![Just(", "), Just(",")],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(indent, eol, key_sep, item_sep, ascii, final_eol)| Fmt {
            indent,
            eol,
            key_sep,
            item_sep,
            ascii,
            final_eol,
        })
}

fn quote(s: &str, ascii: bool) -> String {
    edit::quote_style(s, ascii)
}

fn write(j: &J, f: &Fmt, depth: usize, out: &mut String) {
    let nl = |out: &mut String, d: usize| {
        if let Some(ind) = f.indent {
            out.push_str(f.eol);
            for _ in 0..d {
                out.push_str(ind);
            }
        }
    };
    let sep = if f.indent.is_some() { "," } else { f.item_sep };
    match j {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Int(i) => out.push_str(&i.to_string()),
        J::Float(t) => out.push_str(t),
        J::Str(s) => out.push_str(&quote(s, f.ascii)),
        J::Arr(items) if items.is_empty() => out.push_str("[]"),
        J::Obj(ms) if ms.is_empty() => out.push_str("{}"),
        J::Arr(items) => {
            out.push('[');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                nl(out, depth + 1);
                write(it, f, depth + 1, out);
            }
            nl(out, depth);
            out.push(']');
        }
        J::Obj(ms) => {
            out.push('{');
            for (i, (k, v)) in ms.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                nl(out, depth + 1);
                out.push_str(&quote(k, f.ascii));
                out.push_str(f.key_sep);
                write(v, f, depth + 1, out);
            }
            nl(out, depth);
            out.push('}');
        }
    }
}

fn render(j: &J, f: &Fmt) -> String {
    let mut s = String::new();
    write(j, f, 0, &mut s);
    if f.final_eol {
        s.push_str(f.eol);
    }
    s
}

/// The authority, plus every key only `local` has (recursively where both have objects).
fn expected(local: &Node, authority: &Node) -> Node {
    match (&local.value, &authority.value) {
        (Value::Object(lm), Value::Object(am)) => {
            let mut members: Vec<Member> = am
                .iter()
                .map(|m| Member {
                    key: m.key.clone(),
                    key_span: 0..0,
                    value: match local.get(&m.key) {
                        Some(l) => expected(l, &m.value),
                        None => m.value.clone(),
                    },
                })
                .collect();
            for m in lm {
                if authority.get(&m.key).is_none() {
                    members.push(m.clone());
                }
            }
            Node {
                value: Value::Object(members.into()),
                span: 0..0,
            }
        }
        _ => authority.clone(),
    }
}

fn top_object() -> impl Strategy<Value = J> {
    object(value())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn minimal_fix_is_correct_and_local(
        local in top_object(),
        authority in top_object(),
        lf in fmt(),
        af in fmt(),
        prune in any::<bool>(),
    ) {
        let input = render(&local, &lf);
        let auth_text = render(&authority, &af);
        let doc = Document::parse(&input).unwrap();
        let auth = Document::parse(&auth_text).unwrap();
        let plan = edit::plan(&doc, &auth.root, prune)
            .map_err(|e| TestCaseError::fail(format!("{e}\ninput:\n{input}\nauthority:\n{auth_text}")))?;

        // 1. It parses, and equals the authority plus the kept local-only keys by value.
        let fixed = Document::parse(&plan.text)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{}", plan.text)))?;
        let want = if prune { auth.root.clone() } else { expected(&doc.root, &auth.root) };
        prop_assert!(fixed.root.same_value(&want), "input:\n{}\nauthority:\n{}\nfixed:\n{}", input, auth_text, plan.text);

        // 2. It differs from the input only inside the splices: rebuild the output from the
        //    input's bytes between splices, and check every splice replaces whole values or
        //    separators (a set replaces exactly one value's text).
        let mut rebuilt = String::new();
        let mut cursor = 0;
        for s in &plan.splices {
            prop_assert!(s.range.start >= cursor);
            rebuilt.push_str(&input[cursor..s.range.start]);
            rebuilt.push_str(&s.text);
            cursor = s.range.end;
        }
        rebuilt.push_str(&input[cursor..]);
        prop_assert_eq!(&rebuilt, &plan.text);
        for s in &plan.splices {
            let old = &input[s.range.clone()];
            let is_value = plan.edits.iter().any(|e| {
                e.old.as_ref().is_some_and(|n| n.span == s.range)
            });
            let only_removed = {
                // What a removal cuts: removed members (key to value end) and the commas and
                // whitespace around them.
                let mut keep = vec![true; input.len()];
                for e in plan.edits.iter().filter(|e| e.action == edit::Action::Remove) {
                    let mut parent = e.path.clone();
                    let key = parent.0.pop();
                    let members = parent.lookup(&doc.root).and_then(Node::as_object).unwrap();
                    for m in members {
                        if key == Some(dflash_check::json::Segment::Key(m.key.as_str().into())) {
                            for k in keep.iter_mut().take(m.value.span.end).skip(m.key_span.start) {
                                *k = false;
                            }
                        }
                    }
                }
                input.bytes().enumerate().skip(s.range.start).take(s.range.len())
                    .all(|(i, c)| !keep[i] || c.is_ascii_whitespace() || c == b',')
            };
            prop_assert!(
                s.range.is_empty() || is_value || only_removed,
                "splice {:?} replaces {:?}", s.range, old
            );
        }

        // 3. Fixing again is a no-op.
        let again = edit::plan(&fixed, &auth.root, prune).unwrap();
        prop_assert_eq!(&again.text, &plan.text);
    }
}
