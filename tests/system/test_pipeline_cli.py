"""The issue's acceptance commands as a user types them, each in a process of its own on the default 8
simulated devices: `train --model mlp --layers 4 --pipeline-stages 4 --microbatches 8 --schedule gpipe
--json` and `--schedule 1f1b` end within 1e-5 of `--layers 4 --devices 4` (data parallelism) at their
defaults (300 steps at η = 0.1), report bubble_fraction = 3/11, and log it to MLflow, read back from the
store. (The parameters are compared at the same defaults in tests/core/test_pipeline.py.)"""

import json

import pytest
from mlflow.tracking import MlflowClient

from harness.processes import new_tracking_store, run_python

COMMON = ["-m", "pmap_core", "train", "--model", "mlp", "--layers", "4"]
PIPELINED = ["--pipeline-stages", "4", "--microbatches", "8"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return new_tracking_store(tmp_path_factory.mktemp("pipeline") / "mlflow.db")


def train(store, *args, cwd):
    """The command, tracked where MLFLOW_TRACKING_URI says (the command line stays the issue's own)."""
    done = run_python([*COMMON, *args, "--json"], cwd=cwd, devices=8, env={"MLFLOW_TRACKING_URI": store},
                      timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def data_parallel(store, tmp_path_factory):
    return train(store, "--devices", "4", cwd=tmp_path_factory.mktemp("dp"))


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_the_acceptance_command_ends_where_data_parallelism_does(schedule, store, data_parallel, tmp_path):
    piped = train(store, *PIPELINED, "--schedule", schedule, cwd=tmp_path)
    assert (piped["impl"], piped["devices"], piped["pipeline_stages"], piped["microbatches"], piped["schedule"]) == (
        "pipeline", 4, 4, 8, schedule)
    assert piped["steps"] == data_parallel["steps"] == 300
    assert piped["final_loss"] == pytest.approx(data_parallel["final_loss"], rel=1e-5)
    assert piped["bubble_fraction"] == pytest.approx(3 / 11, abs=1e-12)
    assert "bubble_fraction" not in data_parallel

    run = MlflowClient(store).get_run(piped["run_id"])
    assert run.info.status == "FINISHED"
    assert run.data.metrics["bubble_fraction"] == pytest.approx(3 / 11, abs=1e-12)
    assert run.data.metrics["final_loss"] == pytest.approx(piped["final_loss"])
    assert (run.data.params["impl"], run.data.params["schedule"], run.data.params["microbatches"]) == (
        "pipeline", schedule, "8")
    assert "bubble_fraction" not in MlflowClient(store).get_run(data_parallel["run_id"]).data.metrics
