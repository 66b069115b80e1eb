"""The compiled training program: `chunk` data-parallel steps inside one pmap call.

One call runs `steps` steps inside `lax.scan` and returns the loss of each step, so the Python
dispatch cost is paid once per chunk instead of once per step. Compilation happens ahead of time
(`lower().compile()`), is timed on its own and is cached per (model, D, shapes, chunk length):
a rerun with the same shapes never recompiles.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax import lax

from pmap_core import models
from pmap_core.runtime import DATA_AXIS
from pmap_core.steps import data_parallel_sgd_step


@dataclasses.dataclass(frozen=True)
class ChunkProgram:
    """A compiled pmap that runs `steps` training steps; `compile_s` is what compiling cost."""

    run: Any            # run(params, x, y, learning_rate) -> (params, losses of shape (D, steps))
    devices: tuple[Any, ...]
    steps: int
    compile_s: float

    def input_shardings(self) -> tuple[Any, ...]:
        return self.run.input_shardings[0]


def chunk_step_fn(model: str, steps: int) -> Callable[..., Any]:
    """What one device runs: `steps` data-parallel updates inside `lax.scan`."""
    loss_fn = functools.partial(models.loss, model)

    def run(params, x, y, learning_rate):
        def step(params, _):
            params, loss = data_parallel_sgd_step(loss_fn, params, x, y, learning_rate)
            return params, lax.pmean(loss, DATA_AXIS)  # the loss over the global batch

        return lax.scan(step, params, None, length=steps)

    return run


_compiled_here = threading.local()  # .count: programs this thread compiled (a cache miss runs in its caller)


def compiles_in_this_thread() -> int:
    """How many programs `compiled_chunk` compiled in the calling thread: a call that compiled is
    told apart from one whose program another session compiled meanwhile."""
    return getattr(_compiled_here, "count", 0)


@functools.lru_cache(maxsize=64)
def compiled_chunk(model: str, devices: int, per_device_batch: int, features: int, hidden: int,
                   steps: int) -> ChunkProgram:
    """Compile (once per key) the pmap over the first `devices` devices."""
    devs = tuple(jax.devices()[:devices])
    local = len(_local_indices(devs))

    def spec(shape: tuple[int, ...]) -> np.ndarray:
        # Host zeros, not ShapeDtypeStructs: a multi-process pmap converts its local inputs to
        # global arrays even when lowering, which needs real arrays.
        return np.zeros((local, *shape), np.float32)

    params = jax.tree.map(lambda p: spec(p.shape), models.init_params(model, features, hidden, 0))
    pmapped = jax.pmap(chunk_step_fn(model, steps), axis_name=DATA_AXIS, in_axes=(0, 0, 0, None), devices=devs)
    start = time.perf_counter()
    compiled = pmapped.lower(params, spec((per_device_batch, features)), spec((per_device_batch,)),
                             np.float32(0)).compile()
    done = time.perf_counter()
    _compiled_here.count = compiles_in_this_thread() + 1
    return ChunkProgram(compiled, devs, steps, done - start)


def _local_indices(devs: Sequence[Any]) -> list[int]:
    """Positions (shard indices) of this process's devices among `devs`."""
    return [i for i, d in enumerate(devs) if d.process_index == jax.process_index()]


def place_inputs(program: ChunkProgram, params: dict[str, np.ndarray], data: models.Dataset) -> tuple:
    """Replicate params and shard the batch (D, B/D, …) onto the program's devices.

    In a multi-process run each process passes only its own devices' shards.
    """
    devs, local = program.devices, _local_indices(program.devices)
    d = len(devs)
    p_shard, x_shard, y_shard, _ = program.input_shardings()
    x = data.x.reshape(d, -1, data.x.shape[1])[local]
    y = data.y.reshape(d, -1)[local]

    def replicate(p: np.ndarray, sharding: Any) -> jax.Array:
        copies = np.ascontiguousarray(np.broadcast_to(p, (len(local), *p.shape)))
        return jax.make_array_from_process_local_data(sharding, copies, (d, *p.shape))

    return (jax.tree.map(replicate, params, p_shard),
            jax.make_array_from_process_local_data(x_shard, x, (d, *x.shape[1:])),
            jax.make_array_from_process_local_data(y_shard, y, (d, *y.shape[1:])))


def local_copies(array: jax.Array) -> list[np.ndarray]:
    """This process's per-device copies of a pmap output, each without the device axis."""
    return [np.asarray(shard.data)[0] for shard in array.addressable_shards]


def chunk_lengths(steps: int, chunk: int) -> list[int]:
    """`steps` split into calls of `chunk` steps, the last one shorter if needed."""
    full, rest = divmod(steps, chunk)
    return [chunk] * full + ([rest] if rest else [])
