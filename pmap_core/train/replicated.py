"""The replicated programs: one training chunk — `steps` data-parallel SGD steps inside `lax.scan` —
written three ways, each a `ParallelProgram` (`train.program`) with the parameters whole on every device.

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
call, and the host averages them (`ReplicatedProgram.step_losses`): with equal blocks, the mean of
the block means is the loss over the global batch. (A `pmean` of the loss inside the step would
be a second all-reduce every step; on CPU it cost as much as the first.)
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import multihost_utils
from jax.flatten_util import ravel_pytree
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.costs import analytic
from pmap_core.train import models
from pmap_core.train.mesh import DATA_AXIS, build_mesh
from pmap_core.train.program import (
    AnalyticModel,
    CompiledChunk,
    HeldBytes,
    PlannedLayout,
    Program,
    ProgramSpec,
    bytes_per_device,
    compile_timed,
    local_indices,
    param_count,
)
from pmap_core.train.steps import data_parallel_sgd_step, mean_gradient, sgd_update


def data_mesh(devices: int) -> Mesh:
    """A 1-D mesh of the first `devices` devices, its one axis named DATA_AXIS."""
    return build_mesh({DATA_AXIS: devices})


def _scanned(step: Callable[..., tuple[Any, jax.Array]], steps: int) -> Callable[..., tuple[Any, jax.Array]]:
    """`steps` calls of step(params, x, y, learning_rate) -> (params, loss), as one `lax.scan`."""
    def run(params, x, y, learning_rate):
        return lax.scan(lambda p, _: step(p, x, y, learning_rate), params, None, length=steps)

    return run


Step = Callable[[Any, jax.Array, jax.Array, jax.Array], tuple[Any, jax.Array]]  # (params, x, y, η) -> (params, loss)


def pmap_chunk(step: Step, steps: int, devices: tuple[Any, ...]) -> Callable[..., Any]:
    """`steps` of one device's `step` under pmap: params and batch with a leading device axis; returns (params,
    losses), each (D, …)."""
    return jax.pmap(_scanned(step, steps), axis_name=DATA_AXIS, in_axes=(0, 0, 0, None), devices=devices)


def data_parallel_step(spec: ProgramSpec) -> Step:
    """One device's SGD step on its rows with the mean gradient over `data` (its remat policy applied)."""
    loss_fn = functools.partial(models.loss, spec.model, remat=spec.remat)

    def step(params, x, y, learning_rate):
        return data_parallel_sgd_step(loss_fn, params, x, y, learning_rate)  # this device's loss

    return step


def shard_map_chunk(model: str, steps: int, mesh: Mesh, remat: str = "none") -> Callable[..., Any]:
    """params `P()`, batch `P('data')` with global shapes; returns (params `P()`, losses (D, steps))."""
    loss_fn = functools.partial(models.loss, model, remat=remat)

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


def jit_chunk(model: str, steps: int, mesh: Mesh, remat: str = "none") -> Callable[..., Any]:
    """The global-batch step; the shardings of the inputs decide what runs where. Returns (params,
    losses (D, steps)), row i the loss on device i's block."""
    loss_fn = functools.partial(models.loss, model, remat=remat)
    blocks = mesh.shape[DATA_AXIS]

    def step(params, x, y, learning_rate):
        # The batch as D blocks of B/D rows, block i where device i holds it (a split; no data moves).
        # The gradient on each block, flattened, then their mean: the compiler turns the mean over
        # the sharded block axis into one all-reduce of one buffer. (The gradient of the global mean
        # loss gives the same numbers, but one all-reduce operand per parameter array: on CPU each
        # operand is a rendezvous of its own.)
        x_blocks, y_blocks = x.reshape(blocks, -1, *x.shape[1:]), y.reshape(blocks, -1, *y.shape[1:])
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


@dataclasses.dataclass(frozen=True)
class ReplicatedProgram(CompiledChunk):
    """A compiled replicated chunk (a `ParallelProgram`): run(params, x, y, learning_rate) ->
    (params, losses). With `device_axis` (pmap) every input and output carries a leading device
    axis; otherwise they have their global shapes. `losses` is each device's loss on its block,
    (D, steps)."""

    device_axis: bool

    def place(self, params: dict[str, np.ndarray], data: models.Dataset, learning_rate: float) -> tuple:
        """Params replicated, the batch split into D blocks: (D, B/D, …) for pmap, (B, …) split along
        rows otherwise. In a multi-process run each process passes only its own devices' blocks."""
        local = local_indices(self.devices)
        d = len(self.devices)
        p_shard, x_shard, y_shard, lr_shard = self.compiled.input_shardings[0]
        x = data.x.reshape(d, -1, *data.x.shape[1:])[local]
        y = data.y.reshape(d, -1, *data.y.shape[1:])[local]
        if self.device_axis:
            def copies(p: np.ndarray, sharding: Any) -> jax.Array:
                stacked = np.ascontiguousarray(np.broadcast_to(p, (len(local), *p.shape)))
                return jax.make_array_from_process_local_data(sharding, stacked, (d, *p.shape))

            return (jax.tree.map(copies, params, p_shard),
                    jax.make_array_from_process_local_data(x_shard, x, (d, *x.shape[1:])),
                    jax.make_array_from_process_local_data(y_shard, y, (d, *y.shape[1:])),
                    np.float32(learning_rate))

        def whole(p: np.ndarray, sharding: Any) -> jax.Array:
            return jax.make_array_from_process_local_data(sharding, p, p.shape)

        return (jax.tree.map(whole, params, p_shard),
                jax.make_array_from_process_local_data(x_shard, x.reshape(-1, *x.shape[2:]), data.x.shape),
                jax.make_array_from_process_local_data(y_shard, y.reshape(-1, *y.shape[2:]), data.y.shape),
                whole(np.float32(learning_rate), lr_shard))

    def step_losses(self, losses: jax.Array) -> np.ndarray:
        """With equal blocks, the mean of the devices' block losses is the global batch's loss,
        computed here instead of by an all-reduce every step. In a multi-process run the rows live
        in several processes: one gather per call brings them together."""
        if not losses.is_fully_addressable:
            losses = multihost_utils.process_allgather(losses, tiled=True)
        return np.asarray(losses, np.float64).mean(axis=0)

    def local_losses(self, losses: jax.Array) -> np.ndarray:
        return np.stack([np.ravel(c) for c in self._local_copies(losses)])

    def final_params(self, carry: Any) -> tuple[dict[str, np.ndarray], float]:
        copies = {name: self._local_copies(leaf) for name, leaf in carry.items()}
        diff = max(float(np.max(np.abs(c - cs[0]))) for cs in copies.values() for c in cs)
        return {name: cs[0] for name, cs in copies.items()}, diff

    def held_bytes(self, carry: Any) -> HeldBytes:
        """Every device holds the whole parameters, and the mean gradient the step computes from
        them has their shapes and dtype, whole on every device too. SGD keeps no state."""
        params = bytes_per_device(carry)
        return HeldBytes(params=params, grads=params, opt=0)

    def _local_copies(self, array: jax.Array) -> list[np.ndarray]:
        """This process's per-device copies of a replicated output, each without a device axis."""
        copies = [np.asarray(shard.data) for shard in array.addressable_shards]
        return [c[0] for c in copies] if self.device_axis else copies


def _host_zeros(local: int, shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    # Host zeros, not ShapeDtypeStructs: a multi-process pmap converts its local inputs to global
    # arrays even when lowering, which needs real arrays.
    return np.zeros((local, *shape), dtype)


def _saved(spec: ProgramSpec) -> int:
    """What the model's loss on one device's rows saves for the backward (its remat policy's choice)."""
    return models.saved_activation_bytes(spec.model, spec.per_device_batch, spec.features, spec.hidden, spec.layers,
                                         models.Dims(spec.d_model, spec.heads, spec.seq_len, spec.vocab), spec.remat)


def pmap_program(spec: ProgramSpec, step: Step) -> ReplicatedProgram:
    """The compiled pmap program of one device's `step` (params, x, y, η) -> (params, loss), `spec.steps` of them
    per call: the lab's own (`build_pmap`), or that of a program registered from outside it."""
    params = models.init_params(spec.model, spec.features, spec.hidden, 0, spec.layers,
                                models.Dims(spec.d_model, spec.heads, spec.seq_len, spec.vocab))
    devices = tuple(jax.devices()[:spec.devices])
    local = len(local_indices(devices))
    x, y = models.input_shapes(spec.model, spec.per_device_batch, spec.features)
    args = (jax.tree.map(lambda p: _host_zeros(local, p.shape), params),
            _host_zeros(local, x.shape, x.dtype), _host_zeros(local, y.shape, y.dtype), np.float32(0))
    _, compiled, seconds = compile_timed(pmap_chunk(step, spec.steps, devices), args)
    return ReplicatedProgram(spec, devices, compiled, seconds, param_count(params), "",
                             device_axis=True, saved_activation_bytes=_saved(spec))


def build_pmap(spec: ProgramSpec) -> ReplicatedProgram:
    return pmap_program(spec, data_parallel_step(spec))


def _build_on_mesh(spec: ProgramSpec, chunk: Callable[[str, int, Mesh, str], Any]) -> ReplicatedProgram:
    params = models.init_params(spec.model, spec.features, spec.hidden, 0, spec.layers,
                                models.Dims(spec.d_model, spec.heads, spec.seq_len, spec.vocab))
    mesh = data_mesh(spec.devices)
    rows, whole = batch_sharding(mesh), replicated(mesh)
    x, y = models.input_shapes(spec.model, spec.devices * spec.per_device_batch, spec.features)

    def abstract(shape: tuple[int, ...], sharding: Any, dtype: Any = np.float32) -> jax.ShapeDtypeStruct:
        return jax.ShapeDtypeStruct(shape, dtype, sharding=sharding)

    args = (jax.tree.map(lambda p: abstract(p.shape, whole), params),
            abstract(x.shape, rows, x.dtype), abstract(y.shape, rows, y.dtype),
            abstract((), whole))
    _, compiled, seconds = compile_timed(chunk(spec.model, spec.steps, mesh, spec.remat), args)
    return ReplicatedProgram(spec, tuple(mesh.devices.flat), compiled, seconds, param_count(params), "",
                             device_axis=False, saved_activation_bytes=_saved(spec))


def build_shard_map(spec: ProgramSpec) -> ReplicatedProgram:
    return _build_on_mesh(spec, shard_map_chunk)


def build_jit(spec: ProgramSpec) -> ReplicatedProgram:
    return _build_on_mesh(spec, jit_chunk)


def analytic_model(spec: ProgramSpec, params: int) -> AnalyticModel:
    """Data parallelism's: everything whole on every device, one all-reduce of the gradient, 2(D−1)/D·4Ψ bytes
    (ZeRO's strategy dp, `costs.analytic`)."""
    memory, comm = analytic.zero_model(params, spec.devices, "dp")
    return AnalyticModel(memory, comm)


def plans(layout: PlannedLayout) -> dict[str, str] | None:
    """Data alone, ZeRO-0, one micro-batch, a dense model: the replicated step, with the layout's remat policy."""
    if layout.axis is None and (layout.zero, layout.microbatches, layout.experts) == (0, 1, 0):
        return {"remat": layout.remat}
    return None


PMAP = Program("pmap", build_pmap, analytic=analytic_model, rematerialises=True, plans=plans)
SHARD_MAP = Program("shard_map", build_shard_map, analytic=analytic_model, rematerialises=True)
JIT = Program("jit", build_jit, analytic=analytic_model, rematerialises=True)
