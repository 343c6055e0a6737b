//! A classic draft model against its target: the vocabulary, by size and by token text.
//!
//! A draft model (vLLM `draft_model`, SGLang `STANDALONE`, llama.cpp `-md`) is an ordinary LM
//! whose token ids the target verifies as its own, so every id must mean the same text on both
//! sides. Engines check part of it, each its own part: vLLM the configs' `vocab_size` (and
//! nothing when they are equal, which is how a hand-edited `vocab_size` hides a different
//! tokenizer, vllm#42775), SGLang the sizes and `get_vocab()` equality, llama.cpp the vocab
//! type, bos/eos, add_bos/add_eos and the text of every id from 5 on, refusing at older builds
//! and translating (retokenizing) at newer ones. These rules compare all of it, from the
//! comparison the pipeline attached ([`crate::vocab::Comparison`]), and rate each difference by
//! what the engine given does with it.

use super::{Applies, ByEngine, Ctx, Engine, LintCode, Need, ReleaseRow, Rule};
use crate::diagnostic::{CodeInfo, Severity};
use crate::family::Family;
use crate::json::Path;
use crate::tokens::readable;
use crate::vocab::{Difference, TextDiff};

pub(super) const RULES: &[Rule] = &[
    DRAFT_MODEL_VOCAB_SIZE_MISMATCH,
    DRAFT_MODEL_VOCAB_MISMATCH,
    DRAFT_MODEL_TOKENIZER_TYPE_MISMATCH,
    DRAFT_MODEL_SPECIAL_TOKENS_MISMATCH,
    DRAFT_MODEL_PRE_TOKENIZER_MISMATCH,
];

const DRAFT: Applies = Applies::Only(&[Family::Draft]);

/// The rules here whose severity follows the engine and its release: what a pair of
/// tokenizers costs depends on which ids differ and on what the engine checks.
pub(super) const BY_ENGINE: &[(LintCode, &ByEngine)] = &[
    (LintCode::DraftModelVocabMismatch, &VOCAB_TEXT_DIFFERS),
    (LintCode::DraftModelVocabMismatch, &VOCAB_ADDED_DIFFER),
    (LintCode::DraftModelVocabMismatch, &VOCAB_SIZE_NEAR),
    (LintCode::DraftModelVocabMismatch, &VOCAB_SIZE_FAR),
    (LintCode::DraftModelVocabMismatch, &VOCAB_BASE_SIZE_REFUSED),
    (LintCode::DraftModelVocabSizeMismatch, &CONFIG_VOCAB_SIZE),
];

/// mlx-lm compares the two tokenizers' `vocab_size` (Hugging Face's: the tokenizer model's own
/// tokens, added tokens excluded), never the configs': `mlx_lm.generate` raises when they
/// differ, its server logs a warning and serves the pair (generate.py and server.py, every
/// release read, 0.28.4 to 0.32.2). Either way the target verifies the draft's ids as its own.
const MLX_LM_SERVES_OTHER_COUNT: ReleaseRow = ReleaseRow::any_version(
    Engine::MlxLm,
    Some(Severity::Warning),
    "serves the pair (its server only warns when the tokenizers' vocab_size differ): a draft id the target \
lacks is never accepted",
);

/// SGLang's STANDALONE worker compares the two tokenizers' `get_vocab()` from 0.5.15 (read in
/// the wheels: standalone_worker_v2.py `_validate_vocab_compatibility`; 0.5.14 has no check).
const SGLANG_REFUSES_ANOTHER_VOCAB: ReleaseRow = ReleaseRow::from_release(
    Engine::Sglang,
    (0, 5, 15),
    Some(Severity::Error),
    "STANDALONE raises ValueError when the tokenizers' get_vocab() differ (from 0.5.15)",
);
/// llama.cpp (and koboldcpp, which vendors its check) compares the text of every id from 5 on.
const LLAMA_REFUSES_OTHER_TEXT: ReleaseRow = ReleaseRow::any_version(
    Engine::LlamaCpp,
    Some(Severity::Error),
    "common_speculative_are_compatible compares every id's text from 5 on and refuses the pair (0c1e570)",
);
const KOBOLD_REFUSES_OTHER_TEXT: ReleaseRow = ReleaseRow::any_version(
    Engine::Koboldcpp,
    Some(Severity::Error),
    "vendors llama.cpp's check and refuses the pair (koboldcpp#2325)",
);

/// Ids of the base vocabulary that mean other text (another tokenizer family, shifted ids):
/// every engine refuses the pair or drafts tokens the target rejects.
const VOCAB_TEXT_DIFFERS: ByEngine = ByEngine {
    case: Some("ids of the base vocabulary have other text"),
    no_engine: Some(Severity::Error),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Error),
            "compares only the configs' vocab_size and drafts ids that mean other text: acceptance collapses \
(vllm#42775)",
        ),
        ReleaseRow::until_release(
            Engine::Sglang,
            (0, 5, 14),
            Some(Severity::Error),
            "no vocabulary check in STANDALONE: drafts ids that mean other text",
        ),
        SGLANG_REFUSES_ANOTHER_VOCAB,
        LLAMA_REFUSES_OTHER_TEXT,
        KOBOLD_REFUSES_OTHER_TEXT,
        ReleaseRow::any_version(
            Engine::MlxLm,
            Some(Severity::Error),
            "compares only the tokenizers' vocab_size (the server just warns) and drafts ids that mean other \
text: acceptance collapses",
        ),
    ],
};

/// The base vocabulary agrees and only added or special tokens differ (a fine-tune that
/// repurposed a token, a sibling model with more chat tokens): a draft id loses only where the
/// target would emit one of those tokens, unless the engine refuses the pair outright.
const VOCAB_ADDED_DIFFER: ByEngine = ByEngine {
    case: Some("only added or special tokens differ"),
    no_engine: Some(Severity::Warning),
    rows: &[
        ReleaseRow::any_version(
            Engine::Vllm,
            Some(Severity::Warning),
            "loads the pair and drafts those ids as the draft's tokens: only drafts of those tokens are rejected",
        ),
        ReleaseRow::until_release(
            Engine::Sglang,
            (0, 5, 14),
            Some(Severity::Warning),
            "no vocabulary check in STANDALONE: only drafts of those tokens are rejected",
        ),
        SGLANG_REFUSES_ANOTHER_VOCAB,
        LLAMA_REFUSES_OTHER_TEXT,
        KOBOLD_REFUSES_OTHER_TEXT,
        ReleaseRow::any_version(
            Engine::MlxLm,
            Some(Severity::Warning),
            "serves the pair (the server only warns where the tokenizers' vocab_size differ): only drafts of \
those tokens are rejected",
        ),
    ],
};

/// Token lists of other lengths with the same text, where nothing compares them: vLLM (it
/// compares the configs' `vocab_size`) and SGLang before its check.
const VLLM_LOADS_OTHER_COUNT: ReleaseRow = ReleaseRow::any_version(
    Engine::Vllm,
    Some(Severity::Warning),
    "loads the pair (it compares the configs' vocab_size): a draft id the target lacks is never accepted",
);
const SGLANG_BEFORE_CHECK_OTHER_COUNT: ReleaseRow = ReleaseRow::until_release(
    Engine::Sglang,
    (0, 5, 14),
    Some(Severity::Warning),
    "no vocabulary check in STANDALONE: a draft id the target lacks is never accepted",
);

/// Only the token counts differ, by at most llama.cpp's allowance: every shared id means the
/// same text, and the longer side's extra ids are never accepted.
const VOCAB_SIZE_NEAR: ByEngine = ByEngine {
    case: Some("only the token counts differ, by at most 128"),
    no_engine: Some(Severity::Warning),
    rows: &[
        VLLM_LOADS_OTHER_COUNT,
        SGLANG_BEFORE_CHECK_OTHER_COUNT,
        SGLANG_REFUSES_ANOTHER_VOCAB,
        ReleaseRow::any_version(
            Engine::LlamaCpp,
            Some(Severity::Warning),
            "accepts sizes up to 128 apart (SPEC_VOCAB_MAX_SIZE_DIFFERENCE) with the same text",
        ),
        ReleaseRow::any_version(
            Engine::Koboldcpp,
            Some(Severity::Warning),
            "vendors llama.cpp's 128-token allowance",
        ),
        MLX_LM_SERVES_OTHER_COUNT,
    ],
};

/// Only the token counts differ, by more than llama.cpp's allowance.
const VOCAB_SIZE_FAR: ByEngine = ByEngine {
    case: Some("only the token counts differ, by more than 128"),
    no_engine: Some(Severity::Warning),
    rows: &[
        VLLM_LOADS_OTHER_COUNT,
        SGLANG_BEFORE_CHECK_OTHER_COUNT,
        SGLANG_REFUSES_ANOTHER_VOCAB,
        ReleaseRow::any_version(
            Engine::LlamaCpp,
            Some(Severity::Error),
            "refuses sizes more than 128 apart (SPEC_VOCAB_MAX_SIZE_DIFFERENCE, 0c1e570)",
        ),
        KOBOLD_REFUSES_OTHER_TEXT,
        MLX_LM_SERVES_OTHER_COUNT,
    ],
};

/// The tokenizers' own vocabularies (added tokens excluded) have other sizes and the command
/// compares them and raises: `mlx_lm.generate` (its server only warns: the cases above). Chosen
/// only where the line's program says it refuses (`LintOptions::refuses_other_vocab_size`).
const VOCAB_BASE_SIZE_REFUSED: ByEngine = ByEngine {
    case: Some("the tokenizers' vocab_size (added tokens excluded) differ, on a command that compares them"),
    no_engine: None,
    rows: &[ReleaseRow::any_version(
        Engine::MlxLm,
        Some(Severity::Error),
        "mlx_lm.generate raises ValueError(\"Draft model tokenizer does not match model tokenizer.\")",
    )],
};

/// The configs' `vocab_size`: what vLLM and SGLang compare (the rule's own severity without a
/// row); mlx-lm compares the tokenizers instead, so a draft of another padded size loads there.
const CONFIG_VOCAB_SIZE: ByEngine = ByEngine {
    case: None,
    no_engine: Some(Severity::Error),
    rows: &[ReleaseRow::any_version(
        Engine::MlxLm,
        None,
        "compares the tokenizers' vocab_size, never the configs': a draft of another padded size loads",
    )],
};

/// llama.cpp or koboldcpp (its vendored copy): `common_speculative_are_compatible` judges the
/// pair, and at 0c1e570 a pair it rejects is refused ("draft model vocab type must match target
/// model to use speculation"), as at 8733e0c; only 4227c9b's builds retokenized instead.
fn llama(cx: &Ctx) -> bool {
    cx.engine().is_some_and(Engine::reads_gguf)
}

/// Who refuses a pair llama.cpp's compatibility check rejects, for messages: llama.cpp, or a
/// server that vendors its check (the row says since when, and on what evidence).
fn llama_refuses(cx: &Ctx) -> String {
    let Some(engine) = cx.engine() else {
        return "llama.cpp refuses the pair (common_speculative_are_compatible at 0c1e570)".into();
    };
    match engine.spec().vendors {
        Some(how) => format!(
            "{} {how}: such pairs are refused (the check judged is llama.cpp 0c1e570's)",
            engine.display()
        ),
        None => format!(
            "{} refuses the pair (common_speculative_are_compatible at 0c1e570)",
            engine.display()
        ),
    }
}

/// llama.cpp's allowance for vocabularies of different sizes (`SPEC_VOCAB_MAX_SIZE_DIFFERENCE`).
const LLAMA_MAX_SIZE_DIFFERENCE: u32 = 128;

/// `use_heterogeneous_vocab: true` in the speculative config, where the release that serves
/// the line maps ids between the two tokenizers instead of requiring one vocabulary (vLLM up to
/// 0.33: vllm/v1/spec_decode/draft_model.py; 0.34.0 has no such option). With the release not
/// known and the window's releases disagreeing, the pair is judged as one vocabulary would be.
fn heterogeneous(cx: &Ctx) -> bool {
    cx.release().is_some_and(|r| {
        crate::engine::Capabilities::of(r, crate::engine::What::HeterogeneousVocab)
            == crate::engine::Holds::Yes
    }) && cx
        .options
        .speculative_config
        .as_ref()
        .and_then(|c| c.get("use_heterogeneous_vocab"))
        .and_then(|v| v.as_bool())
        == Some(true)
}

const DRAFT_MODEL_VOCAB_SIZE_MISMATCH: Rule = Rule {
    code: LintCode::DraftModelVocabSizeMismatch,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the draft model's vocab_size differs from the target's",
        explanation: "A classic draft model proposes ids the target verifies as its own, so both must have one \
vocabulary. vLLM's draft_model proposer raises ValueError when the configs' vocab_size differ \
(verify_equal_vocab_size_if_draft_model, v0.26.0 and v0.27.1) unless the speculative config sets \
`use_heterogeneous_vocab: true`, which maps ids between the tokenizers (then info); SGLang's STANDALONE worker \
raises ValueError on the same difference (0.5.23). mlx-lm compares the tokenizers' vocab_size instead, never the \
configs' (generate.py and server.py, 0.28.4 to 0.32.2): not reported there. An error; info under vLLM with \
use_heterogeneous_vocab.",
    },
    applies: DRAFT,
    needs: &[Need::TargetVocab],
    check: draft_vocab_size_mismatch,
};

fn draft_vocab_size_mismatch(cx: &mut Ctx) {
    // llama.cpp has no config vocab_size to compare: draft-model-vocab-mismatch judges the token
    // lists' sizes with its 128-token allowance.
    if llama(cx) {
        return;
    }
    let Some(target) = cx.facts.and_then(|f| f.vocab_size) else {
        return;
    };
    let Some(node) = cx.root.get("vocab_size") else {
        return;
    };
    let Some(here) = node.as_u64() else { return };
    if here == target {
        return;
    }
    let severity = if heterogeneous(cx) {
        Severity::Info
    } else {
        let Some(severity) = cx.engine_severity() else {
            return;
        };
        severity
    };
    cx.emit_as(
        severity,
        &Path::key("vocab_size"),
        format!(
            "`vocab_size` is {here} but the target's is {target}: vLLM's draft_model and SGLang's \
             STANDALONE refuse a draft model of another vocabulary size"
        ),
    )
    .expected = Some(target.into());
}

const DRAFT_MODEL_VOCAB_MISMATCH: Rule = Rule {
    code: LintCode::DraftModelVocabMismatch,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the draft model's tokens differ from the target's, id by id",
        explanation: "Both tokenizer.json files are compared id by id: the number of tokens, the text of every id \
and the added and special tokens, and the first differing ids are shown decoded on both sides. What it costs depends \
on which ids differ and on the engine. Ids of the base vocabulary with other text (another tokenizer family, shifted \
ids) are an error everywhere: vLLM compares only the configs' vocab_size, so a draft model whose vocab_size was \
edited to the target's (vllm#42775) loads and drafts ids that mean other text and acceptance collapses; SGLang's \
STANDALONE worker has no vocabulary check up to 0.5.14 and raises ValueError when the tokenizers' get_vocab() \
differ from 0.5.15; llama.cpp refuses a draft whose token text differs from id 5 on or whose size differs by more \
than 128 (common_speculative_are_compatible at 0c1e570: \"draft model vocab type must match target model to use \
speculation\"; 4227c9b's builds retokenized instead), as koboldcpp does. When only added or special tokens differ \
(a fine-tune that repurposed a token, a sibling with more chat tokens), vLLM and SGLang up to 0.5.14 load the pair \
and lose only the drafts of those tokens: a warning there, an error where the engine refuses (SGLang from 0.5.15, \
llama.cpp). When only the token counts differ (the text of every shared id agrees), the longer side's ids are never \
accepted: a warning, save SGLang from 0.5.15 and llama.cpp past its 128-token allowance, which refuse. Padded \
vocabularies (embedding rows past the tokenizer, as between Qwen sizes) are not a difference of text: the \
configs' vocab_size is draft-model-vocab-size-mismatch's. With `use_heterogeneous_vocab: true` vLLM up to 0.33 maps \
ids between the tokenizers: info. mlx-lm (0.28.4 to 0.32.2) compares the tokenizers' vocab_size (the tokenizer \
model's own tokens, added tokens excluded): `mlx_lm.generate` raises ValueError when they differ (an error), its \
server logs a warning and serves the pair, judged as vLLM is.",
    },
    applies: DRAFT,
    needs: &[Need::DraftVocab],
    check: draft_vocab_mismatch,
};

/// A finding about the draft's tokenizer file (`file`): located in that file, not in the
/// config the rules run on.
fn emit_on_tokenizer(cx: &mut Ctx, severity: Severity, path: &Path, file: String, message: String) {
    let d = cx.emit_as(severity, path, message);
    d.file = Some(file);
    d.span = None;
}

/// `1 id has`, `10 ids have`.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `ID "text" here, "text" in the target; …`
fn first_ids(diff: &TextDiff) -> String {
    let side = |t: &Option<String>| t.as_deref().map_or("no token".to_string(), readable);
    diff.first
        .iter()
        .map(|(id, here, target)| {
            format!("{id} {} here, {} in the target", side(here), side(target))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn draft_vocab_mismatch(cx: &mut Ctx) {
    let Some(c) = cx.vocab else { return };
    let mut parts = Vec::new();
    let mut size = None;
    for d in &c.differences {
        match d {
            Difference::Size { here, target } => size = Some((*here, *target)),
            Difference::Text(t) => parts.push(format!(
                "{} other text: {}",
                counted(t.count, "id has", "ids have"),
                first_ids(t)
            )),
            Difference::Added(t) => parts.push(format!(
                "{}: {}",
                counted(
                    t.count,
                    "added or special token differs",
                    "added or special tokens differ"
                ),
                first_ids(t)
            )),
            _ => {}
        }
    }
    if parts.is_empty() && size.is_none() {
        return;
    }
    let mut message = match size {
        Some((h, t)) => format!("the draft's tokenizer has {h} tokens, the target's {t}"),
        None => format!("both tokenizers have {} tokens", c.here_len),
    };
    if !parts.is_empty() {
        message.push_str(&format!("; {}", parts.join("; ")));
    }
    let configs_equal = cx.root.get("vocab_size").and_then(|n| n.as_u64()).is_some()
        && cx.root.get("vocab_size").and_then(|n| n.as_u64())
            == cx.facts.and_then(|f| f.vocab_size);
    // Said only where the engine compares the configs' sizes (not mlx-lm: its rows say so).
    if configs_equal && cx.judge(&CONFIG_VOCAB_SIZE).is_some() {
        message.push_str(
            "; the configs' vocab_size are equal, so vLLM loads it and drafts ids of other text (vllm#42775)",
        );
    }
    let has_text = c
        .differences
        .iter()
        .any(|d| matches!(d, Difference::Text(_)));
    let has_added = c
        .differences
        .iter()
        .any(|d| matches!(d, Difference::Added(_)));
    let near = size.is_none_or(|(h, t)| h.abs_diff(t) <= LLAMA_MAX_SIZE_DIFFERENCE);
    // The tokenizers' own sizes, where the line's program compares them and raises.
    let base_refused = c
        .base_sizes
        .filter(|(h, t)| h != t && cx.options.refuses_other_vocab_size);
    if let Some((h, t)) = base_refused {
        message.push_str(&format!(
            "; the tokenizers' vocab_size (added tokens excluded) are {h} here and {t} in the target: the \
             command compares them and refuses the pair"
        ));
    }
    let case = match (has_text, base_refused.is_some(), has_added, near) {
        (true, ..) => &VOCAB_TEXT_DIFFERS,
        (false, true, ..) => &VOCAB_BASE_SIZE_REFUSED,
        (false, false, true, _) => &VOCAB_ADDED_DIFFER,
        (false, false, false, true) => &VOCAB_SIZE_NEAR,
        (false, false, false, false) => &VOCAB_SIZE_FAR,
    };
    let file = c.here.clone();
    if heterogeneous(cx) {
        emit_on_tokenizer(cx, Severity::Info, &Path::root(), file, message);
        return;
    }
    let Some(judged) = cx.judge(case) else {
        return;
    };
    if llama(cx) {
        message.push_str(&if judged.severity == Severity::Error {
            format!(
                "; {}: \"draft model vocab type must match target model to use speculation\"",
                llama_refuses(cx)
            )
        } else {
            format!(
                "; llama.cpp accepts sizes up to {LLAMA_MAX_SIZE_DIFFERENCE} apart with the same text, but a draft \
                 id the target lacks is never accepted"
            )
        });
    }
    if let Some(d) = cx.emit_judged(case, &Path::root(), message) {
        d.file = Some(file);
        d.span = None;
    }
}

const DRAFT_MODEL_TOKENIZER_TYPE_MISMATCH: Rule = Rule {
    code: LintCode::DraftModelTokenizerTypeMismatch,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the draft model's tokenizer model (BPE, Unigram, …) differs from the target's",
        explanation: "tokenizer.json's `model.type` differs (BPE and Unigram, say): the two cannot share ids. \
llama.cpp compares the vocab type first (common_speculative_are_compatible; at 8733e0c the types are held as \
bools, so in practice the token-text comparison is what refuses), and koboldcpp 1.115 refuses a draft with \
\"draft model vocab type must match target model\" (koboldcpp#2325). An error: two tokenizer models never share \
ids, and draft-model-vocab-mismatch names the ids.",
    },
    applies: DRAFT,
    needs: &[Need::DraftVocab],
    check: draft_tokenizer_type_mismatch,
};

fn draft_tokenizer_type_mismatch(cx: &mut Ctx) {
    let Some(c) = cx.vocab else { return };
    let Some(Difference::Model { here, target }) =
        c.find(|d| matches!(d, Difference::Model { .. }))
    else {
        return;
    };
    let name = |m: &Option<String>| m.clone().unwrap_or_else(|| "none".into());
    let message = format!(
        "the draft's tokenizer model is `{}`, the target's `{}`",
        name(here),
        name(target)
    );
    let file = c.here.clone();
    let severity = cx.rule.info.severity;
    emit_on_tokenizer(cx, severity, &Path::key("model"), file, message);
}

const DRAFT_MODEL_SPECIAL_TOKENS_MISMATCH: Rule = Rule {
    code: LintCode::DraftModelSpecialTokensMismatch,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the draft model's bos/eos ids, or whether it adds them, differ from the target's",
        explanation: "tokenizer_config.json's bos_token / eos_token (as ids) and add_bos_token / add_eos_token \
differ. llama.cpp's common_speculative_are_compatible compares add_bos, add_eos and the bos and eos ids: llama-server \
refuses such a draft at 8733e0c (llama-cpp-python 0.3.9) and at 0c1e570 (0.3.36), and retokenizes for it at 4227c9b \
(0.3.16). vLLM and SGLang feed the draft the target's ids and stop on the target's eos, so there it only says the \
draft was trained on other conventions. A warning; an error on a llama.cpp or koboldcpp line when add_bos/add_eos \
differ, or the bos (eos) ids differ while the target adds it, which is what llama.cpp compares.",
    },
    applies: DRAFT,
    needs: &[Need::DraftVocab],
    check: draft_special_tokens_mismatch,
};

fn draft_special_tokens_mismatch(cx: &mut Ctx) {
    let Some(c) = cx.vocab else { return };
    // llama.cpp refuses a pair whose add_bos/add_eos differ, or whose bos (eos) ids differ
    // while the target adds bos (eos).
    let refused_by_llama = llama(cx)
        && c.differences.iter().any(|d| match d {
            Difference::AddBos { .. } | Difference::AddEos { .. } => true,
            Difference::Bos { .. } => c.target_adds_bos,
            Difference::Eos { .. } => c.target_adds_eos,
            _ => false,
        });
    let id = |i: &Option<u32>| i.map_or("none".to_string(), |i| i.to_string());
    let flag = |b: &Option<bool>| b.map_or("unset".to_string(), |b| b.to_string());
    let parts: Vec<String> = c
        .differences
        .iter()
        .filter_map(|d| match d {
            Difference::Bos { here, target } => Some(format!(
                "bos {} here, {} in the target",
                id(here),
                id(target)
            )),
            Difference::Eos { here, target } => Some(format!(
                "eos {} here, {} in the target",
                id(here),
                id(target)
            )),
            Difference::AddBos { here, target } => Some(format!(
                "add_bos_token {} here, {} in the target",
                flag(here),
                flag(target)
            )),
            Difference::AddEos { here, target } => Some(format!(
                "add_eos_token {} here, {} in the target",
                flag(here),
                flag(target)
            )),
            _ => None,
        })
        .collect();
    if parts.is_empty() {
        return;
    }
    let file = c.here.clone();
    let (severity, message) = if refused_by_llama {
        (
            Severity::Error,
            format!(
                "{}: {}: \"draft model bos/eos tokens must match target model to use speculation\"",
                parts.join("; "),
                llama_refuses(cx)
            ),
        )
    } else {
        (cx.rule.info.severity, parts.join("; "))
    };
    emit_on_tokenizer(cx, severity, &Path::root(), file, message);
}

const DRAFT_MODEL_PRE_TOKENIZER_MISMATCH: Rule = Rule {
    code: LintCode::DraftModelPreTokenizerMismatch,
    info: CodeInfo {
        severity: Severity::Info,
        summary: "the draft model's pre-tokenizer differs from the target's",
        explanation: "tokenizer.json's `pre_tokenizer` (how text is split before the model sees it) differs. A \
draft fed the target's ids never runs its own pre-tokenizer in vLLM or SGLang, and llama.cpp does not compare it, \
so alone it costs nothing; with the token text the same it says the tokenizers were built apart, and llama.cpp's \
retokenization (newer builds) splits text the draft's way. Info.",
    },
    applies: DRAFT,
    needs: &[Need::DraftVocab],
    check: draft_pre_tokenizer_mismatch,
};

fn draft_pre_tokenizer_mismatch(cx: &mut Ctx) {
    let Some(c) = cx.vocab else { return };
    if c.find(|d| matches!(d, Difference::PreTokenizer)).is_none() {
        return;
    }
    let file = c.here.clone();
    let key = if file.ends_with(".gguf") {
        "GGUF `tokenizer.ggml.pre`"
    } else {
        "tokenizer.json `pre_tokenizer`"
    };
    let severity = cx.rule.info.severity;
    emit_on_tokenizer(
        cx,
        severity,
        &Path::key("pre_tokenizer"),
        file,
        format!("the draft's {key} differs from the target's"),
    );
}
