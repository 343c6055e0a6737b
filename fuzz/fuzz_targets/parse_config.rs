//! bytes -> config::parse -> compare with itself and with a fixed authority -> token decoding ->
//! both renderers. Invariants: no panic; compare(x, x) is empty.
#![no_main]

use std::path::Path;

use dflash_check::analysis::{DiffReport, TargetContext};
use dflash_check::diff::{token_fields, token_ids};
use dflash_check::report::{self, Format, Painter, RenderOptions};
use dflash_check::source::builtin::{Snapshot, QWEN3_6_27B};
use dflash_check::source::SnapshotAuthority;
use dflash_check::{config, diff};
use libfuzzer_sys::fuzz_target;

const REPO: &str = "z-lab/Qwen3.6-27B-DFlash";

fuzz_target!(|data: &[u8]| {
    let Ok(local) = config::parse(Path::new("config.json"), data) else {
        return;
    };
    let same = diff::compare(local.root(), local.root());
    assert!(same.is_empty(), "compare(x, x) is not empty: {same:?}");

    for (_, node) in token_fields(local.root()) {
        let _ = token_ids(node);
    }

    let snapshot = Snapshot::find(REPO).expect("built-in snapshot");
    let target = || TargetContext {
        facts: Some(QWEN3_6_27B.facts().into()),
        tokens: QWEN3_6_27B.token_table().into(),
        ..TargetContext::none()
    };
    // The fuzzed config as the local side, against the fixed authority...
    let report = DiffReport::build(local.clone(), snapshot.authority(None).into(), target());
    render(&report);
    // ...and as the authority, with the fixed config as the local side.
    let mut as_authority = snapshot.authority(None);
    let fixed = as_authority.config.clone();
    as_authority.config = local;
    let report = DiffReport::build(fixed, as_authority.into(), target());
    render(&report);
});

fn render(report: &DiffReport) {
    for format in [
        Format::Human,
        Format::Json,
        Format::Github,
        Format::Sarif,
        Format::Gitlab,
    ] {
        let options = RenderOptions {
            painter: Painter { enabled: true },
            deny_warnings: false,
            fails: report.fails(false),
        };
        let mut out = Vec::new();
        report::render(report, format, &options, &mut out).expect("write to a Vec");
        if matches!(format, Format::Json | Format::Sarif | Format::Gitlab) {
            let _: serde_json::Value = serde_json::from_slice(&out).expect("JSON output parses");
        }
    }
}
