"""The server's queue of background jobs (labs.ui.background.Jobs): one job at a time, and the jobs still waiting
dropped on request, each never run, while the one running ends as it would."""

from __future__ import annotations

import threading
import time

from labs.ui.background import Jobs


def test_dropping_the_waiting_jobs_runs_none_of_them_and_lets_the_running_one_end():
    jobs, release, ran = Jobs(), threading.Event(), []

    def work(name: str) -> str:
        if name == "first":
            release.wait(timeout=30)
        ran.append(name)
        return name

    first = jobs.start("first", work, "first")
    deadline = time.monotonic() + 30
    while not first.future.running():  # the others queue behind it
        assert time.monotonic() < deadline
        time.sleep(0.01)
    waiting = [jobs.start(name, work, name) for name in ("second", "third")]
    assert not any(job.future.done() for job in waiting)

    assert jobs.drop_waiting() == 2
    release.set()
    assert first.future.result(timeout=30) == "first"
    assert all(job.future.cancelled() for job in waiting)
    assert jobs.get("second") is None and jobs.get("first") is first
    # Asked for again, a dropped job starts anew and runs.
    assert jobs.start("second", work, "second").future.result(timeout=30) == "second"
    assert ran == ["first", "second"]
