"""Input checks shared by every entry point, and the limits of a shared deployment.

Every check raises `LabInputError`: a `ValueError` with a stable `code` and the
values involved, so the app can say it in the reader's language while the CLI
prints the English `str()`.
"""

from __future__ import annotations

import math
from typing import Any

# Limits protect one server shared by a class. They are generous for learning
# and small enough that no single request can starve the others.
MAX_BATCH = 65_536
MAX_FEATURES = 4_096
MAX_STEPS = 5_000
MAX_ELEMENTS = 16_777_216  # 64 MiB of float32 in one array
MAX_SEED = 2**31 - 1  # what every random generator here accepts


class LabInputError(ValueError):
    """An input the lab cannot run. `code` names the problem; `params` hold its values."""

    def __init__(self, code: str, message: str, **params: Any):
        self.code = code
        self.params = params
        super().__init__(message.format(**params))


def check_int(name: str, value: Any, low: int, high: int) -> int:
    """`value` as an int within [low, high], or a LabInputError that says why not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
        isinstance(value, float) and not (math.isfinite(value) and value.is_integer())
    ):
        raise LabInputError("not_whole_number", "{name} must be a whole number, got {value!r}", name=name, value=value)
    value = int(value)
    if value < low or value > high:
        raise LabInputError(
            "out_of_range", "{name} must be between {low} and {high}, got {value}",
            name=name, value=value, low=low, high=high,
        )
    return value


def check_float(name: str, value: Any, low: float, high: float) -> float:
    """`value` as a finite float within [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise LabInputError("not_a_number", "{name} must be a finite number, got {value!r}", name=name, value=value)
    if value < low or value > high:
        raise LabInputError(
            "out_of_range", "{name} must be between {low} and {high}, got {value}",
            name=name, value=value, low=low, high=high,
        )
    return float(value)


def check_seed(seed: Any) -> int:
    """A seed for NumPy and JAX random generators: 0 <= seed <= MAX_SEED."""
    return check_int("seed", seed, 0, MAX_SEED)


def check_devices(devices: Any, available: int | None = None) -> int:
    """A device count the runtime can serve: 1 <= devices <= available."""
    if available is None:
        import jax

        available = jax.device_count()
    if isinstance(devices, int) and not isinstance(devices, bool) and devices > available:
        raise LabInputError(
            "too_many_devices", "asked for {devices} devices but only {available} are available",
            devices=devices, available=available,
        )
    return check_int("devices", devices, 1, available)


def check_elements(name: str, count: int, limit: int = MAX_ELEMENTS) -> int:
    """Refuse arrays past the memory budget before anything is allocated."""
    if count > limit:
        raise LabInputError(
            "too_large", "{name} would hold {count:,} values, over the limit of {limit:,}",
            name=name, count=count, limit=limit,
        )
    return count
