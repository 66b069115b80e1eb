"""pmap(f) against pmap(jit(f)) and jit(shard_map(f)): same compiled program? same speed?

    .venv/bin/python -m benchmarks.bench_composition
    .venv/bin/python -m benchmarks.bench_composition --devices 1 8 --rows 64 256 --repeats 20 --json

For each (D, rows per device): whether the normalised compiled HLO of pmap(f) and
pmap(jit(f)) is the same, and the median call time of the three forms (compile
excluded, timed after block_until_ready, alternating rounds).
"""

from __future__ import annotations

import argparse
import json

import pmap_core  # noqa: F401 - fixes the device runtime before JAX starts
from pmap_core.concepts import jit_composition


def measure(devices: int, rows: int, repeats: int) -> dict:
    hlo = jit_composition.compare_compiled(devices, rows)
    speed = jit_composition.compare_speed(devices, rows, repeats)
    return {
        "devices": devices, "rows": rows, "same_hlo": hlo.identical,
        "pmap_ms": speed.plain.median_s * 1e3, "pmap_jit_ms": speed.jitted.median_s * 1e3,
        "shard_map_ms": speed.shard_map.median_s * 1e3, "jit_over_plain": speed.jitted_over_plain,
        "first_call_ms": speed.plain.first_call_s * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--rows", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [measure(d, r, args.repeats) for d in args.devices for r in args.rows]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'D':>3} {'rows':>5} {'same HLO':>8} {'pmap(f) ms':>11} {'pmap(jit) ms':>13} "
          f"{'shard_map ms':>13} {'jit/plain':>9}")
    for r in results:
        print(f"{r['devices']:>3} {r['rows']:>5} {r['same_hlo']!s:>8} {r['pmap_ms']:>11.3f} "
              f"{r['pmap_jit_ms']:>13.3f} {r['shard_map_ms']:>13.3f} {r['jit_over_plain']:>9.2f}")


if __name__ == "__main__":
    main()
