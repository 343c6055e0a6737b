#!/usr/bin/env python3
"""Tests of scripts/verify-evidence.py on a git repository made in a temporary directory.

Run by tests/evidence.rs (or directly: `python3 scripts/test_verify_evidence.py`). Stdlib only;
needs git. Each case asserts what the script reports: ok, a broken hash, a missing source,
lines that moved or vanished at a newer commit, an absence that no longer holds, and new entries
appended to a record whose other sources are not at hand.
"""

import hashlib
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "verify-evidence.py")

FILE_V1 = "def f(config):\n    x = 1\n\n    if config.window is None:\n        raise ValueError('no window')\n    return x\n"
# v2 inserts two lines above the cited ones (they move); v3 changes them (they vanish).
FILE_V2 = "import os\n\n" + FILE_V1
FILE_V3 = FILE_V1.replace("raise ValueError('no window')", "return None")


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout.strip()


def commit(repo, text, message):
    with open(os.path.join(repo, "pkg", "mod.py"), "w") as fh:
        fh.write(text)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def norm_hash(text):
    lines = [l.strip() for l in text.splitlines()]
    return hashlib.sha256("\n".join(l for l in lines if l).encode()).hexdigest()


class VerifyEvidence(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.sources = os.path.join(self.dir, "sources")
        self.repo = os.path.join(self.sources, "acme", "engine.git")
        os.makedirs(os.path.join(self.repo, "pkg"))
        git(self.repo, "init", "-q")
        self.c1 = commit(self.repo, FILE_V1, "v1")
        # Lines 3-5 (a blank line, the test and the raise): the hash ignores the blank line.
        self.h = norm_hash("\n".join(FILE_V1.splitlines()[2:5]))

    def tearDown(self):
        self.tmp.cleanup()

    def evidence(self, sha=None, extra=""):
        path = os.path.join(self.dir, "evidence.toml")
        with open(path, "w") as fh:
            fh.write(
                f'[[evidence]]\ncode = "window-missing"\nkind = "source"\nrepo = "acme/engine"\n'
                f'path = "pkg/mod.py"\ncommit = "{self.c1}"\nlines = [3, 5]\n'
                f'sha256 = "{sha or self.h}"\nclaim = "raises without a window"\n' + extra
            )
        return path

    def run_script(self, *args):
        out = os.path.join(self.dir, "verified.toml")
        r = subprocess.run(
            [sys.executable, SCRIPT, "--sources", self.sources, "--out", out, "--date", "2026-01-01T00:00:00Z", *args],
            capture_output=True,
            text=True,
        )
        verified = ""
        if os.path.exists(out):
            with open(out) as fh:
                verified = fh.read()
        return r.returncode, r.stdout + r.stderr, verified

    def test_cited_lines_verify_and_are_recorded(self):
        code, out, verified = self.run_script("--evidence", self.evidence())
        self.assertEqual(code, 0, out)
        self.assertIn('"window-missing" = "ok"', verified)
        self.assertIn(f'commits = ["{self.c1}"]', verified)
        self.assertIn('verified = "2026-01-01T00:00:00Z"', verified)
        self.assertIn(f'"{self.c1}" = "git mirror"', verified)

    def test_a_different_hash_is_a_mismatch(self):
        code, out, verified = self.run_script("--evidence", self.evidence(sha="0" * 64))
        self.assertEqual(code, 1, out)
        self.assertIn("mismatch window-missing", out)
        self.assertIn('"window-missing" = "mismatch"', verified)

    def test_a_source_not_fetched_is_missing(self):
        with open(self.evidence()) as fh:
            text = fh.read().replace("acme/engine", "acme/other")
        other = os.path.join(self.dir, "other.toml")
        with open(other, "w") as fh:
            fh.write(text)
        code, out, _ = self.run_script("--evidence", other)
        self.assertEqual(code, 1, out)
        self.assertIn("missing  window-missing", out)

    def test_a_saved_file_is_read_like_a_mirror(self):
        saved = os.path.join(self.dir, "saved")
        f = os.path.join(saved, "acme", "engine", self.c1, "pkg", "mod.py")
        os.makedirs(os.path.dirname(f))
        with open(f, "w") as fh:
            fh.write(FILE_V1)
        self.sources = saved
        code, out, verified = self.run_script("--evidence", self.evidence())
        self.assertEqual(code, 0, out)
        self.assertIn(f'"{self.c1}" = "saved files"', verified)

    def test_a_release_is_read_from_its_unpacked_wheel(self):
        # An entry citing a PyPI release instead of a commit reads <repo>/<package>==<version>/.
        saved = os.path.join(self.dir, "saved")
        f = os.path.join(saved, "acme", "engine", "engine==1.2.0", "pkg", "mod.py")
        os.makedirs(os.path.dirname(f))
        with open(f, "w") as fh:
            fh.write(FILE_V2)
        self.sources = saved
        with open(self.evidence()) as fh:
            text = fh.read().replace(f'commit = "{self.c1}"', 'release = "engine==1.2.0"').replace("[3, 5]", "[5, 7]")
        rel = os.path.join(self.dir, "release.toml")
        with open(rel, "w") as fh:
            fh.write(text)
        code, out, verified = self.run_script("--evidence", rel)
        self.assertEqual(code, 0, out)
        self.assertIn('"engine==1.2.0" = "release wheel"', verified)
        self.assertIn('release = "engine==1.2.0"', verified)
        # A commit and a release together is ambiguous: refused.
        with open(rel, "w") as fh:
            fh.write(text.replace("lines =", f'commit = "{self.c1}"\nlines ='))
        code, out, _ = self.run_script("--evidence", rel)
        self.assertEqual(code, 2, out)
        self.assertIn("one of them", out)

    def test_newer_commit_reports_moved_lines(self):
        c2 = commit(self.repo, FILE_V2, "v2")
        code, out, _ = self.run_script("--evidence", self.evidence(), "--newer", f"acme/engine={c2}")
        self.assertEqual(code, 0, out)
        self.assertIn("moved", out)
        self.assertIn("pkg/mod.py:3-5 -> 6-7", out)

    def test_newer_commit_reports_vanished_lines(self):
        c3 = commit(self.repo, FILE_V3, "v3")
        code, out, _ = self.run_script("--evidence", self.evidence(), "--newer", f"acme/engine={c3}")
        self.assertEqual(code, 1, out)
        self.assertIn("vanished", out)

    def test_newer_commit_with_the_same_lines(self):
        c2 = commit(self.repo, FILE_V1 + "# trailing\n", "v2")
        code, out, _ = self.run_script("--evidence", self.evidence(), "--newer", f"acme/engine={c2}")
        self.assertEqual(code, 0, out)
        self.assertIn("same", out)

    def test_absence_is_re_searched(self):
        absence = (
            f'\n[[evidence]]\ncode = "bos-unread"\nkind = "absence"\nrepo = "acme/engine"\n'
            f'commit = "{{c}}"\npaths = ["pkg/*.py"]\nidentifiers = ["config.bos_token_id"]\n'
            f'claim = "nothing reads bos"\n'
        )
        code, out, verified = self.run_script("--evidence", self.evidence(extra=absence.format(c=self.c1)))
        self.assertEqual(code, 0, out)
        self.assertIn('"bos-unread" = "ok"', verified)
        c4 = commit(self.repo, FILE_V1 + "y = config.bos_token_id\n", "v4")
        code, out, _ = self.run_script("--evidence", self.evidence(extra=absence.format(c=c4)))
        self.assertEqual(code, 1, out)
        self.assertIn("now names config.bos_token_id", out)

    def test_hash_prints_a_range_and_refuses_one_past_the_end(self):
        # --hash is how a new entry gets its sha256: a range the file does not have must not hash
        # its shorter tail silently.
        code, out, _ = self.run_script("--hash", "acme/engine", self.c1, "pkg/mod.py", "3-5")
        self.assertEqual(code, 0, out)
        self.assertEqual(out.strip(), self.h)
        code, out, _ = self.run_script("--hash", "acme/engine", self.c1, "pkg/mod.py", "3-9")
        self.assertEqual(code, 2, out)
        self.assertIn("has 6 lines", out)

    def test_append_verifies_only_new_entries_and_keeps_the_rest(self):
        # A recorded entry whose source is no longer at hand stays as recorded; a new entry citing
        # a release (all the sources directory holds) is verified and appended.
        code, out, first = self.run_script("--evidence", self.evidence())
        self.assertEqual(code, 0, out)
        saved = os.path.join(self.dir, "saved")
        f = os.path.join(saved, "acme", "engine", "engine==2.0.0", "pkg", "mod.py")
        os.makedirs(os.path.dirname(f))
        with open(f, "w") as fh:
            fh.write(FILE_V2)
        self.sources = saved
        new = (
            f'\n[[evidence]]\ncode = "window-moved"\nkind = "source"\nrepo = "acme/engine"\n'
            f'path = "pkg/mod.py"\nrelease = "engine==2.0.0"\nlines = [5, 7]\nsha256 = "{{h}}"\n'
            f'claim = "still raises at 2.0.0"\n'
        )
        code, out, verified = self.run_script(
            "--evidence", self.evidence(extra=new.format(h=self.h)), "--append", "--date", "2026-02-02T00:00:00Z"
        )
        self.assertEqual(code, 0, out)
        self.assertIn("1 new entries verified", out)
        self.assertTrue(verified.startswith(first[: first.index("commits")]), verified)
        # The record lists commits sorted as text: the git commit's hash (random) may sort either side.
        commits = ", ".join(f'"{c}"' for c in sorted([self.c1, "engine==2.0.0"]))
        self.assertIn(f"commits = [{commits}]", verified)
        self.assertIn('verified = "2026-01-01T00:00:00Z"', verified)
        self.assertIn('"window-moved" = "ok"', verified)
        self.assertEqual(verified.count("[[entry]]"), 2)
        self.assertIn(first[first.index("[[entry]]") :].rstrip("\n"), verified)
        # Nothing new: the file is left as it is; a new entry that does not verify writes nothing.
        code, out, again = self.run_script("--evidence", self.evidence(extra=new.format(h=self.h)), "--append")
        self.assertEqual((code, again), (0, verified), out)
        code, out, after = self.run_script("--evidence", self.evidence(extra=new.format(h="0" * 64)), "--append")
        self.assertEqual(code, 1, out)
        self.assertIn("left as it was", out)
        self.assertEqual(after, verified)

    def test_incomplete_entry_is_refused(self):
        bad = os.path.join(self.dir, "bad.toml")
        with open(bad, "w") as fh:
            fh.write('[[evidence]]\ncode = "x"\nkind = "source"\nrepo = "a/b"\n')
        code, out, verified = self.run_script("--evidence", bad)
        self.assertEqual(code, 2, out)
        self.assertIn("no `path`", out)
        self.assertEqual(verified, "")


if __name__ == "__main__":
    unittest.main()
