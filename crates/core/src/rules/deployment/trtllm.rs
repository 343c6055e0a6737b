//! TensorRT-LLM's claims about a deployment, judged on the `speculative_config` of its LLM API
//! options file: `decoding_type: Eagle` for an EAGLE-3 head (PR 10124 made Eagle3 a type of its
//! own and Eagle an alias of it), the MTP draft length (PR 12341 moved it from
//! `num_nextn_predict_layers` to `max_draft_len`), keys of another engine's speculative config
//! (its config classes forbid extra keys), and what an EAGLE config cannot start without. Each
//! engine behaviour that changed at a release is a row with both sides; read at
//! NVIDIA/TensorRT-LLM d4b1e8e (the 1.2 line) and aba2525 (after PR 10124), with the newest code
//! read for PR 12341's side, cited in evidence/evidence.toml under each code.

use serde_json::{json, Value};

use super::super::{ByEngine, ReleaseRow};
use super::{At, Cx, Engines, Rule};
use crate::deployment::Engine;
use crate::diagnostic::codes::DeploymentCode;
use crate::diagnostic::{CodeInfo, Severity};
use crate::engine::trtllm::{BACKEND, DRAFT_MODEL_KEYS};
use crate::family::Family;

/// TensorRT-LLM's deployments.
const TRTLLM: Engines = Engines::on(&[Engine::Trtllm]);

/// Where a finding about the options file points: the key, found after the options flag.
fn at(key: &'static str) -> At<'static> {
    At {
        flag: key,
        anchor: (Some(crate::engine::trtllm::EXTRA_LLM_API_OPTIONS), key),
        field: None,
    }
}

pub(super) const TRTLLM_EAGLE_ALIAS: Rule = Rule {
    code: DeploymentCode::TrtllmEagleAlias,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "TensorRT-LLM `decoding_type: Eagle` for an EAGLE-3 head: Eagle3 is the type of its own",
        explanation: "Before PR 10124 (the 1.2 line, read at d4b1e8e) Eagle was TensorRT-LLM's only EAGLE decoding \
type and ran EAGLE-3 on the PyTorch backend; PR 10124 made Eagle3 a type of its own and rebuilds Eagle as Eagle3 \
on the PyTorch and AutoDeploy backends (read at aba2525), silently. A public report of gibberish output with \
`decoding_type: Eagle` and an EAGLE-3 head on a 1.2.0rc8 main build (TRT-LLM#11125) has no stated cause: a \
warning from 1.3 on, where Eagle3 exists to be written. On the TensorRT backend (`--backend tensorrt`) Eagle is \
the legacy EAGLE-1/2 engine path, which an EAGLE-3 head does not fit: an error there.",
    },
    applies: TRTLLM,
    needs: &[super::Need::DrafterConfig],
    check: trtllm_eagle_alias,
};

const TRTLLM_EAGLE_ALIAS_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: None,
    rows: &[
        ReleaseRow::until(
            Engine::Trtllm,
            (1, 2),
            None,
            "Eagle is its only EAGLE type and runs EAGLE-3 on the PyTorch backend",
        ),
        ReleaseRow::since(
            Engine::Trtllm,
            (1, 3),
            Some(Severity::Warning),
            "rebuilds Eagle as Eagle3 silently (PR 10124); gibberish was reported with Eagle and this head (TRT-LLM#11125)",
        ),
    ],
};

fn trtllm_eagle_alias(cx: &mut Cx) {
    let d = cx.deployment;
    let eagle3_head = cx
        .drafter
        .and_then(|dr| dr.detection)
        .is_some_and(|det| det.effective().family == Family::Eagle3);
    if !eagle3_head || d.method.as_ref().is_none_or(|m| m.name != "Eagle") {
        return;
    }
    let tensorrt_backend = d.command.as_ref().is_some_and(|c| {
        c.text.contains(&format!("{BACKEND} tensorrt"))
            || c.text.contains(&format!("{BACKEND} trt"))
    });
    let (severity, why) = if tensorrt_backend {
        (
            Severity::Error,
            "on the TensorRT backend Eagle is the legacy EAGLE-1/2 engine path, which an EAGLE-3 head does not fit",
        )
    } else {
        let Some(s) = cx.engine_severity() else {
            return;
        };
        (
            s,
            "from PR 10124 TensorRT-LLM rebuilds it as Eagle3 silently, and a gibberish report used Eagle with an \
             EAGLE-3 head (TRT-LLM#11125)",
        )
    };
    let message = format!(
        "decoding_type Eagle with an EAGLE-3 head: {why}; write `decoding_type: Eagle3` (TensorRT-LLM 1.3 and later)"
    );
    cx.emit(
        severity,
        at("decoding_type"),
        message,
        Some(json!("Eagle3")),
    );
}

pub(super) const TRTLLM_MTP_DRAFT_LEN: Rule = Rule {
    code: DeploymentCode::TrtllmMtpDraftLen,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "TensorRT-LLM MTP draft length: which of max_draft_len and num_nextn_predict_layers the release reads",
        explanation: "Before PR 12341 (the 1.2 line) TensorRT-LLM's MTP draft length is `num_nextn_predict_layers` \
(default 1): built from the YAML, the config overwrites `max_draft_len` with it, so a file that sets only \
`max_draft_len: 3` drafts 1 token, silently (read at aba2525). From PR 12341 `max_draft_len` is the draft length; \
a `num_nextn_predict_layers` the file still sets is remapped to it with a deprecation warning, and dropped when \
`max_draft_len` is also given. So: `max_draft_len` alone is ignored up to 1.2 (a warning); both with different \
values lose one of them on every release (a warning naming which); `num_nextn_predict_layers` alone is deprecated \
from 1.3 (info).",
    },
    applies: TRTLLM.when(super::When::MtpHead),
    needs: &[],
    check: trtllm_mtp_draft_len,
};

/// `max_draft_len` without `num_nextn_predict_layers`.
const MAX_DRAFT_LEN_ALONE: ByEngine = ByEngine {
    case: Some("MTP with max_draft_len and no num_nextn_predict_layers"),
    no_engine: None,
    rows: &[
        ReleaseRow::until(
            Engine::Trtllm,
            (1, 2),
            Some(Severity::Warning),
            "overwrites max_draft_len with num_nextn_predict_layers (default 1): one token drafted, silently",
        ),
        ReleaseRow::since(
            Engine::Trtllm,
            (1, 3),
            None,
            "reads max_draft_len as the MTP draft length (PR 12341)",
        ),
    ],
};

/// Both keys, with different values.
const BOTH_DRAFT_LENS: ByEngine = ByEngine {
    case: Some("MTP with max_draft_len and num_nextn_predict_layers that differ"),
    no_engine: None,
    rows: &[
        ReleaseRow::until(
            Engine::Trtllm,
            (1, 2),
            Some(Severity::Warning),
            "drafts num_nextn_predict_layers tokens; max_draft_len is overwritten",
        ),
        ReleaseRow::since(
            Engine::Trtllm,
            (1, 3),
            Some(Severity::Warning),
            "drafts max_draft_len tokens; num_nextn_predict_layers is dropped with a deprecation warning",
        ),
    ],
};

/// `num_nextn_predict_layers` alone.
const NEXTN_ALONE: ByEngine = ByEngine {
    case: Some("MTP with num_nextn_predict_layers and no max_draft_len"),
    no_engine: None,
    rows: &[
        ReleaseRow::until(Engine::Trtllm, (1, 2), None, "reads it as the draft length"),
        ReleaseRow::since(
            Engine::Trtllm,
            (1, 3),
            Some(Severity::Info),
            "remaps it to max_draft_len with a deprecation warning (PR 12341)",
        ),
    ],
};

fn trtllm_mtp_draft_len(cx: &mut Cx) {
    let d = cx.deployment;
    let get = |k: &str| d.spec(k).and_then(Value::as_u64);
    let (len, nextn) = (get("max_draft_len"), get("num_nextn_predict_layers"));
    let (case, key, message) = match (len, nextn) {
        (Some(l), None) => (
            &MAX_DRAFT_LEN_ALONE,
            "max_draft_len",
            format!(
                "max_draft_len {l} without num_nextn_predict_layers: TensorRT-LLM up to 1.2 overwrites it with \
                 num_nextn_predict_layers (default 1) and drafts one token; write both, or serve with 1.3 or later"
            ),
        ),
        (Some(l), Some(n)) if l != n => (
            &BOTH_DRAFT_LENS,
            "num_nextn_predict_layers",
            format!(
                "max_draft_len {l} and num_nextn_predict_layers {n}: up to 1.2 TensorRT-LLM drafts {n} tokens, \
                 from 1.3 {l} (the other is dropped); give one value"
            ),
        ),
        (None, Some(n)) => (
            &NEXTN_ALONE,
            "num_nextn_predict_layers",
            format!(
                "num_nextn_predict_layers {n} is deprecated from TensorRT-LLM 1.3 (remapped to max_draft_len); \
                 write max_draft_len: {n}"
            ),
        ),
        _ => return,
    };
    let Some(judged) = case.judge(d.engine.as_ref()) else {
        return;
    };
    let d = cx.emit(judged.severity, at(key), message, None);
    d.releases = judged.releases;
}

pub(super) const TRTLLM_FOREIGN_KEY: Rule = Rule {
    code: DeploymentCode::TrtllmForeignKey,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a key of another engine's speculative config in TensorRT-LLM's speculative_config",
        explanation: "TensorRT-LLM's speculative config classes derive from a pydantic base that forbids extra \
fields (read at d4b1e8e and aba2525), so a key they do not have is a validation error when the server starts. \
The keys reported are vLLM's (`method`, `model`, `num_speculative_tokens`, …), which a file translated from a \
vLLM command carries: TensorRT-LLM spells them `decoding_type`, `speculative_model`, `max_draft_len`. Other keys \
are not judged (the classes gain fields with releases).",
    },
    applies: TRTLLM,
    needs: &[],
    check: trtllm_foreign_key,
};

/// vLLM's speculative-config keys, with TensorRT-LLM's spelling of each when it has one.
const VLLM_KEYS: &[(&str, Option<&str>)] = &[
    ("method", Some("decoding_type")),
    ("model", Some("speculative_model")),
    ("num_speculative_tokens", Some("max_draft_len")),
    ("draft_tensor_parallel_size", None),
    ("revision", None),
    ("draft_sample_method", None),
];

fn trtllm_foreign_key(cx: &mut Cx) {
    let Some(spec) = cx.deployment.speculative_config.as_ref() else {
        return;
    };
    let found: Vec<(&str, Option<&str>)> = VLLM_KEYS
        .iter()
        .filter(|(k, _)| spec.contains_key(*k))
        .copied()
        .collect();
    for (key, theirs) in found {
        let instead = theirs.map_or("drop it".to_string(), |t| format!("write `{t}`"));
        let message = format!(
            "`{key}` is vLLM's key: TensorRT-LLM's speculative_config forbids extra keys and refuses to start; {instead}"
        );
        cx.emit(Severity::Error, at(key), message, theirs.map(|t| json!(t)));
    }
}

pub(super) const TRTLLM_REQUIRED_KEY: Rule = Rule {
    code: DeploymentCode::TrtllmRequiredKey,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a TensorRT-LLM EAGLE speculative_config without max_draft_len or a draft model",
        explanation: "TensorRT-LLM's Eagle/Eagle3 config requires `max_draft_len` (\"max_draft_len is required for \
Eagle\"; newer code: \"must be > 0\") and a draft model, `speculative_model` or its older name \
`speculative_model_dir` (\"Draft model must be provided for EAGLE\"), read at aba2525: the server does not start \
without them.",
    },
    applies: TRTLLM,
    needs: &[],
    check: trtllm_required_key,
};

fn trtllm_required_key(cx: &mut Cx) {
    let d = cx.deployment;
    if !d
        .method
        .as_ref()
        .is_some_and(|m| m.name == "Eagle" || m.name == "Eagle3")
    {
        return;
    }
    let has = |k: &str| d.spec(k).is_some_and(|v| !v.is_null());
    if d.k().is_none() {
        let message = "an EAGLE speculative_config without max_draft_len: TensorRT-LLM refuses it (\"max_draft_len \
                       is required for Eagle\"); set it to the head's K"
            .to_string();
        cx.emit(Severity::Error, at("max_draft_len"), message, None);
    }
    if !DRAFT_MODEL_KEYS.iter().any(|k| has(k)) {
        let message = "an EAGLE speculative_config without a draft model: TensorRT-LLM refuses it (\"Draft model must \
                       be provided for EAGLE\"); set speculative_model to the head's path or repo"
            .to_string();
        cx.emit(Severity::Error, at("speculative_model"), message, None);
    }
}

/// The severities by release of the rules here: each rule's one table, then its cases'.
pub(super) const BY_ENGINE: &[(DeploymentCode, &ByEngine)] = &[(
    DeploymentCode::TrtllmEagleAlias,
    &TRTLLM_EAGLE_ALIAS_BY_ENGINE,
)];
pub(super) const CASES: &[(DeploymentCode, &ByEngine)] = &[
    (DeploymentCode::TrtllmMtpDraftLen, &MAX_DRAFT_LEN_ALONE),
    (DeploymentCode::TrtllmMtpDraftLen, &BOTH_DRAFT_LENS),
    (DeploymentCode::TrtllmMtpDraftLen, &NEXTN_ALONE),
];
