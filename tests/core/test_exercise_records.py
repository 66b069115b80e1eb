"""A session keeps the id of the run its worksheet results go to. When that run is gone — deleted in
MLflow's UI, or the store reset or replaced — the next results go to a new run, not to an error."""

from __future__ import annotations

from mlflow.tracking import MlflowClient

from harness.processes import new_tracking_store
from pmap_core.tracking import classroom

TAGS = classroom.class_tags("Ada", "class-7")


def steps(run_id: str, uri: str) -> dict[str, float]:
    run = MlflowClient(uri).get_run(run_id)
    assert run.info.lifecycle_stage == "active" and run.info.status == "FINISHED"
    return {k: v for k, v in run.data.metrics.items() if k.startswith(classroom.STEP_METRIC)}


def test_results_go_on_to_the_same_run(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    first = classroom.record_exercise("s", {"a": True}, TAGS, uri=uri)
    again = classroom.record_exercise("s", {"a": True, "b": False}, TAGS, run_id=first, uri=uri)
    assert again == first
    assert steps(first, uri) == {"step.a": 1.0, "step.b": 0.0}


def test_after_the_run_is_deleted_results_go_to_a_new_run(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    first = classroom.record_exercise("s", {"a": True}, TAGS, uri=uri)
    MlflowClient(uri).delete_run(first)
    second = classroom.record_exercise("s", {"a": True, "b": True}, TAGS, run_id=first, uri=uri)
    assert second != first
    assert steps(second, uri) == {"step.a": 1.0, "step.b": 1.0}
    assert classroom.record_exercise("s", {"c": False}, TAGS, run_id=second, uri=uri) == second
    tags = MlflowClient(uri).get_run(second).data.tags
    assert (tags["student"], tags["class_code"], tags["sheet"]) == ("Ada", "class-7", "s")


def test_after_the_store_is_reset_results_go_to_a_new_run(tmp_path):
    old = new_tracking_store(tmp_path / "old.db")
    first = classroom.record_exercise("s", {"a": True}, TAGS, uri=old)
    fresh = new_tracking_store(tmp_path / "fresh.db")  # the store the server uses now: the id is unknown there
    second = classroom.record_exercise("s", {"a": False}, TAGS, run_id=first, uri=fresh)
    assert steps(second, fresh) == {"step.a": 0.0}
    assert len(classroom.class_runs("class-7", fresh)) == 1
