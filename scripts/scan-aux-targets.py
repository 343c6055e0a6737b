#!/usr/bin/env python3
"""Static scan: which vLLM registry architectures implement SupportsEagle3.

For every extracted vLLM wheel under SRC (vllm==X.Y.Z/vllm/...), parse
vllm/model_executor/models/registry.py with `ast`, collect every module-level
dict literal mapping an architecture name to a (module, class) tuple (all of
_TEXT_GENERATION_MODELS, _EMBEDDING_MODELS, ..., _MULTIMODAL_MODELS,
_TRANSFORMERS_SUPPORTED_MODELS, _TRANSFORMERS_BACKEND_MODELS; the
_SPECULATIVE_DECODING_MODELS drafters are skipped), apply the `_VLLM_MODELS`
merge order (later `**dict` wins), and resolve each class's inheritance chain
across modules through imports (relative/absolute `from ... import`, `import
... as`, star imports, aliases `A = B`, platform-conditional imports in
`if/else` branches, `Generic[...]`-style subscripted bases).

supports = yes      some base chain reaches interfaces.SupportsEagle3
supports = no       every base resolved to a vLLM class that does not reach it,
                    or to an external class (torch, transformers, typing, ...)
supports = unknown  anything the static resolution cannot settle: an
                    unresolvable name, a base computed by a call, a module file
                    missing from the wheel, platform-dependent imports whose
                    branches disagree, a class that defines EAGLE-3 members
                    structurally (runtime_checkable Protocol => isinstance is
                    structural), or a class with its own __new__ (may return an
                    instance of another class).

Note: vllm's supports_eagle3() is `isinstance(model, SupportsEagle3)` on a
@runtime_checkable Protocol, i.e. structural: it needs the attributes
supports_eagle3, has_own_lm_head, has_own_embed_tokens,
set_aux_hidden_state_layers, get_eagle3_default_aux_hidden_state_layers.

Output: targets.tsv with columns
architecture, release, supports, module, class, source (file:line of the
class statement listing SupportsEagle3 in the chain), registry_dict, note
"""
from __future__ import annotations

import ast
import os
import sys

from aux_scan_lib import ModuleIndex, Res, combine_alternatives

# Usage: scripts/scan-aux-targets.py SRC_DIR OUT_TSV (SRC_DIR holds vllm==X.Y.Z/ unpacked wheels,
# e.g. from `pip download --no-deps vllm==X.Y.Z` and unzip).
SRC = sys.argv[1] if len(sys.argv) > 1 else "."
OUT = sys.argv[2] if len(sys.argv) > 2 else "targets.tsv"
IFACE_MOD = "vllm.model_executor.models.interfaces"
IFACE_CLS = "SupportsEagle3"
SKIP_DICTS = {"_SPECULATIVE_DECODING_MODELS"}
EAGLE3_MEMBERS = {
    "supports_eagle3",
    "set_aux_hidden_state_layers",
    "get_eagle3_default_aux_hidden_state_layers",
}


class Release(ModuleIndex):
    def __init__(self, root: str):
        super().__init__(root, "vllm")

    # ---------------- support check -----------------
    def target_supports(self, t: tuple) -> Res:
        kind = t[0]
        if kind == "external":
            return Res("no")
        if kind == "unknown":
            return Res("unknown", notes=[t[1]])
        if kind == "module":
            return Res("unknown", notes=[f"base is a module {t[1]}"])
        _, mod, cd = t
        return self.class_supports(mod, cd)

    def class_supports(self, mod: str, cd: ast.ClassDef) -> Res:
        key = (mod, cd.name, cd.lineno)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            return Res("unknown", notes=[f"inheritance cycle at {mod}.{cd.name}"])
        info = self.load(mod)
        here = f"{self.rel(info['file'])}:{cd.lineno}"
        if mod == IFACE_MOD and cd.name == IFACE_CLS:
            return Res("yes", "IFACE")
        self.active.add(key)
        try:
            base_results = []
            for b in cd.bases:
                cands = self.resolve_expr(mod, b, exclude=cd)
                rs = [self.target_supports(c) for c in cands]
                r = combine_alternatives(rs, f"base {ast.unparse(b)} of {cd.name}")
                if r.status == "yes" and r.source == "IFACE":
                    r = Res("yes", here, r.notes)
                base_results.append(r)
            for kw in cd.keywords:
                if kw.arg == "metaclass":
                    base_results.append(Res("no"))
            yes = [r for r in base_results if r.status == "yes"]
            unk = [r for r in base_results if r.status == "unknown"]
            notes = [n for r in base_results for n in r.notes]
            if yes:
                res = Res("yes", yes[0].source, [n for r in yes for n in r.notes])
            elif unk:
                res = Res("unknown", "", notes)
            else:
                res = Res("no", "", notes)
            # Structural / dynamic features of this class body.
            members = set()
            has_new = False
            for st in cd.body:
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    members.add(st.name)
                    if st.name == "__new__":
                        has_new = True
                elif isinstance(st, ast.Assign):
                    for tg in st.targets:
                        if isinstance(tg, ast.Name):
                            members.add(tg.id)
                elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                    members.add(st.target.id)
            e3 = members & EAGLE3_MEMBERS
            if e3 and res.status == "no":
                res = Res(
                    "unknown",
                    "",
                    res.notes + [f"{here} defines {sorted(e3)} without SupportsEagle3 (structural check)"],
                )
            if has_new and not (mod == IFACE_MOD):
                disp = self.new_dispatch(mod, cd)
                if disp is not None and res.status == "no" and disp.status == "no":
                    res = Res("no", "", res.notes + [f"{here} __new__ dispatches via a class dict; all targets: no"])
                elif disp is not None and res.status == "no" and disp.status == "yes":
                    res = Res("yes", disp.source, res.notes + [f"{here} __new__ dispatches; all targets yes"])
                elif res.status == "no":
                    res = Res("unknown", "", res.notes + [f"{here} defines __new__ (may return another class)"])
                else:
                    res.notes = res.notes + [f"{here} defines __new__ (may return another class)"]
            self.memo[key] = res
            return res
        finally:
            self.active.discard(key)

    def new_dispatch(self, mod: str, cd: ast.ClassDef) -> Res | None:
        """`__new__` that picks the instance class from a module-level dict
        literal of classes (e.g. minicpmv._SUPPORT_VERSION)."""
        info = self.load(mod)
        fn = next(st for st in cd.body if isinstance(st, ast.FunctionDef) and st.name == "__new__")
        results = []
        for n in ast.walk(fn):
            if isinstance(n, ast.Name):
                for b in info["binds"].get(n.id, []):
                    if b[0] == "expr" and isinstance(b[1], ast.Dict):
                        for v in b[1].values:
                            cands = self.resolve_expr(mod, v)
                            results.append(
                                combine_alternatives([self.target_supports(c) for c in cands], ast.unparse(v))
                            )
        if not results:
            return None
        return combine_alternatives(results, f"{cd.name}.__new__ targets")

    # ---------------- registry -----------------
    def registry(self):
        reg_mod = "vllm.model_executor.models.registry"
        f = self.mod_file(reg_mod)
        tree = ast.parse(open(f, encoding="utf-8").read())
        dicts: dict[str, dict[str, tuple[str, str, int]]] = {}
        order: list[str] = []
        for st in tree.body:
            if isinstance(st, (ast.Assign, ast.AnnAssign)):
                tgt = st.targets[0] if isinstance(st, ast.Assign) else st.target
                if not isinstance(tgt, ast.Name) or not isinstance(st.value, ast.Dict):
                    continue
                name = tgt.id
                entries = {}
                ok = False
                for k, v in zip(st.value.keys, st.value.values):
                    if k is None:  # **spread
                        if name == "_VLLM_MODELS" and isinstance(v, ast.Name):
                            order.append(v.id)
                        continue
                    if (
                        isinstance(k, ast.Constant)
                        and isinstance(v, ast.Tuple)
                        and len(v.elts) == 2
                        and all(isinstance(x, ast.Constant) and isinstance(x.value, str) for x in v.elts)
                    ):
                        entries[k.value] = (v.elts[0].value, v.elts[1].value, k.lineno)
                        ok = True
                if ok:
                    dicts[name] = entries
        return dicts, order


def resolve_module_name(rel: str) -> str:
    return rel if rel.startswith("vllm.") else f"vllm.model_executor.models.{rel}"


def release_key(name: str):
    return tuple(int(x) for x in name.split("==")[1].split("."))


def scan_release(rdir: str, rel_name: str):
    R = Release(rdir)
    dicts, order = R.registry()
    # effective mapping: _VLLM_MODELS merge order, later wins
    effective: dict[str, tuple[str, str, str]] = {}
    for d in order or list(dicts):
        for arch, (m, c, _) in dicts.get(d, {}).items():
            effective[arch] = (m, c, d)
    rows = []
    seen = set()
    for dname, entries in dicts.items():
        if dname in SKIP_DICTS or dname == "_VLLM_MODELS":
            continue
        for arch, (m, c, _line) in entries.items():
            if arch in seen:
                continue
            seen.add(arch)
            em, ec, ed = effective.get(arch, (m, c, dname))
            notes = []
            if ed in SKIP_DICTS:
                notes.append(f"overridden in _VLLM_MODELS by {ed}")
                em, ec = m, c
            elif (em, ec) != (m, c):
                notes.append(f"_VLLM_MODELS uses {ed}: ({em}, {ec})")
            mod = resolve_module_name(em)
            cands = R.resolve_from(mod, ec, 0)
            cres = [R.target_supports(t) for t in cands]
            res = combine_alternatives(cres, f"{mod}.{ec}")
            if len(cands) > 1 and len({r.status for r in cres}) > 1:
                parts = []
                for t, r in zip(cands, cres):
                    if t[0] == "class":
                        parts.append(f"{t[1]}:{t[2].lineno}={r.status}")
                    else:
                        parts.append(f"{t}={r.status}")
                notes.append("platform/conditional candidates: " + ", ".join(parts))
            if mod.endswith(".transformers") or ".transformers." in mod:
                notes.append("Transformers modeling backend class (vllm/model_executor/models/transformers)")
            dn = [n for n in dict.fromkeys(res.notes + notes)]
            rows.append(
                (arch, rel_name, res.status, mod, ec, res.source, dname, "; ".join(dn)[:600])
            )
    return rows


def main():
    rels = sorted(
        (d for d in os.listdir(SRC) if d.startswith("vllm==")), key=release_key
    )
    all_rows = []
    for r in rels:
        rows = scan_release(os.path.join(SRC, r), r.split("==")[1])
        c = {s: sum(1 for x in rows if x[2] == s) for s in ("yes", "no", "unknown")}
        print(f"{r}: {len(rows)} archs  yes={c['yes']} no={c['no']} unknown={c['unknown']}", file=sys.stderr)
        all_rows.extend(rows)
    with open(OUT, "w", encoding="utf-8") as fh:
        fh.write("architecture\trelease\tsupports\tmodule\tclass\tsource\tregistry_dict\tnote\n")
        for row in all_rows:
            fh.write("\t".join(str(x).replace("\t", " ").replace("\n", " ") for x in row) + "\n")
    print(f"wrote {OUT} ({len(all_rows)} rows)", file=sys.stderr)


if __name__ == "__main__":
    main()
