# A pasted command whose JSON lost its closing quote.
vllm serve Qwen/Qwen3.5-27B \
  --speculative-config '{"method": "dflash", "model": "z-lab/Qwen3.5-27B-DFlash", "num_speculative_tokens": 15} \
  --max-num-batched-tokens 32768
