"""A page of the app in Streamlit's AppTest, opened as a link opens it, and run until the work it left to the
background shows: what the page benchmark times, and what its test checks."""

from __future__ import annotations

import os
import time

from streamlit.testing.v1 import AppTest

from harness.processes import ROOT

APP = os.path.join(ROOT, "streamlit_app.py")


def open_page(script: str | None, query: dict[str, str] | None = None) -> AppTest:
    """An app on `script` with the link's `query`, ready for its first (timed) run."""
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["lang"] = "en"
    for name, value in (query or {}).items():
        at.query_params[name] = value
    if script is not None:
        # st.navigation registers the pages with their url_path on a first run;
        # only then does switching find pages whose url_path is not their filename.
        at.run()
        at.switch_page(f"labs/{script}.py")
    return at


def timed_run(at: AppTest) -> float:
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(at.exception[0].value)
    return elapsed


def until_done(at: AppTest, timeout_s: float = 600) -> AppTest:
    """The page run again until the work it runs in the background (`labs.ui.background`) shows: a run that
    answers without it says so in a ⏳ note, and the browser's page runs again by itself once it is done."""
    deadline = time.monotonic() + timeout_s
    while any(i.icon == "⏳" for i in at.info):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the page's background work did not end within {timeout_s:.0f} s")
        time.sleep(0.1)
        at.run()
    return at


def settled(at: AppTest, timeout_s: float = 600) -> AppTest:
    """`until_done`, after at least one run: an AppTest fresh from `open_page` has not run its page yet, and its
    notes would be another page's."""
    timed_run(at)
    return until_done(at, timeout_s)
