"""Interview questions on 2-D meshes (data × model): explicit sharding ("sharding in types") and tensor
parallelism.

Like every question of the quiz, each answer is what a program returns here, on all this process's devices
(n), arranged as the squarest data × model mesh (data ≤ model: 8 devices are 2 × 4, a prime count 1 × n,
one device 1 × 1). Sizes grow with n so that every axis divides them at every n.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.concepts import mesh_2d, sharding_in_types
from pmap_core.concepts.mesh_view import default_mesh
from pmap_core.hlo import collectives
from pmap_core.practice.quiz.types import CHOICE, NUMBER, Question
from pmap_core.train import config as train_config
from pmap_core.train import loop, programs, tensor
from pmap_core.train import plan as train_plan
from pmap_core.train.mesh import DATA_AXIS, MODEL_AXIS


def _n() -> int:
    return jax.local_device_count()


def _shape() -> tuple[int, int]:
    """(data, model): the squarest mesh of the n devices, data ≤ model."""
    data, model = (int(side) for side in default_mesh(_n()).split("x"))
    return data, model


def _mesh():
    return tensor.tensor_mesh(*_shape())  # jax.make_mesh: Explicit axes


def _put(mesh, value, *spec) -> jax.Array:
    return jax.device_put(np.asarray(value, np.float32), NamedSharding(mesh, P(*spec)))


# --- the programs -----------------------------------------------------------------

def typeof_product() -> str:
    n, mesh = _n(), _mesh()
    x = _put(mesh, np.ones((8 * n, 16)), DATA_AXIS, None)   # float32[8n@data,16]
    w = _put(mesh, np.ones((16, 4 * n)), None, MODEL_AXIS)  # float32[16,4n@model]
    return str(jax.typeof(x @ w))


RAISES, NONE = "raises: asks for out_sharding", "none: the model axis has one device"
ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER = "all-reduce", "all-gather", "reduce-scatter"


def _compiled_dot(a: jax.Array, b: jax.Array) -> str:
    """What the compiled `jnp.dot(a, b)` sends, or RAISES when JAX asks where its result goes."""
    try:
        compiled = jax.jit(jnp.dot).lower(a, b).compile()
    except Exception as error:
        if type(error).__name__ == "ShardingTypeError":  # not a choice the compiler makes for you
            return RAISES
        raise
    sent = sorted({c.kind for c in collectives(compiled.as_text()) if (c.group_size or _n()) > 1})
    return " + ".join(sent) or NONE


def ambiguous_dot() -> str:
    n, mesh = _n(), _mesh()
    a = _put(mesh, np.ones((8, 4 * n)), None, MODEL_AXIS)  # float32[8,4n@model]
    b = _put(mesh, np.ones((4 * n, 16)), MODEL_AXIS, None)  # float32[4n@model,16]: the contraction is split
    return _compiled_dot(a, b)


def silent_gather() -> str:
    n, mesh = _n(), _mesh()
    a = _put(mesh, np.ones((64, 4 * n)))  # float32[64,4n]: replicated
    b = _put(mesh, np.ones((4 * n, 8)), MODEL_AXIS, None)  # float32[4n@model,8]
    return _compiled_dot(a, b)


TYPEOF_ONLY, A_SHARDING, NO_SHARDING = ("raises AttributeError: use jax.typeof(x)", "a NamedSharding", "None")


def sharding_in_jit() -> str:
    mesh = _mesh()
    x = _put(mesh, np.ones((4 * _n(), 4 * _n())), DATA_AXIS, MODEL_AXIS)
    seen = []

    def f(v):
        try:
            seen.append(A_SHARDING if v.sharding is not None else NO_SHARDING)  # v is a tracer here
        except AttributeError:
            seen.append(TYPEOF_ONLY)
        return v * 2

    jax.jit(f)(x)
    return seen[0]


def tp_param_fraction() -> float:
    data, model = _shape()
    features, hidden = 16, 32 * _n()
    mesh = tensor.tensor_mesh(data, model)
    shapes = {"w1": (features, hidden), "b1": (hidden,), "w2": (hidden,), "b2": ()}
    held = whole = 0
    for name, shape in shapes.items():  # Megatron's split: w1 by columns, b1 and w2 by rows over model
        value = jax.device_put(np.ones(shape, np.float32), NamedSharding(mesh, tensor.PARAM_SPECS[name]))
        held += value.addressable_shards[0].data.nbytes  # what one device holds
        whole += value.nbytes  # what data parallelism holds on every device
    return held / whole


DP_FEWER, TP_FEWER, SAME = "data only (n × 1)", "model only (1 × n)", "the same: one device sends nothing"


def _bytes_per_step(mesh_model: int) -> float:
    n = _n()
    config = train_plan.validate(train_config.TrainConfig(
        model="mlp", devices=n, global_batch=64 * n, features=32, hidden=8 * n, steps=1, chunk=1, impl="tensor",
        mesh_model=mesh_model, learning_rate=0.01))
    return loop.train(config, measure_scaling=False).footprint.comm_bytes_per_step  # read from the compiled step


def dp_or_tp_bytes() -> str:
    dp, tp = _bytes_per_step(1), _bytes_per_step(_n())
    if np.isclose(dp, tp):
        return SAME
    return DP_FEWER if dp < tp else TP_FEWER


ON_DATA, ON_MODEL, ON_BOTH = DATA_AXIS, MODEL_AXIS, f"{DATA_AXIS} and {MODEL_AXIS}"
NOT_SENT = "nowhere: the data axis has one device"


def gradient_axis() -> str:
    data, model = _shape()
    features, hidden = 8, 16 * model
    config = train_plan.validate(train_config.TrainConfig(
        model="mlp", devices=data * model, global_batch=16 * data * model, features=features, hidden=hidden,
        steps=1, chunk=1, impl="tensor", mesh_model=model))
    program = programs.build(config.program_spec(1))
    # The gradient of this device's columns of w1 (XLA may hold it transposed).
    w1_blocks = {f"f32[{features},{hidden // model}]", f"f32[{hidden // model},{features}]"}
    axes = {row.axis for row in mesh_2d.collective_rows(program)
            if w1_blocks & set(row.shapes) and row.group_size > 1}
    if not axes:
        return NOT_SENT
    return {mesh_2d.DATA: ON_DATA, mesh_2d.MODEL: ON_MODEL}.get(axes.pop(), ON_BOTH) if len(axes) == 1 else ON_BOTH


def reduced_all_reduces() -> float:
    accumulation = sharding_in_types.reduced_accumulation(_n(), 4)  # K = 4 micro-batches, weights P(reduced={'X'})
    if accumulation.reduced_all_reduces is None:
        raise RuntimeError(accumulation.error)
    return accumulation.reduced_all_reduces  # counted in the compiled HLO, per step


# --- the choices, from the device count -------------------------------------------------

def typeof_options(n: int) -> list[str]:
    rows, cols = 8 * n, 4 * n
    return [f"float32[{rows}@{DATA_AXIS},{cols}@{MODEL_AXIS}]", f"float32[{rows}@{DATA_AXIS},{cols}]",
            f"float32[{rows},{cols}@{MODEL_AXIS}]", f"float32[{rows},{cols}]"]


def sent_options(n: int) -> list[str]:
    return [RAISES, ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, NONE]


QUESTIONS = (
    Question("mesh_typeof_product", CHOICE, typeof_product, typeof_options),
    Question("mesh_ambiguous_dot", CHOICE, ambiguous_dot, sent_options),
    Question("mesh_silent_gather", CHOICE, silent_gather, sent_options),
    Question("mesh_sharding_in_jit", CHOICE, sharding_in_jit, lambda n: [TYPEOF_ONLY, A_SHARDING, NO_SHARDING]),
    Question("mesh_tp_param_fraction", NUMBER, tp_param_fraction, tolerance=0.01),
    Question("mesh_dp_or_tp_bytes", CHOICE, dp_or_tp_bytes, lambda n: [DP_FEWER, TP_FEWER, SAME]),
    Question("mesh_gradient_axis", CHOICE, gradient_axis, lambda n: [ON_DATA, ON_MODEL, ON_BOTH, NOT_SENT]),
    Question("mesh_reduced_all_reduces", NUMBER, reduced_all_reduces),
)
