"""The α-β ring model of a collective, fitted to measured times.

A ring all-reduce of S bytes over D devices takes 2(D−1) steps, each paying a
per-hop latency α and moving S/D bytes over a link of bandwidth β:

    all-reduce:                   t ≈ 2(D−1)·α + 2(D−1)/D · S/β
    all-gather / reduce-scatter:  t ≈  (D−1)·α +  (D−1)/D · S/β   (hops and factors: `pmap_core.costs.ring`)

The fit chooses the (α, β) whose worst ratio max(predicted/measured,
measured/predicted) over all measured sizes is smallest — a minimax fit in log
space. Every size counts by its ratio (a 1 KiB and a 64 MiB message alike, a
model 2× too slow as bad as one 2× too fast), and the worst ratio it reaches is
how far the machine is from *any* α-β line: on a CPU, buffers that fit in the
cache move several times faster than those that do not, and no single β fits
both. For a bound c, |log(prediction / t)| ≤ c is t·e^−c ≤ hops·α + factor·S/β
≤ t·e^c, linear in (α, 1/β); so the smallest c is found by bisection, each
step asking whether that polygon of (α, 1/β) is non-empty.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

import numpy as np

from pmap_core.costs import ring
from pmap_core.validation import LabInputError

RATIO_FROM_BYTES = 64 * 1024  # the worst-ratio check covers sizes from here up


def hop_terms(op: str, devices: int) -> tuple[float, float]:
    """(latency hops, bandwidth factor) of `op` on a ring of `devices`: t = hops·α + factor·S/β."""
    return ring.hops(op, devices), ring.bytes_factor(op, devices)


def predict(op: str, devices: int, size_bytes: float, alpha_s: float, beta_bytes_per_s: float) -> float:
    """The model's time of `op`: t = hops·α + factor·S/β."""
    return ring.seconds(op, devices, size_bytes, alpha_s, beta_bytes_per_s)


def crossover_bytes(alpha_s: float, beta_bytes_per_s: float, devices: int) -> float:
    """The size S where the latency term equals the bandwidth term: S = D·α·β (every op above)."""
    return devices * alpha_s * beta_bytes_per_s


@dataclasses.dataclass(frozen=True)
class RingFit:
    """α (s per hop) and β (bytes/s per link) fitted to the points of one op (one D, or all D)."""

    op: str
    devices: tuple[int, ...]
    alpha_s: float
    beta_bytes_per_s: float
    r2: float  # of the measured seconds (linear scale)
    r2_log: float  # of log(seconds): how well the shape across sizes is matched
    worst_ratio: float  # max of predicted/measured and measured/predicted, sizes >= 64 KiB
    points: int

    def predict(self, devices: int, size_bytes: float) -> float:
        return predict(self.op, devices, size_bytes, self.alpha_s, self.beta_bytes_per_s)

    def crossover_bytes(self, devices: int) -> float:
        return crossover_bytes(self.alpha_s, self.beta_bytes_per_s, devices)

    def as_dict(self) -> dict[str, object]:
        return {**dataclasses.asdict(self), "devices": list(self.devices)}


def _corners(lines: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Every crossing of two lines a·q = b of the constraints a·q <= b (rows of `lines`, `bounds`)."""
    i, j = np.triu_indices(len(lines), k=1)
    pairs = np.stack([lines[i], lines[j]], axis=1)
    determinant = np.linalg.det(pairs)
    regular = np.abs(determinant) > 1e-12
    return np.linalg.solve(pairs[regular], np.stack([bounds[i], bounds[j]], axis=1)[regular][..., None])[..., 0]


def _feasible_point(design: np.ndarray, seconds: np.ndarray, c: float) -> np.ndarray | None:
    """A q >= 0 with t·e^−c <= design·q <= t·e^c for every row, or None.

    The region is a bounded convex polygon (every design entry is > 0), so it is
    non-empty exactly when one of its corners is in it; the mean of those corners
    lies inside too. At the optimal c the polygon often shrinks to a segment along
    α only (the worst points are bandwidth-bound): its middle, not an arbitrary end.
    """
    lines = np.vstack([design, -design, -np.eye(2)])
    bounds = np.concatenate([seconds * np.exp(c), -seconds * np.exp(-c), np.zeros(2)])
    corners = _corners(lines, bounds)
    inside = np.all(corners @ lines.T <= bounds + 1e-9 * np.abs(bounds).max(), axis=1)
    return corners[inside].mean(axis=0) if inside.any() else None


def _minimax_log_solve(design: np.ndarray, seconds: np.ndarray) -> np.ndarray:
    """(α, 1/β) >= 0 minimising max |log(design·p / seconds)|: bisection on that bound."""
    scale = design.max(axis=0)  # both columns of order 1, so one tolerance fits both
    a, t = design / scale, seconds / seconds.max()
    low, high = 0.0, 1.0
    while (best := _feasible_point(a, t, high)) is None:  # widen until some line fits within e^high
        low, high = high, 2 * high
    for _ in range(60):
        middle = (low + high) / 2
        point = _feasible_point(a, t, middle)
        if point is None:
            low = middle
        else:
            high, best = middle, point
    return np.maximum(best, 0.0) / scale * seconds.max()


def fit_ring(op: str, devices: Sequence[int], sizes: Sequence[float], seconds: Sequence[float]) -> RingFit:
    """Fit α and β of the ring model to measured `seconds` of `op` at (`devices`, `sizes`): least worst ratio."""
    d = np.asarray(devices, dtype=float)
    s = np.asarray(sizes, dtype=float)
    t = np.asarray(seconds, dtype=float)
    if not (len(d) == len(s) == len(t)) or len(t) < 2:
        raise LabInputError("too_few_points", "a fit needs at least 2 measurements, got {n}", n=len(t))
    if np.any(t <= 0) or np.any(d < 2):
        raise LabInputError("bad_points", "times must be positive and device counts at least 2")
    terms = np.array([hop_terms(op, int(n)) for n in d])
    design = np.column_stack([terms[:, 0], terms[:, 1] * s])
    alpha, inverse_beta = _minimax_log_solve(design, t)
    beta = 1.0 / inverse_beta if inverse_beta > 0 else float("inf")
    predicted = design @ np.array([alpha, inverse_beta])
    big = s >= RATIO_FROM_BYTES
    ratios = np.maximum(predicted / t, t / np.maximum(predicted, 1e-300))[big]
    return RingFit(
        op=op, devices=tuple(sorted({int(n) for n in d})), alpha_s=float(alpha), beta_bytes_per_s=float(beta),
        r2=_r2(t, predicted), r2_log=_r2(np.log(t), np.log(np.maximum(predicted, 1e-300))),
        worst_ratio=float(ratios.max()) if ratios.size else float("nan"), points=len(t),
    )


def _r2(measured: np.ndarray, predicted: np.ndarray) -> float:
    total = float(np.sum((measured - measured.mean()) ** 2))
    residual = float(np.sum((measured - predicted) ** 2))
    return 1.0 - residual / total if total > 0 else float("nan")


# (op, D) -> the fit of that op at that D; (op, None) -> the fit over all D.
Fits = dict[tuple[str, int | None], RingFit]


def fit_measurements(rows: Iterable[object]) -> Fits:
    """Fit every op per D, and per op over all D (key D = None), from rows with op/devices/bytes/seconds."""
    groups: dict[tuple[str, int | None], list] = {}
    for row in rows:
        groups.setdefault((row.op, row.devices), []).append(row)
        groups.setdefault((row.op, None), []).append(row)
    return {
        key: fit_ring(key[0], [r.devices for r in group], [r.bytes for r in group],
                      [r.seconds for r in group])
        for key, group in groups.items()
        if len(group) >= 2
    }

