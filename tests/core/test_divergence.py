"""A loss that stops being finite stops the run, says at which step, and is recorded as such; the default
learning rate trains the MLP at every width the training page offers."""

import math

import pytest
from mlflow.tracking import MlflowClient

from harness.processes import new_tracking_store
from pmap_core.tracking.callback import DIVERGED_METRIC, TrackingCallback
from pmap_core.tracking.mlflow_backend import Tracker
from pmap_core.train.config import MAX_HIDDEN, TrainConfig, default_learning_rate, steadier_learning_rate
from pmap_core.train.loop import Diverged, Progress, sweep, train

# Linear regression at η = 10: every step multiplies the error by about 1 − 2η·E[x²] ≈ −5.7, so the loss
# overflows float32 at step 16 (measured: 1.4e36 at step 15), whatever D.
RUNAWAY = TrainConfig(devices=2, global_batch=32, learning_rate=10.0, steps=300, chunk=5)
RUNAWAY_STEP = 16


def test_a_run_stops_at_its_first_chunk_with_a_loss_that_is_not_finite():
    seen = []
    with pytest.raises(Diverged) as raised:
        train(RUNAWAY, [Progress(on_chunk=lambda done, losses: seen.append((done, list(losses))))])
    error = raised.value
    assert (error.code, error.step) == ("diverged", RUNAWAY_STEP)
    # Three whole chunks of finite losses; the fourth (steps 16–20) is where it stopped: nothing after it.
    assert [done for done, _ in seen] == [5, 10, 15]
    assert all(math.isfinite(v) for _, losses in seen for v in losses)
    assert len(error.losses) == RUNAWAY_STEP - 1 and error.losses == tuple(seen[-1][1])
    assert str(error) == ("training diverged at step 16 of 300: the loss stopped being a finite number; "
                          "reduce learning_rate (10 now), e.g. to 0.1")


@pytest.mark.parametrize("devices", [1, 3])
def test_the_step_is_the_same_on_every_device_count(devices):
    with pytest.raises(Diverged) as raised:
        train(TrainConfig(devices=devices, global_batch=30, learning_rate=10.0, steps=40, chunk=40),
              measure_scaling=False)
    assert raised.value.step == RUNAWAY_STEP


def test_a_diverged_run_ends_failed_in_mlflow_with_its_step_and_its_finite_losses(tmp_path):
    store = new_tracking_store(tmp_path / "mlflow.db")
    tracking = TrackingCallback(Tracker(store))
    with pytest.raises(Diverged):
        train(RUNAWAY, [tracking])
    client = MlflowClient(store)
    (run,) = client.search_runs([client.get_experiment_by_name("pmap-lab").experiment_id])
    assert run.info.status == "FAILED"
    assert run.data.metrics[DIVERGED_METRIC] == RUNAWAY_STEP
    losses = client.get_metric_history(run.info.run_id, "loss")
    assert sorted(m.step for m in losses) == list(range(RUNAWAY_STEP - 1))
    assert all(math.isfinite(m.value) for m in losses)


def test_a_diverged_sweep_ends_its_child_and_parent_failed_and_only_the_child_names_the_step(tmp_path):
    store = new_tracking_store(tmp_path / "mlflow.db")
    tracking = TrackingCallback(Tracker(store))
    with pytest.raises(Diverged):
        sweep(RUNAWAY, [1, 2], [tracking])
    client = MlflowClient(store)
    runs = client.search_runs([client.get_experiment_by_name("pmap-lab").experiment_id])
    assert {run.info.status for run in runs} == {"FAILED"} and len(runs) == 2  # the parent and D = 1
    parent = next(run for run in runs if run.data.tags.get("sweep") == "true")
    child = next(run for run in runs if run.data.tags.get("sweep") != "true")
    assert DIVERGED_METRIC not in parent.data.metrics
    assert child.data.metrics[DIVERGED_METRIC] == RUNAWAY_STEP


def test_the_default_learning_rate_falls_as_one_over_the_width_past_32():
    assert default_learning_rate("linear", 1024) == 0.1
    assert [default_learning_rate("mlp", h) for h in (1, 32, 64, 256, 1024)] == [0.1, 0.1, 0.05, 0.0125, 0.003125]
    assert TrainConfig(model="mlp", hidden=256).learning_rate == 0.0125
    assert TrainConfig(model="mlp", hidden=256, learning_rate=0.05).learning_rate == 0.05
    assert steadier_learning_rate(TrainConfig(model="mlp", hidden=256, learning_rate=0.1)) == 0.0125
    assert steadier_learning_rate(TrainConfig(model="mlp", hidden=256, learning_rate=0.01)) == pytest.approx(0.001)


@pytest.mark.parametrize("devices", [1, 3, 8])
def test_the_default_learning_rate_trains_the_widest_mlp_the_page_offers(devices):
    """At η = 0.1 this run diverges at step 15; at its width's default (0.003125) it learns."""
    config = TrainConfig(model="mlp", hidden=MAX_HIDDEN, devices=devices, global_batch=192,
                         steps=150, chunk=50)
    result = train(config, measure_scaling=False)
    assert all(math.isfinite(v) for v in result.losses)
    assert result.final_loss < 0.6 * result.losses[0]  # measured: 0.685 -> 0.369
    assert result.replicas_identical
