"""Runs of every implementation compared: a real sqlite MLflow store filled with real runs of pmap,
shard_map and jit (one sweep of every implementation at D = 1, 2) and one run recorded the way runs were
before `impl` was a param; pmap_core.tracking.experiments' frames hold the three with the values MLflow
holds, the filter narrows them, and pmap_core.train.advice reads the sweep's points."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from harness.processes import new_tracking_store
from pmap_core.tracking import experiments
from pmap_core.tracking.callback import TrackingCallback
from pmap_core.tracking.mlflow_backend import CREATION_TAG, Tracker
from pmap_core.train import advice as impl_advice
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import sweep, train
from pmap_core.train.programs import IMPLEMENTATIONS

SWEPT = TrainConfig(model="linear", devices=2, global_batch=32, steps=20, chunk=10)
LEGACY = TrainConfig(model="linear", devices=2, global_batch=64, steps=20, chunk=10)
ALL_THREE = ",".join(IMPLEMENTATIONS)


class TrackerBeforeImpl(Tracker):
    """Records runs as they were recorded before `impl` was a param (every run was pmap then)."""

    def start_run(self, name, params, tags=None, parent_run_id=None):
        return super().start_run(name, {k: v for k, v in params.items() if k != "impl"}, tags, parent_run_id)


@pytest.fixture(scope="module", name="store")
def impl_runs(tmp_path_factory):
    """One store for the module (its uri, the tracked sweep, the legacy run's id); MLFLOW_TRACKING_URI names it."""
    uri = new_tracking_store(tmp_path_factory.mktemp("mlflow-impls") / "mlflow.db")
    tracking = TrackingCallback(Tracker(uri))
    tracked = tracking.tracked_sweep(sweep(SWEPT, [1, 2], [tracking], impls=IMPLEMENTATIONS))
    assert tracked.error is None and tracked.fell_back_to is None
    legacy = TrackingCallback(TrackerBeforeImpl(uri))
    legacy_id = legacy.tracked(train(LEGACY, [legacy])).run_id
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLFLOW_TRACKING_URI", uri)
        yield SimpleNamespace(uri=uri, tracked=tracked, legacy_id=legacy_id)


def children_by_impl(tracked):
    """{(impl, D): (child run id, sweep point)}"""
    return {(p.result.config.impl, p.devices): (run_id, p) for run_id, p in zip(tracked.child_run_ids,
                                                                                   tracked.sweep.points, strict=True)}


def test_the_frame_holds_every_implementation_with_mlflows_values(store):
    uri, tracked, legacy_id = store.uri, store.tracked, store.legacy_id
    runs = experiments.load_runs(uri)
    client = MlflowClient(uri)
    assert "impl" in experiments.RUN_COLUMNS
    children = experiments.sweep_runs(runs, tracked.run_id)
    assert sorted(children["impl"]) == sorted(IMPLEMENTATIONS * 2)
    assert list(children["devices"]) == [1, 1, 1, 2, 2, 2]
    for (impl, devices), (run_id, point) in children_by_impl(tracked).items():
        row = runs[runs["run_id"] == run_id].iloc[0]
        stored = client.get_run(run_id).data
        assert row["impl"] == stored.params["impl"] == impl and row["devices"] == devices
        for name in ("throughput", "steady_throughput", "efficiency", "scaling_ratio", "final_loss"):
            assert row[name] == stored.metrics[name], (impl, devices, name)
        np.testing.assert_allclose(row["steady_throughput"], point.result.steady_throughput, rtol=1e-6)

    parent = runs[runs["run_id"] == tracked.run_id].iloc[0]
    assert parent["is_sweep"] and parent["impl"] == ALL_THREE
    assert experiments.impls_of(parent["impl"]) == IMPLEMENTATIONS
    for impl in IMPLEMENTATIONS:  # the parent's curves against D, one set per implementation
        history = {m.step: m.value for m in client.get_metric_history(tracked.run_id,
                                                                      f"by_D/{impl}/steady_throughput")}
        assert history == {d: client.get_run(children_by_impl(tracked)[impl, d][0]).data.metrics["steady_throughput"]
                           for d in (1, 2)}

    legacy = runs[runs["run_id"] == legacy_id].iloc[0]
    assert "impl" not in client.get_run(legacy_id).data.params  # recorded the old way...
    assert legacy["impl"] == experiments.LEGACY_IMPL == "pmap"  # ...and counted as pmap
    # The tag that finds a run whose creation was retried is on every run, and in no column of the table.
    assert CREATION_TAG in client.get_run(tracked.run_id).data.tags
    assert f"tags.{CREATION_TAG}" not in runs.columns


def test_the_filter_narrows_to_one_implementation(store):
    uri, tracked, legacy_id = store.uri, store.tracked, store.legacy_id
    runs = experiments.load_runs(uri)
    assert experiments.filter_impl(runs, None) is runs
    for impl in IMPLEMENTATIONS:
        kept = experiments.filter_impl(runs, impl)
        expected = {run_id for (i, _), (run_id, _) in children_by_impl(tracked).items() if i == impl}
        expected |= {tracked.run_id} | ({legacy_id} if impl == "pmap" else set())
        assert set(kept["run_id"]) == expected, impl
        assert set(experiments.load_runs(uri, impl=impl)["run_id"]) == expected
    assert experiments.filter_impl(runs, "pjit").empty


def test_the_comparison_puts_the_three_side_by_side(store):
    uri, tracked = store.uri, store.tracked
    runs = experiments.load_runs(uri)
    table = experiments.scaling_table(runs)
    assert tracked.run_id not in set(table["run_id"])
    assert set(table["impl"]) == set(IMPLEMENTATIONS)
    wide = experiments.impl_comparison(table)
    swept = wide[wide["global_batch"] == SWEPT.global_batch]
    assert list(swept["devices"]) == [1, 2]
    assert list(wide.columns[4:7]) == list(IMPLEMENTATIONS)
    for _, row in swept.iterrows():
        measured = {impl: runs[runs["run_id"] == children_by_impl(tracked)[impl, row["devices"]][0]].iloc[0]
                    ["steady_throughput"] for impl in IMPLEMENTATIONS}
        assert {impl: row[impl] for impl in IMPLEMENTATIONS} == measured
        assert row["fastest"] == max(measured, key=measured.get) and row["runs"] == 3
        assert row["pmap_share"] == pytest.approx(measured["pmap"] / max(measured.values()))
    legacy = wide[wide["global_batch"] == LEGACY.global_batch].iloc[0]  # only pmap ran there
    assert legacy["fastest"] == "pmap" and legacy["pmap_share"] == 1.0 and np.isnan(legacy["jit"])
    end_to_end = experiments.impl_comparison(table, "throughput")
    assert end_to_end.loc[0, "jit"] == table[(table["impl"] == "jit") & (table["devices"] == 1)
                                             & (table["global_batch"] == SWEPT.global_batch)]["throughput"].iloc[0]


def test_only_the_plain_step_is_compared_across_implementations():
    """A sharded-state run (jit only: another optimizer or strategy) keeps its own line, out of the comparison."""
    assert experiments.setup_label({}) == experiments.setup_label({"optimizer": "sgd"}) == experiments.PLAIN_SETUP
    assert experiments.setup_label({"optimizer": "adam", "strategy": "zero3", "accum_steps": "4",
                                    "grad_dtype": "bfloat16"}) == "adam · zero3 · K=4 · bfloat16"
    row = {"model": "mlp", "global_batch": 64, "scaling": "strong", "devices": 2}
    table = pd.DataFrame([{**row, "impl": "pmap", "setup": experiments.PLAIN_SETUP, "steady_throughput": 100.0},
                          {**row, "impl": "jit", "setup": experiments.PLAIN_SETUP, "steady_throughput": 80.0},
                          {**row, "impl": "jit", "setup": "adam · zero3", "steady_throughput": 1000.0}])
    wide = experiments.impl_comparison(table)
    assert wide[["pmap", "jit", "fastest", "runs", "pmap_share"]].iloc[0].tolist() == [100.0, 80.0, "pmap", 2, 1.0]
    assert not {"pmap", "jit"} & set(experiments.impl_comparison(table.iloc[2:]).columns)  # nothing to compare


def test_advice_names_the_fastest_and_keeps_a_default_within_ten_percent():
    # The default the advice keeps, or gives up for the fastest, is what a run trains with when no
    # implementation is chosen.
    run_default, other = TrainConfig().impl, next(i for i in IMPLEMENTATIONS if i != TrainConfig().impl)
    kept = impl_advice.advise_at(2, {other: 100.0, run_default: 91.0})
    assert (kept.default, kept.fastest, kept.recommended) == (run_default, other, run_default)
    given_up = impl_advice.advise_at(2, {other: 100.0, run_default: 89.0})
    assert (given_up.default, given_up.recommended) == (run_default, other)
    advice = impl_advice.advise({"pmap": {1: 95.0, 2: 80.0}, "shard_map": {1: 100.0, 2: 100.0},
                                 "jit": {1: 90.0, 2: float("nan")}})
    assert [a.devices for a in advice] == [1, 2]
    one, two = advice
    assert one.fastest == "shard_map" and one.default_ok and one.recommended == "pmap"
    assert one.shortfall == pytest.approx(0.05)
    assert two.fastest == "shard_map" and not two.default_ok and two.recommended == "shard_map"
    assert two.default_share == pytest.approx(0.8) and "jit" not in two.throughputs
    exactly = impl_advice.advise_at(4, {"pmap": 90.0, "jit": 100.0})  # exactly 10% slower: kept
    assert exactly.default_ok
    tie = impl_advice.advise_at(8, {"jit": 100.0, "pmap": 100.0})
    assert tie.fastest == "pmap" and tie.shortfall == 0.0
    unmeasured = impl_advice.advise_at(8, {"jit": 100.0})
    assert unmeasured.default_share is None and not unmeasured.default_ok and unmeasured.recommended == "jit"
    with pytest.raises(ValueError):
        impl_advice.advise_at(2, {"pmap": 0.0})


def test_advice_reads_a_sweeps_points(store):
    tracked = store.tracked
    table = impl_advice.from_points(tracked.sweep.points)
    assert set(table) == set(IMPLEMENTATIONS) and all(set(v) == {1, 2} for v in table.values())
    for advice in impl_advice.advise(table):
        assert advice.fastest_throughput == max(table[i][advice.devices] for i in IMPLEMENTATIONS)
