//! A drafter's own acceptance profile, `speculation_profile.json` beside its weights, as NVIDIA
//! Model-Optimizer proposes it (PRs 2247, 2313, 2315, 2316, open): the shape `specdec_bench`
//! writes (`examples/specdec_bench/specdec_bench/speculation_profile.py` at
//! NVIDIA/Model-Optimizer@edf879d3daf7879acdeb2dab9f54a591837da7b0, `build_profile`), the one
//! `ar_validate.py` writes (`producer`, no `method`, identities or `max_supported_k`), and the
//! `measured: false` stub (`stub_profile`: `mean_accept_length` and `validation` null). Read
//! here ([`Profile::read`]: a wrong type is bad input, with the file and JSON path) and judged
//! by lint's `profile-*` rules: the producer's own self-checks (AL = 1 + Σ marginals within
//! its tolerance 0.02, marginals non-increasing, each conditional the ratio of consecutive
//! marginals, rates in [0, 1], one rate per drafted position), a stub, `method` against the
//! drafter's family, `max_supported_k` against K, and the drafter and target it names against
//! the ones linted. `acceptance` and `doctor` compare a live server with it
//! (`acceptance::profile`).

use serde_json::Value;

use super::{Applies, Ctx, LintCode, Need, Rule};
use crate::config::ConfigFile;
use crate::diagnostic::{CodeInfo, Diagnostic, Severity};
use crate::json::{Node, Path};
use crate::{Error, Result};

/// The file name a drafter's profile has beside its `config.json`.
pub const FILE: &str = "speculation_profile.json";

/// The producer's tolerance on AL = 1 + Σ marginals (`_consistency_check(tolerance=0.02)`).
pub const AL_TOLERANCE: f64 = 0.02;

/// A drafter's acceptance profile, read.
#[derive(Debug, Clone)]
pub struct Profile {
    pub file: ConfigFile,
    pub measured: bool,
    pub method: Option<String>,
    pub producer: Option<String>,
    /// `org/name` of the drafter measured (`checkpoint_id`: the last two path parts).
    pub draft_checkpoint: Option<String>,
    pub target_model: Option<String>,
    /// K the measurement ran at.
    pub num_speculative_tokens: Option<u64>,
    pub max_supported_k: Option<u64>,
    /// P(draft i+1 accepted | the first i accepted), per drafted position.
    pub conditional: Option<Vec<f64>>,
    /// P(the first i+1 drafts all accepted), per drafted position.
    pub marginal: Option<Vec<f64>>,
    /// Per decode step, the bonus token included.
    pub mean_accept_length: Option<f64>,
    /// `measurement_conditions`, compact, for messages.
    pub conditions: Option<String>,
}

/// Largest profile read: a few KiB in practice (the histogram and per-category means included).
const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// The profile beside a drafter's `config.json` (`None` when there is none), read and
/// checked for shape: bad input (not JSON, a wrong type, an unknown schema) is an error.
pub fn beside(config: &std::path::Path) -> Result<Option<Profile>> {
    let Some(dir) = config.parent() else {
        return Ok(None);
    };
    let path = dir.join(FILE);
    if !path.exists() {
        return Ok(None);
    }
    read_file(&path).map(Some)
}

/// A profile file, read (capped) and checked for shape.
pub fn read_file(path: &std::path::Path) -> Result<Profile> {
    let bytes = crate::config::read_capped(path, MAX_PROFILE_BYTES)?;
    Profile::read(crate::config::parse(path, &bytes)?)
}

/// Two profiles are equal when they were read from the same file with the same content (a
/// [`ConfigFile`] has no equality of its own).
impl PartialEq for Profile {
    fn eq(&self, other: &Profile) -> bool {
        self.file.path == other.file.path && self.file.doc.root.same_value(&other.file.doc.root)
    }
}

fn bad(file: &ConfigFile, path: &str, what: &str) -> Error {
    let (line, column) = file.doc.position_of(&Path::parse(path));
    Error::new(format!(
        "`{}` at `{path}` (line {line}, column {column}): {what}",
        file.path.display()
    ))
    .with_hint(
        "a speculation_profile.json is written by Model-Optimizer's specdec_bench or ar_validate \
         (schema_version 1.x); fix or regenerate it",
    )
}

impl Profile {
    /// Reads a parsed profile: a field of the wrong type is bad input (exit 2), named by its
    /// JSON path.
    pub fn read(file: ConfigFile) -> Result<Profile> {
        let root = &file.doc.root;
        if root.as_object().is_none() {
            return Err(bad(&file, "$", "a speculation profile is a JSON object"));
        }
        let get = |k: &str| root.get(k).filter(|n| !n.is_null());
        match get("schema_version").map(Node::to_serde) {
            Some(Value::String(v)) if v.split('.').next() == Some("1") => {}
            Some(Value::Number(n)) if n.as_f64().is_some_and(|v| (1.0..2.0).contains(&v)) => {}
            Some(v) => {
                return Err(bad(
                    &file,
                    "schema_version",
                    &format!("schema_version {v} is not one this tool reads (1.x)"),
                ))
            }
            None => {
                return Err(bad(
                    &file,
                    "schema_version",
                    "no schema_version: not a speculation profile",
                ))
            }
        }
        let string = |k: &str| -> Result<Option<String>> {
            match get(k) {
                None => Ok(None),
                Some(n) => n.as_str().map(|s| Some(s.to_string())).ok_or_else(|| {
                    bad(
                        &file,
                        k,
                        &format!("`{k}` is a {}, not a string", n.type_name()),
                    )
                }),
            }
        };
        let count = |k: &str| -> Result<Option<u64>> {
            match get(k) {
                None => Ok(None),
                Some(n) => n
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| bad(&file, k, &format!("`{k}` is not a non-negative integer"))),
            }
        };
        let measured = match get("measured") {
            None => true,
            Some(n) => n
                .as_bool()
                .ok_or_else(|| bad(&file, "measured", "`measured` is not true or false"))?,
        };
        let profile = Profile {
            measured,
            method: string("method")?,
            producer: string("producer")?,
            draft_checkpoint: identity(&file, "draft_checkpoint")?,
            target_model: identity(&file, "target_model")?,
            num_speculative_tokens: count("num_speculative_tokens")?,
            max_supported_k: count("max_supported_k")?,
            conditional: rates(&file, "conditional_accept_rates")?,
            marginal: rates(&file, "marginal_accept_rates")?,
            mean_accept_length: number(&file, "mean_accept_length")?,
            conditions: get("measurement_conditions").map(Node::to_compact),
            file: file.clone(),
        };
        Ok(profile)
    }

    /// The acceptance length the profile promises: its mean, else 1 + Σ marginals.
    pub fn acceptance_length(&self) -> Option<f64> {
        if !self.measured {
            return None;
        }
        self.mean_accept_length
            .or_else(|| self.marginal.as_ref().map(|m| 1.0 + m.iter().sum::<f64>()))
    }

    /// Where `path` is in the profile, for a finding.
    pub fn at(&self, d: Diagnostic, path: &Path) -> Diagnostic {
        let (line, column) = self.file.doc.position_of(path);
        d.file(self.file.path.display().to_string())
            .span(line, column)
    }
}

fn number(file: &ConfigFile, key: &str) -> Result<Option<f64>> {
    match file.doc.root.get(key).filter(|n| !n.is_null()) {
        None => Ok(None),
        Some(n) => n
            .to_serde()
            .as_f64()
            .filter(|v| v.is_finite())
            .map(Some)
            .ok_or_else(|| bad(file, key, &format!("`{key}` is not a number"))),
    }
}

fn rates(file: &ConfigFile, key: &str) -> Result<Option<Vec<f64>>> {
    let Some(n) = file.doc.root.get(key).filter(|n| !n.is_null()) else {
        return Ok(None);
    };
    let items = n.as_array().ok_or_else(|| {
        bad(
            file,
            key,
            &format!("`{key}` is a {}, not a list of rates", n.type_name()),
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.to_serde()
                .as_f64()
                .filter(|v| v.is_finite())
                .ok_or_else(|| bad(file, &format!("{key}[{i}]"), "not a number"))
        })
        .collect::<Result<Vec<f64>>>()
        .map(Some)
}

/// `draft_checkpoint` / `target_model`: a string (`checkpoint_id`'s `org/name`) or an object
/// naming it (`id`, `name`, `repo`, `hf_id`, `path`, `name_or_path`), reduced to `org/name`.
fn identity(file: &ConfigFile, key: &str) -> Result<Option<String>> {
    let Some(n) = file.doc.root.get(key).filter(|n| !n.is_null()) else {
        return Ok(None);
    };
    let named = match n.as_str() {
        Some(s) => Some(s),
        None if n.as_object().is_some() => ["id", "name", "repo", "hf_id", "name_or_path", "path"]
            .iter()
            .find_map(|k| n.get(k).and_then(Node::as_str)),
        None => {
            return Err(bad(
                file,
                key,
                &format!("`{key}` is a {}, not a name", n.type_name()),
            ))
        }
    };
    Ok(named.and_then(checkpoint_id))
}

/// A checkpoint path as its `org/name` (the last two parts), as `checkpoint_id` reduces it.
pub fn checkpoint_id(path: &str) -> Option<String> {
    let path = path.strip_prefix("hf://").unwrap_or(path);
    let parts: Vec<&str> = path.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        [] => None,
        [one] => Some(one.to_string()),
        [.., org, name] => Some(format!("{org}/{name}")),
    }
}

/// The self-check failures of a measured profile: (JSON path, message).
pub fn inconsistencies(p: &Profile) -> Vec<(Path, String)> {
    let mut out = Vec::new();
    let (Some(marginal), true) = (&p.marginal, p.measured) else {
        return out;
    };
    for (key, v) in [
        ("marginal_accept_rates", Some(marginal)),
        ("conditional_accept_rates", p.conditional.as_ref()),
    ] {
        for (i, r) in v.into_iter().flatten().enumerate() {
            if !(0.0..=1.0).contains(r) {
                out.push((
                    Path::key(key).index(i),
                    format!("rate {r} is not a probability (0 to 1)"),
                ));
            }
        }
    }
    if let Some(k) = p
        .num_speculative_tokens
        .filter(|&k| k as usize != marginal.len())
    {
        out.push((
            Path::key("marginal_accept_rates"),
            format!(
            "{} rates for num_speculative_tokens {k}: the vector has one rate per drafted position",
            marginal.len()
        ),
        ));
    }
    for i in 1..marginal.len() {
        if marginal[i] > marginal[i - 1] + 1e-9 {
            out.push((Path::key("marginal_accept_rates").index(i), format!(
                "marginal {} at position {i} exceeds {} at position {}: P(the first i+1 drafts accepted) cannot grow with i",
                marginal[i], marginal[i - 1], i - 1
            )));
        }
    }
    if let Some(al) = p.mean_accept_length {
        let implied = 1.0 + marginal.iter().sum::<f64>();
        if (implied - al).abs() > AL_TOLERANCE {
            out.push((Path::key("mean_accept_length"), format!(
                "mean_accept_length {al} is not 1 + Σ marginal_accept_rates = {implied:.4} (tolerance {AL_TOLERANCE}): a truncated vector or a per-request mean"
            )));
        }
    }
    if let Some(cond) = &p.conditional {
        let mut prev = 1.0;
        for (i, (&c, &m)) in cond.iter().zip(marginal).enumerate() {
            let expected = if prev > 0.0 { m / prev } else { 0.0 };
            if (c - expected).abs() > 0.01 {
                out.push((Path::key("conditional_accept_rates").index(i), format!(
                    "conditional {c} at position {i} is not marginal[{i}] / marginal[{}] = {expected:.4}: the two vectors describe different measurements",
                    i.saturating_sub(1)
                )));
            }
            prev = m;
        }
    }
    out
}

/// The profile beside the drafter, when there is one.
fn profile<'a>(cx: &Ctx<'a>) -> Option<&'a Profile> {
    cx.options.profile.as_deref()
}

/// Reports a finding of the running rule in the profile at `path`.
fn emit_in(cx: &mut Ctx<'_>, p: &Profile, path: &Path, message: String) {
    let d = Diagnostic::new(cx.rule.code, &cx.rule.info, path.to_string(), message);
    cx.findings.push(p.at(d, path));
}

const PROFILE_UNMEASURED: Rule = Rule {
    code: LintCode::ProfileUnmeasured,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the drafter's speculation_profile.json is an unmeasured stub (`measured: false`)",
        explanation: "Model-Optimizer's `stub_profile` writes `measured: false` with no mean and zero rates so \
that a placeholder is not mistaken for a measurement. It says nothing about this drafter's acceptance: acceptance \
and doctor fall back to the break-even point. Measure it (specdec_bench, or ar_validate --output_json).",
    },
    applies: Applies::All,
    needs: &[Need::Profile],
    check: unmeasured,
};

fn unmeasured(cx: &mut Ctx) {
    let Some(p) = profile(cx).filter(|p| !p.measured) else {
        return;
    };
    emit_in(cx, p, &Path::key("measured"), "the profile is a stub (`measured: false`): no acceptance to compare with; measure the drafter".into());
}

const PROFILE_INCONSISTENT: Rule = Rule {
    code: LintCode::ProfileInconsistent,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the speculation profile fails its own self-checks",
        explanation: "For longest-prefix verification the mean acceptance length per step is 1 + the sum of the \
marginal rates (P(the first i+1 drafts accepted)); the marginals are a survival function, so they cannot grow \
with the position; each conditional rate is the ratio of consecutive marginals; rates are probabilities; and \
there is one rate per drafted position (num_speculative_tokens). Model-Optimizer's producer records the first \
two checks (`validation.mean_consistency`, tolerance 0.02, and `marginal_monotonicity`) and still writes a \
profile that fails them; a consumer reading it would model a different drafter than was measured.",
    },
    applies: Applies::All,
    needs: &[Need::Profile],
    check: inconsistent,
};

fn inconsistent(cx: &mut Ctx) {
    let Some(p) = profile(cx) else {
        return;
    };
    for (path, message) in inconsistencies(p) {
        emit_in(cx, p, &path, message);
    }
}

const PROFILE_METHOD: Rule = Rule {
    code: LintCode::ProfileMethod,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the speculation profile's `method` is not the drafter's family",
        explanation: "The profile's `method` (eagle3, dflash, dspark, draft_model, …) names the speculation \
method the acceptance was measured with; a profile measured under another method (or copied from another \
drafter) describes a different drafter. Compared with the family detected from config.json, by the family's \
vLLM and SGLang method names.",
    },
    applies: Applies::All,
    needs: &[Need::Profile],
    check: method,
};

fn method(cx: &mut Ctx) {
    let Some(p) = profile(cx) else {
        return;
    };
    let Some(method) = p.method.as_deref() else {
        return;
    };
    let spec = cx.detection.name.spec();
    let m = method.to_ascii_lowercase();
    let names = [spec.engines.vllm, spec.engines.sglang, Some(spec.cli)];
    let known = names.iter().flatten().any(|n| n.eq_ignore_ascii_case(&m))
        || spec
            .engines
            .vllm_aliases
            .iter()
            .any(|a| a.eq_ignore_ascii_case(&m))
        || spec.cli_aliases.iter().any(|a| a.eq_ignore_ascii_case(&m));
    if !known {
        let message = format!(
            "the profile was measured with method `{method}`, but config.json is a {} drafter: it describes another drafter",
            spec.display
        );
        emit_in(cx, p, &Path::key("method"), message);
    }
}

const PROFILE_MAX_K: Rule = Rule {
    code: LintCode::ProfileMaxK,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "K is above the speculation profile's max_supported_k, or not the K it was measured at",
        explanation: "`max_supported_k` is the producer's hard ceiling on K: for block-parallel methods \
(DFlash, DSpark) a larger K is outside what the drafter was trained for. Below it, a K other than the profile's \
num_speculative_tokens is info: chain drafters (`accept_length_model: chain_analytic`) extrapolate, block \
drafters must be measured at each K. K is read from --speculative-config's num_speculative_tokens.",
    },
    applies: Applies::All,
    needs: &[Need::Profile],
    check: max_k,
};

fn max_k(cx: &mut Ctx) {
    let Some(p) = profile(cx) else {
        return;
    };
    let k = cx
        .options
        .speculative_config
        .as_ref()
        .and_then(|s| s.get("num_speculative_tokens"))
        .and_then(Value::as_u64);
    let Some(k) = k else {
        return;
    };
    if let Some(max) = p.max_supported_k.filter(|&m| k > m) {
        emit_in(
            cx,
            p,
            &Path::key("max_supported_k"),
            format!("K (num_speculative_tokens) {k} is above the profile's max_supported_k {max}"),
        );
    } else if let Some(measured) = p.num_speculative_tokens.filter(|&m| m != k) {
        let message = format!("the profile was measured at K {measured}, the deployment uses K {k}: its rates describe another K");
        let path = Path::key("num_speculative_tokens");
        let d = Diagnostic::new(cx.rule.code, &cx.rule.info, path.to_string(), message)
            .severity(Severity::Info);
        cx.findings.push(p.at(d, &path));
    }
}

const PROFILE_IDENTITY: Rule = Rule {
    code: LintCode::ProfileIdentity,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the speculation profile names another drafter or target than the ones checked",
        explanation: "`draft_checkpoint` and `target_model` say what was measured (as `org/name`, the last two \
parts of the path, the way the producer's checkpoint_id reduces them). A profile beside a drafter whose folder or \
repo ends in another name, or measured against another target than --target, was copied from another \
checkpoint. Compared by the last two path parts, case-insensitively; a drafter folder with one part is compared \
by its name.",
    },
    applies: Applies::All,
    needs: &[Need::Profile],
    check: identity_rule,
};

/// A model as `profile-identity` compares it: a local directory by its folder name (where it
/// sits says nothing of its org), a Hub repo as `org/name` (no `hf://`, no `@revision`).
pub fn compared_name(given: &str, local: bool) -> String {
    let trimmed = given.trim_end_matches(['/', '\\']);
    if local {
        return trimmed
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(trimmed)
            .to_string();
    }
    let repo = trimmed.strip_prefix("hf://").unwrap_or(trimmed);
    repo.split('@').next().unwrap_or(repo).to_string()
}

/// Whether `id` (`org/name`) and `other` name the same checkpoint: the same `org/name`, or
/// the same last part when either has only one.
fn same_checkpoint(id: &str, other: &str) -> bool {
    let last = |s: &str| s.rsplit('/').next().unwrap_or(s).to_ascii_lowercase();
    match checkpoint_id(other) {
        Some(o) if o.contains('/') && id.contains('/') => o.eq_ignore_ascii_case(id),
        Some(o) => last(&o) == last(id),
        None => true,
    }
}

fn identity_rule(cx: &mut Ctx) {
    let Some(p) = profile(cx) else {
        return;
    };
    let drafter = cx.options.drafter_name.clone();
    let target = cx.options.target_name.clone();
    let checks = [
        (
            "draft_checkpoint",
            p.draft_checkpoint.as_deref(),
            drafter,
            "drafter",
        ),
        ("target_model", p.target_model.as_deref(), target, "target"),
    ];
    for (key, named, checked, what) in checks {
        if let (Some(named), Some(checked)) = (named, checked) {
            if !same_checkpoint(named, &checked) {
                let message = format!(
                    "the profile was measured on {what} `{named}`, this {what} is `{checked}`"
                );
                emit_in(cx, p, &Path::key(key), message);
            }
        }
    }
}

pub(super) const RULES: &[Rule] = &[
    PROFILE_UNMEASURED,
    PROFILE_INCONSISTENT,
    PROFILE_METHOD,
    PROFILE_MAX_K,
    PROFILE_IDENTITY,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(text: &str) -> Result<Profile> {
        let file = crate::config::parse(
            std::path::Path::new("speculation_profile.json"),
            text.as_bytes(),
        )?;
        Profile::read(file)
    }

    /// Model-Optimizer's own test case: histogram {1: 40, 2: 30, 3: 30} at K 3 gives marginals
    /// [0.6, 0.3, 0.0], conditionals [0.6, 0.5, 0.0] and AL 1.9: consistent.
    #[test]
    fn the_producers_example_is_consistent() {
        let p = profile(
            r#"{"schema_version": "1.0", "measured": true, "method": "eagle3",
            "num_speculative_tokens": 3, "marginal_accept_rates": [0.6, 0.3, 0.0],
            "conditional_accept_rates": [0.6, 0.5, 0.0], "mean_accept_length": 1.9}"#,
        )
        .unwrap();
        assert!(inconsistencies(&p).is_empty());
        assert_eq!(p.acceptance_length(), Some(1.9));
    }

    #[test]
    fn a_wrong_mean_and_a_rising_marginal_are_reported() {
        let p = profile(
            r#"{"schema_version": "1.0", "marginal_accept_rates": [0.3, 0.6],
            "conditional_accept_rates": [0.3, 0.5], "mean_accept_length": 3.5}"#,
        )
        .unwrap();
        let paths: Vec<String> = inconsistencies(&p)
            .iter()
            .map(|(p, _)| p.to_string())
            .collect();
        assert!(
            paths.contains(&"marginal_accept_rates[1]".to_string()),
            "{paths:?}"
        );
        assert!(
            paths.contains(&"mean_accept_length".to_string()),
            "{paths:?}"
        );
        assert!(
            paths.contains(&"conditional_accept_rates[1]".to_string()),
            "{paths:?}"
        );
    }

    #[test]
    fn bad_types_name_the_json_path() {
        let e = profile(r#"{"schema_version": "1.0", "marginal_accept_rates": [0.5, "x"]}"#)
            .unwrap_err();
        assert!(
            e.message.contains("marginal_accept_rates[1]"),
            "{}",
            e.message
        );
        let e = profile(r#"{"schema_version": "2.0"}"#).unwrap_err();
        assert!(e.message.contains("schema_version"), "{}", e.message);
        let e = profile("[]").unwrap_err();
        assert!(e.message.contains("JSON object"), "{}", e.message);
    }

    #[test]
    fn identities_reduce_to_org_name() {
        assert_eq!(
            checkpoint_id("/lustre/x/hf-local/nvidia/MiniMax-M2.7-DFlash").as_deref(),
            Some("nvidia/MiniMax-M2.7-DFlash")
        );
        assert!(same_checkpoint(
            "nvidia/MiniMax-M2.7-DFlash",
            "hf://nvidia/MiniMax-M2.7-DFlash"
        ));
        assert!(same_checkpoint(
            "nvidia/MiniMax-M2.7-DFlash",
            "MiniMax-M2.7-DFlash"
        ));
        assert!(!same_checkpoint(
            "nvidia/MiniMax-M2.7-DFlash",
            "z-lab/Qwen3-8B-DFlash"
        ));
    }
}
