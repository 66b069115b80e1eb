"""A run whose loss stops being a finite number: the steps were too large for the model.

The one-process loop watches each chunk's losses as it reads them; a group of processes
(`loading.train_per_host`) decides once, on the group's mean losses, so that every process stops at
the same step and none waits in a collective for one that stopped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pmap_core.train.config import TrainConfig, steadier_learning_rate
from pmap_core.validation import LabInputError


class Diverged(LabInputError):
    """The loss stopped being a finite number at `step` (1-based); `losses` are the finite ones before
    it; the message says which η to try instead."""

    def __init__(self, config: TrainConfig, step: int, losses: Sequence[float]):
        self.step, self.losses = step, tuple(losses)
        super().__init__("diverged", "training diverged at step {step} of {steps}: the loss stopped being a finite "
                         "number; reduce learning_rate ({learning_rate:g} now), e.g. to {suggested:g}",
                         step=step, steps=config.steps, learning_rate=config.learning_rate,
                         suggested=steadier_learning_rate(config))


def finite_prefix(losses: Sequence[float]) -> int:
    """How many of `losses`, from the first, are finite numbers."""
    return next((i for i, loss in enumerate(losses) if not math.isfinite(loss)), len(losses))


def check_finite(config: TrainConfig, losses: Sequence[float], done_before: int = 0) -> None:
    """Raise `Diverged` at the first loss that is not a finite number; `done_before` steps came earlier."""
    finite = finite_prefix(losses)
    if finite < len(losses):
        raise Diverged(config, done_before + finite + 1, losses[:finite])
