"""Manual parallelism: shard a batch by hand, and measure what the synchronization costs.

A data-parallel step is local work followed by a collective (the gradient
pmean). The collective is a synchronization barrier: no device leaves it before
every device has arrived. Its cost is measured as a difference of medians:

    T_dispatch       = an empty pmapped step (launch and return)
    T_compute        = the step without the collective - T_dispatch
    T_comm           = the same step with the collective - the step without it
    T_step           = T_compute + T_comm + T_dispatch
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from pmap_core.concepts.sharding import ShardPlan, plan_shards, shard_batch
from pmap_core.runtime import DATA_AXIS
from pmap_core.timing import time_call
from pmap_core.validation import check_devices, check_elements, check_int

# Limits of one sweep, which times three programs per device count, `repeats` times each:
# large enough to see the barrier, small enough to stay quick on a shared server.
MAX_SYNC_BATCH = 4_096
MAX_SYNC_FEATURES = 256
MAX_SYNC_HIDDEN = 256
MAX_SYNC_REPEATS = 50
# The step the manual-parallelism lab measures by default (and the communication lab reuses):
# 840 = 2³·3·5·7 splits evenly over every D from 1 to 8.
DEFAULT_BATCH, DEFAULT_FEATURES, DEFAULT_HIDDEN = 840, 64, 64


def loss(params: dict[str, jax.Array], x: jax.Array, y: jax.Array, mask: jax.Array) -> jax.Array:
    """A small two-layer regression; padded samples (mask 0) count for nothing."""
    prediction = jnp.tanh(x @ params["w1"]) @ params["w2"]
    return jnp.sum(mask * (prediction - y) ** 2) / jnp.maximum(jnp.sum(mask), 1.0)


def local_gradients(params, x, y, mask):
    """Each device's gradient of its own shard: no communication."""
    return jax.grad(loss)(params, x, y, mask)


def synced_gradients(params, x, y, mask):
    """The same gradient, then averaged over devices: the barrier every device must reach."""
    return lax.pmean(local_gradients(params, x, y, mask), DATA_AXIS)


def empty_step(params, x, y, mask):
    """Launch and return, nothing else: what dispatch alone costs."""
    return mask


STEPS: dict[str, Callable] = {"dispatch": empty_step, "compute": local_gradients, "step": synced_gradients}


@functools.lru_cache(maxsize=64)
def compiled_step(kind: str, devices: int):
    # Parameters are replicated (in_axes=None); the data has a leading device axis.
    return jax.pmap(STEPS[kind], axis_name=DATA_AXIS, in_axes=(None, 0, 0, 0), devices=jax.devices()[:devices])


@dataclasses.dataclass(frozen=True)
class ManualShards:
    plan: ShardPlan
    global_shape: tuple[int, ...]  # (B, F)
    sharded_shape: tuple[int, ...]  # (D, b, F)


@dataclasses.dataclass(frozen=True)
class SyncRow:
    devices: int
    per_device_batch: int
    dispatch_s: float
    compute_s: float
    comm_s: float
    step_s: float  # the measured step with the collective
    compile_s: float  # of the step with the collective, reported apart


def make_problem(batch: int, features: int, hidden: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, features)).astype(np.float32)
    y = rng.standard_normal(batch).astype(np.float32)
    params = {
        "w1": (rng.standard_normal((features, hidden)) / np.sqrt(features)).astype(np.float32),
        "w2": (rng.standard_normal(hidden) / np.sqrt(hidden)).astype(np.float32),
    }
    return params, x, y


def check_sizes(batch: int, features: int, hidden: int) -> tuple[int, int, int]:
    batch = check_int("batch", batch, 1, MAX_SYNC_BATCH)
    features = check_int("features", features, 1, MAX_SYNC_FEATURES)
    hidden = check_int("hidden", hidden, 1, MAX_SYNC_HIDDEN)
    check_elements("batch x features", batch * features)
    return batch, features, hidden


def manual_shards(batch: int, devices: int, features: int) -> ManualShards:
    """The hand-made reshape (B, F) -> (D, B/D, F); padding when D does not divide B."""
    plan = plan_shards(batch, devices, "pad")
    return ManualShards(plan, (batch, features), (plan.devices, plan.per_device, features))


def measure_step(batch: int, features: int, hidden: int, devices: int, repeats: int = 10) -> SyncRow:
    """Time dispatch, compute and communication of one step on D devices (global batch B fixed)."""
    batch, features, hidden = check_sizes(batch, features, hidden)
    devices = check_devices(devices)
    repeats = check_int("repeats", repeats, 1, MAX_SYNC_REPEATS)
    params, x, y = make_problem(batch, features, hidden)
    plan = plan_shards(batch, devices, "pad")
    xs, mask = shard_batch(x, plan)
    ys, _ = shard_batch(y, plan)
    timings = {kind: time_call(compiled_step(kind, devices), params, xs, ys, mask, repeats=repeats)
               for kind in STEPS}
    dispatch = timings["dispatch"].median_s
    without, with_sync = timings["compute"].median_s, timings["step"].median_s
    return SyncRow(
        devices=devices,
        per_device_batch=plan.per_device,
        dispatch_s=dispatch,
        # Differences of medians can dip below zero in noise; a cost is never negative.
        compute_s=max(without - dispatch, 0.0),
        comm_s=max(with_sync - without, 0.0),
        step_s=with_sync,
        compile_s=timings["step"].compile_s,
    )

