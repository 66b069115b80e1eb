"""The training core against NumPy and single-device references."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pmap_core.runtime import physical_cores
from pmap_core.train import models
from pmap_core.train.config import MAX_WORK, TrainConfig, sweep_configs
from pmap_core.train.loop import Progress, sweep, train
from pmap_core.train.plan import check_sweep, validate
from pmap_core.validation import LabInputError

TINY_MLP = TrainConfig(model="mlp", global_batch=64, hidden=16, features=4, steps=32, chunk=8,
                       learning_rate=0.1, seed=3)


def test_linear_regression_recovers_slope_and_intercept():
    result = train(TrainConfig(devices=8))
    assert result.params["w"] == pytest.approx(3.0, abs=0.01)
    assert result.params["b"] == pytest.approx(1.0, abs=0.01)
    assert len(result.losses) == 300
    assert result.final_loss < 1e-3 < result.losses[0]
    assert result.replicas_identical


@pytest.mark.parametrize("config", [TrainConfig(steps=120), TINY_MLP], ids=["linear", "mlp"])
def test_one_and_eight_devices_agree_for_the_same_global_batch(config):
    one = train(dataclasses.replace(config, devices=1))
    eight = train(dataclasses.replace(config, devices=8))
    for name in one.params:
        np.testing.assert_allclose(eight.params[name], one.params[name], atol=1e-5, rtol=0)
    np.testing.assert_allclose(eight.losses, one.losses, rtol=1e-4, atol=1e-6)
    assert eight.replicas_identical and eight.replica_max_diff == 0.0


def numpy_linear_gd(x, y, learning_rate, steps):
    """Full-batch gradient descent on mean squared error, by hand."""
    w = b = 0.0
    losses = []
    for _ in range(steps):
        error = w * x + b - y
        losses.append(np.mean(error**2))
        w, b = w - learning_rate * 2 * np.mean(error * x), b - learning_rate * 2 * np.mean(error)
    return w, b, losses


@pytest.mark.parametrize("devices", [2, 4])
def test_linear_steps_match_numpy(devices):
    # 25 steps in chunks of 10 also exercises the shorter last chunk.
    config = TrainConfig(devices=devices, global_batch=64, steps=25, chunk=10, learning_rate=0.3, seed=5)
    result = train(config)
    data = models.make_data("linear", 64, 1, seed=5)
    w, b, losses = numpy_linear_gd(data.x[:, 0].astype(np.float64), data.y.astype(np.float64), 0.3, 25)
    np.testing.assert_allclose(result.losses, losses, rtol=1e-4)
    np.testing.assert_allclose([result.params["w"], result.params["b"]], [w, b], rtol=1e-4)


def test_mlp_steps_match_single_device_gradient_descent():
    config = dataclasses.replace(TINY_MLP, devices=4, steps=6, chunk=4)
    result = train(config)
    data = models.make_data("mlp", config.global_batch, config.features, config.seed)
    params = models.init_params("mlp", config.features, config.hidden, config.seed)
    grad = jax.jit(jax.value_and_grad(lambda p, x, y: models.loss("mlp", p, x, y)))
    losses = []
    for _ in range(config.steps):
        loss, grads = grad(params, jnp.asarray(data.x), jnp.asarray(data.y))
        losses.append(float(loss))
        params = jax.tree.map(lambda p, g: p - config.learning_rate * g, params, grads)
    np.testing.assert_allclose(result.losses, losses, rtol=1e-5)
    for name, value in params.items():
        np.testing.assert_allclose(result.params[name], value, rtol=1e-5, atol=1e-6)


def test_chunks_report_progress_and_reruns_do_not_recompile():
    seen = []
    config = TrainConfig(devices=2, steps=30, chunk=12, global_batch=32)
    first = train(config, [Progress(on_chunk=lambda done, losses: seen.append((done, len(losses))))])
    assert seen == [(12, 12), (24, 24), (30, 30)]
    second = train(config)
    assert second.recompiled is False
    assert second.losses == first.losses
    assert first.compile_time_s > 0 and first.timed_s > 0
    assert first.throughput == pytest.approx(30 * 32 / first.timed_s)


def test_measure_scaling_definitions():
    strong = train(TrainConfig(devices=4, global_batch=64, steps=20, chunk=10)).scaling
    assert strong.baseline_global_batch == 64
    assert strong.scaling_ratio == pytest.approx(strong.steady_throughput / strong.baseline_throughput)
    assert strong.efficiency == pytest.approx(strong.scaling_ratio / 4)
    assert strong.hardware_ceiling == min(4, physical_cores())
    weak = train(TrainConfig(devices=4, global_batch=64, steps=20, chunk=10, scaling="weak")).scaling
    assert weak.mode == "weak" and weak.baseline_global_batch == 16


def test_strong_sweep_runs_every_device_count_on_the_same_problem():
    result = sweep(TrainConfig(devices=8, global_batch=64, steps=40, chunk=20))
    assert [p.devices for p in result.points] == [1, 2, 4, 8]
    assert result.points[0].scaling_ratio == 1.0
    base = result.points[0].result
    for point in result.points[1:]:
        assert point.scaling_ratio == pytest.approx(point.result.steady_throughput / base.steady_throughput)
        np.testing.assert_allclose(point.result.params["w"], base.params["w"], atol=1e-5)


def test_weak_sweep_keeps_the_per_device_batch():
    configs = sweep_configs(TrainConfig(devices=4, global_batch=64, scaling="weak"))
    assert [(c.devices, c.global_batch) for c in configs] == [(1, 16), (2, 32), (4, 64)]


@pytest.mark.parametrize("changes, code", [
    ({"global_batch": 100, "devices": 8}, "batch_not_divisible"),
    ({"model": "cnn"}, "unknown_model"),
    ({"scaling": "diagonal"}, "unknown_scaling"),
    ({"steps": 0}, "out_of_range"),
    ({"devices": 99}, "too_many_devices"),
    ({"learning_rate": float("nan")}, "not_a_number"),
    ({"model": "mlp", "global_batch": 16384, "hidden": 1024, "features": 64, "steps": 5000}, "too_much_work"),
])
def test_bad_settings_are_refused_with_a_code(changes, code):
    with pytest.raises(LabInputError) as error:
        validate(dataclasses.replace(TrainConfig(), **changes))
    assert error.value.code == code


def test_the_work_limit_allows_the_benchmark_sizes():
    validate(TrainConfig(model="mlp", devices=2, global_batch=4096, hidden=512, steps=300))
    work = 300 * 4096 * (8 * 512 + 512)
    assert work < MAX_WORK

def test_a_weak_sweep_checks_the_larger_batches_of_its_runs():
    config = validate(TrainConfig(devices=2, global_batch=65_536, scaling="weak"))
    check_sweep(config, [1, 2])  # no run larger than the config itself
    with pytest.raises(LabInputError) as error:
        check_sweep(config, [1, 2, 4])  # D = 4 would need a global batch of 131,072
    assert error.value.code == "out_of_range"
