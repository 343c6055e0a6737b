#!/usr/bin/env bash
# What a launch line costs when its target is a real-size checkpoint (issue 40): `dflash-check
# launch -- vllm serve TARGET --speculative-config '{"method": "mtp", …}'` on a DeepSeek-V3-sized
# NVFP4 target (SYNTHETIC: bench/mtp_index.py, about 184,000 index entries, 163 shards named and
# none present, as a config checkout holds it), end to end in a release build: the line parsed,
# the target's config, its MTP head through lint and the weights rules over the whole index, the
# deployment rules and the report.
#
#   bench/launch_index.sh         # RUNS=30 rounds
#   BIN=target/release/dflash-check bench/launch_index.sh
#
# Goal (issue 40): median wall time under MAX_WALL_MS (200), measured in RUNS rounds by
# bench/vocab_time.py (median CPU time and peak RSS printed beside it). Exits 1 when missed.
# Needs cargo (unless BIN) and python3. Writes to bench/work/.
set -euo pipefail

RUNS="${RUNS:-30}"
MAX_WALL_MS="${MAX_WALL_MS:-200}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
work="$here/work"
mkdir -p "$work"
cd "$root"

python3 bench/mtp_index.py "$work/mtp-index" >/dev/null
python3 bench/mtp_index.py "$work/mtp-index-dropped" --drop-mtp >/dev/null
if [ -n "${BIN:-}" ]; then
    bin="$BIN"
else
    cargo build --release --locked --quiet --bin dflash-check
    bin="$root/target/release/dflash-check"
fi
spec='{"method":"mtp","num_speculative_tokens":1}'
export NO_COLOR=1 HF_HUB_OFFLINE=1

# The verdicts first: the head is found in the full index (exit 0, unverified: no shards), and
# its absence from the other is the error the line fails with.
"$bin" launch --engine vllm@0.34 -- vllm serve "$work/mtp-index" --speculative-config "$spec" >/dev/null \
    || { echo "error: the full index failed the line" >&2; exit 2; }
dropped="$("$bin" launch --engine vllm@0.34 --format json -- vllm serve "$work/mtp-index-dropped" --speculative-config "$spec" || true)"
grep -q weights-mtp-missing <<<"$dropped" || { echo "error: the dropped MTP layer was not reported" >&2; exit 2; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(uname -sr)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
table="$(python3 "$here/vocab_time.py" "$RUNS" 0 \
    "launch-184k-target=$bin launch --engine vllm@0.34 -- vllm serve $work/mtp-index --speculative-config '$spec'")"
echo "$table"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# The row: name, wall median, min, max, …
wall="$(echo "$table" | awk '$1 == "launch-184k-target" {sub("ms", "", $2); print $2}')"
if python3 -c "import sys; sys.exit(0 if $wall < $MAX_WALL_MS else 1)"; then
    echo "goal met: median wall ${wall} ms (under $MAX_WALL_MS)"
else
    echo "goal missed: median wall ${wall} ms (goal under $MAX_WALL_MS)"
    exit 1
fi
