"""Pages look in their cache before queueing for a heavy slot: a cache hit never waits behind
another session's training."""

import pytest
from test_queue import Session, in_thread

from tests.apptest_support import assert_clean, give_prediction, open_lab, until_done


def _rerun(at):
    return lambda: at.run(timeout=20)


CACHED_PAGES = {
    "demo": ({"devices": 2, "steps": 10}, None),
    "jit_composition": ({"devices": 2, "rows": 8, "repeats": 1, "layers": 1}, None),
    "manual_parallelism": ({"max_devices": 2, "features": 8, "hidden": 8, "repeats": 2}, None),
    "mistakes": ({"entry": "side_effects"}, "mistakes.run"),
    "interview": ({"question": "psum_of_one"}, "interview.check"),
}


@pytest.mark.parametrize("page", list(CACHED_PAGES))
def test_a_cache_hit_does_not_wait_behind_another_sessions_training(page, one_slot):
    query, button = CACHED_PAGES[page]
    at = until_done(open_lab(page, **query))  # what it runs in the background, done
    if page == "interview":  # a check needs a guess
        give_prediction(at, f"interview.{query['question']}.guess")
    if button:
        at.button(key=button).click().run()
    assert_clean(at)  # the result is in the cache now
    holder = Session()  # another session trains and holds the only slot
    try:
        if button:
            at.button(key=button).click()
        assert in_thread(_rerun(at), 30), f"{page}: a cache hit waited for the heavy slot"
        assert_clean(at)
        assert not [i for i in at.info if "Queued" in i.value]
    finally:
        holder.stop()


