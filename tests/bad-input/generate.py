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
    # Issue 32: text that would act on a terminal or a CI log if printed raw (an annotation
    # forged on a line of its own, a masked word, a retitled and cleared terminal, reordered text).
    ("hostile-key", '"block_size": 16', '"block_size": 16,\n  "x\\n::error file=README.md::INJECTED\\u001b]0;pwned\\u0007\\u202e": 1'),
    ("hostile-string-value", '"model_type": "qwen3"', '"model_type": "qwen3\\r\\n::add-mask::OK\\u001b[2J\\u009b31m ##[add-mask]word"'),
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

# ---------------------------------------------------------------------------------------------
# The other input surfaces: safetensors headers (`weights`, `lint`), launch commands and files
# (`launch`), Prometheus text (`acceptance`). Written by hand, byte by byte, so that this script
# needs nothing but Python; a hostile header cannot be made with the `safetensors` package anyway.

import struct

# A tiny DFlash drafter (1 layer, hidden 8) whose config and weights agree: the `weights-valid`
# control case checks clean, so every other weights case differs from it by one defect.
H, HEADS, KV, HD, I, VOCAB, LAYERS, IDS = 8, 2, 1, 4, 16, 32, 1, [1, 3, 5]
TINY_DFLASH = {
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


def tiny_tensors():
    """(name, shape) of every tensor of TINY_DFLASH, in F16."""
    p = "layers.0."
    return [
        (p + "self_attn.q_proj.weight", [HEADS * HD, H]),
        (p + "self_attn.k_proj.weight", [KV * HD, H]),
        (p + "self_attn.v_proj.weight", [KV * HD, H]),
        (p + "self_attn.o_proj.weight", [H, HEADS * HD]),
        (p + "self_attn.q_norm.weight", [HD]),
        (p + "self_attn.k_norm.weight", [HD]),
        (p + "input_layernorm.weight", [H]),
        (p + "post_attention_layernorm.weight", [H]),
        (p + "mlp.gate_proj.weight", [I, H]),
        (p + "mlp.up_proj.weight", [I, H]),
        (p + "mlp.down_proj.weight", [H, I]),
        ("fc.weight", [H, len(IDS) * H]),
        ("hidden_norm.weight", [H]),
        ("norm.weight", [H]),
    ]


def header_of(tensors, dtype="F16", metadata=True):
    """The header dict of tensors laid out back to back, as the safetensors writers lay them."""
    h = {"__metadata__": {"format": "pt"}} if metadata else {}
    at = 0
    for name, shape in tensors:
        n = 1
        for d in shape:
            n *= d
        h[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + 2 * n]}
        at += 2 * n
    return h, at


def st_file(header, data_len, raw=None, pad=b" "):
    """8-byte little-endian length, the JSON (or `raw` bytes) padded to 8, `data_len` bytes."""
    text = raw if raw is not None else json.dumps(header, separators=(",", ":")).encode()
    text += pad * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + bytes(data_len)


def weights_cases():
    base, data_len = header_of(tiny_tensors())
    valid = st_file(base, data_len)
    n = struct.unpack("<Q", valid[:8])[0]

    def mutate(fn):
        h = json.loads(json.dumps(base))
        fn(h)
        return h

    def set_entry(name, key, value):
        return lambda h: h[name].__setitem__(key, value)

    q = "layers.0.self_attn.q_proj.weight"
    k = "layers.0.self_attn.k_proj.weight"
    last = "norm.weight"

    def overlap(h):
        # k starts where q starts: two tensors share bytes.
        size = h[k]["data_offsets"][1] - h[k]["data_offsets"][0]
        h[k]["data_offsets"] = [h[q]["data_offsets"][0], h[q]["data_offsets"][0] + size]

    def past_end(h):
        # The last tensor grows by 4 rows, consistently with its shape: it ends past the file.
        h[last]["shape"] = [H + 4]
        h[last]["data_offsets"][1] += 8

    def gap(h):
        # Every tensor after q moves 8 bytes on: a hole in the data section.
        for name, e in h.items():
            if name not in ("__metadata__", q) and e["data_offsets"][0] >= h[q]["data_offsets"][1]:
                e["data_offsets"] = [e["data_offsets"][0] + 8, e["data_offsets"][1] + 8]

    # 8 tensors of 2^61 - 1 bytes each: offsets up to 2^64 - 8, which fit a u64; the header's end
    # plus that overflows one.
    big = (1 << 61) - 1
    wrap = {f"t{i}": {"dtype": "U8", "shape": [big], "data_offsets": [i * big, (i + 1) * big]}
            for i in range(8)}
    deep = b'{"__metadata__":{"x":' + b"[" * 10000 + b"]" * 10000 + b"}}"
    files = {
        "weights-valid": valid,
        "weights-empty": b"",
        "weights-truncated-length-prefix": valid[:5],
        "weights-length-past-eof": struct.pack("<Q", n + 4096) + valid[8:],
        "weights-length-over-limit": struct.pack("<Q", 25_000_001) + valid[8:],
        "weights-length-huge": struct.pack("<Q", (1 << 63) + 7) + valid[8:],
        "weights-length-u64-max": b"\xff" * 8 + valid[8:],
        "weights-truncated-header": valid[: 8 + n // 2],
        "weights-truncated-data": valid[:-16],
        "weights-trailing-bytes": valid + bytes(8),
        "weights-header-not-json": st_file(None, data_len, raw=b"{not json: " + b"x" * 40 + b"}"),
        "weights-header-array": st_file(None, 0, raw=b"[1, 2, 3]"),
        "weights-header-string": st_file(None, 0, raw=b'"model.safetensors"'),
        "weights-header-null": st_file(None, 0, raw=b"null"),
        "weights-header-not-utf8": struct.pack("<Q", n) + b'{"\xff\xfe' + valid[11:],
        "weights-header-nul-padding": st_file(base, data_len, pad=b"\0"),
        "weights-header-deep-nesting": st_file(None, 0, raw=deep),
        "weights-overlapping-offsets": st_file(mutate(overlap), data_len),
        "weights-offsets-past-end": st_file(mutate(past_end), data_len),
        "weights-offsets-gap": st_file(mutate(gap), data_len + 8),
        "weights-offsets-reversed": st_file(mutate(set_entry(last, "data_offsets", [data_len, data_len - 2 * H])), data_len),
        "weights-offsets-size-mismatch": st_file(mutate(set_entry(last, "shape", [H - 1])), data_len),
        "weights-offsets-wrap-u64": st_file(wrap, 0),
        "weights-offsets-negative": st_file(mutate(set_entry(q, "data_offsets", [-64, 64])), data_len),
        "weights-shape-negative": st_file(mutate(set_entry(q, "shape", [-8, -8])), data_len),
        "weights-shape-float": st_file(mutate(set_entry(q, "shape", [8.0, 8])), data_len),
        "weights-shape-overflow": st_file({"a": {"dtype": "F16", "shape": [1 << 32, 1 << 32, 0], "data_offsets": [0, 0]}}, 0),
        "weights-dtype-unknown": st_file(mutate(set_entry(q, "dtype", "Q4_K")), data_len),
        "weights-dtype-lowercase": st_file(mutate(set_entry(q, "dtype", "f16")), data_len),
        "weights-metadata-not-string": st_file(mutate(lambda h: h["__metadata__"].__setitem__("format", 1)), data_len),
        "weights-no-tensors": st_file({"__metadata__": {"format": "pt"}}, 0),
    }
    # Duplicate keys cannot be made with json.dumps: the last `q` entry wins, leaving a hole.
    dup = json.dumps(base, separators=(",", ":")).encode()
    dup = dup[:-1] + b',"' + q.encode() + b'":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}'
    files["weights-duplicate-tensor"] = st_file(None, data_len, raw=dup)
    out = os.path.join(ROOT, "cases", "weights")
    shutil.rmtree(out, ignore_errors=True)
    for name, data in files.items():
        d = os.path.join(out, name)
        os.makedirs(d)
        with open(os.path.join(d, "model.safetensors"), "wb") as f:
            f.write(data)

    # Sharded: the valid file as shard 1 of 2, and an index.
    def index_case(name, weight_map=None, raw=None, shards=("model-00001-of-00002.safetensors",)):
        d = os.path.join(out, name)
        os.makedirs(d)
        for s in shards:
            with open(os.path.join(d, s), "wb") as f:
                f.write(valid)
        if raw is None:
            raw = json.dumps({"metadata": {"total_size": data_len}, "weight_map": weight_map}, indent=2).encode()
        with open(os.path.join(d, "model.safetensors.index.json"), "wb") as f:
            f.write(raw)

    names = [t for t, _ in tiny_tensors()]
    one = "model-00001-of-00002.safetensors"
    index_case("index-missing-shard", dict({t: one for t in names}, **{"norm.weight": "model-00002-of-00002.safetensors"}))
    index_case("index-path-escape", dict({t: one for t in names}, **{"norm.weight": "../outside.safetensors"}))
    index_case("index-absolute-path", dict({t: one for t in names}, **{"norm.weight": "/etc/passwd"}))
    index_case("index-not-json", raw=b'{"weight_map": {"fc.weight": "model-00001-of-00002.safetensors",')
    index_case("index-weight-map-list", raw=b'{"weight_map": ["model-00001-of-00002.safetensors"]}')
    index_case("index-shard-not-string", raw=b'{"weight_map": {"fc.weight": 1}}')
    index_case("index-not-utf8", raw=b'{"weight_map": {"fc.weight": "model-\xff.safetensors"}}')
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(TINY_DFLASH, f, indent=2)
        f.write("\n")
    return len(files) + 7 + mtp_cases(out)


# A tiny Qwen3.5-style target with an MTP head (issue 30): one trunk layer stored W4A16
# (compressed-tensors pack-quantized: I32 packed weight, F16 scale), the MTP head in BF16.
MTP_TARGET = {
    "architectures": ["Qwen3_5ForConditionalGeneration"],
    "model_type": "qwen3_5",
    "text_config": {"num_hidden_layers": 1, "mtp_num_hidden_layers": 1, "hidden_size": H},
    "quantization_config": {
        "quant_method": "compressed-tensors",
        "format": "pack-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "group_size": 32}}},
        "ignore": ["lm_head", "re:^mtp.*"],
    },
}


def mixed_header(entries):
    """The header dict of (name, dtype, shape) laid out back to back, and its data length."""
    size = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4}
    h = {"__metadata__": {"format": "pt"}}
    at = 0
    for name, dtype, shape in entries:
        n = size[dtype]
        for d in shape:
            n *= d
        h[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + n]}
        at += n
    return h, at


def mtp_cases(out):
    trunk = [
        ("model.language_model.layers.0.mlp.gate_proj.weight_packed", "I32", [I, H // 8]),
        ("model.language_model.layers.0.mlp.gate_proj.weight_scale", "F16", [I, H // 32]),
        ("model.language_model.embed_tokens.weight", "BF16", [VOCAB, H]),
    ]
    head = [
        ("mtp.fc.weight", "BF16", [H, 2 * H]),
        ("mtp.layers.0.mlp.gate_proj.weight", "BF16", [I, H]),
        ("mtp.norm.weight", "BF16", [H]),
    ]
    # The header says BF16 for an MTP weight and lists a scale beside it.
    lying = head + [("mtp.layers.0.mlp.gate_proj.weight_scale", "F16", [I, H // 32])]

    def config(**quant):
        c = json.loads(json.dumps(MTP_TARGET))
        c["quantization_config"].update(quant)
        return c

    def int4(**quant):
        """An AWQ/GPTQ quantization_config in place of the compressed-tensors one."""
        c = json.loads(json.dumps(MTP_TARGET))
        c["quantization_config"] = dict({"bits": 4, "group_size": 128}, **quant)
        return c

    def case(name, cfg, entries, extra=None):
        d = os.path.join(out, name)
        os.makedirs(d)
        header, data_len = mixed_header(entries)
        with open(os.path.join(d, "model.safetensors"), "wb") as f:
            f.write(st_file(header, data_len))
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")
        for filename, text in (extra or {}).items():
            with open(os.path.join(d, filename), "w") as f:
                f.write(text)

    spellings = config()
    spellings["num_nextn_predict_layers"] = 2
    cases = {
        "weights-mtp-valid": (config(), trunk + head),
        "weights-mtp-spellings-disagree": (spellings, trunk + head),
        "weights-mtp-dropped": (config(), trunk),
        "weights-mtp-prefix-never-matches": (config(ignore=["lm_head", "mtp"]), trunk + head),
        "weights-mtp-header-lies": (config(ignore=["lm_head", "mtp.fc"]), trunk + lying),
        "weights-mtp-hostile-regex": (config(ignore=["re:(a*)*b", "re:(?!lm_head).*", "re:a{1000}{1000}"]), trunk + head),
        "weights-mtp-patterns-over-cap": (config(ignore=[f"re:^mtp.x{i}" for i in range(1025)]), trunk + head),
        "weights-mtp-exclude-not-list": (config(ignore="re:^mtp.*"), trunk + head),
        # AWQ and GPTQ lists: the wrong shape, and more `dynamic` keys than are compiled.
        "weights-mtp-awq-not-list": (int4(quant_method="awq", modules_to_not_convert="mtp"), trunk + head),
        "weights-mtp-gptq-dynamic-not-object": (int4(quant_method="gptq", dynamic=["-:.*mtp.*"]), trunk + head),
        "weights-mtp-gptq-dynamic-over-cap": (
            int4(quant_method="gptq", dynamic={f"-:mtp\\.x{i}": {} for i in range(1025)}), trunk + head),
    }
    for name, (cfg, entries) in cases.items():
        case(name, cfg, entries)
    # The quantization in hf_quant_config.json beside a config.json that has none, as older
    # ModelOpt exports ship it and vLLM reads it: broken JSON, and an exclude list that is a string.
    bare = json.loads(json.dumps(MTP_TARGET))
    del bare["quantization_config"]
    modelopt = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "exclude_modules": "mtp*"}}
    beside = {
        "weights-mtp-hf-quant-config-invalid": '{"producer": {"name": "modelopt"}, "quantization": {',
        "weights-mtp-hf-quant-config-not-list": json.dumps(modelopt),
    }
    for name, text in beside.items():
        case(name, bare, trunk + head, {"hf_quant_config.json": text})
    return len(cases) + len(beside)


# A Pod of one vLLM container, its `env` entries and `args` filled in.
K8S_POD = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n      - name: vllm\n"
           "        image: vllm/vllm-openai\n        env:\n{env}        args: {args}\n")

LAUNCH_FILES = {
    "valid.sh": "#!/usr/bin/env bash\nexport VLLM_USE_V2_MODEL_RUNNER=1\nvllm serve Qwen/Qwen3-8B \\\n"
                "  --speculative-config '{\"method\": \"dflash\", \"model\": \"z-lab/Qwen3-8B-DFlash-b16\", "
                "\"num_speculative_tokens\": 15}' \\\n  --max-num-seqs 8\n",
    "unterminated-quote.sh": "#!/bin/sh\necho start\nvllm serve Qwen/Qwen3-8B \\\n"
                             "  --speculative-config '{\"method\": \"dflash\", \"num_speculative_tokens\": 15}\n",
    "empty.sh": "",
    "comments-only.sh": "#!/bin/sh\n# vllm serve Qwen/Qwen3-8B\n\n",
    "broken-spec-json.sh": "vllm serve Qwen/Qwen3-8B --speculative-config '{\"method\": \"dflash\", num_speculative_tokens: 15}'\n",
    "spec-json-array.sh": "vllm serve Qwen/Qwen3-8B --speculative-config '[\"dflash\", 15]'\n",
    "spec-json-deep.sh": "vllm serve Qwen/Qwen3-8B --speculative-config '" + "[" * 5000 + "]" * 5000 + "'\n",
    "max-num-seqs-not-int.sh": "vllm serve Qwen/Qwen3-8B --speculative-config '{\"method\": \"dflash\", "
                               "\"num_speculative_tokens\": 15}' --max-num-seqs eight\n",
    "multibyte-first-line.sh": "vllmé serve Qwen/Qwen3-8B\n",
    "Dockerfile.multibyte": "FROM\u00e9 x\nCMD [\"vllm\", \"serve\", \"M\"]\n",
    "compose-list.yml": "- vllm\n- serve\n",
    "compose-scalar.yml": "vllm serve Qwen/Qwen3-8B\n",
    "compose-invalid.yml": "services:\n  vllm:\n    command: [--model, 'x\n",
    "compose-services-list.yml": "services:\n  - vllm\n  - sglang\n",
    "compose-deep.yml": "services: " + "[" * 10000 + "]" * 10000 + "\n",
    "compose-alias-bomb.yml": "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                              + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9))
                              + "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: *j\n",
    "compose-unterminated-quote.yml": "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: \"--model M --speculative-config '{\\\"method\\\": 1}\"\n",
    # Kubernetes manifests (`apiVersion:` and `kind:` at the top level) share the compose caps.
    "k8s-deep.yaml": "apiVersion: v1\nkind: Pod\nspec: " + "[" * 10000 + "]" * 10000 + "\n",
    "k8s-alias-bomb.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                           + "".join(f"  {chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9))
                           + "spec:\n  containers:\n    - name: vllm\n      args: *j\n",
    "k8s-invalid.yaml": "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: vllm, args: ['x\n",
    "k8s-no-engine.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n"
                          "      containers:\n        - name: web\n          image: nginx:1.27\n",
    "k8s-llmisvc-no-uri.yaml": "apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\nmetadata:\n  name: s\n"
                               "spec:\n  model:\n    name: Qwen/Qwen3-8B\n  speculator:\n    config:\n      method: eagle3\n",
    "k8s-speculator-config-list.yaml": "apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\nmetadata:\n  name: s\n"
                                       "spec:\n  model:\n    uri: hf://Qwen/Qwen3-8B\n  speculator:\n    config: [method, eagle3]\n",
    # Issue 44: `$(VAR)` expansion had no bound. One word of 1,000 references to a 20 kB value
    # (20 MB, over the 16 MiB cap); env values that each name the one before 16 times, 12 deep
    # (16^11 copies of the first); `$(` with no `)` 100,000 times (each looked for its `)` to
    # the end: quadratic).
    "k8s-expansion-bomb.yaml": K8S_POD.format(env='        - name: A\n          value: "' + "x" * 20000 + '"\n',
                                              args='["' + "$(A)" * 1000 + '"]'),
    "k8s-nested-vars.yaml": K8S_POD.format(
        env='        - name: V0\n          value: "yyyyyyyy"\n'
            + "".join(f'        - name: V{i}\n          value: "' + f"$(V{i - 1})" * 16 + '"\n' for i in range(1, 12)),
        args='["$(V11)"]'),
    "k8s-open-references.yaml": K8S_POD.format(env='        - name: A\n          value: "a"\n',
                                               args='["' + "$(" * 100000 + '"]'),
}

# As prometheus_client writes a counter in the Prometheus text format: HELP and TYPE name the
# sample (`..._total`).
METRICS_HEAD = "# HELP {n}_total x\n# TYPE {n}_total counter\n"


def vllm_body(drafts, draft_tokens, accepted, per_pos, value=None, engines=("0",)):
    """A minimal vLLM exposition of the four spec-decode counters (one model; one series per
    engine replica, each with the same values). A value may be a string, written as it is."""
    labels = [f'engine="{e}",model_name="Qwen/Qwen3-8B"' for e in engines]
    out = []
    for n, v in (("vllm:spec_decode_num_drafts", drafts), ("vllm:spec_decode_num_draft_tokens", draft_tokens),
                 ("vllm:spec_decode_num_accepted_tokens", accepted)):
        out.append(METRICS_HEAD.format(n=n) + "".join(f"{n}_total{{{l}}} {value or v}\n" for l in labels))
    n = "vllm:spec_decode_num_accepted_tokens_per_pos"
    out.append(METRICS_HEAD.format(n=n) + "".join(
        f'{n}_total{{{l},position="{i}"}} {value or v}\n' for l in labels for i, v in enumerate(per_pos)))
    return "".join(out)


def sglang_gauges(**values):
    """SGLang's spec gauges (`sglang:spec_accept_length`, …) with one series each, tp rank 0."""
    return "".join(
        f"# HELP sglang:{n} x\n# TYPE sglang:{n} gauge\n" + f'sglang:{n}{{model_name="m",tp_rank="0"}} {v}\n'
        for n, v in values.items())


def metrics_cases():
    good1 = vllm_body(100.0, 300.0, 150.0, [80.0, 50.0, 20.0])
    good2 = vllm_body(200.0, 600.0, 350.0, [170.0, 120.0, 60.0])
    files = {
        "valid-1.txt": good1,
        "valid-2.txt": good2,
        "html.txt": "<html><body><h1>404 Not Found</h1></body></html>\n",
        "counter-not-a-number.txt": good1.replace("300.0", "three hundred"),
        "nan-counters.txt": vllm_body(0, 0, 0, [0, 0, 0], value="NaN"),
        "inf-counters.txt": vllm_body(0, 0, 0, [0, 0, 0], value="+Inf"),
        "huge-number.txt": vllm_body(0, 0, 0, [0, 0, 0], value="1e400"),
        "negative-counters.txt": vllm_body(-100.0, -300.0, -150.0, [-80.0, -50.0, -20.0]),
        "duplicate-series.txt": good1 + good1.split("\n")[2] + "\n",
        "truncated-mid-line.txt": good1[: good1.index("model_name") + 5],
        "truncated-after-family.txt": good1[: good1.index("# HELP vllm:spec_decode_num_accepted_tokens_per_pos")],
        "empty.txt": "",
        "sglang-nan-gauge.txt": "# HELP sglang:spec_accept_length x\n# TYPE sglang:spec_accept_length gauge\n"
                                 'sglang:spec_accept_length{model_name="m"} NaN\n',
        "huge-timestamp.txt": good1.replace(" 100.0\n", " 100.0 99999999999999999999999999999999\n"),
        "label-not-closed.txt": 'vllm:spec_decode_num_drafts_total{engine="0 1\n',
        # Values that cannot be (issue 20): the second scrape of a window whose first is valid-1.
        "accepted-over-drafted.txt": vllm_body(200.0, 600.0, 3150.0, [170.0, 120.0, 60.0]),
        "per-position-nan.txt": vllm_body(200.0, 600.0, 350.0, [170.0, "NaN", 60.0]),
        "per-position-over-100.txt": vllm_body(200.0, 600.0, 350.0, [230.0, 120.0, 60.0]),
        # Two replicas whose drafts each fit an f64 and whose sum does not.
        "replicas-overflow-1.txt": vllm_body("1.7e308", "3.0e2", "1.5e2", [80.0, 50.0, 20.0], engines=("0", "1")),
        "replicas-overflow-2.txt": vllm_body("1.7e308", "6.0e2", "3.5e2", [170.0, 120.0, 60.0], engines=("0", "1")),
        "sglang-negative-length.txt": sglang_gauges(spec_accept_length="-3.0"),
        "sglang-rate-over-1.txt": sglang_gauges(spec_accept_length="3.0", spec_accept_rate="1.7"),
    }
    out = os.path.join(ROOT, "cases", "metrics")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for name, text in files.items():
        with open(os.path.join(out, name), "w", newline="") as f:
            f.write(text)
    return len(files)


# oMLX (issue 43): a script whose line reads model_settings.json beside it (--base-path .), and
# the settings files a case copies next to it (`file2`), byte for byte.
OMLX_FILES = {
    "omlx/serve.sh": b"#!/bin/sh\n# oMLX reads its drafters from model_settings.json beside this script (--base-path .).\n"
                     b"omlx serve --model-dir models --base-path .\n",
    "omlx/not-object/model_settings.json": b"[1, 2]\n",
    "omlx/bad-switch/model_settings.json": b'{"version": 1, "models": {"Qwen3-8B": {"dflash_enabled": "yes", '
                                           b'"dflash_draft_model": "draft"}}}\n',
    "omlx/hostile-id/model_settings.json": b'{"version": 1, "models": {"evil\\u001b[2J\\u202e": {"dflash_enabled": true, '
                                           b'"dflash_draft_model": "Bare\\u001b[31mName"}}}\n',
    "omlx/not-text/model_settings.json": b'\xff\xfe{"models": {}}',
}


def launch_cases():
    out = os.path.join(ROOT, "cases", "launch")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for name, text in LAUNCH_FILES.items():
        with open(os.path.join(out, name), "w", newline="", encoding="utf-8") as f:
            f.write(text)
    for name, data in OMLX_FILES.items():
        os.makedirs(os.path.dirname(os.path.join(out, name)), exist_ok=True)
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    return len(LAUNCH_FILES) + len(OMLX_FILES)


# Pin files (`surface = "pins"`), each copied to <tmp>/dflash-check.toml beside a clean drafter
# `models/Qwen3.6-27B-DFlash` (issue 32's attacks on the [[ignore]] entries).
STALE = 'code = "changed"\npath = "models/*"\npointer = "/no_such_key"\n'
PIN_FILES = {
    "glob-20-stars.toml": 'version = 2\n\n[[ignore]]\ncode = "changed"\npath = "models/' + "*" * 20
                          + 'Z"\nreason = "a hostile glob: exponential before"\n',
    "glob-200-stars.toml": 'version = 2\n\n[[ignore]]\ncode = "changed"\npath = "models/' + "*" * 200
                           + 'Z"\nreason = "over the wildcard cap"\n',
    "impossible-date.toml": 'version = 2\n\n[[ignore]]\n' + STALE + 'reason = "r"\nexpires = "2027-02-31"\n',
    "placeholder-reason.toml": 'version = 2\n\n[[ignore]]\n' + STALE + 'reason = "TODO: why is this accepted?"\n',
    "prune-odd-header.toml": 'version = 2\n\n# for a drafter this run does not check\n[[ignore]]\n'
                             'code = "changed"\npath = "other/x"\nreason = """\nkept:\n[[ignore]]\n"""\n\n'
                             '[[ignore]]  # old\n' + STALE + 'reason = """\n[see PR 7]\n"""\n',
    "inline-ignore.toml": 'version = 2\nignore = [\n  { code = "changed", path = "models/*", '
                          'pointer = "/no_such_key", reason = "r" },\n]\n',
    "not-toml.toml": 'version = 2\n[[ignore]\ncode = "changed"\n',
    # Issue 44: a pin's `against` is read only inside the repository (the pin file's folder
    # here: no `.git` above it) and only when it is a model config; each is exit 2, nothing of
    # the file shown. The link and the credentials file are made by the case's setup.
    "against-parent.toml": 'version = 2\n\n[drafters."models/Qwen3.6-27B-DFlash"]\n'
                           'against = "' + "../" * 12 + 'etc/passwd"\n',
    "against-absolute.toml": 'version = 2\n\n[drafters."models/Qwen3.6-27B-DFlash"]\nagainst = "/etc/passwd"\n',
    "against-link.toml": 'version = 2\n\n[drafters."models/Qwen3.6-27B-DFlash"]\nagainst = "authorities/link.json"\n',
    "against-credentials.toml": 'version = 2\n\n[drafters."models/Qwen3.6-27B-DFlash"]\n'
                                'against = "authorities/creds.json"\n',
    # Issue 32: an entry's pointer and reason as input text: an unused entry is reported with its
    # pointer, in annotations and in the step summary (Markdown, an image, HTML, a forged command).
    "hostile-entry.toml": 'version = 2\n\n[[ignore]]\ncode = "changed"\n'
                          'path = "models/*"\n'
                          'pointer = "/x`![i](http://e/i.png)<img src=x>|\\n::error file=README.md::INJECTED\\u001b]0;t\\u0007"\nreason = "r\\r\\n::add-mask::word $x$ *e* [l](http://e)"\n',
}


def write_cases(sub, files):
    """cases/<sub>/ holds exactly `files` (name -> text), written byte for byte."""
    out = os.path.join(ROOT, "cases", sub)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for name, text in files.items():
        with open(os.path.join(out, name), "w", newline="") as f:
            f.write(text)
    return len(files)


def pins_cases():
    return write_cases("pins", PIN_FILES)


# Server answers (`surface = "server"`): what `doctor` reads from a server about itself, SGLang's
# `/get_server_info` (cases sglang-*) and vLLM's `/v1/models` (cases models-*), served beside a
# /metrics window by tests/bad_input.rs. A server's answer is input: hostile text, paths it has
# no business naming, wrong types, shapes that are not the endpoint's.
HOSTILE = "x\n::error file=README.md::INJECTED\u001b]0;pwned\u0007 \u202edesrever ##[add-mask]word"
SGLANG_OK = {"model_path": "Qwen/Qwen3-8B", "speculative_algorithm": "DFLASH",
             "speculative_draft_model_path": "z-lab/Qwen3-8B-DFlash-b16", "speculative_num_draft_tokens": 16}
SERVER_FILES = {
    "sglang-valid.json": json.dumps(SGLANG_OK),
    "sglang-html.json": "<html><body><h1>404 Not Found</h1></body></html>\n",
    "sglang-array.json": "[1, 2]\n",
    "sglang-model-path-number.json": json.dumps({"model_path": 42}),
    "sglang-hostile-strings.json": json.dumps(dict(SGLANG_OK, model_path="Qwen/" + HOSTILE,
                                                   speculative_draft_model_path=HOSTILE)),
    "sglang-proc-paths.json": json.dumps(dict(SGLANG_OK, model_path="/proc/self/environ",
                                              speculative_draft_model_path="/dev/zero")),
    "sglang-dotdot-path.json": json.dumps(dict(SGLANG_OK, speculative_draft_model_path="models/../../../etc")),
    "sglang-flag-values.json": json.dumps(dict(SGLANG_OK, model_path="--tp", speculative_draft_model_path="--trust-remote-code",
                                               speculative_algorithm="--x")),
    "sglang-wrong-types.json": json.dumps(dict(SGLANG_OK, speculative_draft_model_path=["a"],
                                               speculative_num_draft_tokens="sixteen", speculative_algorithm={"x": 1})),
    "sglang-num-draft-tokens-huge.json": json.dumps(SGLANG_OK).replace(": 16}", ": 18446744073709551616}"),
    "sglang-deep-nesting.json": '{"x": ' + "[" * 10000 + "]" * 10000 + ', "model_path": "Qwen/Qwen3-8B"}\n',
    "sglang-duplicate-model-path.json": '{"model_path": "Qwen/Qwen3-8B", "model_path": "/proc/self/environ"}\n',
    "sglang-truncated.json": '{"model_path": "Qwen/Qw',
    "models-valid.json": json.dumps({"object": "list", "data": [{"id": "Qwen/Qwen3-8B", "object": "model", "root": "Qwen/Qwen3-8B"}]}),
    "models-hostile-id.json": json.dumps({"data": [{"id": HOSTILE, "object": "model"}]}),
    "models-data-not-list.json": json.dumps({"data": "x"}),
    "models-empty.json": json.dumps({"data": []}),
    "models-proc-root.json": json.dumps({"data": [{"id": "m", "root": "/proc/self/environ"}]}),
}


def server_cases():
    return write_cases("server", SERVER_FILES)


import shutil  # noqa: E402

# GGUF headers (`surface = "gguf"`, run as `weights FILE.gguf`): a valid little file, then one defect
# each. llama.cpp's writer (gguf-py) cannot write these; tests/gguf.rs reads the files it does write.
def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_kv(key, vtype, payload):
    return gguf_str(key) + struct.pack("<I", vtype) + payload


def gguf_file(n_tensors, kvs, tensors=b"", data=b"", n_kv=None, version=3, pad=True):
    head = b"GGUF" + struct.pack("<IQQ", version, n_tensors, len(kvs) if n_kv is None else n_kv)
    body = head + b"".join(kvs) + tensors
    if pad and n_tensors:
        body += b"\0" * (-len(body) % 32)
    return body + data


def gguf_tensor(name, dims, ggml_type, offset):
    return (gguf_str(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
            + struct.pack("<IQ", ggml_type, offset))


def gguf_cases():
    out = os.path.join(ROOT, "cases", "gguf")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    arch = gguf_kv("general.architecture", 8, gguf_str("qwen3"))
    toks = gguf_kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 3) + gguf_str("a") + gguf_str("b") + gguf_str("c"))
    f32 = gguf_tensor("output_norm.weight", [4], 0, 0)
    huge = 1 << 63
    cases = {
        "gguf-valid": gguf_file(1, [arch, toks], f32, b"\0" * 16),
        "gguf-empty": b"",
        "gguf-bad-magic": b"GGML" + b"\0" * 20,
        "gguf-version-1": gguf_file(0, [], version=1),
        "gguf-big-endian": b"GGUF" + struct.pack(">IQQ", 3, 0, 0),
        "gguf-n-kv-2-63": gguf_file(0, [], n_kv=huge),
        "gguf-n-tensors-2-63": b"GGUF" + struct.pack("<IQQ", 3, huge, 0),
        "gguf-string-2-63": gguf_file(0, [struct.pack("<Q", huge)], n_kv=1),
        "gguf-value-string-2-63": gguf_file(0, [gguf_str("general.name") + struct.pack("<IQ", 8, huge)]),
        "gguf-nested-array": gguf_file(0, [gguf_kv("k", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 4, 0))]),
        "gguf-array-past-eof": gguf_file(0, [gguf_kv("k", 9, struct.pack("<IQ", 4, 1 << 40))]),
        "gguf-truncated-vocab": gguf_file(1, [arch, toks], f32, b"\0" * 16)[:90],
        "gguf-tensor-offset-past-end": gguf_file(1, [arch], gguf_tensor("output_norm.weight", [4], 0, 1 << 20), b"\0" * 16),
        "gguf-tensor-offset-misplaced": gguf_file(2, [arch], gguf_tensor("a", [4], 0, 0) + gguf_tensor("b", [4], 0, 64), b"\0" * 96),
        "gguf-tensor-5-dims": gguf_file(1, [arch], gguf_tensor("t", [1, 1, 1, 1, 1], 0, 0), b"\0" * 32),
        "gguf-tensor-name-64": gguf_file(1, [arch], gguf_tensor("n" * 64, [4], 0, 0), b"\0" * 16),
        "gguf-duplicate-key": gguf_file(0, [arch, arch]),
        "gguf-bad-bool": gguf_file(0, [gguf_kv("tokenizer.ggml.add_bos_token", 7, b"\x02")]),
        "gguf-alignment-not-power-of-2": gguf_file(0, [gguf_kv("general.alignment", 4, struct.pack("<I", 48))]),
        "gguf-control-chars-in-key": gguf_file(0, [gguf_kv("k\x1b[31m\u202e", 4, struct.pack("<I", 1))] * 2),
    }
    for name, data in cases.items():
        with open(os.path.join(out, name + ".gguf"), "wb") as f:
            f.write(data)
    return len(cases)


print(weights_cases(), "weights cases,", launch_cases(), "launch files,", metrics_cases(), "metrics bodies,",
      pins_cases(), "pin files,", server_cases(), "server answers,", gguf_cases(), "gguf files written")
