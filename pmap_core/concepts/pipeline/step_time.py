"""Step time against M at fixed P, measured and fitted to this program's lockstep model
n_F·t_f + n_B·t_b, the slots counted from the program's `Schedule` (`measure_step_times`, `fit_slot_times`),
beside the papers' asynchronous (M + P − 1)(t_f + t_b) (`asynchronous_s`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from pmap_core.concepts.pipeline.schedule import slot_counts
from pmap_core.concepts.pipeline.settings import STEPS, Settings
from pmap_core.runtime import describe_runtime, physical_cores
from pmap_core.timing import time_call

REPEATS = 7                # timed calls per M (their median is the figure)


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
    config, program, inputs = settings.ready(microbatches, steps)
    timing = time_call(program.run, *inputs, repeats=repeats, warmup=1)
    counts = program.schedule.slot_counts  # the program's own table, counted once
    return StepPoint(microbatches, config.global_batch, 2 * (microbatches + settings.stages - 1),
                     counts.forward_slots, counts.backward_slots, timing.median_s / steps, program.compile_s)


def measure_step_times(settings: Settings, microbatch_counts: Sequence[int] | None = None,
                       on_point: Callable[[StepPoint, int, int], None] | None = None,
                       repeats: int = REPEATS) -> StepFit:
    """Step time at each M (default: `settings.ladder`) at fixed P and rows, fitted (`fit_slot_times`)."""
    counts = list(microbatch_counts or settings.ladder)
    points = []
    for index, m in enumerate(counts):
        points.append(time_steps(settings, m, repeats=repeats))
        if on_point is not None:
            on_point(points[-1], index, len(counts))
    t_f, t_b, pair = fit_slot_times(points)
    runtime = describe_runtime()
    return StepFit(settings.stages, settings.rows, settings.schedule, tuple(points), t_f, t_b, pair,
                   physical_cores(), runtime.simulated)
