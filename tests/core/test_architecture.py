"""The layering rules of docs/ARCHITECTURE.md, read off the source with `ast`.

Every import counts, wherever it is written: at the top, inside a function, under
`if TYPE_CHECKING:`. An import names the deepest module of pmap_core or labs it reaches
(`from pmap_core.train import loop` names `pmap_core.train.loop`; `from pmap_core.tracking import
FINISHED` names the package `pmap_core.tracking`).
"""

from __future__ import annotations

import ast
import pathlib

from harness.walks import source_modules

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("pmap_core", "labs")
MAX_TOP_LEVEL_MODULES = 10
UI_PACKAGES = ("labs", "streamlit")


def _modules() -> dict[str, pathlib.Path]:
    return source_modules(ROOT, PACKAGES)


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in MODULES.items()}


def _known(name: str) -> str | None:
    """The deepest module of the tree that `name` is or lies in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".")
    if MODULES.get(module, pathlib.Path()).name != "__init__.py":
        package.pop()
    base = package[:len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_names(module: str, tree: ast.Module) -> set[str]:
    """Every module name `module` imports, as written (relative imports resolved), at any depth."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            for alias in node.names:
                full = f"{source}.{alias.name}"
                names.add(full if full in MODULES else source)  # a module, or a name defined in `source`
    return names


def import_graph(trees: dict[str, ast.Module]) -> dict[str, set[str]]:
    graph = {}
    for module, tree in trees.items():
        targets = {_known(name) for name in imported_names(module, tree)}
        graph[module] = {target for target in targets if target and target != module}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*path[path.index(target):], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_graph_sees_imports_inside_functions_and_relative_ones():
    assert "pmap_core.train.loop" in import_graph(TREES)["pmap_core.tracking.callback"]
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pmap_core import hlo\n"
              "def f():\n    from . import loop\n    from ..runtime import x\n")
    probe = {"pmap_core.train.probe": ast.parse(source)}
    assert import_graph(probe)["pmap_core.train.probe"] == {"pmap_core.train.loop", "pmap_core.runtime",
                                                            "pmap_core.hlo"}


def test_find_cycle_names_the_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert every_cycle({"a": {"b"}, "b": {"a", "c"}, "c": {"b"}}) == [["a", "b", "a"], ["b", "c", "b"]]


def every_cycle(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles until none is left, each found after cutting one import of the one before."""
    graph = {module: set(targets) for module, targets in graph.items()}
    found = []
    while cycle := find_cycle(graph):
        found.append(cycle)
        graph[cycle[0]].discard(cycle[1])
    return found


def test_no_import_cycle():
    cycles = every_cycle(import_graph(TREES))
    assert not cycles, "import cycles:\n" + "\n".join(" → ".join(cycle) for cycle in cycles)


def test_the_core_imports_no_ui():
    offenders = {
        module: sorted(name for name in imported_names(module, tree) if name.split(".")[0] in UI_PACKAGES)
        for module, tree in TREES.items() if module.startswith("pmap_core")
    }
    assert {module: names for module, names in offenders.items() if names} == {}


def test_few_modules_at_the_top_of_the_core():
    top = sorted(path.name for path in (ROOT / "pmap_core").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_no_module_level_getattr():
    offenders = [module for module, tree in TREES.items()
                 if any(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "__getattr__"
                        for node in tree.body)]
    assert offenders == []


# The packages of pmap_core from the bottom up (docs/ARCHITECTURE.md): a package imports only those
# on its own rank or below it. The top-level modules (runtime, validation, timing, hlo) are rank 0;
# `python -m pmap_core` (__main__) is the entry point above everything.
RANKS = {"costs": 1, "train": 2, "tracking": 3, "commbench": 4, "concepts": 4, "profiling": 4, "practice": 5,
         "export": 5, "cli": 6, "__main__": 7}


def _rank(module: str) -> int:
    parts = module.split(".")
    return RANKS.get(parts[1], 0) if len(parts) > 1 else 0


def test_every_package_imports_only_packages_below_it():
    packages = {path.name for path in (ROOT / "pmap_core").iterdir() if (path / "__init__.py").exists()}
    assert packages == set(RANKS) - {"__main__"}, "a new package needs a rank"
    upward = sorted((module, target) for module, targets in import_graph(TREES).items()
                    if module.startswith("pmap_core.")
                    for target in targets if target.startswith("pmap_core.") and _rank(target) > _rank(module))
    assert upward == [], "imports that point up:\n" + "\n".join(f"{a} → {b}" for a, b in upward)
