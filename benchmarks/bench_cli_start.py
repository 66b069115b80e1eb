"""How long the command line takes to answer: `python -m pmap_core --help` and `--version` (and, beside them,
`train --help`, which imports JAX and MLflow to list every setting), each in a fresh interpreter.

    .venv/bin/python -m benchmarks.bench_cli_start                  # 7 runs of each
    .venv/bin/python -m benchmarks.bench_cli_start --runs 11 --root /path/to/another/checkout

Printed: the median wall time of each command line over the runs (from starting the interpreter to its exit), with
the fastest and the slowest. The first run of each is not counted (it reads the files into the page cache).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
COMMANDS = (["--help"], ["--version"], ["train", "--help"])


def wall_times(root: pathlib.Path, argv: list[str], runs: int) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pmap_core", *argv], cwd=root, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each command line (default 7)")
    parser.add_argument("--root", type=pathlib.Path, default=ROOT, help="the checkout to time (default: this one)")
    args = parser.parse_args()
    print(f"{args.root}: {os.cpu_count()} CPUs, median of {args.runs} runs")
    for argv in COMMANDS:
        times = wall_times(args.root, argv, args.runs)
        print(f"python -m pmap_core {' '.join(argv):<14} median {statistics.median(times):.2f} s "
              f"(fastest {min(times):.2f} s, slowest {max(times):.2f} s)")


if __name__ == "__main__":
    main()
