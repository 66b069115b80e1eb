"""Data parallelism on a second axis: what a data axis adds beside P stages when D ≥ 2P, the formula's
figures (`data_axis`, the prediction), and the data × stage pipeline trained (`measure_data_axis`): its bytes
per step on each mesh axis read from the compiled HLO, its loss beside data parallelism's, its S(D)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from pmap_core.concepts.pipeline.settings import FEATURES, MAX_WORK, STEPS, VALUE_BYTES, Settings
from pmap_core.hlo import Collective
from pmap_core.runtime import describe_runtime, physical_cores
from pmap_core.train import models, programs
from pmap_core.train import pipeline as train_pipeline
from pmap_core.train.config import TrainConfig
from pmap_core.train.footprint import collective_runs
from pmap_core.train.loop import train
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError, check_devices

LOSS_RTOL = 1e-5           # final losses this close are the same training, the float sums in another order
FLOAT32_EPS = float(np.finfo(np.float32).eps)


@dataclasses.dataclass(frozen=True)
class DataAxis:
    """D devices as X = ⌊D/P⌋ pipelines side by side on a `data` axis (X × P of them used): each replica
    takes 1/X of the global batch, and after its last backward each stage all-reduces its gradient with
    the same stage of the other replicas. The formula's figures: the prediction `measure_data_axis` is read
    against."""

    devices: int
    stages: int
    replicas: int
    used: int
    stage_param_bytes: int        # the largest stage's parameters, float32
    allreduce_bytes: float        # ring: 2(X − 1)/X · stage_param_bytes sent per device per step

    @property
    def unused(self) -> int:
        return self.devices - self.used


def data_axis(devices: int, stages: int, layers: int, hidden: int, features: int = FEATURES, model: str = "mlp",
              dims: models.Dims | None = None) -> DataAxis | None:
    """The data × stage mesh D allows, or None when D < 2P (no room for a second pipeline); `model` and `dims`
    as in `Settings`."""
    replicas = devices // stages
    if replicas < 2:
        return None
    params = models.init_params(model, features, hidden, 0, layers, dims)
    layout = train_pipeline.StageLayout.of(params, layers, stages, model)
    stage_bytes = max(layout.stage_sizes()) * VALUE_BYTES
    return DataAxis(devices, stages, replicas, replicas * stages, stage_bytes,
                    2 * (replicas - 1) / replicas * stage_bytes)


def ring_share(group: int) -> float:
    """2(X − 1)/X: the share of an array each of X devices sends in a ring all-reduce (Patarasuk and Yuan
    2009: a reduce-scatter, then an all-gather, each X − 1 steps of 1/X of the array)."""
    return 2 * (group - 1) / group


def axis_groups(replicas: int, stages: int, axis: str) -> frozenset[frozenset[int]]:
    """The groups of device ids a collective over `axis` ("data" or "stage") of the X × P mesh runs in:
    device r·P + s is stage s of pipeline r (`train.pipeline.stage_mesh`)."""
    if axis == train_pipeline.DATA_AXIS:
        return frozenset(frozenset(r * stages + s for r in range(replicas)) for s in range(stages))
    return frozenset(frozenset(r * stages + s for s in range(stages)) for r in range(replicas))


def mesh_axis_of(collective: Collective, replicas: int, stages: int) -> str | None:
    """Which mesh axis a collective of the data × stage program runs over, from its HLO groups: "data",
    "stage", or None when its groups are neither. The program's only collective-permutes are its ppermutes
    over the stage axis (activations forward, cotangents back), whose HLO names pairs, not groups."""
    if collective.kind == "collective-permute":
        return train_pipeline.STAGE_AXIS
    groups = collective.groups
    if groups == ():  # one group of every device
        groups = (tuple(range(replicas * stages)),)
    if groups is None:
        return None
    found = frozenset(frozenset(g) for g in groups)
    for axis in (train_pipeline.DATA_AXIS, train_pipeline.STAGE_AXIS):
        if found == axis_groups(replicas, stages, axis):
            return axis
    return None


@dataclasses.dataclass(frozen=True)
class DataAxisRun:
    """The data × stage pipeline trained for `steps` steps on X·P devices, beside data parallelism on the
    same devices, the same global batch and the same initial parameters. Bytes are what one device sends per
    step, read from the compiled program's HLO (`train.footprint.collective_runs`: each collective times
    the loops around it, over the steps); the step times are steady ones (`train.loop`)."""

    axis: DataAxis                    # the formula's figures: the prediction
    microbatches: int
    rows: int                         # rows of one micro-batch
    hidden: int
    activation_values: int            # values of one micro-batch's activation (`Settings.activation_values`)
    global_batch: int                 # X · M · rows
    steps: int
    slots: int                        # time slots of one step, counted from `schedule_table`: 2(M + P − 1)
    backward_slots: int               # of them, those in which some device runs a backward (`slot_counts`)
    data_bytes: float                 # all-reduce over the data axis (each stage's gradient, and the loss)
    data_shapes: tuple[str, ...]      # the arrays that all-reduce carries
    data_reductions: float            # all-reduces over the data axis per step
    stage_reduce_bytes: float         # all-reduce over the stage axis (the loss, summed over the stages)
    stage_reductions: float           # all-reduces over the stage axis per step
    permute_bytes: float              # collective-permutes over the stage axis, at most (an end stage's has no target)
    permutes_per_step: float
    collectives_per_step: float       # every collective of the compiled step
    comm_bytes_per_step: float        # the footprint's total (`train.footprint.measure`)
    pipeline_loss: float              # the final step's loss over the global batch
    data_parallel_loss: float
    step_s: float                     # the pipeline's steady step time
    baseline_step_s: float            # the unsplit model's on one device (its S(D) is against it)
    scaling_ratio: float
    data_parallel_step_s: float
    data_parallel_scaling_ratio: float
    data_parallel_collectives_per_step: float
    cores: int
    simulated: bool

    @property
    def replicas(self) -> int:
        return self.axis.replicas

    @property
    def stages(self) -> int:
        return self.axis.stages

    @property
    def formula_data_bytes(self) -> float:
        """2(X − 1)/X × the stage's parameter bytes (the gradient) + 2(X − 1)/X × 4 (the loss, in the same
        all-reduce)."""
        return self.axis.allreduce_bytes + self.formula_loss_bytes

    @property
    def formula_loss_bytes(self) -> float:
        return ring_share(self.replicas) * VALUE_BYTES

    @property
    def formula_stage_reduce_bytes(self) -> float:
        """2(P − 1)/P × 4: the loss summed over the stages."""
        return ring_share(self.stages) * VALUE_BYTES

    @property
    def formula_permute_bytes(self) -> int:
        """Two ppermutes per slot (an activation forward, a cotangent back), each one micro-batch's activation
        (rows × H, or the transformer's rows × seq_len × d_model) × 4 bytes; none with one stage."""
        return 2 * self.slots * self.activation_values * VALUE_BYTES if self.stages > 1 else 0

    @property
    def loss_gap(self) -> float:
        """|pipeline − data parallel| / |data parallel| of the final loss."""
        return abs(self.pipeline_loss - self.data_parallel_loss) / abs(self.data_parallel_loss)

    @property
    def per_collective_s(self) -> float:
        """The pipeline's step time over its collectives per step."""
        return self.step_s / self.collectives_per_step

    def traffic_rows(self) -> list[dict[str, object]]:
        """Measured beside the formula, one row per collective of the compiled step."""
        return [
            {"traffic": "data_allreduce", "axis": train_pipeline.DATA_AXIS, "per_step": self.data_reductions,
             "measured_bytes": self.data_bytes, "formula_bytes": self.formula_data_bytes},
            {"traffic": "stage_permute", "axis": train_pipeline.STAGE_AXIS, "per_step": self.permutes_per_step,
             "measured_bytes": self.permute_bytes, "formula_bytes": float(self.formula_permute_bytes)},
            {"traffic": "stage_allreduce", "axis": train_pipeline.STAGE_AXIS,
             "per_step": self.stage_reductions,
             "measured_bytes": self.stage_reduce_bytes, "formula_bytes": self.formula_stage_reduce_bytes},
        ]


def data_parallel_config(config: TrainConfig) -> TrainConfig:
    """The same model, batch, devices and steps, data parallel (pmap, every layer on every device)."""
    return validate(dataclasses.replace(config, impl="pmap", pipeline_stages=1, microbatches=1, schedule="gpipe"))


def measure_data_axis(devices: int, settings: Settings, steps: int = STEPS,
                      on_run: Callable[[str], None] | None = None) -> DataAxisRun:
    """Train X = ⌊D/P⌋ pipelines of `settings` side by side (each on M micro-batches of `rows` rows), then
    data parallelism on the same X·P devices and batch; read each axis's bytes from the compiled pipeline.
    `on_run("pipeline" | "data_parallel")` is told before each training. LabInputError when D < 2P
    (pipeline_no_data_axis) or the X pipelines' work is over the limit (too_much_work)."""
    devices = check_devices(devices)
    settings.config(steps=steps)  # every other setting checked before anything is built
    axis = data_axis(devices, settings.stages, settings.layers, settings.hidden, settings.features, settings.model,
                     settings.dims)
    if axis is None:
        raise LabInputError("pipeline_no_data_axis", "a data axis beside {stages} stages needs D ≥ {needed}, "
                            "got D = {devices}", stages=settings.stages, needed=2 * settings.stages, devices=devices)
    work = steps * axis.replicas * settings.microbatches * settings.rows * models.multiply_adds_per_sample(
        settings.model, settings.features, settings.hidden, settings.layers, settings.dims)
    if work > MAX_WORK:
        raise LabInputError("too_much_work", "one timed call needs {work:,} multiply-adds, over the limit of "
                            "{limit:,}; use fewer micro-batches, fewer rows or a narrower model",
                            work=work, limit=MAX_WORK)
    config = settings.config(steps=steps, replicas=axis.replicas)
    if on_run is not None:
        on_run("pipeline")
    piped = train(config)
    if on_run is not None:
        on_run("data_parallel")
    flat = train(data_parallel_config(config))
    runs = collective_runs(programs.build(config.program_spec(steps)).compiled.as_text(), (steps,))
    per_axis = [(mesh_axis_of(r.collective, axis.replicas, axis.stages), r) for r in runs]

    def per_step(kind: str, where: str, what: Callable[[object], float]) -> float:
        return sum(what(r) * r.runs_per_call for a, r in per_axis if r.collective.kind == kind and a == where) / steps

    plan = train_pipeline.schedule_of(settings.stages, settings.microbatches, settings.schedule)
    data = [r for a, r in per_axis if r.collective.kind == "all-reduce" and a == train_pipeline.DATA_AXIS]
    flat_runs = collective_runs(programs.build(flat.config.program_spec(steps)).compiled.as_text(), (steps,))
    return DataAxisRun(
        axis, settings.microbatches, settings.rows, settings.hidden, settings.activation_values, config.global_batch,
        steps,
        len(plan.table), plan.slot_counts.backward_slots,
        per_step("all-reduce", train_pipeline.DATA_AXIS, lambda r: r.ring_bytes),
        tuple(shape for r in data for shape in r.collective.shapes),
        per_step("all-reduce", train_pipeline.DATA_AXIS, lambda r: 1),
        per_step("all-reduce", train_pipeline.STAGE_AXIS, lambda r: r.ring_bytes),
        per_step("all-reduce", train_pipeline.STAGE_AXIS, lambda r: 1),
        per_step("collective-permute", train_pipeline.STAGE_AXIS, lambda r: r.ring_bytes),
        per_step("collective-permute", train_pipeline.STAGE_AXIS, lambda r: 1),
        sum(r.runs_per_call for r in runs) / steps, piped.footprint.comm_bytes_per_step,
        piped.losses[-1], flat.losses[-1], piped.scaling.steady_step_time_s, piped.scaling.baseline_step_time_s,
        piped.scaling.scaling_ratio, flat.scaling.steady_step_time_s, flat.scaling.scaling_ratio,
        sum(r.runs_per_call for r in flat_runs) / steps, physical_cores(), describe_runtime().simulated)
