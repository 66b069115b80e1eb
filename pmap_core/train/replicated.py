"""One training chunk — `steps` data-parallel SGD steps inside `lax.scan` — written three ways.

- `pmap`: the legacy API. Inputs carry a leading device axis (D, B/D, …); each device's body sees
  its block without that axis and averages gradients with `lax.pmean` over `axis_name`.
- `shard_map`: `jax.shard_map` over a 1-D mesh. The batch (B, …) is split with `P('data')`, so the
  body sees (B/D, …) — the same rank as the global array; params are `P()`, one value everywhere.
  With `check_vma=True` (the default) autodiff already *sums* the gradient of a `P()` input over
  the devices; casting the params to "varying" first gives per-device gradients, and `pmean` then
  gives the true mean (the shard_map trap on the mistakes page).
- `jit`: no per-device body and no collective in the code. The step is written over the global
  batch, seen as D blocks; the inputs' shardings (`NamedSharding(mesh, P('data'))` for the batch,
  `P()` for params) tell the compiler to split the work, and it inserts the all-reduce itself.

All three run the same arithmetic: the same parameters after the same steps. Each step has one
collective: the all-reduce of every gradient in one flat buffer (on CPU, each array of a
multi-array all-reduce is a rendezvous of its own; for the MLP's four arrays that tripled the
step). The loss curve needs none: every device returns the loss on its own block, (D, steps) per
call, and the host averages them (`train_program.step_losses`): with equal blocks, the mean of
the block means is the loss over the global batch. (A `pmean` of the loss inside the step would
be a second all-reduce every step; on CPU it cost as much as the first.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax
from jax.flatten_util import ravel_pytree
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.runtime import DATA_AXIS
from pmap_core.train import models
from pmap_core.train.steps import data_parallel_sgd_step, mean_gradient, sgd_update

IMPLEMENTATIONS = ("pmap", "shard_map", "jit")


def data_mesh(devices: int) -> Mesh:
    """A 1-D mesh of the first `devices` devices, its one axis named DATA_AXIS."""
    return jax.make_mesh((devices,), (DATA_AXIS,), devices=jax.devices()[:devices])


def _scanned(step: Callable[..., tuple[Any, jax.Array]], steps: int) -> Callable[..., tuple[Any, jax.Array]]:
    """`steps` calls of step(params, x, y, learning_rate) -> (params, loss), as one `lax.scan`."""
    def run(params, x, y, learning_rate):
        return lax.scan(lambda p, _: step(p, x, y, learning_rate), params, None, length=steps)

    return run


def pmap_chunk(model: str, steps: int, devices: tuple[Any, ...]) -> Callable[..., Any]:
    """params and batch with a leading device axis; returns (params, losses), each (D, …)."""
    loss_fn = functools.partial(models.loss, model)

    def step(params, x, y, learning_rate):
        return data_parallel_sgd_step(loss_fn, params, x, y, learning_rate)  # this device's loss

    return jax.pmap(_scanned(step, steps), axis_name=DATA_AXIS, in_axes=(0, 0, 0, None), devices=devices)


def shard_map_chunk(model: str, steps: int, mesh: Mesh) -> Callable[..., Any]:
    """params `P()`, batch `P('data')` with global shapes; returns (params `P()`, losses (D, steps))."""
    loss_fn = functools.partial(models.loss, model)

    def step(params, x, y, learning_rate):
        varying = lax.pcast(params, DATA_AXIS, to="varying")  # per-device gradients, not their sum
        loss, grads = mean_gradient(loss_fn, varying, x, y)
        return sgd_update(params, grads, learning_rate), loss

    def run(params, x, y, learning_rate):
        params, losses = _scanned(step, steps)(params, x, y, learning_rate)
        return params, losses[None]  # (1, steps) here: one row per device in the global (D, steps)

    body = jax.shard_map(run, mesh=mesh, in_specs=(P(), P(DATA_AXIS), P(DATA_AXIS), P()),
                         out_specs=(P(), P(DATA_AXIS)))
    return jax.jit(body)


def jit_chunk(model: str, steps: int, mesh: Mesh) -> Callable[..., Any]:
    """The global-batch step; the shardings of the inputs decide what runs where. Returns (params,
    losses (D, steps)), row i the loss on device i's block."""
    loss_fn = functools.partial(models.loss, model)
    blocks = mesh.shape[DATA_AXIS]

    def step(params, x, y, learning_rate):
        # The batch as D blocks of B/D rows, block i where device i holds it (a split; no data moves).
        # The gradient on each block, flattened, then their mean: the compiler turns the mean over
        # the sharded block axis into one all-reduce of one buffer. (The gradient of the global mean
        # loss gives the same numbers, but one all-reduce operand per parameter array: on CPU each
        # operand is a rendezvous of its own.)
        x_blocks, y_blocks = x.reshape(blocks, -1, x.shape[-1]), y.reshape(blocks, -1)
        losses, grads = jax.vmap(jax.value_and_grad(loss_fn), in_axes=(None, 0, 0))(params, x_blocks, y_blocks)
        unflatten = ravel_pytree(params)[1]
        flat = jax.vmap(lambda g: ravel_pytree(g)[0])(grads)
        return sgd_update(params, unflatten(jnp.mean(flat, axis=0)), learning_rate), losses

    def run(params, x, y, learning_rate):
        params, losses = _scanned(step, steps)(params, x, y, learning_rate)
        return params, losses.T

    return jax.jit(run)


def batch_sharding(mesh: Mesh) -> NamedSharding:
    """Rows split over the mesh's data axis: device i holds the i-th block of B/D rows."""
    return NamedSharding(mesh, P(DATA_AXIS))


def replicated(mesh: Mesh) -> NamedSharding:
    """The whole value on every device of the mesh."""
    return NamedSharding(mesh, P())
