"""Figures behind the practice labs, measured here: what the mistakes page and the interview show.

    .venv/bin/python -m benchmarks.bench_practice

Prints the time of y[0] on a pmap output against reading one shard, pmap(f) against pmap(jit(f)),
an unblocked call against a blocked one, and the strong-scaling speedup of the interview question.
"""

import pmap_core  # noqa: F401 - fixes the device runtime before JAX starts
from pmap_core import describe_runtime
from pmap_core.practice.pitfalls import runtime as rt
from pmap_core.practice.quiz import registry as quiz


def main() -> None:
    info = describe_runtime()
    print(f"runtime: JAX {info.jax_version}, {info.device_count} {info.backend} devices, "
          f"{info.physical_cores} physical cores, simulated={info.simulated}")
    index, shard = rt.index_output_mistake(), rt.index_output_fix()
    print(f"y[0] on a ({info.device_count}, 250000) pmap output: median {index['y0_median_s'] * 1e3:.3f} ms; "
          f"addressable_shards[0].data: median {shard['shard_median_s'] * 1e6:.2f} µs")
    composed = rt.pmap_of_jit_mistake()
    print(f"pmap(f): median {composed['pmap_f_median_s'] * 1e3:.3f} ms; pmap(jit(f)): median "
          f"{composed['pmap_jit_f_median_s'] * 1e3:.3f} ms; same compiled HLO: {composed['same_compiled_hlo']}")
    unblocked, blocked = rt.timing_mistake(), rt.timing_fix()
    print(f"matmul chain: first call unblocked {unblocked['first_call_unblocked_s'] * 1e3:.1f} ms, later call "
          f"unblocked {unblocked['later_call_unblocked_s'] * 1e3:.3f} ms; blocked median "
          f"{blocked['median_s'] * 1e3:.2f} ms, compile {blocked['compile_s'] * 1e3:.1f} ms")
    print(f"interview speedup ({info.device_count} devices vs 1, strong scaling): "
          f"{quiz.answer('measured_speedup'):.2f}x (ceiling {info.hardware_ceiling(info.device_count):.0f}x)")


if __name__ == "__main__":
    main()
