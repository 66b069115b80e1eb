"""How close the lab's training program comes to a minimal program of the same math.

    .venv/bin/python -m benchmarks.bench_lean
    .venv/bin/python -m benchmarks.bench_lean --models linear --devices 2 8 --rounds 15 --json

For each model (the lab's defaults: linear regression with B = 256; the MLP with B = 256, 8 features,
hidden 32) and each D, one run times per step, in alternating rounds:
- `lab`: the lab's compiled chunk (`train.programs.build`, pmap, 50 steps per call) on
  inputs already on their devices;
- `reference`: the smallest data-parallel program written here: every parameter in one flat
  vector, one `psum` of the flat gradient per step, `lax.fori_loop`, no loss kept.
The target is lab / reference ≤ 1.3 at every D.

At D = 2 the run also times the lab's training loop (`training.train`'s chunks, 300 steps) against the
tutorial's per-step loop (one pmap call per step, the batch as one host array), the demo lab's
corrected version of the tutorial: the target is ≥ 8×.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys

import jax
import numpy as np
from jax import lax
from jax.flatten_util import ravel_pytree

import pmap_core  # noqa: F401 - fixes the device runtime before any JAX operation
from benchmarks.bench_training import alternating_medians, chunked_vs_per_step
from pmap_core.runtime import describe_runtime
from pmap_core.train import models, programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.programs import IMPLEMENTATIONS

CHUNK = 50


def reference_program(config: TrainConfig, steps: int):
    """`steps` SGD steps on a flat parameter vector: one all-reduce per step and nothing else."""
    params = models.init_params(config.model, config.input_features, config.hidden, config.seed)
    flat, unravel = ravel_pytree(params)
    d = config.devices

    def run(theta, x, y, learning_rate):
        def step(_, theta):
            grad = jax.grad(lambda t: models.loss(config.model, unravel(t), x, y))(theta)
            return theta - learning_rate / d * lax.psum(grad, "data")
        return lax.fori_loop(0, steps, step, theta)

    program = jax.pmap(run, axis_name="data", in_axes=(0, 0, 0, None), devices=jax.devices()[:d])
    data = models.make_data(config.model, config.global_batch, config.input_features, config.seed)
    on_devices = jax.pmap(lambda a: a, devices=jax.devices()[:d])  # placed once, as the lab's inputs are
    inputs = (on_devices(np.broadcast_to(np.asarray(flat), (d, flat.size))),
              on_devices(data.x.reshape(d, -1, data.x.shape[1])), on_devices(data.y.reshape(d, -1)))
    return program, inputs


def lab_vs_reference(config: TrainConfig, rounds: int) -> dict:
    lab = programs.build(config.program_spec(CHUNK))
    data = models.make_data(config.model, config.global_batch, config.input_features, config.seed)
    params = models.init_params(config.model, config.input_features, config.hidden, config.seed)
    lab_inputs = lab.place(params, data, config.learning_rate)
    reference, ref_inputs = reference_program(config, CHUNK)
    lr = np.float32(config.learning_rate)
    median = alternating_medians({"lab": (lab.compiled, lab_inputs), "reference": (reference, (*ref_inputs, lr))},
                                 rounds)
    return {"model": config.model, "impl": config.impl, "devices": config.devices,
            "lab_step_us": median["lab"] / CHUNK * 1e6,
            "reference_step_us": median["reference"] / CHUNK * 1e6,
            "lab_over_reference": median["lab"] / median["reference"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["linear", "mlp"], choices=models.MODELS)
    parser.add_argument("--impls", nargs="+", default=["pmap"], choices=IMPLEMENTATIONS)
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    info = describe_runtime()
    print(f"# JAX {info.jax_version}, {info.backend}, {info.device_count} {info.device_kind} devices, "
          f"simulated={info.simulated}, physical cores={info.physical_cores}", file=sys.stderr)
    report: dict = {"runtime": dataclasses.asdict(info), "steps": []}
    for model, impl, d in itertools.product(args.models, args.impls, args.devices):
        row = lab_vs_reference(TrainConfig(model=model, devices=d, impl=impl), args.rounds)
        report["steps"].append(row)
        print(f"{model:6s} {impl:9s} D={d}: lab {row['lab_step_us']:7.1f} us/step, reference "
              f"{row['reference_step_us']:7.1f} us/step, ratio {row['lab_over_reference']:.2f} (target ≤ 1.3)")
    if 2 in args.devices and jax.device_count() >= 2:
        loop = report["loop"] = chunked_vs_per_step(2, 300, CHUNK, args.rounds)
        print(f"loop   D=2: lab's chunked loop {loop['chunked_ms']:.1f} ms, tutorial's per-step loop "
              f"{loop['per_step_ms']:.1f} ms: {loop['speedup']:.1f}x (target ≥ 8x)")
    if args.json:
        print(json.dumps(report, default=float))


if __name__ == "__main__":
    main()
