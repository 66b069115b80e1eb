"""Sharding a batch with the error/drop/pad policies, the parallel mean, and shard ownership."""

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmap_core import LabInputError
from pmap_core.concepts.sharding import (
    device_inventory,
    map_leading_axis,
    parallel_mean,
    per_sample_loss,
    plan_shards,
    sample_batch,
    shard_batch,
)


def test_even_split_under_every_policy():
    for policy in ("error", "drop", "pad"):
        plan = plan_shards(12, 4, policy)
        assert (plan.per_device, plan.dropped, plan.padded) == (3, 0, 0)
        assert plan.owner == (0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3)


def test_error_policy_names_the_nearest_sizes():
    with pytest.raises(LabInputError) as error:
        plan_shards(13, 4, "error")
    assert error.value.code == "not_divisible"
    assert error.value.params["nearest"] == "12, 16"
    with pytest.raises(LabInputError) as error:
        plan_shards(3, 4, "error")
    assert error.value.params["nearest"] == "4"


def test_drop_keeps_the_head_and_pad_masks_the_tail():
    drop = plan_shards(13, 4, "drop")
    assert (drop.per_device, drop.dropped, drop.kept, drop.owner[-1]) == (3, 1, 12, -1)
    pad = plan_shards(13, 4, "pad")
    assert (pad.per_device, pad.padded, pad.kept) == (4, 3, 13)
    x = np.arange(13, dtype=np.float32)[:, None]
    shards, mask = shard_batch(x, pad)
    assert shards.shape == (4, 4, 1)
    np.testing.assert_array_equal(mask.ravel(), [1] * 13 + [0] * 3)
    np.testing.assert_array_equal(shards.ravel()[:13], np.arange(13))


def test_drop_with_fewer_samples_than_devices_is_refused():
    with pytest.raises(LabInputError) as error:
        plan_shards(3, 4, "drop")
    assert error.value.code == "nothing_left"
    assert plan_shards(3, 4, "pad").padded == 1


@pytest.mark.parametrize("batch, devices, policy, code", [
    (0, 2, "pad", "out_of_range"),
    (-5, 2, "pad", "out_of_range"),
    (10**9, 2, "pad", "out_of_range"),
    (8, 99, "pad", "too_many_devices"),
    (8, 2, "round", "unknown_policy"),
])
def test_bad_inputs(batch, devices, policy, code):
    with pytest.raises(LabInputError) as error:
        plan_shards(batch, devices, policy)
    assert error.value.code == code


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 300), devices=st.integers(1, 8), policy=st.sampled_from(["drop", "pad"]))
def test_plans_cover_every_kept_sample_once(batch, devices, policy):
    if policy == "drop" and batch < devices:
        return
    plan = plan_shards(batch, devices, policy)
    assert plan.per_device * devices == plan.kept + plan.padded
    kept = [d for d in plan.owner if d >= 0]
    assert len(kept) == plan.kept and kept == sorted(kept)
    assert all(kept.count(d) <= plan.per_device for d in range(devices))


@pytest.mark.parametrize("batch, devices, policy", [(12, 4, "error"), (13, 4, "drop"), (13, 4, "pad"),
                                                    (5, 8, "pad"), (7, 1, "error"), (64, 8, "pad")])
def test_parallel_mean_equals_numpy_over_the_kept_samples(batch, devices, policy):
    result = parallel_mean(batch, devices, policy, features=3, seed=batch)
    x = sample_batch(batch, 3, batch)[: result.plan.kept]
    expected = float(np.mean(np.mean(x.astype(np.float64) ** 2, axis=-1)))
    assert result.parallel_mean == pytest.approx(expected, rel=1e-5)
    assert result.single_device_mean == pytest.approx(expected, rel=1e-5)
    assert result.max_abs_diff < 1e-5
    assert sum(result.device_counts) == result.plan.kept
    assert sum(result.device_sums) == pytest.approx(float(np.sum(per_sample_loss(x))), rel=1e-4)


def test_device_inventory_lists_every_device():
    inventory = device_inventory()
    assert [row.id for row in inventory.rows] == [d.id for d in jax.devices()]
    assert inventory.local_device_count == jax.local_device_count() == 8


@pytest.mark.parametrize("devices", [1, 3, 8])
def test_each_output_slice_is_read_back_from_its_device(devices):
    mapping = map_leading_axis(devices, 5)
    assert mapping.input_shape == mapping.output_shape == (devices, 5)
    assert mapping.per_device_shape == (5,)
    assert mapping.in_device_order
    for position, owner in enumerate(mapping.owners):
        assert owner.device_id == jax.devices()[position].id
        # One device holds the whole array, so its slice is the full range.
        assert owner.index == ("[:, :]" if devices == 1 else f"[{position}:{position + 1}, :]")
        expected = np.arange(position * 5, position * 5 + 5) + 1000 * position
        np.testing.assert_array_equal(owner.values, expected)
