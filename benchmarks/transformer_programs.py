"""Every program trains the transformer at its defaults to one device's loss: a table of the relative gaps.

    .venv/bin/python -m benchmarks.transformer_programs [--steps 300] [--devices 1 2 4 8]

Each row is what `python -m pmap_core train --model transformer --devices D` runs with one program's flags
(`--impl pmap|shard_map|jit`, `--strategy zero1|zero2|zero3`, `--mesh data=X,model=Y`, `--pipeline-stages P
--microbatches M`), at the transformer's default sizes, global batch and η, for `--steps` steps; each cell is
|final loss − one device's| / one device's (jit on one device), or why the split cannot run there. The default
η keeps the default 300 steps below the edge of stability; past it (from step 470 at these defaults) the training
amplifies the rounding differences between any two correct programs (`train.config.default_learning_rate`).
"""

from __future__ import annotations

import argparse
import dataclasses

import pmap_core  # noqa: F401 - fixes the device runtime before any JAX operation
from pmap_core.train import loop
from pmap_core.train.config import TrainConfig
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError


def programs(devices: int) -> dict[str, dict]:
    """One row per program: the TrainConfig changes its CLI flags make at D devices."""
    rows = {impl: dict(impl=impl) for impl in ("pmap", "shard_map", "jit")}
    rows |= {f"jit {s}": dict(impl="jit", strategy=s) for s in ("zero1", "zero2", "zero3")}
    for model in sorted({1, 2, devices} - {0}):
        if devices % model == 0:
            rows[f"mesh data={devices // model},model={model}"] = dict(impl="tensor", mesh_model=model)
    for stages in sorted({2, devices}):
        if stages > 1 and devices % stages == 0:
            rows[f"pipeline P={stages} M=4"] = dict(impl="pipeline", pipeline_stages=stages, microbatches=4)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=TrainConfig().steps)
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 2, 4, 8])
    args = parser.parse_args(argv)
    base = TrainConfig(model="transformer", steps=args.steps, chunk=args.steps)
    reference = loop.train(validate(dataclasses.replace(base, devices=1, impl="jit"))).final_loss
    print(f"one device (jit): final loss {reference:.7f} after {args.steps} steps")
    for devices in args.devices:
        for name, changes in programs(devices).items():
            try:
                config = validate(dataclasses.replace(base, devices=devices, **changes))
            except LabInputError as refused:
                print(f"D={devices} {name}: refused: {refused}")
                continue
            loss = loop.train(config).final_loss
            print(f"D={devices} {name}: {abs(loss - reference) / reference:.1e}", flush=True)


if __name__ == "__main__":
    main()
