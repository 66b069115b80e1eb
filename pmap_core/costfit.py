"""The α-β ring model of a collective, fitted to measured times.

A ring all-reduce of S bytes over D devices takes 2(D−1) steps, each paying a
per-hop latency α and moving S/D bytes over a link of bandwidth β:

    all-reduce:                   t ≈ 2(D−1)·α + 2(D−1)/D · S/β
    all-gather / reduce-scatter:  t ≈  (D−1)·α +  (D−1)/D · S/β

The fit minimises Σ log²(predicted / measured): every size counts by its ratio,
so a 1 KiB and a 64 MiB message count alike, and a model 2× too slow costs as
much as one 2× too fast (the quality check, `worst_ratio`, is such a ratio).
Both terms are linear in (α, 1/β): the start is one `numpy.linalg.lstsq` with
each row divided by its measured t (the first-order form of the log error),
then a few Gauss-Newton steps on the log error itself. The linear start alone
favours the fast points: a measured t that is 3× the model counts as an error
of 2/3, one that is 3× below it as 2.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

import numpy as np

from pmap_core.validation import LabInputError

RATIO_FROM_BYTES = 64 * 1024  # the worst-ratio check covers sizes from here up


def hop_terms(op: str, devices: int) -> tuple[float, float]:
    """(latency hops, bandwidth factor) of `op` on a ring of `devices`: t = hops·α + factor·S/β."""
    if op == "psum":
        return 2.0 * (devices - 1), 2.0 * (devices - 1) / devices
    if op in ("all_gather", "psum_scatter"):
        return float(devices - 1), (devices - 1) / devices
    raise LabInputError("unknown_op", "the ring model has no formula for {op!r}", op=op)


def predict(op: str, devices: int, size_bytes: float, alpha_s: float, beta_bytes_per_s: float) -> float:
    hops, factor = hop_terms(op, devices)
    return hops * alpha_s + factor * size_bytes / beta_bytes_per_s


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


def _linear_solve(design: np.ndarray, seconds: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted least squares for (α, 1/β), both kept >= 0.

    If the free solution makes one of them negative (noise can), that one is
    fixed at 0 and the other refitted alone.
    """
    a, t = design * weights[:, None], seconds * weights
    solution = np.linalg.lstsq(a, t, rcond=None)[0]
    if np.all(solution >= 0):
        return solution
    best, best_error = np.zeros(2), np.inf
    for keep in (0, 1):
        column = a[:, keep]
        value = max(float(column @ t / (column @ column)), 0.0)
        candidate = np.zeros(2)
        candidate[keep] = value
        error = float(np.sum((a @ candidate - t) ** 2))
        if error < best_error:
            best, best_error = candidate, error
    return best


def _log_error(design: np.ndarray, seconds: np.ndarray, p: np.ndarray) -> float:
    predicted = design @ p
    return float(np.sum(np.log(predicted / seconds) ** 2)) if np.all(predicted > 0) else np.inf


def _log_solve(design: np.ndarray, seconds: np.ndarray, steps: int = 50) -> np.ndarray:
    """(α, 1/β) >= 0 minimising Σ log²(design·p / seconds): Gauss-Newton from the 1/t-weighted solution.

    Each step is halved until the error falls and both values stay >= 0; it stops
    when no step helps.
    """
    p = _linear_solve(design, seconds, 1.0 / seconds)
    error = _log_error(design, seconds, p)
    for _ in range(steps):
        predicted = design @ p
        jacobian = design / predicted[:, None]  # d log(prediction) / dp
        step = np.linalg.lstsq(jacobian, -np.log(predicted / seconds), rcond=None)[0]
        for scale in 0.5 ** np.arange(20):
            candidate = np.maximum(p + scale * step, 0.0)
            candidate_error = _log_error(design, seconds, candidate)
            if candidate_error < error:
                break
        else:
            return p
        converged = error - candidate_error < 1e-12 * max(error, 1e-300)
        p, error = candidate, candidate_error
        if converged:
            break
    return p


def fit_ring(op: str, devices: Sequence[int], sizes: Sequence[float], seconds: Sequence[float]) -> RingFit:
    """Fit α and β of the ring model to measured `seconds` of `op` at (`devices`, `sizes`): least log² ratio."""
    d = np.asarray(devices, dtype=float)
    s = np.asarray(sizes, dtype=float)
    t = np.asarray(seconds, dtype=float)
    if not (len(d) == len(s) == len(t)) or len(t) < 2:
        raise LabInputError("too_few_points", "a fit needs at least 2 measurements, got {n}", n=len(t))
    if np.any(t <= 0) or np.any(d < 2):
        raise LabInputError("bad_points", "times must be positive and device counts at least 2")
    terms = np.array([hop_terms(op, int(n)) for n in d])
    design = np.column_stack([terms[:, 0], terms[:, 1] * s])
    alpha, inverse_beta = _log_solve(design, t)
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


def fit_measurements(rows: Iterable[object], seconds_field: str = "seconds") -> dict[tuple[str, int | None], RingFit]:
    """Fit every op per D, and per op over all D (key D = None), from rows with op/devices/bytes."""
    groups: dict[tuple[str, int | None], list] = {}
    for row in rows:
        groups.setdefault((row.op, row.devices), []).append(row)
        groups.setdefault((row.op, None), []).append(row)
    return {
        key: fit_ring(key[0], [r.devices for r in group], [r.bytes for r in group],
                      [getattr(r, seconds_field) for r in group])
        for key, group in groups.items()
        if len(group) >= 2
    }


# --- what this means for training ------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TrainingShare:
    """A data-parallel step on D devices: the all-reduce's share, predicted by the fit and measured."""

    devices: int
    params: int
    gradient_bytes: int
    predicted_comm_s: float  # the psum fit at S = gradient bytes
    measured_comm_s: float  # the manual-parallelism lab: step with pmean − step without
    measured_rest_s: float  # compute + dispatch of that step
    alpha_s: float
    beta_bytes_per_s: float

    @property
    def predicted_share(self) -> float:
        return self.predicted_comm_s / (self.measured_rest_s + self.predicted_comm_s)

    @property
    def measured_share(self) -> float:
        return self.measured_comm_s / (self.measured_rest_s + self.measured_comm_s)


def training_model_size(features: int, hidden: int) -> tuple[int, int]:
    """(parameters, gradient bytes) of the training lab's MLP: what each step all-reduces."""
    from pmap_core import models

    params = models.init_params("mlp", features, hidden, seed=0)
    count = sum(int(value.size) for value in params.values())
    return count, count * 4  # float32


def training_share(psum_fits: dict[int | None, RingFit], devices: Sequence[int], batch: int = 840, features: int = 64,
                   hidden: int = 64, repeats: int = 5) -> tuple[TrainingShare, ...]:
    """Predict each D's gradient all-reduce from the fitted α, β; measure the step as the
    manual-parallelism lab does (`sync_cost.measure_step`) for the compute and the measured share.

    `psum_fits` maps D (or None: the fit over all D) to a psum `RingFit`.
    """
    from pmap_core import sync_cost

    count, size = training_model_size(features, hidden)
    shares = []
    for d in devices:
        fit = psum_fits.get(d) or psum_fits.get(None)
        if fit is None:
            raise LabInputError("no_psum_fit", "measure all-reduce (psum) first")
        row = sync_cost.measure_step(batch, features, hidden, d, repeats)
        shares.append(TrainingShare(d, count, size, fit.predict(d, size), row.comm_s,
                                    row.compute_s + row.dispatch_s, fit.alpha_s, fit.beta_bytes_per_s))
    return tuple(shares)
