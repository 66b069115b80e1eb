"""Measure collectives: latency and bandwidth of all-reduce, all-gather, reduce-scatter and all-to-all.

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

The ceiling: a jitted elementwise copy (y = x + 1: read S, write S) on one
device, timed the same way; its S / t is the machine's memory-copy bandwidth.
"""

from __future__ import annotations

import dataclasses
import functools
import statistics
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax

from pmap_core.commbench.plan import (
    ALL_TO_ALL,
    COPY,
    ITEM_BYTES,
    SweepPlan,
    busbw_factor,
    chain_lengths,
    check_splits,
    input_elements,
)
from pmap_core.commbench.records import Measurement, SweepResult
from pmap_core.runtime import DATA_AXIS
from pmap_core.timing import Timing, time_call
from pmap_core.validation import MAX_ELEMENTS, check_devices, check_int

# --- the compiled programs (cached: the same op and D never recompile for a seen shape) ---


def _one_collective(op: str, x: jax.Array) -> jax.Array:
    if op == "psum":
        return lax.psum(x, DATA_AXIS)
    if op == "all_gather":
        return lax.all_gather(x, DATA_AXIS, tiled=True)
    if op == ALL_TO_ALL:  # S in, S out: chunk j of this device's buffer to device j, chunk i of the result from i
        return lax.all_to_all(x, DATA_AXIS, split_axis=0, concat_axis=0, tiled=True)
    return lax.psum_scatter(x, DATA_AXIS, tiled=True)


def _chain_step(op: str) -> Callable[[int, jax.Array], jax.Array]:
    """One loop iteration whose output has the input's shape, so k of them chain."""
    def step(_: int, x: jax.Array) -> jax.Array:
        out = _one_collective(op, x)
        if op == "all_gather":  # S out, S/D in: keep this device's share (a copy of S/D)
            return out[: x.shape[0]]
        if op == "psum_scatter":  # S in, S/D out: write it back in place (a copy of S/D)
            return lax.dynamic_update_slice(x, out, (0,))
        return out
    return step


@functools.cache
def per_call_program(op: str, devices: int) -> Callable[[jax.Array], jax.Array]:
    """pmap of a single collective on the first `devices` devices."""
    return jax.pmap(lambda x: _one_collective(op, x), axis_name=DATA_AXIS, devices=jax.devices()[:devices])


@functools.cache
def chained_program(op: str, devices: int) -> Callable[[jax.Array, int], jax.Array]:
    """pmap of `program(x, k)`: k collectives chained in one compiled loop.

    k is a runtime argument (broadcast to every device), so both loop lengths of
    the slope run the same compiled program. The input is donated: the loop
    updates it in place, with no copy of S on entry.
    """
    step = _chain_step(op)
    return jax.pmap(lambda x, k: lax.fori_loop(0, k, step, x), axis_name=DATA_AXIS, in_axes=(0, None),
                    devices=jax.devices()[:devices], donate_argnums=0)


@functools.cache
def _copy_programs() -> tuple[Callable, Callable]:
    once = jax.jit(lambda x: x + 1)
    chained = jax.jit(lambda x, k: lax.fori_loop(0, k, lambda _, y: y + 1, x), donate_argnums=0)
    return once, chained


@functools.cache
def _zeros_program(devices: int) -> Callable:
    # Inputs are made on the devices, so no host copy of D × S bytes is needed.
    return jax.pmap(lambda _, n: jnp.zeros((n,), jnp.float32), static_broadcasted_argnums=1,
                    devices=jax.devices()[:devices])


# --- timing ------------------------------------------------------------------


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
        pairs = zip(self.short.samples_s, self.long.samples_s, strict=True)
        return tuple((b - a) / (self.k_long - self.k_short) for a, b in pairs)


def time_slope(program: Callable[[jax.Array, int], jax.Array], x: jax.Array, k_short: int, k_long: int,
               repeats: int) -> SlopeTiming:
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
        timed(k_short)  # the warm-up pair
        timed(k_long)
        pairs = [(timed(k_short), timed(k_long)) for _ in range(max(1, repeats))]
    finally:
        state[0].delete()
    return SlopeTiming(k_short, k_long, Timing(first[k_short], tuple(a for a, _ in pairs)),
                       Timing(first[k_long], tuple(b for _, b in pairs)))


# --- measuring ---------------------------------------------------------------


SLOPE_TRIES = 3  # slope measurements of one point before a non-positive one is reported


def _measurement(op: str, devices: int, size: int, call: Timing, chained: SlopeTiming) -> Measurement:
    per = chained.per_iteration_s
    return Measurement(op, devices, size, (chained.k_short, chained.k_long), statistics.median(per), min(per),
                       max(per), call.median_s, call.min_s, call.max_s,
                       max(call.compile_s, chained.short.compile_s, chained.long.compile_s))


def _time_both(op: str, devices: int, size: int, repeats: int, make_input: Callable[[], jax.Array],
               once: Callable, chained: Callable) -> Measurement:
    """One dispatched call of `once`, then the slope of `chained`, each on a fresh input."""
    x = make_input()
    try:
        call = time_call(once, x, repeats=repeats)
    finally:
        x.delete()  # free D × S now, not when the garbage collector gets to it
    # A collective takes time: a median slope <= 0 means the machine's noise swamped the
    # difference between the two loop lengths, so that point is measured again.
    for _ in range(SLOPE_TRIES):
        loop = time_slope(chained, make_input(), *chain_lengths(size), repeats)
        if statistics.median(loop.per_iteration_s) > 0:
            break
    return _measurement(op, devices, size, call, loop)


def measure_collective(op: str, devices: int, size: int, repeats: int) -> Measurement:
    """Time one collective at message size `size` bytes on the first `devices` devices."""
    make_input = functools.partial(_zeros_program(devices), jnp.arange(devices), input_elements(op, devices, size))
    return _time_both(op, devices, size, repeats, make_input, per_call_program(op, devices),
                      chained_program(op, devices))


def measure_copy(size: int, repeats: int) -> Measurement:
    """The memory-copy reference: y = x + 1 on one device, timed like a collective."""
    def make_input() -> jax.Array:
        return jax.device_put(jnp.zeros((size // ITEM_BYTES,), jnp.float32), jax.devices()[0])

    return _time_both(COPY, 1, size, repeats, make_input, *_copy_programs())


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
    check_splits(elements_per_device * ITEM_BYTES, devices)
    x = jnp.arange(devices * elements_per_device, dtype=jnp.float32).reshape(devices, -1)
    return per_call_program(op, devices)(x), chained_program(op, devices)(x, 1)
