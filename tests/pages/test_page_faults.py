"""The training and experiments pages against what an operator's environment can hold: a hopeless or
locked tracking store, a bad device count, credentials or markup in the tracking URI (AppTest)."""

import time

import pytest

from harness.processes import hold_lock, new_tracking_store
from pmap_core import runtime
from tests.apptest_support import open_lab
from tests.core.test_tracking_stores import HOPELESS

TINY = {"batch": 16, "steps": 20, "devices": 2}


def texts_of(at) -> str:
    """Everything the page shows as text, markdown and code alike."""
    elements = [*at.markdown, *at.caption, *at.code, *at.error, *at.warning, *at.info, *at.success, *at.text]
    return "\n".join(str(element.value) for element in elements)


def click_train(at):
    at.button(key="training.train").click().run()
    return at


@pytest.mark.parametrize("make_uri", HOPELESS.values(), ids=HOPELESS.keys())
def test_a_hopeless_store_is_one_line_on_the_training_page(tmp_path, monkeypatch, make_uri):
    (tmp_path / "afile").write_text("not a database\n")
    uri = make_uri(tmp_path)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    at = open_lab("training", **TINY)
    start = time.perf_counter()
    click_train(at)
    elapsed = time.perf_counter() - start
    print(f"training page, {uri}: {elapsed:.1f} s")
    assert not at.exception, [e.value for e in at.exception]
    assert elapsed < 15
    assert any("Training was not started" in e.value for e in at.error)
    (reason,) = [c.value for c in at.code if c.value.startswith("tracking store ")]
    assert reason.startswith(f"tracking store {uri}: ") and "\n" not in reason
    assert "training.last_run" not in at.session_state


@pytest.mark.parametrize("make_uri", HOPELESS.values(), ids=HOPELESS.keys())
def test_a_hopeless_store_is_one_line_on_the_experiments_page(tmp_path, monkeypatch, make_uri):
    (tmp_path / "afile").write_text("not a database\n")
    uri = make_uri(tmp_path)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    start = time.perf_counter()
    at = open_lab("experiments")
    elapsed = time.perf_counter() - start
    print(f"experiments page, {uri}: {elapsed:.1f} s")
    assert not at.exception, [e.value for e in at.exception]
    assert elapsed < 15
    assert any("cannot be used" in e.value for e in at.error)
    assert any(c.value.startswith(f"tracking store {uri}: ") for c in at.code)


def test_a_locked_store_trains_into_the_fallback_and_the_experiments_page_says_locked(tmp_path, monkeypatch):
    db = tmp_path / "mlflow.db"
    store = new_tracking_store(db)
    monkeypatch.chdir(tmp_path)  # the fallback store is created in the working directory
    new_tracking_store(tmp_path / "mlflow-fallback.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)
    at = open_lab("training", **TINY)
    holder = hold_lock(db, 45)
    try:
        start = time.perf_counter()
        click_train(at)
        elapsed = time.perf_counter() - start
        shown = open_lab("experiments")
    finally:
        holder.kill()
        holder.wait()
    print(f"training page, locked store: {elapsed:.1f} s")
    assert not at.exception, [e.value for e in at.exception]
    assert elapsed < 15
    tracked = at.session_state["training.last_run"]
    assert tracked.fell_back_to == f"sqlite:///{tmp_path / 'mlflow-fallback.db'}"  # a file the user can find
    assert any("fallback store" in w.value and "mlflow-fallback.db" in w.value for w in at.warning)
    assert any(tracked.run_id in c.value and "mlflow-fallback.db" in c.value for c in at.code)
    assert "Final loss" in {m.label for m in at.metric}  # the training result is shown
    assert not shown.exception
    assert any("locked by another process" in e.value for e in shown.error)


@pytest.mark.parametrize("devices, message", [
    ("abc", "PMAP_LAB_DEVICES must be a whole number, got 'abc'"),
    ("0", "PMAP_LAB_DEVICES must be between 1 and 64, got 0"),
])
def test_a_bad_device_count_is_one_line_on_the_page(monkeypatch, devices, message):
    monkeypatch.setattr(runtime, "_configured_count", None)  # as in a server that starts with this setting
    monkeypatch.setenv(runtime.DEVICE_COUNT_ENV, devices)
    at = open_lab()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1 and [c.value for c in at.code] == [message]


CREDENTIALS = "http://alice:s3cr3tPASS@127.0.0.1:9/?token=s3cr3tTOKEN"


def test_credentials_in_the_tracking_uri_are_never_shown(tmp_path, monkeypatch):
    """What every visitor sees: the server's URI (unreachable here) has a password and a token, and
    neither shows on the page."""
    monkeypatch.chdir(tmp_path)
    new_tracking_store(tmp_path / "mlflow-fallback.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", CREDENTIALS)
    experiments = open_lab("experiments")
    training = click_train(open_lab("training", **TINY))
    for at in (experiments, training):
        assert not at.exception, [e.value for e in at.exception]
        assert "s3cr3t" not in texts_of(at)
    assert "http://***@127.0.0.1:9/?token=***" in [c.value for c in experiments.code]
    assert any("mlflow ui" not in c.value and "***" in c.value for c in experiments.code)


def test_a_tracking_uri_is_never_rendered_as_markdown(monkeypatch):
    """The URI comes from the environment: a backtick in it must not open a link or an image."""
    uri = "file:///tmp/`[click](http://evil.example) ![p](http://evil.example/p.png)`"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    at = open_lab("experiments")
    assert not at.exception
    assert not any("evil.example" in str(m.value) for m in [*at.markdown, *at.caption, *at.error, *at.warning])
    assert uri in [c.value for c in at.code]
