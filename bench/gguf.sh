#!/usr/bin/env bash
# The GGUF header of a multi-GB file: read time and bytes read (issue 31).
#
#   bench/gguf.sh            # RUNS=50 in-process reads, RUNS hyperfine runs of the command
#
# 1. crates/core/examples/gguf_header.rs (release): `gguf::read_path` on big.gguf RUNS times, in
#    process; prints the median/min/max time, the header's size and the bytes read (counted by
#    the reader: the header plus at most one 1 MiB block).
# 2. hyperfine -N: `dflash-check weights big.gguf --format json` (the whole command: process
#    start, header, rules, JSON), when a release binary exists (cargo build --release).
# 3. strace: the bytes the command read from big.gguf, counted by the kernel, not by us.
#
# big.gguf (tests/gguf/generate.py --big, written by llama.cpp's gguf-py): a Qwen3-8B-size
# header (151,936-token vocabulary and token types, 36 blocks of 7 Q4_K tensors, a chat
# template), 4 GiB of data left as a hole (sparse; no disk used). Needs cargo, python3 with the
# gguf package (scripts/weights-setup.sh), hyperfine and strace for 2 and 3.
set -euo pipefail
RUNS="${RUNS:-50}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
fixtures="${DFLASH_GGUF_FIXTURES:-$root/target/gguf-fixtures}"
[ -f "$fixtures/big.gguf" ] || scripts/weights-setup.sh
big="$fixtures/big.gguf"
ls -ls "$big"

cargo build --release --quiet -p dflash-check-core --example gguf_header
target/release/examples/gguf_header "$big" "$RUNS"

bin="$root/target/release/dflash-check"
if [ -x "$bin" ] && command -v hyperfine >/dev/null; then
    hyperfine -N --warmup 3 --runs "$RUNS" "$bin weights $big --format json"
fi
if [ -x "$bin" ] && command -v strace >/dev/null; then
    # Every read(2) of the file's descriptor, summed.
    strace -f -e trace=openat,read -o "$root/target/gguf-strace.txt" "$bin" weights "$big" --format json >/dev/null
    python3 - "$root/target/gguf-strace.txt" "$big" <<'PY'
import re, sys
fd, total = None, 0
for line in open(sys.argv[1]):
    m = re.search(r'openat\(.*"' + re.escape(sys.argv[2]) + r'".*= (\d+)$', line)
    if m:
        fd = m.group(1)
    m = re.search(r'\bread\((\d+),.*= (\d+)$', line)
    if m and m.group(1) == fd:
        total += int(m.group(2))
print(f"strace: {total} bytes read from {sys.argv[2]}")
PY
fi
