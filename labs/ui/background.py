"""Work a page shows once it is done, run off the page's own run: the page answers at once with what it has and
says what is still being worked out; the work's result is kept for every visitor who asks for the same again.

One job per key on this server (`jobs`), run in a thread of its own, one job at a time (pure Python holds the
GIL: two at once would only take turns), the last MAX_KEPT results kept. A page asks with `result`: the value if
the job is done (waiting WAIT_S at most), else None, and then draws `wait_for`, which looks again every POLL_S
seconds and runs the page again once the job is done. A job that failed raises its error where the page asks
(inside the page's `guard`), once: the next ask starts it again.

A job may compile and run JAX (`in_heavy_slot` gives it one of the server's heavy-job slots, waited for unseen).
So the threads are not daemons (a daemon thread inside a JAX compile when the interpreter exits aborts the process):
on exit the jobs still waiting are dropped and the exit waits for the job in progress only.
"""

from __future__ import annotations

import collections
import concurrent.futures
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from labs.ui import heavy_jobs

MAX_KEPT = 64  # results kept on this server, the least recently asked for going first; running jobs always stay
WAIT_S = 0.25  # how long a page's run waits for a job before it answers without it
POLL_S = 0.5  # how often a page that waits looks again
ANSWER_S = 2.0  # how long JAX work asked for by a page's run waits for that run to answer before it starts
_stop = threading.Event()  # set when the interpreter exits: a job that has not started yet does not start

# A page's job as its page and the server's warm-up both name it: (key, work, args), run as work(*args).
Task = tuple[Hashable, Callable[..., Any], tuple]


@dataclass(frozen=True)
class Job:
    future: concurrent.futures.Future
    started: float  # time.monotonic() when it was asked for

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started


class Jobs:
    """Thread-safe: key -> its Job, bounded (finished jobs beyond `max_kept`, least recently asked for, go)."""

    def __init__(self, max_kept: int = MAX_KEPT):
        self.max_kept = max_kept
        self._jobs: collections.OrderedDict[Hashable, Job] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._one_at_a_time = threading.Lock()

    def start(self, key: Hashable, work: Callable[..., Any], *args: Any) -> Job:
        """The job of `key`, started as `work(*args)` unless it is there already."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None:
                self._jobs.move_to_end(key)
                return job
            job = Job(concurrent.futures.Future(), time.monotonic())
            self._jobs[key] = job
            finished = [k for k, j in self._jobs.items() if j.future.done()]
            for old in finished[:max(0, len(finished) - self.max_kept)]:
                del self._jobs[old]
        threading.Thread(target=self._run, args=(job.future, work, args), name="pmap-lab-job", daemon=False).start()
        return job

    def keep(self, key: Hashable, value: Any) -> None:
        """`value` as the finished job of `key`, unless a job of `key` is there already (work done off any page,
        such as the server's warm-up, for the visitors who ask for it)."""
        with self._lock:
            if key in self._jobs:
                return
            future: concurrent.futures.Future = concurrent.futures.Future()
            future.set_result(value)
            self._jobs[key] = Job(future, time.monotonic())

    def _run(self, future: concurrent.futures.Future, work: Callable[..., Any], args: tuple) -> None:
        with self._one_at_a_time:
            if not future.set_running_or_notify_cancel():
                return  # dropped while it waited (`drop_waiting`)
            try:
                if _stop.is_set():
                    raise RuntimeError("the server is stopping")
                future.set_result(work(*args))
            except BaseException as error:  # noqa: BLE001 - raised again where a page asks for the result
                future.set_exception(error)

    def get(self, key: Hashable) -> Job | None:
        with self._lock:
            return self._jobs.get(key)

    def forget(self, key: Hashable, job: Job) -> None:
        """Drop `job` (if it is still the one of `key`): the next ask starts it again."""
        with self._lock:
            if self._jobs.get(key) is job:
                del self._jobs[key]

    def drop_waiting(self) -> int:
        """Drop every job that has not started (each visitor who asked for one has gone: the tests of one
        process, page after page, would otherwise wait behind all their predecessors' jobs); how many."""
        with self._lock:
            dropped = [key for key, job in self._jobs.items() if job.future.cancel()]
            for key in dropped:
                del self._jobs[key]
        return len(dropped)

    def __len__(self) -> int:
        with self._lock:
            return len(self._jobs)


@st.cache_resource(show_spinner=False)
def jobs() -> Jobs:
    """This server's jobs, one object for every session (st.cache_resource)."""
    threading._register_atexit(_stop.set)  # runs before the interpreter joins its threads
    return Jobs()


def in_heavy_slot(work: Callable[..., Any]) -> Callable[..., Any]:
    """`work` as a job that holds one of the server's heavy-job slots while it runs (JAX work: a compile, a run),
    waiting in line without a page to show it; called in a page's run, which finds the server's queue. It starts
    once that run has answered (Streamlit ends a run's thread with the run), ANSWER_S at most: tracing and lowering
    hold the interpreter, which the answer would otherwise share."""
    queue, page_run = heavy_jobs.server_queue(), threading.current_thread()

    def held(*args: Any) -> Any:
        page_run.join(timeout=ANSWER_S)
        ticket = object()
        try:
            queue.join(ticket)
            while not queue.wait(ticket, heavy_jobs.HEAVY_POLL_SECONDS):
                if _stop.is_set():
                    raise RuntimeError("the server is stopping")
            return work(*args)
        finally:
            queue.leave(ticket)

    return held


def result(key: Hashable, work: Callable[..., Any], *args: Any, wait_s: float | None = WAIT_S) -> Any:
    """`work(*args)`, the job of `key`, if it is done within `wait_s` (None: however long it takes), else None:
    it goes on in the background. A job that failed raises its error here."""
    job = jobs().start(key, work, *args)
    try:
        return job.future.result(timeout=wait_s)
    except concurrent.futures.TimeoutError:
        return None
    except BaseException:
        jobs().forget(key, job)
        raise


def heavy_result(key: Hashable, work: Callable[..., Any], *args: Any) -> Any:
    """`result` of JAX work (a compile, a run): its job holds a heavy-job slot while it runs (`in_heavy_slot`).
    The page does not wait for it: a compile takes longer than WAIT_S, which would only delay the page's answer."""
    return result(key, in_heavy_slot(work), *args, wait_s=0)


def warm(task: Task) -> None:
    """Compute `task` in this thread (the warm-up's) and keep it for the visitors who open its page; one a visitor
    has asked for already is left to that visitor's job."""
    key, work, args = task
    if jobs().get(key) is None:
        jobs().keep(key, work(*args))


def done(key: Hashable) -> bool:
    job = jobs().get(key)
    return job is None or job.future.done()


def elapsed_s(key: Hashable) -> float:
    job = jobs().get(key)
    return 0.0 if job is None else job.elapsed_s()


@st.fragment(run_every=POLL_S)
def wait_for(keys: tuple[Hashable, ...], say: Callable[[float], None]) -> None:
    """While any job of `keys` runs: `say(seconds since it was asked for)`, again every POLL_S seconds; once
    every one is done, the page runs again and shows them."""
    if all(done(key) for key in keys):
        st.rerun(scope="app")
    say(max(elapsed_s(key) for key in keys))
