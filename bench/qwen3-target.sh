#!/usr/bin/env bash
# Makes the headline benchmark's target model directory, bench/work/target (the real Qwen3
# tokenizer files, fetched and checked by fetch-qwen3-tokenizer.sh, and the Qwen3-8B config in
# bench/inputs), and prints its path. Used by bench/run.sh and bench/headline.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tokenizer_dir="$("$here/fetch-qwen3-tokenizer.sh")"
target="$here/work/target"
mkdir -p "$target"
cp "$tokenizer_dir/tokenizer.json" "$tokenizer_dir/tokenizer_config.json" "$target/"
cp "$here/inputs/qwen3-8b.config.json" "$target/config.json"
echo "$target"
