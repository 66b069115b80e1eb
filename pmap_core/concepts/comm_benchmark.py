"""What the fitted ring model means for training: the all-reduce's share of a data-parallel step.

The share is predicted from a psum fit (α, β) at S = the training model's gradient bytes, and
measured as the manual-parallelism lab measures it (`manual_parallelism.measure_step`: the step with its
gradient all-reduce against the same step without).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pmap_core.concepts import manual_parallelism
from pmap_core.costs.fit import RingFit
from pmap_core.train import models
from pmap_core.validation import LabInputError


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
    params = models.init_params("mlp", features, hidden, seed=0)
    count = sum(int(value.size) for value in params.values())
    return count, count * 4  # float32


def training_share(psum_fits: dict[int | None, RingFit], devices: Sequence[int],
                   batch: int = manual_parallelism.DEFAULT_BATCH, features: int = manual_parallelism.DEFAULT_FEATURES,
                   hidden: int = manual_parallelism.DEFAULT_HIDDEN, repeats: int = 5) -> tuple[TrainingShare, ...]:
    """Predict each D's gradient all-reduce from the fitted α, β; measure the step as the
    manual-parallelism lab does (`manual_parallelism.measure_step`) for the compute and the measured share.

    `psum_fits` maps D (or None: the fit over all D) to a psum `RingFit`.
    """
    count, size = training_model_size(features, hidden)
    shares = []
    for d in devices:
        fit = psum_fits.get(d) or psum_fits.get(None)
        if fit is None:
            raise LabInputError("no_psum_fit", "measure all-reduce (psum) first")
        row = manual_parallelism.measure_step(batch, features, hidden, d, repeats)
        shares.append(TrainingShare(d, count, size, fit.predict(d, size), row.comm_s,
                                    row.compute_s + row.dispatch_s, fit.alpha_s, fit.beta_bytes_per_s))
    return tuple(shares)
