//! The minimal-edit rewriter: bytes = local config, a NUL byte, authority config. When both parse
//! as objects and `plan` succeeds: the new text parses; applying the splices to the original gives
//! exactly that text; no difference is left but the kept local-only keys; every byte outside the
//! splices is the original's; and fixing the result again changes nothing.
#![no_main]

use dflash_check::fix::edit::{apply, plan, residual};
use dflash_check::json::Document;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(split) = data.iter().position(|&b| b == 0) else {
        return;
    };
    let (Ok(local), Ok(authority)) = (
        Document::parse_bytes(&data[..split]),
        Document::parse_bytes(&data[split + 1..]),
    ) else {
        return;
    };
    if local.root.as_object().is_none() || authority.root.as_object().is_none() {
        return;
    }
    for prune in [false, true] {
        // An error (e.g. a layout change the rewriter refuses) is allowed; a panic is not.
        let Ok(p) = plan(&local, &authority.root, prune) else {
            continue;
        };
        let fixed = Document::parse(&p.text).expect("the fixed text parses");
        assert_eq!(
            apply(&local.text, &p.splices).unwrap(),
            p.text,
            "splices rebuild the text"
        );
        assert!(
            residual(&fixed.root, &authority.root, &p.kept_local_only).is_empty(),
            "differences left after the fix"
        );
        // Bytes outside the splices are the original's, in order.
        let mut cursor = 0;
        let mut out_pos = 0;
        for s in &p.splices {
            let keep = &local.text[cursor..s.range.start];
            assert_eq!(
                &p.text[out_pos..out_pos + keep.len()],
                keep,
                "untouched bytes changed"
            );
            out_pos += keep.len() + s.text.len();
            cursor = s.range.end;
        }
        assert_eq!(
            &p.text[out_pos..],
            &local.text[cursor..],
            "untouched tail changed"
        );
        let again = plan(&fixed, &authority.root, prune).expect("a fixed file plans again");
        assert!(again.splices.is_empty(), "fix is not idempotent");
    }
});
