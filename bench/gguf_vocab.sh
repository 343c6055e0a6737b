#!/usr/bin/env bash
# Benchmarks a llama.cpp line's draft-model check (issue 31): two Qwen3-size GGUF vocabularies
# compared id by id, against the Python a user would write with llama.cpp's own reader.
#
#   bench/gguf_vocab.sh                 # RUNS=15 rounds; builds the release binary
#   BIN=path/to/dflash-check RUNS=10 bench/gguf_vocab.sh
#
# Inputs, written in bench/work/gguf-vocab by llama.cpp's writer (gguf-py from .venv-hf,
# scripts/weights-setup.sh): target.gguf, a Qwen3-size tokenizer (151,936 tokens, their types,
# bos/eos, a chat template) and a few small tensors; draft.gguf, the same vocabulary with one
# token near the end renamed, so neither contender can stop early. Both must exit 1:
#   1. dflash-check launch -- llama-server -m target.gguf -md draft.gguf --spec-type draft-simple
#      (release build: both headers read, the vocabularies compared, every launch rule)
#   2. python bench/gguf_vocab_peer.py draft.gguf target.gguf (gguf.GGUFReader twice, llama.cpp's
#      compatibility check in Python), process start and imports included
# Needs: cargo, python3; the peer runs in .venv-hf (gguf==0.19.0, numpy).
set -euo pipefail

RUNS="${RUNS:-15}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
work="$here/work/gguf-vocab"
cd "$root"

if [ -n "${BIN:-}" ]; then
    bin="$BIN"
else
    cargo build --release --locked --quiet --bin dflash-check
    bin="$root/target/release/dflash-check"
fi
py="$root/.venv-hf/bin/python"
"$py" -c 'import gguf, numpy' 2>/dev/null || scripts/weights-setup.sh >/dev/null

mkdir -p "$work"
if [ ! -f "$work/draft.gguf" ]; then
    "$py" - "$work" <<'PY'
import os, sys
import numpy as np
import gguf

out = sys.argv[1]
n = 151_936
special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
words = [f"\u0120w{i}" for i in range(n - len(special))]

def write(path, tokens):
    w = gguf.GGUFWriter(path, "qwen3")
    w.add_block_count(36)
    w.add_embedding_length(64)
    w.add_context_length(40960)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types([1] * (n - 3) + [3] * 3)
    w.add_bos_token_id(n - 3)
    w.add_eos_token_id(n - 1)
    w.add_add_bos_token(False)
    w.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    w.add_tensor("output_norm.weight", np.zeros(64, dtype=np.float32))
    w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()

target = words + special
draft = list(target)
draft[n - 10] = "\u0120renamed"
write(os.path.join(out, "target.gguf"), target)
write(os.path.join(out, "draft.gguf"), draft)
PY
fi
export NO_COLOR=1 HF_HUB_OFFLINE=1
line=(llama-server -m "$work/target.gguf" -md "$work/draft.gguf" --spec-type draft-simple)
echo "dflash-check: $("$bin" --version)  python: $("$py" --version)  gguf: $("$py" -c 'import importlib.metadata as m; print(m.version("gguf"))')"
"$bin" launch -- "${line[@]}" || true
"$py" "$here/gguf_vocab_peer.py" "$work/draft.gguf" "$work/target.gguf" || true
python3 "$here/vocab_time.py" "$RUNS" 1 \
    "dflash-check launch=$bin launch -- ${line[*]}" \
    "python gguf.GGUFReader (gguf_vocab_peer.py)=$py $here/gguf_vocab_peer.py $work/draft.gguf $work/target.gguf"
