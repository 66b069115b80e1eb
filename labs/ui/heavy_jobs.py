"""The process-wide queue for heavy work (training, sweeps, benchmarks): at most
`PMAP_LAB_HEAVY_JOBS` slots are in use at once in one server; the others wait in a visible line.
A job takes one slot, or one for each interpreter it starts (a multi-process run of P processes
takes P: each is a Python with JAX of its own, about 400 MB here); a job that needs more slots
than the server has is refused before it starts (`check_slots`).

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
from pmap_core.validation import LabInputError

log = logging.getLogger("pmap_lab")

# How many heavy jobs may run at once in this server process. Defaults to one per CPU this
# process may use (affinity and cgroup quota: pmap_core.runtime.usable_cpus).
HEAVY_JOBS_ENV = "PMAP_LAB_HEAVY_JOBS"
HEAVY_POLL_SECONDS = 0.2
_HEAVY_YIELD_KEY = "heavy_jobs.waiting"


class HeavyQueue:
    """At most `slots` slots are held at once, each ticket holding the number it asked for; the others
    wait in line, first come first served (a ticket that needs several slots is not overtaken)."""

    def __init__(self, slots: int):
        self.slots = max(1, slots)
        self._holding: dict[object, int] = {}
        self._line: list[object] = []
        self._needs: dict[object, int] = {}
        self._changed = threading.Condition()

    def join(self, ticket: object, slots: int = 1) -> None:
        """Queue `ticket` for `slots` slots (1 up to all of them)."""
        if not 1 <= slots <= self.slots:
            raise ValueError(f"a ticket needs 1 to {self.slots} slots, not {slots}")
        with self._changed:
            self._line.append(ticket)
            self._needs[ticket] = slots
            self._admit()

    def leave(self, ticket: object) -> None:
        """Give back the slots `ticket` holds or its place in line (either, neither, twice: all safe)."""
        with self._changed:
            self._holding.pop(ticket, None)
            if ticket in self._line:
                self._line.remove(ticket)
            self._needs.pop(ticket, None)
            self._admit()

    def wait(self, ticket: object, timeout: float) -> bool:
        """True once `ticket` holds a slot; False while it is still in line after `timeout` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: ticket in self._holding, timeout)

    def holds(self, ticket: object) -> bool:
        with self._changed:
            return ticket in self._holding

    def position(self, ticket: object) -> tuple[int, int]:
        """(tickets waiting ahead of `ticket`, slots in use)."""
        with self._changed:
            ahead = self._line.index(ticket) if ticket in self._line else 0
            return ahead, sum(self._holding.values())

    def _admit(self) -> None:
        while self._line and sum(self._holding.values()) + self._needs[self._line[0]] <= self.slots:
            ticket = self._line.pop(0)
            self._holding[ticket] = self._needs[ticket]
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


def server_queue() -> HeavyQueue:
    """This server's queue, for work that holds a slot off any page's run (`labs.ui.background`)."""
    return _heavy_slots()


def server_slots() -> int:
    """How many heavy-job slots this server has."""
    return _heavy_slots().slots


def check_slots(slots: int) -> int:
    """`slots` when this server has that many heavy-job slots; else a LabInputError (code
    `too_few_heavy_slots`) that says how many it has and which setting raises them."""
    total = server_slots()
    if slots > total:
        raise LabInputError("too_few_heavy_slots", "this run needs {need} heavy-job slots (one for each Python "
                            "process it starts) and this server has {slots} ({env})", need=slots, slots=total,
                            env=HEAVY_JOBS_ENV)
    return slots


@contextlib.contextmanager
def heavy_job(T: Texts, slots: int = 1) -> Iterator[None]:
    """Hold `slots` of the process-wide slots for heavy work (one for each interpreter the job starts,
    one for work in this process); while waiting, show the place in the queue (the text `queued`,
    given `ahead`, `running` (slots in use), `slots` and `need`; a page may word its own)."""
    queue, ticket = _heavy_slots(), object()
    check_slots(slots)
    try:
        queue.join(ticket, slots)
        if not queue.holds(ticket):
            _wait_in_line(T, queue, ticket, slots)
        yield
    finally:
        queue.leave(ticket)


def _wait_in_line(T: Texts, queue: HeavyQueue, ticket: object, need: int) -> None:
    notice, shown = st.empty(), None
    while not queue.holds(ticket):
        now = queue.position(ticket)
        if now != shown:
            ahead, running = now
            notice.info(T("queued", ahead=ahead, running=running, slots=queue.slots, need=need), icon="⏳")
            shown = now
        queue.wait(ticket, HEAVY_POLL_SECONDS)
        # Reading session state is a Streamlit yield point: a pending stop or rerun is raised here.
        st.session_state.get(_HEAVY_YIELD_KEY)
    notice.empty()
