"""tests/core stays the quick loop: no module under it imports Streamlit, Playwright or a way to start
another process, nor the helpers and test modules of the levels that do. Read off the source with `ast`:
every import counts, wherever it is written, and so does `importlib.import_module("name")`."""

from __future__ import annotations

import ast
import pathlib

import pytest

CORE = pathlib.Path(__file__).resolve().parent
# Modules whose import, or the import of anything inside them, puts a test in another level.
FORBIDDEN_MODULES = (
    "streamlit", "playwright", "subprocess", "multiprocessing",     # pages, browser, child processes
    "tests.apptest_support", "harness.browser", "harness.protocol", "harness.app_server", "conftest",
    "tests.pages", "tests.system", "tests.browser", "tests.children",  # tests.children: child processes' programs
)
# The pages themselves; their text tables (labs.texts) are plain data and may be read.
FORBIDDEN_UNLESS = {"labs": ("labs.texts",)}
# The helpers of harness.processes that start a child process.
PROCESS_HELPERS = {"run_python", "start_python", "hold_lock", "MlflowServer"}


def _within(name: str, module: str) -> bool:
    return name == module or name.startswith(module + ".")


def _imported(tree: ast.AST) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names taken from it) for every import in the tree."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module, tuple(alias.name for alias in node.names)))
            found += [(node.lineno, f"{node.module}.{alias.name}", ()) for alias in node.names]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value, ()))
    return found


def offences(source: str) -> list[str]:
    """What in `source` puts it outside tests/core, as 'line: what'."""
    found = []
    for line, module, names in _imported(ast.parse(source)):
        if any(_within(module, banned) for banned in FORBIDDEN_MODULES):
            found.append(f"{line}: imports {module}")
        for package, allowed in FORBIDDEN_UNLESS.items():  # `from labs import x` counts as labs.x
            if _within(module, package) and module != package and not any(_within(module, a) for a in allowed):
                found.append(f"{line}: imports {module}")
        if module == "harness.processes" and PROCESS_HELPERS & set(names):
            found.append(f"{line}: imports {', '.join(sorted(PROCESS_HELPERS & set(names)))} from harness.processes")
    return sorted(set(found))


def test_no_module_of_tests_core_imports_streamlit_a_browser_or_a_child_process():
    modules = sorted(CORE.rglob("*.py"))
    assert len(modules) >= 10
    found = {path.relative_to(CORE).as_posix(): offences(path.read_text()) for path in modules}
    assert {path: lines for path, lines in found.items() if lines} == {}


@pytest.mark.parametrize("source", [
    "import streamlit as st",
    "from streamlit.testing.v1 import AppTest",
    "def f():\n    import subprocess",
    "import multiprocessing.pool",
    "from playwright.sync_api import sync_playwright",
    "from harness.processes import run_python",
    "from harness.processes import ROOT, MlflowServer",
    "from tests.apptest_support import open_lab",
    "from conftest import open_lab",
    "from harness import browser as bs",
    "from tests.pages.test_migration import numpy_step",
    "from tests.children.quiz_answers import answers",
    "from labs import heavy_jobs",
    "from labs.ui import heavy_jobs",
    "import labs.registry",
    "importlib.import_module('streamlit')",
])
def test_the_check_sees_each_way_into_another_level(source):
    assert offences(source), source


@pytest.mark.parametrize("source", [
    "import numpy as np\nfrom pmap_core.train import loop",
    "from harness.processes import ROOT, new_tracking_store",
    "from labs.texts import GLOSSARY",
    "from labs import texts",
    "importlib.import_module('labs.texts.mistakes')",
    "from tests.core.test_quiz import REFERENCES",
])
def test_the_check_lets_pure_modules_be(source):
    assert offences(source) == [], source
