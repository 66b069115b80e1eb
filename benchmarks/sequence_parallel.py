"""Sequence parallelism against tensor parallelism on a data × model mesh: the bytes each device sends a step and
the activations it keeps, for the transformer at its default sizes.

    .venv/bin/python -m benchmarks.sequence_parallel [--rows 128] [--data 2] [--model 2 4]

Each row compiles one value-and-gradient step (`concepts.activation_memory.split_step`) with `--rows` sequences on
each data group: tensor parallelism (off), sequence parallelism keeping each gathered input (keep), and
Megatron-LM's, which gathers it again in the backward pass (on). Bytes: ring bytes from the compiled HLO, by
collective; residuals: JAX's list, each counted by its shard on one device, beside one device's on the model axis
(t = 1) divided by t.
"""

from __future__ import annotations

import argparse

import pmap_core  # noqa: F401 - fixes the device runtime before any JAX operation
from pmap_core.concepts import sequence_parallel as seqpar
from pmap_core.train import transformer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=128, help="sequences on each data group (default: 128, "
                        "the default global batch of 256 over 2 data groups)")
    parser.add_argument("--data", type=int, default=2)
    parser.add_argument("--model", type=int, nargs="+", default=[2, 4])
    args = parser.parse_args()
    dims, layers = transformer.Dims(), 2
    whole = seqpar.split_step(dims, layers, args.rows, args.data, 1)
    print("data × model | split | sent per step (bytes) | ÷ TP's | by collective | residuals (bytes) | "
          "÷ t = 1's (1/t)")
    print(f"{args.data}×1 | off | {whole.comm_bytes:,.0f} | | {_kinds(whole)} | {whole.residual_bytes:,} | 1")
    for t in args.model:
        steps = {sp: seqpar.split_step(dims, layers, args.rows, args.data, t, sp) for sp in seqpar.SPLITS}
        for sp, step in steps.items():
            print(f"{args.data}×{t} | {sp} | {step.comm_bytes:,.0f} | {step.comm_bytes / steps['off'].comm_bytes:.4f} "
                  f"| {_kinds(step)} | {step.residual_bytes:,} | {step.residual_bytes / whole.residual_bytes:.4f} "
                  f"({1 / t:.4f})")
        extra = steps["on"].comm_bytes - steps["keep"].comm_bytes
        print(f"   on − keep = {extra:,.0f} bytes; the backward's second gathers by the formula: "
              f"{seqpar.regathered_bytes(dims, layers, args.rows, t):,.0f}")


def _kinds(step: seqpar.SplitStep) -> str:
    return ", ".join(f"{kind} {value:,.0f}" for kind, value in sorted(step.comm_by_kind.items()) if value)


if __name__ == "__main__":
    main()
