#!/usr/bin/env bash
# What reading a real-size target index costs (issue 30): `dflash-check weights DIR` on a
# DeepSeek-V3-sized NVFP4 index with its MTP layer (SYNTHETIC: bench/mtp_index.py, about 184,000
# names, 17 MB, 163 shards named and none present), end to end in a release build: start-up, the
# config, the index read entry by entry, the MTP checks over every name, and the report.
#
#   bench/mtp_index.sh            # RUNS=30 hyperfine runs
#
# Needs cargo, hyperfine (apt-get install -y hyperfine) and python3. Writes to bench/work/.
set -euo pipefail

RUNS="${RUNS:-30}"
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
cargo build --release --locked --quiet --bin dflash-check
bin="$root/target/release/dflash-check"

# The verdicts: every shard is missing (the point is the index alone); the MTP layer is found,
# and its absence is an error.
"$bin" weights "$work/mtp-index" --format json | grep -q weights-mtp-missing \
    && { echo "error: the MTP layer was not found in the full index" >&2; exit 2; }
"$bin" weights "$work/mtp-index-dropped" --format json | grep -q weights-mtp-missing \
    || { echo "error: the dropped MTP layer was not reported" >&2; exit 2; }

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
