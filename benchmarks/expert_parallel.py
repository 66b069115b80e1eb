"""Expert parallelism on data × expert meshes: the training loss beside one device's, the bytes each device sends a
step (compiled HLO) beside the formula's, and the dropped fraction per capacity factor, counted and predicted.

    .venv/bin/python -m benchmarks.expert_parallel [--steps 20] [--batch 64] [--experts 8] [--top-k 2]

Each row of the first table trains the transformer's mixture of experts (`train.loop.train`, impl expert, `--mesh
data=X,expert=Y`) at capacity factor 4 (C = T: no choice can be dropped) for `--steps` SGD steps: the loss gap is
|final loss − one device's| / one device's (one device: the same program on a 1×1 mesh, every expert on it, the same
groups); bytes are ring bytes per step from the compiled HLO beside `costs.analytic.expert_comm_terms` (the
all-to-alls, and the gradients' all-reduces over data × expert and over data), the all-to-alls alone beside their
formula. The second table routes the seed's batch at the initial parameters and after the same training on 2×4, for
c in 0.5, 1, 2, 4: the dropped fraction counted from the dispatch, predicted from each sequence's load and C, from
the batch's load alone, and a perfectly balanced router's (`concepts.experts.balanced_dropped`). The third: one array
resharded by an all-to-all and gathered by an all-gather, each device's bytes from the HLO.
"""

from __future__ import annotations

import argparse
import dataclasses

import pmap_core  # noqa: F401 - fixes the device runtime before any JAX operation
from pmap_core.concepts import experts as ce
from pmap_core.train import transformer
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import train
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError

SHAPES = ((1, 2), (2, 2), (1, 4), (2, 4), (1, 8))
FACTORS = (0.5, 1.0, 2.0, 4.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64, help="global batch (divisible by every mesh's devices)")
    parser.add_argument("--experts", type=int, default=8)
    parser.add_argument("--top-k", type=int, default=2)
    args = parser.parse_args()
    base = TrainConfig(model="transformer", devices=1, global_batch=args.batch, steps=args.steps, chunk=args.steps,
                       impl="expert", experts=args.experts, top_k=args.top_k, capacity_factor=4.0)
    reference = train(validate(base), measure_scaling=False)
    print(f"transformer d_model {base.d_model}, heads {base.heads}, seq_len {base.seq_len}, vocab {base.vocab}, "
          f"{base.layers} layers, {base.experts} experts, top-{base.top_k}, capacity factor 4, batch "
          f"{base.global_batch}, {base.steps} SGD steps; one device's final loss {reference.final_loss:.6f}")
    print("data×expert | loss gap | sent per step (HLO) | formula | HLO ÷ formula | all-to-all (HLO) | "
          "all-to-all (formula) | all-reduce (HLO) | param bytes per device")
    for data, expert in SHAPES:
        config = dataclasses.replace(base, devices=data * expert, mesh_expert=expert)
        try:
            run = train(validate(config), measure_scaling=False)
        except LabInputError as refused:
            print(f"{data}×{expert} | refused: {refused}")
            continue
        f = run.footprint
        gap = abs(run.final_loss - reference.final_loss) / reference.final_loss
        formula = ce.formula_bytes(config.dims, config.layers, config.global_batch, data, expert)
        print(f"{data}×{expert} | {gap:.1e} | {f.comm_bytes_per_step:,.0f} | {f.model_comm_bytes_per_step:,.0f} | "
              f"{f.comm_bytes_per_step / f.model_comm_bytes_per_step:.4f} | {f.comm_by_kind.get('all-to-all', 0):,.0f} "
              f"| {formula.get('all-to-all', 0):,.0f} | {f.comm_by_kind.get('all-reduce', 0):,.0f} | "
              f"{f.param_bytes_per_device:,}")

    dims = transformer.Dims(experts=args.experts, top_k=args.top_k)
    trained = train(validate(dataclasses.replace(base, devices=8, mesh_expert=4, capacity_factor=0.5)),
                    measure_scaling=False)
    for label, params in (("initial parameters", None), (f"after {args.steps} steps at c = 0.5, 2×4", trained.params)):
        print(f"dropped fraction of the {args.batch} sequences' choices, {label}")
        print("c | C | counted | predicted (each sequence's load) | predicted (the batch's load) | balanced router")
        for row in ce.dropped_by_capacity(dims, base.layers, args.batch, FACTORS, params=params):
            print(f"{row.capacity_factor:g} | {row.capacity} | {row.measured:.4f} | {row.predicted:.4f} | "
                  f"{row.from_mean_load:.4f} | {row.balanced:.4f}")

    print("one float32 array split over D devices: bytes each device sends (HLO; formula)")
    print("D | array bytes | all-to-all | all-gather | ratio")
    for devices in (2, 4, 8):
        found = ce.all_to_all_vs_all_gather(1 << 16, devices)
        print(f"{devices} | {found.array_bytes:,} | {found.all_to_all_hlo:,.0f} ({found.all_to_all_formula:,.0f}) | "
              f"{found.all_gather_hlo:,.0f} ({found.all_gather_formula:,.0f}) | {found.ratio:.3f}")


if __name__ == "__main__":
    main()
