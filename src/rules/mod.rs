//! `lint`: rules that judge one drafter config on its own, against its target model's facts
//! and, when asked, against the engine launch parameters it will be served with.
//!
//! Each family of rules lives in its own module with a table of [`Rule`]s (stable kebab-case
//! code, default severity, explanation and source, for `dflash-check explain CODE`) and a
//! `check` function that emits [`Finding`]s. [`lint`] detects the drafter family, runs every
//! rule that applies, and returns a [`LintReport`]: plain data that renderers print. Rules that
//! need the target model and have no target facts are not run and are listed as skipped.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::analysis::TargetContext;
use crate::config::{ConfigFile, TargetFacts};
use crate::json::{Node, Path};
use crate::tokens::{DecodedToken, TokenClass, TokenTable};
use crate::Result;

pub mod attention;
pub mod eagle;
pub mod engine;
pub mod family;
pub mod layers;
pub mod mask;
pub mod render;
pub mod shape;
pub mod tokens;

pub use family::{Detection, Family};

crate::declare_code_names! {
    /// Every lint code. Documentation lives with each rule in the registry.
    pub enum LintCode {
        FieldType => "field-type",
        HiddenSizeMismatch => "hidden-size-mismatch",
        VocabSizeMismatch => "vocab-size-mismatch",
        BlockSizeMissing => "block-size-missing",
        MixedLayout => "mixed-layout",
        TargetLayerIdsMissing => "target-layer-ids-missing",
        TargetLayerIdsOutOfRange => "target-layer-ids-out-of-range",
        TargetLayerIdsLastLayer => "target-layer-ids-last-layer",
        TargetLayerIdsOrder => "target-layer-ids-order",
        TargetLayerIdsFormula => "target-layer-ids-formula",
        NumTargetLayersMismatch => "num-target-layers-mismatch",
        FcWidth => "fc-width",
        MaskTokenMissing => "mask-token-missing",
        MaskTokenOutOfRange => "mask-token-out-of-range",
        MaskTokenCollision => "mask-token-collision",
        MaskTokenTextToken => "mask-token-text-token",
        LayerTypesMissing => "layer-types-missing",
        LayerTypesLength => "layer-types-length",
        LayerTypesUnknown => "layer-types-unknown",
        SlidingWindowMissing => "sliding-window-missing",
        UseSlidingWindowInconsistent => "use-sliding-window-inconsistent",
        MixedAttentionVllm => "mixed-attention-vllm",
        TokenIdOutOfRange => "token-id-out-of-range",
        TokenIdNotSpecial => "token-id-not-special",
        TokenIdTargetMismatch => "token-id-target-mismatch",
        SpeculativeConfigMethod => "speculative-config-method",
        NumSpeculativeTokensMissing => "num-speculative-tokens-missing",
        NumSpeculativeTokensTooLarge => "num-speculative-tokens-too-large",
        NumDraftTokensMismatch => "num-draft-tokens-mismatch",
        EagleAuxLayerIdsMissing => "eagle-aux-layer-ids-missing",
        EagleAuxLayerIdsOutOfRange => "eagle-aux-layer-ids-out-of-range",
        DraftVocabSizeMismatch => "draft-vocab-size-mismatch",
    }
}

impl LintCode {
    /// The rule's documentation, from the registry.
    pub fn info(self) -> &'static crate::diagnostic::CodeInfo {
        static INFOS: std::sync::OnceLock<Vec<(LintCode, crate::diagnostic::CodeInfo)>> =
            std::sync::OnceLock::new();
        let infos = INFOS.get_or_init(|| {
            LintCode::ALL
                .iter()
                .map(|&c| {
                    let r = rule(c.as_str()).expect("every lint code has a rule");
                    let severity = match r.severity {
                        Severity::Error => crate::diagnostic::Severity::Error,
                        Severity::Warning => crate::diagnostic::Severity::Warning,
                        Severity::Info => crate::diagnostic::Severity::Info,
                    };
                    (
                        c,
                        crate::diagnostic::CodeInfo {
                            severity,
                            summary: r.summary,
                            explanation: r.explanation,
                            source: r.source,
                        },
                    )
                })
                .collect()
        });
        &infos
            .iter()
            .find(|(c, _)| *c == self)
            .expect("registered")
            .1
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Certainly broken for this target or engine.
    Error,
    /// Very likely wrong.
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// What a rule needs besides the drafter config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Needs {
    /// Nothing: the config alone.
    Config,
    /// The target model's facts (layer count, sizes, vocabulary).
    Target,
    /// Engine launch parameters (`--engine`, `--speculative-config`, `--num-draft-tokens`).
    Engine,
}

/// A lint rule: its stable code and its documentation.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Rule {
    /// Stable kebab-case code (`target-layer-ids-formula`).
    pub code: &'static str,
    /// The usual severity; some findings are raised or lowered by family or engine (the
    /// explanation says when).
    pub severity: Severity,
    pub needs: Needs,
    /// One line: what the rule catches.
    pub summary: &'static str,
    /// Why it matters, what engines do, how to fix it.
    pub explanation: &'static str,
    /// Where the rule comes from (repository, PR or issue).
    pub source: &'static str,
}

/// Every rule, in a stable order (module by module).
pub fn all_rules() -> Vec<&'static Rule> {
    [
        shape::RULES,
        layers::RULES,
        mask::RULES,
        attention::RULES,
        tokens::RULES,
        engine::RULES,
        eagle::RULES,
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The rule with this code.
pub fn rule(code: &str) -> Option<&'static Rule> {
    all_rules().into_iter().find(|r| r.code == code)
}

/// One problem found in a config.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub code: &'static str,
    pub severity: Severity,
    /// JSON path of the offending field (`dflash_config.target_layer_ids`).
    pub path: String,
    pub message: String,
    /// The value the field should have, when it can be computed.
    pub expected: Option<serde_json::Value>,
    /// 1-based line and column of the field's key (or its nearest existing ancestor).
    pub line: usize,
    pub column: usize,
}

/// The engine the drafter will be served with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    Vllm,
    Sglang,
}

impl Engine {
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Vllm => "vllm",
            Engine::Sglang => "sglang",
        }
    }
}

/// What to lint for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LintOptions {
    /// Use this family's rules instead of detecting the family.
    pub family: Option<Family>,
    pub engine: Option<Engine>,
    /// vLLM's `--speculative-config` JSON.
    pub speculative_config: Option<serde_json::Value>,
    /// SGLang's `--speculative-num-draft-tokens`.
    pub num_draft_tokens: Option<u64>,
}

/// Counts by severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LintSummary {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

/// Where the target facts used by the lint came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetSummary {
    /// A path, a built-in table's name, or `none`.
    pub source: String,
    pub num_hidden_layers: Option<u64>,
    pub hidden_size: Option<u64>,
    pub vocab_size: Option<u64>,
    /// Where token ids were decoded from (`none` when they were not).
    pub tokens: String,
}

/// The result of linting one config.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LintReport {
    pub path: String,
    pub family: Detection,
    pub target: TargetSummary,
    pub findings: Vec<Finding>,
    /// Codes of rules not run because no target facts were available.
    pub skipped: Vec<&'static str>,
    pub summary: LintSummary,
}

impl LintReport {
    /// Whether the report fails the gate: any error, or any warning with `deny_warnings`.
    pub fn fails(&self, deny_warnings: bool) -> bool {
        self.summary.errors > 0 || (deny_warnings && self.summary.warnings > 0)
    }
}

/// Lints `config` with the target facts and tokens of `target`.
///
/// Fails only when the family cannot be detected and `options.family` does not force one.
pub fn lint(
    config: &ConfigFile,
    options: &LintOptions,
    target: &TargetContext,
) -> Result<LintReport> {
    let detection = match options.family {
        Some(f) => Detection::forced(f, config.root()),
        None => family::detect(config.root()).ok_or_else(|| family::unknown_error(config))?,
    };
    let mut cx = Ctx {
        config,
        root: config.root(),
        detection: &detection,
        options,
        facts: target.facts.as_ref(),
        tokens: &target.tokens,
        findings: Vec::new(),
        skipped: BTreeSet::new(),
    };
    shape::check(&mut cx);
    layers::check(&mut cx);
    mask::check(&mut cx);
    attention::check(&mut cx);
    tokens::check(&mut cx);
    engine::check(&mut cx);
    eagle::check(&mut cx);

    let Ctx {
        mut findings,
        skipped,
        ..
    } = cx;
    findings.sort_by(|a, b| {
        (a.severity, a.line, a.column, a.code).cmp(&(b.severity, b.line, b.column, b.code))
    });
    findings.dedup();
    let mut summary = LintSummary::default();
    for f in &findings {
        match f.severity {
            Severity::Error => summary.errors += 1,
            Severity::Warning => summary.warnings += 1,
            Severity::Info => summary.infos += 1,
        }
    }
    let order: Vec<&'static str> = all_rules().iter().map(|r| r.code).collect();
    let mut skipped: Vec<&'static str> = skipped.into_iter().collect();
    skipped.sort_by_key(|c| order.iter().position(|o| o == c));
    Ok(LintReport {
        path: config.path.display().to_string(),
        family: detection.clone(),
        target: TargetSummary {
            source: target
                .facts
                .as_ref()
                .map_or_else(|| "none".to_string(), |f| f.source.clone()),
            num_hidden_layers: target.facts.as_ref().and_then(|f| f.num_hidden_layers),
            hidden_size: target.facts.as_ref().and_then(|f| f.hidden_size),
            vocab_size: target.facts.as_ref().and_then(|f| f.vocab_size),
            tokens: if target.tokens.can_decode() {
                target.tokens.source.clone()
            } else {
                "none".to_string()
            },
        },
        findings,
        skipped,
        summary,
    })
}

/// What every rule module sees while checking.
pub(crate) struct Ctx<'a> {
    pub config: &'a ConfigFile,
    pub root: &'a Node,
    pub detection: &'a Detection,
    pub options: &'a LintOptions,
    pub facts: Option<&'a TargetFacts>,
    pub tokens: &'a TokenTable,
    pub findings: Vec<Finding>,
    pub skipped: BTreeSet<&'static str>,
}

impl Ctx<'_> {
    /// Emits a finding with the rule's default severity.
    pub fn emit(
        &mut self,
        code: &'static str,
        path: &Path,
        message: String,
        expected: Option<serde_json::Value>,
    ) {
        let severity = rule(code).map_or(Severity::Error, |r| r.severity);
        self.emit_as(code, severity, path, message, expected);
    }

    /// Emits a finding with an explicit severity (raised or lowered by family or engine).
    pub fn emit_as(
        &mut self,
        code: &'static str,
        severity: Severity,
        path: &Path,
        message: String,
        expected: Option<serde_json::Value>,
    ) {
        debug_assert!(rule(code).is_some(), "unknown rule code {code}");
        let (line, column) = self.config.doc.position_of(path);
        self.findings.push(Finding {
            code,
            severity,
            path: path.to_string(),
            message,
            expected,
            line,
            column,
        });
    }

    /// The target's layer count, or records `codes` as skipped.
    pub fn target_layers(&mut self, codes: &[&'static str]) -> Option<u64> {
        let n = self.facts.and_then(|f| f.num_hidden_layers);
        if n.is_none() {
            self.skipped.extend(codes);
        }
        n
    }

    /// The target's vocab size (embedding rows), from the facts or the token table.
    pub fn target_vocab(&mut self, codes: &[&'static str]) -> Option<u64> {
        let v = self
            .facts
            .and_then(|f| f.vocab_size)
            .or(self.tokens.vocab_size);
        if v.is_none() {
            self.skipped.extend(codes);
        }
        v
    }

    pub fn decode(&self, id: u64) -> DecodedToken {
        self.tokens.decode(id)
    }

    pub fn engine(&self) -> Option<Engine> {
        self.options.engine
    }
}

/// The first of `paths` that exists in `root`.
pub(crate) fn find<'a>(root: &'a Node, paths: &[&[&str]]) -> Option<(Path, &'a Node)> {
    paths.iter().find_map(|keys| {
        let p = crate::config::path_of(keys);
        p.lookup(root).map(|n| (p, n))
    })
}

/// A positive integer value, or a message saying what the value is instead.
pub(crate) fn positive_int(node: &Node) -> std::result::Result<u64, String> {
    match node.as_number() {
        Some(n) if n.is_integer_literal() => match n.as_u64() {
            Some(0) => Err("0".into()),
            Some(v) => Ok(v),
            None => Err(format!("the negative number {}", n.text)),
        },
        Some(n) => Err(format!("the non-integer number {}", n.text)),
        None => Err(describe(node)),
    }
}

/// `a string "248070"`, `null`, `an array` — for messages about wrong types.
pub(crate) fn describe(node: &Node) -> String {
    match &node.value {
        crate::json::Value::Null => "null".into(),
        crate::json::Value::String(s) => format!("the string {}", crate::json::quote(s)),
        crate::json::Value::Number(n) => format!("the number {}", n.text),
        crate::json::Value::Bool(b) => format!("the boolean {b}"),
        crate::json::Value::Array(_) => "an array".into(),
        crate::json::Value::Object(_) => "an object".into(),
    }
}

/// Reads a list of non-negative integer ids; an error message says what is wrong with it.
pub(crate) fn id_list(node: &Node) -> std::result::Result<Vec<u64>, String> {
    let items = node
        .as_array()
        .ok_or_else(|| format!("{}, where a list of layer indices belongs", describe(node)))?;
    if items.is_empty() {
        return Err("an empty list".into());
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item.as_number() {
            Some(n) if n.is_integer_literal() => n
                .as_u64()
                .ok_or_else(|| format!("element [{i}] is the negative number {}", n.text)),
            Some(n) => Err(format!(
                "element [{i}] is the non-integer number {}",
                n.text
            )),
            None => Err(format!("element [{i}] is {}", describe(item))),
        })
        .collect()
}

/// Whether a decoded id is a token of the base vocabulary (not an added token), as far as
/// the table can tell.
pub(crate) fn is_base_vocab(tokens: &TokenTable, t: &DecodedToken) -> bool {
    match t.class {
        TokenClass::Regular { .. } => true,
        TokenClass::Unknown => {
            // Added tokens sit above the base vocabulary: an id below the first added one,
            // in a table that knows its added tokens, is a regular token.
            tokens
                .added
                .keys()
                .next()
                .is_some_and(|&first| t.id < first)
        }
        _ => false,
    }
}

/// Chat-control and document-boundary tokens of common tokenizers: never a mask.
pub(crate) const CONTROL_TOKENS: &[&str] = &[
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|eot_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eom_id|>",
    "<|start|>",
    "<|end|>",
    "<|message|>",
    "<|channel|>",
    "<|return|>",
    "<|call|>",
    "<s>",
    "</s>",
    "<pad>",
    "<unk>",
];

/// Added tokens that occur in ordinary text (thinking, tool calls, code completion).
pub(crate) fn is_text_marker(content: &str) -> bool {
    [
        "think",
        "tool_call",
        "tool_response",
        "fim_",
        "repo_name",
        "file_sep",
    ]
    .iter()
    .any(|m| content.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_codes_are_unique_kebab_case() {
        let rules = all_rules();
        let mut seen = BTreeSet::new();
        for r in &rules {
            assert!(seen.insert(r.code), "duplicate code {}", r.code);
            assert!(
                r.code
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                r.code
            );
            assert!(
                !r.explanation.is_empty() && !r.source.is_empty(),
                "{}",
                r.code
            );
        }
    }
}
