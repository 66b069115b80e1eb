"""MLflow tracking read back from real sqlite stores, and the fallback when a server does not answer."""

import shutil
import threading
import time

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from harness.processes import empty_tracking_store, free_port
from pmap_core.tracking import NullTracker, experiments, runtime_tags, ui_command
from pmap_core.tracking.callback import TrackingCallback
from pmap_core.tracking.mlflow_backend import Tracker
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import Progress, sweep, train

SMALL = TrainConfig(devices=4, global_batch=64, steps=40, chunk=20)


def train_tracked(config, tracker, on_chunk=None):
    """What the page and the CLI do: train with a tracking callback beside their own."""
    tracking = TrackingCallback(tracker)
    return tracking.tracked(train(config, [tracking, Progress(on_chunk=on_chunk)]))


def sweep_tracked(config, tracker):
    tracking = TrackingCallback(tracker)
    return tracking.tracked_sweep(sweep(config, None, [tracking]))


@pytest.fixture(scope="module", name="template_db")
def empty_store_template():
    return empty_tracking_store()


def fresh_store(template_db, path):
    shutil.copy(template_db, path)
    return "sqlite:///" + str(path)


@pytest.fixture(scope="module")
def store(template_db, tmp_path_factory):
    return fresh_store(template_db, tmp_path_factory.mktemp("mlruns") / "mlflow.db")


def test_a_training_run_is_read_back_with_params_metrics_and_tags(store):
    tracked = train_tracked(SMALL, Tracker(store))
    run = MlflowClient(store).get_run(tracked.run_id)
    assert run.info.status == "FINISHED"
    assert tracked.tracking_uri == store and tracked.fell_back_to is None
    params = run.data.params
    assert (params["model"], params["devices"], params["global_batch"], params["steps"]) == ("linear", "4", "64", "40")
    assert float(params["learning_rate"]) == SMALL.learning_rate and params["scaling"] == "strong"
    metrics = run.data.metrics
    assert metrics["throughput"] == pytest.approx(tracked.result.throughput)
    assert metrics["scaling_ratio"] == pytest.approx(tracked.scaling.scaling_ratio)
    assert metrics["efficiency"] == pytest.approx(tracked.scaling.scaling_ratio / 4)
    # The logged figures reproduce S(D): steady-state throughput at D over the one-device baseline.
    assert metrics["steady_throughput"] / metrics["baseline_throughput"] == pytest.approx(metrics["scaling_ratio"])
    for key in ("step_time_s", "compile_time_s", "final_loss", "baseline_throughput", "hardware_ceiling"):
        assert key in metrics
    history = MlflowClient(store).get_metric_history(tracked.run_id, "loss")
    assert [m.step for m in sorted(history, key=lambda m: m.step)] == list(range(40))
    assert [m.value for m in sorted(history, key=lambda m: m.step)] == pytest.approx(tracked.result.losses)
    assert {k: run.data.tags[k] for k in runtime_tags("training")} == runtime_tags("training")


def test_a_sweep_is_a_parent_run_with_one_child_per_device_count(store):
    tracked = sweep_tracked(TrainConfig(devices=4, global_batch=32, steps=20, chunk=10), Tracker(store))
    client = MlflowClient(store)
    children = [client.get_run(run_id) for run_id in tracked.child_run_ids]
    assert [c.data.params["devices"] for c in children] == ["1", "2", "4"]
    assert all(c.data.tags["mlflow.parentRunId"] == tracked.run_id for c in children)
    by_devices = {m.step: m.value for m in client.get_metric_history(tracked.run_id, "by_D/scaling_ratio")}
    assert by_devices == pytest.approx({p.devices: p.scaling_ratio for p in tracked.sweep.points})
    # The parent carries no figure of a child as its own: no name of its metrics is a training run's.
    parent = client.get_run(tracked.run_id)
    assert parent.data.metrics and not set(parent.data.metrics) & set(children[-1].data.metrics)
    assert parent.info.run_name == "sweep-linear-pmap-strong"
    assert [c.info.run_name for c in children] == ["linear-pmap-D1-B32", "linear-pmap-D2-B32", "linear-pmap-D4-B32"]

    runs = experiments.load_runs(store)
    assert set(tracked.child_run_ids) <= set(runs["run_id"])
    assert experiments.sweep_runs(runs, tracked.run_id)["devices"].tolist() == [1, 2, 4]
    table = experiments.scaling_table(runs)
    assert tracked.run_id not in set(table["run_id"])  # the parent holds no single D
    assert tracked.run_id not in set(experiments.compared_runs(runs)["run_id"])
    parent_row = runs[runs["run_id"] == tracked.run_id].iloc[0]
    assert all(pd.isna(parent_row[name]) for name in ("throughput", "steady_throughput", "scaling_ratio"))
    curves = experiments.loss_histories(tracked.child_run_ids[:2], store)
    assert curves.groupby("run_id").size().tolist() == [20, 20]
    only_mlp = experiments.load_runs(store, model="mlp")
    assert only_mlp.empty


def test_run_names_tell_apart_the_implementation_strategy_mesh_and_pipeline():
    import dataclasses

    from pmap_core.tracking.callback import run_name

    base = TrainConfig(model="mlp", devices=8, global_batch=256)
    runs = [base, dataclasses.replace(base, impl="shard_map"), dataclasses.replace(base, impl="jit"),
            dataclasses.replace(base, impl="jit", optimizer="adam", strategy="zero2"),
            dataclasses.replace(base, impl="tensor", mesh_model=2),
            dataclasses.replace(base, impl="pipeline", layers=8, pipeline_stages=4, microbatches=8, schedule="1f1b"),
            dataclasses.replace(base, scaling="weak"),
            dataclasses.replace(base, model="transformer", layers=3, d_model=16, heads=2, seq_len=8, vocab=16)]
    assert [run_name(config) for config in runs] == [
        "mlp-pmap-D8-B256", "mlp-shard_map-D8-B256", "mlp-jit-D8-B256", "mlp-jit-adam-zero2-D8-B256",
        "mlp-tensor-4x2model-D8-B256", "mlp-pipeline-L8-2x4stage-M8-1f1b-D8-B256", "mlp-pmap-weak-D8-B256",
        "transformer-pmap-L3-d16-h2-T8-V16-D8-B256"]


def test_runs_of_other_labs_do_not_break_the_tables(store):
    tracker = Tracker(store)
    with tracker.run("collectives", {"devices": "1,2,4,8", "ops": "psum"}, {"lab": "comm_benchmark"}) as run_id:
        tracker.log_metrics(run_id, {"psum.D8.seconds": 1e-4}, step=1024)
    runs = experiments.load_runs(store)
    other = runs[runs["run_id"] == run_id].iloc[0]
    assert other["lab"] == "comm_benchmark" and other["params.devices"] == "1,2,4,8"
    assert run_id not in set(experiments.scaling_table(runs)["run_id"])


@pytest.mark.parametrize("interruption, status", [(RuntimeError("boom"), "FAILED"), (KeyboardInterrupt(), "KILLED")])
def test_an_interrupted_run_ends_failed_or_killed_and_keeps_its_losses(store, interruption, status):
    tracker = Tracker(store)

    def stop_after_first_chunk(steps_done, losses):
        raise interruption

    with pytest.raises(type(interruption)):
        train_tracked(SMALL, tracker, on_chunk=stop_after_first_chunk)
    (run_id,) = tracker._runs  # the one run this tracker started
    assert MlflowClient(store).get_run(run_id).info.status == status
    assert len(MlflowClient(store).get_metric_history(run_id, "loss")) == 20


def test_two_sessions_training_at_once_do_not_mix_runs(store):
    results = {}

    def session(rate):
        results[rate] = train_tracked(TrainConfig(devices=2, global_batch=32, steps=20, chunk=5,
                                                  learning_rate=rate), Tracker(store))

    threads = [threading.Thread(target=session, args=(rate,)) for rate in (0.01, 0.2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    client = MlflowClient(store)
    for rate, tracked in results.items():
        run = client.get_run(tracked.run_id)
        assert float(run.data.params["learning_rate"]) == rate
        history = sorted(client.get_metric_history(tracked.run_id, "loss"), key=lambda m: m.step)
        assert [m.value for m in history] == pytest.approx(tracked.result.losses)
    assert results[0.01].result.final_loss != pytest.approx(results[0.2].result.final_loss)


def test_an_unreachable_server_falls_back_to_a_named_local_store_within_seconds(template_db, tmp_path):
    fallback = fresh_store(template_db, tmp_path / "fallback.db")
    start = time.perf_counter()
    tracker = Tracker(f"http://127.0.0.1:{free_port()}", fallback_uri=fallback)
    assert tracker.fell_back_to == fallback and time.perf_counter() - start < 10
    tracked = train_tracked(SMALL, tracker)
    assert tracked.fell_back_to == fallback and tracked.tracking_uri == fallback
    run = MlflowClient(fallback).get_run(tracked.run_id)
    assert run.info.status == "FINISHED" and run.data.metrics["throughput"] == pytest.approx(tracked.result.throughput)


def test_null_tracker_runs_the_same_code_path():
    tracked = train_tracked(SMALL, NullTracker())
    assert tracked.run_id.startswith("null-") and tracked.result.final_loss < tracked.result.losses[0]


def test_ui_command_opens_the_same_store():
    assert ui_command("sqlite:///x.db") == "mlflow ui --backend-store-uri sqlite:///x.db --host 127.0.0.1 --port 5000"


def test_a_run_logged_before_each_program_logged_only_its_own_settings_compares_with_one_after(store):
    """A run logged with every setting flat (before) and one logged with its program's settings only (after) land in
    the same rows of the Experiments page's scaling table: same impl, setup, model, batch, D and throughput."""
    from pmap_core.tracking.callback import run_params
    from pmap_core.train.config import setting_names

    config = TrainConfig(model="mlp", devices=8, global_batch=64)
    before = {**{name: getattr(config, name) for name in setting_names() - {"options", "settings"}},
              "per_device_batch": 8, "mesh_data": 8, "processes": 1}
    after = run_params(config)
    assert "strategy" in before and "strategy" not in after
    tracker = Tracker(store)
    for name, params in (("before", before), ("after", after)):
        run_id = tracker.start_run(name, params, runtime_tags("training"))
        tracker.log_metrics(run_id, {"throughput": 1000.0, "steady_throughput": 1100.0, "scaling_ratio": 1.5,
                                     "efficiency": 1.5 / 8})
        tracker.end_run(run_id)
    table = experiments.scaling_table(experiments.load_runs(store))
    rows = table[table["run_name"].isin(["before", "after"])]
    compared = ["model", "impl", "setup", "scaling", "global_batch", "devices", "steady_throughput", "scaling_ratio"]
    assert len(rows) == 2 and len(rows[compared].drop_duplicates()) == 1
    assert rows["setup"].iloc[0] == experiments.PLAIN_SETUP
