"""Pipeline parallelism: a model's L layers split into P stages, one per device of a `stage` mesh axis
(D/P such pipelines side by side on a `data` axis, data parallel over them), each pipeline's rows of the
global batch into M micro-batches, and a schedule that says, for every device and time slot, which
micro-batch's forward or backward it runs, or that it waits. A `ParallelProgram`
(`PipelineProgram`), registered as impl "pipeline".

Two models run in stages, each stage's layers taken from `models.stage_layers`, never named here:

    the MLP            its L layers, L/P per stage; stages pass (micro-batch, hidden) activations
    the transformer    its L blocks, L/P per stage; the token + position embedding runs on the first stage
                       and the final LayerNorm, the output head and the loss on the last, as Megatron-LM
                       and GPipe place them (so the first and last stages carry a little more work than the
                       others); the first stage reads int32 tokens (micro-batch, seq_len), the stages pass
                       the residual stream (micro-batch, seq_len, d_model) float32, and the last stage's
                       loss is the cross-entropy averaged over its micro-batch's rows and positions

    schedule_table(P, M, "gpipe")     every forward, then every backward, the last micro-batch's first
                                      (Huang et al. 2019, GPipe, §2.3)
    schedule_table(P, M, "1f1b")      P − s − 1 forwards on stage s, then one forward, one backward
                                      (Narayanan et al. 2021, PipeDream-Flush), so fewer micro-batches wait

The compiled step follows the table slot by slot, inside `jax.shard_map` over the `stage` axis: in each
slot every device looks up its own entry, runs its stage's forward or backward (or nothing), and then
every device sends its stage's output forward (`lax.ppermute` s → s + 1) and its input's cotangent
backward (s → s − 1). What arrives is kept under the micro-batch the sender worked on, until the table
says to use it. A backward recomputes its stage's forward from the kept input (`jax.vjp`), so a stage
keeps one input per micro-batch in flight, in buffers sized from the table (`stash_slots`): M inputs
under GPipe, at most P under 1F1B, which is where 1F1B's lower peak memory comes from
(`peak_bytes_per_device`, read from the compiled program). Each stage sums its micro-batches' gradients and takes its
SGD step on its own layers: the same gradients as data parallelism over the same batch, whatever the
schedule.

With one time unit per forward and per backward, both schedules take 2(M + P − 1) slots, of which each
device is busy 2M: the bubble is (P − 1)/(M + P − 1) of the step (GPipe §2.3; the Ultra-Scale Playbook,
"Pipeline parallelism", gives it over the ideal time, (P − 1)/M), counted here from the table
(`bubble_fraction`). That is the papers' asynchronous model. This program runs the table in lockstep: every
slot ends with the ppermutes of every device, so a slot lasts as long as its slowest work, a backward (which
recomputes its forward) wherever one device runs one (`slot_counts`).

`schedule_of(P, M, name)` counts all of this once into a `Schedule` (the table, the kept inputs, the buffers,
the slot counts, the bubble and the summary), which the compiled program, the pages and the lab pass along.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from pmap_core.train import footprint, models
from pmap_core.train.config import MAX_LAYERS, MAX_MICROBATCHES
from pmap_core.train.mesh import DATA_AXIS, STAGE_AXIS, build_mesh
from pmap_core.train.program import (
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
    if schedule == "gpipe":  # the backwards in reverse: the last micro-batch's forward is the freshest (§2.3)
        return forwards + backwards[::-1]
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
    return schedule_of(stages, microbatches, schedule).bubble_fraction


@dataclasses.dataclass(frozen=True)
class SlotCounts:
    """The slots of a table by their slowest work: in lockstep a slot lasts as long as the slowest device's
    work in it, so one step takes forward_slots · t_f + backward_slots · t_b (t_b a backward, which
    recomputes the forward: more than t_f)."""

    forward_slots: int      # slots whose slowest work is a forward (no device runs a backward)
    backward_slots: int     # slots in which at least one device runs a backward

    def step_time(self, t_forward: float, t_backward: float) -> float:
        return self.forward_slots * t_forward + self.backward_slots * t_backward


def slot_counts(table: list[list[Slot]]) -> SlotCounts:
    """Counted from the table: GPipe M + P − 1 of each; 1F1B (P ≥ 2) P forward slots and 2M + P − 2 backward
    ones, its forwards sharing slots with other stages' backwards."""
    backward = sum(any(slot.kind == BACKWARD for slot in row) for row in table)
    forward = sum(any(slot.kind == FORWARD for slot in row) for row in table) - sum(
        any(slot.kind == FORWARD for slot in row) and any(slot.kind == BACKWARD for slot in row) for row in table)
    return SlotCounts(forward, backward)


def slot_of(table: list[list[Slot]], kind: int, stage: int, micro: int) -> int:
    """The time slot in which `stage` runs `kind` of micro-batch `micro`."""
    return next(t for t, row in enumerate(table) if row[stage] == Slot(kind, micro))


def held(table: list[list[Slot]], kept: str) -> list[int]:
    """[stage]: the most micro-batches a stage keeps at once. kept "activations": a stage's input, from the
    end of the slot in which the previous stage sent it to the slot of the stage's own backward (the first
    stage keeps none: its backward recomputes its forward from its rows of the batch); "cotangents": the
    gradient of its output, from the end of the next stage's backward to its own backward (the last stage:
    none). This is what "micro-batches kept" means everywhere in the lab."""
    stages, micro = len(table[0]), len({slot.micro for row in table for slot in row} - {-1})
    most = []
    for s in range(stages):
        sender = s - 1 if kept == "activations" else s + 1
        if not 0 <= sender < stages:
            most.append(0)
            continue
        kind = FORWARD if kept == "activations" else BACKWARD
        spans = [(slot_of(table, kind, sender, m), slot_of(table, BACKWARD, s, m)) for m in range(micro)]
        most.append(max(sum(arrived <= t < used for arrived, used in spans) for t in range(len(table))))
    return most


def stash_slots(table: list[list[Slot]]) -> tuple[int, int]:
    """(activation slots, cotangent slots) of every stage's buffers: the most any stage keeps at once (one
    compiled program runs on every stage, so every stage has the same buffers). GPipe keeps all M
    inputs until the first backward; 1F1B at most P − s + 1 on stage s ≥ 1 (its P − s − 1 warm-up forwards,
    the micro-batch in its forward-backward pair, and the next one already arrived). Micro-batch m sits in
    slot m mod K: GPipe keeps all M (K = M, one slot each); 1F1B works its micro-batches in order, so the K
    it keeps are consecutive; and the one whose backward frees a slot is read before the slot's new arrival
    is written."""
    return _buffer_slots(held(table, "activations"), held(table, "cotangents"))


def _buffer_slots(activations: list[int], cotangents: list[int]) -> tuple[int, int]:
    return max(1, *activations), max(1, *cotangents)


@dataclasses.dataclass(frozen=True)
class ScheduleSummary:
    """What one schedule's table says, counted from it (no device needed)."""

    slots: int              # time slots of one step: 2(M + P − 1)
    busy: int               # of them, the slots each device works: 2M
    idle: int               # idle cells of the whole table (devices × slots)
    bubble_fraction: float  # idle / all cells: (P − 1)/(M + P − 1)
    kept: int               # the most micro-batches' inputs a stage keeps at once (`held`; none with one stage)


def schedule_summary(stages: int, microbatches: int, schedule: str) -> ScheduleSummary:
    return schedule_of(stages, microbatches, schedule).summary


@dataclasses.dataclass(frozen=True)
class Schedule:
    """One schedule of P stages and M micro-batches, everything the lab reads from its table counted once
    (`schedule_of`): the table the compiled step follows, the micro-batches each stage keeps, its buffers,
    its slots by their slowest work and the summary the pages show. Passed along, never recounted."""

    name: str                                 # "gpipe" or "1f1b"
    stages: int
    microbatches: int
    table: tuple[tuple[Slot, ...], ...]       # [slot][stage] (`schedule_table`)
    held: tuple[int, ...]                     # per stage, the most inputs kept at once (`held`, "activations")
    stash_slots: tuple[int, int]              # (activation, cotangent) buffer slots of every stage (`stash_slots`)
    slot_counts: SlotCounts                   # the slots by their slowest work, for the lockstep step time
    summary: ScheduleSummary                  # slots, busy, idle, bubble and most kept

    @property
    def bubble_fraction(self) -> float:
        return self.summary.bubble_fraction

    def rows(self) -> list[list[Slot]]:
        """The table as `schedule_table` returns it (a fresh list of lists)."""
        return [list(row) for row in self.table]


@functools.lru_cache(maxsize=256)
def schedule_of(stages: int, microbatches: int, name: str) -> Schedule:
    """The `Schedule` of `name` on P stages and M micro-batches, counted once per (P, M, name)."""
    table = schedule_table(stages, microbatches, name)
    activations, cotangents = held(table, "activations"), held(table, "cotangents")
    idle = sum(slot.kind == IDLE for row in table for slot in row)
    summary = ScheduleSummary(len(table), 2 * microbatches, idle, bubble_fraction(table), max(activations))
    return Schedule(name, stages, microbatches, tuple(tuple(row) for row in table), tuple(activations),
                    _buffer_slots(activations, cotangents), slot_counts(table), summary)


def format_table(table: list[list[Slot]]) -> str:
    """One line per stage, one column per slot: F3 a forward of micro-batch 3, B3 its backward, . idle."""
    return "\n".join(" ".join(f"{row[s]!s:>3}" for row in table) for s in range(len(table[0])))


@dataclasses.dataclass(frozen=True)
class StageLayout:
    """Where each parameter of each stage sits in that stage's flat buffer (all padded to one size), and which
    of the model's layers (positions in `models.layer_names`) each stage runs."""

    shapes: tuple[tuple[tuple[str, tuple[int, ...]], ...], ...]   # per stage: (name, shape) in order
    size: int                                                        # the buffer's length
    model: str = "mlp"
    layers: tuple[tuple[int, ...], ...] = ()                         # per stage: its layers, in order

    @classmethod
    def of(cls, params: dict[str, np.ndarray], layers: int, stages: int, model: str = "mlp") -> StageLayout:
        names = models.layer_names(model, layers)
        split = models.stage_layers(model, layers, stages)
        shapes = tuple(tuple((n, tuple(np.shape(params[n]))) for layer in stage for n in names[layer])
                       for stage in split)
        return cls(shapes, max(sum(math.prod(shape) for _, shape in stage) for stage in shapes), model, split)

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


def stage_forward(layout: StageLayout, stage: int, layers: int):
    """Stage `stage` as f(buffer, x, h, y, scale) -> (output shaped as h, scaled loss): the first stage
    reads x (the MLP's inputs, the transformer's tokens), the others h (the activations the previous stage
    sent); the last stage returns zeros and the loss of its output (`models.output_loss`) times `scale`, the
    others their activations and 0."""
    last = stage == len(layout.shapes) - 1

    def forward(buffer, x, h, y, scale):
        params = layout.unflatten_stage(stage, buffer)
        out = x if stage == 0 else h
        for layer in layout.layers[stage]:
            out = models.apply_layer(layout.model, layer, params, out, layers)
        if last:
            return jnp.zeros_like(h), scale * models.output_loss(layout.model, out, y)
        return out, jnp.zeros((), jnp.float32)

    return forward


def chunk(layout: StageLayout, spec: ProgramSpec, mesh: Mesh, schedule: Schedule):
    """`spec.steps` pipelined SGD steps in one `lax.scan`, under `shard_map` over the data × stage mesh,
    following `schedule` (the `Schedule` of spec's P, M and schedule):
    (buffers (P, size) split by stage, x, y split by data, learning_rate) -> (buffers, losses (steps,)).
    With D/P > 1 pipelines side by side (data parallelism on the data axis), each runs the schedule on its
    rows of the batch, and the stages average their gradients over the data axis before the step."""
    stages, micro = spec.pipeline_stages, spec.microbatches
    replicas = spec.devices // stages
    shape = activation_shape(spec)  # one micro-batch's activations between two stages
    table = schedule.table
    kinds = jnp.asarray([[slot.kind for slot in row] for row in table], jnp.int32)
    micros = jnp.asarray([[max(slot.micro, 0) for slot in row] for row in table], jnp.int32)
    kept, pending = schedule.stash_slots  # buffers of `kept` inputs and `pending` cotangents per stage
    forwards = [stage_forward(layout, s, spec.layers) for s in range(stages)]
    to_next = [(s, s + 1) for s in range(stages - 1)]
    to_previous = [(s + 1, s) for s in range(stages - 1)]

    def step(buffer, x, y, learning_rate):
        s = lax.axis_index(STAGE_AXIS)
        xs, ys = x.reshape(micro, -1, *x.shape[1:]), y.reshape(micro, -1, *y.shape[1:])

        def run_stage(m, inputs, buf):
            return lax.switch(s, forwards, buf, xs[m], inputs[m % kept], ys[m], jnp.float32(1.0 / micro))

        def slot(state, t):
            inputs, cotangents, grads, loss = state
            kind, m = kinds[t, s], micros[t, s]

            def idle(_):
                return jnp.zeros(shape), jnp.zeros(shape), jnp.zeros_like(grads), jnp.float32(0)

            def forward(_):
                out, value = run_stage(m, inputs, buffer)
                return out, jnp.zeros(shape), jnp.zeros_like(grads), value

            def backward(_):
                _, pullback = jax.vjp(lambda b, h: lax.switch(s, forwards, b, xs[m], h, ys[m],
                                                              jnp.float32(1.0 / micro)), buffer, inputs[m % kept])
                grad, dh = pullback((cotangents[m % pending], jnp.float32(1.0)))
                return jnp.zeros(shape), dh, grad, jnp.float32(0)

            sent_forward, sent_backward, grad, value = lax.switch(kind, (idle, forward, backward), None)
            arrived = lax.ppermute(sent_forward, STAGE_AXIS, to_next)
            returned = lax.ppermute(sent_backward, STAGE_AXIS, to_previous)
            before, after = jnp.maximum(s - 1, 0), jnp.minimum(s + 1, stages - 1)
            keep = (s > 0) & (kinds[t, before] == FORWARD)
            here = micros[t, before] % kept
            inputs = inputs.at[here].set(jnp.where(keep, arrived, inputs[here]))
            keep = (s < stages - 1) & (kinds[t, after] == BACKWARD)
            here = micros[t, after] % pending
            cotangents = cotangents.at[here].set(jnp.where(keep, returned, cotangents[here]))
            return (inputs, cotangents, grads + grad, loss + value), None

        start = (jnp.zeros((kept, *shape), jnp.float32), jnp.zeros((pending, *shape), jnp.float32),
                 jnp.zeros_like(buffer), jnp.float32(0))
        (_, _, grads, loss), _ = lax.scan(slot, start, jnp.arange(len(table)))
        loss = lax.psum(loss, STAGE_AXIS)
        if replicas > 1:
            grads, loss = lax.pmean((grads, loss), DATA_AXIS)
        return buffer - learning_rate * grads, loss

    def run(buffers, x, y, learning_rate):
        buffer, losses = lax.scan(lambda b, _: step(b, x, y, learning_rate), buffers[0], None, length=spec.steps)
        return buffer[None], losses

    # Unchecked: the stages' branches differ in which of their values vary over the axis (the first stage
    # reads x, the same on every device), and every derivative here is taken inside one device's body.
    body = jax.shard_map(run, mesh=mesh, in_specs=(P(STAGE_AXIS), P(DATA_AXIS), P(DATA_AXIS), P()),
                         out_specs=(P(STAGE_AXIS), P()), check_vma=False)
    return jax.jit(body)


def stage_mesh(stages: int, devices: int | None = None) -> Mesh:
    """A data × stage mesh of `devices` (default: `stages`) devices: stage s of pipeline r on device r·P + s."""
    devices = devices or stages
    return build_mesh({DATA_AXIS: devices // stages, STAGE_AXIS: stages})


@dataclasses.dataclass(frozen=True)
class PipelineProgram(MeshProgram):
    """A compiled pipelined chunk: run(buffers, x, y, learning_rate) -> (buffers, losses), buffers
    (P, size) with row s on stage s's device, the losses the global batch's, one per step."""

    layout: StageLayout
    schedule: Schedule      # the table the chunk follows, and what it counts

    @property
    def bubble_fraction(self) -> float:
        return self.schedule.bubble_fraction

    def place(self, params: dict[str, np.ndarray], data: Any, learning_rate: float) -> tuple:
        return (self.put(self.layout.flatten(params), P(STAGE_AXIS)), self.put(data.x, P(DATA_AXIS)),
                self.put(data.y, P(DATA_AXIS)), self.put(np.float32(learning_rate), P()))

    def final_params(self, carry: Any) -> tuple[dict[str, np.ndarray], float]:
        """Each stage's layers, from the first pipeline that holds them, and the largest difference between
        the pipelines' copies of a stage (0 with one pipeline: each stage on one device only)."""
        copies: dict[int, list[np.ndarray]] = {}
        for shard in carry.addressable_shards:
            copies.setdefault(shard.index[0].start or 0, []).append(np.asarray(shard.data)[0])
        rows = np.stack([copies[s][0] for s in sorted(copies)])
        spread = max(float(np.max(np.abs(copy - same[0]))) for same in copies.values() for copy in same)
        return self.layout.unflatten(rows), spread

    def held_bytes(self, carry: Any) -> HeldBytes:
        """Each device holds its stage's layers, padded to the largest stage; its gradient has the same
        size. SGD keeps no state."""
        params = bytes_per_device(carry)
        padding = 4 * (self.layout.size - min(self.layout.stage_sizes()))
        return HeldBytes(params=params, grads=params, opt=0, padding=padding)


def spec_dims(spec: ProgramSpec) -> models.Dims:
    """The transformer's sizes in `spec` (the other models ignore them)."""
    return models.Dims(spec.d_model, spec.heads, spec.seq_len, spec.vocab)


def activation_shape(spec: ProgramSpec) -> tuple[int, ...]:
    """One micro-batch's activations between two stages (`models.activation_shape`) of rows = B / (D/P · M):
    the MLP's (rows, hidden), the transformer's (rows, seq_len, d_model)."""
    rows = spec.per_device_batch * spec.pipeline_stages // spec.microbatches
    return models.activation_shape(spec.model, rows, spec.hidden, spec_dims(spec))


def stash_bytes(spec: ProgramSpec) -> int:
    """Bytes of the activations and cotangents one device keeps between slots (float32): `stash_slots`
    micro-batches of `activation_shape` (the MLP's (rows, hidden), the transformer's (rows, seq_len, d_model)),
    rows = B / (D/P · M). GPipe: the whole per-pipeline batch, whatever M; 1F1B: P micro-batches at most, less
    as M grows."""
    kept, pending = schedule_of(spec.pipeline_stages, spec.microbatches, spec.schedule).stash_slots
    return 4 * (kept + pending) * math.prod(activation_shape(spec))


def peak_bytes_per_device(program: PipelineProgram) -> int | None:
    """One device's peak bytes during a call of the compiled chunk, from `compiled.memory_analysis()`
    (`train.footprint.peak_bytes`: arguments + outputs − aliased + temporaries); None where the backend
    gives no figures."""
    return footprint.peak_bytes(footprint.compiled_memory(program.compiled))


def peak_bytes_by_schedule(spec: ProgramSpec) -> dict[str, int | None]:
    """{schedule: compiled peak bytes per device} of `spec` under each schedule (compiled here, needs
    spec.devices devices)."""
    return {schedule: peak_bytes_per_device(build(dataclasses.replace(spec, schedule=schedule)))
            for schedule in SCHEDULES}


@dataclasses.dataclass(frozen=True)
class PeakComparison:
    """Both schedules of one pipeline compiled: each one's peak bytes per device, what 1F1B saves, and the
    bytes of activations it does not keep (`stash_bytes`), which the saving should equal."""

    gpipe: int | None
    one_f_one_b: int | None
    saved: int | None
    stash_saved: int


def compiled_peaks(stages: int, layers: int, microbatches: int, rows: int, hidden: int,
                   features: int = 8) -> PeakComparison:
    """The MLP of `layers` layers of width `hidden` on P = `stages` devices, M micro-batches of `rows` rows
    (rows a multiple of P), compiled under GPipe and under 1F1B (not run)."""
    spec = ProgramSpec("pipeline", "mlp", stages, microbatches * rows // stages, features, hidden, 1, layers=layers,
                       pipeline_stages=stages, microbatches=microbatches)
    peaks = peak_bytes_by_schedule(spec)
    gpipe, one = peaks["gpipe"], peaks["1f1b"]
    stash = stash_bytes(spec) - stash_bytes(dataclasses.replace(spec, schedule="1f1b"))
    return PeakComparison(gpipe, one, None if gpipe is None or one is None else gpipe - one, stash)


def build(spec: ProgramSpec) -> PipelineProgram:
    """Compile the chunk of `spec` on a mesh of P stages."""
    mesh = stage_mesh(spec.pipeline_stages, spec.devices)
    params = models.init_params(spec.model, spec.features, spec.hidden, 0, spec.layers, spec_dims(spec))
    layout = StageLayout.of(params, spec.layers, spec.pipeline_stages, spec.model)
    x, y = models.input_shapes(spec.model, spec.devices * spec.per_device_batch, spec.features)
    args = (abstract(mesh, (spec.pipeline_stages, layout.size), P(STAGE_AXIS)),
            abstract(mesh, x.shape, P(DATA_AXIS), x.dtype), abstract(mesh, y.shape, P(DATA_AXIS), y.dtype),
            abstract(mesh, (), P()))
    schedule = schedule_of(spec.pipeline_stages, spec.microbatches, spec.schedule)
    lowered, compiled, seconds = compile_timed(chunk(layout, spec, mesh, schedule), args)
    return PipelineProgram(spec, tuple(mesh.devices.flat), compiled, seconds, param_count(params),
                           lowered.as_text(dialect="hlo"), mesh, layout, schedule)


PIPELINE_MODELS = ("mlp", models.TRANSFORMER)  # the models this program splits into stages


@declared
@dataclasses.dataclass(frozen=True)
class PipelineSettings:
    """The settings this program owns (a run holds them in `TrainConfig.settings`)."""

    # The CLI's --pipeline-stages, when given, selects this program (its default: "not given").
    pipeline_stages: int = setting(
        1, "P pipeline stages, one per device, the layers split evenly among them (impl pipeline; --devices a "
        "multiple of P, default P: D/P pipelines side by side, data parallel over them)", low=1, high=MAX_LAYERS,
        cli_default=None, reported=True, axis=STAGE_AXIS)
    microbatches: int = setting(1, "impl pipeline: M micro-batches per step ({low}–{high})", low=1,
                                high=MAX_MICROBATCHES, reported=True)
    schedule: str = setting("gpipe", "impl pipeline: gpipe (every forward, then every backward) or 1f1b (one "
                            "forward, one backward)", choices=SCHEDULES, reported=True)


def check(config) -> None:
    """A pipeline trains the MLP or the transformer with SGD in float32 (strategy dp), one stage per device
    and D/P pipelines side by side (data parallelism over them), its layers (the transformer's blocks)
    splitting evenly into the stages and its global batch into D/P · M micro-batches."""
    if config.model not in PIPELINE_MODELS or config.sharded_state:
        raise LabInputError("pipeline_needs_mlp_sgd",
                            "impl pipeline splits the layers of the MLP or the transformer and trains with SGD in "
                            "float32 (strategy dp, no accumulation); got model {model}, optimizer {optimizer}, "
                            "strategy {strategy}",
                            model=config.model, optimizer=config.optimizer, strategy=config.strategy)
    if config.devices % config.pipeline_stages:
        raise LabInputError("pipeline_devices", "impl pipeline runs one stage per device, D/P pipelines side by "
                            "side: {stages} stages need a multiple of {stages} devices, got {devices}",
                            stages=config.pipeline_stages, devices=config.devices)
    if config.layers % config.pipeline_stages:
        raise LabInputError("layers_not_divisible", "{layers} layers do not split evenly into {stages} stages",
                            layers=config.layers, stages=config.pipeline_stages)
    if config.global_batch % (config.devices // config.pipeline_stages * config.microbatches):
        step = config.devices // config.pipeline_stages * config.microbatches
        raise LabInputError("microbatches_not_divisible",
                            "global_batch {batch} does not split into {microbatches} micro-batches of equal size; "
                            "try {suggestion}", batch=config.global_batch, microbatches=step,
                            suggestion=max(step, config.global_batch // step * step))


def refused_elsewhere(config) -> LabInputError:
    return LabInputError("stages_need_pipeline",
                         "pipeline stages, micro-batches and a schedule need impl pipeline, got impl {impl!r}",
                         impl=config.impl)


def _setup(config) -> tuple[str, ...]:
    return (f"M{config.microbatches}", config.schedule)


def _metrics(config) -> dict[str, float]:
    return {"bubble_fraction": schedule_bubble(config.pipeline_stages, config.microbatches, config.schedule)}


def baseline(config) -> dict[str, Any]:
    """S(D) of a pipeline is against the same model unsplit, on one device (impl jit)."""
    return dict(impl="jit", pipeline_stages=1, microbatches=1, schedule="gpipe")


# No analytic model: the footprint reports what the run measured (ZeRO's model does not describe stages).
def plans(layout: PlannedLayout) -> dict[str, Any] | None:
    """A stage axis beside data, ZeRO-0: 1F1B (at most P micro-batches in flight, as the planner counts them), whose
    stages recompute their forward in the backward pass (remat full)."""
    if layout.axis == STAGE_AXIS and layout.zero == 0 and layout.remat == "full":
        return {"pipeline_stages": layout.size, "microbatches": layout.microbatches, "schedule": "1f1b"}
    return None


PROGRAM = Program("pipeline", build, PipelineSettings, check, refused_elsewhere,
                  RunExtras(setup=_setup, metrics=_metrics), baseline=baseline, plans=plans)
