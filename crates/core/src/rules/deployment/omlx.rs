//! oMLX's fail-soft drafter loading: a DFlash drafter switched on in `model_settings.json` is
//! loaded by dflash-mlx when the model is first used, and when that load raises, oMLX logs
//! "DFlash start failed … Falling back" and serves the model without its drafter
//! (`EnginePool._load_engine`, jundot/omlx 003dad6). Nothing fails and nothing speeds up: the
//! rule names each cause read in dflash-mlx's loader (`DFlashDraftModelArgs`, the PyPI wheels
//! 0.1.0 to 0.1.8) that a drafter's files show, and the public reports that hit them.

use super::{At, Cx, Engines, Rule};
use crate::diagnostic::codes::DeploymentCode;
use crate::diagnostic::{CodeInfo, Severity};
use crate::engine::releases::{ByEngine, ReleaseRow};
use crate::engine::Engine;
use crate::family::Family;
use crate::json::Node;

/// oMLX's deployments.
const OMLX: Engines = Engines::on(&[Engine::Omlx]);

/// The fields `DFlashDraftModelArgs` declares without a default (model.py, dflash-mlx 0.1.0 to
/// 0.1.8, the same list in each): a config that lacks one fails `cls(**fields)` with TypeError.
const REQUIRED: &[&str] = &[
    "model_type",
    "hidden_size",
    "num_hidden_layers",
    "intermediate_size",
    "num_attention_heads",
    "rms_norm_eps",
    "vocab_size",
    "num_key_value_heads",
    "max_position_embeddings",
    "rope_theta",
    "head_dim",
    "tie_word_embeddings",
    "num_target_layers",
    "block_size",
];

/// The layer types `DFlashDraftModelArgs.__post_init__` accepts (0.1.6 to 0.1.8).
const LAYER_TYPES: &[&str] = &["full_attention", "sliding_attention"];

pub(super) const OMLX_DRAFT_FALLBACK: Rule = Rule {
    code: DeploymentCode::OmlxDraftFallback,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "oMLX: the DFlash drafter would fail to load, and oMLX would serve the model without it",
        explanation: "oMLX loads a DFlash drafter (`dflash_draft_model` in model_settings.json) through \
dflash-mlx's `load_draft_bundle` when the model is first used, and when that raises it logs \"DFlash start \
failed … Falling back\" and serves the model plainly (engine_pool.py): the deployment runs, without \
speculative decoding. Causes a drafter's files show, read in dflash-mlx 0.1.0 to 0.1.8 (oMLX pins a fork of \
0.1.10): a config without one of the fields `DFlashDraftModelArgs` requires (`rope_theta` and `block_size` \
among them: a config written with transformers 5's `rope_parameters` lacks `rope_theta`; omlx#2317, \
omlx#2557), `layer_types` of another length than `num_hidden_layers`, a layer type other than \
full_attention or sliding_attention, sliding layers without a positive `sliding_window`; and a \
`dflash_draft_model` that is neither a directory nor a Hub repository id (`owner/name`), which dflash-mlx \
hands to `snapshot_download` as a repository id (omlx#3019); a DFlash2 drafter under oMLX up to 0.6.2, \
whose pinned dflash-mlx has no DFlash2 modules (omlx#2896; 0.6.3rc1 added them). A warning: nothing fails, the drafter is simply \
not used. Give the config the fields (`rope_theta` from `rope_parameters.rope_theta`), or name the drafter \
by its directory's path.",
    },
    applies: OMLX,
    needs: &[],
    check: omlx_draft_fallback,
};

/// A DFlash2 drafter (its candidate selector, its attention conv): the dflash-mlx fork oMLX
/// pinned up to 0.6.2 (0.1.10+omlx.5) has no DFlash2 modules, so the strict load refuses its
/// tensors ("Received parameters not in model: candidate_selector…") and oMLX falls back;
/// v0.6.3rc1 ships the DFlash2 runtime (omlx#2896, omlx#2840). Rows hold per minor line, so
/// 0.6.x is judged as 0.6.2 (a warning a 0.6.3+ line does not earn: pin `omlx@0.7` there).
const DFLASH2_UNSUPPORTED: ByEngine = ByEngine {
    case: Some("the drafter is a DFlash2 drafter"),
    no_engine: None,
    rows: &[
        ReleaseRow::until(
            Engine::Omlx,
            (0, 6),
            Some(Severity::Warning),
            "pins a dflash-mlx fork without DFlash2 modules up to 0.6.2: the drafter's selector tensors fail \
the strict load and the model is served without it (omlx#2896)",
        ),
        ReleaseRow::since(
            Engine::Omlx,
            (0, 7),
            None,
            "runs DFlash2 drafters (the runtime came with v0.6.3rc1, omlx#2840)",
        ),
    ],
};

/// The tables of this rule's cases (`explain`, docs/rules.md).
pub(super) const CASES: &[(DeploymentCode, &ByEngine)] =
    &[(DeploymentCode::OmlxDraftFallback, &DFLASH2_UNSUPPORTED)];

/// Each cause the drafter shows, one finding each.
fn omlx_draft_fallback(cx: &mut Cx) {
    let d = cx.deployment;
    // A line states the method (dflash_enabled); lint's flags state none, so a DFlash drafter
    // linted for oMLX is judged as what it is.
    let dflash = match d.method.as_ref() {
        Some(m) => m.name == crate::engine::omlx::DFLASH,
        None => cx
            .drafter
            .and_then(|dr| dr.family())
            .is_some_and(|f| Engine::Omlx.code().expected_method(f.spec()).is_some()),
    };
    if !dflash {
        return;
    }
    let Some(dr) = cx.drafter else {
        let crate::deployment::Drafter::Separate(name) = &d.drafter else {
            return;
        };
        if bare_name(name) {
            let message = format!(
                "dflash_draft_model `{}` is neither a directory nor a Hub repository id (owner/name): \
                 dflash-mlx asks the Hub for a repository of that name, the load fails, and oMLX serves \
                 the model without its drafter (omlx#3019); name the drafter by its directory's path",
                crate::display::shown(name)
            );
            let at = At {
                flag: "dflash_draft_model",
                anchor: (None, "dflash_draft_model"),
                field: None,
            };
            cx.emit(Severity::Warning, at, message, None);
        }
        return;
    };
    let root = dr.root();
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|k| root.get(k).is_none())
        .collect();
    if !missing.is_empty() {
        let hint = if missing.contains(&"rope_theta") && root.get("rope_parameters").is_some() {
            " (the config keeps its rope base under rope_parameters: copy rope_parameters.rope_theta to a top-level rope_theta)"
        } else {
            ""
        };
        let message = format!(
            "the drafter's config has no {}: dflash-mlx's DFlashDraftModelArgs requires {}, so the drafter fails \
             to load and oMLX serves the model without it (omlx#2317, omlx#2557){hint}",
            missing.join(", "),
            if missing.len() == 1 { "it" } else { "them" },
        );
        cx.emit(Severity::Warning, config_at(), message, None);
    }
    layer_types(cx, root);
    if dr.family() == Some(Family::Dflash2) {
        dflash2_unsupported(cx);
    }
}

/// A DFlash2 drafter under an oMLX release whose dflash-mlx has no DFlash2 modules.
fn dflash2_unsupported(cx: &mut Cx) {
    let Some(judged) = DFLASH2_UNSUPPORTED.judge(cx.deployment.engine.as_ref()) else {
        return;
    };
    let message = "a DFlash2 drafter: the dflash-mlx fork oMLX pins up to 0.6.2 has no DFlash2 modules, so \
        the drafter's candidate-selector tensors fail the strict load (\"Received parameters not in model: \
        candidate_selector…\") and oMLX serves the model without it (omlx#2896); v0.6.3rc1 and later run it"
        .to_string();
    let d = cx.emit(judged.severity, config_at(), message, None);
    d.releases = judged.releases;
}

/// `layer_types` as `DFlashDraftModelArgs.__post_init__` checks it (0.1.6 to 0.1.8).
fn layer_types(cx: &mut Cx, root: &Node) {
    let Some(types) = root.get("layer_types").and_then(Node::as_array) else {
        return;
    };
    let layers = root.get("num_hidden_layers").and_then(Node::as_u64);
    let fault = if layers.is_some_and(|n| n != types.len() as u64) {
        Some(format!(
            "layer_types has {} entries and num_hidden_layers is {}",
            types.len(),
            layers.unwrap_or_default()
        ))
    } else if let Some(t) = types
        .iter()
        .find(|t| t.as_str().is_none_or(|s| !LAYER_TYPES.contains(&s)))
    {
        Some(format!(
            "layer_types holds {}, which is neither full_attention nor sliding_attention",
            crate::display::shown(&t.to_compact())
        ))
    } else if types
        .iter()
        .any(|t| t.as_str() == Some("sliding_attention"))
        && root
            .get("sliding_window")
            .and_then(Node::as_u64)
            .is_none_or(|w| w == 0)
    {
        Some("layer_types holds sliding_attention layers and sliding_window is not a positive number".into())
    } else {
        None
    };
    if let Some(fault) = fault {
        let message = format!(
            "{fault}: dflash-mlx's DFlashDraftModelArgs raises ValueError, so the drafter fails to load and \
             oMLX serves the model without it"
        );
        cx.emit(Severity::Warning, config_at(), message, None);
    }
}

/// A finding about the drafter's config itself.
fn config_at() -> At<'static> {
    At {
        flag: "",
        anchor: (None, ""),
        field: None,
    }
}

/// A name that is no path (no separator, not `.`, `~`) and no `owner/name` repository id.
fn bare_name(name: &str) -> bool {
    !name.contains('/') && !name.starts_with('.') && !name.starts_with('~') && !name.contains('\\')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_name_is_neither_a_path_nor_a_repository() {
        assert!(bare_name("Qwen3.8-27B-DFlash2"));
        assert!(!bare_name("z-lab/Qwen3.8-27B-DFlash2"));
        assert!(!bare_name("/Users/x/.omlx/models/draft"));
        assert!(!bare_name("./draft"));
        assert!(!bare_name("~/draft"));
    }
}
