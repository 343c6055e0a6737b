//! json::Document::parse -> every node's source text re-parses to the same value; position_of
//! never panics for any path of the document (nor for paths that run past it); the line and
//! column of every node's start (from the line starts the parser notes) are those counted in
//! the text.
#![no_main]

use dflash_check::json::{Document, Path, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = Document::parse_bytes(data) else {
        return;
    };
    let mut stack = vec![(&doc.root, Path::root())];
    while let Some((node, path)) = stack.pop() {
        let text = doc.source(node);
        let again = Document::parse(text)
            .unwrap_or_else(|e| panic!("source of {path} does not re-parse: {e}: {text:?}"));
        assert!(
            again.root.same_value(node),
            "source of {path} re-parses to another value: {text:?}"
        );
        // Members shadowed by a later duplicate key are not reachable by path.
        let reachable = path
            .lookup(&doc.root)
            .is_some_and(|n| std::ptr::eq(n, node));
        if reachable {
            let (line, column) = doc.position_of(&path);
            assert!(line >= 1 && column >= 1);
        }
        let _ = doc.position_of(&path);
        let _ = doc.position_of(&path.child("no such key"));
        let _ = doc.position_of(&path.index(usize::MAX));
        assert_eq!(
            doc.line_col(node.span.start),
            counted_line_col(&doc.text, node.span.start),
            "position of {path}"
        );
        let _ = doc.line_col(node.span.end);
        let _ = node.to_compact();
        let _ = node.to_serde();
        match &node.value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    stack.push((item, path.index(i)));
                }
            }
            Value::Object(members) => {
                for m in members {
                    stack.push((&m.value, path.child(&m.key)));
                }
            }
            _ => {}
        }
    }
});

/// 1-based line and column (in characters) of `offset`, counted in the text.
fn counted_line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}
