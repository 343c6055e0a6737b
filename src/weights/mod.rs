//! `weights`: the drafter's safetensors header(s) against its config and target, local or on
//! the Hub, without downloading the weights.
//!
//! A config can be exactly its authority's and still not fit the weights beside it: a drafter
//! trained with 4 target layers shipped with a 5-id config, a `draft_vocab_size` with no `d2t`
//! tensor, a layer count or head size that differs from the file. Engines find some of these
//! at load, after minutes of download, and some never (vLLM silently keeps a zero `d2t`).
//!
//! Reading: [`read_local`] reads `model.safetensors`, or every shard that
//! `model.safetensors.index.json` names, beside a config: only the 8-byte length and the JSON
//! header of each file ([`header`]), never the tensor data. [`read_hub`] does the same for a Hub
//! repo at a resolved commit with HTTP range requests (`crate::hub::fetch_safetensors_header`),
//! cached per sha. Hostile headers (truncated, huge length, bad JSON, overlapping or
//! out-of-bounds offsets) are a [`crate::Error`] naming the file.
//!
//! Checking: [`check`] compares the tensors with what the config (and, when known, the target)
//! says the engine will build, and returns [`Diagnostic`]s with `weights-*` codes, the tensor
//! name in the message and in `path`, and the shard in `file`. See `docs/weights.md`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::{self, ConfigFile};
use crate::diagnostic::{CodeInfo, Severity};
use crate::hub::{self, Freshness, HubSettings, RepoRef};
use crate::{Error, Result};

mod check;
pub mod header;
pub mod index;

pub use check::check;
pub use header::{Shard, Tensor};
pub use index::Index;

pub use crate::diagnostic::codes::WeightsCode;

/// The documentation of each code this family raises.
pub fn info(code: WeightsCode) -> &'static CodeInfo {
    match code {
        WeightsCode::FcWidth => &CodeInfo {
            severity: Severity::Error,
            summary: "the fc projection's input width does not match the aux layers the config names",
            explanation: "The drafter's `fc.weight` is [hidden_size, k × target hidden size]: DFlash concatenates \
one target hidden state per `dflash_config.target_layer_ids` entry (k = their number), EAGLE-3 one per \
`eagle_aux_hidden_state_layer_ids` entry (3 when the config names none); the target hidden size is \
`target_hidden_size`, else `hidden_size`. vLLM builds `fc` from the config, so a file trained with another \
number of layers fails to load with \"Attempted to load weight ... into parameter ...\"; a target whose hidden \
size differs fails at the first step (\"DFlash drafter expects N concatenated aux hidden features\"). Fix the \
config's layer ids to the ones the weights were trained with (the fc width tells how many).",
            source: "vllm-project/vllm:vllm/model_executor/models/qwen3_dflash.py@036a00d1f5d00d449d02dce9babdd15a5b4d06c9 (_get_dflash_fc_input_size, combine_hidden_states); vllm-project/vllm:vllm/model_executor/models/llama_eagle3.py@00bd1493b3e82d6c13c68ee8a0e1c5a96707e190 (fc_input_size); z-lab/dflash:dflash/model.py@10129599dffb338ff38cfd235a53ca6d3667b4dd (self.fc)",
        },
        WeightsCode::LayerCount => &CodeInfo {
            severity: Severity::Error,
            summary: "the file's decoder layers differ from num_hidden_layers",
            explanation: "Engines build `num_hidden_layers` decoder layers from the config. Extra layers in the file \
make vLLM's loader fail (\"There is no module or parameter named 'layers.N'\"); missing layers are left \
uninitialised (vLLM does not check that a drafter's parameters were all loaded; transformers initialises them \
randomly), and acceptance collapses. Set num_hidden_layers to the number of layers in the weights.",
            source: "vllm-project/vllm:vllm/model_executor/models/utils.py@d30d0c133c3f47a6436788f82398b21eb23df8c0 (AutoWeightsLoader._load_module); z-lab/dflash:dflash/model.py@10129599dffb338ff38cfd235a53ca6d3667b4dd (layers = range(num_hidden_layers))",
        },
        WeightsCode::Shape => &CodeInfo {
            severity: Severity::Error,
            summary: "a tensor's shape differs from what the config builds (heads × head_dim, intermediate_size, hidden_size)",
            explanation: "q_proj has num_attention_heads × head_dim rows, k_proj and v_proj num_key_value_heads × \
head_dim, o_proj takes num_attention_heads × head_dim inputs, q_norm/k_norm have head_dim entries, the MLP's \
gate/up projections intermediate_size rows, and every norm hidden_size entries (EAGLE-3's first layer takes \
2 × hidden_size inputs). A different shape fails vLLM's weight loader (\"Attempted to load weight (...) into \
parameter (...)\", or a QKV shard that does not fit) and transformers' from_pretrained (size mismatch). The \
config's sizes are wrong for these weights, or the weights belong to another drafter.",
            source: "vllm-project/vllm:vllm/model_executor/model_loader/weight_utils.py@0a1ee72ed53f07ca8e57e5e82fdbd89734b39026, @v0.26.0 (default_weight_loader); z-lab/dflash:dflash/model.py@10129599dffb338ff38cfd235a53ca6d3667b4dd (Qwen3DFlashAttention, Qwen3MLP); Luce-Org/lucebox-hub issue 195 (k_norm shape[0]=128 expected 256)",
        },
        WeightsCode::VocabRows => &CodeInfo {
            severity: Severity::Error,
            summary: "embed_tokens rows differ from vocab_size, or lm_head rows from draft_vocab_size",
            explanation: "A drafter that ships its own `embed_tokens.weight` must have vocab_size rows, and its \
`lm_head.weight` draft_vocab_size rows (vocab_size when there is no draft_vocab_size): vLLM builds both from \
the config and its loader refuses another shape. A mismatch usually means the config's vocabulary fields \
belong to another target.",
            source: "vllm-project/vllm:vllm/model_executor/models/qwen3_dflash.py@036a00d1f5d00d449d02dce9babdd15a5b4d06c9 (VocabParallelEmbedding, ParallelLMHead); vllm-project/vllm:vllm/model_executor/models/llama_eagle3.py@00bd1493b3e82d6c13c68ee8a0e1c5a96707e190",
        },
        WeightsCode::D2tMissing => &CodeInfo {
            severity: Severity::Error,
            summary: "draft_vocab_size differs from the target vocabulary and the weights have no d2t",
            explanation: "A drafter with a reduced vocabulary predicts draft ids that the `d2t` tensor (draft to \
target offsets) maps to target ids. vLLM allocates `draft_id_to_target_id` as zeros and keeps them when the \
checkpoint has no `d2t`: every draft id is read as the same-numbered target id and acceptance collapses, with \
no error. Ship the d2t tensor the drafter was trained with, or set draft_vocab_size to the target vocabulary.",
            source: "NVIDIA-NeMo/Automodel issue 2447; vllm-project/vllm:vllm/model_executor/models/llama_eagle3.py@00bd1493b3e82d6c13c68ee8a0e1c5a96707e190 (draft_id_to_target_id = zeros)",
        },
        WeightsCode::D2tLength => &CodeInfo {
            severity: Severity::Error,
            summary: "the d2t tensor's length differs from draft_vocab_size",
            explanation: "`d2t` holds one offset per draft id: shape [draft_vocab_size]. vLLM loads it into a \
parameter of that shape, so another length fails to load.",
            source: "vllm-project/vllm:vllm/model_executor/models/llama_eagle3.py@00bd1493b3e82d6c13c68ee8a0e1c5a96707e190 (draft_id_to_target_id); sgl-project/SpecForge validate_vocab_mapping_consistency",
        },
        WeightsCode::T2dLength => &CodeInfo {
            severity: Severity::Warning,
            summary: "the t2d tensor's length differs from the target vocabulary",
            explanation: "`t2d` marks, per target id, whether it is in the draft vocabulary: shape [target \
vocab_size]. vLLM and SGLang skip it at load, so a wrong length breaks nothing directly, but it says the \
mapping was built for another vocabulary (and then `d2t` probably was too).",
            source: "sgl-project/SpecForge validate_vocab_mapping_consistency; vllm-project/vllm:vllm/model_executor/models/llama_eagle3.py@00bd1493b3e82d6c13c68ee8a0e1c5a96707e190 (t2d skipped)",
        },
        WeightsCode::ForbiddenTensor => &CodeInfo {
            severity: Severity::Error,
            summary: "a tensor the engine's loader refuses (mask_hidden in a DFlash drafter)",
            explanation: "vLLM's DFlash loader asserts that no tensor is named `mask_hidden`: DFlash embeds masked \
slots through `mask_token_id` (optionally a separate `mask_embedding.pt`), and a `mask_hidden` weight means a \
checkpoint of another method (EAGLE-3 parallel drafting). The load fails. Remove the tensor or use the right \
method.",
            source: "vllm-project/vllm:vllm/model_executor/models/qwen3_dflash.py@036a00d1f5d00d449d02dce9babdd15a5b4d06c9 (load_weights: assert \"mask_hidden\" not in name)",
        },
        WeightsCode::UnexpectedTensor => &CodeInfo {
            severity: Severity::Error,
            summary: "a tensor the drafter's model has no parameter for",
            explanation: "vLLM's AutoWeightsLoader raises \"There is no module or parameter named ...\" for a tensor \
that matches no parameter of the drafter it built from the config (after the accepted aliases `midlayer.`, \
`encoder.fc.`, `encoder.output_norm_enc.`). transformers would ignore it with a warning. Common causes: \
attention biases without `attention_bias: true`, a `d2t` in a DFlash drafter whose vocabulary equals the \
target's (vLLM then has no `draft_id_to_target_id`), the weights of another architecture.",
            source: "vllm-project/vllm:vllm/model_executor/models/utils.py@d30d0c133c3f47a6436788f82398b21eb23df8c0 (AutoWeightsLoader._load_module); vllm-project/vllm:vllm/model_executor/models/qwen3_dflash.py@036a00d1f5d00d449d02dce9babdd15a5b4d06c9",
        },
        WeightsCode::IgnoredTensor => &CodeInfo {
            severity: Severity::Info,
            summary: "a tensor the loader skips (unused, or for a mode not configured)",
            explanation: "Some tensors are skipped on purpose: EAGLE-3's `mask_hidden` unless vLLM runs parallel \
drafting (it logs a warning), a DFlash `mask_embedding` tensor (vLLM reads a separate mask embedding only from \
`mask_embedding.pt`), rotary `inv_freq` buffers. They cost download and memory only; a mask embedding meant to \
be used must ship as `mask_embedding.pt`.",
            source: "vllm-project/vllm:vllm/model_executor/models/llama_eagle3.py@00bd1493b3e82d6c13c68ee8a0e1c5a96707e190 (load_weights: mask_hidden skipped); vllm-project/vllm:vllm/model_executor/models/qwen3_dflash.py@036a00d1f5d00d449d02dce9babdd15a5b4d06c9 (mask_embedding mapped to None without mask_embedding.pt)",
        },
        WeightsCode::MissingTensor => &CodeInfo {
            severity: Severity::Error,
            summary: "a tensor the drafter needs is in no shard",
            explanation: "Every projection, norm and the fc of the drafter must be in the weights. vLLM's DFlash \
and EAGLE-3 loaders do not check that all parameters were loaded, and transformers initialises missing ones \
randomly (with a warning): the drafter runs with garbage weights and acceptance collapses. A reduced draft \
vocabulary also needs its own `lm_head`.",
            source: "vllm-project/vllm:vllm/model_executor/models/qwen3_dflash.py@036a00d1f5d00d449d02dce9babdd15a5b4d06c9 (load_weights returns nothing to check); z-lab/dflash:dflash/model.py@10129599dffb338ff38cfd235a53ca6d3667b4dd",
        },
        WeightsCode::ModelPrefix => &CodeInfo {
            severity: Severity::Error,
            summary: "tensor names carry a `model.` prefix: vLLM fails to load them",
            explanation: "transformers strips a leading `model.` (the base-model prefix) when loading, so the \
reference code reads these names. vLLM's DFlash and EAGLE-3 loaders instead prepend `model.` to every name except \
`lm_head` (and `d2t`), giving `model.model.layers...`, and hand the result to AutoWeightsLoader, whose _load_module \
raises (\"There is no module or parameter named ...\") for a name that matches no parameter: the drafter does not \
load in vLLM. An error. Save the state dict without the prefix (the published drafters have none).",
            source: "vllm-project/vllm:vllm/model_executor/models/qwen3_dflash.py@d952bda805e64a425276f59161a915d31abbfd13 (DFlashQwen3ForCausalLM.load_weights: name = \"model.\" + name, then AutoWeightsLoader); vllm-project/vllm:vllm/model_executor/models/utils.py@d30d0c133c3f47a6436788f82398b21eb23df8c0 (AutoWeightsLoader._load_module raises for an unmatched name)",
        },
        WeightsCode::ShardMissing => &CodeInfo {
            severity: Severity::Error,
            summary: "the index names a shard that does not exist",
            explanation: "transformers, vLLM and huggingface_hub open every file that \
`model.safetensors.index.json` names in `weight_map`; a missing one fails the load (or the download). \
Download the missing shard, or regenerate the index.",
            source: "vllm-project/vllm:vllm/model_executor/model_loader/weight_utils.py@v0.26.0 (filter_duplicate_safetensors_files: FileNotFoundError for weight files the index names and the folder lacks); huggingface/transformers:src/transformers/utils/hub.py@00511f2b97756629c5668aec5ad4371cbfd9c466 (get_checkpoint_shard_files: every shard in weight_map); huggingface/huggingface_hub:src/huggingface_hub/hf_api.py@1fb0107bb68bae38c8f55cc6055dad11cbcb9e83 (get_safetensors_metadata)",
        },
        WeightsCode::DuplicateTensor => &CodeInfo {
            severity: Severity::Warning,
            summary: "a tensor appears in two shards (or twice through an alias)",
            explanation: "Loaders read every shard and assign tensors in file order, so the last copy wins and \
which one that is depends on the loader. Keep each tensor in one shard.",
            source: "vllm-project/vllm:vllm/model_executor/models/utils.py@d30d0c133c3f47a6436788f82398b21eb23df8c0 (each weight is loaded as it comes)",
        },
        WeightsCode::QuantizedUndeclared => &CodeInfo {
            severity: Severity::Warning,
            summary: "quantized tensors (packed integers, FP8, quantization scales) in a drafter whose config has no quantization_config",
            explanation: "Engines pick a drafter's linear layers from its config.json: without `quantization_config` \
they build unquantized layers, then meet `weight_packed` / `qweight` / `weight_scale` names they do not know, or \
integer / FP8 data where they expect floating-point weights. Nothing in the config tells lint the drafter is \
quantized (quantized-block-drafter and the launch rules read quantization_config), so the checks that depend on it \
cannot run. Write the quantization_config the quantizer produced. A warning: the tensors, not the config, are \
what the drafter was saved as.",
            source: "sgl-project/sglang#39087 (the W4A16 DFlash2 drafter: I32 packed tensors with a compressed-tensors quantization_config); vllm-project/vllm#53116 (a draft's quant config must reach its layers)",
        },
        WeightsCode::QuantizationUnmatched => &CodeInfo {
            severity: Severity::Warning,
            summary: "the config declares quantization_config but every linear weight is floating-point",
            explanation: "A quantization_config makes the engine build quantized layers that expect packed weights and \
scales; a drafter whose tensors are all BF16/F16/F32 (a config copied from the target, or a dequantized export) then \
fails to load or is quantized again on load. Remove the quantization_config, or publish the quantized tensors. A \
warning (online-quantization configs legitimately keep float tensors).",
            source: "vllm-project/vllm#53116 (the draft model's quant config decides its layers); sgl-project/sglang#28196 (a draft's own quantization_config overrides the inherited one)",
        },
        WeightsCode::IndexMismatch => &CodeInfo {
            severity: Severity::Warning,
            summary: "the index's weight_map disagrees with the shards' contents",
            explanation: "`weight_map` names, for each tensor, the shard that holds it. A tensor in a shard but not \
in the map, or mapped to a shard that does not hold it, means the index and the shards come from different \
saves: transformers reports keys from the map, loaders read the shards.",
            source: "huggingface/transformers:src/transformers/utils/hub.py@00511f2b97756629c5668aec5ad4371cbfd9c466 (all_checkpoint_keys come from weight_map; the shards are read)",
        },
    }
}

/// Every header of one drafter's weights.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WeightsHeaders {
    /// The directory, or `ORG/NAME@SHA`.
    pub source: String,
    /// The index, when the weights are sharded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Index>,
    /// One per file read, in the index's order.
    pub shards: Vec<Shard>,
    /// Shards the index names that do not exist.
    pub missing_shards: Vec<String>,
    /// For a Hub source: requests sent and body bytes received for the headers (0 when cached).
    pub requests: usize,
    pub body_bytes: u64,
}

/// Totals over every tensor.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub tensors: usize,
    pub parameters: u64,
    /// Bytes of tensor data.
    pub bytes: u64,
    /// Bytes of the files (data, headers and length prefixes).
    pub file_bytes: u64,
    /// `(dtype, parameters, bytes)`, by dtype name.
    pub by_dtype: Vec<(String, u64, u64)>,
}

impl WeightsHeaders {
    pub fn tensors(&self) -> impl Iterator<Item = &Tensor> {
        self.shards.iter().flat_map(|s| s.tensors.iter())
    }

    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        let mut by: std::collections::BTreeMap<&str, (u64, u64)> = Default::default();
        // Saturating: each shard is checked on its own, and sizes a Hub server claims for many
        // shards (or sub-byte dtypes, two parameters a byte) can add up past u64.
        for x in self.tensors() {
            t.tensors += 1;
            t.parameters = t.parameters.saturating_add(x.parameters());
            t.bytes = t.bytes.saturating_add(x.bytes());
            let e = by.entry(x.dtype.as_str()).or_default();
            e.0 = e.0.saturating_add(x.parameters());
            e.1 = e.1.saturating_add(x.bytes());
        }
        t.file_bytes = self
            .shards
            .iter()
            .fold(0u64, |sum, s| sum.saturating_add(s.file_size));
        t.by_dtype = by
            .into_iter()
            .map(|(d, (p, b))| (d.to_string(), p, b))
            .collect();
        t
    }

    /// How diagnostics name a file: `shard`'s display, or the index's.
    pub(crate) fn display_of(&self, shard: &str) -> String {
        self.shards
            .iter()
            .find(|s| s.file == shard)
            .map(|s| s.display.clone())
            .unwrap_or_else(|| match &self.index {
                Some(i) => i.display.clone(),
                None => shard.to_string(),
            })
    }
}

/// The directory holding the weights for `path` (a drafter directory or its config file).
fn weights_dir(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    }
}

fn exists(path: &Path) -> Result<bool> {
    match std::fs::metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::symlink_metadata(path).is_ok() {
                Err(
                    Error::new(format!("`{}` is a broken symbolic link", path.display()))
                        .with_hint("the download is incomplete: download the file again"),
                )
            } else {
                Ok(false)
            }
        }
        Err(e) => Err(config::io_error(path, &e)),
    }
}

/// Reads the headers beside a local config: `model.safetensors`, else every shard of
/// `model.safetensors.index.json`; `Ok(None)` when there is neither.
pub fn read_local(path: &Path) -> Result<Option<WeightsHeaders>> {
    let dir = weights_dir(path);
    let source = dir.display().to_string();
    let single = dir.join(index::SINGLE_FILE);
    if exists(&single)? {
        let shard = header::read_file(&single, index::SINGLE_FILE)?;
        return Ok(Some(WeightsHeaders {
            source,
            index: None,
            shards: vec![shard],
            missing_shards: vec![],
            requests: 0,
            body_bytes: 0,
        }));
    }
    let index_path = dir.join(index::INDEX_FILE);
    if !exists(&index_path)? {
        return Ok(None);
    }
    let bytes = config::read_capped(&index_path, index::MAX_INDEX_BYTES)?;
    let index = index::parse(&index_path.display().to_string(), &bytes)?;
    let mut shards = Vec::new();
    let mut missing_shards = Vec::new();
    for name in &index.shards {
        let p = name.split('/').fold(dir.clone(), |p, c| p.join(c));
        if exists(&p)? {
            shards.push(header::read_file(&p, name)?);
        } else {
            missing_shards.push(name.clone());
        }
    }
    Ok(Some(WeightsHeaders {
        source,
        index: Some(index),
        shards,
        missing_shards,
        requests: 0,
        body_bytes: 0,
    }))
}

/// A drafter named by a local path, as `dflash-check weights` takes it: a directory, its config
/// file, or one `.safetensors` file; with the config beside it when there is one.
pub fn read_path(path: &Path) -> Result<(WeightsHeaders, Option<ConfigFile>)> {
    let is_safetensors = path.is_file()
        && path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("safetensors"));
    let dir = weights_dir(path);
    let headers = if is_safetensors {
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        WeightsHeaders {
            source: path.display().to_string(),
            index: None,
            shards: vec![header::read_file(path, &file)?],
            missing_shards: vec![],
            requests: 0,
            body_bytes: 0,
        }
    } else {
        read_local(path)?.ok_or_else(|| {
            Error::new(format!(
                "no `model.safetensors` or `model.safetensors.index.json` in `{}`",
                dir.display()
            ))
            .with_hint(
                "pass the directory that holds the drafter's weights, or a .safetensors file",
            )
        })?
    };
    let config_path = if path.is_file() && !is_safetensors {
        path.to_path_buf()
    } else {
        dir.join("config.json")
    };
    let config = if config_path.is_file() {
        Some(config::load(&config_path)?)
    } else {
        None
    };
    Ok((headers, config))
}

/// Tensors over this many bytes are not read whole: a `d2t` of a 256k-token draft vocabulary
/// is 2 MB of int64, so anything near the cap is not a token map.
pub const MAX_TENSOR_READ_BYTES: u64 = 64 * 1024 * 1024;

/// The data of one tensor of the local weights beside `path` (as [`read_local`] found them):
/// one seek to the offsets its header gives and one read of exactly its bytes, never the rest
/// of the shard. `Ok(None)` when no tensor has that name.
pub fn read_local_tensor(
    path: &Path,
    headers: &WeightsHeaders,
    name: &str,
) -> Result<Option<(Tensor, Vec<u8>)>> {
    use std::io::{Read, Seek, SeekFrom};
    let Some(shard) = headers
        .shards
        .iter()
        .find(|s| s.tensors.iter().any(|t| t.name == name))
    else {
        return Ok(None);
    };
    let tensor = shard
        .tensors
        .iter()
        .find(|t| t.name == name)
        .cloned()
        .expect("the shard was chosen for holding it");
    if tensor.bytes() > MAX_TENSOR_READ_BYTES {
        return Err(Error::new(format!(
            "`{}`: tensor `{name}` is {} bytes, over the {} MiB read for one tensor",
            shard.display,
            tensor.bytes(),
            MAX_TENSOR_READ_BYTES / (1024 * 1024)
        ))
        .with_hint("a token map this large is not a d2t: check the file"));
    }
    let file = shard
        .file
        .split('/')
        .fold(weights_dir(path), |p, c| p.join(c));
    let (mut f, meta) = config::open_regular(&file)?;
    let start = header::LENGTH_BYTES + shard.header_bytes + tensor.data_offsets[0];
    if meta.len() != shard.file_size {
        return Err(Error::new(format!(
            "`{}` changed size while it was read ({} bytes, then {})",
            shard.display,
            shard.file_size,
            meta.len()
        ))
        .with_hint("run again once nothing is writing to the weights"));
    }
    f.seek(SeekFrom::Start(start))
        .map_err(|e| config::io_error(&file, &e))?;
    let mut bytes = Vec::with_capacity(tensor.bytes() as usize);
    f.take(tensor.bytes())
        .read_to_end(&mut bytes)
        .map_err(|e| config::io_error(&file, &e))?;
    if bytes.len() as u64 != tensor.bytes() {
        return Err(Error::new(format!(
            "`{}`: tensor `{name}` ends past the end of the file (read {} of {} bytes)",
            shard.display,
            bytes.len(),
            tensor.bytes()
        ))
        .with_hint("the file is truncated: download it again"));
    }
    Ok(Some((tensor, bytes)))
}

/// A drafter on the Hub: its config and weights headers at one commit.
#[derive(Debug, Clone)]
pub struct HubDrafter {
    pub repo: String,
    /// As asked (`main` by default).
    pub revision: String,
    /// The commit everything was read at.
    pub sha: String,
    pub config: ConfigFile,
    /// Where the config came from (`hub`, `pinned`, `cache`).
    pub freshness: Freshness,
    pub headers: Option<WeightsHeaders>,
}

/// Reads `config.json` of `repo` (resolving its revision to a sha), then the weights headers
/// at that sha with [`read_hub_headers`].
pub fn read_hub(settings: &HubSettings, repo: &RepoRef) -> Result<HubDrafter> {
    let file = hub::fetch_file(settings, repo, "config.json")?;
    let config = config::parse(&file.path, &file.bytes)?;
    let headers = read_hub_headers(settings, &file.repo, &file.sha)?;
    Ok(HubDrafter {
        repo: file.repo,
        revision: file.revision,
        sha: file.sha,
        config,
        freshness: file.freshness,
        headers,
    })
}

/// Reads the weights headers of `repo` at commit `sha` with range requests (cached per sha):
/// `model.safetensors`, else every shard of `model.safetensors.index.json`; `Ok(None)` when
/// there is neither.
pub fn read_hub_headers(
    settings: &HubSettings,
    repo: &str,
    sha: &str,
) -> Result<Option<WeightsHeaders>> {
    let source = format!("{repo}@{sha}");
    let display = |file: &str| format!("{repo}@{sha}/{file}");
    let mut requests = 0;
    let mut body_bytes = 0;
    let mut read = |file: &str| -> Result<Option<Shard>> {
        let h = match hub::fetch_safetensors_header(settings, repo, sha, file)? {
            hub::HeaderAnswer::Found(h) => h,
            hub::HeaderAnswer::Missing { requests: r } => {
                requests += r;
                return Ok(None);
            }
        };
        requests += h.requests;
        body_bytes += h.body_bytes;
        header::parse_prefix(&display(file), file, &h.prefix, h.file_size).map(Some)
    };
    if let Some(shard) = read(index::SINGLE_FILE)? {
        return Ok(Some(WeightsHeaders {
            source,
            index: None,
            shards: vec![shard],
            missing_shards: vec![],
            requests,
            body_bytes,
        }));
    }
    let at_sha = RepoRef {
        repo: repo.to_string(),
        revision: Some(sha.to_string()),
    };
    let Some(index_file) = hub::fetch_optional_file(settings, &at_sha, index::INDEX_FILE)? else {
        return Ok(None);
    };
    let index = index::parse(&display(index::INDEX_FILE), &index_file.bytes)?;
    let mut shards = Vec::new();
    let mut missing_shards = Vec::new();
    for name in &index.shards {
        match read(name)? {
            Some(s) => shards.push(s),
            None => missing_shards.push(name.clone()),
        }
    }
    Ok(Some(WeightsHeaders {
        source,
        index: Some(index),
        shards,
        missing_shards,
        requests,
        body_bytes,
    }))
}

/// Where a Hub drafter was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HubOrigin {
    pub repo: String,
    pub revision: String,
    pub sha: String,
    /// `hub`, `pinned` or `cache`: where the config came from.
    pub freshness: String,
}

/// Everything `dflash-check weights` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightsReport {
    pub headers: WeightsHeaders,
    pub hub: Option<HubOrigin>,
    /// The config the tensors were checked against (none: table only).
    pub config: Option<String>,
    /// The drafter family, when the config names a known one.
    pub family: Option<String>,
    /// Where the target facts came from, if any.
    pub target: Option<String>,
    pub diagnostics: Vec<crate::diagnostic::Diagnostic>,
}

impl WeightsReport {
    pub fn summary(&self) -> crate::diagnostic::Summary {
        crate::diagnostic::Summary::of(&self.diagnostics)
    }

    /// Whether the report fails the gate: any error, or any warning with `deny_warnings`.
    pub fn fails(&self, deny_warnings: bool) -> bool {
        self.summary().fails(deny_warnings)
    }
}
