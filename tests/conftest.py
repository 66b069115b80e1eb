"""Test-wide setup for every level (tests/core, tests/pages, tests/system, tests/browser), done
before any test imports JAX or MLflow.

- Every test run tracks into a throwaway MLflow store of its own, whatever the developer's
  `MLFLOW_TRACKING_URI` says; a test that needs another store sets it with monkeypatch.
- Importing pmap_core fixes the device runtime (8 simulated devices, the worker pool).
- Nothing here imports Streamlit: the page helpers are in tests/apptest_support.py, which the
  conftest of tests/pages and of tests/system bring in.
"""

import json
import os
import pathlib
import shutil
import tempfile

from harness.processes import CACHE, SUITE_CODEGEN_FLAG, new_tracking_store

SESSION_DIR = pathlib.Path(tempfile.mkdtemp(prefix="pmap-lab-tests-"))
SESSION_TRACKING_URI = new_tracking_store(SESSION_DIR / "mlflow.db")
os.environ["MLFLOW_TRACKING_URI"] = SESSION_TRACKING_URI

# JAX's persistent compilation cache, shared by this process and every server, CLI and child
# process a test starts: they compile the same programs again and again, and XLA's compile is
# most of a fresh process's first call. A cached program is the same executable, so results are
# unchanged; the size limit turns on JAX's file lock, so concurrent writers never clash. That
# bounded cache reads every entry on each write (about 50 µs an entry, under the lock), so a
# program that compiles in under 0.1 s costs less to compile again than to cache: with every
# program cached, a cold run wrote 1000 entries and took 13% longer.
for name, value in {
    "JAX_COMPILATION_CACHE_DIR": str(CACHE / "jax-compilation-cache"),
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0.1",
    "JAX_COMPILATION_CACHE_MAX_SIZE": str(2 << 30),
}.items():
    os.environ.setdefault(name, value)

# The suite compiles far more programs than it runs steps, and on XLA:CPU most of a compile is LLVM's
# optimisation of the generated code. At LLVM's level 0 the HLO, its collectives, buffers and FLOPs are
# unchanged and a module's tests took half the time; the code runs 1.7–3× slower and its float results
# may differ in the last bits (the suite checks that bound: tests/system/test_codegen_level.py).
# A level the developer set stays.
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {SUITE_CODEGEN_FLAG}".strip()

import pytest

import pmap_core  # noqa: F401 - configures 8 simulated devices and the worker pool

__all__ = ["SESSION_TRACKING_URI"]


def pytest_unconfigure(config):
    shutil.rmtree(SESSION_DIR, ignore_errors=True)


# The order of the queue: test modules by their measured seconds, longest first (tests/durations.json,
# written by a run with --record-durations). A module not measured yet goes last; within a module the order
# stays. The workers take whole modules from that queue (pytest_xdist_make_scheduler), so the run ends on
# short modules instead of one worker waiting for the other's last long one.
DURATIONS = pathlib.Path(__file__).with_name("durations.json")
_measured_now: dict[str, float] = {}


def pytest_addoption(parser):
    parser.addoption("--record-durations", action="store_true",
                     help="write each test module's seconds in this run into tests/durations.json")


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items):
    measured = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    items.sort(key=lambda item: -measured.get(_module(item.nodeid), 0.0))  # stable: a module keeps its order


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`-n 2` deals whole test modules, in the queue's order, each to the first worker free. xdist's own
    default (`--dist load`) sent each worker a block of a quarter of the queue at the start: the first
    worker got the 250 longest tests (1,892 of the 2,804 measured seconds) while the second ran out of
    work, and a module split between workers ran its module-scoped fixtures (servers, child processes)
    once in each."""
    if config.getvalue("dist") != "load":  # another scheduler asked for by name
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False  # keep the queue's order, not xdist's (most tests first)
    return LoadFileScheduling(config, log)


def pytest_runtest_logreport(report):
    _measured_now[_module(report.nodeid)] = _measured_now.get(_module(report.nodeid), 0.0) + report.duration


def pytest_sessionfinish(session):
    if session.config.getoption("--record-durations") and not hasattr(session.config, "workerinput"):
        kept = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
        kept.update({module: round(seconds, 1) for module, seconds in _measured_now.items()})
        DURATIONS.write_text(json.dumps(dict(sorted(kept.items())), indent=1) + "\n")


@pytest.fixture
def tracked_runs(tmp_path, monkeypatch):
    """MLFLOW_TRACKING_URI names a store holding a few real runs (see tests/tracked_runs.py); returns its URI."""
    from harness.tracked_runs import store_with_runs

    uri = store_with_runs(tmp_path / "mlflow.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    return uri
