//! The launch rules: the engine's flags and environment against each other and against the
//! drafter's config. Pure functions of a [`Launch`] and the [`DrafterFacts`] read from the
//! drafter's `config.json`.
//!
//! Every rule is a [`Rule`] value declared beside its function: its code, its documentation
//! (severity, summary, explanation, cited source), the engines it applies to ([`Engines`]) and
//! the inputs it cannot run without ([`Need`]). [`check`] hands [`RULES`] to the one engine,
//! `diagnostic::rule::run`, which runs the rules of the command's engine and skips — and lists —
//! those whose needs are unmet (the drafter's config could not be read): the report's "not
//! checked" lines say so, and its `skipped` field names each rule.
//!
//! What is not an input but a flag left at the engine's default, or a value the input leaves to
//! a shell variable, is the launch's own business: a rule that meets one does not guess, it adds
//! a "not checked" line saying what it would have checked and why it could not.

use serde::Serialize;
use serde_json::{json, Value};

use super::parse::Launch;
use super::LaunchCode;
use crate::config::ConfigFile;
use crate::diagnostic::rule::{Describe, NeedKind, RuleFamily};
use crate::diagnostic::{CodeInfo, Diagnostic, Severity};
use crate::json::Node;
use crate::rules::{family, Engine, Family};

/// The kind of drafter, as far as the launch rules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DrafterKind {
    /// DFlash or DFlash2: K = block_size - 1 by convention.
    Dflash,
    /// DSpark: K = block_size is legal.
    Dspark,
    /// EAGLE-3 heads.
    Eagle3,
    /// Anything else (a plain LM, an MTP target, an unknown head).
    Other,
}

impl DrafterKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DrafterKind::Dflash => "dflash",
            DrafterKind::Dspark => "dspark",
            DrafterKind::Eagle3 => "eagle3",
            DrafterKind::Other => "other",
        }
    }

    /// vLLM's `method` for this kind.
    fn vllm_method(self) -> Option<&'static str> {
        match self {
            DrafterKind::Dflash => Some("dflash"),
            DrafterKind::Dspark => Some("dspark"),
            DrafterKind::Eagle3 => Some("eagle3"),
            DrafterKind::Other => None,
        }
    }

    /// SGLang's `--speculative-algorithm` for this kind.
    fn sglang_algorithm(self) -> Option<&'static str> {
        match self {
            DrafterKind::Dflash => Some("DFLASH"),
            DrafterKind::Dspark => Some("DSPARK"),
            DrafterKind::Eagle3 => Some("EAGLE3"),
            DrafterKind::Other => None,
        }
    }
}

/// What the launch rules read from the drafter's config.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrafterFacts {
    pub kind: DrafterKind,
    /// The fields that gave the kind away.
    pub evidence: Vec<String>,
    /// `block_size` or `dflash_config.block_size` (DSpark: also `dspark_block_size`).
    pub block_size: Option<u64>,
    /// `layer_types` holds both `sliding_attention` and `full_attention`.
    pub mixed_attention: bool,
    /// `layer_types`, counted (`4× sliding_attention, 1× full_attention`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer_types: Option<String>,
    pub vocab_size: Option<u64>,
    pub draft_vocab_size: Option<u64>,
    /// vLLM takes K from `n_predict` when the speculative config has none.
    pub n_predict: Option<u64>,
    /// The drafter's own `quantization_config` method (`None`: unquantized).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantization: Option<String>,
    /// Attention and KV heads (top level, or speculators' `transformer_layer_config`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_attention_heads: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_key_value_heads: Option<u64>,
}

fn positive(node: Option<&Node>) -> Option<u64> {
    node.and_then(Node::as_u64).filter(|&v| v > 0)
}

/// A head count at the top level or in speculators' `transformer_layer_config`.
fn head_count(root: &Node, key: &str) -> Option<u64> {
    positive(root.get(key)).or_else(|| {
        positive(
            root.get("transformer_layer_config")
                .and_then(|t| t.get(key)),
        )
    })
}

impl DrafterFacts {
    /// Reads the facts from a drafter's (or a fused target's) config.
    pub fn from_config(config: &ConfigFile) -> DrafterFacts {
        let root = config.root();
        // One family detection for every command (rules::family), mapped onto what the launch
        // rules distinguish.
        let (kind, evidence) = match family::detect(root) {
            Some(d) => {
                let kind = match d.name {
                    Family::Dflash | Family::Dflash2 | Family::Domino => DrafterKind::Dflash,
                    Family::Dspark => DrafterKind::Dspark,
                    Family::Eagle3 | Family::Peagle => DrafterKind::Eagle3,
                    Family::Mtp => DrafterKind::Other,
                    Family::Speculators => match d.speculators_model_type.as_deref() {
                        Some("eagle3") | Some("peagle") => DrafterKind::Eagle3,
                        Some("dspark") => DrafterKind::Dspark,
                        _ => DrafterKind::Dflash,
                    },
                };
                (kind, d.evidence)
            }
            None => (DrafterKind::Other, Vec::new()),
        };
        let block_size = crate::config::layout_field("block_size")
            .and_then(|f| f.find(root))
            .and_then(|(_, n)| positive(Some(n)))
            .or_else(|| positive(root.get("dspark_block_size")));
        let layer_types: Option<Vec<String>> = root.get("layer_types").and_then(|n| {
            n.as_array().map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_string))
                    .collect()
            })
        });
        let mixed_attention = layer_types.as_ref().is_some_and(|t| {
            t.iter().any(|x| x == "sliding_attention") && t.iter().any(|x| x == "full_attention")
        });
        let layer_types = layer_types.map(|t| {
            let mut counts: Vec<(String, usize)> = Vec::new();
            for x in t {
                match counts.iter_mut().find(|(k, _)| *k == x) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((x, 1)),
                }
            }
            counts
                .iter()
                .map(|(k, n)| format!("{n}× {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        });
        DrafterFacts {
            kind,
            evidence,
            block_size,
            mixed_attention,
            layer_types,
            vocab_size: positive(root.get("vocab_size")),
            draft_vocab_size: positive(root.get("draft_vocab_size")),
            n_predict: positive(root.get("n_predict")),
            quantization: crate::config::QuantFacts::from_root(root).map(|q| q.method),
            num_attention_heads: head_count(root, "num_attention_heads"),
            num_key_value_heads: head_count(root, "num_key_value_heads"),
        }
    }
}

/// What the rules see.
pub struct Input<'a> {
    pub launch: &'a Launch,
    /// The drafter's facts, when its config could be read.
    pub drafter: Option<&'a DrafterFacts>,
    /// The drafter was looked up on the Hub (not a local path).
    pub drafter_on_hub: bool,
    /// The commit the Hub resolved the drafter to, when it was asked.
    pub drafter_sha: Option<&'a str>,
    /// The target's vocabulary (embedding rows), when known.
    pub target_vocab: Option<u64>,
}

/// The engines a launch rule applies to: it runs only on a command that starts one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engines {
    Vllm,
    Sglang,
    Both,
}

impl Describe for Engines {
    fn describe(self) -> String {
        match self {
            Engines::Vllm => "vLLM commands",
            Engines::Sglang => "SGLang commands",
            Engines::Both => "vLLM and SGLang commands",
        }
        .to_string()
    }
}

/// An input a launch rule cannot run without. Rules whose needs are unmet are skipped and
/// listed as not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// The drafter's `config.json` ([`DrafterFacts`]): read from the path or Hub repo the
    /// command names, or `--drafter DIR`.
    DrafterConfig,
    /// The target's vocabulary size, from its config or a built-in known target.
    TargetVocab,
}

impl NeedKind for Need {
    fn describe(self) -> &'static str {
        match self {
            Need::DrafterConfig => {
                "the drafter's config.json (the path or Hub repo the command names, or --drafter DIR)"
            }
            Need::TargetVocab => {
                "the target's vocabulary size (the target's config.json, or --target DIR)"
            }
        }
    }
}

impl Need {
    /// The report's "not checked" line for `codes`, the rules skipped for want of it.
    fn not_checked(self, codes: &[&str]) -> String {
        match self {
            Need::DrafterConfig => format!(
                "the rules that need the drafter's config ({}): the drafter's config.json could not be read",
                codes.join(", ")
            ),
            Need::TargetVocab => {
                "--speculative-token-map: the target's vocabulary is unknown, so a truncated EAGLE head cannot be told"
                    .to_string()
            }
        }
    }
}

/// The launch family of rules: they judge one engine command ([`Cx`]).
pub struct LaunchRules;

/// A launch rule: its code, its documentation, its engines, its needs, and its check.
pub type Rule = crate::diagnostic::rule::Rule<LaunchRules>;

/// A rule that did not run, and the inputs it lacked.
pub type Skipped = crate::diagnostic::rule::Skipped<LaunchCode, Need>;

impl RuleFamily for LaunchRules {
    type Cx<'a> = Cx<'a>;
    type Code = LaunchCode;
    type Scope = Engines;
    type Need = Need;

    fn in_scope(cx: &Cx<'_>, scope: Engines) -> bool {
        match scope {
            Engines::Both => true,
            Engines::Vllm => cx.launch().engine == Engine::Vllm,
            Engines::Sglang => cx.launch().engine == Engine::Sglang,
        }
    }

    fn has(cx: &Cx<'_>, need: Need) -> bool {
        match need {
            Need::DrafterConfig => cx.input.drafter.is_some(),
            Need::TargetVocab => cx.input.target_vocab.is_some(),
        }
    }

    fn enter(cx: &mut Cx<'_>, rule: &'static Rule) {
        cx.rule = rule;
    }

    fn leave(cx: &mut Cx<'_>) -> Vec<Need> {
        std::mem::take(&mut cx.late)
    }
}

/// Every launch rule, in the order they run (findings of one severity keep this order).
pub const RULES: &[Rule] = &[
    METHOD_FAMILY,
    REVISION_UNPINNED,
    // vLLM
    REJECTED_KEY,
    DRAFT_TP_IGNORED,
    NUM_SPECULATIVE_TOKENS_MISSING,
    K_EXCEEDS_BLOCK,
    BATCHED_TOKENS,
    MIXED_ATTENTION_RUNNER,
    // SGLang
    DRAFTER_MISSING,
    SGLANG_BLOCK_SIZE_CONFLICT,
    SGLANG_DRAFT_TOKENS_MISMATCH,
    SGLANG_WINDOW_TOO_SMALL,
    SGLANG_EAGLE_PARTIAL,
    SGLANG_EAGLE_CHAIN,
    SGLANG_EAGLE_TREE,
    SGLANG_TOKEN_MAP,
    DRAFT_QUANT_INHERITED,
    // both
    DRAFT_HEADS_TP,
    CHAT_TEMPLATE_OVERRIDE,
    THINKING_DEFAULT,
];

/// The rule that raises `code` (`None` for the codes launch raises about its inputs).
pub fn rule(code: LaunchCode) -> Option<&'static Rule> {
    crate::diagnostic::rule::find(RULES, code)
}

/// Findings, the checks that could not be made, and the rules skipped for want of an input.
#[derive(Debug, Default)]
pub struct Outcome {
    pub diagnostics: Vec<Diagnostic>,
    pub not_checked: Vec<String>,
    pub skipped: Vec<Skipped>,
}

/// What a launch rule sees while it checks, and where it reports.
pub struct Cx<'a> {
    input: &'a Input<'a>,
    /// The running rule: what [`Cx::emit`] reports under (set by the engine, `enter`).
    rule: &'static Rule,
    diagnostics: Vec<Diagnostic>,
    not_checked: Vec<String>,
    /// Needs the running rule found unmet while checking (listed as skipped by `leave`).
    late: Vec<Need>,
}

impl Cx<'_> {
    fn launch(&self) -> &Launch {
        self.input.launch
    }

    /// A diagnostic of the running rule at `path`, located in the input file at `anchor.1`
    /// (after `anchor.0` when given).
    fn emit(
        &mut self,
        path: &str,
        anchor: (Option<&str>, &str),
        message: String,
        expected: Option<Value>,
    ) -> &mut Diagnostic {
        let origin = &self.input.launch.origin;
        let mut d = Diagnostic::new(self.rule.code, &self.rule.info, path, message);
        if let Some(file) = &origin.file {
            d = d.file(file.clone());
            if let Some((line, column)) = origin
                .find(anchor.0, anchor.1)
                .or_else(|| origin.find(None, anchor.1))
            {
                d = d.span(line, column);
            }
        }
        if let Some(e) = expected {
            d = d.expected(e);
        }
        self.diagnostics.push(d);
        self.diagnostics.last_mut().expect("just pushed")
    }

    /// A check the command leaves to the engine's defaults or to a shell variable.
    fn not_checked(&mut self, what: impl Into<String>) {
        self.not_checked.push(what.into());
    }

    /// The running rule found, while checking, that it needs `need` and it is unmet.
    fn lacks(&mut self, need: Need) {
        self.late.push(need);
    }
}

/// Runs the launch rules of the command's engine.
pub fn check(input: &Input) -> Outcome {
    let mut cx = Cx {
        input,
        // Replaced by the engine before each check runs (`RuleFamily::enter`).
        rule: &RULES[0],
        diagnostics: Vec::new(),
        not_checked: Vec::new(),
        late: Vec::new(),
    };
    let mut skipped = crate::diagnostic::rule::run(RULES, &mut cx);
    if input.launch.drafter.is_none() {
        // A command that names no drafter has no drafter config to miss: a model-free method
        // (ngram), or a fused draft module read from the target (when the target could not be
        // read, launch-target-unavailable says so).
        for s in &mut skipped {
            s.needs.retain(|&n| n != Need::DrafterConfig);
        }
        skipped.retain(|s| !s.needs.is_empty());
    }
    // One line per missing input, naming the rules it kept from running.
    let mut needs: Vec<Need> = Vec::new();
    for &need in skipped.iter().flat_map(|s| s.needs.iter()) {
        if !needs.contains(&need) {
            needs.push(need);
        }
    }
    let mut not_checked: Vec<String> = needs
        .iter()
        .map(|&need| {
            let codes: Vec<&str> = skipped
                .iter()
                .filter(|s| s.needs.contains(&need))
                .map(|s| s.code.as_str())
                .collect();
            need.not_checked(&codes)
        })
        .collect();
    not_checked.extend(cx.not_checked);
    for flag in &input.launch.unresolved {
        not_checked.push(format!(
            "{flag}: its value is a shell variable the input never assigns"
        ));
    }
    Outcome {
        diagnostics: cx.diagnostics,
        not_checked,
        skipped,
    }
}

/// The method vLLM would use: the given one, else inferred from the drafter's name like vLLM
/// does ("eagle3" or "dflash" in the repo id or path).
fn vllm_method(launch: &Launch) -> (Option<String>, bool) {
    if let Some(m) = launch.method() {
        return (Some(m), false);
    }
    let name = launch
        .drafter
        .as_deref()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let inferred = if name.contains("eagle3") {
        Some("eagle3")
    } else if name.contains("dflash") {
        Some("dflash")
    } else {
        None
    };
    (inferred.map(str::to_string), true)
}

const METHOD_FAMILY: Rule = Rule {
    code: LaunchCode::MethodFamily,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the vLLM method or SGLang algorithm does not match the drafter's family",
        explanation: "vLLM picks the proposer from `method` (`dflash`, `dspark`, `eagle3`) and, when it is absent, \
infers it from \"dflash\" or \"eagle3\" in the drafter's name; SGLang picks the worker from --speculative-algorithm \
(DFLASH, DSPARK, EAGLE3). Another method loads the drafter with the wrong proposer (vLLM's DFlash proposer asserts \
method == \"dflash\"; its V2 DFlash path refuses DSpark's sample_from_anchor). DSpark drafters are recognised by a \
DSpark architecture (DSparkDraftModel, Qwen3DSparkModel), dspark_* keys, sample_from_anchor or projector_type \
\"dspark\", so method \"dspark\" is not flagged for them.",
        source: "vllm-project/vllm vllm/config/speculative.py@002e77c (method inferred from the drafter's name); vllm-project/vllm v1/spec_decode DFlashProposer (asserts method == \"dflash\"); sglang==0.5.23 sglang/srt/speculative/spec_info.py (create_worker: one worker per algorithm)",
    },
    applies: Engines::Both,
    needs: &[Need::DrafterConfig],
    check: method_family,
};

/// vLLM `method` / SGLang `--speculative-algorithm` against the drafter's family.
fn method_family(cx: &mut Cx) {
    let Some(drafter) = cx.input.drafter else {
        return;
    };
    let evidence = drafter.evidence.join(", ");
    match cx.launch().engine {
        Engine::Vllm => {
            let Some(want) = drafter.kind.vllm_method() else {
                return;
            };
            if cx.launch().speculative_config.is_none() {
                return;
            }
            let (method, inferred) = vllm_method(cx.launch());
            if method.as_deref() == Some(want) {
                return;
            }
            let message = match (&method, inferred) {
                (Some(m), false) => format!(
                    "method {m:?}, but the drafter is a {} drafter ({evidence}): vLLM expects \"{want}\"",
                    drafter.kind.as_str()
                ),
                _ => format!(
                    "no method, and the drafter's name does not say \"{want}\": vLLM infers the method from \
                     the name, so a {} drafter ({evidence}) needs \"method\": \"{want}\"",
                    drafter.kind.as_str()
                ),
            };
            cx.emit(
                "--speculative-config.method",
                (Some("--speculative-config"), "\"method\""),
                message,
                Some(json!(want)),
            );
        }
        Engine::Sglang => {
            let Some(want) = drafter.kind.sglang_algorithm() else {
                return;
            };
            let Some(algorithm) = cx.launch().sglang.algorithm.clone() else {
                return;
            };
            if algorithm != want {
                cx.emit(
                    "--speculative-algorithm",
                    (None, "--speculative-algorithm"),
                    format!(
                        "--speculative-algorithm {algorithm}, but the drafter is a {} drafter ({evidence}): \
                         SGLang expects {want}",
                        drafter.kind.as_str()
                    ),
                    Some(json!(want)),
                );
            }
        }
    }
}

const REVISION_UNPINNED: Rule = Rule {
    code: LaunchCode::RevisionUnpinned,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "a Hub drafter loaded without a commit sha (vLLM speculative-config revision, SGLang --speculative-draft-model-revision)",
        explanation: "Without a revision the engine loads the repo's `main` as it is at start-up. Drafter repos are \
re-published with different architectures under the same name (z-lab/dflash#152: the same repo at two commits is \
6 layers with 8 target layers and SWA 4096, or 4 layers with 6 target layers and SWA 2048), so a restart can load \
another drafter. Pin the commit sha that was checked (`dflash-check pin` records it).",
        source: "z-lab/dflash#152",
    },
    applies: Engines::Both,
    needs: &[],
    check: revision_unpinned,
};

/// A Hub drafter without a commit sha: the repo can change under the deployment.
fn revision_unpinned(cx: &mut Cx) {
    if !cx.input.drafter_on_hub {
        return;
    }
    let launch = cx.launch();
    let (path, anchor) = match launch.engine {
        Engine::Vllm => ("--speculative-config.revision", "--speculative-config"),
        Engine::Sglang => (
            "--speculative-draft-model-revision",
            "--speculative-draft-model-path",
        ),
    };
    let drafter = launch.drafter.clone().unwrap_or_default();
    let message = match launch.drafter_revision.as_deref() {
        Some(r) if crate::hub::is_commit_sha(r) => return,
        Some(r) => format!(
            "the drafter {drafter} is pinned to {r:?}, a branch or tag that can move: pin a commit sha"
        ),
        None => format!(
            "the drafter {drafter} has no revision: the engine loads whatever `main` is at start-up; pin a commit sha"
        ),
    };
    let expected = cx.input.drafter_sha.map(|s| json!(s));
    cx.emit(path, (None, anchor), message, expected);
}

const REJECTED_KEY: Rule = Rule {
    code: LaunchCode::RejectedKey,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "tensor_parallel_size inside vLLM's --speculative-config (vLLM wants draft_tensor_parallel_size)",
        explanation: "vLLM refuses to start: \"'tensor_parallel_size' is not a valid argument in the speculative_config. \
Please pass 'draft_tensor_parallel_size' instead.\" The draft's tensor parallelism can only be 1 or the target's.",
        source: "vllm-project/vllm vllm/config/speculative.py@v0.26.0 (_verify_args)",
    },
    applies: Engines::Vllm,
    needs: &[],
    check: rejected_key,
};

/// `tensor_parallel_size` inside vLLM's speculative config.
fn rejected_key(cx: &mut Cx) {
    let Some(value) = cx.launch().spec("tensor_parallel_size").cloned() else {
        return;
    };
    cx.emit(
        "--speculative-config.tensor_parallel_size",
        (Some("--speculative-config"), "tensor_parallel_size"),
        "vLLM refuses `tensor_parallel_size` inside --speculative-config (\"not a valid argument in the \
         speculative_config\"): the draft's tensor parallelism is `draft_tensor_parallel_size` (1 or the target's)"
            .to_string(),
        Some(json!({ "draft_tensor_parallel_size": value })),
    );
}

/// The drafter's K: `num_speculative_tokens` when it is a positive integer.
fn k_of(launch: &Launch) -> Option<u64> {
    launch
        .spec("num_speculative_tokens")
        .and_then(Value::as_u64)
        .filter(|&k| k > 0)
}

const NUM_SPECULATIVE_TOKENS_MISSING: Rule = Rule {
    code: LaunchCode::NumSpeculativeTokensMissing,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "vLLM --speculative-config without a positive num_speculative_tokens",
        explanation: "vLLM refuses to start: \"num_speculative_tokens must be provided with speculative model unless \
the draft model config contains an n_predict parameter\", and the field must be > 0. The DFlash convention is \
block_size - 1 (15 for -b16 drafters); DSpark drafters may use block_size.",
        source: "vllm-project/vllm vllm/config/speculative.py@v0.26.0 (__post_init__: n_predict default, raise; _verify_args: absent or <= 0)",
    },
    applies: Engines::Vllm,
    needs: &[],
    check: num_speculative_tokens_missing,
};

/// vLLM requires a positive `num_speculative_tokens` (unless the drafter has `n_predict`).
fn num_speculative_tokens_missing(cx: &mut Cx) {
    let launch = cx.launch();
    if launch.speculative_config.is_none() {
        return;
    }
    let block = cx.input.drafter.and_then(|d| d.block_size);
    let suggest = cx.input.drafter.and_then(|d| match (d.kind, d.block_size) {
        (DrafterKind::Dflash, Some(b)) => Some(json!(b - 1)),
        (DrafterKind::Dspark, Some(b)) => Some(json!(b)),
        _ => None,
    });
    let hint = match (cx.input.drafter.map(|d| d.kind), block) {
        (Some(DrafterKind::Dflash), Some(b)) => format!(" (block_size {b}: use {})", b - 1),
        (Some(DrafterKind::Dspark), Some(b)) => format!(" (DSpark block_size {b}: use {b})"),
        _ => String::new(),
    };
    match launch.spec("num_speculative_tokens") {
        None | Some(Value::Null) => {
            if cx.input.drafter.and_then(|d| d.n_predict).is_some() {
                return;
            }
            cx.emit(
                "--speculative-config.num_speculative_tokens",
                (None, "--speculative-config"),
                format!(
                    "--speculative-config has no num_speculative_tokens: vLLM refuses to start without it{hint}"
                ),
                suggest,
            );
        }
        Some(v) if k_of(launch).is_none() => {
            let v = v.to_string();
            cx.emit(
                "--speculative-config.num_speculative_tokens",
                (Some("--speculative-config"), "num_speculative_tokens"),
                format!("num_speculative_tokens is {v}: vLLM requires a positive integer{hint}"),
                suggest,
            );
        }
        Some(_) => {}
    }
}

const K_EXCEEDS_BLOCK: Rule = Rule {
    code: LaunchCode::KExceedsBlock,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "num_speculative_tokens exceeds what the drafter's block drafts (DFlash: block_size - 1; DSpark: block_size)",
        explanation: "A DFlash block of block_size positions holds the last verified token and block_size - 1 \
drafted ones, so K = block_size - 1 is the convention (z-lab README: 15 for block_size 16; speculators' converter; \
vLLM recipes). No engine enforces it: vLLM never reads the drafter's block_size (its `block_size` is the KV page \
size), so a larger K drafts positions the drafter was not trained for. A warning, not an error. DSpark drafters draft \
a whole block (K = block_size is legal).",
        source: "z-lab/dflash README.md@44947fb (num_speculative_tokens 15 with block_size 16); vllm-project/speculators src/speculators/convert/dflash/converter.py@c05b95b:132; vllm-project/recipes#837; vllm-project/vllm#50012 (block_size in vLLM is the KV page size)",
    },
    applies: Engines::Vllm,
    needs: &[Need::DrafterConfig],
    check: k_exceeds_block,
};

/// K against the drafter's block_size, by family: DFlash drafts block_size - 1 tokens (the
/// first position is the last verified token); DSpark may draft block_size.
fn k_exceeds_block(cx: &mut Cx) {
    let (Some(k), Some(drafter)) = (k_of(cx.launch()), cx.input.drafter) else {
        return;
    };
    let Some(block) = drafter.block_size else {
        return;
    };
    let (limit, why) = match drafter.kind {
        DrafterKind::Dflash => (
            block - 1,
            format!(
                "a DFlash block of {block} holds the last verified token and {} drafted ones",
                block - 1
            ),
        ),
        DrafterKind::Dspark => (
            block,
            format!("a DSpark block of {block} drafts at most {block} tokens"),
        ),
        _ => return,
    };
    if k > limit {
        cx.emit(
            "--speculative-config.num_speculative_tokens",
            (Some("--speculative-config"), "num_speculative_tokens"),
            format!(
                "num_speculative_tokens {k} exceeds {limit}: {why}; vLLM does not check this (it never reads the \
                 drafter's block_size), the positions past the trained block draft tokens that are never accepted"
            ),
            Some(json!(limit)),
        );
    }
}

const BATCHED_TOKENS: Rule = Rule {
    code: LaunchCode::BatchedTokens,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "max_num_batched_tokens < max_num_seqs × (K+1) for a DFlash/DSpark drafter",
        explanation: "DFlash and DSpark drafters issue max_num_seqs × (K+1) query tokens in one unchunkable decode \
step (a bonus query and K mask queries per request). vLLM sizes the drafter's input buffers to \
max_num_batched_tokens, so a full batch indexes past them (CUDA out-of-bounds gather); v0.26.0 rejects some such \
configs at start-up with a negative max_num_scheduled_tokens. Checked only when both flags are on the command line: \
vLLM's defaults depend on the GPU and the entrypoint, and the report says so.",
        source: "vllm-project/vllm vllm/v1/worker/gpu/spec_decode/speculator.py@v0.26.0 (buffers of max_num_batched_tokens rows), dflash/speculator.py@v0.26.0 (1 + K queries per request); vllm-project/vllm#53970 (DFlash/DSpark token budget: out-of-bounds gather when max_num_seqs × (L+1) > max_num_batched_tokens); vllm-project/vllm#50708 (v0.26.0: max_num_scheduled_tokens negative at config build)",
    },
    applies: Engines::Vllm,
    needs: &[],
    check: batched_tokens,
};

/// `max_num_batched_tokens ≥ max_num_seqs × (K+1)` for parallel drafters (DFlash, DSpark).
fn batched_tokens(cx: &mut Cx) {
    let launch = cx.launch();
    let (method, _) = vllm_method(launch);
    let kind = cx.input.drafter.map(|d| d.kind);
    let parallel = matches!(method.as_deref(), Some("dflash" | "dspark"))
        || matches!(kind, Some(DrafterKind::Dflash | DrafterKind::Dspark));
    if !parallel || launch.speculative_config.is_none() {
        return;
    }
    let Some(k) = k_of(launch) else {
        return;
    };
    let per_seq = k.saturating_add(1);
    match (launch.max_num_seqs, launch.max_num_batched_tokens) {
        (Some(seqs), Some(tokens)) => {
            let need = seqs.saturating_mul(per_seq);
            if tokens < need {
                cx.emit(
                    "--max-num-batched-tokens",
                    (None, "--max-num-batched-tokens"),
                    format!(
                        "--max-num-batched-tokens {tokens} is below --max-num-seqs {seqs} × (K+1 = {per_seq}) = {need}: \
                         one decode step of a full batch drafts {need} query tokens, past the drafter's buffers"
                    ),
                    Some(json!(need)),
                );
            }
        }
        (Some(seqs), None) => cx.not_checked(format!(
            "max_num_batched_tokens ≥ max_num_seqs × (K+1) = {}: --max-num-batched-tokens is not given, and \
             vLLM's default depends on the GPU and the entrypoint (2048 in vllm#53970); pass it explicitly",
            seqs.saturating_mul(per_seq)
        )),
        (None, Some(tokens)) => cx.not_checked(format!(
            "max_num_batched_tokens ≥ max_num_seqs × (K+1): --max-num-seqs is not given (vLLM's default depends on \
             the GPU and the entrypoint, 256 in vllm#53970); it holds for max_num_seqs ≤ {} = {tokens} / {per_seq}",
            tokens / per_seq
        )),
        (None, None) => cx.not_checked(format!(
            "max_num_batched_tokens ≥ max_num_seqs × (K+1 = {per_seq}): neither flag is given, and vLLM's defaults \
             depend on the GPU and the entrypoint (2048 tokens with 256 sequences fails for K ≥ 8, vllm#53970)"
        )),
    }
}

const MIXED_ATTENTION_RUNNER: Rule = Rule {
    code: LaunchCode::MixedAttentionRunner,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a drafter with mixed sliding/full attention layers under vLLM without VLLM_USE_V2_MODEL_RUNNER=1",
        explanation: "vLLM's DFlash loader raises NotImplementedError for a drafter whose layer_types mix \
sliding_attention and full_attention unless the V2 model runner is used. Error when the command sets \
VLLM_USE_V2_MODEL_RUNNER to 0 (V1 forced). Warning when the variable is unset, because the default depends on the \
version and the target: the error was hit on v0.26.0rc (vllm-ascend#15650); vllm#44443 (merged 2026-07-02) made \
MRv2 the default for dense targets only. Note vllm#49559: on vLLM 0.25.1 a speculators-trained DFlash drafter had ~0% \
acceptance with the V2 runner: check acceptance after deploy.",
        source: "vllm-project/vllm vllm/model_executor/models/qwen3_dflash.py@036a00d (_resolve_layer_attention: NotImplementedError without use_v2_model_runner); vllm-project/vllm-ascend#15650 (v0.26.0rc); vllm-project/vllm#44443",
    },
    applies: Engines::Vllm,
    needs: &[Need::DrafterConfig],
    check: mixed_attention_runner,
};

/// Mixed sliding/full draft layers under vLLM need the V2 model runner.
fn mixed_attention_runner(cx: &mut Cx) {
    let Some(drafter) = cx.input.drafter else {
        return;
    };
    if !drafter.mixed_attention || cx.launch().speculative_config.is_none() {
        return;
    }
    let layers = drafter.layer_types.clone().unwrap_or_default();
    let var = "VLLM_USE_V2_MODEL_RUNNER";
    let value = cx.launch().env_var(var).map(str::to_string);
    let path = format!("env.{var}");
    match value.as_deref().map(str::to_ascii_lowercase).as_deref() {
        Some("1" | "true" | "yes" | "on") => {}
        Some(v) => {
            let v = v.to_string();
            cx.emit(
                &path,
                (None, var),
                format!(
                    "{var}={v} forces the V1 model runner, but the drafter mixes sliding and full attention \
                     ({layers}): vLLM's DFlash loader raises NotImplementedError for mixed layers outside the V2 runner"
                ),
                Some(json!("1")),
            );
        }
        None => {
            cx.emit(
                &path,
                (None, "--speculative-config"),
                format!(
                    "the drafter mixes sliding and full attention ({layers}) and {var} is not set: vLLM versions and \
                     targets that still default to the V1 runner refuse to load it (seen on v0.26.0rc, \
                     vllm-ascend#15650); MRv2 is the default only for dense targets since vllm#44443. Set {var}=1"
                ),
                Some(json!("1")),
            )
            .severity = Severity::Warning;
        }
    }
}

const DRAFTER_MISSING: Rule = Rule {
    code: LaunchCode::DrafterMissing,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "SGLang --speculative-algorithm DFLASH without --speculative-draft-model-path",
        explanation: "SGLang refuses to start: \"DFLASH speculative decoding requires setting \
--speculative-draft-model-path\".",
        source: "sgl-project/sglang python/sglang/srt/server_args.py (_handle_dflash)",
    },
    applies: Engines::Sglang,
    needs: &[],
    check: drafter_missing,
};

/// SGLang DFLASH without a drafter path.
fn drafter_missing(cx: &mut Cx) {
    let launch = cx.launch();
    if launch.sglang.algorithm.as_deref() == Some("DFLASH") && launch.drafter.is_none() {
        cx.emit(
            "--speculative-draft-model-path",
            (None, "--speculative-algorithm"),
            "--speculative-algorithm DFLASH without --speculative-draft-model-path: SGLang refuses to start"
                .to_string(),
            None,
        );
    }
}

fn is_dflash(launch: &Launch) -> bool {
    launch.sglang.algorithm.as_deref() == Some("DFLASH")
}

fn is_eagle(launch: &Launch) -> bool {
    matches!(
        launch.sglang.algorithm.as_deref(),
        Some("EAGLE" | "EAGLE3" | "STANDALONE")
    )
}

const SGLANG_BLOCK_SIZE_CONFLICT: Rule = Rule {
    code: LaunchCode::SglangBlockSizeConflict,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "SGLang --speculative-num-draft-tokens differs from --speculative-dflash-block-size",
        explanation: "SGLang refuses to start: \"Both --speculative-num-draft-tokens and --speculative-dflash-block-size \
are set but they differ. For DFLASH they must match.\"",
        source: "sgl-project/sglang python/sglang/srt/server_args.py (_handle_dflash)",
    },
    applies: Engines::Sglang,
    needs: &[],
    check: sglang_block_size_conflict,
};

/// SGLang DFLASH: `--speculative-num-draft-tokens` and `--speculative-dflash-block-size` differ.
fn sglang_block_size_conflict(cx: &mut Cx) {
    let s = &cx.launch().sglang;
    let (Some(tokens), Some(block)) = (s.num_draft_tokens, s.dflash_block_size) else {
        return;
    };
    if is_dflash(cx.launch()) && tokens != block {
        cx.emit(
            "--speculative-num-draft-tokens",
            (None, "--speculative-num-draft-tokens"),
            format!(
                "--speculative-num-draft-tokens {tokens} and --speculative-dflash-block-size {block} differ: SGLang \
                 refuses to start (for DFLASH they must match)"
            ),
            Some(json!(block)),
        );
    }
}

/// The draft tokens SGLang will use for DFLASH, and the flag that set them.
fn dflash_tokens(launch: &Launch) -> Option<(u64, &'static str)> {
    let s = &launch.sglang;
    s.num_draft_tokens
        .map(|t| (t, "--speculative-num-draft-tokens"))
        .or(s
            .dflash_block_size
            .map(|b| (b, "--speculative-dflash-block-size")))
}

const SGLANG_DRAFT_TOKENS_MISMATCH: Rule = Rule {
    code: LaunchCode::SglangDraftTokensMismatch,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "SGLang DFLASH draft tokens on the command line differ from the drafter's block_size",
        explanation: "SGLang reads block_size from the drafter only when neither --speculative-num-draft-tokens nor \
--speculative-dflash-block-size is given; an explicit value that differs from the drafter's block_size is not \
compared at start-up, and the DFlash worker only logs \"DFLASH block size mismatch\". Omit the flag or make it equal \
to block_size (16 for -b16 drafters).",
        source: "sgl-project/sglang python/sglang/srt/speculative/dflash_worker.py@7f151c5 (block size mismatch warning); sgl-project/sglang python/sglang/srt/server_args.py (_handle_dflash infers the block size only when unset)",
    },
    applies: Engines::Sglang,
    needs: &[Need::DrafterConfig],
    check: sglang_draft_tokens_mismatch,
};

/// SGLang DFLASH: the draft tokens given on the command line differ from the drafter's block_size.
fn sglang_draft_tokens_mismatch(cx: &mut Cx) {
    if !is_dflash(cx.launch()) {
        return;
    }
    let Some((tokens, flag)) = dflash_tokens(cx.launch()) else {
        return;
    };
    let Some(block) = cx.input.drafter.and_then(|d| d.block_size) else {
        return;
    };
    if tokens != block {
        cx.emit(
            flag,
            (None, flag),
            format!(
                "{flag} {tokens} differs from the drafter's block_size {block}: SGLang only warns (\"DFLASH block \
                 size mismatch\") and drafts blocks the drafter was not trained on; omit the flag to let SGLang read \
                 block_size from the drafter"
            ),
            Some(json!(block)),
        );
    }
}

const SGLANG_WINDOW_TOO_SMALL: Rule = Rule {
    code: LaunchCode::SglangWindowTooSmall,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "SGLang DFLASH draft window smaller than the block",
        explanation: "SGLang refuses to start when --speculative-dflash-draft-window-size (older versions: \
--speculative-draft-window-size) is below the draft tokens (the block size): the compact draft cache must hold a \
whole block.",
        source: "sgl-project/sglang python/sglang/srt/arg_groups/speculative_hook.py@sglang==0.5.23:427-434 (_handle_dflash: --speculative-draft-window-size must be >= --speculative-num-draft-tokens)",
    },
    applies: Engines::Sglang,
    needs: &[],
    check: sglang_window_too_small,
};

/// SGLang DFLASH: the draft window must hold a whole block.
fn sglang_window_too_small(cx: &mut Cx) {
    let launch = cx.launch();
    if !is_dflash(launch) {
        return;
    }
    let Some(window) = launch.sglang.draft_window_size else {
        return;
    };
    let flag = if launch.has_flag("--speculative-dflash-draft-window-size") {
        "--speculative-dflash-draft-window-size"
    } else {
        "--speculative-draft-window-size"
    };
    let block = dflash_tokens(launch)
        .map(|(t, _)| (t, "the draft tokens"))
        .or_else(|| {
            cx.input
                .drafter
                .and_then(|d| d.block_size)
                .map(|b| (b, "the drafter's block_size"))
        });
    let Some((block, what)) = block else {
        return;
    };
    if window < block {
        cx.emit(
            flag,
            (None, flag),
            format!(
                "{flag} {window} is smaller than {what} ({block}): SGLang refuses to start (the window must hold \
                 a whole block)"
            ),
            Some(json!(block)),
        );
    }
}

const SGLANG_EAGLE_PARTIAL: Rule = Rule {
    code: LaunchCode::SglangEaglePartial,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "SGLang EAGLE topk or draft tokens given without --speculative-num-steps",
        explanation: "When --speculative-num-steps is unset, SGLang asserts that --speculative-eagle-topk and \
--speculative-num-draft-tokens are unset too and chooses all three itself; setting only some of them stops the \
server at start-up. Set all three or none.",
        source: "sgl-project/sglang python/sglang/srt/server_args.py (_handle_eagle_family: assert topk and num_draft_tokens are None when num_steps is None); sgl-project/sglang docs/advanced_features/speculative_decoding.md@067ad4d",
    },
    applies: Engines::Sglang,
    needs: &[],
    check: sglang_eagle_partial,
};

/// SGLang EAGLE: `--speculative-eagle-topk` or `--speculative-num-draft-tokens` without
/// `--speculative-num-steps` trips an assertion at start-up.
fn sglang_eagle_partial(cx: &mut Cx) {
    let launch = cx.launch();
    let s = &launch.sglang;
    if !is_eagle(launch) || s.num_steps.is_some() {
        return;
    }
    let given: Vec<&str> = [
        (s.eagle_topk.is_some(), "--speculative-eagle-topk"),
        (
            s.num_draft_tokens.is_some(),
            "--speculative-num-draft-tokens",
        ),
    ]
    .iter()
    .filter(|(set, _)| *set)
    .map(|(_, n)| *n)
    .collect();
    if given.is_empty() {
        return;
    }
    let first = given[0];
    cx.emit(
        "--speculative-num-steps",
        (None, first),
        format!(
            "{} without --speculative-num-steps: SGLang asserts at start-up that all three are set or none is \
             (none: it chooses them itself)",
            given.join(" and ")
        ),
        None,
    );
}

const SGLANG_EAGLE_CHAIN: Rule = Rule {
    code: LaunchCode::SglangEagleChain,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "SGLang EAGLE with topk 1: draft tokens differ from steps + 1",
        explanation: "With --speculative-eagle-topk 1 the draft is a chain of --speculative-num-steps tokens, verified \
with the last accepted one: --speculative-num-draft-tokens must be steps + 1. SGLang replaces another value with a \
log line (\"speculative_num_draft_tokens is adjusted to speculative_num_steps + 1\"), so the flag does not do what it \
says, and its acceptance-rate metric was computed from the wrong count (sglang#13212).",
        source: "sgl-project/sglang python/sglang/srt/server_args.py (_handle_eagle_family); sgl-project/sglang#13212; THUDM/slime#1017",
    },
    applies: Engines::Sglang,
    needs: &[],
    check: sglang_eagle_chain,
};

/// SGLang EAGLE chain (topk 1): the draft tokens are steps + 1.
fn sglang_eagle_chain(cx: &mut Cx) {
    let launch = cx.launch();
    let s = &launch.sglang;
    let (Some(steps), Some(1), Some(tokens)) = (s.num_steps, s.eagle_topk, s.num_draft_tokens)
    else {
        return;
    };
    let chain = steps.saturating_add(1);
    if is_eagle(launch) && tokens != chain {
        cx.emit(
            "--speculative-num-draft-tokens",
            (None, "--speculative-num-draft-tokens"),
            format!(
                "--speculative-eagle-topk 1 drafts a chain of --speculative-num-steps {steps} tokens, so \
                 --speculative-num-draft-tokens must be {}: SGLang silently replaces {tokens} with {} (and its \
                 acceptance-rate metric is wrong when they differ, sglang#13212)",
                chain,
                chain
            ),
            Some(json!(chain)),
        );
    }
}

const SGLANG_EAGLE_TREE: Rule = Rule {
    code: LaunchCode::SglangEagleTree,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "SGLang EAGLE tree: draft tokens exceed what steps and topk can draft",
        explanation: "A draft tree of --speculative-num-steps levels with --speculative-eagle-topk branches has at most \
topk + (steps - 1)·topk² candidate nodes; --speculative-num-draft-tokens - 1 above that asks for candidates that do \
not exist, and SGLang has no start-up check for it.",
        source: "sgl-project/sglang#24054 (no start-up check of the tree arithmetic)",
    },
    applies: Engines::Sglang,
    needs: &[],
    check: sglang_eagle_tree,
};

/// SGLang EAGLE tree (topk > 1): the draft tokens cannot exceed the tree's nodes.
fn sglang_eagle_tree(cx: &mut Cx) {
    let launch = cx.launch();
    let s = &launch.sglang;
    let (Some(steps), Some(topk), Some(tokens)) = (s.num_steps, s.eagle_topk, s.num_draft_tokens)
    else {
        return;
    };
    if !is_eagle(launch) || topk <= 1 || steps == 0 || tokens == 0 {
        return;
    }
    let nodes = topk.saturating_add((steps - 1).saturating_mul(topk.saturating_mul(topk)));
    if tokens - 1 > nodes {
        cx.emit(
            "--speculative-num-draft-tokens",
            (None, "--speculative-num-draft-tokens"),
            format!(
                "--speculative-num-draft-tokens {tokens} asks for {} drafted tokens, but a tree of \
                 --speculative-num-steps {steps} with --speculative-eagle-topk {topk} has at most topk + \
                 (steps-1)·topk² = {nodes}: SGLang does not check this at start-up",
                tokens - 1
            ),
            Some(json!(nodes.saturating_add(1))),
        );
    }
}

const SGLANG_TOKEN_MAP: Rule = Rule {
    code: LaunchCode::SglangTokenMap,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "SGLang EAGLE drafter with a truncated vocabulary but no --speculative-token-map (or a token map given to EAGLE-3)",
        explanation: "An EAGLE-2 head whose output vocabulary (draft_vocab_size, else vocab_size) is smaller than the \
target's predicts ids in its own reduced vocabulary; SGLang maps them to target ids with the FR-Spec \
--speculative-token-map. Without it the ids are \
misread and acceptance collapses. For EAGLE-3 the map ships in the weights (d2t) and SGLang ignores the flag (info).",
        source: "sgl-project/sglang docs/advanced_features/speculative_decoding.md@067ad4d (FR-Spec token map; \"--speculative-token-map is ignored for EAGLE-3 models\"); sglang==0.5.23 sglang/srt/speculative/eagle_worker_v2.py (init_token_map)",
    },
    applies: Engines::Sglang,
    needs: &[],
    check: sglang_token_map,
};

/// SGLang EAGLE-2 with a truncated draft vocabulary needs `--speculative-token-map`; EAGLE-3
/// ignores it.
fn sglang_token_map(cx: &mut Cx) {
    let launch = cx.launch();
    let algorithm = launch.sglang.algorithm.as_deref();
    if algorithm == Some("EAGLE3") && launch.sglang.token_map.is_some() {
        cx.emit(
            "--speculative-token-map",
            (None, "--speculative-token-map"),
            "--speculative-token-map is ignored for EAGLE-3: the draft-to-target mapping ships in the drafter's \
             weights (d2t)"
                .to_string(),
            None,
        )
        .severity = Severity::Info;
        return;
    }
    if algorithm != Some("EAGLE") || launch.sglang.token_map.is_some() {
        return;
    }
    // Only this part reads the drafter and the target: an unmet need is found here, not before
    // the rule runs (the EAGLE-3 part above needs neither).
    let Some(drafter) = cx.input.drafter else {
        cx.lacks(Need::DrafterConfig);
        return;
    };
    // The head's own output vocabulary: `draft_vocab_size`, else its `vocab_size`.
    let Some(draft_vocab) = drafter.draft_vocab_size.or(drafter.vocab_size) else {
        return;
    };
    let Some(vocab) = cx.input.target_vocab else {
        cx.lacks(Need::TargetVocab);
        return;
    };
    if draft_vocab < vocab {
        cx.emit(
            "--speculative-token-map",
            (None, "--speculative-algorithm"),
            format!(
                "the EAGLE head predicts {draft_vocab} ids, fewer than the target's {vocab}, and no \
                 --speculative-token-map says which target token each draft id is: pass the FR-Spec token map the \
                 head was trained with"
            ),
            None,
        );
    }
}

/// The target's tensor-parallel size from the command line (1 when unset); `None` when the
/// value is not a whole number (a shell variable): the rules that need it do not guess.
fn target_tp(launch: &Launch) -> Option<u64> {
    let names: &[&str] = match launch.engine {
        Engine::Vllm => &["--tensor-parallel-size", "-tp"],
        Engine::Sglang => &["--tp-size", "--tp", "--tensor-parallel-size"],
    };
    match names.iter().find_map(|n| launch.flag(n)) {
        None => Some(1),
        Some(v) => v.parse::<u64>().ok().filter(|&t| t > 0),
    }
}

const DRAFT_TP_IGNORED: Rule = Rule {
    code: LaunchCode::DraftTpIgnored,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "vLLM's draft_tensor_parallel_size differs from the target's TP: vLLM runs the draft at the target's anyway",
        explanation: "vLLM accepts `draft_tensor_parallel_size` (1 or the target's) but builds the EAGLE-3 draft with \
the target's tensor-parallel group: with tensor_parallel_size 4 and draft_tensor_parallel_size 1 the draft still \
runs at TP 4 (vllm issue 31345; the fix, PR 31886, is open; vllm-ascend fixed its own path in PR 5519). Nothing \
fails, the setting does nothing: a warning. launch-draft-heads-tp checks the drafter's heads at the TP it really \
runs at.",
        source: "vllm-project/vllm#31345 (draft_tensor_parallel_size does not take effect); vllm-project/vllm#31886 (open fix: the draft's layers still report the target's tp_size); vllm-project/vllm-ascend#5519",
    },
    applies: Engines::Vllm,
    needs: &[],
    check: draft_tp_ignored,
};

/// vLLM's `draft_tensor_parallel_size` different from the target's: vLLM builds the draft at
/// the target's TP anyway (vllm issue 31345; the fix, PR 31886, is open).
fn draft_tp_ignored(cx: &mut Cx) {
    let Some(draft) = cx
        .launch()
        .spec("draft_tensor_parallel_size")
        .and_then(Value::as_u64)
    else {
        return;
    };
    let Some(tp) = target_tp(cx.launch()) else {
        return;
    };
    if draft == tp {
        return;
    }
    cx.emit(
        "--speculative-config.draft_tensor_parallel_size",
        (Some("--speculative-config"), "draft_tensor_parallel_size"),
        format!(
            "draft_tensor_parallel_size is {draft} but vLLM builds the draft at the target's tensor-parallel size \
             {tp} (vllm issue 31345; the fix, PR 31886, is open): the setting changes nothing"
        ),
        Some(json!(tp)),
    );
}

const DRAFT_HEADS_TP: Rule = Rule {
    code: LaunchCode::DraftHeadsTp,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the drafter's attention or KV heads are not divisible by the tensor-parallel size it runs at",
        explanation: "A draft runs at the target's tensor-parallel size (vLLM ignores draft_tensor_parallel_size, \
SGLang has no separate draft TP). Its attention splits heads across ranks and asserts num_attention_heads % tp == 0, \
and num_key_value_heads % tp == 0 (or tp % num_key_value_heads == 0 when the KV heads are replicated): a drafter \
with 12 heads under TP 8 fails while the server builds it. An error; NeMo-RL caps the draft's TP at its KV heads \
for the same reason.",
        source: "vllm-project/vllm vllm/model_executor/models/llama.py@0035bdf2b1ac243ef6f31eef27411b022461df8e (LlamaAttention.__init__: the head asserts); vllm-project/vllm#31345 (the draft runs at the target's TP); NVIDIA-NeMo/RL#3723 (TP capped at the KV heads)",
    },
    applies: Engines::Both,
    needs: &[Need::DrafterConfig],
    check: draft_heads_tp,
};

/// Drafter attention / KV heads the tensor-parallel size the draft runs at does not divide.
fn draft_heads_tp(cx: &mut Cx) {
    let Some(d) = cx.input.drafter else { return };
    let Some(tp) = target_tp(cx.launch()).filter(|&t| t > 1) else {
        return;
    };
    let heads = d.num_attention_heads;
    let kv = d.num_key_value_heads.or(heads);
    let mut wrong = Vec::new();
    if let Some(h) = heads.filter(|h| h % tp != 0) {
        wrong.push(format!("{h} attention heads"));
    }
    if let Some(k) = kv.filter(|&k| if k >= tp { k % tp != 0 } else { tp % k != 0 }) {
        wrong.push(format!("{k} KV heads"));
    }
    if wrong.is_empty() {
        return;
    }
    let (flag, how) = match cx.launch().engine {
        Engine::Vllm => (
            "--tensor-parallel-size",
            "vLLM runs the draft at the target's tensor-parallel size whatever draft_tensor_parallel_size says",
        ),
        Engine::Sglang => ("--tp-size", "SGLang runs the draft at the target's tensor-parallel size"),
    };
    cx.emit(
        flag,
        (None, flag),
        format!(
            "the drafter has {}, which tensor-parallel size {tp} does not divide: {how}, and its attention \
             asserts the heads split evenly (KV heads may also be replicated when they divide the TP size); \
             the server fails while building the draft",
            wrong.join(" and ")
        ),
        None,
    );
}

const DRAFT_QUANT_INHERITED: Rule = Rule {
    code: LaunchCode::DraftQuantInherited,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "SGLang --quantization with a draft that has no quantization_config and no --speculative-draft-model-quantization",
        explanation: "SGLang copies --quantization onto --speculative-draft-model-quantization when that is not \
given, and ModelConfig clears it only when the draft checkpoint has its own quantization_config: an unquantized \
EAGLE-3/MTP draft is then loaded as AWQ/GPTQ and the server fails (\"ValueError: Cannot find the config file for \
awq\", sglang PR 28196, open in every release): an error for AWQ/GPTQ-family methods, a warning for others (the \
draft is quantized on load). `--speculative-draft-model-quantization unquant` avoids it, except for Qwen3.5 MTP \
drafts read from a GPTQ checkpoint, which inherit GPTQ anyway (sglang PR 34622, open: accept length below 3 instead \
of ~3.5): a warning.",
        source: "sgl-project/sglang#28196 (open: the inherited quantization; ValueError for awq); sgl-project/sglang#34622 (open: unquant not honoured for the Qwen3.5 MTP draft)",
    },
    applies: Engines::Sglang,
    needs: &[Need::DrafterConfig],
    check: draft_quant_inherited,
};

/// SGLang hands a draft without its own quantization_config the target's --quantization, and
/// ignores `unquant` for a Qwen3.5 MTP draft (sglang PRs 28196, 34622; both open).
fn draft_quant_inherited(cx: &mut Cx) {
    let Some(d) = cx.input.drafter else { return };
    let launch = cx.launch();
    let draft_q = launch.flag("--speculative-draft-model-quantization");
    let int_weights = |m: &str| {
        matches!(
            m.to_ascii_lowercase().as_str(),
            "awq" | "awq_marlin" | "gptq" | "gptq_marlin" | "moe_wna16" | "auto-round"
        )
    };
    match (
        launch.flag("--quantization"),
        draft_q,
        d.quantization.as_deref(),
    ) {
        (Some(q), None, None) => {
            let q = q.to_string();
            let severity = if int_weights(&q) {
                Severity::Error
            } else {
                Severity::Warning
            };
            cx.emit(
                "--quantization",
                (None, "--quantization"),
                format!(
                    "--quantization {q} with a drafter that has no quantization_config and no \
                     --speculative-draft-model-quantization: SGLang copies {q} onto the draft and loads the \
                     unquantized weights as {q} (\"Cannot find the config file for awq\", sglang PR 28196, open); \
                     pass --speculative-draft-model-quantization unquant"
                ),
                Some(json!({ "--speculative-draft-model-quantization": "unquant" })),
            )
            .severity = severity;
        }
        (_, Some("unquant"), Some(m)) if int_weights(m) && d.kind == DrafterKind::Other => {
            let m = m.to_string();
            cx.emit(
                "--speculative-draft-model-quantization",
                (None, "--speculative-draft-model-quantization"),
                format!(
                    "--speculative-draft-model-quantization unquant with an MTP draft read from a {m} checkpoint: \
                     SGLang's Qwen3.5 MTP draft still inherits {m} (sglang PR 34622, open: accept length below 3 \
                     instead of ~3.5); check the draft's load log (`quant=`) and its acceptance"
                ),
                None,
            )
            .severity = Severity::Warning;
        }
        _ => {}
    }
}

const CHAT_TEMPLATE_OVERRIDE: Rule = Rule {
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
        source: "Luce-Org/lucebox#293 (template without the think prefill: acceptance near 0); vLLM and SGLang --chat-template (replaces the tokenizer's template)",
    },
    applies: Engines::Both,
    needs: &[],
    check: chat_template_override,
};

/// `--chat-template` (both engines): the drafter was distilled on text one template rendered
/// (Luce-Org/lucebox PR 293). (`launch` refuses a command without speculative decoding, so there
/// is always a drafter.)
fn chat_template_override(cx: &mut Cx) {
    if let Some(t) = cx.launch().flag("--chat-template") {
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

const THINKING_DEFAULT: Rule = Rule {
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
        source: "z-lab/dflash#60 (enable_thinking=False: acceptance collapses); vLLM --default-chat-template-kwargs and SGLang ServerArgs default_chat_template_kwargs (server-wide chat template kwargs)",
    },
    applies: Engines::Both,
    needs: &[],
    check: thinking_default,
};

/// `--default-chat-template-kwargs`' thinking default (both engines): a drafter trained on one
/// mode drafts badly in the other (z-lab/dflash issue 60).
fn thinking_default(cx: &mut Cx) {
    // vLLM's flag, and SGLang's of the same name (recent ServerArgs hold
    // default_chat_template_kwargs); an SGLang without it refuses the flag at start-up.
    let Some(kwargs) = cx.launch().flag("--default-chat-template-kwargs") else {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;
    use crate::launch::{parse, shell};

    fn launch(cmd: &str) -> Launch {
        let cmds = shell::from_args(&[cmd.to_string()]).unwrap();
        parse::parse_commands(&cmds, None).unwrap().0
    }

    fn facts(json: &str) -> DrafterFacts {
        DrafterFacts::from_config(
            &config::parse(std::path::Path::new("config.json"), json.as_bytes()).unwrap(),
        )
    }

    fn codes(l: &Launch, d: Option<&DrafterFacts>, hub: bool) -> Vec<(String, Severity)> {
        check(&Input {
            launch: l,
            drafter: d,
            drafter_on_hub: hub,
            drafter_sha: None,
            target_vocab: None,
        })
        .diagnostics
        .iter()
        .map(|d| (d.code.as_str().to_string(), d.severity))
        .collect()
    }

    const DFLASH16: &str = r#"{"architectures": ["DFlashDraftModel"], "block_size": 16,
        "dflash_config": {"mask_token_id": 1, "target_layer_ids": [1]},
        "layer_types": ["sliding_attention", "full_attention"]}"#;
    const DSPARK7: &str = r#"{"architectures": ["DSparkDraftModel"], "block_size": 7,
        "dflash_config": {"projector_type": "dspark", "mask_token_id": 1, "target_layer_ids": [1]}}"#;

    #[test]
    fn drafter_kinds() {
        assert_eq!(facts(DFLASH16).kind, DrafterKind::Dflash);
        assert!(facts(DFLASH16).mixed_attention);
        assert_eq!(facts(DSPARK7).kind, DrafterKind::Dspark);
        assert_eq!(facts(DSPARK7).block_size, Some(7));
        assert_eq!(
            facts(r#"{"architectures": ["LlamaForCausalLMEagle3"], "draft_vocab_size": 32000}"#)
                .kind,
            DrafterKind::Eagle3
        );
        assert_eq!(
            facts(r#"{"architectures": ["Qwen3ForCausalLM"]}"#).kind,
            DrafterKind::Other
        );
    }

    #[test]
    fn dspark_may_draft_block_size_dflash_may_not() {
        let k7 = launch(
            r#"VLLM_USE_V2_MODEL_RUNNER=1 vllm serve T --speculative-config '{"method": "dspark", "model": "d", "num_speculative_tokens": 7}'"#,
        );
        assert!(codes(&k7, Some(&facts(DSPARK7)), false).is_empty());
        let k16 = launch(
            r#"VLLM_USE_V2_MODEL_RUNNER=1 vllm serve T --speculative-config '{"method": "dflash", "model": "d", "num_speculative_tokens": 16}'"#,
        );
        assert_eq!(
            codes(&k16, Some(&facts(DFLASH16)), false),
            vec![("launch-k-exceeds-block".to_string(), Severity::Warning)]
        );
    }

    #[test]
    fn the_runner_variable_decides_the_mixed_attention_severity() {
        let spec = r#"--speculative-config '{"method": "dflash", "model": "d", "num_speculative_tokens": 15}'"#;
        let d = facts(DFLASH16);
        let unset = launch(&format!("vllm serve T {spec}"));
        assert_eq!(
            codes(&unset, Some(&d), false),
            vec![(
                "launch-mixed-attention-runner".to_string(),
                Severity::Warning
            )]
        );
        let off = launch(&format!("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve T {spec}"));
        assert_eq!(
            codes(&off, Some(&d), false),
            vec![("launch-mixed-attention-runner".to_string(), Severity::Error)]
        );
    }

    #[test]
    fn eagle_arithmetic() {
        let ok = launch("python -m sglang.launch_server --model-path T --speculative-algorithm EAGLE --speculative-draft-model-path d --speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 16");
        assert!(codes(&ok, None, false).is_empty());
        let chain = launch("python -m sglang.launch_server --model-path T --speculative-algorithm EAGLE3 --speculative-draft-model-path d --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4");
        assert!(codes(&chain, None, false).is_empty());
        let tree = launch("python -m sglang.launch_server --model-path T --speculative-algorithm EAGLE --speculative-draft-model-path d --speculative-num-steps 2 --speculative-eagle-topk 2 --speculative-num-draft-tokens 8");
        // 7 drafted > 2 + 1·4 = 6
        assert_eq!(
            codes(&tree, None, false),
            vec![("launch-sglang-eagle-tree".to_string(), Severity::Warning)]
        );
    }

    #[test]
    fn a_hub_drafter_at_a_sha_is_pinned() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let l = launch(&format!(
            r#"python -m sglang.launch_server --model-path T --speculative-algorithm DFLASH --speculative-draft-model-path o/d --speculative-draft-model-revision {sha}"#
        ));
        assert!(codes(&l, None, true).is_empty());
        let l = launch("python -m sglang.launch_server --model-path T --speculative-algorithm DFLASH --speculative-draft-model-path o/d");
        assert_eq!(
            codes(&l, None, true),
            vec![("launch-revision-unpinned".to_string(), Severity::Warning)]
        );
    }

    #[test]
    fn huge_numbers_do_not_overflow() {
        let max = u64::MAX;
        let l = launch(&format!(
            r#"vllm serve T --speculative-config '{{"method": "dflash", "model": "d", "num_speculative_tokens": {max}}}' --max-num-seqs {max} --max-num-batched-tokens {max}"#
        ));
        let _ = codes(&l, Some(&facts(DFLASH16)), false);
        let l = launch(&format!(
            "python -m sglang.launch_server --model-path T --speculative-algorithm EAGLE --speculative-draft-model-path d \
             --speculative-num-steps {max} --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
        ));
        assert_eq!(
            codes(&l, None, false),
            vec![("launch-sglang-eagle-chain".to_string(), Severity::Warning)]
        );
    }

    fn run(l: &Launch, d: Option<&DrafterFacts>, target_vocab: Option<u64>) -> Outcome {
        check(&Input {
            launch: l,
            drafter: d,
            drafter_on_hub: false,
            drafter_sha: None,
            target_vocab,
        })
    }

    fn skipped(o: &Outcome) -> Vec<(&'static str, Vec<Need>)> {
        o.skipped
            .iter()
            .map(|s| (s.code.as_str(), s.needs.clone()))
            .collect()
    }

    /// The "not checked" line names the rules the unreadable drafter kept from running.
    const DRAFTER_LINE: &str = "the rules that need the drafter's config (launch-method-family, \
        launch-k-exceeds-block, launch-mixed-attention-runner, launch-draft-heads-tp): the drafter's \
        config.json could not be read";

    /// An unreadable drafter: the engine skips the rules of the command's engine that need its
    /// config, lists them, and the report says so once; the rules that need only the command
    /// still run.
    #[test]
    fn rules_needing_the_drafter_are_skipped_and_listed() {
        let l = launch(
            r#"vllm serve T --speculative-config '{"method": "dflash", "model": "o/d", "num_speculative_tokens": 15, "tensor_parallel_size": 2}'"#,
        );
        let o = run(&l, None, None);
        let for_want_of_the_drafter = |codes: &[&'static str]| {
            codes
                .iter()
                .map(|c| (*c, vec![Need::DrafterConfig]))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            skipped(&o),
            for_want_of_the_drafter(&[
                "launch-method-family",
                "launch-k-exceeds-block",
                "launch-mixed-attention-runner",
                "launch-draft-heads-tp",
            ])
        );
        assert_eq!(o.not_checked[0], DRAFTER_LINE);
        assert_eq!(
            o.not_checked.iter().filter(|n| *n == DRAFTER_LINE).count(),
            1
        );
        assert!(o
            .diagnostics
            .iter()
            .any(|d| d.code.as_str() == "launch-rejected-key"));

        let sglang = launch("python -m sglang.launch_server --model-path T --speculative-algorithm DFLASH --speculative-draft-model-path o/d --quantization awq");
        let o = run(&sglang, None, None);
        assert_eq!(
            skipped(&o),
            for_want_of_the_drafter(&[
                "launch-method-family",
                "launch-sglang-draft-tokens-mismatch",
                "launch-draft-quant-inherited",
                "launch-draft-heads-tp",
            ])
        );
        // With the drafter read, nothing is skipped.
        assert!(run(&l, Some(&facts(DFLASH16)), None).skipped.is_empty());
    }

    /// A command that names no drafter (a model-free method) has no config to miss.
    #[test]
    fn no_drafter_named_nothing_listed() {
        let l = launch(
            r#"vllm serve T --speculative-config '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}'"#,
        );
        let o = run(&l, None, None);
        assert!(o.skipped.is_empty(), "{:?}", o.skipped);
        assert!(!o.not_checked.iter().any(|n| n.contains("drafter's config")));
    }

    /// The token-map rule finds its needs while checking: the target's vocabulary only for an
    /// EAGLE head with no map.
    #[test]
    fn the_token_map_rule_lists_the_target_vocabulary_it_lacked() {
        let l = launch("python -m sglang.launch_server --model-path T --speculative-algorithm EAGLE --speculative-draft-model-path d --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4");
        let head = facts(r#"{"architectures": ["LlamaForCausalLMEagle"], "vocab_size": 32000}"#);
        let o = run(&l, Some(&head), None);
        assert_eq!(
            skipped(&o),
            vec![("launch-sglang-token-map", vec![Need::TargetVocab])]
        );
        assert_eq!(o.not_checked, vec![Need::TargetVocab.not_checked(&[])]);
        let o = run(&l, Some(&head), Some(151_936));
        assert!(o.skipped.is_empty());
        assert_eq!(
            o.diagnostics
                .iter()
                .map(|d| d.code.as_str())
                .collect::<Vec<_>>(),
            vec!["launch-sglang-token-map"]
        );
    }

    /// Each rule is declared once, and each engine runs only its own rules and the shared ones.
    #[test]
    fn rules_are_declared_once_with_their_engines() {
        for (i, r) in RULES.iter().enumerate() {
            assert!(
                RULES[..i].iter().all(|o| o.code != r.code),
                "{} declared twice",
                r.code.as_str()
            );
            assert!(!r.info.summary.is_empty() && !r.info.source.is_empty());
        }
        let vllm =
            launch(r#"vllm serve T --speculative-config '{"method": "dflash", "model": "d"}'"#);
        let cx = Cx {
            input: &Input {
                launch: &vllm,
                drafter: None,
                drafter_on_hub: false,
                drafter_sha: None,
                target_vocab: None,
            },
            rule: &RULES[0],
            diagnostics: Vec::new(),
            not_checked: Vec::new(),
            late: Vec::new(),
        };
        assert!(LaunchRules::in_scope(&cx, Engines::Vllm));
        assert!(LaunchRules::in_scope(&cx, Engines::Both));
        assert!(!LaunchRules::in_scope(&cx, Engines::Sglang));
    }
}
