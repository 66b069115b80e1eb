"""The planner beside every published run it knows: each paper's own layout (its TP, CP, PP and DP, its kernels and
its remat policy where it says), predicted as it ran, in the paper's counting, beside what the paper reported; the
mean absolute error and the worst row; the fit of the two constants fitted to these rows; then a whole plan of
Llama 3 405B on 16,384 H100s: its first plan, where the paper's layout ranks, and what separates them.

    .venv/bin/python -m benchmarks.plan_published [--overlap 0.5] [--fit]

The rows (each checked against its table):
- Dubey et al. 2024, "The Llama 3 Herd of Models", arXiv 2407.21783, Table 4: three runs of Llama 3 405B on H100s,
  BF16 MFU (model FLOPs only: what the recomputation adds is not counted); 8K sequences "without activation
  checkpointing" (§3.3.2), the 128K row's policy unstated (the planner chooses it).
- Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", arXiv
  2104.04473, Table 1: all ten GPT runs on A100s (each states TP and PP; DP is the GPUs over their product), TFLOP/s
  per GPU counting the recomputation's FLOPs (§5.1: the count "assumes activation recomputation"), a hardware FLOPs
  utilisation (HFU); no FlashAttention, no sequence parallelism, no ZeRO in 2021, dropout on.

`--fit` searches each hardware's `matmul_share` (the share of peak a large product sustains) for the least mean
absolute error on that hardware's rows: the two fitted constants. Nothing here runs on devices.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from pmap_core.concepts import planner
from pmap_core.concepts.planner import search
from pmap_core.concepts.planner import view as pv
from pmap_core.concepts.planner.predict import predict

GRID = [round(0.40 + 0.01 * i, 2) for i in range(51)]  # 0.40 … 0.90


def fit(assumptions: planner.Assumptions) -> dict[str, tuple[float, float, int]]:
    """Each fitted hardware's matmul_share of least mean absolute error on its rows: (share, MAE, rows)."""
    found = {}
    for key, _ in pv.FITTED:
        best = None
        for share in GRID:
            hardware = {**planner.HARDWARE, key: dataclasses.replace(planner.HARDWARE[key], matmul_share=share)}
            rows = [r for r in pv.validate(assumptions, hardware) if r.run.hardware == key]
            error = pv.mean_absolute_error(tuple(rows))
            if best is None or error < best[1]:
                best = (share, error, len(rows))
        found[key] = best
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--overlap", type=float, default=planner.Assumptions().overlap)
    parser.add_argument("--fit", action="store_true", help="search the two fitted constants again")
    args = parser.parse_args()
    assumptions = planner.Assumptions(overlap=args.overlap)
    print(f"assumptions: compute by operation, overlap {assumptions.overlap:g} (the model axis none, ring attention's "
          f"K/V behind its attention); fitted: " + ", ".join(
              f"{key} {name} {getattr(planner.HARDWARE[key], name):g} on its "
              f"{sum(r.hardware == key for r in planner.PUBLISHED.values())} rows" for key, name in pv.FITTED))
    rows = pv.validate(assumptions)
    print(f"{'run':22} {'GPUs':>6} {'TP':>3} {'CP':>3} {'PP':>3} {'DP':>4}  {'as run (the planner fills the rest)':62} "
          f"{'count':5} {'paper':>6} {'pred':>6} {'error':>6}")
    for r in rows:
        run, p = r.run, r.prediction
        print(f"{run.key:22} {run.devices:>6} {run.model_axis:>3} {run.seq_axis:>3} {run.stage_axis:>3} "
              f"{run.data_axis:>4}  {p.layout.label():62} {r.counts.upper():5} {r.reported:6.1%} {r.predicted:6.1%} "
              f"{100 * r.error:+6.1f}")
    bad = pv.worst(rows)
    print(f"mean absolute error {100 * pv.mean_absolute_error(rows):.2f} points over {len(rows)} rows; worst "
          f"{bad.run.key} {100 * bad.error:+.1f} points")
    megatron = [r for r in rows if r.run.hardware == "a100"]
    print("Megatron-LM Table 1, by model size: reported " + " ".join(f"{r.reported:.0%}" for r in megatron)
          + "; predicted " + " ".join(f"{r.predicted:.1%}" for r in megatron))
    if args.fit:
        for key, (share, error, count) in fit(assumptions).items():
            print(f"fit: {key} matmul_share {share:g}: mean absolute error {100 * error:.2f} points on {count} rows")
    run = planner.PUBLISHED["llama3-405b-16k"]
    started = time.perf_counter()
    result = planner.plan(planner.MODELS[run.model], planner.HARDWARE[run.hardware], run.devices,
                          search.published_workload(run), assumptions)
    seconds = time.perf_counter() - started
    paper = search.published_layout(run)
    rank = next((i for i, p in enumerate(result.plans, 1)
                 if all(p.layout.size(a) == paper.size(a) for a in ("data", "stage", "expert", "seq", "model"))), None)
    first = result.plans[0].prediction
    print(f"\nplan of {run.devices} H100s, Llama 3 405B, 8,192-token sequences, 16M tokens a step: {seconds:.1f} s, "
          f"{len(result.plans)} layouts fit, {len(result.unfit)} do not; the paper's layout ranks {rank}")
    print(f"first: {first.layout.label()}: {first.memory.total / 1e9:.1f} GB, MFU {first.mfu:.1%}")
    gap = pv.published_gap(result, run)
    if gap:
        print(f"it beats the paper's layout as run ({gap.paper.layout.label()}, MFU {gap.paper.mfu:.1%}) by "
              f"{100 * gap.points:.1f} points, most by {gap.term}: {gap.first_s:.3g} s against {gap.paper_s:.3g} s")
    if first.layout.seq > 1:
        contiguous = predict(result.model, dataclasses.replace(first.layout, context="contiguous"),
                                             result.workload, result.hardware, assumptions)
        again = pv.separating(contiguous, pv.published_gap(result, run).paper, run, assumptions.overlap)
        print(f"the same plan with the contiguous layout (its causal imbalance): MFU {contiguous.mfu:.1%}, over the "
              f"paper's most by {again.term}: {again.first_s:.3g} s against {again.paper_s:.3g} s")


if __name__ == "__main__":
    main()
