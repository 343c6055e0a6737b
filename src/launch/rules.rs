//! The launch rules: the engine's flags and environment against each other and against the
//! drafter's config. Pure functions of a [`Launch`] and the [`DrafterFacts`] read from the
//! drafter's `config.json`; one small function per rule, each emitting its own code.
//!
//! A rule that needs something the command does not say (a flag left at the engine's default,
//! a drafter config that could not be read) does not guess: it adds a line to the "not checked"
//! notes saying what it would have checked and why it could not.

use serde::Serialize;
use serde_json::{json, Value};

use super::parse::Launch;
use super::{info, LaunchCode};
use crate::config::ConfigFile;
use crate::diagnostic::{Diagnostic, Severity};
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

/// Findings and the checks that could not be made.
#[derive(Debug, Default)]
pub struct Outcome {
    pub diagnostics: Vec<Diagnostic>,
    pub not_checked: Vec<String>,
}

struct Cx<'a> {
    input: &'a Input<'a>,
    out: Outcome,
}

impl Cx<'_> {
    fn launch(&self) -> &Launch {
        self.input.launch
    }

    /// A diagnostic at `path`, located in the input file at `needle` (after `after`).
    fn emit(
        &mut self,
        code: LaunchCode,
        path: &str,
        anchor: (Option<&str>, &str),
        message: String,
        expected: Option<Value>,
    ) -> &mut Diagnostic {
        let origin = &self.input.launch.origin;
        let mut d = Diagnostic::new(code, info(code), path, message);
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
        self.out.diagnostics.push(d);
        self.out.diagnostics.last_mut().expect("just pushed")
    }

    fn not_checked(&mut self, what: impl Into<String>) {
        self.out.not_checked.push(what.into());
    }
}

/// Runs every launch rule.
pub fn check(input: &Input) -> Outcome {
    let mut cx = Cx {
        input,
        out: Outcome::default(),
    };
    if input.drafter.is_none() && input.launch.drafter.is_some() {
        cx.not_checked(
            "the rules that need the drafter's config (method vs family, K vs block_size, mixed attention, \
             SGLang draft tokens vs block_size): the drafter's config.json could not be read",
        );
    }
    method_family(&mut cx);
    revision_unpinned(&mut cx);
    match input.launch.engine {
        Engine::Vllm => {
            rejected_key(&mut cx);
            draft_tp_ignored(&mut cx);
            num_speculative_tokens_missing(&mut cx);
            k_exceeds_block(&mut cx);
            batched_tokens(&mut cx);
            mixed_attention_runner(&mut cx);
        }
        Engine::Sglang => {
            drafter_missing(&mut cx);
            sglang_block_size_conflict(&mut cx);
            sglang_draft_tokens_mismatch(&mut cx);
            sglang_window_too_small(&mut cx);
            sglang_eagle_partial(&mut cx);
            sglang_eagle_chain(&mut cx);
            sglang_eagle_tree(&mut cx);
            sglang_token_map(&mut cx);
            draft_quant_inherited(&mut cx);
        }
    }
    draft_heads_tp(&mut cx);
    chat_template_override(&mut cx);
    for flag in &input.launch.unresolved {
        cx.out.not_checked.push(format!(
            "{flag}: its value is a shell variable the input never assigns"
        ));
    }
    cx.out
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
                LaunchCode::MethodFamily,
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
                    LaunchCode::MethodFamily,
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
    cx.emit(
        LaunchCode::RevisionUnpinned,
        path,
        (None, anchor),
        message,
        expected,
    );
}

/// `tensor_parallel_size` inside vLLM's speculative config.
fn rejected_key(cx: &mut Cx) {
    let Some(value) = cx.launch().spec("tensor_parallel_size").cloned() else {
        return;
    };
    cx.emit(
        LaunchCode::RejectedKey,
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
                LaunchCode::NumSpeculativeTokensMissing,
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
                LaunchCode::NumSpeculativeTokensMissing,
                "--speculative-config.num_speculative_tokens",
                (Some("--speculative-config"), "num_speculative_tokens"),
                format!("num_speculative_tokens is {v}: vLLM requires a positive integer{hint}"),
                suggest,
            );
        }
        Some(_) => {}
    }
}

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
            LaunchCode::KExceedsBlock,
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
                    LaunchCode::BatchedTokens,
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
                LaunchCode::MixedAttentionRunner,
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
                LaunchCode::MixedAttentionRunner,
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

/// SGLang DFLASH without a drafter path.
fn drafter_missing(cx: &mut Cx) {
    let launch = cx.launch();
    if launch.sglang.algorithm.as_deref() == Some("DFLASH") && launch.drafter.is_none() {
        cx.emit(
            LaunchCode::DrafterMissing,
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

/// SGLang DFLASH: `--speculative-num-draft-tokens` and `--speculative-dflash-block-size` differ.
fn sglang_block_size_conflict(cx: &mut Cx) {
    let s = &cx.launch().sglang;
    let (Some(tokens), Some(block)) = (s.num_draft_tokens, s.dflash_block_size) else {
        return;
    };
    if is_dflash(cx.launch()) && tokens != block {
        cx.emit(
            LaunchCode::SglangBlockSizeConflict,
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
            LaunchCode::SglangDraftTokensMismatch,
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
            LaunchCode::SglangWindowTooSmall,
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
        LaunchCode::SglangEaglePartial,
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
            LaunchCode::SglangEagleChain,
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
            LaunchCode::SglangEagleTree,
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

/// SGLang EAGLE-2 with a truncated draft vocabulary needs `--speculative-token-map`; EAGLE-3
/// ignores it.
fn sglang_token_map(cx: &mut Cx) {
    let launch = cx.launch();
    let algorithm = launch.sglang.algorithm.as_deref();
    if algorithm == Some("EAGLE3") && launch.sglang.token_map.is_some() {
        cx.emit(
            LaunchCode::SglangTokenMap,
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
    let Some(drafter) = cx.input.drafter else {
        return;
    };
    // The head's own output vocabulary: `draft_vocab_size`, else its `vocab_size`.
    let Some(draft_vocab) = drafter.draft_vocab_size.or(drafter.vocab_size) else {
        return;
    };
    let Some(vocab) = cx.input.target_vocab else {
        cx.not_checked(
            "--speculative-token-map: the target's vocabulary is unknown, so a truncated EAGLE head cannot be told",
        );
        return;
    };
    if draft_vocab < vocab {
        cx.emit(
            LaunchCode::SglangTokenMap,
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
        LaunchCode::DraftTpIgnored,
        "--speculative-config.draft_tensor_parallel_size",
        (Some("--speculative-config"), "draft_tensor_parallel_size"),
        format!(
            "draft_tensor_parallel_size is {draft} but vLLM builds the draft at the target's tensor-parallel size \
             {tp} (vllm issue 31345; the fix, PR 31886, is open): the setting changes nothing"
        ),
        Some(json!(tp)),
    );
}

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
        LaunchCode::DraftHeadsTp,
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
                LaunchCode::DraftQuantInherited,
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
                LaunchCode::DraftQuantInherited,
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

/// `--chat-template` and `--default-chat-template-kwargs`' thinking default (both engines): the drafter was
/// distilled on text one template rendered (Luce-Org/lucebox PR 293; z-lab/dflash issue 60).
/// (`launch` refuses a command without speculative decoding, so there is always a drafter.)
fn chat_template_override(cx: &mut Cx) {
    if let Some(t) = cx.launch().flag("--chat-template") {
        let shown = crate::text::clip(t, 80);
        cx.emit(
            LaunchCode::ChatTemplateOverride,
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
        LaunchCode::ThinkingDefault,
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
}
