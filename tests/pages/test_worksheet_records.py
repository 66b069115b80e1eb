"""A student's worksheet results keep reaching the class after the run they went to is deleted in
MLflow's UI: the session's next check records them in a new run, with no warning."""

from __future__ import annotations

from mlflow.tracking import MlflowClient

from harness.processes import new_tracking_store
from pmap_core.tracking import classroom
from tests.apptest_support import assert_clean, open_lab

STEP_KEY = "worksheet.1_shards.pad_per_device.guess"


def check(at, answer: float):
    at.number_input(key=STEP_KEY).set_value(answer)
    at.button(key="worksheet.check").click().run()
    assert_clean(at)
    assert not at.warning or all("could not be recorded" not in w.value for w in at.warning)
    assert any("Recorded for your class" in c.value for c in at.caption)


def test_results_are_recorded_again_after_the_run_is_deleted(tmp_path, monkeypatch):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    at = open_lab("worksheet", sheet="1_shards", step="pad_per_device")
    at.text_input(key="worksheet.student").set_value("Ada")
    at.text_input(key="worksheet.class_code").set_value("class-9")
    check(at, 3.0)
    client = MlflowClient(uri)
    first = classroom.class_runs("class-9", uri)["run_id"].tolist()
    assert len(first) == 1
    client.delete_run(first[0])  # the teacher clears the class in MLflow's UI

    check(at, 2.0)
    runs = classroom.class_runs("class-9", uri)
    assert runs["run_id"].nunique() == 1 and runs["run_id"][0] != first[0]
    assert runs["result"].tolist() == [0.0]  # the new answer, in the new run
