"""The planner at the lab's own scale: its predictions for the lab's transformer beside the compiled programs.

`lab_plan(D)` ranks only what the lab can run on D devices (`lab_layouts`, and of each layout only the variants
`runnable` accepts); `train_settings` / `train_command` turn a plan into the `TrainConfig` fields and the
`python -m pmap_core train …` argv that run it; `check_plan` compiles that program for one step and sets the
planner's memory and bytes per mesh axis beside what the compiler reports (`CheckedPlan`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from typing import Any

import numpy as np

from pmap_core import hlo
from pmap_core.concepts.planner import search
from pmap_core.concepts.planner.predict import (
    REMAT,
    STRATEGY_OF_STAGE,
    Assumptions,
    Layout,
    Prediction,
    Workload,
    predict,
)
from pmap_core.concepts.planner.presets import HARDWARE, Hardware, ModelShape, divisors
from pmap_core.train import config as train_config
from pmap_core.train import footprint, plan, programs, transformer
from pmap_core.train.config import TrainConfig
from pmap_core.train.mesh import AXES, DATA_AXIS, EXPERT_AXIS, SEQ_AXIS
from pmap_core.train.program import PlannedLayout
from pmap_core.train.settings import declarations, settings_of
from pmap_core.validation import LabInputError, check_devices, check_int

# The lab's programs: attention keeps its score-sized tensors; the step writes new parameters beside the ones it reads;
# the vocabulary is whole on every device of the model axis; the pipeline is `train.pipeline`.
LAB_ASSUMPTIONS = Assumptions(flash_attention=False, donated_state=False, vocab_parallel=False, lab_pipeline=True)
LAB_OPTIMIZER = "sgd"        # what the lab's programs train a plan with (TrainConfig's default)
CHECK_STEPS = 1              # one step per compiled call
LAB_DIMS = transformer.Dims()  # the transformer's default sizes


def lab_model(dims: transformer.Dims = LAB_DIMS, layers: int = 2) -> ModelShape:
    """The lab's transformer (`train.transformer`) as the planner's shape: a GPT MLP of 4·d_model with biases,
    LayerNorm's gain and bias, a learned position table, an untied head with a bias; experts as `dims` says."""
    _check_dims(dims, layers)
    return ModelShape("lab", "the lab's transformer", layers, dims.d_model, transformer.MLP_RATIO * dims.d_model,
                      dims.heads, dims.heads, dims.vocab, "train/transformer.py", gated_mlp=False, norm_bias=True,
                      biases=True, positions=dims.seq_len, tied=False, experts=dims.experts,
                      top_k=dims.top_k if dims.experts else 0)


def lab_workload(global_batch: int = 256, dims: transformer.Dims = LAB_DIMS) -> Workload:
    """One lab step: `global_batch` sequences of dims.seq_len tokens, float32, SGD."""
    check_int("global_batch", global_batch, 1, train_config.MAX_BATCH)
    _check_dims(dims, 2)
    return Workload(global_batch, dims.seq_len, precision="float32", optimizer=LAB_OPTIMIZER)


# ---- what the lab can run ----

def _check_dims(dims: transformer.Dims, layers: int) -> None:
    """The transformer's sizes within the lab's limits (`train.config`)."""
    check_int("layers", layers, 2, train_config.MAX_LAYERS)
    check_int("d_model", dims.d_model, 1, train_config.MAX_D_MODEL)
    check_int("heads", dims.heads, 1, train_config.MAX_HEADS)
    check_int("seq_len", dims.seq_len, 1, train_config.MAX_SEQ_LEN)
    check_int("vocab", dims.vocab, train_config.MIN_VOCAB, train_config.MAX_VOCAB)
    check_int("experts", dims.experts, 0, train_config.MAX_EXPERTS)


def _check_shape(devices: int, global_batch: int | None, dims: transformer.Dims, layers: int) -> int:
    """The integer inputs checked before anything is built (devices: those JAX has); the batch, or D's default."""
    check_devices(devices)
    _check_dims(dims, layers)
    if global_batch is None:
        return train_config.default_batch(devices)
    return check_int("global_batch", global_batch, 1, train_config.MAX_BATCH)


def lab_layouts(devices: int, global_batch: int | None = None, dims: transformer.Dims = LAB_DIMS,
                layers: int = 2) -> list[Layout]:
    """The layouts of `devices` devices the lab has a program for: data alone; data × model (`train.tensor`, with
    sequence parallelism off and on); data × seq (`train.context`); data × stage (`train.pipeline`); data × expert
    (`train.experts`, a model with experts only). Each with at least one variant `runnable` accepts."""
    batch = _check_shape(devices, global_batch, dims, layers)
    found = [Layout(data=devices)]
    for size in divisors(devices)[1:]:
        rest = devices // size
        found += [Layout(data=rest, model=size, sequence_parallel=False), Layout(data=rest, model=size),
                  Layout(data=rest, seq=size), Layout(data=rest, stage=size, remat="full")]
        if dims.experts:
            found.append(Layout(data=rest, expert=size))
    model = lab_model(dims, layers)
    workload = lab_workload(batch, dims)
    return [layout for layout in found
            if search.variants(model, layout, workload, runnable=functools.partial(
                runnable, devices=devices, global_batch=batch, dims=dims, layers=layers))]


def _not_runnable(layout: Layout) -> LabInputError:
    return LabInputError("plan_not_runnable", "the lab has no program for {layout}: it runs data parallelism alone "
                         "(ZeRO stages 0–3 with micro-batches as accumulation, ZeRO-3 recomputing each layer: remat "
                         "full; or a remat policy with ZeRO-0 and one micro-batch), or with one more axis, ZeRO-0: "
                         "model (tensor parallelism, sequence parallelism on or off), seq (context parallelism), "
                         "expert (a model with experts), one micro-batch and no remat; or stage (a pipeline, which "
                         "recomputes each stage's forward: remat full, v = 1)", layout=layout.label())


def _check_layout(layout: Layout, devices: int) -> None:
    """A layout's fields in range (before anything reads them), its devices `devices`."""
    if not isinstance(layout, Layout):
        raise LabInputError("plan_not_runnable", "the lab has no program for {layout}", layout=repr(layout)[:80])
    for axis in AXES:
        check_int(axis, layout.size(axis), 1, search.MAX_PLAN_DEVICES)
    check_int("zero", layout.zero, 0, len(STRATEGY_OF_STAGE) - 1)
    check_int("microbatches", layout.microbatches, 1, train_config.MAX_MICROBATCHES)
    check_int("virtual", layout.virtual, 1, search.MAX_VIRTUAL)
    if layout.remat not in REMAT or not isinstance(layout.sequence_parallel, bool):
        raise _not_runnable(layout)
    if layout.devices != devices:
        raise LabInputError("plan_devices", "layout {layout} uses {used} devices, not {devices}",
                            layout=layout.label(), used=layout.devices, devices=devices)


def train_settings(layout: Layout, devices: int, global_batch: int | None = None,
                   dims: transformer.Dims = LAB_DIMS, layers: int = 2) -> dict[str, object]:
    """The `TrainConfig` fields that run `layout` on `devices` devices in the lab (`train.plan.validate` checks them
    further: `runnable`), or a LabInputError: plan_devices where the layout's devices are not `devices`,
    plan_not_runnable for a layout the lab has no program for.

    Each program says which layouts it runs and with what settings (`Program.plans`, in the registry's order): data
    alone with ZeRO-0 and one micro-batch the replicated step (impl pmap), other ZeRO stages or micro-batches the
    sharded state (impl jit), a model axis tensor parallelism, seq context parallelism, expert (or any layout of a
    model with experts) expert parallelism, stage a pipeline."""
    batch = _check_shape(devices, global_batch, dims, layers)
    _check_layout(layout, devices)
    axes = [axis for axis in AXES if axis != DATA_AXIS and layout.size(axis) > 1]
    if len(axes) > 1 or layout.virtual != 1:
        raise _not_runnable(layout)
    axis = axes[0] if axes else None
    settings: dict[str, object] = {
        "model": "transformer", "devices": devices, "global_batch": batch, "layers": layers,
        "d_model": dims.d_model, "heads": dims.heads, "seq_len": dims.seq_len, "vocab": dims.vocab,
        **{name: getattr(TrainConfig(), name) for name in PROGRAM_SETTINGS}}
    if dims.experts:
        settings.update(experts=dims.experts, top_k=dims.top_k, capacity_factor=dims.capacity_factor)
    planned = PlannedLayout(axis, layout.size(axis) if axis else 1, layout.zero, layout.microbatches, layout.remat,
                            layout.sequence_parallel, dims.experts)
    for entry in programs.REGISTRY.values():
        answer = entry.plans(planned)
        if answer is not None:
            return {**settings, "impl": entry.selected_by, **answer}
    raise _not_runnable(layout)


# The settings that say which program runs a plan, and how: in every `train_settings`, at TrainConfig's defaults
# where the plan leaves them. The programs' own come from their declarations (importing `programs` made them).
PROGRAM_SETTINGS = ("impl", "remat", *declarations())


def train_config_of(layout: Layout, devices: int, global_batch: int | None = None,
                    dims: transformer.Dims = LAB_DIMS, layers: int = 2, steps: int = CHECK_STEPS
                    ) -> TrainConfig:
    """The checked `TrainConfig` of `train_settings` (`steps` steps, one per compiled call)."""
    settings = train_settings(layout, devices, global_batch, dims, layers)
    return plan.validate(TrainConfig(**settings, steps=steps, chunk=steps))


@functools.lru_cache(maxsize=4096)
def runnable(layout: Layout, devices: int, global_batch: int | None = None,
             dims: transformer.Dims = LAB_DIMS, layers: int = 2) -> bool:
    """Whether the lab can run this variant: `train_settings` gives its settings and `validate` accepts them (its
    seq axis all-gathers K and V: a Ulysses variant is not the program it would run)."""
    if layout.seq > 1 and layout.context == "ulysses":
        return False
    try:
        train_config_of(layout, devices, global_batch, dims, layers)
    except LabInputError:
        return False
    return True


def lab_plan(devices: int, hardware: Hardware = HARDWARE["h100"], assumptions: Assumptions = LAB_ASSUMPTIONS,
             global_batch: int | None = None, dims: transformer.Dims = LAB_DIMS, layers: int = 2
             ) -> search.PlanResult:
    """The planner over what the lab can run on `devices` devices (`lab_layouts`, their `runnable` variants)."""
    batch = _check_shape(devices, global_batch, dims, layers)
    return search.plan(lab_model(dims, layers), hardware, devices, lab_workload(batch, dims), assumptions,
                       layouts=lab_layouts(devices, batch, dims, layers),
                       runnable=functools.partial(runnable, devices=devices, global_batch=batch, dims=dims,
                                                  layers=layers))


# ---- the compiled program beside the prediction ----

@dataclasses.dataclass(frozen=True)
class CheckedPlan:
    """One plan's prediction beside its program compiled for one step, per device."""

    layout: Layout
    prediction: Prediction
    compiled_peak_bytes: int | None        # `train.footprint.peak_bytes`: arguments + outputs − aliased + temporaries
    predicted_bytes: dict[str, float]       # per mesh axis: the planner's ring bytes per step
    hlo_bytes: dict[str, float]             # per mesh axis: read from the compiled HLO (`axis_bytes`)
    reasons: tuple[str, ...]                # where they differ (`REASONS`)

    @property
    def memory_ratio(self) -> float | None:
        """compiled / predicted memory."""
        if self.compiled_peak_bytes is None or not self.prediction.memory.total:
            return None
        return self.compiled_peak_bytes / self.prediction.memory.total

    @property
    def axis_ratios(self) -> dict[str, float | None]:
        """Per mesh axis with bytes on either side: HLO / predicted (None where the planner predicts none)."""
        axes = [axis for axis in AXES if self.predicted_bytes.get(axis) or self.hlo_bytes.get(axis)]
        return {axis: (self.hlo_bytes.get(axis, 0.0) / self.predicted_bytes[axis]
                       if self.predicted_bytes.get(axis) else None) for axis in axes}


def mesh_shape(layout: Layout) -> tuple[int, ...]:
    """Devices along each of `AXES` (1 for an axis the layout does not use): device id k of the program sits at
    `np.unravel_index(k, mesh_shape)`, as `train.mesh.build_mesh` lays the first devices out."""
    return tuple(layout.size(axis) for axis in AXES)


def group_axis(group: tuple[int, ...], layout: Layout, kind: str = "") -> str | None:
    """The mesh axis a collective over a group of device ids runs on, as the planner counts it: `data` for one whose
    members differ in their data position, and for an all-reduce over the whole group that holds the same parameters
    (data · seq · expert: the gradient's, whatever its data axis); else the axis whose coordinate differs between its
    members, the outermost where several do; None for a group of one device."""
    shape = mesh_shape(layout)
    coordinates = np.array(np.unravel_index(np.asarray(group), shape)).T
    varies = [axis for index, axis in enumerate(AXES) if len(set(coordinates[:, index])) > 1]
    replicas = [axis for axis in (DATA_AXIS, SEQ_AXIS, EXPERT_AXIS) if layout.size(axis) > 1]
    if kind == "all-reduce" and varies and sorted(varies) == sorted(replicas):
        return DATA_AXIS
    return varies[0] if varies else None


def axis_bytes(text: str, layout: Layout, steps: int = CHECK_STEPS) -> tuple[dict[str, float], dict[str, float]]:
    """(bytes per mesh axis, of them the loss's) one device sends per step, on average over the devices, read from
    compiled HLO: each collective's ring bytes (`train.footprint.CollectiveRun.ring_bytes`) times its runs per step,
    on the axis its replica groups run on (`group_axis`); a collective-permute's operand once for each (source,
    target) pair, over the D devices. The loss's collectives are the ones that carry a single value."""
    devices = layout.devices
    permutes = {m["name"]: m["rest"] for m in map(_PERMUTE.match, text.splitlines()) if m}
    found: dict[str, float] = {}
    loss: dict[str, float] = {}
    for run in footprint.collective_runs(text, (steps,)):
        c = run.collective
        if c.kind == "collective-permute":
            listed = _PAIRS.search(permutes.get(c.name, ""))
            pairs = re.findall(r"\{(\d+),(\d+)\}", listed["pairs"]) if listed else []
            for source, target in pairs:
                if axis := group_axis((int(source), int(target)), layout):
                    found[axis] = found.get(axis, 0.0) + c.result_bytes * run.runs_per_call / steps / devices
            continue
        axis = group_axis((c.groups or (tuple(range(devices)),))[0], layout, c.kind)
        if axis is None:
            continue
        sent = run.ring_bytes * run.runs_per_call / steps
        found[axis] = found.get(axis, 0.0) + sent
        if sum(_shape_elements(shape) for shape in c.shapes) == 1:
            loss[axis] = loss.get(axis, 0.0) + sent
    return found, loss


_PAIRS = re.compile(r"source_target_pairs=\{(?P<pairs>[\d,{}]*)\}")
_PERMUTE = re.compile(r"^\s*(?:ROOT )?%?(?P<name>[\w.\-]+) = .*? collective-permute(?:-start)?\((?P<rest>.*)$")


def _shape_elements(shape: str) -> int:
    return math.prod(int(d) for d in shape.split("[", 1)[1].rstrip("]").split(",") if d)


REASONS = ("memory_above", "memory_below", "bytes_above", "bytes_below", "loss", "padding", "fused_buffers",
           "broadcast_buffers")
MEMORY_TOLERANCE = 0.10   # a memory ratio further from 1 than this is a reason
BYTES_TOLERANCE = 0.05    # an axis's bytes ratio further from 1 than this is a reason


def _reasons(checked_memory: float | None, predicted_memory: float, predicted: dict[str, float],
             found: dict[str, float], loss: dict[str, float], padding: int, fused: bool,
             broadcasts: bool) -> tuple[str, ...]:
    """Codes for where the compiled program and the prediction differ (`REASONS`): the memory or some axis's bytes
    above or below the prediction beyond its tolerance; and what the planner leaves out that the program has: the
    loss's collectives (a value each), zeros padding a flat buffer, the gradient flattened into one buffer for its
    collective, a broadcast XLA writes into a buffer of its own (elsewhere fused into the operation that reads it)."""
    codes = []
    if checked_memory is not None and predicted_memory:
        ratio = checked_memory / predicted_memory
        if ratio > 1 + MEMORY_TOLERANCE:
            codes.append("memory_above")
        elif ratio < 1 - MEMORY_TOLERANCE:
            codes.append("memory_below")
    ratios = [found.get(axis, 0.0) / predicted[axis] if predicted.get(axis) else math.inf
              for axis in AXES if predicted.get(axis) or found.get(axis)]
    if any(r > 1 + BYTES_TOLERANCE for r in ratios):
        codes.append("bytes_above")
    if any(r < 1 - BYTES_TOLERANCE for r in ratios):
        codes.append("bytes_below")
    if any(loss.values()):
        codes.append("loss")
    if padding:
        codes.append("padding")
    if fused:
        codes.append("fused_buffers")
    if broadcasts:
        codes.append("broadcast_buffers")
    return tuple(codes)


def _padding(program: Any) -> int:
    """Zeros in the program's flat buffers, in values: a sharded state's layers padded to a multiple of D
    (`zero.FlatLayout.padding`), a pipeline's stages padded to the largest (`pipeline.StageLayout`)."""
    layout = getattr(program, "layout", None)
    if layout is None:
        return 0
    if hasattr(layout, "stage_sizes"):
        sizes = layout.stage_sizes()
        return layout.size * len(sizes) - sum(sizes)
    return int(getattr(layout, "padding", 0))


def _fused_gradient(text: str, params: int) -> bool:
    """Whether a collective carries the gradient (or the parameters) flattened into one buffer: one array of at
    least half the parameters a device holds."""
    return any(len(c.shapes) == 1 and _shape_elements(c.shapes[0]) >= params / 2 for c in hlo.collectives(text))


_BROADCAST = re.compile(r"^\s*%?wrapped_broadcast[\w.]* = (?P<type>\S+) ", re.M)


def _broadcast_buffers(text: str, peak: int | None) -> bool:
    """Whether XLA materialised a broadcast (`wrapped_broadcast`) of at least 1% of the peak."""
    return bool(peak) and any(_array_bytes(m["type"]) >= peak / 100 for m in _BROADCAST.finditer(text))


def _array_bytes(array_type: str) -> float:
    """Bytes of an HLO array type such as f32[64,4,16,32]{3,2,1,0} (pred: one byte)."""
    bits = int(re.sub(r"\D", "", array_type.split("[", 1)[0]) or 8)
    return _shape_elements(array_type.split("{", 1)[0]) * bits / 8


def check_plan(layout: Layout, devices: int, hardware: Hardware = HARDWARE["h100"],
               assumptions: Assumptions = LAB_ASSUMPTIONS, global_batch: int | None = None,
               dims: transformer.Dims = LAB_DIMS, layers: int = 2) -> CheckedPlan:
    """`layout` compiled as the lab runs it (`train_settings`), one step per call, beside the planner's prediction:
    the compiler's peak bytes per device (`train.footprint.peak_bytes`) and the HLO's bytes per mesh axis
    (`axis_bytes`). The integer inputs are checked before anything is compiled; the program is compiled once per
    setting (`train.programs.build_planned`)."""
    batch = _check_shape(devices, global_batch, dims, layers)
    config = train_config_of(layout, devices, batch, dims, layers)
    program = programs.build_planned(config.program_spec(CHECK_STEPS, programs.resolve(config).name))
    prediction = predict(lab_model(dims, layers), layout, lab_workload(batch, dims), hardware, assumptions)
    peak = footprint.peak_bytes(footprint.compiled_memory(program.compiled))
    text = program.compiled.as_text()
    found, loss = axis_bytes(text, layout)
    predicted = {c.axis: c.bytes for c in prediction.comm}
    held = prediction.memory.params / 4  # values of the parameters a device holds (float32)
    reasons = _reasons(peak, prediction.memory.total, predicted, found, loss, _padding(program),
                       _fused_gradient(text, held) if found else False, _broadcast_buffers(text, peak))
    return CheckedPlan(layout, prediction, peak, predicted, found, reasons)


def check_top(devices: int, count: int = 3, hardware: Hardware = HARDWARE["h100"],
              assumptions: Assumptions = LAB_ASSUMPTIONS, global_batch: int | None = None,
              dims: transformer.Dims = LAB_DIMS, layers: int = 2) -> tuple[CheckedPlan, ...]:
    """`lab_plan`'s first `count` plans, each checked (`check_plan`)."""
    count = check_int("count", count, 1, MAX_CHECKED)
    result = lab_plan(devices, hardware, assumptions, global_batch, dims, layers)
    return tuple(check_plan(p.layout, devices, hardware, assumptions, global_batch, dims, layers)
                 for p in result.plans[:count])


MAX_CHECKED = 16  # plans one call compiles


# ---- the command that runs a plan ----

def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _flagged() -> set[str]:
    """The settings with a flag of their own on the CLI (`cli.training.setting_fields`: TrainConfig's and each
    registered program's, declared with `flag=True`)."""
    owners = [TrainConfig, *(entry.settings for entry in programs.REGISTRY.values() if entry.settings)]
    return {field.name for owner in owners for field in settings_of(owner) if field.metadata["flag"]}


def train_command(layout: Layout, devices: int, global_batch: int | None = None,
                  dims: transformer.Dims = LAB_DIMS, layers: int = 2) -> list[str]:
    """The argv of `python -m pmap_core train …` that runs `layout` (`train_settings`), with the CLI's own flags:
    the model's and the batch's always; `--impl` where no other flag selects the program (`--mesh`,
    `--pipeline-stages`); one flag per program setting away from its default; `--mesh data=X,<axis>=Y` for a mesh
    axis's size."""
    settings = train_settings(layout, devices, global_batch, dims, layers)
    flagged = _flagged()
    argv = ["python", "-m", "pmap_core", "train"]
    # The axes whose size has no flag of its own (the size of a model, seq or expert axis): `--mesh` sets them.
    mesh = [(axis, settings.get(name, 1)) for axis, name in train_config.axis_fields().items()
            if name not in flagged and settings.get(name, 1) != 1]
    for name, value in settings.items():
        if name in PROGRAM_SETTINGS and value == getattr(TrainConfig(), name):
            continue
        if name == "impl":
            if not mesh and settings["pipeline_stages"] == 1:
                argv += ["--impl", str(value)]
        elif name in flagged:
            argv += [_flag(name), str(value)]
    if mesh:
        (axis, size), = mesh
        argv += ["--mesh", f"{DATA_AXIS}={devices // size},{axis}={size}"]
    return argv
