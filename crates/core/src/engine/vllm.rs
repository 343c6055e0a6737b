//! vLLM's own code: its command line names the target positionally (or `--model`) and states
//! the whole speculative configuration as one JSON object, `--speculative-config` (with
//! `--speculative-config.KEY VALUE` flags merged in), whose `model` is the drafter and whose
//! `method` picks the proposer — inferred from "eagle3" or "dflash" in the drafter's name when
//! absent.

use serde_json::{Map, Value};

use super::code::{DraftLength, EngineCode, Method, MethodFrom, ServedLength, Settings};
use super::command::Launch;
use crate::family::{DrafterLocation, FamilySpec};
use crate::text::clip;
use crate::{Error, Result};

/// vLLM's code (the table's row points here).
pub struct Vllm;

/// The flag that states the speculative configuration.
pub const SPECULATIVE_CONFIG: &str = "--speculative-config";
/// The target's tensor-parallel size.
pub const TENSOR_PARALLEL_SIZE: &str = "--tensor-parallel-size";
/// The batch's token budget.
pub const MAX_NUM_BATCHED_TOKENS: &str = "--max-num-batched-tokens";
/// Async scheduling asked for, and refused (argparse's `BooleanOptionalAction`: the last wins).
const ASYNC_SCHEDULING: &str = "--async-scheduling";
const NO_ASYNC_SCHEDULING: &str = "--no-async-scheduling";

/// The length the target is served at, and the overrides of its config (the draft's config is
/// built apart: `SpeculativeConfig` gives the draft its own overrides, so these reach only the
/// target).
const MAX_MODEL_LEN: &str = "--max-model-len";
const HF_OVERRIDES: &str = "--hf-overrides";
/// The config key whose override sets the length the engine derives.
pub(crate) const POSITIONS_KEY: &str = "max_position_embeddings";

/// How vLLM builds the target: its own model class (`auto`, `vllm`) or the transformers backend.
const MODEL_IMPL: &str = "--model-impl";

/// The variable that selects vLLM's model runner (0.25–0.33; 0.34 has only V2).
pub const V2_RUNNER_VAR: &str = "VLLM_USE_V2_MODEL_RUNNER";

/// The runner variable when it asks for V2: vLLM reads it as `bool(int(value))`
/// (`envs.maybe_convert_bool`), so a non-zero integer.
fn v2_runner(launch: &Launch) -> Option<&'static str> {
    let value = launch.env_var(V2_RUNNER_VAR)?;
    let asked = value.trim().parse::<i64>().is_ok_and(|n| n != 0);
    asked.then_some(V2_RUNNER_VAR)
}

/// The switch that asks for async scheduling, when the line's last word on it does. Without
/// either switch vLLM decides itself and turns it off, with a warning, for a method it cannot
/// schedule asynchronously; asked for, it refuses to start instead (`VllmConfig.__post_init__`).
fn async_scheduling(launch: &Launch) -> Option<&'static str> {
    let last = launch
        .flags
        .iter()
        .rev()
        .find(|f| f.name == ASYNC_SCHEDULING || f.name == NO_ASYNC_SCHEDULING)?;
    (last.name == ASYNC_SCHEDULING).then_some(ASYNC_SCHEDULING)
}

impl EngineCode for Vllm {
    fn read(&self, launch: &mut Launch) -> Result<()> {
        launch.target = launch
            .positionals
            .first()
            .cloned()
            .or_else(|| launch.flag("--model").map(str::to_string));
        launch.max_num_seqs = launch.int_flag(&["--max-num-seqs"])?;
        launch.max_num_batched_tokens = launch.int_flag(&[MAX_NUM_BATCHED_TOKENS])?;
        let spec = speculative_config(launch)?;
        if let Some(spec) = &spec {
            launch.drafter = spec
                .get("model")
                .and_then(Value::as_str)
                .map(str::to_string);
            launch.drafter_revision = spec
                .get("revision")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        launch.speculative_config = spec;
        Ok(())
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

    fn no_speculation(&self, launch: &Launch) -> (&'static str, Option<&'static str>) {
        let hint = if launch.has_flag("--speculative-model")
            || launch.has_flag("--num-speculative-tokens")
        {
            Some(
                "--speculative-model and --num-speculative-tokens are vLLM's old flags; current vLLM takes \
                 --speculative-config '{\"method\": ..., \"model\": ..., \"num_speculative_tokens\": ...}'",
            )
        } else if launch.has_flag("--config") {
            Some("flags inside vLLM's --config YAML file are not read: paste them on the command line")
        } else {
            None
        };
        ("no --speculative-config", hint)
    }

    fn settings(&self, launch: &Launch) -> Settings {
        Settings {
            async_scheduling: async_scheduling(launch),
            v2_runner: v2_runner(launch),
            target_via_transformers: launch.flag(MODEL_IMPL) == Some("transformers"),
            ..self.lint_settings(launch.speculative_config.as_ref(), None)
        }
    }

    fn lint_settings(
        &self,
        speculative_config: Option<&Map<String, Value>>,
        _num_draft_tokens: Option<u64>,
    ) -> Settings {
        let spec = speculative_config.cloned();
        Settings {
            method: spec.as_ref().and_then(method_of),
            draft_tensor_parallel: spec
                .as_ref()
                .and_then(|s| s.get("draft_tensor_parallel_size"))
                .and_then(Value::as_u64),
            speculative_config: spec,
            ..Settings::default()
        }
    }

    /// `--max-model-len` as `human_readable_int_or_auto` reads it (vllm/utils/argparse_utils.py:
    /// `32k` is 32,000, `32K` 32,768; `-1`/`auto` derive it from the config), else an
    /// `--hf-overrides` that sets the target's `max_position_embeddings`, which vLLM derives the
    /// length from when none is given.
    fn served_length(&self, launch: &Launch) -> Option<ServedLength> {
        let stated = launch
            .flag(MAX_MODEL_LEN)
            .and_then(|text| Some((human_readable_int(text)?, format!("{MAX_MODEL_LEN} {text}"))))
            .or_else(|| {
                let n = launch.json_override(HF_OVERRIDES, POSITIONS_KEY)?;
                Some((n, format!("{HF_OVERRIDES} {POSITIONS_KEY} {n}")))
            });
        Some(ServedLength {
            tokens: Some(stated?),
            draft: DraftLength::Own,
        })
    }

    fn lint_flags(&self, launch: &Launch) -> (Option<Value>, Option<u64>) {
        (launch.speculative_config.clone().map(Value::Object), None)
    }

    fn spec_line(&self, l: &Launch) -> String {
        let method = self.method(l).unwrap_or_else(|| "(none)".into());
        let k = l
            .spec("num_speculative_tokens")
            .map_or_else(|| "(none)".into(), Value::to_string);
        let mut line = format!("method {method}; K (num_speculative_tokens) {k}");
        if let Some(s) = l.max_num_seqs {
            line.push_str(&format!("; max_num_seqs {s}"));
        }
        if let Some(t) = l.max_num_batched_tokens {
            line.push_str(&format!("; max_num_batched_tokens {t}"));
        }
        line
    }

    /// A head that lives only inside its target's checkpoint (MTP) is not judged: vLLM infers
    /// its method from the target's `model_type` and normalises several MTP names (`mtp`,
    /// `deepseek_mtp`, …); the MTP deployment rules judge it.
    fn expected_method(&self, family: &FamilySpec) -> Option<&'static str> {
        if !family.locations.contains(&DrafterLocation::Separate) {
            return None;
        }
        family.engines.vllm
    }

    fn family_accepts(&self, family: &FamilySpec, method: &str) -> bool {
        family.vllm_accepts(method)
    }

    fn method_location(&self) -> (&'static str, Option<&'static str>, &'static str) {
        (
            "--speculative-config.method",
            Some(SPECULATIVE_CONFIG),
            "\"method\"",
        )
    }

    fn method_written(&self, want: &str) -> String {
        format!("\"method\": \"{want}\"")
    }

    fn model_flags(&self, _launch: &Launch) -> (&'static str, &'static str) {
        ("--speculative-config.model", "model")
    }

    /// `mtp`, or one of the MTP model-type names vLLM still accepts and rewrites to `mtp` with
    /// a deprecation warning (`deepseek_mtp`, `qwen3_next_mtp`, …), written in the config.
    fn serves_mtp_head(&self, method: Option<&Method>, _separate: bool) -> bool {
        method.is_some_and(|m| {
            m.from == MethodFrom::SpeculativeConfig && (m.name == "mtp" || m.name.ends_with("_mtp"))
        })
    }
}

/// The method vLLM uses: the speculative config's `method`, else the one vLLM infers from
/// "eagle3" or "dflash" in the drafter's name (`model`), else none.
fn method_of(spec: &Map<String, Value>) -> Option<Method> {
    if let Some(m) = spec.get("method").and_then(Value::as_str) {
        return Some(Method {
            name: m.to_string(),
            from: MethodFrom::SpeculativeConfig,
        });
    }
    let name = spec
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let inferred = ["eagle3", "dflash"]
        .into_iter()
        .find(|m| name.contains(m))?;
    Some(Method {
        name: inferred.to_string(),
        from: MethodFrom::DrafterName,
    })
}

/// vLLM's `human_readable_int`: a whole number, or a number with a decimal (`k`, `m`, `g`, `t`:
/// powers of 1,000, decimals allowed) or binary (`K`, `M`, `G`, `T`: powers of 1,024, whole
/// numbers only) suffix. `None` for anything else (`auto`, `-1`, a shell variable): vLLM then
/// derives the length from the config, or the line is not read here.
pub(crate) fn human_readable_int(text: &str) -> Option<u64> {
    let text = text.trim();
    if let Ok(n) = text.parse::<u64>() {
        return (n > 0).then_some(n);
    }
    let suffix = text.chars().last()?;
    let number = &text[..text.len() - suffix.len_utf8()];
    let power = match suffix.to_ascii_lowercase() {
        'k' => 1,
        'm' => 2,
        'g' => 3,
        't' => 4,
        _ => return None,
    };
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    if suffix.is_ascii_uppercase() {
        let n: u64 = number.parse().ok()?;
        return n.checked_mul(1u64 << (10 * power)).filter(|&n| n > 0);
    }
    let n: f64 = number.parse().ok()?;
    let tokens = n * 1000f64.powi(power);
    // vLLM's `int(float(number) * mult)`: truncated.
    (tokens.is_finite() && tokens >= 1.0 && tokens < u64::MAX as f64).then_some(tokens as u64)
}

/// `--speculative-config` JSON, with `--speculative-config.KEY VALUE` flags merged in, in order.
fn speculative_config(launch: &Launch) -> Result<Option<Map<String, Value>>> {
    let mut spec: Option<Map<String, Value>> = None;
    for flag in &launch.flags {
        if flag.name == SPECULATIVE_CONFIG {
            let text = flag.value.clone().unwrap_or_default();
            let map = json_object(launch, &text)?;
            spec.get_or_insert_with(Map::new).extend(map);
        } else if let Some(key) = flag
            .name
            .strip_prefix(SPECULATIVE_CONFIG)
            .and_then(|k| k.strip_prefix('.'))
        {
            // `--speculative-config.num_speculative_tokens 15`: the value is JSON when it parses.
            let text = flag.value.clone().unwrap_or_else(|| "true".into());
            let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
            spec.get_or_insert_with(Map::new)
                .insert(key.to_string(), value);
        }
    }
    Ok(spec)
}

/// `--speculative-config`'s value as a JSON object, or bad input that says why.
fn json_object(launch: &Launch, text: &str) -> Result<Map<String, Value>> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let hint = if text.contains('$') {
            "it holds a shell variable the input never assigns; paste the expanded command"
        } else {
            "vLLM parses it with json.loads: double-quoted keys and strings, and single quotes around the whole value in the shell"
        };
        Error::new(format!(
            "{SPECULATIVE_CONFIG}{} is not valid JSON: {e}: {}",
            launch.in_file(),
            clip(text, 200)
        ))
        .with_hint(hint)
    })?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(Error::new(format!(
            "{SPECULATIVE_CONFIG}{} must be a JSON object, not {}",
            launch.in_file(),
            clip(text, 200)
        ))
        .with_hint(
            "vLLM takes --speculative-config '{\"method\": ..., \"model\": ..., \"num_speculative_tokens\": ...}'",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::human_readable_int;

    /// vLLM's own docstring examples (vllm/utils/argparse_utils.py, 0.34.0), and what it refuses.
    #[test]
    fn max_model_len_reads_as_vllm_reads_it() {
        assert_eq!(human_readable_int("1k"), Some(1_000));
        assert_eq!(human_readable_int("1K"), Some(1_024));
        assert_eq!(human_readable_int("25.6k"), Some(25_600));
        assert_eq!(human_readable_int("128K"), Some(131_072));
        assert_eq!(human_readable_int(" 40960 "), Some(40_960));
        assert_eq!(human_readable_int("1.5K"), None);
        assert_eq!(human_readable_int("auto"), None);
        assert_eq!(human_readable_int("-1"), None);
        assert_eq!(human_readable_int("$LEN"), None);
        assert_eq!(human_readable_int("k"), None);
        assert_eq!(human_readable_int("99999999999999999999T"), None);
    }
}
