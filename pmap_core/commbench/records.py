"""What a sweep of collectives produced, and how it is written down: JSON rows and one MLflow run."""

from __future__ import annotations

import dataclasses
import math

from pmap_core.commbench.plan import SweepPlan, busbw_factor
from pmap_core.costs.fit import Fits
from pmap_core.tracking import RunTracker


@dataclasses.dataclass(frozen=True)
class Measurement:
    """One op × D × size. `seconds*` is one collective (the loop's slope); `call*` one dispatched call."""

    op: str
    devices: int
    bytes: int
    chain: tuple[int, int]  # (k_short, k_long) of the slope
    seconds: float  # median
    seconds_min: float
    seconds_max: float
    call_seconds: float  # median
    call_seconds_min: float
    call_seconds_max: float
    compile_s: float

    @property
    def algbw(self) -> float:
        return self.bytes / self.seconds

    @property
    def busbw(self) -> float:
        return self.algbw * busbw_factor(self.op, self.devices)

    def as_dict(self) -> dict[str, float | int | str]:
        return {**dataclasses.asdict(self), "algbw": self.algbw, "busbw": self.busbw}


@dataclasses.dataclass(frozen=True)
class SweepResult:
    plan: SweepPlan
    measurements: tuple[Measurement, ...]  # collectives, in plan order
    copies: tuple[Measurement, ...]  # the memory-copy reference, one per size (devices = 1)
    wall_s: float

    @property
    def copy_ceiling(self) -> float:
        """Best memory-copy bandwidth seen (bytes/s)."""
        return max(m.algbw for m in self.copies)


def result_rows(result: SweepResult, fits: Fits) -> list[dict[str, object]]:
    """One dict per op × D × size, with the (op, D) fit's α, β and its prediction."""
    rows = []
    for m in result.measurements:
        fit = fits.get((m.op, m.devices))
        rows.append({
            **m.as_dict(),
            "alpha": fit.alpha_s if fit else None,
            "beta": fit.beta_bytes_per_s if fit else None,
            "predicted_seconds": fit.predict(m.devices, m.bytes) if fit else None,
        })
    return rows


def log_sweep(tracker: RunTracker, result: SweepResult, fits: Fits, tags: dict[str, str]) -> str:
    """One MLflow run per sweep: params, tags (kind=bench), metrics per size (step = bytes), α and β.

    Metric names: `<op>.D<d>.seconds|call_seconds|busbw|algbw`, `copy.bandwidth`,
    and per fit `<op>.D<d|all>.alpha_s|beta_Bps|r2|worst_ratio`.
    """
    plan = result.plan
    params = {"ops": ",".join(plan.ops), "devices": ",".join(map(str, plan.devices)),
              "sizes": ",".join(map(str, plan.sizes)), "repeats": plan.repeats,
              "seconds_timed": "slope of the chained loop: (t(k_long) - t(k_short)) / (k_long - k_short), "
                               "median of repeats"}
    with tracker.run(f"collectives {','.join(plan.ops)} D={','.join(map(str, plan.devices))}",
                     params, {**tags, "kind": "bench"}) as run_id:
        for size in plan.sizes:
            metrics = {f"{m.op}.D{m.devices}.{name}": value
                       for m in result.measurements if m.bytes == size
                       for name, value in (("seconds", m.seconds), ("call_seconds", m.call_seconds),
                                           ("busbw", m.busbw), ("algbw", m.algbw))}
            for copy in result.copies:
                if copy.bytes == size:
                    metrics["copy.bandwidth"] = copy.algbw
            tracker.log_metrics(run_id, metrics, step=size)
        summary = {"wall_s": result.wall_s, "copy.ceiling": result.copy_ceiling}
        for (op, devices), fit in fits.items():
            prefix = f"{op}.D{devices if devices is not None else 'all'}"
            summary.update({f"{prefix}.alpha_s": fit.alpha_s, f"{prefix}.beta_Bps": fit.beta_bytes_per_s,
                            f"{prefix}.r2": fit.r2, f"{prefix}.worst_ratio": fit.worst_ratio})
        tracker.log_metrics(run_id, {key: value for key, value in summary.items() if math.isfinite(value)})
    return run_id
