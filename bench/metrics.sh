#!/usr/bin/env bash
# Times `dflash-check acceptance` on a large /metrics page (BENCHMARKS.md, "acceptance").
#   bench/metrics.sh [BIN] [MIB] [SHAPES...]     default: target/debug/dflash-check 16 engines series labels
set -euo pipefail
bin="${1:-target/debug/dflash-check}"
mib="${2:-16}"
shift $(( $# > 2 ? 2 : $# ))
shapes=("${@:-engines series labels}")
for shape in ${shapes[@]}; do
    port_file="$(mktemp)"
    python3 "$(dirname "$0")/metrics.py" "$shape" --mib "$mib" >"$port_file" &
    server=$!
    while ! grep -q PORT "$port_file"; do sleep 0.2; done
    port="$(awk '{print $2}' "$port_file")"
    echo "== $shape, $mib MiB"
    /usr/bin/time -f "wall %e s, user %U s, max RSS %M KB" \
        timeout 900 "$bin" acceptance "http://127.0.0.1:$port" --window 0.1 --timeout 600 \
        --min-acceptance-length 2 --format json 2>&1 >/dev/null | tail -2 || true
    kill "$server"
    rm -f "$port_file"
done
