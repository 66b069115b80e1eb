"""Sharded data parallelism as its sources define it (ZeRO stages 1–3 / FSDP), with Adam, gradient
accumulation, bfloat16 gradients and mixed precision: one training chunk under `jax.shard_map`, run as
a `ParallelProgram` (`ShardedStateProgram`).

Sources: Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter
Models", §3 (model states), §5 (P_os, P_os+g, P_os+g+p), §7.2 (communication); Zhao et al. 2023,
"PyTorch FSDP" (flat parameters padded to a multiple of D, per-layer gathers). What each device holds
whole or as a 1/D shard, and what one step (K = 1) sends:

    strategy  params  gradient  optimizer state  collectives in one step
    dp        whole   whole     whole            all-reduce(gradient)                                  2Ψ
    zero1     whole   whole     shard            reduce-scatter(gradient), all-gather(updated params)   2Ψ
    zero2     whole   shard     shard            the same; with K micro-batches, one reduce-scatter each
    zero3     shard   shard     shard            per layer: all-gather before its forward and again
                                                 before its backward; reduce-scatter(gradient)         3Ψ

Layout (FSDP's flat parameters): each layer's parameters are one flat buffer, padded to a multiple of D
and cut into D equal shards; device d's shard of every layer, side by side, is row d of a (D, S)
matrix, and the whole buffer is that matrix row after row. A reduce-scatter of the whole buffer leaves
each device its row; an all-gather of the rows gives back the whole buffer. Every strategy shards at
every D; the padding is zeros, whose gradient and Adam update stay zero. dp needs no padding (D = 1).

Precision: float32 trains in fp32 throughout (p = g = 4 bytes, Adam's moments 8). mixed keeps bfloat16
parameters for the forward and backward passes and bfloat16 gradients, and updates an fp32 master
copy with fp32 moments (§3: 2 + 2 + 12 = 16 bytes per parameter), held where the optimizer state is.

Hybrid sharded data parallelism (`train.hsdp`): with a replica axis of R groups (`mesh_replica`), the strategy
shards the state over the D/R devices of each data group and every group holds the same shards; the hooks of
`train.hsdp` lay out the mesh and add the gradient's all-reduce over the groups.

Accumulation: K micro-batches per device per step. The gradient accumulator holds what the strategy
keeps of the gradient: the whole local sum (dp, zero1: one collective per step, after the K), or this
device's shard of the sum over devices (zero2, zero3: a reduce-scatter per micro-batch).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.costs import analytic
from pmap_core.costs.analytic import PRECISIONS, ZERO_SHARDED
from pmap_core.train import hsdp, models
from pmap_core.train.config import GRAD_DTYPES, MAX_ACCUM_STEPS, OPTIMIZERS, STRATEGIES, check_two_layers
from pmap_core.train.mesh import DATA_AXIS
from pmap_core.train.program import (
    AnalyticModel,
    HeldBytes,
    MeshProgram,
    PlannedLayout,
    Program,
    ProgramSpec,
    bytes_per_device,
    compile_timed,
    param_count,
    place_from_host,
)
from pmap_core.train.settings import declared, setting
from pmap_core.validation import LabInputError

WHOLE, ROWS = P(), P(DATA_AXIS)


@dataclasses.dataclass(frozen=True)
class Setup:
    """What fixes the compiled program of a strategy (with D, the shapes and the chunk length)."""

    model: str
    optimizer: str = "sgd"
    strategy: str = "dp"
    accum_steps: int = 1
    grad_dtype: str = "float32"
    precision: str = "float32"
    replicas: int = 1  # groups on the replica axis (`train.hsdp`): each holds the state sharded over its data axis

    @property
    def batch_rows(self) -> P:
        return hsdp.batch_rows(self.replicas)

    def mesh(self, devices: int) -> Mesh:
        return hsdp.mesh(devices, self.replicas)

    @property
    def shards(self) -> tuple[bool, bool, bool]:
        """Whether params, the gradient accumulator and the optimizer state are 1/D shards."""
        return ZERO_SHARDED[self.strategy]

    @property
    def param_dtype(self) -> Any:
        return jnp.bfloat16 if self.precision == "mixed" else jnp.float32

    @property
    def comm_dtype(self) -> Any:
        """What the gradient collective sends: bfloat16 under mixed precision or when asked for."""
        return jnp.bfloat16 if "bfloat16" in (self.grad_dtype, jnp.dtype(self.param_dtype).name) else jnp.float32


@dataclasses.dataclass(frozen=True)
class FlatLayout:
    """The parameters as D rows of S values: row d is device d's shard of every layer's flat buffer."""

    model: str
    devices: int
    shapes: tuple[tuple[str, tuple[int, ...]], ...]   # every parameter in layer order, with its shape
    shard_sizes: tuple[int, ...]                      # per layer: ⌈n / D⌉ values of its n

    @classmethod
    def of(cls, model: str, params: dict[str, np.ndarray], devices: int) -> FlatLayout:
        shapes = tuple((name, np.shape(params[name])) for layer in models.LAYERS[model] for name in layer)
        sizes = [sum(math.prod(np.shape(params[n])) for n in layer) for layer in models.LAYERS[model]]
        return cls(model, devices, shapes, tuple(-(-n // devices) for n in sizes))

    @property
    def row_size(self) -> int:
        return sum(self.shard_sizes)

    @property
    def padding(self) -> int:
        """Zeros added so that every layer splits into D equal shards."""
        return self.devices * self.row_size - sum(math.prod(shape) for _, shape in self.shapes)

    @property
    def row_padding(self) -> int:
        """The most padding one row holds: each layer's zeros sit at the end of its buffer."""
        return sum(min(s * self.devices - n, s) for s, n in zip(self.shard_sizes, self._layer_sizes(), strict=True))

    def _layer_sizes(self) -> list[int]:
        shapes = dict(self.shapes)
        return [sum(math.prod(shapes[n]) for n in layer) for layer in models.LAYERS[self.model]]

    def columns(self, layer: int) -> slice:
        start = sum(self.shard_sizes[:layer])
        return slice(start, start + self.shard_sizes[layer])

    def to_flat(self, params: dict[str, np.ndarray]) -> np.ndarray:
        """The whole buffer (D·S,) of host params."""
        rows = np.zeros((self.devices, self.row_size), np.float32)
        for layer, names in enumerate(models.LAYERS[self.model]):
            values = np.concatenate([np.ravel(params[n]) for n in names])
            padded = np.zeros(self.devices * self.shard_sizes[layer], np.float32)
            padded[:values.size] = values
            rows[:, self.columns(layer)] = padded.reshape(self.devices, -1)
        return rows.reshape(-1)

    def layer_params(self, layer: int, padded: jax.Array) -> dict[str, jax.Array]:
        """One layer's parameters from its whole padded buffer (D·s values)."""
        out, offset = {}, 0
        for name in models.LAYERS[self.model][layer]:
            shape = dict(self.shapes)[name]
            size = math.prod(shape)
            out[name] = padded[offset:offset + size].reshape(shape)
            offset += size
        return out

    def layer_buffer(self, flat: jax.Array, layer: int) -> jax.Array:
        """One layer's whole padded buffer, cut from the whole buffer."""
        return flat.reshape(self.devices, self.row_size)[:, self.columns(layer)].reshape(-1)

    def to_params(self, flat: Any) -> dict[str, Any]:
        params: dict[str, Any] = {}
        for layer in range(len(self.shard_sizes)):
            params.update(self.layer_params(layer, self.layer_buffer(flat, layer)))
        return params


def make_optimizer(name: str, learning_rate: Any) -> optax.GradientTransformation:
    """optax's SGD (w ← w − η g, the seed's step) or Adam with its defaults (β1 0.9, β2 0.999, ε 1e-8)."""
    return optax.adam(learning_rate) if name == "adam" else optax.sgd(learning_rate)


def gathered_layer(apply: Callable[[jax.Array, jax.Array], jax.Array], comm_dtype: Any) -> Callable:
    """apply(whole layer buffer, h) run from this device's shard: the layer is all-gathered just before
    its forward, not kept, and all-gathered again before its backward; the gradient of the shard is
    the reduce-scatter of the whole buffer's gradient (ZeRO-3 / FSDP)."""
    @jax.custom_vjp
    def run(shard: jax.Array, h: jax.Array) -> jax.Array:
        # Gathered for this input: the dependency on h keeps the compiler from hoisting the gather out
        # of the micro-batch loop and holding the layer through it.
        shard = shard + (0 * jnp.sum(h)).astype(shard.dtype)
        return apply(lax.all_gather(shard, DATA_AXIS, tiled=True), h)

    def forward(shard: jax.Array, h: jax.Array) -> tuple[jax.Array, tuple]:
        return run(shard, h), (shard, h)  # what the backward keeps: the shard and the input, not the layer

    def backward(kept: tuple, g: jax.Array) -> tuple[jax.Array, jax.Array]:
        shard, h = kept
        # Gather again once the gradient has arrived. The dependency on g keeps the compiler from
        # reusing the forward's gather (XLA:CPU drops optimization barriers before it merges equal
        # collectives), so the compiled program pays the gather it would pay on any backend.
        shard = shard + (0 * jnp.sum(g)).astype(shard.dtype)
        _, vjp = jax.vjp(apply, lax.all_gather(shard, DATA_AXIS, tiled=True), h)
        d_layer, d_h = vjp(g)
        d_shard = lax.psum_scatter(d_layer.astype(comm_dtype), DATA_AXIS, tiled=True)
        return d_shard.astype(shard.dtype), d_h

    run.defvjp(forward, backward)
    return run


def _loss_fn(setup: Setup, layout: FlatLayout) -> Callable[[jax.Array, jax.Array, jax.Array], jax.Array]:
    """(this device's params, x, y) -> the mean squared error on its rows; params are the whole buffer,
    or under zero3 this device's row, its layers gathered one at a time."""
    layers = range(len(layout.shard_sizes))

    def apply(layer: int) -> Callable[[jax.Array, jax.Array], jax.Array]:
        return lambda buffer, h: models.apply_layer(setup.model, layer, layout.layer_params(layer, buffer), h)

    def loss(params: jax.Array, x: jax.Array, y: jax.Array) -> jax.Array:
        h = x.astype(setup.param_dtype) if jnp.issubdtype(x.dtype, jnp.floating) else x  # tokens stay integers
        for layer in layers:
            if setup.strategy == "zero3":
                h = gathered_layer(apply(layer), setup.comm_dtype)(params[layout.columns(layer)], h)
            else:
                h = apply(layer)(layout.layer_buffer(params, layer), h)
        return models.output_loss(setup.model, h.astype(jnp.float32), y)

    return loss


def _accumulated_gradient(setup: Setup, layout: FlatLayout) -> Callable:
    """(params, x, y) -> (summed loss of the K micro-batches, the accumulator): the whole local sum of
    their gradients (dp, zero1), or this device's shard of the sum over devices (zero2: a reduce-
    scatter per micro-batch; zero3: its layers' backward reduce-scatters)."""
    k = setup.accum_steps
    value_and_grad = jax.value_and_grad(_loss_fn(setup, layout))
    scatter_each = setup.strategy == "zero2"

    def micro(params: jax.Array, x: jax.Array, y: jax.Array) -> tuple[jax.Array, jax.Array]:
        loss, grad = value_and_grad(params, x, y)
        if scatter_each:
            grad = lax.psum_scatter(grad.astype(setup.comm_dtype), DATA_AXIS, tiled=True)
        return loss, grad.astype(setup.param_dtype)  # bfloat16 gradients under mixed precision (§3)

    def run(params: jax.Array, x: jax.Array, y: jax.Array) -> tuple[jax.Array, jax.Array]:
        if k == 1:
            return micro(params, x, y)
        xs, ys = x.reshape(k, -1, *x.shape[1:]), y.reshape(k, -1, *y.shape[1:])

        def add(total: tuple, batch: tuple) -> tuple[tuple, None]:
            loss, grad = micro(params, *batch)
            return (total[0] + loss, total[1] + grad), None

        size = layout.row_size if setup.strategy in ("zero2", "zero3") else layout.devices * layout.row_size
        (loss, grad), _ = lax.scan(add, (jnp.zeros(()), jnp.zeros(size, setup.param_dtype)), (xs, ys))
        return loss, grad

    return run


def _chunk(setup: Setup, layout: FlatLayout, steps: int, devices: int) -> Callable:
    """The per-device body of `steps` steps on `devices` devices: (state, x, y, learning_rate) -> (state,
    losses (1, steps)). dp's layout is one unpadded row, so the device count comes apart from it."""
    d, k = devices, setup.accum_steps
    shard_params, _, shard_state = setup.shards
    gradient = _accumulated_gradient(setup, layout)

    def step(state: dict[str, Any], x: jax.Array, y: jax.Array, learning_rate: jax.Array) -> tuple:
        loss, grad = gradient(state["params"], x, y)
        if setup.strategy == "dp":
            grad = lax.psum(grad.astype(setup.comm_dtype), DATA_AXIS).astype(jnp.float32)
        elif setup.strategy == "zero1":
            grad = lax.psum_scatter(grad.astype(setup.comm_dtype), DATA_AXIS, tiled=True).astype(jnp.float32)
        grad = hsdp.all_reduce_over_groups(grad, setup.replicas, setup.comm_dtype)
        grad = grad.astype(jnp.float32) / (d * k)
        # What this device updates: the whole parameters (dp) or its row of them (zero1–3), in fp32.
        if "master" in state:
            base = state["master"]
        elif shard_state and not shard_params:
            base = lax.dynamic_slice(state["params"], (lax.axis_index(DATA_AXIS) * layout.row_size,),
                                     (layout.row_size,))
        else:
            base = state["params"]
        updates, opt = make_optimizer(setup.optimizer, learning_rate).update(grad, state["opt"], base)
        base = optax.apply_updates(base, updates)
        params = base.astype(setup.param_dtype)
        if shard_state and not shard_params:  # zero1, zero2: every device gets the updated params whole
            params = lax.all_gather(params, DATA_AXIS, tiled=True)
        new = {"params": params, "opt": opt}
        if "master" in state:
            new["master"] = base
        return new, loss / k

    def run(state, x, y, learning_rate):
        state, losses = lax.scan(lambda s, _: step(s, x, y, learning_rate), state, None, length=steps)
        return state, losses[None]

    return run


def setup_of(spec: ProgramSpec) -> Setup:
    return Setup(spec.model, spec.optimizer, spec.strategy, spec.accum_steps, spec.grad_dtype, spec.precision,
                 spec.mesh_replica)


def host_state(setup: Setup, layout: FlatLayout, params: dict[str, np.ndarray]) -> dict[str, Any]:
    """The initial training state, whole, on the host."""
    flat = layout.to_flat(params)
    state = {"params": flat.astype(setup.param_dtype), "opt": make_optimizer(setup.optimizer, 0.0).init(flat)}
    if setup.precision == "mixed":
        state["master"] = flat
    return state


def state_specs(setup: Setup, state: dict[str, Any]) -> dict[str, Any]:
    """Each leaf's PartitionSpec: rows where the strategy shards it (a scalar, Adam's count, whole)."""
    shard_params, _, shard_state = setup.shards

    def spec(sharded: bool) -> Callable[[Any], P]:
        return lambda leaf: ROWS if sharded and np.ndim(leaf) else WHOLE

    return {name: jax.tree.map(spec(shard_params if name == "params" else shard_state), value)
            for name, value in state.items()}


@dataclasses.dataclass(frozen=True)
class ShardedStateProgram(MeshProgram):
    """A compiled strategy chunk (a `ParallelProgram`): run(state, x, y, learning_rate) -> (state,
    losses), state = {"params", "opt"[, "master"]} in the strategy's shardings between calls, losses
    each device's loss on its rows, (D, steps)."""

    setup: Setup
    layout: FlatLayout
    shardings: dict[str, Any]
    batch_shape: tuple[jax.ShapeDtypeStruct, jax.ShapeDtypeStruct]  # the global batch's x and y

    def place(self, params: dict[str, np.ndarray], data: Any, learning_rate: float) -> tuple:
        """The initial state in its strategy's shardings, the batch split by rows; every process
        builds only its own devices' parts from the same host values."""
        rows, whole = NamedSharding(self.mesh, self.setup.batch_rows), NamedSharding(self.mesh, WHOLE)
        state = jax.tree.map(place_from_host, host_state(self.setup, self.layout, params), self.shardings)
        return (state, place_from_host(data.x, rows), place_from_host(data.y, rows),
                place_from_host(np.float32(learning_rate), whole))

    def step_losses(self, losses: jax.Array) -> np.ndarray:
        from jax.experimental import multihost_utils

        if not losses.is_fully_addressable:
            losses = multihost_utils.process_allgather(losses, tiled=True)
        return np.asarray(losses, np.float64).mean(axis=0)  # equal rows: the mean of means is the global loss

    def final_params(self, carry: Any) -> tuple[dict[str, np.ndarray], float]:
        """The fp32 parameters (the master copy under mixed precision), gathered whole; each part's
        copies on different devices are compared (a sharded buffer's parts differ by design)."""
        flat = carry.get("master", carry["params"])
        diff, parts = 0.0, {}
        for shard in flat.addressable_shards:
            first = parts.setdefault(str(shard.index), np.asarray(shard.data))
            diff = max(diff, float(np.max(np.abs(np.asarray(shard.data) - first), initial=0.0)))
        whole = jax.jit(lambda v: v, out_shardings=NamedSharding(self.mesh, WHOLE))(flat)
        values = np.asarray(whole.addressable_shards[0].data, np.float32)
        return {name: np.asarray(v) for name, v in self.layout.to_params(values).items()}, diff

    def held_bytes(self, carry: Any) -> HeldBytes:
        """Params and optimizer state (with the fp32 master copy) from the trained state's shards; the
        gradient from the accumulator the strategy's gradient program returns."""
        run, args = _gradient_program(self.setup, len(self.devices), self.batch_shape, self.layout)
        optimizer = (carry["opt"], carry.get("master", ()))
        padding = self.layout.row_padding if self.setup.shards[0] else self.layout.padding
        return HeldBytes(params=bytes_per_device(carry["params"]), grads=bytes_per_device(run(*args)),
                         opt=bytes_per_device(optimizer), padding=padding * jnp.dtype(self.setup.param_dtype).itemsize)


@functools.lru_cache(maxsize=32)
def _gradient_program(setup: Setup, devices: int, batch_shape: tuple[jax.ShapeDtypeStruct, jax.ShapeDtypeStruct],
                      layout: FlatLayout) -> tuple:
    """The step's gradient accumulator, returned as each device holds it (the whole local sum per
    device, or its shard), on zeros: its bytes are what the strategy keeps of the gradient."""
    mesh, rows = setup.mesh(devices), setup.batch_rows
    accumulator = _accumulated_gradient(setup, layout)
    keeps_shard = setup.strategy in ("zero2", "zero3")

    def body(params, x, y):
        grad = accumulator(params, x, y)[1]
        return grad if keeps_shard else grad[None]

    in_params = ROWS if setup.shards[0] else WHOLE
    run = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(in_params, rows, rows), out_specs=rows,
                                check_vma=False))
    size = layout.devices * layout.row_size
    args = (place_from_host(np.zeros(size, setup.param_dtype), NamedSharding(mesh, in_params)),
            *(place_from_host(np.zeros(s.shape, s.dtype), NamedSharding(mesh, rows)) for s in batch_shape))
    return run, args


def build(spec: ProgramSpec) -> ShardedStateProgram:
    """Compile the strategy chunk of `spec` over the first `spec.devices` devices."""
    setup = setup_of(spec)
    params = models.init_params(spec.model, spec.features, spec.hidden, 0, spec.layers,
                                models.Dims(spec.d_model, spec.heads, spec.seq_len, spec.vocab))
    layout = FlatLayout.of(spec.model, params,
                           1 if spec.strategy == "dp" else hsdp.group_size(spec.devices, setup.replicas))
    mesh = setup.mesh(spec.devices)
    state = host_state(setup, layout, params)
    specs = state_specs(setup, state)
    shardings = jax.tree.map(lambda s: NamedSharding(mesh, s), specs, is_leaf=lambda s: isinstance(s, P))
    body = jax.shard_map(_chunk(setup, layout, spec.steps, spec.devices), mesh=mesh,
                         in_specs=(specs, setup.batch_rows, setup.batch_rows, WHOLE),
                         out_specs=(specs, setup.batch_rows), check_vma=False)
    x, y = models.input_shapes(spec.model, spec.devices * spec.per_device_batch, spec.features)
    rows, whole = NamedSharding(mesh, setup.batch_rows), NamedSharding(mesh, WHOLE)
    args = (jax.tree.map(lambda v, s: jax.ShapeDtypeStruct(np.shape(v), np.asarray(v).dtype, sharding=s),
                         state, shardings),
            jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=rows),
            jax.ShapeDtypeStruct(y.shape, y.dtype, sharding=rows),
            jax.ShapeDtypeStruct((), np.float32, sharding=whole))
    lowered, compiled, seconds = compile_timed(jax.jit(body), args)
    return ShardedStateProgram(spec, tuple(mesh.devices.flat), compiled, seconds, param_count(params),
                               lowered.as_text(dialect="hlo"), mesh, setup, layout, shardings, (x, y))


@declared
@dataclasses.dataclass(frozen=True)
class ShardedStateSettings:
    """The training-state settings this program owns (a run holds them in `TrainConfig.settings`)."""

    optimizer: str = setting("sgd", "sgd, or adam (optax)", choices=OPTIMIZERS, reported=True, label="{}")
    strategy: str = setting("dp", "dp: everything replicated; zero1: optimizer state sharded; zero2: + gradients; "
                            "zero3 (FSDP): + params", choices=STRATEGIES, reported=True, label="{}")
    accum_steps: int = setting(
        1, "K micro-batches per step ({low}–{high}): dp and zero1 run the gradient's collective once per K, zero2 "
        "reduce-scatters each micro-batch's gradient, zero3 gathers and reduce-scatters each layer per "
        "micro-batch; the global batch must split into D × K equal micro-batches", low=1, high=MAX_ACCUM_STEPS,
        reported=True, label="K{}")
    grad_dtype: str = setting(
        "float32", "dtype of the gradient's collectives (dp: the all-reduce; zero1/zero2: the reduce-scatters; "
        "zero3: each layer's backward reduce-scatter): bfloat16 halves their bytes in the program JAX emits, but "
        "XLA:CPU compiles them back to float32, so on CPU devices the compiled step sends as many bytes",
        choices=GRAD_DTYPES, reported=True, label="{}-grads")
    precision: str = setting("float32", "float32, or mixed: bfloat16 params and gradients, an fp32 master copy "
                             "and fp32 Adam moments", choices=PRECISIONS, reported=True, label="{}")
    mesh_replica: int = hsdp.replica_setting()


def check(config) -> None:
    """The MLP's or the transformer's two layers: the flat layout holds one buffer per layer of those."""
    check_two_layers(config)


def refused_elsewhere(config) -> LabInputError:
    return hsdp.refusal(config) or LabInputError(
        "strategy_needs_jit",
        "optimizer {optimizer}, strategy {strategy}, {accum} accumulation step(s), {dtype} gradients and "
        "{precision} precision run in the jit implementation (sharded training state); got impl {impl!r}: "
        "use impl jit, or sgd, dp, 1, float32 and float32 for {impl}", optimizer=config.optimizer,
        strategy=config.strategy, accum=config.accum_steps, dtype=config.grad_dtype,
        precision=config.precision, impl=config.impl)


def analytic_model(spec: ProgramSpec, params: int) -> AnalyticModel:
    """ZeRO's model states and communication (Rajbhandari et al. 2020, §5 and §7.2; `costs.analytic`) within a
    data group, and under HSDP each device's all-reduce of its 1/group of the gradient over the R groups
    (`hsdp.replica_comm_bytes`)."""
    group = hsdp.group_size(spec.devices, spec.mesh_replica)
    memory, comm = analytic.zero_model(params, group, spec.strategy, spec.precision, spec.optimizer,
                                       spec.grad_dtype, spec.accum_steps)
    return AnalyticModel(memory, comm + hsdp.replica_comm_bytes(params, group, spec.mesh_replica, spec.strategy,
                                                                spec.precision, spec.grad_dtype))


def plans(layout: PlannedLayout) -> dict[str, Any] | None:
    """Data alone with a ZeRO stage or micro-batches (as accumulation steps), a dense model: ZeRO-3 gathers each layer
    again in its backward pass (`gathered_layer`: remat full), the other stages recompute nothing."""
    sharded = layout.zero > 0 or layout.microbatches > 1
    if layout.axis is None and sharded and not layout.experts and layout.remat == (
            "full" if layout.zero == 3 else "none"):
        return {"strategy": STRATEGIES[layout.zero], "accum_steps": layout.microbatches}
    return None


# impl "jit" with a sharded training state (any of these settings changed) runs this program; its runs keep
# impl "jit" in their record.
PROGRAM = Program("zero", build, ShardedStateSettings, check, refused_elsewhere, analytic=analytic_model,
                  impl="jit", selects=tuple(f.name for f in dataclasses.fields(ShardedStateSettings)), plans=plans)
