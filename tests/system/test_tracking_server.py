"""MLflow tracking against a real `mlflow server`: runs reach it, and when it goes away the tracker falls
back to a local store with nothing lost."""

import json
import time

import pytest
from mlflow.tracking import MlflowClient

from harness.processes import MlflowServer, run_python
from pmap_core.tracking.mlflow_backend import Tracker
from tests.core.test_tracking import SMALL, empty_store_template, fresh_store, train_tracked  # noqa: F401 - a fixture


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory):
    """A real `mlflow server` over a fresh store."""
    server = MlflowServer(tmp_path_factory.mktemp("server"))
    yield server
    server.stop()


def test_the_cli_prints_the_apps_link_to_its_run_not_mlflows(mlflow_server):
    """`train` against a server: the run's link is made as the app's "Open in MLflow" links are (the address
    visitors reach the UI at, PMAP_LAB_MLFLOW_UI_URL, and the Model-training view), and MLflow's own
    "View run" lines (the server's address, the GenAI view) are not printed; --json stays one object."""
    mlflow_server.wait_until_healthy(timeout_s=300)
    ui = "https://lab.example.edu/mlflow"
    done = run_python(["-m", "pmap_core", "train", "--steps", "5", "--devices", "2", "--json"], check=True,
                      env={"MLFLOW_TRACKING_URI": mlflow_server.uri, "PMAP_LAB_MLFLOW_UI_URL": ui}, timeout=300)
    assert "View run" not in done.stdout + done.stderr and "View experiment" not in done.stdout + done.stderr
    result = json.loads(done.stdout)
    experiment = MlflowClient(mlflow_server.uri).get_run(result["run_id"]).info.experiment_id
    assert result["mlflow_run_url"] == (
        f"{ui}/#/experiments/{experiment}/runs/{result['run_id']}?workflowType=machine_learning")


def test_the_server_runs_without_mlflows_job_workers(mlflow_server):
    """As docs/DEPLOY.md starts it: the server and its uvicorn worker, none of MLflow's job workers (Huey
    consumers, 8 more processes and over 1 GiB here)."""
    import subprocess

    mlflow_server.wait_until_healthy(timeout_s=300)
    time.sleep(2)  # MLflow starts its job workers after the server answers
    listed = subprocess.run(["ps", "-o", "args=", "-g", str(mlflow_server.process.pid)], capture_output=True,
                            text=True, check=True).stdout.splitlines()
    assert listed and not [line for line in listed if "huey" in line or "jobs" in line], listed
    assert len(listed) == 2, listed  # the server and its uvicorn worker


def test_runs_reach_a_real_server_and_fall_back_when_it_goes_away(mlflow_server, template_db, tmp_path):
    uri = mlflow_server.uri
    mlflow_server.wait_until_healthy()
    fallback = fresh_store(template_db, tmp_path / "fallback.db")
    tracker = Tracker(uri, fallback_uri=fallback)
    first = train_tracked(SMALL, tracker)
    assert first.fell_back_to is None
    run = MlflowClient(uri).get_run(first.run_id)
    assert run.info.status == "FINISHED" and run.data.params["devices"] == "4"
    assert len(MlflowClient(uri).get_metric_history(first.run_id, "loss")) == 40

    mlflow_server.stop()
    start = time.perf_counter()
    second = train_tracked(SMALL, tracker)
    assert time.perf_counter() - start < 30
    assert second.fell_back_to == fallback
    # Nothing lost: both runs, the first one replayed, are in the fallback store.
    client = MlflowClient(fallback)
    replayed = client.get_run(tracker.store_run_id(first.run_id))
    assert replayed.info.status == "FINISHED" and len(client.get_metric_history(replayed.info.run_id, "loss")) == 40
    assert client.get_run(second.run_id).data.metrics["throughput"] > 0


def test_a_server_that_never_comes_up_fails_the_wait_with_its_own_log(tmp_path):
    """A store `mlflow server` cannot open: the wait ends when the server does, saying what it said."""
    garbage = tmp_path / "not-a-store.db"
    garbage.write_text("this is not a database\n" * 100)
    server = MlflowServer(tmp_path, backend=f"sqlite:///{garbage}")
    try:
        with pytest.raises(RuntimeError, match=r"(?s)exited with status 1 .*file is not a database"):
            server.wait_until_healthy()
    finally:
        server.stop()
