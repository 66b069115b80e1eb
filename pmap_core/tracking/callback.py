"""Training runs recorded in MLflow, by a callback: one run per training, a parent with a child per D
for a sweep (or per data × model shape, for a sweep of the meshes of one D).

The page and the CLI pass a `TrackingCallback` to `train.loop.train` / `train.loop.sweep`; it writes
each chunk's losses as they arrive (so an interrupted run keeps what it learned), the figures when
the run ends, and ends every run it started: FINISHED, FAILED on an error, KILLED when stopped. A run
whose loss stopped being finite ends FAILED with the metric `diverged_at_step`.
Tracking never costs the user the training: if even the fallback store fails, the training goes on,
and `error` says what was not recorded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import jax

from pmap_core.tracking import DIVERGED_METRIC, FINISHED, RunTracker, redact_uri, runtime_tags, status_after
from pmap_core.train import programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import Callback, Diverged, ScalingResult, SweepPoint, SweepResult, TrainResult
from pmap_core.train.mesh import DATA_AXIS, MODEL_AXIS
from pmap_core.train.settings import settings_of

log = logging.getLogger(__name__)


def run_params(config: TrainConfig) -> dict[str, Any]:
    """A run's MLflow params: the settings every run has (`TrainConfig`'s own), then only those of its impl's programs
    (`programs.own_settings`), each under its field's name (the names runs have always logged, so the Experiments page
    compares runs from before and after), a registered program's (`options`) under its own; then the mesh and what
    else follows from them (`TrainConfig.derived`)."""
    names = [f.name for f in settings_of(TrainConfig)] + programs.own_settings(config.impl)
    settings = {name: getattr(config, name) for name in names if hasattr(config, name)}
    return {**settings, **dict(config.options), **config.derived(), "processes": jax.process_count()}


def scaling_metrics(scaling_ratio: float, efficiency: float, hardware_ceiling: float,
                    baseline_throughput: float) -> dict[str, float]:
    """S(D) and what it is made of; `baseline_throughput` is the steady throughput of D = 1."""
    return {"scaling_ratio": scaling_ratio, "efficiency": efficiency, "hardware_ceiling": hardware_ceiling,
            "baseline_throughput": baseline_throughput}


def result_metrics(result: TrainResult) -> dict[str, float]:
    """The figures of one run, under the names MLflow, the CLI's JSON and README use (with those its
    program adds: `programs.extras`)."""
    metrics = {"throughput": result.throughput, "steady_throughput": result.steady_throughput,
               "step_time_s": result.step_time_s, "steady_step_time_s": result.steady_step_time_s,
               "compile_time_s": result.compile_time_s, "wall_time_s": result.wall_time_s,
               "final_loss": result.final_loss, "replica_max_diff": result.replica_max_diff, **result.memory}
    extras = programs.extras(result.config.impl)
    metrics.update(extras.metrics(result.config))
    metrics.update(extras.trained(result.config, result.params))
    if result.scaling is not None:
        s = result.scaling
        metrics.update(scaling_metrics(s.scaling_ratio, s.efficiency, s.hardware_ceiling, s.baseline_throughput))
    return metrics


def point_metrics(point: SweepPoint) -> dict[str, float]:
    return scaling_metrics(point.scaling_ratio, point.efficiency, point.hardware_ceiling, point.baseline_throughput)


# What sets a run apart besides its model, D and B, of the settings every run has, where it differs from
# TrainConfig's defaults, each as a short label in the run's name (a program's settings declare their own labels).
_NAMED_SETTINGS = (("layers", "L{}".format), ("d_model", "d{}".format), ("heads", "h{}".format),
                   ("seq_len", "T{}".format), ("vocab", "V{}".format), ("scaling", str))
_PLAIN = TrainConfig()


def mesh_name(mesh: Mapping[str, int]) -> str:
    """A run's mesh (`TrainConfig.mesh`) where it splits over more than data: "4x2model", "2x4stage", "1x4seq" (the
    data axis's size, then each other axis's size and name), or ""."""
    others = [f"{size}{axis}" for axis, size in mesh.items() if axis != DATA_AXIS]
    return "x".join([str(mesh[DATA_AXIS]), *others]) if others else ""


def setup_name(config: TrainConfig) -> str:
    """The settings a run's name shows after its model and implementation: its programs' settings declared with a
    label, away from their defaults ("adam-zero2-K4", `train.settings.setting`), its other settings away from theirs,
    its mesh ("2x4stage"), then the labels its program adds (`programs.extras`: "M8-1f1b" for micro-batches and a
    schedule), or ""."""
    parts = [field.metadata["label"].format(getattr(value, field.name)) for value in config.settings
             for field in dataclasses.fields(value)
             if "label" in field.metadata and getattr(value, field.name) != field.default]
    parts += [label(getattr(config, field)) for field, label in _NAMED_SETTINGS
              if getattr(config, field) != getattr(_PLAIN, field)]
    parts.append(mesh_name(config.mesh))
    parts += programs.extras(config.impl).setup(config)
    return "-".join(part for part in parts if part)


def run_name(config: TrainConfig) -> str:
    """"mlp-jit-adam-zero2-D8-B256": what tells the run apart from the others in MLflow's lists."""
    return "-".join(part for part in (config.model, config.impl, setup_name(config),
                                      f"D{config.devices}", f"B{config.global_batch}") if part)


def sweep_name(config: TrainConfig, runs: Sequence[TrainConfig]) -> str:
    """A sweep's parent: "sweep-mlp-pmap-strong", "sweep-linear-pmap+shard_map+jit-strong", or for the
    shapes of one D "sweep-meshes-mlp-D8-B256" (data × model) and "sweep-meshes-seq-transformer-D8-B256"
    (data × seq)."""
    if is_mesh_sweep(runs):
        axis = programs.extras(runs[0].impl).mesh_axis
        over = "" if axis == MODEL_AXIS else f"{axis}-"
        return f"sweep-meshes-{over}{config.model}-D{config.devices}-B{config.global_batch}"
    impls = "+".join(dict.fromkeys(run.impl for run in runs))
    setup = setup_name(dataclasses.replace(config, scaling=_PLAIN.scaling))
    return "-".join(part for part in ("sweep", config.model, impls, setup, config.scaling) if part)


def is_mesh_sweep(runs: Sequence[TrainConfig]) -> bool:
    """A sweep of the data × model (or data × seq) shapes of one D (`concepts.mesh_2d.sweep_meshes`), not of D:
    every run's program runs on such a mesh (`programs.extras(impl).mesh`)."""
    return bool(runs) and all(programs.extras(run.impl).mesh is not None and run.devices == runs[0].devices
                              for run in runs)


def mesh_of(config: TrainConfig) -> tuple[str, int]:
    """A run's data × model (or data × seq) mesh in a sweep of meshes: its label ("4x2") and the second axis's
    size."""
    mesh = programs.extras(config.impl).mesh
    if mesh is None:
        raise ValueError(f"impl {config.impl!r} runs on no data × model mesh")
    return mesh(config)


# A sweep's parent is no training run: it draws its children's figures as curves, under names of its own
# so that no comparison of runs (MLflow's, the Experiments page's) takes it for one. Against D (step = D;
# "by_D/pmap/…" once per implementation when it compares them), or for the shapes of one D against the size of
# the axis beside data ("by_<axis>_axis/…", the axis a program's `RunExtras.mesh_axis` names, with step = its size).
SWEEP_CURVES = ("throughput", "steady_throughput", "scaling_ratio", "efficiency")
MESH_CURVES = ("throughput", "steady_throughput", "steady_step_time_s", "comm_bytes_per_step",
               "param_bytes_per_device")
BY_DEVICES = "by_D/"


@dataclasses.dataclass(frozen=True)
class TrackedTraining:
    result: TrainResult
    run_id: str | None              # the run's id in `tracking_uri` (None when `error`)
    tracking_uri: str               # where the run was written (the fallback store if it was used)
    fell_back_to: str | None        # set when the configured store was unreachable
    logging_s: float                # time spent writing to MLflow
    error: str | None = None        # why the run could not be recorded at all (even in the fallback)

    @property
    def scaling(self) -> ScalingResult | None:
        return self.result.scaling


@dataclasses.dataclass(frozen=True)
class TrackedSweep:
    sweep: SweepResult
    run_id: str | None              # the parent run (None when `error`)
    child_run_ids: tuple[str | None, ...]  # one per device count, in the order of sweep.points
    tracking_uri: str
    fell_back_to: str | None
    logging_s: float
    error: str | None = None


class TrackingCallback(Callback):
    """Records runs through a `RunTracker`; `tracked(result)` / `tracked_sweep(sweep)` say where."""

    def __init__(self, tracker: RunTracker, lab: str = "training", extra_tags: Mapping[str, str] | None = None):
        self.tracker = tracker
        self.tags = {**runtime_tags(lab), **(extra_tags or {})}  # extra: e.g. a student's class code and name
        self.logging_s = 0.0
        self._open: list[str] = []      # runs started and not yet ended, innermost last
        self._runs: list[str] = []      # every training run started, in order
        self._parent: str | None = None
        self._sweep_impls: tuple[str, ...] = ()  # the implementations a sweep compares
        self._mesh_sweep = False        # the sweep compares data × model shapes of one D
        self._logged = 0                # losses of the current run already written
        self.error: str | None = None   # set when the tracker failed: nothing more is written

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Time a write; a tracker that fails (every store did) stops tracking, never the training."""
        start = time.perf_counter()
        try:
            yield
        except Exception as error:  # noqa: BLE001 - the user gets the training; `error` says what is missing
            self.error = redact_uri(f"{type(error).__name__}: {error}")[:300]
            log.error("tracking failed, the training goes on unrecorded: %s", self.error)
        finally:
            self.logging_s += time.perf_counter() - start

    def _start(self, name: str, params: dict[str, Any], tags: dict[str, str]) -> str:
        parent = self._open[-1] if self._open else None
        run_id = self.tracker.start_run(name, params, tags, parent_run_id=parent)
        self._open.append(run_id)
        return run_id

    def _end(self, status: str) -> None:
        self.tracker.end_run(self._open.pop(), status)

    def sweep_started(self, config: TrainConfig, runs: Sequence[TrainConfig]) -> None:
        if self.error:
            return
        self._sweep_impls = tuple(dict.fromkeys(run.impl for run in runs))
        self._mesh_sweep = is_mesh_sweep(runs)
        params = {**run_params(config), "impl": ",".join(self._sweep_impls),
                  "device_counts": ",".join(str(d) for d in dict.fromkeys(run.devices for run in runs))}
        tags = {**self.tags, "sweep": "true"}
        if self._mesh_sweep:
            params["meshes"] = ",".join(mesh_of(run)[0] for run in runs)
            params["mesh_axis"] = programs.extras(config.impl).mesh_axis
            tags["sweep_over"] = "meshes"
        with self._writing():
            self._parent = self._start(sweep_name(config, runs), params, tags)

    def run_started(self, config: TrainConfig) -> None:
        if self.error:
            return
        self._logged = 0
        with self._writing():
            self._runs.append(self._start(run_name(config), run_params(config), self.tags))

    def chunk_done(self, steps_done: int, losses: Sequence[float]) -> None:
        if self.error:
            return
        with self._writing():
            self.tracker.log_series(self._open[-1], "loss", losses[self._logged:], start_step=self._logged)
        self._logged = steps_done

    def run_ended(self, result: TrainResult) -> None:
        if self.error:
            return
        with self._writing():
            self.tracker.log_metrics(self._open[-1], result_metrics(result))
            if self._parent is None:  # a sweep's run ends once its S(D) is known (point_done)
                self._end(FINISHED)

    def point_done(self, point: SweepPoint, index: int, total: int) -> None:
        if self.error:
            return
        with self._writing():
            self.tracker.log_metrics(self._open[-1], point_metrics(point))
            self._end(FINISHED)
            figures = {**result_metrics(point.result), **point_metrics(point)}
            if self._mesh_sweep:
                axis = programs.extras(point.result.config.impl).mesh_axis  # by_model_axis/…, by_seq_axis/…
                curves = {f"by_{axis}_axis/{name}": figures[name] for name in MESH_CURVES if name in figures}
                self.tracker.log_metrics(self._open[-1], curves, step=mesh_of(point.result.config)[1])
                return
            impl = f"{point.result.config.impl}/" if len(self._sweep_impls) > 1 else ""
            curves = {f"{BY_DEVICES}{impl}{name}": figures[name] for name in SWEEP_CURVES}
            self.tracker.log_metrics(self._open[-1], curves, step=point.devices)

    def sweep_ended(self, sweep: SweepResult) -> None:
        if self.error:
            return
        with self._writing():
            self._end(FINISHED)

    def stopped(self, error: BaseException) -> None:
        if self._open and not self.error:
            with self._writing():
                if isinstance(error, Diverged) and self._open[-1] != self._parent:  # a sweep's parent only ends
                    self.tracker.log_metrics(self._open[-1], {DIVERGED_METRIC: error.step})
                self._end(status_after(error))

    def _store_id(self, run_id: str | None) -> str | None:
        try:
            return self.tracker.store_run_id(run_id) if run_id else None
        except KeyError:  # the run was never created: the tracker had failed
            return None

    def tracked(self, result: TrainResult) -> TrackedTraining:
        return TrackedTraining(result, self._store_id(self._runs[-1] if self._runs else None),
                               self.tracker.active_uri, self.tracker.fell_back_to, self.logging_s, self.error)

    def tracked_sweep(self, sweep: SweepResult) -> TrackedSweep:
        children = self._runs[-len(sweep.points):] if len(self._runs) >= len(sweep.points) else []
        return TrackedSweep(sweep, self._store_id(self._parent),
                            tuple(self._store_id(run) for run in children) or (None,) * len(sweep.points),
                            self.tracker.active_uri, self.tracker.fell_back_to, self.logging_s, self.error)
