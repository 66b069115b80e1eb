"""Steady-state throughput of the three implementations of the training step: pmap, shard_map, jit.

    .venv/bin/python -m benchmarks.bench_impls
    .venv/bin/python -m benchmarks.bench_impls --devices 1 2 4 8 --rounds 9 --json

Two workloads, in one run: linear regression at the training lab's defaults (global batch 256) and
the MLP at global batch 4096 and hidden width 512. At each D, each implementation's compiled chunk
program (`train.programs.build`: `--chunk` steps inside one call, the training lab's 25 by
default) is called again and again on the same inputs, already placed on its devices
(`ParallelProgram.place`): compile excluded, one untimed warm-up call each, then rounds in
which every implementation is timed once (after `block_until_ready`), the order rotating from round
to round, so that a drift in the machine's load hits all three alike. At least `--rounds` rounds, and
more for quick calls, until each implementation has `--min-seconds` of timed calls (a linear chunk
takes well under a millisecond: a median of a few calls would be noise).

steady throughput = global batch × chunk / median call time (the `steady_throughput` of a training
run). For each D the table names the fastest and says whether the default implementation
(`TrainConfig().impl`) is within 10% of it (`pmap_core.train.advice`); `spread` is the largest
interquartile range / median of the three call times, a measure of how far to trust a gap between them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time

import jax
import numpy as np

import pmap_core  # noqa: F401 - fixes the device runtime before any JAX operation
from pmap_core.runtime import describe_runtime
from pmap_core.train import advice as impl_advice
from pmap_core.train import models, programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.programs import IMPLEMENTATIONS

LAB_CHUNK = 25  # steps per compiled call on the training page (labs/training.py, CHUNK)
WORKLOADS = {  # name: the settings that differ from TrainConfig's defaults
    "linear": {"model": "linear", "global_batch": 256},
    "mlp": {"model": "mlp", "global_batch": 4096, "hidden": 512},
}


def _prepared(config: TrainConfig, chunk: int):
    """(the compiled chunk program's run, its inputs on their devices), compile excluded."""
    program = programs.build(config.program_spec(chunk))
    data = models.make_data(config.model, config.global_batch, config.input_features, config.seed)
    params = models.init_params(config.model, config.input_features, config.hidden, config.seed)
    return program.compiled, program.place(params, data, config.learning_rate)


def _timed(run, inputs) -> float:
    start = time.perf_counter()
    jax.block_until_ready(run(*inputs))
    return time.perf_counter() - start


MAX_ROUNDS = 5000


def compare(workload: str, devices: int, chunk: int, rounds: int, min_seconds: float) -> dict:
    """Every implementation at one D, timed in alternating rounds; one row of the table."""
    base = TrainConfig(devices=devices, chunk=chunk, steps=chunk, **WORKLOADS[workload])
    calls = {impl: _prepared(dataclasses.replace(base, impl=impl), chunk) for impl in IMPLEMENTATIONS}
    for run, inputs in calls.values():
        jax.block_until_ready(run(*inputs))  # warm up: the first call of a fresh executable
    slowest = max(_timed(*call) for call in calls.values())
    rounds = min(MAX_ROUNDS, max(rounds, int(np.ceil(min_seconds / slowest))))
    samples: dict[str, list[float]] = {impl: [] for impl in IMPLEMENTATIONS}
    order = list(IMPLEMENTATIONS)
    for index in range(rounds):
        shift = index % len(order)
        for impl in order[shift:] + order[:shift]:
            samples[impl].append(_timed(*calls[impl]))
    per_call = base.global_batch * chunk
    throughputs = {impl: per_call / statistics.median(s) for impl, s in samples.items()}
    advice = impl_advice.advise_at(devices, throughputs)
    spread = max(float(np.subtract(*np.percentile(s, [75, 25])) / np.median(s)) for s in samples.values())
    return {"workload": workload, "model": base.model, "global_batch": base.global_batch, "hidden": base.hidden,
            "devices": devices, "chunk": chunk, "rounds": rounds,
            "steady_throughput": throughputs,
            "call_s": {impl: dict(zip(("min", "q25", "median", "q75", "max"),
                                      map(float, np.percentile(s, [0, 25, 50, 75, 100])), strict=True))
                       for impl, s in samples.items()},
            "spread": spread,
            "fastest": advice.fastest, "default": advice.default, "default_share": advice.default_share,
            "default_within_10pct": advice.default_ok, "recommended": advice.recommended}


def print_table(rows: list[dict]) -> None:
    default = impl_advice.DEFAULT_IMPL
    head = (f"{'workload':<22} {'D':>2} " + " ".join(f"{impl:>12}" for impl in IMPLEMENTATIONS)
            + f" {'fastest':>10} {default + '/fastest':>13} {'within 10%':>10} {'spread':>7}")
    print("steady throughput, samples/s (median of the rounds); spread: IQR / median of the call times")
    print(head)
    print("-" * len(head))
    for row in rows:
        name = f"{row['model']} B={row['global_batch']}" + (f" h={row['hidden']}" if row["model"] == "mlp" else "")
        print(f"{name:<22} {row['devices']:>2} "
              + " ".join(f"{row['steady_throughput'][impl]:>12,.0f}" for impl in IMPLEMENTATIONS)
              + f" {row['fastest']:>10} {row['default_share']:>13.3f}"
              f" {'yes' if row['default_within_10pct'] else 'NO':>10} {row['spread']:>6.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", choices=list(WORKLOADS), default=list(WORKLOADS))
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--chunk", type=int, default=LAB_CHUNK, help="steps per compiled call")
    parser.add_argument("--rounds", type=int, default=7, help="fewest timed calls of each implementation per D")
    parser.add_argument("--min-seconds", type=float, default=3.0,
                        help="more rounds for quick calls, until each implementation has this much timed")
    parser.add_argument("--json", action="store_true", help="also print every figure as one JSON object")
    args = parser.parse_args()
    info = describe_runtime()
    too_many = [d for d in args.devices if d > info.device_count]
    if too_many:
        parser.error(f"this runtime has {info.device_count} devices, asked for D = {too_many}")
    print(f"# JAX {info.jax_version}, {info.backend}, {info.device_count} {info.device_kind} devices, "
          f"simulated={info.simulated}, physical cores={info.physical_cores}; chunk {args.chunk} steps, "
          f"at least {args.rounds} rounds and {args.min_seconds:g} s per implementation", file=sys.stderr)
    started = time.perf_counter()
    rows = []
    for workload in args.workloads:
        for devices in args.devices:
            rows.append(compare(workload, devices, args.chunk, args.rounds, args.min_seconds))
            print(f"# {workload} D={devices}: {rows[-1]['rounds']} rounds "
                  f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    print_table(rows)
    failing = [r for r in rows if not r["default_within_10pct"]]
    for row in failing:
        print(f"{row['model']} D={row['devices']}: {row['default']} reaches {row['default_share']:.0%} of "
              f"{row['fastest']}; recommend {row['recommended']}")
    if not failing:
        print(f"{impl_advice.DEFAULT_IMPL} is within 10% of the fastest at every D measured")
    if args.json:
        print(json.dumps({"runtime": dataclasses.asdict(info), "rows": rows,
                          "wall_s": time.perf_counter() - started}, default=float))


if __name__ == "__main__":
    main()
