"""`python -m pmap_core train …` and `python -m pmap_core sweep …`: the training lab, headless.

Both run the same functions as the training page (`train_tracked`, `sweep_tracked`) and record
MLflow runs in the same store. Progress goes to stderr; the result to stdout (`--json`: one
JSON object). With `--coordinator-address/--num-processes/--process-id` several processes
train as one through `jax.distributed`; only process 0 writes to MLflow.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

from pmap_core.cli import emit

def register(subparsers: Any) -> None:
    train = subparsers.add_parser("train", help="train one model data-parallel and track it in MLflow",
                                  description="Train one model data-parallel with jax.pmap; log the run to MLflow.")
    _add_settings(train)
    train.set_defaults(run=run_train)
    sweep = subparsers.add_parser("sweep", help="train once per device count (1, 2, 4, …) and compare",
                                  description="Train once per device count; throughput, scaling ratio and "
                                              "efficiency against D = 1, as a parent MLflow run with one child per D "
                                              "(one process: a multi-process group has no smaller D).")
    _add_settings(sweep)
    sweep.add_argument("--device-counts", type=_int_list, default=None,
                       help="comma-separated device counts (default: 1, 2, 4, … up to --devices)")
    sweep.set_defaults(run=run_sweep)


def _int_list(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}") from None


def _add_settings(parser: argparse.ArgumentParser) -> None:
    from pmap_core import training  # no JAX work happens at import
    from pmap_core.validation import MAX_BATCH, MAX_STEPS

    d = training.TrainConfig()
    add = parser.add_argument
    add("--model", choices=["linear", "mlp"], default=d.model, help="linear: y = 3x + 1; mlp: one hidden layer")
    add("--devices", type=int, default=None, help="devices D (default: all devices of every process)")
    add("--global-batch", type=int, default=d.global_batch,
        help=f"samples per step over all devices, divisible by D (1–{MAX_BATCH})")
    add("--learning-rate", type=float, default=d.learning_rate, help=f"η (up to {training.MAX_LEARNING_RATE:g})")
    add("--steps", type=int, default=d.steps, help=f"training steps (1–{MAX_STEPS})")
    add("--hidden", type=int, default=d.hidden, help=f"MLP width (1–{training.MAX_HIDDEN})")
    add("--features", type=int, default=d.features, help=f"MLP input width (1–{training.MAX_MODEL_FEATURES})")
    add("--seed", type=int, default=d.seed)
    add("--chunk", type=int, default=d.chunk, help=f"steps run inside one pmap call (1–{training.MAX_CHUNK})")
    add("--scaling", choices=["strong", "weak"], default=d.scaling,
        help="strong: D = 1 baseline on the same global batch; weak: on the same per-device batch")
    add("--tracking-uri", default=None, help="MLflow store (default: $MLFLOW_TRACKING_URI or sqlite:///mlflow.db)")
    add("--no-tracking", action="store_true", help="do not log to MLflow")
    add("--json", action="store_true", help="print one JSON object on stdout")
    group = parser.add_argument_group("multi-process (jax.distributed)")
    group.add_argument("--coordinator-address", default=None, help="host:port of process 0")
    group.add_argument("--num-processes", type=int, default=1)
    group.add_argument("--process-id", type=int, default=0)


def _prepare(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """Join the process group (before any JAX work), then build the config and the tracker."""
    from pmap_core import distributed

    if args.coordinator_address or args.num_processes > 1:
        distributed.initialize(args.coordinator_address or "", args.num_processes, args.process_id)
    import jax

    from pmap_core.training import TrainConfig, validate

    config = validate(TrainConfig(
        model=args.model, devices=args.devices if args.devices is not None else jax.device_count(),
        global_batch=args.global_batch, learning_rate=args.learning_rate, steps=args.steps,
        hidden=args.hidden, features=args.features, seed=args.seed, chunk=args.chunk, scaling=args.scaling,
    ))
    info = distributed.process_info()
    tracker = make_tracker(args, info)
    if tracker.fell_back_to:
        _progress(f"tracking: {tracker.uri} unreachable; logging to {tracker.fell_back_to}")
    return config, tracker, info


def _report_fallback(tracker: Any, noticed_at_start: bool) -> None:
    if tracker.fell_back_to and not noticed_at_start:
        _progress(f"tracking: {tracker.uri} failed during the run ({tracker.fallback_reason}); "
                  f"everything was written to {tracker.fell_back_to}")


def make_tracker(args: argparse.Namespace, info: Any) -> Any:
    """Only process 0 writes to MLflow: one run per training, however many processes took part."""
    from pmap_core.tracking import NullTracker, Tracker

    if args.no_tracking or not info.is_leader:
        return NullTracker()
    return Tracker(args.tracking_uri)


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send what native libraries print (gloo's connection lines) to stderr, keeping stdout for the result."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _chunk_progress(total: int) -> Any:
    def report(steps_done: int, losses: list[float]) -> None:
        _progress(f"step {steps_done}/{total}  loss {losses[-1]:.6g}")

    return report


def _run_summary(result: Any, scaling_ratio: float | None, efficiency: float | None,
                 hardware_ceiling: float | None) -> dict[str, Any]:
    config = result.config
    summary: dict[str, Any] = {
        "devices": config.devices, "model": config.model, "global_batch": config.global_batch,
        "per_device_batch": config.per_device_batch, "steps": config.steps, "scaling": config.scaling,
        "throughput": result.throughput, "step_time_s": result.step_time_s,
        "compile_time_s": result.compile_time_s, "wall_time_s": result.wall_time_s,
        "scaling_ratio": scaling_ratio, "efficiency": efficiency, "hardware_ceiling": hardware_ceiling,
        "final_loss": result.final_loss, "replicas_identical": result.replicas_identical,
    }
    if config.model == "linear":
        summary["params"] = {name: float(value) for name, value in result.params.items()}
    return summary


def _interruptible(command: Any) -> Any:
    """Ctrl-C stops the command with status 130 and a line saying the run ended as KILLED, not a traceback."""
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except KeyboardInterrupt:
            _progress("interrupted: the MLflow run ended as KILLED")
            return 130

    return run


@_interruptible
def run_train(args: argparse.Namespace) -> int:
    from pmap_core.tracked_training import train_tracked

    with _stdout_to_stderr():
        config, tracker, info = _prepare(args)
        _progress(f"training {config.model} on {config.devices} devices "
                  f"(process {info.process_id + 1} of {info.num_processes}), global batch {config.global_batch}")
        noticed = bool(tracker.fell_back_to)
        tracked = train_tracked(config, tracker, on_chunk=_chunk_progress(config.steps))
        _report_fallback(tracker, noticed)
    scaling = tracked.scaling
    if scaling is None:  # a multi-process run has no one-device baseline
        result = _run_summary(tracked.result, None, None, None)
    else:
        result = _run_summary(tracked.result, scaling.scaling_ratio, scaling.efficiency, scaling.hardware_ceiling)
        # S(D) compares steady-state chunk medians: steady_throughput / baseline_throughput.
        result["steady_throughput"] = scaling.throughput
        result["baseline_throughput"] = scaling.baseline_throughput
    emit({**result, **_tracking_fields(tracked, info)}, args.json)
    return 0


@_interruptible
def run_sweep(args: argparse.Namespace) -> int:
    from pmap_core.tracked_training import sweep_tracked

    def report(index: int, total: int, result: Any) -> None:
        _progress(f"run {index + 1}/{total}: D = {result.config.devices}, "
                  f"{result.throughput:,.0f} samples/s, final loss {result.final_loss:.6g}")

    with _stdout_to_stderr():
        config, tracker, info = _prepare(args)
        noticed = bool(tracker.fell_back_to)
        tracked = sweep_tracked(config, tracker, args.device_counts, on_run=report)
        _report_fallback(tracker, noticed)
    runs = []
    for point, child in zip(tracked.sweep.points, tracked.child_run_ids):
        runs.append({**_run_summary(point.result, point.scaling_ratio, point.efficiency, point.hardware_ceiling),
                     "run_id": child if info.is_leader and not args.no_tracking else None})
    summary = {"mode": tracked.sweep.mode, "runs": runs, **_tracking_fields(tracked, info)}
    if args.json:
        emit(summary, True)
    else:
        for run in runs:
            print(f"D={run['devices']}: throughput {run['throughput']:,.0f} samples/s, "
                  f"S={run['scaling_ratio']:.3f}, E={run['efficiency']:.3f}, final loss {run['final_loss']:.6g}")
        emit({k: v for k, v in summary.items() if k != "runs"}, False)
    return 0


def _tracking_fields(tracked: Any, info: Any) -> dict[str, Any]:
    logged = info.is_leader and tracked.tracking_uri != "none"
    return {
        "run_id": tracked.run_id if logged else None,
        "tracking_uri": tracked.tracking_uri if logged else None,
        "fell_back_to": tracked.fell_back_to,
        "logging_s": tracked.logging_s,
        "process_id": info.process_id,
        "num_processes": info.num_processes,
    }
