//! Which modules an AWQ or GPTQ `quantization_config` leaves unquantized — where, unlike the
//! methods of [`super::quant_exclude`], vLLM and SGLang disagree, so a module is judged only
//! where both engines decide the same (read in vLLM 0.34.0 and SGLang 0.5.23):
//!
//! - AWQ (`awq`, `awq_marlin`, `auto_awq`): `modules_to_not_convert`, an entry excluding every
//!   module whose name *contains* it, in both engines (`is_layer_skipped(…, "substring")`,
//!   `is_layer_skipped_awq`), so `mtp.*` and `re:^mtp.*` match nothing. When the list is empty
//!   vLLM fills it from the checkpoint's dtypes (every module stored in float), which covers
//!   linear modules but never a MoE's experts (their per-expert names are longer than the MoE's
//!   prefix); SGLang fills nothing.
//! - GPTQ (`gptq`, `gptq_marlin`, `auto_gptq`): the `dynamic` object's keys in order, each a
//!   regex applied with `re.match` to the module's prefix; the first that matches decides, and a
//!   `-:` key excludes. vLLM also reads `modules_in_block_to_quantize` (modules containing an
//!   entry are quantized, the others not; filled from the dtypes when absent) for linear
//!   modules, and, for Qwen3.5, builds the whole MTP decoder unquantized when any `-:` key
//!   contains `mtp`. SGLang's `gptq_marlin` quantizes a MoE's experts whatever `dynamic` says.
//! - The names matched are each engine's: a MoE's experts by the MoE's prefix (`…mlp.experts`)
//!   in both; SGLang a fused layer by its fused name (`qkv_proj`, `gate_up_proj`,
//!   `fused_qkv_a_proj_with_mqa`; where the shard's name would be judged otherwise the module is
//!   not judged), DeepSeek-V3 / GLM / Bailing V1-V2's MTP layer as `model.decoder.*` where the
//!   checkpoint (and vLLM) say `model.layers.{N}.*`, Qwen3-Next's head as `model.layers.{j}.*`.
//! - Some modules are plain linears whatever the lists say: DeepSeek's and GLM's `eh_proj` in
//!   both engines (Bailing's in vLLM only), Qwen3.5's and Qwen3-Next's `mtp.fc` in SGLang.
//!
//! The model's family comes from its `model_type` ([`Int4Lists::for_model`]).
//!
//! Lists are matched in linear time (one Aho-Corasick automaton per list, one
//! [`regex::RegexSet`] for `dynamic`, whose matches give the first key in order), with the caps
//! of [`super::exclude`]. A `dynamic` key the `regex` crate cannot compile leaves the
//! modules it might match undecided.

use aho_corasick::AhoCorasick;
use regex::RegexSet;

use super::{compile, module_name, Verdict, LIST_HINT, MAX_ENTRIES, MAX_ENTRY_BYTES, MAX_PATTERNS};
use crate::json::Node;
use crate::{Error, Result};

/// What one engine builds for a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Build {
    /// An unquantized layer, because of this entry.
    Excluded(String),
    /// An unquantized layer whatever the lists say, for this reason.
    Plain(&'static str),
    Quantized,
    /// By how the checkpoint stores it: vLLM's lists filled from the dtypes (a module stored
    /// in float is built unquantized).
    ByDtype,
    /// A `dynamic` key not compiled might decide it: not judged.
    Open,
}

/// The AWQ or GPTQ lists of a quantization config.
pub struct Int4Lists {
    pub kind: Int4,
    /// AWQ `modules_to_not_convert` / GPTQ `modules_in_block_to_quantize`, matched as contained.
    contained: Option<AhoCorasick>,
    contained_entries: Vec<String>,
    /// GPTQ `dynamic`, in order: whether each key is negative (`-:`), and its text.
    dynamic: Vec<(bool, String)>,
    /// The compiled `dynamic` keys, with their index in `dynamic`.
    patterns: Option<RegexSet>,
    pattern_index: Vec<usize>,
    /// `dynamic` keys the `regex` crate could not compile, and the first one's place.
    pub uncompiled: Vec<String>,
    first_uncompiled: Option<usize>,
    /// A `-:` key containing `mtp`: vLLM builds a Qwen3.5 MTP decoder unquantized.
    mtp_negative: bool,
    /// The model's family, for how each engine names and builds its MTP modules.
    family: HeadLayout,
}

/// How the engines name and build a model family's MTP modules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeadLayout {
    /// DeepSeek-V3/V3.2 and GLM-4.5/4.7/5: `eh_proj` a plain `nn.Linear` in both engines
    /// (outside quark); SGLang's NextN layer is `model.decoder.*`.
    DeepseekGlm,
    /// Qwen3.5/3.6: vLLM's rule for a `-:` key containing `mtp`; SGLang's `mtp.fc` plain.
    Qwen35,
    /// Qwen3-Next: SGLang builds the head as `model.layers.{j}.*`, `mtp.fc` plain.
    Qwen3Next,
    /// Bailing (Ling) V1/V2: `eh_proj` plain in vLLM, quantized in SGLang; `model.decoder.*`.
    Bailing,
    /// Bailing hybrid (V2.5, Ling-V3): SGLang keeps `model.layers.{N}.*`.
    BailingHybrid,
    Other,
}

impl HeadLayout {
    fn of(model_type: &str) -> HeadLayout {
        match model_type {
            t if t.starts_with("deepseek_v3") || t.starts_with("deepseek_v32") => {
                HeadLayout::DeepseekGlm
            }
            "glm4_moe" | "glm4_moe_lite" | "glm_moe_dsa" => HeadLayout::DeepseekGlm,
            t if t.starts_with("qwen3_5") => HeadLayout::Qwen35,
            t if t.starts_with("qwen3_next") => HeadLayout::Qwen3Next,
            "bailing_moe" | "bailing_moe_v2" => HeadLayout::Bailing,
            "bailing_hybrid" => HeadLayout::BailingHybrid,
            _ => HeadLayout::Other,
        }
    }
}

/// A MoE's experts are matched by the MoE's prefix in both engines (`…mlp.experts`), never by
/// an expert's own name.
fn moe_prefix(name: &str) -> Option<&str> {
    let at = name.find(".experts.")?;
    Some(&name[..at + ".experts".len()])
}

/// SGLang matches a fused linear layer by its fused name, with no shard expansion.
fn fused(name: &str, family: HeadLayout) -> Option<String> {
    let (parent, leaf) = name.rsplit_once('.')?;
    let fused = match leaf {
        "q_proj" | "k_proj" | "v_proj" => "qkv_proj",
        "gate_proj" | "up_proj" => "gate_up_proj",
        "q_a_proj" | "kv_a_proj_with_mqa" if family == HeadLayout::DeepseekGlm => {
            "fused_qkv_a_proj_with_mqa"
        }
        _ => return None,
    };
    Some(format!("{parent}.{fused}"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Int4 {
    Awq,
    Gptq,
}

impl Int4 {
    pub fn of(quant_method: &str) -> Option<Int4> {
        match quant_method.to_ascii_lowercase().as_str() {
            "awq" | "awq_marlin" | "auto_awq" => Some(Int4::Awq),
            "gptq" | "gptq_marlin" | "auto_gptq" => Some(Int4::Gptq),
            _ => None,
        }
    }

    /// The key a message names.
    pub fn key(self) -> &'static str {
        match self {
            Int4::Awq => "modules_to_not_convert",
            Int4::Gptq => "dynamic",
        }
    }
}

/// Strings of a list, capped; `path` for errors.
fn strings<'q>(node: &'q Node, path: &str) -> Result<Vec<&'q str>> {
    let items = node.as_array().ok_or_else(|| {
        Error::new(format!("`{path}` is not a list of module names")).with_hint(LIST_HINT)
    })?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        // GPTQModel writes `modules_in_block_to_quantize` as a list of lists.
        let inner: Vec<&Node> = match item.as_array() {
            Some(sub) => sub.iter().collect(),
            None => vec![item],
        };
        for s in inner {
            out.push(module_name(s, path, i)?);
            if out.len() > MAX_ENTRIES {
                return Err(Error::new(format!(
                    "`{path}` lists more than {MAX_ENTRIES} entries (quantizers name a few thousand modules at most)"
                ))
                .with_hint("restore the quantization_config the quantizer wrote"));
            }
        }
    }
    Ok(out)
}

impl Int4Lists {
    /// The lists of quantization config `q` (its path `at`) for `kind`.
    pub fn read(q: &Node, kind: Int4, at: &str) -> Result<Int4Lists> {
        let mut lists = Int4Lists {
            kind,
            contained: None,
            contained_entries: Vec::new(),
            dynamic: Vec::new(),
            patterns: None,
            pattern_index: Vec::new(),
            uncompiled: Vec::new(),
            first_uncompiled: None,
            mtp_negative: false,
            family: HeadLayout::Other,
        };
        let list_key = match kind {
            Int4::Awq => "modules_to_not_convert",
            Int4::Gptq => "modules_in_block_to_quantize",
        };
        if let Some(node) = q.get(list_key).filter(|n| !n.is_null()) {
            let entries = strings(node, &format!("{at}{list_key}"))?;
            lists.contained_entries = entries.iter().map(|s| s.to_string()).collect();
        }
        if !lists.contained_entries.is_empty() {
            let ac = AhoCorasick::new(&lists.contained_entries).map_err(|e| {
                Error::new(format!("`{at}{list_key}` cannot be matched: {e}"))
                    .with_hint("restore the quantization_config the quantizer wrote")
            })?;
            lists.contained = Some(ac);
        }
        if kind == Int4::Gptq {
            lists.read_dynamic(q, at)?;
        }
        Ok(lists)
    }

    /// The same lists for the model whose config root is `root` (its `model_type`, top level or
    /// under `text_config`, decides how the engines name and build its MTP modules).
    pub fn for_model(mut self, root: &Node) -> Int4Lists {
        let model_type = |n: &Node| {
            n.get("model_type")
                .and_then(Node::as_str)
                .map(str::to_string)
        };
        let types = [
            root.get("text_config").and_then(model_type),
            model_type(root),
        ];
        self.family = types
            .iter()
            .flatten()
            .map(|t| HeadLayout::of(t))
            .find(|f| *f != HeadLayout::Other)
            .unwrap_or(HeadLayout::Other);
        self
    }

    fn read_dynamic(&mut self, q: &Node, at: &str) -> Result<()> {
        let Some(node) = q.get("dynamic").filter(|n| !n.is_null()) else {
            return Ok(());
        };
        let path = format!("{at}dynamic");
        let members = node.as_object().ok_or_else(|| {
            Error::new(format!("`{path}` is not an object of module patterns"))
                .with_hint("make it an object whose keys are `-:REGEX` / `+:REGEX` module patterns")
        })?;
        if members.len() > MAX_PATTERNS {
            return Err(Error::new(format!(
                "`{path}` holds more than {MAX_PATTERNS} patterns: not a list a quantizer writes; not compiled"
            ))
            .with_hint("restore the quantization_config the quantizer wrote"));
        }
        let mut sources = Vec::new();
        for m in members {
            if m.key.len() > MAX_ENTRY_BYTES {
                return Err(Error::new(format!(
                    "`{path}` has a key of {} bytes, over the {MAX_ENTRY_BYTES} a module pattern is read with",
                    m.key.len()
                ))
                .with_hint("restore the quantization_config the quantizer wrote"));
            }
            let negative = m.key.starts_with("-:");
            let pattern = m
                .key
                .strip_prefix("-:")
                .or_else(|| m.key.strip_prefix("+:"))
                .unwrap_or(&m.key);
            if negative && m.key.contains("mtp") {
                self.mtp_negative = true;
            }
            self.dynamic.push((negative, m.key.clone()));
            sources.push((pattern.to_string(), format!("^(?:{pattern})")));
        }
        let compiled = compile(&sources);
        self.patterns = compiled.set;
        self.pattern_index = compiled.kept;
        self.first_uncompiled = compiled.uncompiled.first().copied();
        self.uncompiled = compiled
            .uncompiled
            .iter()
            .map(|&i| self.dynamic[i].1.clone())
            .collect();
        Ok(())
    }

    /// The entry of the contained list found in `name`.
    fn contained_in(&self, name: &str) -> Option<String> {
        let m = self.contained.as_ref()?.find(name)?;
        Some(self.contained_entries[m.pattern().as_usize()].clone())
    }

    /// The first `dynamic` key matching `name`: `(negative, key)`; `Err(())` when a key not
    /// compiled comes before it (or none compiled matches and one was not compiled).
    fn first_dynamic(&self, name: &str) -> std::result::Result<Option<(bool, String)>, ()> {
        let first = self
            .patterns
            .as_ref()
            .and_then(|set| set.matches(name).iter().next())
            .map(|j| self.pattern_index[j]);
        let before = |i: usize| self.first_uncompiled.is_some_and(|u| u < i);
        match first {
            Some(i) if !before(i) => Ok(Some(self.dynamic[i].clone())),
            Some(_) => Err(()),
            None if self.uncompiled.is_empty() => Ok(None),
            None => Err(()),
        }
    }

    /// What vLLM 0.34.0 builds for the module the checkpoint names `name`.
    fn vllm(&self, name: &str) -> Build {
        let leaf = name.rsplit('.').next().unwrap_or(name);
        if leaf == "eh_proj" && matches!(self.family, HeadLayout::DeepseekGlm | HeadLayout::Bailing)
        {
            return Build::Plain("vLLM builds `eh_proj` as a plain nn.Linear");
        }
        let experts = moe_prefix(name);
        let at = experts.unwrap_or(name);
        match self.kind {
            Int4::Awq => match self.contained_in(at) {
                Some(e) => Build::Excluded(e),
                None if experts.is_some() || !self.contained_entries.is_empty() => Build::Quantized,
                None => Build::ByDtype,
            },
            Int4::Gptq => {
                if self.family == HeadLayout::Qwen35
                    && self.mtp_negative
                    && name.starts_with("mtp.layers.")
                {
                    return Build::Excluded(self.first_mtp_negative());
                }
                match self.first_dynamic(at) {
                    Err(()) => Build::Open,
                    Ok(Some((true, key))) => Build::Excluded(key),
                    Ok(_) if experts.is_some() => Build::Quantized,
                    Ok(_) if self.contained_entries.is_empty() => Build::ByDtype,
                    Ok(_) => match self.contained_in(at) {
                        Some(_) => Build::Quantized,
                        None => Build::Plain("`modules_in_block_to_quantize` does not name it"),
                    },
                }
            }
        }
    }

    fn first_mtp_negative(&self) -> String {
        self.dynamic
            .iter()
            .find(|(neg, k)| *neg && k.contains("mtp"))
            .map(|(_, k)| k.clone())
            .unwrap_or_default()
    }

    /// The name SGLang 0.5.23 builds the MTP module the checkpoint names `name` under, its MTP
    /// layer's checkpoint prefix (`model.layers.61.`) being `layer_prefix`.
    pub fn sglang_name(&self, name: &str, layer_prefix: Option<&str>) -> String {
        if let Some(tail) = layer_prefix.and_then(|p| name.strip_prefix(p)) {
            if self.family != HeadLayout::BailingHybrid {
                return format!("model.decoder.{tail}");
            }
        }
        if self.family == HeadLayout::Qwen3Next {
            if let Some(rest) = name.strip_prefix("mtp.layers.") {
                return format!("model.layers.{rest}");
            }
        }
        name.to_string()
    }

    /// What SGLang builds for the module it names `name`, matched as it matches it.
    fn sglang_at(&self, at: &str, experts: bool) -> Build {
        match self.kind {
            Int4::Awq => match self.contained_in(at) {
                Some(e) => Build::Excluded(e),
                None => Build::Quantized,
            },
            Int4::Gptq if experts => Build::Quantized,
            Int4::Gptq => match self.first_dynamic(at) {
                Err(()) => Build::Open,
                Ok(Some((true, key))) => Build::Excluded(key),
                Ok(_) => Build::Quantized,
            },
        }
    }

    fn sglang(&self, name: &str) -> Build {
        let leaf = name.rsplit('.').next().unwrap_or(name);
        if name == "mtp.fc" {
            // Qwen3.5's and Qwen3-Next's MTP input projection is a plain `nn.Linear` there.
            return Build::Plain("SGLang builds `mtp.fc` as a plain nn.Linear");
        }
        if leaf == "eh_proj" && self.family == HeadLayout::DeepseekGlm {
            return Build::Plain("SGLang builds `eh_proj` as a plain nn.Linear");
        }
        if let Some(moe) = moe_prefix(name) {
            return self.sglang_at(moe, true);
        }
        let shard = self.sglang_at(name, false);
        match fused(name, self.family) {
            // It matches the fused name; where the shard's name would be matched otherwise,
            // which one SGLang builds for this model was not read: not judged.
            Some(f) => {
                let whole = self.sglang_at(&f, false);
                if std::mem::discriminant(&whole) == std::mem::discriminant(&shard) {
                    whole
                } else {
                    Build::Open
                }
            }
            None => shard,
        }
    }

    /// What vLLM 0.34.0 and SGLang 0.5.23 build for `module` (as the checkpoint and vLLM name
    /// it; its MTP layer's checkpoint prefix is `layer_prefix`).
    pub fn builds(&self, module: &str, layer_prefix: Option<&str>) -> (Build, Build) {
        let sglang = self.sglang_name(module, layer_prefix);
        (self.vllm(module), self.sglang(&sglang))
    }

    /// What both engines do with `module`: excluded or quantized where they agree, else
    /// undecided.
    pub fn verdict(&self, module: &str, layer_prefix: Option<&str>) -> Verdict {
        match self.builds(module, layer_prefix) {
            (Build::Excluded(e), Build::Excluded(_) | Build::Plain(_)) => Verdict::Excluded(e),
            (Build::Plain(why), Build::Plain(_)) => Verdict::Plain(why.to_string()),
            (Build::Plain(_), Build::Excluded(e)) => Verdict::Excluded(e),
            (Build::Quantized, Build::Quantized) => Verdict::Quantized,
            _ => Verdict::Undecided,
        }
    }

    /// How many entries and `dynamic` keys the lists hold.
    pub fn entries(&self) -> usize {
        self.contained_entries.len() + self.dynamic.len()
    }

    /// Entries of the lists that look meant for the MTP head, for messages.
    /// (AWQ's list excludes; GPTQ's `modules_in_block_to_quantize` and `+:` keys do not.)
    pub fn mtp_like(&self) -> Vec<String> {
        let excluding: Vec<&String> = match self.kind {
            Int4::Awq => self.contained_entries.iter().collect(),
            Int4::Gptq => self
                .dynamic
                .iter()
                .filter(|(negative, _)| *negative)
                .map(|(_, k)| k)
                .collect(),
        };
        excluding
            .into_iter()
            .filter(|e| e.to_ascii_lowercase().contains("mtp"))
            .take(8)
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Document;

    /// The lists of a Qwen3.5 config's quantization config `q`.
    fn lists(q: &str, kind: Int4) -> Int4Lists {
        let doc = Document::parse_bytes(q.as_bytes()).unwrap();
        let qwen35 = Document::parse_bytes(br#"{"model_type": "qwen3_5_moe"}"#).unwrap();
        Int4Lists::read(&doc.root, kind, "quantization_config.")
            .unwrap()
            .for_model(&qwen35.root)
    }

    const Q: &str = "mtp.layers.0.self_attn.q_proj";
    const EXPERT: &str = "mtp.layers.0.mlp.experts.3.up_proj";
    const DS: &str = "model.layers.61.self_attn.q_a_proj";
    const DS_SGLANG: &str = "model.decoder.self_attn.q_a_proj";
    const DS_LAYER: &str = "model.layers.61.";

    #[test]
    fn awq_matches_contained_names_in_both_engines() {
        let ex = lists(
            r#"{"modules_to_not_convert": ["visual", "mtp"]}"#,
            Int4::Awq,
        );
        assert_eq!(ex.verdict(Q, None), Verdict::Excluded("mtp".into()));
        assert_eq!(ex.verdict(EXPERT, None), Verdict::Excluded("mtp".into()));
        // `mtp.fc`: quantized by vLLM unless listed, never by SGLang.
        let ex = lists(r#"{"modules_to_not_convert": ["visual"]}"#, Int4::Awq);
        assert_eq!(ex.verdict("mtp.fc", None), Verdict::Undecided);
        assert_eq!(ex.verdict(Q, None), Verdict::Quantized);
        // `mtp.*` and `re:^mtp.*` are literal text to a substring test.
        for entry in ["mtp.*", "re:^mtp.*"] {
            let ex = lists(
                &format!(r#"{{"modules_to_not_convert": ["visual", "{entry}"]}}"#),
                Int4::Awq,
            );
            assert_eq!(ex.verdict(Q, None), Verdict::Quantized, "{entry}");
        }
        // The layer index excludes DeepSeek's MTP layer in vLLM, not under SGLang's name.
        let ex = lists(
            r#"{"modules_to_not_convert": ["model.layers.61"]}"#,
            Int4::Awq,
        );
        assert_eq!(ex.verdict(DS, Some(DS_LAYER)), Verdict::Undecided);
        assert_eq!(ex.sglang_name(DS, Some(DS_LAYER)), DS_SGLANG);
        assert_eq!(ex.vllm(DS), Build::Excluded("model.layers.61".into()));
    }

    #[test]
    fn awq_empty_list_is_filled_by_vllm_for_linear_modules_only() {
        let ex = lists(r#"{"modules_to_not_convert": null}"#, Int4::Awq);
        assert_eq!(ex.verdict(Q, None), Verdict::Undecided);
        assert_eq!(ex.verdict(EXPERT, None), Verdict::Quantized);
    }

    #[test]
    fn gptq_dynamic_first_match_wins() {
        let ex = lists(r#"{"dynamic": {"-:.*mtp.*": {}}}"#, Int4::Gptq);
        assert_eq!(ex.verdict(Q, None), Verdict::Excluded("-:.*mtp.*".into()));
        // SGLang's gptq_marlin quantizes experts whatever `dynamic` says.
        assert_eq!(ex.verdict(EXPERT, None), Verdict::Undecided);
        // A positive key first keeps the module quantized (with overrides).
        let ex = lists(
            r#"{"dynamic": {"+:mtp.layers.0.self_attn.*": {"bits": 8}, "-:model.layers.61.*": {}}, "modules_in_block_to_quantize": [["self_attn.q_proj"]]}"#,
            Int4::Gptq,
        );
        assert_eq!(ex.verdict(Q, None), Verdict::Quantized);
        assert_eq!(ex.verdict(EXPERT, None), Verdict::Quantized);
        // re.match anchors at the start: `re:` is literal text, `mtp` a prefix.
        let ex = lists(r#"{"dynamic": {"-:mtp": {}}}"#, Int4::Gptq);
        assert_eq!(ex.verdict(Q, None), Verdict::Excluded("-:mtp".into()));
    }

    #[test]
    fn gptq_without_a_list_is_filled_by_vllm_and_the_qwen35_negative_key() {
        // No modules_in_block_to_quantize and no matching key: vLLM decides by dtype.
        let ex = lists(r#"{"dynamic": {}}"#, Int4::Gptq);
        assert_eq!(ex.verdict(Q, None), Verdict::Undecided);
        assert_eq!(ex.verdict(EXPERT, None), Verdict::Quantized);
        // `-:re:^mtp.*` matches nothing as a regex, but vLLM's Qwen3.5 MTP sees `mtp` in a
        // negative key and builds the head unquantized: the engines differ.
        let ex = lists(
            r#"{"dynamic": {"-:re:^mtp.*": {}}, "modules_in_block_to_quantize": ["self_attn", "mlp"]}"#,
            Int4::Gptq,
        );
        assert_eq!(ex.verdict(Q, None), Verdict::Undecided);
        // Qwen3-Next's MTP has no such rule in vLLM: both engines quantize the module.
        let next = Document::parse_bytes(br#"{"model_type": "qwen3_next"}"#).unwrap();
        let doc = Document::parse_bytes(
            br#"{"dynamic": {"-:re:^mtp.*": {}}, "modules_in_block_to_quantize": ["self_attn", "mlp"]}"#,
        )
        .unwrap();
        let ex = Int4Lists::read(&doc.root, Int4::Gptq, "q.")
            .unwrap()
            .for_model(&next.root);
        assert_eq!(ex.verdict(Q, None), Verdict::Quantized);
    }

    fn for_type(q: &str, kind: Int4, model_type: &str) -> Int4Lists {
        let doc = Document::parse_bytes(q.as_bytes()).unwrap();
        let root = format!(r#"{{"model_type": "{model_type}"}}"#);
        let root = Document::parse_bytes(root.as_bytes()).unwrap();
        Int4Lists::read(&doc.root, kind, "q.")
            .unwrap()
            .for_model(&root.root)
    }

    /// Found in review: DeepSeek's and GLM's `eh_proj` is a plain linear in both engines, so a
    /// BF16 one is never quantized (and a quantized one never loads), whatever the list says.
    #[test]
    fn deepseek_eh_proj_is_plain_in_both_engines() {
        let ex = for_type(
            r#"{"modules_to_not_convert": ["lm_head"]}"#,
            Int4::Awq,
            "deepseek_v3",
        );
        let eh = "model.layers.61.eh_proj";
        assert!(matches!(ex.verdict(eh, Some(DS_LAYER)), Verdict::Plain(_)));
        // Bailing: plain in vLLM, quantized in SGLang.
        let ex = for_type(
            r#"{"modules_to_not_convert": ["lm_head"]}"#,
            Int4::Awq,
            "bailing_moe_v2",
        );
        assert_eq!(ex.verdict(eh, Some(DS_LAYER)), Verdict::Undecided);
    }

    /// Found in review: SGLang builds Qwen3-Next's head as `model.layers.{j}.*`, where `mtp`
    /// is not contained; experts are matched by the MoE's prefix; SGLang matches fused names.
    #[test]
    fn engine_names_experts_and_fused_layers() {
        let ex = for_type(
            r#"{"modules_to_not_convert": ["mtp"]}"#,
            Int4::Awq,
            "qwen3_next",
        );
        assert_eq!(ex.sglang_name(Q, None), "model.layers.0.self_attn.q_proj");
        assert_eq!(ex.verdict(Q, None), Verdict::Undecided);
        // A per-expert entry (vLLM's own dtype fill writes them) never matches `…mlp.experts`.
        let ex = for_type(
            r#"{"modules_to_not_convert": ["mtp.layers.0.mlp.experts.3.up_proj"]}"#,
            Int4::Awq,
            "qwen3_5_moe",
        );
        assert_eq!(ex.verdict(EXPERT, None), Verdict::Quantized);
        // A shard's own name: vLLM expands fused layers to it, SGLang matches `qkv_proj`.
        let ex = for_type(
            r#"{"modules_to_not_convert": ["mtp.layers.0.self_attn.q_proj"]}"#,
            Int4::Awq,
            "qwen3_5_moe",
        );
        assert_eq!(ex.verdict(Q, None), Verdict::Undecided);
    }

    #[test]
    fn bad_lists_are_errors_with_their_path_and_patterns_are_capped() {
        let doc = Document::parse_bytes(br#"{"dynamic": ["-:mtp"]}"#).unwrap();
        let err = Int4Lists::read(&doc.root, Int4::Gptq, "quantization_config.")
            .err()
            .unwrap();
        assert!(
            err.message.contains("quantization_config.dynamic"),
            "{}",
            err.message
        );
        let doc = Document::parse_bytes(br#"{"modules_to_not_convert": [1]}"#).unwrap();
        let err = Int4Lists::read(&doc.root, Int4::Awq, "quantization_config.")
            .err()
            .unwrap();
        assert!(
            err.message.contains("modules_to_not_convert[0]"),
            "{}",
            err.message
        );
        let keys: Vec<String> = (0..MAX_PATTERNS + 1)
            .map(|i| format!("\"-:m{i}\": {{}}"))
            .collect();
        let text = format!(r#"{{"dynamic": {{{}}}}}"#, keys.join(", "));
        let doc = Document::parse_bytes(text.as_bytes()).unwrap();
        assert!(Int4Lists::read(&doc.root, Int4::Gptq, "q.").is_err());
        // A key longer than a module pattern is read with.
        let long = format!(r#"{{"dynamic": {{"-:{}": {{}}}}}}"#, "m".repeat(5000));
        let doc = Document::parse_bytes(long.as_bytes()).unwrap();
        assert!(Int4Lists::read(&doc.root, Int4::Gptq, "q.").is_err());
        // `x)|(y` would escape `^(?:…)` and match anywhere: not compiled, as Python refuses it.
        let ex = lists(r#"{"dynamic": {"-:x)|(.*mtp": {}}}"#, Int4::Gptq);
        assert_eq!(ex.uncompiled.len(), 1);
        // A Python-only pattern first leaves what follows undecided.
        let ex = lists(
            r#"{"dynamic": {"-:(?!x)mtp": {}, "-:mtp": {}}}"#,
            Int4::Gptq,
        );
        assert_eq!(ex.uncompiled, vec!["-:(?!x)mtp".to_string()]);
        assert_eq!(ex.verdict(Q, None), Verdict::Undecided);
    }
}
