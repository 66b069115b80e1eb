"""Tensor parallelism with data parallelism: the MLP or the transformer on a data × model mesh, in JAX's
explicit sharding mode ("sharding in types": every array's type names its sharding, `jax.typeof(w1)` is
`float32[8,32@model]`). A `ParallelProgram` (`TensorParallelProgram`), registered as impl "tensor".

Megatron-LM's split of an MLP (Shoeybi et al. 2019, §3; the JAX Scaling Book, "Training", tensor
parallelism): the first weight by columns, the second by rows, over the `model` axis, the batch by rows
over `data`:

    w1 (F, H@model)   b1 (H@model)   w2 (H@model)   b2 ()   x (B@data, F)   y (B@data)
    h = tanh(x @ w1 + b1)             (B@data, H@model): each device its columns, nothing sent
    out = h @ w2 + b2                 a sum over the split H: partial sums, all-reduced over `model`

The compiler asks where the second product's result goes (`out_sharding=`: the contraction's axis is
sharded); `P('data')` says all-reduce it over `model`. The gradient of every weight is a sum over the
batch's rows, so it is all-reduced over `data`, as in data parallelism, on each device's 1/Y of the
weights. The input x is data (no gradient), so the backward pass sends nothing over `model`.

The transformer (train.transformer), split the same way in each block (Megatron-LM §3; the Scaling Book,
"Training", the transformer's sharding), its batch's rows over `data`:

    wq wk wv (d_model, heads@model, d_head)   column-parallel by heads: each device its heads' Q, K, V
    wo (heads@model, d_head, d_model)         row-parallel: partial sums over the heads, all-reduced over `model`
    w_fc (d_model, 4·d_model@model), b_fc     column-parallel
    w_proj (4·d_model@model, d_model)         row-parallel: partial sums, all-reduced over `model`

Attention needs nothing from the other heads, so a block sends over `model` twice forward (after the attention,
after the MLP) and twice backward (the gradient of each half's input, the LayerNorm's output read by every
device's columns, is a sum over the devices' columns: one all-reduce per half, as Megatron's conjugate f and g
operators do). The embeddings, the LayerNorms, the biases added after a row-parallel product and the output
projection are whole on every device of `model` (a vocabulary-parallel head is not done here); the residual
stream (B@data, T, d_model) too. The loss is the model's own (`transformer.loss`), told where the two row-parallel
products' sums go (`residual`). With strategy zero3 every parameter's `embed` dimension is split over `data` as
well (FSDP × TP), each gathered over `data` before use. The specs come from `train.logical`'s rules.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.costs import analytic
from pmap_core.train import logical, models, transformer
from pmap_core.train.config import check_two_layers
from pmap_core.train.mesh import DATA_AXIS, MODEL_AXIS, build_mesh
from pmap_core.train.program import (
    AnalyticModel,
    HeldBytes,
    MeshProgram,
    PlannedLayout,
    Program,
    ProgramSpec,
    RunExtras,
    abstract,
    bytes_per_device,
    compile_timed,
    param_count,
)
from pmap_core.train.settings import declared, setting
from pmap_core.validation import LabInputError

# The 2-layer MLP's parameters split by the rules of train.logical: Megatron's split (the hidden width
# over `model`); FSDP × TP (strategy zero3) also splits the first weight, most of the parameters, over
# `data`, by rows, gathered over `data` just before use (the Scaling Book's "FSDP + TP"; ZeRO-3 on the
# data axis).
PARAM_SPECS = logical.partition_specs(logical.param_axes("mlp"), logical.TENSOR_PARALLEL)
FSDP_SPECS = logical.partition_specs(logical.param_axes("mlp"), logical.FSDP_TENSOR_PARALLEL)
BATCH_ROWS = logical.spec((logical.BATCH,), logical.TENSOR_PARALLEL)
# The transformer's residual stream: rows over `data`, whole over `model`; under sequence parallelism its positions
# over `model` too, and the tokens read and predicted with them.
RESIDUAL = logical.spec(logical.RESIDUAL, logical.TENSOR_PARALLEL)
SEQUENCE_RESIDUAL = logical.spec(logical.RESIDUAL, logical.SEQUENCE_PARALLEL)
SEQUENCE_TOKENS = logical.spec(logical.TOKENS, logical.SEQUENCE_PARALLEL)
# Sequence parallelism: off; on, Megatron-LM's (each column-parallel product's input gathered again in the backward
# pass); keep (each gathered input kept whole for the backward pass: no second gather).
SEQUENCE_PARALLEL_CHOICES = ("off", "on", "keep")
MAX_MESH_MODEL = 64  # devices on the model axis
# The hidden layer's and the output layer's parameters, by the names the model gives them.
(HIDDEN_WEIGHT, HIDDEN_BIAS), (OUTPUT_WEIGHT, OUTPUT_BIAS) = models.layer_names("mlp")


def param_specs(strategy: str, model: str = "mlp", layers: int = 2) -> dict[str, P]:
    """Every parameter's PartitionSpec: tensor parallelism's (dp) or FSDP × TP's (zero3)."""
    if model != models.TRANSFORMER:
        return FSDP_SPECS if strategy == "zero3" else PARAM_SPECS
    rules = logical.FSDP_TENSOR_PARALLEL if strategy == "zero3" else logical.TENSOR_PARALLEL
    return logical.partition_specs(logical.param_axes(model, layers), rules)


def tensor_mesh(data: int, model: int) -> Mesh:
    """The first data·model devices as a (data, model) mesh, its axes Explicit (`jax.make_mesh`'s default)."""
    return build_mesh({DATA_AXIS: data, MODEL_AXIS: model})


def loss(params: dict[str, jax.Array], x: jax.Array, y: jax.Array, mesh: Mesh) -> jax.Array:
    """The MLP's mean squared error, written over the global arrays; their types carry the split."""
    # FSDP: the hidden weight gathered over data; else as is.
    w = jax.reshard(params[HIDDEN_WEIGHT], NamedSharding(mesh, PARAM_SPECS[HIDDEN_WEIGHT]))
    h = jnp.tanh(x @ w + params[HIDDEN_BIAS])
    out = jnp.matmul(h, params[OUTPUT_WEIGHT], out_sharding=NamedSharding(mesh, BATCH_ROWS)) + params[OUTPUT_BIAS]
    return jnp.mean((out - y) ** 2)


def transformer_loss(params: dict[str, jax.Array], x: jax.Array, y: jax.Array, mesh: Mesh) -> jax.Array:
    """The transformer's cross-entropy (`transformer.loss`) over the global arrays: every parameter in its
    tensor-parallel split (FSDP: gathered over data; else as is), the sums over the split heads and MLP width
    all-reduced over `model` into the residual stream's rows."""
    return transformer.loss(_tensor_params(params, mesh), x, y, transformer.Split(stream=NamedSharding(mesh, RESIDUAL)))


def sequence_parallel_loss(params: dict[str, jax.Array], x: jax.Array, y: jax.Array, mesh: Mesh,
                           regather: bool = True) -> jax.Array:
    """`transformer_loss` with Megatron's sequence parallelism (Korthikanti et al. 2022, §4.2.2): the residual
    stream, its LayerNorms and its residual adds hold each device's positions over `model`; each column-parallel
    product all-gathers its input's positions over `model` first, and each row-parallel product reduce-scatters its
    sums back to positions, where tensor parallelism all-reduces them. A ring's all-reduce is a reduce-scatter and an
    all-gather, so those send the same bytes. The tokens are split by positions as the stream is (taking one's part
    of a whole array sends nothing), so the embedding and the head run on each device's positions too.

    `regather`: keep each column-parallel product's input split, and all-gather it again in the backward pass for
    its weight's gradient, as Megatron-LM does: every activation is then 1/t as large, for one more all-gather per
    product in the backward pass. Without it the gathered input is kept whole, and only the ring's bytes are sent."""
    tokens = NamedSharding(mesh, SEQUENCE_TOKENS)
    split = transformer.Split(stream=NamedSharding(mesh, SEQUENCE_RESIDUAL), column=_gathered_first(mesh, regather),
                              row=_reduce_scattered(mesh))
    return transformer.loss(_tensor_params(params, mesh), jax.reshard(x, tokens), jax.reshard(y, tokens), split)


def _tensor_params(params: dict[str, jax.Array], mesh: Mesh) -> dict[str, jax.Array]:
    """The transformer's parameters in tensor parallelism's split (FSDP × TP: each gathered over `data`)."""
    split = param_specs("dp", models.TRANSFORMER, transformer.depth(params))
    return {name: jax.reshard(value, NamedSharding(mesh, split[name])) for name, value in params.items()}


# Sequence parallelism's two collectives, written per device (`shard_map`) over the sequence axis (1). Said through
# shardings instead (`jax.reshard` to whole positions, `out_sharding=` the split stream), XLA's partitioner writes
# each reduce-scatter, the forward's and the one that transposes an all-gather, as an all-reduce followed by each
# device's slice: the same values, twice the bytes on the wire (the CPU backend has no pass that fuses the two).
def _gathered_first(mesh: Mesh, regather: bool):
    def column(subscripts: str, a: jax.Array, w: jax.Array) -> jax.Array:
        def local(a_part, w_part):
            return jnp.einsum(subscripts, lax.all_gather(a_part, MODEL_AXIS, axis=1, tiled=True), w_part)
        whole = jax.eval_shape(lambda a_, w_: jnp.einsum(subscripts, jax.reshard(a_, NamedSharding(mesh, RESIDUAL)),
                                                          w_), a, w)
        return jax.shard_map(jax.checkpoint(local) if regather else local, mesh=mesh,
                             in_specs=(_spec(a), _spec(w)), out_specs=_spec(whole))(a, w)
    return column


def _reduce_scattered(mesh: Mesh):
    def row(subscripts: str, a: jax.Array, w: jax.Array) -> jax.Array:
        def local(a_part, w_part):
            return lax.psum_scatter(jnp.einsum(subscripts, a_part, w_part), MODEL_AXIS, scatter_dimension=1,
                                    tiled=True)
        return jax.shard_map(local, mesh=mesh, in_specs=(_spec(a), _spec(w)), out_specs=SEQUENCE_RESIDUAL)(a, w)
    return row


def _spec(value: Any) -> P:
    return (value.sharding if isinstance(value, jax.ShapeDtypeStruct) else jax.typeof(value).sharding).spec


LOSSES = {"mlp": loss, models.TRANSFORMER: transformer_loss}


def objective_of(spec: ProgramSpec):
    """The loss a run of `spec` trains: its model's, the transformer's with sequence parallelism where asked."""
    if spec.sequence_parallel == "off":
        return LOSSES[spec.model]
    return functools.partial(sequence_parallel_loss, regather=spec.sequence_parallel == "on")


def residual_bytes_per_device(objective, mesh: Mesh, params: dict, x: Any, y: Any) -> int:
    """The activations one device keeps for the backward pass: JAX's residuals of `objective` traced over the
    abstract sharded arguments, each counted by its shard on one device (its type names its split)."""
    with jax.set_mesh(mesh):
        return models.residual_bytes(models.saved_residuals(
            lambda p, x_, y_: objective(p, x_, y_, mesh), params, x, y), per_device=True)


def chunk(mesh: Mesh, steps: int, objective=loss):
    """`steps` SGD steps in one `lax.scan`: (params, x, y, learning_rate) -> (params, losses); `objective`
    is a model's loss over global arrays, (params, x, y, mesh) -> loss (`LOSSES`)."""
    def step(params, x, y, learning_rate):
        value, grads = jax.value_and_grad(objective)(params, x, y, mesh)
        return jax.tree.map(lambda p, g: p - learning_rate * g, params, grads), value

    def run(params, x, y, learning_rate):
        return lax.scan(lambda p, _: step(p, x, y, learning_rate), params, None, length=steps)

    return run


@dataclasses.dataclass(frozen=True)
class TensorParallelProgram(MeshProgram):
    """A compiled chunk on a data × model mesh: run(params, x, y, learning_rate) -> (params, losses),
    the losses the global batch's, one per step."""

    def place(self, params: dict[str, np.ndarray], data: Any, learning_rate: float) -> tuple:
        specs = param_specs(self.spec.strategy, self.spec.model, self.spec.layers)
        return ({name: self.put(value, specs[name]) for name, value in params.items()},
                self.put(data.x, BATCH_ROWS), self.put(data.y, BATCH_ROWS), self.put(np.float32(learning_rate), P()))

    def final_params(self, carry: Any) -> tuple[dict[str, np.ndarray], float]:
        """Each part's copies on the devices that hold it are compared; then each weight is gathered."""
        return self.gathered_params(carry)

    def held_bytes(self, carry: Any) -> HeldBytes:
        """Each device holds its part of every parameter (the MLP: its columns of w1 and b1, its rows of w2,
        b2 whole; the transformer: its heads' projections and its columns and rows of the MLP, the rest whole);
        the gradient the step computes has the same types, after its all-reduce over `data`. SGD keeps no
        state."""
        params = bytes_per_device(carry)
        return HeldBytes(params=params, grads=params, opt=0)


def build(spec: ProgramSpec) -> TensorParallelProgram:
    """Compile the chunk of `spec` (the MLP or the transformer) on a (D / mesh_model) × mesh_model mesh."""
    mesh = tensor_mesh(spec.devices // spec.mesh_model, spec.mesh_model)
    params = models.init_params(spec.model, spec.features, spec.hidden, 0, spec.layers,
                                models.Dims(spec.d_model, spec.heads, spec.seq_len, spec.vocab))
    x, y = models.input_shapes(spec.model, spec.devices * spec.per_device_batch, spec.features)
    specs = param_specs(spec.strategy, spec.model, spec.layers)
    args = ({name: abstract(mesh, np.shape(value), specs[name]) for name, value in params.items()},
            abstract(mesh, x.shape, BATCH_ROWS, x.dtype), abstract(mesh, y.shape, BATCH_ROWS, y.dtype),
            abstract(mesh, (), P()))
    objective = objective_of(spec)
    lowered, compiled, seconds = compile_timed(jax.jit(chunk(mesh, spec.steps, objective)), args)
    saved = residual_bytes_per_device(objective, mesh, *args[:3]) if spec.model == models.TRANSFORMER else None
    return TensorParallelProgram(spec, tuple(mesh.devices.flat), compiled, seconds, param_count(params),
                                 lowered.as_text(dialect="hlo"), mesh, saved_activation_bytes=saved)


def array_types(program: TensorParallelProgram, carry: Any, x: Any, y: Any) -> dict[str, str]:
    """`jax.typeof` of every array the step takes, as the page shows them (`float32[8,32@model]`)."""
    arrays = {**carry, "x": x, "y": y}
    return {name: str(jax.typeof(value)) for name, value in arrays.items()}


@declared
@dataclasses.dataclass(frozen=True)
class TensorSettings:
    """The settings this program owns (a run holds them in `TrainConfig.settings`). The CLI's `--mesh data=X,model=Y`
    sets the model axis and the devices together. It also reads the sharded-state program's strategy (dp, or zero3:
    FSDP × TP)."""

    mesh_model: int = setting(
        1, "Y devices on the model axis (--mesh data=X,model=Y): tensor parallelism, the MLP's or the transformer's "
        "layers split over them ({low}–{high})", low=1, high=MAX_MESH_MODEL, flag=False, reported=True, axis=MODEL_AXIS)
    sequence_parallel: str = setting(
        "off", "with --mesh and --model transformer: on splits the residual stream's positions over the model axis "
        "too (Megatron's sequence parallelism: an all-gather and a reduce-scatter where tensor parallelism "
        "all-reduces, and the gather again in the backward pass; activations ÷ model); keep: the same, each "
        "gathered input kept for the backward pass instead (default: {default})", choices=SEQUENCE_PARALLEL_CHOICES,
        reported=models.TRANSFORMER)


def check(config) -> None:
    """A data × model mesh trains the MLP or the transformer with SGD in float32, its parameters replicated
    over data (dp) or sharded over it too (zero3: FSDP × TP), its model axis dividing the devices and the
    split widths (the MLP's hidden width; the transformer's heads and MLP width 4·d_model, and under zero3
    its data axis d_model), two layers."""
    settings = (config.optimizer, config.accum_steps, config.grad_dtype, config.precision)
    plain = settings == ("sgd", 1, "float32", "float32")
    if config.model not in ("mlp", models.TRANSFORMER) or not plain or config.strategy not in ("dp", "zero3"):
        raise LabInputError("tensor_needs_mlp_sgd",
                            "impl tensor splits the MLP's or the transformer's weights and trains with SGD in float32 "
                            "(strategy dp or zero3, no accumulation); got model {model}, optimizer {optimizer}, "
                            "strategy {strategy}", model=config.model, optimizer=config.optimizer,
                            strategy=config.strategy)
    needs = [("model", config.mesh_model, "devices", config.devices)]
    if config.model == models.TRANSFORMER:  # the heads and the MLP's width split over model; zero3: d_model over data
        needs += [("model", config.mesh_model, "heads", config.heads),
                  ("model", config.mesh_model, "mlp width", transformer.MLP_RATIO * config.d_model)]
        if config.strategy == "zero3":
            needs.append(("data", config.devices // config.mesh_model, "d_model", config.d_model))
    else:
        needs.append(("model", config.mesh_model, "hidden", config.hidden))
        if config.strategy == "zero3":  # w1's rows split over data too
            needs.append(("data", config.devices // config.mesh_model, "features", config.features))
    for axis, count, name, size in needs:
        if size % count:
            raise LabInputError("mesh_not_divisible", "the {axis} axis ({count} devices) must divide {name} ({size})",
                                axis=axis, count=count, name=name, size=size)
    check_two_layers(config)
    if config.sequence_parallel != "off":
        if config.model != models.TRANSFORMER:
            raise LabInputError("sequence_parallel_needs_transformer", "sequence parallelism splits the "
                                "transformer's positions; got model {model}", model=config.model)
        if config.seq_len % config.mesh_model:
            raise LabInputError("mesh_not_divisible", "the {axis} axis ({count} devices) must divide {name} ({size})",
                                axis="model", count=config.mesh_model, name="seq_len", size=config.seq_len)


def refused_elsewhere(config) -> LabInputError:
    if config.mesh_model == 1:  # the setting asked for is sequence parallelism
        return LabInputError("sequence_parallel_needs_mesh", "sequence parallelism ({value}) splits positions over "
                             "the model axis of a data × model mesh (impl tensor, --mesh data=X,model=Y); got impl "
                             "{impl!r}", value=config.sequence_parallel, impl=config.impl)
    return LabInputError("mesh_needs_tensor", "a model axis of {model} devices needs impl tensor, got {impl!r}",
                         model=config.mesh_model, impl=config.impl)


def mesh_of(config) -> tuple[str, int]:
    """A run's data × model mesh: its label ("4x2") and the model axis's size."""
    return f"{config.mesh_data}x{config.mesh_model}", config.mesh_model


def analytic_model(spec: ProgramSpec, params: int) -> AnalyticModel | None:
    """Megatron's MLP on a data × model mesh sends `analytic.tensor_comm_bytes_per_step` (the loss's one-value
    all-reduce left out); no model here for the transformer or for FSDP × TP, and none of the bytes held."""
    if spec.model != "mlp" or spec.strategy != "dp":
        return None
    data = spec.devices // spec.mesh_model
    return AnalyticModel(comm_bytes_per_step=analytic.tensor_comm_bytes_per_step(
        spec.devices * spec.per_device_batch, spec.features, spec.hidden, data, spec.mesh_model))


def plans(layout: PlannedLayout) -> dict[str, Any] | None:
    """A model axis beside data, ZeRO-0, one micro-batch, no remat, a dense model; sequence parallelism as laid out."""
    if layout.axis == MODEL_AXIS and (layout.zero, layout.microbatches, layout.remat, layout.experts) == (
            0, 1, "none", 0):
        return {"mesh_model": layout.size, "sequence_parallel": "on" if layout.sequence_parallel else "off"}
    return None


PROGRAM = Program("tensor", build, TensorSettings, check, refused_elsewhere,
                  RunExtras(mesh=mesh_of),
                  baseline=lambda config: {"mesh_model": 1}, analytic=analytic_model, shares=("strategy",),
                  plans=plans)
