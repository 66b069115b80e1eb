"""Sharded data parallelism (ZeRO stages 1–3 / FSDP), gradient accumulation and bfloat16 gradient
communication: one training chunk, written with jit and shardings of the training state, run as a
`ParallelProgram` (`ShardedStateProgram`).

A strategy says which parts of the state each device holds whole and which only a shard of:

    strategy  params   grads    optimizer state   collectives in one step
    dp        whole    whole    whole             all-reduce(grads)
    zero1     whole    whole    shard             all-reduce(grads), all-gather(updated params)
    zero2     whole    shard    shard             reduce-scatter(grads), all-gather(updated params)
    zero3     shard    shard    shard             all-gather(params), reduce-scatter(grads)

(ZeRO: Rajbhandari et al. 2020, §5 — P_os, P_os+g, P_os+g+p; FSDP: Zhao et al. 2023.)

Shard rule: a leaf is split over the 'data' axis along its largest dimension that D divides (the
first such when several are equal); a leaf no dimension of which D divides (a scalar bias, Adam's
step count) is held whole. So "shard" holds ≈ 1/D of the bytes, exactly 1/D when every leaf splits.

How the step makes the collectives explicit: the batch (B, …), split over 'data', is viewed as
(D, K, B/(D·K), …); `vmap` over the first axis gives each device's own gradient (D, …) without any
communication, summed over the K micro-batches by `lax.scan`. The one sum over the device axis that
follows is the gradient collective — once per K micro-batches — and its dtype is `grad_dtype`
(cast before, back to float32 after). Sharding constraints on its result choose all-reduce (a whole
gradient) or reduce-scatter (a shard); on the params, all-gather.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.costs.analytic import ZERO_SHARDED
from pmap_core.runtime import DATA_AXIS
from pmap_core.train import models
from pmap_core.train.program import (
    HeldBytes,
    ProgramSpec,
    bytes_per_device,
    compile_timed,
    param_count,
    place_from_host,
)


@dataclasses.dataclass(frozen=True)
class Setup:
    """What fixes the compiled program of a strategy (with D, the shapes and the chunk length)."""

    model: str
    optimizer: str = "sgd"
    strategy: str = "dp"
    accum_steps: int = 1
    grad_dtype: str = "float32"


def auto_mesh(devices: int) -> Mesh:
    """The first `devices` devices on one 'data' axis whose shardings the compiler may propagate
    (Auto), so sharding constraints inside the step decide the collectives."""
    return jax.make_mesh((devices,), (DATA_AXIS,), axis_types=(AxisType.Auto,), devices=jax.devices()[:devices])


def shard_spec(shape: tuple[int, ...], devices: int) -> P:
    """The shard rule: 'data' on the largest dimension D divides (first of equals), else P()."""
    fits = [i for i, n in enumerate(shape) if n % devices == 0 and n >= devices]
    if devices == 1 or not fits:
        return P()
    best = max(fits, key=lambda i: (shape[i], -i))
    return P(*(DATA_AXIS if i == best else None for i in range(len(shape))))


def make_optimizer(name: str, learning_rate: Any) -> optax.GradientTransformation:
    """optax's SGD (w ← w − η g, the seed's step) or Adam with its defaults (β1 0.9, β2 0.999, ε 1e-8)."""
    return optax.adam(learning_rate) if name == "adam" else optax.sgd(learning_rate)


def init_opt_state(optimizer: str, params: Any) -> Any:
    """The optimizer state of `params` (host or device arrays); the learning rate does not shape it."""
    return make_optimizer(optimizer, 0.0).init(params)


@dataclasses.dataclass(frozen=True)
class StateSpecs:
    """PartitionSpecs of the training state for one strategy and D (pytrees like the state)."""

    params: Any
    grads: Any
    opt: Any


def state_specs(setup: Setup, params: Any, devices: int) -> StateSpecs:
    shard_params, shard_grads, shard_opt = ZERO_SHARDED[setup.strategy]

    def specs(tree: Any, sharded: bool) -> Any:
        return jax.tree.map(lambda leaf: shard_spec(np.shape(leaf), devices) if sharded else P(), tree)

    return StateSpecs(specs(params, shard_params), specs(params, shard_grads),
                      specs(init_opt_state(setup.optimizer, params), shard_opt))


def _shardings(mesh: Mesh, specs: Any) -> Any:
    return jax.tree.map(lambda spec: NamedSharding(mesh, spec), specs, is_leaf=lambda s: isinstance(s, P))


def _constrain(mesh: Mesh, tree: Any, specs: Any) -> Any:
    return jax.tree.map(lambda x, s: lax.with_sharding_constraint(x, s), tree, _shardings(mesh, specs))


def reduce_gradients(mesh: Mesh, grads: Any, specs: Any) -> Any:
    """The one gradient collective: per-device gradients (D, …), split over 'data', summed over
    the devices — `psum` (all-reduce) where the strategy keeps the gradient whole, `psum_scatter`
    (reduce-scatter) along the shard dimension where it keeps a shard. Written with shard_map so
    every backend runs the collective the strategy names (XLA's CPU backend does not turn an
    all-reduce followed by a slice into a reduce-scatter by itself)."""
    def collective(g: jax.Array, spec: P) -> jax.Array:
        g = g[0]  # this device's block of the device axis
        if DATA_AXIS not in spec:
            return lax.psum(g, DATA_AXIS)
        return lax.psum_scatter(g, DATA_AXIS, scatter_dimension=list(spec).index(DATA_AXIS), tiled=True)

    flat, tree = jax.tree.flatten(grads)
    flat_specs = jax.tree.leaves(specs, is_leaf=lambda s: isinstance(s, P))
    body = jax.shard_map(lambda *gs: [collective(g, s) for g, s in zip(gs, flat_specs, strict=True)], mesh=mesh,
                         in_specs=tuple(P(DATA_AXIS) for _ in flat), out_specs=list(flat_specs))
    return jax.tree.unflatten(tree, body(*flat))


def mean_gradient(setup: Setup, mesh: Mesh, specs: StateSpecs) -> Callable[..., tuple[jax.Array, Any]]:
    """(params, x, y) -> (loss over the global batch, mean gradient with the strategy's sharding)."""
    loss_fn = functools.partial(models.loss, setup.model)
    d, k = mesh.size, setup.accum_steps
    comm = jnp.dtype(setup.grad_dtype)
    per_device = jax.vmap(jax.value_and_grad(loss_fn), in_axes=(None, 0, 0))  # no collective: one per block

    def run(params, x, y):
        params = _constrain(mesh, params, jax.tree.map(lambda _: P(), specs.params))  # zero3: all-gather
        xs = jnp.moveaxis(x.reshape(d, k, -1, *x.shape[1:]), 1, 0)  # (K, D, b, …): micro-batch, device, rows
        ys = jnp.moveaxis(y.reshape(d, k, -1), 1, 0)
        if k == 1:
            loss, grads = per_device(params, xs[0], ys[0])
        else:
            def micro(total, batch):
                return jax.tree.map(jnp.add, total, per_device(params, *batch)), None

            zeros = (jnp.zeros(d), jax.tree.map(lambda p: jnp.zeros((d, *p.shape), p.dtype), params))
            (loss, grads), _ = lax.scan(micro, zeros, (xs, ys))
        summed = reduce_gradients(mesh, jax.tree.map(lambda g: g.astype(comm), grads), specs.grads)
        mean = jax.tree.map(lambda g: g.astype(jnp.float32) / (d * k), summed)
        return jnp.sum(loss) / (d * k), mean

    return run


def strategy_chunk(setup: Setup, steps: int, mesh: Mesh, specs: StateSpecs) -> Callable[..., Any]:
    """`steps` steps in one `lax.scan`: (state, x, y, learning_rate) -> (state, losses), where
    state = {"params": …, "opt": …} stays in the strategy's shardings between calls."""
    gradient = mean_gradient(setup, mesh, specs)

    def step(state, x, y, learning_rate):
        loss, grads = gradient(state["params"], x, y)
        optimizer = make_optimizer(setup.optimizer, learning_rate)
        # Each device updates the optimizer-state shard it holds (zero1–3) from its part of the gradient.
        updates, opt = optimizer.update(grads, state["opt"], state["params"])
        params = optax.apply_updates(state["params"], updates)
        params = _constrain(mesh, params, specs.params)  # zero1/zero2: all-gather of the updated params
        return {"params": params, "opt": _constrain(mesh, opt, specs.opt)}, loss

    def run(state, x, y, learning_rate):
        return lax.scan(lambda s, _: step(s, x, y, learning_rate), state, None, length=steps)

    return run


def state_shardings(mesh: Mesh, specs: StateSpecs) -> dict[str, Any]:
    return {"params": _shardings(mesh, specs.params), "opt": _shardings(mesh, specs.opt)}


def place_state(params: dict[str, np.ndarray], setup: Setup, mesh: Mesh, specs: StateSpecs) -> dict[str, Any]:
    """The initial state on the mesh, each leaf in its strategy's sharding (every process builds
    its own devices' shards from the same host values)."""
    host = {"params": params, "opt": init_opt_state(setup.optimizer, params)}
    return jax.tree.map(place_from_host, host, state_shardings(mesh, specs))


def setup_of(spec: ProgramSpec) -> Setup:
    return Setup(spec.model, spec.optimizer, spec.strategy, spec.accum_steps, spec.grad_dtype)


@dataclasses.dataclass(frozen=True)
class ShardedStateProgram:
    """A compiled strategy chunk (a `ParallelProgram`): run(state, x, y, learning_rate) -> (state,
    losses), where state = {"params": …, "opt": …} stays in the strategy's shardings between calls
    and losses is the global loss of each step."""

    spec: ProgramSpec
    devices: tuple[Any, ...]
    compiled: Any
    compile_s: float
    param_count: int
    emitted_hlo: str
    mesh: Mesh
    setup: Setup
    specs: StateSpecs
    shapes: tuple[int, int, int]  # global batch, features, hidden: the gradient program's shapes

    def run(self, carry: Any, x: Any, y: Any, learning_rate: Any) -> tuple[Any, Any]:
        return self.compiled(carry, x, y, learning_rate)

    def place(self, params: dict[str, np.ndarray], data: Any, learning_rate: float) -> tuple:
        """The initial state in its strategy's shardings, the batch split by rows; every process
        builds only its own devices' parts from the same host values."""
        _, x_shard, y_shard, lr_shard = self.compiled.input_shardings[0]
        return (place_state(params, self.setup, self.mesh, self.specs), place_from_host(data.x, x_shard),
                place_from_host(data.y, y_shard), place_from_host(np.float32(learning_rate), lr_shard))

    def step_losses(self, losses: jax.Array) -> np.ndarray:
        return np.asarray(losses.addressable_shards[0].data)  # the global loss, replicated

    def local_losses(self, losses: jax.Array) -> np.ndarray:
        return np.stack([np.ravel(np.asarray(shard.data)) for shard in losses.addressable_shards])

    def final_params(self, carry: Any) -> tuple[dict[str, np.ndarray], float]:
        """Each part's copies are compared (a sharded leaf's parts differ by design), then the
        parameters are gathered whole."""
        params, diff = carry["params"], 0.0
        for leaf in params.values():
            parts: dict[str, np.ndarray] = {}
            for shard in leaf.addressable_shards:
                first = parts.setdefault(str(shard.index), np.asarray(shard.data))
                diff = max(diff, float(np.max(np.abs(np.asarray(shard.data) - first), initial=0.0)))
        whole = jax.jit(lambda p: p, out_shardings=NamedSharding(self.mesh, P()))(params)
        return {name: np.asarray(leaf.addressable_shards[0].data) for name, leaf in whole.items()}, diff

    def held_bytes(self, carry: Any) -> HeldBytes:
        """Params and optimizer state from the trained state's shards; the gradient from a real one,
        computed by the strategy's own gradient program (float32: a bfloat16 collective is cast back)."""
        run, args = _gradient_program(self.setup, len(self.devices), *self.shapes)
        return HeldBytes(params=bytes_per_device(carry["params"]), grads=bytes_per_device(run(*args)),
                         opt=bytes_per_device(carry["opt"]))


@functools.lru_cache(maxsize=32)
def _gradient_program(setup: Setup, devices: int, batch: int, features: int, hidden: int) -> tuple:
    mesh = auto_mesh(devices)
    params = models.init_params(setup.model, features, hidden, 0)
    specs = state_specs(setup, params, devices)
    rows = NamedSharding(mesh, P(DATA_AXIS))
    run = jax.jit(lambda p, x, y: mean_gradient(setup, mesh, specs)(p, x, y)[1],
                  out_shardings=_shardings(mesh, specs.grads))
    args = (jax.tree.map(place_from_host, params, _shardings(mesh, specs.params)),
            place_from_host(np.zeros((batch, features), np.float32), rows),
            place_from_host(np.zeros((batch,), np.float32), rows))
    return run, args


def build(spec: ProgramSpec) -> ShardedStateProgram:
    """Compile the strategy chunk of `spec` over the first `spec.devices` devices."""
    setup = setup_of(spec)
    params = models.init_params(spec.model, spec.features, spec.hidden, 0)
    mesh = auto_mesh(spec.devices)
    specs = state_specs(setup, params, spec.devices)
    batch = spec.devices * spec.per_device_batch
    shardings = state_shardings(mesh, specs)
    rows, whole = NamedSharding(mesh, P(DATA_AXIS)), NamedSharding(mesh, P())
    host = {"params": params, "opt": init_opt_state(spec.optimizer, params)}
    program = jax.jit(strategy_chunk(setup, spec.steps, mesh, specs), out_shardings=(shardings, whole))
    args = (jax.tree.map(lambda p, s: jax.ShapeDtypeStruct(np.shape(p), np.asarray(p).dtype, sharding=s),
                         host, shardings),
            jax.ShapeDtypeStruct((batch, spec.features), np.float32, sharding=rows),
            jax.ShapeDtypeStruct((batch,), np.float32, sharding=rows),
            jax.ShapeDtypeStruct((), np.float32, sharding=whole))
    lowered, compiled, seconds = compile_timed(program, args)
    return ShardedStateProgram(spec, tuple(mesh.devices.flat), compiled, seconds, param_count(params),
                               lowered.as_text(dialect="hlo"), mesh, setup, specs,
                               (batch, spec.features, spec.hidden))
