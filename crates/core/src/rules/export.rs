//! Export defaults that differ between the trainer and the engine, and heads the engine swaps:
//! a key the trainer left out (DSpark's `sample_from_anchor`, a speculators verifier), a key
//! the engine version does not read (`norm_before_fc`), and a drafter's own `lm_head` an engine
//! version replaces with the target's. Each rule's severity follows the engine and, where the
//! behaviour changed, its version (`--engine vllm@0.18`).

use super::{Applies, ByEngine, Ctx, Engine, Family, LintCode, ReleaseRow, Rule};
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{Node, Path};

/// The rules here whose severity follows the engine and its version.
pub(super) const BY_ENGINE: &[(LintCode, &ByEngine)] = &[
    (
        LintCode::DsparkSampleFromAnchorImplicit,
        &DSPARK_SAMPLE_FROM_ANCHOR_IMPLICIT_BY_ENGINE,
    ),
    (LintCode::DraftLmHeadShared, &DRAFT_LM_HEAD_SHARED_BY_ENGINE),
    (LintCode::DraftLmHeadShared, &DRAFT_LM_HEAD_SHARED_DFLASH),
    (LintCode::NormBeforeFcEngine, &NORM_BEFORE_FC_TOP_LEVEL),
    (LintCode::NormBeforeFcEngine, &NORM_BEFORE_FC_NESTED),
];

pub(super) const RULES: &[Rule] = &[
    DSPARK_SAMPLE_FROM_ANCHOR_IMPLICIT,
    NORM_BEFORE_FC_ENGINE,
    SPECULATORS_VERIFIER_MISSING,
    DRAFT_LM_HEAD_SHARED,
];

const DSPARK_SAMPLE_FROM_ANCHOR_IMPLICIT: Rule = Rule {
    code: LintCode::DsparkSampleFromAnchorImplicit,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a SpecForge DSpark export (DSparkDraftModel, or normalized for serving) without sample_from_anchor: the engines assume anchor-first",
        explanation: "DSpark drafters come in two layouts: anchor-first (the anchor position predicts the first \
draft token) and the DFlash fill-in layout (1 + N positions, the anchor is the bonus token), which SpecForge and \
DeepSpec train by default. vLLM's DSparkSpeculator and SGLang's DSpark path default `sample_from_anchor` to true, so \
a fill-in drafter exported without the key serves every position one row off: ~0.9% acceptance on vLLM 0.27.1, no \
error (vllm issue 56792). The export is SpecForge's as trained (`DSparkDraftModel`) or as its \
normalize_dflash_export.py rewrites it for serving (`Qwen3DSparkModel` / `Qwen3MoeDSparkModel` with the Markov settings \
copied to the top level and `dflash_config.projector_type: \"dspark\"` kept, a key DeepSeek's own anchor-first Qwen3 \
exports do not carry); neither form says which layout an export without the key was trained \
in (anchor-first exports use the same class), so this is a warning under --engine vllm and --engine sglang, info \
without an engine, never an error: write `sample_from_anchor` explicitly (false for fill-in) and the finding goes. \
DSpark heads inside a DeepSeek-V4 config are anchor-first and not flagged.",
    },
    applies: Applies::Only(&[Family::Dspark]),
    needs: &[],
    check: dspark_sample_from_anchor_implicit,
};

const DSPARK_SAMPLE_FROM_ANCHOR_IMPLICIT_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    // Without an engine the layout the export was trained in is unknown and so is the default
    // that will read it: worth knowing only.
    no_engine: Some(Severity::Info),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Warning),
            "defaults sample_from_anchor to true (anchor-first)",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Warning),
            "defaults sample_from_anchor to true (anchor-first)",
        ),
    ],
};

fn dspark_sample_from_anchor_implicit(cx: &mut Ctx) {
    let declared = cx.root.get("sample_from_anchor").is_some()
        || cx
            .dflash_config()
            .is_some_and(|d| d.get("sample_from_anchor").is_some());
    let architectures = crate::config::architectures(cx.root);
    let training_arch = architectures.iter().any(|a| a == "DSparkDraftModel");
    // SpecForge's normalize_dflash_export.py renames the export for serving (Qwen3DSparkModel,
    // Qwen3MoeDSparkModel) and keeps its `dflash_config.projector_type: "dspark"`, a key
    // DeepSeek's own anchor-first Qwen3 exports do not carry: the served form of the same export.
    let specforge_normalized = architectures
        .iter()
        .any(|a| a == "Qwen3DSparkModel" || a == "Qwen3MoeDSparkModel")
        && cx
            .dflash_config()
            .and_then(|d| d.get("projector_type"))
            .and_then(Node::as_str)
            == Some("dspark");
    if declared || cx.embedded_dspark() || !(training_arch || specforge_normalized) {
        return;
    }
    cx.emit_by_engine(
        &Path::key("dflash_config"),
        "no `sample_from_anchor` in a SpecForge DSpark export: vLLM and SGLang default it to true (anchor-first); \
         a drafter trained in the DFlash fill-in layout (SpecForge's and DeepSpec's default) then serves every \
         position one row off (~0.9% acceptance, vllm issue 56792); write `\"sample_from_anchor\": false` for a \
         fill-in drafter, `true` for an anchor-first one"
            .to_string(),
    );
}

/// `norm_before_fc: true` where it is written: top level (speculators, SpecForge) or nested
/// under `eagle_config` (NVIDIA's Model-Optimizer exports).
fn norm_before_fc(root: &Node) -> Option<(Path, bool)> {
    if root.get("norm_before_fc").and_then(Node::as_bool) == Some(true) {
        return Some((Path::key("norm_before_fc"), false));
    }
    root.get("eagle_config")
        .and_then(|e| e.get("norm_before_fc"))
        .and_then(Node::as_bool)
        .filter(|&b| b)
        .map(|_| (Path::key("eagle_config").child("norm_before_fc"), true))
}

const NORM_BEFORE_FC_ENGINE: Rule = Rule {
    code: LintCode::NormBeforeFcEngine,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "norm_before_fc is true: engine versions that do not read it skip the RMSNorm before fc",
        explanation: "An EAGLE-3 head trained with `norm_before_fc: true` normalises the concatenated target \
hidden states before fc; an engine that does not read the key skips the norm and acceptance degrades without an \
error. vLLM's speculators adapter did not propagate the key until PR 38111 (merged 2026-03-25), and vLLM read the \
nested `eagle_config.norm_before_fc` of NVIDIA's exports only from PR 42143 (merged 2026-05-09); SGLang's EAGLE-3 \
model (llama_eagle3.py, which also serves GPT-OSS heads) has no such norm up to 0.5.16 and skips the checkpoint's \
`input_norm` weight unread, and reads the key (nested first, then top level) from 0.5.17 (PR 32334). A warning for a \
release older than the fix (`--engine vllm@0.18` for the top-level key, up to 0.20 for the nested one: the vLLM \
boundary is inferred from the merge date; `--engine sglang@0.5.16` for either, read in the wheels), info otherwise.",
    },
    applies: Applies::EagleHeads,
    needs: &[],
    check: norm_before_fc_engine,
};

/// SGLang's EAGLE-3 model reads either spelling from 0.5.17 (read in the wheels).
const SGLANG_SKIPS_NORM_BEFORE_FC: ReleaseRow = ReleaseRow::until_release(
    Engine::Sglang,
    (0, 5, 16),
    Some(Severity::Warning),
    "its EAGLE-3 model has no norm before fc and drops the checkpoint's input_norm unread (read at 0.5.16)",
);
const SGLANG_READS_NORM_BEFORE_FC: ReleaseRow = ReleaseRow::from_release(
    Engine::Sglang,
    (0, 5, 17),
    Some(Severity::Info),
    "reads it, nested first, then top level (llama_eagle3.py, read at 0.5.17 and 0.5.23)",
);

/// `norm_before_fc` at the top level (the speculators adapter's key): vLLM propagates it from PR
/// 38111, assumed in the first release after its merge (0.19).
const NORM_BEFORE_FC_TOP_LEVEL: ByEngine = ByEngine {
    case: Some("`norm_before_fc` is at the top level"),
    no_engine: Some(Severity::Info),
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 18),
            Some(Severity::Warning),
            "its speculators adapter does not propagate the key (before PR 38111): the norm is skipped",
        ),
        ReleaseRow::since(Engine::Vllm, (0, 19), Some(Severity::Info), "reads it (PR 38111)"),
        SGLANG_SKIPS_NORM_BEFORE_FC,
        SGLANG_READS_NORM_BEFORE_FC,
    ],
};

/// `eagle_config.norm_before_fc` (NVIDIA's exports): vLLM reads it from PR 42143, assumed in the
/// first release after its merge (0.21).
const NORM_BEFORE_FC_NESTED: ByEngine = ByEngine {
    case: Some("`eagle_config.norm_before_fc` (nested)"),
    no_engine: Some(Severity::Info),
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 20),
            Some(Severity::Warning),
            "does not read the nested key (before PR 42143): the norm is skipped",
        ),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 21),
            Some(Severity::Info),
            "reads it (PR 42143)",
        ),
        SGLANG_SKIPS_NORM_BEFORE_FC,
        SGLANG_READS_NORM_BEFORE_FC,
    ],
};

fn norm_before_fc_engine(cx: &mut Ctx) {
    let Some((path, nested)) = norm_before_fc(cx.root) else {
        return;
    };
    // The last minor release assumed to lack the fix for this spelling.
    let (case, last_without) = if nested {
        (&NORM_BEFORE_FC_NESTED, (0, 20))
    } else {
        (&NORM_BEFORE_FC_TOP_LEVEL, (0, 18))
    };
    cx.emit_judged(
        case,
        &path,
        format!(
            "`{path}` is true: vLLM up to {}.{} (PR {}) and SGLang up to 0.5.16 skip this RMSNorm and \
             acceptance degrades without an error{}",
            last_without.0,
            last_without.1,
            if nested { "42143" } else { "38111" },
            if cx.judge(case).is_some_and(|j| j.severity == Severity::Warning) {
                "; this version is one of them"
            } else {
                ""
            }
        ),
    );
}

const SPECULATORS_VERIFIER_MISSING: Rule = Rule {
    code: LintCode::SpeculatorsVerifierMissing,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a speculators-format config whose verifier.name_or_path is empty: no record of the target",
        explanation: "A speculators config names its target in `speculators_config.verifier.name_or_path`; vLLM \
serves a speculator given alone (`vllm serve <speculator>`) by loading that verifier, and `check`/`pin` use it as the \
drafter's provenance. An export with an empty verifier (a local training path dropped, and often \
`target_hidden_size: null` and Llama's bos/eos 1/2 copied in) serves with poor end-to-end speed and nothing says \
which target it was trained for (vllm issue 50722). A warning: pass the target explicitly and fill the field.",
    },
    applies: Applies::Only(&[Family::Speculators]),
    needs: &[],
    check: speculators_verifier_missing,
};

fn speculators_verifier_missing(cx: &mut Ctx) {
    let Some(spec) = cx.root.get("speculators_config") else {
        return;
    };
    let name = spec
        .get("verifier")
        .and_then(|v| v.get("name_or_path"))
        .and_then(Node::as_str)
        .map(str::trim);
    if name.is_some_and(|n| !n.is_empty()) {
        return;
    }
    let null_hidden = cx.root.get("target_hidden_size").is_some_and(Node::is_null);
    cx.emit(
        &Path::key("speculators_config")
            .child("verifier")
            .child("name_or_path"),
        format!(
            "`speculators_config.verifier.name_or_path` is empty: nothing records which target this drafter was \
             trained for{} (vllm issue 50722); write the target's repo id",
            if null_hidden {
                ", and `target_hidden_size` is null"
            } else {
                ""
            }
        ),
    );
}

const DRAFT_LM_HEAD_SHARED: Rule = Rule {
    code: LintCode::DraftLmHeadShared,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a drafter with its own draft_vocab_size lm_head under an engine release that replaces it with the target's",
        explanation: "An EAGLE-3 head or a DFlash drafter with `draft_vocab_size` below the target's vocabulary \
ships its own lm_head of draft_vocab_size rows and maps its ids through d2t. vLLM before PR 28549 (merged \
2025-11-12; first proposed as PR 27732) always overwrote an EAGLE-3 drafter's lm_head and embed_tokens with the \
target's: acceptance length 1.32 instead of 2.49 for RedHatAI/gpt-oss-20b-speculator.eagle3. vllm-ascend shares \
the target's lm_head with methods eagle and dflash (its own proposer, not vLLM's): an EAGLE-3 head keeps its own \
at every release read, a DFlash drafter's 32000-row head was overwritten on 0.19 and 0.20 (acceptance 25% → 1.7%, \
vllm-ascend issue 11374; the share is gated on d2t from 0.21.0rc1). An error for a release known to replace the \
head (`--engine vllm@0.11`, `--engine vllm-ascend@0.20`, or a release window that holds one); nothing otherwise \
(current vLLM and SGLang keep the head, draft-vocab-size-mismatch already notes the reduced vocabulary).",
    },
    applies: Applies::All,
    needs: &[],
    check: draft_lm_head_shared,
};

const DRAFT_LM_HEAD_SHARED_BY_ENGINE: ByEngine = ByEngine {
    case: Some("the drafter is an EAGLE-3 head"),
    // Only a version known to replace the head is flagged: every EAGLE-3 head with a reduced
    // vocabulary ships its own lm_head, and draft-vocab-size-mismatch already says so.
    no_engine: None,
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 11),
            Some(Severity::Error),
            "replaces the drafter's lm_head with the target's (before PR 28549)",
        ),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 12),
            None,
            "keeps the drafter's own lm_head (read at 0.34.0: one that ships lm_head weights is replaced only by an \
             identical target head)",
        ),
        ReleaseRow::any_version(
            Engine::VllmAscend,
            None,
            "its proposer shares the target's lm_head with methods eagle and dflash only, never eagle3 (read at \
             0.13.0 to 0.26.0rc1)",
        ),
    ],
};

/// A DFlash drafter with a reduced vocabulary: vllm-ascend 0.19–0.20 overwrote its head.
const DRAFT_LM_HEAD_SHARED_DFLASH: ByEngine = ByEngine {
    case: Some("the drafter is a DFlash-family drafter"),
    no_engine: None,
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            None,
            "keeps a drafter's own lm_head (has_own_lm_head, read at 0.25.1 to 0.34.0)",
        ),
        // Before 0.19 it has no DFlash proposer (engine-unsupported says so): vLLM's row there.
        ReleaseRow::between(
            Engine::VllmAscend,
            (0, 19),
            (0, 20),
            Some(Severity::Error),
            "shares the target's lm_head with every dflash drafter, overwriting a draft_vocab_size head: \
             acceptance 25% → 1.7% (issue 11374; llm_base_proposer.py read at 0.20.2rc1)",
        ),
        ReleaseRow::since(
            Engine::VllmAscend,
            (0, 21),
            None,
            "keeps a dflash drafter's own head when it maps ids through d2t (read at 0.21.0rc1 to 0.26.0rc1)",
        ),
    ],
};

fn draft_lm_head_shared(cx: &mut Ctx) {
    let case = if cx.detection.eagle_like() {
        &DRAFT_LM_HEAD_SHARED_BY_ENGINE
    } else if cx.detection.block_drafter() {
        &DRAFT_LM_HEAD_SHARED_DFLASH
    } else {
        return;
    };
    let Some(draft) = cx.root.get("draft_vocab_size").and_then(Node::as_u64) else {
        return;
    };
    let vocab = cx.target_vocab().or_else(|| {
        cx.root
            .get("vocab_size")
            .and_then(Node::as_u64)
            .or_else(|| {
                cx.root
                    .get("transformer_layer_config")
                    .and_then(|t| t.get("vocab_size"))
                    .and_then(Node::as_u64)
            })
    });
    if vocab.is_none_or(|v| draft >= v) {
        return;
    }
    cx.emit_judged(
        case,
        &Path::key("draft_vocab_size"),
        format!(
            "the drafter's own lm_head has {draft} rows (draft_vocab_size): vLLM before PR 28549 (EAGLE-3) and \
             vllm-ascend 0.19–0.20 (DFlash) replace it with the target's head and acceptance collapses (1.32 vs \
             2.49; 25% → 1.7% in vllm-ascend issue 11374); serve it with vLLM 0.12 or later, or vllm-ascend 0.21 \
             or later"
        ),
    );
}
