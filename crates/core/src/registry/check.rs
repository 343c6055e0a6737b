//! The documentation of the codes `check` raises itself rather than by a rule: a drafter it
//! could not read, a pin it could not follow, an `[[ignore]]` entry that expired or matched
//! nothing. The code that raises them is the `dflash-check` crate's (`check`, `suppress`), which
//! reads files and the Hub; their documentation lives here, beside every other code's, so the
//! registry answers `explain` for every code from the core.

use crate::diagnostic::codes::CheckCode;
use crate::diagnostic::{CodeInfo, Severity};

/// Codes of the findings `check` makes itself (lint's come from the rule registry).
pub fn info(code: CheckCode) -> &'static CodeInfo {
    match code {
CheckCode::AuthorityUnavailable => &CodeInfo {
            severity: Severity::Error,
            summary: "the pinned authority or target could not be read (Hub failure, missing file)",
            explanation: "A pin names an authority that could not be had; the gate cannot vouch for the drafter.",
        },
        CheckCode::ConfigUnreadable => &CodeInfo {
            severity: Severity::Error,
            summary: "the config.json could not be read or is not valid JSON",
            explanation: "Every engine refuses a config.json that is not valid JSON.",
        },
        CheckCode::WeightsUnreadable => &CodeInfo {
            severity: Severity::Error,
            summary: "the safetensors header(s) beside the config could not be read",
            explanation: "A model.safetensors (or a shard of model.safetensors.index.json) beside the config is \
truncated, malformed or hostile: engines refuse to load it. `dflash-check weights DIR` shows what was read.",
        },
        CheckCode::PinMissing => &CodeInfo {
            severity: Severity::Error,
            summary: "no pin for this drafter in dflash-check.toml, and --require-pin is set",
            explanation: "With --require-pin every drafter must be pinned to an authority at a commit sha; run \
`dflash-check pin`.",
        },
        CheckCode::SuppressionExpired | CheckCode::SuppressionUnused => suppress_info(code),
        CheckCode::DeploymentTooLarge | CheckCode::MtpNotServed => deployment_info(code),
        CheckCode::NoAuthority => &CodeInfo {
            severity: Severity::Warning,
            summary: "no pin and no built-in snapshot of the drafter's shape: unverified, only lint rules were run",
            explanation: "Nothing to compare the drafter with, so the gate cannot say it is the published config; \
the verdict line counts it as unverified (`OK (1 unverified)` is not `OK`). Pin it to its Hub repo at a commit with \
`dflash-check pin` to compare it field by field, or run with --require-pin to make an unpinned drafter an error.",
        },
        CheckCode::NoDrafters => &CodeInfo {
            severity: Severity::Warning,
            summary: "no drafter config was found under the paths given",
            explanation: "A gate that checked nothing has vouched for nothing: the paths may be wrong, or the drafters \
may live elsewhere (hidden folders, `node_modules` and `target` are skipped).",
        },
        CheckCode::PinPathMissing => &CodeInfo {
            severity: Severity::Warning,
            summary: "a pin in dflash-check.toml names a drafter directory that does not exist",
            explanation: "The drafter was moved or removed, so its pin no longer applies to anything: a moved drafter \
is then checked without its pin. Move the pin with the drafter, or remove it.",
        },
        CheckCode::PinChatTemplateChanged => &CodeInfo {
            severity: Severity::Error,
            summary: "the target's chat template differs from the one recorded when the drafter was pinned",
            explanation: "A drafter predicts the target's continuation of text rendered by one chat template; served \
behind another (a template without the empty `<think></think>` prefill the drafter was distilled with, thinking \
turned off for a drafter trained on thinking traces) it drafts text the target never writes, and acceptance falls \
to about zero (Luce-Org/lucebox PR 293) or below the speed of no drafter at all (z-lab/dflash issue 60: 9.5 \
accepted tokens per round with thinking, under 4 without). No engine checks it. `pin` records a sha256 of the \
target directory's `tokenizer_config.json` `chat_template` and `chat_template.jinja`; `check` recomputes it. If the \
new template is intended, re-pin after measuring acceptance.",
        },
        CheckCode::PinD2tChanged => &CodeInfo {
            severity: Severity::Error,
            summary: "the drafter's d2t token map differs from the one recorded when it was pinned",
            explanation: "An EAGLE-3 drafter's `lm_head` row i predicts target token i + d2t[i]. Fine-tuning from a \
checkpoint with SpecForge regenerated `d2t`/`t2d` from the new data and overwrote the loaded map, so every row now \
points at another token: acceptance collapses, and the training metrics (computed against the new map) do not show \
it (SpecForge PR 534). `pin` records a sha256 of the `d2t` tensor's bytes (one ranged read of that tensor from \
the local safetensors); `check` recomputes it, and a missing `d2t` where one was pinned is a change too.",
        },
        CheckCode::PinDigestUnverified => &CodeInfo {
            severity: Severity::Warning,
            summary: "a digest recorded in the pin could not be recomputed (target directory or weights absent or unreadable)",
            explanation: "The pin records the target's chat template or the drafter's d2t, but the files to recompute \
it from are not there (a CI checkout without the target model, weights kept out of git) or cannot be read. The gate \
has not verified them, and says so rather than passing silently. Check where the files are present, or remove the \
digest from the pin if it no longer applies.",
        },
    }
}

/// The codes about the deployments `check` finds beside the configs: a deployment file it
/// could not read for its size, a target's MTP head nothing under the paths serves.
pub fn deployment_info(code: CheckCode) -> &'static CodeInfo {
    match code {
        CheckCode::DeploymentTooLarge => &CodeInfo {
            severity: Severity::Error,
            summary: "a deployment file that configures speculative decoding is over the size cap, so nothing it deploys was checked",
            explanation: "`check` reads scripts, Dockerfiles, compose files and Kubernetes manifests up to a cap (16 MiB \
unless `--max-file-size` raises it; `launch --file` refuses the same file with exit 2). A file over it that names \
speculative decoding (a Helm render with its CRDs, a generated manifest) was not read, so the gate cannot vouch for \
what it deploys: the finding names the file's size and the option that raises the cap. Raise it, or suppress the \
finding with an `[[ignore]]` entry and a reason.",
        },
        _ => &CodeInfo {
            severity: Severity::Info,
            summary: "a target config declares an MTP head that no deployment under the paths serves with MTP",
            explanation: "A target checkpoint whose config declares MTP layers (`num_nextn_predict_layers`, \
`mtp_num_hidden_layers`) is judged as a drafter when a script, compose file or manifest under the paths serves it \
with MTP (vLLM `method: mtp`, SGLang NEXTN/EAGLE without a draft model, …), with that deployment's engine. A target \
that nothing here serves with MTP is not judged as a drafter: it may be served without speculation, or from a \
deployment kept elsewhere (check that one with `launch`, or pin the config to make it a drafter of this gate).",
        },
    }
}

/// The `[[ignore]]` entries' codes (raised by the `dflash-check` crate's `suppress`).
pub fn suppress_info(code: CheckCode) -> &'static CodeInfo {
    match code {
        CheckCode::SuppressionExpired => &CodeInfo {
            severity: Severity::Error,
            summary: "an [[ignore]] entry in dflash-check.toml is past its expiry date",
            explanation: "The entry no longer applies, so the finding it suppressed is reported again, and the \
entry itself is an error until someone decides: fix the config, or extend `expires` with a reason that still \
holds.",
        },
        _ => &CodeInfo {
            severity: Severity::Error,
            summary: "an [[ignore]] entry in dflash-check.toml matched no finding",
            explanation: "The drafter it names was checked and has no such finding any more (it was fixed, or the \
code, path or pointer is wrong): remove the entry, so it cannot hide a future regression.",
        },
    }
}
