"""A class on one deployment: many sessions run the heaviest labs at once.

Eight browser sessions (each its own Streamlit session) open the labs that do
heavy work and press their primary button together, against one `streamlit
run` server that allows one heavy job at a time. Every session must finish
with no exception (no deadlock, no crash) and the server's memory must stay
bounded. Identical requests may be answered from cache; trainings, which are
never cached, must show the visible "queued" notice while they wait (the caches themselves:
tests/pages/test_heavy_cache.py).
Figures for a report: `python -m benchmarks.load_sessions`.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from harness import browser as bs
from labs.registry import script_path

SESSIONS = 8
# The measurements at small sizes: the point is many heavy jobs at once, not the figures
# (`python -m benchmarks.load_sessions` opens every lab at its defaults).
LIGHT_SETTINGS = {"comm_benchmark": {"max_size": "64K", "max_devices": 4, "repeats": 2},
                  "manual_parallelism": {"max_devices": 2, "repeats": 3},
                  "jit_composition": {"repeats": 2},
                  "training": {"steps": 50},
                  "sharded_dp": {"steps": 25},
                  "multiprocess": {"steps": 2},
                  "demo": {"steps": 50}}
# The server and the processes it starts (the multi-process lab's group): a small classroom host.
MEMORY_LIMIT_BYTES = 2 * 2**30

_missing = bs.chromium_missing_reason()


@pytest.fixture(scope="module")
def browser():
    if _missing:
        if bs.in_ci():
            pytest.fail(f"CI=true but the browser cannot run: {_missing}")
        pytest.skip(f"load test needs the browser: {_missing}")
    return bs.shared_browser()


def test_eight_sessions_on_the_heaviest_labs_all_finish(browser):
    labs = bs.heavy_labs()
    if not labs:
        pytest.skip("no lab uses heavy_jobs.heavy_job yet")
    server = bs.shared_server()
    report = bs.run_sessions(server, browser, labs, SESSIONS, settings=LIGHT_SETTINGS)
    print(f"\n{SESSIONS} sessions on {report.labs}: all done in {report.wall_s:.1f} s; "
          f"peak server RSS {report.peak_rss_bytes / 2**20:.0f} MiB (start {report.start_rss_bytes / 2**20:.0f} MiB); "
          f"{report.queued_seen} showed 'queued'; finished at {[round(s, 1) for s in report.finished_s]} s")
    assert not report.unfinished, f"sessions still running after the timeout (deadlock?): {report.unfinished}"
    assert not report.exceptions, report.exceptions
    assert report.peak_rss_bytes < MEMORY_LIMIT_BYTES, f"server RSS {report.peak_rss_bytes / 2**20:.0f} MiB"
    assert server.process.poll() is None, f"the server died:\n{server.log_tail()}"


def test_sessions_waiting_for_the_heavy_slot_say_queued(browser):
    """Three trainings pressed at once on one heavy slot: the ones that wait show 'queued'.
    Training records a new run on each press, so no cache can answer for it."""
    lab = next((lab for lab in bs.heavy_labs() if lab.script == "training"), None)
    if lab is None or 'type="primary"' not in (bs.ROOT / script_path(lab)).read_text():
        pytest.skip("no training lab with a primary button yet")
    from labs.texts import table as text_table

    TEXTS = text_table("common")

    server = bs.shared_server()
    context = browser.new_context()  # three tabs: three Streamlit sessions
    try:
        pages = [context.new_page() for _ in range(3)]
        # The first training holds the slot while the other two are pressed: on a busy machine pressing
        # them takes seconds, and the training's own program is fast (500 steps in well under a second).
        for i, page in enumerate(pages):
            steps = 5000 if i == 0 else 500
            bs.open_app_page(page, bs.page_url(server, lab.url_path, lang="en", steps=steps, seed=i + 1))
        for i, page in enumerate(pages):
            # A loaded machine (another test worker, three sessions) may take a while to draw the button.
            try:
                page.locator(bs.MAIN).locator('[data-testid="stBaseButton-primary"]').first.click(
                    no_wait_after=True, timeout=120_000)
            except PlaywrightTimeoutError:
                shot = bs.save_screenshot(page, f"queued-session-{i}-without-a-button")
                pytest.fail(f"session {i}: no Train button after 120 s ({shot}):\n"
                            f"{page.locator(bs.MAIN).inner_text()[:3000]}\nserver log:\n{server.log_tail(6000)}")
        queued = [page.get_by_text(TEXTS["queued"]["en"][:40]) for page in pages]
        seen = False
        for _ in range(300):  # up to ~60 s
            if any(q.count() for q in queued):
                seen = True
                break
            pages[0].wait_for_timeout(200)
        for page in pages:
            bs.wait_ready(page, timeout_ms=240_000)
            assert not bs.exception_texts(page)
        assert seen, "three trainings on one heavy slot, yet no session showed 'queued'"
    finally:
        context.close()
