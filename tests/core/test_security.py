"""Security, read off the sources, the config and the docs: no text a reader types runs as code, and
the deployment's defaults stay safe (XSRF protection on, servers bound to 127.0.0.1)."""

from __future__ import annotations

import ast
import pathlib
import re
import tomllib

import pytest

from harness.processes import ROOT

DYNAMIC_CODE = {"eval", "exec", "compile", "__import__", "execfile"}


def _written_in_source(node: ast.AST, constants: dict[str, ast.AST], depth: int = 0) -> bool:
    """A string the source spells out: a literal, `+` or an f-string of such, or a module-level
    name bound to one."""
    if depth > 10:
        return False
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _written_in_source(node.left, constants, depth + 1) and _written_in_source(
            node.right, constants, depth + 1)
    if isinstance(node, ast.JoinedStr):
        return all(_written_in_source(part.value if isinstance(part, ast.FormattedValue) else part,
                                      constants, depth + 1) for part in node.values)
    if isinstance(node, ast.Name) and node.id in constants:
        return _written_in_source(constants[node.id], constants, depth + 1)
    return False


def _dynamic_code_calls(path: pathlib.Path, root: pathlib.Path = ROOT) -> list[str]:
    """Calls that run a string as Python: eval(…), exec(…), builtins.compile(…), os.system(…),
    subprocess with shell=True. `x.compile()` (XLA, regex objects) is not one of them; a
    `re.compile` of a pattern written in the source is not either. Each is named by its place
    under `root`."""
    found = []
    tree = ast.parse(path.read_text(), str(path))
    assigned = [(target.id, statement.value) for statement in tree.body if isinstance(statement, ast.Assign)
                for target in statement.targets if isinstance(target, ast.Name)]
    names = [name for name, _ in assigned]
    constants = {name: value for name, value in assigned if names.count(name) == 1}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "builtins" and func.attr in DYNAMIC_CODE:
                name = func.attr
            if (func.value.id, func.attr) in {("os", "system"), ("os", "popen")}:
                name = f"os.{func.attr}"
            if func.value.id == "re" and func.attr == "compile" and not _written_in_source(node.args[0], constants):
                name = "re.compile of a computed pattern"
        if any(k.arg == "shell" and getattr(k.value, "value", False) is True for k in node.keywords):
            name = "shell=True"
        if name in DYNAMIC_CODE or (name and not name.isidentifier()):
            found.append(f"{path.relative_to(root)}:{node.lineno}: {name}")
    return found


def test_no_page_runs_code_typed_by_a_user():
    sources = [ROOT / "streamlit_app.py", *(ROOT / "labs").rglob("*.py"), *(ROOT / "pmap_core").rglob("*.py")]
    found = [call for path in sources for call in _dynamic_code_calls(path)]
    assert not found, f"code that runs strings as Python: {found}"


def test_snippets_for_a_fresh_python_are_literals():
    """pmap_core.practice.pitfalls runs demonstration snippets in a child Python (exec of argv): every
    snippet must be written in the source, never built from what a reader typed."""

    def literal(node) -> bool:  # "…" or "…" + "…"
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str)
        return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)
                and literal(node.left) and literal(node.right))

    calls, offenders = 0, []
    for path in [*(ROOT / "labs").rglob("*.py"), *(ROOT / "pmap_core").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            func = getattr(node, "func", None)
            if isinstance(node, ast.Call) and getattr(func, "id", getattr(func, "attr", None)) == "run_in_fresh_python":
                calls += 1
                if not node.args or not literal(node.args[0]):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    if not calls:
        pytest.skip("nothing runs snippets in a fresh Python")
    assert not offenders, f"a fresh-Python snippet built at run time: {offenders}"


def test_the_checker_sees_dynamic_code(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os, re, subprocess\neval(text)\nos.system(cmd)\nsubprocess.run(c, shell=True)\n"
                   "re.compile(user)\nlowered.compile()\nre.compile('a+')\n"
                   "FIELDS = r'(?:a' + r'|b)'\nre.compile(rf'(?i){FIELDS}=x')\nre.compile(f'{user}+')\n")
    found = _dynamic_code_calls(bad, root=tmp_path)
    assert [f.split(": ", 1)[1] for f in found] == [
        "eval", "os.system", "shell=True", "re.compile of a computed pattern", "re.compile of a computed pattern"]


def test_streamlit_config_keeps_xsrf_protection_and_binds_locally():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    server = config.get("server", {})
    assert server.get("enableXsrfProtection", True) is True
    assert server.get("enableCORS", True) is True
    assert server.get("address") == "127.0.0.1"
    assert config.get("browser", {}).get("gatherUsageStats") is False


def test_docs_bind_servers_to_localhost():
    """Every command in the docs that starts the app or MLflow listens on 127.0.0.1; exposing
    them is the reader's explicit choice, explained in prose, not a copy-paste default."""
    commands = []
    for doc in (ROOT / "README.md", ROOT / "docs" / "DEPLOY.md"):
        if not doc.exists():
            continue
        for block in re.findall(r"```[a-z]*\n(.*?)```", doc.read_text(), flags=re.S):
            block = re.sub(r"\\\n\s*", " ", block)  # a command continued over lines is checked as one
            commands += [(doc.name, line) for line in block.splitlines()
                         if re.search(r"(streamlit run|mlflow (server|ui)|ExecStart)", line)]
    for doc, line in commands:
        assert "0.0.0.0" not in line, f"{doc}: {line}"
        if "mlflow" in line:
            assert "--host 127.0.0.1" in line, f"{doc}: an MLflow command without --host 127.0.0.1: {line}"
    assert "0.0.0.0" not in (ROOT / ".streamlit" / "config.toml").read_text()
