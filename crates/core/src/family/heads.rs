//! Where each target family keeps its embedded MTP (next-n) head in the checkpoint, one row per
//! family of loaders, as data: the weights checks ask which tensor names are the head's from the
//! row the target's config picks (its `architectures`, else its `model_type`, at the top or
//! under `text_config`), never from a branch of their own.
//!
//! The spellings are read from the engines' MTP loaders (vLLM 0.34.0
//! vllm/model_executor/models/*_mtp.py, SGLang 0.5.23 srt/models/*_mtp.py / *_nextn.py): layer `j`
//! at decoder index `num_hidden_layers + j` (`model.layers.61.*`: DeepSeek-V3/V3.2, GLM-4.5–5,
//! Bailing 2.5 and V3, dots3 Note, Kimi-K3, openPangu Ultra MoE, Step-3.5/3.7, Step5, HY-V3,
//! GLM-5-Next — vLLM's `get_spec_layer_idx_from_weight_name`, models/utils.py, or a copy of it;
//! for these a `mtp.layers.j.*` tensor is not the head: dots3's trunk loader skips `mtp.*` and
//! no MTP loader reads it), under
//! `mtp.layers.j.*` beside shared `mtp.fc` / `mtp.norm` (Qwen3-Next, Qwen3.5/3.6 — the loaders
//! keep only names starting `mtp.`), or under `model.mtp_layers.j.*` (MiMo — vLLM mimo_mtp.py's
//! `orig_to_new_prefix`, SGLang mimo_mtp.py's `model.mtp_layers.(\d+).` pattern), under
//! `model.mtp.layers.j.*` beside `model.mtp.*` (MiMo-V2, LongCat-Flash: both engines read layer 0
//! only, so the layers past it are not looked for), `model.mtp_block.j.*`
//! (ERNIE-4.5 MoE), `mtp.j.*` (DeepSeek-V4) or `model.mtp_layers.j.*` (HY-V4, whose loaders read
//! one layer whatever its exports declare), `llm.mtp.layers.j.*` (Nemotron 3.5 Transcribe's BF16
//! checkpoint, in NeMo's layout); GLM-OCR's at decoder index `num_hidden_layers + j` of its
//! `text_config` (`model.language_model.layers.N.*`), never under `mtp.`. A row may also name depth keys only its family uses
//! (MiniMax-M3's `num_mtp_modules`), read for the configs that pick it, and a config string whose
//! length is the layers one step stacks (Nemotron-H's `mtp_hybrid_override_pattern`: a step is
//! `mtp.layers.0..len-1`). A config no row names is
//! read with the first two spellings, as every MTP target was before the rows: the families
//! whose loaders read `mtp.layers.j.*` under one of the stacks have none (EXAONE-MoE and
//! EXAONE 4.5, exaone_moe_mtp.py / exaone4_5_mtp.py `mtp.` → `model.`; Qwen4-Exp, qwen4_exp
//! mtp.py `_remap_mtp_weight_name`; Inkling, `model.mtp.layers.j.*` beside `model.mtp.chain_norm`;
//! Nemotron-H, `[language_model.]mtp.layers.i.*`). Gemma 4's MTP draft is a checkpoint of its own
//! (`gemma4_assistant`), not a head embedded in the target's.

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
    /// A config string whose length is how many physical layers one MTP step holds, when the
    /// family stacks several per step: `(parent, key)` (Nemotron-H's `mtp_hybrid_override_pattern`,
    /// one layer per character: vLLM nemotron_h_mtp.py builds `num_nextn_predict_layers ×
    /// len(pattern)` layers `mtp.layers.0..`). `None`: one layer per step.
    pub layers_per_step: Option<(&'static str, &'static str)>,
    /// Where the spellings were read.
    pub source: &'static str,
}

const MTP_LAYERS: HeadLayers = HeadLayers::Own {
    layers: "mtp.layers.",
    shared: Some("mtp."),
    display: "mtp.layers.",
};

/// `model.mtp.layers.j.*` beside shared `model.mtp.*` (MiMo-V2, LongCat-Flash): the stack's
/// `model.` is stripped before the row's prefixes are tried, so the spelling is
/// [`MTP_LAYERS`]'s; only the messages name it in full.
const MODEL_MTP_LAYERS: HeadLayers = HeadLayers::Own {
    layers: "mtp.layers.",
    shared: Some("mtp."),
    display: "model.mtp.layers.",
};

/// A family whose loaders read its head after the trunk only, under no depth key of its own.
const fn after_trunk(
    family: &'static str,
    architectures: &'static [&'static str],
    model_types: &'static [&'static str],
    source: &'static str,
) -> HeadNaming {
    HeadNaming {
        family,
        architectures,
        model_types,
        layers: &[HeadLayers::AfterTrunk],
        layers_read: None,
        depth_keys: &[],
        layers_per_step: None,
        source,
    }
}

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
        layers_per_step: None,
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
        layers_per_step: None,
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
        layers_per_step: None,
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
        layers_per_step: None,
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
        layers_per_step: None,
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
        layers_per_step: None,
        source: "vLLM 0.34.0 models/hy_v4/nvidia/mtp.py:780-790 (`model.mtp_layers.{j}.`, else `model.layers.{N + j}.`; \
54-69: loads max(n - 1, 1) layers, exports declaring 1 or 2 holding one); SGLang 0.5.23 hunyuan_v4_nextn.py:220-226 \
(only `model.mtp_layers.0.`)",
    },
    HeadNaming {
        family: "Nemotron-H",
        architectures: &["NemotronHForCausalLM"],
        model_types: &["nemotron_h", "nemotron_h_puzzle"],
        layers: &[MTP_LAYERS],
        layers_read: None,
        depth_keys: &[],
        layers_per_step: Some(("", "mtp_hybrid_override_pattern")),
        source: "vLLM 0.34.0 nemotron_h_mtp.py:251-261 (num_nextn_predict_layers × \
len(mtp_hybrid_override_pattern) physical layers, `mtp.layers.0..`) and 455-462 (`mtp.layers.` read as \
`model.layers.`); speculative.py:1013 (nemotron_h, nemotron_h_puzzle)",
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
        layers_per_step: None,
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
        layers_per_step: None,
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
        layers_per_step: None,
        source: "vLLM 0.34.0 glm_ocr_mtp.py:113-115 (depth and first MTP index from the text config: \
`text_config.num_nextn_predict_layers`, `text_config.num_hidden_layers`), 257 (`model.language_model.layers.{N + j}.` \
read as `model.layers.{N + j}.`); SGLang 0.5.23 glm_ocr.py:333-355, 380 (`model.language_model.` stripped, then \
`model.layers.{N}`)",
    },
    HeadNaming {
        family: "MiMo-V2 (Flash, Pro, Omni)",
        architectures: &[
            "MiMoV2ForCausalLM",
            "MiMoV2FlashForCausalLM",
            "MiMoV2OmniForCausalLM",
        ],
        model_types: &[],
        layers: &[MODEL_MTP_LAYERS],
        // The checkpoints ship several MTP layers; both engines serve the first only.
        layers_read: Some(1),
        depth_keys: &[],
        layers_per_step: None,
        source: "vLLM 0.34.0 config/speculative.py:904-944 (picked by architecture; n_predict fixed at 1 whatever \
the config declares), mimo_v2_mtp.py:51-54 (only the first MTP layer), 285-291 (only names holding `model.mtp` are the \
head's); SGLang 0.5.23 mimo_v2_nextn.py:374-381 (every `model.mtp.layers.(\\d+).` read into its one `mtp_block`)",
    },
    HeadNaming {
        family: "LongCat-Flash",
        architectures: &["LongcatFlashForCausalLM"],
        model_types: &["longcat_flash"],
        layers: &[MODEL_MTP_LAYERS],
        // One MTP layer is built and only `model.mtp.layers.0.*` names are mapped onto it.
        layers_read: Some(1),
        depth_keys: &[],
        layers_per_step: None,
        source: "vLLM 0.34.0 config/speculative.py:1149-1154, longcat_flash_mtp.py:84-86 (one MTP layer), 311-316 \
(only names holding `model.mtp` are the head's: `model.mtp.layers.0.*`, `model.mtp.embed_tokens`, `model.mtp.norm`); \
SGLang 0.5.23 longcat_flash_nextn.py:515-516",
    },
    // `mtp.*` names are skipped by the trunk's loader and read by no MTP loader: not the head.
    after_trunk(
        "dots3 Note",
        &["Dots3NoteForCausalLM"],
        &["dots3_note"],
        "vLLM 0.34.0 config/speculative.py:832-846, models/dots3_note/nvidia/mtp.py:170-191 \
(`model.mtp.embed_tokens` moved to layer N, then DeepseekV32MTP's loader, models/deepseek_v32/nvidia/mtp.py:389-390: \
`model.layers.{N + j}.` only), models/dots3_note/nvidia/model.py:631-632 (the trunk skips `mtp.*`)",
    ),
    // Its text config's `bailing_hybrid` picks the DeepSeek-style row too, with the same
    // spelling; vLLM picks its MTP loader by these architectures, so the row does as well.
    after_trunk(
        "Bailing V3 (Ling/Ring V3)",
        &["BailingMoeV3ForCausalLM", "BailingMoeV3VLForConditionalGeneration"],
        &[],
        "vLLM 0.34.0 config/speculative.py:1054-1088 (picked by architecture, the VL one's text config \
promoted), bailing_moe_v3_mtp.py:351-361 (only `model.layers.{N + j}.`)",
    ),
    after_trunk(
        "Kimi-K3",
        &["KimiK3ForConditionalGeneration"],
        &["kimi_k3"],
        "vLLM 0.34.0 config/speculative.py:883-891 (depth from `text_config`), \
models/kimi_k3/nvidia/mtp.py:320-330 (`language_model.` stripped, then `model.layers.{N + j}.`, models/utils.py:656-667)",
    ),
    after_trunk(
        "openPangu Ultra MoE",
        &["PanguUltraMoEForCausalLM"],
        &["pangu_ultra_moe"],
        "vLLM 0.34.0 config/speculative.py:875-881, openpangu_mtp.py:134-144 (`layers.{N + j}.` only)",
    ),
    after_trunk(
        "Step-3.5 / Step-3.7",
        &["Step3p5ForCausalLM", "Step3p7ForConditionalGeneration"],
        &["step3p5", "step3p7"],
        "vLLM 0.34.0 config/speculative.py:1156-1168, step3p5_mtp.py:221-225 with models/utils.py:656-667 \
(`model.layers.{N + j}.`, `model.language_model.layers.{N + j}.`); SGLang 0.5.23 step3p5_mtp.py:34-40",
    ),
    after_trunk(
        "Step5",
        &["Step5ForCausalLM", "Step5ForConditionalGeneration"],
        &["step5", "step5_vl"],
        "vLLM 0.34.0 config/speculative.py:1170-1185, models/step5/nvidia/mtp.py:368-375 with \
models/utils.py:656-667 (`model.layers.{N + j}.`)",
    ),
    after_trunk(
        "HY-V3",
        &["HYV3ForCausalLM"],
        &["hy_v3"],
        "vLLM 0.34.0 config/speculative.py:1190-1195, hy_v3_mtp.py:344-346 with models/utils.py:656-667; \
SGLang 0.5.23 hunyuan_v3_nextn.py:161-162 (`model.layers.{N}.`)",
    ),
    after_trunk(
        "GLM-5-Next",
        &["Glm5NextForCausalLM", "Glm5NextForConditionalGeneration"],
        &["glm5_next"],
        "vLLM 0.34.0 config/speculative.py:1281-1293 (depth from the text config), \
models/glm5next/common/mtp.py:334-342 (`model.language_model.` read as `model.`, then `model.layers.{N + j}.`); \
SGLang 0.5.23 glm5_next_nextn.py:82-91",
    ),
];

/// A family no row names: the two spellings every MTP target was read with before the rows.
pub const ANY: HeadNaming = HeadNaming {
    family: "any",
    architectures: &[],
    model_types: &[],
    layers: &[MTP_LAYERS, HeadLayers::AfterTrunk],
    layers_read: None,
    depth_keys: &[],
    layers_per_step: None,
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

    /// The families vLLM 0.34.0 added MTP loaders for: picked where config/speculative.py picks
    /// them (architecture or `model_type`), spelled as their loaders read the head.
    #[test]
    fn the_newer_families_are_picked_as_their_loaders_read_them() {
        let v2 =
            row(r#"{"architectures": ["MiMoV2FlashForCausalLM"], "model_type": "mimo_v2_flash"}"#);
        assert_eq!(v2.spellings(0, Some(48)), "`model.mtp.layers.0.*`");
        assert_eq!(v2.layers_read, Some(1));
        let longcat = row(r#"{"model_type": "longcat_flash"}"#);
        assert_eq!(longcat.layers_read, Some(1));
        assert!(!longcat.after_trunk());
        // Bailing V3's VL checkpoint: its text config's `bailing_hybrid` would pick the
        // DeepSeek-style row; the architecture picks first, with the same spelling.
        let v3 = row(
            r#"{"architectures": ["BailingMoeV3VLForConditionalGeneration"],
                "text_config": {"model_type": "bailing_hybrid"}}"#,
        );
        assert_eq!(v3.family, "Bailing V3 (Ling/Ring V3)");
        for text in [
            r#"{"model_type": "dots3_note"}"#,
            r#"{"model_type": "kimi_k3", "text_config": {"model_type": "kimi_linear"}}"#,
            r#"{"model_type": "pangu_ultra_moe"}"#,
            r#"{"model_type": "step3p7", "text_config": {"model_type": "step3p5"}}"#,
            r#"{"model_type": "step5_vl", "text_config": {"model_type": "step5"}}"#,
            r#"{"model_type": "hy_v3"}"#,
            r#"{"model_type": "glm5_next"}"#,
        ] {
            let r = row(text);
            assert_ne!(r, &ANY, "{text}");
            // After the trunk only: a `mtp.layers.j` tensor is not their head.
            assert_eq!(r.spellings(0, Some(40)), "`model.layers.40.*`", "{text}");
        }
        // Read right by ANY: no row.
        for text in [
            r#"{"model_type": "exaone_moe"}"#,
            r#"{"model_type": "qwen4_exp"}"#,
            r#"{"model_type": "inkling_model"}"#,
        ] {
            assert_eq!(row(text), &ANY, "{text}");
        }
        // Nemotron-H reads `mtp.layers.j` as ANY does, but stacks a pattern's layers a step.
        let nemotron = row(r#"{"model_type": "nemotron_h"}"#);
        assert_eq!(
            nemotron.layers_per_step,
            Some(("", "mtp_hybrid_override_pattern"))
        );
    }

    /// No architecture or `model_type` is named by two rows (the first would hide the other).
    #[test]
    fn no_key_picks_two_rows() {
        let mut seen = std::collections::HashSet::new();
        for r in ROWS {
            for key in r.architectures.iter().chain(r.model_types) {
                assert!(seen.insert(*key), "{key} is in two rows");
            }
        }
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
