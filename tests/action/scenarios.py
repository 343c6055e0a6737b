"""The action's shell steps, run by run_action.py on a sample repository, for scripts/action-test.sh.

usage: scenarios.py REPO_ROOT VERSION WHEEL

Both install paths run for real:
- the default (no `version`): the action builds its own checkout (REPO_ROOT) with `cargo
  install --locked --path`. `cargo` on PATH is a wrapper that records its arguments and runs the
  real cargo with `--debug --offline` added, so the build reuses the test suite's target/debug
  (seconds) instead of a release build (tens of minutes here); the action's arguments are
  asserted as it passed them. A later run in the same job finds the build in place (as a
  restored cache puts it) and does not call cargo.
- a release (`version`): the archive and SHA256SUMS that scripts/release-assets.sh makes from
  WHEEL (as .github/workflows/release.yml does), served by a local HTTP server on 127.0.0.1
  (`download-url`; never GitHub); a tampered archive, a wrong SHA256SUMS entry, a missing entry
  or file, a wrong `checksum` input and a non-https URL are refused with nothing installed.
"""

import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

ROOT, VERSION, WHEEL = sys.argv[1], sys.argv[2], sys.argv[3]
RUNNER = os.path.join(ROOT, "tests/action/run_action.py")
INCIDENT = os.path.join(ROOT, "fixtures/incident/Qwen3.6-27B-DFlash/config.json")
AUTHORITY = os.path.join(ROOT, "fixtures/incident/authority/config.json")
failures = []
# One runner temp directory for every scenario of the default install, as one job's steps share
# it: the first scenario builds, later ones find the build in place.
RUNNER_TEMP = tempfile.mkdtemp()

# The cargo wrapper: records the action's arguments, then runs the real cargo on the debug build.
SHIM = tempfile.mkdtemp()
CARGO_LOG = os.path.join(SHIM, "cargo-calls.log")
REAL_CARGO = shutil.which("cargo")
assert REAL_CARGO, "scenarios: cargo is not on PATH"
with open(os.path.join(SHIM, "cargo"), "w") as f:
    f.write(f"""#!/bin/sh
printf '%s\\n' "$*" >> '{CARGO_LOG}'
exec '{REAL_CARGO}' "$@" --debug --offline
""")
os.chmod(os.path.join(SHIM, "cargo"), 0o755)
# No other dflash-check on PATH: the one the action installs is the one that runs.
BASE_PATH = os.pathsep.join([SHIM] + [d for d in os.environ["PATH"].split(os.pathsep)
                                      if d and not os.path.exists(os.path.join(d, "dflash-check"))])


def cargo_calls():
    return open(CARGO_LOG).read().splitlines() if os.path.exists(CARGO_LOG) else []


def check(ok, what, record):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}\n{json.dumps(record, indent=1)[:6000]}", file=sys.stderr)


def run(config_text, summary_text="", runner_temp=None, **inputs):
    """Runs the action on a repository holding one drafter config; returns (record, summary text,
    the scenario's directory)."""
    base = tempfile.mkdtemp()
    workspace, temp = os.path.join(base, "ws"), runner_temp or RUNNER_TEMP
    os.makedirs(os.path.join(workspace, "models/Qwen3.6-27B-DFlash"))
    with open(os.path.join(workspace, "models/Qwen3.6-27B-DFlash/config.json"), "w") as f:
        f.write(config_text)
    summary = os.path.join(base, "step_summary.md")
    with open(summary, "w") as f:
        f.write(summary_text)
    env = dict(os.environ, GITHUB_STEP_SUMMARY=summary, GITHUB_ACTIONS="true", NO_COLOR="1",
               HF_HUB_OFFLINE="1", PATH=BASE_PATH)
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

# 1. The default install (no version: this checkout, built by cargo), on the incident config with
# SARIF: annotations, summary table, SARIF handed to the upload, gate fails.
record, summary, base = run(incident, "earlier\n", paths="models", sarif="true")
plan = step(record, "Plan the install")["outputs"]
check(plan["mode"] == "build" and plan["root"].startswith(os.path.join(RUNNER_TEMP, "dflash-check-source-"))
      and plan["cache-key"].startswith("dflash-check-Linux-X64-"), "the default plans a build from the checkout", record)
check(cargo_calls() == [f"install --locked --path {ROOT} --root {plan['root']}"],
      "cargo install --locked --path <the action's checkout>", record)
check(record["uses"][0] == {"uses": "actions/cache@v5", "with": {"path": plan["root"], "key": plan["cache-key"]}},
      "the build is cached under the source's key", record)
check(step(record, "Install dflash-check")["stdout"].splitlines()[-1] == f"dflash-check {VERSION}",
      "the built dflash-check runs", record)
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
check(record["uses"][1:] == [{"uses": "github/codeql-action/upload-sarif@v4", "with": {"sarif_file": sarif_file}}],
      "SARIF handed to upload-sarif", record)
sarif = json.load(open(sarif_file))
check(sarif["runs"][0]["automationDetails"]["id"] == "dflash-check/check/", "SARIF category", record)
check(len(sarif["runs"][0]["results"]) == 4, "SARIF has every finding", record)
check(step(record, "Gate")["exit_code"] == 1 and record["failed"], "the gate fails the job", record)
check(os.path.isfile(os.path.join(plan["root"], "bin/dflash-check")), "installed in the runner's temp directory", record)
shutil.rmtree(base)

# 2. Warnings only: pass at min-severity error, fail at warning; no SARIF, no summary when off.
record, summary, base = run(warning_only, paths="models", summary="false")
check(cargo_calls() == [cargo_calls()[0]] and "this source's build restored from the cache"
      in step(record, "Install dflash-check")["stdout"], "a second run finds the build in place: no cargo", record)
check(record["outputs"] == {"exit-code": "0", "sarif-file": ""} and not record["failed"], "warnings pass by default", record)
check(len(record["uses"]) == 1 and step(record, "Upload SARIF to code scanning")["outcome"] == "skipped", "no upload without sarif", record)
check(summary == "", "summary off: nothing written", record)
check("::warning file=models/Qwen3.6-27B-DFlash/config.json" in step(record, "Check drafter configs")["stdout"],
      "the warning is annotated", record)
shutil.rmtree(base)
record, summary, base = run(warning_only, paths="models", min_severity="warning")
check(record["outputs"]["exit-code"] == "1" and record["failed"], "min-severity warning fails on a warning", record)
check("### dflash-check check: ❌ FAIL: 0 errors, 1 warning, 0 info (warnings denied)" in summary, "summary verdict under --deny warnings", record)
shutil.rmtree(base)

# 3. require-pin: the unpinned drafter is an error.
record, summary, base = run(authority, paths="models", require_pin="true")
check(record["outputs"]["exit-code"] == "1" and "title=pin-missing" in step(record, "Check drafter configs")["stdout"],
      "require-pin makes an unpinned drafter an error", record)
shutil.rmtree(base)

# 4. Bad inputs stop the job with a message, before any verdict.
record, summary, base = run(authority, min_severity="info")
check(step(record, "Check drafter configs")["exit_code"] == 2
      and "input min-severity must be error or warning" in step(record, "Check drafter configs")["stdout"]
      and step(record, "Gate")["outcome"] == "skipped", "a bad min-severity is refused", record)
shutil.rmtree(base)
for bad in ("--index-url=https://example.invalid", "latest", "0.1", "../0.1.0"):
    record, summary, base = run(authority, version=bad)
    check(step(record, "Plan the install")["exit_code"] == 2
          and "input version must be empty (build this action's source) or a release such as `0.1.0`"
          in step(record, "Plan the install")["stdout"]
          and step(record, "Check drafter configs")["outcome"] == "skipped", f"version `{bad}` is refused", record)
    shutil.rmtree(base)

record, summary, base = run(authority, checksum="0" * 64)
check(step(record, "Plan the install")["exit_code"] == 2
      and "inputs checksum and download-url apply to a release: set `version` too" in step(record, "Plan the install")["stdout"],
      "a checksum without a version is refused, not ignored", record)
shutil.rmtree(base)

# 5. A release: the archive release.yml would attach, from a local server, verified by SHA256SUMS.
ASSET = f"dflash-check-x86_64-unknown-linux-gnu-v{VERSION}.tgz"
SERVED = tempfile.mkdtemp()


def release_dir(name, tamper=None):
    """SERVED/name/ holding the archive and SHA256SUMS made by scripts/release-assets.sh; `tamper`
    edits them afterwards (the file names it is given)."""
    d = os.path.join(SERVED, name)
    assets = os.path.join(ROOT, "scripts/release-assets.sh")
    subprocess.run([assets, "package", WHEEL, "x86_64-unknown-linux-gnu", d], check=True, capture_output=True)
    subprocess.run([assets, "sums", d], check=True, capture_output=True)
    if tamper:
        tamper(os.path.join(d, ASSET), os.path.join(d, "SHA256SUMS"))
    return d


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=SERVED))
threading.Thread(target=server.serve_forever, daemon=True).start()
URL = f"http://127.0.0.1:{server.server_address[1]}"


def run_release(name, **inputs):
    temp = tempfile.mkdtemp()
    inputs.setdefault("download_url", f"{URL}/{name}")
    record, _, base = run(incident, runner_temp=temp, version=VERSION, paths="models", **inputs)
    installed = os.path.exists(os.path.join(temp, f"dflash-check-v{VERSION}/bin/dflash-check"))
    shutil.rmtree(base)
    shutil.rmtree(temp)
    return record, installed


def refused(record, installed, message, what):
    install = step(record, "Install dflash-check")
    check(install["exit_code"] == 2 and message in install["stdout"] and not installed
          and step(record, "Check drafter configs")["outcome"] == "skipped", what, record)


release_dir("good")
calls = len(cargo_calls())
record, installed = run_release("good")
install = step(record, "Install dflash-check")
check(installed and install["outcome"] == "success" and f"dflash-check: {ASSET}, sha256 " in install["stdout"]
      and install["stdout"].splitlines()[-1] == f"dflash-check {VERSION}", "the release archive is verified and installed", record)
check(record["outputs"]["exit-code"] == "1" and len(cargo_calls()) == calls
      and step(record, "Restore the build of this source")["outcome"] == "skipped", "the release binary gates, no build", record)
sums = open(os.path.join(SERVED, "good/SHA256SUMS")).read()
good_hash = next(l.split()[0] for l in sums.splitlines() if l.endswith(ASSET))
record, installed = run_release("good", checksum=good_hash.upper())
check(installed and step(record, "Install dflash-check")["outcome"] == "success"
      and "(as the checksum input says)" in step(record, "Install dflash-check")["stdout"],
      "the checksum input, when it matches (any case)", record)


def append(path, data):
    with open(path, "ab") as f:
        f.write(data)


release_dir("tampered", lambda asset, sums: append(asset, b"\0"))
refused(*run_release("tampered"), "checksum mismatch for " + ASSET, "a tampered archive is refused")
release_dir("wrong-sum", lambda asset, sums: open(sums, "w").write(f"{'0' * 64}  {ASSET}\n"))
refused(*run_release("wrong-sum"), "checksum mismatch for " + ASSET, "a wrong SHA256SUMS entry is refused")
release_dir("no-entry", lambda asset, sums: open(sums, "w").write(f"{'0' * 64}  other.tgz\n"))
refused(*run_release("no-entry"), f"no single SHA-256 for {ASSET}", "an archive SHA256SUMS does not list is refused")
release_dir("no-sums", lambda asset, sums: os.remove(sums))
refused(*run_release("no-sums"), "SHA256SUMS: refusing to install an unverified binary", "a release without SHA256SUMS is refused")
refused(*run_release("good", checksum="1" * 64), "checksum mismatch for " + ASSET, "a wrong checksum input is refused")
refused(*run_release("missing"), f"could not download {URL}/missing/{ASSET}", "a missing archive is refused")
refused(*run_release("good", download_url="http://example.invalid/v0.1.0"), "must be an https:// URL",
        "plain http off the loopback host is refused")
refused(*run_release("good", download_url=""), "could not tell which repository this action comes from",
        "no download-url and no action repository: refused, nothing fetched")
server.shutdown()
shutil.rmtree(SERVED)

shutil.rmtree(RUNNER_TEMP)
shutil.rmtree(SHIM)
if failures:
    raise SystemExit(f"action scenarios: {len(failures)} failed")
print("action-test: the action's steps: the default install (cargo install of the checkout, then in place), "
      "a release archive verified by SHA256SUMS (tampered, wrong, missing: refused), annotations, summary, "
      "SARIF upload, min-severity, require-pin, bad inputs")
