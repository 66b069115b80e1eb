"""Streamlit's AppTest for this level: the `lab`, `one_slot` and module-wide `store` fixtures, the jobs a test left
waiting dropped after it (`forget_waiting_jobs`), and the names a test module may import from conftest (APP,
SESSION_TRACKING_URI, assert_clean, open_lab, said, button, frame_with)."""

import pytest

from harness.processes import new_tracking_store
from tests.apptest_support import (
    APP,
    SESSION_TRACKING_URI,
    assert_clean,
    button,
    frame_with,
    lab,
    one_slot,
    open_lab,
    said,
    worksheet_queries,
)

__all__ = ["APP", "SESSION_TRACKING_URI", "assert_clean", "button", "frame_with", "lab", "one_slot", "open_lab", "said",
           "worksheet_queries"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One MLflow sqlite store for a test module, as MLFLOW_TRACKING_URI while its tests run (a module may
    define its own `store` instead)."""
    uri = new_tracking_store(tmp_path_factory.mktemp("mlflow") / "mlflow.db")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLFLOW_TRACKING_URI", uri)
        yield uri


@pytest.fixture(autouse=True)
def forget_waiting_jobs():
    """After each test, the background jobs its pages asked for and nobody waits for any more are dropped: the
    tests of a process share one queue of jobs, run one at a time, and a test that waits for its own page's job
    waited behind every job its predecessors left (seen: 27 planner searches, over pytest's 300 s)."""
    yield
    from labs.ui import background

    background.jobs().drop_waiting()
