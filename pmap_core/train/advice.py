"""Which implementation of the training step to use at each D, from measured steady throughputs.

Pure arithmetic on figures someone measured (`benchmarks/bench_impls.py`, a sweep with every
implementation, the runs on the experiments page): at each D the fastest implementation, and whether
the training lab's default (`TrainConfig().impl`, "pmap") is within `TOLERANCE` (10%) of it, that is
default ≥ (1 − 0.10) × fastest. When it is not, the fastest is the one to recommend, and the advice
carries the figures that say why.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping

from pmap_core.train.config import TrainConfig

__all__ = ["DEFAULT_IMPL", "TOLERANCE", "Advice", "advise", "advise_at", "from_points"]

DEFAULT_IMPL = TrainConfig().impl
TOLERANCE = 0.10  # the default may be this much slower than the fastest and still be kept


@dataclasses.dataclass(frozen=True)
class Advice:
    """The verdict at one device count D."""

    devices: int
    fastest: str
    fastest_throughput: float          # steady samples/s of `fastest`
    default: str
    default_throughput: float | None   # None when the default was not measured at this D
    throughputs: Mapping[str, float]   # every implementation measured at this D

    @property
    def default_share(self) -> float | None:
        """default / fastest (1.0 when the default is the fastest); None when not measured."""
        if self.default_throughput is None:
            return None
        return self.default_throughput / self.fastest_throughput

    @property
    def shortfall(self) -> float | None:
        """How much slower the default is than the fastest, as a fraction (0.0 when it is the fastest)."""
        share = self.default_share
        return None if share is None else 1.0 - share

    @property
    def default_ok(self) -> bool:
        """The default is within TOLERANCE of the fastest (an unmeasured default is not)."""
        share = self.default_share
        return share is not None and share >= 1.0 - TOLERANCE - 1e-12

    @property
    def recommended(self) -> str:
        """The default when it is within TOLERANCE of the fastest, else the fastest."""
        return self.default if self.default_ok else self.fastest


def advise_at(devices: int, throughputs: Mapping[str, float], default: str = DEFAULT_IMPL) -> Advice:
    """The advice at one D from {impl: steady samples/s}; NaN, infinite and non-positive figures are
    ignored (a run that measured nothing). Ties go to the default, then to the order given."""
    measured = {impl: float(value) for impl, value in throughputs.items()
                if value is not None and math.isfinite(float(value)) and float(value) > 0}
    if not measured:
        raise ValueError(f"no positive throughput measured at D = {devices}")
    best = max(measured.values())
    fastest = default if measured.get(default) == best else next(i for i, v in measured.items() if v == best)
    return Advice(devices=int(devices), fastest=fastest, fastest_throughput=best, default=default,
                  default_throughput=measured.get(default), throughputs=measured)


def advise(throughputs: Mapping[str, Mapping[int, float]], default: str = DEFAULT_IMPL) -> list[Advice]:
    """One Advice per D, smallest D first, from {impl: {D: steady samples/s}}. A D where nothing was
    measured is left out."""
    by_devices: dict[int, dict[str, float]] = {}
    for impl, per_d in throughputs.items():
        for devices, value in per_d.items():
            by_devices.setdefault(int(devices), {})[impl] = value
    advice = []
    for devices in sorted(by_devices):
        try:
            advice.append(advise_at(devices, by_devices[devices], default))
        except ValueError:
            continue
    return advice


def from_points(points: Iterable) -> dict[str, dict[int, float]]:
    """{impl: {D: steady samples/s}} from a sweep's points (`training.SweepPoint`s, read by duck typing:
    `p.result.config.impl`, `p.devices`, `p.result.steady_throughput`), ready for `advise`."""
    table: dict[str, dict[int, float]] = {}
    for point in points:
        table.setdefault(point.result.config.impl, {})[int(point.devices)] = float(point.result.steady_throughput)
    return table
