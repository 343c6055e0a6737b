#!/usr/bin/env python3
"""The Python peer of `dflash-check check PATHS` (issue 44): the short script a user would write
to gate a tree of drafters instead — `tomllib` for the pin file, `os.walk` for the configs,
`json.load` for each, and a flat key diff against the pinned authority.

    check_peer.py ROOT PATH...

ROOT holds `dflash-check.toml` (paths in it are relative to ROOT) and `snapshots/ORG__NAME.json`
(the built-in snapshots as files: bench/check_tree.py writes them). For every `config.json`
under PATH (hidden folders skipped): the authority is the pin's `against` file or its
`snapshot`; an unpinned drafter is compared with the snapshots of the same `architectures` and
the closest is taken. Nested keys are flattened to dotted paths (lists compared whole); every
key that differs is printed, one line each. Exits 1 when any drafter differs, as `check` does.
It does less than `check` (no token decoding, no lint, no weights, no target): it is the floor a
script sets, not an equivalent.
"""

import json
import os
import sys
import tomllib

MISSING = object()


def flatten(value, prefix="", out=None):
    out = {} if out is None else out
    if isinstance(value, dict):
        for key, child in value.items():
            flatten(child, f"{prefix}.{key}" if prefix else key, out)
    else:
        out[prefix] = value
    return out


def load(path):
    with open(path, encoding="utf-8") as f:
        return flatten(json.load(f))


def differences(here, there):
    return [k for k in sorted(here.keys() | there.keys())
            if here.get(k, MISSING) != there.get(k, MISSING)]


def main(root, paths):
    with open(os.path.join(root, "dflash-check.toml"), "rb") as f:
        pins = tomllib.load(f).get("drafters", {})
    snapshots = {}
    for name in os.listdir(os.path.join(root, "snapshots")):
        snapshots[name.removesuffix(".json").replace("__", "/", 1)] = load(
            os.path.join(root, "snapshots", name))
    failed = 0
    for top in paths:
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            if "config.json" not in files:
                continue
            here = load(os.path.join(folder, "config.json"))
            pin = pins.get(os.path.relpath(folder, root), {})
            if "against" in pin:
                authority = load(os.path.join(root, pin["against"]))
            elif "snapshot" in pin:
                authority = snapshots[pin["snapshot"]]
            else:
                same = [s for s in snapshots.values()
                        if s.get("architectures") == here.get("architectures")]
                if not same:
                    print(f"{folder}/config.json: no authority")
                    continue
                authority = min(same, key=lambda s: len(differences(here, s)))
            found = differences(here, authority)
            for key in found:
                print(f"{folder}/config.json: {key}: {here.get(key, '(absent)')!r} here, "
                      f"{authority.get(key, '(absent)')!r} in the authority")
            failed += bool(found)
    print(f"{failed} drafter(s) differ from their authority")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
