//! Which modules a target's `quantization_config` leaves unquantized, matched the way the engine's
//! quant method matches them. The same entry means different things per method — in vLLM 0.27.1:
//!
//! - compressed-tensors (`ignore`) and quark (`exclude`): an entry equal to the module name, or
//!   `re:PATTERN` matched with Python's `re.match` (anchored at the start only); a plain prefix
//!   (`mtp`, `model.layers.61`) matches nothing (`compressed_tensors/utils.py`,
//!   `quark/utils.py`); quark also lets an entry under `…mlp.experts.` exclude the whole MoE;
//! - ModelOpt (`exclude_modules` in `hf_quant_config.json`'s form, `ignore` in config.json's):
//!   an exact name, an entry contained in the module name (`mtp` excludes every `mtp.*`), or an
//!   `fnmatch` wildcard (`mtp*`); a `re:` entry is none of these and matches nothing
//!   (`modelopt.py`, `is_layer_excluded`);
//! - fp8 (`ignored_layers`, else `modules_to_not_convert`): exact names; for experts, the MoE's
//!   name contained in an entry naming `experts` (`utils/quant_utils.py`, `is_layer_skipped`).
//!
//! So the same list can exclude the MTP head under one method and not under another
//! (sglang#36786, sglang#29781, vllm#53414). AWQ and GPTQ, where vLLM and SGLang match
//! differently, are [`super::int4_exclude`]'s; other methods (bitsandbytes, …) are not judged:
//! [`Exclusions::read`] returns `None` for them.
//!
//! Lists come from a file that may be hostile, so matching is linear in the list and the name:
//! plain names go in a hash set, ModelOpt's contained names in one Aho-Corasick automaton,
//! and every pattern (`re:` or a wildcard) in one [`regex::RegexSet`] — the `regex` crate's
//! automata match in time linear in the name whatever the pattern (Python's `re` backtracks: a
//! `re:(a*)*b` entry can take exponential time there), and its size limit bounds what a
//! pattern may compile to. A list over [`MAX_ENTRIES`] entries, or over [`MAX_PATTERNS`]
//! patterns, is refused; a pattern the `regex` crate cannot compile (Python-only syntax such as
//! look-ahead, or over the size limit) leaves the modules it might match undecided, never
//! guessed.

use std::collections::HashSet;

use aho_corasick::AhoCorasick;
use regex::RegexSet;

use super::int4::{Int4, Int4Lists};
use super::{module_name, LIST_HINT};
pub use super::{Verdict, MAX_ENTRIES, MAX_PATTERNS, PATTERN_SIZE_LIMIT};
use crate::config::{read_capped, regular_file_present, ConfigFile};
use crate::json::{Document, Node};
use crate::{Error, Result};

/// A quant method whose exclude list is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    CompressedTensors,
    Quark,
    ModelOpt,
    Fp8,
    /// AWQ or GPTQ: matched per engine by [`Int4Lists`].
    Int4(Int4),
}

impl Method {
    fn of(quant_method: &str) -> Option<Method> {
        if let Some(kind) = Int4::of(quant_method) {
            return Some(Method::Int4(kind));
        }
        match quant_method.to_ascii_lowercase().as_str() {
            "compressed-tensors" | "compressed_tensors" => Some(Method::CompressedTensors),
            "quark" => Some(Method::Quark),
            "modelopt" | "modelopt_fp4" | "modelopt_fp8" | "modelopt_mixed" => {
                Some(Method::ModelOpt)
            }
            "fp8" => Some(Method::Fp8),
            _ => None,
        }
    }

    /// The keys the engine reads the list from, in the order it tries them (fp8 takes
    /// `modules_to_not_convert` when `ignored_layers` is absent or empty). ModelOpt reads
    /// `quantization.exclude_modules` when the config has the `hf_quant_config.json` form
    /// (a `quantization` object), else `ignore` ([`list_of`]).
    fn keys(self) -> &'static [&'static str] {
        match self {
            Method::CompressedTensors => &["ignore"],
            Method::Quark => &["exclude"],
            Method::ModelOpt => &["ignore"],
            Method::Fp8 => &["ignored_layers", "modules_to_not_convert"],
            Method::Int4(Int4::Awq) => &["modules_to_not_convert"],
            Method::Int4(Int4::Gptq) => &["dynamic"],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Method::CompressedTensors => "compressed-tensors",
            Method::Quark => "quark",
            Method::ModelOpt => "modelopt",
            Method::Fp8 => "fp8",
            Method::Int4(Int4::Awq) => "awq",
            Method::Int4(Int4::Gptq) => "gptq",
        }
    }

    /// How the method matches an entry, for messages.
    pub fn matching(self) -> &'static str {
        match self {
            Method::CompressedTensors | Method::Quark => {
                "an entry equal to the module name, or `re:` + a regex matched at its start"
            }
            Method::ModelOpt => {
                "an entry equal to or contained in the module name, or an fnmatch wildcard (no `re:` patterns)"
            }
            Method::Fp8 => "an entry equal to the module name (no prefixes, wildcards or `re:`)",
            Method::Int4(Int4::Awq) => {
                "an entry contained in the module name, in vLLM and SGLang alike (no wildcards or `re:`)"
            }
            Method::Int4(Int4::Gptq) => {
                "a `-:REGEX` key of `dynamic` matched at the start of the module name, the first matching key deciding"
            }
        }
    }
}

/// A `quantization_config`'s exclude list, ready to match module names.
pub struct Exclusions {
    pub method: Method,
    /// Where the list was read, as a dotted JSON path (`quantization_config.ignore`).
    pub key: String,
    /// How many entries the list holds.
    pub len: usize,
    exact: HashSet<String>,
    /// ModelOpt: entries without wildcards, found anywhere in a module name.
    contained: Option<AhoCorasick>,
    contained_entries: Vec<String>,
    /// `re:` entries (as `^(?:…)`) and wildcards (as `^…$`), with the entries they came from.
    patterns: Option<RegexSet>,
    pattern_entries: Vec<String>,
    /// Entries the `regex` crate could not compile.
    pub uncompiled: Vec<String>,
    /// Entries that look meant for the MTP head (`mtp`, `nextn`, `eh_proj`, …), for messages.
    pub mtp_like: Vec<String>,
    /// quark and fp8: entries naming a MoE's experts (for the MoE-level rules).
    expert_entries: Vec<String>,
    /// AWQ and GPTQ: the lists, matched per engine.
    int4: Option<Int4Lists>,
    /// compressed-tensors in MXFP4 (its format, or 4-bit float weights in groups of 32):
    /// SGLang from 0.5.17 builds every MoE of it MXFP4, whatever `ignore` says.
    mxfp4: bool,
    /// quark: the entries that start `mtp.` as written (SGLang's Qwen3.5 MTP class reads them
    /// whole, [`Exclusions::sglang_quark_head_bf16`]); the first 8.
    mtp_prefixed: Vec<String>,
    /// ModelOpt with an FP4 algorithm (`modelopt_fp4`, `quant_algo` NVFP4): SGLang's config
    /// class `modelopt_fp4`, which several of its NextN classes drop for the whole MTP layer.
    pub modelopt_fp4: bool,
}

/// How SGLang's Qwen3.5 MTP class reads a quark list's `mtp.` entries (qwen3_5_mtp.py): from
/// 0.5.12 any of them builds the whole head BF16; from 0.5.21 only one naming `mlp.experts`
/// does, the others being matched module by module like every list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuarkHeadBf16 {
    /// The first `mtp.` entry (what 0.5.12-0.5.20 react to).
    pub entry: String,
    /// An `mtp.` entry naming the routed experts (what 0.5.21 and later react to).
    pub experts_entry: Option<String>,
}

/// Whether a compressed-tensors config is MXFP4 as SGLang's `_is_mxfp4_moe` reads it (0.5.17 to
/// 0.5.23): `mxfp4` in its `format`, or a `Linear` or `FusedMoE` config group whose weights
/// are 4-bit floats in symmetric groups of 32.
fn is_mxfp4(q: &Node) -> bool {
    let format = q.get("format").and_then(Node::as_str).unwrap_or("");
    if format.contains("mxfp4") {
        return true;
    }
    let Some(groups) = q.get("config_groups").and_then(Node::as_object) else {
        return false;
    };
    // The scheme of the `Linear` or `FusedMoE` target, as `target_scheme_map` holds them.
    let general = |g: &Node| {
        g.get("targets").and_then(Node::as_array).is_some_and(|t| {
            t.iter()
                .any(|t| matches!(t.as_str(), Some("Linear" | "FusedMoE")))
        })
    };
    groups.iter().filter(|g| general(&g.value)).any(|g| {
        let Some(w) = g.value.get("weights") else {
            return false;
        };
        w.get("num_bits").and_then(Node::as_u64) == Some(4)
            && w.get("type").and_then(Node::as_str) == Some("float")
            && w.get("strategy").and_then(Node::as_str) == Some("group")
            && w.get("group_size").and_then(Node::as_u64) == Some(32)
            && w.get("symmetric").and_then(Node::as_bool) == Some(true)
    })
}

/// fnmatch's wildcard characters.
fn has_wildcard(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Python's `fnmatch.translate`, enough for module names: `*`, `?`, `[…]`, `[!…]`.
fn glob_to_regex(glob: &str) -> String {
    let mut out = String::from("^(?s:");
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            '[' => {
                let class: String = chars.clone().take_while(|&c| c != ']').collect();
                if chars.clone().nth(class.chars().count()) == Some(']') && !class.is_empty() {
                    for _ in 0..=class.chars().count() {
                        chars.next();
                    }
                    let (neg, body) = match class.strip_prefix('!') {
                        Some(b) => ("^", b),
                        None => ("", class.as_str()),
                    };
                    let body: String = body
                        .chars()
                        .map(|c| match c {
                            '\\' | '[' | ']' | '^' | '&' | '~' => format!("\\{c}"),
                            _ => c.to_string(),
                        })
                        .collect();
                    out.push_str(&format!("[{neg}{body}]"));
                } else {
                    out.push_str("\\[");
                }
            }
            c => out.push_str(&regex::escape(&c.to_string())),
        }
    }
    out.push_str(")$");
    out
}

fn looks_mtp(entry: &str) -> bool {
    let e = entry.to_ascii_lowercase();
    ["mtp", "nextn", "eh_proj", "enorm", "hnorm", "shared_head"]
        .iter()
        .any(|k| e.contains(k))
}

/// The file ModelOpt up to 0.29 wrote its quantization config to, beside `config.json`.
pub const HF_QUANT_CONFIG: &str = "hf_quant_config.json";
/// Largest `hf_quant_config.json` read: real ones are tens of KB (one name per excluded
/// module); the exclude list inside has its own caps.
const MAX_HF_QUANT_CONFIG_BYTES: u64 = 16 << 20;

/// Whether an `hf_quant_config.json` sits beside the config (a path that cannot be read counts
/// as absent; reading it reports why).
pub fn has_hf_quant_config(config: &ConfigFile) -> bool {
    regular_file_present(&config.dir().join(HF_QUANT_CONFIG)).unwrap_or(false)
}

/// A config's `quantization_config` object (top level or `text_config`).
fn quantization_config(root: &Node) -> Option<&Node> {
    root.get("quantization_config")
        .or_else(|| root.get("text_config")?.get("quantization_config"))
        .filter(|n| n.as_object().is_some())
}

/// An exclude entry naming the fused module a checkpoint module is built into
/// ([`Exclusions::fused_entry`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FusedEntry {
    /// The fused module's name (`mtp.layers.0.self_attn.qkv_proj`).
    pub fused: String,
    /// The entry that names it, as written.
    pub entry: String,
}

/// The fused module vLLM and SGLang build a checkpoint projection into, by the packed-module
/// mappings their model classes declare for these names: `self_attn.{q,k,v}_proj` as
/// `qkv_proj`, `{mlp,shared_expert,shared_experts}.{gate,up}_proj` as `gate_up_proj`.
/// (DeepSeek's MLA `q_a_proj` + `kv_a_proj_with_mqa` is fused under another name in each
/// engine, `fused_qkv_a_proj` and `fused_qkv_a_proj_with_mqa`: not judged.)
fn fused_name(module: &str) -> Option<String> {
    let (parent, leaf) = module.rsplit_once('.')?;
    let attention = parent.ends_with(".self_attn");
    let mlp = [".mlp", ".shared_expert", ".shared_experts"]
        .iter()
        .any(|p| parent.ends_with(p));
    let fused = match leaf {
        "q_proj" | "k_proj" | "v_proj" if attention => "qkv_proj",
        "gate_proj" | "up_proj" if mlp => "gate_up_proj",
        _ => return None,
    };
    Some(format!("{parent}.{fused}"))
}

/// Whether a ModelOpt config is FP4, as SGLang picks its `modelopt_fp4` config class: the
/// method named so, or an FP4 `quant_algo` (at the top, or under `quantization` in
/// hf_quant_config.json's form).
fn is_modelopt_fp4(q: &Node) -> bool {
    let named = q
        .get("quant_method")
        .and_then(Node::as_str)
        .is_some_and(|m| m.eq_ignore_ascii_case("modelopt_fp4"));
    let algo = [
        q.get("quant_algo"),
        q.get("quantization").and_then(|n| n.get("quant_algo")),
    ]
    .into_iter()
    .flatten()
    .filter_map(Node::as_str)
    .any(|a| a.to_ascii_uppercase().contains("FP4"));
    named || algo
}

/// The quant method of a quantization config: its `quant_method`, or ModelOpt for the form
/// ModelOpt writes without one (`producer.name` "modelopt", the algorithm under `quantization`),
/// which vLLM gives a ModelOpt method by its `quant_algo`
/// (`_normalize_quantization_config`, vllm/transformers_utils/model_arch_config_convertor.py, 0.34.0).
fn method_of(q: &Node) -> Option<Method> {
    if let Some(method) = q.get("quant_method").and_then(Node::as_str) {
        return Method::of(method);
    }
    let producer = q.get("producer")?.get("name")?.as_str()?;
    let algo = q.get("quantization")?.get("quant_algo")?;
    (producer == "modelopt" && algo.as_str().is_some()).then_some(Method::ModelOpt)
}

/// The list under `q` for `method`: `(dotted path, entries)`, the path under `at` (the
/// quantization config's own path: `quantization_config`, or `hf_quant_config.json:`).
fn list_of<'q>(q: &'q Node, method: Method, at: &str) -> Result<Option<(String, Vec<&'q str>)>> {
    let legacy = q.get("quantization").filter(|n| n.as_object().is_some());
    let (q, keys, parent) = match (method, legacy) {
        (Method::ModelOpt, Some(inner)) => (inner, &["exclude_modules"][..], "quantization."),
        _ => (q, method.keys(), ""),
    };
    let empty = |n: &Node| n.is_null() || n.as_array().is_some_and(|a| a.is_empty());
    let Some((key, node)) = keys
        .iter()
        .find_map(|k| q.get(k).filter(|n| !empty(n)).map(|n| (*k, n)))
    else {
        return Ok(None);
    };
    let path = format!("{at}{parent}{key}");
    let items = node.as_array().ok_or_else(|| {
        Error::new(format!("`{path}` is not a list of module names")).with_hint(LIST_HINT)
    })?;
    if items.len() > MAX_ENTRIES {
        return Err(Error::new(format!(
            "`{path}` lists {} entries, over the {MAX_ENTRIES} an exclude list is read with \
             (quantizers name a few thousand modules at most)",
            items.len()
        ))
        .with_hint("restore the quantization_config the quantizer wrote"));
    }
    let mut entries = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        entries.push(module_name(item, &path, i)?);
    }
    Ok(Some((path, entries)))
}

impl Exclusions {
    /// The exclude list of the config's `quantization_config` (top level or `text_config`),
    /// for a method judged here; `Ok(None)` when there is no quantization_config or its method
    /// is not one of them. An error for a list that is not a list of strings, or over the caps.
    pub fn read(root: &Node) -> Result<Option<Exclusions>> {
        match quantization_config(root) {
            Some(q) => Exclusions::of_quantization(q, "quantization_config.", root),
            None => Ok(None),
        }
    }

    /// [`Exclusions::read`] of a config file, or, when it has no `quantization_config`, of the
    /// `hf_quant_config.json` beside it: ModelOpt up to 0.29 wrote the quantization there, and
    /// vLLM reads it exactly then (`get_config` in vllm/transformers_utils/config.py, 0.34.0).
    /// The list's path in messages names that file.
    pub fn of_config(config: &ConfigFile) -> Result<Option<Exclusions>> {
        if quantization_config(config.root()).is_some() {
            return Exclusions::read(config.root());
        }
        let path = config.dir().join(HF_QUANT_CONFIG);
        if !regular_file_present(&path)? {
            return Ok(None);
        }
        // Every error names this file, in its text and as its location.
        let place = |mut e: Error| {
            let shown = path.display().to_string();
            if !e.message.contains(&shown) {
                e.message = format!("`{shown}`: {}", e.message);
            }
            match e.file {
                Some(_) => e,
                None => e.at(&path, None),
            }
        };
        let bytes = read_capped(&path, MAX_HF_QUANT_CONFIG_BYTES).map_err(place)?;
        let doc = Document::parse_bytes(&bytes).map_err(|e| {
            place(
                Error::new(format!("`{}` is not valid JSON: {e}", path.display()))
                    .with_hint("restore the hf_quant_config.json the quantizer wrote"),
            )
        })?;
        if doc.root.as_object().is_none() {
            return Ok(None);
        }
        Exclusions::of_quantization(&doc.root, "hf_quant_config.json: ", config.root())
            .map_err(place)
    }

    /// The exclude list of one quantization config object, its paths under `at`.
    fn of_quantization(q: &Node, at: &str, root: &Node) -> Result<Option<Exclusions>> {
        let Some(method) = method_of(q) else {
            return Ok(None);
        };
        if let Method::Int4(kind) = method {
            let lists = Int4Lists::read(q, kind, at)?.for_model(root);
            let Some(mut ex) = Exclusions::build(method, format!("{at}{}", kind.key()), &[])?
            else {
                return Ok(None);
            };
            ex.mtp_like = lists.mtp_like();
            ex.len = lists.entries();
            ex.uncompiled = lists.uncompiled.clone();
            ex.int4 = Some(lists);
            return Ok(Some(ex));
        }
        let (key, entries) = list_of(q, method, at)?
            .unwrap_or_else(|| (format!("{at}{}", method.keys()[0]), vec![]));
        let mut ex = Exclusions::build(method, key, &entries)?;
        if let Some(ex) = ex.as_mut() {
            ex.mxfp4 = method == Method::CompressedTensors && is_mxfp4(q);
            ex.modelopt_fp4 = method == Method::ModelOpt && is_modelopt_fp4(q);
        }
        Ok(ex)
    }

    fn build(method: Method, key: String, entries: &[&str]) -> Result<Option<Exclusions>> {
        let mut ex = Exclusions {
            method,
            key,
            len: entries.len(),
            exact: HashSet::new(),
            contained: None,
            contained_entries: Vec::new(),
            patterns: None,
            pattern_entries: Vec::new(),
            uncompiled: Vec::new(),
            mtp_like: Vec::new(),
            expert_entries: Vec::new(),
            int4: None,
            mxfp4: false,
            mtp_prefixed: Vec::new(),
            modelopt_fp4: false,
        };
        let mut sources: Vec<(String, String)> = Vec::new();
        for &e in entries {
            if method == Method::Quark && e.starts_with("mtp.") && ex.mtp_prefixed.len() < 8 {
                ex.mtp_prefixed.push(e.to_string());
            }
            if looks_mtp(e) && ex.mtp_like.len() < 8 {
                ex.mtp_like.push(e.to_string());
            }
            // (as written, anchored source)
            let pattern = match (method, e.strip_prefix("re:")) {
                (Method::CompressedTensors | Method::Quark, Some(p)) => {
                    Some((p.to_string(), format!("^(?:{p})")))
                }
                (Method::ModelOpt, _) if has_wildcard(e) => {
                    let source = glob_to_regex(e);
                    Some((source.clone(), source))
                }
                _ => None,
            };
            match pattern {
                Some(p) => {
                    if sources.len() == MAX_PATTERNS {
                        return Err(Error::new(format!(
                            "`{}` holds more than {MAX_PATTERNS} patterns (`re:` or wildcards): \
                             not a list a quantizer writes; not compiled",
                            ex.key
                        ))
                        .with_hint("name the excluded modules, or restore the quantizer's list"));
                    }
                    sources.push(p);
                    ex.pattern_entries.push(e.to_string());
                }
                None => {
                    if method == Method::ModelOpt {
                        ex.contained_entries.push(e.to_string());
                    }
                    if e.contains("experts") {
                        ex.expert_entries.push(e.to_string());
                    }
                    ex.exact.insert(e.to_string());
                }
            }
        }
        ex.compile(sources);
        if !ex.contained_entries.is_empty() {
            let ac = AhoCorasick::new(&ex.contained_entries).map_err(|e| {
                Error::new(format!("`{}` cannot be matched: {e}", ex.key))
                    .with_hint("restore the quantization_config the quantizer wrote")
            })?;
            ex.contained = Some(ac);
        }
        Ok(Some(ex))
    }

    /// Compiles the patterns ([`super::compile`]): one Python-only pattern does not
    /// lose the others, and leaves undecided what it might match.
    fn compile(&mut self, sources: Vec<(String, String)>) {
        let compiled = super::compile(&sources);
        let entries = std::mem::take(&mut self.pattern_entries);
        self.uncompiled
            .extend(compiled.uncompiled.iter().map(|&i| entries[i].clone()));
        self.pattern_entries = compiled.kept.iter().map(|&i| entries[i].clone()).collect();
        self.patterns = compiled.set;
    }

    /// Whether the config leaves `module` (a module name as the checkpoint spells it, without
    /// `.weight`) unquantized, under the method's matching.
    pub fn verdict(&self, module: &str) -> Verdict {
        self.verdict_at(module, None)
    }

    /// [`Exclusions::verdict`] of an MTP module whose layer the checkpoint names with
    /// `layer_prefix` (`model.layers.61.`): AWQ and GPTQ lists are matched against the name
    /// each engine builds the module under (SGLang's `model.decoder.*`); the other methods
    /// against the checkpoint's.
    pub fn verdict_at(&self, module: &str, layer_prefix: Option<&str>) -> Verdict {
        if let Some(lists) = &self.int4 {
            return lists.verdict(module, layer_prefix);
        }
        if let Some((moe, _)) = self.quark_moe(module) {
            return self.quark_moe_verdict(moe);
        }
        if self.exact.contains(module) {
            return Verdict::Excluded(module.to_string());
        }
        if let Some(m) = self.contained.as_ref().and_then(|ac| ac.find(module)) {
            return Verdict::Excluded(self.contained_entries[m.pattern().as_usize()].clone());
        }
        if let Some(set) = &self.patterns {
            if let Some(i) = set.matches(module).iter().next() {
                return Verdict::Excluded(self.pattern_entries[i].clone());
            }
        }
        if let Some(e) = self.experts_excluded(module) {
            return Verdict::Excluded(e);
        }
        // compressed-tensors: an entry equal to the fused module's name excludes its shards in
        // both engines at every release read (vLLM up to 0.29 and SGLang skip the expansion for
        // `layer_name in ignore`; vLLM from 0.30 matches the fused name first).
        if self.method == Method::CompressedTensors {
            if let Some(fused) = fused_name(module).filter(|f| self.exact.contains(f)) {
                return Verdict::Excluded(fused);
            }
        }
        if self.uncompiled.is_empty() {
            Verdict::Quantized
        } else {
            Verdict::Undecided
        }
    }

    /// An entry that names the fused module `module` is built into (`…self_attn.qkv_proj` for
    /// `q_proj`) and not `module` itself, where engines and releases disagree on it: quark's
    /// entries, exact or `re:` (vLLM from 0.30 and SGLang from 0.5.21 match the fused name
    /// first; before, only the shards' names), and compressed-tensors' `re:` entries (vLLM from
    /// 0.30; SGLang only an exact name). `None` when an entry names `module`, or for other
    /// methods.
    pub fn fused_entry(&self, module: &str) -> Option<FusedEntry> {
        if !matches!(self.method, Method::Quark | Method::CompressedTensors)
            || self.verdict(module) != Verdict::Quantized
        {
            return None;
        }
        let fused = fused_name(module)?;
        if self.method == Method::Quark && self.exact.contains(&fused) {
            return Some(FusedEntry {
                entry: fused.clone(),
                fused,
            });
        }
        let i = self.patterns.as_ref()?.matches(&fused).iter().next()?;
        Some(FusedEntry {
            entry: self.pattern_entries[i].clone(),
            fused,
        })
    }

    /// AWQ and GPTQ: what each engine builds for `module` ([`Int4Lists::builds`]); `None` for
    /// the other methods, which are matched alike.
    pub fn builds(
        &self,
        module: &str,
        layer_prefix: Option<&str>,
    ) -> Option<(super::int4::Build, super::int4::Build)> {
        Some(self.int4.as_ref()?.builds(module, layer_prefix))
    }

    /// compressed-tensors, an MTP head's projection SGLang builds fused (Qwen3.5's
    /// `mtp.layers.N.self_attn.{q,k,v}_proj` as `qkv_proj`, `mlp.{gate,up}_proj` as
    /// `gate_up_proj`): the fused name, when the list excludes the checkpoint's name but not the
    /// fused one. SGLang up to 0.5.20 gives its Qwen3.5 MTP class no `packed_modules_mapping`,
    /// so `should_ignore_layer` matches the fused name whole and builds the layer quantized
    /// (sglang#35887; the mapping is on the class from 0.5.21).
    pub fn sglang_fused_unexcluded(&self, module: &str) -> Option<String> {
        if self.method != Method::CompressedTensors || !module.starts_with("mtp.layers.") {
            return None;
        }
        let fused = fused_name(module)?;
        let own = matches!(self.verdict(module), Verdict::Excluded(_));
        (own && self.verdict(&fused) == Verdict::Quantized).then_some(fused)
    }

    /// compressed-tensors MXFP4, an MTP head's routed expert the list excludes: SGLang 0.5.17 to
    /// 0.5.23 returns its MXFP4 MoE method before it reads `ignore` (`_is_mxfp4_moe` is a
    /// property of the whole config), so the expert is built MXFP4 whatever the list says
    /// (sglang#36786, open). Linear modules honour the list.
    pub fn sglang_mxfp4_expert_forced(&self, module: &str) -> bool {
        self.mxfp4
            && module.contains(".mlp.experts.")
            && matches!(self.verdict(module), Verdict::Excluded(_))
    }

    /// quark, a list with `mtp.` entries, which SGLang's Qwen3.5 MTP class reads whole before any
    /// module is matched ([`QuarkHeadBf16`]); `None` for any other list.
    pub fn sglang_quark_head_bf16(&self) -> Option<QuarkHeadBf16> {
        let entry = self.mtp_prefixed.first()?.clone();
        let experts_entry = self
            .mtp_prefixed
            .iter()
            .find(|e| e.contains("mlp.experts"))
            .cloned();
        Some(QuarkHeadBf16 {
            entry,
            experts_entry,
        })
    }

    /// quark, an MTP module of a NextN layer kept among the decoder layers (checkpoint prefix
    /// `layer_prefix`, `model.layers.78.` in GLM-5.2): the name SGLang builds it under, when
    /// the list excludes it only by its checkpoint name. SGLang's NextN model builds the
    /// layer as `model.eh_proj` / `model.enorm` / `model.hnorm` / `model.shared_head.*` and
    /// `model.decoder.*` (deepseek_nextn.py) and, up to 0.5.15, matches the entries as written
    /// (GLM's layer is not DeepSeek's 61, which its name mapper knows); an entry naming the
    /// whole layer (`model.layers.78`) makes the layer unquantized there. From 0.5.16 its GLM
    /// NextN class remaps each `model.layers.N.` entry to the runtime name (sglang#30265).
    ///
    /// `whole_layer_rule`: whether an entry naming the whole layer makes SGLang build it
    /// unquantized (DeepSeek's NextN class, which GLM-5 DSA's derives from); GLM-4.5's NextN class
    /// (glm4_moe_nextn.py) has no such rule and no remapping at any release read.
    pub fn sglang_nextn_unremapped(
        &self,
        module: &str,
        layer_prefix: &str,
        whole_layer_rule: bool,
    ) -> Option<String> {
        if self.method != Method::Quark {
            return None;
        }
        let tail = module.strip_prefix(layer_prefix)?;
        let whole_layer = layer_prefix.trim_end_matches('.');
        if !matches!(self.verdict(module), Verdict::Excluded(_))
            || (whole_layer_rule && self.verdict(whole_layer) != Verdict::Quantized)
        {
            return None;
        }
        let shared =
            ["eh_proj", "enorm", "hnorm"].contains(&tail) || tail.starts_with("shared_head.");
        let runtime = if shared {
            format!("model.{tail}")
        } else {
            format!("model.decoder.{tail}")
        };
        (self.verdict(&runtime) == Verdict::Quantized).then_some(runtime)
    }

    /// quark, a routed expert (`….mlp.experts.E.down_proj`): its MoE's name (`….mlp.experts`) and
    /// the expert's name under it. Both engines build a MoE as one module and match quark's list
    /// against the MoE's name (vLLM quark.py, SGLang quark.py), never the expert's.
    fn quark_moe<'m>(&self, module: &'m str) -> Option<(&'m str, &'m str)> {
        if self.method != Method::Quark {
            return None;
        }
        let at = module.find(".experts.")?;
        Some((
            &module[..at + ".experts".len()],
            &module[at + ".experts.".len()..],
        ))
    }

    /// Whether quark's list excludes the MoE `moe`: an entry equal to it or a `re:` matching it,
    /// or (the MoE-level rule) a plain entry naming a module under it. A `re:` matching only
    /// the experts' names does not: both engines build the MoE quantized.
    fn quark_moe_verdict(&self, moe: &str) -> Verdict {
        if self.exact.contains(moe) {
            return Verdict::Excluded(moe.to_string());
        }
        if let Some(i) = self
            .patterns
            .as_ref()
            .and_then(|set| set.matches(moe).iter().next())
        {
            return Verdict::Excluded(self.pattern_entries[i].clone());
        }
        if let Some(e) = self.experts_excluded(&format!("{moe}.")) {
            return Verdict::Excluded(e);
        }
        if self.uncompiled.is_empty() {
            Verdict::Quantized
        } else {
            Verdict::Undecided
        }
    }

    /// quark, a routed expert the list excludes: its MoE's name, and whether an entry names the
    /// MoE whole (`true`) or only modules under it (`false`, amd/GLM-5.2-MXFP4's per-expert
    /// form). vLLM up to 0.25 fails on both: it returns a linear method for an excluded MoE
    /// (an AssertionError building it) and matches entries under the MoE to nothing; from
    /// 0.26.0 it builds the MoE unquantized for either (`check_children`, quark/utils.py).
    pub fn quark_moe_excluded(&self, module: &str) -> Option<(String, bool)> {
        let (moe, _) = self.quark_moe(module)?;
        let Verdict::Excluded(entry) = self.quark_moe_verdict(moe) else {
            return None;
        };
        let whole = entry == moe || entry.starts_with("re:");
        Some((moe.to_string(), whole))
    }

    /// AWQ and GPTQ: the name SGLang builds `module` under, where it differs from the
    /// checkpoint's.
    pub fn sglang_name(&self, module: &str, layer_prefix: Option<&str>) -> Option<String> {
        let name = self.int4.as_ref()?.sglang_name(module, layer_prefix);
        (name != module).then_some(name)
    }

    /// The MoE-level rules: an expert weight belongs to `…mlp.experts`, which quark excludes
    /// when an entry names it or a child of it, and fp8 when an entry naming experts contains it.
    fn experts_excluded(&self, module: &str) -> Option<String> {
        let at = module.find(".experts.")?;
        let moe = &module[..at + ".experts".len()];
        let child = format!("{moe}.");
        match self.method {
            Method::Quark => self
                .expert_entries
                .iter()
                .find(|e| e.as_str() == moe || e.starts_with(&child))
                .cloned(),
            Method::Fp8 => self
                .expert_entries
                .iter()
                .find(|e| e.contains(moe))
                .cloned(),
            Method::Int4(_) => None,
            Method::CompressedTensors | Method::ModelOpt => {
                self.exact.get(moe).cloned().or_else(|| {
                    let set = self.patterns.as_ref()?;
                    let i = set.matches(moe).iter().next()?;
                    Some(self.pattern_entries[i].clone())
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Document;

    fn read(config: &str) -> Exclusions {
        let doc = Document::parse_bytes(config.as_bytes()).expect("test JSON");
        Exclusions::read(&doc.root)
            .unwrap()
            .expect("a judged method")
    }

    fn q(method: &str, key: &str, entries: &[&str]) -> String {
        let list: Vec<String> = entries.iter().map(|e| format!("{e:?}")).collect();
        format!(
            r#"{{"quantization_config": {{"quant_method": "{method}", "{key}": [{}]}}}}"#,
            list.join(", ")
        )
    }

    const FC: &str = "mtp.fc";
    const Q: &str = "mtp.layers.0.self_attn.q_proj";

    #[test]
    fn compressed_tensors_takes_names_and_re_patterns_never_prefixes() {
        let ex = read(&q("compressed-tensors", "ignore", &["re:^mtp.*"]));
        assert_eq!(ex.verdict(FC), Verdict::Excluded("re:^mtp.*".into()));
        let ex = read(&q(
            "compressed-tensors",
            "ignore",
            &["mtp", "mtp*", "mtp.fc"],
        ));
        assert_eq!(ex.verdict(FC), Verdict::Excluded("mtp.fc".into()));
        assert_eq!(ex.verdict(Q), Verdict::Quantized);
        // re.match anchors at the start only.
        let ex = read(&q("compressed-tensors", "ignore", &["re:mtp"]));
        assert_eq!(ex.verdict(Q), Verdict::Excluded("re:mtp".into()));
        assert_eq!(ex.verdict("model.mtp.x"), Verdict::Quantized);
    }

    #[test]
    fn modelopt_takes_contained_names_and_wildcards_never_re() {
        let ex = read(&q("modelopt", "ignore", &["re:^mtp.*"]));
        assert_eq!(ex.verdict(Q), Verdict::Quantized);
        // hf_quant_config.json's form: `quantization.exclude_modules`.
        let ex = read(
            r#"{"quantization_config": {"quant_method": "modelopt", "quantization": {"quant_algo": "NVFP4", "exclude_modules": ["mtp"]}}}"#,
        );
        assert_eq!(ex.key, "quantization_config.quantization.exclude_modules");
        assert_eq!(ex.verdict(Q), Verdict::Excluded("mtp".into()));
        let ex = read(&q("modelopt", "ignore", &["model.layers.61*"]));
        assert_eq!(
            ex.verdict("model.layers.61.eh_proj"),
            Verdict::Excluded("model.layers.61*".into())
        );
        assert_eq!(ex.verdict("model.layers.6.eh_proj"), Verdict::Quantized);
    }

    /// An entry naming the fused module: compressed-tensors honours an exact one for the shards
    /// (both engines, every release read); a `re:` on it, and quark's entries, are
    /// [`Exclusions::fused_entry`]'s, judged by release by the weights rules.
    #[test]
    fn fused_module_entries() {
        let shard = "mtp.layers.0.self_attn.q_proj";
        let ex = read(&q(
            "compressed-tensors",
            "ignore",
            &["mtp.layers.0.self_attn.qkv_proj"],
        ));
        assert_eq!(
            ex.verdict(shard),
            Verdict::Excluded("mtp.layers.0.self_attn.qkv_proj".into())
        );
        assert_eq!(ex.fused_entry(shard), None);
        let ex = read(&q(
            "compressed-tensors",
            "ignore",
            &["re:mtp\\.layers\\.0\\.mlp\\.gate_up_proj"],
        ));
        let gate = "mtp.layers.0.mlp.gate_proj";
        assert_eq!(ex.verdict(gate), Verdict::Quantized);
        assert_eq!(
            ex.fused_entry(gate).map(|f| f.fused),
            Some("mtp.layers.0.mlp.gate_up_proj".into())
        );
        let ex = read(&q("quark", "exclude", &["mtp.layers.0.self_attn.qkv_proj"]));
        assert_eq!(ex.verdict(shard), Verdict::Quantized);
        assert_eq!(
            ex.fused_entry(shard).map(|f| f.entry),
            Some("mtp.layers.0.self_attn.qkv_proj".into())
        );
        // An entry for the shard itself: nothing for the fused rule to say.
        let ex = read(&q("quark", "exclude", &[shard]));
        assert_eq!(ex.fused_entry(shard), None);
        // o_proj is built alone.
        assert_eq!(ex.fused_entry("mtp.layers.0.self_attn.o_proj"), None);
    }

    #[test]
    fn fp8_and_quark_expert_rules() {
        let ex = read(&q(
            "fp8",
            "modules_to_not_convert",
            &["model.layers.61.mlp.experts.0.down_proj"],
        ));
        assert!(matches!(
            ex.verdict("model.layers.61.mlp.experts.5.up_proj"),
            Verdict::Excluded(_)
        ));
        assert_eq!(ex.verdict("model.layers.61.eh_proj"), Verdict::Quantized);
        let ex = read(&q(
            "quark",
            "exclude",
            &["model.layers.78.mlp.experts.*.down_proj"],
        ));
        assert!(matches!(
            ex.verdict("model.layers.78.mlp.experts.1.gate_proj"),
            Verdict::Excluded(_)
        ));
    }

    /// vllm#46757: quark's list is matched against a MoE's own name (an entry equal to it, a
    /// `re:` matching it, or a plain entry under it); a `re:` matching only the experts' names
    /// leaves it quantized.
    #[test]
    fn quark_experts_are_matched_by_their_moe() {
        let e = "model.layers.78.mlp.experts.3.up_proj";
        let moe = "model.layers.78.mlp.experts";
        let ex = read(&q(
            "quark",
            "exclude",
            &["model.layers.78.mlp.experts.0.down_proj"],
        ));
        assert!(matches!(ex.verdict(e), Verdict::Excluded(_)));
        assert_eq!(ex.quark_moe_excluded(e), Some((moe.to_string(), false)));
        for whole in [moe, "re:model\\.layers\\.78\\..*"] {
            let ex = read(&q("quark", "exclude", &[whole]));
            assert!(matches!(ex.verdict(e), Verdict::Excluded(_)), "{whole}");
            assert_eq!(ex.quark_moe_excluded(e), Some((moe.to_string(), true)));
        }
        let ex = read(&q(
            "quark",
            "exclude",
            &["re:model\\.layers\\.78\\.mlp\\.experts\\.\\d+\\..*"],
        ));
        assert_eq!(ex.verdict(e), Verdict::Quantized);
        assert_eq!(ex.quark_moe_excluded(e), None);
        let ex = read(&q("fp8", "ignored_layers", &[moe]));
        assert_eq!(ex.quark_moe_excluded(e), None);
    }

    /// A pattern the `regex` crate cannot compile (look-ahead) leaves a module undecided; a
    /// hostile but compilable one matches in linear time.
    #[test]
    fn python_only_and_hostile_patterns() {
        let ex = read(&q("compressed-tensors", "ignore", &["re:(?!lm_head).*"]));
        assert_eq!(ex.uncompiled, vec!["re:(?!lm_head).*".to_string()]);
        assert_eq!(ex.verdict(Q), Verdict::Undecided);
        let ex = read(&q("compressed-tensors", "ignore", &["re:(a*)*b"]));
        let long = "a".repeat(4000);
        let start = std::time::Instant::now();
        assert_eq!(ex.verdict(&long), Verdict::Quantized);
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        let ex = read(&q("compressed-tensors", "ignore", &["re:a{1000}{1000}"]));
        assert_eq!(ex.verdict(Q), Verdict::Undecided);
        // `x)|(y` would escape `^(?:…)` and match anywhere (found in review).
        let ex = read(&q("compressed-tensors", "ignore", &["re:x)|(.*fc"]));
        assert_eq!(ex.uncompiled, vec!["re:x)|(.*fc".to_string()]);
        assert_eq!(ex.verdict("mtp.fc"), Verdict::Undecided);
    }

    /// 65,536 names are read and matched in linear time; more entries (70,000 here: the config
    /// reader refuses 100,000 values before), or more than
    /// [`MAX_PATTERNS`] patterns, are refused with the list's path.
    #[test]
    fn long_lists_are_linear_and_capped() {
        let names: Vec<String> = (0..MAX_ENTRIES)
            .map(|i| format!("model.layers.{i}.mlp.gate"))
            .collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let start = std::time::Instant::now();
        let ex = read(&q("modelopt", "ignore", &refs));
        assert_eq!(
            ex.verdict("model.layers.7.mlp.gate").clone(),
            Verdict::Excluded("model.layers.7.mlp.gate".into())
        );
        assert_eq!(ex.verdict(Q), Verdict::Quantized);
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
        // (A config of 100,000 values is refused when it is read: `json`'s cap.)
        let over: Vec<String> = (0..70_000).map(|i| format!("m{i}")).collect();
        let refs: Vec<&str> = over.iter().map(String::as_str).collect();
        let doc =
            Document::parse_bytes(q("compressed-tensors", "ignore", &refs).as_bytes()).unwrap();
        let err = Exclusions::read(&doc.root).err().unwrap();
        assert!(
            err.message.contains("lists 70000 entries"),
            "{}",
            err.message
        );
        let pats: Vec<String> = (0..MAX_PATTERNS + 1).map(|i| format!("re:m{i}")).collect();
        let refs: Vec<&str> = pats.iter().map(String::as_str).collect();
        let doc =
            Document::parse_bytes(q("compressed-tensors", "ignore", &refs).as_bytes()).unwrap();
        let err = Exclusions::read(&doc.root).err().unwrap();
        assert!(
            err.message.contains("more than 1024 patterns"),
            "{}",
            err.message
        );
    }

    /// Patterns are compiled while their NFAs fit the list's budget; a list of heavy patterns
    /// at the caps keeps the first, leaves the rest undecided, and answers at once (1,024
    /// patterns of 4 kB took 10 s and 1 GB in a release build before the budget).
    #[test]
    fn heavy_pattern_lists_spend_a_budget_then_stay_undecided() {
        let heavy = format!("re:{}b", "(a|aa)*".repeat(580));
        let mut list = vec!["re:^mtp.*".to_string()];
        list.extend(std::iter::repeat_n(heavy, 1023));
        let refs: Vec<&str> = list.iter().map(String::as_str).collect();
        let start = std::time::Instant::now();
        let ex = read(&q("compressed-tensors", "ignore", &refs));
        // The real pattern first in the list is kept and matches.
        assert_eq!(ex.verdict(FC), Verdict::Excluded("re:^mtp.*".into()));
        assert!(!ex.uncompiled.is_empty() && ex.uncompiled.len() < 1024);
        assert_eq!(ex.verdict("model.layers.0.q_proj"), Verdict::Undecided);
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
        // Fnmatch wildcards of 4 kB each, as ModelOpt lists hold them: the same.
        let wild = format!("model.{}x", "*a".repeat(2040));
        let list: Vec<&str> = std::iter::repeat_n(wild.as_str(), 1024).collect();
        let start = std::time::Instant::now();
        let ex = read(&q("modelopt", "ignore", &list));
        assert_eq!(ex.verdict(Q), Verdict::Undecided);
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
    }

    #[test]
    fn other_methods_and_no_config_are_not_judged() {
        for cfg in [
            r#"{"quantization_config": {"quant_method": "bitsandbytes", "llm_int8_skip_modules": ["mtp"]}}"#,
            r#"{"hidden_size": 4}"#,
        ] {
            let doc = Document::parse_bytes(cfg.as_bytes()).unwrap();
            assert!(Exclusions::read(&doc.root).unwrap().is_none());
        }
        let doc = Document::parse_bytes(
            br#"{"quantization_config": {"quant_method": "fp8", "ignored_layers": [3]}}"#,
        )
        .unwrap();
        let err = Exclusions::read(&doc.root).err().unwrap();
        assert!(err
            .message
            .contains("quantization_config.ignored_layers[0]"));
    }

    /// The exclude lists of published quantized checkpoints (tests/fixtures/mtp-targets/, each
    /// with its SOURCE.txt), matched as each method matches them: what they leave unquantized of
    /// the MTP head is a fact of the file, so it is pinned here.
    #[test]
    fn published_exclude_lists() {
        let fixture = |name: &str| {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/mtp-targets")
                .join(name);
            let config = crate::config::load(&dir).expect("the fixture's config.json");
            Exclusions::of_config(&config)
                .expect("a readable list")
                .expect("a judged method")
        };
        // nvidia/DeepSeek-V3.1-NVFP4: no quantization_config in config.json; ModelOpt's
        // hf_quant_config.json beside it excludes the MTP layer (61) by a wildcard.
        let ex = fixture("deepseek-v3.1-nvfp4");
        assert_eq!((ex.method, ex.len), (Method::ModelOpt, 246));
        assert_eq!(ex.key, "hf_quant_config.json: quantization.exclude_modules");
        assert_eq!(
            ex.verdict("model.layers.61.self_attn.q_a_proj"),
            Verdict::Excluded("model.layers.61*".into())
        );
        assert_eq!(
            ex.verdict("model.layers.60.mlp.experts.0.down_proj"),
            Verdict::Quantized
        );
        // zai-org/GLM-5-FP8: fp8's exact names keep the MTP layer's (78) eh_proj in BF16, not
        // its attention projections.
        let ex = fixture("glm-5-fp8");
        assert_eq!((ex.method, ex.len), (Method::Fp8, 712));
        assert!(matches!(
            ex.verdict("model.layers.78.eh_proj"),
            Verdict::Excluded(_)
        ));
        assert_eq!(
            ex.verdict("model.layers.78.self_attn.q_a_proj"),
            Verdict::Quantized
        );
        // nvidia/Qwen3.6-27B-NVFP4 excludes `mtp*` (all of the head); its sibling
        // nvidia/Qwen3.5-397B-A17B-NVFP4 only `mtp.layers.0*`, which leaves `mtp.fc` quantized.
        assert_eq!(
            fixture("qwen3.6-27b-nvfp4").verdict("mtp.fc"),
            Verdict::Excluded("mtp*".into())
        );
        let ex = fixture("qwen3.5-397b-a17b-nvfp4");
        assert_eq!(ex.verdict("mtp.fc"), Verdict::Quantized);
        assert_eq!(
            ex.verdict("mtp.layers.0.self_attn.q_proj"),
            Verdict::Excluded("mtp.layers.0*".into())
        );
    }

    /// The ModelOpt form without `quant_method` (`producer.name` "modelopt") is ModelOpt, as
    /// vLLM normalises it; without the producer it is not judged.
    #[test]
    fn modelopt_without_quant_method_by_its_producer() {
        let doc = Document::parse_bytes(
            br#"{"quantization_config": {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "exclude_modules": ["mtp*"]}}}"#,
        )
        .unwrap();
        let ex = Exclusions::read(&doc.root).unwrap().unwrap();
        assert_eq!(ex.verdict("mtp.fc"), Verdict::Excluded("mtp*".into()));
        let doc = Document::parse_bytes(
            br#"{"quantization_config": {"quantization": {"quant_algo": "NVFP4", "exclude_modules": ["mtp*"]}}}"#,
        )
        .unwrap();
        assert!(Exclusions::read(&doc.root).unwrap().is_none());
    }
}
