#!/usr/bin/env bash
# Benchmarks the draft-model vocabulary comparison (issue 31) against the Python a user would
# write, side by side in one run.
#
#   bench/vocab.sh                 # RUNS=15 rounds
#   BIN=path/to/dflash-check bench/vocab.sh
#
# Inputs, built in bench/work/vocab from the real Qwen3 tokenizer (bench/fetch-qwen3-tokenizer.sh,
# 151,669 tokens): a target directory (the tokenizer as published) and a draft directory whose
# tokenizer has one added token renamed (`<tool_call>` -> `<tool_use>`, in both files), so that
# neither side can stop early: every id must be compared to find the one that differs. Both
# contenders must exit 1 (a difference found):
#   1. dflash-check lint DRAFT --family draft --target TARGET --no-weights --deny warnings
#      (release build; it also reads both configs and the target's token table for the other
#      rules). One renamed added token with equal vocab_size is a warning
#      (draft-model-vocab-mismatch), so `--deny warnings` makes the difference exit 1.
#   2. python bench/vocab_peer.py DRAFT TARGET (tokenizers.Tokenizer.from_file twice, vocab and
#      added tokens compared), process start and imports included
# Needs: cargo, npm, python3 with venv (the peer's venv is bench/work/venv, made from PyPI).
set -euo pipefail

RUNS="${RUNS:-15}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
work="$here/work/vocab"
cd "$root"

if [ -n "${BIN:-}" ]; then
    bin="$BIN"
else
    cargo build --release --locked --quiet --bin dflash-check
    bin="$root/target/release/dflash-check"
fi

qwen3="$("$here/fetch-qwen3-tokenizer.sh")"
mkdir -p "$work/target" "$work/draft"
cp "$qwen3/tokenizer.json" "$qwen3/tokenizer_config.json" "$work/target/"
sed 's/"<tool_call>"/"<tool_use>"/' "$qwen3/tokenizer.json" > "$work/draft/tokenizer.json"
sed 's/"<tool_call>"/"<tool_use>"/' "$qwen3/tokenizer_config.json" > "$work/draft/tokenizer_config.json"
cat > "$work/target/config.json" <<'JSON'
{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 5120,
 "num_hidden_layers": 64, "vocab_size": 151936, "max_position_embeddings": 40960}
JSON
cat > "$work/draft/config.json" <<'JSON'
{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024,
 "num_hidden_layers": 28, "vocab_size": 151936, "max_position_embeddings": 40960}
JSON

venv="$here/work/venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -c 'import tokenizers' 2>/dev/null || "$venv/bin/pip" install --quiet tokenizers==0.23.3
py="$venv/bin/python"
export HF_HUB_OFFLINE=1 NO_COLOR=1

echo "dflash-check: $("$bin" --version)  python: $("$py" --version)  tokenizers: $("$py" -c 'import tokenizers; print(tokenizers.__version__)')"
"$bin" lint "$work/draft" --family draft --target "$work/target" --no-weights --deny warnings || true
"$py" "$here/vocab_peer.py" "$work/draft" "$work/target" || true
python3 "$here/vocab_time.py" "$RUNS" 1 \
    "dflash-check lint --family draft=$bin lint $work/draft --family draft --target $work/target --no-weights --deny warnings" \
    "python tokenizers (vocab_peer.py)=$py $here/vocab_peer.py $work/draft $work/target"
