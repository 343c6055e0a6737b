//! bytes -> a target config -> its quantization exclude list (every method: compressed-tensors,
//! quark, ModelOpt, fp8, AWQ, GPTQ's `dynamic`) -> a verdict for MTP module names in each
//! layout (DeepSeek's `model.layers.N.*` with SGLang's `model.decoder.*`, Qwen3.5's `mtp.*`).
//! Invariants: no panic; an exclude list is read or refused, never half-read; a verdict for
//! every name, the same asked twice.
#![no_main]

use std::path::Path;

use dflash_check::config;
use dflash_check::weights::quant_exclude::Exclusions;
use libfuzzer_sys::fuzz_target;

const NAMES: &[(&str, Option<&str>)] = &[
    ("mtp.fc", None),
    ("mtp.layers.0.self_attn.q_proj", None),
    ("mtp.layers.0.mlp.experts.3.up_proj", None),
    ("model.layers.61.eh_proj", Some("model.layers.61.")),
    (
        "model.layers.61.self_attn.q_a_proj",
        Some("model.layers.61."),
    ),
    (
        "model.layers.61.mlp.experts.0.down_proj",
        Some("model.layers.61."),
    ),
    ("", None),
    ("é.ü.experts.", Some("é.")),
];

fuzz_target!(|data: &[u8]| {
    let Ok(cfg) = config::parse(Path::new("config.json"), data) else {
        return;
    };
    let Ok(Some(ex)) = Exclusions::read(cfg.root()) else {
        return;
    };
    for (name, prefix) in NAMES {
        let first = ex.verdict_at(name, *prefix);
        assert_eq!(first, ex.verdict_at(name, *prefix), "{name}");
        let _ = ex.builds(name, *prefix);
        let _ = ex.sglang_name(name, *prefix);
    }
});
