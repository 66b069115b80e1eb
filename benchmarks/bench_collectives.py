"""Full collective sweep on this machine: wall time, latency and busbw per op × D × size, α-β fit quality.

    .venv/bin/python -m benchmarks.bench_collectives            # 3 collectives, 1 KiB–64 MiB, D = 2, 4, 8
    .venv/bin/python -m benchmarks.bench_collectives --repeats 3

Prints the machine's load average before and after (the sweep shares the cores with
whatever else runs) and the worst predicted/measured ratio of the per-D fits for
S >= 64 KiB, per collective. "median µs" is the collective itself (the slope between
two loop lengths, see `pmap_core.commbench.measure`); "call µs" one dispatched call. To log the
same sweep to MLflow, use `python -m pmap_core bench collectives`.
"""

from __future__ import annotations

import argparse
import os
import time

from pmap_core import commbench, describe_runtime
from pmap_core.costs import fit as costfit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--devices", default="2,4,8")
    args = parser.parse_args()

    info = describe_runtime()
    print(f"runtime: jax {info.jax_version}, {info.backend}, {info.device_count} devices "
          f"(simulated: {info.simulated}), {info.physical_cores} physical cores")
    plan = commbench.plan_sweep(commbench.OPS, [int(d) for d in args.devices.split(",")],
                                commbench.FULL_SIZES, args.repeats)
    load_before = os.getloadavg()
    start = time.perf_counter()
    result = commbench.run_sweep(plan)
    wall = time.perf_counter() - start
    load_after = os.getloadavg()
    fits = costfit.fit_measurements(result.measurements)

    print(f"\n{'op':<13}{'D':>2}{'S bytes':>11}{'median µs':>12}{'min µs':>10}{'max µs':>10}"
          f"{'call µs':>10}{'algbw GB/s':>11}{'busbw GB/s':>11}{'model µs':>10}{'ratio':>7}")
    for m in result.measurements:
        model = fits[(m.op, m.devices)].predict(m.devices, m.bytes)
        print(f"{m.op:<13}{m.devices:>2}{m.bytes:>11}{m.seconds * 1e6:>12.1f}{m.seconds_min * 1e6:>10.1f}"
              f"{m.seconds_max * 1e6:>10.1f}{m.call_seconds * 1e6:>10.1f}{m.algbw / 1e9:>11.3f}"
              f"{m.busbw / 1e9:>11.3f}{model * 1e6:>10.1f}{model / m.seconds:>7.2f}")
    print("\nmemory copy (one device, y = x + 1):")
    for m in result.copies:
        print(f"  S = {m.bytes:>9} B: {m.seconds * 1e6:9.1f} µs, {m.algbw / 1e9:6.2f} GB/s")

    print(f"\n{'fit':<20}{'α µs':>8}{'β GB/s':>9}{'R²':>7}{'R² log':>8}{'worst≥64K':>10}{'S* KiB':>9}")
    for (op, d), fit in sorted(fits.items(), key=lambda kv: (kv[0][0], kv[0][1] or 99)):
        crossover = f"{fit.crossover_bytes(d) / 1024:9.0f}" if d else f"{'':>9}"
        print(f"{op + ' D=' + str(d or 'all'):<20}{fit.alpha_s * 1e6:>8.2f}{fit.beta_bytes_per_s / 1e9:>9.3f}"
              f"{fit.r2:>7.3f}{fit.r2_log:>8.3f}{fit.worst_ratio:>10.2f}{crossover}")
    print("\nworst predicted/measured ratio (per-D fits, S >= 64 KiB):")
    for op in plan.ops:
        per_d = {d: fit.worst_ratio for (o, d), fit in fits.items() if o == op and d is not None}
        print(f"  {op:<13}{max(per_d.values()):.2f}x  ("
              + ", ".join(f"D={d}: {ratio:.2f}" for d, ratio in sorted(per_d.items())) + ")")
    worst = max(fit.worst_ratio for (_, d), fit in fits.items() if d is not None)
    print(f"  all          {worst:.2f}x")
    print(f"copy ceiling: {result.copy_ceiling / 1e9:.2f} GB/s")
    print(f"wall time: {wall:.1f} s (estimated before running: <= {plan.estimated_s:.0f} s)")
    print(f"load average (1 min) before/after: {load_before[0]:.1f} / {load_after[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
