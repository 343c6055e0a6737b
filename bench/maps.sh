#!/usr/bin/env bash
# Issue 42: the vocabulary maps of a 150k-vocabulary EAGLE-3 head read and judged, and the bytes
# read for them (budget: under 20 ms, bytes read bounded by the maps' size).
#
#   bench/maps.sh                 # REPEAT=500 in-process runs per step, RUNS=100 hyperfine runs
#
# Inputs (bench/maps.py, written into bench/work/maps): a Qwen3-8B-size EAGLE-3 head, one
# model.safetensors of 762 MiB apparent size (the BF16 tensors a hole) whose d2t (int64 [32000],
# 250 KiB) and t2d (bool [151936], 148 KiB) are real: `clean` (a consistent pair) and
# `ids-not-offsets` (d2t holds target ids: weights-d2t-values).
#   1. target/release/examples/maps --repeat N DIR   (bench/maps.rs: read_local, the map reads
#      alone, run; means per run in-process)
#   2. hyperfine: dflash-check weights DIR, the whole command (start-up, table, render)
#   3. strace: the bytes `dflash-check weights DIR` reads from model.safetensors
# Needs cargo, hyperfine, strace, and a Python with numpy and safetensors (PYTHON, default the
# .venv-hf scripts/weights-setup.sh makes).
set -euo pipefail

REPEAT="${REPEAT:-500}"
RUNS="${RUNS:-100}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
work="$here/work/maps"
cd "$root"
python="${PYTHON:-${DFLASH_HF_VENV:-$root/.venv-hf}/bin/python}"

for tool in hyperfine strace cargo; do
    command -v "$tool" >/dev/null || { echo "error: $tool is needed" >&2; exit 2; }
done
"$python" "$here/maps.py" "$work"
cargo build --release --locked --quiet --bin dflash-check --example maps
bin="$root/target/release/dflash-check"
ex="$root/target/release/examples/maps"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(uname -sr)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
export NO_COLOR=1 HF_HUB_OFFLINE=1
for case in clean ids-not-offsets; do
    "$ex" --repeat "$REPEAT" "$work/$case"
done
hyperfine -N --warmup 5 --runs "$RUNS" --ignore-failure --style basic \
    --export-json "$work/hyperfine.json" \
    --command-name "weights clean" "$bin weights $work/clean" \
    --command-name "weights ids-not-offsets" "$bin weights $work/ids-not-offsets" >/dev/null
python3 - "$work/hyperfine.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f"dflash-check {r['command']:26} median {r['median']*1e3:6.2f} ms  min {r['min']*1e3:6.2f} ms")
PY
for case in clean ids-not-offsets; do
    strace -e trace=openat,read,pread64,lseek -o "$work/strace-$case.txt" "$bin" weights "$work/$case" >/dev/null || true
    python3 - "$work/strace-$case.txt" "$work/$case/model.safetensors" "$case" <<'PY'
import os, re, sys
fds, n, reads = set(), 0, 0
for line in open(sys.argv[1]):
    m = re.search(r'openat\(.*"([^"]+)".*\)\s+=\s+(\d+)$', line)
    if m:
        if m.group(1).endswith("model.safetensors"):
            fds.add(m.group(2))
        continue
    m = re.search(r'\b(?:read|pread64)\((\d+),.*\)\s+=\s+(\d+)$', line)
    if m and m.group(1) in fds:
        n += int(m.group(2)); reads += 1
print(f"{sys.argv[3]}: read {n:,} bytes of model.safetensors ({os.path.getsize(sys.argv[2]):,} bytes) in {reads} reads")
PY
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
