"""The pipeline lab's settings: one pipeline of the page (`Settings`), checked (`check_settings`), the
micro-batch counts a step-time measurement visits (`microbatch_ladder`), and the limits and sources the other
modules of `concepts.pipeline` share. `Settings.compiled` builds a setting's program once, its `Schedule`
with it (`train.pipeline.schedule_of`)."""

from __future__ import annotations

import dataclasses
import math

from pmap_core.train import models, programs
from pmap_core.train import pipeline as train_pipeline
from pmap_core.train.config import MAX_HIDDEN, MAX_LAYERS, MAX_MICROBATCHES, TrainConfig
from pmap_core.train.mesh import STAGE_AXIS
from pmap_core.train.pipeline import SCHEDULES
from pmap_core.train.plan import validate
from pmap_core.validation import MAX_BATCH, LabInputError, check_devices, check_int

VALUE_BYTES = 4            # the lab's MLP and transformer train in float32
FEATURES = 8               # the MLP's input width on the page
MAX_ROWS = 1024            # rows of one micro-batch the page may ask for
STEPS = 16                 # training steps inside one timed call
MAX_WORK = 1_000_000_000   # forward multiply-adds of one timed call (STEPS × M·b × the MLP's per sample)
GPIPE = "Huang et al. 2019 (GPipe), §2.3"
ONE_F_ONE_B = "Narayanan et al. 2021 (PipeDream-Flush)"
PLAYBOOK = "Ultra-Scale Playbook (Tazi et al. 2025), \"Pipeline parallelism\""
SCALING_BOOK = "Scaling Book (Austin et al. 2025), Part 5 \"Training\""
RING = "Patarasuk and Yuan 2009 (ring all-reduce)"


@dataclasses.dataclass(frozen=True)
class Settings:
    """One pipeline of the page: L layers of width H (the MLP) or L blocks of `dims` (the transformer, its rows
    sequences) in P stages, M micro-batches of `rows` rows each (the global batch is M·rows), run in
    `schedule`'s order."""

    stages: int
    layers: int
    microbatches: int
    schedule: str
    rows: int
    hidden: int
    features: int = FEATURES
    model: str = "mlp"
    dims: models.Dims = dataclasses.field(default_factory=models.Dims)  # the transformer's sizes (the MLP ignores them)
    ladder: tuple[int, ...] = dataclasses.field(init=False)  # the M a step-time measurement visits
    # Values of what one stage hands the next for one micro-batch (`models.activation_shape`): the MLP's rows × H,
    # the transformer's residual stream rows × seq_len × d_model. A field, fixed with the settings.
    activation_values: int = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ladder", tuple(microbatch_ladder(self.microbatches, self.rows, self.stages)))
        object.__setattr__(self, "activation_values",
                           math.prod(models.activation_shape(self.model, self.rows, self.hidden, self.dims)))

    def initial(self, global_batch: int, seed: int) -> tuple:
        """The model's initial parameters and a global batch of data, as the programs take them."""
        params = models.init_params(self.model, self.features, self.hidden, seed, self.layers, self.dims)
        return params, models.make_data(self.model, global_batch, self.features, seed, self.dims)

    def config(self, microbatches: int | None = None, schedule: str | None = None,
               steps: int = STEPS, replicas: int = 1) -> TrainConfig:
        """The validated training config of these settings (another M or schedule when given); with
        `replicas` X > 1, X such pipelines side by side on a data axis, each on its own M·rows rows."""
        m = self.microbatches if microbatches is None else microbatches
        d = self.dims
        return validate(TrainConfig(
            model=self.model, d_model=d.d_model, heads=d.heads, seq_len=d.seq_len, vocab=d.vocab,
            impl=programs.impl_of_axis(STAGE_AXIS), devices=replicas * self.stages, pipeline_stages=self.stages,
            layers=self.layers, microbatches=m, schedule=schedule or self.schedule,
            global_batch=replicas * m * self.rows, hidden=self.hidden, features=self.features, steps=steps,
            chunk=steps))

    def compiled(self, microbatches: int | None = None, schedule: str | None = None,
                 steps: int = STEPS) -> tuple[TrainConfig, train_pipeline.PipelineProgram]:
        """The config of these settings (another M or schedule when given) and its program, compiled for
        `steps` steps; the program carries its `Schedule` (`PipelineProgram.schedule`)."""
        config = self.config(microbatches, schedule, steps)
        return config, programs.build(config.program_spec(steps))

    def ready(self, microbatches: int, steps: int = STEPS) -> tuple[TrainConfig, train_pipeline.PipelineProgram, tuple]:
        """The config of these settings at `microbatches`, its compiled program, and the program's inputs (initial
        parameters, a global batch, η) placed on its devices: all a timed call needs, made here in one visit."""
        config = self.config(microbatches, steps=steps)
        params, data = self.initial(config.global_batch, config.seed)
        program = programs.build(config.program_spec(steps))
        return config, program, program.place(params, data, config.learning_rate)


def check_settings(devices: int, stages: int, layers: int, microbatches: int, schedule: str, rows: int,
                   hidden: int, available: int | None = None, model: str = "mlp",
                   dims: models.Dims | None = None) -> Settings:
    """The settings, or a LabInputError that says which one does not fit (codes: pipeline_stages_over_devices,
    layers_not_divisible, pipeline_rows_not_divisible, unknown_schedule, out_of_range, too_much_work,
    block_not_divisible, …). `model`: "mlp" (layers of width `hidden`) or "transformer" (blocks of `dims`)."""
    devices = check_devices(devices, available)
    stages = check_int("stages", stages, 1, MAX_LAYERS)
    if stages > devices:
        raise LabInputError("pipeline_stages_over_devices",
                            "{stages} stages need {stages} devices (one stage per device); D is {devices}",
                            stages=stages, devices=devices)
    layers = check_int("layers", layers, 2, MAX_LAYERS)
    if layers % stages:
        raise LabInputError("layers_not_divisible", "{layers} layers do not split evenly into {stages} stages",
                            layers=layers, stages=stages)
    microbatches = check_int("microbatches", microbatches, 1, MAX_MICROBATCHES)
    if schedule not in SCHEDULES:
        raise LabInputError("unknown_schedule", "schedule must be one of {options}, got {value!r}",
                            options=", ".join(SCHEDULES), value=schedule)
    rows = check_int("rows", rows, 1, MAX_ROWS)
    if microbatches * rows % stages:  # the compiled step takes the global batch M·b split over its P devices
        raise LabInputError("pipeline_rows_not_divisible",
                            "the global batch M·b = {batch} does not split evenly over the {stages} devices; "
                            "try b = {suggestion}", stages=stages, rows=rows, batch=microbatches * rows,
                            suggestion=next(r for r in range(rows, rows + stages) if microbatches * r % stages == 0))
    check_int("global_batch", microbatches * rows, 1, MAX_BATCH)
    hidden = check_int("hidden", hidden, 1, MAX_HIDDEN)
    dims = dims or models.Dims()
    work = STEPS * microbatches * rows * models.multiply_adds_per_sample(model, FEATURES, hidden, layers, dims)
    if work > MAX_WORK:
        raise LabInputError("too_much_work", "one timed call needs {work:,} multiply-adds, over the limit of "
                            "{limit:,}; use fewer micro-batches, fewer rows or a narrower model",
                            work=work, limit=MAX_WORK)
    settings = Settings(stages, layers, microbatches, schedule, rows, hidden, model=model, dims=dims)
    settings.config()  # the training config's own checks, before anything compiles
    return settings


def microbatch_ladder(most: int, rows: int = 1, stages: int = 1) -> list[int]:
    """The M a measurement visits: 1, 2, 4, … below `most`, then `most` itself; only those whose global
    batch M·rows splits evenly over the `stages` devices (`most` is checked already)."""
    counts = [1]
    while counts[-1] * 2 < most:
        counts.append(counts[-1] * 2)
    return sorted({*(m for m in counts if m * rows % max(stages, 1) == 0), most})  # stages < 1: refused on use
