"""Figures for the training lab: chunked steps, pmap against jit, the cost of MLflow logging.

    .venv/bin/python -m benchmarks.bench_training
    .venv/bin/python -m benchmarks.bench_training --parts a --devices 1 2 4 8 --repeats 7 --json

(a) Linear regression, 300 steps: the lab's loop (50 steps per pmap call, `lax.scan`) against two
    per-step Python loops (one pmap call per step), all timed here: the tutorial's loop as the demo
    lab corrects it (a plain `jax.pmap` call with `in_axes=None` params and the batch as one array,
    so every call also splits it across the devices), and the strictest rival, the lab's own
    compiled one-step program fed inputs already on their devices. The ratio is bounded by what
    every step still pays inside the program: the all-reduce (`pmean`) of the gradients, shown as
    `in_program_step_us`.
(b) MLP, global batch 4096, hidden 512: pmap on 2 devices against single-device `jit` of the
    same chunked steps on the same global batch.
(c) MLflow logging time as a share of a tracked 300-step run's wall time (a local sqlite store).
All timings: compile excluded, after block_until_ready, median of repeats (`pmap_core.timing`).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import statistics
import sys
import tempfile
import time

import jax
import numpy as np
from jax import lax

import pmap_core  # noqa: F401 - fixes the device runtime before any JAX operation
from pmap_core.runtime import describe_runtime
from pmap_core.timing import time_call
from pmap_core.tracking.callback import TrackingCallback
from pmap_core.train import models, programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import train


def _inputs(config: TrainConfig, steps: int):
    program = programs.build(config.program_spec(steps))
    data = models.make_data(config.model, config.global_batch, config.input_features, config.seed)
    params = models.init_params(config.model, config.input_features, config.hidden, config.seed)
    return program, program.place(params, data, config.learning_rate)[:3]


def alternating_medians(calls: dict, rounds: int) -> dict[str, float]:
    """Median seconds of each call, timed in alternating rounds so that load drifts hit all alike."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for fn, args in calls.values():
        time_call(fn, *args, repeats=1, warmup=0)  # compile and warm up
    for _ in range(rounds):
        for name, (fn, args) in calls.items():
            samples[name].extend(time_call(fn, *args, repeats=1, warmup=0).samples_s)
    return {name: statistics.median(values) for name, values in samples.items()}


def tutorial_step(devices: int):
    """The tutorial's training step, corrected as the demo lab teaches: one pmap call per step, the
    params going in whole (`in_axes=None`) and coming back as one copy, the batch one (D, B/D) array."""
    def train_step(params, x, y, learning_rate):
        grads = jax.grad(lambda p: jax.numpy.mean((p["w"] * x + p["b"] - y) ** 2))(params)
        grads = lax.pmean(grads, "data")
        return jax.tree.map(lambda p, g: p - learning_rate * g, params, grads)

    return jax.pmap(train_step, axis_name="data", in_axes=(None, 0, 0, None), out_axes=None,
                    devices=jax.devices()[:devices])


def chunked_vs_per_step(devices: int, steps: int, chunk: int, repeats: int) -> dict:
    config = TrainConfig(devices=devices, steps=steps, chunk=chunk)
    lr = np.float32(config.learning_rate)
    chunked, (params, x, y) = _inputs(config, chunk)
    one_step, _ = _inputs(config, 1)

    def lab_loop(params):
        for _ in range(steps // chunk):
            params, _ = chunked.run(params, x, y, lr)
        return params

    def placed_loop(params):  # one dispatch per step, inputs already on their devices
        for _ in range(steps):
            params, _ = one_step.run(params, x, y, lr)
        return params

    step = tutorial_step(devices)
    data = models.make_data("linear", config.global_batch, 1, config.seed)
    x_shards = jax.numpy.asarray(data.x.reshape(devices, -1))
    y_shards = jax.numpy.asarray(data.y.reshape(devices, -1))
    start = {"w": np.float32(0), "b": np.float32(0)}

    def tutorial_loop(params):  # one dispatch per step, blocked only at the end
        for _ in range(steps):
            params = step(params, x_shards, y_shards, lr)
        return params

    median = alternating_medians({"lab": (lab_loop, (params,)), "placed": (placed_loop, (params,)),
                                  "tutorial": (tutorial_loop, (start,))}, repeats)
    return {"devices": devices, "chunked_ms": median["lab"] * 1e3, "per_step_ms": median["tutorial"] * 1e3,
            "speedup": median["tutorial"] / median["lab"], "placed_per_step_ms": median["placed"] * 1e3,
            "speedup_over_placed": median["placed"] / median["lab"],
            "in_program_step_us": median["lab"] / steps * 1e6,
            "per_call_step_us": median["tutorial"] / steps * 1e6}


@functools.lru_cache(maxsize=4)
def _jit_chunk(model: str, steps: int):
    """The same steps on one device with `jit`: no device axis, no pmean."""
    def run(params, x, y, learning_rate):
        def step(params, _):
            loss, grads = jax.value_and_grad(functools.partial(models.loss, model))(params, x, y)
            return jax.tree.map(lambda p, g: p - learning_rate * g, params, grads), loss
        return lax.scan(step, params, None, length=steps)
    return jax.jit(run)


def pmap_vs_jit(devices: int, global_batch: int, hidden: int, chunk: int, repeats: int) -> dict:
    config = TrainConfig(model="mlp", devices=devices, global_batch=global_batch, hidden=hidden,
                         steps=chunk, chunk=chunk)
    lr = np.float32(config.learning_rate)
    program, pmap_args = _inputs(config, chunk)
    data = models.make_data("mlp", global_batch, config.features, config.seed)
    params = models.init_params("mlp", config.features, hidden, config.seed)
    jit_args = jax.device_put((params, data.x, data.y, lr), jax.devices()[0])
    median = alternating_medians({"pmap": (program.run, (*pmap_args, lr)),
                                  "jit": (_jit_chunk("mlp", chunk), jit_args)}, repeats)
    samples = chunk * global_batch
    return {"devices": devices, "global_batch": global_batch, "hidden": hidden,
            "pmap_samples_per_s": samples / median["pmap"], "jit_samples_per_s": samples / median["jit"],
            "pmap_over_jit": median["jit"] / median["pmap"]}


def _tracked_run(config: TrainConfig, tracker) -> tuple[float, float]:
    """(seconds spent writing to MLflow, wall seconds of the whole tracked run), as the page runs it."""
    started = time.perf_counter()
    tracking = TrackingCallback(tracker)
    tracked = tracking.tracked(train(config, [tracking]))
    return tracked.logging_s, time.perf_counter() - started


def logging_overhead(model: str, repeats: int) -> dict:
    from pmap_core.tracking.mlflow_backend import Tracker

    config = TrainConfig(model=model, devices=min(8, jax.device_count()), steps=300,
                         global_batch=4096 if model == "mlp" else 256, hidden=512 if model == "mlp" else 32)
    with tempfile.TemporaryDirectory() as folder:
        tracker = Tracker("sqlite:///" + os.path.join(folder, "bench.db"))
        tracker.client.search_experiments()  # create the store's tables before timing
        runs = [_tracked_run(config, tracker) for _ in range(repeats)]
    return {"model": model, "global_batch": config.global_batch, "devices": config.devices,
            "logging_s": float(np.median([logging for logging, _ in runs])),
            "run_wall_s": float(np.median([wall for _, wall in runs])),
            "logging_share": float(np.median([logging / wall for logging, wall in runs]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="abc", help="which figures: any of a, b, c")
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    info = describe_runtime()
    report: dict = {"runtime": dataclasses.asdict(info)}
    print(f"# JAX {info.jax_version}, {info.backend}, {info.device_count} {info.device_kind} devices, "
          f"simulated={info.simulated}, physical cores={info.physical_cores}", file=sys.stderr)
    if "a" in args.parts:
        report["a"] = [chunked_vs_per_step(d, 300, 50, args.repeats) for d in args.devices]
        for row in report["a"]:
            print(f"(a) D={row['devices']}: chunked {row['chunked_ms']:.1f} ms; tutorial's per-step loop "
                  f"{row['per_step_ms']:.1f} ms, speedup {row['speedup']:.1f}x; per-step loop on placed "
                  f"inputs {row['placed_per_step_ms']:.1f} ms, speedup {row['speedup_over_placed']:.1f}x "
                  f"(step inside the program {row['in_program_step_us']:.1f} us, "
                  f"per tutorial pmap call {row['per_call_step_us']:.1f} us)")
    if "b" in args.parts:
        row = report["b"] = pmap_vs_jit(2, 4096, 512, 20, args.repeats)
        print(f"(b) MLP B=4096 hidden=512: pmap D=2 {row['pmap_samples_per_s']:,.0f} samples/s, jit on one "
              f"device {row['jit_samples_per_s']:,.0f} samples/s, ratio {row['pmap_over_jit']:.2f}x")
    if "c" in args.parts:
        report["c"] = [logging_overhead(model, 3) for model in ("linear", "mlp")]
        for row in report["c"]:
            print(f"(c) {row['model']} 300 steps (B={row['global_batch']}, D={row['devices']}): MLflow "
                  f"logging {row['logging_s'] * 1e3:.0f} ms of {row['run_wall_s']:.2f} s "
                  f"= {row['logging_share']:.1%}")
    if args.json:
        print(json.dumps(report, default=float))


if __name__ == "__main__":
    main()
