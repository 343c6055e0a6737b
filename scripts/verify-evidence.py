#!/usr/bin/env python3
"""Verify evidence/evidence.toml against the cited sources (stdlib only).

Every engine claim of dflash-check cites lines of an engine's, trainer's or converter's source
by location (repo, path, commit, line range) and by the sha256 of those lines, whitespace
normalised: each line stripped, empty lines dropped, joined with "\\n". The source itself is never
copied into this project. This script re-reads the cited lines and compares the hash.

Sources directory (kept outside the repository, or under the git-ignored /evidence-sources/):

    <dir>/<owner>/<repo>.git                     a git mirror (small repositories, fetched whole)
    <dir>/<owner>/<repo>/<commit>/<path>         one file saved at one commit (vLLM, SGLang)
    <dir>/<owner>/<repo>/<pkg>==<ver>/<path>     a released wheel's files, for entries that cite a
                                                 `release` (PyPI) instead of a commit; a file the
                                                 wheel does not hold (a Dockerfile, a requirements
                                                 file) is taken from the release's sdist

`--git owner/repo=GITDIR` points at a mirror elsewhere. `--fetch` populates the directory (needs
network): `git clone --mirror` for the repositories in MIRRORED, single raw files at their commit
for the others, `pip download` of the wheel for entries that cite a release.

Usage:
    scripts/verify-evidence.py --sources DIR              # verify, write evidence/verified.toml
    scripts/verify-evidence.py --sources DIR --fetch      # fetch what is cited, then verify
    scripts/verify-evidence.py --sources DIR --newer vllm-project/vllm=COMMIT [--fetch]
        # for every line range cited in that repository: still at the same place, moved (where
        # to), or vanished, at the newer commit; reads nothing else and writes nothing.
    scripts/verify-evidence.py --sources DIR --hash OWNER/REPO COMMIT PATH A-B
        # the hash to record for a new citation
    scripts/verify-evidence.py --sources DIR --append [--fetch]
        # verify only the entries evidence/verified.toml does not record yet (e.g. those citing
        # a new release, whose wheel is all DIR holds) and append them; the rest is kept.

Exit status: 0 when every entry is ok, 1 when one is a mismatch or missing, 2 on bad input.
"""

import argparse
import datetime
import fnmatch
import hashlib
import os
import re
import subprocess
import sys
import tomllib
import tempfile
import urllib.request
import zipfile

# Repositories small enough to mirror whole; the others are read one file at a time.
MIRRORED = {"z-lab/dflash", "vllm-project/speculators", "sgl-project/SpecForge"}

HEX40 = re.compile(r"^[0-9a-f]{40}$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
# A release on PyPI, cited where the repository's tag commit is not known: `package==version`.
RELEASE = re.compile(r"^[A-Za-z0-9_.-]+==[0-9][A-Za-z0-9_.+-]*$")


def rev(e):
    """What an entry was read at: its full commit, or its PyPI release (`package==version`)."""
    return e["commit"] if "commit" in e else e["release"]


def die(message):
    """Bad input: say what and what to do, exit 2, write nothing."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def normalise(lines):
    """The cited lines as hashed: each stripped, empty ones dropped, joined with a newline."""
    return "\n".join(s for s in (line.strip() for line in lines) if s)


def digest(lines):
    return hashlib.sha256(normalise(lines).encode("utf-8")).hexdigest()


class Sources:
    """Reads a file at a commit from a git mirror or from the saved-file layout."""

    def __init__(self, root, gits):
        self.root = root
        self.gits = dict(gits)

    def git_dir(self, repo):
        d = self.gits.get(repo)
        if d is None and self.root:
            d = os.path.join(self.root, repo + ".git")
        if d is None or not os.path.isdir(d):
            return None
        # A working clone keeps its git directory in .git; a mirror is one.
        return os.path.join(d, ".git") if os.path.isdir(os.path.join(d, ".git")) else d

    def read(self, repo, commit, path):
        """The file's lines, or None when neither a mirror nor a saved copy has it."""
        g = self.git_dir(repo)
        if g:
            r = subprocess.run(
                ["git", "--git-dir", g, "show", f"{commit}:{path}"],
                capture_output=True,
            )
            if r.returncode == 0:
                return r.stdout.decode("utf-8", "replace").splitlines()
        if self.root:
            f = os.path.join(self.root, repo, commit, path)
            if os.path.isfile(f):
                with open(f, encoding="utf-8", errors="replace") as fh:
                    return fh.read().splitlines()
        return None

    def via(self, repo, commit):
        """How `commit` of `repo` is read here: "git mirror", "saved files" or "release wheel"."""
        if RELEASE.match(commit):
            return "release wheel"
        g = self.git_dir(repo)
        if g:
            r = subprocess.run(["git", "--git-dir", g, "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True)
            if r.returncode == 0:
                return "git mirror"
        return "saved files"

    def list_files(self, repo, commit, patterns):
        """Files at a commit matching the globs (git mirror, or the saved files)."""
        g = self.git_dir(repo)
        names = None
        if g:
            r = subprocess.run(
                ["git", "--git-dir", g, "ls-tree", "-r", "--name-only", commit],
                capture_output=True,
            )
            if r.returncode == 0:
                names = r.stdout.decode().splitlines()
        if names is None and self.root:
            base = os.path.join(self.root, repo, commit)
            if os.path.isdir(base):
                names = []
                for dp, _, fs in os.walk(base):
                    for f in fs:
                        names.append(os.path.relpath(os.path.join(dp, f), base))
        if names is None:
            return None
        return [n for n in names if any(fnmatch.fnmatch(n, p) for p in patterns)]


def load_evidence(path):
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as e:
        die(f"cannot read {path}: {e}; fix the file and run again")
    return data


def check_source(src, e):
    """ok / mismatch / missing for one `source` entry, and a detail."""
    lines = src.read(e["repo"], rev(e), e["path"])
    if lines is None:
        return "missing", "no mirror or saved copy of the file at that commit or release"
    a, b = e["lines"]
    if b > len(lines):
        return "mismatch", f"the file has {len(lines)} lines, fewer than {b}"
    got = digest(lines[a - 1 : b])
    if got != e["sha256"]:
        return "mismatch", f"lines {a}-{b} hash {got[:12]}, not {e['sha256'][:12]}"
    return "ok", ""


def check_absence(src, e):
    """An absence holds when no searched file at the commit names any identifier."""
    files = src.list_files(e["repo"], e["commit"], e["paths"])
    if files is None:
        return "missing", "no mirror or saved copy of the repository at that commit"
    if not files:
        return "mismatch", "no file at that commit matches the searched paths"
    for f in files:
        text = "\n".join(src.read(e["repo"], e["commit"], f) or [])
        for ident in e["identifiers"]:
            if re.search(r"\b" + re.escape(ident) + r"\b", text):
                return "mismatch", f"{f} now names {ident}"
    return "ok", f"{len(files)} files searched"


def find_moved(lines, want, count):
    """Where a window of `count` non-empty lines hashing to `want` starts and ends (1-based)."""
    nonempty = [(i + 1, s.strip()) for i, s in enumerate(lines) if s.strip()]
    for k in range(len(nonempty) - count + 1):
        window = nonempty[k : k + count]
        text = "\n".join(s for _, s in window)
        if hashlib.sha256(text.encode("utf-8")).hexdigest() == want:
            return window[0][0], window[-1][0]
    return None


def newer(src, entries, repo, commit):
    """For each cited range of `repo`: same place, moved, or vanished at `commit`."""
    out = []
    for e in entries:
        if e.get("kind") != "source" or e["repo"] != repo:
            continue
        a, b = e["lines"]
        where = f"{e['code']}: {e['path']}:{a}-{b}"
        lines = src.read(repo, commit, e["path"])
        if lines is None:
            out.append(("vanished", f"{where}: no such file at {commit[:12]} (or not saved)"))
            continue
        old = src.read(repo, rev(e), e["path"])
        count = len(normalise(old[a - 1 : b]).split("\n")) if old else None
        if b <= len(lines) and digest(lines[a - 1 : b]) == e["sha256"]:
            out.append(("same", where))
            continue
        if count is None:
            out.append(("unknown", f"{where}: the old commit is not available to count its lines"))
            continue
        hit = find_moved(lines, e["sha256"], count)
        if hit:
            out.append(("moved", f"{where} -> {hit[0]}-{hit[1]}"))
        else:
            out.append(("vanished", f"{where}: the lines no longer exist as cited; re-read the claim"))
    return out


def fetch(root, entries, extra):
    """Populate `root`: mirrors for small repositories, single raw files for the others."""
    wanted = {}
    for e in entries:
        if e.get("kind") == "source":
            wanted.setdefault(e["repo"], set()).add((rev(e), e["path"]))
        elif e.get("kind") == "absence":
            # A repository too large to mirror is searched in the files an absence names
            # one by one; a glob there can only be searched in a mirror.
            paths = [p for p in e["paths"] if not any(c in p for c in "*?[")] or [None]
            for p in paths:
                wanted.setdefault(e["repo"], set()).add((e["commit"], p))
    for repo, commit in extra:
        for e in entries:
            if e.get("kind") == "source" and e["repo"] == repo:
                wanted.setdefault(repo, set()).add((commit, e["path"]))
    for repo, items in sorted(wanted.items()):
        for release in sorted({c for c, _ in items if RELEASE.match(c)}):
            fetch_release(root, repo, release, sorted({p for c, p in items if c == release and p}))
        items = {(c, p) for c, p in items if not RELEASE.match(c)}
        if repo in MIRRORED and items:
            d = os.path.join(root, repo + ".git")
            url = f"https://github.com/{repo}.git"
            cmd = ["git", "--git-dir", d, "fetch", "--prune", "origin"] if os.path.isdir(d) else ["git", "clone", "--mirror", url, d]
            print("$", " ".join(cmd), file=sys.stderr)
            subprocess.run(cmd, check=False)
            continue
        for commit, path in sorted(items, key=lambda x: (x[0], x[1] or "")):
            if not path:
                continue
            dest = os.path.join(root, repo, commit, path)
            if os.path.isfile(dest):
                continue
            url = f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"
            print("GET", url, file=sys.stderr)
            try:
                with urllib.request.urlopen(url, timeout=60) as r:
                    body = r.read()
            except OSError as err:
                print(f"  not fetched: {err}", file=sys.stderr)
                continue
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as fh:
                fh.write(body)


def fetch_release(root, repo, release, paths=()):
    """A release's wheel, unpacked under <root>/<repo>/<package>==<version>/ (pip, no deps); the
    cited paths the wheel does not hold are taken from the release's sdist."""
    dest = os.path.join(root, repo, release)
    if not os.path.isdir(dest):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d", tmp, release]
            print("$", " ".join(cmd), file=sys.stderr)
            if subprocess.run(cmd, check=False).returncode != 0:
                print(f"  no wheel: pip could not download one of {release}", file=sys.stderr)
            for name in os.listdir(tmp):
                if name.endswith(".whl"):
                    with zipfile.ZipFile(os.path.join(tmp, name)) as z:
                        z.extractall(dest, [m for m in z.namelist() if m.endswith(".py")])
    missing = [p for p in paths if not os.path.isfile(os.path.join(dest, p))]
    if missing:
        fetch_sdist_files(dest, release, missing)


def fetch_sdist_files(dest, release, paths):
    """Copies `paths` out of the release's sdist into `dest`. pip unpacks an sdist before it
    builds its metadata; without the package's build requirements that build fails, and
    --no-clean keeps the unpacked tree, from which the cited files are copied."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TMPDIR=tmp)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "--no-build-isolation", "--no-clean", "-d", os.path.join(tmp, "out"), release]
        print("$", " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=False, env=env, capture_output=True)
        roots = [os.path.join(dp, d) for dp, ds, _ in os.walk(tmp) for d in ds if d.startswith("pip-download-")]
        trees = [os.path.join(r, d) for r in roots for d in os.listdir(r)]
        for p in paths:
            found = [os.path.join(t, p) for t in trees if os.path.isfile(os.path.join(t, p))]
            if not found:
                print(f"  not fetched: {p} is in neither the wheel nor the sdist of {release}", file=sys.stderr)
                continue
            os.makedirs(os.path.dirname(os.path.join(dest, p)) or dest, exist_ok=True)
            with open(found[0], "rb") as src, open(os.path.join(dest, p), "wb") as out:
                out.write(src.read())


def toml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def header_lines(repos, src):
    """The per-repository records: commits verified, when, how each was read, result per code."""
    out = [
        "# Written by scripts/verify-evidence.py: do not edit. Re-run it after changing",
        "# evidence/evidence.toml (docs/evidence.md says how).",
        "",
    ]
    for repo in sorted(repos):
        r = repos[repo]
        out.append(f"[repos.{toml_str(repo)}]")
        out.append("commits = [" + ", ".join(toml_str(c) for c in sorted(r["commits"])) + "]")
        out.append(f"verified = {toml_str(r['verified'])}")
        # How each commit was read: from a git mirror, or from files saved one by one.
        vias = ", ".join(f"{toml_str(c)} = {toml_str(r['via'].get(c) or src.via(repo, c))}" for c in sorted(r["commits"]))
        out.append(f"via = {{ {vias} }}")
        out.append(f"[repos.{toml_str(repo)}.codes]")
        for code in sorted(r["codes"]):
            out.append(f"{toml_str(code)} = {toml_str(r['codes'][code])}")
        out.append("")
    return out


RANK = {"ok": 0, "missing": 1, "mismatch": 2}


def add_results(repos, results, when):
    """Adds each result's commit and code (the worst result per code) to its repository."""
    for e, result, _ in results:
        r = repos.setdefault(e["repo"], {"commits": set(), "codes": {}, "via": {}, "verified": when})
        r["commits"].add(rev(e))
        old = r["codes"].get(e["code"], "ok")
        r["codes"][e["code"]] = max(old, result, key=RANK.get)


def entry_lines(results):
    """One [[entry]] record per verified entry, in the evidence file's order."""
    out = []
    for e, result, detail in results:
        out.append("[[entry]]")
        out.append(f"code = {toml_str(e['code'])}")
        out.append(f"kind = {toml_str(e['kind'])}")
        out.append(f"repo = {toml_str(e['repo'])}")
        key = "commit" if "commit" in e else "release"
        out.append(f"{key} = {toml_str(rev(e))}")
        if e["kind"] == "source":
            out.append(f"path = {toml_str(e['path'])}")
            out.append(f"lines = [{e['lines'][0]}, {e['lines'][1]}]")
            out.append(f"sha256 = {toml_str(e['sha256'])}")
        out.append(f"result = {toml_str(result)}")
        if detail:
            out.append(f"detail = {toml_str(detail)}")
        out.append("")
    return out


def write_verified(path, results, when, src):
    """evidence/verified.toml: per repository the commits verified, when, and per code the result."""
    repos = {}
    add_results(repos, results, when)
    with open(path, "w") as fh:
        fh.write("\n".join(header_lines(repos, src) + entry_lines(results)))


def record_key(e):
    """What identifies a verification record: code, repository, revision, path, lines, hash."""
    lines = tuple(e["lines"]) if "lines" in e else ()
    return (e["code"], e["repo"], e.get("commit") or e.get("release"), e.get("path"), lines, e.get("sha256"))


def unrecorded(path, entries):
    """`path`'s text and parsed records, and the source and absence entries it does not record."""
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
        old = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        die(f"--append: cannot read {path}: {e}; run without --append to write it whole")
    recorded = {record_key(r) for r in old.get("entry", [])}
    new = [e for e in entries if e["kind"] in ("source", "absence") and record_key(e) not in recorded]
    return text, old, new


def append_verified(path, entries, src, when):
    """Verifies only the entries `path` does not record yet and appends them: their commits and
    codes join their repositories' records (whose dates stay: the other entries were not re-read),
    the records already there are kept as written. For a sources directory that holds only the
    newly cited files (a new release's wheel). Writes nothing unless every new entry is ok."""
    text, old, new = unrecorded(path, entries)
    results = [(e, *(check_source(src, e) if e["kind"] == "source" else check_absence(src, e))) for e in new]
    bad = [(e, result, detail) for e, result, detail in results if result != "ok"]
    for e, result, detail in bad:
        where = e.get("path") or ",".join(e.get("paths", []))
        print(f"{result:8} {e['code']}: {e['repo']} {where}@{rev(e)[:14]}: {detail}")
    if bad:
        print(f"{len(bad)} of {len(results)} new entries not verified; {path} left as it was")
        return 1
    if not results:
        print(f"nothing new to verify: {path} records every source and absence entry")
        return 0
    repos = {}
    for name, r in old.get("repos", {}).items():
        repos[name] = {"commits": set(r["commits"]), "codes": dict(r["codes"]), "via": dict(r.get("via", {})), "verified": r["verified"]}
    add_results(repos, results, when)
    kept = text[text.index("[[entry]]"):] if "[[entry]]" in text else ""
    body = "\n".join(header_lines(repos, src)) + "\n" + kept.rstrip("\n") + "\n\n" + "\n".join(entry_lines(results))
    with open(path, "w") as fh:
        fh.write(body)
    print(f"{len(results)} new entries verified and appended to {path}")
    return 0


def validate(entries):
    """Refuses an evidence file whose entries lack a field (exit 2: bad input)."""
    need = {
        "source": ["code", "repo", "path", "lines", "sha256", "claim"],
        "absence": ["code", "repo", "commit", "paths", "identifiers", "claim"],
        "report": ["code", "url", "shows"],
    }
    for i, e in enumerate(entries):
        kind = e.get("kind")
        if kind not in need:
            die(f"evidence entry {i + 1}: kind {kind!r} is not source, absence or report")
        for f in need[kind]:
            if f not in e:
                die(f"evidence entry {i + 1} ({e.get('code')}): no `{f}`; add it")
        if kind != "report" and ("commit" in e) == ("release" in e):
            die(f"evidence entry {i + 1} ({e.get('code')}): give a `commit` or a `release`, one of them")
        if kind == "absence" and "release" in e:
            die(f"evidence entry {i + 1} ({e['code']}): an absence is searched at a commit, not a release")
        if "commit" in e and not HEX40.match(e["commit"]):
            die(f"evidence entry {i + 1} ({e['code']}): commit is not 40 hex digits")
        if "release" in e and not RELEASE.match(e["release"]):
            die(f"evidence entry {i + 1} ({e['code']}): release is not package==version")
        if kind == "source" and not HEX64.match(e["sha256"]):
            die(f"evidence entry {i + 1} ({e['code']}): sha256 is not 64 hex digits")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--evidence", default="evidence/evidence.toml")
    p.add_argument("--sources", help="the sources directory (mirrors and saved files)")
    p.add_argument("--git", action="append", default=[], metavar="OWNER/REPO=GITDIR")
    p.add_argument("--newer", action="append", default=[], metavar="OWNER/REPO=COMMIT")
    p.add_argument("--fetch", action="store_true", help="populate --sources first (network)")
    p.add_argument(
        "--append",
        action="store_true",
        help="verify only the entries --out does not record yet and append them (the others are kept)",
    )
    p.add_argument("--out", default="evidence/verified.toml", help="where to write the record")
    p.add_argument("--date", help="the verification time to record (default: now, UTC)")
    p.add_argument(
        "--hash",
        nargs=4,
        metavar=("OWNER/REPO", "COMMIT", "PATH", "A-B"),
        help="print the sha256 of a line range to cite (for adding evidence), then exit",
    )
    args = p.parse_args()

    def pairs(items, flag):
        out = []
        for it in items:
            if "=" not in it or "/" not in it.split("=", 1)[0]:
                die(f"{flag} {it!r}: expected OWNER/REPO=VALUE")
            out.append(tuple(it.split("=", 1)))
        return out

    gits = pairs(args.git, "--git")
    if args.hash:
        repo, commit, path, span = args.hash
        lines = Sources(args.sources, gits).read(repo, commit, path)
        if lines is None or not re.match(r"^\d+-\d+$", span):
            die(f"no copy of {repo} {path}@{commit} in the sources, or {span!r} is not A-B")
        a, b = map(int, span.split("-"))
        if not 1 <= a <= b <= len(lines):
            die(f"{path}@{commit} has {len(lines)} lines: {span} is not a range in it")
        print(digest(lines[a - 1 : b]))
        return 0
    newers = pairs(args.newer, "--newer")
    data = load_evidence(args.evidence)
    entries = data.get("evidence", [])
    validate(entries)
    if args.fetch:
        if not args.sources:
            die("--fetch needs --sources DIR")
        # With --append only the entries not yet recorded are fetched.
        fetch(args.sources, unrecorded(args.out, entries)[2] if args.append else entries, newers)
    src = Sources(args.sources, gits)

    if newers:
        status = 0
        for repo, commit in newers:
            for what, text in newer(src, entries, repo, commit):
                print(f"{what:9} {repo}: {text}")
                status = status or (what in ("vanished", "unknown"))
        return 1 if status else 0

    when = args.date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if args.append:
        return append_verified(args.out, entries, src, when)

    results = []
    for e in entries:
        if e["kind"] == "source":
            results.append((e, *check_source(src, e)))
        elif e["kind"] == "absence":
            results.append((e, *check_absence(src, e)))
    bad = 0
    for e, result, detail in results:
        if result != "ok":
            bad += 1
            where = e.get("path") or ",".join(e.get("paths", []))
            print(f"{result:8} {e['code']}: {e['repo']} {where}@{rev(e)[:14]}: {detail}")
    # Codes that claim engine behaviour but carry no checkable evidence yet.
    for p_ in data.get("pending", []):
        print(f"pending  {p_['code']}: {p_['why']}")
    write_verified(args.out, results, when, src)
    ok = len(results) - bad
    print(f"{ok} of {len(results)} entries verified; {len(data.get('pending', []))} codes pending; wrote {args.out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
