"""The synchronization-cost sweep: structure and sanity, never timing thresholds."""

import jax
import numpy as np
import pytest

from pmap_core import LabInputError
from pmap_core.sharding import plan_shards, shard_batch
from pmap_core.sync_cost import (
    compiled_step,
    local_gradients,
    make_problem,
    manual_shards,
    measure_step,
    measure_sync_cost,
)


def test_sweep_has_one_sane_row_per_device_count():
    cost = measure_sync_cost(batch=30, features=4, hidden=4, max_devices=3, repeats=2)
    assert [row.devices for row in cost.rows] == [1, 2, 3]
    assert [row.per_device_batch for row in cost.rows] == [30, 15, 10]
    for row in cost.rows:
        assert row.step_s > 0 and row.dispatch_s > 0 and row.compile_s >= 0
        assert row.compute_s >= 0 and row.comm_s >= 0
        assert row.dispatch_s + row.compute_s + row.comm_s >= row.step_s * (1 - 1e-9)


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
