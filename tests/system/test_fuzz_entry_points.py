"""Every public function of `pmap_core` that validates its input, fed nonsense.

The functions are discovered at run time (their source calls a `check_*` or raises
`LabInputError`), so new modules are covered as they land. Fed hypothesis-made numbers,
strings and configs, each either returns or raises `LabInputError`; any other exception
is a bug. The fuzzing runs in a child process with a memory cap (this file, run as a script).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pkgutil
import re
import resource
import sys
import time
import types
import typing
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import pmap_core
from harness.processes import ROOT, run_python
from pmap_core.validation import LabInputError

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
    if origin in (typing.Union, types.UnionType):
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
        if not field.init:  # computed from the others: the constructor does not take it
            continue
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
                continue  # tested with exact properties in test_fuzz_checks.py
            try:
                source, hints = inspect.getsource(fn), typing.get_type_hints(fn)
            except Exception:  # noqa: BLE001
                continue
            # A function that validates calls a check_… function, raises LabInputError or validates a
            # config (a `check_vma=` keyword of jax.shard_map is no check).
            if not re.search(r"\bcheck_\w+\(|LabInputError|validate\(", source):
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
        except Exception as error:  # any other exception is the finding
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
    remaining = list(names)
    while remaining:
        started = time.perf_counter()
        done = run_python([__file__, *remaining], path=(ROOT, ROOT / "tests"), timeout=600)
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


if __name__ == "__main__":  # the child of fuzz_in_child: fuzz the named entry points
    resource.setrlimit(resource.RLIMIT_DATA, (CHILD_MEMORY_BYTES, resource.getrlimit(resource.RLIMIT_DATA)[1]))

    def report(kind: str, text: str) -> None:
        print(f"{kind}\t{current}\t{text}", flush=True)

    for current in sys.argv[1:]:
        report("START", "")
        fuzz_one(current, report)
