"""Pipeline parallelism measured: the step time against the number of micro-batches M at a fixed number of
stages P, fitted to (M + P − 1)·t_stage, and the compiled peak bytes per device of GPipe against 1F1B.

    .venv/bin/python -m benchmarks.bench_pipeline
    .venv/bin/python -m benchmarks.bench_pipeline --stages 4 --microbatches 1 2 4 8 16 --rows 32 --hidden 256

The model is the deeper MLP (`--layers`, default P: one layer a stage), trained pipelined (impl pipeline,
`train.programs.build`) on D = P devices. Every micro-batch has `--rows` rows, so the global batch is
M·rows and one stage's forward and backward of one micro-batch cost the same at every M: both schedules
take 2(M + P − 1) slots a step (`train.pipeline.schedule_table`), so the step time should be
(M + P − 1)·t_stage, t_stage the time of one forward and one backward of a stage (the Ultra-Scale Playbook,
"pipeline parallelism"; GPipe, Huang et al. 2019). Each compiled chunk of `--chunk` steps is timed after
`block_until_ready`, compile excluded (`timing.time_call`: median of `--repeats` calls); the fit is least
squares through the origin, with R² and each point's residual, and a second fit with an intercept (a
fixed cost per step: dispatch, the loss) beside it.

Memory: `compiled.memory_analysis()` of each program (`train.pipeline.peak_bytes_by_schedule`), beside the
bytes each schedule keeps between slots (`train.pipeline.stash_bytes`: GPipe M micro-batches of
activations, 1F1B at most P): the two peaks differ by exactly the activations 1F1B does not keep.

On simulated CPU devices the stages are threads on this machine's cores: with fewer cores than stages
they take turns, and a slot costs more than one stage's work. The benchmark prints the core count and the
load average beside the figures; the figures are this machine's, float32 on CPU, not an accelerator's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

import numpy as np

import pmap_core  # noqa: F401 - fixes the device runtime before any JAX operation
from pmap_core.runtime import describe_runtime
from pmap_core.timing import time_call
from pmap_core.train import models, pipeline, programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.plan import validate


@dataclasses.dataclass(frozen=True)
class Point:
    microbatches: int
    slots: int                 # M + P − 1: forward-backward pairs of slots a step
    step_s: float              # median call time / steps in the call
    spread: float              # (slowest − fastest call) / median


@dataclasses.dataclass(frozen=True)
class Fit:
    t_stage_s: float           # through the origin: step = (M + P − 1)·t_stage
    r2: float
    residuals_s: tuple[float, ...]
    slope_s: float             # with an intercept: step = slope·(M + P − 1) + fixed
    fixed_s: float


@dataclasses.dataclass(frozen=True)
class Memory:
    microbatches: int
    peak: dict[str, int | None]    # schedule: compiled peak bytes per device
    stash: dict[str, int]          # schedule: bytes of activations and cotangents kept between slots


def config_for(args: argparse.Namespace, micro: int, schedule: str) -> TrainConfig:
    return validate(TrainConfig(model="mlp", impl="pipeline", devices=args.stages, pipeline_stages=args.stages,
                                layers=args.layers or args.stages, hidden=args.hidden, features=args.features,
                                microbatches=micro, schedule=schedule, global_batch=micro * args.rows,
                                chunk=args.chunk, steps=args.chunk))


def time_step(config: TrainConfig, repeats: int) -> Point:
    program = programs.build(config.program_spec(config.chunk))
    data = models.make_data(config.model, config.global_batch, config.input_features, config.seed)
    params = models.init_params(config.model, config.input_features, config.hidden, config.seed, config.layers)
    inputs = program.place(params, data, config.learning_rate)
    timing = time_call(program.compiled, *inputs, repeats=repeats, warmup=1)
    return Point(config.microbatches, config.microbatches + config.pipeline_stages - 1,
                 timing.median_s / config.chunk, (timing.max_s - timing.min_s) / timing.median_s)


def fit(points: list[Point]) -> Fit:
    n = np.array([p.slots for p in points], float)
    t = np.array([p.step_s for p in points], float)
    t_stage = float(n @ t / (n @ n))
    residuals = t - t_stage * n
    total = float(np.sum((t - t.mean()) ** 2))
    r2 = 1.0 - float(residuals @ residuals) / total if total > 0 else 1.0
    slope, fixed = (float(v) for v in np.polyfit(n, t, 1)) if len(points) > 1 else (t_stage, 0.0)
    return Fit(t_stage, r2, tuple(float(r) for r in residuals), slope, fixed)


def memory(args: argparse.Namespace, micro: int) -> Memory:
    spec = config_for(args, micro, "gpipe").program_spec(args.chunk)
    return Memory(micro, pipeline.peak_bytes_by_schedule(spec),
                  {s: pipeline.stash_bytes(dataclasses.replace(spec, schedule=s)) for s in pipeline.SCHEDULES})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", type=int, default=4, help="P stages, one per device (default 4)")
    parser.add_argument("--layers", type=int, default=None, help="MLP layers, a multiple of P (default P)")
    parser.add_argument("--microbatches", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--rows", type=int, default=32, help="rows of one micro-batch (default 32)")
    parser.add_argument("--hidden", type=int, default=256, help="the MLP's width (default 256)")
    parser.add_argument("--features", type=int, default=8)
    parser.add_argument("--schedule", choices=pipeline.SCHEDULES, default="1f1b", help="the schedule timed")
    parser.add_argument("--chunk", type=int, default=10, help="steps in one compiled call (default 10)")
    parser.add_argument("--repeats", type=int, default=7, help="timed calls of each program (default 7)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    args = parser.parse_args(argv)

    runtime = describe_runtime()
    if runtime.device_count < args.stages:
        print(f"{args.stages} stages need {args.stages} devices; this runtime has {runtime.device_count} "
              f"(PMAP_LAB_DEVICES sets the count)", file=sys.stderr)
        return 2
    cores, load = runtime.physical_cores, os.getloadavg()
    points = [time_step(config_for(args, m, args.schedule), args.repeats) for m in args.microbatches]
    fitted = fit(points)
    memories = [memory(args, m) for m in args.microbatches]
    bubbles = {m: pipeline.schedule_bubble(args.stages, m, args.schedule) for m in args.microbatches}
    if args.json:
        print(json.dumps({"runtime": dataclasses.asdict(runtime), "load_average": load, "stages": args.stages,
                          "schedule": args.schedule, "points": [dataclasses.asdict(p) for p in points],
                          "fit": dataclasses.asdict(fitted), "memory": [dataclasses.asdict(m) for m in memories],
                          "bubble_fraction": bubbles}, indent=2))
        return 0

    print(f"JAX {runtime.jax_version}, backend {runtime.backend}, {runtime.device_count} "
          f"{'simulated ' if runtime.simulated else ''}devices ({runtime.device_kind}), {cores} physical cores, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if runtime.simulated and cores < args.stages:
        print(f"This machine has {cores} cores for {args.stages} stages: the stages take turns on the cores, so a "
              f"slot costs about {args.stages / cores:.1f}× one stage's work and the times below are this "
              f"machine's, not a pipeline's with a core per stage.")
    layers = args.layers or args.stages
    print(f"\nStep time against M: P = {args.stages}, {layers} layers of width {args.hidden}, {args.rows} rows a "
          f"micro-batch (global batch M·{args.rows}), schedule {args.schedule}, {args.chunk} steps a call, "
          f"median of {args.repeats}")
    print(f"{'M':>4} {'M+P−1':>6} {'bubble':>7} {'step ms':>9} {'spread':>7} {'fit ms':>9} {'residual':>9}")
    for p, r in zip(points, fitted.residuals_s, strict=True):
        print(f"{p.microbatches:>4} {p.slots:>6} {bubbles[p.microbatches]:>7.3f} {1e3 * p.step_s:>9.3f} "
              f"{p.spread:>7.2f} {1e3 * fitted.t_stage_s * p.slots:>9.3f} {1e3 * r:>+9.3f}")
    print(f"fit through the origin: step = (M + P − 1) × {1e3 * fitted.t_stage_s:.3f} ms, R² = {fitted.r2:.4f}")
    print(f"fit with an intercept: step = (M + P − 1) × {1e3 * fitted.slope_s:.3f} ms {1e3 * fitted.fixed_s:+.3f} ms")

    print(f"\nPeak bytes per device (compiled.memory_analysis()), GPipe against 1F1B, P = {args.stages}:")
    print(f"{'M':>4} {'GPipe peak':>11} {'1F1B peak':>10} {'difference':>11} {'GPipe kept':>11} {'1F1B kept':>10}")
    for m in memories:
        g, o = m.peak["gpipe"], m.peak["1f1b"]
        shown = ["n/a" if v is None else f"{v:,}" for v in (g, o, None if g is None or o is None else g - o)]
        print(f"{m.microbatches:>4} {shown[0]:>11} {shown[1]:>10} {shown[2]:>11} {m.stash['gpipe']:>11,} "
              f"{m.stash['1f1b']:>10,}")
    print("kept: activations and cotangents a device keeps between slots (GPipe M micro-batches, 1F1B at most P)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
