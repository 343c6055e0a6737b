//! bytes -> a Hub tree listing read as `launch -hf` reads it (`hub::parse_listing`, one
//! streaming pass, issue 44). Invariants: no panic; an answer or an error (bad response or too
//! large); a listing that parses as a JSON array of at most 100,000 entries gives the files a
//! `serde_json::Value` reading gave (the code before: `type: file`, a safe path, `lfs.size`
//! else `size`), in order; every kept path is one the repo may name.
#![no_main]

use dflash_check::hub::{parse_listing, RepoFile, MAX_LISTING_ENTRIES};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn by_value(items: &[Value]) -> Vec<(String, u64)> {
    items
        .iter()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("file"))
        .filter_map(|i| {
            let path = i.get("path")?.as_str()?;
            let size = i
                .get("lfs")
                .and_then(|l| l.get("size"))
                .or_else(|| i.get("size"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            Some((path.to_string(), size))
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let read = parse_listing("org/repo", data);
    let value: Option<Value> = serde_json::from_slice(data).ok();
    match (&read, value.as_ref().and_then(Value::as_array)) {
        (Ok(files), Some(items)) if items.len() <= MAX_LISTING_ENTRIES => {
            // The reference keeps unsafe paths too; the listing drops them.
            let kept: Vec<(String, u64)> = files
                .iter()
                .map(|f: &RepoFile| (f.path.clone(), f.size))
                .collect();
            let reference = by_value(items);
            let mut it = reference.iter();
            for f in &kept {
                assert!(it.any(|r| r == f), "{f:?} not in {reference:?}");
                let escapes = f.0.split('/').any(|c| matches!(c, "" | "." | ".."));
                assert!(!escapes && !f.0.contains('\\'), "{f:?}");
            }
        }
        (Ok(_), None) => panic!("accepted what serde_json refuses or is no array"),
        _ => {}
    }
});
