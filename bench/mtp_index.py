#!/usr/bin/env python3
"""Writes a SYNTHETIC target checkpoint directory for the MTP weights checks (issue 30): a
`config.json` and a `model.safetensors.index.json` shaped like an NVFP4 (ModelOpt) export of
DeepSeek-V3 — 61 decoder layers (3 dense, 58 MoE with 256 routed experts and a shared expert),
the MTP layer at index 61, 163 shards, every linear weight with `weight_scale`, `weight_scale_2`
and `input_scale` beside it — about 184,000 entries and 17 MB. No shard file is written: the
checks read the index's names only. It is not a copy of a published index (none with an MTP
head was found in a public repository file); the names follow DeepSeek-V3's modelling code.

    bench/mtp_index.py OUT_DIR [--drop-mtp] [--extra-entries N]

`--drop-mtp` leaves the MTP layer out (as quantizers that drop it write the index);
`--extra-entries N` adds N more names (to go over the index's entry cap). Stdlib only.
"""
import json
import os
import sys

LAYERS = 61
DENSE = 3
EXPERTS = 256
SHARDS = 163
PARTS = ("weight", "weight_scale", "weight_scale_2", "input_scale")


def linear(prefix):
    return [f"{prefix}.{p}" for p in PARTS]


def layer(k):
    p = f"model.layers.{k}."
    names = [p + "input_layernorm.weight", p + "post_attention_layernorm.weight",
             p + "self_attn.q_a_layernorm.weight", p + "self_attn.kv_a_layernorm.weight"]
    for proj in ("q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"):
        names += linear(p + "self_attn." + proj)
    if k < DENSE:
        for proj in ("gate_proj", "up_proj", "down_proj"):
            names += linear(p + "mlp." + proj)
        return names
    names += [p + "mlp.gate.weight", p + "mlp.gate.e_score_correction_bias"]
    for e in range(EXPERTS):
        for proj in ("gate_proj", "up_proj", "down_proj"):
            names += linear(f"{p}mlp.experts.{e}.{proj}")
    for proj in ("gate_proj", "up_proj", "down_proj"):
        names += linear(p + "mlp.shared_experts." + proj)
    return names


def mtp_layer(k):
    p = f"model.layers.{k}."
    # `eh_proj` plain: vLLM and SGLang build a DeepSeek NextN `eh_proj` as an nn.Linear under
    # ModelOpt, so an export keeps it unquantized (its scales would have no parameter).
    extra = [p + "enorm.weight", p + "hnorm.weight", p + "embed_tokens.weight",
             p + "shared_head.norm.weight", p + "shared_head.head.weight", p + "eh_proj.weight"]
    return layer(k) + extra


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    out, drop_mtp = args[0], "--drop-mtp" in args
    extra = int(args[args.index("--extra-entries") + 1]) if "--extra-entries" in args else 0
    os.makedirs(out, exist_ok=True)
    layers = [layer(k) for k in range(LAYERS)]
    if not drop_mtp:
        layers.append(mtp_layer(LAYERS))
    weight_map = {"model.embed_tokens.weight": "model-00001-of-00163.safetensors"}
    total = sum(len(n) for n in layers)
    done = 0
    for names in layers:
        for name in names:
            shard = 1 + done * SHARDS // total
            weight_map[name] = f"model-{shard:05d}-of-{SHARDS:05d}.safetensors"
            done += 1
    last = f"model-{SHARDS:05d}-of-{SHARDS:05d}.safetensors"
    weight_map["model.norm.weight"] = last
    weight_map["lm_head.weight"] = last
    for i in range(extra):
        weight_map[f"model.extra.{i}.weight"] = last
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=2)
    config = {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "hidden_size": 7168,
        "num_hidden_layers": LAYERS,
        "num_nextn_predict_layers": 1,
        "first_k_dense_replace": DENSE,
        "n_routed_experts": EXPERTS,
        "vocab_size": 129280,
        "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4",
                                "ignore": ["lm_head", "model.layers.*.mlp.gate"]},
    }
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    print(f"{out}: {len(weight_map)} entries, {os.path.getsize(os.path.join(out, 'model.safetensors.index.json'))} bytes")


if __name__ == "__main__":
    main()
