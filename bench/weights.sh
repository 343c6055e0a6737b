#!/usr/bin/env bash
# What the safetensors header checks add to `lint`, on a 3-shard drafter with the real Qwen3-8B
# DFlash b16 shapes (58 BF16 tensors, 2.1 GB of data in sparse files; tests/weights/generate.py).
#
#   bench/weights.sh            # RUNS=200 hyperfine runs per command
#
# Compares, with hyperfine (-N, warm-up 5):
#   1. lint alone                    target/release/examples/lint-weights --no-weights D T
#   2. lint + weights header checks  target/release/examples/lint-weights D T
#      (bench/lint_weights.rs: lint's own library calls, then weights::read_local + check, as the
#      lint command will run them once wired; the difference 2 − 1 is what the checks add)
#   3. dflash-check lint D --target T          (the shipped lint, for reference)
#   4. dflash-check weights D --target T       (the table, totals and checks)
# then counts, with strace, the bytes read from the shard files by (2).
#
# Needs cargo, hyperfine and strace (apt-get install -y hyperfine strace), python3, and the
# fixtures (scripts/weights-setup.sh, run here when missing). Writes to bench/work/.
set -euo pipefail

RUNS="${RUNS:-200}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
work="$here/work"
mkdir -p "$work"
cd "$root"

for tool in hyperfine strace python3 cargo; do
    command -v "$tool" >/dev/null || { echo "error: $tool is needed (apt-get install -y hyperfine strace)" >&2; exit 2; }
done

fixtures="${DFLASH_WEIGHTS_FIXTURES:-$root/target/weights-fixtures}"
[ -f "$fixtures/manifest.json" ] || scripts/weights-setup.sh
drafter="$fixtures/realistic/qwen3-8b-dflash-b16"
target="$fixtures/realistic/qwen3-8b"

cargo build --release --locked --quiet --bin dflash-check --example lint-weights
bin="$root/target/release/dflash-check"
ex="$root/target/release/examples/lint-weights"

# Same verdict with and without: a clean drafter, 3 files, 58 tensors, no finding.
"$ex" "$drafter" "$target" | grep -q "weights: 3 file(s), 58 tensors, 0 finding(s)" \
    || { echo "error: lint-weights did not read the 3 shards cleanly" >&2; exit 2; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(uname -sr)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "versions: $("$bin" --version), $(hyperfine --version)"
echo

export NO_COLOR=1 HF_HUB_OFFLINE=1
hyperfine -N --warmup 5 --runs "$RUNS" --ignore-failure --style basic \
    --export-json "$work/weights-hyperfine.json" \
    --command-name "lint alone" "$ex --no-weights $drafter $target" \
    --command-name "lint + weights header checks" "$ex $drafter $target" \
    --command-name "dflash-check lint" "$bin lint $drafter --target $target" \
    --command-name "dflash-check weights" "$bin weights $drafter --target $target"

# The header step alone, in-process (no start-up noise).
"$ex" --repeat 2000 "$drafter" "$target" 2>&1 >/dev/null | tail -1

# Bytes read from the shards: only their headers.
strace -f -e trace=openat,read,pread64 -o "$work/weights-strace.txt" "$ex" "$drafter" "$target" >/dev/null

echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/weights-hyperfine.json" "$work/weights-strace.txt" "$drafter" <<'EOF'
import json, os, re, statistics, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
print(f"{'command':32} {'median':>9} {'mean':>9} {'min':>8} {'stddev':>8}")
for name, r in results.items():
    print(f"{name:32} {r['median']*1e3:7.2f}ms {r['mean']*1e3:7.2f}ms {r['min']*1e3:6.2f}ms {r['stddev']*1e3:6.2f}ms")
a, b = results["lint alone"], results["lint + weights header checks"]
print(f"\nadded by the header checks: median {(b['median']-a['median'])*1e3:+.2f} ms, "
      f"mean {(b['mean']-a['mean'])*1e3:+.2f} ms, min {(b['min']-a['min'])*1e3:+.2f} ms")

fds, read = {}, {}
for line in open(sys.argv[2]):
    m = re.search(r'openat\(.*"([^"]+)".*\)\s+=\s+(\d+)$', line)
    if m:
        fds[m.group(2)] = m.group(1)
        continue
    m = re.search(r'\b(?:read|pread64)\((\d+),.*\)\s+=\s+(\d+)$', line)
    if m and fds.get(m.group(1), "").endswith(".safetensors"):
        path = fds[m.group(1)]
        read[path] = read.get(path, 0) + int(m.group(2))
total = 0
for path, n in sorted(read.items()):
    size = os.path.getsize(path)
    total += size
    print(f"read {n:>6} bytes of {os.path.basename(path)} ({size:,} bytes)")
print(f"read {sum(read.values()):,} bytes of {total:,}")
EOF
