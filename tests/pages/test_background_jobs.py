"""Work a page leaves to the background (`labs.ui.background`): JAX work holds one of the server's heavy-job slots
while it runs, waiting in line behind another session's training without a page to show it, and gives the slot back
once done; the jobs still waiting are dropped on request, each never run, while the one running ends as it would."""

import threading
import time


def test_jax_work_in_the_background_waits_for_a_heavy_slot_and_gives_it_back(one_slot):
    from labs.ui import background, heavy_jobs

    queue = heavy_jobs.server_queue()
    training = object()  # another session's training holds the only slot
    queue.join(training)
    ran = threading.Event()
    key = ("test.background", object())
    try:
        assert background.heavy_result(key, ran.set) is None  # the page answers without it
        assert not ran.wait(0.5)  # it cannot start while the training holds the slot
        assert not background.done(key)
    finally:
        queue.leave(training)
    background.jobs().get(key).future.result(timeout=60)
    assert ran.is_set() and background.done(key)
    after = object()
    queue.join(after)
    assert queue.holds(after)  # the job gave its slot back
    queue.leave(after)


def test_dropping_the_waiting_jobs_runs_none_of_them_and_lets_the_running_one_end():
    from labs.ui.background import Jobs

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
