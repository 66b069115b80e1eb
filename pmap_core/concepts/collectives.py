"""Collectives under pmap, run for real and checked against NumPy.

Every collective here takes one vector of n values per device (the input of
shape (D, n)) and returns each device's result. `reference(op, before)` says
what NumPy expects, from the same (D, n) input; both the lab and the tests use it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import jax
import numpy as np
from jax import lax

from pmap_core.runtime import DATA_AXIS
from pmap_core.validation import LabInputError, check_devices, check_int, check_seed

MAX_SIZE = 256  # values per device: enough to see, small enough to draw

# Ops whose per-device vector is cut into D chunks need n divisible by D; untiled psum_scatter
# needs more: its scattered dimension (here n) equal to D, and the lab runs it to show JAX's error when not.
OPS = (
    "pmean", "psum", "pmax", "pmin",
    "all_gather", "all_gather_tiled",
    "psum_scatter", "psum_scatter_tiled",
    "ppermute", "all_to_all",
)
CHUNKED_OPS = ("psum_scatter", "psum_scatter_tiled", "all_to_all")
NEEDS_N_EQUAL_D = ("psum_scatter",)


def ring_pairs(devices: int) -> list[tuple[int, int]]:
    """ppermute's (source, destination) pairs for a shift by one around the ring."""
    return [(d, (d + 1) % devices) for d in range(devices)]


def collective_fn(op: str, devices: int) -> Callable[[jax.Array], jax.Array]:
    """The function each device runs for `op`; x is that device's vector of n values."""
    if op == "pmean":
        return lambda x: lax.pmean(x, DATA_AXIS)
    if op == "psum":
        return lambda x: lax.psum(x, DATA_AXIS)
    if op == "pmax":
        return lambda x: lax.pmax(x, DATA_AXIS)
    if op == "pmin":
        return lambda x: lax.pmin(x, DATA_AXIS)
    if op == "all_gather":  # (n,) -> (D, n): a new leading axis, one row per device
        return lambda x: lax.all_gather(x, DATA_AXIS)
    if op == "all_gather_tiled":  # (n,) -> (D*n,): concatenated
        return lambda x: lax.all_gather(x, DATA_AXIS, tiled=True)
    if op == "psum_scatter":  # (n,) -> (): element d of the sum lands on device d; n must equal D
        return lambda x: lax.psum_scatter(x, DATA_AXIS)
    if op == "psum_scatter_tiled":  # (n,) -> (n/D,): chunk d of the sum lands on device d
        return lambda x: lax.psum_scatter(x, DATA_AXIS, tiled=True)
    if op == "ppermute":  # device d sends its vector to device d+1
        return lambda x: lax.ppermute(x, DATA_AXIS, ring_pairs(devices))
    if op == "all_to_all":  # chunk c of device d goes to device c, where it becomes chunk d
        return lambda x: lax.all_to_all(x, DATA_AXIS, split_axis=0, concat_axis=0, tiled=True)
    raise LabInputError("unknown_op", "unknown collective {op!r}; choose one of {options}",
                        op=op, options=", ".join(OPS))


@functools.lru_cache(maxsize=128)
def compiled_collective(op: str, devices: int):
    """One pmapped function per (op, D); pmap keeps the compiled code per input shape."""
    return jax.pmap(collective_fn(op, devices), axis_name=DATA_AXIS, devices=jax.devices()[:devices])


def reference(op: str, before: np.ndarray) -> np.ndarray:
    """What each device should hold after `op`, computed by NumPy from the (D, n) input."""
    d, n = before.shape
    x = before.astype(np.float64)
    if op in ("pmean", "psum", "pmax", "pmin"):
        reduce = {"pmean": np.mean, "psum": np.sum, "pmax": np.max, "pmin": np.min}[op]
        return np.broadcast_to(reduce(x, axis=0), (d, n))
    if op == "all_gather":
        return np.broadcast_to(x, (d, d, n))
    if op == "all_gather_tiled":
        return np.broadcast_to(x.ravel(), (d, d * n))
    if op == "psum_scatter":  # untiled: the scattered axis is removed, device d keeps element d
        return x.sum(axis=0)
    if op == "psum_scatter_tiled":
        return x.sum(axis=0).reshape(d, n // d)
    if op == "ppermute":
        return np.roll(x, 1, axis=0)
    if op == "all_to_all":
        return x.reshape(d, d, n // d).transpose(1, 0, 2).reshape(d, n)
    raise LabInputError("unknown_op", "unknown collective {op!r}; choose one of {options}",
                        op=op, options=", ".join(OPS))


@dataclasses.dataclass(frozen=True)
class CollectiveRun:
    op: str
    devices: int
    before: np.ndarray  # (D, n): each device's input
    after: np.ndarray  # (D, ...): each device's output
    expected: np.ndarray  # NumPy's answer, same shape as `after`
    max_abs_error: float
    ok: bool
    jax_error: str | None = None  # what JAX raised, for an input it refuses (untiled psum_scatter, n != D)

    @property
    def per_device_in(self) -> tuple[int, ...]:
        return tuple(self.before.shape[1:])

    @property
    def per_device_out(self) -> tuple[int, ...]:
        return tuple(self.after.shape[1:])


def check_op_inputs(op: str, devices: int, size: int) -> tuple[int, int]:
    if op not in OPS:
        raise LabInputError("unknown_op", "unknown collective {op!r}; choose one of {options}",
                            op=op, options=", ".join(OPS))
    devices = check_devices(devices)
    size = check_int("size", size, 1, MAX_SIZE)
    if op in CHUNKED_OPS and op not in NEEDS_N_EQUAL_D and size % devices:
        raise LabInputError(
            "size_not_divisible",
            "{op} cuts each device's {size} values into {devices} chunks, so the size must be a "
            "multiple of {devices}",
            op=op, size=size, devices=devices,
        )
    return devices, size


def default_size(op: str, devices: int, size: int = 8) -> int:
    """Values per device a reader starts from: `size`, or for an op that cuts them into D chunks the
    multiple of D nearest to it (9 on 3 devices), so that it runs. Untiled psum_scatter keeps `size`:
    its requirement n = D is shown with JAX's own error, not reshaped away."""
    if op in CHUNKED_OPS and op not in NEEDS_N_EQUAL_D:
        return max(devices, round(size / devices) * devices)
    return size


def device_data(devices: int, size: int, seed: int) -> np.ndarray:
    """Random inputs, one row per device, rounded so that the numbers read well."""
    rng = np.random.default_rng(seed)
    return np.round(rng.uniform(-5, 5, size=(devices, size)), 1).astype(np.float32)


def run_collective(op: str, devices: int, size: int, seed: int = 0) -> CollectiveRun:
    """Run `op` over D devices on random data and compare every device's result with NumPy."""
    devices, size = check_op_inputs(op, devices, size)
    seed = check_seed(seed)
    before = device_data(devices, size, seed)
    if op in NEEDS_N_EQUAL_D and size != devices:
        # Not reshaped away: run it as written and keep the error JAX raises for it.
        try:
            compiled_collective(op, devices)(before)
        except ValueError as error:
            return CollectiveRun(op, devices, before, np.empty((devices, 0)), np.empty((devices, 0)),
                                 float("inf"), False, jax_error=f"{type(error).__name__}: {str(error).splitlines()[0]}")
    after = np.asarray(compiled_collective(op, devices)(before))
    expected = reference(op, before)
    error = float(np.max(np.abs(after - expected))) if after.shape == expected.shape else float("inf")
    ok = after.shape == expected.shape and bool(np.allclose(after, expected, rtol=1e-5, atol=1e-4))
    return CollectiveRun(op, devices, before, after, expected, error, ok)
