#!/usr/bin/env bash
# Installs what tests/acceptance.rs needs: Python `prometheus_client` in the venv `.venv-hf`
# (created here if scripts/olah-setup.sh has not made it yet). The test server
# tests/acceptance/metrics_server.py renders vLLM's and SGLang's metrics with it, so the text
# `dflash-check acceptance` parses is the real exposition format, not a hand-written imitation.
# Idempotent. Afterwards run:
#   DFLASH_ACCEPTANCE_PYTHON=.venv-hf/bin/python cargo test --test acceptance
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
venv="$root/.venv-hf"

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'prometheus_client>=0.20'
"$venv/bin/python" -c 'import prometheus_client, importlib.metadata as m; print("acceptance-setup: prometheus_client", m.version("prometheus_client"))'
