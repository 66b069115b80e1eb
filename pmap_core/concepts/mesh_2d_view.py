"""What the 2-D mesh lab draws from `concepts.mesh_2d`: the shapes as link ids, settings that fit every
shape of D, the compiled program of one shape (its arrays' types and its collectives by mesh axis), the
sweep as rows, and which shape won on this machine and why — every figure read from what ran."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from pmap_core.concepts import mesh_2d
from pmap_core.train import models, programs, tensor
from pmap_core.train.config import TrainConfig
from pmap_core.train.mesh import MODEL_AXIS
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError

HIDDEN = 32        # the hidden width the lab starts from, rounded up to a multiple of D
BATCH = 256        # the global batch it starts from, rounded up to a multiple of D
AXES = (mesh_2d.DATA, mesh_2d.MODEL)


def shape_id(data: int, model: int) -> str:
    """A shape as it travels in a link: (4, 2) → "4x2"."""
    return f"{data}x{model}"


def parse_shape(shape: str) -> tuple[int, int]:
    data, _, model = shape.partition("x")
    if not (data.isdigit() and model.isdigit()):
        raise LabInputError("unknown_mesh_shape", "a mesh shape is written data x model (4x2), got {shape!r}",
                            shape=shape)
    return int(data), int(model)


def round_up(value: int, devices: int) -> int:
    """The least multiple of `devices` at least `value`: every model axis of D then divides it."""
    return devices * math.ceil(value / devices)


def default_shape(shapes: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The shape a visitor starts from: the squarest one with a model axis of more than one device
    (8 → 4 × 2; 3 → 1 × 3), else the only one (1 → 1 × 1)."""
    split = [s for s in shapes if s[1] > 1] or list(shapes)
    return min(split, key=lambda s: (abs(math.log(s[0] / s[1])), -s[0]))


def two_axes_possible(devices: int) -> bool:
    """Whether D has a shape with more than one device on both axes (4, 6, 8, …; not 1, 2, 3, 5)."""
    return any(devices % a == 0 and 1 < a < devices for a in range(2, devices))


# --- one shape's compiled program -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ProgramView:
    config: TrainConfig
    types: dict[str, str]                        # jax.typeof of every array the step takes
    collectives: tuple[mesh_2d.CollectiveRow, ...]
    param_bytes: int                             # parameter bytes one device holds, read from its shards

    @property
    def comm_bytes(self) -> float:
        return sum(row.bytes_per_step for row in self.collectives)

    @property
    def bytes_data(self) -> float:
        """Bytes one device sends per step over the data axis (its collectives' replica groups)."""
        return self.bytes_on(mesh_2d.DATA)

    @property
    def bytes_model(self) -> float:
        return self.bytes_on(mesh_2d.MODEL)

    def bytes_on(self, axis: str) -> float:
        return sum(row.bytes_per_step for row in self.collectives if row.axis == axis)


def tensor_config(config: TrainConfig, data: int, model: int) -> TrainConfig:
    """`config` (the MLP or the transformer) as the tensor program on a data × model mesh, checked
    (`train.plan.validate`: a model axis that does not divide the split widths is `mesh_not_divisible`)."""
    return validate(dataclasses.replace(config, impl=programs.impl_of_axis(MODEL_AXIS), devices=data * model,
                                        mesh_model=model))


def program_view(config: TrainConfig) -> ProgramView:
    """The compiled program of `config` (a validated tensor config): its arrays' types and the parameter
    bytes one device holds, read from the placed arrays, and its collectives per mesh axis, read from its HLO."""
    program = programs.build(config.program_spec(min(config.chunk, config.steps)))
    data = models.make_data(config.model, config.global_batch, config.features, config.seed, config.dims)
    initial = models.init_params(config.model, config.features, config.hidden, config.seed, config.layers,
                                 config.dims)
    carry, x, y, _ = program.place(initial, data, config.learning_rate)
    return ProgramView(config, tensor.array_types(program, carry, x, y), tuple(mesh_2d.collective_rows(program)),
                       program.held_bytes(carry).params)


def shape_program(mesh_id: str, batch: int, features: int, hidden: int) -> ProgramView:
    """`program_view` of the MLP (`features` → `hidden` → 1) with a global batch of `batch` on the mesh a
    link names "XxY" (data × model, e.g. "2x4"): what a worksheet step asks of one shape."""
    data, model = parse_shape(mesh_id)
    return program_view(tensor_config(TrainConfig(model="mlp", global_batch=batch, features=features,
                                                  hidden=hidden, steps=1, chunk=1), data, model))


def collective_table(view: ProgramView) -> list[dict[str, Any]]:
    return [{"kind": row.kind, "axis": row.axis, "shapes": ", ".join(row.shapes), "group_size": row.group_size,
             "groups": row.groups, "runs_per_step": row.runs_per_step, "bytes_per_step": row.bytes_per_step}
            for row in view.collectives]


# --- the sweep -----------------------------------------------------------------------------------------


def collectives_per_step(run: mesh_2d.MeshRun) -> float:
    """Collectives one step runs among more than one device."""
    return sum(row.runs_per_step for row in run.collectives if row.group_size > 1)


def rendezvous_per_step(run: mesh_2d.MeshRun, simulated: bool) -> float:
    """How often a step's devices meet: on simulated CPU devices once per array a collective carries (XLA:CPU
    runs each operand of a tuple all-reduce as its own rendezvous, `mesh_2d.predicted_winner`), elsewhere
    once per collective."""
    return sum(row.runs_per_step * (len(row.shapes) if simulated else 1)
               for row in run.collectives if row.group_size > 1)


def sweep_rows(sweep: mesh_2d.MeshSweep) -> list[dict[str, Any]]:
    """One row per shape: throughput, step time, bytes sent (all, and per mesh axis), collectives per
    step, parameter bytes per device, the final loss."""
    rows = []
    for run in sweep.runs:
        f = run.result.footprint
        by_axis = {axis: sum(r.bytes_per_step for r in run.collectives if r.axis == axis) for axis in AXES}
        rows.append({"shape": shape_id(run.data, run.model), "data": run.data, "model": run.model,
                     "steady_throughput": run.result.steady_throughput,
                     "step_time_us": run.result.steady_step_time_s * 1e6,
                     "comm_bytes_per_step": f.comm_bytes_per_step, "bytes_data": by_axis[mesh_2d.DATA],
                     "bytes_model": by_axis[mesh_2d.MODEL], "collectives_per_step": collectives_per_step(run),
                     "rendezvous_per_step": rendezvous_per_step(run, sweep.simulated),
                     "param_bytes_per_device": f.param_bytes_per_device, "final_loss": run.result.final_loss})
    return rows


def bytes_by_axis_rows(sweep: mesh_2d.MeshSweep) -> list[dict[str, Any]]:
    """Bytes each device sends per step, one row per shape and mesh axis (for a stacked chart)."""
    return [{"shape": row["shape"], "axis": axis, "bytes": row[f"bytes_{axis}"], "order": index}
            for row in sweep_rows(sweep) for index, axis in enumerate(AXES)]


CLOSE = 0.05  # the winner less than 5% ahead of the next shape: a gap a re-measurement can reverse
FACTORS = ("rendezvous", "bytes", "collectives")  # what can set two shapes apart, per step


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Which shape won on this machine, the slowest, and what sets the two apart, from what ran."""

    winner: str
    throughput: float
    slowest: str
    speedup: float                # the winner's throughput over the slowest shape's
    runner_up: str                # the next fastest shape ("" with one shape)
    lead: float                   # the winner's throughput over the runner-up's, minus 1
    counts: dict[str, tuple[float, float]]   # per factor: (the winner's per step, the slowest's)
    separates: tuple[str, ...]    # the factors of FACTORS in which the winner had fewer than the slowest
    shapes: int
    simulated: bool
    cores: int
    devices: int

    @property
    def close(self) -> bool:
        return self.shapes > 1 and self.lead < CLOSE


def verdict(sweep: mesh_2d.MeshSweep) -> Verdict:
    rows = sorted(sweep_rows(sweep), key=lambda r: -r["steady_throughput"])
    best, worst = rows[0], rows[-1]
    second = rows[1] if len(rows) > 1 else best
    names = {"rendezvous": "rendezvous_per_step", "bytes": "comm_bytes_per_step", "collectives": "collectives_per_step"}
    counts = {factor: (best[column], worst[column]) for factor, column in names.items()}
    separates = tuple(f for f in FACTORS if counts[f][0] < counts[f][1] * (0.999 if f == "bytes" else 1))
    return Verdict(best["shape"], best["steady_throughput"], worst["shape"],
                   best["steady_throughput"] / worst["steady_throughput"], second["shape"] if len(rows) > 1 else "",
                   best["steady_throughput"] / second["steady_throughput"] - 1, counts, separates, len(rows),
                   sweep.simulated, sweep.cores, sweep.config.devices)


def prediction_rows(prediction: mesh_2d.Prediction) -> list[dict[str, Any]]:
    return [{"shape": shape_id(s.data, s.model), "comm_bytes": s.comm_bytes, "collectives": s.collectives,
             "rendezvous": s.rendezvous, "compute_us": s.compute_s * 1e6, "send_us": s.send_s * 1e6,
             "comm_us": s.comm_s * 1e6,
             "step_us": s.step_s * 1e6, "ring_step_us": s.ring_step_s * 1e6} for s in prediction.shapes]
