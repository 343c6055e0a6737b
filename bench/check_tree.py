#!/usr/bin/env python3
"""Writes a tree of N drafter folders for `dflash-check check` at scale (BENCHMARKS.md, "`check`
over many drafters"), the layout bench/check-scale.sh always used:

- a third pinned to a file authority and wrong (the incident's guessed config, with its target),
- a third pinned to a built-in snapshot and clean,
- a third unpinned (matched to a built-in snapshot by fingerprint; the Qwen3-8B b16 fixture);

plus `authorities/` (the file authority), `targets/Qwen3.6-27B` (the pinned target) and, for the
Python peer (bench/check_peer.py), `snapshots/ORG__NAME.json`: the built-in snapshots'
configs as files, since a script cannot read what the binary carries.

    bench/check_tree.py N DIR        # DIR is replaced

Stdlib only; run from anywhere.
"""

import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fixture(*parts):
    return os.path.join(ROOT, *parts)


def main(n, tree):
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(os.path.join(tree, "authorities"))
    shutil.copy(fixture("fixtures", "incident", "authority", "config.json"),
                os.path.join(tree, "authorities", "qwen3.6-27b.json"))
    shutil.copytree(fixture("fixtures", "targets", "Qwen3.6-27B"),
                    os.path.join(tree, "targets", "Qwen3.6-27B"))
    shutil.copytree(fixture("crates", "core", "snapshots"), os.path.join(tree, "snapshots"))
    wrong = open(fixture("fixtures", "incident", "Qwen3.6-27B-DFlash", "config.json"), "rb").read()
    good = open(fixture("fixtures", "incident", "authority", "config.json"), "rb").read()
    unpinned = open(fixture("fixtures", "qwen3-8b", "Qwen3-8B-DFlash-b16", "config.json"), "rb").read()
    pins = ["version = 1"]
    for i in range(1, n + 1):
        kind = i % 3
        name = ("wrong", "good", "Qwen3-8B-DFlash-b16")[kind] + f"-{i}"
        folder = os.path.join(tree, "models", name)
        os.makedirs(folder)
        body = (wrong, good, unpinned)[kind]
        with open(os.path.join(folder, "config.json"), "wb") as f:
            f.write(body)
        if kind == 0:
            pins.append(f'\n[drafters."models/{name}"]\nagainst = "authorities/qwen3.6-27b.json"\n'
                        f'target = "targets/Qwen3.6-27B"')
        elif kind == 1:
            pins.append(f'\n[drafters."models/{name}"]\nsnapshot = "z-lab/Qwen3.6-27B-DFlash"')
    with open(os.path.join(tree, "dflash-check.toml"), "w") as f:
        f.write("\n".join(pins) + "\n")
    print(f"{tree}: {n} drafters")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(int(sys.argv[1]), sys.argv[2])
