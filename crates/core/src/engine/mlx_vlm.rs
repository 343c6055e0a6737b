//! mlx-vlm's own code (`Blaizzy/mlx-vlm`, MLX vision-language models): `mlx_vlm.server` and
//! `mlx_vlm.generate` (also `python -m mlx_vlm server …`) take the target by `--model`, a
//! drafter by `--draft-model` (a checkpoint with bundled MTP weights may name the target's own
//! path), its kind by `--draft-kind` (`dflash`, `eagle3` or `mtp`, argparse choices; without it
//! mlx-vlm infers the kind from the drafter's `model_type`, and overrides a kind that disagrees
//! with it, warning) and the block by `--draft-block-size`. Read in the wheels 0.6.10 to 0.7.10
//! (`mlx_vlm/server/cli.py`, `mlx_vlm/generate/dispatch.py`,
//! `mlx_vlm/speculative/drafters/__init__.py`).

use serde_json::{Map, Value};

use super::capability::What;
use super::code::{EngineCode, Method, Settings};
use super::command::Launch;
use crate::family::FamilySpec;
use crate::json::Node;
use crate::Result;

/// mlx-vlm's code (the table's row points here).
pub struct MlxVlm;

/// The flags read here (server and generate spell them alike).
pub const MODEL: &str = "--model";
pub const DRAFT_MODEL: &str = "--draft-model";
pub const DRAFT_KIND: &str = "--draft-kind";
pub const DRAFT_BLOCK_SIZE: &str = "--draft-block-size";

impl EngineCode for MlxVlm {
    fn read(&self, launch: &mut Launch) -> Result<()> {
        launch.target = launch.flag(MODEL).map(str::to_string);
        launch.drafter = launch.flag(DRAFT_MODEL).map(str::to_string);
        // A block size that is not a number is refused by argparse: bad input here too.
        launch.int_flag(&[DRAFT_BLOCK_SIZE])?;
        Ok(())
    }

    fn method(&self, launch: &Launch) -> Option<String> {
        launch.flag(DRAFT_KIND).map(str::to_string)
    }

    fn speculates(&self, launch: &Launch) -> bool {
        launch.drafter.is_some()
    }

    fn no_speculation(&self, _launch: &Launch) -> (&'static str, Option<&'static str>) {
        ("no --draft-model", None)
    }

    fn settings(&self, launch: &Launch) -> Settings {
        super::mlx_lm::flag_method_settings(self.method(launch))
    }

    fn lint_settings(&self, _: Option<&Map<String, Value>>, _: Option<u64>) -> Settings {
        Settings::default()
    }

    fn lint_flags(&self, _launch: &Launch) -> (Option<Value>, Option<u64>) {
        (None, None)
    }

    fn spec_line(&self, l: &Launch) -> String {
        let kind = self
            .method(l)
            .unwrap_or_else(|| "(inferred from the drafter's model_type)".into());
        let block = l
            .flag(DRAFT_BLOCK_SIZE)
            .unwrap_or("(the drafter's configured block size)");
        format!("--draft-kind {kind}; {DRAFT_BLOCK_SIZE} {block}")
    }

    /// Not judged by family: mlx-vlm replaces a kind that disagrees with the drafter's
    /// `model_type` by the right one (`resolve_drafter_kind`), warning, so a mismatch is not a
    /// refusal.
    fn expected_method(&self, _family: &FamilySpec) -> Option<&'static str> {
        None
    }

    fn method_location(&self) -> (&'static str, Option<&'static str>, &'static str) {
        (DRAFT_KIND, None, DRAFT_KIND)
    }

    fn method_written(&self, want: &str) -> String {
        format!("{DRAFT_KIND} {want}")
    }

    fn model_flags(&self, _launch: &Launch) -> (&'static str, &'static str) {
        (DRAFT_MODEL, MODEL)
    }

    /// Not modelled: `--draft-kind mtp` serves a split MTP drafter or the target's bundled
    /// head through mlx-vlm's own drafter classes, whose loading was not read.
    fn serves_mtp_head(&self, _method: Option<&Method>, _separate: bool) -> bool {
        false
    }

    /// A target that bundles its MTP layers, named as the drafter: by the model type
    /// `get_mtp_splitter` looks up (0.7.8 to 0.7.10, mtp_split.py) — the text config's, then the
    /// top level's; the one the capability rows name, else the first. Not one: a config with
    /// its own model code (`model_file`: mlx-vlm skips the registry), and mlx-vlm's own MTP
    /// drafters (a model type naming `mtp`, resolved to the mtp kind at every release read).
    fn native_mtp_drafter<'c>(&self, drafter: &'c Node, declares_mtp: bool) -> Option<&'c str> {
        if !declares_mtp || drafter.get("model_file").is_some() {
            return None;
        }
        let model_type = |n: Option<&'c Node>| n?.get("model_type")?.as_str();
        let types: Vec<&'c str> = [
            model_type(drafter.get("text_config")),
            model_type(Some(drafter)),
        ]
        .into_iter()
        .flatten()
        .collect();
        if types.is_empty() || types.iter().any(|t| t.to_ascii_lowercase().contains("mtp")) {
            return None;
        }
        let has_rows = |t: &&str| {
            super::capability::rows()
                .iter()
                .any(|c| c.what == What::NativeMtpCheckpoint(t))
        };
        types
            .iter()
            .copied()
            .find(has_rows)
            .or(types.first().copied())
    }
}
