vllmé serve Qwen/Qwen3-8B
