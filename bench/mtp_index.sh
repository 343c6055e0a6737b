#!/usr/bin/env bash
# What reading a real-size target index costs (issue 30): `dflash-check weights DIR` on a
# DeepSeek-V3-sized NVFP4 index with its MTP layer (SYNTHETIC: bench/mtp_index.py, about 184,000
# names, 17 MB, 163 shards named and none present), end to end in a release build: start-up, the
# config, the index read entry by entry, the MTP checks over every name, and the report.
#
#   bench/mtp_index.sh            # RUNS=30 hyperfine runs, then RUNS rounds side by side
#   BIN=target/release/dflash-check BASELINE_BIN=old/dflash-check bench/mtp_index.sh
#
# Goals (issue 44): the full index's `weights --format json` at a median CPU time (user +
# system) under MAX_CPU_MS (50) and a median peak RSS under MAX_RSS_MB (35), measured in RUNS
# rounds by bench/vocab_time.py (each round runs each command once). Exits 1 when one is
# missed. Needs cargo (unless BIN), hyperfine (apt-get install -y hyperfine) and python3.
# Writes to bench/work/.
set -euo pipefail

RUNS="${RUNS:-30}"
MAX_CPU_MS="${MAX_CPU_MS:-50}"
MAX_RSS_MB="${MAX_RSS_MB:-35}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
work="$here/work"
mkdir -p "$work"
cd "$root"

for tool in hyperfine python3 cargo; do
    command -v "$tool" >/dev/null || { echo "error: $tool is needed (apt-get install -y hyperfine)" >&2; exit 2; }
done

python3 bench/mtp_index.py "$work/mtp-index"
python3 bench/mtp_index.py "$work/mtp-index-dropped" --drop-mtp
if [ -n "${BIN:-}" ]; then
    bin="$BIN"
else
    cargo build --release --locked --quiet --bin dflash-check
    bin="$root/target/release/dflash-check"
fi

# The verdicts: every shard is missing (the point is the index alone); the MTP layer is found,
# and its absence is an error. (Each run exits 1 for the missing shards: the output is taken
# first, so that pipefail does not read that exit code as grep's answer.)
full="$("$bin" weights "$work/mtp-index" --format json || true)"
dropped="$("$bin" weights "$work/mtp-index-dropped" --format json || true)"
if grep -q weights-mtp-missing <<<"$full"; then
    echo "error: the MTP layer was not found in the full index" >&2; exit 2
fi
if ! grep -q weights-mtp-missing <<<"$dropped"; then
    echo "error: the dropped MTP layer was not reported" >&2; exit 2
fi

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(uname -sr)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "versions: $("$bin" --version), $(hyperfine --version)"
export NO_COLOR=1 HF_HUB_OFFLINE=1
hyperfine -N --warmup 3 --runs "$RUNS" --ignore-failure --style basic \
    --export-json "$work/mtp-index-hyperfine.json" \
    --command-name "weights, 184k-entry index with its MTP layer" "$bin weights $work/mtp-index --format json" \
    --command-name "weights, the same without the MTP layer" "$bin weights $work/mtp-index-dropped --format json" \
    --command-name "start-up alone (--version)" "$bin --version"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

named=("weights-full=$bin weights $work/mtp-index --format json"
    "weights-without-mtp=$bin weights $work/mtp-index-dropped --format json"
    "version=$bin --version")
[ -n "${BASELINE_BIN:-}" ] && named+=("baseline-weights-full=$BASELINE_BIN weights $work/mtp-index --format json")
# Every weights run exits 1 (the absent shards); --version exits 0: timed in two calls.
table="$(python3 "$here/vocab_time.py" "$RUNS" 1 "${named[0]}" "${named[1]}" ${named[3]:+"${named[3]}"})"
echo "$table"
python3 "$here/vocab_time.py" "$RUNS" 0 "${named[2]}" | tail -1
# The first row: name, wall median, min, max, ratio, pairs, CPU median, ratio, pairs, peak RSS.
read -r cpu rss < <(echo "$table" | awk '$1 == "weights-full" {sub("ms", "", $7); sub("MB", "", $10); print $7, $10}')
if python3 -c "import sys; sys.exit(0 if $cpu < $MAX_CPU_MS and $rss < $MAX_RSS_MB else 1)"; then
    echo "goals met: median CPU ${cpu} ms (under $MAX_CPU_MS), median peak RSS ${rss} MB (under $MAX_RSS_MB)"
else
    echo "goal missed: median CPU ${cpu} ms (goal under $MAX_CPU_MS), median peak RSS ${rss} MB (goal under $MAX_RSS_MB)"
    exit 1
fi
