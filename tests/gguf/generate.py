#!/usr/bin/env python3
"""Writes the GGUF files tests/gguf.rs reads, with llama.cpp's own writer: the `gguf` package on
PyPI (gguf-py, from the llama.cpp repository), so the bytes are what convert_hf_to_gguf.py writes.

    python tests/gguf/generate.py OUT_DIR          # the small cases
    python tests/gguf/generate.py OUT_DIR --big    # also big.gguf: a 4 GiB sparse file,
                                                   # and big-header.gguf: a ~20 MB header, 1 MiB of data

Every file is tiny (a few KB) except big.gguf, whose header is a Qwen3-size vocabulary
(151,936 tokens and their types) and 36 blocks of tensor infos declaring 4 GiB of data; the data is
a hole (os.truncate), so it takes no disk. Run by scripts/weights-setup.sh with the Python of
.venv-hf (numpy and gguf installed there).
"""
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

EMBD = 64
VOCAB = 300


def tokens(n):
    """Token texts of a byte-level BPE vocabulary: some words, then the Qwen special tokens."""
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    words = [f"tok{i}" for i in range(n - len(special))]
    return words + special


SPECIAL = {"<|endoftext|>": "bos", "<|im_start|>": None, "<|im_end|>": "eos",
           "<unk>": None, "<s>": "bos", "</s>": "eos"}


def vocab(w, n=VOCAB, model="gpt2", pre="qwen2", texts=None, add_bos=False):
    """`texts` replaces the token list (a vocabulary of other text). The texts of SPECIAL are
    control tokens, bos and eos among them, wherever they are."""
    texts = texts or tokens(n)
    w.add_tokenizer_model(model)
    w.add_tokenizer_pre(pre)
    w.add_token_list(texts)
    w.add_token_types([3 if t in SPECIAL else 1 for t in texts])
    role = {SPECIAL[t]: i for i, t in enumerate(texts) if SPECIAL.get(t)}
    w.add_bos_token_id(role["bos"])
    w.add_eos_token_id(role["eos"])
    w.add_add_bos_token(add_bos)


def z(*shape, dtype=np.float32):
    return np.zeros(shape, dtype=dtype)


def save(path, arch, fill, tensors):
    """One file written by gguf-py: `fill(writer)` adds the keys, `tensors` is (name, numpy array,
    raw ggml type or None); a uint8 array with a raw type is already in that type's bytes."""
    w = gguf.GGUFWriter(path, arch)
    fill(w)
    for name, arr, raw in tensors:
        if raw is None:
            w.add_tensor(name, arr)
        elif arr.dtype == np.uint8:
            w.add_tensor(name, arr, raw_dtype=raw)
        else:
            w.add_tensor(name, gguf.quants.quantize(arr, raw), raw_dtype=raw)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write(path, arch, kv, tensors, n_vocab=VOCAB):
    """A small model: block count, sizes, the keys of `kv` (`nextn`, `extra`, `vocab`: the
    keyword arguments of vocab()), a vocabulary."""
    def fill(w):
        w.add_block_count(kv.get("blocks", 2))
        w.add_embedding_length(EMBD)
        w.add_context_length(4096)
        if "nextn" in kv:
            w.add_uint32(f"{arch}.nextn_predict_layers", kv["nextn"])
        if "extra" in kv:
            kv["extra"](w)
        vocab(w, n_vocab, **kv.get("vocab", {}))
    save(path, arch, fill, tensors)


def trunk(blocks, rows=VOCAB):
    out = [("token_embd.weight", z(rows, EMBD, dtype=np.float16), None),
           ("output_norm.weight", z(EMBD), None)]
    for b in range(blocks):
        out += [(f"blk.{b}.attn_norm.weight", z(EMBD), None),
                (f"blk.{b}.attn_q.weight", z(EMBD, EMBD), Q.Q8_0)]
    return out


def nextn(b):
    return [(f"blk.{b}.nextn.eh_proj.weight", z(EMBD, 2 * EMBD, dtype=np.float16), None),
            (f"blk.{b}.nextn.enorm.weight", z(EMBD), None),
            (f"blk.{b}.nextn.hnorm.weight", z(EMBD), None)]


def cases(out):
    p = lambda name: os.path.join(out, name)
    # A classic draft model: qwen3, two blocks, a Q8_0 projection, a byte-level BPE vocabulary.
    write(p("draft-qwen3.gguf"), "qwen3", {}, trunk(2))
    # A Qwen3.5 target with its MTP block last (block_count 3 = 2 trunk + 1 MTP): clean.
    write(p("mtp-qwen35.gguf"), "qwen35", {"blocks": 3, "nextn": 1},
          trunk(2) + [("blk.2.attn_norm.weight", z(EMBD), None)] + nextn(2))
    # The MTP block alone (convert_hf_to_gguf.py --mtp): info.
    write(p("mtp-only.gguf"), "qwen35", {"blocks": 3, "nextn": 1},
          [("token_embd.weight", z(VOCAB, EMBD, dtype=np.float16), None),
           ("blk.2.attn_norm.weight", z(EMBD), None)] + nextn(2))
    # A draft head written at blk.0 where llama.cpp looks at blk.2 (llama.cpp#27836): error.
    write(p("mtp-wrong-index.gguf"), "qwen35", {"blocks": 3, "nextn": 1},
          [("token_embd.weight", z(VOCAB, EMBD, dtype=np.float16), None)] + nextn(0))
    # NextN tensors without the key: warning.
    write(p("mtp-key-missing.gguf"), "qwen35", {"blocks": 3},
          trunk(2) + [("blk.2.attn_norm.weight", z(EMBD), None)] + nextn(2))
    # nextn_predict_layers larger than block_count: error.
    write(p("mtp-count-over.gguf"), "qwen35", {"blocks": 1, "nextn": 2}, trunk(1) + nextn(0))
    # DFlash drafters, with and without the target layers (metadata of llama.cpp#25792).
    def dflash_keys(w):
        w.add_array("dflash.target_layers", [2, 10, 18, 26, 34])
        w.add_uint32("tokenizer.ggml.mask_token_id", VOCAB - 2)
    write(p("dflash.gguf"), "dflash", {"extra": dflash_keys}, trunk(1))
    write(p("dflash-no-target-layers.gguf"), "dflash", {}, trunk(1))
    # token_embd with 300 rows, a vocabulary of 301 tokens: error.
    write(p("embd-rows.gguf"), "qwen3", {}, trunk(1), n_vocab=VOCAB + 1)
    # Targets and drafts for llama.cpp and koboldcpp lines (tests/launch_llama.rs). The target:
    # qwen3, four blocks, the vocabulary draft-qwen3.gguf has (a compatible pair).
    write(p("target-qwen3.gguf"), "qwen3", {"blocks": 4}, trunk(4))
    # A SentencePiece Llama draft: another vocab type, other text, adds bos (refused).
    spm = [f"\u2581w{i}" for i in range(VOCAB - 3)] + ["<unk>", "<s>", "</s>"]
    write(p("draft-llama-spm.gguf"), "llama",
          {"vocab": {"model": "llama", "pre": "default", "texts": spm, "add_bos": True}}, trunk(2))
    # Same type and size, other text from id 100 on (a tokenizer of another training run).
    other = tokens(VOCAB)
    other[100:110] = [f"other{i}" for i in range(10)]
    write(p("draft-other-text.gguf"), "qwen3", {"vocab": {"texts": other}}, trunk(2))
    # The target's text and 64 more tokens: within llama.cpp's 128-token allowance (a warning).
    wider = tokens(VOCAB) + [f"extra{i}" for i in range(64)]
    write(p("draft-wider.gguf"), "qwen3", {"vocab": {"texts": wider}}, trunk(2, rows=len(wider)))
    # A DSpark draft (the dflash architecture with a Markov head) of block 8 and no confidence
    # head: llama.cpp refuses it with --spec-draft-p-min above 0.
    def dspark_keys(w):
        dflash_keys(w)
        w.add_uint32("dflash.block_size", 8)
        w.add_bool("dflash.has_confidence_head", False)
    write(p("dspark-no-confidence.gguf"), "dflash", {"extra": dspark_keys},
          trunk(1) + [("markov_w1.weight", z(EMBD, EMBD), None)])
    # A target of 36 blocks with the draft vocabulary: dflash.gguf's target layers (up to 34)
    # fit it; target-qwen3.gguf's 4 blocks they do not (llama.cpp aborts at start).
    write(p("target-qwen3-36.gguf"), "qwen3", {"blocks": 36}, trunk(36))
    # Target layers [1, 2, 4] for the 4-block target: 4 is the last layer's output, which a
    # qwen3 graph does not publish (FIELD row 23: 48 for a 48-block target).
    def last_layer_keys(w):
        w.add_array("dflash.target_layers", [1, 2, 4])
        w.add_uint32("tokenizer.ggml.mask_token_id", VOCAB - 2)
    write(p("dflash-last-layer.gguf"), "dflash", {"extra": last_layer_keys}, trunk(1))
    # A converter's empty output: the DFlash keys and vocabulary, no tensors (ik_llama.cpp#2043).
    write(p("dflash-empty.gguf"), "dflash", {"extra": dflash_keys}, [])
    # A DSpark draft written with a no_vocab tokenizer and a mask id llama.cpp never reads
    # (llama.cpp#26761): no token list, only the vocabulary size.
    def no_vocab(w):
        w.add_array("dflash.target_layers", [2, 10, 18, 26, 34])
        w.add_tokenizer_model("no_vocab")
        w.add_vocab_size(VOCAB)
        w.add_uint32("tokenizer.ggml.mask_token_id", VOCAB - 2)
    save(p("dspark-no-vocab.gguf"), "dflash",
         lambda w: (w.add_block_count(1), w.add_embedding_length(EMBD), no_vocab(w)),
         trunk(1) + [("markov_w1.weight", z(EMBD, EMBD), None)])
    # An MTP-only draft of the qwen35 target's width with another model's vocabulary (same
    # count, other text from id 100): llama.cpp's draft-mtp loads it (pocketpal-ai#876).
    write(p("mtp-only-other-vocab.gguf"), "qwen35",
          {"blocks": 3, "nextn": 1, "vocab": {"texts": other}},
          [("token_embd.weight", z(VOCAB, EMBD, dtype=np.float16), None),
           ("blk.2.attn_norm.weight", z(EMBD), None)] + nextn(2))


def big(out, data_bytes=4 << 30, name="big.gguf", n_vocab=151936):
    """A 36-block header with an `n_vocab` vocabulary (Qwen3's by default) declaring `data_bytes`
    of Q4_K data, the data left as a hole."""
    path = os.path.join(out, name)
    w = gguf.GGUFWriter(path, "qwen3")
    w.add_block_count(36)
    w.add_embedding_length(4096)
    w.add_context_length(40960)
    vocab(w, n_vocab)
    w.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}" * 50)
    names = [f"blk.{b}.{t}.weight" for b in range(36)
             for t in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")]
    per = data_bytes // len(names)
    rows = per // 144  # Q4_K: 256 elements in 144 bytes
    for name in names:
        w.add_tensor_info(name, [rows, 144], np.dtype(np.uint8), rows * 144, raw_dtype=Q.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    data = sum(gguf.GGUFWriter.ggml_pad(rows * 144, 32) for _ in names)
    start = gguf.GGUFWriter.ggml_pad(os.path.getsize(path), 32)
    os.truncate(path, start + data)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: generate.py OUT_DIR [--big]")
    os.makedirs(sys.argv[1], exist_ok=True)
    cases(sys.argv[1])
    if "--big" in sys.argv[2:]:
        big(sys.argv[1])
        # A header of about 20 MB (a million-token vocabulary) over 1 MiB of data: a whole
        # file small enough to serve from memory, its header well past the 1 MiB read block.
        big(sys.argv[1], 1 << 20, "big-header.gguf", 1_000_000)
