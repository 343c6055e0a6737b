//! Where each target family keeps its embedded MTP (next-n) head in the checkpoint, one row per
//! family of loaders, as data: the weights checks ask which tensor names are the head's from the
//! row the target's config picks (its `architectures`, else its `model_type`, at the top or
//! under `text_config`), never from a branch of their own.
//!
//! The spellings are read from the engines' MTP loaders (vLLM 0.34.0
//! vllm/model_executor/models/*_mtp.py, SGLang 0.5.23 srt/models/*_mtp.py / *_nextn.py): layer `j`
//! at decoder index `num_hidden_layers + j` (`model.layers.61.*`: DeepSeek-V3/V3.2, GLM-4.5–5,
//! Bailing — vLLM's `get_spec_layer_idx_from_weight_name`, models/utils.py), under
//! `mtp.layers.j.*` beside shared `mtp.fc` / `mtp.norm` (Qwen3-Next, Qwen3.5/3.6 — the loaders
//! keep only names starting `mtp.`), or under `model.mtp_layers.j.*` (MiMo — vLLM mimo_mtp.py's
//! `orig_to_new_prefix`, SGLang mimo_mtp.py's `model.mtp_layers.(\d+).` pattern), `model.mtp_block.j.*`
//! (ERNIE-4.5 MoE), `mtp.j.*` (DeepSeek-V4) or `model.mtp_layers.j.*` (HY-V4, whose loaders read
//! one layer whatever its exports declare), `llm.mtp.layers.j.*` (Nemotron 3.5 Transcribe's BF16
//! checkpoint, in NeMo's layout); GLM-OCR's at decoder index `num_hidden_layers + j` of its
//! `text_config` (`model.language_model.layers.N.*`), never under `mtp.`. A row may also name depth keys only its family uses
//! (MiniMax-M3's `num_mtp_modules`), read for the configs that pick it. A config no row names is
//! read with the first two spellings, as every MTP target was before the rows.

use crate::json::Node;

/// One way a checkpoint stores MTP layer `j`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadLayers {
    /// At decoder index `num_hidden_layers + j` under the stack's `layers.`.
    AfterTrunk,
    /// Under a prefix of its own (after the stack's prefix): `layers` then `j.`; `shared`, when
    /// set, is the prefix of the head's tensors outside its layers (`mtp.fc`).
    Own {
        layers: &'static str,
        shared: Option<&'static str>,
        /// How messages spell it (`model.mtp_layers.`).
        display: &'static str,
    },
}

/// A family's MTP head naming.
#[derive(Debug, PartialEq, Eq)]
pub struct HeadNaming {
    /// The family, for messages and docs.
    pub family: &'static str,
    /// Architectures that pick the row (exact).
    pub architectures: &'static [&'static str],
    /// `model_type`s that pick the row (top level or `text_config`).
    pub model_types: &'static [&'static str],
    /// The spellings the family's loaders read, in the order messages list them.
    pub layers: &'static [HeadLayers],
    /// The most MTP layers the family's loaders read, when fewer than a config may declare
    /// (HY-V4 exports declare 1 or 2 and hold one: vLLM loads `max(n - 1, 1)`, SGLang only layer
    /// 0); the layers past it are not looked for.
    pub layers_read: Option<u64>,
    /// Depth keys only this family's configs use, beside the shared ones
    /// (`super::embedded::DEPTH_KEYS`): `(parent, key)`, read only when the config picks the row
    /// (a key another family spells the same way with another meaning is not read there).
    pub depth_keys: &'static [(&'static str, &'static str)],
    /// Where the spellings were read.
    pub source: &'static str,
}

const MTP_LAYERS: HeadLayers = HeadLayers::Own {
    layers: "mtp.layers.",
    shared: Some("mtp."),
    display: "mtp.layers.",
};

/// Every family whose loaders were read, then [`ANY`].
pub const ROWS: &[HeadNaming] = &[
    HeadNaming {
        family: "MiMo",
        architectures: &["MiMoForCausalLM"],
        model_types: &["mimo"],
        layers: &[HeadLayers::Own {
            layers: "mtp_layers.",
            shared: None,
            display: "model.mtp_layers.",
        }],
        layers_read: None,
        depth_keys: &[],
        source: "vLLM 0.34.0 mimo_mtp.py:182-184 (`model.mtp_layers.{i}.` remapped to the offset index); \
SGLang 0.5.23 mimo_mtp.py:185 (`model.mtp_layers.(\\d+).`)",
    },
    HeadNaming {
        family: "Qwen3-Next / Qwen3.5 / Qwen3.6",
        architectures: &[],
        model_types: &[
            "qwen3_next",
            "qwen3_5",
            "qwen3_5_text",
            "qwen3_5_moe",
            "qwen3_5_moe_text",
        ],
        layers: &[MTP_LAYERS],
        layers_read: None,
        depth_keys: &[],
        source: "vLLM 0.34.0 qwen3_5_mtp.py:319-329 and qwen3_next_mtp.py:244-254 (only names starting \
`mtp.` are the head's); SGLang 0.5.23 qwen3_5_mtp.py:365-367",
    },
    HeadNaming {
        family: "DeepSeek-V3 / V3.2, GLM-4.5–5, Bailing",
        architectures: &[],
        model_types: &[
            "deepseek_v3",
            "deepseek_v32",
            "glm4_moe",
            "glm4_moe_lite",
            "glm_moe_dsa",
            "bailing_moe",
            "bailing_hybrid",
        ],
        layers: &[HeadLayers::AfterTrunk],
        layers_read: None,
        depth_keys: &[],
        source: "vLLM 0.34.0 models/utils.py:642 get_spec_layer_idx_from_weight_name (`model.layers.{N + j}.`), \
used by deepseek_mtp.py, glm4_moe_mtp.py, glm4_moe_lite_mtp.py; bailing_moe_mtp.py:293-301",
    },
    HeadNaming {
        family: "ERNIE-4.5 MoE",
        architectures: &["Ernie4_5_MoeForCausalLM"],
        model_types: &["ernie4_5_moe"],
        layers: &[HeadLayers::Own {
            layers: "mtp_block.",
            shared: None,
            display: "model.mtp_block.",
        }],
        layers_read: None,
        depth_keys: &[],
        source: "vLLM 0.34.0 ernie_mtp.py:148-161 (`mtp_block.{i}`, beside `mtp_emb_norm.{i}`, `mtp_hidden_norm.{i}`, \
`mtp_linear_proj.{i}`); SGLang 0.5.23 ernie4_eagle.py:144-161",
    },
    HeadNaming {
        family: "DeepSeek-V4",
        architectures: &["DeepseekV4ForCausalLM"],
        model_types: &["deepseek_v4"],
        layers: &[HeadLayers::Own {
            layers: "mtp.",
            shared: None,
            display: "mtp.",
        }],
        layers_read: None,
        depth_keys: &[],
        source: "vLLM 0.34.0 models/deepseek_v4/nvidia/mtp.py:339-352 (`mtp.{i}.` remapped to `model.layers.{N + i}.`); \
SGLang 0.5.23 deepseek_v4_nextn.py:252-254 (`mtp.0.` → `model.decoder.`)",
    },
    HeadNaming {
        family: "HY-V4",
        architectures: &["HYV4ForCausalLM"],
        model_types: &["hy_v4"],
        layers: &[
            HeadLayers::Own {
                layers: "mtp_layers.",
                shared: None,
                display: "model.mtp_layers.",
            },
            HeadLayers::AfterTrunk,
        ],
        layers_read: Some(1),
        depth_keys: &[],
        source: "vLLM 0.34.0 models/hy_v4/nvidia/mtp.py:780-790 (`model.mtp_layers.{j}.`, else `model.layers.{N + j}.`; \
54-69: loads max(n - 1, 1) layers, exports declaring 1 or 2 holding one); SGLang 0.5.23 hunyuan_v4_nextn.py:220-226 \
(only `model.mtp_layers.0.`)",
    },
    HeadNaming {
        family: "Nemotron 3.5 Transcribe",
        architectures: &["Nemotron3_5TranscribeForConditionalGeneration"],
        model_types: &[],
        layers: &[
            HeadLayers::Own {
                layers: "llm.mtp.layers.",
                shared: Some("llm.mtp."),
                display: "llm.mtp.layers.",
            },
            MTP_LAYERS,
        ],
        layers_read: None,
        depth_keys: &[],
        source: "vLLM 0.34.0 nemotron3_5_transcribe.py:388-398 (the BF16 checkpoint in NeMo's layout: `llm.mtp.*`, \
`llm.` stripped for NemotronHMTP) and 416-418 (the FP8 and NVFP4 exports use Hugging Face names: `mtp.layers.{j}.`)",
    },
    HeadNaming {
        family: "MiniMax-M3",
        architectures: &["MiniMaxM3SparseForConditionalGeneration", "MiniMaxM3MTP"],
        model_types: &["minimax_m3_vl", "minimax_m3_mtp"],
        layers: &[MTP_LAYERS],
        layers_read: None,
        depth_keys: &[("text_config", "num_mtp_modules"), ("", "num_mtp_modules")],
        source: "vLLM 0.34.0 models/minimax_m3/nvidia/mtp.py:205-220 (`language_model.` stripped, then \
`model.mtp.layers.{j}.`); config/speculative.py:1254-1280 (the depth is `num_mtp_modules` of the text config, \
default 1)",
    },
    HeadNaming {
        family: "GLM-OCR",
        architectures: &["GlmOcrForConditionalGeneration"],
        model_types: &["glm_ocr", "glm_ocr_text"],
        layers: &[HeadLayers::AfterTrunk],
        layers_read: None,
        depth_keys: &[],
        source: "vLLM 0.34.0 glm_ocr_mtp.py:113-115 (depth and first MTP index from the text config: \
`text_config.num_nextn_predict_layers`, `text_config.num_hidden_layers`), 257 (`model.language_model.layers.{N + j}.` \
read as `model.layers.{N + j}.`); SGLang 0.5.23 glm_ocr.py:333-355, 380 (`model.language_model.` stripped, then \
`model.layers.{N}`)",
    },
];

/// A family no row names: the two spellings every MTP target was read with before the rows.
pub const ANY: HeadNaming = HeadNaming {
    family: "any",
    architectures: &[],
    model_types: &[],
    layers: &[MTP_LAYERS, HeadLayers::AfterTrunk],
    layers_read: None,
    depth_keys: &[],
    source: "the union of the rows' most common spellings",
};

/// The row `root` (a target config) picks: by architecture first, then by `model_type` at the
/// top or under `text_config`; [`ANY`] when none does.
pub fn of(root: &Node) -> &'static HeadNaming {
    let architectures: Vec<&str> = root
        .get("architectures")
        .and_then(Node::as_array)
        .map(|a| a.iter().filter_map(Node::as_str).collect())
        .unwrap_or_default();
    if let Some(row) = ROWS
        .iter()
        .find(|r| architectures.iter().any(|a| r.architectures.contains(a)))
    {
        return row;
    }
    let model_types = [
        root.get("model_type"),
        root.get("text_config").and_then(|t| t.get("model_type")),
    ];
    model_types
        .iter()
        .flatten()
        .filter_map(|n| n.as_str())
        .find_map(|t| ROWS.iter().find(|r| r.model_types.contains(&t)))
        .unwrap_or(&ANY)
}

impl HeadNaming {
    /// Whether layer `j` may sit at decoder index `num_hidden_layers + j`.
    pub fn after_trunk(&self) -> bool {
        self.layers.contains(&HeadLayers::AfterTrunk)
    }

    /// Where layer `j` was looked for, for messages (`base`: `num_hidden_layers`, when known).
    pub fn spellings(&self, j: u64, base: Option<u64>) -> String {
        let each: Vec<String> = self
            .layers
            .iter()
            .filter_map(|l| match l {
                HeadLayers::Own { display, .. } => Some(format!("`{display}{j}.*`")),
                HeadLayers::AfterTrunk => {
                    base.map(|n| format!("`model.layers.{}.*`", n.saturating_add(j)))
                }
            })
            .collect();
        each.join(" or ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Document;

    fn row(text: &str) -> &'static HeadNaming {
        let doc = Document::parse_bytes(text.as_bytes()).expect("test JSON");
        of(&doc.root)
    }

    #[test]
    fn rows_are_picked_by_architecture_then_model_type() {
        assert_eq!(
            row(r#"{"architectures": ["MiMoForCausalLM"], "model_type": "x"}"#).family,
            "MiMo"
        );
        assert_eq!(
            row(r#"{"model_type": "qwen3_5", "text_config": {"model_type": "qwen3_5_text"}}"#)
                .family,
            "Qwen3-Next / Qwen3.5 / Qwen3.6"
        );
        assert_eq!(
            row(r#"{"model_type": "x", "text_config": {"model_type": "glm4_moe"}}"#).family,
            ROWS[2].family
        );
        // GLM-OCR's head sits after its text trunk only: a `mtp.layers.j` tensor is not its.
        let ocr = row(r#"{"architectures": ["GlmOcrForConditionalGeneration"]}"#);
        assert_eq!(ocr.family, "GLM-OCR");
        assert_eq!(ocr.spellings(0, Some(16)), "`model.layers.16.*`");
        assert_eq!(
            row(r#"{"model_type": "x", "text_config": {"model_type": "glm_ocr_text"}}"#),
            ocr
        );
        assert_eq!(row(r#"{"model_type": "llama"}"#), &ANY);
        assert_eq!(row(r#"{"architectures": 3}"#), &ANY);
    }

    #[test]
    fn messages_name_each_spelling() {
        assert_eq!(
            ANY.spellings(0, Some(64)),
            "`mtp.layers.0.*` or `model.layers.64.*`"
        );
        assert_eq!(ANY.spellings(1, None), "`mtp.layers.1.*`");
        assert_eq!(ROWS[0].spellings(0, Some(36)), "`model.mtp_layers.0.*`");
    }
}
