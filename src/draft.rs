//! A classic draft model's vocabulary, read beside its config and compared with its target's.
//!
//! `lint --family draft --target T` and a `launch` line that serves a draft model (vLLM
//! `draft_model`, SGLang `STANDALONE`) both need the two tokenizers compared before the rules
//! run; this is the one place that reads them: the draft's `tokenizer.json` beside its
//! `config.json`, the target's in its directory (or `--tokenizer DIR`), unless the target's
//! vocabulary was read with its token table (`TargetChoice::vocabulary`, one read of the file
//! for both). What cannot be read leaves the comparison out, and the vocabulary rules are
//! listed as skipped for want of it.

use std::path::Path;

use crate::config::ConfigFile;
use crate::target::TargetContext;
use crate::vocab;
use crate::{Error, Result};

/// The target context with the draft's vocabulary compared with the target's, when both
/// tokenizers are in local directories; the context as it was otherwise. A tokenizer that is
/// there but cannot be read is an error (bad input), not a skipped rule.
pub fn with_vocab(
    draft: &ConfigFile,
    target_dir: Option<&Path>,
    target: &TargetContext,
) -> Result<TargetContext> {
    let mut out = target.clone();
    let (Some(draft_dir), Some(target_dir)) = (draft.path.parent(), target_dir) else {
        return Ok(out);
    };
    let present = |d: &Path| crate::config::regular_file_present(&d.join("tokenizer.json"));
    if !present(draft_dir)? || !present(target_dir)? {
        return Ok(out);
    }
    let here = vocab::hf::from_dir(draft_dir)?;
    // The target's vocabulary read with its token table, when it was, from this very file.
    let tokenizer = target_dir.join("tokenizer.json").display().to_string();
    let read;
    let there = match target.vocabulary.as_deref() {
        Some(v) if v.source == tokenizer => v,
        _ => {
            read = vocab::hf::from_dir(target_dir)?;
            &read
        }
    };
    out.vocab = Some(vocab::compare(&here, there));
    Ok(out)
}

/// `lint --family draft` needs a target to compare with: a draft model is judged only against
/// the model it drafts for.
pub fn require_target(target: &crate::input::TargetSpec) -> Result<()> {
    if target.target.is_some() {
        return Ok(());
    }
    Err(Error::new(
        "a classic draft model (--family draft) is checked against the model it drafts for, and no \
         --target was given",
    )
    .with_hint("pass the target model's directory: --family draft --target TARGET_DIR"))
}

/// The classic draft-model family when the line's method names it (vLLM `draft_model`,
/// SGLang `STANDALONE`, any case; read from the family table's engine names), or when the
/// engine drafts with nothing but a draft model (`by_engine`: mlx-lm's `--draft-model`, as
/// its code says).
pub fn family_of(by_engine: bool, method: Option<&str>) -> Option<crate::family::Family> {
    crate::family::Family::ALL.iter().copied().find(|f| {
        let names = &f.spec().engines;
        f.is_draft_model()
            && (by_engine
                || method.is_some_and(|m| {
                    names.vllm == Some(m) || names.sglang.is_some_and(|s| s.eq_ignore_ascii_case(m))
                }))
    })
}
