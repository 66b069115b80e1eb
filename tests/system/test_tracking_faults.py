"""Runs that must never be lost or left RUNNING, read back from real sqlite stores that another process
keeps locked (mid-run, too long for MLflow's wait, from the start); and a server URL with credentials
reached with them."""

import base64
import contextlib
import http.server
import json
import threading
import time

import pytest
from mlflow.tracking import MlflowClient

from harness.processes import free_port, hold_lock, run_python
from pmap_core.tracking import EXPERIMENT, server_reachable, store_locked
from pmap_core.tracking.callback import TrackingCallback
from pmap_core.tracking.mlflow_backend import MOVED_TO_TAG, Tracker
from pmap_core.tracking.moving import MOVED_FROM_TAG
from pmap_core.train.loop import Progress, train
from tests.core.test_tracking_stores import SMALL, fresh_store, losses_of


@contextlib.contextmanager
def locked_after_first_chunk(tracker, store, db, seconds):
    """Yields an on_chunk that, once the first chunk's losses are stored, has another process lock the
    store for `seconds`; that process is killed on the way out, whatever happened."""
    holders = []

    def lock(steps_done, losses):
        if not holders:
            (run_id,) = tracker._runs
            deadline = time.monotonic() + 30
            while len(losses_of(store, run_id)) < 20 and time.monotonic() < deadline:
                time.sleep(0.05)
            holders.append(hold_lock(db, seconds))

    try:
        yield lock
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()


def test_a_store_locked_mid_run_for_25_s_loses_nothing_and_the_training_finishes(tmp_path):
    """Another process locks the store for 25 s after the first chunk's losses are written.
    The writes wait, are retried, and every loss and the end of the run are stored; train returns."""
    db = tmp_path / "mlflow.db"
    store = fresh_store(db)
    tracker = Tracker(store)
    tracking = TrackingCallback(tracker)
    with locked_after_first_chunk(tracker, store, db, 25) as lock:
        result = train(SMALL, [tracking, Progress(on_chunk=lock)])
        tracked = tracking.tracked(result)
    assert tracked.error is None
    uri = tracked.tracking_uri
    run = MlflowClient(uri).get_run(tracked.run_id)
    assert run.info.status == "FINISHED"
    history = losses_of(uri, tracked.run_id)
    assert [m.step for m in history] == list(range(60))
    assert [m.value for m in history] == pytest.approx(result.losses)
    assert run.data.metrics["final_loss"] == pytest.approx(result.final_loss)


def test_a_store_locked_too_long_mid_run_moves_the_run_and_closes_the_one_left_behind(tmp_path):
    """A lock that outlasts MLflow's 20 s wait and the retry: the run goes on in the fallback store,
    whole, and the copy left in the locked store ends FAILED there (not RUNNING) once the lock is gone,
    tagged with where the run went."""
    db = tmp_path / "mlflow.db"
    store = fresh_store(db)
    fallback = fresh_store(tmp_path / "fallback.db")
    tracker = Tracker(store, fallback_uri=fallback)
    tracking = TrackingCallback(tracker)
    with locked_after_first_chunk(tracker, store, db, 32) as lock:
        result = train(SMALL, [tracking, Progress(on_chunk=lock)])
        tracked = tracking.tracked(result)
        (left_behind,) = tracker._runs
        deadline = time.monotonic() + 60
        while MlflowClient(store).get_run(left_behind).info.status == "RUNNING" and time.monotonic() < deadline:
            time.sleep(0.5)
    assert tracked.fell_back_to == fallback and tracked.error is None
    run = MlflowClient(fallback).get_run(tracked.run_id)
    assert run.info.status == "FINISHED"
    assert [m.value for m in losses_of(fallback, tracked.run_id)] == pytest.approx(result.losses)
    old = MlflowClient(store).get_run(left_behind)
    assert old.info.status == "FAILED"
    assert old.data.tags[MOVED_TO_TAG] == f"{fallback} {tracked.run_id}"

    # Once the store works again, the administrator moves the run back: whole, FINISHED, in place of the
    # partial copy (deleted); moving again copies nothing twice.
    move = ["-m", "pmap_core", "store", "move-fallback", "--from", fallback, "--json"]
    first = json.loads(run_python(move, env={"MLFLOW_TRACKING_URI": store}, check=True).stdout)
    assert (first["moved"], first["already_moved"], first["partial_copies_deleted"]) == (1, 0, 1)
    (moved,) = first["runs"]
    assert moved["fallback_run_id"] == tracked.run_id
    back = MlflowClient(store).get_run(moved["run_id"])
    assert back.info.status == "FINISHED" and back.data.params == run.data.params
    assert back.data.tags[MOVED_FROM_TAG] == tracked.run_id and MOVED_TO_TAG not in back.data.tags
    assert [(m.step, m.value) for m in losses_of(store, moved["run_id"])] == [
        (m.step, m.value) for m in losses_of(fallback, tracked.run_id)]
    assert MlflowClient(store).get_run(left_behind).info.lifecycle_stage == "deleted"
    again = json.loads(run_python([*move, "--to", store], check=True).stdout)
    assert (again["moved"], again["already_moved"], again["partial_copies_deleted"]) == (0, 1, 0)
    experiment = MlflowClient(store).get_experiment_by_name(EXPERIMENT).experiment_id
    assert [r.info.run_id for r in MlflowClient(store).search_runs([experiment])] == [moved["run_id"]]


def test_a_fallback_is_one_line_in_the_server_log(tmp_path):
    """DEPLOY.md promises a line in the app server's log when runs go to the fallback store (Streamlit
    leaves the lab's loggers to Python's last resort, which prints warnings and errors), without the
    URI's credentials."""
    fallback = fresh_store(tmp_path / "fallback.db")
    gone = f"http://student:s3cret@127.0.0.1:{free_port()}"
    done = run_python(["-m", "tests.children.open_tracker", gone, fallback], check=True)
    said = [line for line in done.stderr.splitlines() if "runs go to" in line]
    assert len(said) == 1 and fallback in said[0] and "did not answer" in said[0], done.stderr[-2000:]
    assert "s3cret" not in done.stderr


def test_a_store_locked_at_the_start_goes_to_the_fallback_within_seconds(tmp_path):
    """A store locked for 45 s, where MLflow would wait 20 s a write; the tracker finds the lock in
    seconds and writes the whole run to the fallback store, which it names."""
    db = tmp_path / "mlflow.db"
    store = fresh_store(db)
    fallback = fresh_store(tmp_path / "fallback.db")
    holder = hold_lock(db, 45)
    try:
        start = time.perf_counter()
        tracker = Tracker(store, fallback_uri=fallback)
        tracking = TrackingCallback(tracker)
        tracked = tracking.tracked(train(SMALL, [tracking]))
        elapsed = time.perf_counter() - start
        assert store_locked(store)
    finally:
        holder.kill()
        holder.wait()
    assert elapsed < 15, elapsed
    assert tracked.fell_back_to == fallback and tracked.tracking_uri == fallback
    assert "locked" in tracker.fallback_reason
    assert MlflowClient(fallback).get_run(tracked.run_id).info.status == "FINISHED"
    assert len(losses_of(fallback, tracked.run_id)) == 60


def test_a_server_url_with_credentials_is_reached_with_them():
    """`https://user:token@host` is not an unreachable host called `user:token@host`: the health check
    sends the credentials as HTTP basic auth, so the tracker does not fall back needlessly."""
    seen = []

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append((self.path, self.headers.get("Authorization")))
            self.send_response(200 if self.headers.get("Authorization") else 401)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert server_reachable(f"http://alice:s3cr3t@127.0.0.1:{server.server_port}/mlflow")
    finally:
        server.shutdown()
    assert seen == [("/mlflow/health", "Basic " + base64.b64encode(b"alice:s3cr3t").decode())]
