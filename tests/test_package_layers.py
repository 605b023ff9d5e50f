"""The engine's packages import one way: no two packages (or top-level modules) reach each other, and no
module circle inside a package. Imports inside functions count: a lazy import is still a dependency.

Read from the source with `ast` (no TensorFlow import), so a cycle that comes back fails here, naming its edges.
"""

from __future__ import annotations

import ast
import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "estimators"


def _modules() -> dict[str, pathlib.Path]:
    """Dotted module name -> file, for every module under estimators/ (a package by its __init__)."""
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = ("estimators", *path.relative_to(ROOT).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(path: pathlib.Path, modules: dict[str, pathlib.Path]) -> set[str]:
    """The estimators modules `path` imports, anywhere in the file: `from a import b` is a.b when that is a module,
    else a (a package's own names live in its __init__)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                names.add(submodule if submodule in modules else node.module)
    return {name for name in names if name in modules}


def _unit(module: str) -> str:
    """A subpackage (estimators.graph) or a top-level module (estimators.estimator): the nodes of the layering."""
    return ".".join(module.split(".")[:2])


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _described(cycles: list[list[str]], edges: dict[str, set[str]], why: dict) -> str:
    lines = []
    for members in cycles:
        lines.append(" <-> ".join(members))
        lines += [f"    {a} -> {b}: {', '.join(sorted(why[a, b]))}" for a in members for b in members
                  if b in edges.get(a, ())]
    return "\n".join(lines)


def _graph(within: str | None) -> tuple[dict[str, set[str]], dict]:
    """Edges between units (within=None) or between the modules of one package."""
    modules = _modules()
    edges: dict[str, set[str]] = collections.defaultdict(set)
    why: dict = collections.defaultdict(set)
    for module, path in modules.items():
        if module == "estimators":
            continue  # the package's lazy public namespace names everything; nothing imports it back
        for target in _imported(path, modules):
            if within is None:
                source, dest = _unit(module), _unit(target)
            elif _unit(module) == _unit(target) == within and module != within and target != within:
                source, dest = module, target
            else:
                continue
            if source != dest and dest != "estimators":
                edges[source].add(dest)
                why[source, dest].add(str(path.relative_to(ROOT.parent)))
    return edges, why


def test_no_two_packages_or_top_level_modules_import_each_other():
    edges, why = _graph(within=None)
    cycles = _cycles(edges)
    assert not cycles, "package cycles (move the shared piece below both):\n" + _described(cycles, edges, why)


def test_no_module_circle_inside_a_package():
    packages = sorted({_unit(m) for m, p in _modules().items() if p.name == "__init__.py" and m != "estimators"})
    problems = []
    for package in packages:
        edges, why = _graph(within=package)
        problems += [_described([c], edges, why) for c in _cycles(edges)]
    assert not problems, "module circles:\n" + "\n".join(problems)


def test_the_layer_check_sees_a_cycle():
    """The checker itself: a two-node and a three-node circle are found, a chain is not."""
    assert _cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": {"c"}}) == []
