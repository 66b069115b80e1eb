"""The compiled training program: `chunk` data-parallel steps inside one call, in any of the three
implementations (`implementations.IMPLEMENTATIONS`).

One call runs `steps` steps inside `lax.scan` and returns the loss of each step, so the Python
dispatch cost is paid once per chunk instead of once per step. Compilation happens ahead of time
(`lower().compile()`), is timed on its own and is cached per (implementation, model, D, shapes,
chunk length): a rerun with the same shapes never recompiles.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.runtime import DATA_AXIS
from pmap_core.train import models, zero
from pmap_core.train import replicated as implementations
from pmap_core.train.config import TrainConfig


@dataclasses.dataclass(frozen=True)
class ChunkProgram:
    """A compiled program that runs `steps` training steps; `compile_s` is what compiling cost.

    run(params, x, y, learning_rate) -> (params, losses). With `impl == "pmap"` every input and
    output carries a leading device axis; otherwise they have their global shapes. `losses` is each
    device's loss on its block, (D, steps): `step_losses` makes the loss curve of it.
    """

    impl: str
    run: Any
    devices: tuple[Any, ...]  # in the order the batch's blocks go to them
    steps: int
    compile_s: float
    # Set for the sharded-state program (`zero.strategy_chunk`): then run(state, x, y, learning_rate)
    # -> (state, losses) with state = {"params": …, "opt": …} in the strategy's shardings.
    state: StateLayout | None = None
    lowered_hlo: str = ""     # the program as JAX emitted it, before the backend's own passes

    @property
    def device_axis(self) -> bool:
        return self.impl == "pmap"

    def input_shardings(self) -> tuple[Any, ...]:
        return self.run.input_shardings[0]


@dataclasses.dataclass(frozen=True)
class StateLayout:
    setup: zero.Setup
    mesh: Any
    specs: zero.StateSpecs


_compiled_here = threading.local()  # .count: programs this thread compiled (a cache miss runs in its caller)


def compiles_in_this_thread() -> int:
    """How many programs `compiled_chunk` compiled in the calling thread: a call that compiled is
    told apart from one whose program another session compiled meanwhile."""
    return getattr(_compiled_here, "count", 0)


def config_program(config: TrainConfig, steps: int, devices: int | None = None,
                   global_batch: int | None = None) -> ChunkProgram:
    """The compiled chunk of `steps` steps for `config` (on `devices` and `global_batch` when given)."""
    d = devices or config.devices
    return compiled_chunk(config.impl, config.model, d, (global_batch or config.global_batch) // d,
                          config.input_features, config.hidden, steps, config.optimizer, config.strategy,
                          config.accum_steps, config.grad_dtype)


@functools.lru_cache(maxsize=64)
def compiled_chunk(impl: str, model: str, devices: int, per_device_batch: int, features: int, hidden: int,
                   steps: int, optimizer: str = "sgd", strategy: str = "dp", accum_steps: int = 1,
                   grad_dtype: str = "float32") -> ChunkProgram:
    """Compile (once per key) the chunk program of `impl` over the first `devices` devices; any
    setting of `zero.Setup` other than its defaults compiles `zero.strategy_chunk` (impl jit)."""
    params = models.init_params(model, features, hidden, 0)
    setup = zero.Setup(model, optimizer, strategy, accum_steps, grad_dtype)
    state = None
    if setup != zero.Setup(model):
        mesh = zero.auto_mesh(devices)
        devs = tuple(mesh.devices.flat)
        state = StateLayout(setup, mesh, zero.state_specs(setup, params, devices))
        shardings = zero.state_shardings(mesh, state.specs)
        sharded = NamedSharding(mesh, P(DATA_AXIS))
        replicated = NamedSharding(mesh, P())
        host = {"params": params, "opt": zero.init_opt_state(optimizer, params)}
        batch = devices * per_device_batch
        program = jax.jit(zero.strategy_chunk(setup, steps, mesh, state.specs),
                          out_shardings=(shardings, replicated))
        args = (jax.tree.map(lambda p, s: jax.ShapeDtypeStruct(np.shape(p), np.asarray(p).dtype, sharding=s),
                             host, shardings),
                jax.ShapeDtypeStruct((batch, features), np.float32, sharding=sharded),
                jax.ShapeDtypeStruct((batch,), np.float32, sharding=sharded),
                jax.ShapeDtypeStruct((), np.float32, sharding=replicated))
    elif impl == "pmap":
        devs = tuple(jax.devices()[:devices])
        local = len(_local_indices(devs))

        def spec(shape: tuple[int, ...]) -> np.ndarray:
            # Host zeros, not ShapeDtypeStructs: a multi-process pmap converts its local inputs to
            # global arrays even when lowering, which needs real arrays.
            return np.zeros((local, *shape), np.float32)

        program = implementations.pmap_chunk(model, steps, devs)
        args = (jax.tree.map(lambda p: spec(p.shape), params), spec((per_device_batch, features)),
                spec((per_device_batch,)), np.float32(0))
    else:
        mesh = implementations.data_mesh(devices)
        devs = tuple(mesh.devices.flat)
        sharded, replicated = implementations.batch_sharding(mesh), implementations.replicated(mesh)

        def spec(shape: tuple[int, ...], sharding: Any) -> jax.ShapeDtypeStruct:
            return jax.ShapeDtypeStruct(shape, np.float32, sharding=sharding)

        batch = devices * per_device_batch
        chunk = implementations.shard_map_chunk if impl == "shard_map" else implementations.jit_chunk
        program = chunk(model, steps, mesh)
        args = (jax.tree.map(lambda p: spec(p.shape, replicated), params), spec((batch, features), sharded),
                spec((batch,), sharded), spec((), replicated))
    start = time.perf_counter()
    lowered = program.lower(*args)
    compiled = lowered.compile()
    done = time.perf_counter()
    _compiled_here.count = compiles_in_this_thread() + 1
    return ChunkProgram(impl, compiled, devs, steps, done - start, state,
                        lowered.as_text(dialect="hlo") if state else "")


def _local_indices(devs: Sequence[Any]) -> list[int]:
    """Positions (shard indices) of this process's devices among `devs`."""
    return [i for i, d in enumerate(devs) if d.process_index == jax.process_index()]


def place_inputs(program: ChunkProgram, params: dict[str, np.ndarray], data: models.Dataset,
                 learning_rate: float) -> tuple:
    """Replicate params and split the batch into D blocks on the program's devices, as its
    implementation wants them: (D, B/D, …) for pmap, (B, …) split along rows otherwise.

    In a multi-process run each process passes only its own devices' blocks.
    """
    devs, local = program.devices, _local_indices(program.devices)
    d = len(devs)
    p_shard, x_shard, y_shard, lr_shard = program.input_shardings()
    x = data.x.reshape(d, -1, data.x.shape[1])[local]
    y = data.y.reshape(d, -1)[local]
    if program.state is not None:
        layout = program.state
        params_in = zero.place_state(params, layout.setup, layout.mesh, layout.specs)
    elif program.device_axis:
        def replicate(p: np.ndarray, sharding: Any) -> jax.Array:
            copies = np.ascontiguousarray(np.broadcast_to(p, (len(local), *p.shape)))
            return jax.make_array_from_process_local_data(sharding, copies, (d, *p.shape))

        return (jax.tree.map(replicate, params, p_shard),
                jax.make_array_from_process_local_data(x_shard, x, (d, *x.shape[1:])),
                jax.make_array_from_process_local_data(y_shard, y, (d, *y.shape[1:])),
                np.float32(learning_rate))

    def replicate(p: np.ndarray, sharding: Any) -> jax.Array:
        return jax.make_array_from_process_local_data(sharding, p, p.shape)

    if program.state is None:
        params_in = jax.tree.map(replicate, params, p_shard)
    return (params_in,
            jax.make_array_from_process_local_data(x_shard, x.reshape(-1, x.shape[-1]), data.x.shape),
            jax.make_array_from_process_local_data(y_shard, y.reshape(-1), data.y.shape),
            replicate(np.float32(learning_rate), lr_shard))


def step_losses(program: ChunkProgram, losses: jax.Array) -> np.ndarray:
    """The loss over the global batch at each step of a call, from what the program returned.

    The replicated programs return each device's loss on its own block, (D, steps): with equal
    blocks, their mean over the devices is the global loss, computed here instead of by an
    all-reduce every step. In a multi-process run the rows live in several processes: one gather
    per call brings them together. The sharded-state program returns the global loss itself.
    """
    if program.state is not None:
        return np.asarray(losses.addressable_shards[0].data)
    if not losses.is_fully_addressable:
        losses = multihost_utils.process_allgather(losses, tiled=True)
    return np.asarray(losses, np.float64).mean(axis=0)


def local_copies(program: ChunkProgram, array: jax.Array) -> list[np.ndarray]:
    """This process's per-device copies of a replicated output, each without a device axis."""
    copies = [np.asarray(shard.data) for shard in array.addressable_shards]
    return [c[0] for c in copies] if program.device_axis else copies


def final_params(program: ChunkProgram, carried: Any) -> tuple[dict[str, np.ndarray], float]:
    """(the parameters on the host, the largest difference between two devices' copies of one
    part of them). A sharded-state program's params may be split: each part's copies are compared."""
    if program.state is None:
        copies = {name: local_copies(program, leaf) for name, leaf in carried.items()}
        diff = max(float(np.max(np.abs(c - cs[0]))) for cs in copies.values() for c in cs)
        return {name: cs[0] for name, cs in copies.items()}, diff
    params, diff = carried["params"], 0.0
    for leaf in params.values():
        parts: dict[str, np.ndarray] = {}
        for shard in leaf.addressable_shards:
            first = parts.setdefault(str(shard.index), np.asarray(shard.data))
            diff = max(diff, float(np.max(np.abs(np.asarray(shard.data) - first), initial=0.0)))
    whole = jax.jit(lambda p: p, out_shardings=NamedSharding(program.state.mesh, P()))(params)
    return {name: np.asarray(leaf.addressable_shards[0].data) for name, leaf in whole.items()}, diff


def chunk_lengths(steps: int, chunk: int) -> list[int]:
    """`steps` split into calls of `chunk` steps, the last one shorter if needed."""
    full, rest = divmod(steps, chunk)
    return [chunk] * full + ([rest] if rest else [])
