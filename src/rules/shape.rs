//! Shapes and layout: sizes that must match the target, the block size, the flat/nested
//! layout, and the types of the fields every other rule relies on.

use serde_json::json;

use super::{find, positive_int, Ctx, Family, Needs, Rule, Severity};
use crate::config::{Layout, LAYOUT_FIELDS};
use crate::json::{Node, Path};

pub const RULES: &[Rule] = &[
    Rule {
        code: "field-type",
        severity: Severity::Error,
        needs: Needs::Config,
        summary: "a critical field has the wrong type (string, float, negative, null, empty list)",
        explanation: "Ids, sizes and layer lists must be non-negative integers (lists of them for layer ids). \
Python loaders either raise on a string or float (`'248070' >= vocab_size`), or, worse, accept it and compute \
with it. Write the value as a JSON integer, as the published config does.",
        source: "transformers PretrainedConfig; SpecForge config validation",
    },
    Rule {
        code: "hidden-size-mismatch",
        severity: Severity::Error,
        needs: Needs::Target,
        summary: "hidden_size differs from the target's hidden size",
        explanation: "The drafter consumes the target's hidden states and shares its embeddings, so its \
hidden_size must equal the target's (text_config.hidden_size for multimodal targets; EAGLE-3: target_hidden_size \
when present). speculators' DFlash converter refuses a mismatch; engines fail with a shape error.",
        source: "vllm-project/speculators src/speculators/convert/dflash/converter.py",
    },
    Rule {
        code: "vocab-size-mismatch",
        severity: Severity::Error,
        needs: Needs::Target,
        summary: "vocab_size differs from the target's vocabulary (embedding rows)",
        explanation: "DFlash drafters borrow the target's embedding and LM head, so vocab_size must equal the \
target's (text_config.vocab_size for Qwen3.5/3.6: 248320, not the tokenizer length).",
        source: "z-lab/dflash dflash/model.py",
    },
    Rule {
        code: "block-size-missing",
        severity: Severity::Error,
        needs: Needs::Config,
        summary: "block_size is missing from both layouts",
        explanation: "The drafted block length is `block_size` (flat, transformers 4.57) or \
`dflash_config.block_size` (nested, transformers 5). With neither, loaders crash reading it or fall back to a \
default that need not match training (16 for -b16 drafters, 8 for gpt-oss and MiMo).",
        source: "z-lab/dflash PR 150; bstnxbt/dflash-mlx PR 46",
    },
    Rule {
        code: "mixed-layout",
        severity: Severity::Warning,
        needs: Needs::Config,
        summary: "fields in both the flat and the nested layout",
        explanation: "transformers 4.57-era loaders (z-lab model.py of that era, vLLM's config reader, dflash-mlx \
before PR 46) read top-level `block_size` / `rope_theta`; transformers 5-era loaders read \
`dflash_config.block_size` / `rope_parameters.rope_theta`. A config holding both spellings with different values \
means different engines run different drafters; a config mixing layouts across fields breaks loaders that expect \
one. Keep one layout, the published one (info when both spellings agree).",
        source: "bstnxbt/dflash-mlx PR 46, issues 50/51; z-lab/dflash PR 150; exllamav3 PR 276; lmdeploy PR 4991",
    },
];

pub(crate) fn check(cx: &mut Ctx) {
    let root = cx.root;
    let tl = ["transformer_layer_config"];
    let size_paths =
        |key: &'static str| -> Vec<Vec<&'static str>> { vec![vec![key], vec![tl[0], key]] };

    // Types of the size fields.
    for key in ["hidden_size", "vocab_size", "num_hidden_layers"] {
        let paths = size_paths(key);
        let refs: Vec<&[&str]> = paths.iter().map(Vec::as_slice).collect();
        if let Some((path, node)) = find(root, &refs) {
            require_positive_int(cx, &path, node);
        }
    }

    // hidden_size vs the target.
    let hidden_paths: Vec<&[&str]> = if cx.detection.eagle_like() {
        vec![
            &["target_hidden_size"],
            &["hidden_size"],
            &["transformer_layer_config", "hidden_size"],
        ]
    } else {
        vec![
            &["hidden_size"],
            &["transformer_layer_config", "hidden_size"],
        ]
    };
    if let Some((path, node)) = find(root, &hidden_paths) {
        if let Ok(h) = positive_int(node) {
            match cx.facts.and_then(|f| f.hidden_size) {
                Some(t) if t != h => cx.emit(
                    "hidden-size-mismatch",
                    &path,
                    format!("`{path}` is {h} but the target's hidden size is {t}"),
                    Some(json!(t)),
                ),
                Some(_) => {}
                None => {
                    cx.skipped.insert("hidden-size-mismatch");
                }
            }
        }
    }

    // vocab_size vs the target.
    if let Some((path, node)) = find(
        root,
        &[&["vocab_size"], &["transformer_layer_config", "vocab_size"]],
    ) {
        if let Ok(v) = positive_int(node) {
            match cx.facts.and_then(|f| f.vocab_size) {
                Some(t) if t != v => cx.emit(
                    "vocab-size-mismatch",
                    &path,
                    format!(
                        "`{path}` is {v} but the target has {t} embedding rows{}",
                        cx.tokens
                            .tokenizer_len
                            .filter(|&l| l == v)
                            .map_or(String::new(), |_| {
                                " (the value is the tokenizer length, not the embedding size)"
                                    .to_string()
                            })
                    ),
                    Some(json!(t)),
                ),
                Some(_) => {}
                None => {
                    cx.skipped.insert("vocab-size-mismatch");
                }
            }
        }
    }

    if !matches!(cx.detection.name, Family::Dflash | Family::Dflash2) {
        return;
    }

    // block_size, in either layout.
    let block = &LAYOUT_FIELDS[0];
    debug_assert_eq!(block.name, "block_size");
    match block.find(root) {
        None => cx.emit(
            "block-size-missing",
            &block.flat_path(),
            "block_size is missing from both layouts (top-level `block_size` and `dflash_config.block_size`): \
             loaders crash or fall back to a default block size"
                .to_string(),
            None,
        ),
        Some((path, node)) => {
            require_positive_int(cx, &path, node);
        }
    }

    // Layout: both spellings of one field, or fields in different layouts.
    let mut seen: Vec<(&'static str, Layout)> = Vec::new();
    for f in LAYOUT_FIELDS {
        let layout = f.layout_in(root);
        if layout == Layout::Both {
            let flat = f.flat_path().lookup(root);
            let nested = f.nested_path().lookup(root);
            let same = matches!((flat, nested), (Some(a), Some(b)) if a.same_value(b));
            let text =
                |n: Option<&crate::json::Node>| n.map_or("?".to_string(), |n| n.to_compact());
            let nested_path = f.nested_path();
            cx.emit_as(
                "mixed-layout",
                if same { Severity::Info } else { Severity::Warning },
                &nested_path,
                format!(
                    "`{}` is {} and `{nested_path}` is {}: transformers 4.57-style loaders read the flat one, \
                     transformers 5-style loaders the nested one{}",
                    f.flat_path(),
                    text(flat),
                    text(nested),
                    if same { " (they agree today)" } else { "; engines will disagree" }
                ),
                None,
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
                "mixed-layout",
                &nested_field,
                format!(
                    "`{flat_name}` is in the flat layout but `{nested_field}` in the nested one: a loader \
                     expecting one layout misses the other field"
                ),
                None,
            );
        }
    }
}

/// A `field-type` finding unless `node` is a positive integer.
fn require_positive_int(cx: &mut Ctx, path: &Path, node: &Node) {
    if let Err(what) = positive_int(node) {
        cx.emit(
            "field-type",
            path,
            format!("`{path}` is {what}; it must be a positive integer"),
            None,
        );
    }
}
