"""The Python a user would write to check a llama.cpp draft against its target before deploying
(as xllama#200 did): llama.cpp's own GGUF reader (`gguf.GGUFReader`, gguf-py) on both files, and
llama.cpp's `common_speculative_are_compatible` in Python: the vocab type, add_bos/add_eos and
the bos/eos ids, a size difference of at most 128, and the text of every id from 5 on. Prints the
first differing ids; exit 1 when the pair is not compatible, 0 when it is.

    python bench/gguf_vocab_peer.py DRAFT.gguf TARGET.gguf
"""

import sys

from gguf import GGUFReader


def field(reader, key):
    f = reader.get_field(key)
    if f is None:
        return None
    return f.contents()


def vocab(path):
    r = GGUFReader(path)
    return {
        "model": field(r, "tokenizer.ggml.model"),
        "tokens": field(r, "tokenizer.ggml.tokens") or [],
        "bos": field(r, "tokenizer.ggml.bos_token_id"),
        "eos": field(r, "tokenizer.ggml.eos_token_id"),
        "add_bos": bool(field(r, "tokenizer.ggml.add_bos_token")),
        "add_eos": bool(field(r, "tokenizer.ggml.add_eos_token")),
    }


def main(draft_path, target_path):
    d, t = vocab(draft_path), vocab(target_path)
    problems = []
    if d["model"] != t["model"]:
        problems.append(f"vocab type {d['model']} here, {t['model']} in the target")
    if d["add_bos"] != t["add_bos"] or (t["add_bos"] and d["bos"] != t["bos"]):
        problems.append(f"bos {d['bos']} here, {t['bos']} in the target")
    if d["add_eos"] != t["add_eos"] or (t["add_eos"] and d["eos"] != t["eos"]):
        problems.append(f"eos {d['eos']} here, {t['eos']} in the target")
    nd, nt = len(d["tokens"]), len(t["tokens"])
    if abs(nd - nt) > 128:
        problems.append(f"{nd} tokens here, {nt} in the target")
    differing = [i for i in range(5, min(nd, nt)) if d["tokens"][i] != t["tokens"][i]]
    if differing:
        first = "; ".join(f"{i} {d['tokens'][i]!r} here, {t['tokens'][i]!r} in the target" for i in differing[:3])
        problems.append(f"{len(differing)} ids have other text: {first}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
