"""Two levels of one machine's mesh: α and β of an all-reduce between the devices of one process, and between
processes (gloo over TCP).

Runs in every process of a `jax.distributed` group of P ≥ 2 processes, each with L ≥ 2 devices. Level
`process`: the L devices of process 0, while the others wait (each level keeps as many cores busy as it has
devices). Level `network`: one device of each process, P in all, so every byte crosses from one process to
another. Each point is one collective, timed as the communication benchmark times it (the slope of a chained
loop between two loop lengths, `measure.time_slope`), and the ring model t = hops·α + factor·S/β is fitted to
each level (`costs.fit.fit_ring`). Every process runs the same sizes in the same order: the network level's
programs are collectives of the whole group.

In a group, JAX's CPU client runs every collective through gloo (`jax_cpu_collectives_implementation`), a
process's own included: its devices exchange bytes over TCP too, not through shared memory as in a process
alone (`python -m pmap_core bench collectives`, which `benchmarks.bench_two_level` measures beside them).
"""

from __future__ import annotations

import dataclasses
import functools
import statistics
import warnings
from collections.abc import Callable, Sequence

import jax
import numpy as np
from jax import lax

from pmap_core.commbench.measure import SLOPE_TRIES, _chain_step, time_slope
from pmap_core.commbench.plan import ITEM_BYTES, chain_lengths
from pmap_core.costs import fit as costfit
from pmap_core.runtime import DATA_AXIS
from pmap_core.validation import LabInputError

OP = "psum"
LEVELS = ("process", "network")
DEFAULT_SIZES = tuple(4096 * 4**i for i in range(6))  # 4 KiB … 4 MiB
BARRIER_TIMEOUT_MS = 30 * 60 * 1000  # how long the other processes wait while process 0 measures its own level


def level_devices(level: str) -> list[jax.Device]:
    """The devices of a level: this process's own (`process`), or the first device of every process (`network`)."""
    if level == "process":
        return list(jax.local_devices())
    first: dict[int, jax.Device] = {}
    for device in jax.devices():
        first.setdefault(device.process_index, device)
    return [first[index] for index in sorted(first)]


@functools.cache
def chained_on(devices: tuple[jax.Device, ...]) -> Callable[[object, int], jax.Array]:
    """k all-reduces chained in one compiled loop over `devices` (k a runtime argument, the input donated)."""
    return jax.pmap(lambda x, k: lax.fori_loop(0, k, _chain_step(OP), x), axis_name=DATA_AXIS, in_axes=(0, None),
                    devices=list(devices), donate_argnums=0)


def _barrier(name: str) -> None:
    """Wait for every process at the coordinator, not in a collective: a collective of the whole group would start
    gloo's connections, which give up after 30 s, while process 0 may measure for minutes."""
    from jax._src import distributed as jax_distributed

    jax_distributed.global_state.client.wait_at_barrier(name, BARRIER_TIMEOUT_MS)


@dataclasses.dataclass(frozen=True)
class LevelFit:
    level: str
    devices: int
    sizes: tuple[int, ...]
    seconds: tuple[float, ...]  # one all-reduce of S bytes per device, per size
    fit: costfit.RingFit

    def as_dict(self) -> dict[str, object]:
        return {"level": self.level, "devices": self.devices, "sizes": list(self.sizes), "seconds": list(self.seconds),
                "alpha_s": self.fit.alpha_s, "beta_bytes_per_s": self.fit.beta_bytes_per_s, "r2_log": self.fit.r2_log,
                "worst_ratio": self.fit.worst_ratio}


def measure_level(level: str, sizes: Sequence[int], repeats: int) -> LevelFit | None:
    """Time one all-reduce at each size on the level's devices, and fit α and β to them (None in a process that
    only waits: the process level is process 0's)."""
    devices = level_devices(level)
    if level == "process" and jax.process_index() != 0:
        _barrier(f"two-level {level} done")
        return None
    mine = [d for d in devices if d.process_index == jax.process_index()]
    program = chained_on(tuple(devices))
    seconds = []
    for size in sizes:
        elements = size // ITEM_BYTES
        for _ in range(SLOPE_TRIES):
            with warnings.catch_warnings():  # a host array has no buffer to donate: nothing is lost
                warnings.filterwarnings("ignore", "Some donated buffers were not usable")
                loop = time_slope(program, np.zeros((len(mine), elements), np.float32), *chain_lengths(size),
                                  repeats)
            slope = statistics.median(loop.per_iteration_s)
            if slope > 0:
                break
        seconds.append(slope)
    if level == "process":
        _barrier(f"two-level {level} done")
    # A slope that stayed <= 0 after SLOPE_TRIES (the machine's noise swamped it) is listed, not fitted.
    kept = [(size, t) for size, t in zip(sizes, seconds, strict=True) if t > 0]
    fit = costfit.fit_ring(OP, [len(devices)] * len(kept), [size for size, _ in kept], [t for _, t in kept])
    return LevelFit(level, len(devices), tuple(sizes), tuple(seconds), fit)


def measure_two_levels(sizes: Sequence[int] = DEFAULT_SIZES, repeats: int = 3) -> dict[str, LevelFit | None]:
    """Both levels, in this process of the group (every process must call it, with the same arguments); the
    process level is None but in process 0."""
    if jax.process_count() < 2 or jax.local_device_count() < 2:
        raise LabInputError("two_levels_need_group", "two levels need at least 2 processes of at least 2 devices each; "
                            "this group has {processes} of {devices}", processes=jax.process_count(),
                            devices=jax.local_device_count())
    return {level: measure_level(level, sizes, repeats) for level in LEVELS}


def ratios(fits: dict[str, LevelFit | None]) -> dict[str, float]:
    """How much slower the network level is: its α over the process level's, and the process level's β over its."""
    assert fits["process"] is not None and fits["network"] is not None, "process 0's fits"
    process, network = fits["process"].fit, fits["network"].fit
    return {"alpha_network_over_process": network.alpha_s / process.alpha_s if process.alpha_s > 0 else float("inf"),
            "beta_process_over_network": process.beta_bytes_per_s / network.beta_bytes_per_s}
