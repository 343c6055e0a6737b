//! An exclude entry that names the fused module an engine builds (`…self_attn.qkv_proj`,
//! `…mlp.gate_up_proj`) rather than the checkpoint's shards (`q_proj`, `k_proj`, `v_proj`):
//! whether it keeps the BF16 shards unquantized depends on the method and the engine release
//! (read in vLLM 0.25.1, 0.28.0, 0.29.0, 0.30.0, 0.31.0, 0.34.0 and SGLang 0.5.10, 0.5.20,
//! 0.5.21, 0.5.23):
//!
//! - vLLM up to 0.29 expands a fused module into its shards and matches only their names
//!   (quark/utils.py, compressed_tensors/utils.py `should_ignore_layer`); from 0.30.0 both
//!   methods match the fused name first (`find_matching_patterns`, utils/config_utils.py),
//!   exact or `re:`;
//! - SGLang's compressed-tensors skips the expansion only for an entry equal to the fused name
//!   (a `re:` on it matches nothing) at every release read; its quark matches the fused name
//!   first from 0.5.21 ("a fused module can be excluded under its fused name");
//! - SGLang's Qwen3.5 MTP class has no `packed_modules_mapping` up to 0.5.20, so it matches the
//!   fused name whole there (any entry form), and builds a quark head BF16 for `mtp.` entries
//!   from 0.5.12 ([`super::quark_head`]); vLLM's has the mapping at every release read.
//!
//! An exact compressed-tensors entry is honoured everywhere, so the list's verdict says it
//! (`Exclusions::verdict`); the other forms are these rows, for Qwen3.5 heads, the family whose
//! MTP classes were read for it in both engines (other families' shards are matched by their
//! own names, as before).

use super::cx::Cx;
use super::quant_exclude::{Exclusions, FusedEntry, Method};
use crate::diagnostic::Severity;
use crate::engine::ANY_PATCH;
use crate::rules::{ByEngine, Engine, ReleaseRow};

const VLLM_SHARDS_ONLY: ReleaseRow = ReleaseRow::until_release(
    Engine::Vllm,
    (0, 29, ANY_PATCH),
    Some(Severity::Error),
    "expands the fused module into its shards and matches only their names (should_ignore_layer): the entry \
naming the fused module matches nothing, the layer is built quantized and the BF16 shards do not fit",
);
const VLLM_FUSED_FIRST: ReleaseRow = ReleaseRow::from_release(
    Engine::Vllm,
    (0, 30, 0),
    None,
    "matches the fused module's name first (find_matching_patterns, utils/config_utils.py): it loads",
);

/// quark, a Qwen3.5 head (`mtp.layers.N.*`), an entry (exact or `re:`) naming the fused module
/// of BF16 shards the list does not name.
pub(super) const QUARK_QWEN35_BY_ENGINE: ByEngine = ByEngine {
    case: Some("quark, a Qwen3.5 head, an entry naming the fused module of BF16 shards the list does not name"),
    no_engine: Some(Severity::Warning),
    rows: &[
        VLLM_SHARDS_ONLY,
        VLLM_FUSED_FIRST,
        ReleaseRow::any_version(
            Engine::Sglang,
            None,
            "matches the fused name whole up to 0.5.20 (its Qwen3.5 MTP class has no packed_modules_mapping) and \
first from 0.5.21: it loads",
        ),
    ],
};

/// compressed-tensors, a Qwen3.5 head, a `re:` entry matching the fused module's name but not
/// its shards'.
pub(super) const CT_REGEX_QWEN35_BY_ENGINE: ByEngine = ByEngine {
    case: Some("compressed-tensors, a Qwen3.5 head, a `re:` entry matching the fused module but not its BF16 shards"),
    no_engine: Some(Severity::Warning),
    rows: &[
        VLLM_SHARDS_ONLY,
        VLLM_FUSED_FIRST,
        ReleaseRow::until_release(
            Engine::Sglang,
            (0, 5, 20),
            None,
            "matches the fused name whole (its Qwen3.5 MTP class has no packed_modules_mapping): it loads",
        ),
        ReleaseRow::from_release(
            Engine::Sglang,
            (0, 5, 21),
            Some(Severity::Error),
            "expands the fused module (packed_modules_mapping on the Qwen3.5 MTP class) and skips the expansion \
only for an exact entry: the layer is built quantized",
        ),
    ],
};

/// A BF16 shard `module` of a Qwen3.5 head whose fused module an entry names: the entry, the
/// rows that judge it, and what SGLang does with such an entry there, in a few words (for the
/// message). `None` for other families, whose MTP classes' packed-module mappings per engine
/// release were not read: their shards are matched by their own names.
pub(super) fn case(
    cx: &Cx,
    ex: &Exclusions,
    module: &str,
) -> Option<(FusedEntry, &'static ByEngine, &'static str)> {
    if !module.starts_with("mtp.layers.") || !super::quark_head::is_qwen35(cx.v.config.root()) {
        return None;
    }
    let entry = ex.fused_entry(module)?;
    Some(match ex.method {
        Method::Quark => (
            entry,
            &QUARK_QWEN35_BY_ENGINE,
            "SGLang matches it for this Qwen3.5 head at every release read",
        ),
        _ => (
            entry,
            &CT_REGEX_QWEN35_BY_ENGINE,
            "SGLang matches it whole for this Qwen3.5 head up to 0.5.20 and only an exact entry from 0.5.21",
        ),
    })
}
