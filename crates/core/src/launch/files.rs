//! Which files hold a deployment `check` gates through `launch`: by name, a shell script
//! (`*.sh`, `*.bash`), a Dockerfile (`Dockerfile`, `Containerfile`, `Dockerfile.*`,
//! `*.Dockerfile`), YAML (`*.yaml`, `*.yml`: a compose file or Kubernetes manifests) or JSON
//! other than `config.json` (Kubernetes manifests as `kubectl … -o json` writes them); by text,
//! one that names speculative decoding (an engine row's `speculation_words`, KServe's
//! `spec.speculator`), and for YAML and JSON one that is manifests or a compose file (an engine's
//! options file names the same words and is neither). Pure: the walk that reads the files is
//! `pipeline::discover`'s.

use super::k8s;

/// What a file may hold, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Candidate {
    Script,
    Dockerfile,
    Yaml,
    /// JSON other than `config.json`: Kubernetes manifests, when its head names `apiVersion`.
    Json,
}

/// How much of a JSON file's head is read to tell manifests from the many JSON files of a
/// model checkout (`tokenizer.json` is tens of MB): `kubectl` writes `apiVersion` first, and a
/// `List`'s first item has its own near the top.
pub const JSON_HEAD_BYTES: usize = 4096;

/// The candidate a file name is (`name` is the file's name, not its path).
pub fn candidate(name: &str) -> Option<Candidate> {
    let lower = name.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map(|(_, e)| e);
    if lower == "dockerfile"
        || lower == "containerfile"
        || lower.starts_with("dockerfile.")
        || ext == Some("dockerfile")
    {
        return Some(Candidate::Dockerfile);
    }
    match ext {
        Some("sh" | "bash") => Some(Candidate::Script),
        Some("yaml" | "yml") => Some(Candidate::Yaml),
        Some("json") if lower != "config.json" => Some(Candidate::Json),
        _ => None,
    }
}

/// Whether a JSON file's head (its first [`JSON_HEAD_BYTES`]) may be manifests: it opens an
/// object or a list and names `apiVersion` as a key.
pub fn json_head_may_be_manifest(head: &str) -> bool {
    head.trim_start().starts_with(['{', '[']) && head.contains("\"apiVersion\"")
}

/// Whether the text of a file of kind `kind` is a deployment `check` gates: it names
/// speculative decoding, and a YAML file is manifests or a compose file, a JSON file manifests.
pub fn is_deployment(kind: Candidate, text: &str) -> bool {
    names_speculation(text)
        && match kind {
            Candidate::Script | Candidate::Dockerfile => true,
            Candidate::Yaml => k8s::is_manifest(text) || is_compose(text),
            Candidate::Json => k8s::is_manifest(text),
        }
}

/// A compose file: `services:` at the top level.
fn is_compose(text: &str) -> bool {
    text.lines().any(|l| {
        l.strip_prefix("services")
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    })
}

/// Words only a deployment that configures speculative decoding holds: each engine's (the
/// engine table's `speculation_words`, and its short flags as whole words), and KServe's
/// `spec.speculator`.
pub fn names_speculation(text: &str) -> bool {
    let rows = || crate::engine::Engine::all().map(|e| e.spec().flags);
    text.contains("speculator:")
        || rows().any(|f| f.speculation_words.iter().any(|k| text.contains(k)))
        || text
            .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | '[' | ']'))
            .any(|w| rows().any(|f| f.speculation_short.contains(&w)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_by_name() {
        for (name, kind) in [
            ("serve.sh", Some(Candidate::Script)),
            ("Dockerfile", Some(Candidate::Dockerfile)),
            ("Dockerfile.vllm", Some(Candidate::Dockerfile)),
            ("serve.Dockerfile", Some(Candidate::Dockerfile)),
            ("Containerfile", Some(Candidate::Dockerfile)),
            ("compose.yml", Some(Candidate::Yaml)),
            ("deploy.YAML", Some(Candidate::Yaml)),
            ("deploy.json", Some(Candidate::Json)),
            ("config.json", None),
            ("README.md", None),
            ("sh", None),
        ] {
            assert_eq!(candidate(name), kind, "{name}");
        }
    }

    /// A compose file and manifests that speculate are deployments; an engine's options file,
    /// a values file and a script without speculation are not.
    #[test]
    fn deployments_by_text() {
        let spec = "--speculative-config '{\"method\": \"mtp\"}'";
        assert!(is_deployment(
            Candidate::Yaml,
            &format!("services:\n  v:\n    command: vllm serve M {spec}\n")
        ));
        assert!(is_deployment(
            Candidate::Json,
            "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"spec\": {\"containers\": [{\"args\": [\"--speculative-config\"]}]}}"
        ));
        assert!(!is_deployment(
            Candidate::Yaml,
            "speculative_config:\n  decoding_type: MTP\n"
        ));
        assert!(!is_deployment(Candidate::Script, "vllm serve M\n"));
        assert!(is_deployment(
            Candidate::Script,
            &format!("vllm serve M {spec}\n")
        ));
        assert!(json_head_may_be_manifest("{\n  \"apiVersion\": \"v1\","));
        assert!(!json_head_may_be_manifest(
            "{\"version\": \"1.0\", \"model\": {}}"
        ));
    }
}
