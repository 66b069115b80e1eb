"""The lab's MLflow experiment opens in MLflow's model-training view: tagged when the lab creates it, and
when an earlier version of the lab created it untagged."""

from __future__ import annotations

from mlflow.tracking import MlflowClient

from harness.processes import new_tracking_store
from pmap_core.tracking import EXPERIMENT
from pmap_core.tracking.mlflow_backend import Tracker

EXPERIMENT_KIND = ("mlflow.experimentKind", "custom_model_development")


def test_the_lab_experiment_opens_as_model_training(tmp_path):
    """Read back from a real sqlite store: created by the lab, and found untagged."""
    uri = new_tracking_store(tmp_path / "mlflow.db")
    tracker = Tracker(uri)
    tracker.end_run(tracker.start_run("tagged", {}), "FINISHED")
    tags = MlflowClient(uri).get_experiment_by_name(EXPERIMENT).tags
    assert tags.get(EXPERIMENT_KIND[0]) == EXPERIMENT_KIND[1], tags

    old = new_tracking_store(tmp_path / "old.db")
    MlflowClient(old).create_experiment(EXPERIMENT)  # as an earlier version of the lab made it
    tracker = Tracker(old)
    tracker.end_run(tracker.start_run("found", {}), "FINISHED")
    tags = MlflowClient(old).get_experiment_by_name(EXPERIMENT).tags
    assert tags.get(EXPERIMENT_KIND[0]) == EXPERIMENT_KIND[1], tags
