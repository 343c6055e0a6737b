vllm serve Qwen/Qwen3-8B --speculative-config '["dflash", 15]'
