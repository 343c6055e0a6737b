//! What a running server says about itself beyond its metrics: SGLang's resolved arguments
//! (`/server_info`, `/get_server_info`), which name the drafter and target, vLLM's `/v1/models`
//! (the target only), and each engine's release from the endpoint its row of the engine table
//! names. A server's answer is input: capped, read field by field, paths it names refused when
//! they point outside model directories.

use serde::Serialize;

use crate::acceptance::{self, MetricsSource};
use crate::engine::{Engine, EngineRelease, VersionFrom};

/// What the server says about itself, beyond its metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerInfo {
    /// Where it was read (`/get_server_info`, `/v1/models`).
    pub endpoint: String,
    /// The served target (SGLang's `model_path`; vLLM's model `root` or `id`).
    pub target: Option<String>,
    /// SGLang's `speculative_draft_model_path` (vLLM does not expose the drafter).
    pub drafter: Option<String>,
    /// SGLang's `speculative_algorithm`.
    pub algorithm: Option<String>,
    /// SGLang's `speculative_num_draft_tokens`.
    pub num_draft_tokens: Option<u64>,
    pub drafter_revision: Option<String>,
    pub target_revision: Option<String>,
    /// Paths the server named that are not read (`/proc`, `/dev`, `/sys`, a `..` step, a local
    /// path that is not a directory), each with why: a server's answer is input.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
    /// The engine and the release the server says it runs (its row's version endpoint:
    /// vLLM's `/version`, SGLang's `version` in its server info), when it answers one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release: Option<crate::engine::EngineRelease>,
}

/// Why a model path a server names is not read from this machine, if it is not: the server is
/// not trusted to point `doctor` at `/proc/self/environ` or a device (it did read
/// `/proc/self/environ`: issue 32). A Hub repo id (`ORG/NAME`, no such local path) passes; the
/// engine's own model directories are directories.
fn refused_path(value: &str) -> Option<&'static str> {
    let path = std::path::Path::new(value);
    if path
        .components()
        .any(|c| c == std::path::Component::ParentDir)
    {
        return Some("it climbs with `..`");
    }
    if ["/proc", "/dev", "/sys"]
        .iter()
        .any(|p| path.starts_with(p))
    {
        return Some("it is under /proc, /dev or /sys");
    }
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_dir() => Some("it is not a directory"),
        _ => None,
    }
}

impl ServerInfo {
    /// Reads SGLang's `/get_server_info` answer (the resolved server arguments).
    pub fn from_sglang(endpoint: &str, body: &serde_json::Value) -> ServerInfo {
        let s = |k: &str| body.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let mut info = ServerInfo {
            endpoint: endpoint.to_string(),
            target: s("model_path"),
            drafter: s("speculative_draft_model_path"),
            algorithm: s("speculative_algorithm"),
            num_draft_tokens: body
                .get("speculative_num_draft_tokens")
                .and_then(|v| v.as_u64()),
            drafter_revision: s("speculative_draft_model_revision"),
            target_revision: s("revision"),
            refused: Vec::new(),
            release: None,
        };
        info.refuse_paths();
        info
    }

    /// Drops the model paths [`refused_path`] refuses, saying which and why.
    fn refuse_paths(&mut self) {
        for (what, slot) in [("target", &mut self.target), ("drafter", &mut self.drafter)] {
            if let Some(why) = slot.as_deref().and_then(refused_path) {
                let value = slot.take().unwrap_or_default();
                self.refused.push(format!(
                    "the server names the {what} `{value}`, not read: {why}"
                ));
            }
        }
    }

    /// Reads vLLM's `/v1/models` answer: the served target, never the drafter.
    pub fn from_vllm_models(endpoint: &str, body: &serde_json::Value) -> ServerInfo {
        let first = body
            .get("data")
            .and_then(|d| d.as_array())
            .and_then(|a| a.first());
        let target = first
            .and_then(|m| m.get("root").or_else(|| m.get("id")))
            .and_then(|v| v.as_str())
            .map(str::to_string);
        let mut info = ServerInfo {
            endpoint: endpoint.to_string(),
            target,
            ..ServerInfo::default()
        };
        info.refuse_paths();
        info
    }

    /// The SGLang launch command these arguments describe, for the launch rules (public for the
    /// `server_answer` fuzz target).
    pub fn sglang_command(&self) -> Option<Vec<String>> {
        if self.endpoint == "/v1/models" {
            return None;
        }
        crate::engine::sglang::server_command(&crate::engine::sglang::ServerArgs {
            target: self.target.as_deref(),
            drafter: self.drafter.as_deref(),
            algorithm: self.algorithm.as_deref(),
            num_draft_tokens: self.num_draft_tokens,
            drafter_revision: self.drafter_revision.as_deref(),
        })
    }
}

/// Asks the server about itself: SGLang's `/get_server_info` (its resolved arguments, drafter
/// included; `/server_info` in newer releases), else vLLM's `/v1/models` (the served target).
/// `None` when neither answers with JSON: the metrics alone then say nothing of the drafter.
pub fn server_info(metrics_url: &str, timeout: std::time::Duration) -> Option<ServerInfo> {
    let base = metrics_url
        .trim_end_matches('/')
        .trim_end_matches("/metrics")
        .to_string();
    // The metrics scraper's client (one deadline for the whole request), with a body cap for
    // answers of a few kB: a 16 MiB answer parsed whole cost 602 MB.
    let get = |path: &str| -> Option<String> {
        let source = acceptance::HttpSource::new(format!("{base}{path}"), timeout).ok()?;
        source.capped(SERVER_ANSWER_CAP).fetch().ok()
    };
    for path in ["/get_server_info", "/server_info"] {
        if let Some(body) = get(path) {
            if let Some(mut info) = ServerInfo::parse_sglang(path, &body) {
                info.release = release_in(Engine::Sglang, &body, &base);
                return Some(info);
            }
        }
    }
    let mut info =
        get("/v1/models").and_then(|body| ServerInfo::parse_vllm_models("/v1/models", &body))?;
    let endpoint = Engine::Vllm.spec().version_endpoint;
    info.release = endpoint
        .and_then(|e| get(e.path))
        .and_then(|body| release_in(Engine::Vllm, &body, &base));
    Some(info)
}

/// The release `engine`'s server states in `body` (the JSON its row's version endpoint
/// answers), as the server named it; `None` when the answer names none.
pub fn release_in(engine: Engine, body: &str, base: &str) -> Option<EngineRelease> {
    let endpoint = engine.spec().version_endpoint?;
    #[derive(serde::Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        version: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        build_info: Option<std::borrow::Cow<'a, str>>,
    }
    let a: Answer = serde_json::from_str(body).ok()?;
    let text = match endpoint.key {
        "build_info" => a.build_info?,
        _ => a.version?,
    };
    // `0.28.0`, `0.28.0+cu129`, `0.5.23.post1`, `b11312-0c1e570`: the release part.
    let tag = text.split(['+', ' ']).next().unwrap_or(&text);
    let (line, written) = crate::engine::tag_release(engine.spec().releases.scheme, tag)?;
    Some(EngineRelease {
        engine,
        version: Some(line),
        written: Some(written),
        from: Some(VersionFrom::Server(format!("{base}{}", endpoint.path))),
    })
}

/// The most a server's answer about itself (`/get_server_info`, `/v1/models`) may hold: SGLang's
/// resolved arguments are a few kB.
pub const SERVER_ANSWER_CAP: u64 = 1024 * 1024;

/// Only the fields `doctor` reads of SGLang's `/get_server_info`, kept raw; every other key is
/// skipped unbuilt.
#[derive(serde::Deserialize)]
struct SglangAnswer<'a> {
    #[serde(borrow, default)]
    model_path: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    speculative_draft_model_path: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    speculative_algorithm: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    speculative_num_draft_tokens: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    speculative_draft_model_revision: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    revision: Option<&'a serde_json::value::RawValue>,
}

/// vLLM's `/v1/models`: the models, each kept raw until the first is read.
#[derive(serde::Deserialize)]
struct ModelsAnswer<'a> {
    #[serde(borrow, default)]
    data: Option<&'a serde_json::value::RawValue>,
}

/// A raw field as a value (`Null` when it is not JSON, which cannot happen for a field serde
/// has already delimited).
fn raw_value(raw: Option<&serde_json::value::RawValue>) -> serde_json::Value {
    raw.and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or(serde_json::Value::Null)
}

impl ServerInfo {
    /// SGLang's answer, read field by field; `None` when it is not a JSON object naming a
    /// `model_path` (then it is not SGLang's server info). Public for the `server_answer` fuzz
    /// target, like [`ServerInfo::parse_vllm_models`].
    pub fn parse_sglang(endpoint: &str, body: &str) -> Option<ServerInfo> {
        let a: SglangAnswer = serde_json::from_str(body).ok()?;
        // A JSON object naming `model_path` as a string (serde would also read an array as the
        // fields in order).
        if !body.trim_start().starts_with('{') || !a.model_path?.get().starts_with('"') {
            return None;
        }
        let fields = serde_json::json!({
            "model_path": raw_value(a.model_path),
            "speculative_draft_model_path": raw_value(a.speculative_draft_model_path),
            "speculative_algorithm": raw_value(a.speculative_algorithm),
            "speculative_num_draft_tokens": raw_value(a.speculative_num_draft_tokens),
            "speculative_draft_model_revision": raw_value(a.speculative_draft_model_revision),
            "revision": raw_value(a.revision),
        });
        Some(ServerInfo::from_sglang(endpoint, &fields))
    }

    /// vLLM's answer: the first model only.
    pub fn parse_vllm_models(endpoint: &str, body: &str) -> Option<ServerInfo> {
        let a: ModelsAnswer = serde_json::from_str(body).ok()?;
        let first = a.data.and_then(|d| {
            let list: Vec<&serde_json::value::RawValue> = serde_json::from_str(d.get()).ok()?;
            list.first().map(|m| raw_value(Some(m)))
        });
        let data = serde_json::Value::Array(first.into_iter().collect());
        Some(ServerInfo::from_vllm_models(
            endpoint,
            &serde_json::json!({ "data": data }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server's answer is input: a model path it names under /proc, /dev or /sys, with a `..`
    /// step, or that is a file here, is not read (it named /proc/self/environ: issue 32).
    #[test]
    fn server_named_paths_outside_model_directories_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        for bad in [
            "/proc/self/environ",
            "/dev/zero",
            "/sys/kernel",
            "models/../../etc",
            file.to_str().unwrap(),
        ] {
            assert!(refused_path(bad).is_some(), "{bad}");
        }
        for good in [
            "Qwen/Qwen3.6-27B",
            tmp.path().to_str().unwrap(),
            "/models/not-here",
        ] {
            assert_eq!(refused_path(good), None, "{good}");
        }
        let info = ServerInfo::from_sglang(
            "/get_server_info",
            &serde_json::json!({"model_path": "/proc/self/environ", "speculative_draft_model_path": "z-lab/x"}),
        );
        assert_eq!(info.target, None);
        assert_eq!(info.drafter.as_deref(), Some("z-lab/x"));
        assert!(
            info.refused[0].contains("/proc/self/environ"),
            "{:?}",
            info.refused
        );
    }

    /// The server's answers are read field by field: other keys, however many, are skipped
    /// unbuilt, wrong types ignored, and only the first of vLLM's models is read.
    #[test]
    fn server_answers_are_read_field_by_field() {
        let mut body = String::from("{");
        for i in 0..50_000 {
            body.push_str(&format!("\"k{i}\": [1, 2, {{\"x\": null}}], "));
        }
        body.push_str(
            "\"model_path\": \"Qwen/Qwen3.6-27B\", \"speculative_num_draft_tokens\": 16}",
        );
        let info = ServerInfo::parse_sglang("/get_server_info", &body).unwrap();
        assert_eq!(info.target.as_deref(), Some("Qwen/Qwen3.6-27B"));
        assert_eq!(info.num_draft_tokens, Some(16));
        assert!(ServerInfo::parse_sglang("/get_server_info", "{\"other\": 1}").is_none());
        assert!(ServerInfo::parse_sglang("/get_server_info", "[1, 2]").is_none());
        let models = r#"{"data": [{"id": "a", "root": "Qwen/Qwen3-8B"}, {"id": "b"}]}"#;
        let info = ServerInfo::parse_vllm_models("/v1/models", models).unwrap();
        assert_eq!(info.target.as_deref(), Some("Qwen/Qwen3-8B"));
        let empty = ServerInfo::parse_vllm_models("/v1/models", r#"{"data": "x"}"#).unwrap();
        assert_eq!(empty.target, None);
    }

    /// A server's answer is input: wrong types are ignored, never a panic, and a value that
    /// reads as a flag never becomes one in the launch command built from it.
    #[test]
    fn hostile_server_answers_are_ignored_not_obeyed() {
        let weird = serde_json::json!({
            "model_path": "--tp",
            "speculative_draft_model_path": 42,
            "speculative_num_draft_tokens": "sixteen",
            "speculative_algorithm": ["DFLASH"],
        });
        let info = ServerInfo::from_sglang("/get_server_info", &weird);
        assert_eq!(info.drafter, None);
        assert_eq!(info.num_draft_tokens, None);
        assert_eq!(info.sglang_command(), None);
        let sneaky = serde_json::json!({
            "model_path": "Qwen/Qwen3.6-27B",
            "speculative_draft_model_path": "--enable-torch-compile",
        });
        let args = ServerInfo::from_sglang("/get_server_info", &sneaky)
            .sglang_command()
            .unwrap();
        assert!(
            !args.iter().any(|a| a == "--enable-torch-compile"),
            "{args:?}"
        );
        let models = ServerInfo::from_vllm_models("/v1/models", &serde_json::json!({"data": "x"}));
        assert_eq!(models.target, None);
        assert_eq!(models.sglang_command(), None);
    }
}
