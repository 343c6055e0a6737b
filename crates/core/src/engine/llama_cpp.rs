//! llama.cpp's own code: GGUF files named by `-m`/`-md` (or Hub repos by `-hf`/`-hfd`, which it
//! downloads), each flag also readable from its `LLAMA_ARG_*` environment variable (flags win,
//! `set_env` in `common/arg.cpp` at 0c1e570), and the draft's type by `--spec-type` (a comma
//! list) or inferred from the draft's metadata. Its method is judged by its own launch rules
//! (`launch::rules::llama`), not by the deployment rules.

use super::code::{EngineCode, Method};
use super::command::Launch;
use crate::family::FamilySpec;
use crate::Result;

/// llama.cpp's code (the table's row points here).
pub struct LlamaCpp;

/// llama.cpp's spellings of the flags read here (`common/arg.cpp` at 0c1e570; `-md` and
/// `--model-draft` are also the older builds' names).
pub const MODEL: &[&str] = &["-m", "--model"];
pub const HF_REPO: &[&str] = &["-hf", "-hfr", "--hf-repo"];
pub const HF_FILE: &[&str] = &["-hff", "--hf-file"];
pub const DRAFT_MODEL: &[&str] = &["--spec-draft-model", "-md", "--model-draft"];
pub const DRAFT_HF: &[&str] = &["--spec-draft-hf", "-hfd", "-hfrd", "--hf-repo-draft"];
pub const N_MAX: &[&str] = &["--spec-draft-n-max"];
/// The draft's type(s).
pub const SPEC_TYPE: &str = "--spec-type";
/// The draft model's short flag (the one messages show).
pub const DRAFT_MODEL_SHORT: &str = "-md";

/// Flags older llama.cpp builds took that 0c1e570 refuses, with what replaces them.
pub const REMOVED: &[(&str, &str)] = &[
    ("--draft-max", "use --spec-draft-n-max"),
    ("--draft", "use --spec-draft-n-max"),
    ("--draft-n", "use --spec-draft-n-max"),
    ("--draft-min", "use --spec-draft-n-min"),
    ("--draft-n-min", "use --spec-draft-n-min"),
    (
        "-cd",
        "drop it: the draft's context follows the target's -c",
    ),
    (
        "--ctx-size-draft",
        "drop it: the draft's context follows the target's -c",
    ),
];

/// The environment variables of the removed flags, which llama.cpp reads as the flags.
pub const REMOVED_ENV: &[(&str, &str)] = &[
    ("LLAMA_ARG_DRAFT_MAX", "LLAMA_ARG_SPEC_DRAFT_N_MAX"),
    ("LLAMA_ARG_DRAFT_MIN", "LLAMA_ARG_SPEC_DRAFT_N_MIN"),
];

impl EngineCode for LlamaCpp {
    fn read(&self, launch: &mut Launch) -> Result<()> {
        let model = launch.flag_or_env(MODEL, "LLAMA_ARG_MODEL");
        let hf = launch.flag_or_env(HF_REPO, "LLAMA_ARG_HF_REPO");
        launch.llama.target_on_hub = model.is_none() && hf.is_some();
        launch.target = model.or(hf);
        if launch.llama.target_on_hub {
            launch.llama.target_hf_file = launch.flag_or_env(HF_FILE, "LLAMA_ARG_HF_FILE");
        }
        let draft = launch.flag_or_env(DRAFT_MODEL, "LLAMA_ARG_SPEC_DRAFT_MODEL");
        let draft_hf = launch.flag_or_env(DRAFT_HF, "LLAMA_ARG_SPEC_DRAFT_HF_REPO");
        // With `-hfd`, `-md FILE` names the file of the draft repo to load (arg.cpp:4244-4245).
        launch.llama.draft_on_hub = draft_hf.is_some();
        if draft_hf.is_some() {
            launch.llama.draft_hf_file = draft.clone();
        }
        launch.drafter = draft_hf.or(draft);
        let mut types: Vec<String> = launch
            .flags
            .iter()
            .filter(|f| f.name == SPEC_TYPE)
            .filter_map(|f| f.value.as_deref())
            .flat_map(|v| v.split(','))
            .map(|t| t.trim().to_string())
            .collect();
        if types.is_empty() {
            if let Some(v) = launch.env_var("LLAMA_ARG_SPEC_TYPE") {
                types = v.split(',').map(|t| t.trim().to_string()).collect();
            }
        }
        launch.llama.types = types;
        launch.llama.n_max = match launch.int_flag(N_MAX)? {
            Some(k) => Some(k),
            None => launch
                .env_var("LLAMA_ARG_SPEC_DRAFT_N_MAX")
                .and_then(|v| v.trim().parse().ok()),
        };
        Ok(())
    }

    fn method(&self, launch: &Launch) -> Option<String> {
        (!launch.llama.types.is_empty()).then(|| launch.llama.types.join(","))
    }

    fn speculates(&self, launch: &Launch) -> bool {
        launch.drafter.is_some()
            || launch.llama.types.iter().any(|t| t != "none")
            || launch.has_flag("--spec-default")
    }

    fn no_speculation(&self, _launch: &Launch) -> (&'static str, Option<&'static str>) {
        ("no -md/--spec-draft-model and no --spec-type", None)
    }

    // settings, lint_settings, lint_flags: the trait's (none). llama.cpp's method is a list of
    // types, judged by its own launch rules; the deployment rules' settings are vLLM's and
    // SGLang's.

    fn spec_line(&self, l: &Launch) -> String {
        let types = self
            .method(l)
            .unwrap_or_else(|| "(none: inferred from the draft's GGUF)".into());
        let k = l
            .llama
            .n_max
            .map_or_else(|| "3 (llama.cpp's default)".into(), |k| k.to_string());
        format!("type {types}; K (draft n_max) {k}")
    }

    fn expected_method(&self, family: &FamilySpec) -> Option<&'static str> {
        family.engines.llama_cpp
    }

    fn method_location(&self) -> (&'static str, Option<&'static str>, &'static str) {
        ("--spec-type", None, "--spec-type")
    }

    fn method_written(&self, want: &str) -> String {
        format!("--spec-type {want}")
    }

    fn model_flags(&self, launch: &Launch) -> (&'static str, &'static str) {
        (
            if launch.llama.draft_on_hub {
                "-hfd"
            } else {
                "-md"
            },
            if launch.llama.target_on_hub {
                "-hf"
            } else {
                "-m"
            },
        )
    }

    fn serves_mtp_head(&self, _method: Option<&Method>, _separate: bool) -> bool {
        false
    }
}
