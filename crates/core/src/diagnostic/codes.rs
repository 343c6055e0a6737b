//! Every diagnostic code, by name: one enum per command family under one [`Code`].
//!
//! Only names live here (this is the bottom layer, below every family): each family documents
//! its codes where it raises them, and `crate::registry` gathers that documentation. Adding a
//! code means adding its name here and its documentation beside the code that raises it; a test
//! in `registry` fails if either is missing.

use std::fmt;

use serde::{Serialize, Serializer};

/// Declares a code enum: variants and their stable kebab-case text.
#[macro_export]
macro_rules! declare_code_names {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant ),*
        }

        impl $name {
            /// Every code, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The stable kebab-case text of the code.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),*
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

crate::declare_code_names! {
    /// `diff`: one code per kind of difference from the authority.
    pub enum DiffCode {
        Changed => "changed",
        TypeChanged => "type",
        OnlyLocal => "only-local",
        OnlyAuthority => "only-authority",
        OutOfRange => "out-of-range",
        Layout => "layout",
        Ambiguous => "authority-ambiguous",
    }
}

crate::declare_code_names! {
    /// `lint`: one code per rule of the registry in `rules`.
    pub enum LintCode {
        FieldType => "field-type",
        NonFiniteNumber => "non-finite-number",
        HiddenSizeMismatch => "hidden-size-mismatch",
        VocabSizeMismatch => "vocab-size-mismatch",
        BlockSizeMissing => "block-size-missing",
        MixedLayout => "mixed-layout",
        TargetLayerIdsMissing => "target-layer-ids-missing",
        TargetLayerIdsOutOfRange => "target-layer-ids-out-of-range",
        TargetLayerIdsLastLayer => "target-layer-ids-last-layer",
        TargetLayerIdsOrder => "target-layer-ids-order",
        TargetLayerIdsDuplicate => "target-layer-ids-duplicate",
        TargetLayerIdsFormula => "target-layer-ids-formula",
        AuxIdsTargetLayerIdsMismatch => "aux-ids-target-layer-ids-mismatch",
        NumTargetLayersMismatch => "num-target-layers-mismatch",
        FcWidth => "fc-width",
        MaskTokenMissing => "mask-token-missing",
        MaskTokenOutOfRange => "mask-token-out-of-range",
        MaskTokenCollision => "mask-token-collision",
        MaskTokenTextToken => "mask-token-text-token",
        MaskTokenString => "mask-token-string",
        MaskTokenStringAdded => "mask-token-string-added",
        LayerTypesMissing => "layer-types-missing",
        LayerTypesLength => "layer-types-length",
        LayerTypesUnknown => "layer-types-unknown",
        SlidingWindowMissing => "sliding-window-missing",
        DflashUseSwa => "dflash-use-swa",
        UseSlidingWindowInconsistent => "use-sliding-window-inconsistent",
        ConvSelectorPair => "conv-selector-pair",
        ConvSelectorTopLevel => "conv-selector-top-level",
        Dflash2SettingsVllm => "dflash2-settings-vllm",
        DominoConfig => "domino-config",
        RopeNeoxStyle => "rope-neox-style",
        SampleFromAnchorDflash => "sample-from-anchor-dflash",
        BlockSizeTooSmall => "block-size-too-small",
        DsparkExportLayout => "dspark-export-layout",
        DsparkProjectorType => "dspark-projector-type",
        DsparkMarkov => "dspark-markov",
        TokenIdOutOfRange => "token-id-out-of-range",
        TokenIdNotSpecial => "token-id-not-special",
        TokenIdTargetMismatch => "token-id-target-mismatch",
        DraftModelVocabSizeMismatch => "draft-model-vocab-size-mismatch",
        DraftModelVocabMismatch => "draft-model-vocab-mismatch",
        DraftModelTokenizerTypeMismatch => "draft-model-tokenizer-type-mismatch",
        DraftModelSpecialTokensMismatch => "draft-model-special-tokens-mismatch",
        DraftModelPreTokenizerMismatch => "draft-model-pre-tokenizer-mismatch",
        EagleAuxLayerIdsMissing => "eagle-aux-layer-ids-missing",
        EagleAuxLayerIdsNested => "eagle-aux-layer-ids-nested",
        EagleAuxLayerIdsOutOfRange => "eagle-aux-layer-ids-out-of-range",
        EagleAuxLayerIdsCount => "eagle-aux-layer-ids-count",
        DraftVocabSizeMismatch => "draft-vocab-size-mismatch",
        TargetHiddenSizeNull => "target-hidden-size-null",
        ParallelDraftingTokenMissing => "parallel-drafting-token-missing",
        PeagleParallelDraftingOff => "peagle-parallel-drafting-off",
        EagleMaxPositionShort => "eagle-max-position-short",
        DraftMaxPositionShort => "draft-max-position-short",
        DraftRopeMismatch => "draft-rope-mismatch",
        QuantizedBlockDrafter => "quantized-block-drafter",
        DsparkNvfp4Target => "dspark-nvfp4-target",
        TargetQuantRotated => "target-quant-rotated",
        DsparkSampleFromAnchorImplicit => "dspark-sample-from-anchor-implicit",
        NormBeforeFcEngine => "norm-before-fc-engine",
        SpeculatorsVerifierMissing => "speculators-verifier-missing",
        DraftLmHeadShared => "draft-lm-head-shared",
        ProfileUnmeasured => "profile-unmeasured",
        ProfileInconsistent => "profile-inconsistent",
        ProfileMethod => "profile-method",
        ProfileMaxK => "profile-max-k",
        ProfileIdentity => "profile-identity",
        MtpBaseLayersMissing => "mtp-base-layers-missing",
        MtpLayersUnused => "mtp-layers-unused",
    }
}

crate::declare_code_names! {
    /// The engine claims about one deployment (`deployment::Deployment`): raised by `lint`
    /// with `--engine`, by `launch`, and by `doctor`, one code each whatever the input.
    pub enum DeploymentCode {
        SpeculativeConfigMethod => "speculative-config-method",
        NumSpeculativeTokensMissing => "num-speculative-tokens-missing",
        NumSpeculativeTokensTooLarge => "num-speculative-tokens-too-large",
        NumSpeculativeTokensTooSmall => "num-speculative-tokens-too-small",
        NumDraftTokensMismatch => "num-draft-tokens-mismatch",
        MixedAttentionVllm => "mixed-attention-vllm",
        Dflash2V1Runner => "dflash2-v1-runner",
        VllmRunnerEnvInvalid => "vllm-runner-env-invalid",
        DraftQuantInherited => "draft-quant-inherited",
        DraftSampleProbabilistic => "draft-sample-probabilistic",
        DsparkDraftTopk => "dspark-draft-topk",
        MtpHeadMissing => "mtp-head-missing",
        MtpKDepth => "mtp-k-depth",
        MtpDsparkStages => "mtp-dspark-stages",
        MtpNextnLayersSglang => "mtp-nextn-layers-sglang",
        MethodOverriddenByName => "method-overridden-by-name",
        DraftAttentionBackendInherited => "draft-attention-backend-inherited",
        EngineUnsupported => "engine-unsupported",
        TrtllmEagleAlias => "trtllm-eagle-alias",
        TrtllmMtpDraftLen => "trtllm-mtp-draft-len",
        TrtllmForeignKey => "trtllm-foreign-key",
        TrtllmRequiredKey => "trtllm-required-key",
        OmlxDraftFallback => "omlx-draft-fallback",
    }
}

crate::declare_code_names! {
    /// `check`: the gate's own findings (pins, authorities, unreadable files).
    pub enum CheckCode {
        AuthorityUnavailable => "authority-unavailable",
        ConfigUnreadable => "config-unreadable",
        WeightsUnreadable => "weights-unreadable",
        PinMissing => "pin-missing",
        NoAuthority => "no-authority",
        NoDrafters => "no-drafters",
        PinPathMissing => "pin-path-missing",
        PinChatTemplateChanged => "pin-chat-template-changed",
        PinD2tChanged => "pin-d2t-changed",
        PinDigestUnverified => "pin-digest-unverified",
        SuppressionExpired => "suppression-expired",
        SuppressionUnused => "suppression-unused",
        DeploymentTooLarge => "deployment-too-large",
        MtpNotServed => "mtp-not-served",
    }
}

crate::declare_code_names! {
    /// `weights`: the safetensors header against the config and target.
    pub enum WeightsCode {
        FcWidth => "weights-fc-width",
        LayerCount => "weights-layer-count",
        Shape => "weights-shape",
        VocabRows => "weights-vocab-rows",
        D2tMissing => "weights-d2t-missing",
        D2tLength => "weights-d2t-length",
        T2dLength => "weights-t2d-length",
        ForbiddenTensor => "weights-forbidden-tensor",
        UnexpectedTensor => "weights-unexpected-tensor",
        IgnoredTensor => "weights-ignored-tensor",
        MissingTensor => "weights-missing-tensor",
        ModelPrefix => "weights-model-prefix",
        ShardMissing => "weights-shard-missing",
        ShardsAbsent => "weights-shards-absent",
        DuplicateTensor => "weights-duplicate-tensor",
        IndexMismatch => "weights-index-mismatch",
        QuantizedUndeclared => "weights-quantized-undeclared",
        QuantizationUnmatched => "weights-quantization-unmatched",
        MtpMissing => "weights-mtp-missing",
        MtpUnquantized => "weights-mtp-unquantized",
        MtpQuantExcluded => "weights-mtp-quant-excluded",
        MtpUnquantizedOneEngine => "weights-mtp-unquantized-one-engine",
        MtpNormShift => "weights-mtp-norm-shift",
        DraftHeadRefused => "weights-draft-head-refused",
        GgufNextnCount => "weights-gguf-nextn-count",
        GgufNextnIndex => "weights-gguf-nextn-index",
        GgufNextnKeyMissing => "weights-gguf-nextn-key-missing",
        GgufMtpOnly => "weights-gguf-mtp-only",
        GgufDflashTargetLayers => "weights-gguf-dflash-target-layers",
        GgufEmbeddingRows => "weights-gguf-embedding-rows",
        GgufDflashEmpty => "weights-gguf-dflash-empty",
        GgufDflashMaskToken => "weights-gguf-dflash-mask-token",
        GgufDflashTargetLayerRange => "weights-gguf-dflash-target-layer-range",
        D2tValues => "weights-d2t-values",
        D2tDuplicates => "weights-d2t-duplicates",
        T2dDisagrees => "weights-t2d-disagrees",
    }
}

crate::declare_code_names! {
    /// `launch`: the engine command line against the drafter it serves.
    pub enum LaunchCode {
        BatchedTokens => "launch-batched-tokens",
        RejectedKey => "launch-rejected-key",
        RevisionUnpinned => "launch-revision-unpinned",
        DrafterMissing => "launch-drafter-missing",
        SglangBlockSizeConflict => "launch-sglang-block-size-conflict",
        SglangWindowTooSmall => "launch-sglang-window-too-small",
        SglangEaglePartial => "launch-sglang-eagle-partial",
        SglangEagleChain => "launch-sglang-eagle-chain",
        SglangEagleTree => "launch-sglang-eagle-tree",
        SglangTokenMap => "launch-sglang-token-map",
        DrafterUnavailable => "launch-drafter-unavailable",
        TargetUnavailable => "launch-target-unavailable",
        LintSkipped => "launch-lint-skipped",
        DraftTpIgnored => "launch-draft-tp-ignored",
        DraftHeadsTp => "launch-draft-heads-tp",
        ChatTemplateOverride => "launch-chat-template-override",
        ThinkingDefault => "launch-thinking-default",
        LlamaSpecTypeUnknown => "launch-llama-spec-type-unknown",
        LlamaFlagRemoved => "launch-llama-flag-removed",
        LlamaDraftTypeWithoutModel => "launch-llama-draft-type-without-model",
        LlamaDraftNotUsed => "launch-llama-draft-not-used",
        LlamaSpecTypeDraft => "launch-llama-spec-type-draft",
        LlamaMtpHeadMissing => "launch-llama-mtp-head-missing",
        LlamaDsparkConfidence => "launch-llama-dspark-confidence",
        LlamaKBlock => "launch-llama-k-block",
        LlamaMtpDraftVocab => "launch-llama-mtp-draft-vocab",
    }
}

crate::declare_code_names! {
    /// `acceptance`: a running server's acceptance metrics.
    pub enum AcceptanceCode {
        BelowThreshold => "acceptance-below-threshold",
        NoThreshold => "acceptance-no-threshold",
        Cliff => "acceptance-cliff",
        FirstPositionLow => "acceptance-first-position-low",
        StaticGauge => "acceptance-gauge-static",
        BelowProfile => "acceptance-below-profile",
    }
}

/// Every diagnostic code, by the command family that raises it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    Diff(DiffCode),
    Lint(LintCode),
    Deployment(DeploymentCode),
    Check(CheckCode),
    Weights(WeightsCode),
    Launch(LaunchCode),
    Acceptance(AcceptanceCode),
}

macro_rules! families {
    ($($variant:ident($ty:ident) => $family:literal),* $(,)?) => {
        $(
            impl From<$ty> for Code {
                fn from(code: $ty) -> Code {
                    Code::$variant(code)
                }
            }
        )*

        impl Code {
            /// The stable kebab-case text (`target-layer-ids-formula`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant(c) => c.as_str()),*
                }
            }

            /// The command family that raises it, as `explain` and docs/rules.md group codes.
            pub fn family(self) -> &'static str {
                match self {
                    $(Code::$variant(_) => $family),*
                }
            }

            /// Every code of every family, in a stable order.
            pub fn all() -> Vec<Code> {
                let mut all = Vec::new();
                $(all.extend($ty::ALL.iter().copied().map(Code::$variant));)*
                all
            }
        }
    };
}

families! {
    Diff(DiffCode) => "diff",
    Lint(LintCode) => "lint",
    Deployment(DeploymentCode) => "deployment",
    Check(CheckCode) => "check",
    Weights(WeightsCode) => "weights",
    Launch(LaunchCode) => "launch",
    Acceptance(AcceptanceCode) => "acceptance",
}

/// Codes renamed when `launch`'s and `lint`'s copies of an engine claim were merged into one
/// deployment rule (issue 29): the old text → the code that replaced it. Accepted wherever a
/// code is read from user text (`explain`, `[[ignore]]` entries) until the next release, which
/// removes this table (docs/rules.md, "Renamed codes").
pub const ALIASES: &[(&str, Code)] = &[
    (
        "launch-method-family",
        Code::Deployment(DeploymentCode::SpeculativeConfigMethod),
    ),
    (
        "launch-num-speculative-tokens-missing",
        Code::Deployment(DeploymentCode::NumSpeculativeTokensMissing),
    ),
    (
        "launch-k-exceeds-block",
        Code::Deployment(DeploymentCode::NumSpeculativeTokensTooLarge),
    ),
    (
        "launch-sglang-draft-tokens-mismatch",
        Code::Deployment(DeploymentCode::NumDraftTokensMismatch),
    ),
    (
        "launch-mixed-attention-runner",
        Code::Deployment(DeploymentCode::MixedAttentionVllm),
    ),
    (
        "launch-draft-quant-inherited",
        Code::Deployment(DeploymentCode::DraftQuantInherited),
    ),
];

impl Code {
    /// The code with this text, or the code an old name in [`ALIASES`] now stands for.
    pub fn parse(text: &str) -> Option<Code> {
        Code::all()
            .into_iter()
            .find(|c| c.as_str() == text)
            .or_else(|| Code::alias(text))
    }

    /// The code `text` is an old name of ([`ALIASES`]), when it is one.
    pub fn alias(text: &str) -> Option<Code> {
        ALIASES
            .iter()
            .find(|(old, _)| *old == text)
            .map(|(_, c)| *c)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes are unique across families and kebab-case, so `explain CODE` is unambiguous.
    #[test]
    fn codes_are_unique_kebab_case() {
        let all = Code::all();
        let mut seen = std::collections::BTreeSet::new();
        for c in &all {
            assert!(seen.insert(c.as_str()), "duplicate code {c}");
            assert!(
                c.as_str()
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-'),
                "{c}"
            );
            assert_eq!(Code::parse(c.as_str()), Some(*c));
        }
    }

    /// An old name reads as the code that replaced it, and is no code's own name.
    #[test]
    fn aliases_parse_to_the_surviving_code() {
        for (old, code) in ALIASES {
            assert_eq!(Code::parse(old), Some(*code));
            assert!(Code::all().iter().all(|c| c.as_str() != *old), "{old}");
        }
        assert_eq!(
            Code::parse("launch-k-exceeds-block").map(Code::as_str),
            Some("num-speculative-tokens-too-large")
        );
        assert_eq!(Code::alias("mixed-attention-vllm"), None);
    }
}
