//! Shapes and layout: the types of the fields every other rule relies on, sizes that must match
//! the target, the block size, and the flat/nested layout.

use super::{
    find, positive_int, Applies, ByEngine, Ctx, Engine, Family, LintCode, Need, ReleaseRow, Rule,
};
use crate::config::{Layout, LAYOUT_FIELDS};
use crate::diagnostic::{CodeInfo, Severity};
use crate::json::{Node, Path};

const DFLASH_FAMILIES: &[Family] = &[
    Family::Dflash,
    Family::Dflash2,
    Family::Dspark,
    Family::Domino,
];

/// The rules here whose severity follows the engine and its version.
pub(super) const BY_ENGINE: &[(LintCode, &ByEngine)] =
    &[(LintCode::BlockSizeMissing, &BLOCK_SIZE_MISSING_BY_ENGINE)];

pub(super) const RULES: &[Rule] = &[
    FIELD_TYPE,
    HIDDEN_SIZE_MISMATCH,
    VOCAB_SIZE_MISMATCH,
    BLOCK_SIZE_MISSING,
    MIXED_LAYOUT,
];

const FIELD_TYPE: Rule = Rule {
    code: LintCode::FieldType,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a critical field has the wrong type (string, float, negative, null, empty list)",
        explanation: "Ids, sizes and layer lists must be non-negative integers (lists of them for layer ids). \
Python loaders either raise on a string or float (`'248070' >= vocab_size` is a TypeError), or accept it and \
compute with it. Flags must be booleans: SGLang's parse_dflash_draft_config raises on a non-integer mask_token_id, a \
non-list target_layer_ids, a non-boolean attention_sink_bias, an output_multiplier <= 0 and an empty mask_token. Write \
the value as the published config does. Every rule that reads a field reports a wrong type under this one code. \
One exception is a warning, not an error: a whole-number float `block_size` (`16.0`), which SGLang's DFlash worker \
and z-lab's newer reference read with int() and vLLM does not read (z-lab's older reference, 44947fb, fails on it). \
Sizes (hidden_size, vocab_size, num_hidden_layers) and ids stay errors as floats: they size nn.Linear layers and \
index hidden-state lists, which refuse floats. A null is read by each engine as it reads it: a null \
`dflash_config.target_layer_ids` is a wrong type without an engine and under vLLM (its DFlash model calls len() on \
it) but a missing list under --engine sglang (SGLang 0.5.23 takes None as absent: target-layer-ids-missing); a null \
`eagle_aux_hidden_state_layer_ids` means the default layers in vLLM and SGLang (eagle-aux-layer-ids-missing).",
    },
    applies: Applies::All,
    needs: &[],
    check: field_type,
};

fn field_type(cx: &mut Ctx) {
    for key in ["hidden_size", "vocab_size", "num_hidden_layers"] {
        if let Some((path, node)) = find(
            cx.root,
            &[
                &[key],
                &["transformer_layer_config", key],
                &["text_config", key],
            ],
        ) {
            require_positive_int(cx, &path, node);
        }
    }
    if cx.detection.block_drafter() {
        if let Some((path, node)) = super::block_size_field(cx.root) {
            block_size_type(cx, &path, node);
        }
        dflash_config_types(cx);
        // DSpark's Markov rank also lives at the top level (SGLang's standalone DSpark loader).
        if let Some(n) = cx.root.get("markov_rank").filter(|n| !n.is_null()) {
            if n.as_u64().is_none() {
                let message = format!(
                    "`markov_rank` is {}; it must be a non-negative integer",
                    super::describe(n)
                );
                cx.emit_type(&Path::key("markov_rank"), message);
            }
        }
    }
}

/// The block size must be a positive integer; a whole float (`16.0`) is only a warning, since
/// every reader converts it with `int()` (SGLang's DFlash worker and argument hook, z-lab's newer
/// reference) or does not read it (vLLM). z-lab's older reference (44947fb) used
/// `config.block_size` as it is, where a float fails at the first slice.
fn block_size_type(cx: &mut Ctx, path: &Path, node: &Node) {
    if positive_int(node).is_ok() {
        return;
    }
    match super::whole_positive(node) {
        Some(b) => {
            cx.emit_as(
                Severity::Warning,
                path,
                format!(
                    "`{path}` is {}: SGLang and z-lab's newer reference read it as {b} with int(), z-lab's older \
                     reference (44947fb) slices with it and fails; write {b}",
                    super::describe(node)
                ),
            )
            .expected = Some(b.into());
        }
        None => require_positive_int(cx, path, node),
    }
}

/// What SGLang's parse_dflash_draft_config (and vLLM's DFlash model) require of the
/// `dflash_config` settings they read.
fn dflash_config_types(cx: &mut Ctx) {
    let Some(dc) = cx.dflash_config() else { return };
    let at = |k: &str| Path::key("dflash_config").child(k);
    for key in [
        "use_swa",
        "sample_from_anchor",
        "attention_sink_bias",
        "is_neox_style",
    ] {
        if let Some(n) = dc
            .get(key)
            .filter(|n| !n.is_null() && n.as_bool().is_none())
        {
            let message = format!(
                "`dflash_config.{key}` is {}; it must be a boolean",
                super::describe(n)
            );
            cx.emit_type(&at(key), message);
        }
    }
    for key in [
        "conv_kernel_size",
        "conv_group_size",
        "selector_rank",
        "selector_top_k",
        "markov_rank",
    ] {
        if let Some(n) = dc.get(key).filter(|n| !n.is_null()) {
            let ok = n.as_number().is_some_and(|x| x.is_integer_literal()) && n.as_u64().is_some();
            if !ok {
                let message = format!(
                    "`dflash_config.{key}` is {}; it must be a non-negative integer",
                    super::describe(n)
                );
                cx.emit_type(&at(key), message);
            }
        }
    }
    if let Some(n) = dc.get("output_multiplier").filter(|n| !n.is_null()) {
        if !n.as_number().is_some_and(|x| x.value > 0.0) {
            let message = format!(
                "`dflash_config.output_multiplier` is {}; SGLang requires a number > 0",
                super::describe(n)
            );
            cx.emit_type(&at("output_multiplier"), message);
        }
    }
    if let Some(n) = dc.get("mask_token").filter(|n| !n.is_null()) {
        if n.as_str().is_none_or(str::is_empty) {
            let message = format!(
                "`dflash_config.mask_token` is {}; SGLang requires a non-empty token string",
                super::describe(n)
            );
            cx.emit_type(&at("mask_token"), message);
        }
    }
}

const HIDDEN_SIZE_MISMATCH: Rule = Rule {
    code: LintCode::HiddenSizeMismatch,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the hidden size the drafter reads differs from the target's",
        explanation: "The drafter consumes the target's hidden states: its fc input is len(target_layer_ids) × \
the target's hidden size. vLLM sizes fc from `target_hidden_size` when the config has it, else from `hidden_size` \
(_get_dflash_fc_input_size), so the field checked is `target_hidden_size` when set and `hidden_size` otherwise; it \
must equal the target's hidden size (text_config.hidden_size for multimodal targets). A mismatch fails the fc \
weight load with a shape error; speculators' converter refuses it outright.",
    },
    applies: Applies::All,
    needs: &[Need::TargetHidden],
    check: hidden_size_mismatch,
};

fn hidden_size_mismatch(cx: &mut Ctx) {
    let Some(target) = cx.facts.and_then(|f| f.hidden_size) else {
        return;
    };
    // target_hidden_size (null = "same as hidden_size") wins where set.
    let found = find(
        cx.root,
        &[
            &["target_hidden_size"],
            &["dflash_config", "target_hidden_size"],
        ],
    )
    .filter(|(_, n)| !n.is_null())
    .or_else(|| {
        find(
            cx.root,
            &[
                &["hidden_size"],
                &["transformer_layer_config", "hidden_size"],
            ],
        )
    });
    let Some((path, node)) = found else { return };
    let Ok(h) = positive_int(node) else {
        if path.last_key() == Some("target_hidden_size") {
            cx.emit_type(
                &path,
                format!(
                    "`{path}` is {}; it must be the target's hidden size, a positive integer, or null",
                    super::describe(node)
                ),
            );
        }
        return;
    };
    if h != target {
        cx.emit(
            &path,
            format!("`{path}` is {h} but the target's hidden size is {target}: the fc weight will not load"),
        )
        .expected = Some(target.into());
    }
}

const VOCAB_SIZE_MISMATCH: Rule = Rule {
    code: LintCode::VocabSizeMismatch,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "vocab_size differs from the target's vocabulary (embedding rows)",
        explanation: "Drafters share the target's vocabulary: vLLM's DFlash model creates a `d2t` draft-to-target \
map when the draft vocabulary differs from the target's, and a checkpoint without that tensor leaves it zero, so \
every drafted id maps to the wrong token and acceptance collapses (NVIDIA-NeMo/Automodel#2447 saw exactly this). \
Use the target's embedding size (text_config.vocab_size for Qwen3.5/3.6: 248320, not the tokenizer length). \
EAGLE-3 heads with a reduced vocabulary say so with `draft_vocab_size`, not `vocab_size`.",
    },
    applies: Applies::All,
    needs: &[Need::TargetVocab],
    check: vocab_size_mismatch,
};

fn vocab_size_mismatch(cx: &mut Ctx) {
    let Some(target) = cx.target_vocab() else {
        return;
    };
    let Some((path, node)) = find(
        cx.root,
        &[&["vocab_size"], &["transformer_layer_config", "vocab_size"]],
    ) else {
        return;
    };
    let Ok(v) = positive_int(node) else { return };
    if v != target {
        let tokenizer_len = cx
            .tokens
            .tokenizer_len
            .filter(|&l| l == v)
            .map_or(String::new(), |_| {
                " (the value is the tokenizer length, not the embedding size)".to_string()
            });
        cx.emit(
            &path,
            format!("`{path}` is {v} but the target has {target} embedding rows{tokenizer_len}"),
        )
        .expected = Some(target.into());
    }
}

const BLOCK_SIZE_MISSING: Rule = Rule {
    code: LintCode::BlockSizeMissing,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "block_size is missing from both layouts: each reader assumes its own",
        explanation: "The drafted block length is `block_size` (flat, transformers 4.57) or \
`dflash_config.block_size` (nested, transformers 5); DeepSeek-V4 checkpoints with an embedded DSpark head write \
`dspark_block_size`. No serving engine refuses a config without it: SGLang infers --speculative-num-draft-tokens from \
the config and otherwise defaults to 16 with a warning, which need not match training (gpt-oss and MiMo drafters use \
8); vLLM does not read the drafter's block_size at all (its DFlash `block_size` is the KV page size); z-lab's newer \
reference defaults to 16 (its older one raised); speculators' converter refuses the config. So a warning without an \
engine and with --engine sglang (the default may not be the trained block), info with --engine vllm.",
    },
    applies: Applies::Only(DFLASH_FAMILIES),
    needs: &[],
    check: block_size_missing,
};

const BLOCK_SIZE_MISSING_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Info),
            "does not read the drafter's block_size",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Warning),
            "assumes a block of 16",
        ),
    ],
};

fn block_size_missing(cx: &mut Ctx) {
    if super::block_size_field(cx.root).is_some() {
        return;
    }
    cx.emit_by_engine(
        &LAYOUT_FIELDS[0].flat_path(),
        "block_size is missing from both layouts (top-level `block_size` and `dflash_config.block_size`): SGLang \
         and z-lab's newer reference assume a block of 16, vLLM does not read it; write the block the drafter \
         was trained with"
            .to_string(),
    );
}

const MIXED_LAYOUT: Rule = Rule {
    code: LintCode::MixedLayout,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "fields in both the flat and the nested layout",
        explanation: "transformers 4.57-era loaders read top-level `block_size` / `rope_theta`; transformers \
5-era loaders read `dflash_config.block_size` / `rope_parameters.rope_theta`. A config holding both spellings with \
different values means different engines run different drafters; a config mixing layouts across fields breaks \
loaders that expect one. Keep one layout, the published one (info when both spellings agree). A convention, not \
an engine check: a warning.",
    },
    applies: Applies::Only(DFLASH_FAMILIES),
    needs: &[],
    check: mixed_layout,
};

fn mixed_layout(cx: &mut Ctx) {
    let root = cx.root;
    let mut seen: Vec<(&'static str, Layout)> = Vec::new();
    for f in LAYOUT_FIELDS {
        let layout = f.layout_in(root);
        if layout == Layout::Both {
            let flat = f.flat_path().lookup(root);
            let nested = f.nested_path().lookup(root);
            let same = matches!((flat, nested), (Some(a), Some(b)) if a.same_value(b));
            let text = |n: Option<&Node>| n.map_or("?".to_string(), |n| n.to_compact());
            let nested_path = f.nested_path();
            cx.emit_as(
                if same {
                    Severity::Info
                } else {
                    Severity::Warning
                },
                &nested_path,
                format!(
                    "`{}` is {} and `{nested_path}` is {}: transformers 4.57-style loaders read the flat one, \
                     transformers 5-style loaders the nested one{}",
                    f.flat_path(),
                    text(flat),
                    text(nested),
                    if same {
                        " (they agree today)"
                    } else {
                        "; engines will disagree"
                    }
                ),
            );
        }
        if matches!(layout, Layout::Flat | Layout::Nested) {
            seen.push((f.name, layout));
        }
    }
    if let [(a, la), (b, lb)] = seen.as_slice() {
        if la != lb {
            let (flat_name, nested_name) = if *la == Layout::Flat { (a, b) } else { (b, a) };
            let nested_field = LAYOUT_FIELDS
                .iter()
                .find(|f| f.name == *nested_name)
                .map_or_else(Path::root, |f| f.nested_path());
            cx.emit(
                &nested_field,
                format!(
                    "`{flat_name}` is in the flat layout but `{nested_field}` in the nested one: a loader \
                     expecting one layout misses the other field"
                ),
            );
        }
    }
}

/// A `field-type` finding unless `node` is a positive integer.
pub(super) fn require_positive_int(cx: &mut Ctx, path: &Path, node: &Node) {
    if let Err(what) = positive_int(node) {
        cx.emit_type(
            path,
            format!("`{path}` is {what}; it must be a positive integer"),
        );
    }
}
