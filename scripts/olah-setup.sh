#!/usr/bin/env bash
# Creates the two Python environments the olah end-to-end tests (tests/hub_olah.rs) need:
#   .venv-olah  olah, a Hub-compatible mirror that serves local git repos offline
#   .venv-hf    huggingface_hub, to prove cache interoperability with the Python client
# They are separate because olah pins its own huggingface_hub. Run from anywhere; the venvs are
# created at the repository root. Afterwards run:  DFLASH_E2E_OLAH=1 cargo test --test hub_olah
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"

make_venv() {
    local dir="$1"
    shift
    if [ ! -x "$dir/bin/python" ]; then
        "$python" -m venv "$dir"
    fi
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
}

make_venv "$root/.venv-olah" olah
make_venv "$root/.venv-hf" huggingface_hub

"$root/.venv-olah/bin/olah-cli" --help >/dev/null
"$root/.venv-hf/bin/python" -c 'import huggingface_hub; print("huggingface_hub", huggingface_hub.__version__)'
command -v git >/dev/null || { echo "olah-setup: git is required" >&2; exit 1; }
echo "olah-setup: ready (.venv-olah, .venv-hf)"
