#!/usr/bin/env bash
# The SGLang launch the z-lab/dflash README gives (README.md@44947fbf71114e241c96de194f4b382b5dd330d0,
# "SGLang"): its export and flags, written here as a deploy script would hold them.
export SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1

# Overlap scheduling for the spec-v2 path is experimental; left off here:
# export SGLANG_ENABLE_SPEC_V2=1

python -m sglang.launch_server \
    --model-path Qwen/Qwen3.5-35B-A3B \
    --speculative-algorithm DFLASH \
    --speculative-draft-model-path z-lab/Qwen3.5-35B-A3B-DFlash \
    --speculative-num-draft-tokens 16 \
    --tp-size 1 \
    --attention-backend trtllm_mha \
    --speculative-draft-attention-backend fa4 \
    --mem-fraction-static 0.75 \
    --mamba-scheduler-strategy extra_buffer \
    --trust-remote-code
