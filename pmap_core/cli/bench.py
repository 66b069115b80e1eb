"""`python -m pmap_core bench collectives …`: the communication benchmark, headless (`--ops all_to_all` adds
the all-to-all, which the page does not measure).

Runs the same sweep as the lab page (`commbench.plan_sweep` / `run_sweep`),
fits the α-β ring model per collective and D (`costs.fit`), logs one MLflow run,
and prints the rows: op, devices, bytes, seconds, algbw, busbw, alpha, beta.
Progress goes to stderr; the result to stdout.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from pmap_core.cli.output import emit
from pmap_core.tracking import check_tracking_uri, redact_uri, tracking_uri

UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


def register(subparsers: Any) -> None:
    bench = subparsers.add_parser("bench", description="Benchmarks of this runtime, logged to MLflow.")
    kinds = bench.add_subparsers(dest="benchmark", required=True)
    collectives = kinds.add_parser(
        "collectives", help="latency and bandwidth of psum, all_gather, psum_scatter (and all_to_all); α-β fit",
        description="Time collectives over message sizes and device counts, fit the ring model "
                    "t = hops·α + factor·S/β, log the run to MLflow.")
    add = collectives.add_argument
    add("--ops", type=_ops, default="psum,all_gather,psum_scatter",
        help="comma-separated collectives: psum, all_gather, psum_scatter, all_to_all (default: the first three)")
    add("--sizes", type=_sizes, default="1K:64M",
        help="message sizes S per device: a list like 1K,64K,1M or a range A:B in powers of 4 (default 1K:64M)")
    add("--devices", type=_ints, default="2,4,8", help="comma-separated device counts D (default 2,4,8)")
    add("--repeats", type=int, default=5, help="timed calls per measurement (default 5)")
    add("--tracking-uri", default=None, help="MLflow store (default: $MLFLOW_TRACKING_URI or sqlite:///mlflow.db)")
    add("--no-tracking", action="store_true", help="do not log to MLflow")
    add("--json", action="store_true", help="print one JSON object on stdout")
    collectives.set_defaults(run=run_collectives)
    two_level = kinds.add_parser(
        "two-level", help="α-β of psum within a process and across processes (run in a group: launch, mpirun, srun)",
        description="In every process of a jax.distributed group of at least 2 processes of at least 2 devices: "
                    "time psum between the devices of one process, then between one device of each process (gloo "
                    "over TCP), fit the ring model to each level and print both fits and their ratio (process 0).")
    add = two_level.add_argument
    add("--sizes", type=_sizes, default="4K:4M", help="message sizes S per device (default 4K:4M, powers of 4)")
    add("--repeats", type=int, default=3, help="timed loop pairs per size (default 3)")
    add("--json", action="store_true", help="print one JSON object on stdout")
    group = two_level.add_argument_group("multi-process (jax.distributed)")
    group.add_argument("--coordinator-address", default=None, help="host:port of process 0")
    group.add_argument("--num-processes", type=int, default=1)
    group.add_argument("--process-id", type=int, default=0)
    group.add_argument("--cluster", choices=("auto", "slurm", "ompi", "mpi4py", "k8s"), default=None,
                       help="join the group a cluster's launcher started (as train --cluster)")
    group.add_argument("--init-timeout", type=int, default=120)
    group.add_argument("--heartbeat-timeout", type=int, default=100)
    two_level.set_defaults(run=run_two_level)


def parse_size(text: str) -> int:
    """'64K' -> 65536; plain numbers are bytes."""
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = text[-1:] if text[-1:] in UNITS else ""
    try:
        return int(float(text[: len(text) - len(unit)]) * UNITS[unit])
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (examples: 4096, 64K, 16M)") from None


def _sizes(text: str) -> list[int]:
    if ":" in text:
        low, high = (parse_size(part) for part in text.split(":", 1))
        sizes = []
        while low <= high:
            sizes.append(low)
            low *= 4
        return sizes
    return [parse_size(part) for part in text.split(",") if part.strip()]


def _ints(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}") from None


def _ops(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _progress(done: int, total: int, label: str) -> None:
    print(f"[{done}/{total}] {label}", file=sys.stderr, flush=True)


def run_collectives(args: argparse.Namespace) -> int:
    from pmap_core import commbench
    from pmap_core.costs import fit as costfit

    # argparse applies `type` to string defaults too, so these are lists here.
    plan = commbench.plan_sweep(args.ops, args.devices, args.sizes, args.repeats)
    print(f"sweep: {len(plan.ops)} ops × D {list(plan.devices)} × {len(plan.sizes)} sizes, "
          f"estimated ≤ {plan.estimated_s:.0f} s", file=sys.stderr, flush=True)
    # A store no run could be written to is refused (exit status 2) before the sweep, not after it.
    uri = None if args.no_tracking else check_tracking_uri(args.tracking_uri or tracking_uri())
    result = commbench.run_sweep(plan, on_progress=_progress)
    fits = costfit.fit_measurements(result.measurements)
    tracking: dict[str, Any] = {"uri": None, "run_id": None}
    if not args.no_tracking:
        from pmap_core.tracking import runtime_tags
        from pmap_core.tracking.mlflow_backend import Tracker

        tracker = Tracker(uri)
        run_id = commbench.log_sweep(tracker, result, fits, runtime_tags("comm_benchmark"))
        tracking = {"uri": redact_uri(tracker.active_uri), "run_id": tracker.store_run_id(run_id),
                    "fell_back_to": tracker.fell_back_to}
    per_d = [fit for (op, d), fit in fits.items() if d is not None]
    emit(_finite({
        "results": commbench.result_rows(result, fits),
        "fits": [{**fit.as_dict(), "scope": "per D" if len(fit.devices) == 1 else "all D",
                  "alpha": fit.alpha_s, "beta": fit.beta_bytes_per_s,
                  "crossover_bytes": [fit.crossover_bytes(d) for d in fit.devices]}
                 for fit in fits.values()],
        "worst_ratio": max((fit.worst_ratio for fit in per_d), default=None),
        "copy_ceiling": result.copy_ceiling,
        "copy": [m.as_dict() for m in result.copies],
        "wall_s": result.wall_s,
        "estimated_s": plan.estimated_s,
        "seconds_are": "one collective: median over repeat pairs of (t(k_long) - t(k_short)) / (k_long - k_short) "
                       "of a chained loop; call_seconds: one dispatched call",
        "bytes_are": "S per device (nccl-tests): all-reduce buffer, all-gather output, reduce-scatter input, "
                     "all-to-all buffer",
        "tracking": tracking,
    }) if args.json else _summary(result, fits, tracking), args.json)
    return 0


def run_two_level(args: argparse.Namespace) -> int:
    from pmap_core.cli import lost_group
    from pmap_core.cli.output import stdout_to_stderr
    from pmap_core.commbench import two_level
    from pmap_core.train import distributed

    with stdout_to_stderr():
        info = distributed.join_group(args.coordinator_address, args.num_processes, args.process_id,
                                      args.init_timeout, args.heartbeat_timeout, args.cluster, lost_group.leave)
        fits = two_level.measure_two_levels(args.sizes, args.repeats)
    if not info.is_leader:
        return 0
    ratios = two_level.ratios(fits)
    if args.json:
        emit(_finite({"levels": [fit.as_dict() for fit in fits.values()], **ratios,
                      "processes": info.num_processes, "devices_per_process": info.local_devices}), True)
        return 0
    lines = {f"{level} (D={fit.devices})": f"alpha {fit.fit.alpha_s * 1e6:.1f} µs, beta "
             f"{fit.fit.beta_bytes_per_s / 1e9:.3g} GB/s, worst ratio ≥64 KiB {fit.fit.worst_ratio:.2f}"
             for level, fit in fits.items()}
    lines["network / process"] = (f"alpha {ratios['alpha_network_over_process']:.2f}×, 1/beta "
                                  f"{ratios['beta_process_over_network']:.2f}×")
    emit(lines, False)
    return 0


def _finite(value: Any) -> Any:
    """NaN and infinity become null, so the output is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def _summary(result: Any, fits: dict, tracking: dict[str, Any]) -> dict[str, Any]:
    lines: dict[str, Any] = {}
    for (op, d), fit in sorted(fits.items(), key=lambda item: (item[0][0], item[0][1] or 1 << 30)):
        lines[f"{op} D={d or 'all'}"] = (
            f"alpha {fit.alpha_s * 1e6:.2f} µs, beta {fit.beta_bytes_per_s / 1e9:.3g} GB/s, "
            f"R² {fit.r2:.3f} (log {fit.r2_log:.3f}), worst ratio ≥64 KiB {fit.worst_ratio:.2f}")
    lines["copy ceiling"] = f"{result.copy_ceiling / 1e9:.3g} GB/s"
    lines["wall time"] = f"{result.wall_s:.1f} s"
    lines["mlflow"] = f"{tracking['uri']} run {tracking['run_id']}" if tracking["run_id"] else "not tracked"
    return lines
