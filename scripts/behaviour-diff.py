#!/usr/bin/env python3
"""Behaviour kept: every command's `--format json` output over the fixture corpus, before and after.

A refactor that says it changes no behaviour proves it here. The script runs two builds of
`dflash-check` (BEFORE and AFTER: binaries, or a git revision that it builds in a temporary
worktree) over the same inputs — every drafter directory under `fixtures/`, `tests/fixtures/`,
`tests/lint/cases/` and `tests/launch/` (and the safetensors drafters that
`scripts/weights-setup.sh` writes to `target/weights-fixtures/`, when present), each launch file and a set of launch lines built from
those models, every code's `explain` page — and prints what changed, grouped the way a reviewer
reads a change:

- exit-code changes (0/1/2), per run;
- findings added or removed, as `code severity` (a renamed code shows as one removed, one added);
- severity changes of a finding at the same place;
- any other JSON change, counted per run (the full diff is in `--out DIR`).

Every run is offline (`HF_HUB_OFFLINE=1`, an empty `HF_HOME`), so the Hub never answers
differently between the two builds. Usage:

    scripts/behaviour-diff.py --before-rev 9698625 --after target/debug/dflash-check
    scripts/behaviour-diff.py --before OLD_BIN --after NEW_BIN --out /tmp/bdiff

Exit status: 0 when nothing changed, 1 when something did (the report says what), 2 on a usage
error or a build that failed. Standard library only.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ["fixtures", "tests/fixtures", "tests/lint/cases", "tests/launch"]
TARGET = "fixtures/targets/Qwen3.6-27B"
ENGINES = [None, "vllm", "vllm@0.26", "sglang"]


def drafter_dirs() -> list[str]:
    """Every directory of the corpus that holds a config.json (targets included: lint and diff
    must answer on them too, even if the answer is exit 2)."""
    dirs = set()
    for top in CORPUS:
        for cfg in (ROOT / top).rglob("config.json"):
            dirs.add(str(cfg.parent.relative_to(ROOT)))
    return sorted(dirs)


def launch_lines(models: list[str]) -> list[list[str]]:
    """Launch commands built from the corpus's models: each drafter served by vLLM with the
    method its family implies and a wrong one, and by SGLang, against the fixture target."""
    lines = []
    for m in models:
        for method, k in (("dflash", 15), ("eagle3", 3), ("dspark", 7), ("mtp", 1)):
            spec = json.dumps({"method": method, "model": m, "num_speculative_tokens": k})
            lines.append(["--", "vllm", "serve", TARGET, "--speculative-config", spec])
        lines.append(["--", "vllm", "serve", TARGET, "--speculative-config",
                      json.dumps({"method": "dflash", "model": m})])
        for algo, n in (("DFLASH", 16), ("EAGLE3", 4)):
            lines.append(["--", "python", "-m", "sglang.launch_server", "--model-path", TARGET,
                          "--speculative-algorithm", algo, "--speculative-draft-model-path", m,
                          "--speculative-num-draft-tokens", str(n), "--tp-size", "2"])
    return lines


def runs(binary: str) -> list[tuple[str, list[str]]]:
    """(name, argv) for every run; names are stable between the two builds."""
    out: list[tuple[str, list[str]]] = []
    dirs = drafter_dirs()
    for d in dirs:
        for engine in ENGINES:
            args = ["lint", d, "--format", "json"]
            name = f"lint {d}"
            if engine:
                args += ["--engine", engine]
                name += f" --engine {engine}"
            out.append((name, args))
        out.append((f"lint {d} --target", ["lint", d, "--target", TARGET, "--format", "json"]))
        out.append((f"diff {d}", ["diff", d, "--format", "json"]))
        out.append((f"diff {d} --target", ["diff", d, "--target", TARGET, "--format", "json"]))
        out.append((f"fix --dry-run {d}", ["fix", d, "--dry-run", "--format", "json"]))
        out.append((f"weights {d}", ["weights", d, "--format", "json"]))
        out.append((f"doctor {d}", ["doctor", "--drafter", d, "--format", "json"]))
    # The safetensors drafters scripts/weights-setup.sh writes (not committed: generated).
    weights = ROOT / "target/weights-fixtures"
    for w in sorted(p for p in weights.glob("*/*") if (p / "config.json").is_file()):
        rel = str(w.relative_to(ROOT))
        out.append((f"weights {rel}", ["weights", rel, "--format", "json"]))
        out.append((f"lint {rel}", ["lint", rel, "--format", "json"]))
    for top in CORPUS:
        out.append((f"check {top}", ["check", top, "--format", "json"]))
    for f in sorted((ROOT / "tests/launch/files").glob("*")):
        rel = str(f.relative_to(ROOT))
        out.append((f"launch --file {rel}", ["launch", "--file", rel, "--format", "json"]))
    for i, line in enumerate(launch_lines(dirs)):
        out.append((f"launch #{i} {' '.join(line[1:])}", ["launch", "--format", "json"] + line))
    codes = subprocess.run([binary, "explain", "--format", "json"], capture_output=True,
                           text=True, cwd=ROOT, env=env()).stdout
    for code in sorted(all_codes(codes)):
        out.append((f"explain {code}", ["explain", code, "--format", "json"]))
    return out


def all_codes(text: str) -> set[str]:
    """The codes `explain` lists (its JSON shape is a list of entries with a `code`)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return set()
    found = set()

    def walk(v):
        if isinstance(v, dict):
            if isinstance(v.get("code"), str):
                found.add(v["code"])
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(value)
    return found


_HOME = tempfile.mkdtemp(prefix="bdiff-hf-")


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING", "DFLASH"))}
    e.update(HF_HUB_OFFLINE="1", HF_HOME=_HOME, NO_COLOR="1")
    return e


def run(binary: str, args: list[str]) -> tuple[int, str]:
    p = subprocess.run([binary] + args, capture_output=True, text=True, cwd=ROOT, env=env(),
                       timeout=120)
    return p.returncode, p.stdout if p.stdout.strip() else p.stderr


def findings(text: str) -> list[tuple[str, str, str]]:
    """(code, severity, where) of every diagnostic in a JSON answer, wherever it nests."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return []
    found = []

    def walk(v):
        if isinstance(v, dict):
            if isinstance(v.get("code"), str) and isinstance(v.get("severity"), str):
                where = v.get("path") or v.get("file") or ""
                found.append((v["code"], v["severity"], str(where)))
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(value)
    return found


def build_rev(rev: str) -> str:
    """Builds `rev` in a temporary worktree (its own target dir) and returns the binary."""
    work = Path(tempfile.mkdtemp(prefix="bdiff-rev-"))
    subprocess.run(["git", "worktree", "add", "--detach", str(work), rev], cwd=ROOT, check=True,
                   capture_output=True)
    target = ROOT / "target" / "behaviour-diff"
    subprocess.run(["cargo", "build", "--quiet", "--bin", "dflash-check"], cwd=work, check=True,
                   env={**os.environ, "CARGO_TARGET_DIR": str(target)})
    binary = work / "dflash-check.before"
    binary.write_bytes((target / "debug" / "dflash-check").read_bytes())
    binary.chmod(0o755)
    return str(binary)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    before = ap.add_mutually_exclusive_group(required=True)
    before.add_argument("--before", help="the old binary")
    before.add_argument("--before-rev", help="a git revision to build as the old binary")
    ap.add_argument("--after", default=str(ROOT / "target/debug/dflash-check"))
    ap.add_argument("--out", help="write each changed run's before/after JSON and diff here")
    a = ap.parse_args()
    try:
        old = a.before or build_rev(a.before_rev)
    except subprocess.CalledProcessError as e:
        print(f"behaviour-diff: building {a.before_rev} failed: {e}", file=sys.stderr)
        return 2
    new = a.after
    for b in (old, new):
        if not os.access(b, os.X_OK):
            print(f"behaviour-diff: {b} is not an executable", file=sys.stderr)
            return 2
    plan = runs(old)
    names_new = {n for n, _ in runs(new)}
    only_new = sorted(names_new - {n for n, _ in plan})
    out = Path(a.out) if a.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    exit_changes, added, removed, sev, other = [], [], [], [], []
    for name, args in plan:
        (rc0, t0), (rc1, t1) = run(old, args), run(new, args)
        if rc0 != rc1:
            exit_changes.append(f"{name}: exit {rc0} -> {rc1}")
        f0, f1 = findings(t0), findings(t1)
        s0, s1 = set(f0), set(f1)
        at0 = {(c, w): s for c, s, w in f0}
        at1 = {(c, w): s for c, s, w in f1}
        for (c, w), s in at1.items():
            if (c, w) in at0 and at0[(c, w)] != s:
                sev.append(f"{name}: {c} at {w or '-'}: {at0[(c, w)]} -> {s}")
        for c, s, w in sorted(s1 - s0):
            if (c, w) not in at0:
                added.append(f"{name}: + {c} {s} at {w or '-'}")
        for c, s, w in sorted(s0 - s1):
            if (c, w) not in at1:
                removed.append(f"{name}: - {c} {s} at {w or '-'}")
        if t0 != t1:
            other.append(name)
            if out:
                safe = "".join(ch if ch.isalnum() else "_" for ch in name)[:150]
                diff = difflib.unified_diff(t0.splitlines(True), t1.splitlines(True), "before",
                                            "after")
                (out / f"{safe}.diff").write_text("".join(diff))
    print(f"behaviour-diff: {len(plan)} runs, before {old}, after {new}")
    for title, rows in (("exit codes changed", exit_changes), ("findings added", added),
                        ("findings removed", removed), ("severities changed", sev),
                        ("runs whose JSON changed", other),
                        ("runs only the new build has (new codes)", only_new)):
        print(f"\n## {title}: {len(rows)}")
        for r in rows:
            print(f"  {r}")
    changed = exit_changes or added or removed or sev or other
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
