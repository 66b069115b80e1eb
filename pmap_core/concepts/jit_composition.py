"""How pmap composes with jit, grad and shard_map — measured, not claimed.

- `pmap(f)` and `pmap(jit(f))` compile to the same program and run at the same
  speed: pmap already compiles `f` with XLA, so the inner jit is redundant.
- Since JAX 0.8, pmap is implemented as `jit(shard_map(...))`; the shard_map
  form computes the same values.
- `grad` inside pmap plus `lax.pmean` gives the full-batch gradient, and XLA
  fuses the per-parameter all-reduces into one (`pmap_core.concepts.gradients`).
- Python side effects run while JAX traces, not when the compiled program runs.

Reading the compiled programs is `pmap_core.hlo`'s part.
"""

from __future__ import annotations

import dataclasses
import functools
import io

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from pmap_core import hlo
from pmap_core.concepts.gradients import AllReduceCount, GradCheck, count_all_reduces, grad_in_pmap
from pmap_core.runtime import DATA_AXIS
from pmap_core.timing import Timing, time_call
from pmap_core.validation import check_devices, check_int

FEATURES = 64
MAX_ROWS = 512  # rows per device in the speed test: its (rows x rows) matmuls stay cheap
MAX_REPEATS = 50
MAX_ROUNDS = 10


# --- the function every comparison uses --------------------------------------


def mix(x: jax.Array) -> jax.Array:
    """Per-device work with one collective: a small attention-like mix minus the global mean."""
    scores = jnp.tanh(x @ x.T / x.shape[-1])
    return scores @ x - lax.pmean(x, DATA_AXIS)


@functools.cache
def _pmapped_mix(devices: int, inner_jit: bool):
    f = jax.jit(mix) if inner_jit else mix
    return jax.pmap(f, axis_name=DATA_AXIS, devices=jax.devices()[:devices])


@functools.cache
def _shard_mapped_mix(devices: int):
    mesh = Mesh(np.array(jax.devices()[:devices]), (DATA_AXIS,))
    # Each device gets a (rows, FEATURES) block of the (devices * rows, FEATURES) array:
    # the same block pmap hands to `mix` after removing the device axis.
    return jax.jit(jax.shard_map(mix, mesh=mesh, in_specs=P(DATA_AXIS), out_specs=P(DATA_AXIS)))


def sample_batch(devices: int, rows: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((devices, rows, FEATURES), dtype=np.float32)


# --- comparing compiled programs ---------------------------------------------

@dataclasses.dataclass(frozen=True)
class HloComparison:
    devices: int
    rows: int
    plain_hlo: str  # pmap(f), as compiled
    jitted_hlo: str  # pmap(jit(f)), as compiled
    raw_differing_lines: int
    normalized_differing_lines: int
    normalized_diff: str  # empty when the programs are the same

    @property
    def identical(self) -> bool:
        return self.normalized_differing_lines == 0


def compare_compiled(devices: int, rows: int) -> HloComparison:
    """Compile pmap(mix) and pmap(jit(mix)) for the same input and compare the programs."""
    devices = check_devices(devices)
    rows = check_int("rows", rows, 1, MAX_ROWS)
    x = sample_batch(devices, rows)
    plain = _pmapped_mix(devices, False).lower(x).compile().as_text()
    jitted = _pmapped_mix(devices, True).lower(x).compile().as_text()
    plain_n, jitted_n = hlo.normalize_hlo(plain), hlo.normalize_hlo(jitted)
    return HloComparison(devices, rows, plain, jitted, hlo.differing_lines(plain, jitted),
                         hlo.differing_lines(plain_n, jitted_n),
                         hlo.unified_diff(plain_n, jitted_n, "pmap(f)", "pmap(jit(f))"))


# --- comparing speed, and the shard_map form ---------------------------------


@dataclasses.dataclass(frozen=True)
class SpeedComparison:
    devices: int
    rows: int
    plain: Timing  # pmap(f)
    jitted: Timing  # pmap(jit(f))
    shard_map: Timing  # jit(shard_map(f))
    max_abs_diff_jitted: float  # |pmap(jit(f)) - pmap(f)|, max over all values
    max_abs_diff_shard_map: float  # |shard_map(f) - pmap(f)|

    @property
    def jitted_over_plain(self) -> float:
        return self.jitted.median_s / self.plain.median_s


def compare_speed(devices: int, rows: int, repeats: int = 10, rounds: int = 3) -> SpeedComparison:
    """Median step times of the three forms, timed in alternating rounds so drift hits all alike."""
    devices = check_devices(devices)
    rows = check_int("rows", rows, 1, MAX_ROWS)
    repeats = check_int("repeats", repeats, 1, MAX_REPEATS)
    rounds = check_int("rounds", rounds, 1, MAX_ROUNDS)
    x = sample_batch(devices, rows)
    x_flat = x.reshape(devices * rows, FEATURES)
    forms = {
        "plain": (_pmapped_mix(devices, False), x),
        "jitted": (_pmapped_mix(devices, True), x),
        "shard_map": (_shard_mapped_mix(devices), x_flat),
    }
    firsts: dict[str, float] = {}
    samples: dict[str, list[float]] = {name: [] for name in forms}
    for _ in range(rounds):
        for name, (fn, arg) in forms.items():
            timing = time_call(fn, arg, repeats=repeats)
            firsts.setdefault(name, timing.first_call_s)
            samples[name].extend(timing.samples_s)
    timings = {name: Timing(firsts[name], tuple(samples[name])) for name in forms}
    reference = np.asarray(forms["plain"][0](x))
    jitted_out = np.asarray(forms["jitted"][0](x))
    shard_out = np.asarray(forms["shard_map"][0](x_flat)).reshape(reference.shape)
    return SpeedComparison(
        devices, rows, timings["plain"], timings["jitted"], timings["shard_map"],
        float(np.max(np.abs(jitted_out - reference))), float(np.max(np.abs(shard_out - reference))),
    )


# --- purity: side effects run at trace time --------------------------------------


@dataclasses.dataclass(frozen=True)
class PurityDemo:
    devices: int
    calls: int
    printed: str  # what the print inside the function wrote during those calls, captured
    trace_appends: int  # how often the list append ran over `calls` calls
    runtime_callbacks: int  # how often jax.debug.callback ran over the same calls
    scale_traced: float  # the outer variable's value when JAX traced
    scale_changed: float  # the value it was changed to afterwards
    impure_after_change: float  # output[0] with the same shape: the old value is baked in
    impure_after_retrace: float  # output[0] after a new shape forces a retrace
    pure_after_change: float  # output[0] of the pure form, scale passed as an argument


def purity_demo(devices: int, calls: int = 3) -> PurityDemo:
    """Run an impure function `calls` times under pmap and record which side effects happened."""
    devices = check_devices(devices)
    calls = check_int("calls", calls, 1, 10)
    printed, appended, callbacks = io.StringIO(), [], []
    settings = {"scale": 2.0}  # an outer variable the function reads: not one of its inputs

    def impure(x):
        print(f"tracing impure(x) with x: {x.shape} {x.dtype}", file=printed)
        appended.append(x.shape)
        jax.debug.callback(lambda: callbacks.append(1))  # runs on the device, every call
        return x * settings["scale"]

    def pure(x, scale):
        return x * scale

    run_impure = jax.pmap(impure, devices=jax.devices()[:devices])
    run_pure = jax.pmap(pure, in_axes=(0, None), devices=jax.devices()[:devices])
    ones = jnp.ones((devices, 3))
    for _ in range(calls):
        jax.block_until_ready(run_impure(ones))
    jax.effects_barrier()  # wait until every debug callback has run
    trace_appends, runtime_callbacks, output = len(appended), len(callbacks), printed.getvalue()
    settings["scale"] = 10.0
    after_change = float(run_impure(ones)[0, 0])
    after_retrace = float(run_impure(jnp.ones((devices, 4)))[0, 0])
    jax.effects_barrier()
    pure_value = float(run_pure(ones, settings["scale"])[0, 0])
    return PurityDemo(devices, calls, output, trace_appends, runtime_callbacks,
                      2.0, settings["scale"], after_change, after_retrace, pure_value)


# --- everything the lab page shows, in one call ------------------------------------


@dataclasses.dataclass(frozen=True)
class CompositionReport:
    hlo: HloComparison
    speed: SpeedComparison
    grads: GradCheck
    all_reduces: AllReduceCount
    purity: PurityDemo


def composition_report(devices: int, rows: int, repeats: int = 10, layers: int = 3) -> CompositionReport:
    return CompositionReport(
        compare_compiled(devices, rows), compare_speed(devices, rows, repeats),
        grad_in_pmap(devices), count_all_reduces(devices, layers), purity_demo(devices),
    )
