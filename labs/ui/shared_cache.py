"""What one server keeps for every visitor: measurements taken by anyone, and a warm-up at start-up.

A measurement (a collective sweep, a step's barrier cost) depends only on its settings and the
server's machine, so whoever measured it first shares it: a later visitor sees it at once with
the time it was taken, and measures again only on request. The store is bounded per page.

The warm-up runs once per server process, in a background thread started by the first page
served: it pays the imports and the compiles of the labs' default settings before a visitor
opens them, so that no first visit pays them.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import streamlit as st

log = logging.getLogger("pmap_lab")
MAX_ENTRIES = 16  # per page: every visitor's settings beyond the last few are measured again


@dataclass(frozen=True)
class Shared:
    value: Any
    measured_at: float  # time.time() when it was stored


class SharedResults:
    """A thread-safe, bounded map settings -> the latest measurement; the least recently used goes first."""

    def __init__(self, max_entries: int = MAX_ENTRIES):
        self.max_entries = max_entries
        self._entries: collections.OrderedDict[Hashable, Shared] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Shared | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: Hashable, value: Any) -> Shared:
        shared = Shared(value, time.time())
        with self._lock:
            self._entries[key] = shared
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return shared

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


@st.cache_resource(show_spinner=False)
def shared_results(page: str) -> SharedResults:
    """The page's store, one per server process (st.cache_resource: the same object for every session)."""
    return SharedResults()


def age_minutes(shared: Shared) -> int:
    return int((time.time() - shared.measured_at) // 60)


def precomputed(page: str, key: Hashable) -> Any:
    """The value the warm-up (or a visitor) stored for `key` on `page`, or None."""
    found = shared_results(page).get(key)
    return None if found is None else found.value


# --- the warm-up -----------------------------------------------------------------------


def _imports() -> None:
    from labs.ui.first_imports import import_libraries

    import_libraries()  # under the lock the router's first run also takes
    import labs.ui.charts  # noqa: F401 - Altair and pandas


def _tracking_store() -> None:
    """MLflow's client and its connection to the store (opening a sqlite store checks its schema: seconds)."""
    from pmap_core import tracking
    from pmap_core.tracking import experiments

    uri = tracking.tracking_uri()
    if uri.startswith("sqlite:///") and not os.path.exists(uri.removeprefix("sqlite:///")):
        return  # no store yet: creating one is the first run's business, not the warm-up's
    if tracking.server_reachable(uri) and not tracking.store_locked(uri, write=False):
        experiments.load_runs(uri, max_results=1)


def _concept_defaults() -> None:
    """The programs the concept labs compile at their default settings (pure pmap_core calls)."""
    from pmap_core import runtime
    from pmap_core.concepts import sharding

    devices = runtime.describe_runtime().device_count
    sharding.parallel_mean(12, min(4, devices), "error")
    sharding.map_leading_axis(min(4, devices), 4)


def _demo_default() -> None:
    """The demo's run at its default settings, shared with the first visitors."""
    from pmap_core import runtime
    from pmap_core.practice import demo

    devices = runtime.describe_runtime().device_count
    settings = (min(8, devices), 1 if devices > 1 else 2, 300, 0.5)
    shared_results("demo").put(settings, demo.run_demo(*settings))


def _composition_default() -> None:
    from pmap_core import runtime
    from pmap_core.concepts import jit_composition as composition

    devices = runtime.describe_runtime().device_count
    shared_results("jit_composition").put((devices, 128, 10, 3), composition.composition_report(devices, 128, 10, 3))


def _warm(tasks: list) -> None:
    """Pages' background tasks at their defaults, one at a time, each a point to stop at."""
    from labs.ui import background

    for task in tasks:
        if _stop.is_set():
            return
        background.warm(task)


def _migration_defaults() -> None:
    """The migration page's sections at its defaults: a dozen compiles."""
    from labs.ui import migration_work
    from pmap_core import runtime

    _warm(migration_work.default_tasks(runtime.describe_runtime().device_count))


def _mesh_2d_defaults() -> None:
    """The 2-D mesh page's program and its sharding-in-types examples at the page's defaults."""
    from labs.ui import mesh_2d_work
    from pmap_core import runtime

    _warm(mesh_2d_work.default_tasks(runtime.describe_runtime().device_count))


WARM_UP_STEPS: tuple[Callable[[], object], ...] = (_imports, _concept_defaults, _tracking_store, _demo_default,
                                                   _composition_default, _migration_defaults, _mesh_2d_defaults)
_stop = threading.Event()


def _run_warm_up() -> None:
    for step in WARM_UP_STEPS:
        if _stop.is_set():
            return
        try:
            step()
        except Exception:  # a failed warm-up only means a slower first visit
            log.warning("warm-up step %s failed", step.__name__, exc_info=True)


@st.cache_resource(show_spinner=False)
def start_warm_up() -> threading.Thread:
    """Start the warm-up once per server process, in a background thread.

    Not a daemon: a daemon thread inside a JAX compile when the interpreter exits aborts the
    process (SIGABRT). On exit the thread is told to stop, and the exit waits for the step in
    progress only (a few seconds at most)."""
    threading._register_atexit(_stop.set)  # runs before the interpreter joins its threads
    thread = threading.Thread(target=_run_warm_up, name="pmap-lab-warm-up", daemon=False)  # not inherited
    thread.start()
    return thread
