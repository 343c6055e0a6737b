//! The drafter families, one row each: everything the tool knows per family lives here, as
//! data. Detection (`super::detect`) reads the architecture names and keys; lint, weights,
//! launch and acceptance read the rule scope; the command line's `--family` and
//! `--draft-family` values are the rows' names. Adding a family is one row here (and its
//! `Family` variant) plus its rules.
//!
//! Sources, per column: architectures — vLLM vllm/config/speculative.py@002e77c
//! (auto-detection and architecture rewrites), SpecForge specforge/modeling/draft/*.py@a6b6b02,
//! speculators src/speculators/models/*/config.py@c05b95b, AngelSlim's Qwen DFlash/DFlare
//! drafters; engine names — vLLM's `SpeculativeMethod` (speculative.py@002e77c: `dflash`,
//! `dspark`, `eagle3`, `mtp`; no Domino method), SGLang 0.5.23's `--speculative-algorithm`
//! (DFLASH serves DFlash, DFlash2 and Domino: dflash_utils.py parse_dflash_draft_config reads
//! `projector_type`; DSPARK; EAGLE3); K conventions — z-lab README@44947fb (K = block_size - 1),
//! speculators models/dspark/config.py@c05b95b:28 (DSpark drafts its anchor: K = block_size);
//! draft-cost ratios — docs/acceptance.md, "Break-even"; TensorRT-LLM's decoding types —
//! llmapi/llm_args.py (the newest code read: DFlash, DSpark, Eagle3, MTP, Draft_Target). No row
//! names a llama.cpp method yet (its --spec-type is judged by its own launch rules).

use super::{
    ArchPattern, DraftCost, DrafterLocation, EngineNames, Family, FamilySpec, Forwards,
    KConvention, RuleScope, WeightsLayout,
};

const SEPARATE: &[DrafterLocation] = &[DrafterLocation::Separate];

/// No engine name known.
const NO_ENGINE: EngineNames = EngineNames {
    vllm: None,
    vllm_aliases: &[],
    sglang: None,
    llama_cpp: None,
    trtllm: None,
};

/// DFlash-style block drafters: one drafter forward drafts the whole block.
const BLOCK_COST: Option<DraftCost> = Some(DraftCost {
    forwards: Forwards::PerBlock,
    default_cost_ratio: 0.15,
});
/// EAGLE-style heads: one drafter forward per drafted token.
const TOKEN_COST: Option<DraftCost> = Some(DraftCost {
    forwards: Forwards::PerToken,
    default_cost_ratio: 0.05,
});

const BLOCK_DRAFTER: RuleScope = RuleScope {
    block_drafter: true,
    eagle_like: false,
    weights: None,
    launch_k: Some(KConvention::BlockMinusOne),
    acceptance: BLOCK_COST,
};

/// Every family, in detection order for the architecture patterns (a name containing
/// `DFlash` before one containing `eagle3`, before the MTP suffixes).
pub const ROWS: &[FamilySpec] = &[
    FamilySpec {
        family: Family::Dflash,
        cli: "dflash",
        cli_aliases: &[],
        display: "DFlash",
        architectures: &[
            "DFlashDraftModel",
            "QwenDFlashDraftModel",
            "QwenDFlareDraftModel",
            "DFlashQwen3ForCausalLM",
            "DFlashLagunaForCausalLM",
            "MuseGlimmerAssistantModel",
        ],
        arch_patterns: &[ArchPattern::Contains("DFlash")],
        detection_keys: &["dflash_config"],
        speculators_type: Some("dflash"),
        locations: SEPARATE,
        engines: EngineNames {
            vllm: Some("dflash"),
            sglang: Some("DFLASH"),
            trtllm: Some("DFlash"),
            ..NO_ENGINE
        },
        rules: RuleScope {
            weights: Some(WeightsLayout::Dflash),
            ..BLOCK_DRAFTER
        },
    },
    FamilySpec {
        family: Family::Dflash2,
        cli: "dflash2",
        cli_aliases: &[],
        display: "DFlash2",
        architectures: &["DFlash2DraftModel"],
        arch_patterns: &[],
        detection_keys: &[
            "conv_kernel_size",
            "conv_group_size",
            "selector_rank",
            "selector_top_k",
        ],
        speculators_type: None,
        locations: SEPARATE,
        engines: EngineNames {
            vllm: Some("dflash"),
            sglang: Some("DFLASH"),
            ..NO_ENGINE
        },
        rules: RuleScope {
            weights: Some(WeightsLayout::Dflash2),
            ..BLOCK_DRAFTER
        },
    },
    FamilySpec {
        family: Family::Dspark,
        cli: "dspark",
        cli_aliases: &[],
        display: "DSpark",
        architectures: &[
            "DSparkDraftModel",
            "Qwen3DSparkModel",
            "Qwen3OmniDSparkModel",
            "Gemma4DSparkModel",
            "K3DSparkModel",
            "DSparkV41DraftModel",
            "DSparkSpeculator",
        ],
        arch_patterns: &[],
        // A DSpark head embedded in a DeepSeek-V4 target's config (vLLM PR 41834, sglang PR
        // 29538).
        detection_keys: &[
            "dspark_target_layer_ids",
            "dspark_noise_token_id",
            "dspark_block_size",
            "dspark_markov_rank",
        ],
        speculators_type: Some("dspark"),
        locations: &[DrafterLocation::Separate, DrafterLocation::EmbeddedInTarget],
        engines: EngineNames {
            vllm: Some("dspark"),
            sglang: Some("DSPARK"),
            trtllm: Some("DSpark"),
            ..NO_ENGINE
        },
        rules: RuleScope {
            launch_k: Some(KConvention::Block),
            ..BLOCK_DRAFTER
        },
    },
    FamilySpec {
        family: Family::Domino,
        cli: "domino",
        cli_aliases: &[],
        display: "Domino",
        architectures: &["DominoDraftModel"],
        arch_patterns: &[],
        detection_keys: &[],
        speculators_type: None,
        locations: SEPARATE,
        // SGLang serves Domino through its DFlash worker (projector_type "domino"); vLLM has no
        // Domino method and its DFlash model has no GRU projector.
        engines: EngineNames {
            sglang: Some("DFLASH"),
            ..NO_ENGINE
        },
        rules: BLOCK_DRAFTER,
    },
    FamilySpec {
        family: Family::Peagle,
        cli: "peagle",
        cli_aliases: &[],
        display: "P-EAGLE",
        architectures: &[
            "PEagleDraftModel",
            "PeagleLlamaForCausalLM",
            "PeagleQwen3ForCausalLM",
            "PEagleSpeculator",
        ],
        arch_patterns: &[],
        detection_keys: &["pard_token", "ptd_token_id"],
        speculators_type: Some("peagle"),
        locations: SEPARATE,
        engines: EngineNames {
            vllm: Some("eagle3"),
            vllm_aliases: &["eagle"],
            sglang: Some("EAGLE3"),
            ..NO_ENGINE
        },
        // P-EAGLE drafts its positions in parallel: neither default cost model is known to fit.
        rules: RuleScope {
            block_drafter: false,
            eagle_like: true,
            weights: None,
            launch_k: None,
            acceptance: None,
        },
    },
    FamilySpec {
        family: Family::Eagle3,
        cli: "eagle3",
        // `--draft-family eagle`: EAGLE, EAGLE-3 and MTP heads share the per-token cost model.
        cli_aliases: &["eagle"],
        display: "EAGLE-3",
        architectures: &[],
        arch_patterns: &[ArchPattern::ContainsIgnoreCase("eagle3")],
        detection_keys: &[
            "eagle_config",
            "eagle_aux_hidden_state_layer_ids",
            "draft_vocab_size",
            "truncated_vocab_size",
        ],
        speculators_type: Some("eagle3"),
        locations: SEPARATE,
        engines: EngineNames {
            vllm: Some("eagle3"),
            vllm_aliases: &["eagle"],
            sglang: Some("EAGLE3"),
            trtllm: Some("Eagle3"),
            ..NO_ENGINE
        },
        rules: RuleScope {
            block_drafter: false,
            eagle_like: true,
            weights: Some(WeightsLayout::Eagle3),
            launch_k: None,
            acceptance: TOKEN_COST,
        },
    },
    FamilySpec {
        family: Family::Speculators,
        cli: "speculators",
        cli_aliases: &[],
        display: "speculators",
        architectures: &[],
        arch_patterns: &[],
        detection_keys: &["speculators_model_type", "speculators_config"],
        speculators_type: None,
        locations: SEPARATE,
        // The wrapped algorithm's row says how it is served (`Detection::effective`).
        engines: NO_ENGINE,
        rules: RuleScope {
            block_drafter: false,
            eagle_like: false,
            // The format renames tensors: no layout read from a loader.
            weights: None,
            launch_k: None,
            acceptance: None,
        },
    },
    FamilySpec {
        family: Family::Mtp,
        cli: "mtp",
        cli_aliases: &[],
        display: "MTP",
        architectures: &[],
        arch_patterns: &[
            ArchPattern::EndsWith("MTP"),
            ArchPattern::EndsWith("MTPModel"),
            ArchPattern::Contains("NextN"),
        ],
        detection_keys: &[],
        speculators_type: Some("mtp"),
        locations: &[DrafterLocation::EmbeddedInTarget],
        // SGLang serves an MTP head with EAGLE (NEXTN is read as EAGLE) and, for the targets
        // that ship their head inside (DeepseekV3ForCausalLM, Glm4MoeForCausalLM, …), drafts
        // from the target's own path: sglang 0.5.23 srt/arg_groups/speculative_hook.py.
        engines: EngineNames {
            vllm: Some("mtp"),
            sglang: Some("EAGLE"),
            trtllm: Some("MTP"),
            ..NO_ENGINE
        },
        rules: RuleScope {
            block_drafter: false,
            eagle_like: false,
            weights: None,
            launch_k: None,
            acceptance: TOKEN_COST,
        },
    },
    FamilySpec {
        family: Family::Draft,
        cli: "draft",
        cli_aliases: &["draft-model"],
        display: "draft model",
        // Never detected from a config: any causal LM can draft.
        architectures: &[],
        arch_patterns: &[],
        detection_keys: &[],
        speculators_type: None,
        locations: &[DrafterLocation::Separate, DrafterLocation::Gguf],
        engines: EngineNames {
            vllm: Some("draft_model"),
            sglang: Some("STANDALONE"),
            trtllm: Some("Draft_Target"),
            ..NO_ENGINE
        },
        rules: RuleScope {
            block_drafter: false,
            eagle_like: false,
            weights: None,
            launch_k: None,
            acceptance: None,
        },
    },
];
