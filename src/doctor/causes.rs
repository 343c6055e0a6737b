//! The kinds of cause a doctor groups findings into, as data: which findings each holds (by
//! code and field), how well each explains a measured symptom (a first-position collapse, a
//! cliff, acceptance below break-even), which checks can rule each out, and how each is
//! repaired.

use serde::Serialize;

use crate::acceptance::{AcceptanceReport, Shape};
use crate::diagnostic::{Code, Diagnostic};

use super::ClassicDraft;

/// What a finding is about, for ranking: each kind of cause explains some symptoms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// Acceptance with a healthy shape that does not pay for drafting K tokens.
    BreakEven,
    MaskToken,
    TargetLayers,
    Pairing,
    Quantization,
    ExportDefaults,
    SlidingWindow,
    Weights,
    LaunchFlags,
    NoAuthority,
    Other,
}

impl CauseKind {
    pub fn title(self) -> &'static str {
        match self {
            CauseKind::BreakEven => "speculation does not pay at this K",
            CauseKind::MaskToken => "mask token id",
            CauseKind::TargetLayers => "target layer ids",
            CauseKind::Pairing => "drafter and target do not belong together",
            CauseKind::Quantization => "quantization",
            CauseKind::ExportDefaults => "export defaults",
            CauseKind::SlidingWindow => "sliding-window layers",
            CauseKind::Weights => "weights",
            CauseKind::LaunchFlags => "launch flags",
            CauseKind::NoAuthority => "no single authority",
            CauseKind::Other => "other config fields",
        }
    }

    /// The kind of a finding: the first row of [`BY_FIELD`] whose words its code or field
    /// holds, else a weights or launch finding's own kind, else `Other`.
    pub fn of(d: &Diagnostic) -> CauseKind {
        let code = d.code.as_str();
        let path = d.path.as_str();
        if code == "authority-ambiguous" {
            return CauseKind::NoAuthority;
        }
        if let Some((kind, _)) = BY_FIELD
            .iter()
            .find(|(_, words)| words.iter().any(|n| code.contains(n) || path.contains(n)))
        {
            return *kind;
        }
        match d.code {
            Code::Weights(_) => CauseKind::Weights,
            Code::Launch(_) => CauseKind::LaunchFlags,
            _ => CauseKind::Other,
        }
    }

    /// Whether this kind of cause can explain `symptom` ([`EXPLAINS`]).
    pub fn explains(self, symptom: Symptom) -> bool {
        EXPLAINS
            .iter()
            .any(|(s, kinds)| *s == symptom && kinds.contains(&self))
    }

    /// How well this kind explains the symptom: lower is more likely.
    pub fn rank(self, symptom: Symptom) -> u8 {
        use CauseKind::*;
        let order: &[CauseKind] = match symptom {
            Symptom::FirstPositionCollapse => &[
                MaskToken,
                TargetLayers,
                Pairing,
                NoAuthority,
                Quantization,
                ExportDefaults,
                Weights,
                SlidingWindow,
                LaunchFlags,
                Other,
                BreakEven,
            ],
            Symptom::Cliff => &[
                SlidingWindow,
                LaunchFlags,
                NoAuthority,
                ExportDefaults,
                TargetLayers,
                MaskToken,
                Pairing,
                Quantization,
                Weights,
                Other,
                BreakEven,
            ],
            Symptom::BelowBreakEven | Symptom::Healthy | Symptom::NotMeasured => &[
                BreakEven,
                NoAuthority,
                MaskToken,
                TargetLayers,
                SlidingWindow,
                Pairing,
                Quantization,
                ExportDefaults,
                Weights,
                LaunchFlags,
                Other,
            ],
        };
        order.iter().position(|k| *k == self).unwrap_or(order.len()) as u8
    }
}

/// The kinds of cause a finding's code or field names, first match wins.
const BY_FIELD: &[(CauseKind, &[&str])] = &[
    (
        CauseKind::MaskToken,
        &["mask_token", "mask-token", "pard_token", "ptd_token"],
    ),
    (
        CauseKind::TargetLayers,
        &[
            "target_layer_ids",
            "target-layer-ids",
            "aux_hidden_state",
            "eagle-aux",
            "aux-ids",
        ],
    ),
    (CauseKind::Quantization, &["quant", "rotation"]),
    (
        CauseKind::SlidingWindow,
        &[
            "layer_types",
            "layer-types",
            "sliding",
            "max_window_layers",
            "use-swa",
            "use_swa",
            "mixed-attention",
        ],
    ),
    (
        CauseKind::Pairing,
        &[
            "hidden_size",
            "hidden-size",
            "vocab_size",
            "vocab-size",
            "num_target_layers",
            "num-target-layers",
            "target_hidden_size",
            "draft_vocab",
            // A classic draft model's vocabulary against its target's (issue 31).
            "draft-model",
        ],
    ),
    (
        CauseKind::ExportDefaults,
        &[
            "sample_from_anchor",
            "sample-from-anchor",
            "norm_before_fc",
            "causal",
            "export",
        ],
    ),
];

/// The kinds of cause that can explain each measured symptom: a first-position collapse is a
/// drafter that guesses wrong from the start, a cliff one that computes later positions wrongly;
/// below break-even everything found is a candidate.
const EXPLAINS: &[(Symptom, &[CauseKind])] = &[
    (
        Symptom::FirstPositionCollapse,
        &[
            CauseKind::MaskToken,
            CauseKind::TargetLayers,
            CauseKind::Pairing,
            CauseKind::Quantization,
            CauseKind::ExportDefaults,
            CauseKind::NoAuthority,
        ],
    ),
    (
        Symptom::Cliff,
        &[CauseKind::SlidingWindow, CauseKind::LaunchFlags],
    ),
    (
        Symptom::BelowBreakEven,
        &[
            CauseKind::BreakEven,
            CauseKind::MaskToken,
            CauseKind::TargetLayers,
            CauseKind::Pairing,
            CauseKind::Quantization,
            CauseKind::ExportDefaults,
            CauseKind::SlidingWindow,
            CauseKind::Weights,
            CauseKind::LaunchFlags,
            CauseKind::NoAuthority,
            CauseKind::Other,
        ],
    ),
];

/// What the server's acceptance shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Symptom {
    /// Position 1 is already rarely accepted.
    FirstPositionCollapse,
    /// Healthy early positions, then ~0.
    Cliff,
    /// No telling shape, but the gate fails (below the threshold or break-even).
    BelowBreakEven,
    /// Acceptance passes.
    Healthy,
    /// No server was given.
    NotMeasured,
}

impl Symptom {
    /// The symptom in words; `mtp_head`: the drafter is the target's own MTP head.
    pub fn describe(self, mtp_head: bool) -> &'static str {
        match self {
            Symptom::FirstPositionCollapse if mtp_head => {
                "collapse from the first position: the MTP head's first guess is already wrong"
            }
            Symptom::FirstPositionCollapse => {
                "collapse from the first position: the drafter's first guess is already wrong"
            }
            Symptom::Cliff => {
                "a cliff: healthy first positions, then about zero (later positions computed wrongly)"
            }
            Symptom::BelowBreakEven => "acceptance below what pays for drafting, with no telling shape",
            Symptom::Healthy => "acceptance is healthy",
            Symptom::NotMeasured => "not measured (no server given): causes ranked by severity",
        }
    }

    pub fn of(report: &AcceptanceReport) -> Symptom {
        match (report.shape, report.fails()) {
            (Shape::FirstPositionLow { .. }, _) => Symptom::FirstPositionCollapse,
            (Shape::Cliff { .. }, _) => Symptom::Cliff,
            (_, true) => Symptom::BelowBreakEven,
            (_, false) => Symptom::Healthy,
        }
    }
}

/// One cause: its kind, the findings that show it, and how to repair it.
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    pub kind: CauseKind,
    pub title: &'static str,
    /// Whether this kind of cause explains the measured symptom.
    pub explains_symptom: bool,
    pub findings: Vec<Diagnostic>,
    /// Commands or flag changes that repair it, in order.
    pub repair: Vec<String>,
}

/// The kinds of cause that were looked at and not found. Only what was looked at can be ruled
/// out: the launch flags without a launch, the weights without weights, are not.
/// `vLLM acceptance length 1.12 of 16`: the measurement in one line.
pub(super) fn acceptance_summary(a: &AcceptanceReport) -> String {
    let max = a
        .measurement
        .max_acceptance_length()
        .map_or(String::new(), |m| format!(" of {m}"));
    format!(
        "{} acceptance length {:.2}{max}",
        a.measurement.engine().display(),
        a.measurement.acceptance_length()
    )
}

/// Which checks ran with the inputs they need.
pub(super) struct Looked {
    pub(super) launch: bool,
    pub(super) weights: bool,
    pub(super) authority: bool,
    pub(super) classic_draft: Option<ClassicDraft>,
    pub(super) mtp_head: bool,
}

/// The causes a check can rule out, and whether it ran here with the inputs it needs: a wrong
/// mask token, layer ids, attention layout or pairing only by a comparison with the authority
/// (lint without one only warns: the incident's wrong `layer_types` are no lint error), the
/// launch flags by a launch command, the weights by their headers.
fn cause_checks(looked: &Looked) -> Vec<(CauseKind, bool, &'static str)> {
    let by_authority = "no authority to compare with (pass --target, the served target, or run `dflash-check diff DIR --snapshot REPO`)";
    if let Some(draft) = looked.classic_draft {
        // A GGUF draft has no drafter config: its pairing is its vocabulary against the target's.
        return vec![
            (
                CauseKind::Pairing,
                draft.vocabulary_compared,
                "the draft's vocabulary was not compared (both GGUF files are needed)",
            ),
            (
                CauseKind::LaunchFlags,
                looked.launch,
                "no launch command (pass it after `--`, or --file)",
            ),
        ];
    }
    if looked.mtp_head {
        // The target's own head: nothing of a drafter config to compare; its tensors, their
        // dtype and the exclude list are read from the target's weights.
        return vec![
            (
                CauseKind::Weights,
                looked.weights,
                "the target's weights were not read (the MTP head's tensors, their dtypes and the exclude list): run `dflash-check weights TARGET`",
            ),
            (CauseKind::Quantization, true, ""),
            (
                CauseKind::LaunchFlags,
                looked.launch,
                "no launch command (pass it after `--`, or --file)",
            ),
        ];
    }
    vec![
        (CauseKind::MaskToken, looked.authority, by_authority),
        (CauseKind::TargetLayers, looked.authority, by_authority),
        (CauseKind::SlidingWindow, looked.authority, by_authority),
        (CauseKind::Pairing, looked.authority, by_authority),
        (CauseKind::Quantization, true, ""),
        (
            CauseKind::Weights,
            looked.weights,
            "no safetensors headers were read",
        ),
        (
            CauseKind::LaunchFlags,
            looked.launch,
            "no launch command (pass it after `--`, or --file)",
        ),
    ]
}

/// The causes ruled out: checked with the inputs they need, and not found.
pub(super) fn ruled_out(causes: &[Cause], looked: &Looked) -> Vec<String> {
    cause_checks(looked)
        .iter()
        .filter(|(k, ran, _)| *ran && !causes.iter().any(|c| c.kind == *k))
        .map(|(k, _, _)| k.title().to_string())
        .collect()
}

/// The causes neither found nor ruled out, with what would check them.
pub(super) fn unchecked_causes(causes: &[Cause], looked: &Looked) -> Vec<String> {
    cause_checks(looked)
        .iter()
        .filter(|(k, ran, _)| !*ran && !causes.iter().any(|c| c.kind == *k))
        // The weights are a drafter's cause only where its headers could be read; an MTP
        // head's tensors are the first thing to check.
        .filter(|(k, _, _)| {
            !matches!(k, CauseKind::LaunchFlags) && (*k != CauseKind::Weights || looked.mtp_head)
        })
        .map(|(k, _, why)| format!("{}: not ruled out, {why}", k.title()))
        .collect()
}

/// The repair of one cause: the `fix` line for fields that differ from the authority, the
/// runner for mixed attention under vLLM, the launch flag for K.
pub(super) fn repair(
    kind: CauseKind,
    findings: &[Diagnostic],
    fix_line: Option<&str>,
) -> Vec<String> {
    let mut out = Vec::new();
    if kind == CauseKind::BreakEven {
        out.push(
            "draft fewer tokens: lower num_speculative_tokens in --speculative-config (SGLang: \
             --speculative-num-draft-tokens), or serve large batches without speculation; then \
             measure again with `dflash-check acceptance`"
                .to_string(),
        );
        return out;
    }
    let from_diff = findings.iter().any(|f| matches!(f.code, Code::Diff(_)));
    match kind {
        CauseKind::NoAuthority => out.push(
            "name the drafter's authority: `--target` the served target, or `dflash-check diff DIR --snapshot REPO`"
                .into(),
        ),
        _ if from_diff => {
            if let Some(line) = fix_line {
                out.push(line.to_string());
            }
        }
        _ => {}
    }
    if kind == CauseKind::SlidingWindow
        && findings.iter().any(|f| {
            f.code.as_str().contains("mixed-attention")
                || f.message.contains("VLLM_USE_V2_MODEL_RUNNER")
        })
    {
        out.push("set VLLM_USE_V2_MODEL_RUNNER=1 in the server's environment (mixed sliding/full draft layers)".into());
    }
    if kind == CauseKind::LaunchFlags {
        out.push("change the launch flags as the findings say (`dflash-check launch -- CMD` checks the result)".into());
    }
    if out.is_empty() && !from_diff {
        out.push(format!(
            "see `dflash-check explain {}`",
            findings.first().map_or("", |f| f.code.as_str())
        ));
    }
    out
}
