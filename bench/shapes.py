#!/usr/bin/env python3
"""Writes one input per hostile shape (issue 20, "Stated limits") into OUT: each as large as
its surface accepts (16 MiB for configs and indexes, 16 MB of safetensors header, 1 MiB for a
launch file), built from the incident's config so the commands get past their first checks.

    python3 bench/shapes.py OUT
"""
import json
import os
import struct
import sys

MIB = 1 << 20
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def incident():
    with open(os.path.join(ROOT, "fixtures/incident/Qwen3.6-27B-DFlash/config.json")) as f:
        return json.load(f)


def drafter(out, name, text):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        f.write(text)


def with_extra(extra_json, budget):
    """The incident's config with one more member `"x": <extra>` appended, as text."""
    base = json.dumps(incident(), indent=2)
    assert base.endswith("}")
    return base[:-1].rstrip() + ',\n  "x": ' + extra_json + "\n}\n"


def main(out):
    os.makedirs(out, exist_ok=True)
    size = 16 * MIB - 4096
    # Deep nesting: 8 Mi levels of `[`.
    n = size // 2
    drafter(out, "deep", with_extra("[" * n + "]" * n, size))
    # One long array of small numbers (8 million).
    drafter(out, "array", with_extra("[" + ",".join(["0"] * (size // 2)) + "]", size))
    # Many keys: one object of ~1.2 million members.
    keys = size // 14
    drafter(out, "keys", with_extra("{" + ",".join('"k%07d":0' % i for i in range(keys)) + "}", size))
    # Many top-level keys only the local file has (what `fix` keeps and `diff` lists).
    base = json.dumps(incident(), indent=2)[:-1].rstrip()
    members = ",".join("\n  \"k%07d\": 0" % i for i in range(size // 18))
    drafter(out, "top-keys", base + "," + members + "\n}\n")
    # The same shapes just under the 100,000-value cap (`json::MAX_VALUES`), to show the work
    # up to it is linear and within the goal.
    cap = 95_000
    drafter(out, "array-cap", with_extra("[" + ",".join(["0"] * cap) + "]", size))
    drafter(out, "keys-cap", with_extra("{" + ",".join('"k%07d":0' % i for i in range(cap)) + "}", size))
    members = ",".join("\n  \"k%07d\": 0" % i for i in range(cap))
    drafter(out, "top-keys-cap", base + "," + members + "\n}\n")
    # An authority with those keys and a local file without them: `fix` adds 95,000 keys.
    auth = incident()
    for i in range(cap):
        auth["k%07d" % i] = i
    with open(os.path.join(out, "authority-keys.json"), "w") as f:
        json.dump(auth, f, indent=2)
    # One long string.
    drafter(out, "string", with_extra('"' + "a" * size + '"', size))
    # An object of 95,000 keys inside an array, diffed against itself: equal values compared
    # whole (`same_value`), not key by key.
    drafter(out, "nested-cap", with_extra("[{" + ",".join('"k%07d":0' % i for i in range(cap)) + "}]", size))

    # Many shards: an index whose every tensor is in its own shard (~300,000).
    wdir = os.path.join(out, "shards")
    os.makedirs(wdir, exist_ok=True)
    with open(os.path.join(wdir, "config.json"), "w") as f:
        json.dump(incident(), f)
    wm, total, i = [], 0, 0
    while total < size - 64:
        item = '"t.%d.weight":"model-%06d.safetensors"' % (i, i)
        wm.append(item)
        total += len(item) + 1
        i += 1
    with open(os.path.join(wdir, "model.safetensors.index.json"), "w") as f:
        f.write('{"metadata":{},"weight_map":{' + ",".join(wm) + "}}")

    # Many tensors: one safetensors file with a 16 MB header (~200,000 tensors, 0 bytes each
    # but one so the offsets are contiguous).
    tdir = os.path.join(out, "tensors")
    os.makedirs(tdir, exist_ok=True)
    with open(os.path.join(tdir, "config.json"), "w") as f:
        json.dump(incident(), f)
    header, total, i = {}, 0, 0
    while total < 16_000_000 - 200:
        name = "model.layers.%d.mlp.w%d.weight" % (i // 8, i % 8)
        header[name] = {"dtype": "BF16", "shape": [1, 1], "data_offsets": [2 * i, 2 * i + 2]}
        total += len(name) + 60
        i += 1
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(os.path.join(tdir, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"\0" * (2 * i))

    # A tokenizer.json at --full-tokenizer's 64 MiB cap: a BPE model of ~1.7 million tokens,
    # each built by one merge ("a1234" = "a123" + "4"), so the tokenizers crate builds its whole
    # vocabulary and merge table. The target's config is the incident target's.
    tok = os.path.join(out, "tokenizer-target")
    os.makedirs(tok, exist_ok=True)
    with open(os.path.join(ROOT, "fixtures/targets/Qwen3.6-27B/config.json")) as f:
        target_config = f.read()
    with open(os.path.join(tok, "config.json"), "w") as f:
        f.write(target_config)
    vocab = ['"a":0'] + ['"%d":%d' % (d, d + 1) for d in range(10)]
    merges, total, i = [], 0, 0
    budget = 64 * MIB - 4096
    while total < budget - 200:
        token, prefix, last = "a%d" % i, ("a%d" % (i // 10)) if i >= 10 else "a", "%d" % (i % 10)
        v = '"%s":%d' % (token, 11 + i)
        m = '"%s %s"' % (prefix, last)
        vocab.append(v)
        merges.append(m)
        total += len(v) + len(m) + 2
        i += 1
    with open(os.path.join(tok, "tokenizer.json"), "w") as f:
        f.write(
            '{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],'
            '"normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,'
            '"model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,'
            '"end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,'
            '"vocab":{' + ",".join(vocab) + '},"merges":[' + ",".join(merges) + "]}}"
        )

    # Many tensors: the shortest entries, as many as the header's 25 MB byte cap allows
    # (~360,000, refused at the 50,000-tensor cap), and 47,500 (just under it).
    def minimal_tensors(name, n=None, budget=25_000_000 - 200):
        tdir = os.path.join(out, name)
        os.makedirs(tdir, exist_ok=True)
        with open(os.path.join(tdir, "config.json"), "w") as f:
            json.dump(incident(), f)
        entries, total, i = [], 0, 0
        while (n is None and total < budget) or (n is not None and i < n):
            e = '"t%d":{"dtype":"BF16","shape":[1],"data_offsets":[%d,%d]}' % (i, 2 * i, 2 * i + 2)
            entries.append(e)
            total += len(e) + 1
            i += 1
        h = ("{" + ",".join(entries) + "}").encode()
        h += b" " * ((8 - len(h) % 8) % 8)
        with open(os.path.join(tdir, "model.safetensors"), "wb") as f:
            f.write(struct.pack("<Q", len(h)) + h + b"\0" * (2 * i))

    minimal_tensors("tensors-cap")
    minimal_tensors("tensors-under-cap", n=47_500)

    # YAML aliases: a 0.5 MB anchored scalar aliased from every list item (file under 1 MiB).
    big = "a" * (500 * 1000)
    aliases = "\n".join("      - *big" for _ in range(40_000))
    with open(os.path.join(out, "compose.yml"), "w") as f:
        f.write(
            "x-big: &big " + big + "\nservices:\n  vllm:\n    image: vllm/vllm-openai\n"
            "    command:\n      - vllm\n      - serve\n" + aliases + "\n"
        )

    # Long shell expansions: doubling variables to the 16 MiB expansion budget and past it.
    lines = ["A0=" + "x" * 1000]
    for k in range(1, 40):
        lines.append("A%d=$A%d$A%d" % (k, k - 1, k - 1))
    lines.append("vllm serve model --speculative-config '{\"method\": \"dflash\"}' $A39")
    with open(os.path.join(out, "run.sh"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
