#!/usr/bin/env python3
"""Writes the MLX test checkpoints of tests/launch_mlx.rs (stdlib only; run from this folder).

Each folder is a tiny Qwen3.5 checkpoint (config.json + one model.safetensors of zeros), written
here in the safetensors format (8-byte little-endian header length, JSON header, data) with the
tensor names and layouts of the checkpoints MTPLX#306 and mlx-lm#1442 describe:
- qwen3.5-mlx-mtp: MLX's layout (conv1d stored (C, K, 1), MLX `quantization` in the config) with
  the MTP head's `mtp.*` tensors kept: mlx-lm 0.30.7-0.31.3 shift its trunk norms twice;
- qwen3.5-mlx: the same conversion without `mtp.*` tensors (and no MTP declared): clean;
- qwen3.5-mlx-mtp-declared: that conversion declaring an MTP layer it does not hold (mlx-lm builds
  no MTP head, so only engines that do fail on it);
- qwen3.5-hf-mtp: a Hugging Face export (conv1d stored (C, 1, K)) with its MTP head: mlx-lm
  shifts it once, correctly: clean.
"""

import json
import os
import struct

HIDDEN = 64
GROUP = 64
BITS = 4
CHANNELS = 8
KERNEL = 4


def text_config(mtp_layers):
    return {
        "model_type": "qwen3_5_text",
        "hidden_size": HIDDEN,
        "intermediate_size": 2 * HIDDEN,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 8,
        "vocab_size": 64,
        "layer_types": ["linear_attention"],
        "full_attention_interval": 4,
        "linear_conv_kernel_dim": KERNEL,
        "mtp_num_hidden_layers": mtp_layers,
        "tie_word_embeddings": False,
    }


def config(mtp_layers, mlx):
    c = {
        "architectures": ["Qwen3_5ForConditionalGeneration"],
        "model_type": "qwen3_5",
        "text_config": text_config(mtp_layers),
    }
    if mlx:
        c["quantization"] = {"group_size": GROUP, "bits": BITS, "mode": "affine"}
    return c


def write(folder, cfg, tensors):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    header, offset = {}, 0
    for name, shape, dtype in tensors:
        size = 4 if dtype == "U32" else 2
        for d in shape:
            size *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.write(bytes(offset))


def linear(name, out, inp, mlx):
    """A linear (or embedding) weight: BF16, or as MLX's affine quantization stores it (the
    weight packed in U32 words, a scale and a bias per group)."""
    base = name[: -len(".weight")]
    if not mlx:
        return [(name, [out, inp], "BF16")]
    return [
        (name, [out, inp * BITS // 32], "U32"),
        (f"{base}.scales", [out, inp // GROUP], "BF16"),
        (f"{base}.biases", [out, inp // GROUP], "BF16"),
    ]


def trunk(prefix, conv_shape, mlx):
    layer = f"{prefix}.layers.0"
    return (
        linear(f"{prefix}.embed_tokens.weight", 64, HIDDEN, mlx)
        + [
            (f"{layer}.input_layernorm.weight", [HIDDEN], "BF16"),
            (f"{layer}.post_attention_layernorm.weight", [HIDDEN], "BF16"),
            (f"{layer}.linear_attn.conv1d.weight", conv_shape, "BF16"),
            (f"{prefix}.norm.weight", [HIDDEN], "BF16"),
        ]
        + linear(f"{layer}.mlp.down_proj.weight", HIDDEN, 2 * HIDDEN, mlx)
    )


def mtp(prefix, mlx):
    return (
        linear(f"{prefix}.fc.weight", HIDDEN, 2 * HIDDEN, mlx)
        + [(f"{prefix}.layers.0.input_layernorm.weight", [HIDDEN], "BF16")]
        + linear(f"{prefix}.layers.0.self_attn.q_proj.weight", HIDDEN, HIDDEN, mlx)
        + [(f"{prefix}.norm.weight", [HIDDEN], "BF16")]
    )


# mlx-lm saves the language model under `language_model.model.`, the head as it found it.
write(
    "qwen3.5-mlx-mtp",
    config(1, mlx=True),
    trunk("language_model.model", [CHANNELS, KERNEL, 1], True) + mtp("language_model.mtp", True),
)
write(
    "qwen3.5-mlx",
    config(0, mlx=True),
    trunk("language_model.model", [CHANNELS, KERNEL, 1], True),
)
# An MLX quant that declares its MTP head but was saved without it (omlx#1147's oQ quants).
write(
    "qwen3.5-mlx-mtp-declared",
    config(1, mlx=True),
    trunk("language_model.model", [CHANNELS, KERNEL, 1], True),
)
# Hugging Face's Qwen3.5 names: `model.language_model.` and a top-level `mtp.`.
write(
    "qwen3.5-hf-mtp",
    config(1, mlx=False),
    trunk("model.language_model", [CHANNELS, 1, KERNEL], False) + mtp("mtp", False),
)
