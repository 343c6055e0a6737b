//! What every prompt renders to: a `--chat-template` that replaces the target's own, and a
//! server-wide thinking default (`--default-chat-template-kwargs`). A drafter distilled on one
//! rendering drafts badly behind another.

use serde_json::Value;

use super::{Cx, Rule, VLLM_SGLANG};
use crate::diagnostic::{CodeInfo, Severity};
use crate::launch::LaunchCode;

pub(super) const CHAT_TEMPLATE_OVERRIDE: Rule = Rule {
    code: LaunchCode::ChatTemplateOverride,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "speculative decoding with --chat-template: the target is served with another template than its own",
        explanation: "A drafter is distilled on the target's answers to prompts rendered by one chat template (the \
target's own, or the one its training recipe used). vLLM's and SGLang's --chat-template replace the template for \
every request; when it differs from the one the drafter was trained with (Luce-Org/lucebox PR 293: a template without \
the empty `<think></think>` prefill) the drafter drafts text the target does not write and acceptance falls to about \
zero, with no error. A warning: the override may be the drafter's own template. Make sure it is, and measure \
acceptance; `dflash-check pin` records the target's template and `check` fails when it changes.",
    },
    applies: VLLM_SGLANG,
    needs: &[],
    check: chat_template_override,
};

/// `--chat-template` (both engines): the drafter was distilled on text one template rendered
/// (Luce-Org/lucebox PR 293). (`launch` refuses a command without speculative decoding, so there
/// is always a drafter.)
fn chat_template_override(cx: &mut Cx) {
    if let Some(t) = cx.input.deployment.chat_template.as_deref() {
        let shown = crate::text::clip(t, 80);
        cx.emit(
            "--chat-template",
            (None, "--chat-template"),
            format!(
                "--chat-template {shown} replaces the target's own chat template for every request: a drafter served \
                 behind another template than it was distilled with drafts text the target does not write (acceptance \
                 near 0 without the think prefill, Luce-Org/lucebox PR 293); make sure it is the drafter's training \
                 template and measure acceptance"
            ),
            None,
        );
    }
}

pub(super) const THINKING_DEFAULT: Rule = Rule {
    code: LaunchCode::ThinkingDefault,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "speculative decoding with --default-chat-template-kwargs setting thinking (enable_thinking / thinking)",
        explanation: "A server-wide `enable_thinking` (or vLLM's alias `thinking`) changes what every prompt renders \
to. Drafters for reasoning targets are trained on thinking traces: with thinking off, a DFlash drafter for \
Qwen3.5-35B-A3B went from 9.5 to under 4 accepted tokens per round, slower than no drafter (z-lab/dflash issue 60); \
the opposite mismatch hurts a drafter trained without thinking the same way. A warning: check which mode the \
drafter was trained for (its model card) and measure acceptance in the mode you serve. vLLM's \
--default-chat-template-kwargs and SGLang's flag of the same name (recent SGLang ServerArgs hold \
default_chat_template_kwargs) are read; per-request `chat_template_kwargs` are not visible in a launch command.",
    },
    applies: VLLM_SGLANG,
    needs: &[],
    check: thinking_default,
};

/// `--default-chat-template-kwargs`' thinking default (both engines): a drafter trained on one
/// mode drafts badly in the other (z-lab/dflash issue 60).
fn thinking_default(cx: &mut Cx) {
    // vLLM's flag, and SGLang's of the same name (recent ServerArgs hold
    // default_chat_template_kwargs); an SGLang without it refuses the flag at start-up.
    let Some(kwargs) = cx.input.deployment.default_chat_template_kwargs.as_deref() else {
        return;
    };
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(kwargs) else {
        cx.not_checked(
            "--default-chat-template-kwargs: its value is not a JSON object, so the thinking default was not read",
        );
        return;
    };
    let Some((key, value)) = ["enable_thinking", "thinking"]
        .iter()
        .find_map(|k| map.get(*k).map(|v| (*k, v.clone())))
    else {
        return;
    };
    cx.emit(
        "--default-chat-template-kwargs",
        (None, "--default-chat-template-kwargs"),
        format!(
            "--default-chat-template-kwargs sets {key} to {value} for every request: a drafter trained on the other \
             mode accepts far less (z-lab/dflash issue 60: 9.5 accepted tokens per round with thinking, under 4 \
             without, slower than no drafter); check which mode the drafter was trained for and measure acceptance \
             in this one"
        ),
        None,
    );
}
