"""The profiler trace on the pages: nothing traced before the button; a trace shown as a timeline and tables, logged
to the page's MLflow run; the straggler and the pipeline's bubble read from their traces."""

import mlflow
import pytest

from pmap_core.tracking import store_uri
from tests.apptest_support import assert_clean, open_lab


@pytest.mark.parametrize(("devices", "lang"), [(3, "zh")])
def test_a_trace_of_the_trained_run_is_shown_and_logged_to_it(store, devices, lang):
    at = open_lab("training", lang=lang, devices=devices, batch=12, steps=20)
    assert "training.trace" not in at.session_state  # nothing is traced before the visitor asks
    at.button(key="training.train").click().run()
    at.button(key="training.trace.button").click().run()
    assert_clean(at)
    shown = at.session_state["training.trace"]
    trace = shown["profile"].trace
    assert trace.devices == tuple(range(devices))
    assert shown["logged"] and shown["log_error"] is None
    run_id = at.session_state["training.last_run"].run_id
    client = mlflow.MlflowClient(store_uri(store))
    listed = client.list_artifacts(run_id, "profile/plugins/profile")
    assert len(listed) == 1
    files = {f.path.rsplit("/", 1)[-1] for f in client.list_artifacts(run_id, listed[0].path)}
    assert "perfetto_trace.json.gz" in files and any(name.endswith(".xplane.pb") for name in files)
    totals = next(frame.value for frame in at.dataframe if "设备" in frame.value.columns)
    assert list(totals["设备"]) == list(range(devices))


def test_the_straggler_experiment_shows_the_others_waiting(store):
    at = open_lab("training", devices=3, batch=12)
    at.button(key="training.straggler.button").click().run()
    assert_clean(at)
    points = at.session_state["training.straggler"]
    assert [p.work for p in points] == [0, 200, 800]


def test_the_pipeline_page_reads_its_bubble_from_a_trace(store):
    at = open_lab("pipeline", devices=2, stages=2, layers=2, microbatches=4)
    at.button(key="pipeline.bubble.button").click().run()
    assert_clean(at)
    read = at.session_state["pipeline.bubble"]
    assert [s.idle_share for s in read.per_stage] == pytest.approx([read.schedule_bubble] * 2)
