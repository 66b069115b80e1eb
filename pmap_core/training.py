"""Data-parallel training with `jax.pmap`: replicated params, sharded batch, averaged gradients.

One training step on every device d:  g_d = ∇L(w; x_d, y_d),  ḡ = pmean(g_d) = (1/D) Σ_d g_d,
w ← w − η ḡ. Every device applies the same ḡ to its own copy of w, so the copies stay identical.

Steps run in chunks: one pmap call runs `chunk` steps inside `lax.scan` and returns the loss of
each step, so the Python dispatch cost is paid once per chunk instead of once per step.
Compilation happens ahead of time (`lower().compile()`), is timed on its own and is cached per
(model, D, shapes, chunk length): a rerun with the same shapes never recompiles.

Definitions (DESIGN.md): throughput = global samples / wall time of the timed steps;
scaling ratio S(D) = throughput(D) / throughput(1) measured in this process; efficiency E = S/D.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax import lax

from pmap_core import models
from pmap_core.timing import time_call
from pmap_core.validation import (
    MAX_BATCH, MAX_STEPS, LabInputError, check_devices, check_elements, check_float, check_int, check_seed,
)

AXIS = "batch"
SCALING_MODES = ("strong", "weak")
# Limits of one request, so a shared server stays responsive for a whole class.
MAX_HIDDEN = 1024
MAX_MODEL_FEATURES = 512
MAX_CHUNK = 500
MAX_LEARNING_RATE = 10.0
MAX_WORK = 20_000_000_000  # forward multiply-adds over the whole run (steps × batch × model size)


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Every setting of a training run; `validate` checks it against the limits above."""

    model: str = "linear"        # "linear" | "mlp"
    devices: int = 8
    global_batch: int = 256
    learning_rate: float = 0.05
    steps: int = 300
    hidden: int = 32             # MLP width (ignored by linear)
    features: int = 8            # MLP input width (linear regression has one input)
    seed: int = 0
    chunk: int = 50              # steps run inside one pmap call
    scaling: str = "strong"      # "strong" (same global batch) | "weak" (same per-device batch)

    @property
    def per_device_batch(self) -> int:
        return self.global_batch // self.devices

    @property
    def input_features(self) -> int:
        return 1 if self.model == "linear" else self.features


def validate(config: TrainConfig) -> TrainConfig:
    """The config with numbers normalised, or a LabInputError (codes: unknown_model,
    unknown_scaling, batch_not_divisible, too_much_work, out_of_range, not_whole_number,
    not_a_number, too_many_devices, too_large)."""
    if config.model not in models.MODELS:
        raise LabInputError("unknown_model", "model must be one of {options}, got {value!r}",
                            options=", ".join(models.MODELS), value=config.model)
    if config.scaling not in SCALING_MODES:
        raise LabInputError("unknown_scaling", "scaling must be one of {options}, got {value!r}",
                            options=", ".join(SCALING_MODES), value=config.scaling)
    checked = dataclasses.replace(
        config,
        devices=check_devices(config.devices),
        global_batch=check_int("global_batch", config.global_batch, 1, MAX_BATCH),
        learning_rate=check_float("learning_rate", config.learning_rate, 1e-6, MAX_LEARNING_RATE),
        steps=check_int("steps", config.steps, 1, MAX_STEPS),
        hidden=check_int("hidden", config.hidden, 1, MAX_HIDDEN),
        features=check_int("features", config.features, 1, MAX_MODEL_FEATURES),
        seed=check_seed(config.seed),
        chunk=check_int("chunk", config.chunk, 1, MAX_CHUNK),
    )
    if jax.process_count() > 1 and checked.devices != jax.device_count():
        raise LabInputError("distributed_devices",
                            "a multi-process run trains on all {available} devices of its processes, got {devices}",
                            available=jax.device_count(), devices=checked.devices)
    if checked.global_batch % checked.devices:
        raise LabInputError(
            "batch_not_divisible",
            "global_batch {batch} does not split evenly over {devices} devices; try {suggestion}",
            batch=checked.global_batch, devices=checked.devices,
            suggestion=max(checked.devices, checked.global_batch // checked.devices * checked.devices),
        )
    check_elements("training data", checked.global_batch * checked.input_features)
    work = checked.steps * checked.global_batch * models.multiply_adds_per_sample(
        checked.model, checked.input_features, checked.hidden)
    if work > MAX_WORK:
        raise LabInputError("too_much_work",
                            "this run needs {work:,} multiply-adds, over the limit of {limit:,}; "
                            "use fewer steps, a smaller batch or a narrower model",
                            work=work, limit=MAX_WORK)
    return checked


# -- the compiled program ---------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ChunkProgram:
    """A compiled pmap that runs `steps` training steps; `compile_s` is what compiling cost."""

    run: Any            # run(params, x, y, learning_rate) -> (params, losses of shape (D, steps))
    devices: tuple[Any, ...]
    steps: int
    compile_s: float
    compiled_at: float  # time.perf_counter() when compiling finished

    def input_shardings(self) -> tuple[Any, ...]:
        return self.run.input_shardings[0]


def chunk_step_fn(model: str, steps: int) -> Callable[..., Any]:
    """What one device runs: `steps` data-parallel updates inside `lax.scan`."""

    def run(params, x, y, learning_rate):
        def step(params, _):
            loss, grads = jax.value_and_grad(functools.partial(models.loss, model))(params, x, y)
            grads = lax.pmean(grads, AXIS)  # ḡ: every device now holds the same mean gradient
            params = jax.tree.map(lambda p, g: p - learning_rate * g, params, grads)
            return params, lax.pmean(loss, AXIS)  # the loss over the global batch

        return lax.scan(step, params, None, length=steps)

    return run


@functools.lru_cache(maxsize=64)
def compiled_chunk(model: str, devices: int, per_device_batch: int, features: int, hidden: int,
                   steps: int) -> ChunkProgram:
    """Compile (once per key) the pmap over the first `devices` devices."""
    devs = tuple(jax.devices()[:devices])
    local = len(_local_indices(devs))

    def spec(shape: tuple[int, ...]) -> np.ndarray:
        # Host zeros, not ShapeDtypeStructs: a multi-process pmap converts its local inputs to
        # global arrays even when lowering, which needs real arrays.
        return np.zeros((local, *shape), np.float32)

    params = jax.tree.map(lambda p: spec(p.shape), models.init_params(model, features, hidden, 0))
    pmapped = jax.pmap(chunk_step_fn(model, steps), axis_name=AXIS, in_axes=(0, 0, 0, None), devices=devs)
    start = time.perf_counter()
    compiled = pmapped.lower(params, spec((per_device_batch, features)), spec((per_device_batch,)),
                             np.float32(0)).compile()
    done = time.perf_counter()
    return ChunkProgram(compiled, devs, steps, done - start, done)


def _local_indices(devs: Sequence[Any]) -> list[int]:
    """Positions (shard indices) of this process's devices among `devs`."""
    return [i for i, d in enumerate(devs) if d.process_index == jax.process_index()]


def place_inputs(program: ChunkProgram, params: dict[str, np.ndarray], data: models.Dataset) -> tuple:
    """Replicate params and shard the batch (D, B/D, …) onto the program's devices.

    In a multi-process run each process passes only its own devices' shards.
    """
    devs, local = program.devices, _local_indices(program.devices)
    d = len(devs)
    p_shard, x_shard, y_shard, _ = program.input_shardings()
    x = data.x.reshape(d, -1, data.x.shape[1])[local]
    y = data.y.reshape(d, -1)[local]

    def replicate(p: np.ndarray, sharding: Any) -> jax.Array:
        copies = np.ascontiguousarray(np.broadcast_to(p, (len(local), *p.shape)))
        return jax.make_array_from_process_local_data(sharding, copies, (d, *p.shape))

    return (jax.tree.map(replicate, params, p_shard),
            jax.make_array_from_process_local_data(x_shard, x, (d, *x.shape[1:])),
            jax.make_array_from_process_local_data(y_shard, y, (d, *y.shape[1:])))


def local_copies(array: jax.Array) -> list[np.ndarray]:
    """This process's per-device copies of a pmap output, each without the device axis."""
    return [np.asarray(shard.data)[0] for shard in array.addressable_shards]


# -- training ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TrainResult:
    config: TrainConfig
    losses: tuple[float, ...]          # loss over the global batch, one per step
    params: dict[str, np.ndarray]      # final parameters (device 0's copy) on the host
    replicas_identical: bool           # every device's copy equal, bit for bit
    replica_max_diff: float            # largest difference between copies
    throughput: float                  # global samples / s over the timed steps
    step_time_s: float                 # timed wall time / steps
    timed_s: float                     # wall time of the timed steps (compile excluded)
    compile_time_s: float              # compile time of the program(s) this run used
    recompiled: bool                   # False when every program came from the cache
    wall_time_s: float                 # the whole call: data, compile, steps, callbacks

    @property
    def final_loss(self) -> float:
        return self.losses[-1]


def _chunk_lengths(steps: int, chunk: int) -> list[int]:
    full, rest = divmod(steps, chunk)
    return [chunk] * full + ([rest] if rest else [])


def train(config: TrainConfig, on_chunk: Callable[[int, Sequence[float]], None] | None = None) -> TrainResult:
    """Train `config.model` on `config.devices` devices; `on_chunk(steps_done, losses_so_far)` after each chunk."""
    config = validate(config)
    started = time.perf_counter()
    features = config.input_features
    data = models.make_data(config.model, config.global_batch, features, config.seed)
    lengths = _chunk_lengths(config.steps, config.chunk)
    programs = {n: compiled_chunk(config.model, config.devices, config.per_device_batch, features,
                                  config.hidden, n) for n in sorted(set(lengths))}
    recompiled = any(p.compiled_at >= started for p in programs.values())
    first = programs[lengths[0]]
    params, x, y = place_inputs(first, models.init_params(config.model, features, config.hidden, config.seed), data)
    learning_rate = np.float32(config.learning_rate)

    losses: list[float] = []
    timed = 0.0
    for n in lengths:
        start = time.perf_counter()
        params, chunk_losses = jax.block_until_ready(programs[n].run(params, x, y, learning_rate))
        timed += time.perf_counter() - start
        losses.extend(float(v) for v in local_copies(chunk_losses)[0])
        if on_chunk is not None:
            on_chunk(len(losses), list(losses))

    copies = {name: local_copies(leaf) for name, leaf in params.items()}
    diff = max(float(np.max(np.abs(c - cs[0]))) for cs in copies.values() for c in cs)
    samples = config.steps * config.global_batch
    return TrainResult(
        config=config,
        losses=tuple(losses),
        params={name: cs[0] for name, cs in copies.items()},
        replicas_identical=diff == 0.0,
        replica_max_diff=diff,
        throughput=samples / timed,
        step_time_s=timed / config.steps,
        timed_s=timed,
        compile_time_s=sum(p.compile_s for p in programs.values()),
        recompiled=recompiled,
        wall_time_s=time.perf_counter() - started,
    )


# -- scaling -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ScalingResult:
    devices: int
    mode: str                   # "strong" (same global batch) | "weak" (same per-device batch)
    global_batch: int
    baseline_global_batch: int  # the D = 1 run's batch
    throughput: float           # samples/s on `devices` devices
    baseline_throughput: float  # samples/s on one device, same process, same model and data
    step_time_s: float
    baseline_step_time_s: float
    scaling_ratio: float        # S(D) = throughput / baseline_throughput
    efficiency: float           # S(D) / D
    hardware_ceiling: float     # best S(D) this runtime allows: min(D, physical cores) when simulated


def hardware_ceiling(devices: int) -> float:
    from pmap_core.runtime import describe_runtime

    return describe_runtime().hardware_ceiling(devices)


def baseline_batch(config: TrainConfig) -> int:
    """The one-device batch: the same global batch (strong) or the same per-device batch (weak)."""
    return config.global_batch if config.scaling == "strong" else config.per_device_batch


def step_throughput(config: TrainConfig, repeats: int = 3) -> tuple[float, float]:
    """(samples/s, seconds per step) of the config's chunk program, median of `repeats` timed calls."""
    features = config.input_features
    steps = min(config.chunk, config.steps)
    program = compiled_chunk(config.model, config.devices, config.per_device_batch, features, config.hidden, steps)
    data = models.make_data(config.model, config.global_batch, features, config.seed)
    inputs = place_inputs(program, models.init_params(config.model, features, config.hidden, config.seed), data)
    timing = time_call(program.run, *inputs, np.float32(config.learning_rate), repeats=repeats, warmup=0)
    return steps * config.global_batch / timing.median_s, timing.median_s / steps


def measure_scaling(config: TrainConfig, repeats: int = 3) -> ScalingResult:
    """S(D) of `config` against one device, both timed here on the same model and data."""
    config = validate(config)
    baseline = dataclasses.replace(config, devices=1, global_batch=baseline_batch(config))
    throughput, step_s = step_throughput(config, repeats)
    base_throughput, base_step_s = step_throughput(baseline, repeats)
    ratio = throughput / base_throughput
    return ScalingResult(
        devices=config.devices, mode=config.scaling, global_batch=config.global_batch,
        baseline_global_batch=baseline.global_batch, throughput=throughput,
        baseline_throughput=base_throughput, step_time_s=step_s, baseline_step_time_s=base_step_s,
        scaling_ratio=ratio, efficiency=ratio / config.devices, hardware_ceiling=hardware_ceiling(config.devices),
    )


@dataclasses.dataclass(frozen=True)
class SweepPoint:
    result: TrainResult
    scaling_ratio: float        # against the sweep's D = 1 run
    efficiency: float
    hardware_ceiling: float

    @property
    def devices(self) -> int:
        return self.result.config.devices


@dataclasses.dataclass(frozen=True)
class SweepResult:
    config: TrainConfig
    mode: str
    points: tuple[SweepPoint, ...]


def default_device_counts(config: TrainConfig) -> list[int]:
    """1, 2, 4, … up to config.devices (and config.devices itself)."""
    counts, d = [], 1
    while d < config.devices:
        counts.append(d)
        d *= 2
    return counts + [config.devices]


def sweep_configs(config: TrainConfig, device_counts: Sequence[int] | None = None) -> list[TrainConfig]:
    """One config per D (D = 1 always first). Strong: the same global batch, keeping only the D
    it divides; weak: the config's per-device batch on every D."""
    config = validate(config)
    counts = sorted({1, *(device_counts or default_device_counts(config))})
    configs = []
    for d in counts:
        batch = config.global_batch if config.scaling == "strong" else config.per_device_batch * d
        if config.scaling == "strong" and batch % d:
            continue
        configs.append(validate(dataclasses.replace(config, devices=d, global_batch=batch)))
    return configs
