//! Whether the release that serves a deployment can serve it at all: the drafter's architecture
//! in the engine's drafter registry, the method among those it accepts, and for llama.cpp's
//! `draft-mtp` a target architecture it builds an MTP draft for. One rule reads the engine's
//! capability rows (`engine::capability`): a release that lacks what the deployment needs is an
//! error (the engine refuses it at start-up); with the release not known, the releases of the
//! engine's default window that lack it are named, and how to pin the release.

use super::{At, Cx, Rule};
use crate::diagnostic::codes::DeploymentCode;
use crate::diagnostic::{CodeInfo, Severity};
use crate::engine::{Capabilities, Holds, What};
use crate::json::{Node, Path};
use serde_json::Value;

pub(super) const ENGINE_UNSUPPORTED: Rule = Rule {
    code: DeploymentCode::EngineUnsupported,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the engine release that serves the line does not support its drafter, method or target",
        explanation: "Each engine release serves a fixed set of drafter architectures, speculative methods and, \
for llama.cpp's draft-mtp, target architectures; the engine table records them by release \
(`engine::capability`: vLLM's drafter registry and method list read in every wheel from 0.25.1 to 0.34.0, \
SGLang's algorithms from 0.5.10 to 0.5.23, llama.cpp's draft-mtp graphs at b11312). A release without what \
the deployment needs refuses it at start-up: vLLM 0.27 on a DFlash2DraftModel drafter (the architecture is \
registered from 0.28.0), a method a release does not know (vLLM's config validation, SGLang's \"Unknown \
speculative algorithm\"), draft-mtp on a target architecture llama.cpp has no MTP graph for, and vLLM asked \
for async scheduling (`--async-scheduling`) with a method the release cannot schedule asynchronously: up to \
0.32 it refuses every method but EAGLE/EAGLE-3/MTP/DFlash/DSpark/draft_model/ngram_gpu (ngram, medusa, \
mlp_speculator, suffix, custom_class: \"Currently, async scheduling is only supported with EAGLE/MTP/Draft \
Model/NGram GPU/DSpark kind of speculative decoding\") and an unpadded drafter batch \
(`disable_padded_drafter_batch`); 0.33 refuses them only on the V1 runner, which it falls back to for suffix \
and custom_class; 0.34, whose only runner is V2, refuses none. Without the switch vLLM turns async \
scheduling off itself, with a warning. The V2 model runner asked for (`VLLM_USE_V2_MODEL_RUNNER=1`) with a \
method the release does not run on it (ngram up to 0.31, draft_model up to 0.30, …) is refused (\"Model Runner V2 \
does not yet support\"). An EAGLE-3, DFlash or DSpark drafter on a target whose vLLM model class lacks the \
SupportsEagle3 interface is refused when the target loads (\"Model does not support EAGLE3 interface\", vllm#33329): \
the classes are read by a static scan of every wheel from 0.25.1 to 0.34.0 (scripts/scan-aux-targets.py, \
scripts/gen-aux-targets.py); an architecture the registry lacks, `--model-impl transformers` and a target naming \
several architectures are not judged. An EAGLE-3 head with `eagle_config.use_aux_hidden_state: false` reads the last \
hidden state alone: vLLM honours the key (llama_eagle3.py, 0.25.1 to 0.34.0), tpu-inference reads it at no release \
(0.18.0 to 0.32.0: its EAGLE-3 model always builds fc for three concatenated states, and the load fails on the shape, \
tpu-inference#2841); tpu-inference's proposer dispatch also builds only ngram and EAGLE-3 proposers (MTP from 0.22, \
DFlash from 0.25) and raises NotImplementedError for any other method. SGLang needs the method's \
capture hook on the target class instead (`set_eagle3_layers_to_capture`, `set_dflash_layers_to_capture`, DSpark's \
own or the DFlash one) and fails at start-up without it (an AttributeError, from 0.5.23 a ValueError; sglang#34771): \
read by scripts/scan-sglang-aux-targets.py over 0.5.10 to 0.5.23. With the release \
known (--engine vllm@0.27, an image tag, the pin file, the server) the rule judges that release; without it, \
every release of the engine's default window, naming those that refuse. Block drafters (DFlash, DFlash2, \
DSpark) are judged by architecture: vLLM loads them by the name in `architectures` (rewriting only a few: a \
Qwen3 DSparkDraftModel to Qwen3DSparkModel); EAGLE heads are not, since vLLM rewrites their architectures.",
    },
    // Every engine: the rows say what each can do.
    applies: super::Engines::every(),
    needs: &[],
    check: engine_unsupported,
};

/// Each fact the deployment needs of its engine, with where to point and how to say it.
fn needed<'c>(cx: &Cx<'c>) -> Vec<(What<'c>, At<'c>, String)> {
    let mut out = Vec::new();
    if let Some(dr) = cx.drafter {
        // A block drafter that names itself by a drafter architecture: not a head inside its
        // target's config (DeepSeek-V4's DSpark keys), nor the speculators format (whose
        // adapter rewrites the architecture).
        let block = dr.detection.is_some_and(|d| {
            d.name.spec().rules.block_drafter
                && d.evidence
                    .first()
                    .is_some_and(|e| e.starts_with("architectures ["))
        });
        let first = dr
            .root()
            .get("architectures")
            .and_then(Node::as_array)
            .and_then(|a| a.first())
            .and_then(Node::as_str);
        if let (true, Some(arch)) = (block, first) {
            // Pointed at in the drafter's config, not in the command line.
            let at = At {
                flag: "",
                anchor: (None, ""),
                field: Some(Path::key("architectures")),
            };
            out.push((
                What::DrafterArchitecture(arch),
                at,
                format!("the drafter's architecture {arch}"),
            ));
        }
    }
    // A target that bundles its MTP layers named as the drafter, on an engine that loads such a
    // checkpoint as a drafter only at some releases (mlx-vlm).
    if let (Some(dr), Some(engine)) = (cx.drafter, cx.deployment.engine()) {
        let declares_mtp = dr.family() == Some(crate::family::Family::Mtp);
        if let Some(t) = engine.code().native_mtp_drafter(dr.root(), declares_mtp) {
            out.push((
                What::NativeMtpCheckpoint(t),
                At {
                    flag: "",
                    anchor: (None, ""),
                    field: Some(Path::key("model_type")),
                },
                format!("the drafter, a {t} checkpoint that bundles its MTP layers"),
            ));
        }
    }
    if let Some(m) = cx.deployment.method.as_ref() {
        let code = cx.deployment.engine().map(|e| e.code());
        if let Some(code) = code {
            let (flag, after, needle) = code.method_location();
            out.push((
                What::Method(&m.name),
                At {
                    flag,
                    anchor: (after, needle),
                    field: None,
                },
                format!("the method {:?}", m.name),
            ));
        }
    }
    // A method vLLM up to 0.33 replaces by the draft's name is judged by that rule, not here.
    if super::mtp::rewritten_by_name(cx).is_some() {
        return out;
    }
    // A drafter that reads the target's hidden states needs a target class that hands them
    // over (vLLM: SupportsEagle3, checked when the target is loaded).
    // Each engine's rows answer one of the two facts (vLLM: the interface; SGLang: the
    // method's hook); the other has no rows there and is not judged.
    if let Some((method, arch)) = hidden_state_target(cx) {
        let at = || At {
            flag: "model",
            anchor: (None, cx.deployment.target_name.as_deref().unwrap_or("")),
            field: None,
        };
        let said = format!(
            "the target's architecture {arch} with the method {:?}",
            method_name(cx)
        );
        out.push((What::AuxHiddenStates(arch), at(), said.clone()));
        out.push((What::LayerCapture(method, arch), at(), said));
    }
    // An EAGLE-3 head that turns the auxiliary hidden states off: the release must read the
    // key, or it feeds the head three concatenated states its fc was not built for.
    if method_name(cx).eq_ignore_ascii_case("eagle3") && aux_off_or_default(cx) {
        out.push((
            What::AuxHiddenStatesOff,
            At {
                flag: "",
                anchor: (None, ""),
                field: Some(Path::key("eagle_config").child("use_aux_hidden_state")),
            },
            "an EAGLE-3 head with eagle_config.use_aux_hidden_state false".to_string(),
        ));
    }
    switches_needed(cx, &mut out);
    out
}

/// The facts the line's runner and scheduling switches need of the release: the method on the
/// V2 runner asked for, the method (and an unpadded drafter batch) with async scheduling asked for.
fn switches_needed<'c>(cx: &Cx<'c>, out: &mut Vec<(What<'c>, At<'c>, String)>) {
    // The V2 model runner asked for explicitly: the release must run the method on it, or it
    // refuses to start ("Model Runner V2 does not yet support: speculative method …").
    if let (Some(var), Some(m)) = (cx.deployment.v2_runner, cx.deployment.method.as_ref()) {
        out.push((
            What::V2Runner(&m.name),
            At {
                flag: "env",
                anchor: (None, var),
                field: None,
            },
            format!("{var}=1 with the method {:?}", m.name),
        ));
    }
    // Async scheduling asked for explicitly: the release must schedule the method (and the
    // speculative config's unpadded drafter batch) asynchronously, or it refuses to start.
    if let Some(flag) = cx.deployment.async_scheduling {
        let at = || At {
            flag,
            anchor: (None, flag),
            field: None,
        };
        if let Some(m) = cx.deployment.method.as_ref() {
            out.push((
                What::AsyncScheduling(&m.name),
                at(),
                format!("{flag} with the method {:?}", m.name),
            ));
        }
        if cx.deployment.spec("disable_padded_drafter_batch") == Some(&Value::Bool(true)) {
            out.push((
                What::AsyncSchedulingUnpaddedDrafts,
                at(),
                format!("{flag} with disable_padded_drafter_batch"),
            ));
        }
    }
}

fn engine_unsupported(cx: &mut Cx) {
    let Some(release) = cx.deployment.engine.clone() else {
        return;
    };
    let engine = release.engine;
    for (what, at, said) in needed(cx) {
        let held =
            Capabilities::where_held(engine, what).map_or("at no release read".to_string(), |w| {
                match w.starts_with("where ") {
                    // A platform's fact held where its base engine's is: already a clause.
                    true => w,
                    false => format!("at {w}"),
                }
            });
        let which = match Capabilities::of(&release, what) {
            Holds::Yes | Holds::Unknown => continue,
            Holds::No => match release.version_text() {
                Some(v) => format!("{} {v} does not {} (it does {held})", engine.display(), what.describe()),
                None => format!(
                    "{} does not {} at any release of its default window (it does {held})",
                    engine.display(),
                    what.describe()
                ),
            },
            Holds::Partly { yes, no } => format!(
                "{} {no} does not {} ({yes} does; the release is not known: pin it with --engine {}@X or \
                 the `engine` key of dflash-check.toml)",
                engine.display(),
                what.describe(),
                engine.as_str()
            ),
        };
        let message = format!(
            "{which}: the engine refuses {said} at start-up; {}",
            what.remedy()
        );
        cx.emit(Severity::Error, at, message, None);
    }
}

/// The method as written, for messages.
fn method_name<'c>(cx: &Cx<'c>) -> &'c str {
    cx.deployment
        .method
        .as_ref()
        .map_or("", |m| m.name.as_str())
}

/// The target's one architecture, when the deployment's drafter reads the target's hidden
/// states and the engine builds the target with its own model class: EAGLE-3 (unless the
/// drafter's `eagle_config.use_aux_hidden_state` is false, which the runners honour
/// differently: not judged), DFlash and DSpark. A target naming several architectures is not
/// judged (the engine takes the first it serves).
fn hidden_state_target<'c>(cx: &Cx<'c>) -> Option<(&'static str, &'c str)> {
    let d = cx.deployment;
    if d.target_via_transformers {
        return None;
    }
    // The method's name as vLLM writes it and SGLang's algorithm (`EAGLE3`) alike.
    let method = match method_name(cx).to_ascii_lowercase().as_str() {
        "dflash" => "dflash",
        "dspark" => "dspark",
        // EAGLE-3 reads them unless its config turns them off; an unread drafter is not judged.
        "eagle3" if cx.drafter.is_some() && !aux_off_or_default(cx) => "eagle3",
        _ => return None,
    };
    match d.target.as_ref()?.architectures.as_slice() {
        [one] => Some((method, one.as_str())),
        _ => None,
    }
}

/// Whether an EAGLE-3 drafter's config turns the hidden states off (`eagle_config.
/// use_aux_hidden_state: false`; absent means on).
fn aux_off_or_default(cx: &Cx) -> bool {
    cx.drafter
        .and_then(|dr| dr.root().get("eagle_config"))
        .and_then(|e| e.get("use_aux_hidden_state"))
        .and_then(Node::as_bool)
        == Some(false)
}
