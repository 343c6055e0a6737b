//! The launch rules: the engine's flags and environment against each other and against the
//! drafter's config. Pure functions of a [`Launch`], the [`Deployment`] it describes and the
//! [`DrafterFacts`] read from the drafter's `config.json`. The rules live by topic: [`drafter`]
//! (its facts, the Hub revision), [`vllm`] (vLLM's own flags), [`sglang`] (SGLang's
//! speculative flags), [`parallel`] (tensor parallelism), [`template`] (chat template and
//! thinking). The engine claims shared with lint (method, K, draft tokens, mixed attention, an
//! inherited quantization) are the deployment rules (`rules::deployment`), which [`check`] runs
//! first on the same [`Deployment`].
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

mod drafter;
mod llama;
mod llama_mtp;
mod parallel;
mod sglang;
mod template;
mod vllm;

use serde::Serialize;
use serde_json::Value;

use super::parse::Launch;
use super::LaunchCode;
use crate::deployment::Deployment;
use crate::diagnostic::rule::{Describe, NeedKind, RuleFamily};
use crate::diagnostic::{Code, Diagnostic};
use crate::rules::deployment::DrafterConfig;
use crate::rules::Engine;

pub use drafter::DrafterFacts;
use drafter::REVISION_UNPINNED;
pub use llama::GgufModel;
use llama::{
    LLAMA_DRAFT_NOT_USED, LLAMA_DRAFT_TYPE_WITHOUT_MODEL, LLAMA_DSPARK_CONFIDENCE,
    LLAMA_FLAG_REMOVED, LLAMA_K_BLOCK, LLAMA_MTP_HEAD_MISSING, LLAMA_SPEC_TYPE_DRAFT,
    LLAMA_SPEC_TYPE_UNKNOWN,
};
use llama_mtp::LLAMA_MTP_DRAFT_VOCAB;
use parallel::{DRAFT_HEADS_TP, DRAFT_TP_IGNORED};
use sglang::{
    DRAFTER_MISSING, SGLANG_BLOCK_SIZE_CONFLICT, SGLANG_EAGLE_CHAIN, SGLANG_EAGLE_PARTIAL,
    SGLANG_EAGLE_TREE, SGLANG_TOKEN_MAP, SGLANG_WINDOW_TOO_SMALL,
};
use template::{CHAT_TEMPLATE_OVERRIDE, THINKING_DEFAULT};
use vllm::{BATCHED_TOKENS, REJECTED_KEY};

/// What the rules see.
pub struct Input<'a> {
    pub launch: &'a Launch,
    /// The deployment the command describes (`launch::deployment::of`): what the deployment
    /// rules judge, and what the launch rules read the method, K, tensor-parallel sizes and chat
    /// template from.
    pub deployment: &'a Deployment,
    /// The drafter's config and family, for the deployment rules.
    pub drafter_config: Option<DrafterConfig<'a>>,
    /// The drafter's facts, when its config could be read.
    pub drafter: Option<&'a DrafterFacts>,
    /// The drafter was looked up on the Hub (not a local path).
    pub drafter_on_hub: bool,
    /// The commit the Hub resolved the drafter to, when it was asked.
    pub drafter_sha: Option<&'a str>,
    /// The target's vocabulary (embedding rows), when known.
    pub target_vocab: Option<u64>,
    /// llama.cpp and koboldcpp: the draft GGUF's header facts, when the file could be read.
    pub draft_gguf: Option<&'a GgufModel>,
    /// llama.cpp and koboldcpp: the target GGUF's header facts, when the file could be read.
    pub target_gguf: Option<&'a GgufModel>,
}

/// The engines a launch rule applies to: it runs only on a command that starts one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Engines(pub &'static [Engine]);

impl Describe for Engines {
    fn describe(self) -> String {
        let names: Vec<&str> = self.0.iter().map(|e| e.display()).collect();
        format!("{} commands", names.join(" and "))
    }
}

/// vLLM's commands.
pub(super) const VLLM: Engines = Engines(&[Engine::Vllm]);
/// SGLang's commands.
pub(super) const SGLANG: Engines = Engines(&[Engine::Sglang]);
/// vLLM's and SGLang's commands.
pub(super) const VLLM_SGLANG: Engines = Engines(&[Engine::Vllm, Engine::Sglang]);
/// llama.cpp's commands (koboldcpp vendors its speculative decoding behind flags of its own,
/// which these rules do not read).
pub(super) const LLAMA_CPP: Engines = Engines(&[Engine::LlamaCpp]);

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
    /// The draft model's GGUF header (llama.cpp, koboldcpp): a local `.gguf` file the command
    /// names, or `--drafter FILE`.
    DraftGguf,
    /// The target model's GGUF header (llama.cpp, koboldcpp): a local `.gguf` file the command
    /// names, or `--target FILE`.
    TargetGguf,
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
            Need::DraftGguf => {
                "the draft model's GGUF header (a local .gguf file the command names, or --drafter FILE)"
            }
            Need::TargetGguf => {
                "the target model's GGUF header (a local .gguf file the command names, or --target FILE)"
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
            Need::DraftGguf => format!(
                "the rules that need the draft's GGUF header ({}): the draft model's .gguf file could not be read",
                codes.join(", ")
            ),
            Need::TargetGguf => format!(
                "the rules that need the target's GGUF header ({}): the target's .gguf file could not be read",
                codes.join(", ")
            ),
        }
    }
}

/// The launch family of rules: they judge one engine command ([`Cx`]).
pub struct LaunchRules;

/// A launch rule: its code, its documentation, its engines, its needs, and its check.
pub type Rule = crate::diagnostic::rule::Rule<LaunchRules>;

/// A rule that did not run (a launch rule, or a deployment rule launch ran), and the inputs it
/// lacked.
pub type Skipped = crate::diagnostic::rule::Skipped<Code, Need>;

impl RuleFamily for LaunchRules {
    type Cx<'a> = Cx<'a>;
    type Code = LaunchCode;
    type Scope = Engines;
    type Need = Need;

    fn in_scope(cx: &Cx<'_>, scope: Engines) -> bool {
        scope.0.contains(&cx.launch().engine)
    }

    fn has(cx: &Cx<'_>, need: Need) -> bool {
        match need {
            Need::DrafterConfig => cx.input.drafter.is_some(),
            Need::TargetVocab => cx.input.target_vocab.is_some(),
            Need::DraftGguf => cx.input.draft_gguf.is_some(),
            Need::TargetGguf => cx.input.target_gguf.is_some(),
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
    REVISION_UNPINNED,
    // vLLM
    REJECTED_KEY,
    DRAFT_TP_IGNORED,
    BATCHED_TOKENS,
    // SGLang
    DRAFTER_MISSING,
    SGLANG_BLOCK_SIZE_CONFLICT,
    SGLANG_WINDOW_TOO_SMALL,
    SGLANG_EAGLE_PARTIAL,
    SGLANG_EAGLE_CHAIN,
    SGLANG_EAGLE_TREE,
    SGLANG_TOKEN_MAP,
    // both
    DRAFT_HEADS_TP,
    CHAT_TEMPLATE_OVERRIDE,
    THINKING_DEFAULT,
    // llama.cpp and koboldcpp
    LLAMA_SPEC_TYPE_UNKNOWN,
    LLAMA_FLAG_REMOVED,
    LLAMA_DRAFT_TYPE_WITHOUT_MODEL,
    LLAMA_DRAFT_NOT_USED,
    LLAMA_SPEC_TYPE_DRAFT,
    LLAMA_MTP_HEAD_MISSING,
    LLAMA_DSPARK_CONFIDENCE,
    LLAMA_K_BLOCK,
    LLAMA_MTP_DRAFT_VOCAB,
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
    // The deployment rules first (the engine claims shared with lint), then the launch rules;
    // both lists of skipped rules feed the one "not checked" line per missing input.
    let judged = crate::rules::deployment::check(input.deployment, input.drafter_config);
    let mut skipped: Vec<Skipped> = judged
        .skipped
        .into_iter()
        .map(|s| Skipped {
            code: s.code.into(),
            needs: s
                .needs
                .into_iter()
                .map(|n| match n {
                    crate::rules::deployment::Need::DrafterConfig => Need::DrafterConfig,
                })
                .collect(),
        })
        .collect();
    let mut diagnostics = judged.findings;
    skipped.extend(
        crate::diagnostic::rule::run(RULES, &mut cx)
            .into_iter()
            .map(|s| Skipped {
                code: s.code.into(),
                needs: s.needs,
            }),
    );
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
    diagnostics.extend(cx.diagnostics);
    Outcome {
        diagnostics,
        not_checked,
        skipped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;
    use crate::diagnostic::Severity;
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

    fn config(json: &str) -> config::ConfigFile {
        config::parse(std::path::Path::new("config.json"), json.as_bytes()).unwrap()
    }

    /// The launch and deployment rules on `l`, with the drafter's config `drafter` when read.
    fn run_with(
        l: &Launch,
        drafter: Option<&str>,
        hub: bool,
        target_vocab: Option<u64>,
    ) -> Outcome {
        let config = drafter.map(config);
        let facts = config.as_ref().map(DrafterFacts::from_config);
        let detection = config
            .as_ref()
            .and_then(|c| crate::rules::family::detect(c.root()));
        let deployment = crate::launch::deployment::of(l, l.engine.into(), None);
        check(&Input {
            launch: l,
            deployment: &deployment,
            drafter_config: config.as_ref().map(|config| DrafterConfig {
                config,
                detection: detection.as_ref(),
            }),
            drafter: facts.as_ref(),
            drafter_on_hub: hub,
            drafter_sha: None,
            target_vocab,
            draft_gguf: None,
            target_gguf: None,
        })
    }

    fn codes(l: &Launch, d: Option<&str>, hub: bool) -> Vec<(String, Severity)> {
        run_with(l, d, hub, None)
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
        use crate::family::Family;
        assert_eq!(facts(DFLASH16).kind, Some(Family::Dflash));
        assert!(facts(DFLASH16).mixed_attention);
        assert_eq!(facts(DSPARK7).kind, Some(Family::Dspark));
        assert_eq!(facts(DSPARK7).block_size, Some(7));
        assert_eq!(
            facts(r#"{"architectures": ["LlamaForCausalLMEagle3"], "draft_vocab_size": 32000}"#)
                .kind,
            Some(Family::Eagle3)
        );
        assert_eq!(
            facts(r#"{"architectures": ["Qwen3ForCausalLM"]}"#).kind,
            None
        );
        // The JSON keeps the kind's name, `other` when none.
        let other = serde_json::to_value(facts(r#"{"architectures": ["Qwen3ForCausalLM"]}"#));
        assert_eq!(other.unwrap()["kind"], "other");
        assert_eq!(
            serde_json::to_value(facts(DSPARK7)).unwrap()["kind"],
            "dspark"
        );
    }

    #[test]
    fn dspark_may_draft_block_size_dflash_may_not() {
        let k7 = launch(
            r#"VLLM_USE_V2_MODEL_RUNNER=1 vllm serve T --speculative-config '{"method": "dspark", "model": "d", "num_speculative_tokens": 7}'"#,
        );
        assert!(codes(&k7, Some(DSPARK7), false).is_empty());
        let k16 = launch(
            r#"VLLM_USE_V2_MODEL_RUNNER=1 vllm serve T --speculative-config '{"method": "dflash", "model": "d", "num_speculative_tokens": 16}'"#,
        );
        assert_eq!(
            codes(&k16, Some(DFLASH16), false),
            vec![(
                "num-speculative-tokens-too-large".to_string(),
                Severity::Warning
            )]
        );
    }

    #[test]
    fn the_runner_variable_decides_the_mixed_attention_severity() {
        let spec = r#"--speculative-config '{"method": "dflash", "model": "d", "num_speculative_tokens": 15}'"#;
        let d = DFLASH16;
        // vLLM 0.26+ forces the V2 runner for a mixed drafter when the variable is unset.
        let unset = launch(&format!("vllm serve T {spec}"));
        assert_eq!(codes(&unset, Some(d), false), vec![]);
        let off = launch(&format!("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve T {spec}"));
        assert_eq!(
            codes(&off, Some(d), false),
            vec![("mixed-attention-vllm".to_string(), Severity::Error)]
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
        let _ = codes(&l, Some(DFLASH16), false);
        let l = launch(&format!(
            "python -m sglang.launch_server --model-path T --speculative-algorithm EAGLE --speculative-draft-model-path d \
             --speculative-num-steps {max} --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
        ));
        assert_eq!(
            codes(&l, None, false),
            vec![("launch-sglang-eagle-chain".to_string(), Severity::Warning)]
        );
    }

    fn run(l: &Launch, d: Option<&str>, target_vocab: Option<u64>) -> Outcome {
        run_with(l, d, false, target_vocab)
    }

    fn skipped(o: &Outcome) -> Vec<(&str, Vec<Need>)> {
        o.skipped
            .iter()
            .map(|s| (s.code.as_str(), s.needs.clone()))
            .collect()
    }

    /// The "not checked" line names the rules the unreadable drafter kept from running.
    const DRAFTER_LINE: &str = "the rules that need the drafter's config (speculative-config-method, \
        num-speculative-tokens-too-large, num-speculative-tokens-too-small, mixed-attention-vllm, dflash2-v1-runner, \
        launch-draft-heads-tp): the drafter's \
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
                "speculative-config-method",
                "num-speculative-tokens-too-large",
                "num-speculative-tokens-too-small",
                "mixed-attention-vllm",
                "dflash2-v1-runner",
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
                "speculative-config-method",
                "num-draft-tokens-mismatch",
                "draft-quant-inherited",
                "launch-draft-heads-tp",
            ])
        );
        // With the drafter read, nothing is skipped.
        assert!(run(&l, Some(DFLASH16), None).skipped.is_empty());
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
        let head = r#"{"architectures": ["LlamaForCausalLMEagle"], "vocab_size": 32000}"#;
        let o = run(&l, Some(head), None);
        assert_eq!(
            skipped(&o),
            vec![("launch-sglang-token-map", vec![Need::TargetVocab])]
        );
        assert_eq!(o.not_checked, vec![Need::TargetVocab.not_checked(&[])]);
        let o = run(&l, Some(head), Some(151_936));
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
            assert!(!r.info.summary.is_empty());
        }
        let vllm =
            launch(r#"vllm serve T --speculative-config '{"method": "dflash", "model": "d"}'"#);
        let deployment = crate::launch::deployment::of(&vllm, vllm.engine.into(), None);
        let cx = Cx {
            input: &Input {
                launch: &vllm,
                deployment: &deployment,
                drafter_config: None,
                drafter: None,
                drafter_on_hub: false,
                drafter_sha: None,
                target_vocab: None,
                draft_gguf: None,
                target_gguf: None,
            },
            rule: &RULES[0],
            diagnostics: Vec::new(),
            not_checked: Vec::new(),
            late: Vec::new(),
        };
        assert!(LaunchRules::in_scope(&cx, VLLM));
        assert!(LaunchRules::in_scope(&cx, VLLM_SGLANG));
        assert!(!LaunchRules::in_scope(&cx, SGLANG));
    }

    fn llama_outcome(cmd: &str, draft: Option<GgufModel>) -> Outcome {
        let l = launch(cmd);
        let deployment = crate::launch::deployment::of(&l, l.engine.into(), None);
        check(&Input {
            launch: &l,
            deployment: &deployment,
            drafter_config: None,
            drafter: None,
            drafter_on_hub: false,
            drafter_sha: None,
            target_vocab: None,
            draft_gguf: draft.as_ref(),
            target_gguf: None,
        })
    }

    fn llama(cmd: &str, draft: Option<GgufModel>) -> Vec<(String, Severity)> {
        llama_outcome(cmd, draft)
            .diagnostics
            .iter()
            .map(|d| (d.code.as_str().to_string(), d.severity))
            .collect()
    }

    fn gguf(arch: &str, inferred: Option<&'static str>) -> GgufModel {
        GgufModel {
            file: "d.gguf".into(),
            architecture: Some(arch.into()),
            block_count: Some(2),
            inferred_type: inferred,
            tokens: Some(300),
            nextn_layers: None,
            block_size: None,
            sample_from_anchor: None,
            has_confidence_head: None,
            vocabulary: None,
        }
    }

    #[test]
    fn llama_lines_written_for_older_builds() {
        let e = |code: &str| (code.to_string(), Severity::Error);
        // The line of llama.cpp's older docs: refused for --draft-max and -cd at 0c1e570, and
        // with a plain draft and no --spec-type it would not draft either.
        let got = llama(
            "llama-server -m t.gguf -md d.gguf --draft-max 16 -cd 4096",
            Some(gguf("qwen3", None)),
        );
        assert_eq!(
            got,
            vec![
                e("launch-llama-flag-removed"),
                e("launch-llama-flag-removed"),
                e("launch-llama-draft-not-used"),
            ]
        );
        // The same model with its type and the new flag: clean.
        assert!(llama(
            "llama-server -m t.gguf -md d.gguf --spec-type draft-simple --spec-draft-n-max 16",
            Some(gguf("qwen3", None)),
        )
        .is_empty());
        // A DFlash GGUF is typed by its metadata: no --spec-type needed (K up to its block - 1).
        assert!(llama(
            "llama-server -m t.gguf -md d.gguf --spec-draft-n-max 15",
            Some(gguf("dflash", Some("draft-dflash")))
        )
        .is_empty());
        // koboldcpp keeps --draft-max as an alias of --draftamount.
        assert!(llama(
            "koboldcpp --model t.gguf --draftmodel d.gguf --draft-max 8",
            Some(gguf("qwen3", None))
        )
        .is_empty());
    }

    #[test]
    fn llama_types_against_the_draft() {
        let got = llama("llama-server -m t.gguf --spec-type draft-eagle4", None);
        assert_eq!(
            got,
            vec![(
                "launch-llama-spec-type-unknown".to_string(),
                Severity::Error
            )]
        );
        let got = llama("llama-server -m t.gguf --spec-type draft-dflash", None);
        assert_eq!(
            got,
            vec![(
                "launch-llama-draft-type-without-model".to_string(),
                Severity::Error
            )]
        );
        let got = llama(
            "llama-server -hf org/T-GGUF --spec-type draft-mtp,draft-dflash",
            None,
        );
        assert_eq!(
            got,
            vec![(
                "launch-llama-draft-type-without-model".to_string(),
                Severity::Info
            )]
        );
        let got = llama(
            "llama-server -m t.gguf -md d.gguf --spec-type draft-dflash",
            Some(gguf("qwen3", None)),
        );
        assert_eq!(
            got,
            vec![(
                "launch-llama-spec-type-draft".to_string(),
                Severity::Warning
            )]
        );
        // Without the draft's header the rules that need it are skipped, not guessed.
        let o = llama_outcome("llama-server -m t.gguf -md d.gguf", None);
        assert!(o.diagnostics.is_empty());
        assert!(o
            .skipped
            .iter()
            .any(|s| s.code.as_str() == "launch-llama-draft-not-used"));
    }
}
