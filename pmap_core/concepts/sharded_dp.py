"""Every ZeRO strategy at every D of a ladder, measured beside the model: what the sharded data
parallel lab draws. Pure: runs `train.loop.train` and turns its footprints into tidy rows.

Each point is a short real run (`MEASURE_STEPS` steps) of the user's model and settings with one
strategy on D devices: bytes held per device come from its arrays' shards, bytes sent per step from
its compiled HLO (`train.footprint.Footprint`); the model from `costs.analytic.zero_*`, the one home of the
formulas.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from pmap_core.costs import analytic
from pmap_core.train import loop
from pmap_core.train.config import STRATEGIES, TrainConfig, validate
from pmap_core.train.footprint import Footprint

MEASURE_STEPS = 2  # bytes do not depend on how long a run trains: a short run measures them all
KINDS = ("params", "grads", "optimizer")


def ladder_configs(config: TrainConfig, device_counts: Sequence[int]) -> list[TrainConfig]:
    """One short run per strategy and D (same global batch: strong), keeping the D whose
    D × accumulation steps divides the batch."""
    config = validate(config)  # the ladder below divides by its numbers
    steps = min(MEASURE_STEPS, config.steps)
    return [validate(dataclasses.replace(config, strategy=s, devices=d, steps=steps, chunk=steps, impl="jit"))
            for s in STRATEGIES for d in sorted(set(device_counts))
            if config.global_batch % (d * config.accum_steps) == 0]


def measure_all(config: TrainConfig, device_counts: Sequence[int],
                on_run: Callable[[int, int], None] | None = None) -> tuple[Footprint, ...]:
    """The footprint of every strategy at every D; `on_run(done, total)` after each run."""
    runs = ladder_configs(config, device_counts)
    footprints = []
    for index, run in enumerate(runs):
        footprints.append(loop.train(run, measure_scaling=False).footprint)
        if on_run is not None:
            on_run(index + 1, len(runs))
    return tuple(footprints)


def held(footprint: Footprint) -> dict[str, float]:
    """Measured bytes per device by kind."""
    return {"params": footprint.param_bytes_per_device, "grads": footprint.grad_bytes_per_device,
            "optimizer": footprint.opt_bytes_per_device}


def modelled(footprint: Footprint) -> dict[str, float]:
    m = footprint.model_memory
    return {"params": m.params, "grads": m.grads, "optimizer": m.optimizer}


def memory_rows(footprints: Sequence[Footprint]) -> list[dict]:
    """One row per strategy, D and kind: bytes measured and modelled."""
    return [{"strategy": f.strategy, "D": f.devices, "kind": kind, "measured": float(held(f)[kind]),
             "model": float(modelled(f)[kind])} for f in footprints for kind in KINDS]


def comm_rows(footprints: Sequence[Footprint]) -> list[dict]:
    """One row per strategy and D: bytes each device sends per step, measured (compiled HLO) and modelled."""
    return [{"strategy": f.strategy, "D": f.devices, "measured": float(f.comm_bytes_per_step),
             "model": float(f.model_comm_bytes_per_step)} for f in footprints]


def total_bytes(footprint: Footprint) -> float:
    return float(sum(held(footprint).values()))


@dataclasses.dataclass(frozen=True)
class Fit:
    """The largest model whose states fit a per-device budget, for one strategy at one D."""

    strategy: str
    devices: int
    measured_bytes_per_param: float  # the run's bytes held per device / Ψ
    model_bytes_per_param: float     # analytic.zero_memory_per_device(1, D, …).total
    largest_measured: float          # budget / measured bytes per parameter
    largest_model: float             # analytic.largest_model_params

    @property
    def ratio(self) -> float:
        return self.largest_measured / self.largest_model


def largest_models(footprints: Sequence[Footprint], budget_bytes: float, devices: int,
                   optimizer: str, precision: str = "float32") -> list[Fit]:
    """Per strategy, at `devices` when it was measured, else at the largest D measured."""
    measured = sorted({f.devices for f in footprints})
    d = devices if devices in measured else measured[-1]
    fits = []
    for f in footprints:
        if f.devices != d:
            continue
        b = analytic.state_bytes(precision, optimizer)
        model_per_param = analytic.zero_memory_per_device(1.0, d, f.strategy, b.params, b.grads, b.optimizer).total
        per_param = total_bytes(f) / f.param_count
        fits.append(Fit(f.strategy, d, per_param, model_per_param, budget_bytes / per_param,
                        analytic.largest_model_params(budget_bytes, d, f.strategy, b.params, b.grads, b.optimizer)))
    return fits


def worst_ratio(footprints: Sequence[Footprint]) -> tuple[Footprint, str, float] | None:
    """The point, figure and measured/model ratio farthest from 1 (None when the model is zero everywhere)."""
    found = [(f, name, r) for f in footprints for name, r in f.ratios().items() if r is not None]
    return max(found, key=lambda item: abs(item[2] - 1.0), default=None)
