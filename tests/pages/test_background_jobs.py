"""Work a page leaves to the background (`labs.ui.background`): JAX work holds one of the server's heavy-job slots
while it runs, waiting in line behind another session's training without a page to show it, and gives the slot back
once done."""

import threading


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
