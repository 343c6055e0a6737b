//! koboldcpp's own code: it vendors llama.cpp's speculative decoding behind its own flags — the
//! target by `--model` (or its first positional word), a draft model by `--draftmodel`, the
//! target's own MTP head by `--usemtp`, K by `--draftamount`.

use super::code::{EngineCode, Method};
use super::command::Launch;
use crate::family::FamilySpec;
use crate::Result;

/// koboldcpp's code (the table's row points here).
pub struct Koboldcpp;

const MODEL: &[&str] = &["--model", "-m"];
const DRAFT_MODEL: &[&str] = &["--draftmodel", "--model-draft", "-md"];
const N_MAX: &[&str] = &["--draftamount", "--draft-max", "--draft-n"];

impl EngineCode for Koboldcpp {
    fn read(&self, launch: &mut Launch) -> Result<()> {
        // koboldcpp also takes the model as its first positional argument (`model_param`).
        launch.target = launch
            .flag_any(MODEL)
            .map(|(_, v)| v.to_string())
            .or_else(|| launch.positionals.first().cloned());
        launch.drafter = launch.flag_any(DRAFT_MODEL).map(|(_, v)| v.to_string());
        launch.llama.n_max = launch.int_flag(N_MAX)?;
        launch.llama.use_mtp = launch.has_flag("--usemtp");
        Ok(())
    }

    /// `draft-simple` for a draft model, `draft-mtp` for the target's own head: the llama.cpp
    /// types koboldcpp runs.
    fn method(&self, launch: &Launch) -> Option<String> {
        match (&launch.drafter, launch.llama.use_mtp) {
            (Some(_), _) => Some("draft-simple".into()),
            (None, true) => Some("draft-mtp".into()),
            (None, false) => None,
        }
    }

    fn speculates(&self, launch: &Launch) -> bool {
        launch.drafter.is_some() || launch.llama.use_mtp
    }

    fn no_speculation(&self, _launch: &Launch) -> (&'static str, Option<&'static str>) {
        ("no --draftmodel and no --usemtp", None)
    }

    fn spec_line(&self, l: &Launch) -> String {
        let types = self
            .method(l)
            .unwrap_or_else(|| "(none: inferred from the draft's GGUF)".into());
        let k = l
            .llama
            .n_max
            .map_or_else(|| "(koboldcpp's default)".into(), |k| k.to_string());
        format!("type {types}; K (draft n_max) {k}")
    }

    fn expected_method(&self, family: &FamilySpec) -> Option<&'static str> {
        family.engines.llama_cpp
    }

    fn method_location(&self) -> (&'static str, Option<&'static str>, &'static str) {
        ("--draftmodel", None, "--draftmodel")
    }

    fn method_written(&self, want: &str) -> String {
        format!("--spec-type {want}")
    }

    fn model_flags(&self, _launch: &Launch) -> (&'static str, &'static str) {
        ("--draftmodel", "--model")
    }

    fn serves_mtp_head(&self, _method: Option<&Method>, _separate: bool) -> bool {
        false
    }
}
