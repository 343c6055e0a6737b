//! bytes -> `doctor`'s reading of a server's answer about itself: SGLang's `/get_server_info`
//! (`ServerInfo::parse_sglang`) and vLLM's `/v1/models` (`ServerInfo::parse_vllm_models`), then
//! the SGLang launch command built from it, parsed as `doctor` parses it. Invariants: no panic; a
//! model path kept is none the server may not point at (`/proc`, `/dev`, `/sys`, a `..` step),
//! and a refused one is said; no value of the answer becomes a flag of the command; vLLM's
//! answer never names a drafter. Seeds: tests/bad-input/cases/server (fuzz/run.sh).
#![no_main]

use dflash_check::doctor::ServerInfo;
use libfuzzer_sys::fuzz_target;

fn allowed(path: &str) -> bool {
    let p = std::path::Path::new(path);
    !["/proc", "/dev", "/sys"].iter().any(|d| p.starts_with(d))
        && !p.components().any(|c| c == std::path::Component::ParentDir)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(info) = ServerInfo::parse_sglang("/get_server_info", text) {
        for kept in [&info.target, &info.drafter].into_iter().flatten() {
            assert!(allowed(kept), "{kept:?} was kept");
        }
        if let Some(args) = info.sglang_command() {
            // python -m sglang.launch_server --model-path T [--flag value]...: every value at
            // an odd place after the module is one of ours, never the answer's.
            for pair in args[3..].chunks(2) {
                assert!(pair[0].starts_with("--"), "{args:?}");
                assert!(pair.len() == 2 && !pair[1].starts_with('-'), "{args:?}");
            }
            let _ = dflash_check::launch::parse_input(&args, None);
        }
    }
    if let Some(info) = ServerInfo::parse_vllm_models("/v1/models", text) {
        assert!(info.drafter.is_none());
        if let Some(t) = &info.target {
            assert!(allowed(t), "{t:?} was kept");
        }
        assert!(info.sglang_command().is_none());
    }
});
