"""Pipeline parallelism, shown and measured — what the pipeline lab draws and says. Pure: the schedule
comes from `train.pipeline.schedule_table`, the programs from the registry (impl "pipeline"), the peak
bytes from each compiled program's `memory_analysis()` (`train.footprint`).

    schedule_cells(P, M, schedule)      the schedule as records: (device, slot, micro-batch, kind)
    bubble(P, M, schedule)              the idle share of the table, beside (P − 1)/(M + P − 1) and (P − 1)/M
    measure_step_times(settings, Ms)    step time against M at fixed P, fitted to this program's lockstep
                                        model n_F·t_f + n_B·t_b (slots counted from the table)
    peak_memory(settings)               GPipe against 1F1B: each compiled program's peak bytes
    data_axis(D, P, …)                  what a data axis adds when D ≥ 2P: the formula's figures (the prediction)
    measure_data_axis(D, settings)      the data × stage pipeline trained: its bytes per step on each mesh axis
                                        read from the compiled HLO, its loss beside data parallelism's, its S(D)

Sources, cited next to every figure they give:
- GPipe: Huang et al. 2019, "GPipe: Efficient Training of Giant Neural Networks using Pipeline
  Parallelism" (NeurIPS), §2.3: M micro-batches over K stages leave a bubble of O((K − 1)/(M + K − 1)) of
  the step; each stage keeps its input per micro-batch and recomputes the rest in the backward
  (re-materialization); the backwards run in reverse, the last micro-batch's first.
- 1F1B: Narayanan et al. 2021, "Memory-Efficient Pipeline-Parallel DNN Training" (ICML, PipeDream-Flush):
  one forward, one backward, the same bubble as GPipe, at most P micro-batches in flight; the 1F1B order
  comes from Narayanan et al. 2019, "PipeDream: Generalized Pipeline Parallelism for DNN Training" (SOSP).
- The Ultra-Scale Playbook (Tazi et al., Hugging Face, 2025), "Pipeline parallelism": the bubble as a share
  of the ideal time, (p − 1)/m; 1F1B stores the activations of p micro-batches instead of m.
These are asynchronous schedules (a device starts its next work as soon as its input arrives): one step takes
(M + P − 1)(t_f + t_b). This lab's program runs the table in lockstep (every slot ends with every device's
ppermute), so a slot lasts its slowest work: n_F·t_f + n_B·t_b, counted from the table
(`train.pipeline.slot_counts`); the two are shown apart, each labelled.
- The Scaling Book (Austin et al. 2025), Part 5 "How to Parallelize a Transformer for Training",
  "Pipelining"; the ring all-reduce of a data axis, 2(X − 1)/X of the bytes per device.
- The ring all-reduce: Patarasuk and Yuan 2009, "Bandwidth optimal all-reduce algorithms for clusters of
  workstations" (JPDC 69(2)): each of X devices sends 2(X − 1)/X of the array (a reduce-scatter, then an
  all-gather, each (X − 1) steps of 1/X of it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from pmap_core.hlo import Collective
from pmap_core.runtime import describe_runtime, physical_cores
from pmap_core.timing import time_call
from pmap_core.train import models, programs
from pmap_core.train import pipeline as train_pipeline
from pmap_core.train.config import MAX_HIDDEN, MAX_LAYERS, MAX_MICROBATCHES, TrainConfig, validate
from pmap_core.train.footprint import collective_runs, compiled_memory, peak_bytes
from pmap_core.train.loop import train
from pmap_core.train.pipeline import BACKWARD, FORWARD, IDLE, SCHEDULES
from pmap_core.validation import MAX_BATCH, LabInputError, check_devices, check_int

KINDS = ("forward", "backward", "idle")
_KIND = {FORWARD: "forward", BACKWARD: "backward", IDLE: "idle"}
VALUE_BYTES = 4            # the lab's MLP trains in float32
FEATURES = 8               # the MLP's input width on the page
MAX_ROWS = 1024            # rows of one micro-batch the page may ask for
STEPS = 16                 # training steps inside one timed call
REPEATS = 7                # timed calls per M (their median is the figure)
MAX_WORK = 1_000_000_000   # forward multiply-adds of one timed call (STEPS × M·b × the MLP's per sample)
GPIPE = "Huang et al. 2019 (GPipe), §2.3"
ONE_F_ONE_B = "Narayanan et al. 2021 (PipeDream-Flush)"
PLAYBOOK = "Ultra-Scale Playbook (Tazi et al. 2025), \"Pipeline parallelism\""
SCALING_BOOK = "Scaling Book (Austin et al. 2025), Part 5 \"Training\""
RING = "Patarasuk and Yuan 2009 (ring all-reduce)"
LOSS_RTOL = 1e-5           # final losses this close are the same training, the float sums in another order
FLOAT32_EPS = float(np.finfo(np.float32).eps)


# --- the schedule ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Cell:
    """What device `device` (stage `device`) runs in time slot `slot`: a `kind` of KINDS on micro-batch
    `micro` (None when idle)."""

    device: int
    slot: int
    micro: int | None
    kind: str

    @property
    def label(self) -> str:
        """F3: the forward of micro-batch 3; B3: its backward; empty: idle."""
        return "" if self.micro is None else f"{self.kind[0].upper()}{self.micro}"


def schedule_cells(stages: int, microbatches: int, schedule: str) -> list[Cell]:
    """The schedule `train.pipeline.schedule_table` builds, as records, device by device, slot by slot."""
    table = train_pipeline.schedule_table(stages, microbatches, schedule)
    return [Cell(s, t, None if row[s].kind == IDLE else row[s].micro, _KIND[row[s].kind])
            for s in range(stages) for t, row in enumerate(table)]


def schedule_rows(cells: Sequence[Cell]) -> list[dict[str, object]]:
    """The schedule as a table: one row per device, one column per slot (t0, t1, …) holding F3, B3 or ·."""
    rows: dict[int, dict[str, object]] = {}
    for cell in cells:
        rows.setdefault(cell.device, {"device": cell.device})[f"t{cell.slot}"] = cell.label or "·"
    return [rows[d] for d in sorted(rows)]


def kept(stages: int, microbatches: int, schedule: str) -> list[int]:
    """Per device: the most micro-batches' inputs it keeps at once for its backwards, from their arrival to
    their backward (`train.pipeline.held`, the one meaning of "micro-batches kept" in the lab): device 0 none
    (its backward recomputes its forward from its rows of the batch); GPipe M on every other; 1F1B P − s + 1
    on stage s ≥ 1, at most M."""
    return train_pipeline.held(train_pipeline.schedule_table(stages, microbatches, schedule), "activations")


@dataclasses.dataclass(frozen=True)
class Bubble:
    """The idle share of a schedule, counted from its table, beside its sources' formulas."""

    stages: int
    microbatches: int
    schedule: str
    slots: int                 # time slots of one step: 2(M + P − 1) with one unit per forward and backward
    busy_per_device: int       # 2M: each device's forwards and backwards
    idle_cells: int            # (device, slot) cells in which a device waits
    counted: float             # idle cells / all cells (train.pipeline.bubble_fraction)
    kept: tuple[int, ...]      # per device, the most micro-batches' inputs kept at once (`kept`)

    @property
    def cells(self) -> int:
        return self.slots * self.stages

    @property
    def formula(self) -> float:
        """(P − 1)/(M + P − 1): the share of the step (GPipe §2.3)."""
        return (self.stages - 1) / (self.microbatches + self.stages - 1)

    @property
    def playbook_ratio(self) -> float:
        """(P − 1)/M: the bubble's time over the ideal time (the Playbook), counted as idle over busy cells."""
        return self.idle_cells / (self.busy_per_device * self.stages)

    @property
    def most_kept(self) -> int:
        return max(self.kept)


def bubble(stages: int, microbatches: int, schedule: str) -> Bubble:
    cells = schedule_cells(stages, microbatches, schedule)
    table = train_pipeline.schedule_table(stages, microbatches, schedule)
    return Bubble(stages, microbatches, schedule, len(table), 2 * microbatches,
                  sum(c.kind == "idle" for c in cells), train_pipeline.bubble_fraction(table),
                  tuple(kept(stages, microbatches, schedule)))


# --- the settings ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Settings:
    """One pipeline of the page: L layers of width H in P stages, M micro-batches of `rows` rows each
    (the global batch is M·rows), run in `schedule`'s order."""

    stages: int
    layers: int
    microbatches: int
    schedule: str
    rows: int
    hidden: int
    features: int = FEATURES

    def ladder(self) -> list[int]:
        """The M a step-time measurement visits (`microbatch_ladder`)."""
        return microbatch_ladder(self.microbatches, self.rows, self.stages)

    def config(self, microbatches: int | None = None, schedule: str | None = None,
               steps: int = STEPS, replicas: int = 1) -> TrainConfig:
        """The validated training config of these settings (another M or schedule when given); with
        `replicas` X > 1, X such pipelines side by side on a data axis, each on its own M·rows rows."""
        m = self.microbatches if microbatches is None else microbatches
        return validate(TrainConfig(
            model="mlp", impl=programs.PIPELINE_IMPL, devices=replicas * self.stages, pipeline_stages=self.stages,
            layers=self.layers, microbatches=m, schedule=schedule or self.schedule,
            global_batch=replicas * m * self.rows, hidden=self.hidden, features=self.features, steps=steps,
            chunk=steps))


def check_settings(devices: int, stages: int, layers: int, microbatches: int, schedule: str, rows: int,
                   hidden: int, available: int | None = None) -> Settings:
    """The settings, or a LabInputError that says which one does not fit (codes: pipeline_stages_over_devices,
    layers_not_divisible, pipeline_rows_not_divisible, unknown_schedule, out_of_range, too_much_work, …)."""
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
    work = STEPS * microbatches * rows * models.multiply_adds_per_sample("mlp", FEATURES, hidden, layers)
    if work > MAX_WORK:
        raise LabInputError("too_much_work", "one timed call needs {work:,} multiply-adds, over the limit of "
                            "{limit:,}; use fewer micro-batches, fewer rows or a narrower model",
                            work=work, limit=MAX_WORK)
    settings = Settings(stages, layers, microbatches, schedule, rows, hidden)
    settings.config()  # the training config's own checks, before anything compiles
    return settings


def microbatch_ladder(most: int, rows: int = 1, stages: int = 1) -> list[int]:
    """The M a measurement visits: 1, 2, 4, … below `most`, then `most` itself; only those whose global
    batch M·rows splits evenly over the `stages` devices (`most` is checked already)."""
    counts = [1]
    while counts[-1] * 2 < most:
        counts.append(counts[-1] * 2)
    return sorted({*(m for m in counts if m * rows % stages == 0), most})


# --- step time against M -----------------------------------------------------------------------------


def slot_counts(stages: int, microbatches: int, schedule: str) -> train_pipeline.SlotCounts:
    """The table's slots by their slowest work (`train.pipeline.slot_counts`)."""
    return train_pipeline.slot_counts(train_pipeline.schedule_table(stages, microbatches, schedule))


def asynchronous_s(stages: int, microbatches: int, t_forward_and_backward: float) -> float:
    """The papers' step time, (M + P − 1)(t_f + t_b), GPipe's and 1F1B's alike (GPipe §2.3; PipeDream-Flush):
    each device starts its next work as soon as its input arrives, so a forward never waits for a backward."""
    return (microbatches + stages - 1) * t_forward_and_backward


@dataclasses.dataclass(frozen=True)
class StepPoint:
    microbatches: int
    global_batch: int
    slots: int               # 2(M + P − 1)
    forward_slots: int       # n_F: slots whose slowest work is a forward (counted from the table)
    backward_slots: int      # n_B: slots in which some device runs a backward
    step_time_s: float       # median seconds of one timed call / its steps
    compile_s: float


@dataclasses.dataclass(frozen=True)
class StepFit:
    """Step time against M at fixed P and micro-batch size, fitted to this program's own model. It runs the
    table in lockstep (each slot ends with every device's ppermute), so a slot lasts its slowest work and
    T(M) = n_F(M)·t_f + n_B(M)·t_b, n_F and n_B counted from the table (`slot_counts`), t_b a backward with the
    forward it recomputes. Under GPipe n_F = n_B = M + P − 1, so only t_f + t_b can be fitted; under 1F1B
    (n_F = P, n_B = 2M + P − 2) both can, given two M. The papers' asynchronous figure is apart:
    `asynchronous_s`."""

    stages: int
    rows: int
    schedule: str
    points: tuple[StepPoint, ...]
    t_forward_s: float | None      # t_f: None where the points cannot tell it from t_b
    t_backward_s: float | None     # t_b
    t_pair_s: float                # t_f + t_b
    cores: int                     # CPUs this process may run on (os.sched_getaffinity)
    simulated: bool                # CPU devices sharing those cores

    @property
    def can_show_bubble(self) -> bool:
        return shows_bubble_in_time(self.stages, self.cores, self.simulated)

    @property
    def separable(self) -> bool:
        return self.t_forward_s is not None

    def fitted_s(self, microbatches: int) -> float:
        """The lockstep model's step time at M, with the fitted times."""
        counts = slot_counts(self.stages, microbatches, self.schedule)
        if self.separable:
            return counts.step_time(self.t_forward_s, self.t_backward_s)
        return (counts.forward_slots + counts.backward_slots) * self.t_pair_s / 2

    def lockstep_s(self, microbatches: int, schedule: str) -> float | None:
        """This program's step under `schedule` at M with the fitted t_f and t_b (None where they are not
        separable and the schedule's slots are not pairs)."""
        counts = slot_counts(self.stages, microbatches, schedule)
        if self.separable:
            return counts.step_time(self.t_forward_s, self.t_backward_s)
        return counts.forward_slots * self.t_pair_s if counts.forward_slots == counts.backward_slots else None

    def asynchronous_s(self, microbatches: int) -> float:
        return asynchronous_s(self.stages, microbatches, self.t_pair_s)

    @property
    def worst_relative_error(self) -> float:
        return max(abs(p.step_time_s - self.fitted_s(p.microbatches)) / p.step_time_s for p in self.points)

    def chart_rows(self) -> list[dict[str, object]]:
        """Measured and fitted step time per M, as tidy rows (series: measured | fit)."""
        rows: list[dict[str, object]] = []
        for p in self.points:
            rows.append({"microbatches": p.microbatches, "step_time_ms": p.step_time_s * 1e3, "series": "measured"})
            rows.append({"microbatches": p.microbatches, "step_time_ms": self.fitted_s(p.microbatches) * 1e3,
                         "series": "fit"})
        return rows


def shows_bubble_in_time(stages: int, cores: int, simulated: bool) -> bool:
    """Whether a step's time can show the bubble: real devices run their stages at once; simulated CPU
    devices only with a core for each stage (with fewer, a slot's work runs a few stages at a time)."""
    return not simulated or cores >= stages


def fit_slot_times(points: Sequence[StepPoint]) -> tuple[float | None, float | None, float]:
    """(t_f, t_b, t_f + t_b): least squares of T = n_F·t_f + n_B·t_b over the points. Where the counts cannot
    tell the two apart (n_F = n_B at every point, GPipe; or one point) or the fit makes one negative, only
    their sum: T = (n_F + n_B)·(t_f + t_b)/2, the mean slot's time doubled."""
    counts = np.array([[p.forward_slots, p.backward_slots] for p in points], dtype=float)
    seconds = np.array([p.step_time_s for p in points], dtype=float)
    if np.linalg.matrix_rank(counts) == 2:
        (t_f, t_b), *_ = np.linalg.lstsq(counts, seconds, rcond=None)
        if t_f > 0 and t_b > 0:
            return float(t_f), float(t_b), float(t_f + t_b)
    slots = counts.sum(axis=1)
    return None, None, float(2 * (slots @ seconds) / (slots @ slots))


def time_steps(settings: Settings, microbatches: int, steps: int = STEPS, repeats: int = REPEATS) -> StepPoint:
    """One M: the compiled pipelined chunk of `steps` steps, timed after its result is ready (median of
    `repeats` calls after one warm-up; compiling apart)."""
    config = settings.config(microbatches, steps=steps)
    program = programs.build(config.program_spec(steps))
    params = models.init_params("mlp", settings.features, settings.hidden, config.seed, settings.layers)
    data = models.make_data("mlp", config.global_batch, settings.features, config.seed)
    inputs = program.place(params, data, config.learning_rate)
    timing = time_call(program.run, *inputs, repeats=repeats, warmup=1)
    counts = slot_counts(settings.stages, microbatches, settings.schedule)
    return StepPoint(microbatches, config.global_batch, 2 * (microbatches + settings.stages - 1),
                     counts.forward_slots, counts.backward_slots, timing.median_s / steps, program.compile_s)


def measure_step_times(settings: Settings, microbatch_counts: Sequence[int] | None = None,
                       on_point: Callable[[StepPoint, int, int], None] | None = None,
                       repeats: int = REPEATS) -> StepFit:
    """Step time at each M (default: `settings.ladder()`) at fixed P and rows, fitted (`fit_slot_times`)."""
    counts = list(microbatch_counts or settings.ladder())
    points = []
    for index, m in enumerate(counts):
        points.append(time_steps(settings, m, repeats=repeats))
        if on_point is not None:
            on_point(points[-1], index, len(counts))
    t_f, t_b, pair = fit_slot_times(points)
    runtime = describe_runtime()
    return StepFit(settings.stages, settings.rows, settings.schedule, tuple(points), t_f, t_b, pair,
                   physical_cores(), runtime.simulated)


# --- activation memory: GPipe against 1F1B ----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class MemoryRow:
    """One schedule's compiled program: its peak bytes on one device (arguments + outputs − aliased +
    temporaries), the temporaries alone, and the most stage inputs a device keeps (`kept`)."""

    schedule: str
    peak_bytes: int | None
    temp_bytes: int
    argument_bytes: int
    kept: int                   # the most micro-batches' inputs a device keeps at once (`kept`)
    stash_model_bytes: int      # kept · rows · H · 4: the stage inputs kept for the backwards


def peak_memory(settings: Settings) -> list[MemoryRow]:
    """GPipe and 1F1B at the same P, M and sizes, compiled (not run): one row per schedule."""
    rows = []
    for schedule in SCHEDULES:
        config = settings.config(schedule=schedule, steps=1)
        program = programs.build(config.program_spec(1))
        memory = compiled_memory(program.compiled)
        held = max(kept(settings.stages, settings.microbatches, schedule))
        rows.append(MemoryRow(schedule, peak_bytes(memory), memory.get("temp_size_in_bytes", 0),
                              memory.get("argument_size_in_bytes", 0), held,
                              held * settings.rows * settings.hidden * VALUE_BYTES))
    return rows


def memory_verdict(rows: Sequence[MemoryRow]) -> str:
    """Which schedule's compiled program peaks lower: "gpipe", "1f1b" or "same" (or "unknown" when a
    backend reports no memory)."""
    peaks = {row.schedule: row.peak_bytes for row in rows}
    if None in peaks.values():
        return "unknown"
    if peaks["gpipe"] == peaks["1f1b"]:
        return "same"
    return min(peaks, key=peaks.get)


def memory_reason(rows: Sequence[MemoryRow]) -> str:
    """`memory_verdict`, and where the peaks are the same, why: "same_none" (one stage: no device receives an
    input, device 0 recomputes from its rows of the batch), "same_kept" (both keep as many inputs: M ≤ P), or
    "same_despite" (1F1B keeps fewer, and the compiled peak does not show it)."""
    verdict = memory_verdict(rows)
    if verdict != "same":
        return verdict
    kept = {row.schedule: row.kept for row in rows}
    if kept["gpipe"] == kept["1f1b"]:
        return "same_none" if kept["gpipe"] == 0 else "same_kept"
    return "same_despite"


# --- data parallelism on a second axis ---------------------------------------------------------------


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


def data_axis(devices: int, stages: int, layers: int, hidden: int, features: int = FEATURES) -> DataAxis | None:
    """The data × stage mesh D allows, or None when D < 2P (no room for a second pipeline)."""
    replicas = devices // stages
    if replicas < 2:
        return None
    params = models.init_params("mlp", features, hidden, 0, layers)
    layout = train_pipeline.StageLayout.of(params, layers, stages)
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
        """Two ppermutes per slot (an activation forward, a cotangent back), each rows × H × 4 bytes; none with
        one stage."""
        return 2 * self.slots * self.rows * self.hidden * VALUE_BYTES if self.stages > 1 else 0

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
    axis = data_axis(devices, settings.stages, settings.layers, settings.hidden, settings.features)
    if axis is None:
        raise LabInputError("pipeline_no_data_axis", "a data axis beside {stages} stages needs D ≥ {needed}, "
                            "got D = {devices}", stages=settings.stages, needed=2 * settings.stages, devices=devices)
    work = steps * axis.replicas * settings.microbatches * settings.rows * models.multiply_adds_per_sample(
        "mlp", settings.features, settings.hidden, settings.layers)
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

    data = [r for a, r in per_axis if r.collective.kind == "all-reduce" and a == train_pipeline.DATA_AXIS]
    flat_runs = collective_runs(programs.build(flat.config.program_spec(steps)).compiled.as_text(), (steps,))
    return DataAxisRun(
        axis, settings.microbatches, settings.rows, settings.hidden, config.global_batch, steps,
        len(train_pipeline.schedule_table(settings.stages, settings.microbatches, settings.schedule)),
        slot_counts(settings.stages, settings.microbatches, settings.schedule).backward_slots,
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
