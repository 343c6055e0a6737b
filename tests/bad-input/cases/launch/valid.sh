#!/usr/bin/env bash
export VLLM_USE_V2_MODEL_RUNNER=1
vllm serve Qwen/Qwen3-8B \
  --speculative-config '{"method": "dflash", "model": "z-lab/Qwen3-8B-DFlash-b16", "num_speculative_tokens": 15}' \
  --max-num-seqs 8
