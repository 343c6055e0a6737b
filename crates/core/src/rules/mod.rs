//! `lint`: rules that judge one drafter config on its own, against its target model's facts
//! and, when asked, against the engine it will be served with. Pure: no I/O.
//!
//! The registry is [`all_rules`]: every rule is a [`Rule`] value declared next to its function,
//! holding its code, its documentation (severity, summary, explanation, cited source), the
//! families it applies to and the facts it needs. [`lint`] detects the drafter family, runs each
//! rule that applies, and skips (and lists) the rules whose needs are unmet — a rule never has
//! to remember to record that itself. Findings are [`Diagnostic`]s, like every other command's.
//!
//! Severity policy (docs/rules.md): **error** = the engine refuses to load, crashes, or
//! acceptance collapses, with the code path or public report cited; **warning** = a likely
//! mistake or a convention engines do not enforce; **info** = worth knowing.

use serde::Serialize;

use crate::config::{ConfigFile, TargetFacts};
use crate::diagnostic::rule::{Describe, NeedKind, RuleFamily};
use crate::diagnostic::{self, CodeInfo, Diagnostic, Severity, Summary};
use crate::json::{Node, Path};
use crate::target::TargetContext;
use crate::tokens::{DecodedToken, TokenClass, TokenTable};
use crate::Result;

pub mod attention;
pub mod deployment;
pub mod draft;
pub mod eagle;
pub mod export;
/// The family table lives in [`crate::family`]; `rules::family` and `rules::Family` stay as
/// re-exports for the rules that name them.
pub use crate::family;
pub mod layers;
pub mod mask;
pub mod mtp;
pub mod positions;
pub mod profile;
pub mod quant;
pub mod shape;
pub mod tokens;
pub mod values;
pub mod variants;

pub use crate::deployment::{Engine, EngineRelease};
pub use crate::diagnostic::codes::LintCode;
pub use crate::engine::{ByEngine, Judged, ReleaseRow};
pub use family::{Detection, Family};

/// A fact a rule cannot run without. Rules whose needs are unmet are skipped and listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// The target's decoder-layer count (`--target DIR` or a built-in known target).
    TargetLayers,
    /// The target's vocabulary size (embedding rows), from its config or its tokenizer.
    TargetVocab,
    /// The target's hidden size.
    TargetHidden,
    /// An engine (`--engine vllm|sglang`): without one the rule does not apply, and is not
    /// listed as skipped.
    Engine,
    /// A `speculation_profile.json` beside the drafter: most drafters have none, so the
    /// profile rules are not listed as skipped without one.
    Profile,
    /// A classic draft model's vocabulary compared with its target's (both tokenizer.json).
    DraftVocab,
}

impl NeedKind for Need {
    fn describe(self) -> &'static str {
        match self {
            Need::TargetLayers => "the target's layer count (--target DIR)",
            Need::TargetVocab => "the target's vocabulary size (--target DIR or --tokenizer DIR)",
            Need::TargetHidden => "the target's hidden size (--target DIR)",
            Need::Engine => "an engine (--engine vllm|sglang)",
            Need::Profile => "a speculation_profile.json beside the drafter",
            Need::DraftVocab => {
                "both tokenizers (tokenizer.json beside the draft model's and the target's config.json)"
            }
        }
    }

    /// An engine selects where engine rules apply: without one they are not listed as skipped.
    fn listed(self) -> bool {
        !matches!(self, Need::Engine | Need::Profile)
    }
}

/// Which drafter families a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// Every drafter.
    All,
    /// Drafters that read target hidden states through `target_layer_ids` and fill blocks with
    /// a mask token: DFlash, DFlash2, DSpark, Domino, and the speculators format wrapping DFlash.
    BlockDrafters,
    /// EAGLE-3 heads (and P-EAGLE, and the speculators format wrapping EAGLE-3).
    EagleHeads,
    /// Exactly these families.
    Only(&'static [Family]),
}

impl Applies {
    fn matches(self, d: &Detection) -> bool {
        match self {
            // A classic draft model is an LM of its own, not a head on the target's hidden
            // states: the drafter rules (hidden size, layer ids, ids of the target) do not
            // apply to it; `rules::draft` checks it.
            Applies::All => !d.name.is_draft_model(),
            Applies::BlockDrafters => d.block_drafter(),
            Applies::EagleHeads => d.eagle_like(),
            Applies::Only(families) => families.contains(&d.name),
        }
    }
}

impl Describe for Applies {
    fn describe(self) -> String {
        match self {
            Applies::All => "every drafter".into(),
            Applies::BlockDrafters => {
                "DFlash, DFlash2, DSpark, Domino (and speculators-format DFlash)".into()
            }
            Applies::EagleHeads => "EAGLE-3 and P-EAGLE (and speculators-format EAGLE-3)".into(),
            Applies::Only(f) => f.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(", "),
        }
    }
}

/// The lint family of rules: they judge one drafter config ([`Ctx`]).
pub struct Lint;

/// A lint rule: its code, its documentation, where it applies, what it needs, and its check.
pub type Rule = crate::diagnostic::rule::Rule<Lint>;

impl RuleFamily for Lint {
    type Cx<'a> = Ctx<'a>;
    type Code = LintCode;
    type Scope = Applies;
    type Need = Need;

    fn in_scope(cx: &Ctx<'_>, scope: Applies) -> bool {
        scope.matches(cx.detection)
    }

    fn has(cx: &Ctx<'_>, need: Need) -> bool {
        match need {
            Need::TargetLayers => cx.target_layers().is_some(),
            Need::TargetVocab => cx.target_vocab().is_some(),
            Need::TargetHidden => cx.facts.and_then(|f| f.hidden_size).is_some(),
            Need::Engine => cx.options.engine.is_some(),
            Need::Profile => cx.options.profile.is_some(),
            Need::DraftVocab => cx.vocab.is_some(),
        }
    }

    fn enter(cx: &mut Ctx<'_>, rule: &'static Rule) {
        cx.rule = rule;
    }

    fn leave(cx: &mut Ctx<'_>) -> Vec<Need> {
        if std::mem::take(&mut cx.skipped) {
            vec![Need::TargetLayers]
        } else {
            Vec::new()
        }
    }
}

/// Every rule, in a stable order (module by module): the registry.
pub fn all_rules() -> Vec<&'static Rule> {
    every_rule().collect()
}

/// [`all_rules`] without collecting them: a lint run, and every look-up of a code's rule,
/// walks the tables in place (collecting them cost a dozen allocations a drafter in `check`,
/// issue 44).
fn every_rule() -> impl Iterator<Item = &'static Rule> {
    [
        values::RULES,
        shape::RULES,
        layers::RULES,
        mask::RULES,
        attention::RULES,
        variants::RULES,
        tokens::RULES,
        draft::RULES,
        eagle::RULES,
        quant::RULES,
        export::RULES,
        profile::RULES,
        mtp::RULES,
        positions::RULES,
    ]
    .into_iter()
    .flatten()
}

/// The severities by engine of every rule that declares them (here, beside the rule list:
/// `by_engine` holds the type the rule files use, so it names none of them).
pub fn by_engine() -> impl Iterator<Item = (LintCode, &'static ByEngine)> {
    [
        mask::BY_ENGINE,
        attention::BY_ENGINE,
        variants::BY_ENGINE,
        shape::BY_ENGINE,
        eagle::BY_ENGINE,
        quant::BY_ENGINE,
        layers::BY_ENGINE,
        export::BY_ENGINE,
        positions::BY_ENGINE,
        draft::BY_ENGINE,
    ]
    .into_iter()
    .flatten()
    .copied()
}

/// The severities by engine of `code`'s rule, when it declares them: its one table (a table
/// that is not about one of the rule's cases).
pub fn by_engine_of(code: LintCode) -> Option<&'static ByEngine> {
    by_engine()
        .find(|(c, b)| *c == code && b.case.is_none())
        .map(|(_, b)| b)
}

/// Every table of `code`'s rule: its one table, then those of its cases.
pub fn tables_of(code: LintCode) -> Vec<&'static ByEngine> {
    let mut all: Vec<&'static ByEngine> = by_engine()
        .filter(|(c, _)| *c == code)
        .map(|(_, b)| b)
        .collect();
    all.sort_by_key(|b| b.case.is_some());
    all
}

/// The rule that raises `code`.
pub fn rule(code: LintCode) -> &'static Rule {
    every_rule()
        .find(|r| r.code == code)
        .expect("every lint code has a rule (tested)")
}

/// A lint code's documentation, from the registry.
pub fn info(code: LintCode) -> &'static CodeInfo {
    &rule(code).info
}

/// What to lint for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LintOptions {
    /// Use this family's rules instead of detecting the family.
    pub family: Option<Family>,
    /// The engine and, when known, its release (`--engine vllm@0.26`, the pin file, a launch
    /// line's image): the severities follow it.
    pub engine: Option<EngineRelease>,
    /// vLLM's `--speculative-config` JSON.
    pub speculative_config: Option<serde_json::Value>,
    /// SGLang's `--speculative-num-draft-tokens`.
    pub num_draft_tokens: Option<u64>,
    /// The drafter's `speculation_profile.json`, when it has one (`profile-*` rules).
    pub profile: Option<std::sync::Arc<profile::Profile>>,
    /// The drafter and the target as named (a path or a repo), for `profile-identity`.
    pub drafter_name: Option<String>,
    pub target_name: Option<String>,
    /// The length a launch line serves the target at, when it states one: the position rules
    /// compare the drafter with it rather than with the target config's length.
    pub served_length: Option<crate::engine::ServedLength>,
    /// Whether the program the launch line starts raises when the two tokenizers' own
    /// vocabulary sizes differ ([`crate::engine::EngineCode::refuses_other_vocab_size`]): the
    /// draft-model vocabulary rule then judges that difference by its own rows.
    pub refuses_other_vocab_size: bool,
    /// The family this very config was detected as by the caller (`check` detects it to tell
    /// a drafter from the other configs it finds): taken instead of detecting it again. Not
    /// read when `family` forces one.
    pub detected: Option<Detection>,
}

impl LintOptions {
    /// The engine and release the rules' severities assume: no release means the engine's
    /// default window, no engine the statement that holds for every engine.
    pub fn assumed(&self) -> Option<EngineRelease> {
        self.engine.clone()
    }

    /// The deployment these flags describe, with the target's facts: what the deployment rules
    /// ([`deployment`]) judge.
    pub fn deployment(&self, target: Option<&TargetFacts>) -> crate::deployment::Deployment {
        crate::deployment::Deployment::from_lint_flags(
            self.assumed(),
            self.speculative_config.as_ref(),
            self.num_draft_tokens,
            target,
        )
    }

    /// These options with `spec`'s engine and release.
    pub fn with_engine(&self, spec: Option<EngineRelease>) -> LintOptions {
        LintOptions {
            engine: spec,
            ..self.clone()
        }
    }
}

/// Where the target facts used by the lint came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetSummary {
    /// A path, a built-in table's name, or `none`.
    pub source: String,
    pub num_hidden_layers: Option<u64>,
    pub hidden_size: Option<u64>,
    pub vocab_size: Option<u64>,
    /// The JSON path in the target's config each of the three numbers was read from
    /// (`num_hidden_layers` → `text_config.num_hidden_layers`); empty for built-in facts.
    pub from: std::collections::BTreeMap<String, String>,
    /// Where token ids were decoded from (`none` when they were not).
    pub tokens: String,
    /// For built-in facts adopted by fingerprint: the drafter's fields that matched
    /// (`vocab_size 248320, hidden_size 5120, num_target_layers 64`), as `diff` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_by: Option<String>,
}

/// A rule that did not run, and the facts it lacked.
pub type Skipped = crate::diagnostic::rule::Skipped<LintCode, Need>;

/// The result of linting one config.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LintReport {
    pub path: String,
    pub family: Detection,
    pub target: TargetSummary,
    pub findings: Vec<Diagnostic>,
    /// Rules not run because a fact they need was not available.
    pub skipped: Vec<Skipped>,
    /// For an MTP head in a target config: the MTP rules that ran ([`mtp::ran`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mtp_rules: Vec<crate::diagnostic::Code>,
    pub summary: Summary,
    /// Published configs of the drafter's shape that the tool knows (lint has no authority:
    /// these say which `diff` would settle whether the file is one of them).
    pub published: Vec<Published>,
    /// The engine and version the severities assumed (the envelope's `assumed`).
    #[serde(skip)]
    pub assumed: Option<EngineRelease>,
}

/// A built-in snapshot of the drafter's shape, and whether the drafter equals it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Published {
    pub repo: String,
    pub target: String,
    /// Equal in every field that matters (no error-level difference).
    pub equal: bool,
    /// The command that compares the drafter with it, field by field.
    pub diff_command: String,
}

impl LintReport {
    /// Adds diagnostics found beside the config (the weights' headers), keeping the order and
    /// the counts.
    pub fn add(&mut self, more: Vec<Diagnostic>) {
        self.findings.extend(more);
        diagnostic::sort(&mut self.findings);
        self.summary = Summary::of(&self.findings);
    }

    /// Whether the report fails the gate: any error, or any warning with `deny_warnings`.
    pub fn fails(&self, deny_warnings: bool) -> bool {
        self.summary.fails(deny_warnings)
    }
}

/// Lints `config` with the target facts and tokens of `target`, and judges the deployment
/// `options` describe (`--engine`, `--speculative-config`, `--num-draft-tokens`) with the
/// deployment rules.
///
/// Fails only when the family cannot be detected and `options.family` does not force one.
pub fn lint(
    config: &ConfigFile,
    options: &LintOptions,
    target: &TargetContext,
) -> Result<LintReport> {
    lint_with(config, options, target, true)
}

/// [`lint`] without the deployment rules: for a caller that judges its own deployment (launch
/// builds it from the command line and runs [`deployment::check`] whether or not lint can run).
/// `options` give the engine and version the config rules' severities assume.
pub fn lint_config(
    config: &ConfigFile,
    options: &LintOptions,
    target: &TargetContext,
) -> Result<LintReport> {
    lint_with(config, options, target, false)
}

fn lint_with(
    config: &ConfigFile,
    options: &LintOptions,
    target: &TargetContext,
    judge_deployment: bool,
) -> Result<LintReport> {
    let detection = match (options.family, &options.detected) {
        (Some(f), _) => Detection::forced(f, config.root()),
        (None, Some(detected)) => detected.clone(),
        (None, None) => {
            family::detect(config.root()).ok_or_else(|| family::unknown_error(config))?
        }
    };
    mtp::readable(config, &detection)?;
    // An MTP head lives in its target's checkpoint: without another target, the config is it.
    let own = mtp::own_facts(config, &detection, target);
    let facts = target.facts.as_deref().or(own.as_ref());
    let mut cx = Ctx {
        // Replaced by the engine before each check runs (`RuleFamily::enter`).
        rule: rule(LintCode::FieldType),
        config,
        root: config.root(),
        detection: &detection,
        options,
        facts,
        tokens: &target.tokens,
        vocab: target.vocab.as_ref(),
        findings: Vec::new(),
        skipped: false,
        layer_ids: std::cell::OnceCell::new(),
    };
    let skipped = crate::diagnostic::rule::run(every_rule(), &mut cx);
    let mut findings = cx.findings;
    let judged_deployment = judge_deployment.then(|| options.deployment(facts));
    if let Some(d) = &judged_deployment {
        let drafter = deployment::DrafterConfig {
            config,
            detection: Some(&detection),
        };
        findings.extend(deployment::check(d, Some(drafter)).findings);
    }
    diagnostic::sort(&mut findings);
    findings.dedup();
    let summary = Summary::of(&findings);
    Ok(LintReport {
        mtp_rules: mtp::ran(&detection, &skipped, judged_deployment.as_ref()),
        published: Vec::new(),
        assumed: options.assumed(),
        path: config.path_text(),
        family: detection,
        target: TargetSummary {
            source: facts.map_or_else(|| "none".to_string(), |f| f.source.clone()),
            num_hidden_layers: facts.and_then(|f| f.num_hidden_layers),
            hidden_size: facts.and_then(|f| f.hidden_size),
            vocab_size: facts.and_then(|f| f.vocab_size),
            from: facts
                .map(|f| {
                    f.origins
                        .iter()
                        .filter(|(k, _)| {
                            ["num_hidden_layers", "hidden_size", "vocab_size"].contains(&k.as_str())
                        })
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default(),
            tokens: if target.tokens.can_decode() {
                target.tokens.source.clone()
            } else {
                "none".to_string()
            },
            matched_by: facts.and_then(|f| fingerprint_match(config.root(), f)),
        },
        findings,
        skipped,
        summary,
    })
}

/// Why built-in target facts were adopted: the drafter fields equal to the built-in target's
/// numbers (the fingerprint the resolver matches: vocab_size, hidden_size, num_target_layers).
/// `None` for facts read from a target directory (they carry the JSON path of each number).
fn fingerprint_match(root: &Node, facts: &TargetFacts) -> Option<String> {
    if !facts.origins.is_empty() || !facts.source.starts_with("built-in") {
        return None;
    }
    let pairs = [
        ("vocab_size", facts.vocab_size),
        ("hidden_size", facts.hidden_size),
        ("num_target_layers", facts.num_hidden_layers),
    ];
    let matched: Vec<String> = pairs
        .iter()
        .filter_map(|&(key, want)| {
            let v = root.get(key).and_then(Node::as_u64)?;
            (Some(v) == want).then(|| format!("{key} {v}"))
        })
        .collect();
    (!matched.is_empty()).then(|| matched.join(", "))
}

/// What a rule sees while checking, and where it reports.
pub struct Ctx<'a> {
    rule: &'static Rule,
    pub config: &'a ConfigFile,
    pub root: &'a Node,
    pub detection: &'a Detection,
    pub options: &'a LintOptions,
    pub facts: Option<&'a TargetFacts>,
    pub tokens: &'a TokenTable,
    /// A classic draft model's vocabulary against the target's, when both were read.
    pub vocab: Option<&'a crate::vocab::Comparison>,
    findings: Vec<Diagnostic>,
    /// Set by a rule whose optional fact was missing after all (see [`Ctx::skip`]).
    skipped: bool,
    /// A block drafter's target layer ids, read by the first layer rule that asks.
    layer_ids: std::cell::OnceCell<Option<std::rc::Rc<layers::LayerIds>>>,
}

impl<'a> Ctx<'a> {
    /// Reports a finding of the running rule at `path`, with the rule's default severity.
    pub fn emit(&mut self, path: &Path, message: String) -> &mut Diagnostic {
        let severity = self.rule.info.severity;
        self.emit_as(severity, path, message)
    }

    /// Reports a finding with an explicit severity (raised or lowered by family or engine, as
    /// the rule's explanation says).
    pub fn emit_as(&mut self, severity: Severity, path: &Path, message: String) -> &mut Diagnostic {
        let (line, column) = self.config.doc.position_of(path);
        let mut d = Diagnostic::new(self.rule.code, &self.rule.info, path.to_text(), message)
            .severity(severity)
            .file(self.config.path_text())
            .span(line, column);
        // At the severity the rule's rows give across an unknown release's window: the
        // releases that give it (a rule of several cases says them itself: `emit_judged`).
        if by_engine_of(self.rule.code).is_some() {
            d.releases = self
                .engine_verdict()
                .filter(|j| j.severity == severity)
                .and_then(|j| j.releases);
        }
        self.findings.push(d);
        self.findings.last_mut().expect("just pushed")
    }

    /// Reports a wrong type at `path` as `field-type` (the rule that owns every type check):
    /// rules that read a field they cannot use say so once, under one code.
    pub fn emit_type(&mut self, path: &Path, message: String) {
        let r = rule(LintCode::FieldType);
        let (line, column) = self.config.doc.position_of(path);
        self.findings.push(
            Diagnostic::new(r.code, &r.info, path.to_text(), message)
                .file(self.config.path_text())
                .span(line, column),
        );
    }

    /// Records that the rule could not run for want of a fact it treats as optional.
    pub fn skip(&mut self) {
        self.skipped = true;
    }

    pub fn target_layers(&self) -> Option<u64> {
        self.facts.and_then(|f| f.num_hidden_layers)
    }

    /// The target's vocab size (embedding rows), from the facts or the token table.
    pub fn target_vocab(&self) -> Option<u64> {
        self.facts
            .and_then(|f| f.vocab_size)
            .or(self.tokens.vocab_size)
    }

    pub fn decode(&self, id: u64) -> DecodedToken {
        self.tokens.decode(id)
    }

    pub fn engine(&self) -> Option<Engine> {
        self.options.engine.as_ref().map(|e| e.engine)
    }

    /// The engine and release the lint runs under.
    pub fn release(&self) -> Option<&EngineRelease> {
        self.options.engine.as_ref()
    }

    /// The running rule's verdict for the engine and release it runs under, from the rule's
    /// [`ByEngine`] rows (`None`: not a finding there); a rule without rows has its own
    /// severity.
    pub fn engine_verdict(&self) -> Option<Judged> {
        match by_engine_of(self.rule.code) {
            Some(by) => by.judge(self.release()),
            None => Some(Judged {
                severity: self.rule.info.severity,
                releases: None,
            }),
        }
    }

    /// The running rule's severity for the engine and release it runs under.
    pub fn engine_severity(&self) -> Option<Severity> {
        self.engine_verdict().map(|j| j.severity)
    }

    /// What `case`'s rows (a table of the running rule's) give for the engine and release the
    /// lint runs under.
    pub fn judge(&self, case: &ByEngine) -> Option<Judged> {
        case.judge(self.release())
    }

    /// Of several cases that apply, the one whose rows give the worst verdict for the engine and
    /// release the lint runs under, with that verdict; `None` when none is a finding there.
    pub fn worst<'c>(&self, cases: &[&'c ByEngine]) -> Option<(&'c ByEngine, Judged)> {
        cases
            .iter()
            .filter_map(|c| self.judge(c).map(|j| (*c, j)))
            .min_by_key(|(_, j)| j.severity)
    }

    /// Reports a finding at the verdict `case`'s rows give, naming the releases when the
    /// release is not known and they disagree; nothing when they say it is no finding there.
    pub fn emit_judged(
        &mut self,
        case: &ByEngine,
        path: &Path,
        message: String,
    ) -> Option<&mut Diagnostic> {
        let judged = self.judge(case)?;
        let d = self.emit_as(judged.severity, path, message);
        d.releases = judged.releases;
        Some(d)
    }

    /// Reports a finding at the severity [`Ctx::engine_verdict`] gives, naming the releases
    /// when the release is not known and they disagree; nothing when the rows say the engine
    /// does not read what the rule checks.
    pub fn emit_by_engine(&mut self, path: &Path, message: String) -> Option<&mut Diagnostic> {
        let judged = self.engine_verdict()?;
        Some(self.emit_as(judged.severity, path, message))
    }

    /// The drafter's block size, when it is a positive whole number: `block_size` in either
    /// layout, or DeepSeek-V4's `dspark_block_size`. `16.0` counts as 16: SGLang and z-lab's newer
    /// reference read it with `int()` (field-type says it is a float).
    pub fn block_size(&self) -> Option<(Path, u64)> {
        block_size_field(self.root).and_then(|(p, n)| whole_positive(n).map(|b| (p, b)))
    }

    /// Whether the config is a target's with a DSpark head embedded in it (DeepSeek-V4 style:
    /// `dspark_block_size` at the top level), rather than a standalone drafter's.
    pub fn embedded_dspark(&self) -> bool {
        self.root.get("dspark_block_size").is_some()
    }

    /// The `dflash_config` object, when present.
    pub fn dflash_config(&self) -> Option<&'a Node> {
        self.root
            .get("dflash_config")
            .filter(|n| n.as_object().is_some())
    }
}

/// Where the block size is written: `block_size` (flat), `dflash_config.block_size` (nested), or
/// `dspark_block_size` (a DSpark head inside a DeepSeek-V4 target's config).
pub(crate) fn block_size_field(root: &Node) -> Option<(Path, &Node)> {
    crate::config::layout_field("block_size")
        .and_then(|f| f.find(root))
        .or_else(|| find(root, &[&["dspark_block_size"]]))
}

/// A positive whole number as Python's `int()` reads it: `16` or `16.0`, not `16.5`, `0` or a
/// string.
pub(crate) fn whole_positive(node: &Node) -> Option<u64> {
    let n = node.as_number()?;
    if n.is_integer_literal() {
        return n.as_u64().filter(|&v| v > 0);
    }
    // Below 2^53 every whole f64 is exact.
    (n.value.is_finite() && n.value.fract() == 0.0 && n.value >= 1.0 && n.value < 9.0e15)
        .then_some(n.value as u64)
}

/// The first of `paths` that exists in `root`.
pub(crate) fn find<'a>(root: &'a Node, paths: &[&[&str]]) -> Option<(Path, &'a Node)> {
    paths.iter().find_map(|keys| {
        crate::config::get_in(root, keys).map(|n| (crate::config::path_of(keys), n))
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

/// `[1, 16, 31]`.
pub(crate) fn list_text(ids: &[u64]) -> String {
    // Written into one string (a string per id, then a join and a format, was 2,000
    // instructions a list).
    use std::fmt::Write;
    let mut text = String::with_capacity(2 + ids.len() * 8);
    text.push('[');
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        let _ = write!(text, "{id}");
    }
    text.push(']');
    text
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
    fn list_text_is_the_python_list() {
        assert_eq!(list_text(&[]), "[]");
        assert_eq!(list_text(&[5]), "[5]");
        assert_eq!(
            list_text(&[1, 16, 31, u64::MAX]),
            "[1, 16, 31, 18446744073709551615]"
        );
    }

    /// The registry and the code names agree: one rule per lint code, no rule without a code.
    #[test]
    fn every_lint_code_has_exactly_one_rule() {
        let rules = all_rules();
        for code in LintCode::ALL {
            let n = rules.iter().filter(|r| r.code == *code).count();
            assert_eq!(n, 1, "{} has {n} rules", code.as_str());
        }
        assert_eq!(rules.len(), LintCode::ALL.len());
    }

    /// Every rule cites a source and explains itself.
    #[test]
    fn every_rule_is_documented() {
        for r in all_rules() {
            assert!(!r.info.summary.is_empty(), "{:?}", r.code);
            assert!(!r.info.explanation.is_empty(), "{:?}", r.code);
        }
    }

    /// Every declared table belongs to a rule, once, and every row of an engine says something.
    #[test]
    fn every_table_belongs_to_one_rule() {
        let mut seen = std::collections::BTreeSet::new();
        for (code, by) in by_engine() {
            assert!(
                seen.insert((code.as_str(), by.case)),
                "{code:?} {:?} declared twice",
                by.case
            );
            assert!(!by.rows.is_empty(), "{code:?}: no rows");
            for r in by.rows {
                assert!(!r.does.is_empty(), "{code:?}: say what {:?} does", r.engine);
                if let (Some(s), Some(u)) = (r.since, r.until) {
                    assert!(s <= u, "{code:?}: {s:?} after {u:?}");
                }
            }
            // The code has a rule (lookup panics otherwise).
            let _ = rule(code);
        }
    }
}
