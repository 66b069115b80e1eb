"""Data-parallel training, one entry point per job: `train` one model, `sweep` D.

The loop runs whatever `ParallelProgram` (`train.program`) `config.impl` names in the registry
(`train.programs`), through that interface only: place, run, read the losses, the parameters and
the footprint.

Both trust a validated config (`train.plan.validate`, called by the page or the CLI) and report
to callbacks (minGPT's trainer shape): training knows nothing of who watches — the page's live
chart, the CLI's progress lines and MLflow tracking (`tracking.callback`) are all callbacks.

Two throughputs, each with its own name everywhere (page, MLflow, CLI JSON, README):
- `throughput`: global samples / wall time of every timed training call — end to end, the first
  call after compiling and each call's dispatch included;
- `steady_throughput`: samples per call / median time of a repeated call of the same compiled
  program — what the program sustains once warm.
The scaling ratio S(D) = steady_throughput(D) / steady_throughput(1), measured in this process on
the same model and data; efficiency E(D) = S(D) / D (README, "Training from the command line").

A run whose loss stops being a finite number raises `Diverged` at the first chunk where it did: the
host reads every chunk's losses anyway, so watching them costs no collective on the devices.
"""

from __future__ import annotations

import contextlib
import dataclasses
import statistics
import time
from collections.abc import Callable, Iterator, Sequence

import jax
import numpy as np

from pmap_core.runtime import describe_runtime
from pmap_core.train import models, programs
from pmap_core.train.config import TrainConfig, plan_run, sweep_configs
from pmap_core.train.divergence import Diverged, finite_prefix
from pmap_core.train.footprint import Footprint, measure
from pmap_core.train.program import ParallelProgram
from pmap_core.train.programs import compiles_in_this_thread

STEADY_REPEATS = 3  # timed calls behind each steady-state median


@dataclasses.dataclass(frozen=True)
class ScalingResult:
    """S(D) of one run against one device; every throughput here is a steady one."""

    devices: int
    mode: str                   # "strong" (same global batch) | "weak" (same per-device batch)
    global_batch: int
    baseline_global_batch: int  # the D = 1 run's batch
    steady_throughput: float    # samples/s on `devices` devices
    baseline_throughput: float  # steady samples/s on one device, same process, same model and data
    steady_step_time_s: float
    baseline_step_time_s: float
    scaling_ratio: float        # S(D) = steady_throughput / baseline_throughput
    efficiency: float           # S(D) / D
    hardware_ceiling: float     # best S(D) this runtime allows: min(D, physical cores) when simulated


@dataclasses.dataclass(frozen=True)
class TrainResult:
    config: TrainConfig
    losses: tuple[float, ...]          # loss over the global batch, one per step
    params: dict[str, np.ndarray]      # final parameters (device 0's copy) on the host
    replicas_identical: bool           # every device's copy equal, bit for bit
    replica_max_diff: float            # largest difference between copies
    throughput: float                  # end to end: global samples / s over the timed steps
    step_time_s: float                 # timed wall time / steps
    timed_s: float                     # wall time of the timed steps (compile excluded)
    steady_throughput: float           # samples / s of a warm, repeated call
    steady_step_time_s: float
    compile_time_s: float              # compile time of the training program(s)
    recompiled: bool                   # False when every program came from the cache
    wall_time_s: float                 # the whole call: data, compile, steps, scaling, callbacks
    scaling: ScalingResult | None = None  # when asked for, in a one-process run
    footprint: Footprint | None = None    # bytes held per device and sent per step, beside the model

    @property
    def memory(self) -> dict[str, float]:
        """The CLI's and MLflow's figures of `footprint`."""
        f = self.footprint
        if f is None:
            return {}
        figures = {"param_bytes_per_device": f.param_bytes_per_device,
                   "grad_bytes_per_device": f.grad_bytes_per_device, "opt_bytes_per_device": f.opt_bytes_per_device,
                   "padding_bytes_per_device": f.padding_bytes_per_device, "comm_bytes_per_step": f.comm_bytes_per_step}
        optional = {"peak_bytes_per_device": f.peak_bytes_per_device, "flops_per_step": f.flops_per_step,
                    "residual_bytes_per_device": f.residual_bytes_per_device}
        figures.update({name: value for name, value in optional.items() if value is not None})
        return figures

    @property
    def final_loss(self) -> float:
        return self.losses[-1]


@dataclasses.dataclass(frozen=True)
class SweepPoint:
    result: TrainResult
    scaling_ratio: float        # steady throughput against the sweep's D = 1 run of the same implementation
    efficiency: float
    hardware_ceiling: float
    baseline_throughput: float  # that D = 1 run's steady throughput

    @property
    def devices(self) -> int:
        return self.result.config.devices


@dataclasses.dataclass(frozen=True)
class SweepResult:
    config: TrainConfig
    mode: str
    points: tuple[SweepPoint, ...]


class Callback:
    """What a run tells whoever watches it; every hook does nothing unless overridden.

    A train: run_started, chunk_done after each compiled call, then run_ended — or stopped(error)
    when anything raised (KeyboardInterrupt, a Streamlit stop, an error). A sweep wraps its runs in
    sweep_started … point_done after each run … sweep_ended (or stopped).
    """

    def run_started(self, config: TrainConfig) -> None: ...

    def chunk_done(self, steps_done: int, losses: Sequence[float]) -> None: ...

    def run_ended(self, result: TrainResult) -> None: ...

    def sweep_started(self, config: TrainConfig, runs: Sequence[TrainConfig]) -> None: ...

    def point_done(self, point: SweepPoint, index: int, total: int) -> None: ...

    def sweep_ended(self, sweep: SweepResult) -> None: ...

    def stopped(self, error: BaseException) -> None: ...


@dataclasses.dataclass
class Progress(Callback):
    """A callback from plain functions: `on_chunk(steps_done, losses)`, `on_point(point, index, total)`."""

    on_chunk: Callable[[int, Sequence[float]], None] | None = None
    on_point: Callable[[SweepPoint, int, int], None] | None = None

    def chunk_done(self, steps_done: int, losses: Sequence[float]) -> None:
        if self.on_chunk is not None:
            self.on_chunk(steps_done, losses)

    def point_done(self, point: SweepPoint, index: int, total: int) -> None:
        if self.on_point is not None:
            self.on_point(point, index, total)


def hardware_ceiling(devices: int) -> float:
    return describe_runtime().hardware_ceiling(devices)


@contextlib.contextmanager
def _told_when_stopped(callbacks: Sequence[Callback]) -> Iterator[None]:
    """Whatever stops the work inside (an error, Ctrl-C, a Streamlit stop) reaches every callback first."""
    try:
        yield
    except BaseException as error:
        for callback in callbacks:
            callback.stopped(error)
        raise


def train(config: TrainConfig, callbacks: Sequence[Callback] = (), *, measure_scaling: bool = True) -> TrainResult:
    """Train `config.model` on `config.devices` devices; with `measure_scaling` (one process only)
    also time one device on the same data for S(D)."""
    with _told_when_stopped(callbacks):
        for callback in callbacks:
            callback.run_started(config)
        result = _train(config, callbacks, measure_scaling and jax.process_count() == 1)
        for callback in callbacks:
            callback.run_ended(result)
        return result


def _train(config: TrainConfig, callbacks: Sequence[Callback], measure_scaling: bool) -> TrainResult:
    started = time.perf_counter()
    # Every setting the run needs is read here, once.
    plan = plan_run(config, measure_scaling, programs.REGISTRY)
    chunks, specs, baseline_spec, program = plan.chunks, plan.programs, plan.baseline_program, plan.program
    steps, batch, learning_rate = config.steps, config.global_batch, config.learning_rate
    baseline_batch = plan.baseline.global_batch if plan.baseline else batch
    data = models.make_data(config.model, batch, plan.features, config.seed, plan.dims)
    initial = models.init_params(config.model, plan.features, config.hidden, config.seed, config.layers, plan.dims)

    compiled_before = compiles_in_this_thread()
    compiled = {n: programs.build_planned(spec) for n, spec in specs.items()}
    baseline = programs.build_planned(baseline_spec) if baseline_spec else None
    first = compiled[chunks[0]]
    model = program.analytic(first.spec, first.param_count)  # its program's textbook figures, if any
    carry, x, y, lr = first.place(initial, data, learning_rate)

    losses: list[float] = []
    call_times: list[float] = []
    for n in chunks:
        start = time.perf_counter()
        carry, chunk_losses = jax.block_until_ready(compiled[n].run(carry, x, y, lr))
        call_times.append(time.perf_counter() - start)
        new = [float(v) for v in first.step_losses(chunk_losses)]
        finite = finite_prefix(new)
        losses.extend(new[:finite])  # callbacks never see a loss that is not a number
        if finite:
            for callback in callbacks:
                callback.chunk_done(len(losses), list(losses))
        if finite < len(new):
            raise Diverged(config, len(losses) + 1, losses)

    # Steady state: the warm full-length calls of the run itself, topped up with repeats of the
    # same program on the same placed inputs (their results are discarded).
    warm = call_times[1:] if chunks[-1] == chunks[0] else call_times[1:-1]
    warm += [_time_call(first, carry, x, y, lr) for _ in range(STEADY_REPEATS - len(warm))]
    steady_s = statistics.median(warm)
    per_call = chunks[0] * batch  # samples of one full-length call
    scaling = None
    if measure_scaling:
        base_s = steady_s if baseline is None else _baseline_seconds(baseline, baseline_batch, initial, data, lr)
        scaling = _scaling(config, per_call / steady_s, chunks[0] * baseline_batch / base_s, baseline_batch,
                           steady_s / chunks[0], base_s / chunks[0])

    host_params, diff = first.final_params(carry)
    footprint = measure(first, carry, model)
    timed = sum(call_times)
    return TrainResult(
        config=config,
        losses=tuple(losses),
        params=host_params,
        replicas_identical=diff == 0.0,
        replica_max_diff=diff,
        throughput=steps * batch / timed,
        step_time_s=timed / steps,
        timed_s=timed,
        steady_throughput=per_call / steady_s,
        steady_step_time_s=steady_s / chunks[0],
        compile_time_s=sum(p.compile_s for p in compiled.values()),
        recompiled=compiles_in_this_thread() > compiled_before,  # by this call, not another session's
        wall_time_s=time.perf_counter() - started,
        scaling=scaling,
        footprint=footprint,
    )


def _time_call(program: ParallelProgram, *inputs) -> float:
    start = time.perf_counter()
    jax.block_until_ready(program.run(*inputs))
    return time.perf_counter() - start


def _baseline_seconds(program: ParallelProgram, rows: int, initial: dict[str, np.ndarray],
                      data: models.Dataset, learning_rate: float) -> float:
    """Median seconds of one call of the one-device program on the run's own data (its first
    `rows` samples, fewer for weak scaling), after one untimed warm-up call."""
    inputs = program.place(initial, models.Dataset(data.x[:rows], data.y[:rows]), learning_rate)
    jax.block_until_ready(program.run(*inputs))
    return statistics.median(_time_call(program, *inputs) for _ in range(STEADY_REPEATS))


def _scaling(config: TrainConfig, steady: float, baseline: float, baseline_batch: int, step_s: float,
             baseline_step_s: float) -> ScalingResult:
    """S(D) from the two steady throughputs (samples/s), both measured in this process."""
    ratio = steady / baseline
    return ScalingResult(
        devices=config.devices, mode=config.scaling, global_batch=config.global_batch,
        baseline_global_batch=baseline_batch, steady_throughput=steady, baseline_throughput=baseline,
        steady_step_time_s=step_s, baseline_step_time_s=baseline_step_s,
        scaling_ratio=ratio, efficiency=ratio / config.devices, hardware_ceiling=hardware_ceiling(config.devices),
    )


def sweep(config: TrainConfig, device_counts: Sequence[int] | None = None,
          callbacks: Sequence[Callback] = (), impls: Sequence[str] | None = None) -> SweepResult:
    """Train once per implementation and device count (`train_config.sweep_configs`); S(D) is the
    steady throughput against the sweep's own D = 1 run of the same implementation."""
    runs = sweep_configs(config, device_counts, impls)
    with _told_when_stopped(callbacks):
        for callback in callbacks:
            callback.sweep_started(config, runs)
        points: list[SweepPoint] = []
        for index, run in enumerate(runs):
            result = train(run, callbacks, measure_scaling=False)
            base = next((p.result for p in points if p.result.config.impl == run.impl), result)
            ratio = result.steady_throughput / base.steady_throughput
            points.append(SweepPoint(result, ratio, ratio / run.devices, hardware_ceiling(run.devices),
                                     base.steady_throughput))
            for callback in callbacks:
                callback.point_done(points[-1], index, len(runs))
        outcome = SweepResult(config, config.scaling, tuple(points))
        for callback in callbacks:
            callback.sweep_ended(outcome)
        return outcome
