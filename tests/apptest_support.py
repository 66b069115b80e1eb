"""Streamlit's AppTest on this app: the helpers and fixtures of the page tests (tests/pages), and of
the tests that open a page beside a server or inside a child process (tests/system).

Importing this module imports Streamlit; tests/core never does. The conftest of tests/pages and of
tests/system bring its fixtures and names in, so `from conftest import open_lab` works there too.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterator

import jax
import pytest
from streamlit.components.v2 import manifest_scanner
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from harness.app_pages import until_done
from harness.processes import ROOT
from labs.registry import LABS

# A new AppTest's first run scans the metadata of every installed distribution for Streamlit
# components: about 1 s of CPU here, for each of the suite's hundreds of AppTests. What is
# installed does not change while the tests run, so one scan per process answers for all.
manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)

APP = os.path.join(ROOT, "streamlit_app.py")
# The session's throwaway MLflow store, which tests/conftest.py names before any test module is imported.
SESSION_TRACKING_URI = os.environ.get("MLFLOW_TRACKING_URI", "")
URL_PATHS = {lab.script: lab.url_path for lab in LABS}

__all__ = ["APP", "SESSION_TRACKING_URI", "AppTest", "assert_clean", "forget_waiting_jobs", "give_prediction",
           "heavy_slots", "lab", "one_slot", "open_lab"]


def open_lab(script: str | None = None, lang: str = "en", **query: object) -> AppTest:
    """Run the app on one lab (a file under labs/) with the given query parameters: the session's first
    run is the lab's, as when a browser opens the lab's link."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = lang
    for name, value in query.items():
        at.query_params[name] = str(value)
    if script in URL_PATHS:
        # Before its first run AppTest knows none of the pages st.navigation registers, and switch_page
        # would name a page by its file name; st.Page names a page by the hash of its url_path.
        at._page_hash = calc_hash(URL_PATHS[script])
    elif script is not None:  # a page the registry does not list: found once st.navigation has registered it
        at.run()
        at.switch_page(f"labs/{script}.py")
    return at.run()


@pytest.fixture(autouse=True)
def forget_waiting_jobs():
    """After each test, the background jobs its pages asked for and nobody waits for any more are dropped: the
    tests of a process share one queue of jobs, run one at a time, and a test that waits for its own page's job
    waited behind every job its predecessors left (seen: 27 planner searches, over pytest's 300 s)."""
    yield
    from labs.ui import background

    background.jobs().drop_waiting()


@contextlib.contextmanager
def compiles_seen() -> Iterator[list[str]]:
    """The name of the thread of every JAX compile while the block runs, but the server warm-up's (it compiles
    beside the pages, `labs.ui.warm_up`): a page that leaves its compiles to background jobs shows only theirs."""
    compiled: list[str] = []

    def heard(name: str, seconds: float, **_) -> None:
        if name.startswith("/jax/core/compile/") and threading.current_thread().name != "pmap-lab-warm-up":
            compiled.append(threading.current_thread().name)

    jax.monitoring.register_event_duration_secs_listener(heard)
    try:
        yield compiled
    finally:
        jax.monitoring.unregister_event_duration_listener(heard)


def assert_clean(at: AppTest) -> None:
    """No exception and no error box on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def give_prediction(at: AppTest, key: str) -> AppTest:
    """A guess in the predict box `key` — the first choice shown, or 0 — and the page run again: the
    check button waits for a value."""
    radios = [radio for radio in at.radio if radio.key == key]
    if radios:
        radios[0].set_value(radios[0].options[0])
    else:
        at.number_input(key=key).set_value(0.0)
    return at.run()


@pytest.fixture
def lab():
    return open_lab


def class_store(key: str):
    """A fixture: a fresh sqlite store as MLFLOW_TRACKING_URI and `key` as the server's teacher key, with
    no class controls cached and no wrong keys counted from another test, before and after (its value: the URI)."""

    @pytest.fixture
    def store(tmp_path, monkeypatch):
        from harness.processes import new_tracking_store
        from labs.ui import teacher

        uri = new_tracking_store(tmp_path / "mlflow.db")
        monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
        monkeypatch.setenv(teacher.TEACHER_KEY_ENV, key)
        teacher.forget_controls()
        teacher._client_tries.clear()
        yield uri
        teacher.forget_controls()
        teacher._client_tries.clear()

    return store


def heavy_slots(count: int):
    """A fixture: PMAP_LAB_HEAVY_JOBS=`count`, with a fresh heavy-job queue before and after the test."""

    @pytest.fixture
    def slots(monkeypatch):
        from labs.ui import heavy_jobs

        monkeypatch.setenv(heavy_jobs.HEAVY_JOBS_ENV, str(count))
        heavy_jobs._heavy_slots.clear()
        yield
        heavy_jobs._heavy_slots.clear()

    return slots


one_slot = heavy_slots(1)


def said(at: AppTest) -> str:
    """Every sentence the page shows: its markdown, info, captions, warnings and successes, joined."""
    return " ".join(m.value for m in [*at.markdown, *at.info, *at.caption, *at.warning, *at.success])


def folded_key(expander) -> str | None:
    """The key of an expander the page draws only while it is open (`labs.ui.blocks.folded`), else None: its id is
    "$$ID-<hash>-<key>"."""
    parts = expander.proto.id.split("-", 2)
    return parts[2] if parts[0] == "$$ID" and len(parts) == 3 and parts[2] else None


def unfold(at: AppTest) -> AppTest:
    """Open every folded expander the page shows, as a reader clicking each would, and run the page again until its
    background work is done."""
    for key in filter(None, map(folded_key, at.expander)):
        at.session_state[key] = True
    return until_done(at.run())


def share_link(at: AppTest, url_path: str) -> str:
    """The link the page's share panel gives, the panel opened as a reader opens it (it is drawn only while open):
    its last code block."""
    at.session_state[f"share.{url_path}"] = True
    return at.run().code[-1].value


def button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def frame_with(at: AppTest, column: str):
    """The first table the page shows that has `column`."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def worksheet_queries(sheet_id: str, runtime: int) -> list[tuple[str, dict]]:
    """(step id, the link's settings without its language) for each step of worksheet `sheet_id` at `runtime`
    devices that opens its lab on settings no earlier step did."""
    from pmap_core.practice import worksheets

    sheet = next(s for s in worksheets.load_sheets().sheets if s.id == sheet_id).at(runtime)
    seen, queries = set(), []
    for step in sheet.steps:
        query = {k: v for k, v in step.query("en").items() if k != "lang"}
        if tuple(sorted(query.items())) not in seen:
            seen.add(tuple(sorted(query.items())))
            queries.append((step.id, query))
    return queries
