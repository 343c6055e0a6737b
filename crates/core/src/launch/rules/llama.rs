//! llama.cpp's (and koboldcpp's) speculative flags against each other and against the GGUF
//! files they name: a `--spec-type` llama.cpp does not know, a flag it removed, a draft type
//! with no draft model to run it, a draft model that no type uses, and a type the draft's own
//! metadata contradicts. Read from llama.cpp's `common/arg.cpp`, `common/speculative.cpp` and
//! `tools/server/server-context.cpp` at 0c1e570 (vendored by llama-cpp-python 0.3.36), with
//! 4227c9b (llama-cpp-python 0.3.16) for the flags older builds took.
//!
//! The draft's vocabulary against the target's is not here: it is lint's `draft-model-*` rules,
//! run on the two GGUF vocabularies by the `dflash-check` crate's `launch::gguf`.

use serde::Serialize;

use super::{Cx, Need, Rule, LLAMA_CPP};
use crate::diagnostic::{CodeInfo, Severity};
use crate::engine::{LLAMA_DRAFT_HF, LLAMA_DRAFT_MODEL};
use crate::gguf::GgufHeader;
use crate::launch::LaunchCode;

/// What the llama.cpp rules read from a GGUF header the command names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GgufModel {
    /// The file, as shown in messages.
    pub file: String,
    /// `general.architecture`.
    pub architecture: Option<String>,
    /// `{arch}.block_count`.
    pub block_count: Option<u64>,
    /// The type llama.cpp infers from this file when it is the draft and no `--spec-type` is
    /// given (`common_speculative_types_from_gguf`): `draft-dflash` or `draft-dspark` for the
    /// `dflash` architecture (a `markov_w1.weight` tensor makes it DSpark), `draft-mtp` when
    /// the last block has `nextn.eh_proj.weight`, none otherwise (a plain language model).
    pub inferred_type: Option<&'static str>,
    /// The token list's length (`tokenizer.ggml.tokens`).
    pub tokens: Option<u64>,
    /// `{arch}.nextn_predict_layers`: the MTP layers llama.cpp loads (`n_layer_nextn`, an
    /// optional key: absent is 0).
    pub nextn_layers: Option<u64>,
    /// A DFlash or DSpark draft's `dflash.block_size` (llama.cpp's default when absent: 16),
    /// `dflash.sample_from_anchor` and `dflash.has_confidence_head`.
    pub block_size: Option<u64>,
    pub sample_from_anchor: Option<bool>,
    pub has_confidence_head: Option<bool>,
    /// A draft's vocabulary against the target's, when both files have a token list (set by
    /// the caller that read both; `from_header` leaves it `None`).
    #[serde(skip)]
    pub vocabulary: Option<crate::vocab::Comparison>,
}

impl GgufModel {
    pub fn from_header(header: &GgufHeader, file: String) -> GgufModel {
        let architecture = header.architecture().map(str::to_string);
        let block_count = header.arch_key("block_count").and_then(|v| v.as_u64());
        let has = |name: &str| header.tensors.iter().any(|t| t.name == name);
        let inferred_type = match architecture.as_deref() {
            Some("dflash") if has("markov_w1.weight") => Some("draft-dspark"),
            Some("dflash") => Some("draft-dflash"),
            Some(_) => block_count
                .filter(|&n| n > 0)
                .filter(|n| has(&format!("blk.{}.nextn.eh_proj.weight", n - 1)))
                .map(|_| "draft-mtp"),
            None => None,
        };
        GgufModel {
            file,
            architecture,
            block_count,
            inferred_type,
            tokens: header.tokenizer().vocab_size().map(|n| n as u64),
            nextn_layers: header
                .arch_key("nextn_predict_layers")
                .and_then(|v| v.as_u64()),
            block_size: header.u64("dflash.block_size"),
            sample_from_anchor: header
                .get("dflash.sample_from_anchor")
                .and_then(|v| v.as_bool()),
            has_confidence_head: header
                .get("dflash.has_confidence_head")
                .and_then(|v| v.as_bool()),
            vocabulary: None,
        }
    }

    fn arch(&self) -> &str {
        self.architecture.as_deref().unwrap_or("(none)")
    }
}

/// The `--spec-type` names llama.cpp 0c1e570 knows (`common_speculative_type_from_name_map`).
const KNOWN_TYPES: &[&str] = &[
    "none",
    "draft-simple",
    "draft-eagle3",
    "draft-mtp",
    "draft-dflash",
    "draft-dspark",
    "ngram-simple",
    "ngram-map-k",
    "ngram-map-k4v",
    "ngram-mod",
    "ngram-cache",
];

/// The types that run a draft model of their own (`add_config_if_enabled(…, ctx_dft !=
/// nullptr)`); `draft-mtp` runs the target's own head.
const MODEL_TYPES: &[&str] = &[
    "draft-simple",
    "draft-eagle3",
    "draft-dflash",
    "draft-dspark",
];

pub(super) const LLAMA_SPEC_TYPE_UNKNOWN: Rule = Rule {
    code: LaunchCode::LlamaSpecTypeUnknown,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a --spec-type llama.cpp does not know",
        explanation: "llama.cpp reads --spec-type as a comma-separated list and throws \"unknown speculative type\" \
for a name outside none, draft-simple, draft-eagle3, draft-mtp, draft-dflash, draft-dspark and the ngram-* types \
(common_speculative_types_from_names, 0c1e570); the argument parser turns it into an error and llama-server does not \
start. An error.",
    },
    applies: LLAMA_CPP,
    needs: &[],
    check: spec_type_unknown,
};

fn spec_type_unknown(cx: &mut Cx) {
    let unknown: Vec<String> = cx
        .launch()
        .llama
        .types
        .iter()
        .filter(|t| !KNOWN_TYPES.contains(&t.as_str()))
        .cloned()
        .collect();
    for t in unknown {
        cx.emit(
            crate::engine::llama_cpp::SPEC_TYPE,
            (Some(crate::engine::llama_cpp::SPEC_TYPE), &t),
            format!(
                "llama.cpp refuses to start: \"unknown speculative type: {t}\" (it knows {})",
                KNOWN_TYPES.join(", ")
            ),
            None,
        );
    }
}

pub(super) const LLAMA_FLAG_REMOVED: Rule = Rule {
    code: LaunchCode::LlamaFlagRemoved,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a speculative flag newer llama.cpp builds refuse (--draft-max, --draft-min, -cd)",
        explanation: "llama.cpp renamed its draft flags: at 0c1e570 --draft, --draft-n and --draft-max throw \"the \
argument has been removed. use --spec-draft-n-max\", --draft-min and --draft-n-min likewise (their environment \
variables LLAMA_ARG_DRAFT_MAX/MIN too), and -cd/--ctx-size-draft is no argument at all (\"error: invalid argument\"): \
llama-server does not start. At 4227c9b (llama-cpp-python 0.3.16) all of them were the documented flags, so a \
command written for an older build fails when the image is upgraded. An error, judged at the newest build read; \
the message says which build took the flag.",
    },
    applies: LLAMA_CPP,
    needs: &[],
    check: flag_removed,
};

fn flag_removed(cx: &mut Cx) {
    // koboldcpp keeps --draft-max and --draft-n as aliases of its --draftamount.
    let flags: Vec<(String, &str)> = cx
        .launch()
        .flags
        .iter()
        .filter_map(|f| {
            crate::engine::llama_cpp::REMOVED
                .iter()
                .find(|(old, _)| *old == f.name)
                .map(|(_, new)| (f.name.clone(), *new))
        })
        .collect();
    for (old, new) in flags {
        cx.emit(
            &old,
            (None, &old),
            format!(
                "llama.cpp 0c1e570 and later refuse `{old}` (\"the argument has been removed\" or \"invalid \
                 argument\"), so llama-server does not start; builds up to 4227c9b took it: {new}"
            ),
            None,
        );
    }
    let env: Vec<(&str, &str)> = crate::engine::llama_cpp::REMOVED_ENV
        .iter()
        .filter(|(old, _)| cx.launch().env_var(old).is_some())
        .copied()
        .collect();
    for (old, new) in env {
        cx.emit(
            old,
            (None, old),
            format!(
                "llama.cpp 0c1e570 and later read {old} as the removed --draft flag and refuse to start; use {new}"
            ),
            None,
        );
    }
}

pub(super) const LLAMA_DRAFT_TYPE_WITHOUT_MODEL: Rule = Rule {
    code: LaunchCode::LlamaDraftTypeWithoutModel,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a --spec-type that runs a draft model, and no draft model (-md, -hfd)",
        explanation: "draft-simple, draft-eagle3, draft-dflash and draft-dspark run a draft model of their own. \
llama-server sets up speculative decoding only when a draft model is named or the type is draft-mtp \
(has_spec = has_draft || spec_mtp, tools/server/server-context.cpp at 0c1e570), and the draft types are enabled \
only with a draft context (add_config_if_enabled(…, ctx_dft != nullptr), common/speculative.cpp): without -md or \
-hfd the server starts and never drafts. When the target comes from a Hub repo (-hf) that ships a sidecar draft of \
the type, llama.cpp takes it from there (info). An error otherwise.",
    },
    applies: LLAMA_CPP,
    needs: &[],
    check: draft_type_without_model,
};

fn draft_type_without_model(cx: &mut Cx) {
    let launch = cx.launch();
    if launch.drafter.is_some() {
        return;
    }
    let Some(t) = launch
        .llama
        .types
        .iter()
        .find(|t| MODEL_TYPES.contains(&t.as_str()))
        .cloned()
    else {
        return;
    };
    let from_hub = launch.llama.target_on_hub;
    // The sidecar of this type found in the target's Hub repo, read as the draft (llama.cpp
    // takes it when no draft is named), is the model the type runs. Only a draft of this very
    // type: a `--drafter FILE` for a local target, or another type's sidecar, is not.
    let sidecar = cx.input.draft_gguf.is_some_and(|d| {
        d.inferred_type == Some(t.as_str())
            || (t == "draft-eagle3"
                && d.architecture
                    .as_deref()
                    .is_some_and(|a| a.contains("eagle")))
    });
    if from_hub && sidecar {
        return;
    }
    let message = if from_hub {
        format!(
            "--spec-type {t} names no draft model (-md, -hfd): llama.cpp looks for a {t} sidecar in the target's \
             Hub repo and drafts nothing when the repo ships none"
        )
    } else {
        format!(
            "--spec-type {t} runs a draft model and the command names none (-md/--spec-draft-model or -hfd): \
             llama-server starts and never drafts"
        )
    };
    let d = cx.emit(
        crate::engine::llama_cpp::SPEC_TYPE,
        (Some(crate::engine::llama_cpp::SPEC_TYPE), &t),
        message,
        None,
    );
    if from_hub {
        d.severity = Severity::Info;
    }
}

pub(super) const LLAMA_DRAFT_NOT_USED: Rule = Rule {
    code: LaunchCode::LlamaDraftNotUsed,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a plain draft model (-md) and no --spec-type: newer llama.cpp loads it and never drafts",
        explanation: "Without --spec-type, llama.cpp 0c1e570 infers the type from the draft GGUF's metadata \
(common_speculative_types_from_gguf): draft-dflash or draft-dspark for the dflash architecture, draft-mtp when the \
last block has nextn.eh_proj.weight, and nothing for a plain language model, so the list stays `none`: the draft \
model is loaded (its memory spent) and no speculative implementation is created. Builds before --spec-type existed \
(4227c9b, llama-cpp-python 0.3.16) drafted with -md alone, which is why such lines are common. An error: the \
deployment runs without speculative decoding; add --spec-type draft-simple.",
    },
    applies: LLAMA_CPP,
    needs: &[Need::DraftGguf],
    check: draft_not_used,
};

fn draft_not_used(cx: &mut Cx) {
    let launch = cx.launch();
    if !launch.llama.types.is_empty() {
        return;
    }
    let Some(draft) = cx.input.draft_gguf else {
        return;
    };
    if draft.inferred_type.is_some() {
        return;
    }
    let flag = launch
        .flag_any(LLAMA_DRAFT_MODEL)
        .or_else(|| launch.flag_any(LLAMA_DRAFT_HF))
        .map_or(crate::engine::llama_cpp::DRAFT_MODEL_SHORT, |(name, _)| {
            name
        })
        .to_string();
    let message = format!(
        "no --spec-type, and the draft {} is a plain `{}` model (no dflash architecture, no nextn head): llama.cpp \
         0c1e570 infers no type from it, loads it and never drafts (builds up to 4227c9b drafted with -md alone); \
         add --spec-type draft-simple",
        draft.file,
        draft.arch()
    );
    cx.emit(&flag, (None, &flag), message, None);
}

pub(super) const LLAMA_SPEC_TYPE_DRAFT: Rule = Rule {
    code: LaunchCode::LlamaSpecTypeDraft,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "--spec-type says one kind of draft, the draft GGUF's metadata another",
        explanation: "llama.cpp tells a draft's kind from its GGUF (common_speculative_types_from_gguf, 0c1e570): the \
dflash architecture is DFlash, or DSpark when it has markov_w1.weight; a last block with nextn.eh_proj.weight is an \
MTP head; anything else is a plain model. A --spec-type of another kind (draft-dflash on a plain model, draft-simple \
on a DFlash head, draft-dspark on a DFlash head without the Markov head) overrides that inference. What each \
implementation then does with a draft of the wrong kind was not read, so this is a warning: the likely mistake is the \
type or the file.",
    },
    applies: LLAMA_CPP,
    needs: &[Need::DraftGguf],
    check: spec_type_draft,
};

fn spec_type_draft(cx: &mut Cx) {
    let launch = cx.launch();
    let Some(draft) = cx.input.draft_gguf else {
        return;
    };
    let inferred = draft.inferred_type.unwrap_or("draft-simple");
    let clash: Vec<String> = launch
        .llama
        .types
        .iter()
        .filter(|t| MODEL_TYPES.contains(&t.as_str()) && t.as_str() != inferred)
        .cloned()
        .collect();
    for t in clash {
        let what = match draft.inferred_type {
            Some(kind) => format!("a {kind} head"),
            None => format!("a plain `{}` model", draft.arch()),
        };
        cx.emit(
            crate::engine::llama_cpp::SPEC_TYPE,
            (Some(crate::engine::llama_cpp::SPEC_TYPE), &t),
            format!(
                "--spec-type {t}, but the draft {} is {what} by its GGUF metadata (llama.cpp would infer {inferred})",
                draft.file
            ),
            None,
        );
    }
}

/// llama.cpp's default K for a draft model (`common_params_speculative_draft::n_max`, 0c1e570).
const LLAMA_DEFAULT_N_MAX: u64 = 3;

/// The type llama.cpp runs the draft as: the first draft type written, else the one it infers.
fn running_type<'a>(launch: &'a crate::launch::Launch, draft: &'a GgufModel) -> Option<&'a str> {
    launch
        .llama
        .types
        .iter()
        .map(String::as_str)
        .find(|t| MODEL_TYPES.contains(t))
        .or(if launch.llama.types.is_empty() {
            draft.inferred_type
        } else {
            None
        })
}

pub(super) const LLAMA_K_BLOCK: Rule = Rule {
    code: LaunchCode::LlamaKBlock,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "K (--spec-draft-n-max) against the block a DFlash/DSpark GGUF draft was trained for",
        explanation: "llama.cpp's DFlash implementation reads the trained block from `dflash.block_size` (16 when \
absent) and drafts at most block_size - 1 tokens (block_size for a DSpark draft that samples from its anchor): a \
larger --spec-draft-n-max is clamped, with a warning at start (common/speculative.cpp, 0c1e570). Without the flag, \
K is llama.cpp's default for every draft type, 3, so a block-16 drafter proposes 3 tokens of the 15 it was trained \
for. Neither fails or collapses: info, with the K the draft was trained for.",
    },
    applies: LLAMA_CPP,
    needs: &[Need::DraftGguf],
    check: k_block,
};

fn k_block(cx: &mut Cx) {
    let launch = cx.launch();
    let Some(draft) = cx.input.draft_gguf else {
        return;
    };
    let Some(kind) = running_type(launch, draft) else {
        return;
    };
    if !matches!(kind, "draft-dflash" | "draft-dspark")
        || draft.architecture.as_deref() != Some("dflash")
    {
        return;
    }
    let block = draft.block_size.unwrap_or(16);
    let most = if kind == "draft-dspark" && draft.sample_from_anchor == Some(true) {
        block
    } else {
        block.saturating_sub(1)
    };
    let (message, flag) = match launch.llama.n_max {
        Some(k) if k > most => (
            format!(
                "--spec-draft-n-max {k}, but the {kind} draft {} was trained for a block of {block}: llama.cpp \
                 clamps K to {most} (and warns at start)",
                draft.file
            ),
            crate::engine::llama_cpp::N_MAX[0],
        ),
        None if most > LLAMA_DEFAULT_N_MAX => (
            format!(
                "no --spec-draft-n-max: llama.cpp drafts {LLAMA_DEFAULT_N_MAX} tokens (its default) with the {kind} \
                 draft {}, trained to draft up to {most} (block {block}); pass --spec-draft-n-max {most} to use it",
                draft.file
            ),
            crate::engine::llama_cpp::SPEC_TYPE,
        ),
        _ => return,
    };
    let anchor = if launch.has_flag(flag) {
        flag
    } else {
        crate::engine::llama_cpp::DRAFT_MODEL_SHORT
    };
    cx.emit(flag, (None, anchor), message, Some(serde_json::json!(most)));
}

pub(super) const LLAMA_DSPARK_CONFIDENCE: Rule = Rule {
    code: LaunchCode::LlamaDsparkConfidence,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "--spec-draft-p-min above 0 with a DSpark GGUF draft that has no confidence head",
        explanation: "llama.cpp's DSpark implementation throws \"DSpark draft has no confidence head: please set \
--spec-draft-p-min 0\" when p_min is above 0 and the draft's `dflash.has_confidence_head` is false \
(common/speculative.cpp, 0c1e570); the draft is not set up and llama-server does not start. The default p_min is 0. \
An error.",
    },
    applies: LLAMA_CPP,
    needs: &[Need::DraftGguf],
    check: dspark_confidence,
};

fn dspark_confidence(cx: &mut Cx) {
    let launch = cx.launch();
    let Some(draft) = cx.input.draft_gguf else {
        return;
    };
    if running_type(launch, draft) != Some("draft-dspark")
        || draft.has_confidence_head != Some(false)
    {
        return;
    }
    let p_min = launch
        .flag_any(&["--spec-draft-p-min", "--draft-p-min"])
        .map(|(name, v)| (name.to_string(), v.to_string()))
        .or_else(|| {
            launch
                .env_var("LLAMA_ARG_SPEC_DRAFT_P_MIN")
                .map(|v| ("LLAMA_ARG_SPEC_DRAFT_P_MIN".to_string(), v.to_string()))
        });
    let Some((name, value)) = p_min else {
        return;
    };
    let Ok(p) = value.trim().parse::<f64>() else {
        return;
    };
    if p <= 0.0 {
        return;
    }
    cx.emit(
        &name,
        (None, &name),
        format!(
            "{name} {value} with the DSpark draft {}, whose GGUF says dflash.has_confidence_head = false: llama.cpp \
             throws \"DSpark draft has no confidence head: please set --spec-draft-p-min 0\" and llama-server does not \
             start",
            draft.file
        ),
        Some(serde_json::json!(0)),
    );
}

pub(super) const LLAMA_MTP_HEAD_MISSING: Rule = Rule {
    code: LaunchCode::LlamaMtpHeadMissing,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "--spec-type draft-mtp on a target GGUF with no MTP layers (nextn_predict_layers absent or 0)",
        explanation: "draft-mtp without a draft model runs the target's own MTP head: llama.cpp creates an MTP context \
on the target model (common_speculative_init_result, 0c1e570), and llama_init_from_model returns nothing when the \
model has no MTP layers (\"context type MTP requested but model doesn't contain MTP layers\"; n_layer_nextn is read \
from the optional `{arch}.nextn_predict_layers` key); llama-server then logs \"failed to create MTP context\" and \
does not start. A quantized GGUF converted without --mtp, or whose converter dropped the key, is the usual cause \
(`weights FILE.gguf` checks the nextn tensors). An error.",
    },
    applies: LLAMA_CPP,
    needs: &[Need::TargetGguf],
    check: mtp_head_missing,
};

fn mtp_head_missing(cx: &mut Cx) {
    let launch = cx.launch();
    if launch.drafter.is_some() || !launch.llama.types.iter().any(|t| t == "draft-mtp") {
        return;
    }
    let Some(target) = cx.input.target_gguf else {
        return;
    };
    if target.nextn_layers.unwrap_or(0) > 0 {
        return;
    }
    let key = format!("{}.nextn_predict_layers", target.arch());
    let state = match target.nextn_layers {
        None => format!("has no `{key}`"),
        Some(_) => format!("has `{key}` = 0"),
    };
    cx.emit(
        crate::engine::llama_cpp::SPEC_TYPE,
        (Some(crate::engine::llama_cpp::SPEC_TYPE), "draft-mtp"),
        format!(
            "--spec-type draft-mtp runs the target's MTP head, and the target {} {state}: llama.cpp finds no MTP \
             layers and llama-server does not start (\"failed to create MTP context\"); use a GGUF converted with \
             its MTP layers (convert_hf_to_gguf.py keeps them), or another type",
            target.file
        ),
        None,
    );
}
