"""Structure checks for src/reactloop, run by .ci/run (and by tests/test_structure.py).

- size budgets: no function over 60 lines, no module over 800 lines;
- one-way imports: no import cycle among reactloop's modules (``TYPE_CHECKING`` imports
  count too), so the loop, the agent, context, planning and sessions never import back;
- no module reads another object's underscore-prefixed attributes (``x._private``), except
  on ``self``/``cls`` and a few standard-library names;
- layers: models sit below tools (a tool is offered to a model, never the other way round), so
  no ``reactloop.models`` module imports from ``reactloop.tools``.

Usage: python scripts/check_structure.py [--quiet]; exit status 1 with one line per problem.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "reactloop"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 800
# attributes of other objects that are private by Python's convention but public by design
ALLOWED_PRIVATE = {"_asdict", "_replace", "_fields", "_make", "_exit", "_getframe",
                   "_current_frames", "_name_", "_value_", "_missing_"}


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package at ``root``, by dotted name."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(module: str, level: int, name: str | None, is_pkg: bool) -> str:
    if level == 0:
        return name or ""
    base = module.split(".")
    if not is_pkg:
        base = base[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, name] if name else base)


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, node.level, node.module, is_pkg)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                           for a in node.names]
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != mod and t.startswith("reactloop"):
                    graph[mod].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan).

    Edges to a parent package count: a submodule that imports names from its package's
    ``__init__`` (``from reactloop.cli import _fail`` in ``reactloop.cli.serve``) while that
    ``__init__`` imports the submodule — even lazily, inside a function — is a cycle. A
    package whose ``__init__`` re-exports its own submodules is not one by itself (the edges
    go one way); ``from package import submodule`` is an edge to the submodule, not to the
    package (see :func:`imports`)."""
    edges = graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in edges:
        if v not in index:
            visit(v)
    return out


def private_reads(mods: dict[str, Path]) -> list[str]:
    problems = []
    for path in mods.values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            attr = node.attr
            if not attr.startswith("_") or attr.startswith("__") or attr in ALLOWED_PRIVATE:
                continue
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) \
                    and owner.func.id == "super":
                continue
            problems.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: reads "
                            f"{ast.unparse(node)} (another object's private attribute)")
    return problems


# layers that must not depend on another: (lower, upper) → no module of ``lower`` imports ``upper``
LAYERS = [("reactloop.models", "reactloop.tools")]
# imports on their way out, named one by one (none left). Remove an entry when it is gone.
LAYER_EXCEPTIONS: set[tuple[str, str]] = set()


def _within(mod: str, package: str) -> bool:
    return mod == package or mod.startswith(package + ".")


def layer_breaches(graph: dict[str, set[str]],
                   exceptions: set[tuple[str, str]] = LAYER_EXCEPTIONS) -> list[str]:
    """Imports from a lower layer into an upper one (``LAYERS``), one line each; an entry of
    ``exceptions`` that no longer happens is reported too, so the list only shrinks."""
    out = [f"{mod} no longer imports {target}: remove the entry from LAYER_EXCEPTIONS"
           for mod, target in sorted(exceptions) if target not in graph.get(mod, set())]
    for lower, upper in LAYERS:
        for mod in sorted(m for m in graph if _within(m, lower)):
            for target in sorted(t for t in graph[mod] if _within(t, upper)):
                if (mod, target) not in exceptions:
                    out.append(f"{mod} imports {target}: {lower} must import nothing from "
                               f"{upper} (move what both need to a neutral module)")
    return out


def sizes(mods: dict[str, Path]) -> list[str]:
    problems = []
    for path in mods.values():
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT.parent)
        n = text.count("\n")
        if n > MAX_MODULE_LINES:
            problems.append(f"{rel}: {n} lines (budget {MAX_MODULE_LINES}); split the module")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    problems.append(f"{rel}:{node.lineno}: function {node.name} has {length} "
                                    f"lines (budget {MAX_FUNCTION_LINES}); split it")
    return problems


def problems() -> list[str]:
    mods = modules()
    out = sizes(mods) + private_reads(mods)
    out += [f"import cycle: {' <-> '.join(c)}" for c in cycles(imports(mods))]
    out += layer_breaches(imports(mods))
    return out


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    if "--quiet" not in sys.argv:
        print(f"structure: {len(found)} problem(s) in {len(modules())} modules")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
