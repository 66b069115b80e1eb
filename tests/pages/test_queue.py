"""The process-wide queue for heavy work: no slot can leak, a queued session can give up,
the queue shows where a session stands, cache hits never queue, and the default slot count
follows the CPUs this process may use."""

import os
import threading
import time

import pytest
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.scriptrunner import StopException
from streamlit.testing.v1 import AppTest

from labs.ui import heavy_jobs
from labs.ui.i18n import texts
from pmap_core import runtime
from pmap_core.validation import LabInputError

T = texts("training")


def slot_count(queue) -> int:
    return queue.slots if hasattr(queue, "slots") else queue._initial_value




class Session:
    """Another session's heavy job in a thread of its own: it holds its slot until `stop`."""

    def __init__(self, expect_slot: bool = True):
        self.held, self.release = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._hold, daemon=True)
        self.thread.start()
        if expect_slot:
            assert self.held.wait(10), "the slot was not free"

    def _hold(self):
        with heavy_jobs.heavy_job(T):
            self.held.set()
            self.release.wait(60)

    def stop(self):
        self.release.set()
        self.thread.join(10)


def acquires_within(seconds: float) -> bool:
    """Whether a new session gets a slot within `seconds`."""
    got = threading.Event()

    def take():
        with heavy_jobs.heavy_job(T):
            got.set()

    threading.Thread(target=take, daemon=True).start()
    return got.wait(seconds)


def in_thread(fn, timeout: float) -> bool:
    """Run `fn` in a thread; True if it finished within `timeout` seconds (a hung one is left behind)."""
    thread = threading.Thread(target=fn, daemon=True)
    thread.start()
    thread.join(timeout)
    return not thread.is_alive()


def queued_session_script():
    from labs.ui import heavy_jobs
    from labs.ui.i18n import texts

    with heavy_jobs.heavy_job(texts("training")):
        import streamlit as st

        st.write("ran")


def stop_while_queued(at: AppTest) -> list[str]:
    """Run `at` until it has queued for 1.5 s, when AppTest asks its script to stop; its errors."""
    errors = []

    def run():
        try:
            at.run(timeout=1.5)
        except RuntimeError as error:
            errors.append(str(error))

    assert in_thread(run, 15), "the queued session did not give up when asked to stop"
    return errors


def test_a_queued_session_that_is_stopped_gives_up_its_place(one_slot):
    """A stop (tab closed, page left) while queued ends the wait, and the slot is not lost."""
    holder = Session()
    try:
        errors = stop_while_queued(AppTest.from_function(queued_session_script))
        assert errors and "timed out" in errors[0]
    finally:
        holder.stop()
    assert acquires_within(5), "a slot leaked: the next session waits forever"


def cached_queued_session_script():
    import streamlit as st

    from labs.ui import heavy_jobs
    from labs.ui.i18n import texts

    @st.cache_data(show_spinner=False)
    def measured(size: int) -> int:  # as the labs do: the slot is taken inside the cached function
        with heavy_jobs.heavy_job(texts("training")):
            return size * 2

    st.write(f"result {measured(21)}")


def test_a_session_stopped_while_queued_inside_a_cached_function_leaves_nothing_behind(one_slot):
    """Stopped while queued inside st.cache_data: no slot kept, nothing cached; the next run computes."""
    holder = Session()
    try:
        assert stop_while_queued(AppTest.from_function(cached_queued_session_script))
    finally:
        holder.stop()
    again = AppTest.from_function(cached_queued_session_script).run(timeout=30)
    assert not again.exception and [m.value for m in again.markdown] == ["result 42"]
    assert acquires_within(5)


def test_a_stop_raised_right_after_the_slot_is_granted_releases_it(one_slot, monkeypatch):
    """Streamlit raises a pending stop at its next call: the one that clears the 'queued' notice."""
    holder = Session()
    granted = threading.Event()
    real_empty = DeltaGenerator.empty

    def empty(self):
        if granted.is_set():
            raise StopException()
        return real_empty(self)

    monkeypatch.setattr(DeltaGenerator, "empty", empty)
    outcome = []

    def queued_session():
        try:
            with heavy_jobs.heavy_job(T):
                outcome.append("ran")
        except StopException:
            outcome.append("stopped")

    thread = threading.Thread(target=queued_session, daemon=True)
    thread.start()
    time.sleep(0.5)  # it is in the queue now
    granted.set()
    holder.stop()
    thread.join(10)
    assert outcome == ["stopped"]
    monkeypatch.setattr(DeltaGenerator, "empty", real_empty)
    assert acquires_within(5), "a slot leaked: the next session waits forever"


def test_the_queue_is_first_come_first_served_and_counts_who_is_ahead():
    queue = heavy_jobs.HeavyQueue(2)
    a, b, c, d = (object() for _ in range(4))
    for ticket in (a, b, c, d):
        queue.join(ticket)
    assert queue.holds(a) and queue.holds(b) and not queue.holds(c)
    assert queue.position(c) == (0, 2) and queue.position(d) == (1, 2)
    queue.leave(d)  # gave up while waiting: nobody behind it moves back
    queue.leave(a)
    assert queue.holds(c) and queue.position(c) == (0, 2)
    queue.leave(a)  # leaving twice is harmless
    queue.leave(b)
    queue.leave(c)
    assert queue.position(object()) == (0, 0) and queue.wait(d, 0) is False


def test_a_queued_session_sees_how_many_are_ahead_of_it(one_slot, monkeypatch):
    shown = []
    monkeypatch.setattr(DeltaGenerator, "info", lambda self, body, **kw: shown.append(body) or self)
    sessions = [Session(), Session(expect_slot=False)]
    time.sleep(0.5)
    sessions.append(Session(expect_slot=False))
    time.sleep(0.5)
    try:
        assert any("waiting ahead of you: 0, running: 1, at most 1" in text for text in shown), shown
        assert any("waiting ahead of you: 1, running: 1, at most 1" in text for text in shown), shown
    finally:
        for session in sessions:
            session.stop()
    assert all(session.held.is_set() for session in sessions)


def test_the_queued_text_has_the_same_numbers_in_both_languages():
    from labs.texts import table as text_table

    TEXTS = text_table("common")

    for text in TEXTS["queued"].values():
        shown = text.format(ahead=3, running=5, slots=7)
        assert all(number in shown for number in "357")


# --- the default slot count (the usable CPUs: tests/core/test_device_runtime.py) ----------

def test_the_default_slot_count_is_the_cpus_this_process_may_use(monkeypatch, tmp_path):
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("300000 100000\n")
    monkeypatch.setattr(runtime, "CGROUP_CPU_MAX", str(cpu_max), raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5})
    monkeypatch.setattr(os, "cpu_count", lambda: 64)  # the host's CPUs, not this container's
    monkeypatch.delenv(heavy_jobs.HEAVY_JOBS_ENV, raising=False)
    heavy_jobs._heavy_slots.clear()
    try:
        assert slot_count(heavy_jobs._heavy_slots()) == 3
        cpu_max.write_text("max 100000\n")
        heavy_jobs._heavy_slots.clear()
        assert slot_count(heavy_jobs._heavy_slots()) == 6
    finally:
        heavy_jobs._heavy_slots.clear()


@pytest.mark.parametrize("raw", ["abc", "0", "-2", "1.5"])
def test_a_slot_count_that_is_not_a_whole_number_from_1_falls_back_to_the_usable_cpus(monkeypatch, raw):
    monkeypatch.setenv(heavy_jobs.HEAVY_JOBS_ENV, raw)
    assert heavy_jobs.slot_count() == runtime.process_cpus()


# --- a job that starts several interpreters takes one slot for each ----------------------------


def test_a_ticket_of_several_slots_waits_for_them_all_and_is_not_overtaken():
    queue = heavy_jobs.HeavyQueue(3)
    one, three, small = object(), object(), object()
    queue.join(one)
    queue.join(three, 3)
    queue.join(small)  # two slots are free, but it came after the ticket that needs three
    assert queue.holds(one) and not queue.holds(three) and not queue.holds(small)
    assert queue.position(three) == (0, 1) and queue.position(small) == (1, 1)
    queue.leave(one)
    assert queue.holds(three) and not queue.holds(small) and queue.position(small) == (0, 3)
    queue.leave(three)
    assert queue.holds(small) and queue.position(object()) == (0, 1)
    with pytest.raises(ValueError):
        queue.join(object(), 4)


def test_a_job_that_needs_more_slots_than_the_server_has_is_refused_before_it_queues(one_slot):
    with pytest.raises(LabInputError) as refused, heavy_jobs.heavy_job(T, slots=2):
        pass
    assert refused.value.code == "too_few_heavy_slots"
    assert "needs 2 heavy-job slots" in str(refused.value) and "this server has 1 (PMAP_LAB_HEAVY_JOBS)" in str(
        refused.value)
    assert acquires_within(5), "the refused job took a slot"
