"""What the target-architecture scans share (scripts/scan-aux-targets.py for vLLM,
scripts/scan-sglang-aux-targets.py for SGLang): a release's package read with `ast` only, its
modules loaded on demand and names resolved through imports (relative and absolute, star
imports, aliases, lazy `__getattr__` re-exports, platform `if/else` branches), and the verdict
type with the rule for names that resolve several ways (every candidate must agree)."""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field


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


class ModuleIndex:
    """A release's package read statically: its modules parsed on demand, names resolved
    through imports, aliases, lazy re-exports and platform branches."""

    def __init__(self, root: str, package: str):
        self.root = root  # directory containing the package
        self.package = package
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
        with open(f, encoding="utf-8-sig") as fh:
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
                if sm.startswith(self.package):
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
        if m.split(".")[0] != self.package:
            return ("external", m)
        return ("module", m)

    def resolve_from(self, src: str, name: str, depth: int) -> list[tuple]:
        if src.split(".")[0] != self.package:
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
