#!/usr/bin/env bash
# Prepares what tests/weights.rs needs, idempotently:
#   .venv-hf   gets safetensors and numpy (besides huggingface_hub, which olah-setup.sh installs):
#              the real Python packages that write the fixtures and that the Hub test compares with
#   target/weights-fixtures/   small synthetic drafters written by tests/weights/generate.py
#   .venv-hf   also gets `gguf` (llama.cpp's own GGUF writer, gguf-py, on PyPI)
#   target/gguf-fixtures/      GGUF files written with it by tests/gguf/generate.py (tests/gguf.rs),
#              and big.gguf: a 4 GiB sparse file (its data a hole) with a Qwen3-size header
# Run from anywhere. Afterwards:  cargo test --test weights --test gguf
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
venv="${DFLASH_HF_VENV:-$root/.venv-hf}"

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import safetensors, numpy, huggingface_hub, gguf' 2>/dev/null; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        huggingface_hub safetensors numpy 'gguf==0.19.0'
fi
out="${DFLASH_WEIGHTS_FIXTURES:-$root/target/weights-fixtures}"
"$venv/bin/python" "$root/tests/weights/generate.py" "$out"
"$venv/bin/python" "$root/tests/gguf/generate.py" "${DFLASH_GGUF_FIXTURES:-$root/target/gguf-fixtures}" --big
echo "weights-setup: ready ($venv; fixtures in $out)"
