"""Test-wide setup for every level (tests/core, tests/pages, tests/system, tests/browser), done
before any test imports JAX or MLflow.

- Every test run tracks into a throwaway MLflow store of its own, whatever the developer's
  `MLFLOW_TRACKING_URI` says; a test that needs another store sets it with monkeypatch.
- Importing pmap_core fixes the device runtime (8 simulated devices, the worker pool).
- Nothing here imports Streamlit: the page helpers are in tests/apptest_support.py, which the
  conftest of tests/pages and of tests/system bring in.
"""

import collections
import json
import os
import pathlib
import shutil
import tempfile

from harness.processes import SUITE_CODEGEN_FLAG, new_tracking_store

USER_CACHE = pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache") / "pmap-lab"
SESSION_DIR = pathlib.Path(tempfile.mkdtemp(prefix="pmap-lab-tests-"))
SESSION_TRACKING_URI = new_tracking_store(SESSION_DIR / "mlflow.db")
os.environ["MLFLOW_TRACKING_URI"] = SESSION_TRACKING_URI

# JAX's persistent compilation cache, shared by this process and every server, CLI and child
# process a test starts: they compile the same programs again and again, and XLA's compile is
# most of a fresh process's first call. It lives in the user's cache folder, outside the clone, so
# a second run (of any clone on this machine) compiles little: JAX keys an entry by the program,
# the jax and jaxlib versions, the devices and the XLA flags. A cached program is the same
# executable, so results are unchanged; the size limit turns on JAX's file lock, so concurrent writers never clash. That
# bounded cache reads every entry on each write (about 50 µs an entry, under the lock), so a
# program that compiles in under 0.1 s costs less to compile again than to cache: with every
# program cached, a cold run wrote 1000 entries and took 13% longer.
for name, value in {
    "JAX_COMPILATION_CACHE_DIR": str(USER_CACHE / "jax-compilation-cache"),
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
from tests import tiers

__all__ = ["SESSION_TRACKING_URI"]


def pytest_unconfigure(config):
    shutil.rmtree(SESSION_DIR, ignore_errors=True)


# The quick tier (`-m quick`) is the tests tests/tiers.py chooses. The order of the queue: test modules by their
# seconds (tests/durations.json; tiers.queue_seconds), longest first; within a module the order stays. The workers
# take whole modules from that queue (pytest_xdist_make_scheduler), so the run ends on short modules instead of one
# worker waiting for the other's last long one.
# The file keeps itself: a complete run of the whole suite (README's command, or --record-durations for any run)
# writes the seconds of each module that ran, less its tests marked `alone` (they run after the queue), and keeps
# the modules it did not run.
DURATIONS = pathlib.Path(__file__).with_name("durations.json")
_collected: collections.Counter = collections.Counter()  # a module's tests, before -m and -k deselect any
_selected: collections.Counter = collections.Counter()
_finished = 0  # tests run to their end in this run (in the process that writes the file)
_measured_now: dict[str, float] = {}


def pytest_addoption(parser):
    parser.addoption("--record-durations", action="store_true",
                     help="write each test module's seconds in this run into tests/durations.json (a run of the whole "
                          "suite does so without it)")
    parser.addoption("--every-point", action="store_true",
                     help="run each claim at every device count it lists, not once per kind of count (tests/tiers.py)")


def _queued(item) -> bool:
    return not item.get_closest_marker("alone")


def _params(item) -> dict:
    return item.callspec.params if hasattr(item, "callspec") else {}


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    # Before -m and -k deselect (the other hooks): leave out the device counts that repeat a kind (unless
    # --every-point), mark the quick tier among the rest, count every module's tests.
    if not config.getoption("--every-point"):
        repeated = tiers.repeats((item.nodeid, _params(item)) for item in items)
        config.hook.pytest_deselected(items=[item for item in items if item.nodeid in repeated])
        items[:] = [item for item in items if item.nodeid not in repeated]
    chosen = tiers.quick((item.nodeid, _params(item), not _queued(item)) for item in items)
    for item in items:
        if item.nodeid in chosen:
            item.add_marker(pytest.mark.quick)
    _collected.update(tiers.module_of(item.nodeid) for item in items if _queued(item))
    yield
    _selected.update(tiers.module_of(item.nodeid) for item in items if _queued(item))
    measured = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    seconds = tiers.queue_seconds(measured, _collected, _selected)
    items.sort(key=lambda item: -seconds.get(tiers.module_of(item.nodeid), 0.0))  # stable: a module keeps its order


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
    global _finished
    _finished += report.when == "teardown"
    if "alone" not in report.keywords:
        module = tiers.module_of(report.nodeid)
        _measured_now[module] = _measured_now.get(module, 0.0) + report.duration


def _records_durations(session) -> bool:
    """Whether this run writes tests/durations.json: asked to, or a run of the whole suite (no paths, no -k, the full
    tier's -m), and in either case only a run that completed (every test it selected ran, failed or passed)."""
    config = session.config
    if hasattr(config, "workerinput"):  # an xdist worker: its controller writes
        return False
    whole_suite = (config.args_source == pytest.Config.ArgsSource.TESTPATHS and not config.option.keyword
                   and config.option.markexpr in ("", "not alone", "alone") and not config.getoption("--every-point"))
    completed = (session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
                 and _finished == session.testscollected)
    return (whole_suite or config.getoption("--record-durations")) and completed


def pytest_sessionfinish(session):
    if _records_durations(session) and _measured_now:
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
