//! Kubernetes manifests as launch input: the engine command a cluster would run, from YAML as
//! `kubectl apply`, `helm template` and `kustomize build` give it (several `---` documents, a
//! `kind: List`). A workload (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod,
//! LeaderWorkerSet) gives one command per container, its `command` and `args` (the image's
//! entrypoint when there is no `command`; a `sh -c` script split as a script) after Kubernetes'
//! own `$(VAR)` expansion, with the container's `env`; a KubeRay `RayCluster` its head's and
//! workers' pods, the Ray container's words joined into the one `bash -lc` script KubeRay runs; a
//! command that runs a script from a mounted ConfigMap, that script's commands. A KServe
//! `LLMInferenceService` gives the
//! command its controller renders, in the shape of kserve#5687 (`spec.speculator`, read at
//! kserve/kserve@9e26f297d4cc327cd8afcdb2865017db77272681, `workload_speculator.go` and
//! `config/llmisvcconfig/config-llm-template.yaml`): `vllm serve` of the model, `--served-model-name`,
//! `--tensor-parallel-size` from `spec.parallelism.tensor`, the main container's
//! `VLLM_ADDITIONAL_ARGS` and `args`, and `--speculative-config` built from `spec.speculator.config`
//! (each value typed as the controller types it: integer, then float, then boolean, else string)
//! with `model` set to the speculator. The controller downloads `spec.model.uri` to `/mnt/models`
//! and the speculator to `/mnt/speculator/model`; the command written here names the URIs
//! instead (`hf://ORG/NAME` as the Hub repo `ORG/NAME`, anything else as written), so the models
//! are read from where they come from. The YAML is loaded with the compose file's caps
//! ([`shell::load_yaml`]). Pure: no file or network access.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};
use yaml_rust2::Yaml;

use super::shell::{self, Command};
use crate::{Error, Result};

/// What `--file` takes, said when a manifest cannot be read (the hint of every error here).
const HINT: &str = "--file takes a shell script, a Dockerfile, a docker-compose file or Kubernetes manifests (as `helm template` or `kustomize build` print them)";

/// Workload kinds whose pod template is at `spec.template.spec`.
const TEMPLATED: &[&str] = &[
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Job",
];

/// Whether `text` is Kubernetes manifests: a document with `apiVersion` and `kind` at its top
/// level, in block style (`apiVersion: v1` at the start of a line, the key quoted or not, after
/// a `--- ` marker or not), or in flow style and JSON (`kubectl get -o json`, `{apiVersion: v1,
/// kind: Pod, …}`): a document that opens with `{` or `[` and names both keys. A docker-compose
/// file has neither key; a shell script has no line starting so.
pub fn is_manifest(text: &str) -> bool {
    let block = |key: &str| text.lines().any(|l| starts_with_key(l, key));
    if block("apiVersion") && block("kind") {
        return true;
    }
    opens_flow(text) && names_key(text, "apiVersion") && names_key(text, "kind")
}

/// `line` starts with the mapping key `key` (`key:`, `"key":`, `'key' :`), after a document
/// marker `--- ` or not.
fn starts_with_key(line: &str, key: &str) -> bool {
    let line = line.strip_prefix("--- ").unwrap_or(line);
    key_then_colon(line, key)
}

/// `s` is `key`, quoted or not, then spaces and `:`.
fn key_then_colon(s: &str, key: &str) -> bool {
    let quote = s.chars().next().filter(|c| matches!(c, '"' | '\''));
    let s = quote.map_or(s, |q| &s[q.len_utf8()..]);
    let Some(mut rest) = s.strip_prefix(key) else {
        return false;
    };
    if let Some(q) = quote {
        match rest.strip_prefix(q) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.trim_start_matches([' ', '\t']).starts_with(':')
}

/// Some document of `text` opens with a flow collection (`{`, `[`): its first character that
/// is not blank, a comment or the `---` marker.
fn opens_flow(text: &str) -> bool {
    let mut at_start = true;
    for line in text.lines() {
        let mut l = line.trim_start();
        if l == "---" || l.starts_with("--- ") {
            at_start = true;
            l = l.trim_start_matches('-').trim_start();
        }
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if at_start && (l.starts_with('{') || l.starts_with('[')) {
            return true;
        }
        at_start = false;
    }
    false
}

/// `text` holds `key` as a mapping key anywhere (`"key":`, `key:` after `{`, `,` or a space).
fn names_key(text: &str, key: &str) -> bool {
    text.match_indices(key).any(|(at, _)| {
        // An opening quote right before the key is the key's own.
        let head = &text[..at];
        let head = head.strip_suffix(['"', '\'']).unwrap_or(head);
        let boundary = head
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || matches!(c, '{' | ','));
        boundary && key_then_colon(&text[head.len()..], key)
    })
}

/// The commands of every container and `LLMInferenceService` in `text`, with notes on how the
/// `LLMInferenceService`s were rendered.
pub fn from_manifests(text: &str, file: &str) -> Result<(Vec<Command>, Vec<String>)> {
    let text = text.replace("\r\n", "\n");
    let docs = shell::load_yaml(&text, file, "Kubernetes manifests", HINT)?;
    let shared: Arc<str> = Arc::from(text.as_str());
    let mut out = Manifests {
        file,
        text: shared,
        config_maps: Vec::new(),
        commands: Vec::new(),
        notes: Vec::new(),
        scripts_read: 0,
        expanded: Budget::default(),
    };
    // kustomize's configMapGenerator renders a container's env as `configMapKeyRef`s to a
    // ConfigMap in the same output: read them first, so those values are known.
    for doc in &docs {
        out.config_map(doc);
    }
    for doc in &docs {
        out.object(doc)?;
    }
    Ok((out.commands, out.notes))
}

struct Manifests<'a> {
    file: &'a str,
    text: Arc<str>,
    /// Every ConfigMap's `data`: (name, key, value).
    config_maps: Vec<(String, String, String)>,
    commands: Vec<Command>,
    notes: Vec<String>,
    /// Scripts split so far (`sh -c` and ConfigMap scripts), against [`MAX_SCRIPTS`].
    scripts_read: usize,
    /// What `$(VAR)` expansion has produced so far, against its caps.
    expanded: Budget,
}

fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn strings(y: &Yaml) -> Vec<String> {
    match y {
        Yaml::Array(items) => items.iter().filter_map(scalar).collect(),
        _ => Vec::new(),
    }
}

impl Manifests<'_> {
    /// Records a ConfigMap's `data` (a `List`'s items too).
    fn config_map(&mut self, doc: &Yaml) {
        if let Yaml::Array(items) = &doc["items"] {
            for item in items {
                self.config_map(item);
            }
        }
        if scalar(&doc["kind"]).as_deref() != Some("ConfigMap") {
            return;
        }
        let name = scalar(&doc["metadata"]["name"]).unwrap_or_default();
        if let Yaml::Hash(data) = &doc["data"] {
            for (k, v) in data {
                if let (Some(k), Some(v)) = (scalar(k), scalar(v)) {
                    self.config_maps.push((name.clone(), k, v));
                }
            }
        }
    }

    /// A container's `env`: literal values, each with the `$(VAR)` references to the variables
    /// before it expanded (as the kubelet does), and `configMapKeyRef`s to a ConfigMap of the
    /// same manifests (taken as written); any other `valueFrom` (a secret, a field) is not
    /// known here and is left out, so a flag naming it stays unresolved. `whose` names the
    /// container in an error.
    fn env(&mut self, c: &Yaml, whose: &str) -> Result<Vars> {
        let mut vars = Vars::default();
        let Yaml::Array(items) = &c["env"] else {
            return Ok(vars);
        };
        for e in items {
            let Some(name) = scalar(&e["name"]) else {
                continue;
            };
            let value = match scalar(&e["value"]) {
                Some(v) => self.expand(&v, &vars, whose)?,
                None => {
                    let r = &e["valueFrom"]["configMapKeyRef"];
                    let from_map =
                        scalar(&r["name"])
                            .zip(scalar(&r["key"]))
                            .and_then(|(map, key)| {
                                self.config_maps
                                    .iter()
                                    .find(|(n, k, _)| *n == map && *k == key)
                                    .map(|(_, _, v)| v.clone())
                            });
                    let Some(v) = from_map else {
                        continue;
                    };
                    v
                }
            };
            vars.set(name, value);
        }
        Ok(vars)
    }

    /// `word` after Kubernetes' `$(VAR)` expansion ([`kube_expand`]), charged to the file's
    /// budget; past it, an error naming the file and the container.
    fn expand(&mut self, word: &str, vars: &Vars, whose: &str) -> Result<String> {
        kube_expand(word, vars, &mut self.expanded).map_err(|over| {
            let what = match over {
                Over::Bytes => format!("to more than {} MiB", MAX_KUBE_EXPANDED_BYTES >> 20),
                Over::References => format!("more than {MAX_KUBE_REFERENCES} `$(VAR)` references"),
            };
            Error::new(format!(
                "{}: the `$(VAR)` references of {whose} expand {what} (Kubernetes expands them \
                 in `command`, `args` and `env` values): refused, no deployment does that",
                self.file
            ))
            .with_hint(
                "look for a variable whose value names other variables many times, or a reference \
                 repeated many times; a real manifest expands a few dozen",
            )
        })
    }

    /// One object: a list's items, a workload's pod template, or an `LLMInferenceService`.
    fn object(&mut self, doc: &Yaml) -> Result<()> {
        let kind = scalar(&doc["kind"]).unwrap_or_default();
        let name = scalar(&doc["metadata"]["name"]).unwrap_or_default();
        let spec = &doc["spec"];
        match kind.as_str() {
            "List" => {
                if let Yaml::Array(items) = &doc["items"] {
                    for item in items {
                        self.object(item)?;
                    }
                }
                Ok(())
            }
            "Pod" => self.pod(spec, &kind, &name),
            "CronJob" => self.pod(
                &spec["jobTemplate"]["spec"]["template"]["spec"],
                &kind,
                &name,
            ),
            "LeaderWorkerSet" => {
                let lws = &spec["leaderWorkerTemplate"];
                self.pod(&lws["leaderTemplate"]["spec"], &kind, &name)?;
                self.pod(&lws["workerTemplate"]["spec"], &kind, &name)
            }
            "LLMInferenceService" => self.llm_inference_service(spec, &name),
            // KubeRay: the head's pod and each worker group's (vLLM's `--distributed-executor-
            // backend ray` deployments, as the production-stack chart renders them).
            "RayCluster" => {
                self.pod(&spec["headGroupSpec"]["template"]["spec"], &kind, &name)?;
                if let Yaml::Array(groups) = &spec["workerGroupSpecs"] {
                    for group in groups {
                        self.pod(&group["template"]["spec"], &kind, &name)?;
                    }
                }
                Ok(())
            }
            k if TEMPLATED.contains(&k) => self.pod(&spec["template"]["spec"], &kind, &name),
            _ => Ok(()),
        }
    }

    /// Every container of a pod spec (init containers download models; they start no engine).
    fn pod(&mut self, pod: &Yaml, kind: &str, name: &str) -> Result<()> {
        let Yaml::Array(containers) = &pod["containers"] else {
            return Ok(());
        };
        for (index, c) in containers.iter().enumerate() {
            let container = scalar(&c["name"]).unwrap_or_default();
            let whose = format!("container `{container}` of {kind} `{name}`");
            let env = self.env(c, &whose)?;
            let scripts = self.mounted_scripts(pod, c);
            let mut expand = |key: &str| {
                strings(&c[key])
                    .iter()
                    .map(|w| self.expand(w, &env, &whose))
                    .collect::<Result<Vec<String>>>()
            };
            let (command, args) = (expand("command")?, expand("args")?);
            let words = if kind == "RayCluster" && index == 0 && command.len() + args.len() > 0 {
                // KubeRay runs the Ray container's `command` and `args` joined by spaces as
                // one `/bin/bash -lc` script, with `ray start` after it (ray-project/kuberay,
                // ray-operator/controllers/ray/common/pod.go, `BuildPod`: `convertCmdToString`):
                // the production-stack chart writes a one-string `/bin/bash -c "…"` there.
                let script: Vec<&str> = command.iter().chain(&args).map(String::as_str).collect();
                vec!["/bin/bash".into(), "-c".into(), script.join(" ")]
            } else {
                let mut words = if command.is_empty() {
                    scalar(&c["image"]).into_iter().collect()
                } else {
                    command
                };
                words.extend(args);
                words
            };
            self.push(words, env.pairs, scalar(&c["image"]), &scripts, &whose)?;
        }
        Ok(())
    }

    /// The files ConfigMaps put into a container (its `volumeMounts` of the pod's `configMap`
    /// volumes), as (file name, text): a container that runs one of them runs that script.
    fn mounted_scripts(&self, pod: &Yaml, c: &Yaml) -> Vec<(String, String)> {
        let (Yaml::Array(mounts), Yaml::Array(volumes)) = (&c["volumeMounts"], &pod["volumes"])
        else {
            return Vec::new();
        };
        let maps: Vec<String> = mounts
            .iter()
            .filter_map(|m| scalar(&m["name"]))
            .filter_map(|v| {
                let volume = volumes
                    .iter()
                    .find(|x| scalar(&x["name"]) == Some(v.clone()))?;
                scalar(&volume["configMap"]["name"])
            })
            .collect();
        self.config_maps
            .iter()
            .filter(|(map, _, _)| maps.contains(map))
            .map(|(_, key, text)| (key.clone(), text.clone()))
            .collect()
    }

    /// One container's words: a `sh -c SCRIPT` is split as a script (the container's env
    /// exported first, so `$VAR` expands as the shell would), anything else taken as words; a
    /// command that runs a script of a mounted ConfigMap (by its file name: charts copy it
    /// elsewhere first) is that script's commands.
    fn push(
        &mut self,
        words: Vec<String>,
        env: Vec<(String, String)>,
        image: Option<String>,
        scripts: &[(String, String)],
        whose: &str,
    ) -> Result<()> {
        let command = Command {
            words,
            env,
            text: Arc::clone(&self.text),
            line: 1,
            image,
        };
        self.take(command, scripts, whose, &mut Vec::new());
        Ok(())
    }

    /// One command, or the commands of the script it runs, each taken the same way: KubeRay's
    /// `bash -lc` around the chart's `bash -c` around a ConfigMap script is three levels.
    /// `chain` holds the ConfigMap scripts being followed: one that runs itself (directly or
    /// through another) is not followed again, scripts are followed [`MAX_NESTING`] levels deep,
    /// and at most [`MAX_SCRIPTS`] are split per manifest file (a script that runs another one
    /// a hundred times, each of which does the same, would otherwise multiply at every level).
    fn take(
        &mut self,
        c: Command,
        scripts: &[(String, String)],
        whose: &str,
        chain: &mut Vec<String>,
    ) {
        let shell = c.words.first().map(|w| w.rsplit('/').next().unwrap_or(w));
        let is_shell = matches!(shell, Some("sh" | "bash" | "dash" | "ash"));
        let mounted = mounted_script(&c.words, scripts).filter(|(key, _)| !chain.contains(key));
        let follow = chain.len() < MAX_NESTING
            && (is_shell && c.words.len() >= 3 && c.words[1] == "-c" || mounted.is_some());
        if follow && self.scripts_read >= MAX_SCRIPTS {
            if self.scripts_read == MAX_SCRIPTS {
                self.notes.push(format!(
                    "{whose}: more than {MAX_SCRIPTS} scripts run one another; the rest were not read"
                ));
                self.scripts_read += 1;
            }
            return;
        }
        let inner = if !follow {
            None
        } else if is_shell && c.words.len() >= 3 && c.words[1] == "-c" {
            self.scripts_read += 1;
            let what = format!("the `sh -c` script of {whose}");
            Some((None, self.script(&c.words[2], &c.env, &what)))
        } else {
            mounted.map(|(key, text)| {
                self.scripts_read += 1;
                let what = format!("the script `{key}` that {whose} runs");
                (Some(key.clone()), self.script(text, &c.env, &what))
            })
        };
        match inner {
            Some((key, commands)) => {
                chain.push(key.unwrap_or_default());
                for mut inner in commands {
                    // A script runs in its container's image.
                    inner.image = inner.image.or_else(|| c.image.clone());
                    self.take(inner, scripts, whose, chain);
                }
                chain.pop();
            }
            None if !c.words.is_empty() && self.commands.len() < shell::MAX_COMMANDS => {
                self.commands.push(c)
            }
            None => {}
        }
    }
}

/// How many scripts deep a container's command is followed.
const MAX_NESTING: usize = 4;
/// Most scripts split for one manifest file.
const MAX_SCRIPTS: usize = 64;

/// The ConfigMap script a command runs (`$HOME/start.sh`, `bash -x /entrypoint/start.sh`,
/// `exec ./start.sh`, `source start.sh`), matched by file name.
fn mounted_script<'s>(
    words: &[String],
    scripts: &'s [(String, String)],
) -> Option<&'s (String, String)> {
    let program = words
        .iter()
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .find(|w| {
            !w.starts_with('-')
                && !matches!(
                    *w,
                    "exec" | "nohup" | "sh" | "bash" | "dash" | "ash" | "source" | "."
                )
        })?;
    scripts.iter().find(|(key, _)| key == program)
}

impl Manifests<'_> {
    /// A container's script split into commands, its env exported first. One that the
    /// splitter cannot read (a helper's model prefetch loop) is no reason to leave the engine's
    /// container unchecked: a note, and no commands.
    fn script(&mut self, text: &str, env: &[(String, String)], what: &str) -> Vec<Command> {
        let mut script = String::new();
        for (k, v) in env {
            script.push_str(&format!("export {k}={}\n", shell_words::quote(v)));
        }
        script.push_str(text);
        match shell::from_script(&script, Some(self.file)) {
            Ok(commands) => commands
                .into_iter()
                .map(|mut c| {
                    c.text = Arc::clone(&self.text);
                    c.line = 1;
                    c
                })
                .collect(),
            Err(e) => {
                self.notes
                    .push(format!("{what} was not read: {}", e.message));
                Vec::new()
            }
        }
    }
}

/// Most bytes `$(VAR)` expansion may produce over one manifest file (words and env values, the
/// shell's budget for `$VAR`): each reference copies its value, so `args: ["$(A)$(A)…"]` with a
/// long `A`, or env values that each name the one before many times, grew the text by orders of
/// magnitude (a 500 kB manifest asked for 6.5 GB and aborted; issue 44).
pub const MAX_KUBE_EXPANDED_BYTES: usize = shell::MAX_EXPANDED_BYTES;
/// Most `$(VAR)` references expanded over one manifest file; a real one has a few dozen.
pub const MAX_KUBE_REFERENCES: usize = 10_000;

/// A container's environment as `$(VAR)` is resolved against it: the variables in order (what
/// a `sh -c` script exports) and by name (the last definition wins).
#[derive(Debug, Clone, Default)]
pub struct Vars {
    pairs: Vec<(String, String)>,
    index: HashMap<String, usize>,
}

impl Vars {
    /// Defines (or redefines) `name`.
    pub fn set(&mut self, name: String, value: String) {
        self.index.insert(name.clone(), self.pairs.len());
        self.pairs.push((name, value));
    }

    /// The value `name` has now.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.index.get(name).map(|&i| self.pairs[i].1.as_str())
    }
}

/// What `$(VAR)` expansion has produced over one manifest file.
#[derive(Debug, Clone, Copy, Default)]
pub struct Budget {
    bytes: usize,
    references: usize,
}

/// Which cap an expansion passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    Bytes,
    References,
}

/// Kubernetes' expansion of `command`, `args` and `env` values (the kubelet's `expansion`
/// package): `$(VAR)` is `VAR`'s value when it is set and stays as written (scanning goes on
/// after its `)`) when it is not, `$$` is a literal `$`, and a `$(` with no `)` after it stays
/// as written. One pass: each byte is read once (after a `$(` that has no `)`, no later one is
/// looked for), and what it produces is charged to `budget` as it grows, so past
/// [`MAX_KUBE_EXPANDED_BYTES`] or [`MAX_KUBE_REFERENCES`] it stops with the cap it passed.
pub fn kube_expand(
    word: &str,
    vars: &Vars,
    budget: &mut Budget,
) -> std::result::Result<String, Over> {
    let mut out = String::with_capacity(word.len().min(MAX_KUBE_EXPANDED_BYTES));
    let mut rest = word;
    let mut closer_ahead = true;
    let over = |out: &String, budget: &Budget| budget.bytes + out.len() > MAX_KUBE_EXPANDED_BYTES;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        rest = match after.as_bytes().first() {
            Some(b'$') => {
                out.push('$');
                &after[1..]
            }
            Some(b'(') if closer_ahead => match after.find(')') {
                Some(j) => {
                    let name = &after[1..j];
                    match vars.get(name) {
                        Some(value) => {
                            budget.references += 1;
                            if budget.references > MAX_KUBE_REFERENCES {
                                return Err(Over::References);
                            }
                            out.push_str(value);
                        }
                        None => out.push_str(&rest[i..=i + 1 + j]),
                    }
                    &after[j + 1..]
                }
                None => {
                    closer_ahead = false;
                    out.push_str("$(");
                    &after[1..]
                }
            },
            Some(b'(') => {
                out.push_str("$(");
                &after[1..]
            }
            _ => {
                out.push('$');
                after
            }
        };
        if over(&out, budget) {
            return Err(Over::Bytes);
        }
    }
    out.push_str(rest);
    if over(&out, budget) {
        return Err(Over::Bytes);
    }
    budget.bytes += out.len();
    Ok(out)
}

/// A model URI as the command written here names it: `hf://ORG/NAME` is the Hub repo; any
/// other (`pvc://`, `s3://`, `oci://`) stays as written, for `--volume` to map or to be
/// reported as not readable.
pub fn model_name(uri: &str) -> String {
    uri.strip_prefix("hf://").unwrap_or(uri).to_string()
}

/// A `spec.speculator.config` value typed as KServe's `inferJSONType` does: an integer, else a
/// float, else a boolean (Go's `ParseBool` spellings), else the string.
pub fn infer_json(v: &str) -> Value {
    if let Ok(i) = v.parse::<i64>() {
        return Value::from(i);
    }
    // Go's ParseFloat reads `NaN` and `Inf`; JSON has neither, so those stay strings.
    if let Some(f) = v.parse::<f64>().ok().filter(|f| f.is_finite()) {
        return Value::from(f);
    }
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Value::Bool(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Value::Bool(false),
        _ => Value::String(v.to_string()),
    }
}

impl Manifests<'_> {
    /// The command KServe's controller renders for an `LLMInferenceService`'s decode pods.
    fn llm_inference_service(&mut self, spec: &Yaml, name: &str) -> Result<()> {
        let whose = format!("LLMInferenceService `{name}`");
        let Some(uri) = scalar(&spec["model"]["uri"]) else {
            return Err(Error::new(format!(
                "{}: {whose} has no `spec.model.uri`",
                self.file
            ))
            .with_hint("an LLMInferenceService names its model in spec.model.uri (hf://ORG/NAME, pvc://CLAIM/PATH, s3://…, oci://…)"));
        };
        let main = main_container(spec);
        let env = match main {
            Some(c) => self.env(c, &whose)?,
            None => Vars::default(),
        };
        let mut words = vec!["vllm".to_string(), "serve".to_string(), model_name(&uri)];
        if let Some(served) = scalar(&spec["model"]["name"]) {
            words.extend(["--served-model-name".to_string(), served]);
        }
        if let Some(tp) = scalar(&spec["parallelism"]["tensor"]) {
            words.extend([crate::engine::vllm::TENSOR_PARALLEL_SIZE.to_string(), tp]);
        }
        let additional = env
            .get("VLLM_ADDITIONAL_ARGS")
            .unwrap_or_default()
            .to_string();
        let extra = shell_words::split(&additional).map_err(|_| {
            Error::new(format!(
                "{}: unbalanced quote in VLLM_ADDITIONAL_ARGS of {whose}",
                self.file
            ))
            .with_hint("close the quote: the template splits VLLM_ADDITIONAL_ARGS as a shell does")
        })?;
        let speculator = &spec["speculator"];
        let has_speculator = !matches!(speculator, Yaml::BadValue | Yaml::Null);
        words.extend(strip_speculative_config(extra, has_speculator));
        if has_speculator {
            let config = self.speculative_config(speculator, &whose)?;
            words.extend([crate::engine::vllm::SPECULATIVE_CONFIG.to_string(), config]);
        }
        words.extend(main.map(|c| strings(&c["args"])).unwrap_or_default());
        self.notes.push(format!(
            "{whose}: checked as the command KServe's controller renders (kserve#5687): vllm serve {} with --speculative-config from spec.speculator; the engine reads them from /mnt/models and /mnt/speculator/model",
            model_name(&uri)
        ));
        self.push(words, env.pairs, None, &[], &whose)
    }

    /// `spec.speculator` as the `--speculative-config` JSON the controller writes.
    fn speculative_config(&self, speculator: &Yaml, whose: &str) -> Result<String> {
        let mut config = Map::new();
        match &speculator["config"] {
            Yaml::Hash(h) => {
                for (k, v) in h {
                    let (Some(k), Some(v)) = (scalar(k), scalar(v)) else {
                        return Err(Error::new(format!(
                            "{}: `spec.speculator.config` of {whose} holds a value that is not a string",
                            self.file
                        ))
                        .with_hint("spec.speculator.config maps names to strings (`num_speculative_tokens: \"6\"`)"));
                    };
                    config.insert(k, infer_json(&v));
                }
            }
            Yaml::BadValue | Yaml::Null => {}
            _ => {
                return Err(Error::new(format!(
                    "{}: `spec.speculator.config` of {whose} is not a mapping",
                    self.file
                ))
                .with_hint("spec.speculator.config maps vLLM speculative-config keys to strings"))
            }
        }
        if let Some(uri) = scalar(&speculator["model"]["uri"]) {
            config.insert("model".into(), Value::String(model_name(&uri)));
        }
        Ok(Value::Object(config).to_string())
    }
}

/// The main container of an `LLMInferenceService`'s template (`main`, as KServe names it).
fn main_container(spec: &Yaml) -> Option<&Yaml> {
    match &spec["template"]["containers"] {
        Yaml::Array(cs) => cs
            .iter()
            .find(|c| scalar(&c["name"]).as_deref() == Some("main")),
        _ => None,
    }
}

/// `VLLM_ADDITIONAL_ARGS` without its `--speculative-config` when the resource has a
/// `spec.speculator`: the controller strips it so the resource's config wins.
fn strip_speculative_config(words: Vec<String>, strip: bool) -> Vec<String> {
    if !strip {
        return words;
    }
    let mut out = Vec::with_capacity(words.len());
    let mut skip = false;
    for w in words {
        if skip {
            skip = false;
            continue;
        }
        if w == crate::engine::vllm::SPECULATIVE_CONFIG {
            skip = true;
            continue;
        }
        if w.starts_with("--speculative-config=") {
            continue;
        }
        out.push(w);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_kubernetes_variables() {
        let mut env = Vars::default();
        env.set("M".into(), "Qwen/Qwen3-8B".into());
        let expand = |w: &str| kube_expand(w, &env, &mut Budget::default()).unwrap();
        assert_eq!(expand("$(M)"), "Qwen/Qwen3-8B");
        assert_eq!(expand("a$(M)b"), "aQwen/Qwen3-8Bb");
        assert_eq!(expand("$$(M)"), "$(M)");
        assert_eq!(expand("$(UNSET)"), "$(UNSET)");
        assert_eq!(expand("$HOME"), "$HOME");
        // As the kubelet reads them: an unset name is kept whole, scanning goes on after it.
        assert_eq!(expand("$(X$(M))"), "$(X$(M))");
        assert_eq!(expand("$( $$ $(M"), "$( $ $(M");
        assert_eq!(expand("$"), "$");
        assert_eq!(expand("é$(M)é$"), "éQwen/Qwen3-8Bé$");
    }

    /// Issue 44: expansion had no bound (a 500 kB manifest asked for 6.5 GB and aborted). Each
    /// shape is refused at its cap, at once: one word of many references to a long value,
    /// many references to an empty one, env values that each name the one before 16 times,
    /// and `$(` without `)` repeated (each looked for its `)` to the end: quadratic).
    #[test]
    fn expansion_is_capped_and_linear() {
        let mut env = Vars::default();
        env.set("A".into(), "x".repeat(100_000));
        env.set("E".into(), String::new());
        let word = "$(A)".repeat(200);
        assert_eq!(
            kube_expand(&word, &env, &mut Budget::default()),
            Err(Over::Bytes)
        );
        let word = "$(E)".repeat(MAX_KUBE_REFERENCES + 1);
        assert_eq!(
            kube_expand(&word, &env, &mut Budget::default()),
            Err(Over::References)
        );
        let open = "$(".repeat(500_000);
        assert_eq!(
            kube_expand(&open, &env, &mut Budget::default()).unwrap(),
            open
        );
        let mut env = String::from("          - name: V0\n            value: \"yyyyyyyy\"\n");
        for i in 1..12 {
            let refs = format!("$(V{})", i - 1).repeat(16);
            env.push_str(&format!(
                "          - name: V{i}\n            value: \"{refs}\"\n"
            ));
        }
        let text = format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n        - name: c\n          image: vllm/vllm-openai\n          args: [\"$(V11)\"]\n          env:\n{env}"
        );
        let e = from_manifests(&text, "p.yaml").unwrap_err();
        assert!(
            e.message
                .contains("p.yaml: the `$(VAR)` references of container `c` of Pod `p` expand"),
            "{}",
            e.message
        );
    }

    /// Env values see the variables defined before them (the kubelet's dependent variables);
    /// a reference to a later one stays as written.
    #[test]
    fn env_values_expand_earlier_variables() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: c\n      image: vllm/vllm-openai\n      command: [vllm, serve, $(M)]\n      env:\n        - name: D\n          value: /models/$(M)\n        - name: M\n          value: Org/Target\n        - name: S\n          value: '{\"model\": \"$(M)-draft\"}'\n";
        let (cmds, _) = from_manifests(text, "p.yaml").unwrap();
        assert_eq!(cmds[0].words, ["vllm", "serve", "Org/Target"]);
        let env: HashMap<&str, &str> = cmds[0]
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(env["D"], "/models/$(M)");
        assert_eq!(env["S"], "{\"model\": \"Org/Target-draft\"}");
    }

    #[test]
    fn types_speculator_values_as_the_controller_does() {
        assert_eq!(infer_json("6"), Value::from(6));
        assert_eq!(infer_json("0.5"), Value::from(0.5));
        assert_eq!(infer_json("true"), Value::Bool(true));
        assert_eq!(infer_json("eagle3"), Value::from("eagle3"));
        assert_eq!(infer_json("NaN"), Value::from("NaN"));
    }

    #[test]
    fn detects_manifests_not_compose() {
        assert!(is_manifest("apiVersion: v1\nkind: Pod\n"));
        assert!(!is_manifest("services:\n  vllm:\n    image: x\n"));
        assert!(!is_manifest("vllm serve x\n"));
    }

    /// Manifests in every style YAML and kubectl write: quoted block keys, a key after the
    /// document marker, flow style, JSON (one object, a `List`), a flow document after a block
    /// one. A compose file in flow style, or a script that says `kind:` in a string, is none.
    #[test]
    fn detects_manifests_in_any_style() {
        for text in [
            "\"apiVersion\": v1\n'kind' : Pod\n",
            "--- apiVersion: v1\nkind: Pod\n",
            "{apiVersion: v1, kind: Pod, metadata: {name: p}}\n",
            "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": []\n}\n",
            "# rendered\n---\n[{\"kind\":\"Pod\",\"apiVersion\":\"v1\"}]\n",
            "a: 1\n---\n{apiVersion: v1, kind: Pod}\n",
        ] {
            assert!(is_manifest(text), "{text}");
        }
        for text in [
            "{services: {vllm: {image: x}}}\n",
            "echo '{\"apiVersion\": 1, \"kind\": 2}'\n",
            "{\"myapiVersion\": 1, \"kindness\": 2}\n",
        ] {
            assert!(!is_manifest(text), "{text}");
        }
    }

    #[test]
    fn llm_inference_service_renders_the_speculative_config() {
        let text = "apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\nmetadata:\n  name: s\nspec:\n  model:\n    uri: hf://Org/Target\n  speculator:\n    model:\n      uri: hf://Org/Draft\n    config:\n      method: eagle3\n      num_speculative_tokens: \"6\"\n  template:\n    containers:\n      - name: main\n        env:\n          - name: VLLM_ADDITIONAL_ARGS\n            value: \"--max-model-len 4096 --speculative-config '{\\\"method\\\": \\\"ngram\\\"}'\"\n";
        let (cmds, notes) = from_manifests(text, "s.yaml").unwrap();
        assert_eq!(cmds.len(), 1);
        let w = &cmds[0].words;
        assert_eq!(&w[..3], &["vllm", "serve", "Org/Target"]);
        assert!(w.contains(&"--max-model-len".to_string()));
        let i = w.iter().position(|x| x == "--speculative-config").unwrap();
        assert_eq!(w.iter().filter(|x| *x == "--speculative-config").count(), 1);
        let v: Value = serde_json::from_str(&w[i + 1]).unwrap();
        assert_eq!(v["num_speculative_tokens"], Value::from(6));
        assert_eq!(v["model"], Value::from("Org/Draft"));
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn shell_script_containers_see_their_env() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.11.0\n          command: [\"/bin/sh\", \"-c\"]\n          args: [\"vllm serve $MODEL --port 8000\"]\n          env:\n            - name: MODEL\n              value: /models/target\n";
        let (cmds, _) = from_manifests(text, "d.yaml").unwrap();
        let serve = cmds
            .iter()
            .find(|c| c.words.contains(&"serve".to_string()))
            .unwrap();
        assert!(
            serve.words.contains(&"/models/target".to_string()),
            "{:?}",
            serve.words
        );
    }

    /// A ConfigMap script a container runs is read as its commands; one that runs itself is
    /// followed [`MAX_NESTING`] levels deep and no further (no loop, no stack overflow).
    #[test]
    fn mounted_scripts_are_followed_a_bounded_depth() {
        let manifest = |script: &str| {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\ndata:\n  start.sh: |\n    {script}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  volumes:\n    - name: s\n      configMap:\n        name: m\n  containers:\n    - name: c\n      image: vllm/vllm-openai:v0.11.0\n      command: [\"bash\", \"/scripts/start.sh\"]\n      volumeMounts:\n        - name: s\n          mountPath: /scripts\n"
            )
        };
        let (commands, _) =
            from_manifests(&manifest("exec vllm serve M --port 1"), "k.yaml").unwrap();
        assert_eq!(
            commands[0].words,
            ["exec", "vllm", "serve", "M", "--port", "1"]
        );
        let (commands, _) = from_manifests(&manifest("bash /scripts/start.sh"), "k.yaml").unwrap();
        assert_eq!(commands.len(), 1);
        assert_eq!(commands[0].words, ["bash", "/scripts/start.sh"]);
        // Not mounted into the container: not its script.
        let unmounted = manifest("exec vllm serve M").replace(
            "      volumeMounts:\n        - name: s\n          mountPath: /scripts\n",
            "",
        );
        let (commands, _) = from_manifests(&unmounted, "k.yaml").unwrap();
        assert_eq!(commands[0].words, ["bash", "/scripts/start.sh"]);
    }

    /// A script that runs itself a hundred times, each of which does the same: the chain does not
    /// follow a script already being followed, and at most MAX_SCRIPTS scripts are split, so
    /// the answer comes at once with bounded commands (before: 100^4 commands).
    #[test]
    fn script_fan_out_is_bounded() {
        let body = "bash s.sh\n    ".repeat(100);
        let text = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\ndata:\n  s.sh: |\n    vllm serve M\n    {body}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  volumes:\n    - name: s\n      configMap:\n        name: m\n  containers:\n    - name: c\n      image: i\n      command: [\"bash\", \"-x\", \"s.sh\"]\n      volumeMounts:\n        - name: s\n          mountPath: /s\n"
        );
        let (commands, _) = from_manifests(&text, "k.yaml").unwrap();
        assert_eq!(commands[0].words, ["vllm", "serve", "M"]);
        assert!(commands.len() <= 101, "{}", commands.len());
    }

    /// KubeRay joins `args` alone too (no `command`): the words are the Ray container's script.
    #[test]
    fn ray_cluster_args_only() {
        let text = "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: r\nspec:\n  headGroupSpec:\n    template:\n      spec:\n        containers:\n          - name: head\n            image: vllm/vllm-openai:v0.28.0\n            args: [\"vllm serve M --speculative-config '{}' && echo done\"]\n";
        let (commands, _) = from_manifests(text, "k.yaml").unwrap();
        assert_eq!(commands[0].words[..3], ["vllm", "serve", "M"]);
    }
}
