"""grad inside pmap: per-device gradients, their pmean, and the all-reduces XLA keeps.

- `grad` of each device's shard followed by `lax.pmean` is the full-batch
  gradient (every shard the same size), checked against one device.
- One `pmean` per parameter array is what the code says; XLA fuses them into
  a single tuple all-reduce, counted in the traced and the compiled program.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from pmap_core import hlo
from pmap_core.runtime import DATA_AXIS
from pmap_core.train.models import linear_loss
from pmap_core.validation import check_devices, check_int, check_seed

MAX_PER_DEVICE_BATCH = 512
MAX_LAYERS = 8
MAX_WIDTH = 1_024  # hidden width of the all-reduce counting model


# --- grad inside pmap ----------------------------------------------------------


def _local_and_mean_grads(params: dict, x: jax.Array, y: jax.Array):
    local = jax.grad(linear_loss)(params, x, y)  # this device's shard only
    return local, lax.pmean(local, DATA_AXIS)  # the average every device then uses


@functools.cache
def _pmapped_grads(devices: int):
    return jax.pmap(_local_and_mean_grads, axis_name=DATA_AXIS, in_axes=(None, 0, 0),
                    devices=jax.devices()[:devices])


@dataclasses.dataclass(frozen=True)
class GradCheck:
    devices: int
    global_batch: int
    params: dict[str, float]  # where the gradient is taken
    per_device: dict[str, tuple[float, ...]]  # each device's gradient on its shard
    averaged: dict[str, tuple[float, ...]]  # after pmean, as seen on each device
    full_batch: dict[str, float]  # jax.grad on the whole batch, one device
    max_abs_error: float  # |averaged - full_batch| over every device and parameter


def grad_in_pmap(devices: int, per_device_batch: int = 4, seed: int = 0) -> GradCheck:
    """Gradients of y = 3x + 1 regression per device, averaged with pmean, against one device."""
    devices = check_devices(devices)
    per_device_batch = check_int("per_device_batch", per_device_batch, 1, MAX_PER_DEVICE_BATCH)
    seed = check_seed(seed)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (devices, per_device_batch)).astype(np.float32)
    y = (3 * x + 1 + 0.1 * rng.standard_normal(x.shape)).astype(np.float32)
    params = {"w": jnp.float32(0.5), "b": jnp.float32(-0.5)}
    local, mean = _pmapped_grads(devices)(params, x, y)
    full = jax.grad(linear_loss)(params, jnp.asarray(x.reshape(-1)), jnp.asarray(y.reshape(-1)))
    error = max(float(np.max(np.abs(np.asarray(mean[k]) - np.asarray(full[k])))) for k in params)
    as_tuple = lambda tree: {k: tuple(float(v) for v in np.asarray(tree[k])) for k in params}  # noqa: E731
    return GradCheck(devices, devices * per_device_batch, {k: float(v) for k, v in params.items()},
                     as_tuple(local), as_tuple(mean), {k: float(v) for k, v in full.items()}, error)


# --- XLA fuses the gradient all-reduces ----------------------------------------


def mlp_loss(params: list, x: jax.Array, y: jax.Array) -> jax.Array:
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = jnp.tanh(h)
    return jnp.mean((h - y) ** 2)


def mean_grad_step(params: list, x: jax.Array, y: jax.Array) -> list:
    """One pmean per parameter array, as written; XLA decides how many all-reduces run."""
    grads = jax.grad(mlp_loss)(params, x, y)
    return jax.tree.map(lambda g: lax.pmean(g, DATA_AXIS), grads)


@dataclasses.dataclass(frozen=True)
class AllReduceCount:
    devices: int
    layers: int
    parameter_arrays: int
    traced: int  # all-reduces in the program JAX hands to XLA
    compiled: int  # all-reduces left after XLA's optimisation
    compiled_lines: tuple[str, ...]  # the all-reduce instructions, shortened


def count_all_reduces(devices: int, layers: int = 3, width: int = 16) -> AllReduceCount:
    devices = check_devices(devices)
    layers = check_int("layers", layers, 1, MAX_LAYERS)
    width = check_int("width", width, 1, MAX_WIDTH)
    sizes = [4] + [width] * (layers - 1) + [1]
    params = [(jnp.ones((a, b)) / a, jnp.zeros(b)) for a, b in itertools.pairwise(sizes)]
    x, y = jnp.ones((devices, 8, 4)), jnp.ones((devices, 8, 1))
    step = jax.pmap(mean_grad_step, axis_name=DATA_AXIS, in_axes=(None, 0, 0), devices=jax.devices()[:devices])
    lowered = step.lower(params, x, y)
    compiled = hlo.all_reduces(lowered.compile().as_text())
    return AllReduceCount(devices, layers, 2 * layers, lowered.as_text().count('"stablehlo.all_reduce"'),
                          len(compiled), tuple(compiled))
