"""Pipeline parallelism: the MLP's L layers split into P stages, one per device of a `stage` mesh axis,
the global batch into M micro-batches, and a schedule that says, for every device and time slot, which
micro-batch's forward or backward it runs, or that it waits. A `ParallelProgram`
(`PipelineProgram`), registered as impl "pipeline".

    schedule_table(P, M, "gpipe")     every forward, then every backward (Huang et al. 2019, GPipe)
    schedule_table(P, M, "1f1b")      P − s − 1 forwards on stage s, then one forward, one backward
                                      (Narayanan et al. 2019, PipeDream-Flush), so fewer micro-batches wait

The compiled step follows the table slot by slot, inside `jax.shard_map` over the `stage` axis: in each
slot every device looks up its own entry, runs its stage's forward or backward (or nothing), and then
every device sends its stage's output forward (`lax.ppermute` s → s + 1) and its input's cotangent
backward (s → s − 1). What arrives is kept under the micro-batch the sender worked on, until the table
says to use it. A backward recomputes its stage's forward from the kept input (`jax.vjp`), so a stage
keeps one input per micro-batch in flight. Each stage sums its micro-batches' gradients and takes its
SGD step on its own layers: the same gradients as data parallelism over the same batch, whatever the
schedule.

With one time unit per forward and per backward, both schedules take 2(M + P − 1) slots, of which each
device is busy 2M: the bubble is (P − 1)/(M + P − 1) of the step (the Ultra-Scale Playbook, "pipeline
parallelism"), counted here from the table (`bubble_fraction`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.train import models
from pmap_core.train.program import (
    CompiledChunk,
    HeldBytes,
    ProgramSpec,
    bytes_per_device,
    compile_timed,
    param_count,
    place_from_host,
)

STAGE_AXIS = "stage"
SCHEDULES = ("gpipe", "1f1b")
IDLE, FORWARD, BACKWARD = 0, 1, 2


@dataclasses.dataclass(frozen=True)
class Slot:
    """What one device does in one time slot: `kind` FORWARD, BACKWARD or IDLE, on micro-batch `micro`
    (-1 when idle)."""

    kind: int
    micro: int = -1

    def __str__(self) -> str:
        return "." if self.kind == IDLE else f"{'FB'[self.kind - 1]}{self.micro}"


def stage_order(stages: int, microbatches: int, schedule: str, stage: int) -> list[Slot]:
    """The work of one stage, in the order it runs it."""
    forwards = [Slot(FORWARD, m) for m in range(microbatches)]
    backwards = [Slot(BACKWARD, m) for m in range(microbatches)]
    if schedule == "gpipe":
        return forwards + backwards
    if schedule != "1f1b":
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    warmup = min(stages - stage - 1, microbatches)
    order = forwards[:warmup]
    for m in range(microbatches - warmup):
        order += [forwards[warmup + m], backwards[m]]
    return order + backwards[microbatches - warmup:]


def schedule_table(stages: int, microbatches: int, schedule: str) -> list[list[Slot]]:
    """[slot][stage]: each stage runs its next piece of work as soon as what it needs was done in an
    earlier slot (a forward: the previous stage's forward of that micro-batch; a backward: the next
    stage's backward, or on the last stage its own forward), else it waits."""
    orders = [stage_order(stages, microbatches, schedule, s) for s in range(stages)]
    done: dict[tuple[int, int, int], int] = {}  # (kind, stage, micro) -> slot it ran in
    position = [0] * stages
    table: list[list[Slot]] = []
    while any(position[s] < len(orders[s]) for s in range(stages)):
        t = len(table)
        row = []
        for s in range(stages):
            work = orders[s][position[s]] if position[s] < len(orders[s]) else Slot(IDLE)
            if work.kind == FORWARD:
                needs = (FORWARD, s - 1, work.micro) if s > 0 else None
            elif work.kind == BACKWARD:
                needs = (BACKWARD, s + 1, work.micro) if s < stages - 1 else (FORWARD, s, work.micro)
            else:
                needs = None
            ready = work.kind != IDLE and (needs is None or done.get(needs, t) < t)
            row.append(work if ready else Slot(IDLE))
        for s, work in enumerate(row):
            if work.kind != IDLE:
                done[(work.kind, s, work.micro)] = t
                position[s] += 1
        table.append(row)
    return table


def bubble_fraction(table: list[list[Slot]]) -> float:
    """The share of device time slots in which a device waits."""
    slots = [slot for row in table for slot in row]
    return sum(slot.kind == IDLE for slot in slots) / len(slots)


def schedule_bubble(stages: int, microbatches: int, schedule: str) -> float:
    return bubble_fraction(schedule_table(stages, microbatches, schedule))


def format_table(table: list[list[Slot]]) -> str:
    """One line per stage, one column per slot: F3 a forward of micro-batch 3, B3 its backward, . idle."""
    return "\n".join(" ".join(f"{row[s]!s:>3}" for row in table) for s in range(len(table[0])))


@dataclasses.dataclass(frozen=True)
class StageLayout:
    """Where each parameter of each stage sits in that stage's flat buffer (all padded to one size)."""

    shapes: tuple[tuple[tuple[str, tuple[int, ...]], ...], ...]   # per stage: (name, shape) in order
    size: int                                                        # the buffer's length

    @classmethod
    def of(cls, params: dict[str, np.ndarray], layers: int, stages: int) -> StageLayout:
        names = models.layer_names("mlp", layers)
        per = layers // stages
        shapes = tuple(tuple((n, tuple(np.shape(params[n]))) for layer in names[s * per:(s + 1) * per] for n in layer)
                       for s in range(stages))
        return cls(shapes, max(sum(math.prod(shape) for _, shape in stage) for stage in shapes))

    def stage_sizes(self) -> list[int]:
        return [sum(math.prod(shape) for _, shape in stage) for stage in self.shapes]

    def flatten(self, params: dict[str, np.ndarray]) -> np.ndarray:
        """(P, size): row s is stage s's parameters, flat, then zeros."""
        rows = np.zeros((len(self.shapes), self.size), np.float32)
        for s, stage in enumerate(self.shapes):
            flat = np.concatenate([np.ravel(params[n]) for n, _ in stage])
            rows[s, :flat.size] = flat
        return rows

    def unflatten_stage(self, stage: int, buffer: Any) -> dict[str, Any]:
        params, offset = {}, 0
        for name, shape in self.shapes[stage]:
            n = math.prod(shape)
            params[name] = buffer[offset:offset + n].reshape(shape)
            offset += n
        return params

    def unflatten(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        return {n: np.asarray(v) for s in range(len(self.shapes)) for n, v in self.unflatten_stage(s, rows[s]).items()}


def stage_forward(layout: StageLayout, stage: int, layers: int, hidden: int):
    """Stage `stage` as f(buffer, x, h, y, scale) -> (output (b, hidden), scaled loss): the first stage
    reads x, the others h; the last stage returns zeros and the loss of its predictions times
    `scale`, the others their activations and 0."""
    per = layers // len(layout.shapes)
    last = stage == len(layout.shapes) - 1

    def forward(buffer, x, h, y, scale):
        params = layout.unflatten_stage(stage, buffer)
        out = x if stage == 0 else h
        for layer in range(stage * per, (stage + 1) * per):
            out = models.apply_layer("mlp", layer, params, out)
        if last:
            return jnp.zeros((x.shape[0], hidden), jnp.float32), scale * jnp.mean((out - y) ** 2)
        return out, jnp.zeros((), jnp.float32)

    return forward


def chunk(layout: StageLayout, spec: ProgramSpec, mesh: Mesh):
    """`spec.steps` pipelined SGD steps in one `lax.scan`, under `shard_map` over the stage axis:
    (buffers (P, size) split by stage, x, y, learning_rate) -> (buffers, losses (steps,))."""
    stages, micro, hidden = spec.pipeline_stages, spec.microbatches, spec.hidden
    table = schedule_table(stages, micro, spec.schedule)
    kinds = jnp.asarray([[slot.kind for slot in row] for row in table], jnp.int32)
    micros = jnp.asarray([[max(slot.micro, 0) for slot in row] for row in table], jnp.int32)
    forwards = [stage_forward(layout, s, spec.layers, hidden) for s in range(stages)]
    to_next = [(s, s + 1) for s in range(stages - 1)]
    to_previous = [(s + 1, s) for s in range(stages - 1)]

    def step(buffer, x, y, learning_rate):
        s = lax.axis_index(STAGE_AXIS)
        xs, ys = x.reshape(micro, -1, x.shape[-1]), y.reshape(micro, -1)
        rows = xs.shape[1]
        zeros = jnp.zeros((micro, rows, hidden), jnp.float32)

        def run_stage(m, inputs, buf):
            return lax.switch(s, forwards, buf, xs[m], inputs[m], ys[m], jnp.float32(1.0 / micro))

        def slot(state, t):
            inputs, cotangents, grads, loss = state
            kind, m = kinds[t, s], micros[t, s]

            def idle(_):
                return jnp.zeros((rows, hidden)), jnp.zeros((rows, hidden)), jnp.zeros_like(grads), jnp.float32(0)

            def forward(_):
                out, value = run_stage(m, inputs, buffer)
                return out, jnp.zeros((rows, hidden)), jnp.zeros_like(grads), value

            def backward(_):
                _, pullback = jax.vjp(lambda b, h: lax.switch(s, forwards, b, xs[m], h, ys[m],
                                                              jnp.float32(1.0 / micro)), buffer, inputs[m])
                grad, dh = pullback((cotangents[m], jnp.float32(1.0)))
                return jnp.zeros((rows, hidden)), dh, grad, jnp.float32(0)

            sent_forward, sent_backward, grad, value = lax.switch(kind, (idle, forward, backward), None)
            arrived = lax.ppermute(sent_forward, STAGE_AXIS, to_next)
            returned = lax.ppermute(sent_backward, STAGE_AXIS, to_previous)
            before, after = jnp.maximum(s - 1, 0), jnp.minimum(s + 1, stages - 1)
            keep = (s > 0) & (kinds[t, before] == FORWARD)
            inputs = inputs.at[micros[t, before]].set(jnp.where(keep, arrived, inputs[micros[t, before]]))
            keep = (s < stages - 1) & (kinds[t, after] == BACKWARD)
            cotangents = cotangents.at[micros[t, after]].set(
                jnp.where(keep, returned, cotangents[micros[t, after]]))
            return (inputs, cotangents, grads + grad, loss + value), None

        start = (zeros, zeros, jnp.zeros_like(buffer), jnp.float32(0))
        (_, _, grads, loss), _ = lax.scan(slot, start, jnp.arange(len(table)))
        return buffer - learning_rate * grads, lax.psum(loss, STAGE_AXIS)

    def run(buffers, x, y, learning_rate):
        buffer, losses = lax.scan(lambda b, _: step(b, x, y, learning_rate), buffers[0], None, length=spec.steps)
        return buffer[None], losses

    # Unchecked: the stages' branches differ in which of their values vary over the axis (the first stage
    # reads x, the same on every device), and every derivative here is taken inside one device's body.
    body = jax.shard_map(run, mesh=mesh, in_specs=(P(STAGE_AXIS), P(), P(), P()), out_specs=(P(STAGE_AXIS), P()),
                         check_vma=False)
    return jax.jit(body)


def stage_mesh(stages: int) -> Mesh:
    return jax.make_mesh((stages,), (STAGE_AXIS,), devices=jax.devices()[:stages])


@dataclasses.dataclass(frozen=True)
class PipelineProgram(CompiledChunk):
    """A compiled pipelined chunk: run(buffers, x, y, learning_rate) -> (buffers, losses), buffers
    (P, size) with row s on stage s's device, the losses the global batch's, one per step."""

    mesh: Mesh
    layout: StageLayout
    table: tuple[tuple[Slot, ...], ...]

    @property
    def bubble_fraction(self) -> float:
        return bubble_fraction([list(row) for row in self.table])

    def place(self, params: dict[str, np.ndarray], data: Any, learning_rate: float) -> tuple:
        def put(value: Any, spec: P) -> jax.Array:
            return place_from_host(np.asarray(value), NamedSharding(self.mesh, spec))

        return (put(self.layout.flatten(params), P(STAGE_AXIS)), put(data.x, P()), put(data.y, P()),
                put(np.float32(learning_rate), P()))

    def step_losses(self, losses: jax.Array) -> np.ndarray:
        return np.asarray(losses.addressable_shards[0].data, np.float64)

    def local_losses(self, losses: jax.Array) -> np.ndarray:
        return np.stack([np.ravel(np.asarray(shard.data)) for shard in losses.addressable_shards])

    def final_params(self, carry: Any) -> tuple[dict[str, np.ndarray], float]:
        """Each stage's layers live on its device only: no copies to compare."""
        rows = np.stack([np.asarray(shard.data)[0] for shard in sorted(
            carry.addressable_shards, key=lambda shard: shard.index[0].start or 0)])
        return self.layout.unflatten(rows), 0.0

    def held_bytes(self, carry: Any) -> HeldBytes:
        """Each device holds its stage's layers, padded to the largest stage; its gradient has the same
        size. SGD keeps no state."""
        params = bytes_per_device(carry)
        padding = 4 * (self.layout.size - min(self.layout.stage_sizes()))
        return HeldBytes(params=params, grads=params, opt=0, padding=padding)


def build(spec: ProgramSpec) -> PipelineProgram:
    """Compile the chunk of `spec` on a mesh of P stages."""
    mesh = stage_mesh(spec.pipeline_stages)
    params = models.init_params(spec.model, spec.features, spec.hidden, 0, spec.layers)
    layout = StageLayout.of(params, spec.layers, spec.pipeline_stages)
    batch = spec.devices * spec.per_device_batch

    def abstract(shape: tuple[int, ...], partition: P) -> jax.ShapeDtypeStruct:
        return jax.ShapeDtypeStruct(shape, np.float32, sharding=NamedSharding(mesh, partition))

    args = (abstract((spec.pipeline_stages, layout.size), P(STAGE_AXIS)), abstract((batch, spec.features), P()),
            abstract((batch,), P()), abstract((), P()))
    lowered, compiled, seconds = compile_timed(chunk(layout, spec, mesh), args)
    table = tuple(tuple(row) for row in schedule_table(spec.pipeline_stages, spec.microbatches, spec.schedule))
    return PipelineProgram(spec, tuple(mesh.devices.flat), compiled, seconds, param_count(params),
                           lowered.as_text(dialect="hlo"), mesh, layout, table)
