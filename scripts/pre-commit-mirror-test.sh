#!/usr/bin/env bash
# The pre-commit mirror's hook (docs/pre-commit-mirror/), installed and run by pre-commit itself:
# the folder becomes a git repository tagged v<version>, a sample repository uses its hook, and
# the hook's dependency, the release's wheel by URL, is pointed (file://) at the manylinux2014
# wheel scripts/wheel-test.sh left in target/wheel-test/repaired/ (no index: setuptools, which builds the mirror project, is downloaded once
# into target/pip-offline/). The hook must fail on the incident's drafter config, pass once the
# config is the authority's, and ignore a non-drafter config.json.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tools="$root/.venv-hf"
"$tools/bin/python" -m pip install --quiet --disable-pip-version-check pre-commit
wheels="$root/target/wheel-test/repaired"
ls "$wheels"/dflash_check-*.whl >/dev/null   # scripts/wheel-test.sh builds it
offline="$root/target/pip-offline"
ls "$offline"/setuptools-*.whl >/dev/null 2>&1 \
    || "$tools/bin/python" -m pip download --quiet --disable-pip-version-check --only-binary :all: --dest "$offline" 'setuptools>=61'

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
# The mirror names the release's wheel by URL, never a name on an index (nobody has claimed
# `dflash-check` there); the copy below points that URL at the wheel built here.
release="https://github.com/OWNER/dflash-check/releases/download/v$version/"
wheel_name="dflash_check-$version-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
grep -qxF "dependencies = [\"dflash-check @ $release$wheel_name\"]" docs/pre-commit-mirror/pyproject.toml \
    || { echo "pre-commit-mirror-test: the mirror does not name the v$version release's wheel ($release$wheel_name) by URL" >&2; exit 1; }
! grep -q 'dflash-check==' docs/pre-commit-mirror/pyproject.toml \
    || { echo "pre-commit-mirror-test: the mirror installs dflash-check by name from an index" >&2; exit 1; }
[ -f "$wheels/$wheel_name" ] \
    || { echo "pre-commit-mirror-test: scripts/wheel-test.sh left no $wheel_name in $wheels" >&2; exit 1; }
"$tools/bin/pre-commit" validate-manifest docs/pre-commit-mirror/.pre-commit-hooks.yaml

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
git_() { git -c user.name=test -c user.email=test@example.invalid -c init.defaultBranch=main -c commit.gpgsign=false "$@"; }
cp -r docs/pre-commit-mirror "$tmp/mirror"
sed -i "s|$release|file://$wheels/|" "$tmp/mirror/pyproject.toml"
(cd "$tmp/mirror" && git_ init -q && git_ add -A && git_ commit -qm mirror && git_ tag "v$version")

sample="$tmp/sample"
mkdir -p "$sample/models/Qwen3.6-27B-DFlash" "$sample/app"
cp fixtures/incident/Qwen3.6-27B-DFlash/config.json "$sample/models/Qwen3.6-27B-DFlash/config.json"
echo '{"name": "not a model"}' > "$sample/app/config.json"
cat > "$sample/.pre-commit-config.yaml" <<YAML
repos:
  - repo: $tmp/mirror
    rev: v$version
    hooks:
      - id: dflash-check
YAML
(cd "$sample" && git_ init -q && git_ add -A && git_ commit -qm sample)

run_hook() { # prints pre-commit's output; returns its exit code
    (cd "$sample" && PRE_COMMIT_HOME="$tmp/cache" PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheels $offline" \
        PIP_DISABLE_PIP_VERSION_CHECK=1 NO_COLOR=1 "$tools/bin/pre-commit" run --all-files --color never)
}
start=$(date +%s%N)
code=0; out="$(run_hook 2>&1)" || code=$?
echo "pre-commit-mirror-test: hook installed and run in $(( ($(date +%s%N) - start) / 1000000 )) ms"

if [ "$code" != 1 ] || ! grep -qF 'error[authority-ambiguous] equal to none of 2 published configs' <<<"$out" \
    || ! grep -qF -- '--> models/Qwen3.6-27B-DFlash/config.json' <<<"$out"; then
    echo "pre-commit-mirror-test: expected the hook to fail on the incident config (exit $code):" >&2
    echo "$out" >&2; exit 1
fi
# The hook passes YAML files too (Kubernetes manifests are gated): this repository's
# .pre-commit-config.yaml is no manifest, so it is skipped and listed beside app/config.json.
grep -qxF '  skipped  app/config.json, .pre-commit-config.yaml (not drafters)' <<<"$out" \
    || { echo "pre-commit-mirror-test: the non-drafter config.json was not skipped:" >&2; echo "$out" >&2; exit 1; }
# The hook ran the wheel's binary, installed by pip into pre-commit's venv for the mirror.
ls "$tmp"/cache/repo*/py_env-*/bin/dflash-check >/dev/null

cp fixtures/incident/authority/config.json "$sample/models/Qwen3.6-27B-DFlash/config.json"
(cd "$sample" && git_ commit -qam fixed)
code=0; out="$(run_hook 2>&1)" || code=$?
if [ "$code" != 0 ] || ! grep -qE '^dflash-check \(drafter configs\)\.+Passed$' <<<"$out"; then
    echo "pre-commit-mirror-test: expected the hook to pass on the authority's config (exit $code):" >&2
    echo "$out" >&2; exit 1
fi
echo "pre-commit-mirror-test: the mirror's hook fails on the incident config and passes on the fixed one"
