"""Throughput of the MLP on every data × model mesh shape of D devices, beside what this machine's roofline predicts.

    .venv/bin/python -m benchmarks.bench_meshes                 # D = 8: 8×1, 4×2, 2×4, 1×8
    .venv/bin/python -m benchmarks.bench_meshes --rounds 5 --steps 600

First the roofline (`pmap_core.concepts.mesh_2d.roofline`): C from a timed matmul (its FLOPs from
`compiled.cost_analysis()`), W = the β of an α-β fit to a quick all-reduce sweep, beside the Scaling
Book's TPU v5p and H100 figures; then its prediction per shape (`predicted_winner`: the ring model
with one latency per collective, and with one per rendezvous, XLA:CPU's cost of each operand of a tuple
all-reduce). Then every shape is trained `--rounds` times (`sweep_meshes`, rounds interleaved so that
a change of load hits every shape alike) and the median steady throughput printed per shape. A
benchmark, not a test: on simulated CPU devices the figures move with whatever else runs on the cores
(the load average is printed before and after).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from pmap_core import describe_runtime
from pmap_core.concepts import mesh_2d
from pmap_core.train.config import TrainConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--global-batch", type=int, default=256)
    parser.add_argument("--features", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--chunk", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    info = describe_runtime()
    print(f"runtime: jax {info.jax_version}, {info.backend}, {info.device_count} devices "
          f"(simulated: {info.simulated}), {info.physical_cores} physical cores")
    load_before = os.getloadavg()
    start = time.perf_counter()

    roof = mesh_2d.roofline(args.devices)
    print(f"\nroofline: C = {roof.flops_per_s / 1e9:.1f} GFLOP/s ({roof.matmul_size}² float32 matmul, "
          f"{roof.matmul_flops:.3g} FLOPs by cost_analysis in {roof.matmul_s * 1e3:.2f} ms)")
    if roof.beta_bytes_per_s:
        print(f"          W = β = {roof.beta_bytes_per_s / 1e9:.2f} GB/s, α = {roof.alpha_s * 1e6:.2f} µs per hop "
              f"({roof.bandwidth_source})")
    print(f"\n{'machine':<56}{'C FLOP/s':>10}{'W B/s':>10}{'bytes':>6}{'C/W·v/2':>9}{'Y < F/…':>9}  whose")
    for row in roof.table(args.hidden):
        bandwidth = row["bandwidth_bytes_per_s"]
        critical, bound = row["critical_batch_per_device"], row["tp_bound"]
        nan = float("nan")
        print(f"{row['machine']:<56}{row['flops_per_s']:>10.2e}{(bandwidth or nan):>10.2e}{row['value_bytes']:>6}"
              f"{(critical or nan):>9.0f}{(bound or nan):>9.3f}  {row['whose']}")

    shapes = mesh_2d.mesh_shapes(args.devices, args.hidden)
    prediction = None
    if roof.beta_bytes_per_s:
        prediction = mesh_2d.predicted_winner(roof, shapes, (args.global_batch, args.features, args.hidden))

    config = TrainConfig(model="mlp", devices=args.devices, global_batch=args.global_batch, features=args.features,
                         hidden=args.hidden, steps=args.steps, chunk=args.chunk)
    measured: dict[tuple[int, int], list[float]] = {shape: [] for shape in shapes}
    figures: dict[tuple[int, int], mesh_2d.MeshRun] = {}
    for _ in range(args.rounds):
        for run in mesh_2d.sweep_meshes(config).runs:
            measured[run.data, run.model].append(run.result.steady_throughput)
            figures[run.data, run.model] = run
    wall = time.perf_counter() - start
    load_after = os.getloadavg()

    print(f"\nMLP B={args.global_batch} D={args.features} F={args.hidden}, {args.steps} steps in chunks of "
          f"{args.chunk}; median of {args.rounds} rounds (steady throughput: a warm repeated call)")
    print(f"{'shape':<7}{'samples/s':>11}{'min':>10}{'max':>10}{'µs/step':>9}{'bytes/step':>11}"
          f"{'all-reduces':>12}{'pred µs':>9}{'ring µs':>9}{'meets':>6}")
    predicted = {(s.data, s.model): s for s in prediction.shapes} if prediction else {}
    medians = {}
    for shape in shapes:
        throughput = statistics.median(measured[shape])
        medians[shape] = throughput
        run, guess = figures[shape], predicted.get(shape)
        step_us = args.global_batch / throughput * 1e6
        extra = (f"{guess.step_s * 1e6:>9.1f}{guess.ring_step_s * 1e6:>9.1f}{guess.rendezvous:>6}" if guess else "")
        print(f"{f'{shape[0]}x{shape[1]}':<7}{throughput:>11,.0f}{min(measured[shape]):>10,.0f}"
              f"{max(measured[shape]):>10,.0f}{step_us:>9.1f}{run.result.footprint.comm_bytes_per_step:>11,.0f}{len(run.collectives):>12}{extra}")
    fastest = max(medians, key=medians.get)
    print(f"\nmeasured fastest: {fastest[0]}x{fastest[1]}")
    if prediction:
        print(f"predicted (one latency per rendezvous): {prediction.winner[0]}x{prediction.winner[1]}; "
              f"plain ring model: {prediction.ring_winner[0]}x{prediction.ring_winner[1]}")
    print(f"\nwall {wall:.1f} s; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after "
          f"({info.physical_cores} cores shared by {args.devices} simulated devices)")


if __name__ == "__main__":
    main()
