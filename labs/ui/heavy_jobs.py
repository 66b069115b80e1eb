"""The process-wide queue for heavy work (training, sweeps, benchmarks): at most
`PMAP_LAB_HEAVY_JOBS` jobs run at once in one server; the others wait in a visible line.

Any Streamlit call can raise the session's Stop or Rerun (a BaseException): a ticket
is in the queue only inside try/finally, and leaving gives back whatever it holds,
a slot or a place in line. A queued session waits in short timed waits and reads
its session state between them, where Streamlit raises a pending stop or rerun (the
tab was closed, a widget changed, another page was opened): it gives up its place.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator

import streamlit as st

from labs.ui.i18n import Texts
from pmap_core.runtime import process_cpus

log = logging.getLogger("pmap_lab")

# How many heavy jobs may run at once in this server process. Defaults to one per CPU this
# process may use (affinity and cgroup quota: pmap_core.runtime.usable_cpus).
HEAVY_JOBS_ENV = "PMAP_LAB_HEAVY_JOBS"
HEAVY_POLL_SECONDS = 0.2
_HEAVY_YIELD_KEY = "heavy_jobs.waiting"


class HeavyQueue:
    """At most `slots` tickets hold a slot at once; the others wait in line, first come first served."""

    def __init__(self, slots: int):
        self.slots = max(1, slots)
        self._holding: set[object] = set()
        self._line: list[object] = []
        self._changed = threading.Condition()

    def join(self, ticket: object) -> None:
        with self._changed:
            self._line.append(ticket)
            self._admit()

    def leave(self, ticket: object) -> None:
        """Give back the slot `ticket` holds or its place in line (either, neither, twice: all safe)."""
        with self._changed:
            self._holding.discard(ticket)
            if ticket in self._line:
                self._line.remove(ticket)
            self._admit()

    def wait(self, ticket: object, timeout: float) -> bool:
        """True once `ticket` holds a slot; False while it is still in line after `timeout` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: ticket in self._holding, timeout)

    def holds(self, ticket: object) -> bool:
        with self._changed:
            return ticket in self._holding

    def position(self, ticket: object) -> tuple[int, int]:
        """(tickets waiting ahead of `ticket`, tickets holding a slot)."""
        with self._changed:
            ahead = self._line.index(ticket) if ticket in self._line else 0
            return ahead, len(self._holding)

    def _admit(self) -> None:
        while self._line and len(self._holding) < self.slots:
            self._holding.add(self._line.pop(0))
        self._changed.notify_all()


def slot_count() -> int:
    """`PMAP_LAB_HEAVY_JOBS` when it is a whole number from 1 up; otherwise (logged) one per usable CPU."""
    raw = os.environ.get(HEAVY_JOBS_ENV, "").strip()
    if raw.isdigit() and int(raw) >= 1:
        return int(raw)
    if raw:
        log.warning("%s=%r is not a whole number from 1 up; using %d", HEAVY_JOBS_ENV, raw, process_cpus())
    return process_cpus()


@st.cache_resource
def _heavy_slots() -> HeavyQueue:
    return HeavyQueue(slot_count())


@contextlib.contextmanager
def heavy_job(T: Texts) -> Iterator[None]:
    """Hold one of the process-wide slots for heavy work; while waiting, show the place in the queue."""
    queue, ticket = _heavy_slots(), object()
    try:
        queue.join(ticket)
        if not queue.holds(ticket):
            _wait_in_line(T, queue, ticket)
        yield
    finally:
        queue.leave(ticket)


def _wait_in_line(T: Texts, queue: HeavyQueue, ticket: object) -> None:
    notice, shown = st.empty(), None
    while not queue.holds(ticket):
        now = queue.position(ticket)
        if now != shown:
            ahead, running = now
            notice.info(T("queued", ahead=ahead, running=running, slots=queue.slots), icon="⏳")
            shown = now
        queue.wait(ticket, HEAVY_POLL_SECONDS)
        # Reading session state is a Streamlit yield point: a pending stop or rerun is raised here.
        st.session_state.get(_HEAVY_YIELD_KEY)
    notice.empty()
