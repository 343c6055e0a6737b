//! The weights family's rule list: every tensor of the headers against what the config (and,
//! when known, the target) makes the engine build.
//!
//! Each code is a [`Rule`] declared beside its function in a topical file: `files` (the index
//! and the shards, names), `quant` (quantization), `shapes` (layer count and shapes), `presence`
//! (tensors refused, skipped, unknown or missing) and `vocab` (`d2t` / `t2d`). The rules see a
//! [`View`] built once from the parsed headers and config ([`super::view`]), through the
//! family's context ([`super::cx`]): they never read a file. [`run`] runs them through the
//! engine every family shares ([`crate::diagnostic::rule::run`]) and returns the findings and
//! the rules skipped for want of a fact. Index rules apply to any config; tensor rules to a
//! family whose tensor layout is known (DFlash, DFlash2, EAGLE-3), the others are out of scope
//! (the report says only the index and shards were checked).

use super::cx::{Cx, Rule, Skipped};
use super::view::{Purpose, View};
use super::{
    draft_heads, files, gguf, gguf_dflash, maps, mtp, presence, quant, shapes, vocab, WeightsCode,
    WeightsHeaders,
};
use crate::config::{ConfigFile, TargetFacts};
use crate::diagnostic::rule;
use crate::diagnostic::{self, CodeInfo, Diagnostic};

/// Every weights rule, topic by topic, in the order they run.
const RULES: &[&[Rule]] = &[
    files::RULES,
    quant::RULES,
    shapes::RULES,
    presence::RULES,
    draft_heads::RULES,
    vocab::RULES,
    maps::RULES,
    mtp::RULES,
    gguf::RULES,
    gguf_dflash::RULES,
];

/// Every weights rule: the registry.
pub fn all_rules() -> Vec<&'static Rule> {
    RULES.iter().flat_map(|r| r.iter()).collect()
}

/// The rule that raises `code`.
pub fn rule(code: WeightsCode) -> &'static Rule {
    RULES
        .iter()
        .find_map(|r| rule::find(r, code))
        .expect("every weights code has a rule (tested)")
}

/// A weights code's documentation, from its rule.
pub fn info(code: WeightsCode) -> &'static CodeInfo {
    &rule(code).info
}

/// The findings of one check, and the rules that could not run.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    pub diagnostics: Vec<Diagnostic>,
    pub skipped: Vec<Skipped>,
    /// An index whose shards are all absent, checked for a deployment: the header checks were
    /// not made (the gates list that under "not checked").
    pub shards_absent: bool,
}

/// Runs every weights rule over the headers of a drafter's weights, its config and, when
/// given, its target.
///
/// Index problems (a shard that is missing, a weight map that disagrees with the shards, a
/// tensor in two shards) are reported for any config; tensor names and shapes only for a
/// config of a known family (DFlash, DFlash2, EAGLE-3).
pub fn run(config: &ConfigFile, headers: &WeightsHeaders, target: Option<&TargetFacts>) -> Checked {
    run_view(&View::new(config, headers, target))
}

/// [`run`], for weights served by `engine` (the rules where engines load a checkpoint
/// differently judge that engine's release).
pub fn run_for(
    config: &ConfigFile,
    headers: &WeightsHeaders,
    target: Option<&TargetFacts>,
    engine: Option<crate::engine::EngineRelease>,
    purpose: Purpose,
) -> Checked {
    let mut view = View::new(config, headers, target);
    view.engine = engine;
    view.purpose = purpose;
    if purpose == Purpose::TargetWithoutHead {
        view.mtp = None;
    }
    run_view(&view)
}

/// Runs the weights rules over one GGUF file: `headers` is its tensor table as a shard,
/// `config` the file's own metadata (no family's config.json, so only the rules for any
/// config and the GGUF rules apply); `target`, when known, the target the file drafts for.
pub fn run_gguf(
    config: &ConfigFile,
    headers: &WeightsHeaders,
    gguf: &crate::gguf::GgufHeader,
    target: Option<&super::GgufTarget>,
) -> Checked {
    let mut view = View::new(config, headers, None);
    view.gguf = Some(gguf);
    view.gguf_target = target.cloned();
    run_view(&view)
}

fn run_view(view: &View) -> Checked {
    let mut cx = Cx {
        // Replaced by the engine before each check runs (`RuleFamily::enter`).
        rule: &files::RULES[0],
        v: view,
        found: Vec::new(),
    };
    let skipped = rule::run(all_rules(), &mut cx);
    let mut diagnostics = cx.found;
    diagnostic::sort(&mut diagnostics);
    let h = view.headers;
    Checked {
        diagnostics,
        skipped,
        shards_absent: view.purpose.is_deployment()
            && h.index.is_some()
            && h.shards.is_empty()
            && !h.missing_shards.is_empty(),
    }
}

/// [`run`]'s findings, for the commands that add them to their own (`lint`, `check`,
/// `doctor`).
pub fn check(
    config: &ConfigFile,
    headers: &WeightsHeaders,
    target: Option<&TargetFacts>,
) -> Vec<Diagnostic> {
    run(config, headers, target).diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weights::view::{canonical, layer_of};
    use crate::weights::Need;

    #[test]
    fn names_are_canonical() {
        assert_eq!(
            canonical("midlayer.mlp.up_proj.weight").0,
            "layers.0.mlp.up_proj.weight"
        );
        assert_eq!(canonical("encoder.fc.weight").0, "fc.weight");
        assert_eq!(
            canonical("encoder.output_norm_enc.weight").0,
            "hidden_norm.weight"
        );
        assert_eq!(
            canonical("model.layers.2.input_layernorm.weight"),
            ("layers.2.input_layernorm.weight".to_string(), true)
        );
        assert_eq!(
            canonical("candidate_selector.successor_codebook").0,
            "candidate_selector.successor_codebook.weight"
        );
        assert_eq!(layer_of("layers.12.mlp.x"), Some((12, "mlp.x")));
        assert_eq!(layer_of("layers.x.mlp"), None);
        assert_eq!(
            crate::weights::text::ranges(&[1, 2, 3, 5, 7, 8]),
            "1–3, 5, 7–8"
        );
    }

    const DFLASH: &str = r#"{"architectures": ["DFlashDraftModel"], "model_type": "qwen3",
        "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
        "intermediate_size": 64, "num_hidden_layers": 1, "vocab_size": 128,
        "dflash_config": {"mask_token_id": 127, "target_layer_ids": [1, 3, 5]}}"#;

    /// The tensors a 1-layer DFlash drafter of [`DFLASH`] ships (BF16), plus `extra`.
    fn headers(extra: &[(&str, &[u64])]) -> WeightsHeaders {
        let layer: &[(&str, &[u64])] = &[
            ("self_attn.q_proj.weight", &[32, 32]),
            ("self_attn.k_proj.weight", &[16, 32]),
            ("self_attn.v_proj.weight", &[16, 32]),
            ("self_attn.o_proj.weight", &[32, 32]),
            ("self_attn.q_norm.weight", &[8]),
            ("self_attn.k_norm.weight", &[8]),
            ("input_layernorm.weight", &[32]),
            ("post_attention_layernorm.weight", &[32]),
            ("mlp.gate_proj.weight", &[64, 32]),
            ("mlp.up_proj.weight", &[64, 32]),
            ("mlp.down_proj.weight", &[32, 64]),
        ];
        let top: &[(&str, &[u64])] = &[
            ("fc.weight", &[32, 96]),
            ("hidden_norm.weight", &[32]),
            ("norm.weight", &[32]),
        ];
        let named = layer.iter().map(|(n, s)| (format!("layers.0.{n}"), *s));
        let named = named.chain(top.iter().chain(extra).map(|(n, s)| (n.to_string(), *s)));
        let mut at = 0;
        let tensors = named
            .map(|(name, shape)| {
                let bytes = 2 * shape.iter().product::<u64>();
                at += bytes;
                crate::weights::Tensor {
                    name,
                    dtype: "BF16".into(),
                    shape: shape.to_vec(),
                    data_offsets: [at - bytes, at],
                    shard: "model.safetensors".into(),
                }
            })
            .collect();
        let shard = crate::weights::Shard {
            file: "model.safetensors".into(),
            display: "d/model.safetensors".into(),
            header_bytes: 0,
            file_size: 8 + at,
            metadata: Default::default(),
            tensors,
        };
        WeightsHeaders {
            source: "d".into(),
            index: None,
            shards: vec![shard],
            missing_shards: vec![],
            requests: 0,
            body_bytes: 0,
            map_data: Vec::new(),
        }
    }

    fn config(json: &str) -> ConfigFile {
        crate::config::parse(std::path::Path::new("d/config.json"), json.as_bytes()).unwrap()
    }

    fn codes(c: &Checked) -> Vec<WeightsCode> {
        c.diagnostics
            .iter()
            .map(|d| match d.code {
                crate::diagnostic::Code::Weights(w) => w,
                other => panic!("{other} is not a weights code"),
            })
            .collect()
    }

    /// The fc is compared with the config and, when the target is given, with its hidden size;
    /// the index rules of a single file are not listed as skipped.
    #[test]
    fn the_fc_is_compared_with_the_target_when_given() {
        let (cfg, h) = (config(DFLASH), headers(&[]));
        let alone = run(&cfg, &h, None);
        assert_eq!((alone.diagnostics.len(), alone.skipped.len()), (0, 0));
        let mut target = TargetFacts {
            hidden_size: Some(32),
            ..Default::default()
        };
        let fits = run(&cfg, &h, Some(&target));
        assert_eq!((fits.diagnostics.len(), fits.skipped.len()), (0, 0));
        target.hidden_size = Some(64);
        let wide = run(&cfg, &h, Some(&target));
        assert_eq!(codes(&wide), vec![WeightsCode::FcWidth]);
        assert!(wide.diagnostics[0]
            .message
            .contains("the target's hidden size is 64"));
    }

    /// A config with no vocabulary sizes: the vocabulary rules are listed with what they lack.
    #[test]
    fn vocab_rules_without_vocabulary_sizes_are_listed() {
        let cfg = config(&DFLASH.replace(r#""vocab_size": 128,"#, ""));
        let target = TargetFacts {
            hidden_size: Some(32),
            ..Default::default()
        };
        let c = run(&cfg, &headers(&[("t2d", &[128])]), Some(&target));
        let skipped: Vec<(WeightsCode, Vec<Need>)> =
            c.skipped.into_iter().map(|s| (s.code, s.needs)).collect();
        assert_eq!(
            skipped,
            vec![
                (
                    WeightsCode::D2tMissing,
                    vec![Need::DraftVocab, Need::TargetVocab]
                ),
                (WeightsCode::D2tLength, vec![Need::DraftVocab]),
                (WeightsCode::T2dLength, vec![Need::TargetVocab]),
                (
                    WeightsCode::D2tValues,
                    vec![Need::DraftVocab, Need::TargetVocab]
                ),
                (
                    WeightsCode::D2tDuplicates,
                    vec![Need::DraftVocab, Need::TargetVocab]
                ),
                (
                    WeightsCode::T2dDisagrees,
                    vec![Need::DraftVocab, Need::TargetVocab]
                ),
            ]
        );
    }

    /// A config of no known tensor layout gets the rules that apply to any config only: neither
    /// a `model.` prefix (its own model class expects it) nor an unknown tensor is reported.
    #[test]
    fn a_config_of_no_known_layout_gets_the_file_rules_only() {
        let cfg = config(r#"{"architectures": ["SomethingElse"], "hidden_size": 32}"#);
        let c = run(&cfg, &headers(&[("model.odd.weight", &[3])]), None);
        assert!(codes(&c).is_empty());
        assert!(c.skipped.is_empty());
        // The same tensors under a DFlash config: also unexpected.
        let c = run(
            &config(DFLASH),
            &headers(&[("model.odd.weight", &[3])]),
            None,
        );
        let mut got = codes(&c);
        got.sort_by_key(|c| c.as_str());
        assert_eq!(
            got,
            vec![WeightsCode::ModelPrefix, WeightsCode::UnexpectedTensor]
        );
    }

    /// Every code has exactly one rule, documented, and the registry lists each once.
    #[test]
    fn every_code_has_one_documented_rule() {
        let rules = all_rules();
        assert_eq!(rules.len(), WeightsCode::ALL.len());
        for &code in WeightsCode::ALL {
            assert_eq!(
                rules.iter().filter(|r| r.code == code).count(),
                1,
                "{code:?}"
            );
            let i = info(code);
            assert!(!i.summary.is_empty() && !i.explanation.is_empty());
        }
    }
}
