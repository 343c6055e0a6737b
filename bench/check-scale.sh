#!/usr/bin/env bash
# `dflash-check check` over generated trees of N drafter folders (bench/check_tree.py: a third
# pinned to a file authority and wrong, a third pinned to a built-in snapshot, a third unpinned),
# side by side with the Python a user would write instead (bench/check_peer.py: tomllib, os.walk,
# json.load, a flat key diff), RUNS rounds each (bench/vocab_time.py: CPU time from wait4, peak
# RSS from GNU time). Prints, per size, both commands and the binary's CPU time and memory per
# drafter, and at the largest size checks issue 44's goals: at least MIN_RATIO (3) times the
# script's speed (median CPU, and the median of the rounds' wall ratios), at most MAX_CPU_MS
# (0.05 ms) of CPU and MAX_KB (5 KB) of peak RSS per drafter. Exits 1 when one is missed.
#
#   bench/check-scale.sh                          # 1000 10000; release build; RUNS=5
#   BIN=target/release/dflash-check BASELINE_BIN=old/dflash-check FORMAT=json bench/check-scale.sh 1000 10000
#
# FORMAT: the binary's --format (human, the default, or json). Needs python3 (3.11: tomllib)
# and GNU time. Trees are written under bench/work/ (not committed).
set -euo pipefail
RUNS="${RUNS:-5}"
FORMAT="${FORMAT:-human}"
MIN_RATIO="${MIN_RATIO:-3}"
MAX_CPU_MS="${MAX_CPU_MS:-0.05}"
MAX_KB="${MAX_KB:-5}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [ -n "${BIN:-}" ]; then
    bin="$(realpath "$BIN")"
else
    cargo build --release --locked --quiet --bin dflash-check
    bin="$root/target/release/dflash-check"
fi
sizes=("${@:-1000 10000}")
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
results="$root/bench/work/check-scale.txt"
mkdir -p bench/work
: >"$results"
for n in ${sizes[*]}; do
    tree="$root/bench/work/check-$n"
    python3 bench/check_tree.py "$n" "$tree" >/dev/null
    named=("dflash-check=cd=$tree $bin check models --format $FORMAT"
        "check_peer.py=cd=$tree python3 $root/bench/check_peer.py . models")
    [ -n "${BASELINE_BIN:-}" ] && named+=("baseline=cd=$tree $(realpath "$BASELINE_BIN") check models --format $FORMAT")
    echo "== $n drafters, --format $FORMAT"
    table="$(python3 bench/vocab_time.py "$RUNS" 1 "${named[@]}")"
    echo "$table"
    # Rows: name, wall median, min, max, ratio, pairs, CPU median, ratio, pairs, peak RSS.
    echo "$table" | awk -v n="$n" '$1 == "dflash-check" {sub("ms", "", $7); sub("MB", "", $10); cpu = $7; rss = $10}
        $1 == "check_peer.py" {sub("x", "", $8); sub("x", "", $6); ratio = $8; pairs = $6}
        END {print n, cpu, rss, ratio, pairs}' >>"$results"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" "$MIN_RATIO" "$MAX_CPU_MS" "$MAX_KB" <<'PY'
import sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
min_ratio, max_cpu, max_kb = map(float, sys.argv[2:])
for n, cpu, rss, ratio, pairs in rows:
    print(f"{int(n):>6} drafters: {cpu / n:.4f} ms CPU and {rss * 1024 / n:.2f} KB peak RSS a drafter; "
          f"the script takes {ratio:.2f}x the CPU (median of the rounds' wall ratios {pairs:.2f}x)")
if len(rows) > 1:
    (n0, c0, r0, *_), (n1, c1, r1, *_) = rows[0], rows[-1]
    print(f"from {int(n0)} to {int(n1)}: {(c1 - c0) / (n1 - n0):.4f} ms CPU and "
          f"{(r1 - r0) * 1024 / (n1 - n0):.2f} KB for each drafter more")
n, cpu, rss, ratio, pairs = rows[-1]
missed = [what for what, bad in (
    (f"speed under {min_ratio:g}x the script", min(ratio, pairs) < min_ratio),
    (f"CPU over {max_cpu:g} ms a drafter", cpu / n > max_cpu),
    (f"memory over {max_kb:g} KB a drafter", rss * 1024 / n > max_kb)) if bad]
print(f"at {int(n)} drafters: " + ("goals missed: " + "; ".join(missed) if missed else "goals met"))
sys.exit(1 if missed else 0)
PY
