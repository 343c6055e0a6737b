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
from dataclasses import dataclass, field

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


@dataclass
class Res:
    status: str  # yes / no / unknown
    source: str = ""  # file:line of class listing SupportsEagle3
    notes: list[str] = field(default_factory=list)


def combine_alternatives(results: list[Res], what: str) -> Res:
    """Candidates for one name (e.g. platform branches): all must agree."""
    if not results:
        return Res("unknown", notes=[f"no candidates for {what}"])
    st = {r.status for r in results}
    notes = [n for r in results for n in r.notes]
    if st == {"yes"}:
        return Res("yes", results[0].source, notes)
    if st == {"no"}:
        return Res("no", notes=notes)
    srcs = [r.source for r in results if r.source]
    return Res(
        "unknown",
        srcs[0] if srcs else "",
        notes + [f"{what}: alternative bindings disagree ({'/'.join(r.status for r in results)})"],
    )


class Release:
    def __init__(self, root: str):
        self.root = root  # directory containing the `vllm` package
        self.mods: dict[str, dict | None] = {}
        self.memo: dict[tuple, Res] = {}
        self.active: set = set()

    # ---------------- module loading -----------------
    def mod_file(self, mod: str) -> str | None:
        p = os.path.join(self.root, *mod.split("."))
        if os.path.isfile(p + ".py"):
            return p + ".py"
        if os.path.isfile(os.path.join(p, "__init__.py")):
            return os.path.join(p, "__init__.py")
        return None

    def is_pkg(self, mod: str) -> bool:
        f = self.mod_file(mod)
        return bool(f and f.endswith("__init__.py"))

    def rel(self, path: str) -> str:
        return os.path.relpath(path, self.root)

    def load(self, mod: str) -> dict | None:
        if mod in self.mods:
            return self.mods[mod]
        f = self.mod_file(mod)
        if f is None:
            self.mods[mod] = None
            return None
        with open(f, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), filename=f)
        info = {
            "file": f,
            "mod": mod,
            "pkg": mod if f.endswith("__init__.py") else mod.rpartition(".")[0],
            "classes": {},  # name -> [ClassDef]
            "binds": {},  # name -> [(kind, ...)]
            "stars": [],
            "getattr": False,
        }
        self._walk(tree.body, info)
        self.mods[mod] = info
        return info

    def _abs(self, info, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        base = info["pkg"]
        for _ in range(level - 1):
            base = base.rpartition(".")[0]
        return f"{base}.{module}" if module else base

    def _walk(self, body, info):
        for st in body:
            if isinstance(st, ast.ClassDef):
                info["classes"].setdefault(st.name, []).append(st)
            elif isinstance(st, ast.ImportFrom):
                src = self._abs(info, st.module, st.level)
                for a in st.names:
                    if a.name == "*":
                        info["stars"].append(src)
                    else:
                        info["binds"].setdefault(a.asname or a.name, []).append(
                            ("from", src, a.name)
                        )
            elif isinstance(st, ast.Import):
                for a in st.names:
                    if a.asname:
                        info["binds"].setdefault(a.asname, []).append(("module", a.name))
                    else:
                        top = a.name.split(".")[0]
                        info["binds"].setdefault(top, []).append(("module", top))
            elif isinstance(st, (ast.Assign, ast.AnnAssign)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                val = st.value
                if val is None:
                    continue
                for t in targets:
                    if isinstance(t, ast.Name):
                        if isinstance(val, ast.Constant):
                            continue  # e.g. `Foo = None` fallback
                        info["binds"].setdefault(t.id, []).append(("expr", val))
            elif isinstance(st, ast.If):
                test = ast.unparse(st.test)
                if test in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                    self._walk(st.orelse, info)  # runtime branch only
                else:
                    self._walk(st.body, info)
                    self._walk(st.orelse, info)
            elif isinstance(st, ast.Try):
                self._walk(st.body, info)
                for h in st.handlers:
                    self._walk(h.body, info)
                self._walk(st.orelse, info)
                self._walk(st.finalbody, info)
            elif isinstance(st, ast.With):
                self._walk(st.body, info)
            elif isinstance(st, ast.FunctionDef) and st.name == "__getattr__":
                info["getattr"] = st

    # ---------------- name resolution -----------------
    # a "target" is ("class", mod, ClassDef) | ("module", mod) |
    # ("external", qualname) | ("unknown", reason)
    def resolve_name(self, mod: str, name: str, exclude=None, depth=0) -> list[tuple]:
        if depth > 40:
            return [("unknown", f"resolution too deep for {mod}.{name}")]
        info = self.load(mod)
        if info is None:
            if self.mod_file(f"{mod}.{name}"):
                return [("module", f"{mod}.{name}")]
            return [("unknown", f"module {mod} not found in wheel")]
        out: list[tuple] = []
        for cd in info["classes"].get(name, []):
            if cd is not exclude:
                out.append(("class", mod, cd))
        for b in info["binds"].get(name, []):
            if b[0] == "from":
                out.extend(self.resolve_from(b[1], b[2], depth + 1))
            elif b[0] == "module":
                out.append(self.module_target(b[1]))
            elif b[0] == "expr":
                out.extend(self.resolve_expr(mod, b[1], depth + 1))
        if not out:
            for sm in info["stars"]:
                if sm.startswith("vllm"):
                    r = self.resolve_name(sm, name, depth=depth + 1)
                    if not all(t[0] == "unknown" for t in r):
                        out.extend(r)
                else:
                    out.append(("unknown", f"star import from external {sm}"))
        if not out and info["pkg"] == mod and self.mod_file(f"{mod}.{name}"):
            out.append(("module", f"{mod}.{name}"))
        if not out:
            if name in dir(__builtins__) if not isinstance(__builtins__, dict) else name in __builtins__:
                out.append(("external", f"builtins.{name}"))
            elif info["getattr"]:
                out.extend(self.resolve_lazy_getattr(info, name, depth))
            else:
                out.append(("unknown", f"unresolved name {name} in {mod}"))
        return out

    def resolve_lazy_getattr(self, info, name: str, depth: int) -> list[tuple]:
        """Module-level __getattr__ (lazy / platform-dispatched re-export).

        Candidates: `from X import name` inside it, or `from P import sub [as a]`
        followed by `getattr(a, name)`."""
        fn = info["getattr"]
        getattr_objs = set()
        for n in ast.walk(fn):
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name)
                and n.func.id == "getattr"
                and n.args
                and isinstance(n.args[0], ast.Name)
            ):
                getattr_objs.add(n.args[0].id)
        out = []
        for n in ast.walk(fn):
            if isinstance(n, ast.ImportFrom):
                src = self._abs(info, n.module, n.level)
                for a in n.names:
                    if a.name == name:
                        out.extend(self.resolve_from(src, name, depth + 1))
                    elif (a.asname or a.name) in getattr_objs and self.mod_file(f"{src}.{a.name}"):
                        out.extend(self.resolve_from(f"{src}.{a.name}", name, depth + 1))
        if not out:
            return [("unknown", f"{info['mod']}.{name} via module __getattr__ (not resolved)")]
        return out

    def module_target(self, m: str) -> tuple:
        if m.split(".")[0] != "vllm":
            return ("external", m)
        return ("module", m)

    def resolve_from(self, src: str, name: str, depth: int) -> list[tuple]:
        if src.split(".")[0] != "vllm":
            return [("external", f"{src}.{name}")]
        if self.load(src) is None:
            if self.mod_file(f"{src}.{name}"):
                return [("module", f"{src}.{name}")]
            return [("unknown", f"module {src} not found in wheel (importing {name})")]
        info = self.load(src)
        has = name in info["classes"] or name in info["binds"]
        if not has and self.mod_file(f"{src}.{name}"):
            return [("module", f"{src}.{name}")]
        return self.resolve_name(src, name, depth=depth)

    def resolve_expr(self, mod: str, e: ast.expr, depth=0, exclude=None) -> list[tuple]:
        if isinstance(e, ast.Name):
            return self.resolve_name(mod, e.id, exclude=exclude, depth=depth)
        if isinstance(e, ast.Attribute):
            outs = []
            for t in self.resolve_expr(mod, e.value, depth + 1):
                if t[0] == "module":
                    outs.extend(self.resolve_from(t[1], e.attr, depth + 1))
                elif t[0] == "external":
                    outs.append(("external", f"{t[1]}.{e.attr}"))
                elif t[0] == "class":
                    outs.append(("unknown", f"nested class attribute {ast.unparse(e)}"))
                else:
                    outs.append(t)
            return outs
        if isinstance(e, ast.Subscript):
            return self.resolve_expr(mod, e.value, depth + 1, exclude)
        if isinstance(e, ast.Call):
            # vllm.model_executor.models.adapters.as_*_model(cls) builds
            # `class ModelFor...(cls, ...)`: a subclass of its argument.
            if isinstance(e.func, ast.Name) and e.func.id.startswith("as_") and e.args:
                info = self.load(mod) or {"binds": {}}
                bs = info["binds"].get(e.func.id, [])
                if bs and all(b[0] == "from" and b[1].endswith("models.adapters") for b in bs):
                    return self.resolve_expr(mod, e.args[0], depth + 1)
            return [("unknown", f"computed by call {ast.unparse(e)[:80]}")]
        return [("unknown", f"unsupported expression {ast.unparse(e)[:80]}")]

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
