//! The engine claims about one deployment: the speculative method against the drafter's family,
//! vLLM's K (missing, or past the drafter's block), SGLang's draft tokens against the block,
//! mixed attention under vLLM's V1 runner, and a quantization SGLang hands an unquantized draft.
//!
//! Each claim is one rule with one code, reading only a [`Deployment`] (built from `lint`'s
//! flags, from an engine command line, or from what a server says) and, when the rule needs
//! it, the drafter's config. `lint --engine` runs them on the config it lints; `launch` runs them
//! on the command whether or not lint can run, and the rules that need the drafter's config are
//! listed as skipped when it could not be read ([`Need::DrafterConfig`]). The same deployment
//! gives the same findings whatever it was built from (tests/deployment.rs); where the input
//! states less (lint's flags know neither the environment nor `--quantization`), the rule says
//! what it cannot know instead of guessing. Where a finding points follows the input: the flag
//! in the command's file, or the field of the drafter's config. The method and K rules are here;
//! how the engine loads the drafter (attention layers, quantization) is in [`loading`]; options
//! of the speculative config a release judges on their own are in [`options`].

use serde::Serialize;
use serde_json::{json, Value};

pub mod attention;
mod loading;
pub mod mtp;
mod omlx;
mod options;
mod support;
mod trtllm;

use super::{block_size_field, whole_positive, ByEngine, Detection, Family, Judged, ReleaseRow};
use crate::config::ConfigFile;
use crate::deployment::{Deployment, Engine, MethodFrom};
use crate::diagnostic::codes::DeploymentCode;
use crate::diagnostic::rule::{Describe, NeedKind, RuleFamily};
use crate::diagnostic::{CodeInfo, Diagnostic, Severity};
use crate::json::{Node, Path};
use loading::{
    DFLASH2_V1_RUNNER, DFLASH2_V1_RUNNER_BY_ENGINE, DRAFT_QUANT_INHERITED,
    DRAFT_QUANT_INHERITED_BY_ENGINE, MIXED_ATTENTION_VLLM, MIXED_ATTENTION_VLLM_BY_ENGINE,
    VLLM_RUNNER_ENV_INVALID,
};
use mtp::{
    METHOD_OVERRIDDEN_BY_NAME, METHOD_OVERRIDDEN_BY_NAME_BY_ENGINE, MTP_DSPARK_STAGES,
    MTP_HEAD_MISSING, MTP_K_DEPTH, MTP_NEXTN_LAYERS_SGLANG,
};
use options::{
    DRAFT_SAMPLE_PROBABILISTIC, DRAFT_SAMPLE_PROBABILISTIC_BY_ENGINE, DSPARK_DRAFT_TOPK,
    DSPARK_DRAFT_TOPK_BY_ENGINE,
};

/// The deployment family of rules: they judge one [`Deployment`] ([`Cx`]).
pub struct DeploymentRules;

/// A deployment rule: its code, its documentation, its engines, its needs, and its check.
pub type Rule = crate::diagnostic::rule::Rule<DeploymentRules>;

/// A rule that did not run, and the inputs it lacked.
pub type Skipped = crate::diagnostic::rule::Skipped<DeploymentCode, Need>;

/// The deployments a rule applies to: a list of engines (and, where the claim holds for every
/// engine that reads the field, a deployment without one: lint with no `--engine`), narrowed
/// by what the deployment serves ([`When`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Engines {
    pub on: &'static [Engine],
    pub without_engine: bool,
    pub when: When,
}

/// What a deployment must serve for a rule to apply, beyond its engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Always,
    /// The target's own MTP head, as the engine reads its method
    /// (`EngineCode::serves_mtp_head`: vLLM's `mtp`, SGLang's EAGLE with no draft model).
    MtpHead,
    /// An MLA `--attention-backend` (a kernel whose name says `mla`).
    MlaBackend,
    /// An engine that names the method of each drafter family it serves (the family table's
    /// names, read by its code: `EngineCode::expected_method`), so a line's method can be held
    /// against the drafter's family.
    NamesFamilyMethods,
}

impl Engines {
    /// The deployments of these engines.
    pub const fn on(on: &'static [Engine]) -> Engines {
        Engines {
            on,
            without_engine: false,
            when: When::Always,
        }
    }

    /// Every engine's deployments (a rule that reads the engine table's rows for each).
    pub const fn every() -> Engines {
        Engines::on(&[])
    }

    /// The same engines, when the deployment serves what `when` says.
    pub const fn when(self, when: When) -> Engines {
        Engines { when, ..self }
    }

    /// The same engines, and a deployment without an engine.
    pub const fn or_no_engine(self) -> Engines {
        Engines {
            without_engine: true,
            ..self
        }
    }

    /// Whether `d` is one of these deployments.
    pub(super) fn holds(self, d: &Deployment) -> bool {
        let engine_ok = match d.engine() {
            // An empty list is every engine (`Engines::every`); a platform built on a listed
            // engine is its deployments too (its rows, or the engine's, judge it).
            Some(e) => self.on.is_empty() || self.on.iter().any(|o| e.serves_as(*o)),
            None => self.without_engine,
        };
        engine_ok
            && match self.when {
                When::Always => true,
                When::MtpHead => d.serves_mtp_head(),
                When::MlaBackend => attention::mla_backend(d).is_some(),
                When::NamesFamilyMethods => d.engine().is_some_and(names_family_methods),
            }
    }
}

impl Describe for Engines {
    fn describe(self) -> String {
        let names: Vec<&str> = self.on.iter().map(|e| e.display()).collect();
        let mut text = if names.is_empty() {
            "every engine's deployments".to_string()
        } else {
            format!("{} deployments", names.join(" and "))
        };
        text.push_str(match self.when {
            When::Always => "",
            When::MtpHead => " serving the target's own MTP head",
            When::MlaBackend => " with an MLA --attention-backend",
            When::NamesFamilyMethods => "",
        });
        if self.when == When::NamesFamilyMethods {
            let names: Vec<&str> = Engine::all()
                .filter(|e| names_family_methods(*e))
                .map(Engine::display)
                .collect();
            text = format!(
                "the deployments of the engines that name a method per drafter family ({})",
                names.join(", ")
            );
        }
        if self.without_engine {
            text.push_str(", and lint without an engine");
        }
        text
    }
}

/// vLLM's deployments.
pub(super) const VLLM: Engines = Engines::on(&[Engine::Vllm]);
/// SGLang's deployments.
pub(super) const SGLANG: Engines = Engines::on(&[Engine::Sglang]);
/// The engines whose line names a method the family table names (the method rule), read from
/// the engines' code, so a new engine joins by naming its methods.
const NAMING_METHODS: Engines = Engines::every().when(When::NamesFamilyMethods);

/// Whether `engine` names the method of some drafter family (its code reads the family table).
fn names_family_methods(engine: Engine) -> bool {
    crate::family::Family::ALL
        .iter()
        .any(|f| engine.code().expected_method(f.spec()).is_some())
}

/// An input a deployment rule cannot run without.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// The drafter's `config.json`: lint's input; for launch, the path or Hub repo the command
    /// names, or `--drafter DIR`.
    DrafterConfig,
}

impl NeedKind for Need {
    fn describe(self) -> &'static str {
        "the drafter's config.json (lint's input; launch: the path or Hub repo the command names, or --drafter DIR)"
    }
}

/// The drafter's config as the rules read it, and its family when it is one lint knows.
#[derive(Debug, Clone, Copy)]
pub struct DrafterConfig<'a> {
    pub config: &'a ConfigFile,
    pub detection: Option<&'a Detection>,
}

impl<'a> DrafterConfig<'a> {
    fn root(&self) -> &'a Node {
        self.config.root()
    }

    fn family(&self) -> Option<Family> {
        self.detection.map(|d| d.name)
    }

    fn block_drafter(&self) -> bool {
        self.detection.is_some_and(Detection::block_drafter)
    }

    fn dspark(&self) -> bool {
        self.detection
            .is_some_and(|d| d.effective().family == Family::Dspark)
    }

    /// The block size (`block_size` in either layout, or `dspark_block_size`) and where it is.
    fn block_size(&self) -> Option<(Path, u64)> {
        block_size_field(self.root()).and_then(|(p, n)| whole_positive(n).map(|b| (p, b)))
    }

    /// `sample_from_anchor` in `dflash_config` or at the top level.
    fn sample_from_anchor(&self) -> Option<bool> {
        let root = self.root();
        root.get("dflash_config")
            .and_then(|d| d.get("sample_from_anchor"))
            .or_else(|| root.get("sample_from_anchor"))
            .and_then(Node::as_bool)
    }

    /// K by the family's convention, with the block: DSpark drafts a whole block, the other
    /// block drafters block_size - 1.
    fn conventional_k(&self) -> Option<(u64, u64)> {
        let (_, b) = self.block_size()?;
        if self.dspark() {
            Some((b, b))
        } else if self.block_drafter() {
            Some((b - 1, b))
        } else {
            None
        }
    }
}

impl RuleFamily for DeploymentRules {
    type Cx<'a> = Cx<'a>;
    type Code = DeploymentCode;
    type Scope = Engines;
    type Need = Need;

    fn in_scope(cx: &Cx<'_>, scope: Engines) -> bool {
        scope.holds(cx.deployment)
    }

    fn has(cx: &Cx<'_>, need: Need) -> bool {
        match need {
            Need::DrafterConfig => cx.drafter.is_some(),
        }
    }

    fn enter(cx: &mut Cx<'_>, rule: &'static Rule) {
        cx.rule = rule;
    }
}

/// Every deployment rule, in the order they run.
pub const RULES: &[Rule] = &[
    SPECULATIVE_CONFIG_METHOD,
    NUM_SPECULATIVE_TOKENS_MISSING,
    NUM_SPECULATIVE_TOKENS_TOO_LARGE,
    NUM_SPECULATIVE_TOKENS_TOO_SMALL,
    NUM_DRAFT_TOKENS_MISMATCH,
    MIXED_ATTENTION_VLLM,
    DFLASH2_V1_RUNNER,
    VLLM_RUNNER_ENV_INVALID,
    DRAFT_QUANT_INHERITED,
    support::ENGINE_UNSUPPORTED,
    trtllm::TRTLLM_EAGLE_ALIAS,
    trtllm::TRTLLM_MTP_DRAFT_LEN,
    trtllm::TRTLLM_FOREIGN_KEY,
    trtllm::TRTLLM_REQUIRED_KEY,
    DRAFT_SAMPLE_PROBABILISTIC,
    DSPARK_DRAFT_TOPK,
    MTP_HEAD_MISSING,
    MTP_K_DEPTH,
    MTP_DSPARK_STAGES,
    MTP_NEXTN_LAYERS_SGLANG,
    METHOD_OVERRIDDEN_BY_NAME,
    attention::DRAFT_ATTENTION_BACKEND_INHERITED,
    omlx::OMLX_DRAFT_FALLBACK,
];

/// The rule that raises `code`.
pub fn rule(code: DeploymentCode) -> &'static Rule {
    crate::diagnostic::rule::find(RULES, code).expect("every deployment code has a rule (tested)")
}

/// A deployment code's documentation.
pub fn info(code: DeploymentCode) -> &'static CodeInfo {
    &rule(code).info
}

/// The severities by engine and version of `code`'s rule, when it declares them.
pub fn by_engine(code: DeploymentCode) -> Option<&'static ByEngine> {
    match code {
        DeploymentCode::MixedAttentionVllm => Some(&MIXED_ATTENTION_VLLM_BY_ENGINE),
        DeploymentCode::Dflash2V1Runner => Some(&DFLASH2_V1_RUNNER_BY_ENGINE),
        DeploymentCode::DraftSampleProbabilistic => Some(&DRAFT_SAMPLE_PROBABILISTIC_BY_ENGINE),
        DeploymentCode::DsparkDraftTopk => Some(&DSPARK_DRAFT_TOPK_BY_ENGINE),
        DeploymentCode::DraftQuantInherited => Some(&DRAFT_QUANT_INHERITED_BY_ENGINE),
        DeploymentCode::NumSpeculativeTokensTooSmall => {
            Some(&NUM_SPECULATIVE_TOKENS_TOO_SMALL_BY_ENGINE)
        }
        DeploymentCode::MethodOverriddenByName => Some(&METHOD_OVERRIDDEN_BY_NAME_BY_ENGINE),
        DeploymentCode::SpeculativeConfigMethod => Some(&SPECULATIVE_CONFIG_METHOD_BY_ENGINE),
        c => trtllm::BY_ENGINE
            .iter()
            .find(|(code, _)| *code == c)
            .map(|(_, t)| *t),
    }
}

/// Every table of `code`'s rule: its one table, then the tables of its cases (`explain` and
/// docs/rules.md print them all).
pub fn tables(code: DeploymentCode) -> Vec<&'static ByEngine> {
    by_engine(code)
        .into_iter()
        .chain(
            CASES
                .iter()
                .flat_map(|c| c.iter())
                .filter(|(c, _)| *c == code)
                .map(|(_, t)| *t),
        )
        .collect()
}

/// The tables of the deployment rules' cases (a rule whose verdict differs by case as well as
/// by engine picks the case's table itself).
const CASES: &[&[(DeploymentCode, &ByEngine)]] = &[trtllm::CASES, loading::CASES, omlx::CASES];

/// What the deployment rules found, and those skipped for want of the drafter's config.
#[derive(Debug, Default)]
pub struct Outcome {
    pub findings: Vec<Diagnostic>,
    pub skipped: Vec<Skipped>,
}

/// Runs the deployment rules of the deployment's engine.
pub fn check(deployment: &Deployment, drafter: Option<DrafterConfig<'_>>) -> Outcome {
    let mut cx = Cx {
        deployment,
        drafter,
        // Replaced by the engine before each check runs (`RuleFamily::enter`).
        rule: &RULES[0],
        findings: Vec::new(),
    };
    let skipped = crate::diagnostic::rule::run(RULES, &mut cx);
    Outcome {
        findings: cx.findings,
        skipped,
    }
}

/// What a deployment rule sees while it checks, and where it reports.
pub struct Cx<'a> {
    pub deployment: &'a Deployment,
    pub drafter: Option<DrafterConfig<'a>>,
    rule: &'static Rule,
    findings: Vec<Diagnostic>,
}

/// Where a finding points: the flag in the command it was read from (located in the command's
/// file at `anchor.1`, after `anchor.0` when given), or the field of the drafter's config when
/// the deployment has no command (lint's flags).
struct At<'p> {
    flag: &'p str,
    anchor: (Option<&'p str>, &'p str),
    field: Option<Path>,
}

impl Cx<'_> {
    fn emit(
        &mut self,
        severity: Severity,
        at: At,
        message: String,
        expected: Option<Value>,
    ) -> &mut Diagnostic {
        let (code, info) = (self.rule.code, &self.rule.info);
        // A finding with no flag (`At.flag` empty) is about the drafter's config even when the
        // deployment has a command line.
        let command = self
            .deployment
            .command
            .as_ref()
            .filter(|_| !at.flag.is_empty());
        let mut d = match (command, self.drafter) {
            (Some(cmd), _) => {
                let mut d = Diagnostic::new(code, info, at.flag, message);
                if let Some(file) = &cmd.file {
                    d = d.file(file.clone());
                    let (after, needle) = at.anchor;
                    if let Some((line, column)) =
                        cmd.find(after, needle).or_else(|| cmd.find(None, needle))
                    {
                        d = d.span(line, column);
                    }
                }
                d
            }
            (None, Some(dr)) => {
                let path = at.field.unwrap_or_else(Path::root);
                let (line, column) = dr.config.doc.position_of(&path);
                Diagnostic::new(code, info, path.to_string(), message)
                    .file(dr.config.path.display().to_string())
                    .span(line, column)
            }
            (None, None) => Diagnostic::new(code, info, at.flag, message),
        };
        d = d.severity(severity);
        if let Some(e) = expected {
            d = d.expected(e);
        }
        // A finding at the severity the rows give across an unknown release's window names
        // the releases that give it.
        d.releases = self
            .engine_verdict()
            .filter(|j| j.severity == severity)
            .and_then(|j| j.releases);
        self.findings.push(d);
        self.findings.last_mut().expect("just pushed")
    }

    /// The running rule's verdict for the deployment's engine and release, from its
    /// [`ByEngine`] rows; its own severity when it declares none.
    fn engine_verdict(&self) -> Option<Judged> {
        match by_engine(self.rule.code) {
            Some(by) => by.judge(self.deployment.engine.as_ref()),
            None => Some(Judged {
                severity: self.rule.info.severity,
                releases: None,
            }),
        }
    }

    /// The running rule's severity for the deployment's engine and release.
    fn engine_severity(&self) -> Option<Severity> {
        self.engine_verdict().map(|j| j.severity)
    }
}

const SPECULATIVE_CONFIG_METHOD: Rule = Rule {
    code: DeploymentCode::SpeculativeConfigMethod,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the vLLM speculative-config method or SGLang --speculative-algorithm does not match the drafter's family",
        explanation: "vLLM picks the proposer from `method` (`dflash` for DFlash and DFlash2, `dspark` for DSpark, \
`eagle3` for EAGLE-3 heads; `eagle` is accepted for EAGLE-3; the names come from the family table; Domino has no vLLM method and is not judged there, SGLang serves it with DFLASH) and, when it is absent, infers it from \"dflash\" or \
\"eagle3\" in the drafter's name; SGLang picks the worker from --speculative-algorithm (DFLASH, DSPARK, EAGLE3). \
Another method loads the drafter with the wrong proposer (vLLM's DFlash proposer asserts method == \"dflash\"): a \
warning. A drafter with `sample_from_anchor: true` (DSpark) served as `dflash` is refused by vLLM's V2 DFlash \
speculator: an error. Under SGLang, EAGLE (or its alias NEXTN) on an EAGLE-3 head that reads aux hidden states is \
an error too: SGLang 0.5.23 uses the aux concatenation only under EAGLE3, so the head gets one hidden state, skips \
its fc and drafts garbage (accept length exactly 1.0, no error or warning: sglang PR 21272). An MTP head inside its \
target is served by SGLang with EAGLE (NEXTN); under vLLM it is not judged here (vLLM normalises several MTP method \
names; the MTP deployment rules judge it). Formerly also `launch-method-family` (an alias until the next release).",
    },
    applies: NAMING_METHODS,
    needs: &[Need::DrafterConfig],
    check: speculative_config_method,
};

/// Where each engine's severity for a method that does not match the drafter's family is
/// more than the default warning: a method the engine's proposer refuses for this drafter, or
/// one that makes every draft fail silently.
const SPECULATIVE_CONFIG_METHOD_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Error),
            "its V2 DFlash speculator refuses a drafter with sample_from_anchor: true served as dflash",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            Some(Severity::Error),
            "EAGLE (NEXTN) on an EAGLE-3 head that reads aux hidden states feeds it one hidden state: \
every draft is rejected, accept length 1.0 (sglang#21272; eagle_utils.py, llama_eagle3.py at 0.5.23)",
        ),
    ],
};

/// A method that does not match the drafter's family, and why it is worse than a mismatch.
enum Mismatch {
    /// The engine picks another proposer: a warning.
    Plain,
    /// `dflash` for a drafter that samples from its anchor (DSpark): vLLM's DFlash speculator
    /// refuses it.
    SampledAnchor,
    /// EAGLE for an EAGLE-3 head that reads aux hidden states: SGLang feeds it one hidden state.
    OneHiddenState,
}

impl Mismatch {
    fn why(&self, engine: Engine) -> String {
        match self {
            Mismatch::Plain => String::new(),
            Mismatch::SampledAnchor => format!(
                "; {}'s DFlash speculator refuses sample_from_anchor: true",
                engine.display()
            ),
            Mismatch::OneHiddenState => {
                ": under EAGLE the head gets one hidden state instead of its aux \
concatenation, skips its fc and every draft is rejected (accept length exactly 1.0, sglang#21272)"
                    .to_string()
            }
        }
    }
}

/// The method against the drafter's family, as the engine names it (its code reads the family
/// table: vLLM's `method`, SGLang's algorithm; a family with no name on the engine, or a head
/// the engine names by the target's model type, is not judged).
fn speculative_config_method(cx: &mut Cx) {
    let (Some(engine), Some(det)) = (cx.deployment.engine(), cx.drafter.and_then(|d| d.detection))
    else {
        return;
    };
    let code = engine.code();
    let Some(want) = code.expected_method(det.effective()) else {
        return;
    };
    let d = cx.deployment;
    let family = det.name.as_str();
    let evidence = det.evidence.join(", ");
    let (flag, anchor_after, anchor) = code.method_location();
    let at = At {
        flag,
        anchor: (anchor_after, anchor),
        field: None,
    };
    let Some(method) = d.method.clone() else {
        // No method and a drafter name the engine cannot read one from (a deployment that names
        // no drafter, like lint's flags without `model`, leaves it nothing to infer from).
        if d.spec("model").is_some() {
            let message = format!(
                "no method, and the drafter's name does not say \"{want}\": {} infers the method from the \
                 name, so a {family} drafter ({evidence}) needs {}",
                engine.display(),
                code.method_written(want)
            );
            cx.emit(Severity::Warning, at, message, Some(json!(want)));
        }
        return;
    };
    let m = method.name.as_str();
    if code.family_accepts(det.effective(), m) {
        return;
    }
    let mismatch = if m == "dflash" && cx.drafter.and_then(|d| d.sample_from_anchor()) == Some(true)
    {
        Mismatch::SampledAnchor
    } else if want == "EAGLE3" && m == "EAGLE" && uses_aux(cx) {
        Mismatch::OneHiddenState
    } else {
        Mismatch::Plain
    };
    let severity = match mismatch {
        Mismatch::Plain => Severity::Warning,
        _ => cx.engine_severity().unwrap_or(Severity::Warning),
    };
    let how = match method.from {
        MethodFrom::DrafterName => format!(
            "no method, so {} infers {m:?} from the drafter's name",
            engine.display()
        ),
        MethodFrom::SpeculativeConfig => format!("method {m:?}"),
        MethodFrom::Flag => format!("{flag} {m}"),
    };
    let message = format!(
        "{how}, but the drafter is a {family} drafter ({evidence}): {} expects {want:?}{}",
        engine.display(),
        mismatch.why(engine)
    );
    cx.emit(severity, at, message, Some(json!(want)));
}

/// Whether an EAGLE-3 head reads aux hidden states (`eagle_config.use_aux_hidden_state` is not
/// false).
fn uses_aux(cx: &Cx) -> bool {
    cx.drafter.is_some_and(|dr| {
        dr.root()
            .get("eagle_config")
            .and_then(|e| e.get("use_aux_hidden_state"))
            .and_then(Node::as_bool)
            != Some(false)
    })
}

const NUM_SPECULATIVE_TOKENS_MISSING: Rule = Rule {
    code: DeploymentCode::NumSpeculativeTokensMissing,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "vLLM --speculative-config without a positive num_speculative_tokens",
        explanation: "vLLM refuses to start: \"num_speculative_tokens must be provided with speculative model unless \
the draft model config contains an n_predict parameter\", and the field must be > 0. Drafters whose config carries \
`n_predict` (MTP heads: num_nextn_predict_layers) and the speculators format (`speculative_tokens`) are exempt when \
their config is read. The DFlash convention is block_size - 1 (15 for -b16 drafters); DSpark drafters use \
block_size. Needs no drafter config: launch reports it even when the drafter cannot be read. Formerly also \
`launch-num-speculative-tokens-missing` (an alias until the next release).",
    },
    applies: VLLM,
    needs: &[],
    check: num_speculative_tokens_missing,
};

/// vLLM requires a positive `num_speculative_tokens` (unless the drafter has `n_predict`).
fn num_speculative_tokens_missing(cx: &mut Cx) {
    let d = cx.deployment;
    if d.speculative_config.is_none() {
        return;
    }
    if let Some(dr) = cx.drafter {
        let root = dr.root();
        // An MTP head's depth becomes vLLM's n_predict, whichever spelling declares it (Qwen3.5:
        // `text_config.mtp_num_hidden_layers`).
        if dr.family() == Some(Family::Speculators)
            || root.get("n_predict").is_some()
            || root.get("num_nextn_predict_layers").is_some()
            || matches!(crate::family::embedded::declared(root), Ok(Some(_)))
        {
            return;
        }
    }
    let suggest = cx.drafter.and_then(|dr| dr.conventional_k());
    let hint = suggest.map_or(String::new(), |(k, b)| {
        format!(" (block_size {b}: use {k})")
    });
    let expected = suggest.map(|(k, _)| json!(k));
    let field = cx.drafter.and_then(|dr| dr.block_size()).map(|(p, _)| p);
    let (anchor, message) = match d.spec("num_speculative_tokens") {
        None | Some(Value::Null) => (
            (None, crate::engine::vllm::SPECULATIVE_CONFIG),
            format!(
                "--speculative-config has no num_speculative_tokens: vLLM refuses to start without it{hint}"
            ),
        ),
        Some(v) if d.k().is_none() => (
            (Some(crate::engine::vllm::SPECULATIVE_CONFIG), "num_speculative_tokens"),
            format!("num_speculative_tokens is {v}: vLLM requires a positive integer{hint}"),
        ),
        Some(_) => return,
    };
    let at = At {
        flag: "--speculative-config.num_speculative_tokens",
        anchor,
        field,
    };
    cx.emit(Severity::Error, at, message, expected);
}

const NUM_SPECULATIVE_TOKENS_TOO_LARGE: Rule = Rule {
    code: DeploymentCode::NumSpeculativeTokensTooLarge,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "num_speculative_tokens exceeds what the drafter's block drafts (DFlash: block_size - 1; DSpark: block_size)",
        explanation: "A DFlash block of block_size positions holds the last verified token and block_size - 1 \
drafted ones, so K = block_size - 1 is the convention (z-lab's README uses 15 for -b16 drafters; the speculators \
converter writes it; vllm-project/recipes#837). No engine enforces it: the `block_size` in vLLM's DFlash code is the \
KV-cache page size (vllm#50012, v0.26.0), not the drafter's, so a larger K drafts positions the drafter was not \
trained for: a warning. DSpark drafts K = block_size legally when its anchor is sampled (`sample_from_anchor`, \
default true), and vLLM refuses a Qwen3-Omni DSpark drafter unless K equals block_size (an error there). A DSpark \
head embedded in a DeepSeek-V4 checkpoint (`dspark_block_size`) is an error too when K exceeds its block: a public \
report measured acceptance collapsing at every position, not only past the block (vLLM PR 41834: K 7 on \
dspark_block_size 5 gave 4.4 % against 34.7 % at K 5); K below it is num-speculative-tokens-too-small's (refused by \
vLLM 0.26 and 0.27), so there K must equal dspark_block_size. Formerly also `launch-k-exceeds-block` (an alias until \
the next release).",
    },
    applies: VLLM,
    needs: &[Need::DrafterConfig],
    check: num_speculative_tokens_too_large,
};

/// K against the drafter's block, by family.
fn num_speculative_tokens_too_large(cx: &mut Cx) {
    let Some(dr) = cx.drafter.filter(DrafterConfig::block_drafter) else {
        return;
    };
    let (Some(k), Some((block_path, b))) = (cx.deployment.k(), dr.block_size()) else {
        return;
    };
    let at = |field: &Path| At {
        flag: "--speculative-config.num_speculative_tokens",
        anchor: (
            Some(crate::engine::vllm::SPECULATIVE_CONFIG),
            "num_speculative_tokens",
        ),
        field: Some(field.clone()),
    };
    let omni = crate::config::architectures(dr.root())
        .iter()
        .any(|a| a == "Qwen3OmniDSparkModel");
    if omni && k != b {
        let message = format!(
            "num_speculative_tokens {k} but block_size is {b}: vLLM refuses a Qwen3-Omni DSpark drafter unless \
             they are equal"
        );
        cx.emit(Severity::Error, at(&block_path), message, Some(json!(b)));
        return;
    }
    // A DSpark head inside a DeepSeek-V4 checkpoint: K above its block collapsed acceptance at
    // every position, not only past the block (vLLM PR 41834: 4.4 % with K 7 on a block of 5).
    if block_path.last_key() == Some("dspark_block_size") && k > b {
        let message = format!(
            "num_speculative_tokens {k} exceeds dspark_block_size {b}: with the DSpark head of a DeepSeek-V4 \
             checkpoint acceptance collapsed at every position, not only past the block (vLLM PR 41834: 4.4 % at \
             K 7, 34.7 % at K 5); use {b}"
        );
        cx.emit(Severity::Error, at(&block_path), message, Some(json!(b)));
        return;
    }
    // DSpark's anchor is itself a prediction unless sample_from_anchor is false (default true:
    // speculators src/speculators/models/dspark/config.py@c05b95b:28).
    let anchor_counts = dr.dspark() && dr.sample_from_anchor() != Some(false);
    let (limit, why) = if anchor_counts {
        (
            b,
            format!("a DSpark block of {b} drafts at most {b} tokens"),
        )
    } else {
        (
            b - 1,
            format!(
                "a block of {b} holds the last verified token and {} drafted ones",
                b - 1
            ),
        )
    };
    if k > limit {
        let message = format!(
            "num_speculative_tokens {k} exceeds {limit}: {why}; vLLM does not check this (it never reads the \
             drafter's block_size), the positions past the trained block draft tokens that are never accepted"
        );
        cx.emit(
            Severity::Warning,
            at(&block_path),
            message,
            Some(json!(limit)),
        );
    }
}

const NUM_SPECULATIVE_TOKENS_TOO_SMALL: Rule = Rule {
    code: DeploymentCode::NumSpeculativeTokensTooSmall,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "num_speculative_tokens below a DeepSeek-V4 DSpark head's dspark_block_size: vLLM 0.26 and 0.27 refuse it",
        explanation: "vLLM 0.26.0 and 0.27.1 raise ValueError \"DSpark requires num_speculative_tokens >= \
dspark_block_size\" when method is dspark and the draft config carries `dspark_block_size` (a DSpark head embedded \
in a DeepSeek-V4 checkpoint); their comment says a shorter K \"yields incorrect (garbled) output rather than merely \
lower acceptance\". vLLM 0.25.1 has no such check, nor have 0.28.0 to 0.34.0 (read in their wheels: no \
dspark_block_size check in the speculative config; 0.34.0 only defaults K to the block when K is not given): a \
warning there, since the output problem the check guarded against was not read as fixed. With K above the block acceptance \
collapses (num-speculative-tokens-too-large, vLLM PR 41834), so at 0.26 and 0.27 K equal to dspark_block_size is \
the one value that neither fails nor collapses. SGLang takes --speculative-num-draft-tokens instead: nothing there.",
    },
    applies: VLLM,
    needs: &[Need::DrafterConfig],
    check: num_speculative_tokens_too_small,
};

const NUM_SPECULATIVE_TOKENS_TOO_SMALL_BY_ENGINE: ByEngine = ByEngine {
    case: None,
    no_engine: None,
    rows: &[
        ReleaseRow::until(
            Engine::Vllm,
            (0, 25),
            Some(Severity::Warning),
            "no check (read at 0.25.1); 0.26 added it for incorrect output below the block",
        ),
        ReleaseRow::between(
            Engine::Vllm,
            (0, 26),
            (0, 27),
            Some(Severity::Error),
            "raises ValueError \"DSpark requires num_speculative_tokens >= dspark_block_size\" (read at 0.26.0 and 0.27.1)",
        ),
        ReleaseRow::since(
            Engine::Vllm,
            (0, 28),
            Some(Severity::Warning),
            "no such check (read at 0.28.0 and 0.34.0); the output problem was not read as fixed",
        ),
        ReleaseRow::any_version(
            Engine::Sglang,
            None,
            "takes --speculative-num-draft-tokens, not num_speculative_tokens",
        ),
    ],
};

/// K below a DeepSeek-V4 DSpark head's `dspark_block_size`, for method dspark (an absent method
/// is auto-detected; another method is speculative-config-method's).
fn num_speculative_tokens_too_small(cx: &mut Cx) {
    let Some(dr) = cx.drafter.filter(|d| d.dspark()) else {
        return;
    };
    if cx
        .deployment
        .method
        .as_ref()
        .is_some_and(|m| m.name != "dspark")
    {
        return;
    }
    let (Some(k), Some((path, b))) = (cx.deployment.k(), dr.block_size()) else {
        return;
    };
    if path.last_key() != Some("dspark_block_size") || k == 0 || k >= b {
        return;
    }
    let Some(severity) = cx.engine_severity() else {
        return;
    };
    let message = format!(
        "num_speculative_tokens {k} is below dspark_block_size {b}: vLLM 0.26 and 0.27 raise \"DSpark requires \
         num_speculative_tokens >= dspark_block_size\" (a shorter K gives incorrect output, their comment says), and \
         K above the block collapses acceptance (vLLM PR 41834); use {b}"
    );
    let at = At {
        flag: "--speculative-config.num_speculative_tokens",
        anchor: (
            Some(crate::engine::vllm::SPECULATIVE_CONFIG),
            "num_speculative_tokens",
        ),
        field: Some(path),
    };
    cx.emit(severity, at, message, Some(json!(b)));
}

const NUM_DRAFT_TOKENS_MISMATCH: Rule = Rule {
    code: DeploymentCode::NumDraftTokensMismatch,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "SGLang DFLASH draft tokens (--speculative-num-draft-tokens or --speculative-dflash-block-size) differ from the drafter's block_size",
        explanation: "SGLang's DFLASH algorithm reads block_size from the drafter only when neither \
--speculative-num-draft-tokens nor --speculative-dflash-block-size is given; an explicit value that differs from the \
drafter's block_size is not compared at start-up, and the DFlash worker only logs \"DFLASH block size mismatch\" and \
drafts blocks the drafter was not trained on. Omit the flag or make it equal to block_size (16 for -b16 drafters). \
`lint --engine sglang --num-draft-tokens N` states the same flag. Formerly also \
`launch-sglang-draft-tokens-mismatch` (an alias until the next release).",
    },
    applies: SGLANG,
    needs: &[Need::DrafterConfig],
    check: num_draft_tokens_mismatch,
};

/// SGLang DFLASH: the draft tokens given differ from the drafter's block_size.
fn num_draft_tokens_mismatch(cx: &mut Cx) {
    let d = cx.deployment;
    if d.method.as_ref().is_some_and(|m| m.name != "DFLASH") {
        return;
    }
    let (Some(tokens), Some(dr)) = (d.draft_tokens.clone(), cx.drafter) else {
        return;
    };
    let Some((path, block)) = dr.block_size() else {
        return;
    };
    if tokens.value == block {
        return;
    }
    let flag = tokens.flag;
    let message = format!(
        "{flag} {} differs from the drafter's block_size {block}: SGLang only warns (\"DFLASH block size \
         mismatch\") and drafts blocks the drafter was not trained on; omit the flag to let SGLang read block_size \
         from the drafter",
        tokens.value
    );
    let at = At {
        flag,
        anchor: (None, flag),
        field: Some(path),
    };
    cx.emit(Severity::Warning, at, message, Some(json!(block)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_rule() {
        for code in DeploymentCode::ALL {
            let n = RULES.iter().filter(|r| r.code == *code).count();
            assert_eq!(n, 1, "{}", code.as_str());
            assert!(!crate::evidence::source_text(code.as_str()).is_empty());
        }
    }
}
