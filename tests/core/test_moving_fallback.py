"""Moving a fallback store's runs back into the class store (pmap_core.tracking.moving), on real sqlite
stores written by the lab's own tracker: a sweep keeps its shape (children under their moved parent),
every metric point keeps its step and time, open runs wait, and a second move copies nothing."""

from mlflow.tracking import MlflowClient

from pmap_core.tracking import EXPERIMENT
from pmap_core.tracking.mlflow_backend import Tracker
from pmap_core.tracking.moving import MOVED_FROM_TAG, PARENT_TAG, move_fallback_runs
from tests.core.test_tracking_stores import fresh_store


def _history(uri: str, run_id: str, key: str) -> list[tuple[int, int, float]]:
    return sorted((m.step, m.timestamp, m.value) for m in MlflowClient(uri).get_metric_history(run_id, key))


def test_a_sweep_moves_back_whole_and_only_once(tmp_path):
    fallback = fresh_store(tmp_path / "fallback.db")
    store = fresh_store(tmp_path / "mlflow.db")
    tracker = Tracker(fallback, fallback_uri=fresh_store(tmp_path / "unused.db"))
    with tracker.run("sweep", {"devices": "1,3"}) as parent:
        children = []
        for devices in (1, 3):
            with tracker.run(f"D{devices}", {"devices": devices}, parent_run_id=parent) as child:
                tracker.log_series(child, "loss", [1.0 / (step + devices) for step in range(1500)])
                tracker.log_metrics(child, {"throughput": 10.0 * devices})
                children.append(child)
    still_open = tracker.start_run("open", {"devices": 5})

    report = move_fallback_runs(fallback, store)
    assert [old for old, _ in report.moved] == [parent, *children] and report.still_open == [still_open]
    new = dict(report.moved)
    client = MlflowClient(store)
    for child in children:
        copy = client.get_run(new[child])
        assert copy.data.tags[PARENT_TAG] == new[parent] and copy.data.tags[MOVED_FROM_TAG] == child
        assert copy.info.status == "FINISHED" and copy.info.experiment_id == client.get_experiment_by_name(
            EXPERIMENT).experiment_id
        assert _history(store, new[child], "loss") == _history(fallback, child, "loss")  # 1500 points
        assert copy.data.params == MlflowClient(fallback).get_run(child).data.params

    again = move_fallback_runs(fallback, store)
    assert again.moved == [] and sorted(again.already) == sorted(report.moved)
    tracker.end_run(still_open)
    last = move_fallback_runs(fallback, store)
    assert [old for old, _ in last.moved] == [still_open] and len(last.already) == 3
