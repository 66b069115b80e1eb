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

The schedule (`train.schedules`: GPipe's or 1F1B's table of slots, what each stage keeps, the bubble) is counted
in plain Python; this module compiles it.

The compiled step follows the table slot by slot, inside `jax.shard_map` over the `stage` axis: in each
slot every device looks up its own entry, runs its stage's forward or backward (or nothing), and then
every device sends its stage's output forward (`lax.ppermute` s → s + 1) and its input's cotangent
backward (s → s − 1). What arrives is kept under the micro-batch the sender worked on, until the table
says to use it. A backward recomputes its stage's forward from the kept input (`jax.vjp`), so a stage
keeps one input per micro-batch in flight, in buffers sized from the table (`schedules.stash_slots`): M inputs
under GPipe, at most P under 1F1B, which is where 1F1B's lower peak memory comes from
(`peak_bytes_per_device`, read from the compiled program). Each stage sums its micro-batches' gradients and takes its
SGD step on its own layers: the same gradients as data parallelism over the same batch, whatever the
schedule.

Every slot ends with the ppermutes of every device, so a slot lasts as long as its slowest work, a backward
(which recomputes its forward) wherever one device runs one (`schedules.slot_counts`).
"""

from __future__ import annotations

import dataclasses
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
from pmap_core.train.schedules import BACKWARD, FORWARD, SCHEDULES, Schedule, schedule_bubble, schedule_of
from pmap_core.train.settings import declared, setting
from pmap_core.validation import LabInputError


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
