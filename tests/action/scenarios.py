"""The action's shell steps, run by run_action.py on a sample repository, for scripts/action-test.sh.

usage: scenarios.py REPO_ROOT VERSION

pip installs the wheel in target/wheels/ (PIP_NO_INDEX and PIP_FIND_LINKS are set by the
caller), exactly as the action's install step would install it from PyPI.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT, VERSION = sys.argv[1], sys.argv[2]
RUNNER = os.path.join(ROOT, "tests/action/run_action.py")
INCIDENT = os.path.join(ROOT, "fixtures/incident/Qwen3.6-27B-DFlash/config.json")
AUTHORITY = os.path.join(ROOT, "fixtures/incident/authority/config.json")
failures = []
# One runner temp directory for every scenario, as one job's steps share it: the first scenario
# creates the action's venv and installs the wheel, later ones find it installed (faster).
RUNNER_TEMP = tempfile.mkdtemp()


def check(ok, what, record):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}\n{json.dumps(record, indent=1)[:6000]}", file=sys.stderr)


def run(config_text, summary_text="", **inputs):
    """Runs the action on a repository holding one drafter config; returns (record, summary text,
    the scenario's directory)."""
    base = tempfile.mkdtemp()
    workspace, temp = os.path.join(base, "ws"), RUNNER_TEMP
    os.makedirs(os.path.join(workspace, "models/Qwen3.6-27B-DFlash"))
    with open(os.path.join(workspace, "models/Qwen3.6-27B-DFlash/config.json"), "w") as f:
        f.write(config_text)
    summary = os.path.join(base, "step_summary.md")
    with open(summary, "w") as f:
        f.write(summary_text)
    env = dict(os.environ, GITHUB_STEP_SUMMARY=summary, GITHUB_ACTIONS="true", NO_COLOR="1",
               HF_HUB_OFFLINE="1")
    args = [f"{k.replace('_', '-')}={v}" for k, v in inputs.items()]
    done = subprocess.run([sys.executable, RUNNER, os.path.join(ROOT, "action.yml"), workspace, temp, *args],
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"run_action failed: {done.stderr}")
    record = json.loads(done.stdout)
    with open(summary) as f:
        text = f.read()
    return record, text, base


def step(record, name):
    return next(s for s in record["steps"] if s["name"] == name)


incident = open(INCIDENT).read()
authority = open(AUTHORITY).read()
# Only a metadata difference: a warning (`changed` on transformers_version), no error.
warning_only = authority.replace('"transformers_version": "5.5.3"', '"transformers_version": "4.57.1"')
assert warning_only != authority

# 1. The incident config, with SARIF: annotations, summary table, SARIF handed to the upload, gate fails.
record, summary, base = run(incident, "earlier\n", version=VERSION, paths="models", sarif="true")
check_step = step(record, "Check drafter configs")
check(check_step["outcome"] == "success", "the check step records exit 1 and succeeds", record)
check(record["outputs"]["exit-code"] == "1", "exit-code output is 1", record)
# Unpinned, the incident matches two published configs and equals neither: the gate fails on
# that (at the top of the file), and lint's warnings land on their lines.
check("::error file=models/Qwen3.6-27B-DFlash/config.json,line=1,col=1,title=authority-ambiguous::"
      in check_step["stdout"], "the ambiguity is an error annotation", record)
check("::warning file=models/Qwen3.6-27B-DFlash/config.json,line=13,col=5,title=mask-token-text-token (dflash_config.mask_token_id)::"
      in check_step["stdout"], "annotation on the mask token's line", record)
check(summary.startswith("earlier\n### dflash-check check: ❌ FAIL: 1 error, 3 warnings, 0 info; 1 drafter checked\n"), "summary appended", record)
check("| error | `authority-ambiguous` | <code>models/Qwen3.6-27B-DFlash/config.json:1</code> |" in summary,
      "summary row of the ambiguity", record)
sarif_file = record["outputs"]["sarif-file"]
check(record["uses"] == [{"uses": "github/codeql-action/upload-sarif@v4", "with": {"sarif_file": sarif_file}}],
      "SARIF handed to upload-sarif", record)
sarif = json.load(open(sarif_file))
check(sarif["runs"][0]["automationDetails"]["id"] == "dflash-check/check/", "SARIF category", record)
check(len(sarif["runs"][0]["results"]) == 4, "SARIF has every finding", record)
check(step(record, "Gate")["exit_code"] == 1 and record["failed"], "the gate fails the job", record)
check(os.path.isfile(os.path.join(RUNNER_TEMP, "dflash-check-venv/bin/dflash-check")), "installed in its own venv", record)
shutil.rmtree(base)

# 2. Warnings only: pass at min-severity error, fail at warning; no SARIF, no summary when off.
record, summary, base = run(warning_only, version=VERSION, paths="models", summary="false")
check(record["outputs"] == {"exit-code": "0", "sarif-file": ""} and not record["failed"], "warnings pass by default", record)
check(record["uses"] == [] and step(record, "Upload SARIF to code scanning")["outcome"] == "skipped", "no upload without sarif", record)
check(summary == "", "summary off: nothing written", record)
check("::warning file=models/Qwen3.6-27B-DFlash/config.json" in step(record, "Check drafter configs")["stdout"],
      "the warning is annotated", record)
shutil.rmtree(base)
record, summary, base = run(warning_only, version=VERSION, paths="models", min_severity="warning")
check(record["outputs"]["exit-code"] == "1" and record["failed"], "min-severity warning fails on a warning", record)
check("### dflash-check check: ❌ FAIL: 0 errors, 1 warning, 0 info (warnings denied)" in summary, "summary verdict under --deny warnings", record)
shutil.rmtree(base)

# 3. require-pin: the unpinned drafter is an error.
record, summary, base = run(authority, version=VERSION, paths="models", require_pin="true")
check(record["outputs"]["exit-code"] == "1" and "title=pin-missing" in step(record, "Check drafter configs")["stdout"],
      "require-pin makes an unpinned drafter an error", record)
shutil.rmtree(base)

# 4. Bad inputs stop the job with a message, before any verdict.
record, summary, base = run(authority, version=VERSION, min_severity="info")
check(step(record, "Check drafter configs")["exit_code"] == 2
      and "input min-severity must be error or warning" in step(record, "Check drafter configs")["stdout"]
      and step(record, "Gate")["outcome"] == "skipped", "a bad min-severity is refused", record)
shutil.rmtree(base)
record, summary, base = run(authority, version="--index-url=https://example.invalid")
check(step(record, "Install dflash-check")["exit_code"] == 2
      and "input version must be `latest` or a version" in step(record, "Install dflash-check")["stdout"]
      and step(record, "Check drafter configs")["outcome"] == "skipped", "a version that is not one is refused", record)
shutil.rmtree(base)

shutil.rmtree(RUNNER_TEMP)
if failures:
    raise SystemExit(f"action scenarios: {len(failures)} failed")
print("action-test: the action's steps: annotations, summary, SARIF upload, min-severity, require-pin, bad inputs")
