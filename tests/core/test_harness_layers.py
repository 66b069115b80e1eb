"""The tests and the benchmarks share one harness (`harness/`: child processes, servers, browsers, Streamlit
sessions over the websocket) and import nothing of each other; the harness imports neither."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def imported_modules(folder: str, root: pathlib.Path = ROOT) -> dict[str, set[str]]:
    """For each .py file under `folder`: the modules it imports (`from a import b` counts as a and a.b)."""
    found = {}
    for path in sorted((root / folder).rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
        found[path.relative_to(root).as_posix()] = names
    return found


def importing(folder: str, package: str, root: pathlib.Path = ROOT) -> dict[str, list[str]]:
    return {path: sorted(n for n in names if n == package or n.startswith(package + "."))
            for path, names in imported_modules(folder, root).items()
            if any(n == package or n.startswith(package + ".") for n in names)}


def test_the_benchmarks_import_no_test_module():
    assert importing("benchmarks", "tests") == {}


def test_the_tests_import_no_benchmark():
    assert importing("tests", "benchmarks") == {}


def test_the_harness_imports_neither():
    assert importing("harness", "tests") == {} and importing("harness", "benchmarks") == {}


def test_the_check_sees_an_import_of_the_other_folder(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def f():\n    from benchmarks.bench_restart import start_app\n")
    (tmp_path / "tests" / "test_y.py").write_text("import numpy\n")
    assert importing("tests", "benchmarks", tmp_path) == {
        "tests/test_x.py": ["benchmarks.bench_restart", "benchmarks.bench_restart.start_app"]}
