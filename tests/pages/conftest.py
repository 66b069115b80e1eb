"""Streamlit's AppTest for this level: the `lab`, `one_slot` and module-wide `store` fixtures, the jobs a test left
waiting dropped after it (`forget_waiting_jobs`), and the names a test module may import from conftest (APP,
SESSION_TRACKING_URI, assert_clean, open_lab, said, button, frame_with, folded_key, unfold)."""

import pytest

from harness.processes import new_tracking_store
from tests.apptest_support import (
    APP,
    SESSION_TRACKING_URI,
    assert_clean,
    button,
    folded_key,
    forget_waiting_jobs,
    frame_with,
    lab,
    one_slot,
    open_lab,
    said,
    unfold,
    worksheet_queries,
)

__all__ = ["APP", "SESSION_TRACKING_URI", "assert_clean", "button", "folded_key", "forget_waiting_jobs", "frame_with",
           "lab", "one_slot", "open_lab", "said", "unfold", "worksheet_queries"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One MLflow sqlite store for a test module, as MLFLOW_TRACKING_URI while its tests run (a module may
    define its own `store` instead)."""
    uri = new_tracking_store(tmp_path_factory.mktemp("mlflow") / "mlflow.db")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLFLOW_TRACKING_URI", uri)
        yield uri
