#!/usr/bin/env python3
"""Writes the file cases of the bad-input corpus (cases/*.json).

Syntax cases are written literally; wrong-type cases are the incident's authoritative config
(fixtures/incident/authority/config.json) with exactly one field replaced, so that each finding
is about that field alone. Cases that cannot be committed as files (huge, unreadable, symlinks,
directories, deep nesting, invalid UTF-8) are set up by tests/bad_input.rs from manifest.toml.
Run from the repository root: python3 tests/bad-input/generate.py
"""
import json
import os

ROOT = os.path.dirname(os.path.abspath(__file__))
AUTH = open(os.path.join(ROOT, "..", "..", "fixtures", "incident", "authority", "config.json")).read()

LITERAL = {
    "empty": "",
    "whitespace-only": "  \n\t\n   \n",
    "truncated-object": '{\n  "architectures": [\n    "DFlashDraftModel"\n  ],\n  "block_size": 1',
    "truncated-string": '{\n  "model_type": "qwe',
    "truncated-after-key": '{\n  "block_size"',
    "trailing-comma-object": '{\n  "block_size": 16,\n  "vocab_size": 248320,\n}\n',
    "trailing-comma-array": '{\n  "target_layer_ids": [1, 16, 31,]\n}\n',
    "comment-line": '{\n  // the mask id\n  "mask_token_id": 248070\n}\n',
    "comment-block": '{\n  "mask_token_id": /* audio_start */ 248070\n}\n',
    "single-quotes": "{'block_size': 16}\n",
    "unquoted-key": "{block_size: 16}\n",
    "two-documents": '{"block_size": 16}\n{"block_size": 8}\n',
    "garbage-after": '{"block_size": 16} x\n',
    "control-char-in-string": '{"model_type": "qwen\u00013"}\n',
    "bad-escape": '{"model_type": "qwen\\x33"}\n',
    "lone-surrogate": '{"model_type": "\\ud800"}\n',
    "top-array": "[\n  {\"block_size\": 16}\n]\n",
    "top-string": '"config"\n',
    "top-number": "248070\n",
    "top-null": "null\n",
    "top-true": "true\n",
    "leading-zero": '{"block_size": 016}\n',
    "nan-lowercase": '{"rope_theta": nan}\n',
}

# (case, old text, new text) applied once to the authoritative config.
MUTATIONS = [
    ("nan-rope-theta", '"rope_theta": 10000000', '"rope_theta": NaN'),
    ("infinity-sliding-window", '"sliding_window": 2048', '"sliding_window": Infinity'),
    ("neg-infinity-rms-norm-eps", '"rms_norm_eps": 1e-06', '"rms_norm_eps": -Infinity'),
    ("nan-mask-token-id", '"mask_token_id": 248070', '"mask_token_id": NaN'),
    ("duplicate-key-last-wrong", '"mask_token_id": 248070', '"mask_token_id": 248070,\n    "mask_token_id": 248064'),
    ("duplicate-key-last-right", '"mask_token_id": 248070', '"mask_token_id": 248064,\n    "mask_token_id": 248070'),
    ("string-mask-token-id", '"mask_token_id": 248070', '"mask_token_id": "248070"'),
    ("float-mask-token-id", '"mask_token_id": 248070', '"mask_token_id": 248070.0'),
    ("fractional-mask-token-id", '"mask_token_id": 248070', '"mask_token_id": 248070.5'),
    ("exponent-mask-token-id", '"mask_token_id": 248070', '"mask_token_id": 2.4807e5'),
    ("negative-mask-token-id", '"mask_token_id": 248070', '"mask_token_id": -1'),
    ("mask-token-id-above-2-32", '"mask_token_id": 248070', '"mask_token_id": 4294967296'),
    ("mask-token-id-above-2-64", '"mask_token_id": 248070', '"mask_token_id": 18446744073709551616'),
    ("mask-token-id-huge", '"mask_token_id": 248070', '"mask_token_id": ' + "9" * 60),
    ("eos-token-id-out-of-range", '"eos_token_id": 248044', '"eos_token_id": 248320'),
    ("eos-token-id-list-with-string", '"eos_token_id": 248044', '"eos_token_id": [248044, "248046"]'),
    ("bos-token-id-bool", '"bos_token_id": null', '"bos_token_id": true'),
    ("null-target-layer-ids", '"target_layer_ids": [\n      1,\n      16,\n      31,\n      46,\n      61\n    ]', '"target_layer_ids": null'),
    ("empty-target-layer-ids", '"target_layer_ids": [\n      1,\n      16,\n      31,\n      46,\n      61\n    ]', '"target_layer_ids": []'),
    ("strings-in-target-layer-ids", '"target_layer_ids": [\n      1,\n      16,\n      31,\n      46,\n      61\n    ]', '"target_layer_ids": [1, "16", 31, 46, 61]'),
    ("float-target-layer-ids", '"target_layer_ids": [\n      1,\n      16,\n      31,\n      46,\n      61\n    ]', '"target_layer_ids": [1.0, 16.0, 31.0, 46.0, 61.0]'),
    ("negative-target-layer-id", '"target_layer_ids": [\n      1,\n      16,\n      31,\n      46,\n      61\n    ]', '"target_layer_ids": [-1, 16, 31, 46, 61]'),
    ("target-layer-ids-as-object", '"target_layer_ids": [\n      1,\n      16,\n      31,\n      46,\n      61\n    ]', '"target_layer_ids": {"0": 1}'),
    ("layer-types-string", '"layer_types": [\n    "sliding_attention",\n    "sliding_attention",\n    "sliding_attention",\n    "sliding_attention",\n    "full_attention"\n  ]', '"layer_types": "sliding_attention"'),
    ("layer-types-unknown-value", '"full_attention"\n  ]', '"linear_attention"\n  ]'),
    ("layer-types-null", '"layer_types": [\n    "sliding_attention",\n    "sliding_attention",\n    "sliding_attention",\n    "sliding_attention",\n    "full_attention"\n  ]', '"layer_types": null'),
    ("layer-types-empty", '"layer_types": [\n    "sliding_attention",\n    "sliding_attention",\n    "sliding_attention",\n    "sliding_attention",\n    "full_attention"\n  ]', '"layer_types": []'),
    ("dflash-config-list", '"dflash_config": {\n    "mask_token_id": 248070,\n    "target_layer_ids": [\n      1,\n      16,\n      31,\n      46,\n      61\n    ]\n  }', '"dflash_config": [248070, [1, 16, 31, 46, 61]]'),
    ("dflash-config-null", '"dflash_config": {\n    "mask_token_id": 248070,\n    "target_layer_ids": [\n      1,\n      16,\n      31,\n      46,\n      61\n    ]\n  }', '"dflash_config": null'),
    ("block-size-string", '"block_size": 16', '"block_size": "16"'),
    ("block-size-float", '"block_size": 16', '"block_size": 16.0'),
    ("block-size-negative", '"block_size": 16', '"block_size": -16'),
    ("architectures-string", '"architectures": [\n    "DFlashDraftModel"\n  ]', '"architectures": "DFlashDraftModel"'),
    ("unicode-key", '"block_size": 16', '"block_size": 16,\n  "bl\\u00f6ck_size": 16'),
]

os.makedirs(os.path.join(ROOT, "cases"), exist_ok=True)
for name, text in LITERAL.items():
    with open(os.path.join(ROOT, "cases", name + ".json"), "w", newline="") as f:
        f.write(text)
for name, old, new in MUTATIONS:
    assert AUTH.count(old) == 1, (name, old)
    with open(os.path.join(ROOT, "cases", name + ".json"), "w", newline="") as f:
        f.write(AUTH.replace(old, new))
print(len(LITERAL) + len(MUTATIONS), "cases written")
