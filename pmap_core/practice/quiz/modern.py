"""Interview questions on the modern ways of writing data parallelism: jit with shardings and shard_map.

Like every question of the quiz, each is a small program whose answer is what it returns on the installed
JAX; `QUESTIONS` gives each its kind and choices (the choices are built from the device count only).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.hlo import COLLECTIVE_KINDS, collectives
from pmap_core.practice.quiz.types import CHOICE, NUMBER, Question
from pmap_core.runtime import DATA_AXIS
from pmap_core.train import programs
from pmap_core.train.program import ProgramSpec

NO_COLLECTIVE = "none"


def _n() -> int:
    return jax.local_device_count()


def _mesh():
    return jax.make_mesh((_n(),), (DATA_AXIS,), devices=jax.local_devices())


def _kinds(compiled_hlo: str) -> str:
    """The kinds of collective in compiled HLO, e.g. "all-reduce", "all-gather + all-reduce", or "none"."""
    return " + ".join(sorted({c.kind for c in collectives(compiled_hlo)})) or NO_COLLECTIVE


# --- the programs -----------------------------------------------------------------

def collectives_sum_rows() -> str:
    mesh = _mesh()
    x = jax.device_put(jnp.ones((4 * _n(), 4)), NamedSharding(mesh, P(DATA_AXIS)))  # rows split over devices
    compiled = jax.jit(lambda x: x.sum(axis=0)).lower(x).compile()  # a sum over the split axis
    return _kinds(compiled.as_text())


def collectives_replicate() -> str:
    mesh = _mesh()
    x = jax.device_put(jnp.ones((4 * _n(), 4)), NamedSharding(mesh, P(DATA_AXIS)))
    double = jax.jit(lambda x: x * 2, out_shardings=NamedSharding(mesh, P()))  # the whole result on every device
    return _kinds(double.lower(x).compile().as_text())


def shard_map_body_shape() -> str:
    seen = []

    def body(v):
        seen.append(v.shape)  # runs once, while tracing: the shape one device works on
        return v * 2

    mesh = _mesh()
    x = jax.device_put(jnp.ones((4 * _n(), 3)), NamedSharding(mesh, P(DATA_AXIS)))
    jax.shard_map(body, mesh=mesh, in_specs=P(DATA_AXIS), out_specs=P(DATA_AXIS))(x)
    return str(tuple(seen[0]))


def replicated_output() -> float:
    mesh = _mesh()
    x = jax.device_put(jnp.arange(2.0 * _n()).reshape(_n(), 2), NamedSharding(mesh, P(DATA_AXIS)))
    total = jax.shard_map(lambda v: lax.psum(v, DATA_AXIS), mesh=mesh, in_specs=P(DATA_AXIS),
                          out_specs=P())(x)  # shape (1, 2): the sum of every device's row
    whole = np.asarray(total)
    holding = [s for s in total.addressable_shards if np.array_equal(np.asarray(s.data), whole)]
    return float(len(holding))  # devices whose shard is the whole value


def same_bytes_three_ways() -> str:
    n, moved = _n(), {}
    for impl in ("pmap", "shard_map", "jit"):
        program = programs.build(ProgramSpec(impl, "mlp", n, 8, 4, 16, 1))  # one MLP training step
        # Bytes each device puts into collectives; a collective among one device moves nothing.
        text = program.compiled.as_text()
        moved[impl] = sum(c.operand_bytes for c in collectives(text) if (c.group_size or n) > 1)
    return "same" if len(set(moved.values())) == 1 else "different"


def typeof_sharded() -> str:
    mesh = _mesh()  # jax.make_mesh: on this JAX its axes are Explicit by default
    x = jax.device_put(np.zeros((4 * _n(), 3), np.float32), NamedSharding(mesh, P(DATA_AXIS)))
    return str(jax.typeof(x))


# --- the choices, from the device count -------------------------------------------------

def collective_options(n: int) -> list[str]:
    return [NO_COLLECTIVE, *COLLECTIVE_KINDS]


def body_shape_options(n: int) -> list[str]:
    return list(dict.fromkeys(str(s) for s in ((4, 3), (4 * n, 3), (n, 4, 3), (1, 4, 3))))


def typeof_options(n: int) -> list[str]:
    return list(dict.fromkeys((f"float32[{4 * n}@{DATA_AXIS},3]", f"float32[{4 * n},3]",
                               f"float32[4@{DATA_AXIS},3]", "float32[4,3]")))


QUESTIONS = (
    Question("collectives_sum_rows", CHOICE, collectives_sum_rows, collective_options),
    Question("collectives_replicate", CHOICE, collectives_replicate, collective_options),
    Question("shard_map_body_shape", CHOICE, shard_map_body_shape, body_shape_options),
    Question("replicated_output", NUMBER, replicated_output),
    Question("same_bytes_three_ways", CHOICE, same_bytes_three_ways, lambda n: ["same", "different"]),
    Question("typeof_sharded", CHOICE, typeof_sharded, typeof_options),
)
