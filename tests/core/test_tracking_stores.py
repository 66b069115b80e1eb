"""Tracking stores that cannot be used, with real sqlite stores: a hopeless URI is refused in one line,
the training result arrives when every store fails, the fallback store is named by its full path and
ignored by git, credentials in a URI are never shown, and an experiment another process created is used."""

import shutil
import time

import pytest
from mlflow.tracking import MlflowClient

from harness.processes import ROOT, empty_tracking_store, new_tracking_store
from pmap_core.tracking import (
    FALLBACK_TRACKING_URI,
    absolute_sqlite_uri,
    check_tracking_uri,
    redact_uri,
    ui_command,
)
from pmap_core.tracking.callback import TrackingCallback
from pmap_core.tracking.mlflow_backend import Tracker, experiment_id
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import train
from pmap_core.validation import LabInputError

SMALL = TrainConfig(devices=2, global_batch=32, steps=60, chunk=20)


def fresh_store(path):
    shutil.copy(empty_tracking_store(), path)
    return f"sqlite:///{path}"


def losses_of(uri, run_id):
    return sorted(MlflowClient(uri).get_metric_history(run_id, "loss"), key=lambda m: m.step)


def test_the_fallback_store_is_ignored_by_git():
    """The fallback store is a local file next to mlflow.db, never something to commit."""
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert FALLBACK_TRACKING_URI.removeprefix("sqlite:///") in ignored


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
    # psycopg2 is installed (the class store on PostgreSQL): a driver the lab does not install.
    "postgresql with a driver not installed": lambda tmp: "postgresql+pg8000://nope/db",
    "mysql without a driver": lambda tmp: "mysql://nope/db",
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
    # An @ inside the password (unescaped, as people write it): the user information ends at the last @.
    ("http://alice:s3cr3t@ss@host:5000/", "http://***@host:5000/"),
    ("https://s3cr3t@@mlflow.example.org/x@y", "https://***@mlflow.example.org/x@y"),
    ("postgresql://bob:s3c@r3t@db/mlflow and https://h/x", "postgresql://***@db/mlflow and https://h/x"),
]


@pytest.mark.parametrize("uri, shown", SECRETS)
def test_credentials_in_a_uri_are_redacted(uri, shown):
    assert redact_uri(uri) == shown
    assert "s3cr3t" not in ui_command(uri)


def test_a_refusal_never_shows_the_credentials():
    with pytest.raises(LabInputError) as refused:
        check_tracking_uri("postgresql+pg8000://bob:s3cr3t@db/mlflow")  # a driver not installed
    assert "s3cr3t" not in str(refused.value) and "***" in str(refused.value)


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
