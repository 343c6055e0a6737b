//! TensorRT-LLM's own code: `trtllm-serve [serve] MODEL` takes its speculative decoding from
//! the LLM API options file it names (`--extra_llm_api_options FILE.yaml`, newer releases also
//! `--config`): the file's `speculative_config` mapping holds `decoding_type` (the method),
//! `max_draft_len` (K) and `speculative_model` / `speculative_model_dir` (the drafter), and its
//! `backend` may override `--backend`. Flags are click options, spelled with underscores only.
//! Read at NVIDIA/TensorRT-LLM d4b1e8e (before PR 10124), aba2525 (between PRs 10124 and
//! 12341) and the newest code read (`tensorrt_llm/llmapi/llm_args.py`,
//! `tensorrt_llm/commands/common_llm_options.py` at 1f71907).

use serde_json::{Map, Number, Value};
use yaml_rust2::Yaml;

use super::code::{EngineCode, Method, MethodFrom, Settings};
use super::command::Launch;
use crate::family::FamilySpec;
use crate::text::clip;
use crate::{Error, Result};

/// TensorRT-LLM's code (the table's row points here).
pub struct Trtllm;

/// The options file's flag (newer releases also take `--config`).
pub const EXTRA_LLM_API_OPTIONS: &str = "--extra_llm_api_options";
/// The backend flag (`pytorch`, `tensorrt`/`trt`, `_autodeploy`).
pub const BACKEND: &str = "--backend";
/// The options file's key holding the speculative configuration.
pub const SPECULATIVE_CONFIG: &str = "speculative_config";
/// The keys of the drafter's checkpoint (the newer name first; the older is an alias of it).
pub const DRAFT_MODEL_KEYS: &[&str] = &["speculative_model", "speculative_model_dir"];

/// Largest options mapping read (keys of `speculative_config`).
const MAX_KEYS: usize = 256;

impl EngineCode for Trtllm {
    fn read(&self, launch: &mut Launch) -> Result<()> {
        // `trtllm-serve serve MODEL` names the click subcommand before the model.
        let mut words = launch.positionals.iter().skip_while(|w| *w == "serve");
        launch.target = words.next().cloned();
        Ok(())
    }

    fn read_options(&self, launch: &mut Launch, file: &str, text: &str) -> Result<()> {
        let docs = crate::yaml::load(
            text,
            file,
            "TensorRT-LLM's options file",
            "--extra_llm_api_options takes the LLM API's YAML options (a mapping)",
        )?;
        let Some(doc) = docs.first() else {
            return Ok(());
        };
        if !matches!(doc, Yaml::Hash(_) | Yaml::Null) {
            return Err(Error::new(format!(
                "{file}: TensorRT-LLM's options file must be a mapping of LLM API options"
            ))
            .with_hint(
                "write `speculative_config:` and the other options as keys of one mapping",
            ));
        }
        let spec = &doc[SPECULATIVE_CONFIG];
        match spec {
            Yaml::BadValue | Yaml::Null => {}
            Yaml::Hash(h) if h.len() <= MAX_KEYS => {
                let map = mapping(h, file)?;
                launch.drafter = DRAFT_MODEL_KEYS
                    .iter()
                    .find_map(|k| map.get(*k).and_then(Value::as_str))
                    .map(str::to_string);
                launch.speculative_config = Some(map);
            }
            _ => {
                return Err(Error::new(format!(
                    "{file}: `{SPECULATIVE_CONFIG}` is not a mapping of at most {MAX_KEYS} keys"
                ))
                .with_hint("write decoding_type, max_draft_len and the draft model as its keys"))
            }
        }
        // The file's `backend` overrides nothing the line states: record it as a flag would.
        if let Some(backend) = doc["backend"].as_str() {
            if !launch.has_flag(BACKEND) {
                launch.flags.push(super::command::Flag {
                    name: BACKEND.to_string(),
                    value: Some(backend.to_string()),
                });
            }
        }
        Ok(())
    }

    fn method(&self, launch: &Launch) -> Option<String> {
        launch
            .spec("decoding_type")
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    fn speculates(&self, launch: &Launch) -> bool {
        launch.speculative_config.is_some()
    }

    fn no_speculation(&self, launch: &Launch) -> (&'static str, Option<&'static str>) {
        if launch
            .engine
            .spec()
            .flags
            .options_file
            .iter()
            .any(|f| launch.has_flag(f))
        {
            ("no speculative_config in its options file", None)
        } else {
            (
                "no --extra_llm_api_options file",
                Some(
                    "TensorRT-LLM reads speculative decoding from the LLM API options file: \
                     trtllm-serve MODEL --extra_llm_api_options options.yaml, with speculative_config: in it",
                ),
            )
        }
    }

    fn lint_settings(&self, spec: Option<&Map<String, Value>>, _: Option<u64>) -> Settings {
        Settings {
            method: spec
                .and_then(|s| s.get("decoding_type"))
                .and_then(Value::as_str)
                .map(|m| Method {
                    name: m.to_string(),
                    from: MethodFrom::SpeculativeConfig,
                }),
            speculative_config: spec.cloned(),
            ..Settings::default()
        }
    }

    fn lint_flags(&self, launch: &Launch) -> (Option<Value>, Option<u64>) {
        (launch.speculative_config.clone().map(Value::Object), None)
    }

    fn spec_line(&self, l: &Launch) -> String {
        let method = self.method(l).unwrap_or_else(|| "(none)".into());
        let k = l
            .spec("max_draft_len")
            .map_or_else(|| "(none)".into(), Value::to_string);
        let backend = l.flag(BACKEND).unwrap_or("pytorch (the default)");
        format!("decoding_type {method}; K (max_draft_len) {k}; backend {backend}")
    }

    fn expected_method(&self, family: &FamilySpec) -> Option<&'static str> {
        family.engines.trtllm
    }

    /// `Eagle` names EAGLE-3 too on the PyTorch backend (before PR 10124 the only EAGLE type,
    /// after it an alias rebuilt as Eagle3): `trtllm-eagle-alias` judges it.
    fn family_accepts(&self, family: &FamilySpec, method: &str) -> bool {
        match family.engines.trtllm {
            Some("Eagle3") => method == "Eagle3" || method == "Eagle",
            // The 1.2 line's spelling (d4b1e8e's dispatch); the newest class literal is Draft_Target.
            Some("Draft_Target") => method == "Draft_Target" || method == "DraftTarget",
            want => want == Some(method),
        }
    }

    fn model_flags(&self, _launch: &Launch) -> (&'static str, &'static str) {
        ("speculative_config.speculative_model", "MODEL")
    }

    fn serves_mtp_head(&self, method: Option<&Method>, _separate: bool) -> bool {
        method.is_some_and(|m| m.name == "MTP")
    }

    fn method_location(&self) -> (&'static str, Option<&'static str>, &'static str) {
        (
            "speculative_config.decoding_type",
            Some(EXTRA_LLM_API_OPTIONS),
            EXTRA_LLM_API_OPTIONS,
        )
    }

    fn method_written(&self, want: &str) -> String {
        format!("decoding_type: {want}")
    }
}

/// A YAML mapping of scalars (and nested mappings or lists) as JSON, as the LLM API reads it.
fn mapping(h: &yaml_rust2::yaml::Hash, file: &str) -> Result<Map<String, Value>> {
    let mut out = Map::new();
    for (k, v) in h {
        let Some(key) = k.as_str() else {
            return Err(Error::new(format!(
                "{file}: a key of `{SPECULATIVE_CONFIG}` is not a string"
            )));
        };
        out.insert(key.to_string(), json(v, file, 0)?);
    }
    Ok(out)
}

/// One YAML value as JSON (nesting capped).
fn json(y: &Yaml, file: &str, depth: usize) -> Result<Value> {
    if depth > 8 {
        return Err(Error::new(format!(
            "{file}: `{SPECULATIVE_CONFIG}` nests deeper than 8 levels"
        )));
    }
    Ok(match y {
        Yaml::Integer(i) => Value::from(*i),
        Yaml::Real(r) => r
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map_or_else(|| Value::String(clip(r, 80)), Value::Number),
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Array(a) => Value::Array(
            a.iter()
                .map(|v| json(v, file, depth + 1))
                .collect::<Result<_>>()?,
        ),
        Yaml::Hash(h) => {
            let mut m = Map::new();
            for (k, v) in h {
                if let Some(k) = k.as_str() {
                    m.insert(k.to_string(), json(v, file, depth + 1)?);
                }
            }
            Value::Object(m)
        }
        _ => Value::Null,
    })
}
