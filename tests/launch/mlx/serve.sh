#!/bin/sh
# An MTP-enabled MLX quant of Qwen3.5 served by mlx-lm with a draft model (tests/launch_mlx.rs).
mlx_lm.server --model tests/launch/mlx/qwen3.5-mlx-mtp \
  --draft-model tests/launch/models/qwen3-0.6b-draft-lm --num-draft-tokens 3 --port 8080
