"""The synchronization-cost measurement of the manual-parallelism lab: structure and sanity, never timing thresholds."""

import jax
import numpy as np
import pytest

from pmap_core import LabInputError
from pmap_core.concepts.manual_parallelism import (
    compiled_step,
    local_gradients,
    make_problem,
    manual_shards,
    measure_step,
)
from pmap_core.concepts.sharding import plan_shards, shard_batch


def test_one_sane_row_per_device_count_as_the_page_sweeps_them():
    rows = [measure_step(batch=30, features=4, hidden=4, devices=d, repeats=2) for d in (1, 2, 3)]
    assert [row.devices for row in rows] == [1, 2, 3]
    assert [row.per_device_batch for row in rows] == [30, 15, 10]
    for row in rows:
        assert row.step_s > 0 and row.dispatch_s > 0 and row.compile_s >= 0


def _fake_medians(monkeypatch, medians):
    """Stand in for the clock: each of the three programs takes the given median, so the split is checkable."""
    import pmap_core.concepts.manual_parallelism as sync_cost
    from pmap_core.timing import Timing

    def time_call(fn, *args, repeats=5):
        kind = next(k for k in sync_cost.STEPS if sync_cost.compiled_step(k, args[1].shape[0]) is fn)
        return Timing(first_call_s=medians[kind] + 0.5, samples_s=(medians[kind],) * repeats)

    monkeypatch.setattr(sync_cost, "time_call", time_call)


def test_step_time_splits_into_dispatch_compute_and_comm_that_add_up(monkeypatch):
    """T_step = T_dispatch + T_compute + T_comm, each the difference of the medians the docstring names."""
    _fake_medians(monkeypatch, {"dispatch": 0.001, "compute": 0.004, "step": 0.0065})
    row = measure_step(batch=16, features=4, hidden=4, devices=2, repeats=3)
    assert row.dispatch_s == pytest.approx(0.001) and row.compute_s == pytest.approx(0.003)
    assert row.comm_s == pytest.approx(0.0025) and row.step_s == pytest.approx(0.0065)
    assert row.dispatch_s + row.compute_s + row.comm_s == pytest.approx(row.step_s, rel=1e-12)
    assert row.compile_s == pytest.approx(0.5)


def test_noise_that_makes_a_difference_negative_is_clamped_to_zero_not_hidden_elsewhere(monkeypatch):
    # The synced step measured faster than the unsynced one: noise. comm is 0; compute and dispatch are kept.
    _fake_medians(monkeypatch, {"dispatch": 0.001, "compute": 0.004, "step": 0.0035})
    row = measure_step(batch=16, features=4, hidden=4, devices=2, repeats=3)
    assert row.comm_s == 0.0 and row.compute_s == pytest.approx(0.003) and row.step_s == pytest.approx(0.0035)


@pytest.mark.parametrize("devices", [2, 4])
def test_the_timed_programs_differ_by_exactly_the_gradient_all_reduce(devices):
    """comm is the synced step minus the unsynced one: only the former holds an all-reduce (here, fused)."""
    from pmap_core.hlo import all_reduces

    params, x, y = make_problem(8 * devices, 4, 4)
    plan = plan_shards(8 * devices, devices, "pad")
    xs, mask = shard_batch(x, plan)
    ys, _ = shard_batch(y, plan)
    counts = {kind: len(all_reduces(compiled_step(kind, devices).lower(params, xs, ys, mask).compile().as_text()))
              for kind in ("dispatch", "compute", "step")}
    assert counts == {"dispatch": 0, "compute": 0, "step": 1}


def test_synced_gradient_is_the_global_gradient():
    """pmean of per-device gradients over equal shards = the gradient on the whole batch."""
    params, x, y = make_problem(12, 3, 5, seed=2)
    plan = plan_shards(12, 4, "pad")
    xs, mask = shard_batch(x, plan)
    ys, _ = shard_batch(y, plan)
    synced = compiled_step("step", 4)(params, xs, ys, mask)
    whole = local_gradients(params, x, y, np.ones(12, np.float32))
    for name in params:
        for device in range(4):
            np.testing.assert_allclose(synced[name][device], whole[name], rtol=1e-4, atol=1e-6)


def test_manual_shards_pad_to_a_multiple_of_devices():
    shards = manual_shards(10, 4, 7)
    assert shards.global_shape == (10, 7) and shards.sharded_shape == (4, 3, 7)
    assert shards.plan.padded == 2


@pytest.mark.parametrize("kwargs, code", [
    (dict(batch=0, features=4, hidden=4, devices=1), "out_of_range"),
    (dict(batch=8, features=10_000, hidden=4, devices=1), "out_of_range"),
    (dict(batch=8, features=4, hidden=4, devices=jax.device_count() + 1), "too_many_devices"),
    (dict(batch=8, features=4, hidden=4, devices=1, repeats=10_000), "out_of_range"),
])
def test_limits_are_enforced(kwargs, code):
    with pytest.raises(LabInputError) as error:
        measure_step(**kwargs)
    assert error.value.code == code
