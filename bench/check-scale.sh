#!/usr/bin/env bash
# `dflash-check check` over generated trees of N drafter folders (N = 250, 500, 1000, 2000), to
# show it finishes in well under a second at 1,000 and grows linearly. Each tree holds, in equal
# parts, drafters pinned to a file authority (wrong: the incident's guessed config), pinned to a
# built-in snapshot (clean), and unpinned (matched to a built-in snapshot by fingerprint), plus
# one target model directory. Trees are generated under bench/work/ (not committed).
# Needs hyperfine (apt-get install hyperfine). Usage: bench/check-scale.sh [N ...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo build --release --quiet
bin="$root/target/release/dflash-check"
sizes=("${@:-250 500 1000 2000}")
results="$root/bench/work/check-scale.md"
mkdir -p bench/work
: > "$results"
for n in ${sizes[*]}; do
    tree="$root/bench/work/check-$n"
    rm -rf "$tree"
    mkdir -p "$tree/authorities" "$tree/targets"
    cp fixtures/incident/authority/config.json "$tree/authorities/qwen3.6-27b.json"
    cp -r fixtures/targets/Qwen3.6-27B "$tree/targets/"
    {
        echo "version = 1"
        for i in $(seq 1 "$n"); do
            case $((i % 3)) in
                0) mkdir -p "$tree/models/wrong-$i"; cp fixtures/incident/Qwen3.6-27B-DFlash/config.json "$tree/models/wrong-$i/"
                   printf '\n[drafters."models/wrong-%s"]\nagainst = "authorities/qwen3.6-27b.json"\ntarget = "targets/Qwen3.6-27B"\n' "$i" ;;
                1) mkdir -p "$tree/models/good-$i"; cp fixtures/incident/authority/config.json "$tree/models/good-$i/"
                   printf '\n[drafters."models/good-%s"]\nsnapshot = "z-lab/Qwen3.6-27B-DFlash"\n' "$i" ;;
                2) mkdir -p "$tree/models/Qwen3-8B-DFlash-b16-$i"; cp fixtures/qwen3-8b/Qwen3-8B-DFlash-b16/config.json "$tree/models/Qwen3-8B-DFlash-b16-$i/" ;;
            esac
        done
    } > "$tree/dflash-check.toml"
    (cd "$tree" && hyperfine --warmup 2 --runs 10 -N -i --export-markdown "$root/bench/work/check-$n.md" \
        "$bin check models --format json" >/dev/null)
    echo "N=$n" >> "$results"
    tail -n 1 "bench/work/check-$n.md" >> "$results"
done
cat "$results"
