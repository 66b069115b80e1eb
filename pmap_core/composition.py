"""How pmap composes with jit, grad and shard_map — measured, not claimed.

- `pmap(f)` and `pmap(jit(f))` compile to the same program and run at the same
  speed: pmap already compiles `f` with XLA, so the inner jit is redundant.
- Since JAX 0.8, pmap is implemented as `jit(shard_map(...))`; the shard_map
  form computes the same values.
- `grad` inside pmap plus `lax.pmean` gives the full-batch gradient, and XLA
  fuses the per-parameter all-reduces into one.
- Python side effects run while JAX traces, not when the compiled program runs.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import io
import re

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec as P

from pmap_core.timing import Timing, time_call
from pmap_core.validation import check_devices, check_int, check_seed

AXIS = "d"
FEATURES = 64
MAX_ROWS = 512  # rows per device in the speed test: its (rows x rows) matmuls stay cheap
MAX_REPEATS = 50
MAX_LAYERS = 8
MAX_ROUNDS = 10
MAX_WIDTH = 1_024  # hidden width of the all-reduce counting model


# --- the function every comparison uses --------------------------------------


def mix(x: jax.Array) -> jax.Array:
    """Per-device work with one collective: a small attention-like mix minus the global mean."""
    scores = jnp.tanh(x @ x.T / x.shape[-1])
    return scores @ x - lax.pmean(x, AXIS)


@functools.lru_cache(maxsize=None)
def _pmapped_mix(devices: int, inner_jit: bool):
    f = jax.jit(mix) if inner_jit else mix
    return jax.pmap(f, axis_name=AXIS, devices=jax.devices()[:devices])


@functools.lru_cache(maxsize=None)
def _shard_mapped_mix(devices: int):
    mesh = Mesh(np.array(jax.devices()[:devices]), (AXIS,))
    # Each device gets a (rows, FEATURES) block of the (devices * rows, FEATURES) array:
    # the same block pmap hands to `mix` after removing the device axis.
    return jax.jit(jax.shard_map(mix, mesh=mesh, in_specs=P(AXIS), out_specs=P(AXIS)))


def sample_batch(devices: int, rows: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((devices, rows, FEATURES), dtype=np.float32)


# --- comparing compiled programs ---------------------------------------------

_SOURCE_TABLES = re.compile(r"^(FileNames|FunctionNames|FileLocations|StackFrames)$")
_METADATA = re.compile(r",? metadata=\{[^}]*\}")
_NUMBERED_NAME = re.compile(r"(?<![\w.\-])%?[A-Za-z_][\w\-]*(?:\.\d+)[\w.\-]*")


def normalize_hlo(text: str) -> str:
    """Compiled HLO without what only names it: source tables, metadata, numeric name suffixes.

    Names like `%sin.5` become `%sin.<k>` with k the order of first appearance,
    so two programs that differ only in how XLA numbered their values compare equal.
    """
    lines, skipping = [], False
    for line in text.splitlines():
        if _SOURCE_TABLES.match(line):
            skipping = True  # a table of source locations, up to the next blank line
            continue
        if skipping:
            skipping = bool(line.strip())
            continue
        lines.append(line.rstrip())
    body = _METADATA.sub("", "\n".join(lines))
    body = re.sub(r"^HloModule \S+?,", "HloModule module,", body)
    renamed: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        name = match.group(0)
        if name not in renamed:
            renamed[name] = f"{name.split('.')[0]}.{len(renamed)}"
        return renamed[name]

    body = _NUMBERED_NAME.sub(rename, body)
    return "\n".join(line for line in body.splitlines() if line.strip())


def differing_lines(a: str, b: str) -> int:
    """Lines added or removed between two texts."""
    return sum(
        1 for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


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
    plain_n, jitted_n = normalize_hlo(plain), normalize_hlo(jitted)
    diff = "\n".join(difflib.unified_diff(plain_n.splitlines(), jitted_n.splitlines(),
                                          "pmap(f)", "pmap(jit(f))", lineterm=""))
    return HloComparison(devices, rows, plain, jitted, differing_lines(plain, jitted),
                         differing_lines(plain_n, jitted_n), diff)


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


# --- grad inside pmap ----------------------------------------------------------


def linear_loss(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean squared error of y ≈ w·x + b."""
    return jnp.mean((params["w"] * x + params["b"] - y) ** 2)


def _local_and_mean_grads(params: dict, x: jax.Array, y: jax.Array):
    local = jax.grad(linear_loss)(params, x, y)  # this device's shard only
    return local, lax.pmean(local, AXIS)  # the average every device then uses


@functools.lru_cache(maxsize=None)
def _pmapped_grads(devices: int):
    return jax.pmap(_local_and_mean_grads, axis_name=AXIS, in_axes=(None, 0, 0),
                    devices=jax.devices()[:devices])


@dataclasses.dataclass(frozen=True)
class GradCheck:
    devices: int
    global_batch: int
    params: dict[str, float]  # where the gradient is taken
    per_device: dict[str, tuple[float, ...]]  # each device's gradient on its shard
    averaged: dict[str, tuple[float, ...]]  # after pmean, as seen on each device
    full_batch: dict[str, float]  # jax.grad on the whole batch, one device
    max_abs_error: float  # |averaged - full_batch| over every device and parameter


def grad_in_pmap(devices: int, per_device_batch: int = 4, seed: int = 0) -> GradCheck:
    """Gradients of y = 3x + 1 regression per device, averaged with pmean, against one device."""
    devices = check_devices(devices)
    per_device_batch = check_int("per_device_batch", per_device_batch, 1, MAX_ROWS)
    seed = check_seed(seed)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (devices, per_device_batch)).astype(np.float32)
    y = (3 * x + 1 + 0.1 * rng.standard_normal(x.shape)).astype(np.float32)
    params = {"w": jnp.float32(0.5), "b": jnp.float32(-0.5)}
    local, mean = _pmapped_grads(devices)(params, x, y)
    full = jax.grad(linear_loss)(params, jnp.asarray(x.reshape(-1)), jnp.asarray(y.reshape(-1)))
    error = max(float(np.max(np.abs(np.asarray(mean[k]) - np.asarray(full[k])))) for k in params)
    as_tuple = lambda tree: {k: tuple(float(v) for v in np.asarray(tree[k])) for k in params}  # noqa: E731
    return GradCheck(devices, devices * per_device_batch, {k: float(v) for k, v in params.items()},
                     as_tuple(local), as_tuple(mean), {k: float(v) for k, v in full.items()}, error)


# --- XLA fuses the gradient all-reduces ----------------------------------------


def mlp_loss(params: list, x: jax.Array, y: jax.Array) -> jax.Array:
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = jnp.tanh(h)
    return jnp.mean((h - y) ** 2)


def mean_grad_step(params: list, x: jax.Array, y: jax.Array) -> list:
    """One pmean per parameter array, as written; XLA decides how many all-reduces run."""
    grads = jax.grad(mlp_loss)(params, x, y)
    return jax.tree.map(lambda g: lax.pmean(g, AXIS), grads)


@dataclasses.dataclass(frozen=True)
class AllReduceCount:
    devices: int
    layers: int
    parameter_arrays: int
    traced: int  # all-reduces in the program JAX hands to XLA
    compiled: int  # all-reduces left after XLA's optimisation
    compiled_lines: tuple[str, ...]  # the all-reduce instructions, shortened


def count_all_reduces(devices: int, layers: int = 3, width: int = 16) -> AllReduceCount:
    devices = check_devices(devices)
    layers = check_int("layers", layers, 1, MAX_LAYERS)
    width = check_int("width", width, 1, MAX_WIDTH)
    sizes = [4] + [width] * (layers - 1) + [1]
    params = [(jnp.ones((a, b)) / a, jnp.zeros(b)) for a, b in zip(sizes[:-1], sizes[1:])]
    x, y = jnp.ones((devices, 8, 4)), jnp.ones((devices, 8, 1))
    step = jax.pmap(mean_grad_step, axis_name=AXIS, in_axes=(None, 0, 0), devices=jax.devices()[:devices])
    lowered = step.lower(params, x, y)
    compiled = lowered.compile().as_text()
    ops = [line.strip() for line in compiled.splitlines() if re.search(r" all-reduce(-start)?\(", line)]
    return AllReduceCount(
        devices, layers, 2 * layers, lowered.as_text().count('"stablehlo.all_reduce"'), len(ops),
        tuple(_METADATA.sub("", op)[:240] for op in ops),
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
