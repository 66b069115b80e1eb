"""Honest timing of JAX calls: compile apart, after block_until_ready, median of repeats."""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable
from typing import Any

import jax


@dataclasses.dataclass(frozen=True)
class Timing:
    """Seconds for one call. `first_call_s` is trace + compile + the first run."""

    first_call_s: float
    samples_s: tuple[float, ...]

    @property
    def median_s(self) -> float:
        return statistics.median(self.samples_s)

    @property
    def min_s(self) -> float:
        return min(self.samples_s)

    @property
    def max_s(self) -> float:
        return max(self.samples_s)

    @property
    def compile_s(self) -> float:
        """The first call's cost beyond a steady-state call."""
        return max(self.first_call_s - self.median_s, 0.0)


def time_call(fn: Callable[..., Any], *args: Any, repeats: int = 5, warmup: int = 1) -> Timing:
    """Time `fn(*args)` until its result is ready.

    The first call (tracing and compilation included) is timed on its own,
    then `warmup` untimed calls, then `repeats` timed calls.
    """
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    first = time.perf_counter() - start
    for _ in range(warmup):
        jax.block_until_ready(fn(*args))
    samples = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        samples.append(time.perf_counter() - start)
    return Timing(first, tuple(samples))
