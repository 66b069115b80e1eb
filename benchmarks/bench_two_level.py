"""A two-level mesh on this machine: α-β of psum within a process and across processes (gloo over TCP).

    .venv/bin/python -m benchmarks.bench_two_level                      # 2 processes × 2 devices, 4 KiB–4 MiB
    .venv/bin/python -m benchmarks.bench_two_level --sizes 4K:16M --repeats 5

Starts a local group (`launch.ProcessGroup`) running `python -m pmap_core bench two-level` in every process:
the ring model is fitted once to psum between the devices of process 0 and once to psum between one device of
each process, whose bytes cross processes through gloo's TCP connections. In a group JAX runs a process's own
collectives through gloo as well, so a third fit is of psum between 2 devices of one process that joined no
group (`python -m pmap_core bench collectives --ops psum --devices 2`: shared memory). Prints the three fits,
every point, and the ratios of the network's α and 1/β to each within-process level, with the machine's load
average before and after (the processes share the cores with whatever else runs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

from harness.processes import run_python
from pmap_core.commbench import two_level
from pmap_core.commbench.plan import busbw_factor
from pmap_core.costs import fit as costfit
from pmap_core.train import launch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--devices-per-process", type=int, default=2)
    parser.add_argument("--sizes", default="4K:4M")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    command = ["bench", "two-level", "--json", "--sizes", args.sizes, "--repeats", str(args.repeats)]
    load_before, started = os.getloadavg(), time.perf_counter()
    alone = run_python(["-m", "pmap_core", "bench", "collectives", "--ops", "psum", "--devices", "2", "--sizes",
                        args.sizes, "--repeats", str(args.repeats), "--no-tracking", "--json"], devices=2, timeout=1200)
    if alone.returncode != 0:
        sys.exit(f"the one-process benchmark failed:\n{alone.stderr[-3000:]}")
    reference = json.loads(alone.stdout.strip().splitlines()[-1])
    with launch.ProcessGroup(command, args.processes, args.devices_per_process, timeout_s=1200) as group:
        lines = [line for line in group.lines() if line is not None]
        outcome = group.outcome()
    wall, load_after = time.perf_counter() - started, os.getloadavg()
    if not outcome.ok:
        print("\n".join(line.text for line in lines[-30:]), file=sys.stderr)
        sys.exit(f"the group did not finish: {launch.describe_failure(outcome)}")
    result = json.loads(outcome.stdout[0].strip().splitlines()[-1])
    rows = [row for row in reference["results"] if row["op"] == two_level.OP]
    fit = next(f for f in reference["fits"] if f["op"] == two_level.OP)  # per D and all D: the same one D
    levels = [{"level": "alone", "devices": 2, "sizes": [r["bytes"] for r in rows],
               "seconds": [r["seconds"] for r in rows], "alpha_s": fit["alpha"], "beta_bytes_per_s": fit["beta"],
               "r2_log": fit["r2_log"], "worst_ratio": fit["worst_ratio"]}, *result["levels"]]
    by_name = {level["level"]: level for level in levels}

    print(f"{args.processes} processes × {args.devices_per_process} devices, {wall:.0f} s; load average "
          f"{load_before[0]:.1f} before, {load_after[0]:.1f} after")
    print(f"\n{'level':<9}{'D':>3}{'S bytes':>10}{'µs':>10}{'model µs':>10}{'busbw GB/s':>12}")
    for level in levels:
        d = level["devices"]
        for size, seconds in zip(level["sizes"], level["seconds"], strict=True):
            model = costfit.predict(two_level.OP, d, size, level["alpha_s"], level["beta_bytes_per_s"] or math.inf)
            busbw = busbw_factor(two_level.OP, d) * size / seconds
            print(f"{level['level']:<9}{d:>3}{size:>10}{seconds * 1e6:>10.1f}{model * 1e6:>10.1f}{busbw / 1e9:>12.3f}")
    print(f"\n{'fit':<9}{'α µs':>9}{'β GB/s':>9}{'R² log':>8}{'worst≥64K':>10}")
    for level in levels:
        print(f"{level['level']:<9}{level['alpha_s'] * 1e6:>9.1f}{(level['beta_bytes_per_s'] or math.inf) / 1e9:>9.3f}"
              f"{level['r2_log']:>8.3f}{level['worst_ratio']:>10.2f}")
    network = by_name["network"]
    for name, meaning in (("process", "one process's devices in the group (gloo)"),
                          ("alone", "one process's devices, no group (shared memory)")):
        level = by_name[name]
        per_byte = (level["beta_bytes_per_s"] or math.inf) / (network["beta_bytes_per_s"] or math.inf)
        print(f"across processes / {meaning}: α {network['alpha_s'] / level['alpha_s']:.2f}×, time per byte (1/β) "
              f"{per_byte:.2f}×")


if __name__ == "__main__":
    main()
