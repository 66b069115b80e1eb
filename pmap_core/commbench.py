"""Measure collectives: latency and bandwidth of all-reduce, all-gather and reduce-scatter.

What is timed, and how (shown on the lab page too):

- Every timing keeps the first call (trace + compile + run) apart, makes one
  warm-up call, then `repeats` timed calls, each ending with `block_until_ready`:
  `pmap_core.timing.time_call` for the per-call figure, `time_slope` (the same,
  with two loop lengths alternating) for the chained one.
- **Per call**: one pmapped program holding one collective, dispatched from
  Python each time — what a training loop that calls `pmap` per step pays.
- **Chained** (the collective itself): one pmapped program runs the collective in
  a `lax.fori_loop` whose trip count is a runtime argument, each iteration feeding
  the next. It is timed at two lengths k_short < k_long, alternately, and the
  figure is the slope (t(k_long) − t(k_short)) / (k_long − k_short), one per
  repeat pair. Everything an execution pays once — Python dispatch, allocating
  the program's output and temporary buffers and first-touching their pages —
  is in both times and cancels; what is left is one more collective in a warm
  loop. k_short >= 1, so the first iteration (which touches fresh buffers) is
  inside both times. The input is donated, so the loop works in place.

Message size S follows nccl-tests: the per-device buffer for all-reduce (in and
out S), the per-device *output* for all-gather (each device sends S/D), the
per-device *input* for reduce-scatter (each keeps S/D). So no buffer exceeds S
per device. algbw = S / t; busbw = algbw × 2(D−1)/D for all-reduce and
× (D−1)/D for all-gather and reduce-scatter.

The ceiling: a jitted elementwise copy (y = x + 1: read S, write S) on one
device, timed the same way; its S / t is the machine's memory-copy bandwidth.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import statistics
import time
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
from jax import lax

from pmap_core.timing import Timing, time_call
from pmap_core.runtime import MAX_CPU_DEVICES
from pmap_core.validation import MAX_ELEMENTS, LabInputError, check_devices, check_int

OPS = ("psum", "all_gather", "psum_scatter")
COPY = "copy"  # the single-device memory-copy reference
AXIS = "d"
ITEM_BYTES = 4  # float32
MIN_BYTES = 1024
MAX_BYTES = MAX_ELEMENTS * ITEM_BYTES  # 64 MiB per device
FULL_SIZES = tuple(MIN_BYTES * 4**i for i in range(9))  # 1 KiB … 64 MiB
QUICK_SIZES = FULL_SIZES[:6]  # 1 KiB … 1 MiB
MAX_REPEATS = 50
# The long loop moves about CHAIN_BYTES: k_long = clamp(128 MiB / S, 4, 256), k_short = k_long / 4.
# The k_long − k_short collectives between the two must outweigh the machine's noise (a
# preempted run on a shared 2-core machine loses milliseconds), hence 192 of them at small S.
CHAIN_BYTES = 128 * 2**20
MIN_CHAIN, MAX_CHAIN = 4, 256

# Budgets checked before anything runs. The time estimate assumes a slow,
# shared machine (aggregate 4 GB/s over all devices, 10 µs per hop, 0.2 ms per execution,
# 0.3 s per compile) so that an accepted sweep finishes well within it: for the
# full sweep it says about 160 s where this 2-core machine, loaded, took 76 s.
MAX_SWEEP_SECONDS = 180.0
MAX_SWEEP_MEMORY = 4 * 2**30
ASSUMED_BYTES_PER_S = 4e9
ASSUMED_OVERHEAD_S = 2e-4
ASSUMED_HOP_S = 1e-5  # latency per ring hop of a collective
ASSUMED_COMPILE_S = 0.3


def busbw_factor(op: str, devices: int) -> float:
    """nccl-tests' bus-bandwidth factor: what each link carries relative to S."""
    devices = check_int("devices", devices, 1, MAX_CPU_DEVICES)
    if op == "psum":
        return 2 * (devices - 1) / devices
    if op in ("all_gather", "psum_scatter"):
        return (devices - 1) / devices
    if op == COPY:
        return 1.0
    raise LabInputError("unknown_op", "unknown collective {op!r}; choose from {ops}", op=op, ops=", ".join(OPS))


def chain_lengths(size_bytes: int) -> tuple[int, int]:
    """(k_short, k_long): the two loop lengths whose time difference is k_long − k_short collectives."""
    k_long = max(MIN_CHAIN, min(MAX_CHAIN, CHAIN_BYTES // size_bytes))
    return k_long // 4, k_long


def input_elements(op: str, devices: int, size_bytes: int) -> int:
    """Elements of each device's input for message size S (all-gather sends S/D)."""
    elements = size_bytes // ITEM_BYTES
    return elements // devices if op == "all_gather" else elements


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


def _check_splits(size_bytes: int, devices: int) -> None:
    """Reduce-scatter and all-gather need S to split into D equal float32 shards."""
    if size_bytes % (ITEM_BYTES * devices):
        raise LabInputError("size_not_divisible",
                            "a message of {size} bytes cannot be split into {devices} equal float32 shards",
                            size=size_bytes, devices=devices)


def plan_sweep(ops: Sequence[str], devices: Sequence[int], sizes: Sequence[int], repeats: int) -> SweepPlan:
    """Check a sweep and estimate its cost; refuse it (LabInputError) past the budgets."""
    ops = tuple(dict.fromkeys(ops))
    if not ops:
        raise LabInputError("no_ops", "choose at least one collective")
    for op in ops:
        if op not in OPS:
            busbw_factor(op, 2)  # raises unknown_op
    repeats = check_int("repeats", repeats, 1, MAX_REPEATS)
    devices = tuple(sorted({check_devices(d) for d in devices}))
    if not devices or devices[0] < 2:
        raise LabInputError("need_two_devices", "a collective needs at least 2 devices, got {devices}",
                            devices=list(devices))
    sizes = tuple(sorted({check_int("size (bytes)", s, MIN_BYTES, MAX_BYTES) for s in sizes}))
    for size in sizes:
        for d in devices:
            _check_splits(size, d)
    estimated = 0.0
    for size in sizes:
        # Executions: the per-call program (k = 1) and the loop at both lengths, each run 2 + repeats
        # times. Each execution also pays about one collective's worth of fixed cost (its fresh
        # buffers' first touch), hence the + 2 per pair.
        executions = 3 * (2 + repeats)
        collectives = (2 + repeats) * (1 + 1 + sum(chain_lengths(size)) + 2)
        estimated += (len(ops) * len(devices) + 1) * 2 * ASSUMED_COMPILE_S  # per-call and loop programs
        estimated += executions * ASSUMED_OVERHEAD_S + collectives * 2 * size / ASSUMED_BYTES_PER_S  # the copy
        for d in devices:
            one = ASSUMED_HOP_S * (d - 1) + d * size / ASSUMED_BYTES_PER_S
            estimated += len(ops) * (executions * ASSUMED_OVERHEAD_S + collectives * one)
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


# --- the compiled programs (cached: the same op and D never recompile for a seen shape) ---


def _one_collective(op: str, x: jax.Array, devices: int) -> jax.Array:
    if op == "psum":
        return lax.psum(x, AXIS)
    if op == "all_gather":
        return lax.all_gather(x, AXIS, tiled=True)
    return lax.psum_scatter(x, AXIS, tiled=True)


def _chain_step(op: str, devices: int) -> Callable[[int, jax.Array], jax.Array]:
    """One loop iteration whose output has the input's shape, so k of them chain."""
    def step(_: int, x: jax.Array) -> jax.Array:
        out = _one_collective(op, x, devices)
        if op == "all_gather":  # S out, S/D in: keep this device's share (a copy of S/D)
            return out[: x.shape[0]]
        if op == "psum_scatter":  # S in, S/D out: write it back in place (a copy of S/D)
            return lax.dynamic_update_slice(x, out, (0,))
        return out
    return step


@functools.lru_cache(maxsize=None)
def per_call_program(op: str, devices: int) -> Callable[[jax.Array], jax.Array]:
    """pmap of a single collective on the first `devices` devices."""
    return jax.pmap(lambda x: _one_collective(op, x, devices), axis_name=AXIS, devices=jax.devices()[:devices])


@functools.lru_cache(maxsize=None)
def chained_program(op: str, devices: int) -> Callable[[jax.Array, int], jax.Array]:
    """pmap of `program(x, k)`: k collectives chained in one compiled loop.

    k is a runtime argument (broadcast to every device), so both loop lengths of
    the slope run the same compiled program. The input is donated: the loop
    updates it in place, with no copy of S on entry.
    """
    step = _chain_step(op, devices)
    return jax.pmap(lambda x, k: lax.fori_loop(0, k, step, x), axis_name=AXIS, in_axes=(0, None),
                    devices=jax.devices()[:devices], donate_argnums=0)


@functools.lru_cache(maxsize=None)
def _copy_programs() -> tuple[Callable, Callable]:
    once = jax.jit(lambda x: x + 1)
    chained = jax.jit(lambda x, k: lax.fori_loop(0, k, lambda _, y: y + 1, x), donate_argnums=0)
    return once, chained


@functools.lru_cache(maxsize=None)
def _zeros_program(devices: int) -> Callable:
    # Inputs are made on the devices, so no host copy of D × S bytes is needed.
    return jax.pmap(lambda _, n: jnp.zeros((n,), jnp.float32), static_broadcasted_argnums=1, devices=jax.devices()[:devices])


# --- measuring ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SlopeTiming:
    """Times of one looped program at two trip counts, measured alternately (pair i = repeat i)."""

    k_short: int
    k_long: int
    short: Timing
    long: Timing

    @property
    def per_iteration_s(self) -> tuple[float, ...]:
        """One slope per repeat pair: (t_long − t_short) / (k_long − k_short). Fixed costs cancel."""
        return tuple((b - a) / (self.k_long - self.k_short) for a, b in zip(self.short.samples_s, self.long.samples_s))


def time_slope(program: Callable[[jax.Array, int], jax.Array], x: jax.Array, k_short: int, k_long: int,
               repeats: int, warmup: int = 1) -> SlopeTiming:
    """Time `program(x, k)` (which donates x) at k_short and k_long, feeding each output back as the next x.

    Like `timing.time_call` (first calls apart, a warm-up, then timed calls ended by
    `block_until_ready`), except that the two lengths alternate, so that a change
    in the machine's load during the measurement hits both alike.
    """
    if not 1 <= k_short < k_long:
        raise ValueError(f"need 1 <= k_short < k_long, got {k_short}, {k_long}")
    state = [x]

    def timed(k: int) -> float:
        start = time.perf_counter()
        state[0] = jax.block_until_ready(program(state[0], k))
        return time.perf_counter() - start

    try:
        first = {k: timed(k) for k in (k_short, k_long)}  # the first includes trace + compile
        for _ in range(warmup):
            timed(k_short), timed(k_long)
        pairs = [(timed(k_short), timed(k_long)) for _ in range(max(1, repeats))]
    finally:
        state[0].delete()
    return SlopeTiming(k_short, k_long, Timing(first[k_short], tuple(a for a, _ in pairs)),
                       Timing(first[k_long], tuple(b for _, b in pairs)))


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


def _measurement(op: str, devices: int, size: int, call: Timing, chained: SlopeTiming) -> Measurement:
    per = chained.per_iteration_s
    return Measurement(op, devices, size, (chained.k_short, chained.k_long), statistics.median(per), min(per),
                       max(per), call.median_s, call.min_s, call.max_s,
                       max(call.compile_s, chained.short.compile_s, chained.long.compile_s))


def measure_collective(op: str, devices: int, size: int, repeats: int) -> Measurement:
    """Time one collective at message size `size` bytes on the first `devices` devices."""
    make_input = functools.partial(_zeros_program(devices), jnp.arange(devices), input_elements(op, devices, size))
    x = make_input()
    try:
        call = time_call(per_call_program(op, devices), x, repeats=repeats)
    finally:
        x.delete()  # free D × S now, not when the garbage collector gets to it
    chained = time_slope(chained_program(op, devices), make_input(), *chain_lengths(size), repeats)
    return _measurement(op, devices, size, call, chained)


def measure_copy(size: int, repeats: int) -> Measurement:
    """The memory-copy reference: y = x + 1 on one device, timed like a collective."""
    def make_input() -> jax.Array:
        return jax.device_put(jnp.zeros((size // ITEM_BYTES,), jnp.float32), jax.devices()[0])

    once, chained = _copy_programs()
    x = make_input()
    try:
        call = time_call(once, x, repeats=repeats)
    finally:
        x.delete()
    loop = time_slope(chained, make_input(), *chain_lengths(size), repeats)
    return _measurement(COPY, 1, size, call, loop)


def run_sweep(plan: SweepPlan, on_progress: Callable[[int, int, str], None] | None = None) -> SweepResult:
    """Measure every op × D × size of the plan, and the copy reference per size."""
    start = time.perf_counter()
    rows, copies, done = [], [], 0

    def tick(label: str) -> None:
        nonlocal done
        done += 1
        if on_progress is not None:
            on_progress(done, plan.steps, label)

    for size in plan.sizes:
        copies.append(measure_copy(size, plan.repeats))
        tick(f"copy {size} B")
    for op in plan.ops:
        for devices in plan.devices:
            for size in plan.sizes:
                rows.append(measure_collective(op, devices, size, plan.repeats))
                tick(f"{op} D={devices} {size} B")
    return SweepResult(plan, tuple(rows), tuple(copies), time.perf_counter() - start)


def check_outputs(op: str, devices: int, elements_per_device: int = 64) -> tuple[jax.Array, jax.Array]:
    """Run the benchmarked programs on distinct values: (per-call output, chained-once output)."""
    busbw_factor(op, 2)  # raises unknown_op
    devices = check_devices(devices)
    elements_per_device = check_int("elements_per_device", elements_per_device, 1, MAX_ELEMENTS // devices)
    _check_splits(elements_per_device * ITEM_BYTES, devices)
    x = jnp.arange(devices * elements_per_device, dtype=jnp.float32).reshape(devices, -1)
    return per_call_program(op, devices)(x), chained_program(op, devices)(x, 1)


# --- results as records: JSON rows and an MLflow run ------------------------------


def result_rows(result: SweepResult, fits: dict) -> list[dict[str, object]]:
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


def log_sweep(tracker, result: SweepResult, fits: dict, tags: dict[str, str]) -> str:
    """One MLflow run per sweep: params, tags (kind=bench), metrics per size (step = bytes), α and β.

    Metric names: `<op>.D<d>.seconds|call_seconds|busbw|algbw`, `copy.bandwidth`,
    and per fit `<op>.D<d|all>.alpha_s|beta_Bps|r2|worst_ratio`.
    """
    plan = result.plan
    params = {"ops": ",".join(plan.ops), "devices": ",".join(map(str, plan.devices)),
              "sizes": ",".join(map(str, plan.sizes)), "repeats": plan.repeats,
              "seconds_timed": "slope of the chained loop: (t(k_long) - t(k_short)) / (k_long - k_short), median of repeats"}
    with tracker.run(f"collectives {','.join(plan.ops)} D={','.join(map(str, plan.devices))}",
                     params, {**tags, "kind": "bench"}) as run_id:
        for size in plan.sizes:
            metrics = {f"{m.op}.D{m.devices}.{name}": value
                       for m in result.measurements if m.bytes == size
                       for name, value in (("seconds", m.seconds), ("call_seconds", m.call_seconds),
                                           ("busbw", m.busbw), ("algbw", m.algbw))}
            metrics.update({"copy.bandwidth": m.algbw for m in result.copies if m.bytes == size})
            tracker.log_metrics(run_id, metrics, step=size)
        summary = {"wall_s": result.wall_s, "copy.ceiling": result.copy_ceiling}
        for (op, devices), fit in fits.items():
            prefix = f"{op}.D{devices if devices is not None else 'all'}"
            summary.update({f"{prefix}.alpha_s": fit.alpha_s, f"{prefix}.beta_Bps": fit.beta_bytes_per_s,
                            f"{prefix}.r2": fit.r2, f"{prefix}.worst_ratio": fit.worst_ratio})
        tracker.log_metrics(run_id, {key: value for key, value in summary.items() if math.isfinite(value)})
    return run_id

