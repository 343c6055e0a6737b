"""Runs a composite action's steps here, the way the GitHub runner would, for scripts/action-test.sh.

usage: run_action.py ACTION_YML WORKSPACE RUNNER_TEMP [INPUT=VALUE ...]

Each `run:` step runs with `bash --noprofile --norc -eo pipefail` (the runner's `shell: bash`),
in WORKSPACE, with the runner's files set (GITHUB_OUTPUT per step, GITHUB_PATH, GITHUB_ENV,
GITHUB_STEP_SUMMARY as given in the environment, RUNNER_TEMP, RUNNER_OS, RUNNER_ARCH) and its `env:` with `${{ }}`
expressions resolved; a line added to GITHUB_PATH is on PATH for later steps. A `uses:` step
cannot run here: it is recorded with its resolved `with:`. `if:` conditions are evaluated;
only the expression forms the action uses are understood, anything else stops the run (so a
new form cannot be silently misread). Prints a JSON record of what ran, its outcome and the
action's outputs.
"""

import json
import os
import platform
import re
import subprocess
import sys
import tempfile

import yaml

# The runner's names for this machine (RUNNER_OS, RUNNER_ARCH).
RUNNER_OS = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}.get(sys.platform, sys.platform)
RUNNER_ARCH = {"x86_64": "X64", "amd64": "X64", "aarch64": "ARM64", "arm64": "ARM64"}.get(
    platform.machine().lower(), platform.machine())
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class Context:
    def __init__(self, inputs, action_path):
        self.inputs = inputs
        self.steps = {}
        self.action_path = action_path
        self.failed = False

    def value(self, ref):
        parts = ref.split(".")
        if parts[0] == "inputs" and len(parts) == 2:
            return self.inputs[parts[1]]
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return self.steps.get(parts[1], {}).get(parts[3], "")
        if ref == "github.action_path":
            return self.action_path
        if ref == "github.action_repository":
            # Empty inside composite actions on real runners too (actions/runner#2473).
            return os.environ.get("GITHUB_ACTION_REPOSITORY", "")
        raise SystemExit(f"run_action: unsupported expression `{ref}`")

    def substitute(self, text):
        return EXPR.sub(lambda m: self.value(m.group(1)), str(text))

    def condition(self, expr):
        """`always()`, `success()`, `REF == 'x'`, `REF != 'x'`, joined with `&&`."""
        expr = EXPR.sub(lambda m: m.group(1), str(expr)).strip()
        always = False
        result = True
        for term in (t.strip() for t in expr.split("&&")):
            if term in ("always()", "success()"):
                always = always or term == "always()"
                continue
            m = re.fullmatch(r"([\w.-]+)\s*(==|!=)\s*'([^']*)'", term)
            if not m:
                raise SystemExit(f"run_action: unsupported condition `{term}`")
            equal = self.value(m.group(1)) == m.group(3)
            result = result and (equal if m.group(2) == "==" else not equal)
        return result and (always or not self.failed)


def main():
    action_yml, workspace, runner_temp, *pairs = sys.argv[1:]
    action = yaml.safe_load(open(action_yml))
    given = dict(p.split("=", 1) for p in pairs)
    inputs = {}
    for name, spec in action.get("inputs", {}).items():
        inputs[name] = given.pop(name, spec.get("default", ""))
    if given:
        raise SystemExit(f"run_action: the action has no input(s) {sorted(given)}")
    ctx = Context(inputs, os.path.dirname(os.path.abspath(action_yml)))
    files = {k: os.path.join(runner_temp, f"{k.lower()}") for k in ("GITHUB_PATH", "GITHUB_ENV")}
    for f in files.values():
        open(f, "w").close()
    record = {"steps": [], "uses": []}
    for i, step in enumerate(action["runs"]["steps"]):
        name = step.get("name", f"step {i}")
        if "if" in step and not ctx.condition(step["if"]):
            record["steps"].append({"name": name, "outcome": "skipped"})
            continue
        if "if" not in step and ctx.failed:
            record["steps"].append({"name": name, "outcome": "skipped"})
            continue
        if "uses" in step:
            with_ = {k: ctx.substitute(v) for k, v in step.get("with", {}).items()}
            record["uses"].append({"uses": step["uses"], "with": with_})
            record["steps"].append({"name": name, "outcome": "recorded"})
            continue
        if step.get("shell") != "bash":
            raise SystemExit(f"run_action: step `{name}` is not `shell: bash`")
        env = dict(os.environ)
        added = [l for l in open(files["GITHUB_PATH"]).read().splitlines() if l]
        env["PATH"] = os.pathsep.join(list(reversed(added)) + [env.get("PATH", "")])
        env.update({k: ctx.substitute(v) for k, v in step.get("env", {}).items()})
        output = tempfile.NamedTemporaryFile("w", dir=runner_temp, delete=False).name
        env.update(files, GITHUB_OUTPUT=output, RUNNER_TEMP=runner_temp,
                   GITHUB_ACTION_PATH=ctx.action_path, GITHUB_WORKSPACE=workspace)
        env.setdefault("RUNNER_OS", RUNNER_OS)
        env.setdefault("RUNNER_ARCH", RUNNER_ARCH)
        env.setdefault("GITHUB_SERVER_URL", "https://github.com")
        with tempfile.NamedTemporaryFile("w", suffix=".sh", dir=runner_temp, delete=False) as script:
            script.write(ctx.substitute(step["run"]))
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script.name],
                              cwd=workspace, env=env, capture_output=True, text=True)
        outputs = {}
        for line in open(output).read().splitlines():
            if "<<" in line.split("=", 1)[0]:
                raise SystemExit("run_action: multi-line outputs are not supported")
            key, _, value = line.partition("=")
            outputs[key] = value
        if "id" in step:
            ctx.steps[step["id"]] = outputs
        ctx.failed = ctx.failed or done.returncode != 0
        record["steps"].append({"name": name, "outcome": "failure" if done.returncode else "success",
                                "exit_code": done.returncode, "stdout": done.stdout,
                                "stderr": done.stderr, "outputs": outputs})
    record["outputs"] = {k: ctx.substitute(v["value"]) for k, v in action.get("outputs", {}).items()}
    record["failed"] = ctx.failed
    json.dump(record, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
