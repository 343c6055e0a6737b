#!/usr/bin/env python3
"""Writes the inputs of tests/fix_golden.rs: one folder per case with input.json and
authority.json. The expected outputs (expected.json, expected.prune.json) were produced by
`dflash-check fix` once, read line by line against the input, and committed; the test compares
byte for byte. Run from the repository root; the output is committed.
"""
import json
import os

ROOT = os.path.dirname(os.path.abspath(__file__))

BASE = {
    "architectures": ["DFlashDraftModel"],
    "block_size": 16,
    "bos_token_id": None,
    "dflash_config": {"mask_token_id": 248070, "target_layer_ids": [1, 16, 31, 46, 61]},
    "eos_token_id": 248044,
    "hidden_size": 5120,
    "layer_types": ["sliding_attention"] * 4 + ["full_attention"],
    "model_type": "qwen3",
    "num_hidden_layers": 5,
    "num_target_layers": 64,
    "rms_norm_eps": "__1e-06__",
    "rope_theta": 10000000,
    "sliding_window": 2048,
    "use_sliding_window": True,
    "vocab_size": 248320,
}

GUESSED = dict(
    BASE,
    bos_token_id=248044,
    dflash_config={"mask_token_id": 248064, "target_layer_ids": [1, 17, 33, 49, 63]},
    layer_types=["full_attention"] * 5,
    use_sliding_window=False,
)
del GUESSED["sliding_window"]


def dump(obj, indent=2, ensure_ascii=True, separators=None, eol="\n", final_newline=True):
    text = json.dumps(obj, indent=indent, ensure_ascii=ensure_ascii, separators=separators)
    text = text.replace('"__1e-06__"', "1e-06").replace('"__1e-5__"', "1e-5")
    text = text.replace('"__1E7__"', "1E7")
    if final_newline:
        text += "\n"
    return text.replace("\n", eol)


def case(name, local, authority, **style):
    d = os.path.join(ROOT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "input.json"), "w", newline="") as f:
        f.write(dump(local, **style))
    with open(os.path.join(d, "authority.json"), "w", newline="") as f:
        f.write(dump(authority))


case("indent2", GUESSED, BASE)
case("indent4", GUESSED, BASE, indent=4)
case("tab", GUESSED, BASE, indent="\t")
case("crlf", GUESSED, BASE, eol="\r\n", final_newline=False)
# Numbers: 1e-06 stays (same value as 0.000001); a changed number takes the authority's text.
case(
    "numbers",
    dict(GUESSED, rms_norm_eps="__1e-06__", rope_theta=1000000),
    dict(BASE, rms_norm_eps=0.000001, rope_theta="__1E7__", initializer_range="__1e-5__"),
)
# Escapes: the file is ASCII with \u00e9; the unchanged value keeps its escape, new text escapes.
case(
    "escapes",
    dict(GUESSED, name_or_path="caf\u00e9", note="na\u00efve \"quoted\""),
    dict(BASE, name_or_path="caf\u00e9", note="r\u00e9sum\u00e9 \U0001F600\ttab"),
)
# Raw UTF-8 file: new non-ASCII text is written raw too.
case(
    "utf8",
    dict(GUESSED, note="na\u00efve"),
    dict(BASE, note="r\u00e9sum\u00e9"),
    ensure_ascii=False,
)
case("compact", GUESSED, BASE, indent=None, final_newline=False)
case("compact-nospace", GUESSED, BASE, indent=None, separators=(",", ":"))
# Keys only in the local file: kept by default, removed under --prune (first, middle, last).
case(
    "local-only",
    dict({"aaa_first": 1}, **GUESSED, my_note={"x": [1, 2]}, zzz_last=True),
    BASE,
)
# Layout: local flat block_size 8 vs authority nested 16 -> edited where the local file has it;
# rope_theta agrees in another layout -> untouched.
nested = dict(BASE)
del nested["block_size"]
del nested["rope_theta"]
nested["dflash_config"] = dict(BASE["dflash_config"], block_size=16)
nested["rope_parameters"] = {"rope_theta": 10000000, "rope_type": "default"}
case("layout", dict(GUESSED, block_size=8), nested)
