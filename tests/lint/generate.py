#!/usr/bin/env python3
"""Writes the lint fixtures under tests/lint/. Run from anywhere; the output is committed.

Values are facts about public models (z-lab DFlash drafters, SpecForge templates, Qwen targets);
the files are ours. Each `cases/<name>/config.json` is one drafter that fires (or, under
`clean/`, does not fire) the rules named in tests/lint_cli.rs.
"""
import copy
import json
import os
import shutil

ROOT = os.path.dirname(os.path.abspath(__file__))
ABSENT = object()


def write(rel, obj):
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = json.dumps(obj, indent=2, ensure_ascii=False) + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def patch(base, **over):
    d = copy.deepcopy(base)
    for k, v in over.items():
        keys = k.split("__")
        node = d
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        if v is ABSENT:
            node.pop(keys[-1], None)
        else:
            node[keys[-1]] = v
    return d


# z-lab/Qwen3.6-27B-DFlash, as published (flat layout).
QWEN36 = {
    "architectures": ["DFlashDraftModel"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "auto_map": {"AutoModel": "dflash.DFlashDraftModel"},
    "block_size": 16,
    "bos_token_id": None,
    "dflash_config": {"mask_token_id": 248070, "target_layer_ids": [1, 16, 31, 46, 61]},
    "dtype": "bfloat16",
    "eos_token_id": 248044,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 5120,
    "initializer_range": 0.02,
    "intermediate_size": 17408,
    "layer_types": ["sliding_attention"] * 4 + ["full_attention"],
    "max_position_embeddings": 262144,
    "max_window_layers": 5,
    "model_type": "qwen3",
    "num_attention_heads": 32,
    "num_hidden_layers": 5,
    "num_key_value_heads": 8,
    "num_target_layers": 64,
    "pad_token_id": 248044,
    "rms_norm_eps": 1e-06,
    "rope_scaling": None,
    "rope_theta": 10000000,
    "sliding_window": 2048,
    "tie_word_embeddings": False,
    "transformers_version": "5.5.3",
    "use_cache": True,
    "use_sliding_window": True,
    "vocab_size": 248320,
}

# SpecForge configs/qwen3-8b-dflash.json (the 4b one differs in hidden/intermediate size).
QWEN3_8B_DFLASH = {
    "architectures": ["DFlashDraftModel"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "auto_map": {"AutoModel": "dflash.DFlashDraftModel"},
    "block_size": 16,
    "bos_token_id": 151643,
    "dflash_config": {"mask_token_id": 151669, "target_layer_ids": [1, 9, 17, 25, 33]},
    "dtype": "bfloat16",
    "eos_token_id": 151645,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 12288,
    "layer_types": ["full_attention"] * 5,
    "max_position_embeddings": 40960,
    "max_window_layers": 5,
    "model_type": "qwen3",
    "num_attention_heads": 32,
    "num_hidden_layers": 5,
    "num_key_value_heads": 8,
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
QWEN3_4B_DFLASH = patch(QWEN3_8B_DFLASH, hidden_size=2560, intermediate_size=9728)

# SpecForge EAGLE-3 templates.
LLAMA3_8B_EAGLE3 = {
    "architectures": ["LlamaForCausalLMEagle3"],
    "bos_token_id": 128000,
    "eos_token_id": 128001,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 14336,
    "max_position_embeddings": 2048,
    "model_type": "llama",
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 1,
    "pad_token_id": 0,
    "rms_norm_eps": 1e-05,
    "tie_word_embeddings": False,
    "torch_dtype": "float16",
    "transformers_version": "4.28.1",
    "use_cache": True,
    "vocab_size": 128256,
    "draft_vocab_size": 32000,
}
QWEN3_8B_EAGLE3 = {
    "architectures": ["LlamaForCausalLMEagle3"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 151643,
    "eos_token_id": 151645,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 12288,
    "max_position_embeddings": 40960,
    "max_window_layers": 36,
    "model_type": "llama",
    "num_attention_heads": 32,
    "num_hidden_layers": 1,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-06,
    "rope_scaling": None,
    "rope_theta": 1000000,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.51.0",
    "use_cache": True,
    "use_sliding_window": False,
    "vocab_size": 151936,
    "draft_vocab_size": 32000,
}

# A DFlash2 drafter for Qwen3-8B: conv/selector fields, ids of its own choosing.
DFLASH2 = patch(
    QWEN3_8B_DFLASH,
    architectures=["DFlash2DraftModel"],
    auto_map={"AutoModel": "dflash2.DFlash2DraftModel"},
    dflash_config={
        "mask_token_id": 151669,
        "target_layer_ids": [2, 10, 18, 26, 34],
        "conv_kernel_size": 4,
        "conv_group_size": 4,
        "selector_rank": 64,
        "selector_top_k": 8,
    },
)

# A MiMo-style third-party drafter: block 8, mask 151669, SWA fields, its own target ids.
MIMO = patch(
    QWEN3_8B_DFLASH,
    block_size=8,
    dflash_config={
        "mask_token_id": 151669,
        "target_layer_ids": [3, 11, 19, 27, 34],
        "use_swa": True,
        "swa_window_size": 128,
        "attention_sink_bias": True,
    },
)

# The speculators format wrapping a Qwen3-8B DFlash drafter: aux ids = target ids + 1.
SPECULATORS = {
    "architectures": ["DFlashSpeculator"],
    "speculators_model_type": "dflash",
    "speculators_version": "0.3.0",
    "speculators_config": {
        "algorithm": "dflash",
        "default_proposal_method": "greedy",
        "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 15}],
        "verifier": {"name_or_path": "Qwen/Qwen3-8B", "architectures": ["Qwen3ForCausalLM"]},
    },
    "aux_hidden_state_layer_ids": [2, 10, 18, 26, 34],
    "mask_token_id": 151669,
    "block_size": 16,
    "transformer_layer_config": {
        "model_type": "qwen3",
        "hidden_size": 4096,
        "intermediate_size": 12288,
        "num_hidden_layers": 5,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 151936,
        "layer_types": ["full_attention"] * 5,
        "use_sliding_window": False,
        "sliding_window": None,
        "max_window_layers": 5,
    },
}

# A speculators-format EAGLE-3 head for Qwen3-8B as the speculators library (0.9.0) writes it:
# eagle_aux_hidden_state_layer_ids defaults to null.
SPECULATORS_EAGLE3 = {
    "architectures": ["Eagle3Speculator"],
    "speculators_model_type": "eagle3",
    "speculators_version": "0.3.0",
    "speculators_config": {
        "algorithm": "eagle3",
        "default_proposal_method": "greedy",
        "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 3}],
        "verifier": {"name_or_path": "Qwen/Qwen3-8B", "architectures": ["Qwen3ForCausalLM"]},
    },
    "draft_vocab_size": 32000,
    "eagle_aux_hidden_state_layer_ids": None,
    "norm_before_residual": True,
    "target_hidden_size": None,
    "transformer_layer_config": {
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 12288,
        "num_hidden_layers": 1,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "max_position_embeddings": 40960,
        "vocab_size": 151936,
    },
}

# TorchSpec's layout (torchspec/config/dflash_draft_config.json): flat keys, num_target_layers is
# the number of taps (5), the target's depth is target_num_hidden_layers; for Qwen3-8B.
TORCHSPEC_QWEN3_8B = {
    "architectures": ["DFlashDraftModel"],
    "model_type": "dflash",
    "hidden_size": 4096,
    "intermediate_size": 12288,
    "num_hidden_layers": 5,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 151936,
    "rms_norm_eps": 1e-06,
    "max_position_embeddings": 40960,
    "rope_theta": 1000000.0,
    "block_size": 16,
    "num_target_layers": 5,
    "target_hidden_size": 4096,
    "target_num_hidden_layers": 36,
    "target_layer_ids": [1, 9, 17, 25, 33],
    "mask_token_id": 151669,
    "tie_word_embeddings": False,
}

# A DeepSeek-V4-Flash-style target config with its DSpark head's dspark_* keys (block 5, three
# stages tapping the last three layers); sizes as in the public DeepSeek-V4-Flash config.
DEEPSEEK_V4_DSPARK = {
    "architectures": ["DeepseekV4ForCausalLM"],
    "model_type": "deepseek_v4",
    "hidden_size": 4096,
    "num_hidden_layers": 43,
    "num_attention_heads": 64,
    "vocab_size": 129280,
    "num_nextn_predict_layers": 3,
    "dspark_block_size": 5,
    "dspark_markov_rank": 256,
    "dspark_noise_token_id": 128799,
    "dspark_target_layer_ids": [40, 41, 42],
}

# A DeepSeek-V3-style target config that declares its MTP head (issue 30): the sizes of the
# public DeepSeek-V3 config, trimmed to the keys the rules read.
DEEPSEEK_V3_MTP = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "vocab_size": 129280,
    "num_nextn_predict_layers": 1,
}

# Targets: Qwen3-8B (flat config, Qwen3 added tokens in tokenizer_config.json only).
QWEN3_8B_TARGET = {
    "architectures": ["Qwen3ForCausalLM"],
    "bos_token_id": 151643,
    "eos_token_id": 151645,
    "hidden_size": 4096,
    "model_type": "qwen3",
    "max_position_embeddings": 40960,
    "num_hidden_layers": 36,
    "vocab_size": 151936,
}
YARN4 = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
QUANTIZED_TARGETS = {
    "Qwen3-8B-AWQ": {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": True},
    "Qwen3-8B-NVFP4": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]},
    "Qwen3-8B-QuaRot": {"quant_method": "w8a8", "bits": 8, "quarot": True},
}
QWEN3_ADDED = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
    "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
    "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>",
]
NOT_SPECIAL = ("tool_call", "tool_response", "fim_", "repo_name", "file_sep", "think")


def write_qwen3_tokenizer_config(path):
    """Qwen3's added tokens as its tokenizer_config.json lists them."""
    write(
        path,
        {
            "added_tokens_decoder": {
                str(151643 + i): {
                    "content": name,
                    "lstrip": False,
                    "normalized": False,
                    "rstrip": False,
                    "single_word": False,
                    "special": not any(p in name for p in NOT_SPECIAL),
                }
                for i, name in enumerate(QWEN3_ADDED)
            },
            "eos_token": "<|im_end|>",
            "tokenizer_class": "Qwen2Tokenizer",
        },
    )


def main():
    for d in ("cases", "clean", "real", "targets"):
        shutil.rmtree(os.path.join(ROOT, d), ignore_errors=True)

    write("targets/Qwen3-8B/config.json", QWEN3_8B_TARGET)
    # Issue 23: the same target quantized three ways (quantization_config as AutoAWQ and
    # ModelOpt write it; the rotation marker is our spelling: ModelSlim keeps its QuaRot
    # description in quant_model_description.json, which the tool does not read).
    for name, quant in QUANTIZED_TARGETS.items():
        write(f"targets/{name}/config.json", patch(QWEN3_8B_TARGET, quantization_config=quant))
    # Issue 42: Qwen3-8B with the YaRN scaling Qwen's model card gives for contexts past 32k
    # (factor 4, original 32768), and its rope_theta; same tokenizer.
    write("targets/Qwen3-8B-YaRN/config.json", patch(QWEN3_8B_TARGET, rope_theta=1000000, rope_scaling=YARN4))
    for target in ("Qwen3-8B", "Qwen3-8B-YaRN"):
        write_qwen3_tokenizer_config(f"targets/{target}/tokenizer_config.json")

    # Clean: these fire nothing.
    write("clean/qwen3.6-27b/config.json", QWEN36)
    write("clean/qwen3-8b/config.json", QWEN3_8B_DFLASH)
    write(
        "clean/qwen3-8b-eagle3/config.json",
        patch(QWEN3_8B_EAGLE3, eagle_aux_hidden_state_layer_ids=[2, 18, 33], draft_vocab_size=151936),
    )
    # Issue 42: a drafter with the target's YaRN scaling, flat and in transformers 5's
    # rope_parameters (one embedding, two spellings): clean on Qwen3-8B-YaRN.
    write("clean/qwen3-8b-yarn/config.json", patch(QWEN3_8B_DFLASH, rope_scaling=YARN4))
    nested = patch(QWEN3_8B_DFLASH, rope_parameters=dict(YARN4, rope_theta=1000000))
    del nested["rope_theta"], nested["rope_scaling"]
    nested["dflash_config"]["block_size"] = nested.pop("block_size")
    write("clean/qwen3-8b-yarn-nested/config.json", nested)
    # Fires draft-rope-mismatch on Qwen3-8B-YaRN: a base of 10000 (a trainer's default), and
    # the target's scaling dropped (rope_scaling null, as a converter that loses it writes).
    write("cases/draft-rope-theta/config.json", patch(QWEN3_8B_DFLASH, rope_theta=10000, rope_scaling=YARN4))
    write("cases/draft-rope-scaling-dropped/config.json", QWEN3_8B_DFLASH)

    # Real configs of other trainers: no false errors.
    write("real/qwen3-4b-dflash/config.json", QWEN3_4B_DFLASH)
    write("real/qwen3-8b-dflash/config.json", QWEN3_8B_DFLASH)
    write("real/llama3-8b-eagle3/config.json", LLAMA3_8B_EAGLE3)
    write("real/qwen3-8b-eagle3/config.json", QWEN3_8B_EAGLE3)
    write("real/dflash2-qwen3-8b/config.json", DFLASH2)
    write("real/speculators-dflash/config.json", SPECULATORS)
    write("real/mimo-style/config.json", MIMO)
    write("real/qwen3.5-27b-dflash/config.json", patch(QWEN36, layer_types=["full_attention"] * 5,
                                                       sliding_window=None, use_sliding_window=False,
                                                       bos_token_id=ABSENT, transformers_version="4.57.1"))

    # One case per rule (Qwen3.6-27B base unless named otherwise).
    q = QWEN36
    cases = {
        "field-type-mask-string": patch(q, dflash_config__mask_token_id="248070"),
        "field-type-ids-float": patch(q, dflash_config__target_layer_ids=[1, 16.0, 31, 46, 61]),
        "field-type-ids-negative": patch(q, dflash_config__target_layer_ids=[-1, 16, 31, 46, 61]),
        "field-type-ids-null": patch(q, dflash_config__target_layer_ids=None),
        "field-type-ids-empty": patch(q, dflash_config__target_layer_ids=[]),
        "field-type-ids-string": patch(q, dflash_config__target_layer_ids="1,16,31,46,61"),
        "field-type-block-size-string": patch(q, block_size="16"),
        "field-type-layer-types-null-list": patch(q, layer_types={"0": "full_attention"}),
        "field-type-hidden-negative": patch(q, hidden_size=-5120),
        "field-type-eos-float": patch(q, eos_token_id=248044.5),
        # Python's json writes NaN and the infinities as `NaN`, `Infinity` (issue 44).
        "non-finite-rope-theta": patch(q, rope_theta=float("nan")),
        "non-finite-rms-norm-eps": patch(q, rms_norm_eps=float("-inf")),
        "hidden-size-mismatch": patch(q, hidden_size=4096),
        "vocab-size-mismatch": patch(q, vocab_size=248077),
        "block-size-missing": patch(q, block_size=ABSENT),
        "mixed-layout": patch(q, dflash_config__block_size=8),
        "mixed-layout-across-fields": patch(q, rope_theta=ABSENT, rope_parameters={"rope_theta": 10000000, "rope_type": "default"}),
        "target-layer-ids-missing": patch(q, dflash_config={"mask_token_id": 248070}),
        "target-layer-ids-out-of-range": patch(q, dflash_config__target_layer_ids=[1, 16, 31, 46, 64]),
        "target-layer-ids-last-layer": patch(q, dflash_config__target_layer_ids=[1, 16, 31, 46, 63]),
        "target-layer-ids-order": patch(q, dflash_config__target_layer_ids=[1, 31, 16, 46, 61]),
        "target-layer-ids-formula": patch(q, dflash_config__target_layer_ids=[1, 17, 33, 49, 60]),
        "num-target-layers-mismatch": patch(q, num_target_layers=36),
        "fc-width": patch(q, dflash_config__target_layer_ids=[1, 10, 18, 27, 35, 44, 52, 61]),
        "mask-token-missing": patch(q, dflash_config={"target_layer_ids": [1, 16, 31, 46, 61]}),
        "mask-token-out-of-range": patch(q, dflash_config__mask_token_id=248320),
        "mask-token-collision": patch(q, dflash_config__mask_token_id=248046),
        # 248044 is the eos id; the drafter's pad id (also 248044) is dropped so only eos matches.
        "mask-token-collision-eos": patch(q, dflash_config__mask_token_id=248044, pad_token_id=ABSENT),
        "mask-token-text-token": patch(q, dflash_config__mask_token_id=248064),
        "layer-types-missing": patch(q, layer_types=ABSENT),
        "layer-types-length": patch(q, layer_types=["sliding_attention"] * 3 + ["full_attention"]),
        "layer-types-unknown": patch(q, layer_types=["sliding_attention"] * 4 + ["linear_attention"]),
        "sliding-window-missing": patch(q, sliding_window=ABSENT),
        "sliding-window-null": patch(q, sliding_window=None),
        "use-sliding-window-inconsistent": patch(q, use_sliding_window=False),
        # A model type whose config class keeps the window (llama): readers only disagree (info).
        "use-sliding-window-inconsistent-llama": patch(q, use_sliding_window=False, model_type="llama"),
        "token-id-out-of-range": patch(q, eos_token_id=300000),
        "token-id-not-special": patch(q, bos_token_id=151643),
        "token-id-target-mismatch": patch(q, eos_token_id=248046),
        # 37 on a 36-layer target: above the last boundary (36 = the last layer's output is valid).
        "eagle-aux-layer-ids-out-of-range": patch(QWEN3_8B_EAGLE3, eagle_config={"eagle_aux_hidden_state_layer_ids": [2, 18, 37]}),
        "not-a-drafter": {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 4096},
        # Rules from engine source (issue 11).
        "aux-ids-target-layer-ids-mismatch": patch(q, eagle_aux_hidden_state_layer_ids=[1, 16, 31, 46, 61]),
        "block-size-too-small": patch(q, block_size=1),
        "target-layer-ids-duplicate": patch(q, dflash_config__target_layer_ids=[1, 16, 16, 46, 61]),
        "conv-selector-pair": patch(DFLASH2, dflash_config__selector_top_k=ABSENT),
        "dflash-use-swa": patch(q, dflash_config__use_swa=True, dflash_config__swa_window_size=2048),
        "domino-config": patch(
            QWEN3_8B_DFLASH,
            architectures=["DominoDraftModel"],
            dflash_config__projector_type="domino",
            dflash_config__pure_draft_prefix_len=2,
            dflash_config__gru_hidden_dim=1024,
            dflash_config__emb_dim=256,
            dflash_config__shift_label=True,
        ),
        "dspark-export-layout": patch(q, architectures=["DSparkDraftModel"], dflash_config__markov_rank=256),
        "dspark-projector-type": patch(
            q,
            architectures=["DSparkDraftModel"],
            markov_rank=256,
            markov_head_type="vanilla",
            dflash_config__projector_type="domino",
        ),
        "dspark-markov": patch(q, architectures=["DSparkDraftModel"], markov_rank=256, markov_head_type="lstm"),
        "dspark-markov-absent": patch(q, architectures=["DSparkDraftModel"]),
        # vLLM 0.28+ reads the four DFlash2 settings from dflash_config without a default.
        "dflash2-settings-vllm": patch(DFLASH2, dflash_config__selector_rank=ABSENT, dflash_config__selector_top_k=ABSENT),
        "dflash2-conv-group-size": patch(DFLASH2, dflash_config__conv_group_size=3),
        # Issue 43: mlx-vlm (0.6.16 on) refuses a DFlash2 drafter whose num_target_layers is
        # not the target's layer count (validate_dflash_target).
        "dflash2-num-target-layers": patch(DFLASH2, num_target_layers=40),
        # Issue 43: a drafter written with transformers 5's rope_parameters and no top-level
        # rope_theta, which dflash-mlx's DFlashDraftModelArgs requires (omlx#2317).
        "omlx-rope-parameters": patch(
            q, rope_theta=ABSENT, rope_parameters={"rope_type": "default", "rope_theta": 10000000}
        ),
        # The exported Markov layout under the training architecture: vLLM 0.29+ serves it.
        "dspark-export-layout-top-level": patch(
            q, architectures=["DSparkDraftModel"], markov_rank=256, markov_head_type="vanilla"
        ),
        "conv-selector-top-level": patch(
            DFLASH2,
            dflash_config__selector_rank=ABSENT,
            dflash_config__selector_top_k=ABSENT,
            selector_rank=64,
            selector_top_k=8,
        ),
        "eagle-aux-layer-ids-count": patch(QWEN3_8B_EAGLE3, eagle_aux_hidden_state_layer_ids=[2, 10, 18, 33]),
        "eagle-aux-layer-ids-nested": patch(QWEN3_8B_EAGLE3, eagle_config={"eagle_aux_hidden_state_layer_ids": [2, 18, 33]}),
        "eagle-max-position-short": patch(QWEN3_8B_EAGLE3, max_position_embeddings=2048, eagle_aux_hidden_state_layer_ids=[2, 18, 33]),
        # Issue 42: a DFlash drafter built for 8,192 positions beside a 40,960-position target.
        "draft-max-position-short": patch(QWEN3_8B_DFLASH, max_position_embeddings=8192),
        "mask-token-string": patch(q, dflash_config__mask_token="<|audio_start|>", dflash_config__mask_token_id=248077),
        "mask-token-string-added": patch(q, dflash_config__mask_token="<|MASK|>", dflash_config__mask_token_id=ABSENT),
        "parallel-drafting-token-missing": patch(QWEN3_8B_EAGLE3, architectures=["PEagleDraftModel"], eagle_aux_hidden_state_layer_ids=[2, 18, 33]),
        "rope-neox-style": patch(q, is_neox_style=False),
        "sample-from-anchor-dflash": patch(q, dflash_config__sample_from_anchor=True),
        "target-hidden-size-null": patch(QWEN3_8B_EAGLE3, target_hidden_size=None, eagle_aux_hidden_state_layer_ids=[2, 18, 33]),
    }
    # Issue 22: rules whose truth depends on the engine, one fixture each (tests/lint_cli.rs
    # BY_ENGINE asserts the code and severity under --engine vllm, --engine sglang and none).
    cases.update({
        # id 36 on a 36-layer target is the last layer's output (sglang PR 32334): info only.
        "eagle-aux-layer-ids-final-layer": patch(QWEN3_8B_EAGLE3, eagle_aux_hidden_state_layer_ids=[2, 18, 36]),
        # A head that reads no aux states names no aux layers.
        "eagle-aux-unused": patch(QWEN3_8B_EAGLE3, eagle_config={"use_aux_hidden_state": False}),
        "target-layer-ids-missing-dflash2": patch(DFLASH2, dflash_config__target_layer_ids=ABSENT),
        "field-type-block-size-float": patch(q, block_size=16.0),
        # The mask id is the drafter's pad placeholder (TorchSpec PR 133).
        "mask-token-collision-pad": patch(q, dflash_config__mask_token_id=248046, pad_token_id=248046),
        "torchspec-layout": TORCHSPEC_QWEN3_8B,
        # Without target_num_hidden_layers: num_target_layers 5 is below the ids, so not a depth.
        "torchspec-layout-taps-only": patch(TORCHSPEC_QWEN3_8B, target_num_hidden_layers=ABSENT),
        # DeepSeek-V4 style: a DSpark head described by dspark_* keys of the target's own config.
        "dspark-embedded": DEEPSEEK_V4_DSPARK,
        # Only dspark_block_size and the Markov rank: still recognised as a DSpark head.
        "dspark-embedded-block-only": patch(DEEPSEEK_V4_DSPARK, dspark_noise_token_id=ABSENT, dspark_target_layer_ids=ABSENT),
        # Issue 30: MTP heads inside a target config, judged on the config (its own target) and,
        # with --engine vllm, on the deployment lint's flags describe.
        "mtp-target": DEEPSEEK_V3_MTP,
        "mtp-target-no-base-layers": patch(DEEPSEEK_V3_MTP, num_hidden_layers=ABSENT),
        "mtp-target-no-head": patch(DEEPSEEK_V3_MTP, num_nextn_predict_layers=0),
        "mtp-target-two-layers": patch(DEEPSEEK_V3_MTP, num_nextn_predict_layers=2),
        "mtp-target-v41": patch(DEEPSEEK_V3_MTP, model_type="deepseek_v41", num_nextn_predict_layers=3),
        # Issue 42: a DeepSeek-V4 checkpoint with one classic MTP layer and no DSpark keys (the
        # base V4-Flash shape), the control for a DSpark checkpoint served with method mtp.
        "mtp-target-v4": patch(DEEPSEEK_V4_DSPARK, num_nextn_predict_layers=1, dspark_block_size=ABSENT, dspark_markov_rank=ABSENT, dspark_noise_token_id=ABSENT, dspark_target_layer_ids=ABSENT),
        "mtp-target-mimo-v2": patch(DEEPSEEK_V3_MTP, architectures=["MiMoV2FlashForCausalLM"], model_type="mimo_v2_flash", num_nextn_predict_layers=3),
    })
    # Issue 23: quantization, export defaults, shared heads (tests/lint_cli.rs BY_ENGINE and
    # engine_versions_change_the_verdict; each names its public report).
    eagle = patch(QWEN3_8B_EAGLE3, eagle_aux_hidden_state_layer_ids=[2, 18, 33])
    dspark = patch(QWEN3_8B_DFLASH, architectures=["DSparkDraftModel"], markov_rank=256, markov_head_type="vanilla")
    cases.update({
        # sglang PR 28196: an unquantized EAGLE-3 head for an AWQ target.
        "quant-eagle3-unquantized": eagle,
        # sglang issue 39087: syvai/Qwen3.8-27B-DFlash2-W4A16 (compressed-tensors W4A16).
        "quantized-dflash2": patch(DFLASH2, quantization_config={
            "quant_method": "compressed-tensors",
            "format": "pack-quantized",
            "config_groups": {"group_0": {"targets": ["Linear"], "format": "pack-quantized",
                                          "weights": {"num_bits": 4, "group_size": 128, "type": "int", "symmetric": True}}},
            "ignore": ["lm_head"],
        }),
        # vllm PR 49133: an MXFP4 DSpark drafter (anchor-first, declared) for an NVFP4 target.
        "dspark-mxfp4": patch(dspark, sample_from_anchor=True,
                              quantization_config={"quant_method": "mxfp4", "ignore": ["lm_head"]}),
        # vllm-ascend issue 5974 (EAGLE-3) and PR 12775 (DFlash) on a QuaRot target.
        "eagle3-quarot": eagle,
        "dflash-quarot": QWEN3_8B_DFLASH,
        # vllm issue 56792: a SpecForge/DeepSpec DSpark export without sample_from_anchor.
        "dspark-sample-from-anchor-implicit": dspark,
        "dspark-sample-from-anchor-declared": patch(dspark, sample_from_anchor=False),
        # Issue 42: the same export after SpecForge's normalize_dflash_export.py (what is served:
        # Qwen3DSparkModel, Markov settings copied to the top level, dflash_config.projector_type
        # kept), still without the key; and a Qwen3DSparkModel without SpecForge's projector_type
        # (DeepSeek's own anchor-first layout), the control.
        "dspark-sample-from-anchor-normalized": patch(
            dspark, architectures=["Qwen3DSparkModel"],
            dflash_config={**QWEN3_8B_DFLASH["dflash_config"], "projector_type": "dspark", "markov_rank": 256}),
        "dspark-sample-from-anchor-native": patch(dspark, architectures=["Qwen3DSparkModel"]),
        # vllm PR 38111: a speculators EAGLE-3 head trained with norm_before_fc.
        "norm-before-fc": patch(eagle, norm_before_fc=True),
        # vllm PR 42143: NVIDIA's export nests it under eagle_config.
        "norm-before-fc-nested": patch(eagle, eagle_config={"norm_before_fc": True}),
        # vllm issue 50722: empty verifier, null target_hidden_size, Llama's bos/eos.
        "speculators-verifier-missing": patch(SPECULATORS, speculators_config__verifier__name_or_path="",
                                              target_hidden_size=None),
        # vllm-ascend issue 11374 / vllm PR 27732: a 32000-row lm_head of its own.
        "draft-lm-head-shared": eagle,
    })
    # Issue 32: rules that were wrong on real configs, read against the engines' releases.
    cases.update({
        # A null list means "default layers" in vLLM and SGLang: not a wrong type.
        "eagle-aux-ids-null": patch(QWEN3_8B_EAGLE3, eagle_aux_hidden_state_layer_ids=None),
        # The speculators library writes null by default and trains on [2, n // 2, n - 3].
        "speculators-eagle3-aux-ids-null": SPECULATORS_EAGLE3,
        # vLLM calls len() on it; SGLang 0.5.23 reads None as absent.
        "target-layer-ids-null": patch(q, dflash_config__target_layer_ids=None),
        # An FP8 DFlash drafter: no report of it in SGLang (issue 39087 is a W4A16 DFlash2 one).
        "quantized-dflash-fp8": patch(QWEN3_8B_DFLASH, quantization_config={
            "quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}),
    })
    for name, cfg in cases.items():
        write(f"cases/{name}/config.json", cfg)
    write_profiles()


# Issue 33: speculation_profile.json beside a drafter, in the shapes NVIDIA Model-Optimizer's
# PRs 2247/2313/2315 write. The numbers are the producers' own test case
# (examples/specdec_bench/tests/test_speculation_profile.py at c170403378778399a7834c79973c832e96302c24:
# histogram {1: 40, 2: 30, 3: 30} at K 3 -> marginals [0.6, 0.3, 0.0], conditionals [0.6, 0.5, 0.0],
# AL 1.9; "flags a wrong mean" puts 3.5 there).
PROFILE_SPECDEC_BENCH = {
    "schema_version": "1.0", "measured": True, "method": "eagle3",
    "draft_checkpoint": "clean/qwen3-8b-eagle3", "target_model": "Qwen/Qwen3-8B",
    "num_speculative_tokens": 3, "block_size": None, "max_supported_k": 3,
    "verification_method": "longest_prefix",
    "conditional_accept_rates": [0.6, 0.5, 0.0], "marginal_accept_rates": [0.6, 0.3, 0.0],
    "mean_accept_length": 1.9, "mean_accept_length_per_request": 1.9,
    "accept_length_model": "chain_analytic", "accept_length_by_k": {"3": 1.9},
    "acceptance_length_histogram": {"1": 40, "2": 30, "3": 30}, "per_category": None,
    "measurement_conditions": {"dataset": "mt_bench", "concurrency": 1, "engine": "VLLM"},
    "validation": {
        "mean_consistency": {"implied_mean_accept_length": 1.9, "reported_mean_accept_length": 1.9,
                             "abs_delta": 0.0, "tolerance": 0.02, "passed": True},
        "marginal_monotonicity": {"passed": True, "violations": []},
    },
}
# ar_validate's shape (PR 2315): a producer, no method, identities or max_supported_k.
PROFILE_AR_VALIDATE = {
    "schema_version": "1.0", "measured": True, "producer": "ar_validate", "num_speculative_tokens": 3,
    "conditional_accept_rates": [0.6, 0.5, 0.0], "marginal_accept_rates": [0.6, 0.3, 0.0],
    "mean_accept_length": 1.9, "mean_accept_length_per_request": 1.9,
    "acceptance_length_histogram": {"1": 40, "2": 30, "3": 30},
    "measurement_conditions": {"dataset": "mt_bench", "osl": 32, "num_samples": 80,
                               "validation": "online (ground truth recomputed after each accepted token)"},
}
# stub_profile's shape: measured false, zero rates, no mean, no validation.
PROFILE_STUB = dict(PROFILE_SPECDEC_BENCH, measured=False, conditional_accept_rates=[0.0, 0.0, 0.0],
                    marginal_accept_rates=[0.0, 0.0, 0.0], mean_accept_length=None,
                    accept_length_by_k={}, validation=None)


def write_profiles():
    eagle = patch(QWEN3_8B_EAGLE3, eagle_aux_hidden_state_layer_ids=[2, 18, 33], draft_vocab_size=151936)
    write("clean/qwen3-8b-eagle3/speculation_profile.json", PROFILE_AR_VALIDATE)
    cases = {
        "profile-unmeasured": PROFILE_STUB,
        "profile-inconsistent": dict(PROFILE_SPECDEC_BENCH, mean_accept_length=3.5),
        "profile-method": dict(PROFILE_SPECDEC_BENCH, method="dflash"),
        "profile-max-k": PROFILE_SPECDEC_BENCH,
        "profile-identity": dict(PROFILE_SPECDEC_BENCH, draft_checkpoint="yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"),
    }
    for name, profile in cases.items():
        write(f"cases/{name}/config.json", eagle)
        write(f"cases/{name}/speculation_profile.json", profile)


main()
