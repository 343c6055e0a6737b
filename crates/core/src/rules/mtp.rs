//! MTP heads inside a target checkpoint, judged from the target's config alone: the depth the
//! config declares (read once, by `family::embedded`) and the facts the engines build the head
//! from. What depends on how the head is served (the method, K against the depth, a model type
//! an engine refuses for `mtp`) is a deployment rule (`rules::deployment::mtp`), so `lint
//! --engine` and `launch` say it alike; what depends on the tensors is the weights rules'.

use super::{Applies, Ctx, Detection, Family, LintCode, Rule};
use crate::config::ConfigFile;
use crate::diagnostic::codes::Code;
use crate::diagnostic::{CodeInfo, Severity};
use crate::family::embedded;
use crate::json::Path;
use crate::Result;

pub(super) const RULES: &[Rule] = &[MTP_BASE_LAYERS_MISSING, MTP_LAYERS_UNUSED];

/// The MTP declaration of a config detected (or forced) as an MTP target must be readable: two
/// depth spellings that disagree, or a depth that is not a whole number, is bad input (exit 2,
/// the file and both JSON paths named), never judged by whichever spelling was read first.
pub fn readable(config: &ConfigFile, detection: &Detection) -> Result<()> {
    if detection.name != Family::Mtp {
        return Ok(());
    }
    match embedded::declared(config.root()) {
        Ok(_) => Ok(()),
        Err(mut e) => {
            e.message = format!("`{}`: {}", config.path.display(), e.message);
            Err(e.at(config.path.clone(), None))
        }
    }
}

/// The target facts of an MTP head declared in `config` when no target was given: the config
/// is the target's own (the head is stored in the target checkpoint), so the rules that compare
/// a drafter with its target read the config's own numbers instead of being skipped.
pub fn own_facts(
    config: &ConfigFile,
    detection: &Detection,
    target: &crate::target::TargetContext,
) -> Option<crate::config::TargetFacts> {
    if target.facts.is_some() || detection.name != Family::Mtp {
        return None;
    }
    embedded::declared(config.root()).ok()??;
    let mut facts = crate::config::TargetFacts::from_config(config);
    facts.source = format!("{} (the MTP head's own checkpoint)", config.path.display());
    Some(facts)
}

const MTP_BASE_LAYERS_MISSING: Rule = Rule {
    code: LintCode::MtpBaseLayersMissing,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the config declares an MTP head but no num_hidden_layers beside its depth: the engine cannot tell where the MTP layers are stored",
        explanation: "MTP layers are stored after the trunk, at layer indices num_hidden_layers and up \
(DeepSeek-V3: model.layers.61 for 61 trunk layers), and vLLM's MTP models start their layer numbering at \
`config.num_hidden_layers` (deepseek_mtp.py, glm4_moe_mtp.py at 0.28.0). A config that declares the depth \
(`num_nextn_predict_layers`, `mtp_num_hidden_layers`, either under `text_config`) without `num_hidden_layers` in the \
same object leaves that number to the config class's default, which is the right one only for the model the \
default was written for: a warning, since transformers fills in a default and nothing refuses the file. Write \
`num_hidden_layers` beside the depth key.",
    },
    applies: Applies::Only(&[Family::Mtp]),
    needs: &[],
    check: mtp_base_layers_missing,
};

/// The depth is declared and `num_hidden_layers` is not in the same object.
fn mtp_base_layers_missing(cx: &mut Ctx) {
    let Ok(Some(declared)) = embedded::declared(cx.root) else {
        return;
    };
    if declared.num_hidden_layers.is_some() {
        return;
    }
    let path = Path::parse(&declared.key);
    let beside = match declared.key.rsplit_once('.') {
        Some((parent, _)) => format!("{parent}.num_hidden_layers"),
        None => "num_hidden_layers".to_string(),
    };
    let message = format!(
        "`{}` declares {} MTP layer(s) but `{beside}` is missing: the MTP layers are stored at layer indices \
         num_hidden_layers and up, and engines build them from that number; write `{beside}` (the trunk's layer \
         count)",
        declared.key, declared.depth
    );
    cx.emit(&path, message);
}

/// Targets whose MTP layers vLLM builds only the first of (`_MIMO_V2_*_NUM_MTP_LAYERS = 1`).
const FIRST_LAYER_ONLY: &[&str] = &[
    "MiMoV2ForCausalLM",
    "MiMoV2OmniForCausalLM",
    "MiMoV2FlashForCausalLM",
];

const MTP_LAYERS_UNUSED: Rule = Rule {
    code: LintCode::MtpLayersUnused,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "the config declares more MTP layers than vLLM builds for its architecture (MiMo-V2: the first only)",
        explanation: "For MiMo-V2 targets (MiMoV2ForCausalLM, MiMoV2OmniForCausalLM, MiMoV2FlashForCausalLM) vLLM \
rewrites the MTP config to one layer whatever the checkpoint declares (\"vLLM currently supports only the first MiMo-V2 \
MTP layer\": n_predict and num_nextn_predict_layers set to 1, read at 0.28.0; the constant is still 1 at 0.34.0). The \
other layers are loaded by nobody, and K above 1 runs the first layer again. Worth knowing: nothing fails.",
    },
    applies: Applies::Only(&[Family::Mtp]),
    needs: &[],
    check: mtp_layers_unused,
};

/// A MiMo-V2 target that declares more than one MTP layer.
fn mtp_layers_unused(cx: &mut Ctx) {
    let Ok(Some(declared)) = embedded::declared(cx.root) else {
        return;
    };
    let architectures = crate::config::architectures(cx.root);
    let Some(arch) = architectures
        .first()
        .filter(|a| FIRST_LAYER_ONLY.contains(&a.as_str()))
    else {
        return;
    };
    if declared.depth <= 1 {
        return;
    }
    let message = format!(
        "`{}` declares {} MTP layers, but vLLM builds only the first for {arch}: the others are not used, and K \
         above 1 reruns the first",
        declared.key, declared.depth
    );
    cx.emit(&Path::parse(&declared.key), message);
}

/// The codes of the MTP rules lint ran on `detection`'s config (none for another family): the
/// lint rules of the MTP family that were not skipped, and the deployment rules about MTP heads
/// that `deployment` (lint's flags, when lint judges them) puts in scope. What `lint` lists, so a
/// clean MTP target says what was checked.
pub fn ran(
    detection: &Detection,
    skipped: &[super::Skipped],
    deployment: Option<&crate::deployment::Deployment>,
) -> Vec<Code> {
    if detection.name != Family::Mtp {
        return Vec::new();
    }
    let lint = super::every_rule()
        .filter(|r| matches!(r.applies, Applies::Only(f) if f.contains(&Family::Mtp)))
        .map(|r| r.code)
        .filter(|c| !skipped.iter().any(|s| s.code == *c))
        .map(Code::Lint);
    let judged = deployment
        .map(super::deployment::mtp::in_scope)
        .unwrap_or_default();
    lint.chain(judged.into_iter().map(Code::Deployment))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{lint, LintOptions};
    use crate::target::TargetContext;

    fn config(text: &str) -> ConfigFile {
        crate::config::parse(std::path::Path::new("config.json"), text.as_bytes())
            .expect("test JSON")
    }

    #[test]
    fn an_mtp_target_lints_and_lists_its_rules() {
        let c = config(
            r#"{"architectures": ["DeepseekV3ForCausalLM"], "num_nextn_predict_layers": 1}"#,
        );
        let r = lint(&c, &LintOptions::default(), &TargetContext::none()).unwrap();
        assert_eq!(r.family.name, Family::Mtp);
        assert_eq!(
            r.mtp_rules,
            vec![
                Code::Lint(LintCode::MtpBaseLayersMissing),
                Code::Lint(LintCode::MtpLayersUnused)
            ]
        );
        assert!(r
            .findings
            .iter()
            .any(|d| d.code.as_str() == "mtp-base-layers-missing"));
    }

    #[test]
    fn disagreeing_depths_are_bad_input() {
        let c = config(
            r#"{"num_hidden_layers": 40, "mtp_num_hidden_layers": 1, "text_config": {"mtp_num_hidden_layers": 2}}"#,
        );
        let e = lint(&c, &LintOptions::default(), &TargetContext::none()).unwrap_err();
        assert!(
            e.message.contains("text_config.mtp_num_hidden_layers"),
            "{}",
            e.message
        );
        assert!(e.file.is_some());
    }
}
