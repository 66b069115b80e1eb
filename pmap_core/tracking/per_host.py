"""One process's part of a multi-process run with per-host loading, recorded as one MLflow run.

Every process of the group runs `run_per_host` (`python -m pmap_core train --dataset-size S`, alone or
started by `launch`): it trains on its own devices' rows of each global batch (`loading`), then the
processes exchange their timings in one collective, and the process that holds a tracker (process 0)
records the group's run: the loss per step, the median step time, and each process's step and load
times. A group whose loss stops being a finite number stops together (`loading.train_per_host`); its run
keeps the finite losses and the step, and ends FAILED.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from pmap_core.tracking import DIVERGED_METRIC, NullTracker, RunTracker, runtime_tags
from pmap_core.tracking.callback import run_name, run_params
from pmap_core.train import loading
from pmap_core.train.config import TrainConfig
from pmap_core.train.divergence import Diverged


def run_per_host(config: TrainConfig, dataset_size: int, tracker: RunTracker,
                 on_step: Callable[[int, float], None] | None = None) -> dict[str, Any]:
    """Train this process's share of `config` on a dataset of `dataset_size` samples; the result as JSON."""
    from jax.experimental import multihost_utils

    count = jax.process_count()
    params = {**run_params(config), "num_processes": count, "dataset_size": dataset_size}
    with tracker.run(f"{run_name(config)}-P{count}", params, runtime_tags("multiprocess")) as run_id:
        try:
            result = loading.train_per_host(config, dataset_size, on_step)
        except Diverged as diverged:  # every process stops at the same step; the run ends FAILED
            if diverged.losses:
                tracker.log_series(run_id, "loss", diverged.losses)
            tracker.log_metrics(run_id, {DIVERGED_METRIC: diverged.step})
            raise
        # A collective over the processes: every one sends its timings, process 0 records them all.
        mine = np.asarray([result.step_times_s, result.load_times_s])
        times = np.asarray(multihost_utils.process_allgather(mine)).reshape(count, 2, -1)
        timings = process_timings(times[:, 0], times[:, 1])
        tracker.log_series(run_id, "loss", result.losses)
        tracker.log_metrics(run_id, {
            "final_loss": result.losses[-1], "num_processes": count, "compile_time_s": result.compile_time_s,
            "throughput": config.steps * config.global_batch / float(np.sum(times[0])),
            "step_time_s": statistics.median(result.step_times_s), **timings})
    logged = result.process_index == 0 and tracker.active_uri != NullTracker.active_uri
    return {**host_summary(result), "timings": timings, "run_id": tracker.store_run_id(run_id) if logged else None,
            "impl": config.impl, "devices": config.devices, "global_batch": config.global_batch}


def process_timings(step_times: np.ndarray, load_times: np.ndarray) -> dict[str, float]:
    """Per process: the median step time and the median time to read its rows and build the arrays."""
    out: dict[str, float] = {}
    for i, (steps, loads) in enumerate(zip(step_times, load_times, strict=True)):
        out[f"step_time_s.process_{i}"] = float(np.median(steps))
        out[f"load_time_s.process_{i}"] = float(np.median(loads))
    return out


def host_summary(result: loading.HostResult) -> dict[str, Any]:
    """A HostResult as JSON: arrays as nested lists."""
    summary = dataclasses.asdict(result)
    summary["params"] = {name: np.asarray(value).tolist() for name, value in result.params.items()}
    return json.loads(json.dumps(summary, default=float))
