#!/bin/sh
# The incident (README): the hand-guessed Qwen3.6-27B drafter served behind its target. The
# paths are relative to this file, as a script run from its own directory names them.
vllm serve ../../../fixtures/targets/Qwen3.6-27B \
  --speculative-config '{"method": "dflash", "model": "../../../fixtures/incident/Qwen3.6-27B-DFlash", "num_speculative_tokens": 15}'
