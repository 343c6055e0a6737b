//! oMLX's own code (`jundot/omlx`, a multi-model MLX server for Macs): `omlx serve` names no
//! drafter on its command line. It serves every model under its model directory (`--model-dir`,
//! else `{base}/models`) and switches drafting on per model in `{base}/model_settings.json`
//! (`--base-path`, default `~/.omlx`): `{"version": 1, "models": {ID: {"dflash_enabled": true,
//! "dflash_draft_model": PATH_OR_REPO, "mtp_enabled": …, "vlm_mtp_enabled": …,
//! "vlm_mtp_draft_model": …}}}` (`omlx/model_settings.py`, `omlx/engine_pool.py` at jundot/omlx
//! 003dad6). So one line is as many deployments as the file enables drafters: the settings file
//! is read as the line's options file, and [`EngineCode::split`] makes one launch per enabled
//! model, each with its target `{model dir}/{ID}`, its drafter and its method (`dflash`, `mtp`,
//! or `vlm_mtp`).
//!
//! oMLX is not on PyPI. Its DFlash drafters are loaded by dflash-mlx (`load_draft_bundle`;
//! oMLX pins a fork of dflash-mlx 0.1.10, the PyPI releases 0.1.0 to 0.1.8 were read), and a
//! drafter that fails to load is not an error: `EnginePool` logs "DFlash start failed … Falling
//! back" and serves the model without it; the VLM MTP drafter is "fail-soft" too ("toggle
//! ignored"). The rule `omlx-draft-fallback` says when a drafter would be dropped so.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::code::{EngineCode, Method, Settings};
use super::command::Launch;
use crate::family::FamilySpec;
use crate::{Error, Result};

/// oMLX's code (the table's row points here).
pub struct Omlx;

/// `omlx serve`'s flags read here (`omlx/cli.py`).
pub const MODEL_DIR: &str = "--model-dir";
pub const BASE_PATH: &str = "--base-path";
/// Where oMLX keeps its settings when the line names no `--base-path`.
pub const DEFAULT_BASE: &str = "~/.omlx";
/// The per-model settings file under the base path.
pub const SETTINGS_FILE: &str = "model_settings.json";

/// The methods a settings entry switches on, as this tool records them.
pub const DFLASH: &str = "dflash";
pub const MTP: &str = "mtp";
pub const VLM_MTP: &str = "vlm_mtp";

/// The keys of one model's entry that enable a drafter, and the key naming it (`None`: the
/// target's own head). oMLX requires a draft name beside `dflash_enabled` and
/// `vlm_mtp_enabled` before it builds either (`engine_pool.py`: `if dflash_enabled and
/// dflash_draft`).
const SWITCHES: &[(&str, Option<&str>, &str)] = &[
    ("dflash_enabled", Some("dflash_draft_model"), DFLASH),
    ("mtp_enabled", None, MTP),
    ("vlm_mtp_enabled", Some("vlm_mtp_draft_model"), VLM_MTP),
];

/// The key of the normalized per-deployment settings that holds the model's id.
pub const MODEL_ID: &str = "model_id";
/// Most models one settings file is read for (real files hold a few dozen).
const MAX_MODELS: usize = 4096;

impl EngineCode for Omlx {
    fn read(&self, _launch: &mut Launch) -> Result<()> {
        Ok(())
    }

    /// `{base path}/model_settings.json`.
    fn options_path(&self, launch: &Launch) -> Option<String> {
        Some(format!("{}/{SETTINGS_FILE}", base_path(launch)))
    }

    /// A settings file that cannot be read leaves the line without drafters: oMLX then serves
    /// every model plainly, and so there is nothing to check (said as the line's reason).
    fn options_optional(&self) -> bool {
        true
    }

    fn read_options(&self, launch: &mut Launch, file: &str, text: &str) -> Result<()> {
        let enabled = enabled_models(file, text)?;
        if enabled.is_empty() {
            return Ok(());
        }
        let mut all = Map::new();
        for (id, entries) in enabled {
            all.insert(
                id,
                Value::Array(entries.into_iter().map(Value::Object).collect()),
            );
        }
        launch.speculative_config = Some(all);
        Ok(())
    }

    /// One launch per drafter the settings enable, model ids in sorted order.
    fn split(&self, launch: Launch) -> Vec<Launch> {
        let Some(all) = launch.speculative_config.clone() else {
            return vec![launch];
        };
        let model_dir = launch
            .flag(MODEL_DIR)
            .map(str::to_string)
            // oMLX's default (`ModelSettings.get_model_dirs`, omlx/settings.py).
            .unwrap_or_else(|| format!("{}/models", base_path(&launch)));
        let mut out = Vec::new();
        for (id, entries) in &all {
            for entry in entries.as_array().into_iter().flatten() {
                let Some(entry) = entry.as_object() else {
                    continue;
                };
                let mut one = launch.clone();
                one.target = Some(format!("{}/{id}", model_dir.trim_end_matches('/')));
                one.drafter = entry
                    .get("model")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                one.speculative_config = Some(entry.clone());
                out.push(one);
            }
        }
        out
    }

    fn method(&self, launch: &Launch) -> Option<String> {
        launch
            .spec("method")
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    fn speculates(&self, launch: &Launch) -> bool {
        launch.speculative_config.is_some()
    }

    fn no_speculation(&self, _launch: &Launch) -> (&'static str, Option<&'static str>) {
        (
            "no model in a readable model_settings.json under its --base-path (default ~/.omlx) \
             enables dflash_enabled with dflash_draft_model, mtp_enabled or vlm_mtp_enabled",
            Some("pass --base-path DIR where DIR/model_settings.json holds the settings the server reads"),
        )
    }

    fn settings(&self, launch: &Launch) -> Settings {
        super::mlx_lm::flag_method_settings(self.method(launch))
    }

    fn lint_settings(&self, _: Option<&Map<String, Value>>, _: Option<u64>) -> Settings {
        Settings::default()
    }

    fn spec_line(&self, l: &Launch) -> String {
        let id = l.spec(MODEL_ID).and_then(Value::as_str).unwrap_or("?");
        match self.method(l).as_deref() {
            Some(DFLASH) => format!("model {id}: dflash_enabled, dflash_draft_model set"),
            Some(VLM_MTP) => format!("model {id}: vlm_mtp_enabled, vlm_mtp_draft_model set"),
            Some(MTP) => format!("model {id}: mtp_enabled (the checkpoint's own head)"),
            _ => "(none)".to_string(),
        }
    }

    /// A DFlash (or DFlash2: the dflash-mlx fork oMLX pins runs it) drafter is served by
    /// `dflash_enabled`; the rest are not named by family.
    fn expected_method(&self, family: &FamilySpec) -> Option<&'static str> {
        use crate::family::Family;
        [Family::Dflash, Family::Dflash2]
            .contains(&family.family)
            .then_some(DFLASH)
    }

    fn method_location(&self) -> (&'static str, Option<&'static str>, &'static str) {
        (SETTINGS_FILE, None, "dflash_enabled")
    }

    fn method_written(&self, want: &str) -> String {
        match want {
            DFLASH => "\"dflash_enabled\": true, \"dflash_draft_model\": DRAFTER".to_string(),
            MTP => "\"mtp_enabled\": true".to_string(),
            other => format!("\"{other}_enabled\": true"),
        }
    }

    fn model_flags(&self, _launch: &Launch) -> (&'static str, &'static str) {
        ("dflash_draft_model", MODEL_DIR)
    }

    /// `mtp_enabled` drafts with the checkpoint's own head.
    fn serves_mtp_head(&self, method: Option<&Method>, separate: bool) -> bool {
        !separate && method.is_some_and(|m| m.name == MTP)
    }
}

/// The line's `--base-path`, else `~/.omlx`, without a trailing `/`; `~` is the home of the
/// user running the check (oMLX expands it for the user running the server).
fn base_path(launch: &Launch) -> String {
    let base = launch.flag(BASE_PATH).unwrap_or(DEFAULT_BASE);
    let base = match (base.strip_prefix('~'), std::env::var("HOME")) {
        (Some(rest), Ok(home)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{home}{rest}")
        }
        _ => base.to_string(),
    };
    base.trim_end_matches('/').to_string()
}

/// The drafters `model_settings.json` enables, per model id: one normalized entry each
/// (`method`, `model` for a separate drafter, [`MODEL_ID`]). A file that is not the settings
/// shape is bad input, named by its JSON path.
fn enabled_models(file: &str, text: &str) -> Result<BTreeMap<String, Vec<Map<String, Value>>>> {
    let bad = |path: &str, what: &str| {
        Error::new(format!("{file}: {path} {what}")).with_hint(
            "oMLX's model_settings.json is {\"version\": 1, \"models\": {MODEL_ID: {SETTING: VALUE}}}; \
             fix the file or pass the --base-path the server uses",
        )
    };
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        Error::new(format!("{file}: not JSON: {e}")).with_hint("fix the file's syntax")
    })?;
    if !doc.is_object() {
        return Err(bad("the document", "is not an object"));
    }
    let models = match doc.get("models") {
        None | Some(Value::Null) => return Ok(BTreeMap::new()),
        Some(Value::Object(m)) if m.len() <= MAX_MODELS => m,
        Some(Value::Object(_)) => {
            return Err(bad(
                "/models",
                &format!("holds more than {MAX_MODELS} models"),
            ))
        }
        Some(_) => return Err(bad("/models", "is not an object of model ids")),
    };
    let mut out = BTreeMap::new();
    for (id, entry) in models {
        let pointer = format!("/models/{}", id.replace('~', "~0").replace('/', "~1"));
        let Some(entry) = entry.as_object() else {
            return Err(bad(&pointer, "is not an object of settings"));
        };
        let mut enabled = Vec::new();
        for (switch, draft_key, method) in SWITCHES {
            // oMLX reads the switch with bool(): a JSON true; null and false are off.
            match entry.get(*switch) {
                Some(Value::Bool(true)) => {}
                None | Some(Value::Null | Value::Bool(false)) => continue,
                Some(_) => {
                    return Err(bad(
                        &format!("{pointer}/{switch}"),
                        "is not true, false or null",
                    ))
                }
            }
            let draft = match draft_key.map(|k| (k, entry.get(k))) {
                None => None,
                Some((_, Some(Value::String(s)))) if !s.is_empty() => Some(s.clone()),
                // Enabled without a draft name: oMLX builds no drafter (nothing to check).
                Some((_, None | Some(Value::Null))) => continue,
                Some((_, Some(Value::String(_)))) => continue,
                Some((k, Some(_))) => {
                    return Err(bad(
                        &format!("{pointer}/{k}"),
                        "is not a path or repository id",
                    ))
                }
            };
            let mut one = Map::new();
            one.insert("method".into(), Value::from(*method));
            if let Some(d) = draft {
                one.insert("model".into(), Value::from(d));
            }
            one.insert(MODEL_ID.into(), Value::from(id.as_str()));
            enabled.push(one);
        }
        if !enabled.is_empty() {
            out.insert(id.clone(), enabled);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_enable_a_drafter_per_switch_with_its_name() {
        let text = r#"{"version": 1, "models": {
            "Qwen3.6-27B": {"dflash_enabled": true, "dflash_draft_model": "/m/draft"},
            "plain": {"dflash_enabled": false, "dflash_draft_model": "/m/draft"},
            "nameless": {"dflash_enabled": true},
            "heads": {"mtp_enabled": true, "vlm_mtp_enabled": true, "vlm_mtp_draft_model": "/m/vd"}
        }}"#;
        let got = enabled_models("s.json", text).unwrap();
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got["Qwen3.6-27B"][0]["model"], "/m/draft");
        assert_eq!(got["heads"].len(), 2);
        assert_eq!(got["heads"][0]["method"], MTP);
        assert!(got["heads"][0].get("model").is_none());
    }

    #[test]
    fn a_file_of_another_shape_is_named_by_its_path() {
        let e = enabled_models("s.json", r#"{"models": {"a": {"dflash_enabled": "yes"}}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("s.json: /models/a/dflash_enabled"), "{e}");
        let e = enabled_models("s.json", r#"{"models": []}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("/models is not an object"), "{e}");
        assert!(enabled_models("s.json", "{").is_err());
        let e = enabled_models("s.json", "[1, 2]").unwrap_err().to_string();
        assert!(e.contains("the document is not an object"), "{e}");
    }
}
