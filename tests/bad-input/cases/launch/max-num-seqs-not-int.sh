vllm serve Qwen/Qwen3-8B --speculative-config '{"method": "dflash", "num_speculative_tokens": 15}' --max-num-seqs eight
