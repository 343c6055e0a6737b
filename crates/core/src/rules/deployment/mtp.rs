//! An MTP head served from inside its target checkpoint, as a deployment states it: the method
//! `mtp` on a checkpoint whose config declares no head, K against the head's depth, DeepSeek
//! V4.1 or a V4 DSpark checkpoint (whose `mtp.*` tensors are DSpark stages) served as `mtp`,
//! and vLLM's auto-detection, which replaces a written method by one read from substrings of
//! the draft model's name.
//!
//! The head is read from the drafter's config through `family::embedded` (for an MTP method
//! without a separate drafter, launch reads the target's config as the drafter's). Sources: vLLM
//! `vllm/config/speculative.py` in the release wheels 0.25.1 to 0.33.0 and the files it moved to
//! in 0.34.0 (`v1/worker/gpu/spec_decode/`), cited in evidence/evidence.toml under each code.

use serde_json::json;

use super::super::{ByEngine, ReleaseRow};
use super::{At, Cx, DrafterConfig, Need, Rule, When, SGLANG, VLLM};
use crate::deployment::{Deployment, Drafter, Engine, MethodFrom};
use crate::diagnostic::codes::DeploymentCode;
use crate::diagnostic::{CodeInfo, Severity};
use crate::family::embedded::{self, MtpDeclaration};
use crate::json::{Node, Path};

/// The codes of the rules here that `d` puts in scope (what lint lists as the MTP rules run):
/// the MTP rules whose scope holds for the deployment.
pub fn in_scope(d: &Deployment) -> Vec<DeploymentCode> {
    [
        &MTP_HEAD_MISSING,
        &MTP_K_DEPTH,
        &MTP_DSPARK_STAGES,
        &METHOD_OVERRIDDEN_BY_NAME,
        &MTP_NEXTN_LAYERS_SGLANG,
    ]
    .into_iter()
    .filter(|r| r.applies.holds(d))
    .map(|r| r.code)
    .collect()
}

fn is_mtp_name(m: &str) -> bool {
    m == "mtp" || m.ends_with("_mtp")
}

/// The MTP head the drafter's config declares; `None` when it declares none or its keys cannot
/// be read (lint refuses that config on its own).
fn head(dr: &DrafterConfig) -> Option<MtpDeclaration> {
    embedded::declared(dr.root()).ok().flatten()
}

/// Where a finding on the speculative config's method points (the rules here are vLLM's: its
/// code says where its line states the method).
fn at_method(field: Option<Path>) -> At<'static> {
    let (flag, after, needle) = Engine::Vllm.code().method_location();
    At {
        flag,
        anchor: (after, needle),
        field,
    }
}

pub(super) const MTP_HEAD_MISSING: Rule = Rule {
    code: DeploymentCode::MtpHeadMissing,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "method mtp on a checkpoint whose config declares no MTP head",
        explanation: "With `method: mtp` and no draft `model`, vLLM drafts with the target's own MTP layers: it \
rewrites the target's config into its MTP model (`hf_config_override`: `num_nextn_predict_layers`, or \
`mtp_num_hidden_layers` for Qwen3.5, becomes `n_predict`). A target whose config declares no MTP head (no depth key, \
or 0) has none to draft with: for a model type vLLM has no MTP model for, vLLM raises NotImplementedError \
\"Unsupported speculative method: 'mtp'\"; for one it maps (DeepSeek-V3 with num_nextn_predict_layers 0), the head \
is built with n_predict 0 and K is divided by it. Either way the server does not start: an error. Serve a checkpoint \
that ships the MTP layers (the original, not a quantization that dropped them), or another method.",
    },
    applies: VLLM.when(When::MtpHead),
    needs: &[Need::DrafterConfig],
    check: mtp_head_missing,
};

/// Method mtp and the config it drafts from is no drafter and declares no MTP head.
fn mtp_head_missing(cx: &mut Cx) {
    let Some(dr) = cx.drafter else {
        return;
    };
    // A config of no drafter family (a plain target), or one forced to MTP: a drafter of
    // another family, or a standalone MTP module, is the method rules' to judge.
    let plain = dr
        .detection
        .is_none_or(|d| d.forced && d.name == crate::family::Family::Mtp);
    if !plain {
        return;
    }
    if !matches!(embedded::declared(dr.root()), Ok(None)) {
        return;
    }
    let whose = match &cx.deployment.drafter {
        Drafter::Separate(name) => format!("the draft model `{name}`"),
        _ => "the target".to_string(),
    };
    let message = format!(
        "method \"mtp\", but {whose}'s config declares no MTP head (no num_nextn_predict_layers or \
         mtp_num_hidden_layers above 0, top level or under text_config): vLLM has no MTP layers to draft with and \
         does not start; serve a checkpoint that ships its MTP layers, or another method"
    );
    cx.emit(Severity::Error, at_method(None), message, None);
}

pub(super) const MTP_K_DEPTH: Rule = Rule {
    code: DeploymentCode::MtpKDepth,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "num_speculative_tokens above the MTP head's depth: refused unless a multiple of it, and the layers are reused",
        explanation: "vLLM sets `n_predict` to the MTP depth the target's config declares and, when \
num_speculative_tokens is larger, raises ValueError \"num_speculative_tokens:K must be divisible by n_predict\" \
unless K is a multiple of it (every release read, 0.25.1 to 0.34.0): an error. A multiple is accepted, and the \
MTP layers are run again for the positions past the depth; vLLM logs \"Enabling num_speculative_tokens > 1 will run \
multiple times of forward on same MTP layer, which may result in lower acceptance rate\" (except for step3p5 and \
inkling MTP): a warning. A public report served a Qwen3.5-122B MTP head with K 13 and saw acceptance 0 \
(vllm-ascend issue 9290; the cause is not stated there). Set K to the depth, or measure acceptance per position before going past it.",
    },
    applies: VLLM.when(When::MtpHead),
    needs: &[Need::DrafterConfig],
    check: mtp_k_depth,
};

/// K against the depth of the MTP head the drafter's config declares.
fn mtp_k_depth(cx: &mut Cx) {
    let Some(dr) = cx.drafter else {
        return;
    };
    let d = cx.deployment;
    let (Some(k), Some(head)) = (d.k(), head(&dr)) else {
        return;
    };
    if k <= head.depth {
        return;
    }
    let depth = head.depth;
    let at = At {
        flag: "--speculative-config.num_speculative_tokens",
        anchor: (
            Some(crate::engine::vllm::SPECULATIVE_CONFIG),
            "num_speculative_tokens",
        ),
        field: Some(Path::parse(&head.key)),
    };
    if k % depth != 0 {
        let message = format!(
            "num_speculative_tokens {k} is above the MTP depth {depth} (`{}`) and not a multiple of it: vLLM raises \
             \"num_speculative_tokens:{k} must be divisible by n_predict={depth}\"; use {depth}",
            head.key
        );
        cx.emit(Severity::Error, at, message, Some(json!(depth)));
        return;
    }
    let message = format!(
        "num_speculative_tokens {k} is above the MTP depth {depth} (`{}`): vLLM runs the same MTP layer(s) again for \
         the positions past {depth} (it warns \"may result in lower acceptance rate\"; a Qwen3.5-122B MTP head at K 13 \
         reported 0 acceptance, vllm-ascend 9290); use {depth} unless acceptance per position says otherwise",
        head.key
    );
    cx.emit(Severity::Warning, at, message, Some(json!(depth)));
}

pub(super) const MTP_DSPARK_STAGES: Rule = Rule {
    code: DeploymentCode::MtpDsparkStages,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a DeepSeek V4/V4.1 DSpark checkpoint served with method mtp: its mtp.* tensors are DSpark stages, serve it with dspark",
        explanation: "DeepSeek's DSpark checkpoints keep the DSpark stages under `mtp.*` (main_proj, main_norm, \
markov_head, confidence_head) and none of the classic MTP weights (eh_proj, enorm, hnorm). A DeepSeek V4.1 checkpoint \
(`model_type: deepseek_v41`) is always one: vLLM from 0.30.0 raises ValueError \"DeepSeek V4.1 has no classic-MTP \
draft … Use speculative method 'dspark' instead of 'mtp'\" (0.34.0 in its MTP speculator's config); 0.28 and 0.29 \
know no MTP model for the type and raise \"Unsupported speculative method: 'mtp'\". A DeepSeek V4 checkpoint \
(`model_type: deepseek_v4`) is one when its config carries the DSpark keys (`dspark_block_size`, \
`dspark_target_layer_ids`, `dspark_markov_rank`: DeepSeek-V4-Flash-0731, DeepSeek-V4-Pro-0813; the base V4-Flash \
and its NVFP4 export have none and a real MTP layer): every vLLM release read (0.28.0–0.34.0) still builds \
DeepSeekV4MTPModel for it, whose loader files `mtp.0.main_norm` under the MTP block and dies with \
`KeyError: 'model.layers.43.mtp_block.main_norm.weight'` in every worker (vllm#52111; the config check that would \
refuse it early, vllm#52165, is an open PR). The server does not start at any release read: an error. Use \
`\"method\": \"dspark\"` with num_speculative_tokens at least dspark_block_size.",
    },
    applies: VLLM.when(When::MtpHead),
    needs: &[Need::DrafterConfig],
    check: mtp_dspark_stages,
};

/// The DeepSeek-V4 config keys only a DSpark checkpoint carries (vllm#52165 detects it by them).
const DSPARK_KEYS: &[&str] = &[
    "dspark_block_size",
    "dspark_target_layer_ids",
    "dspark_markov_rank",
];

/// Method mtp on a DeepSeek V4.1 config, or on a V4 config with the DSpark keys.
fn mtp_dspark_stages(cx: &mut Cx) {
    let Some(dr) = cx.drafter else {
        return;
    };
    let root = dr.root();
    let model_type = root.get("model_type").and_then(Node::as_str);
    let (why, fails) = match model_type {
        Some("deepseek_v41") => (
            "a DeepSeek V4.1 checkpoint (model_type \"deepseek_v41\")".to_string(),
            "vLLM refuses it (\"Use speculative method 'dspark' instead of 'mtp'\")",
        ),
        Some("deepseek_v4") => {
            let Some(key) = DSPARK_KEYS.iter().find(|k| root.get(k).is_some()) else {
                return;
            };
            (
                format!("a DeepSeek V4 DSpark checkpoint (`{key}` in its config)"),
                "vLLM loads them as an MTP layer and every worker dies with KeyError \
                 'model.layers.N.mtp_block.main_norm.weight' (vllm#52111)",
            )
        }
        _ => return,
    };
    let message = format!(
        "method \"mtp\" on {why}: its mtp.* tensors are DSpark stages, not MTP layers, and {fails}; use \
         \"method\": \"dspark\""
    );
    cx.emit(
        Severity::Error,
        at_method(Some(Path::key("model_type"))),
        message,
        Some(json!("dspark")),
    );
}

pub(super) const METHOD_OVERRIDDEN_BY_NAME: Rule = Rule {
    code: DeploymentCode::MethodOverriddenByName,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "vLLM replaces the written method with one it reads from the draft model's name (eagle-, eagle3, dflash, dspark)",
        explanation: "Up to 0.33.0, vLLM keeps a written `method` only when it is eagle, eagle3, dflash or dspark. \
Any other (mtp, draft_model, …) is replaced by the first that matches, in order: \"eagle-\" in the draft model's name \
(lowercased) makes it eagle, \"eagle3\" eagle3, \"dflash\" (or the architecture MuseGlimmerAssistantModel, from 0.28) \
dflash, \"dspark\" (or Qwen3DSparkModel, Gemma4DSparkModel) dspark. For method mtp without a draft `model` the name \
is the target's, so an MTP target stored under a folder named `…-dflash…` is loaded as a DFlash drafter. When the \
method vLLM ends up with does not serve the drafter (an MTP head, a draft model), the drafter is loaded with the \
wrong proposer: an error up to 0.33. 0.34.0 keeps a written method (it detects one only when none is given, and \
refuses a draft that declares another speculator): worth knowing there. Rename the folder (or a symlink to it) so \
the name holds none of those substrings.",
    },
    applies: VLLM,
    needs: &[],
    check: method_overridden_by_name,
};

pub(super) const METHOD_OVERRIDDEN_BY_NAME_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: None,
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 33),
            Some(Severity::Error),
            "replaces any method but eagle/eagle3/dflash/dspark by the one the draft's name says (read at 0.25.1-0.33.0)",
        ),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 34),
            Some(Severity::Info),
            "keeps a written method (read at 0.34.0)",
        ),
    ],
};

/// The substrings (lowercased name) and architectures vLLM's auto-detection reads, in its order.
const BY_NAME: &[(&str, &str)] = &[
    ("eagle-", "eagle"),
    ("eagle3", "eagle3"),
    ("dflash", "dflash"),
    ("dspark", "dspark"),
];
const BY_ARCHITECTURE: &[(&str, &str)] = &[
    ("MuseGlimmerAssistantModel", "dflash"),
    ("Qwen3DSparkModel", "dspark"),
    ("Gemma4DSparkModel", "dspark"),
];

/// What vLLM up to 0.33 replaces the written method by, and why (`"dflash" in NAME`): a
/// written method other than the four it keeps, with a draft name (or architecture) that
/// picks another. Rules that judge the method by name skip such a line: it is this file's
/// `method-overridden-by-name` to judge.
pub(super) fn rewritten_by_name(cx: &Cx) -> Option<(String, &'static str)> {
    let d = cx.deployment;
    let method = d
        .method
        .as_ref()
        .filter(|m| m.from == MethodFrom::SpeculativeConfig)?;
    let written = method.name.as_str();
    if ["eagle", "eagle3", "dflash", "dspark"].contains(&written) {
        return None;
    }
    // The name vLLM reads: the draft `model`, else (mtp) the target's.
    let name = match d.spec("model").and_then(serde_json::Value::as_str) {
        Some(model) => model.to_string(),
        None if is_mtp_name(written) => match &d.target_name {
            Some(t) => t.clone(),
            None => return None,
        },
        None => return None,
    };
    let lower = name.to_ascii_lowercase();
    let by_name = BY_NAME.iter().find(|(s, _)| lower.contains(s));
    let architectures = cx
        .drafter
        .map(|dr| crate::config::architectures(dr.root()))
        .unwrap_or_default();
    match by_name {
        Some((s, m)) => Some((format!("\"{s}\" in `{name}`"), *m)),
        None => BY_ARCHITECTURE
            .iter()
            .find(|(a, _)| architectures.iter().any(|x| x == a))
            .map(|(a, m)| (format!("the architecture {a}"), *m)),
    }
}

/// A written vLLM method other than the four it keeps, and a draft name (or architecture) that
/// makes vLLM pick another.
fn method_overridden_by_name(cx: &mut Cx) {
    let Some((trigger, becomes)) = rewritten_by_name(cx) else {
        return;
    };
    let written = cx
        .deployment
        .method
        .as_ref()
        .map_or("", |m| m.name.as_str());
    let Some(row) = cx.engine_severity() else {
        return;
    };
    // The new method serves the drafter: vLLM's rewrite helps (the written method is
    // speculative-config-method's to judge).
    let det = cx.drafter.and_then(|dr| dr.detection);
    if det.is_some_and(|det| det.effective().vllm_accepts(becomes)) {
        return;
    }
    let severity = match (row, det, cx.drafter.and_then(|dr| head(&dr))) {
        (Severity::Error, None, None) => Severity::Warning,
        (s, ..) => s,
    };
    // The release's row said info: it keeps the method, and the message says so rather than
    // describing the older releases' rewrite as this one's.
    let message = if severity == Severity::Info {
        format!(
            "method {written:?} is kept by this release, but vLLM up to 0.33 reads {trigger} and runs {becomes:?} \
             instead: if an older release serves this line too, rename the folder (or link it under a name without \
             \"eagle-\", \"eagle3\", \"dflash\" or \"dspark\")"
        )
    } else {
        format!(
            "method {written:?} is not kept: vLLM (up to 0.33) reads {trigger} and runs {becomes:?} instead, loading the \
             drafter with the wrong proposer; rename the folder (or link it under a name without \"eagle-\", \"eagle3\", \
             \"dflash\" or \"dspark\"), or serve with vLLM 0.34 or later, which keeps the written method"
        )
    };
    cx.emit(severity, at_method(None), message, Some(json!(written)));
}

/// The target architectures SGLang 0.5.23 serves as their own NextN draft and loads with a
/// weight loader that requires `num_nextn_predict_layers == 1`: (target, the draft class
/// `model_config.py` renames it to). DeepSeek-V3/V3.2 and GLM-5 (whose NextN class is the
/// DeepSeek one's subclass) go through the DeepSeek weight loader; GLM-4.5 to 4.7 and GLM-4.7-Flash
/// through `glm4_moe.py` / `glm4_moe_lite.py`'s `load_weights(is_nextn=True)`, which checks the
/// same way. Bailing (Ling) V1, V2 and V2.5 targets are served as their own draft too and
/// renamed BailingMoeForCausalLMNextN, whose loader is chosen by version (`bailing_moe.py`,
/// `bailing_moe_linear.py`, or `bailing_moe_v3.py` for a Ling-V3 config): all three check the key
/// the same way. (V3 is renamed only when named as a draft; `_handle_eagle_family` does not list
/// it, so its target is not its own draft without a draft path.) Qwen3.5 and Qwen3-Next drafts get `num_nextn_predict_layers = 1` set by
/// `model_config.py` whatever the checkpoint says: no depth refusal to predict there (a dropped
/// head is `weights-mtp-missing`'s).
const SGLANG_NEXTN: &[(&str, &str)] = &[
    ("DeepseekV3ForCausalLM", "DeepseekV3ForCausalLMNextN"),
    ("DeepseekV32ForCausalLM", "DeepseekV3ForCausalLMNextN"),
    ("GlmMoeDsaForCausalLM", "GlmMoeDsaForCausalLMNextN"),
    ("Glm4MoeForCausalLM", "Glm4MoeForCausalLMNextN"),
    ("Glm4MoeLiteForCausalLM", "Glm4MoeLiteForCausalLMNextN"),
    ("BailingMoeForCausalLM", "BailingMoeForCausalLMNextN"),
    ("BailingMoeV2ForCausalLM", "BailingMoeForCausalLMNextN"),
    ("BailingMoeV2_5ForCausalLM", "BailingMoeForCausalLMNextN"),
];

pub(super) const MTP_NEXTN_LAYERS_SGLANG: Rule = Rule {
    code: DeploymentCode::MtpNextnLayersSglang,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "SGLang NEXTN/EAGLE on a DeepSeek-V3, GLM or Bailing (Ling) checkpoint whose num_nextn_predict_layers is not exactly 1",
        explanation: "With `--speculative-algorithm NEXTN` (EAGLE) and no draft model path, SGLang 0.5.23 serves the \
target checkpoint as its own draft for DeepSeek-V3 and V3.2, GLM-5, GLM-4.5 to 4.7 and Bailing (Ling) V1 to V2.5 \
(`_handle_eagle_family` sets the draft path to the model path) and loads it as its NextN class (DeepseekV3ForCausalLMNextN, \
GlmMoeDsaForCausalLMNextN, Glm4MoeForCausalLMNextN, Glm4MoeLiteForCausalLMNextN, BailingMoeForCausalLMNextN), whose \
weight loader raises ValueError \"num_nextn_predict_layers \
is not in the config\" when the key is absent and AssertionError \"Only 1 nextn layer is supported\" for any other \
value than 1 (0 included: a quantization that dropped the head and zeroed the key). The server does not start: an \
error. vLLM reads the same key as the head's depth (mtp-head-missing, mtp-k-depth).",
    },
    applies: SGLANG.when(When::MtpHead),
    needs: &[Need::DrafterConfig],
    check: mtp_nextn_layers_sglang,
};

fn mtp_nextn_layers_sglang(cx: &mut Cx) {
    let Some(dr) = cx.drafter else {
        return;
    };
    let root = dr.root();
    let arch = crate::config::architectures(root).into_iter().next();
    let Some((arch, nextn)) =
        arch.and_then(|a| SGLANG_NEXTN.iter().find(|(t, _)| *t == a.as_str()).copied())
    else {
        return;
    };
    let key = root.get("num_nextn_predict_layers");
    let value = key.map(|n| n.as_u64());
    let state = match value {
        Some(Some(1)) => return,
        // SGLang's own BailingHybridConfig defaults the key to 0: the assertion, not the
        // ValueError, is what a Bailing V2.5 checkpoint without it meets.
        None if arch == "BailingMoeV2_5ForCausalLM" => "has no `num_nextn_predict_layers`: SGLang's \
                 BailingHybridConfig defaults it to 0 and the loader asserts \"Only 1 nextn layer is supported\""
            .to_string(),
        None => "has no `num_nextn_predict_layers`: SGLang raises ValueError \"num_nextn_predict_layers is not in the \
                 config\""
            .to_string(),
        Some(Some(n)) => format!(
            "has `num_nextn_predict_layers` {n}: SGLang asserts \"Only 1 nextn layer is supported\""
        ),
        Some(None) => "has a `num_nextn_predict_layers` that is not a whole number: SGLang's assertion that it is 1 \
                       fails"
            .to_string(),
    };
    let message = format!(
        "--speculative-algorithm EAGLE/NEXTN with no draft model serves the {arch} target as its own NextN draft \
         ({nextn}), and its config {state}; the server does not start. Serve a checkpoint that ships its one MTP layer (the \
         original, not a quantization that dropped it), or another algorithm"
    );
    let at = At {
        flag: crate::engine::sglang::ALGORITHM,
        anchor: (None, crate::engine::sglang::ALGORITHM),
        field: Some(Path::key("num_nextn_predict_layers")),
    };
    cx.emit(Severity::Error, at, message, Some(json!(1)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deployment::Origin;
    use crate::rules::deployment::check;
    use crate::rules::family;
    use crate::rules::Detection;

    fn config(text: &str) -> crate::config::ConfigFile {
        crate::config::parse(std::path::Path::new("config.json"), text.as_bytes()).unwrap()
    }

    fn vllm(spec: serde_json::Value, target: Option<&str>) -> Deployment {
        let mut d = Deployment::new(Origin::LaunchLine, Some(Engine::Vllm.into()));
        d.apply(Engine::Vllm.code().lint_settings(spec.as_object(), None));
        d.target_name = target.map(str::to_string);
        d.drafter = Drafter::Embedded;
        d
    }

    fn codes(d: &Deployment, text: &str) -> Vec<(String, Severity)> {
        let c = config(text);
        let det: Option<Detection> = family::detect(c.root());
        let dr = DrafterConfig {
            config: &c,
            detection: det.as_ref(),
        };
        check(d, Some(dr))
            .findings
            .into_iter()
            .map(|f| (f.code.as_str().to_string(), f.severity))
            .collect()
    }

    const DEEPSEEK: &str = r#"{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "num_hidden_layers": 61, "num_nextn_predict_layers": 1}"#;

    #[test]
    fn mtp_on_a_target_without_a_head_is_an_error() {
        let d = vllm(
            json!({"method": "mtp", "num_speculative_tokens": 1}),
            Some("Qwen/Qwen3-8B"),
        );
        let got = codes(
            &d,
            r#"{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}"#,
        );
        assert!(
            got.contains(&("mtp-head-missing".into(), Severity::Error)),
            "{got:?}"
        );
        assert!(!codes(&d, DEEPSEEK)
            .iter()
            .any(|(c, _)| c == "mtp-head-missing"));
    }

    #[test]
    fn k_against_the_depth() {
        let k = |k: u64| vllm(json!({"method": "mtp", "num_speculative_tokens": k}), None);
        assert!(codes(&k(1), DEEPSEEK).is_empty());
        assert!(codes(&k(3), DEEPSEEK).contains(&("mtp-k-depth".into(), Severity::Warning)));
        let two = DEEPSEEK.replace(
            "\"num_nextn_predict_layers\": 1",
            "\"num_nextn_predict_layers\": 2",
        );
        assert!(codes(&k(3), &two).contains(&("mtp-k-depth".into(), Severity::Error)));
        assert!(codes(&k(4), &two).contains(&("mtp-k-depth".into(), Severity::Warning)));
    }

    #[test]
    fn deepseek_v41_as_mtp_is_refused() {
        let d = vllm(json!({"method": "mtp", "num_speculative_tokens": 1}), None);
        let v41 = r#"{"model_type": "deepseek_v41", "num_hidden_layers": 61, "num_nextn_predict_layers": 3}"#;
        assert!(codes(&d, v41).contains(&("mtp-dspark-stages".into(), Severity::Error)));
    }

    #[test]
    fn a_name_that_rewrites_the_method() {
        let d = vllm(
            json!({"method": "mtp", "num_speculative_tokens": 1}),
            Some("/models/GLM-4.5-Air-dflash-eval"),
        );
        // Release not known: an error, as on 0.28 to 0.33 of the default window.
        let got = codes(&d, DEEPSEEK);
        assert!(
            got.contains(&("method-overridden-by-name".into(), Severity::Error)),
            "{got:?}"
        );
        let mut old = d.clone();
        old.engine = Some(crate::deployment::EngineRelease::parse("vllm@0.28").unwrap());
        let got = codes(&old, DEEPSEEK);
        assert!(
            got.contains(&("method-overridden-by-name".into(), Severity::Error)),
            "{got:?}"
        );
        let mut new = d.clone();
        new.engine = Some(crate::deployment::EngineRelease::parse("vllm@0.34").unwrap());
        let got = codes(&new, DEEPSEEK);
        assert!(
            got.contains(&("method-overridden-by-name".into(), Severity::Info)),
            "{got:?}"
        );
        // A kept method, or a name without the substrings: nothing.
        let kept = vllm(json!({"method": "dflash", "model": "x/y-eagle3"}), None);
        assert!(!codes(&kept, DEEPSEEK)
            .iter()
            .any(|(c, _)| c == "method-overridden-by-name"));
        let plain = vllm(json!({"method": "mtp"}), Some("deepseek-ai/DeepSeek-V3"));
        assert!(!codes(&plain, DEEPSEEK)
            .iter()
            .any(|(c, _)| c == "method-overridden-by-name"));
    }
}
