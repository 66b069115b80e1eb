"""The planner beside published runs: each paper's own layout (its TP, CP, PP and DP), predicted memory per device
and MFU (HFU where the paper counts its recomputation's FLOPs), beside what the paper reported; then how long a
whole plan of the acceptance setting takes and where the paper's layout ranks in it.

    .venv/bin/python -m benchmarks.plan_published [--achievable 0.6] [--overlap 0.5]

Two rows per run: "best" lets the planner choose what the paper leaves open (ZeRO stage, remat, micro-batches M,
interleaved stages v); "as run" fixes the remat policy where the paper names it (Llama 3 §3.3.2: 8K sequences
"without activation checkpointing"; Megatron-LM §5.1: recomputation). Nothing here runs on devices.
"""

from __future__ import annotations

import argparse
import time

from pmap_core.concepts import planner
from pmap_core.concepts.planner import search


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--achievable", type=float, default=planner.Assumptions().achievable)
    parser.add_argument("--overlap", type=float, default=planner.Assumptions().overlap)
    args = parser.parse_args()
    assumptions = planner.Assumptions(achievable=args.achievable, overlap=args.overlap)
    print(f"assumptions: achievable {assumptions.achievable:g} of peak, overlap {assumptions.overlap:g}, "
          f"FlashAttention {assumptions.flash_attention}")
    print(f"{'run':22} {'variant':7} {'plan':58} {'GB':>6} {'pred':>6} {'paper':>6} {'gap':>6}  source")
    for run in planner.PUBLISHED.values():
        model, hardware = planner.MODELS[run.model], planner.HARDWARE[run.hardware]
        for as_run in (False, True):
            p = planner.evaluate_published(run, model, hardware, assumptions, as_run=as_run).prediction
            predicted = p.hfu if run.counts_recompute else p.mfu
            kind = "HFU" if run.counts_recompute else "MFU"
            print(f"{run.key:22} {'as run' if as_run else 'best':7} {p.layout.label():58} "
                  f"{p.memory.total / 1e9:6.1f} {predicted:6.1%} {run.utilisation:6.1%} "
                  f"{(predicted - run.utilisation) * 100:+5.1f}  {kind}; {run.source}{'' if p.fits else ' (no fit)'}")
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
    print(f"first: {first.layout.label()}: {first.memory.total / 1e9:.1f} GB, MFU {first.mfu:.1%}, "
          f"bound by {result.verdict.bound}")


if __name__ == "__main__":
    main()
