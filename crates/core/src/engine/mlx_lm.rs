//! mlx-lm's own code (Apple's MLX, `ml-explore/mlx-lm`): `mlx_lm.server` and `mlx_lm.generate`
//! (also `mlx_lm server …`, `python -m mlx_lm.server …`) take the target by `--model` and a
//! plain draft language model by `--draft-model`, K by `--num-draft-tokens` (default 3). There
//! is no method flag: the draft is loaded like any model (`load`, by its config's
//! `model_type`, weights loaded strictly), so mlx-lm drafts with a small LM of the target's
//! tokenizer and nothing else — no EAGLE, DFlash or MTP head at any release read (0.28.4 to
//! 0.32.2: every `sanitize` drops `mtp.*` keys). The method recorded for a line with a draft is
//! [`DRAFT`], a name of this file's own (the capability rows list it). Read in the wheels of
//! those releases (`mlx_lm/server.py`, `mlx_lm/generate.py` argparse).

use serde_json::{Map, Value};

use super::code::{EngineCode, Method, MethodFrom, Settings};
use super::command::Launch;
use crate::family::FamilySpec;
use crate::Result;

/// mlx-lm's code (the table's row points here).
pub struct MlxLm;

/// The target and draft flags, and K (`server.py` and `generate.py` argparse).
pub const MODEL: &str = "--model";
pub const DRAFT_MODEL: &str = "--draft-model";
pub const NUM_DRAFT_TOKENS: &str = "--num-draft-tokens";
/// The name a line with `--draft-model` is recorded under: mlx-lm's one kind of drafting.
pub const DRAFT: &str = "draft";
/// K when the line states none (`default=3` in both parsers, every release read).
const DEFAULT_K: u64 = 3;

impl EngineCode for MlxLm {
    fn read(&self, launch: &mut Launch) -> Result<()> {
        launch.target = launch.flag(MODEL).map(str::to_string);
        launch.drafter = launch.flag(DRAFT_MODEL).map(str::to_string);
        // Checked here so that a K that is not a number is bad input, as argparse refuses it.
        launch.int_flag(&[NUM_DRAFT_TOKENS])?;
        Ok(())
    }

    fn method(&self, launch: &Launch) -> Option<String> {
        launch.drafter.as_ref().map(|_| DRAFT.to_string())
    }

    fn speculates(&self, launch: &Launch) -> bool {
        launch.drafter.is_some()
    }

    fn no_speculation(&self, _launch: &Launch) -> (&'static str, Option<&'static str>) {
        ("no --draft-model", None)
    }

    fn settings(&self, launch: &Launch) -> Settings {
        flag_method_settings(self.method(launch))
    }

    fn lint_settings(&self, _: Option<&Map<String, Value>>, _: Option<u64>) -> Settings {
        Settings::default()
    }

    fn lint_flags(&self, _launch: &Launch) -> (Option<Value>, Option<u64>) {
        (None, None)
    }

    fn spec_line(&self, l: &Launch) -> String {
        let k = l
            .flag(NUM_DRAFT_TOKENS)
            .map_or_else(|| format!("{DEFAULT_K} (mlx-lm's default)"), str::to_string);
        match &l.drafter {
            Some(_) => format!("a draft model; K ({NUM_DRAFT_TOKENS}) {k}"),
            None => "(none)".to_string(),
        }
    }

    /// mlx-lm names no drafter family: it serves draft models only.
    fn expected_method(&self, _family: &FamilySpec) -> Option<&'static str> {
        None
    }

    fn method_location(&self) -> (&'static str, Option<&'static str>, &'static str) {
        (DRAFT_MODEL, None, DRAFT_MODEL)
    }

    fn method_written(&self, _want: &str) -> String {
        format!("{DRAFT_MODEL} DRAFT")
    }

    fn model_flags(&self, _launch: &Launch) -> (&'static str, &'static str) {
        (DRAFT_MODEL, MODEL)
    }

    fn serves_mtp_head(&self, _method: Option<&Method>, _separate: bool) -> bool {
        false
    }

    fn drafts_with_draft_model(&self, launch: &Launch) -> bool {
        launch.drafter.is_some()
    }

    /// `generate.py`'s `main` raises ValueError("Draft model tokenizer does not match model
    /// tokenizer.") when `draft_tokenizer.vocab_size != tokenizer.vocab_size`; `server.py`
    /// logs a warning on the same comparison and serves the pair (every release read, 0.28.4
    /// to 0.32.2). Told by the entrypoint: `mlx_lm.generate`, `mlx_lm generate`, `python -m
    /// mlx_lm.generate`, `python -m mlx_lm generate`.
    fn refuses_other_vocab_size(&self, launch: &Launch) -> bool {
        launch.entrypoint.ends_with(GENERATE)
    }
}

/// The last word of every entrypoint that runs `generate.py` (the table's rows).
const GENERATE: &str = "generate";

/// The settings of an MLX line: only its method, read from a flag (mlx-lm's `--draft-model`,
/// mlx-vlm's `--draft-kind`); neither takes a speculative configuration.
pub(super) fn flag_method_settings(method: Option<String>) -> Settings {
    Settings {
        method: method.map(|name| Method {
            name,
            from: MethodFrom::Flag,
        }),
        ..Settings::default()
    }
}
