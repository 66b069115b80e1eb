"""Training runs recorded in MLflow: one run per training, a parent with a child per D for a sweep.

The same functions serve the training page and the CLI. Training itself (`pmap_core.training`)
knows nothing of who watches: it reports through its `on_chunk` callback, which here also writes
each chunk's losses, so an interrupted run keeps what it learned.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax

from pmap_core.tracking import NullTracker, runtime_tags
from pmap_core.training import (
    ScalingResult, SweepPoint, SweepResult, TrainConfig, TrainResult, hardware_ceiling, measure_scaling,
    sweep_configs, train, validate,
)


@dataclasses.dataclass(frozen=True)
class TrackedTraining:
    result: TrainResult
    scaling: ScalingResult | None   # None in a multi-process run (a one-device baseline has no peers)
    run_id: str
    tracking_uri: str               # where the run was written (the fallback store if it was used)
    fell_back_to: str | None        # set when the configured store was unreachable
    logging_s: float                # time spent writing to MLflow
    wall_time_s: float              # the whole call: training, scaling measurement and logging


@dataclasses.dataclass(frozen=True)
class TrackedSweep:
    sweep: SweepResult
    run_id: str                     # the parent run
    child_run_ids: tuple[str, ...]  # one per device count, in the order of sweep.points
    tracking_uri: str
    fell_back_to: str | None
    logging_s: float


def run_params(config: TrainConfig) -> dict[str, Any]:
    """Every setting of a run, as MLflow params."""
    return {**dataclasses.asdict(config), "per_device_batch": config.per_device_batch,
            "processes": jax.process_count()}


def result_metrics(result: TrainResult) -> dict[str, float]:
    return {"throughput": result.throughput, "step_time_s": result.step_time_s,
            "compile_time_s": result.compile_time_s, "wall_time_s": result.wall_time_s,
            "final_loss": result.final_loss, "replica_max_diff": result.replica_max_diff}


def _run_name(config: TrainConfig) -> str:
    return f"{config.model}-D{config.devices}-B{config.global_batch}"


class _ChunkLogger:
    """Logs each chunk's losses as they arrive (so an interrupted run keeps them), timing the writes."""

    def __init__(self, tracker: Any, run_id: str, forward: Callable[[int, Sequence[float]], None] | None):
        self.tracker, self.run_id, self.forward = tracker, run_id, forward
        self.logged, self.seconds = 0, 0.0

    def __call__(self, steps_done: int, losses: Sequence[float]) -> None:
        start = time.perf_counter()
        self.tracker.log_series(self.run_id, "loss", losses[self.logged:], start_step=self.logged)
        self.logged = steps_done
        self.seconds += time.perf_counter() - start
        if self.forward is not None:
            self.forward(steps_done, losses)


def train_tracked(config: TrainConfig, tracker: Any,
                  on_chunk: Callable[[int, Sequence[float]], None] | None = None,
                  lab: str = "training") -> TrackedTraining:
    """Train, measure S(D) against one device, and record it all as one MLflow run."""
    config = validate(config)
    started = start = time.perf_counter()
    with tracker.run(_run_name(config), run_params(config), runtime_tags(lab)) as run_id:
        logging_s = time.perf_counter() - start
        chunk_logger = _ChunkLogger(tracker, run_id, on_chunk)
        result = train(config, chunk_logger)
        scaling = measure_scaling(config) if jax.process_count() == 1 else None
        start = time.perf_counter()
        metrics = result_metrics(result)
        if scaling is not None:
            # `throughput` is the training run's wall-clock figure; S(D) compares steady-state
            # medians of the chunk program, logged as steady_throughput / baseline_throughput.
            metrics.update(scaling_ratio=scaling.scaling_ratio, efficiency=scaling.efficiency,
                           steady_throughput=scaling.throughput,
                           baseline_throughput=scaling.baseline_throughput,
                           hardware_ceiling=scaling.hardware_ceiling)
        tracker.log_metrics(run_id, metrics)
    logging_s += chunk_logger.seconds + time.perf_counter() - start
    # After a fallback mid-run the run lives on under a new id: report where it can be found.
    return TrackedTraining(result, scaling, tracker.store_run_id(run_id), tracker.active_uri,
                           tracker.fell_back_to, logging_s, time.perf_counter() - started)


def sweep_tracked(config: TrainConfig, tracker: Any, device_counts: Sequence[int] | None = None,
                  on_run: Callable[[int, int, TrainResult], None] | None = None,
                  on_chunk: Callable[[int, Sequence[float]], None] | None = None,
                  lab: str = "training") -> TrackedSweep:
    """A sweep as one parent run (throughput, S and E against D as steps) with a child run per D."""
    configs = sweep_configs(config, device_counts)
    tags = runtime_tags(lab)
    started = time.perf_counter()
    params = {**run_params(validate(config)), "device_counts": ",".join(str(c.devices) for c in configs)}
    with tracker.run(f"sweep-{config.model}-{config.scaling}", params, {**tags, "sweep": "true"}) as parent:
        points: list[SweepPoint] = []
        child_ids: list[str] = []
        for index, run_config in enumerate(configs):
            with tracker.run(_run_name(run_config), run_params(run_config), tags, parent_run_id=parent) as child:
                result = train(run_config, _ChunkLogger(tracker, child, on_chunk))
                base = points[0].result.throughput if points else result.throughput
                ratio = result.throughput / base
                point = SweepPoint(result, ratio, ratio / run_config.devices, hardware_ceiling(run_config.devices))
                metrics = {**result_metrics(result), "scaling_ratio": ratio, "efficiency": point.efficiency,
                           "hardware_ceiling": point.hardware_ceiling}
                tracker.log_metrics(child, metrics)
                tracker.log_metrics(parent, {"throughput": result.throughput, "scaling_ratio": ratio,
                                             "efficiency": point.efficiency}, step=run_config.devices)
            points.append(point)
            child_ids.append(child)
            if on_run is not None:
                on_run(index, len(configs), result)
    # What is not training is tracking (the chunk callbacks only queue writes).
    logging_s = time.perf_counter() - started - sum(p.result.wall_time_s for p in points)
    result = SweepResult(validate(config), config.scaling, tuple(points))
    return TrackedSweep(result, tracker.store_run_id(parent), tuple(map(tracker.store_run_id, child_ids)),
                        tracker.active_uri, tracker.fell_back_to, logging_s)


def sweep(config: TrainConfig, device_counts: Sequence[int] | None = None,
          on_run: Callable[[int, int, TrainResult], None] | None = None,
          on_chunk: Callable[[int, Sequence[float]], None] | None = None) -> SweepResult:
    """Train once per device count; S(D) is measured against the D = 1 run of the same sweep.
    `on_run(index, total, result)` after each run. (`sweep_tracked` without tracking.)"""
    return sweep_tracked(config, NullTracker(), device_counts, on_run, on_chunk).sweep
