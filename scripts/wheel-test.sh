#!/usr/bin/env bash
# The Python wheel, end to end: builds it with maturin from the debug build already in target/
# (`--profile dev`: only the binary is relinked, no second release build), installs it into a
# fresh venv with pip (no index: only the wheel just built), then runs the README's main job
# through the installed `dflash-check` and through `python -m dflash_check`; each must exit 1
# and print the repair command. Leaves the wheel in target/wheels/ for
# scripts/pre-commit-mirror-test.sh and scripts/action-test.sh.
# Needs the venv .venv-hf (scripts/olah-setup.sh or scripts/acceptance-setup.sh makes it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
tools="$root/.venv-hf"
[ -x "$tools/bin/python" ] || "$python" -m venv "$tools"
"$tools/bin/python" -m pip install --quiet --disable-pip-version-check 'maturin>=1.5,<2.0'

wheels="$root/target/wheels"
rm -rf "$wheels"
log="$root/target/wheel-build.log"
"$tools/bin/maturin" build --locked --profile dev --out "$wheels" >"$log" 2>&1 \
    || { cat "$log" >&2; echo "wheel-test: maturin build failed" >&2; exit 1; }
grep -E '^(📦|⚠️)' "$log" || true
wheel="$(ls "$wheels"/dflash_check-*.whl)"
echo "wheel-test: built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"

venv="$(mktemp -d)/venv"
trap 'rm -rf "$(dirname "$venv")"' EXIT
"$python" -m venv "$venv"
start=$(date +%s%N)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --find-links "$wheels" dflash-check
echo "wheel-test: pip install took $(( ($(date +%s%N) - start) / 1000000 )) ms"

expect_main_job() { # $1: how it was run; stdin: its output; $2: its exit code
    local out
    out="$(cat)"
    if [ "$2" != 1 ]; then
        echo "wheel-test: $1 exited $2, expected 1 (findings)" >&2; echo "$out" >&2; exit 1
    fi
    grep -qF 'To repair it: dflash-check fix fixtures/incident/Qwen3.6-27B-DFlash --snapshot z-lab/Qwen3.6-27B-DFlash' <<<"$out" \
        || { echo "wheel-test: $1 printed no repair command" >&2; echo "$out" >&2; exit 1; }
    grep -qE 'dflash_config\.mask_token_id: 248064 <\|repo_name\|> .* 248070 <\|audio_start\|>' <<<"$out" \
        || { echo "wheel-test: $1 did not show the wrong mask token" >&2; echo "$out" >&2; exit 1; }
    echo "wheel-test: $1: exit 1 and the repair command, as expected"
}
# The venv's bin/ is not on PATH: run the installed script by path, as an activated venv would.
code=0; out="$("$venv/bin/dflash-check" diff fixtures/incident/Qwen3.6-27B-DFlash --target fixtures/targets/Qwen3.6-27B --color never)" || code=$?
expect_main_job "installed dflash-check" "$code" <<<"$out"
code=0; out="$("$venv/bin/python" -m dflash_check diff fixtures/incident/Qwen3.6-27B-DFlash --target fixtures/targets/Qwen3.6-27B --color never)" || code=$?
expect_main_job "python -m dflash_check" "$code" <<<"$out"
# `pip install --target DIR` puts the binary in DIR/bin: `python -m dflash_check` finds it there.
target_dir="$(dirname "$venv")/target"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --find-links "$wheels" --target "$target_dir" dflash-check
found="$(PYTHONPATH="$target_dir" "$python" -c 'import dflash_check; print(dflash_check.find_dflash_check_bin())')"
[ "$found" = "$target_dir/bin/dflash-check" ] || { echo "wheel-test: --target install: found $found" >&2; exit 1; }
code=0; out="$(PYTHONPATH="$target_dir" "$python" -m dflash_check diff fixtures/incident/Qwen3.6-27B-DFlash --target fixtures/targets/Qwen3.6-27B --color never)" || code=$?
expect_main_job "python -m dflash_check (pip install --target)" "$code" <<<"$out"
# The version the wheel declares is Cargo.toml's.
cargo_version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
wheel_version="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("dflash-check"))')"
[ "$cargo_version" = "$wheel_version" ] || { echo "wheel-test: wheel version $wheel_version, Cargo.toml $cargo_version" >&2; exit 1; }
"$venv/bin/dflash-check" --version | grep -qxF "dflash-check $cargo_version"
echo "wheel-test: version $wheel_version from Cargo.toml"
