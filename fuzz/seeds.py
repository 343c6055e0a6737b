#!/usr/bin/env python3
"""Writes the seed inputs of the safetensors_header, launch_command and metrics_text fuzz targets
into fuzz/corpus-work/<target>/ (ignored by git), from real producers:

  safetensors_header  files written by the Python `safetensors` package (save(): the reference
                      writer's layout, metadata, F16/F32/F64/I64/BOOL/U8, empty and 0-d tensors)
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


if __name__ == "__main__":
    for t in ["safetensors_header", "launch_command", "metrics_text"]:
        shutil.rmtree(os.path.join(WORK, t), ignore_errors=True)
    print(safetensors_seeds(), "safetensors seeds,", launch_seeds(), "launch seeds,",
          metrics_seeds(), "metrics seeds in", WORK)
