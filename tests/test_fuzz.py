"""Nonsense in, a clear refusal out: fuzzing the validated entry points and the links.

- `pmap_core.validation`'s checks, with exact properties (hypothesis).
- Every public function of `pmap_core` that validates its input (its source calls a
  `check_*` or raises `LabInputError`), discovered at run time so new modules are
  covered as they land: fed hypothesis-made numbers, strings and configs, it
  either returns or raises `LabInputError`; any other exception is a bug.
- Every lab opened from a link whose settings are all nonsense: the page shows
  its defaults, says the link's values were ignored, and raises nothing.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import os
import pathlib
import pkgutil
import resource
import subprocess
import sys
import time
import typing
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import pmap_core
from labs.registry import LABS
from pmap_core import validation
from pmap_core.validation import LabInputError

CLI_ONLY_MODULES = {"cli", "cli_training", "cli_bench", "distributed", "__main__"}
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

anything = st.one_of(
    st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
    st.text(max_size=20), st.decimals(allow_nan=False, allow_infinity=False), st.lists(st.integers(), max_size=3),
)


# --- the checks themselves ------------------------------------------------------


@FUZZ
@given(value=anything, low=st.integers(-100, 100), span=st.integers(0, 1000))
def test_check_int_returns_the_value_in_range_or_refuses(value, low, span):
    high = low + span
    try:
        result = validation.check_int("n", value, low, high)
    except LabInputError as error:
        assert error.code in ("not_whole_number", "out_of_range")
        assert "n" in str(error)
        return
    assert type(result) is int and low <= result <= high and result == value


@FUZZ
@given(value=anything, low=st.floats(-1e6, 1e6), span=st.floats(0, 1e6))
def test_check_float_returns_a_finite_value_in_range_or_refuses(value, low, span):
    high = low + span
    try:
        result = validation.check_float("x", value, low, high)
    except LabInputError as error:
        assert error.code in ("not_a_number", "out_of_range")
        return
    assert type(result) is float and math.isfinite(result) and low <= result <= high


@FUZZ
@given(devices=anything, available=st.integers(1, 64))
def test_check_devices_never_promises_more_than_exist(devices, available):
    try:
        result = validation.check_devices(devices, available)
    except LabInputError as error:
        assert error.code in ("not_whole_number", "out_of_range", "too_many_devices")
        return
    assert 1 <= result <= available


@FUZZ
@given(count=st.integers(-10, 2**70), limit=st.integers(0, 2**40))
def test_check_elements_refuses_exactly_above_the_limit(count, limit):
    if count > limit:
        with pytest.raises(LabInputError) as refused:
            validation.check_elements("array", count, limit)
        assert refused.value.code == "too_large"
    else:
        assert validation.check_elements("array", count, limit) == count


def test_every_refusal_has_a_text_in_both_languages():
    """Each error code raised anywhere in pmap_core has an `error.<code>` text a page can show."""
    import ast
    import pathlib

    codes = set()
    for path in pathlib.Path(pmap_core.__file__).parent.rglob("*.py"):
        if path.stem in CLI_ONLY_MODULES:  # their refusals are printed in English by the CLI
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "LabInputError"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                codes.add(node.args[0].value)
    texts_dir = pathlib.Path(pmap_core.__file__).parent.parent / "labs" / "texts"
    defined = set()
    for module in pkgutil.iter_modules([str(texts_dir)]):
        defined |= {k[len("error."):] for k in importlib.import_module(f"labs.texts.{module.name}").TEXTS
                    if k.startswith("error.")}
    assert codes, "found no LabInputError in pmap_core"
    assert not codes - defined, f"error codes without an error.<code> text: {sorted(codes - defined)}"


# --- every validated entry point of pmap_core -----------------------------------

# Modules whose functions touch the world outside the process (MLflow stores, other
# processes, jax.distributed) or configure it: they have their own tests.
SKIP_MODULES = {"runtime", "cli", "cli_training", "cli_bench", "__main__", "timing", "tracking",
                "distributed", "experiments"}
BAD_INTS = [-(2**63), -1, 0, 10**9, 2**70]
SMALL_INTS = [1, 2, 3, 4]
BAD_FLOATS = [math.nan, math.inf, -math.inf, -1.0, 1e300]
SMALL_FLOATS = [1e-3, 0.1, 0.5, 1.0]
# Strings a person can type; numbers of the wrong kind come from the lists above
# (a widget or the CLI's argparse always hands over an int or a float, never None).
ODD_STRINGS = ["", "x" * 300, "{name}", "'; import os", "nan", "ALL_GATHER"]


def _module_strings(module) -> list[str]:
    """Strings the module names as its choices (POLICIES, OPS, MODELS, …): the valid options."""
    found: set[str] = set()
    for name, value in vars(module).items():
        if name.startswith("_"):  # __builtins__, __all__, private tables
            continue
        if isinstance(value, (tuple, list, frozenset, set)) and value and all(isinstance(v, str) for v in value):
            found |= set(value)
        if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
            found |= set(value)
    return sorted(found)[:40]


def _strategy(hint, default, choices: list[str]):
    """Mostly invalid values, some small valid ones: cheap to run, quick to refuse."""
    odd = st.sampled_from(ODD_STRINGS)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    keep = [st.just(default)] if default is not inspect.Parameter.empty else []
    if origin is typing.Literal:
        return st.one_of(st.sampled_from(args), odd, *keep)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        parts = [_strategy(a, inspect.Parameter.empty, choices) for a in args if a is not type(None)]
        if any(p is None for p in parts):
            return None
        return st.one_of(st.none(), *parts, *keep)
    if origin in (list, tuple, Sequence, typing.Sequence) or hint in (list, tuple):
        inner = _strategy(args[0] if args else int, inspect.Parameter.empty, choices)
        return st.one_of(st.lists(inner, max_size=3), *keep) if inner is not None else None
    if hint is bool:
        return st.booleans()
    if hint is int:
        return st.one_of(st.sampled_from(BAD_INTS), st.sampled_from(SMALL_INTS), *keep)
    if hint is float:
        return st.one_of(st.sampled_from(BAD_FLOATS), st.sampled_from(SMALL_FLOATS), *keep)
    if hint is str:
        return st.one_of(st.sampled_from(choices or ["x"]), odd, *keep)
    if dataclasses.is_dataclass(hint):
        return _dataclass_strategy(hint, choices)
    return None


def _dataclass_strategy(cls, choices):
    hints = typing.get_type_hints(cls)
    fields = {}
    for field in dataclasses.fields(cls):
        default = field.default if field.default is not dataclasses.MISSING else inspect.Parameter.empty
        strategy = _strategy(hints.get(field.name), default, choices)
        if strategy is None:
            if default is inspect.Parameter.empty:
                return None
            continue
        # One field wrong at a time is more telling than all of them: keep the rest valid often.
        fields[field.name] = st.one_of(st.just(default), strategy) if default is not inspect.Parameter.empty \
            else strategy
    return st.builds(cls, **fields)


def validated_entry_points():
    """(name, function, strategy of kwargs) for every public validating function of pmap_core."""
    found = []
    for info in pkgutil.walk_packages(pmap_core.__path__, "pmap_core."):
        if info.name.rsplit(".", 1)[-1] in SKIP_MODULES or info.name.split(".")[1] in SKIP_MODULES:
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - a module mid-edit elsewhere is not this test's subject
            continue
        choices = _module_strings(module)
        for name, fn in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != module.__name__:
                continue
            if module.__name__ == "pmap_core.validation":
                continue  # tested with exact properties above
            try:
                source, hints = inspect.getsource(fn), typing.get_type_hints(fn)
            except Exception:  # noqa: BLE001
                continue
            if not any(mark in source for mark in ("check_", "LabInputError", "validate(")):
                continue
            kwargs = {}
            for param in inspect.signature(fn).parameters.values():
                if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                    continue
                strategy = _strategy(hints.get(param.name), param.default, choices)
                if strategy is None:
                    if param.default is inspect.Parameter.empty:
                        break  # an argument we cannot make (an array, a callback): not fuzzable
                    continue
                kwargs[param.name] = strategy
            else:
                if kwargs:
                    found.append((f"{module.__name__}.{name}", fn, st.fixed_dictionaries(kwargs)))
    return found


ENTRY_POINTS = {name: (fn, arguments) for name, fn, arguments in validated_entry_points()}
CHILD_MEMORY_BYTES = 3 << 30  # an unchecked huge allocation fails here instead of starving the machine
CHILD_EXAMPLES = 12


def fuzz_one(name: str, report) -> None:
    """Hypothesis over one entry point; `report(kind, text)` gets each call and the verdict."""
    fn, arguments = ENTRY_POINTS[name]

    # No shrinking: a failing input is reported as found (shrinking would rerun real JAX work).
    @settings(max_examples=CHILD_EXAMPLES, deadline=None, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(kwargs=arguments)
    def call(kwargs):
        report("CALL", repr(kwargs)[:600])
        try:
            fn(**kwargs)
        except LabInputError as error:
            assert error.code and str(error)
        except Exception as error:  # noqa: BLE001 - the point of the test
            raise AssertionError(f"{name}(**{kwargs!r}) raised {type(error).__name__}: {error}"[:1200]) from error

    started = time.perf_counter()
    try:
        call()
    except Exception as failure:  # noqa: BLE001 - several distinct failures come as an ExceptionGroup
        found = getattr(failure, "exceptions", [failure])
        report("FAIL", " | ".join(str(e).splitlines()[0][:600] for e in found))
    else:
        report("OK", f"{time.perf_counter() - started:.1f} s")


def fuzz_in_child(names: list[str]) -> dict[str, str | None]:
    """Fuzz in a child process with a memory cap: XLA aborts the whole process when an
    allocation fails, and that must cost this test run one finding, not its life."""
    results: dict[str, str | None] = {}
    root = pathlib.Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "tests")])}
    remaining = list(names)
    while remaining:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, *remaining], capture_output=True, text=True,
                              env=env, cwd=root, timeout=600)
        print(f"fuzz child: {len(remaining)} entry points, {time.perf_counter() - started:.1f} s")
        current, last_call = None, ""
        for line in done.stdout.splitlines():
            kind, _, rest = line.partition("\t")
            name, _, text = rest.partition("\t")
            if kind == "START":
                current = name
            elif kind == "CALL":
                last_call = text
            elif kind in ("OK", "FAIL"):
                results[name] = None if kind == "OK" else text
                print(f"fuzz {name}: {kind} {text[:80]}")
                current = None
        if current is not None:  # the child died inside `current`
            results[current] = (f"the process died (exit {done.returncode}) on {current}(**{last_call}): "
                                f"{done.stderr.strip()[-300:]}")
        elif done.returncode != 0:
            raise RuntimeError(f"fuzz child failed outside any entry point: {done.stderr[-2000:]}")
        remaining = [n for n in remaining if n not in results]
    return results


@pytest.fixture(scope="module")
def fuzz_results():
    return fuzz_in_child(sorted(ENTRY_POINTS))


def test_entry_points_were_found():
    assert len(ENTRY_POINTS) >= 3, sorted(ENTRY_POINTS)


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_entry_point_refuses_nonsense_with_a_lab_input_error(fuzz_results, name):
    assert fuzz_results[name] is None, fuzz_results[name]


# --- links full of nonsense -------------------------------------------------------

NASTY_LINK_VALUES = ["-999999999999", "1e999", "nan", "<script>alert(1)</script>{name}", "x" * 2000]


@pytest.mark.parametrize("lab", LABS, ids=[lab.script for lab in LABS])
def test_nonsense_link_opens_the_defaults_with_a_warning(lab):
    from conftest import open_lab

    default = open_lab(lab.script)
    settings_in_url = {k: v for k, v in default.query_params.items() if k != "lang"}
    if not settings_in_url:
        pytest.skip(f"{lab.script} keeps no settings in its link yet")
    for nasty in NASTY_LINK_VALUES[:2] + NASTY_LINK_VALUES[3:4]:
        at = open_lab(lab.script, **{name: nasty for name in settings_in_url})
        assert not at.exception, f"{lab.script} with every setting = {nasty!r}: {[e.value for e in at.exception]}"
        shown = {k: v for k, v in at.query_params.items() if k != "lang"}
        assert shown == settings_in_url, f"{lab.script}: a nonsense link did not fall back to the defaults"
        assert at.warning, f"{lab.script}: a nonsense link was ignored without saying so"


# --- security: no typed text runs as code; the deployment's defaults stay safe ---------

ROOT = pathlib.Path(__file__).resolve().parent.parent
DYNAMIC_CODE = {"eval", "exec", "compile", "__import__", "execfile"}


def _dynamic_code_calls(path: pathlib.Path) -> list[str]:
    """Calls that run a string as Python: eval(…), exec(…), builtins.compile(…), os.system(…),
    subprocess with shell=True. `x.compile()` (XLA, regex objects) is not one of them; a
    `re.compile` of a literal pattern is not either."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "builtins" and func.attr in DYNAMIC_CODE:
                name = func.attr
            if (func.value.id, func.attr) in {("os", "system"), ("os", "popen")}:
                name = f"os.{func.attr}"
            if func.value.id == "re" and func.attr == "compile" and not isinstance(node.args[0], ast.Constant):
                name = "re.compile of a computed pattern"
        if any(k.arg == "shell" and getattr(k.value, "value", False) is True for k in node.keywords):
            name = "shell=True"
        if name in DYNAMIC_CODE or (name and not name.isidentifier()):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}")
    return found


def test_no_page_runs_code_typed_by_a_user():
    sources = [ROOT / "streamlit_app.py", *(ROOT / "labs").rglob("*.py"), *(ROOT / "pmap_core").rglob("*.py")]
    found = [call for path in sources for call in _dynamic_code_calls(path)]
    assert not found, f"code that runs strings as Python: {found}"


def test_snippets_for_a_fresh_python_are_literals():
    """pmap_core.pitfalls runs demonstration snippets in a child Python (exec of argv): every
    snippet must be written in the source, never built from what a reader typed."""
    import ast

    def literal(node) -> bool:  # "…" or "…" + "…"
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str)
        return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and literal(node.left) and literal(node.right)

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
                   "re.compile(user)\nlowered.compile()\nre.compile('a+')\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        found = _dynamic_code_calls(bad)
    finally:
        ROOT = saved
    assert [f.split(": ", 1)[1] for f in found] == ["eval", "os.system", "shell=True", "re.compile of a computed pattern"]


def test_streamlit_config_keeps_xsrf_protection_and_binds_locally():
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    server = config.get("server", {})
    assert server.get("enableXsrfProtection", True) is True
    assert server.get("enableCORS", True) is True
    assert server.get("address") == "127.0.0.1"
    assert config.get("browser", {}).get("gatherUsageStats") is False


def test_docs_bind_servers_to_localhost():
    """Every command in the docs that starts the app or MLflow listens on 127.0.0.1; exposing
    them is the reader's explicit choice, explained in prose, not a copy-paste default."""
    import re

    commands = []
    for doc in (ROOT / "README.md", ROOT / "docs" / "DEPLOY.md"):
        if not doc.exists():
            continue
        for block in re.findall(r"```[a-z]*\n(.*?)```", doc.read_text(), flags=re.S):
            commands += [(doc.name, line) for line in block.splitlines()
                         if re.search(r"(streamlit run|mlflow (server|ui)|ExecStart)", line)]
    for doc, line in commands:
        assert "0.0.0.0" not in line, f"{doc}: {line}"
        if "mlflow" in line:
            assert "--host 127.0.0.1" in line, f"{doc}: an MLflow command without --host 127.0.0.1: {line}"
    assert "0.0.0.0" not in (ROOT / ".streamlit" / "config.toml").read_text()


SECRET_PATTERNS = [
    r"AKIA[0-9A-Z]{16}", r"-----BEGIN [A-Z ]*PRIVATE KEY-----", r"ghp_[A-Za-z0-9]{36}", r"sk-[A-Za-z0-9]{32,}",
    r"xox[baprs]-[A-Za-z0-9-]{10,}", r"(?i)(password|passwd|secret|token)\s*=\s*['\"][^'\"\s]{8,}['\"]",
]


def test_no_secrets_in_the_repository():
    import re

    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert ".streamlit/secrets.toml" not in tracked, "secrets.toml must never be committed"
    hits = []
    for name in tracked:
        path = ROOT / name
        if not path.is_file() or path.stat().st_size > 1_000_000:
            continue
        text = path.read_text(errors="ignore")
        hits += [f"{name}: {m.group(0)[:12]}…" for pattern in SECRET_PATTERNS for m in re.finditer(pattern, text)]
    assert not hits, hits


if __name__ == "__main__":  # the child of fuzz_in_child: fuzz the named entry points
    resource.setrlimit(resource.RLIMIT_DATA, (CHILD_MEMORY_BYTES, resource.getrlimit(resource.RLIMIT_DATA)[1]))

    def report(kind: str, text: str) -> None:
        print(f"{kind}\t{current}\t{text}", flush=True)

    for current in sys.argv[1:]:
        report("START", "")
        fuzz_one(current, report)
