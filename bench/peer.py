#!/usr/bin/env python3
"""The Python peer of `dflash-check diff DRAFTER --against AUTH --target TARGET`, written the
way a user would: `json` for the configs, the Hugging Face tokenizer for the ids.

    peer.py [--transformers] DRAFTER_DIR AUTHORITY_DIR TARGET_DIR

Compares the drafter's config.json with the authority's field by field, decodes every token id
(`*_token_id`, `dflash_config.mask_token_id`, ints or lists) on both sides through the
target's tokenizer (`tokenizers.Tokenizer`, or `transformers.AutoTokenizer` with
--transformers), classes ids past the tokenizer as unused embedding rows or out of range using
the target's `vocab_size`, prints the differences and exits 1 when any exist.
"""

import json
import os
import sys


def flatten(value, prefix=""):
    if isinstance(value, dict):
        out = {}
        for key, child in value.items():
            out.update(flatten(child, f"{prefix}.{key}" if prefix else key))
        return out
    return {prefix: value}


def is_token_field(path):
    return path.rsplit(".", 1)[-1].endswith("token_id")


def load_config(directory):
    with open(os.path.join(directory, "config.json"), encoding="utf-8") as f:
        return json.load(f)


class TokenizersDecoder:
    def __init__(self, target_dir):
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(os.path.join(target_dir, "tokenizer.json"))
        self.added = self.tok.get_added_tokens_decoder()
        self.length = self.tok.get_vocab_size(with_added_tokens=True)

    def describe(self, i):
        if i in self.added:
            t = self.added[i]
            return f"{t.content} ({'special' if t.special else 'added, not special'})"
        raw = self.tok.id_to_token(i)
        return None if raw is None else f"{self.tok.decode([i])!r} (vocab)"


class TransformersDecoder:
    def __init__(self, target_dir):
        from transformers import AutoTokenizer

        self.tok = AutoTokenizer.from_pretrained(target_dir)
        self.added = self.tok.added_tokens_decoder
        self.length = len(self.tok)

    def describe(self, i):
        if i in self.added:
            t = self.added[i]
            return f"{t.content} ({'special' if t.special else 'added, not special'})"
        if i >= self.length:
            return None
        return f"{self.tok.decode([i])!r} (vocab)"


def main(argv):
    use_transformers = "--transformers" in argv
    args = [a for a in argv if a != "--transformers"]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    drafter_dir, authority_dir, target_dir = args
    local = flatten(load_config(drafter_dir))
    authority = flatten(load_config(authority_dir))
    vocab_size = load_config(target_dir).get("vocab_size")
    decoder = (TransformersDecoder if use_transformers else TokenizersDecoder)(target_dir)

    def decode(value):
        ids = value if isinstance(value, list) else [value]
        parts = []
        for i in ids:
            if not isinstance(i, int) or isinstance(i, bool):
                parts.append(repr(i))
                continue
            text = decoder.describe(i) if 0 <= i < 2**32 else None
            if text is not None:
                parts.append(f"{i} {text}")
            elif vocab_size is not None and i >= vocab_size:
                parts.append(f"{i} (out of range: {vocab_size} embedding rows)")
            elif i >= decoder.length:
                parts.append(f"{i} (unused embedding row)")
            else:
                parts.append(f"{i} (not decoded)")
        return ", ".join(parts)

    missing = object()
    differences = 0
    for path in sorted(set(local) | set(authority)):
        a, b = local.get(path, missing), authority.get(path, missing)
        if a == b and type(a) is type(b):
            continue
        differences += 1
        show = lambda v: "(absent)" if v is missing else (decode(v) if is_token_field(path) else json.dumps(v))
        print(f"{path:30} {show(a)}  ->  {show(b)}")
    print(f"{differences} difference(s)")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
