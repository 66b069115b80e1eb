"""Context parallelism's three schemes on data × seq meshes: the training loss beside one device's, the bytes each
device sends a step (compiled HLO) beside the formula's, the activations it keeps and the compiler-reported peak.

    .venv/bin/python -m benchmarks.context_parallel [--steps 20] [--batch 48] [--seq-len 48] [--layout contiguous]

Each row trains the transformer (`train.loop.train`, impl context, `--mesh data=X,seq=P --context …`) for `--steps`
SGD steps and reads its footprint: the loss gap is |final loss − one device's| / one device's; bytes are ring bytes
per step from the compiled HLO, the formula `costs.analytic.context_comm_terms` (every term: the scheme's collectives
and the gradient's all-reduce over data × seq); residuals are JAX's, each counted by its shard on one device; the
peak is `memory_analysis()`'s (arguments + outputs − aliases + temporaries), compiler-reported. Ulysses runs where
the seq axis divides the heads. Then each device's causal work (unmasked (query, key) pairs) for both layouts.
"""

from __future__ import annotations

import argparse
import dataclasses

import pmap_core  # noqa: F401 - fixes the device runtime before any JAX operation
from pmap_core.concepts import context as cp
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import train
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError

SHAPES = ((1, 2), (1, 3), (1, 4), (1, 8), (2, 2), (2, 4))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=48, help="global batch (divisible by every mesh's devices)")
    parser.add_argument("--seq-len", type=int, default=48, help="divisible by 2P for every P (zig-zag)")
    parser.add_argument("--layout", choices=cp.LAYOUTS, default="contiguous")
    args = parser.parse_args()
    base = TrainConfig(model="transformer", devices=1, global_batch=args.batch, steps=args.steps, chunk=args.steps,
                       seq_len=args.seq_len, impl="jit")
    reference = train(validate(base), measure_scaling=False)
    one = reference.footprint
    print(f"transformer d_model {base.d_model}, heads {base.heads}, seq_len {base.seq_len}, vocab {base.vocab}, "
          f"{base.layers} layers, batch {base.global_batch}, {base.steps} SGD steps, layout {args.layout}")
    print("scheme | data×seq | loss gap | sent per step (HLO) | formula | HLO ÷ formula | by collective | "
          "residuals (bytes) | peak (bytes)")
    print(f"one device | 1×1 | 0 | 0 | 0 | | | {one.residual_bytes_per_device:,} | {one.peak_bytes_per_device:,}")
    for scheme in cp.SCHEMES:
        for data, seq in SHAPES:
            config = dataclasses.replace(base, impl="context", devices=data * seq, mesh_seq=seq, context=scheme,
                                         context_layout=args.layout)
            try:
                run = train(validate(config), measure_scaling=False)
            except LabInputError as refused:
                print(f"{scheme} | {data}×{seq} | refused: {refused}")
                continue
            f = run.footprint
            gap = abs(run.final_loss - reference.final_loss) / reference.final_loss
            kinds = ", ".join(f"{kind} {value:,.0f}" for kind, value in sorted(f.comm_by_kind.items()))
            print(f"{scheme} | {data}×{seq} | {gap:.1e} | {f.comm_bytes_per_step:,.0f} | "
                  f"{f.model_comm_bytes_per_step:,.0f} | {f.comm_bytes_per_step / f.model_comm_bytes_per_step:.4f} | "
                  f"{kinds} | {f.residual_bytes_per_device:,} | {f.peak_bytes_per_device:,}")
    print("causal work per device (unmasked (query, key) pairs), seq_len", args.seq_len)
    for seq in sorted({seq for _, seq in SHAPES}):
        print(f"P = {seq}: contiguous {cp.work_per_device(args.seq_len, seq, 'contiguous')}, "
              f"zigzag {cp.work_per_device(args.seq_len, seq, 'zigzag')}")


if __name__ == "__main__":
    main()
