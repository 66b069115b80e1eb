"""Streamlit's AppTest for this level: the `lab` and `one_slot` fixtures, the jobs a test left waiting dropped after
it (`forget_waiting_jobs`), and the names a test module may import from conftest (APP, SESSION_TRACKING_URI,
assert_clean, open_lab); a real PostgreSQL server (`postgres`) and MLflow stores in it (`postgres_store`)."""

import pytest

from tests.apptest_support import (
    APP,
    SESSION_TRACKING_URI,
    assert_clean,
    forget_waiting_jobs,
    lab,
    one_slot,
    open_lab,
)

__all__ = ["APP", "SESSION_TRACKING_URI", "assert_clean", "forget_waiting_jobs", "lab", "one_slot", "open_lab"]


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL server (tests/postgres_support.py), one per test process, stopped at its end;
    skipped with the reason where PostgreSQL is not installed, failed instead under CI."""
    from harness.browser import in_ci
    from tests.postgres_support import postgres_cluster, postgres_missing_reason

    reason = postgres_missing_reason()
    if reason:
        (pytest.fail if in_ci() else pytest.skip)(reason)
    with postgres_cluster() as cluster:
        yield cluster


@pytest.fixture
def postgres_store(postgres):
    """The tracking URI of a new, empty MLflow store on the PostgreSQL server (a database of its own)."""
    return postgres.new_store()
