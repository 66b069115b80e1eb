"""The training page against a real `mlflow server` that is killed mid-run: the run falls back to the
local store with nothing lost, and the page shows it there."""

import contextlib
import signal
import sqlite3
import threading
import time

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from harness.processes import MlflowServer, new_tracking_store
from tests.apptest_support import open_lab


def kill_when_losses_arrive(server, timeout_s=120):
    """SIGKILL the server once the first losses of a run are in its store: the run is mid-way."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(server.db)) as db:
            if db.execute("select count(*) from metrics where key = 'loss'").fetchone()[0]:
                break
        time.sleep(0.02)
    server.stop(signal.SIGKILL)


def test_a_server_that_dies_mid_run_still_shows_the_run_on_the_page(tmp_path, monkeypatch):
    server = MlflowServer(tmp_path)
    try:
        server.wait_until_healthy()
        monkeypatch.chdir(tmp_path)  # the fallback store is in the working directory
        # As after a first fallback: a new store takes seconds (tests/pages/test_labs_training.py,
        # test_unreachable_server_falls_back_and_says_so).
        new_tracking_store(tmp_path / "mlflow-fallback.db")
        monkeypatch.setenv("MLFLOW_TRACKING_URI", server.uri)
        at = open_lab("training", model="mlp", hidden=256, batch=256, steps=2500, lr=0.01, devices=2)
        killer = threading.Thread(target=kill_when_losses_arrive, args=(server,))
        killer.start()
        at.button(key="training.train").click().run()
        killer.join()
    finally:
        server.stop(signal.SIGKILL)
    assert not at.exception, [e.value for e in at.exception]
    tracked = at.session_state["training.last_run"]
    assert tracked.fell_back_to and "mlflow-fallback.db" in tracked.fell_back_to
    assert any(tracked.fell_back_to in w.value for w in at.warning)
    assert any(tracked.run_id in c.value and tracked.fell_back_to in c.value for c in at.code)
    assert "Final loss" in {m.label for m in at.metric}
    # Nothing lost: the whole run, its losses from before the server died included, is in the fallback store.
    client = MlflowClient(tracked.fell_back_to)
    run = client.get_run(tracked.run_id)
    assert run.info.status == "FINISHED"
    history = sorted(client.get_metric_history(tracked.run_id, "loss"), key=lambda m: m.step)
    np.testing.assert_allclose([m.value for m in history], tracked.result.losses, rtol=1e-6)
    assert run.data.metrics["steady_throughput"] == pytest.approx(tracked.result.steady_throughput)
