//! How the engine loads the drafter: mixed sliding/full attention layers, which vLLM's DFlash
//! loader refuses outside its V2 model runner, and the `--quantization` SGLang hands a draft
//! without its own quantization_config. Both read the deployment's environment or flags and say
//! what they cannot know when the input does not state them (lint's flags).

use serde_json::json;

use super::super::attention::{counts, layer_types};
use super::super::{ByEngine, Detection, Family, ReleaseRow};
use super::{At, Cx, DrafterConfig, Need, Rule, SGLANG, VLLM};
use crate::config::{is_awq_gptq_method, QuantFacts};
use crate::deployment::Engine;
use crate::diagnostic::codes::DeploymentCode;
use crate::diagnostic::{CodeInfo, Severity};
use crate::family::DrafterLocation;
use crate::json::{Node, Path};

pub(super) const MIXED_ATTENTION_VLLM: Rule = Rule {
    code: DeploymentCode::MixedAttentionVllm,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "mixed sliding/full draft layers under vLLM without VLLM_USE_V2_MODEL_RUNNER=1",
        explanation: "vLLM's DFlash loader (_resolve_layer_attention) raises NotImplementedError for a drafter whose \
layer_types mix sliding_attention and full_attention unless the V2 model runner is used (0.25.1: in every runner). \
An error when the deployment sets VLLM_USE_V2_MODEL_RUNNER to anything but 1 (the V1 runner forced), at every \
version; vLLM 0.34.0 removed the V1 runner and refuses such a value at startup (\"Model Runner V1 has been \
removed\"). When the variable is not set (or not known: lint's flags do not state the environment) the severity \
follows the version: vLLM 0.25.1 refuses mixed layers outright, an error up to 0.25 (also with the variable set \
to 1); from 0.26.0 (read up to 0.33.0) VllmConfig.use_v2_model_runner forces the V2 runner for a method dflash \
draft whose layer_types mix both kinds (_dflash_needs_multi_kv_group), and 0.34.0 has no other runner: nothing to \
report there. The error seen on v0.26.0rc (vllm-ascend#15650) is the Ascend plugin's runner. Configs with \
`dflash_config.use_swa` run every layer sliding and are not mixed. Note vllm#49559: on vLLM 0.25.1 a \
speculators-trained DFlash drafter had ~0% acceptance with the V2 runner: check acceptance after deploy. Formerly \
also `launch-mixed-attention-runner` (an alias until the next release).",
    },
    applies: VLLM,
    needs: &[Need::DrafterConfig],
    check: mixed_attention_vllm,
};

pub(super) const MIXED_ATTENTION_VLLM_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    // The rule runs only under vLLM. The rows are for VLLM_USE_V2_MODEL_RUNNER unset or not
    // known; set to 0 it is an error at every version.
    no_engine: None,
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 25),
            Some(Severity::Error),
            "NotImplementedError for mixed sliding/full layers, in every runner (read at 0.25.1)",
        ),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 26),
            None,
            "forces the V2 runner for a mixed dflash draft (read at 0.26.0 to 0.33.0); 0.34.0 has no V1 runner",
        ),
    ],
};

/// Mixed sliding/full draft layers under vLLM need the V2 model runner.
fn mixed_attention_vllm(cx: &mut Cx) {
    let Some(dr) = cx.drafter.filter(DrafterConfig::block_drafter) else {
        return;
    };
    let root = dr.root();
    // The speculators format nests the layer settings.
    let (base, base_path) = match root.get("transformer_layer_config") {
        Some(t) if dr.family() == Some(Family::Speculators) && t.as_object().is_some() => {
            (t, Path::key("transformer_layer_config"))
        }
        _ => (root, Path::root()),
    };
    let Some((sliding, full)) = layer_types(base).and_then(counts) else {
        return;
    };
    let use_swa = root
        .get("dflash_config")
        .and_then(|d| d.get("use_swa"))
        .and_then(Node::as_bool)
        == Some(true);
    if sliding == 0 || full == 0 || use_swa {
        return;
    }
    let var = RUNNER_VAR;
    let layers = format!("{sliding} sliding and {full} full attention layers");
    let field = Some(base_path.child("layer_types"));
    let flag = format!("env.{var}");
    // vLLM 0.25 refuses mixed layers in every runner: the variable does not matter there.
    let refused_everywhere = cx.engine_severity() == Some(Severity::Error);
    match cx.deployment.env_var(var).flatten() {
        Some(v) if !forces_v1(v) && !refused_everywhere => {}
        Some(v) => {
            let message = format!(
                "{var}={v} and the drafter has {layers}: vLLM's DFlash loader raises NotImplementedError for \
                 mixed layers outside the V2 runner (0.25.1: in every runner), and vLLM 0.34 refuses any value but 1 \
                 (the V1 runner is removed)"
            );
            let at = At {
                flag: &flag,
                anchor: (None, var),
                field,
            };
            cx.emit(Severity::Error, at, message, Some(json!("1")));
        }
        None => {
            let Some(severity) = cx.engine_severity() else {
                return;
            };
            let message = format!(
                "the drafter has {layers}: vLLM 0.25 raises NotImplementedError for mixed sliding/full DFlash \
                 drafters in every runner; from 0.26 vLLM forces the V2 runner for them"
            );
            let at = At {
                flag: &flag,
                anchor: (None, crate::engine::vllm::SPECULATIVE_CONFIG),
                field,
            };
            cx.emit(severity, at, message, Some(json!("1")));
        }
    }
}

/// Whether a value of VLLM_USE_V2_MODEL_RUNNER selects the V1 runner (vLLM reads it as a bool).
fn forces_v1(value: &str) -> bool {
    !matches!(
        value.to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// The variable that picks vLLM's model runner (read by the rules of this file).
const RUNNER_VAR: &str = crate::engine::vllm::V2_RUNNER_VAR;

pub(super) const VLLM_RUNNER_ENV_INVALID: Rule = Rule {
    code: DeploymentCode::VllmRunnerEnvInvalid,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "VLLM_USE_V2_MODEL_RUNNER set to a value the serving vLLM release refuses at start-up",
        explanation: "vLLM 0.25.1 to 0.33.0 read VLLM_USE_V2_MODEL_RUNNER as `bool(int(value))` \
(envs.maybe_convert_bool) when the configuration picks the runner, so a value that is not an integer (`true`, \
`yes`, `on`) is a ValueError at start-up whatever the model; vLLM 0.34.0, whose only runner is V2, refuses any value \
but `1` (\"VLLM_USE_V2_MODEL_RUNNER=0 is no longer supported: Model Runner V1 has been removed\", \
platforms/interface.py). An error at the releases that refuse it; `0` (the V1 runner) is fine up to 0.33 (the \
runner-specific rules judge what runs on V1, and when one of them already reported the variable this rule adds \
nothing). Unset the variable, or set it to 1.",
    },
    applies: VLLM,
    needs: &[],
    check: vllm_runner_env_invalid,
};

/// VLLM_USE_V2_MODEL_RUNNER not an integer: refused at every release read.
const RUNNER_ENV_NOT_INTEGER: ByEngine = ByEngine {
    case: Some("a value that is not an integer (`true`)"),
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 33),
            Some(Severity::Error),
            "reads it as bool(int(value)): ValueError at start-up",
        ),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 34),
            Some(Severity::Error),
            "refuses any value but 1 (the V1 runner is removed)",
        ),
    ],
};

/// VLLM_USE_V2_MODEL_RUNNER an integer other than `1`: the V1 runner (0) or V2 up to 0.33, refused
/// from 0.34.
const RUNNER_ENV_NOT_ONE: ByEngine = ByEngine {
    case: Some("an integer other than `1` (`0`: the V1 runner)"),
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 33),
            None,
            "reads it as a bool: 0 the V1 runner, any other integer V2",
        ),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 34),
            Some(Severity::Error),
            "refuses any value but 1 (\"Model Runner V1 has been removed\")",
        ),
    ],
};

pub(super) const CASES: &[(DeploymentCode, &ByEngine)] = &[
    (
        DeploymentCode::VllmRunnerEnvInvalid,
        &RUNNER_ENV_NOT_INTEGER,
    ),
    (DeploymentCode::VllmRunnerEnvInvalid, &RUNNER_ENV_NOT_ONE),
];

fn vllm_runner_env_invalid(cx: &mut Cx) {
    let Some(value) = cx.deployment.env_var(RUNNER_VAR).flatten() else {
        return;
    };
    if value == "1" {
        return;
    }
    let (case, message) = match value.trim().parse::<i64>() {
        Err(_) => (
            &RUNNER_ENV_NOT_INTEGER,
            format!(
                "{RUNNER_VAR}={value} is not an integer: vLLM up to 0.33 reads it as bool(int(value)) and fails at \
                 start-up with ValueError, 0.34 refuses any value but 1; set it to 1 (or 0 for the V1 runner, up to \
                 0.33)"
            ),
        ),
        Ok(_) => (
            &RUNNER_ENV_NOT_ONE,
            format!(
                "{RUNNER_VAR}={value}: vLLM 0.34 refuses any value but 1 at start-up (its V1 runner is removed); up \
                 to 0.33 it picks the runner by it; unset it or set it to 1 when 0.34 or later serves the line"
            ),
        ),
    };
    let flag = format!("env.{RUNNER_VAR}");
    // One finding per fact: a runner rule of this file (mixed attention, DFlash2) that already
    // judged this value says what 0.34 does with it.
    if std::ptr::eq(case, &RUNNER_ENV_NOT_ONE) && cx.findings.iter().any(|d| d.path == flag) {
        return;
    }
    let Some(judged) = case.judge(cx.deployment.engine.as_ref()) else {
        return;
    };
    let at = At {
        flag: &flag,
        anchor: (None, RUNNER_VAR),
        field: None,
    };
    let d = cx.emit(judged.severity, at, message, Some(json!("1")));
    d.releases = judged.releases;
}

pub(super) const DFLASH2_V1_RUNNER: Rule = Rule {
    code: DeploymentCode::Dflash2V1Runner,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a DFlash2 drafter under vLLM with VLLM_USE_V2_MODEL_RUNNER forcing the V1 runner",
        explanation: "vLLM's DFlash2 candidate selector exists only in the V2 runner's speculator (DFlash2Speculator, \
chosen by the DFlash2DraftModel architecture). vLLM 0.28.0 forces the V2 runner for a DFlash2 draft only when \
VLLM_USE_V2_MODEL_RUNNER is not set; set to 0 it runs the V1 runner, where, its own comment says, \"the same \
checkpoint drafts through DFlashProposer, which never calls it, so the draft degrades to DFlash1 silently\": a \
warning there. From 0.29.0 (read up to 0.33.0) the V1 runner lists DFlash2 (later: DFlash candidate-head) drafts \
as unsupported and raises ValueError, and 0.34.0 refuses any value but 1 at startup (the V1 runner is removed): an \
error. Before 0.28 vLLM does not register DFlash2DraftModel. Unset the variable (or set it to 1).",
    },
    applies: VLLM,
    needs: &[Need::DrafterConfig],
    check: dflash2_v1_runner,
};

pub(super) const DFLASH2_V1_RUNNER_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: None,
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 27),
            None,
            "does not register DFlash2DraftModel",
        ),
        ReleaseRow::between(
            Engine::Vllm,
            (0, 28),
            (0, 28),
            Some(Severity::Warning),
            "runs the V1 proposer, which never calls the candidate selector: DFlash1 drafting, silently (read at 0.28.0)",
        ),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 29),
            Some(Severity::Error),
            "ValueError: the V1 runner does not support DFlash2 drafts (0.29.0-0.33.0); 0.34.0 refuses the variable",
        ),
    ],
};

/// A DFlash2 drafter with the V1 runner forced by the environment.
fn dflash2_v1_runner(cx: &mut Cx) {
    let Some(dr) = cx.drafter else {
        return;
    };
    let dflash2 = crate::config::architectures(dr.root())
        .iter()
        .any(|a| a == "DFlash2DraftModel");
    let var = RUNNER_VAR;
    let Some(value) = cx
        .deployment
        .env_var(var)
        .flatten()
        .filter(|v| forces_v1(v))
    else {
        return;
    };
    let Some(severity) = cx.engine_severity().filter(|_| dflash2) else {
        return;
    };
    let message = format!(
        "{var}={value} with a DFlash2 drafter: vLLM 0.28 then drafts through the V1 proposer, which never calls the \
         candidate selector (DFlash1 drafting, silently); 0.29 to 0.33 raise ValueError (the V1 runner does not \
         support DFlash2 drafts) and 0.34 refuses the variable; unset it"
    );
    let flag = format!("env.{var}");
    let at = At {
        flag: &flag,
        anchor: (None, var),
        field: Some(Path::key("architectures")),
    };
    cx.emit(severity, at, message, Some(json!("1")));
}

pub(super) const DRAFT_QUANT_INHERITED: Rule = Rule {
    code: DeploymentCode::DraftQuantInherited,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "SGLang hands a draft without its own quantization_config the target's --quantization",
        explanation: "SGLang's ServerArgs copies --quantization onto --speculative-draft-model-quantization when \
that is not given, and ModelConfig clears it only when the draft checkpoint has its own quantization_config: an \
unquantized EAGLE-3/MTP draft is then loaded as AWQ/GPTQ and the server fails (\"ValueError: Cannot find the config \
file for awq\", sglang PR 28196, open in every release). With the command's flags known (launch): an error for an \
AWQ/GPTQ-family --quantization, a warning for other methods (the draft is quantized on load); nothing without \
--quantization (an auto-detected checkpoint quantization leaves the flag unset, sglang#22823). \
`--speculative-draft-model-quantization unquant` avoids it, except for Qwen3.5 MTP drafts read from a GPTQ \
checkpoint, which inherit GPTQ anyway (sglang PR 34622, open: accept length below 3 instead of ~3.5): a warning. \
Without the flags (lint: an EAGLE-3 head without quantization_config for an AWQ/GPTQ target) a warning, under \
SGLang and without an engine, since the server may or may not be started with --quantization. vLLM loads an external \
draft with its own quantization: not a finding there. Formerly also `launch-draft-quant-inherited` (an alias until \
the next release).",
    },
    applies: SGLANG.or_no_engine(),
    needs: &[Need::DrafterConfig],
    check: draft_quant_inherited,
};

pub(super) const DRAFT_QUANT_INHERITED_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    // The rows are for an AWQ/GPTQ --quantization the deployment is known to pass.
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "loads the unquantized draft as AWQ/GPTQ and fails (PR 28196, open)",
        ),
        ReleaseRow::any_version(
            Engine::Vllm,
            None,
            "loads an external draft with its own quantization",
        ),
    ],
};

/// SGLang hands a draft without its own quantization_config the target's --quantization, and
/// ignores `unquant` for a Qwen3.5 MTP draft (sglang PRs 28196, 34622; both open).
fn draft_quant_inherited(cx: &mut Cx) {
    let Some(dr) = cx.drafter else { return };
    let draft_q = QuantFacts::from_root(dr.root());
    let Some(flags) = cx.deployment.quantization.clone() else {
        return flags_unknown(cx, dr, draft_q.is_some());
    };
    let flag_at = |flag: &'static str| At {
        flag,
        anchor: (None, flag),
        field: None,
    };
    match (flags.target.as_deref(), flags.draft.as_deref(), draft_q) {
        (Some(q), None, None) => {
            let severity = if is_awq_gptq_method(q) {
                cx.engine_severity().unwrap_or(Severity::Error)
            } else {
                Severity::Warning
            };
            let message = format!(
                "--quantization {q} with a drafter that has no quantization_config and no \
                 --speculative-draft-model-quantization: SGLang copies {q} onto the draft and loads the \
                 unquantized weights as {q} (\"Cannot find the config file for awq\", sglang PR 28196, open); \
                 pass --speculative-draft-model-quantization unquant"
            );
            let expected = json!({ "--speculative-draft-model-quantization": "unquant" });
            cx.emit(severity, flag_at("--quantization"), message, Some(expected));
        }
        (_, Some("unquant"), Some(m))
            if m.is_awq_gptq()
                && dr
                    .family()
                    .is_none_or(|f| !f.spec().locations.contains(&DrafterLocation::Separate)) =>
        {
            let message = format!(
                "--speculative-draft-model-quantization unquant with an MTP draft read from a {} checkpoint: \
                 SGLang's Qwen3.5 MTP draft still inherits {} (sglang PR 34622, open: accept length below 3 \
                 instead of ~3.5); check the draft's load log (`quant=`) and its acceptance",
                m.method, m.method
            );
            let at = flag_at("--speculative-draft-model-quantization");
            cx.emit(Severity::Warning, at, message, None);
        }
        _ => {}
    }
}

/// Lint's flags do not state `--quantization`: an unquantized EAGLE-3 head for an AWQ/GPTQ
/// target fails under SGLang only if the server is started with the flag, a warning.
fn flags_unknown(cx: &mut Cx, dr: DrafterConfig, draft_quantized: bool) {
    if draft_quantized || !dr.detection.is_some_and(Detection::eagle_like) {
        return;
    }
    let Some(q) = cx
        .deployment
        .target
        .as_ref()
        .and_then(|t| t.quantization.clone())
        .filter(QuantFacts::is_awq_gptq)
    else {
        return;
    };
    let message = format!(
        "the drafter has no quantization_config and the target is quantized ({}): SGLang started with \
         --quantization {} loads this unquantized draft as {} and fails (sglang PR 28196, open); pass \
         --speculative-draft-model-quantization unquant",
        q.describe(),
        q.method,
        q.method
    );
    let at = At {
        flag: "--quantization",
        anchor: (None, "--quantization"),
        field: None,
    };
    cx.emit(Severity::Warning, at, message, None);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The DFlash2 rows: nothing before vLLM registers the architecture, a warning where V1
    /// drafts DFlash1 silently (0.28), an error where V1 refuses it (0.29 on) and across the
    /// default window.
    #[test]
    fn dflash2_v1_runner_follows_the_vllm_version() {
        let by = DFLASH2_V1_RUNNER_BY_ENGINE;
        let at = |v: Option<(u32, u32)>| {
            let release = crate::engine::EngineRelease {
                version: v.map(|(a, b)| (a, b, 0)),
                ..Engine::Vllm.into()
            };
            by.judge(Some(&release)).map(|j| j.severity)
        };
        assert_eq!(at(Some((0, 27))), None);
        assert_eq!(at(Some((0, 28))), Some(Severity::Warning));
        assert_eq!(at(Some((0, 29))), Some(Severity::Error));
        assert_eq!(at(Some((0, 34))), Some(Severity::Error));
        assert_eq!(at(None), Some(Severity::Error));
    }
}
