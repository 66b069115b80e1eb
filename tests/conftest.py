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
import math
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

__all__ = ["SESSION_TRACKING_URI"]


def pytest_unconfigure(config):
    shutil.rmtree(SESSION_DIR, ignore_errors=True)


# The two tiers (README, "Run the tests"). The full tier, README's command, runs every test. The quick tier
# (`-m quick`), the loop to run before every commit, runs the tests these rules mark `quick`; no test marks itself:
# - the levels that run in this process and start nothing: tests/core and tests/pages (no browser, no server, no
#   child process), and from tests/system only QUICK_SYSTEM_TESTS (the CLI once, as a user runs it);
# - one point per claim: a test's parametrizations that differ only in their points (a device count, a mesh axis,
#   a pipeline's stages, micro-batches or layers, a page's language: POINTS) are one claim, and the quick tier runs
#   it once, in English, on a 2-D mesh where one is offered, else at an odd device count (3 before 5), else at the
#   fewest devices over one. Every other parameter (a page, an error, a program) names a claim of its own.
# - less FULL_ONLY: what repeats a kind of claim the quick tier checks elsewhere (each entry says where).
# So a test added to tests/core or tests/pages is quick at one point, and one added anywhere else is full only.
QUICK_LEVELS = ("tests/core/", "tests/pages/")
QUICK_SYSTEM_TESTS = {"tests/system/test_cli_training.py::test_train_prints_one_json_object_and_logs_the_run"}
FULL_ONLY = {  # a module, or a test by its name without parameters
    "tests/pages/test_extremes.py": "every widget of every page at both ends; each page opens on its defaults and "
                                    "moves one widget in tests/pages/test_moved_from_browser.py",
}
MESH_POINTS = {"devices", "runtime", "data", "model", "seq", "expert", "stages", "mesh", "n", "p", "t"}
POINTS = MESH_POINTS | {"micro", "layers", "lang"}


def _point(name, value):
    """The sizes of the mesh axes a point names (() for a language, or for a size that is no mesh axis), or None
    where `name = value` is no point but a claim of its own (a device count of "abc" is an input to refuse)."""
    if name == "lang":
        return () if value in ("en", "zh") else None
    if isinstance(value, str) and value.replace("x", "").isdigit():  # a mesh written "2x4"
        value = tuple(int(size) for size in value.split("x"))
    elif isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    else:
        return None
    return value if name in MESH_POINTS else ()


def _claim_and_rank(item):
    """(the claim a test item checks, the rank of its point within that claim: the lowest rank is quick's)."""
    params = item.callspec.params if hasattr(item, "callspec") else {}
    claim, axes = [item.module.__name__, item.originalname], []
    for name, value in params.items():
        sizes = _point(name, value) if name in POINTS else None
        if sizes is None:
            claim.append((name, repr(value)))
        else:
            axes.extend(sizes)
    devices = math.prod(axes)
    return tuple(claim), (params.get("lang", "en") != "en", -sum(size > 1 for size in axes),
                          not (devices % 2 and devices > 1), devices)


def _mark_quick(items):
    best = {}
    for item in items:
        level_quick = item.nodeid.startswith(QUICK_LEVELS) or item.nodeid in QUICK_SYSTEM_TESTS
        full_only = _module(item.nodeid) in FULL_ONLY or item.nodeid.split("[", 1)[0] in FULL_ONLY
        if level_quick and not full_only and not item.get_closest_marker("alone"):
            claim, rank = _claim_and_rank(item)
            if claim not in best or rank < best[claim][0]:
                best[claim] = (rank, item)
    for _, item in best.values():
        item.add_marker(pytest.mark.quick)


# The order of the queue: test modules by their measured seconds, longest first (tests/durations.json), a module of
# which a run selects part by that part's share of its tests. A module not measured yet is estimated from its number
# of tests, at the seconds a test of its level takes in the measured modules. Within a module the order stays. The
# workers take whole modules from that queue (pytest_xdist_make_scheduler), so the run ends on short modules instead
# of one worker waiting for the other's last long one.
# The file keeps itself: a complete run of the whole suite (README's command, or --record-durations for any run)
# writes the seconds of each module whose tests all ran, less those marked `alone` (they run after the queue), and
# keeps the modules it did not run.
DURATIONS = pathlib.Path(__file__).with_name("durations.json")
_collected: collections.Counter = collections.Counter()  # a module's tests, before -m and -k deselect any
_selected: collections.Counter = collections.Counter()
_finished = 0  # tests run to their end in this run (in the process that writes the file)
_measured_now: dict[str, float] = {}


def pytest_addoption(parser):
    parser.addoption("--record-durations", action="store_true",
                     help="write each test module's seconds in this run into tests/durations.json (a run of the whole "
                          "suite does so without it)")


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _level(module: str) -> str:
    return module.rsplit("/", 1)[0]


def _queued(item) -> bool:
    return not item.get_closest_marker("alone")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(items):
    _mark_quick(items)  # before -m and -k deselect (the other hooks)
    _collected.update(_module(item.nodeid) for item in items if _queued(item))
    yield
    _selected.update(_module(item.nodeid) for item in items if _queued(item))
    measured = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    known = [module for module in _collected if module in measured]
    per_test = {level: sum(measured[m] for m in known if _level(m) == level)
                / max(1, sum(_collected[m] for m in known if _level(m) == level))
                for level in {_level(module) for module in _collected}}

    def seconds(module):
        whole = measured.get(module, per_test[_level(module)] * _collected[module])
        return whole * _selected[module] / max(1, _collected[module])

    items.sort(key=lambda item: -seconds(_module(item.nodeid)))  # stable: a module keeps its order

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
        _measured_now[_module(report.nodeid)] = _measured_now.get(_module(report.nodeid), 0.0) + report.duration


def _records_durations(session) -> bool:
    """Whether this run writes tests/durations.json: asked to, or a run of the whole suite (no paths, no -k, the full
    tier's -m), and in either case only a run that completed (every test it selected ran, failed or passed)."""
    config = session.config
    if hasattr(config, "workerinput"):  # an xdist worker: its controller writes
        return False
    whole_suite = (config.args_source == pytest.Config.ArgsSource.TESTPATHS and not config.option.keyword
                   and config.option.markexpr in ("", "not alone", "alone"))
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
