#!/usr/bin/env bash
# A release's binary assets, made the same way by .github/workflows/release.yml and by the tests
# (scripts/action-test.sh installs what this writes through the action's release path):
#
#   release-assets.sh package WHEEL TARGET OUTDIR
#       takes the binary out of a maturin wheel (`*.data/scripts/dflash-check[.exe]`: the wheel
#       and the archive ship one build) and writes OUTDIR/dflash-check-TARGET-vVERSION.tgz
#       holding dflash-check-TARGET-vVERSION/{dflash-check[.exe],LICENSE}, the layout
#       Cargo.toml's [package.metadata.binstall] and action.yml expect. VERSION is the wheel's.
#   release-assets.sh sums DIR
#       writes DIR/SHA256SUMS (`sha256sum` format: hash, two spaces, file name) over every other
#       file in DIR, sorted by name: the file action.yml checks a downloaded asset against.
#
# Portable to the release runners (Linux, macOS, Windows' Git Bash): python for the zip, tar,
# sha256sum or shasum.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
command -v "$python" >/dev/null || python=python
die() { echo "release-assets: $1" >&2; exit 2; }
sha256() { if command -v sha256sum >/dev/null; then sha256sum "$@"; else shasum -a 256 "$@"; fi; }

case "${1:-}" in
package)
    [ $# = 4 ] || die "usage: release-assets.sh package WHEEL TARGET OUTDIR"
    wheel="$2" target="$3" outdir="$4"
    [ -f "$wheel" ] || die "no wheel at $wheel"
    case "$target" in *[!a-z0-9_.-]* | "") die "not a target triple: $target" ;; esac
    ext=""
    case "$target" in *-windows-*) ext=".exe" ;; esac
    # dflash_check-0.1.0-py3-none-<platform>.whl: the version is the name's second field.
    version="$(basename "$wheel" | cut -d- -f2)"
    case "$version" in [0-9]*) ;; *) die "cannot read a version from the wheel's name $(basename "$wheel")" ;; esac
    name="dflash-check-$target-v$version"
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$work/$name" "$outdir"
    "$python" - "$wheel" "dflash_check-$version.data/scripts/dflash-check$ext" "$work/$name/dflash-check$ext" <<'PY'
import shutil, sys, zipfile
wheel, member, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(dest, "wb") as out:
    shutil.copyfileobj(src, out)
PY
    chmod 755 "$work/$name/dflash-check$ext"
    cp "$root/LICENSE" "$work/$name/LICENSE"
    tar -C "$work" -czf "$outdir/$name.tgz" "$name"
    echo "release-assets: $outdir/$name.tgz"
    ;;
sums)
    [ $# = 2 ] || die "usage: release-assets.sh sums DIR"
    [ -d "$2" ] || die "no directory $2"
    (
        cd "$2"
        rm -f SHA256SUMS
        files=()
        while IFS= read -r f; do files+=("$f"); done < <(find . -maxdepth 1 -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort)
        [ "${#files[@]}" -gt 0 ] || die "nothing to sum in $2"
        sha256 "${files[@]}" >SHA256SUMS.tmp
        mv SHA256SUMS.tmp SHA256SUMS
    )
    echo "release-assets: $2/SHA256SUMS"
    ;;
*) die "usage: release-assets.sh package WHEEL TARGET OUTDIR | sums DIR" ;;
esac
