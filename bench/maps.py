#!/usr/bin/env python3
"""Writes the inputs of bench/maps.sh: two EAGLE-3 heads of a 150k-vocabulary target, each one
model.safetensors with a real header and real d2t / t2d data, every other tensor a hole.

    python bench/maps.py OUT_DIR

OUT_DIR/clean/             a Qwen3-8B-size EAGLE-3 head (hidden 4096, draft vocabulary 32,000,
                           target vocabulary 151,936): d2t int64 [32000] (250 KiB) and t2d bool
                           [151936] (148 KiB) built as SpecForge builds them from 32,000 distinct
                           target ids (seeded, sorted), so every value rule walks the whole map
                           and finds nothing
OUT_DIR/ids-not-offsets/   the same head whose d2t holds the target ids instead of offsets
                           (weights-d2t-values: the ids i + d2t[i] pass the vocabulary)

The shapes are those of a Qwen3-8B EAGLE-3 head (one Llama decoder layer over 2 × hidden, fc over
3 target layers, lm_head over the draft vocabulary); the data of the BF16 tensors is a hole
(created with truncate(), as tests/weights/generate.py's realistic drafter), about 550 MB of
apparent size and a few hundred kilobytes on disk. The header is laid out as the Rust serializer
lays it out and each file is opened with safetensors.safe_open, whose d2t and t2d must read back
equal to what was written.
"""

import json
import os
import sys

import numpy as np
from safetensors import safe_open

H, HEADS, KV, HD, I = 4096, 32, 8, 128, 12288
VOCAB, DRAFT_VOCAB = 151_936, 32_000

CONFIG = {
    "architectures": ["LlamaForCausalLMEagle3"],
    "model_type": "llama",
    "hidden_size": H,
    "intermediate_size": I,
    "num_attention_heads": HEADS,
    "num_key_value_heads": KV,
    "head_dim": HD,
    "num_hidden_layers": 1,
    "rms_norm_eps": 1e-06,
    "tie_word_embeddings": False,
    "vocab_size": VOCAB,
    "draft_vocab_size": DRAFT_VOCAB,
    "max_position_embeddings": 40960,
}

BF16 = {
    "midlayer.self_attn.q_proj.weight": [HEADS * HD, 2 * H],
    "midlayer.self_attn.k_proj.weight": [KV * HD, 2 * H],
    "midlayer.self_attn.v_proj.weight": [KV * HD, 2 * H],
    "midlayer.self_attn.o_proj.weight": [H, HEADS * HD],
    "midlayer.input_layernorm.weight": [H],
    "midlayer.hidden_norm.weight": [H],
    "midlayer.post_attention_layernorm.weight": [H],
    "midlayer.mlp.gate_proj.weight": [I, H],
    "midlayer.mlp.up_proj.weight": [I, H],
    "midlayer.mlp.down_proj.weight": [H, I],
    "norm.weight": [H],
    "fc.weight": [H, 3 * H],
    "lm_head.weight": [DRAFT_VOCAB, H],
}


def write(d, d2t, t2d):
    """model.safetensors with the BF16 tensors as a hole and d2t / t2d written."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    entries = [(n, "BF16", s, int(np.prod(s)) * 2, None) for n, s in BF16.items()]
    entries.append(("d2t", "I64", [DRAFT_VOCAB], d2t.nbytes, d2t.tobytes()))
    entries.append(("t2d", "BOOL", [VOCAB], t2d.nbytes, t2d.tobytes()))
    # The serializer's order: by dtype alignment (largest first), then name.
    align = {"I64": 8, "BF16": 2, "BOOL": 1}
    entries.sort(key=lambda e: (-align[e[1]], e[0]))
    header = {"__metadata__": {"format": "pt"}}
    offset, data = 0, []
    for name, dtype, shape, size, raw in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        if raw is not None:
            data.append((offset, raw))
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    path = os.path.join(d, "model.safetensors")
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        f.truncate(8 + len(text) + offset)
        for at, raw in data:
            f.seek(8 + len(text) + at)
            f.write(raw)
    with safe_open(path, "np") as f:
        assert np.array_equal(f.get_tensor("d2t"), d2t)
        assert np.array_equal(f.get_tensor("t2d"), t2d)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(42)
    hot = np.sort(rng.choice(VOCAB, DRAFT_VOCAB, replace=False)).astype(np.int64)
    t2d = np.zeros(VOCAB, bool)
    t2d[hot] = True
    write(os.path.join(out, "clean"), hot - np.arange(DRAFT_VOCAB), t2d)
    write(os.path.join(out, "ids-not-offsets"), hot.copy(), t2d)
    print(f"maps.py: wrote {out}/clean and {out}/ids-not-offsets")


if __name__ == "__main__":
    main()
