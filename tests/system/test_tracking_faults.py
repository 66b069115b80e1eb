"""Runs that must never be lost or left RUNNING, read back from real sqlite stores: a Streamlit stop or
rerun, a store another process keeps locked, a hopeless tracking URI, credentials in a URI."""

import base64
import http.server
import shutil
import threading
import time

import pytest
from mlflow.tracking import MlflowClient
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

from pmap_core.tracking import (
    FALLBACK_TRACKING_URI,
    absolute_sqlite_uri,
    check_tracking_uri,
    redact_uri,
    server_reachable,
    store_locked,
    ui_command,
)
from pmap_core.tracking.callback import TrackingCallback
from pmap_core.tracking.mlflow_backend import MOVED_TO_TAG, Tracker, experiment_id
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import Progress, sweep, train
from pmap_core.validation import LabInputError
from tests.support import ROOT, empty_tracking_store, new_tracking_store, start_python

SMALL = TrainConfig(devices=2, global_batch=32, steps=60, chunk=20)
# Holds a write lock on a sqlite file (every other reader and writer waits) for argv[2] seconds.
LOCK_HOLDER = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
connection.execute("COMMIT")
"""


def fresh_store(path):
    shutil.copy(empty_tracking_store(), path)
    return f"sqlite:///{path}"


def hold_lock(db_path, seconds):
    """Another process that keeps the store locked for `seconds`; returns once it holds the lock."""
    holder = start_python(["-c", LOCK_HOLDER, str(db_path), str(seconds)], stderr=None)
    assert holder.stdout.readline().strip() == "locked"
    return holder


def losses_of(uri, run_id):
    return sorted(MlflowClient(uri).get_metric_history(run_id, "loss"), key=lambda m: m.step)


@pytest.mark.parametrize("stop", [StopException(), RerunException(RerunData())], ids=["stop", "rerun"])
def test_a_streamlit_stop_or_rerun_mid_training_ends_the_run_killed(tmp_path, stop):
    """Streamlit's own Stop and Rerun exceptions, raised from a callback as a Streamlit call
    would raise them: the run is KILLED (the user stopped it), not FAILED, and keeps its losses."""
    store = fresh_store(tmp_path / "mlflow.db")
    tracker = Tracker(store)
    tracking = TrackingCallback(tracker)

    def streamlit_call(steps_done, losses):
        raise stop

    with pytest.raises(type(stop)):
        train(SMALL, [tracking, Progress(on_chunk=streamlit_call)])
    (run_id,) = tracker._runs
    assert MlflowClient(store).get_run(run_id).info.status == "KILLED"
    assert [m.step for m in losses_of(store, run_id)] == list(range(20))


def test_a_streamlit_stop_in_a_sweep_ends_the_open_child_and_the_parent_killed(tmp_path):
    """A stop during the second run of a sweep: that run and the sweep's parent are KILLED; the first
    run, already complete, stays FINISHED. No run is left RUNNING."""
    store = fresh_store(tmp_path / "mlflow.db")
    tracker = Tracker(store)
    tracking = TrackingCallback(tracker)
    config = TrainConfig(devices=2, global_batch=32, steps=20, chunk=10)

    def streamlit_call(steps_done, losses):
        if len(tracker._runs) == 3:  # the parent, D = 1, D = 2: inside the second run
            raise StopException()

    with pytest.raises(StopException):
        sweep(config, None, [tracking, Progress(on_chunk=streamlit_call)])
    parent, first, second = (MlflowClient(store).get_run(run_id) for run_id in tracker._runs)
    assert (parent.info.status, first.info.status, second.info.status) == ("KILLED", "FINISHED", "KILLED")
    assert second.data.tags["mlflow.parentRunId"] == parent.info.run_id
    assert [m.step for m in losses_of(store, second.info.run_id)] == list(range(10))


def test_the_fallback_store_is_ignored_by_git():
    """The fallback store is a local file next to mlflow.db, never something to commit."""
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert FALLBACK_TRACKING_URI.removeprefix("sqlite:///") in ignored


def locker_after_first_chunk(tracker, store, db, seconds, holders):
    """An on_chunk that, once the first chunk's losses are stored, has another process lock the
    store for `seconds` (the process goes into `holders`, to be killed by the test)."""
    def lock(steps_done, losses):
        if not holders:
            (run_id,) = tracker._runs
            deadline = time.monotonic() + 30
            while len(losses_of(store, run_id)) < 20 and time.monotonic() < deadline:
                time.sleep(0.05)
            holders.append(hold_lock(db, seconds))

    return lock


def test_a_store_locked_mid_run_for_25_s_loses_nothing_and_the_training_finishes(tmp_path):
    """Another process locks the store for 25 s after the first chunk's losses are written.
    The writes wait, are retried, and every loss and the end of the run are stored; train returns."""
    db = tmp_path / "mlflow.db"
    store = fresh_store(db)
    tracker = Tracker(store)
    tracking = TrackingCallback(tracker)
    holders = []
    lock_after_first_chunk = locker_after_first_chunk(tracker, store, db, 25, holders)

    try:
        result = train(SMALL, [tracking, Progress(on_chunk=lock_after_first_chunk)])
        tracked = tracking.tracked(result)
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()
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
    holders = []
    lock_after_first_chunk = locker_after_first_chunk(tracker, store, db, 32, holders)

    try:
        result = train(SMALL, [tracking, Progress(on_chunk=lock_after_first_chunk)])
        tracked = tracking.tracked(result)
        (left_behind,) = tracker._runs
        deadline = time.monotonic() + 60
        while MlflowClient(store).get_run(left_behind).info.status == "RUNNING" and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()
    assert tracked.fell_back_to == fallback and tracked.error is None
    run = MlflowClient(fallback).get_run(tracked.run_id)
    assert run.info.status == "FINISHED"
    assert [m.value for m in losses_of(fallback, tracked.run_id)] == pytest.approx(result.losses)
    old = MlflowClient(store).get_run(left_behind)
    assert old.info.status == "FAILED"
    assert old.data.tags[MOVED_TO_TAG] == f"{fallback} {tracked.run_id}"


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


def test_when_every_store_fails_the_training_result_still_arrives(tmp_path):
    """Nothing to write to at all (the fallback is broken too): the training completes, and says so."""
    (tmp_path / "afile").write_text("a file, not a directory\n")
    tracker = Tracker("http://127.0.0.1:9", fallback_uri=f"sqlite:///{tmp_path / 'afile'}/x.db")
    tracking = TrackingCallback(tracker)
    result = train(SMALL, [tracking])
    tracked = tracking.tracked(result)
    assert tracked.result.final_loss < tracked.result.losses[0]
    assert tracked.error and tracked.run_id is None


HOPELESS = {
    "directory": lambda tmp: f"sqlite:///{tmp}",
    "missing directory under /proc": lambda tmp: "sqlite:////proc/nope/mlflow.db",
    "file as a directory": lambda tmp: f"sqlite:///{tmp / 'afile'}/x.db",
    "file store": lambda tmp: "file:///tmp/mlruns",
    "postgresql without a driver": lambda tmp: "postgresql://nope/db",
    "not a database": lambda tmp: f"sqlite:///{tmp / 'afile'}",
}


@pytest.mark.parametrize("make_uri", HOPELESS.values(), ids=HOPELESS.keys())
def test_a_hopeless_tracking_uri_is_refused_in_one_line(tmp_path, make_uri):
    (tmp_path / "afile").write_text("not a database\n")
    uri = make_uri(tmp_path)
    start = time.perf_counter()
    with pytest.raises(LabInputError) as refused:
        check_tracking_uri(uri)
    assert time.perf_counter() - start < 1
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"tracking store {uri}: ")


def test_the_fallback_store_is_named_by_its_full_path(tmp_path, monkeypatch):
    """A relative fallback is fixed to the working directory of the moment: a message names a file the
    user can find, and a later change of directory does not send runs to another file."""
    monkeypatch.chdir(tmp_path)
    assert Tracker("http://127.0.0.1:9").fallback_uri == f"sqlite:///{tmp_path / 'mlflow-fallback.db'}"
    assert FALLBACK_TRACKING_URI == "sqlite:///mlflow-fallback.db"
    for kept in ("sqlite:////srv/mlflow.db", "sqlite:///:memory:", "sqlite:///x.db?mode=ro", "http://127.0.0.1:9"):
        assert absolute_sqlite_uri(kept) == kept


@pytest.mark.parametrize("uri", ["sqlite:///mlflow.db", "http://127.0.0.1:5000", "https://mlflow.example.org"])
def test_usable_tracking_uris_pass(uri, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert check_tracking_uri(uri) == uri


SECRETS = [
    ("https://alice:s3cr3t@mlflow.example.org/", "https://***@mlflow.example.org/"),
    ("https://s3cr3t@mlflow.example.org", "https://***@mlflow.example.org"),
    ("https://mlflow.example.org/?token=s3cr3t&x=1", "https://mlflow.example.org/?token=***&x=1"),
    ("postgresql://bob:s3cr3t@db:5432/mlflow?sslmode=require", "postgresql://***@db:5432/mlflow?sslmode=require"),
    ("mssql+pyodbc://db/mlflow?password=s3cr3t;Driver=x", "mssql+pyodbc://db/mlflow?password=***;Driver=x"),
    ("API request to https://u:s3cr3t@h/api failed", "API request to https://***@h/api failed"),
    ("sqlite:///mlflow.db", "sqlite:///mlflow.db"),
]


@pytest.mark.parametrize("uri, shown", SECRETS)
def test_credentials_in_a_uri_are_redacted(uri, shown):
    assert redact_uri(uri) == shown
    assert "s3cr3t" not in ui_command(uri)


def test_a_refusal_never_shows_the_credentials():
    with pytest.raises(LabInputError) as refused:
        check_tracking_uri("postgresql://bob:s3cr3t@db/mlflow")
    assert "s3cr3t" not in str(refused.value) and "***" in str(refused.value)


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


def test_an_experiment_another_app_process_created_meanwhile_is_used(tmp_path):
    """Two app processes on one store: the other creates the experiment between this one's lookup and
    its create. The store refuses the second create; the experiment the other made is the one used."""
    uri = new_tracking_store(tmp_path / "mlflow.db")
    here, other = MlflowClient(uri), MlflowClient(uri)
    look_up = here.get_experiment_by_name

    def other_creates_it_right_after(name):
        found = look_up(name)
        if found is None and other.get_experiment_by_name(name) is None:
            other.create_experiment(name)
        return found

    here.get_experiment_by_name = other_creates_it_right_after
    assert experiment_id(here, "pmap-lab") == other.get_experiment_by_name("pmap-lab").experiment_id
