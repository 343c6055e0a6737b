#!/usr/bin/env python3
"""Writes the seed inputs of the safetensors_header, gguf_header, launch_command and metrics_text fuzz targets
into fuzz/corpus-work/<target>/ (ignored by git), from real producers:

  safetensors_header  files written by the Python `safetensors` package (save(): the reference
                      writer's layout, metadata, F16/F32/F64/I64/BOOL/U8, empty and 0-d tensors)
  gguf_header         files written by llama.cpp's own writer (the `gguf` package, gguf-py): every
                      metadata type, string arrays (a vocabulary), F32/F16/Q8_0/Q4_K tensors,
                      MTP (nextn) and DFlash keys, a custom alignment, no tensors
  launch_command      the command lines quoted in tests/launch.rs and the files of tests/launch/files
  metrics_text        /metrics bodies rendered by `prometheus_client` through
                      tests/acceptance/metrics_server.py (vLLM and SGLang scenarios)

fuzz/run.sh adds the committed bad-input cases (tests/bad-input/cases/{weights,launch,metrics})
on top. Needs numpy, safetensors and prometheus_client: run with the Python of .venv-hf
(scripts/weights-setup.sh, scripts/acceptance-setup.sh make it):

    .venv-hf/bin/python fuzz/seeds.py
"""
import os
import re
import shutil
import subprocess
import sys
import urllib.request

import numpy as np
from safetensors.numpy import save

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "fuzz", "corpus-work")


def out(target, name, data):
    d = os.path.join(WORK, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def safetensors_seeds():
    f16 = np.float16

    def z(*s, dtype=f16):
        return np.zeros(s, dtype=dtype)

    seeds = {
        "single-f16": {"a": z(2, 3), "b": z(4)},
        "dflash-tiny": {
            "layers.0.self_attn.q_proj.weight": z(8, 8),
            "layers.0.self_attn.k_proj.weight": z(4, 8),
            "fc.weight": z(8, 24),
            "norm.weight": z(8),
        },
        "mixed-dtypes": {
            "d2t": np.arange(4, dtype=np.int64),
            "t2d": np.array([True, False, True]),
            "w": z(2, 2, dtype=np.float32),
            "s": np.array(1.0, dtype=np.float64),
        },
        "empty-tensor": {"e": z(0, 3), "x": z(1)},
        "u8": {"u": np.zeros((5,), dtype=np.uint8)},
    }
    for name, tensors in seeds.items():
        out("safetensors_header", name, save(tensors, metadata={"format": "pt"}))
    out("safetensors_header", "no-metadata", save({"a": z(1)}))
    out("safetensors_header", "no-tensors", save({}, metadata={"format": "pt"}))
    return len(seeds) + 2


def launch_seeds():
    n = 0
    src = open(os.path.join(ROOT, "tests", "launch.rs")).read()
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', src):
        s = m.group(1).encode().decode("unicode_escape")
        if len(s) > 20 and re.match(r"\s*(\S+=\S+\s+)*(vllm|python|sglang|docker|env)\b", s):
            n += 1
            out("launch_command", f"cmd-{n}", s)
    files = os.path.join(ROOT, "tests", "launch", "files")
    for name in os.listdir(files):
        n += 1
        out("launch_command", name, open(os.path.join(files, name), "rb").read())
    return n


def metrics_seeds():
    server = os.path.join(ROOT, "tests", "acceptance", "metrics_server.py")
    n = 0
    for scenario in ["vllm-healthy", "vllm-cliff", "vllm-two-models", "vllm-no-spec", "sglang"]:
        p = subprocess.Popen([sys.executable, server, scenario, "--lifetime", "10"],
                             stdout=subprocess.PIPE, text=True)
        try:
            port = p.stdout.readline().split()[1]
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
            out("metrics_text", scenario, body)
            n += 1
        finally:
            p.terminate()
            p.wait()
    return n


def gguf_seeds():
    import tempfile
    import gguf

    sys.path.insert(0, os.path.join(ROOT, "tests", "gguf"))
    from generate import save  # llama.cpp's writer, as tests/gguf.rs's fixtures use it

    def one(name, arch, fill, tensors=()):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "f.gguf")
            save(path, arch, fill, tensors)
            out("gguf_header", name, open(path, "rb").read())

    def scalars(w):
        w.add_uint8("t.u8", 1); w.add_int8("t.i8", -1); w.add_uint16("t.u16", 2)
        w.add_int16("t.i16", -2); w.add_uint32("t.u32", 3); w.add_int32("t.i32", -3)
        w.add_float32("t.f32", 0.5); w.add_bool("t.bool", True); w.add_string("t.str", "x")
        w.add_uint64("t.u64", 4); w.add_int64("t.i64", -4); w.add_float64("t.f64", 0.25)
        w.add_array("t.ints", [1, 2, 3]); w.add_array("t.strs", ["a", "b"])

    def vocab(w):
        w.add_block_count(2)
        w.add_embedding_length(32)
        w.add_tokenizer_model("gpt2"); w.add_tokenizer_pre("qwen2")
        w.add_token_list(["a", "b", "<|im_end|>", "\u00e9"]); w.add_token_types([1, 1, 3, 1])
        w.add_bos_token_id(0); w.add_eos_token_id(2); w.add_add_bos_token(False)

    def mtp(w):
        vocab(w)
        w.add_uint32("qwen35.nextn_predict_layers", 1)

    def dflash(w):
        vocab(w)
        w.add_array("dflash.target_layers", [1, 3])
        w.add_uint32("tokenizer.ggml.mask_token_id", 3)

    f32 = lambda *s: np.zeros(s, dtype=np.float32)
    Q = gguf.GGMLQuantizationType
    one("scalars", "llama", scalars)
    one("vocab-tensors", "qwen3", vocab,
        [("token_embd.weight", f32(4, 32).astype(np.float16), None), ("blk.0.attn_q.weight", f32(2, 32), Q.Q8_0)])
    one("mtp", "qwen35", mtp, [("blk.1.nextn.enorm.weight", f32(32), None)])
    one("dflash", "dflash", dflash, [("blk.0.attn_norm.weight", f32(32), None)])
    one("q4k", "qwen3", lambda w: w.add_custom_alignment(64), [("w", np.zeros((1, 144), dtype=np.uint8), Q.Q4_K)])
    return 5


if __name__ == "__main__":
    for t in ["safetensors_header", "gguf_header", "launch_command", "metrics_text"]:
        shutil.rmtree(os.path.join(WORK, t), ignore_errors=True)
    print(safetensors_seeds(), "safetensors seeds,", gguf_seeds(), "gguf seeds,", launch_seeds(), "launch seeds,",
          metrics_seeds(), "metrics seeds in", WORK)
