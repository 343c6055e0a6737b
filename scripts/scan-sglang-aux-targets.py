#!/usr/bin/env python3
"""Static scan: which SGLang registry architectures (EntryClass of every top-level
module in sglang/srt/models, architecture = class __name__) define, through their
MRO, the target-side capture hooks SGLang calls for hidden-state drafters:

  set_eagle3_layers_to_capture   (EAGLE-3; missing -> AttributeError / ValueError in 0.5.23)
  set_dflash_layers_to_capture   (DFLASH from 0.5.11; DSPARK falls back to it)
  set_dspark_layers_to_capture   (DSPARK from 0.5.16; optional, preferred)

supports = yes      the method is defined in the class or a resolved base
supports = no       every base resolved to an SGLang class without it or to an external
                    (torch / transformers / typing ...) class
supports = unknown  unresolved name, module missing, external base of an unknown package,
                    disagreeing conditional (platform) bindings, class __getattr__/__new__,
                    class decorator, metaclass, dynamic `X.meth = ...`, or a method whose
                    body only raises.

Usage: scripts/scan-sglang-aux-targets.py [SRC_DIR] [OUT_TSV]   (SRC_DIR holds sglang==X.Y.Z/ extracted wheels)
Writes OUT_TSV (EAGLE-3), OUT_TSV-dflash.tsv, OUT_TSV-dspark.tsv (DSpark: own hook OR DFlash hook).
Adapted from scripts/scan-aux-targets.py (the vLLM scan). Standard library only.
"""
from __future__ import annotations

import ast
import os
import sys

from aux_scan_lib import ModuleIndex, Res, combine_alternatives

# Usage: python3 scan.py [SRC_DIR] [OUT_TSV]  (SRC_DIR holds sglang==X.Y.Z/ extracted wheels,
# e.g. from `pip download --no-deps sglang==X.Y.Z` and unzip).
SRC = sys.argv[1] if len(sys.argv) > 1 else "."
OUT = sys.argv[2] if len(sys.argv) > 2 else "targets.tsv"



class Release(ModuleIndex):
    def __init__(self, root: str):
        super().__init__(root, "sglang")

    # ---------------- method check (SGLang) -----------------
    def target_has(self, t: tuple, meth: str) -> Res:
        kind = t[0]
        if kind == "external":
            top = t[1].split(".")[0]
            if top in SAFE_EXTERNAL:
                return Res("no")
            return Res("unknown", notes=[f"external base {t[1]} (not known to lack {meth})"])
        if kind == "unknown":
            return Res("unknown", notes=[t[1]])
        if kind == "module":
            return Res("unknown", notes=[f"base is a module {t[1]}"])
        _, mod, cd = t
        return self.class_has(mod, cd, meth)

    def class_has(self, mod: str, cd: ast.ClassDef, meth: str) -> Res:
        key = (mod, cd.name, cd.lineno, meth)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            return Res("unknown", notes=[f"inheritance cycle at {mod}.{cd.name}"])
        info = self.load(mod)
        here = f"{self.rel(info['file'])}:{cd.lineno}"
        self.active.add(key)
        try:
            # 1. defined in this class body? (last binding wins, as in Python)
            for st in reversed(cd.body):
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == meth:
                    src = f"{self.rel(info['file'])}:{st.lineno}"
                    stmts = [s for s in st.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
                    if stmts and all(isinstance(s, ast.Raise) for s in stmts):
                        res = Res("unknown", src, [f"{src} {cd.name}.{meth} only raises"])
                    else:
                        res = Res("yes", src)
                    self.memo[key] = res
                    return res
                if isinstance(st, (ast.Assign, ast.AnnAssign)):
                    tg = st.targets if isinstance(st, ast.Assign) else [st.target]
                    if any(isinstance(x, ast.Name) and x.id == meth for x in tg):
                        src = f"{self.rel(info['file'])}:{st.lineno}"
                        res = Res("yes", src, [f"{src} {meth} bound by assignment in class body"])
                        self.memo[key] = res
                        return res
            # 2. bases (MRO: any base that has it => the class has it)
            base_results = []
            for b in cd.bases:
                cands = self.resolve_expr(mod, b, exclude=cd)
                rs = [self.target_has(c, meth) for c in cands]
                base_results.append(combine_alternatives(rs, f"base {ast.unparse(b)} of {cd.name}"))
            for kw in cd.keywords:
                if kw.arg == "metaclass":
                    base_results.append(Res("unknown", notes=[f"{here} {cd.name} has a metaclass"]))
            yes = [r for r in base_results if r.status == "yes"]
            unk = [r for r in base_results if r.status == "unknown"]
            notes = [n for r in base_results for n in r.notes]
            if yes:
                res = Res("yes", yes[0].source, [n for r in yes for n in r.notes])
            elif unk:
                res = Res("unknown", "", notes)
            else:
                res = Res("no", "", notes)
            if res.status == "no":
                names = {st.name for st in cd.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))}
                if "__getattr__" in names or "__getattribute__" in names:
                    res = Res("unknown", "", res.notes + [f"{here} {cd.name} defines __getattr__ (dynamic attributes)"])
                elif "__new__" in names:
                    res = Res("unknown", "", res.notes + [f"{here} {cd.name} defines __new__ (may return another class)"])
                elif cd.decorator_list:
                    decs = [ast.unparse(d) for d in cd.decorator_list]
                    if not all(d.split("(")[0].split(".")[-1] in SAFE_DECORATORS for d in decs):
                        res = Res("unknown", "", res.notes + [f"{here} {cd.name} has class decorator(s) {decs}"])
                elif cd.name in self.dynamic.get(meth, set()):
                    res = Res("unknown", "", res.notes + [f"{cd.name}.{meth} assigned dynamically somewhere in the package"])
            self.memo[key] = res
            return res
        finally:
            self.active.discard(key)

    # ---------------- registry (SGLang) -----------------
    def entry_classes(self):
        """Top-level (non-package) modules of sglang.srt.models, as pkgutil.iter_modules
        in registry.import_model_classes sees them; each one's EntryClass."""
        mdir = os.path.join(self.root, "sglang", "srt", "models")
        out = []  # (modname, file, lineno, elt_expr)
        for fn in sorted(os.listdir(mdir)):
            if not fn.endswith(".py") or fn == "__init__.py":
                continue
            mod = f"sglang.srt.models.{fn[:-3]}"
            info = self.load(mod)
            binds = info["binds"].get("EntryClass", [])
            if not binds:
                if info["stars"]:
                    out.append((mod, info["file"], 0, None, "module has star imports and no own EntryClass; an inherited EntryClass is possible"))
                continue
            for b in binds:
                if b[0] == "expr":
                    v = b[1]
                    elts = v.elts if isinstance(v, (ast.List, ast.Tuple)) else [v]
                    for e in elts:
                        out.append((mod, info["file"], v.lineno, e, "multiple EntryClass bindings (conditional)" if len(binds) > 1 else ""))
                elif b[0] == "from":
                    out.append((mod, info["file"], 0, ("from", b[1], b[2]), "EntryClass imported"))
        return out


SAFE_EXTERNAL = {"torch", "transformers", "typing", "typing_extensions", "abc", "builtins", "enum",
                 "collections", "dataclasses", "msgspec", "functools", "contextlib", "object"}
SAFE_DECORATORS = {"dataclass"}
METHODS = ("set_eagle3_layers_to_capture", "set_dflash_layers_to_capture", "set_dspark_layers_to_capture")


def release_key(name: str):
    return tuple(int(x) for x in name.split("==")[1].split("."))


def find_dynamic(root: str):
    """Class names X with `X.<meth> = ...` or `setattr(X, "<meth>", ...)` anywhere in sglang/."""
    import re
    dyn = {m: set() for m in METHODS}
    pat = re.compile(r"(\w+)\.(set_(?:eagle3|dflash|dspark)_layers_to_capture)\s*=[^=]|setattr\(\s*(\w+)\s*,\s*[\"'](set_(?:eagle3|dflash|dspark)_layers_to_capture)")
    for dp, _, fns in os.walk(os.path.join(root, "sglang")):
        for fn in fns:
            if fn.endswith(".py"):
                txt = open(os.path.join(dp, fn), encoding="utf-8", errors="replace").read()
                for m in pat.finditer(txt):
                    if m.group(1):
                        dyn[m.group(2)].add(m.group(1))
                    else:
                        dyn[m.group(4)].add(m.group(3))
    return dyn


def scan_release(rdir: str, rel_name: str):
    R = Release(rdir)
    R.dynamic = find_dynamic(rdir)
    rv = release_key("x==" + rel_name)
    has_dflash = rv >= (0, 5, 11)
    has_dspark = rv >= (0, 5, 16)
    rows = {"eagle3": [], "dflash": [], "dspark": []}
    seen = {}
    for mod, f, lineno, e, extra in R.entry_classes():
        relf = R.rel(f)
        if e is None:
            arch_rows = [("?", "unknown", None, extra)]
            continue
        if isinstance(e, tuple):
            cands = R.resolve_from(e[1], e[2], 0)
        else:
            cands = R.resolve_expr(mod, e)
        classes = [c for c in cands if c[0] == "class"]
        names = sorted({c[2].name for c in classes})
        if len(names) == 1 and len(classes) == len(cands):
            arch = names[0]
        else:
            arch = ast.unparse(e) if not isinstance(e, tuple) else e[2]
        notes0 = [extra] if extra else []
        if len(names) > 1:
            notes0.append(f"EntryClass element resolves to several class names {names}")
        cls_name = ast.unparse(e) if not isinstance(e, tuple) else e[2]
        if arch in seen:
            notes0.append(f"architecture also exported by {seen[arch]} (registry asserts no duplicates)")
        seen.setdefault(arch, relf)
        res = {}
        for meth in METHODS:
            rs = [R.target_has(c, meth) for c in cands]
            r = combine_alternatives(rs, f"{mod}.{cls_name}")
            if len(cands) > 1 and len({x.status for x in rs}) > 1:
                parts = [f"{c[1]}:{c[2].lineno}={x.status}" if c[0] == "class" else f"{c}={x.status}" for c, x in zip(cands, rs)]
                r.notes.append("conditional candidates: " + ", ".join(parts))
            res[meth] = r
        e3, df, ds = (res[m] for m in METHODS)
        # DSpark: set_dspark_layers_to_capture, else set_dflash_layers_to_capture
        if ds.status == "yes" or df.status == "yes":
            eff_ds = Res("yes", ds.source if ds.status == "yes" else df.source,
                         ds.notes + ([] if ds.status == "yes" else [f"via set_dflash_layers_to_capture fallback (set_dspark_layers_to_capture={ds.status})"]))
        elif "unknown" in (ds.status, df.status):
            eff_ds = Res("unknown", "", ds.notes + df.notes)
        else:
            eff_ds = Res("no", "", ds.notes + df.notes)
        regcol = f"EntryClass:{relf}:{lineno}"
        is_tf = mod == "sglang.srt.models.transformers"
        tfnote = ["Transformers backend class (sglang/srt/models/transformers.py)"] if is_tf else []
        summ = (f"dflash={df.status if has_dflash else 'n/a(no DFLASH in release)'}; "
                f"dspark={eff_ds.status if has_dspark else 'n/a(no DSPARK in release)'}")
        def mk(r, extra_notes):
            dn = list(dict.fromkeys(notes0 + tfnote + r.notes + extra_notes))
            return (arch, rel_name, r.status, mod, cls_name, r.source, regcol, "; ".join(x for x in dn if x)[:600])
        rows["eagle3"].append(mk(e3, [summ]))
        if has_dflash:
            rows["dflash"].append(mk(df, [f"eagle3={e3.status}"]))
        if has_dspark:
            rows["dspark"].append(mk(eff_ds, [f"eagle3={e3.status}; dflash={df.status}; own set_dspark_layers_to_capture={ds.status}"]))
    return rows


def main():
    rels = sorted((d for d in os.listdir(SRC) if d.startswith("sglang==")), key=release_key)
    outs = {"eagle3": OUT, "dflash": OUT.replace(".tsv", "-dflash.tsv"), "dspark": OUT.replace(".tsv", "-dspark.tsv")}
    all_rows = {k: [] for k in outs}
    for r in rels:
        rows = scan_release(os.path.join(SRC, r), r.split("==")[1])
        msg = [f"{r}: {len(rows['eagle3'])} archs"]
        for k in outs:
            if rows[k]:
                c = {s: sum(1 for x in rows[k] if x[2] == s) for s in ("yes", "no", "unknown")}
                msg.append(f"{k}: yes={c['yes']} no={c['no']} unknown={c['unknown']}")
            all_rows[k].extend(rows[k])
        print("  ".join(msg), file=sys.stderr)
    for k, path in outs.items():
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("architecture\trelease\tsupports\tmodule\tclass\tsource\tregistry_dict\tnote\n")
            for row in all_rows[k]:
                fh.write("\t".join(str(x).replace("\t", " ").replace("\n", " ") for x in row) + "\n")
        print(f"wrote {path} ({len(all_rows[k])} rows)", file=sys.stderr)


if __name__ == "__main__":
    main()
