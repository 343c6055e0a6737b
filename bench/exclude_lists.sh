#!/usr/bin/env bash
# Issue 41's exclude-list budget: `weights --engine vllm|sglang` on checkpoints whose exclude lists
# sit at the caps (bench/exclude_lists.py), release build. Prints the wall time and peak RSS of
# each; exits 1 when one takes a second or more. Needs scripts/weights-setup.sh's fixtures.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${DFLASH_CHECK_BIN:-$root/target/release/dflash-check}
fixtures=$root/target/weights-fixtures/cases
[ -d "$fixtures" ] || { echo "run scripts/weights-setup.sh first" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 "$root/bench/exclude_lists.py" "$fixtures" "$out"
fail=0
for case in "$out"/*/; do
  for engine in vllm sglang; do
    /usr/bin/time -o "$out/time" -f "%e %M" "$bin" weights "$case" --engine "$engine" >/dev/null 2>&1 || true
    t=$(tail -1 "$out/time")
    secs=${t% *}; kb=${t#* }
    printf '%-28s %-6s %6s s %8s KB\n' "$(basename "$case")" "$engine" "$secs" "$kb"
    if awk -v s="$secs" 'BEGIN { exit !(s >= 1.0) }'; then fail=1; fi
  done
done
exit $fail
