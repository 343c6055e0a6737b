#!/usr/bin/env python3
"""The exclude-list inputs of issue 41's budget: an MTP checkpoint (scripts/weights-setup.sh's
generated Qwen3.5 cases) whose quantization_config holds, each near the config's caps,
  1,024 ModelOpt wildcards of 4 kB, 1,024 compressed-tensors `re:` patterns of 4 kB,
  65,536 AWQ names, and 1,024 small `re:` patterns that each compile.
Usage: bench/exclude_lists.py FIXTURES OUT   (FIXTURES: target/weights-fixtures/cases)
bench/exclude_lists.sh runs `weights` on each and fails above one second."""
import json, os, shutil, sys

base, out = sys.argv[1], sys.argv[2]
shutil.rmtree(out, ignore_errors=True)


def make(name, src, q):
    d = os.path.join(out, name)
    shutil.copytree(os.path.join(base, src), d)
    c = json.load(open(os.path.join(d, "config.json")))
    c["quantization_config"] = q
    json.dump(c, open(os.path.join(d, "config.json"), "w"))


ct = {"quant_method": "compressed-tensors", "format": "pack-quantized",
      "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4}}}}
make("modelopt-1024-wildcards-4k", "mtp-qwen35-regex",
     {"quant_method": "modelopt", "quant_algo": "NVFP4",
      "ignore": ["lm_head"] + ["model." + "*a" * 2040 + "x" for _ in range(1023)]})
make("ct-1024-regex-4k", "mtp-qwen35-regex",
     dict(ct, ignore=["lm_head"] + ["re:" + "(a|aa)*" * 580 + "b" for _ in range(1023)]))
make("ct-1024-small-regex", "mtp-qwen35-regex",
     dict(ct, ignore=["lm_head"] + ["re:" + "(.*a)" * 20 + "b" + str(i) for i in range(1023)]))
make("awq-65536-names", "mtp-qwen35-awq-excluded",
     {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm",
      "modules_to_not_convert": ["visual"] + [f"model.language_model.layers.{i}.mlp.experts.{i % 512}.down_proj"
                                             for i in range(65535)]})
