"""Plan a sweep of collectives: what a message size means, which sweeps are accepted, what one costs.

Message size S follows nccl-tests: the per-device buffer for all-reduce (in and
out S), the per-device *output* for all-gather (each device sends S/D), the
per-device *input* for reduce-scatter (each keeps S/D), the per-device buffer for
all-to-all (in and out S: one chunk of S/D for each device). So no buffer exceeds S
per device. algbw = S / t; busbw = algbw × 2(D−1)/D for all-reduce and
× (D−1)/D for all-gather, reduce-scatter and all-to-all (`pmap_core.costs.ring`).

`OPS` are the three the communication page measures; `BENCH_OPS` adds the all-to-all (expert parallelism's
collective), which the `bench collectives --ops all_to_all` command measures and fits the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pmap_core.costs import ring
from pmap_core.runtime import MAX_CPU_DEVICES, device_ladder
from pmap_core.validation import MAX_ELEMENTS, LabInputError, check_devices, check_int

OPS = ("psum", "all_gather", "psum_scatter")
ALL_TO_ALL = "all_to_all"
BENCH_OPS = (*OPS, ALL_TO_ALL)
COPY = "copy"  # the single-device memory-copy reference
ITEM_BYTES = 4  # float32
MIN_BYTES = 1024
MAX_BYTES = MAX_ELEMENTS * ITEM_BYTES  # 64 MiB per device
FULL_SIZES = tuple(MIN_BYTES * 4**i for i in range(9))  # 1 KiB … 64 MiB
MAX_REPEATS = 50
# The long loop moves about CHAIN_BYTES: k_long = clamp(128 MiB / S, 4, 256), k_short = k_long / 4.
# The k_long − k_short collectives between the two must outweigh the machine's noise (a
# preempted run on a shared machine loses milliseconds), hence 192 of them at small S.
CHAIN_BYTES = 128 * 2**20
MIN_CHAIN, MAX_CHAIN = 4, 256

# Budgets checked before anything runs. The time estimate assumes a slow, shared machine
# (aggregate 4 GB/s over all devices, 10 µs per hop, 0.2 ms per execution, 0.3 s per compile),
# so that an accepted sweep finishes well within it.
MAX_SWEEP_SECONDS = 180.0
MAX_SWEEP_MEMORY = 4 * 2**30
ASSUMED_BYTES_PER_S = 4e9
ASSUMED_OVERHEAD_S = 2e-4
ASSUMED_HOP_S = 1e-5  # latency per ring hop of a collective
ASSUMED_COMPILE_S = 0.3


def busbw_factor(op: str, devices: int) -> float:
    """nccl-tests' bus-bandwidth factor: what each link carries relative to S."""
    devices = check_int("devices", devices, 1, MAX_CPU_DEVICES)
    if op in BENCH_OPS:
        return ring.bytes_factor(op, devices)
    if op == COPY:
        return 1.0
    raise LabInputError("unknown_op", "unknown collective {op!r}; choose from {ops}", op=op, ops=", ".join(BENCH_OPS))


def chain_lengths(size_bytes: int) -> tuple[int, int]:
    """(k_short, k_long): the two loop lengths whose time difference is k_long − k_short collectives."""
    k_long = max(MIN_CHAIN, min(MAX_CHAIN, CHAIN_BYTES // size_bytes))
    return k_long // 4, k_long


def input_elements(op: str, devices: int, size_bytes: int) -> int:
    """Elements of each device's input for message size S (all-gather sends S/D)."""
    elements = size_bytes // ITEM_BYTES
    return elements // devices if op == "all_gather" else elements


def splits_evenly(size_bytes: int, devices: int) -> bool:
    """Whether S splits into D equal float32 shards, as reduce-scatter and all-gather need."""
    return size_bytes % (ITEM_BYTES * devices) == 0


def check_splits(size_bytes: int, devices: int) -> None:
    """Refuse a message of `size_bytes` that D devices cannot share in equal float32 shards."""
    devices = check_int("devices", devices, 1, MAX_CPU_DEVICES)
    if not splits_evenly(size_bytes, devices):
        raise LabInputError("size_not_divisible",
                            "a message of {size} bytes cannot be split into {devices} equal float32 shards",
                            size=size_bytes, devices=devices)


def sweep_devices(max_devices: int) -> tuple[int, ...]:
    """The device ladder up to `max_devices` that a sweep can measure: D >= 2, splitting every size evenly."""
    return tuple(d for d in device_ladder(max_devices) if d >= 2 and splits_evenly(MIN_BYTES, d))


@dataclasses.dataclass(frozen=True)
class SweepPlan:
    ops: tuple[str, ...]
    devices: tuple[int, ...]
    sizes: tuple[int, ...]
    repeats: int
    estimated_s: float
    peak_bytes: int

    @property
    def steps(self) -> int:
        """Units of progress: one per (op or copy) × D × size."""
        return (len(self.ops) * len(self.devices) + 1) * len(self.sizes)


def _estimated_seconds(ops: int, devices: Sequence[int], sizes: Sequence[int], repeats: int) -> float:
    """The sweep's time on the assumed slow machine: compiles, executions and the bytes moved."""
    estimated = 0.0
    for size in sizes:
        # Executions: the per-call program (k = 1) and the loop at both lengths, each run 2 + repeats
        # times. Each execution also pays about one collective's worth of fixed cost (its fresh
        # buffers' first touch), hence the + 2 per pair.
        executions = 3 * (2 + repeats)
        collectives = (2 + repeats) * (1 + 1 + sum(chain_lengths(size)) + 2)
        estimated += (ops * len(devices) + 1) * 2 * ASSUMED_COMPILE_S  # per-call and loop programs
        estimated += executions * ASSUMED_OVERHEAD_S + collectives * 2 * size / ASSUMED_BYTES_PER_S  # the copy
        for d in devices:
            one = ASSUMED_HOP_S * (d - 1) + d * size / ASSUMED_BYTES_PER_S
            estimated += ops * (executions * ASSUMED_OVERHEAD_S + collectives * one)
    return estimated


def plan_sweep(ops: Sequence[str], devices: Sequence[int], sizes: Sequence[int], repeats: int) -> SweepPlan:
    """Check a sweep and estimate its cost; refuse it (LabInputError) past the budgets."""
    ops = tuple(dict.fromkeys(ops))
    if not ops:
        raise LabInputError("no_ops", "choose at least one collective")
    for op in ops:
        if op not in BENCH_OPS:
            busbw_factor(op, 2)  # raises unknown_op
    repeats = check_int("repeats", repeats, 1, MAX_REPEATS)
    devices = tuple(sorted({check_devices(d) for d in devices}))
    if not devices or devices[0] < 2:
        raise LabInputError("need_two_devices", "a collective needs at least 2 devices, got {devices}",
                            devices=list(devices))
    sizes = tuple(sorted({check_int("size (bytes)", s, MIN_BYTES, MAX_BYTES) for s in sizes}))
    for size in sizes:
        for d in devices:
            check_splits(size, d)
    estimated = _estimated_seconds(len(ops), devices, sizes, repeats)
    # Each device holds input, output and the loop's carry: at most 3 buffers of S.
    peak = 3 * max(sizes) * max(devices)
    if peak > MAX_SWEEP_MEMORY:
        raise LabInputError("sweep_too_big", "the sweep needs about {need} MiB, over the limit of {limit} MiB",
                            need=peak // 2**20, limit=MAX_SWEEP_MEMORY // 2**20)
    if estimated > MAX_SWEEP_SECONDS:
        raise LabInputError("sweep_too_long",
                            "the sweep would take about {estimate:.0f} s, over the limit of {limit:.0f} s; "
                            "use fewer sizes, devices or repeats",
                            estimate=estimated, limit=MAX_SWEEP_SECONDS)
    return SweepPlan(ops, devices, sizes, repeats, estimated, peak)
