#!/usr/bin/env python3
"""Writes the safetensors fixtures of tests/weights.rs with the real Python `safetensors` package.

    python tests/weights/generate.py OUT_DIR      (scripts/weights-setup.sh runs it into target/)

OUT_DIR/
  target/config.json              the tiny target (8 layers, hidden 32, vocab 128)
  target-wide/config.json         the same with hidden 48 (for the fc-vs-target case)
  cases/<name>/                   one small synthetic drafter per finding (config.json and the
                                  weights, single file or shards + index), written by
                                  safetensors.numpy.save_file; every clean-* case must give no finding
  hostile/<name>/                 a clean config.json beside a broken model.safetensors (made by
                                  mutating a real file's bytes) or a hostile index
  hub/<name>/                     drafters the in-process Hub serves (tests/weights.rs)
  realistic/qwen3-8b-dflash-b16/  the real Qwen3-8B DFlash b16 shapes in BF16 (about 2 GB of
                                  tensors) in 3 sparse shards: the header is real, the data is a
                                  hole; opened with safetensors.safe_open to prove the files valid
  realistic/qwen3-8b/config.json  its target
  manifest.json                   what was written

Tensor names are the real ones: DFlash (z-lab/dflash dflash/model.py, vLLM qwen3_dflash.py),
EAGLE-3 (vLLM llama_eagle3.py, SafeAILab cnets.py `midlayer.*`), DFlash2 (z-lab/dflash test
fixture dflash2-safetensors-header.json). Small dims keep every real file a few kilobytes.
"""

import copy
import json
import os
import shutil
import sys

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

H, HEADS, KV, HD, I, VOCAB, LAYERS = 32, 4, 2, 8, 64, 128, 2
IDS = [1, 3, 5]
DRAFT_VOCAB = 64

TARGET = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "hidden_size": H,
    "num_hidden_layers": 8,
    "vocab_size": VOCAB,
    "num_attention_heads": HEADS,
    "num_key_value_heads": KV,
    "head_dim": HD,
    "intermediate_size": 128,
}

DFLASH = {
    "architectures": ["DFlashDraftModel"],
    "model_type": "qwen3",
    "attention_bias": False,
    "block_size": 16,
    "dflash_config": {"mask_token_id": VOCAB - 1, "target_layer_ids": IDS},
    "head_dim": HD,
    "hidden_act": "silu",
    "hidden_size": H,
    "intermediate_size": I,
    "layer_types": ["full_attention"] * LAYERS,
    "max_window_layers": LAYERS,
    "num_attention_heads": HEADS,
    "num_hidden_layers": LAYERS,
    "num_key_value_heads": KV,
    "num_target_layers": 8,
    "rms_norm_eps": 1e-06,
    "rope_theta": 1000000,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "use_sliding_window": False,
    "vocab_size": VOCAB,
}

EAGLE3 = {
    "architectures": ["LlamaForCausalLMEagle3"],
    "model_type": "llama",
    "hidden_size": H,
    "intermediate_size": I,
    "num_attention_heads": HEADS,
    "num_key_value_heads": KV,
    "num_hidden_layers": 1,
    "rms_norm_eps": 1e-05,
    "tie_word_embeddings": False,
    "vocab_size": VOCAB,
    "draft_vocab_size": DRAFT_VOCAB,
}

F = np.float16


def z(*shape, dtype=F):
    # Deterministic, non-zero data so files differ per shape.
    n = int(np.prod(shape)) if shape else 1
    return (np.arange(n) % 7).astype(dtype).reshape(shape)


def dflash_layer(i, hd=HD, inter=I, heads=HEADS, kv=KV, h=H):
    p = f"layers.{i}."
    return {
        p + "self_attn.q_proj.weight": z(heads * hd, h),
        p + "self_attn.k_proj.weight": z(kv * hd, h),
        p + "self_attn.v_proj.weight": z(kv * hd, h),
        p + "self_attn.o_proj.weight": z(h, heads * hd),
        p + "self_attn.q_norm.weight": z(hd),
        p + "self_attn.k_norm.weight": z(hd),
        p + "input_layernorm.weight": z(h),
        p + "post_attention_layernorm.weight": z(h),
        p + "mlp.gate_proj.weight": z(inter, h),
        p + "mlp.up_proj.weight": z(inter, h),
        p + "mlp.down_proj.weight": z(h, inter),
    }


def dflash_tensors(layers=LAYERS, ids=len(IDS), **kw):
    t = {}
    for i in range(layers):
        t.update(dflash_layer(i, **kw))
    t["fc.weight"] = z(H, ids * H)
    t["hidden_norm.weight"] = z(H)
    t["norm.weight"] = z(H)
    return t


def eagle3_tensors(fc_in=3 * H):
    p = "midlayer."
    return {
        p + "self_attn.q_proj.weight": z(HEADS * HD, 2 * H),
        p + "self_attn.k_proj.weight": z(KV * HD, 2 * H),
        p + "self_attn.v_proj.weight": z(KV * HD, 2 * H),
        p + "self_attn.o_proj.weight": z(H, HEADS * HD),
        p + "input_layernorm.weight": z(H),
        p + "hidden_norm.weight": z(H),
        p + "post_attention_layernorm.weight": z(H),
        p + "mlp.gate_proj.weight": z(I, H),
        p + "mlp.up_proj.weight": z(I, H),
        p + "mlp.down_proj.weight": z(H, I),
        "norm.weight": z(H),
        "fc.weight": z(H, fc_in),
        "lm_head.weight": z(DRAFT_VOCAB, H),
        **maps(HOT),
    }


# The draft vocabulary's target ids, as a trainer picks them (the most frequent tokens, sorted):
# 64 distinct ids below VOCAB, not the first 64.
HOT = np.array([2 * i + (1 if i % 4 == 0 else 0) for i in range(DRAFT_VOCAB)], np.int64)


def maps(hot, vocab=VOCAB):
    """d2t and t2d as SpecForge writes them: d2t[i] = target id − draft id, t2d true at the
    target ids of the draft vocabulary."""
    t2d = np.zeros(vocab, bool)
    t2d[hot] = True
    return {"d2t": (hot - np.arange(len(hot))).astype(np.int64), "t2d": t2d}


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2, sort_keys=True)
        f.write("\n")


def write_single(d, config, tensors):
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "config.json"), config)
    save_file(tensors, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})


def shard_of(name, n):
    """Spreads tensors over n shards the way a sharded save does: by layer, globals first."""
    if name.startswith("layers."):
        return min(int(name.split(".")[1]) + 1, n - 1) if n > 1 else 0
    return 0


def write_sharded(d, config, tensors, n=3, assign=shard_of, index_map=None, drop_files=()):
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "config.json"), config)
    files = [f"model-{k + 1:05d}-of-{n:05d}.safetensors" for k in range(n)]
    parts = [dict() for _ in range(n)]
    weight_map = {}
    for name, t in tensors.items():
        ks = assign(name, n)
        for k in ks if isinstance(ks, (list, tuple)) else [ks]:
            parts[k][name] = t
            weight_map[name] = files[k]
    total = 0
    for k, part in enumerate(parts):
        path = os.path.join(d, files[k])
        save_file(part, path, metadata={"format": "pt"})
        total += sum(v.nbytes for v in part.values())
    if index_map:
        weight_map.update(index_map)
    write_json(
        os.path.join(d, "model.safetensors.index.json"),
        {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))},
    )
    for k in drop_files:
        os.remove(os.path.join(d, files[k]))


def cfg(base, **changes):
    c = copy.deepcopy(base)
    for k, v in changes.items():
        if v is None:
            c.pop(k, None)
        else:
            c[k] = v
    return c


def cases(out):
    c = os.path.join(out, "cases")
    dflash = dflash_tensors()

    # Clean drafters: nothing to report.
    write_single(os.path.join(c, "clean-dflash"), DFLASH, dflash)
    write_sharded(os.path.join(c, "clean-dflash-sharded"), DFLASH, dflash)
    write_single(os.path.join(c, "clean-eagle3"), EAGLE3, eagle3_tensors())
    aliased = {
        ("encoder.fc.weight" if k == "fc.weight" else
         "encoder.output_norm_enc.weight" if k == "hidden_norm.weight" else k): v
        for k, v in dflash.items()
    }
    write_single(os.path.join(c, "clean-dflash-aliases"), DFLASH, aliased)
    v2_conf = cfg(DFLASH, architectures=["DFlash2DraftModel"])
    v2_conf["dflash_config"].update(
        {"conv_kernel_size": 2, "conv_group_size": 8, "selector_rank": 4, "selector_top_k": 4}
    )
    v2 = dict(dflash)
    for i in range(LAYERS):
        for conv in ("attention_conv", "mlp_conv"):
            v2[f"layers.{i}.{conv}.base_kernel"] = z(2, 2, H)
            v2[f"layers.{i}.{conv}.kernel_projection.weight"] = z(2 * 2 * (H // 8), H)
    v2["candidate_selector.predecessor_codebook"] = z(VOCAB, 4)
    v2["candidate_selector.successor_codebook"] = z(VOCAB, 4)
    v2["candidate_selector.hidden_projection.weight"] = z(4, H)
    write_single(os.path.join(c, "clean-dflash2"), v2_conf, v2)

    # weights-fc-width: a 4-id config for weights trained with 3 target layers.
    four = cfg(DFLASH)
    four["dflash_config"]["target_layer_ids"] = [1, 3, 5, 6]
    write_single(os.path.join(c, "fc-width"), four, dflash)
    # EAGLE-3: the config names 3 aux layers, fc was trained with 2.
    write_single(
        os.path.join(c, "fc-width-eagle3"),
        cfg(EAGLE3, eagle_aux_hidden_state_layer_ids=[1, 3, 5]),
        eagle3_tensors(fc_in=2 * H),
    )
    # Fits its config, not the target (run with --target target-wide).
    write_single(os.path.join(c, "fc-width-target"), DFLASH, dflash)

    # weights-layer-count, both ways.
    write_single(os.path.join(c, "layer-count-extra"), DFLASH, dflash_tensors(layers=3))
    write_single(os.path.join(c, "layer-count-missing"), cfg(DFLASH, num_hidden_layers=3,
                 layer_types=["full_attention"] * 3), dflash)

    # weights-shape: head_dim and intermediate_size that the file does not have.
    write_single(os.path.join(c, "shape-head-dim"), cfg(DFLASH, head_dim=16), dflash)
    write_single(os.path.join(c, "shape-intermediate"), cfg(DFLASH, intermediate_size=96), dflash)

    # weights-vocab-rows: embed_tokens against vocab_size, lm_head against draft_vocab_size.
    t = dict(dflash)
    t["embed_tokens.weight"] = z(100, H)
    write_single(os.path.join(c, "vocab-rows-embed"), DFLASH, t)
    t = eagle3_tensors()
    t["lm_head.weight"] = z(100, H)
    write_single(os.path.join(c, "vocab-rows-lm-head"), EAGLE3, t)

    # weights-draft-head-refused (issue 43): a DFlash drafter with its own full-vocabulary
    # lm_head, which vLLM loads and dflash-mlx (oMLX's DFlash loader) refuses.
    t = dict(dflash)
    t["lm_head.weight"] = z(VOCAB, H)
    write_single(os.path.join(c, "dflash-own-lm-head"), DFLASH, t)

    # d2t / t2d.
    t = eagle3_tensors()
    del t["d2t"]
    write_single(os.path.join(c, "d2t-missing"), EAGLE3, t)
    t = eagle3_tensors()
    t["d2t"] = np.zeros(60, np.int64)
    write_single(os.path.join(c, "d2t-length"), EAGLE3, t)
    t = eagle3_tensors()
    t["t2d"] = np.zeros(100, bool)
    write_single(os.path.join(c, "t2d-length"), EAGLE3, t)
    # clean-eagle3 fine-tuned with a regenerated d2t (SpecForge PR 534): same shapes, other map;
    # no header check can see it, only the digest `pin` records (tests/weights.rs).
    t = eagle3_tensors()
    t.update(maps(np.array([2 * i + (1 if i % 3 == 0 else 0) for i in range(DRAFT_VOCAB)], np.int64)))
    write_single(os.path.join(c, "d2t-regenerated"), EAGLE3, t)

    # Issue 42: the maps by value. Target ids written where offsets belong (i + d2t[i] passes
    # the vocabulary); a zero d2t for the reduced vocabulary (the same as no map), and the same
    # with a t2d of the first 64 ids (the two agree: a warning); two draft ids mapped to one
    # target id; a t2d that marks other ids than d2t maps to.
    t = eagle3_tensors()
    t["d2t"] = HOT.copy()
    write_single(os.path.join(c, "d2t-ids-not-offsets"), EAGLE3, t)
    t = eagle3_tensors()
    t["d2t"] = np.zeros(DRAFT_VOCAB, np.int64)
    write_single(os.path.join(c, "d2t-zeros"), EAGLE3, t)
    t = eagle3_tensors()
    t.update(maps(np.arange(DRAFT_VOCAB, dtype=np.int64)))
    write_single(os.path.join(c, "d2t-zeros-first-ids"), EAGLE3, t)
    t = eagle3_tensors()
    dup = HOT.copy()
    dup[5] = dup[4]
    t["d2t"] = (dup - np.arange(DRAFT_VOCAB)).astype(np.int64)
    write_single(os.path.join(c, "d2t-duplicates"), EAGLE3, t)
    t = eagle3_tensors()
    t["t2d"] = np.arange(VOCAB) % 2 == 0
    write_single(os.path.join(c, "t2d-disagrees"), EAGLE3, t)

    # Tensors a loader refuses, skips, or has no parameter for.
    t = dict(dflash)
    t["mask_hidden"] = z(1, len(IDS) * H)
    write_single(os.path.join(c, "forbidden-mask-hidden"), DFLASH, t)
    t = eagle3_tensors()
    t["mask_hidden"] = z(1, 3 * H)
    write_single(os.path.join(c, "ignored-mask-hidden-eagle3"), EAGLE3, t)
    t = dict(dflash)
    t["layers.0.self_attn.q_proj.bias"] = z(HEADS * HD)
    t["extra_head.weight"] = z(4, H)
    write_single(os.path.join(c, "unexpected-tensor"), DFLASH, t)
    t = dict(dflash)
    t["d2t"] = np.zeros(VOCAB, np.int64)
    write_single(os.path.join(c, "unexpected-d2t-dflash"), DFLASH, t)

    # Issue 23: weights-quantized-undeclared, a W4A16-style layer (compressed-tensors names:
    # I32 weight_packed + weight_scale, as syvai/Qwen3.8-27B-DFlash2-W4A16 in sglang issue 39087)
    # in a drafter whose config says nothing; weights-quantization-unmatched, the clean drafter's
    # float tensors under a quantization_config.
    t = dict(dflash)
    down = t.pop("layers.0.mlp.down_proj.weight")
    t["layers.0.mlp.down_proj.weight_packed"] = z(down.shape[0], down.shape[1] // 8, dtype=np.int32)
    t["layers.0.mlp.down_proj.weight_scale"] = z(down.shape[0], 1)
    write_single(os.path.join(c, "quantized-undeclared"), DFLASH, t)
    write_single(
        os.path.join(c, "quantization-unmatched"),
        cfg(DFLASH, quantization_config={"quant_method": "compressed-tensors", "format": "pack-quantized"}),
        dflash,
    )

    # weights-missing-tensor.
    t = dict(dflash)
    del t["hidden_norm.weight"]
    del t["layers.1.mlp.down_proj.weight"]
    write_single(os.path.join(c, "missing-tensor"), DFLASH, t)

    # weights-model-prefix.
    write_single(os.path.join(c, "model-prefix"), DFLASH, {"model." + k: v for k, v in dflash.items()})

    # Index problems.
    write_sharded(os.path.join(c, "shard-missing"), DFLASH, dflash, drop_files=(2,))
    write_sharded(
        os.path.join(c, "duplicate-tensor"), DFLASH, dflash,
        assign=lambda name, n: [0, 1] if name == "norm.weight" else shard_of(name, n),
    )
    write_sharded(
        os.path.join(c, "index-mismatch"), DFLASH, dflash,
        index_map={"fc.weight": "model-00002-of-00003.safetensors"},
    )
    mtp_cases(c)
    head_naming_cases(c)


# Targets with an MTP head (issue 30). DeepSeek-V3's layout at toy size: 2 trunk layers and the
# MTP layer at index 2 (`num_hidden_layers`), block-FP8 weights stored as U8 (numpy has no float8;
# the rules read the dtype as "not floating-point") with F32 `weight_scale_inv`, routers in F16.
DSV3 = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "hidden_size": H,
    "num_hidden_layers": 2,
    "num_nextn_predict_layers": 1,
    "vocab_size": VOCAB,
    "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                            "weight_block_size": [128, 128]},
}
# Qwen3.5's: the text model under `text_config`, the head as `mtp.*`, compressed-tensors W4A16
# (I32 packed weights, F16 scales).
QWEN35 = {
    "architectures": ["Qwen3_5MoeForConditionalGeneration"],
    "model_type": "qwen3_5_moe",
    "text_config": {"hidden_size": H, "num_hidden_layers": 1, "mtp_num_hidden_layers": 1, "vocab_size": VOCAB},
    "quantization_config": {"quant_method": "compressed-tensors", "format": "pack-quantized",
                            "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4}}},
                            "ignore": ["lm_head", "re:^mtp.*"]},
}


def fp8_linear(name, out_f, in_f, quantized=True):
    if not quantized:
        return {name + ".weight": z(out_f, in_f)}
    return {name + ".weight": z(out_f, in_f, dtype=np.uint8), name + ".weight_scale_inv": z(1, 1, dtype=np.float32)}


def dsv3_layer(k, quantized=True, mtp=False, eh_proj_quantized=False):
    """A decoder layer; with `mtp`, DeepSeek's NextN layer, whose `eh_proj` DeepSeek-V3 and GLM
    ship BF16 (the engines build it as a plain nn.Linear; GLM-5-FP8's config names it in
    `modules_to_not_convert`) unless `eh_proj_quantized`."""
    p = f"model.layers.{k}."
    t = {p + "input_layernorm.weight": z(H), p + "mlp.gate.weight": z(4, H)}
    t.update(fp8_linear(p + "self_attn.q_a_proj", H, H, quantized))
    t.update(fp8_linear(p + "mlp.experts.0.down_proj", H, I, quantized))
    if mtp:
        t.update(fp8_linear(p + "eh_proj", H, 2 * H, quantized and eh_proj_quantized))
        t.update({p + "enorm.weight": z(H), p + "hnorm.weight": z(H), p + "embed_tokens.weight": z(VOCAB, H),
                  p + "shared_head.head.weight": z(VOCAB, H), p + "shared_head.norm.weight": z(H)})
    return t


def dsv3(head=True, head_quantized=True, eh_proj_quantized=False):
    t = {"model.embed_tokens.weight": z(VOCAB, H), "model.norm.weight": z(H), "lm_head.weight": z(VOCAB, H)}
    t.update(dsv3_layer(0))
    t.update(dsv3_layer(1))
    if head:
        t.update(dsv3_layer(2, quantized=head_quantized, mtp=True, eh_proj_quantized=eh_proj_quantized))
    return t


def by_layer(name, n):
    """Trunk in the first shards, the MTP layer (index 2) in the last, as DeepSeek-V3 ships it."""
    return n - 1 if name.startswith("model.layers.2.") else (1 if name.startswith("model.layers.1.") else 0)


def qwen35(head=True):
    t = {"model.language_model.embed_tokens.weight": z(VOCAB, H),
         "model.language_model.layers.0.mlp.gate_proj.weight_packed": z(I, H // 8, dtype=np.int32),
         "model.language_model.layers.0.mlp.gate_proj.weight_scale": z(I, H // 32),
         "model.language_model.layers.0.input_layernorm.weight": z(H)}
    if head:
        t.update({"mtp.fc.weight": z(H, 2 * H), "mtp.layers.0.mlp.gate_proj.weight": z(I, H),
                  "mtp.layers.0.input_layernorm.weight": z(H), "mtp.norm.weight": z(H)})
    return t


# MiMo's: the head under `model.mtp_layers.j.*` (vLLM mimo_mtp.py, SGLang mimo_mtp.py), bf16.
MIMO = {
    "architectures": ["MiMoForCausalLM"],
    "model_type": "mimo",
    "hidden_size": H,
    "num_hidden_layers": 1,
    "num_nextn_predict_layers": 1,
    "vocab_size": VOCAB,
}


def mimo(head=True):
    t = {"model.embed_tokens.weight": z(VOCAB, H), "model.norm.weight": z(H), "lm_head.weight": z(VOCAB, H),
         "model.layers.0.self_attn.q_proj.weight": z(H, H), "model.layers.0.input_layernorm.weight": z(H)}
    if head:
        p = "model.mtp_layers.0."
        t.update({p + "input_proj.weight": z(H, 2 * H), p + "self_attn.q_proj.weight": z(H, H),
                  p + "token_layernorm.weight": z(H), p + "hidden_layernorm.weight": z(H),
                  p + "final_layernorm.weight": z(H)})
    return t


def mlx_linear(name, out_f, in_f, bits=8, group=64):
    """MLX affine storage: the weight packed into U32 (32 // bits values each), F16 scales and
    biases per group."""
    return {name + ".weight": z(out_f, in_f * bits // 32, dtype=np.uint32),
            name + ".scales": z(out_f, in_f // group), name + ".biases": z(out_f, in_f // group)}


def mlx_tensors(prefix):
    t = {prefix + "norm.weight": z(H), prefix + "layers.0.input_layernorm.weight": z(H)}
    t.update(mlx_linear(prefix + "embed_tokens", VOCAB, H))
    t.update(mlx_linear(prefix + "layers.0.self_attn.q_proj", H, H))
    t.update(mlx_linear(prefix + "layers.0.mlp.gate_proj", I, H))
    return t


def awq_linear(name, out_f, in_f):
    """AutoAWQ's storage: I32 packed weights and zero points, F16 scales (group 128 at toy size)."""
    return {name + ".qweight": z(in_f, out_f // 8, dtype=np.int32), name + ".qzeros": z(1, out_f // 8, dtype=np.int32),
            name + ".scales": z(1, out_f)}


def qwen35_ct_individual():
    """A Qwen3.5 checkpoint quantized by compressed-tensors (packed projections in the trunk),
    its MTP head's projections kept in BF16 one by one."""
    t = {"model.language_model.embed_tokens.weight": z(VOCAB, H),
         "model.language_model.layers.0.input_layernorm.weight": z(H),
         "mtp.fc.weight": z(H, 2 * H), "mtp.layers.0.input_layernorm.weight": z(H), "mtp.norm.weight": z(H)}
    for part, out_f, in_f in [("self_attn.q_proj", H, H), ("self_attn.k_proj", H, H), ("self_attn.v_proj", H, H),
                              ("mlp.gate_proj", I, H), ("mlp.up_proj", I, H)]:
        trunk = "model.language_model.layers.0." + part
        t.update({trunk + ".weight_packed": z(out_f, in_f // 8, dtype=np.int32),
                  trunk + ".weight_scale": z(out_f, in_f // 32)})
        t["mtp.layers.0." + part + ".weight"] = z(out_f, in_f)
    return t


def qwen35_ct_experts():
    """A Qwen3.5-MoE checkpoint quantized by compressed-tensors (a packed expert in the trunk),
    its MTP head's expert and fc kept in BF16."""
    e = "model.language_model.layers.0.mlp.experts.0.down_proj"
    return {"model.language_model.embed_tokens.weight": z(VOCAB, H),
            "model.language_model.layers.0.input_layernorm.weight": z(H),
            e + ".weight_packed": z(H, I // 8, dtype=np.int32), e + ".weight_scale": z(H, I // 32),
            "mtp.fc.weight": z(H, 2 * H), "mtp.layers.0.mlp.experts.0.down_proj.weight": z(H, I),
            "mtp.layers.0.input_layernorm.weight": z(H), "mtp.norm.weight": z(H)}


def qwen35_int4():
    """A Qwen3.5-MoE text checkpoint quantized by AWQ/GPTQ (one linear and one expert in the
    trunk), its MTP head kept in F16 as the quantizers that keep it store it."""
    t = {"model.language_model.embed_tokens.weight": z(VOCAB, H),
         "model.language_model.layers.0.input_layernorm.weight": z(H)}
    t.update(awq_linear("model.language_model.layers.0.self_attn.q_proj", H, H))
    t.update(awq_linear("model.language_model.layers.0.mlp.experts.0.down_proj", H, I))
    t.update({"mtp.fc.weight": z(H, 2 * H), "mtp.layers.0.self_attn.q_proj.weight": z(H, H),
              "mtp.layers.0.mlp.experts.0.down_proj.weight": z(H, I),
              "mtp.layers.0.input_layernorm.weight": z(H), "mtp.norm.weight": z(H)})
    return t


def qwen35_quark(experts_quantized):
    """A Qwen3.5-MoE checkpoint quantized by quark (MXFP4-style U8 weights and scales in the
    trunk), its MTP head BF16 but for the routed expert when `experts_quantized`."""
    t = {"model.language_model.embed_tokens.weight": z(VOCAB, H),
         "model.language_model.layers.0.input_layernorm.weight": z(H)}
    for part, out_f, in_f in [("self_attn.q_proj", H, H), ("mlp.experts.0.down_proj", H, I)]:
        n = "model.language_model.layers.0." + part
        t[n + ".weight"] = z(out_f, in_f // 2, dtype=np.uint8)
        t[n + ".weight_scale"] = z(out_f, in_f // 32, dtype=np.uint8)
    t.update({"mtp.fc.weight": z(H, 2 * H), "mtp.layers.0.self_attn.q_proj.weight": z(H, H),
              "mtp.layers.0.input_layernorm.weight": z(H), "mtp.norm.weight": z(H)})
    e = "mtp.layers.0.mlp.experts.0.down_proj"
    if experts_quantized:
        t[e + ".weight"] = z(H, I // 2, dtype=np.uint8)
        t[e + ".weight_scale"] = z(H, I // 32, dtype=np.uint8)
    else:
        t[e + ".weight"] = z(H, I)
    return t


def dsv3_awq():
    """DeepSeek-V3's layout quantized by AWQ (attention and one expert per layer), its MTP layer
    (index 2) kept in F16."""
    t = {"model.embed_tokens.weight": z(VOCAB, H), "model.norm.weight": z(H), "lm_head.weight": z(VOCAB, H)}
    for k in (0, 1):
        p = f"model.layers.{k}."
        t.update({p + "input_layernorm.weight": z(H), p + "mlp.gate.weight": z(4, H)})
        t.update(awq_linear(p + "self_attn.q_a_proj", H, H))
        t.update(awq_linear(p + "mlp.experts.0.down_proj", H, I))
    t.update(dsv3_layer(2, quantized=False, mtp=True))
    return t


def mtp_cases(c):
    q = DSV3["quantization_config"]
    write_sharded(os.path.join(c, "mtp-deepseek-clean"), DSV3, dsv3(), assign=by_layer)
    write_sharded(os.path.join(c, "mtp-deepseek-dropped"), DSV3, dsv3(head=False), n=2, assign=by_layer)
    write_sharded(os.path.join(c, "mtp-deepseek-bf16-head"), DSV3, dsv3(head_quantized=False), assign=by_layer)
    excluded = dict(q, modules_to_not_convert=["model.layers.2.self_attn.q_a_proj", "model.layers.2.eh_proj",
                                               "model.layers.2.mlp.experts.0.down_proj"])
    write_sharded(os.path.join(c, "mtp-deepseek-bf16-head-excluded"), cfg(DSV3, quantization_config=excluded),
                  dsv3(head_quantized=False), assign=by_layer)
    write_sharded(os.path.join(c, "mtp-deepseek-quant-excluded"),
                  cfg(DSV3, quantization_config=dict(q, modules_to_not_convert=["model.layers.2.eh_proj"])),
                  dsv3(eh_proj_quantized=True), assign=by_layer)
    qq = QWEN35["quantization_config"]
    write_single(os.path.join(c, "mtp-qwen35-regex"), QWEN35, qwen35())
    write_single(os.path.join(c, "mtp-qwen35-prefix"),
                 cfg(QWEN35, quantization_config=dict(qq, ignore=["lm_head", "mtp"])), qwen35())
    modelopt = {"quant_method": "modelopt", "quant_algo": "NVFP4", "ignore": ["lm_head", "re:^mtp.*"]}
    write_single(os.path.join(c, "mtp-qwen35-modelopt-regex"), cfg(QWEN35, quantization_config=modelopt), qwen35())
    write_single(os.path.join(c, "mtp-qwen35-dropped"), QWEN35, qwen35(head=False))
    # Issue 41: a plain causal LM served as a draft model (vLLM `draft_model`): `model.` names
    # are its own class's; a hand-edited `vocab_size` no longer matches the embedding's rows.
    plain = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": H,
             "num_hidden_layers": 1, "vocab_size": VOCAB, "tie_word_embeddings": False}
    plain_t = {"model.embed_tokens.weight": z(VOCAB, H), "lm_head.weight": z(VOCAB, H), "model.norm.weight": z(H),
               "model.layers.0.self_attn.q_proj.weight": z(H, H)}
    write_single(os.path.join(c, "draft-plain-lm"), plain, plain_t)
    write_single(os.path.join(c, "draft-plain-lm-vocab-edited"), cfg(plain, vocab_size=VOCAB + 64), plain_t)
    # Issue 41: MLX checkpoints (mlx-lm / mlx-vlm layout: `.weight` packed into U32 with `.scales`
    # and `.biases` beside it, per module) declare their quantization as `quantization`; older
    # converters write no `quantization_config`.
    mlx_q = {"group_size": 64, "bits": 8, "mode": "affine"}
    mlx_cfg = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": H,
               "num_hidden_layers": 1, "vocab_size": VOCAB, "quantization": mlx_q}
    write_single(os.path.join(c, "mlx-quantization-only"), mlx_cfg, mlx_tensors("model."))
    mlx_target = {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
                  "quantization": mlx_q,
                  "text_config": {"model_type": "qwen3_5_text", "hidden_size": H, "num_hidden_layers": 1,
                                  "mtp_num_hidden_layers": 1, "vocab_size": VOCAB}}
    write_single(os.path.join(c, "mtp-mlx-dropped"), mlx_target, mlx_tensors("language_model.model."))
    # Issue 43: the same conversion with its MTP head kept (conv1d in MLX's layout, (C, K, 1)):
    # mlx-lm 0.30.7-0.31.3 shift its trunk norms a second time (MTPLX#306); info without an engine.
    kept = mlx_tensors("language_model.model.")
    kept["language_model.model.layers.0.linear_attn.conv1d.weight"] = z(8, 4, 1)
    kept.update(mlx_linear("language_model.mtp.fc", H, 2 * H))
    kept.update({"language_model.mtp.layers.0.input_layernorm.weight": z(H), "language_model.mtp.norm.weight": z(H)})
    write_single(os.path.join(c, "mtp-mlx-kept"), mlx_target, kept)
    write_single(os.path.join(c, "mtp-mimo-clean"), MIMO, mimo())
    write_single(os.path.join(c, "mtp-mimo-dropped"), MIMO, mimo(head=False))
    # AWQ and GPTQ (vLLM 0.34.0 and SGLang 0.5.23 read): `modules_to_not_convert` entries are
    # contained names in both engines, `dynamic`'s `-:` keys regexes at the start.
    awq = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
    for name, keep in [("mtp-qwen35-awq-excluded", ["visual", "mtp"]),
                       ("mtp-qwen35-awq-regex", ["visual", "re:^mtp.*"]),
                       ("mtp-qwen35-awq-empty", None)]:
        write_single(os.path.join(c, name),
                     cfg(QWEN35, quantization_config=dict(awq, modules_to_not_convert=keep)), qwen35_int4())
    # Issue 41: the head spellings of ERNIE-4.5 MoE (`model.mtp_block.j`), DeepSeek-V4 (`mtp.j`)
    # and HY-V4 (`model.mtp_layers.j`, one layer read whatever the export declares), bf16.
    for name, config, head in [
        ("mtp-ernie", {"architectures": ["Ernie4_5_MoeForCausalLM"], "model_type": "ernie4_5_moe"},
         "model.mtp_block.0."),
        ("mtp-deepseek-v4", {"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4"}, "mtp.0."),
        ("mtp-hy-v4", {"architectures": ["HYV4ForCausalLM"], "model_type": "hy_v4",
                       "num_nextn_predict_layers": 2}, "model.mtp_layers.0."),
        # Issue 41: Nemotron 3.5 Transcribe's BF16 checkpoint keeps its head in NeMo's layout
        # (`llm.mtp.layers.j`), its depth under text_config.
        ("mtp-nemotron-transcribe", {"architectures": ["Nemotron3_5TranscribeForConditionalGeneration"],
                                     "text_config": {"num_nextn_predict_layers": 1, "num_hidden_layers": 1}},
         "llm.mtp.layers.0."),
        # Issue 41: MiniMax-M3 VL declares its depth as text_config.num_mtp_modules, its head
        # under `language_model.model.mtp.layers.j`.
        ("mtp-minimax-m3", {"architectures": ["MiniMaxM3SparseForConditionalGeneration"], "model_type": "minimax_m3_vl",
                            "num_nextn_predict_layers": None,
                            "text_config": {"num_mtp_modules": 1, "num_hidden_layers": 1}},
         "language_model.model.mtp.layers.0."),
        # Issue 41: Inkling declares its depth under mtp_config only (and `model.mtp.layers.j`).
        ("mtp-inkling", {"architectures": ["InklingForConditionalGeneration"], "model_type": "inkling_mm_model",
                         "num_nextn_predict_layers": None, "mtp_config": {"num_nextn_predict_layers": 1}},
         "model.mtp.layers.0."),
    ]:
        config = dict({"hidden_size": H, "num_hidden_layers": 1, "num_nextn_predict_layers": 1,
                       "vocab_size": VOCAB}, **config)
        config = {k: v for k, v in config.items() if v is not None}
        trunk = {"model.embed_tokens.weight": z(VOCAB, H), "model.norm.weight": z(H), "lm_head.weight": z(VOCAB, H),
                 "model.layers.0.self_attn.q_proj.weight": z(H, H), "model.layers.0.input_layernorm.weight": z(H)}
        write_single(os.path.join(c, name + "-clean"), config,
                     dict(trunk, **{head + "self_attn.q_proj.weight": z(H, H), head + "input_layernorm.weight": z(H)}))
        write_single(os.path.join(c, name + "-dropped"), config, trunk)
    # Issue 41 (sglang#35887): compressed-tensors with the head's projections listed one by one
    # in `ignore`; SGLang up to 0.5.20 matches the fused qkv_proj / gate_up_proj whole.
    ct_individual = ["lm_head", "mtp.fc"] + [f"mtp.layers.0.self_attn.{p}_proj" for p in "qkv"] + \
        [f"mtp.layers.0.mlp.{p}_proj" for p in ("gate", "up")]
    write_single(os.path.join(c, "mtp-qwen35-ct-individual"),
                 cfg(QWEN35, quantization_config=dict(qq, ignore=ct_individual)), qwen35_ct_individual())
    # Issue 41 (sglang#36786): compressed-tensors MXFP4 with `re:^mtp.*`: SGLang 0.5.17+ builds the
    # head's experts MXFP4 whatever `ignore` says. The same list in NVFP4 is honoured.
    mxfp4 = dict(qq, format="mxfp4-pack-quantized")
    write_single(os.path.join(c, "mtp-qwen35-mxfp4-experts"), cfg(QWEN35, quantization_config=mxfp4),
                 qwen35_ct_experts())
    nvfp4 = dict(qq, format="nvfp4-pack-quantized")
    write_single(os.path.join(c, "mtp-qwen35-nvfp4-experts"), cfg(QWEN35, quantization_config=nvfp4),
                 qwen35_ct_experts())
    # Issue 41 (sglang#29781): quark on a GLM-5 DSA checkpoint, the NextN layer excluded entry by
    # entry under its checkpoint names; SGLang 0.5.11-0.5.15 builds it as model.eh_proj and
    # model.decoder.* and matches the entries as written. With the bare layer excluded too, the
    # whole layer is unquantized there.
    glm_entries = ["lm_head", "model.layers.2.self_attn.q_a_proj", "model.layers.2.mlp.experts.0.down_proj",
                   "model.layers.2.eh_proj"]
    glm = cfg(DSV3, architectures=["GlmMoeDsaForCausalLM"], model_type="glm_moe_dsa")
    for name, exclude in [("mtp-glm-dsa-quark-entries", glm_entries),
                          ("mtp-glm-dsa-quark-layer", glm_entries + ["model.layers.2"])]:
        write_sharded(os.path.join(c, name),
                      cfg(glm, quantization_config={"quant_method": "quark", "exclude": exclude}),
                      dsv3(head_quantized=False), assign=by_layer)
    gptq = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True,
            "dynamic": {"-:.*mtp.*": {}}}
    write_single(os.path.join(c, "mtp-qwen35-gptq-dynamic"), cfg(QWEN35, quantization_config=gptq), qwen35_int4())
    # quark on a Qwen3.5 head with `mtp.` entries (none naming the experts): SGLang 0.5.12-0.5.20
    # builds the whole head BF16. A BF16 expert the list leaves quantized loads there only; an
    # expert stored quantized fails there only.
    quark_q = {"quant_method": "quark", "exclude": ["lm_head", "mtp.fc", "mtp.layers.0.self_attn.q_proj"]}
    write_single(os.path.join(c, "mtp-qwen35-quark-partial"), cfg(QWEN35, quantization_config=quark_q),
                 qwen35_quark(experts_quantized=False))
    write_single(os.path.join(c, "mtp-qwen35-quark-mixed"), cfg(QWEN35, quantization_config=quark_q),
                 qwen35_quark(experts_quantized=True))
    # vLLM's quark handling of the head, read in every wheel 0.25.1-0.34.0, the same shapes at
    # every release: named one by one, by `re:`, by a bare prefix (matches nothing); up to 0.25
    # an excluded MoE fails in either form (vllm#46757).
    for name, exclude in [
        ("mtp-qwen35-quark-named", ["lm_head", "mtp.fc", "mtp.layers.0.self_attn.q_proj",
                                    "mtp.layers.0.mlp.experts.0.down_proj"]),
        ("mtp-qwen35-quark-regex", ["lm_head", "re:^mtp\\..*"]),
        ("mtp-qwen35-quark-prefix", ["lm_head", "mtp"]),
        # The expert by a `re:` on the experts' names only: both engines match the MoE's name.
        ("mtp-qwen35-quark-expert-regex", ["lm_head", "mtp.fc", "mtp.layers.0.self_attn.q_proj",
                                           "re:mtp\\.layers\\.0\\.mlp\\.experts\\.\\d+\\..*"]),
    ]:
        write_single(os.path.join(c, name), cfg(QWEN35, quantization_config={"quant_method": "quark", "exclude": exclude}),
                     qwen35_quark(experts_quantized=False))
    # A DeepSeek-style NextN layer quantized but for one BF16 module: vLLM builds `eh_proj` as a
    # plain nn.Linear at every release; SGLang builds DeepSeek's and GLM-5 DSA's under the quark
    # config from 0.5.11 (deepseek_nextn.py) and GLM-4.5's plain (glm4_moe_nextn.py).
    def bf16_at(module, out_f, in_f):
        t = dsv3()
        t.pop(module + ".weight_scale_inv", None)
        t[module + ".weight"] = z(out_f, in_f)
        return t
    quark_lm_head = {"quant_method": "quark", "exclude": ["lm_head"]}
    for name, config in [("mtp-glm-dsa-quark-eh-proj", glm),
                         ("mtp-glm45-quark-eh-proj", cfg(DSV3, architectures=["Glm4MoeForCausalLM"],
                                                        model_type="glm4_moe"))]:
        write_sharded(os.path.join(c, name), cfg(config, quantization_config=quark_lm_head),
                      bf16_at("model.layers.2.eh_proj", H, 2 * H), assign=by_layer)
    # The same BF16 `eh_proj` under DeepSeek's own fp8 config, not excluded: both engines build it
    # as a plain nn.Linear under every method but quark, so it loads (a false error before).
    write_sharded(os.path.join(c, "mtp-deepseek-fp8-eh-proj"), DSV3,
                  bf16_at("model.layers.2.eh_proj", H, 2 * H), assign=by_layer)
    # Its routed experts BF16, excluded by the expert's own name (as amd/GLM-5.2-MXFP4 lists its
    # MTP layer) or by the MoE's: vLLM up to 0.25 matches the MoE's name only (ROCm/vllm#1022).
    # `model.eh_proj` (SGLang's name for the BF16 `eh_proj`) keeps that module out of the case.
    for name, entry in [("mtp-deepseek-quark-experts-named", "model.layers.2.mlp.experts.0.down_proj"),
                        ("mtp-deepseek-quark-experts-moe", "model.layers.2.mlp.experts")]:
        write_sharded(os.path.join(c, name),
                      cfg(DSV3, quantization_config={"quant_method": "quark",
                                                     "exclude": ["lm_head", "model.eh_proj", entry]}),
                      bf16_at("model.layers.2.mlp.experts.0.down_proj", H, I), assign=by_layer)
    # The same per-expert form on GLM-5 DSA (SGLang adds the MoE's runtime name from 0.5.16) and
    # GLM-4.5 (SGLang builds the NextN layer as model.decoder.* and never remaps the checkpoint's
    # entries, glm4_moe_nextn.py 0.5.10-0.5.23). Only the expert is BF16.
    glm45 = cfg(DSV3, architectures=["Glm4MoeForCausalLM"], model_type="glm4_moe")
    for name, config in [("mtp-glm-dsa-quark-experts-named", glm), ("mtp-glm45-quark-experts-named", glm45)]:
        write_sharded(os.path.join(c, name),
                      cfg(config, quantization_config={"quant_method": "quark", "exclude": [
                          "lm_head", "model.eh_proj", "model.layers.2.mlp.experts.0.down_proj"]}),
                      bf16_at("model.layers.2.mlp.experts.0.down_proj", H, I), assign=by_layer)
    # A NextN `eh_proj` stored quantized: vLLM builds it as a plain nn.Linear at every release
    # (its scale has no parameter), SGLang too under every method but quark (DeepSeek-style) and
    # for GLM-4.5; SGLang quantizes it under quark from 0.5.11 and, for Bailing 2.5, always.
    bailing = cfg(DSV3, architectures=["BailingMoeV2_5ForCausalLM"], model_type="bailing_hybrid")
    for name, config in [("mtp-deepseek-fp8-eh-proj-quantized", DSV3),
                         ("mtp-glm-dsa-quark-eh-proj-quantized", cfg(glm, quantization_config=quark_lm_head)),
                         ("mtp-bailing-eh-proj-quantized", bailing)]:
        write_sharded(os.path.join(c, name), config, dsv3(eh_proj_quantized=True), assign=by_layer)
    # Bailing 2.5 with its `eh_proj` BF16 and not excluded: plain in vLLM, quantized by SGLang
    # (bailing_moe_nextn.py) except under ModelOpt FP4, which SGLang drops for the NextN layer.
    write_sharded(os.path.join(c, "mtp-bailing-eh-proj-bf16"), bailing, dsv3(), assign=by_layer)
    nvfp4_bailing = cfg(bailing, quantization_config={"quant_method": "modelopt", "quant_algo": "NVFP4",
                                                      "ignore": ["lm_head"]})
    write_sharded(os.path.join(c, "mtp-bailing-modelopt-fp4-eh-proj"), nvfp4_bailing, dsv3(), assign=by_layer)
    # An entry naming the fused module (`qkv_proj`, `gate_up_proj`) of a Qwen3.5 head's BF16
    # shards: compressed-tensors honours an exact one in both engines at every release; a `re:`
    # on it only vLLM from 0.30 (find_matching_patterns) and SGLang up to 0.5.20 (its Qwen3.5 MTP
    # class has no packed mapping); quark's, vLLM from 0.30 and SGLang at every release.
    fused = ["mtp.layers.0.self_attn.qkv_proj", "mtp.layers.0.mlp.gate_up_proj"]
    fused_re = ["re:mtp\\.layers\\.0\\.self_attn\\.qkv_proj", "re:mtp\\.layers\\.0\\.mlp\\.gate_up_proj"]
    for name, ignore in [("mtp-qwen35-ct-fused-exact", fused), ("mtp-qwen35-ct-fused-regex", fused_re)]:
        write_single(os.path.join(c, name),
                     cfg(QWEN35, quantization_config=dict(qq, ignore=["lm_head", "mtp.fc"] + ignore)),
                     qwen35_ct_individual())
    quark_fused = {"quant_method": "quark", "exclude": ["lm_head", "mtp.fc"] + fused}
    write_single(os.path.join(c, "mtp-qwen35-quark-fused"), cfg(QWEN35, quantization_config=quark_fused),
                 qwen35_ct_individual())
    # GLM-OCR declares its depth under text_config (text_config.num_nextn_predict_layers beside
    # num_hidden_layers: where vLLM's glm_ocr_mtp.py reads both, and where zai-org/GLM-OCR's
    # config puts them as two public copies of it show) and keeps its head after the text
    # trunk, `model.language_model.layers.N.*` (vLLM glm_ocr_mtp.py, SGLang glm_ocr.py); the
    # loaders read nothing under `mtp.`.
    ocr = {"architectures": ["GlmOcrForConditionalGeneration"], "model_type": "glm_ocr",
           "text_config": {"model_type": "glm_ocr_text", "hidden_size": H, "num_hidden_layers": 1,
                           "num_nextn_predict_layers": 1, "vocab_size": VOCAB}}
    ocr_trunk = {"model.language_model.embed_tokens.weight": z(VOCAB, H), "model.language_model.norm.weight": z(H),
                 "lm_head.weight": z(VOCAB, H), "model.language_model.layers.0.self_attn.q_proj.weight": z(H, H),
                 "model.language_model.layers.0.input_layernorm.weight": z(H)}
    ocr_head = {"eh_proj.weight": z(H, 2 * H), "enorm.weight": z(H), "hnorm.weight": z(H),
                "self_attn.q_proj.weight": z(H, H), "shared_head.norm.weight": z(H)}
    for name, prefix in [("mtp-glm-ocr-clean", "model.language_model.layers.1."),
                         ("mtp-glm-ocr-dropped", None), ("mtp-glm-ocr-misnamed", "mtp.layers.0.")]:
        t = dict(ocr_trunk)
        if prefix:
            t.update({prefix + k: v for k, v in ocr_head.items()})
        write_single(os.path.join(c, name), ocr, t)
    # The MTP layer excluded by its index: vLLM builds it as `model.layers.2.*`, SGLang as
    # `model.decoder.*`, which the entry is not contained in.
    write_sharded(os.path.join(c, "mtp-deepseek-awq-layer-index"),
                  cfg(DSV3, quantization_config=dict(awq, modules_to_not_convert=["model.layers.2"])),
                  dsv3_awq(), assign=by_layer)
    # ModelOpt up to 0.29 wrote its quantization to hf_quant_config.json and none in config.json
    # (nvidia/DeepSeek-V3.1-NVFP4 is published so: tests/fixtures/mtp-targets/); vLLM reads that
    # file then. Its exclude list in the published form (`model.layers.61*` there, 2 here).
    bare = {k: v for k, v in DSV3.items() if k != "quantization_config"}
    for name, exclude in [("mtp-deepseek-hf-quant-config-excluded", ["lm_head", "model.layers.2*"]),
                          ("mtp-deepseek-hf-quant-config", ["lm_head"])]:
        d = os.path.join(c, name)
        write_sharded(d, bare, dsv3(head_quantized=False), assign=by_layer)
        write_json(os.path.join(d, "hf_quant_config.json"),
                   {"producer": {"name": "modelopt", "version": "0.22.1"},
                    "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16,
                                     "exclude_modules": exclude}})


def head_naming_cases(c):
    """Issue 41: the MTP heads of the families vLLM 0.34.0 added loaders for, each where its
    loaders read it (crates/core/src/family/heads.rs cites them): a clean case, and one whose
    head is dropped or stored under a spelling its loaders do not read."""
    head = {"eh_proj.weight": z(H, 2 * H), "enorm.weight": z(H), "hnorm.weight": z(H),
            "self_attn.q_proj.weight": z(H, H), "shared_head.norm.weight": z(H)}

    def text(**extra):
        return dict({"hidden_size": H, "num_hidden_layers": 1, "num_nextn_predict_layers": 1,
                     "vocab_size": VOCAB}, **extra)

    def trunk(stack):
        return {stack + "embed_tokens.weight": z(VOCAB, H), stack + "norm.weight": z(H), "lm_head.weight": z(VOCAB, H),
                stack + "layers.0.self_attn.q_proj.weight": z(H, H), stack + "layers.0.input_layernorm.weight": z(H)}

    def write(name, config, stack, prefixes):
        t = trunk(stack)
        for prefix in prefixes:
            t.update({prefix + k: v for k, v in head.items()})
        write_single(os.path.join(c, name), config, t)

    # After the trunk only (`model.layers.{N + j}.*`, under the checkpoint's stack): a head
    # written as `mtp.layers.j.*` is read by none of their loaders (dots3's trunk loader skips
    # `mtp.*` outright), so it is a head missing, not a head found.
    after_trunk = [
        ("dots3", text(architectures=["Dots3NoteForCausalLM"], model_type="dots3_note"), "model."),
        ("bailing-v3", text(architectures=["BailingMoeV3ForCausalLM"], model_type="bailing_hybrid"), "model."),
        ("kimi-k3", {"architectures": ["KimiK3ForConditionalGeneration"], "model_type": "kimi_k3",
                     "text_config": text(model_type="kimi_linear")}, "language_model.model."),
        ("pangu-ultra", text(architectures=["PanguUltraMoEForCausalLM"], model_type="pangu_ultra_moe"), "model."),
        ("step3p5", text(architectures=["Step3p5ForCausalLM"], model_type="step3p5"), "model."),
        ("step5", text(architectures=["Step5ForCausalLM"], model_type="step5"), "model."),
        ("hy-v3", text(architectures=["HYV3ForCausalLM"], model_type="hy_v3"), "model."),
        ("glm5-next", {"architectures": ["Glm5NextForConditionalGeneration"], "model_type": "glm5_next",
                       "text_config": text()}, "model.language_model."),
    ]
    for family, config, stack in after_trunk:
        write(f"mtp-{family}-clean", config, stack, [stack + "layers.1."])
        write(f"mtp-{family}-misnamed", config, stack, ["mtp.layers.0."])
    # `model.mtp.layers.j.*`, layer 0 the only one either engine reads: MiMo-V2 checkpoints
    # declare more (vLLM fixes n_predict at 1, SGLang folds every layer into one block), so a
    # checkpoint that keeps layer 0 alone serves; LongCat-Flash's head after the trunk is
    # read by neither.
    mimo_v2 = text(architectures=["MiMoV2FlashForCausalLM"], model_type="mimo_v2_flash", num_nextn_predict_layers=3)
    write("mtp-mimo-v2-clean", mimo_v2, "model.", ["model.mtp.layers.0."])
    write("mtp-mimo-v2-dropped", mimo_v2, "model.", [])
    longcat = text(architectures=["LongcatFlashForCausalLM"], model_type="longcat_flash")
    write("mtp-longcat-clean", longcat, "model.", ["model.mtp.layers.0."])
    write("mtp-longcat-misnamed", longcat, "model.", ["model.layers.1."])
    # Nemotron-H stacks `len(mtp_hybrid_override_pattern)` physical layers a step
    # (`mtp.layers.0..`): with a two-character pattern, one step is mtp.layers.0 and .1, and a
    # checkpoint that dropped the second (its MoE) lacks half the step.
    nemotron = text(architectures=["NemotronHForCausalLM"], model_type="nemotron_h",
                    mtp_hybrid_override_pattern="*E")
    write("mtp-nemotron-h-clean", nemotron, "backbone.", ["mtp.layers.0.", "mtp.layers.1."])
    write("mtp-nemotron-h-dropped-sublayer", nemotron, "backbone.", ["mtp.layers.0."])

def hostile(out):
    h = os.path.join(out, "hostile")
    good = os.path.join(out, "cases", "clean-dflash", "model.safetensors")
    real = open(good, "rb").read()
    n = int.from_bytes(real[:8], "little")
    header = json.loads(real[8 : 8 + n])

    def header_file(obj, data_len):
        text = json.dumps(obj, separators=(",", ":")).encode()
        text += b" " * ((8 - (8 + len(text)) % 8) % 8)
        return len(text).to_bytes(8, "little") + text + b"\0" * data_len

    data_len = len(real) - 8 - n
    overlap = copy.deepcopy(header)
    names = sorted(k for k in overlap if k != "__metadata__")
    a, b = overlap[names[0]], overlap[names[1]]
    # Give b the same start as a: the two tensors overlap.
    b["data_offsets"] = [a["data_offsets"][0], a["data_offsets"][0] + (b["data_offsets"][1] - b["data_offsets"][0])]
    bounds = copy.deepcopy(header)
    last = max((k for k in bounds if k != "__metadata__"), key=lambda k: bounds[k]["data_offsets"][1])
    # The last tensor grows by 16 rows, consistently with its dtype: its end passes the file's.
    grown = bounds[last]
    row_bytes = int(np.prod(grown["shape"][1:])) * 2  # F16
    grown["shape"][0] += 16
    grown["data_offsets"][1] += 16 * row_bytes
    files = {
        "truncated-length": real[:5],
        "truncated-header": real[: 8 + n // 2],
        "truncated-data": real[: len(real) - 16],
        "huge-length": (30_000_000).to_bytes(8, "little") + real[8:],
        "huge-length-u64": (2**63 + 7).to_bytes(8, "little") + real[8:],
        "bad-json": n.to_bytes(8, "little") + b"{" + b"x" * (n - 1) + real[8 + n :],
        "not-utf8": n.to_bytes(8, "little") + b"\xff\xfe" + real[10:],
        "overlapping-offsets": header_file(overlap, data_len),
        "out-of-bounds-offsets": header_file(bounds, data_len),
        "empty": b"",
    }
    for name, data in files.items():
        d = os.path.join(h, name)
        os.makedirs(d, exist_ok=True)
        write_json(os.path.join(d, "config.json"), DFLASH)
        with open(os.path.join(d, "model.safetensors"), "wb") as f:
            f.write(data)
    # An index whose shard name escapes the directory.
    d = os.path.join(h, "index-escape")
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "config.json"), DFLASH)
    write_json(
        os.path.join(d, "model.safetensors.index.json"),
        {"metadata": {}, "weight_map": {"fc.weight": "../clean-dflash/model.safetensors"}},
    )
    # Every hostile file must be refused by the real package too.
    for name in files:
        path = os.path.join(h, name, "model.safetensors")
        try:
            with safe_open(path, "np") as f:
                list(f.keys())
        except Exception:
            continue
        sys.exit(f"generate.py: hostile/{name} is accepted by safetensors.safe_open")


def hub(out):
    """Drafters served by the in-process Hub: a 3-shard DFlash whose last shard is over 100 kB
    (so the first range request cannot take it whole), and a single file whose header is over
    100 kB (so a second range request is needed)."""
    d = os.path.join(out, "hub")
    t = dflash_tensors()
    t["embed_tokens.weight"] = z(VOCAB * 16, H)  # 128 kB of F16 in the last shard
    conf = cfg(DFLASH, vocab_size=VOCAB * 16)
    write_sharded(os.path.join(d, "sharded"), conf, t,
                  assign=lambda name, n: 2 if name == "embed_tokens.weight" else shard_of(name, n))
    # Issue 42: an EAGLE-3 head whose d2t holds target ids, read by range requests.
    t = eagle3_tensors()
    t["d2t"] = HOT.copy()
    write_single(os.path.join(d, "eagle3-ids-not-offsets"), EAGLE3, t)
    big = {"format": "pt", "notes": "x" * 150_000}
    os.makedirs(os.path.join(d, "big-header"), exist_ok=True)
    write_json(os.path.join(d, "big-header", "config.json"), DFLASH)
    save_file(dflash_tensors(), os.path.join(d, "big-header", "model.safetensors"), metadata=big)


BF16_BYTES = 2


def write_sparse(path, shapes):
    """A safetensors file with a real header and a hole for the data: the header is laid out as
    the Rust serializer lays it out (`__metadata__` first, then by dtype alignment and name,
    padded with spaces to 8 bytes); the data section is created with truncate()."""
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name in sorted(shapes):
        size = int(np.prod(shapes[name])) * BF16_BYTES
        header[name] = {"dtype": "BF16", "shape": list(shapes[name]), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        f.truncate(8 + len(text) + offset)
    with safe_open(path, "np") as f:
        for name in shapes:
            s = f.get_slice(name)
            assert list(s.get_shape()) == list(shapes[name]) and s.get_dtype() == "BF16", name
    return offset


def realistic(out):
    """z-lab/Qwen3-8B-DFlash-b16's shapes: hidden 4096, 32 heads, 8 KV heads, head_dim 128,
    intermediate 12288, 5 layers, 5 target layer ids (fc 4096 × 20480)."""
    d = os.path.join(out, "realistic", "qwen3-8b-dflash-b16")
    os.makedirs(d, exist_ok=True)
    h, heads, kv, hd, inter, layers = 4096, 32, 8, 128, 12288, 5
    conf = {
        "architectures": ["DFlashDraftModel"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "auto_map": {"AutoModel": "dflash.DFlashDraftModel"},
        "block_size": 16,
        "bos_token_id": 151643,
        "dflash_config": {"mask_token_id": 151669, "target_layer_ids": [1, 9, 17, 25, 33]},
        "dtype": "bfloat16",
        "eos_token_id": 151645,
        "head_dim": hd,
        "hidden_act": "silu",
        "hidden_size": h,
        "intermediate_size": inter,
        "layer_types": ["full_attention"] * layers,
        "max_position_embeddings": 40960,
        "max_window_layers": layers,
        "model_type": "qwen3",
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "num_key_value_heads": kv,
        "num_target_layers": 36,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 1000000,
        "sliding_window": None,
        "tie_word_embeddings": False,
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": 151936,
    }
    write_json(os.path.join(d, "config.json"), conf)
    shapes = {"fc.weight": (h, 5 * h), "hidden_norm.weight": (h,), "norm.weight": (h,)}
    for i in range(layers):
        p = f"layers.{i}."
        shapes.update({
            p + "self_attn.q_proj.weight": (heads * hd, h),
            p + "self_attn.k_proj.weight": (kv * hd, h),
            p + "self_attn.v_proj.weight": (kv * hd, h),
            p + "self_attn.o_proj.weight": (h, heads * hd),
            p + "self_attn.q_norm.weight": (hd,),
            p + "self_attn.k_norm.weight": (hd,),
            p + "input_layernorm.weight": (h,),
            p + "post_attention_layernorm.weight": (h,),
            p + "mlp.gate_proj.weight": (inter, h),
            p + "mlp.up_proj.weight": (inter, h),
            p + "mlp.down_proj.weight": (h, inter),
        })
    files = [f"model-{k + 1:05d}-of-00003.safetensors" for k in range(3)]

    def shard(name):
        if not name.startswith("layers."):
            return 0
        return {0: 0, 1: 1, 2: 1, 3: 2, 4: 2}[int(name.split(".")[1])]

    weight_map, total = {}, 0
    for k, f in enumerate(files):
        part = {n: s for n, s in shapes.items() if shard(n) == k}
        total += write_sparse(os.path.join(d, f), part)
        weight_map.update({n: f for n in part})
    write_json(os.path.join(d, "model.safetensors.index.json"),
               {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    write_json(os.path.join(out, "realistic", "qwen3-8b", "config.json"), {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": h,
        "num_hidden_layers": 36, "vocab_size": 151936, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288,
    })
    return {"parameters": sum(int(np.prod(s)) for s in shapes.values()), "bytes": total,
            "tensors": len(shapes)}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: generate.py OUT_DIR")
    out = sys.argv[1]
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    write_json(os.path.join(out, "target", "config.json"), TARGET)
    write_json(os.path.join(out, "target-wide", "config.json"), cfg(TARGET, hidden_size=48))
    cases(out)
    hostile(out)
    hub(out)
    real = realistic(out)
    import safetensors
    write_json(os.path.join(out, "manifest.json"), {
        "safetensors": safetensors.__version__,
        "numpy": np.__version__,
        "cases": sorted(os.listdir(os.path.join(out, "cases"))),
        "hostile": sorted(os.listdir(os.path.join(out, "hostile"))),
        "hub": sorted(os.listdir(os.path.join(out, "hub"))),
        "realistic": real,
    })


if __name__ == "__main__":
    main()
