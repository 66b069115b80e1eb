"""Two axes: the MLP on a data × model mesh, measured — what the mesh_2d lab draws and says. Pure: trains
with `train.tensor` (impl "tensor"), reads each compiled program's collectives and sets them beside the JAX
Scaling Book's table (this machine's roofline and the shape it predicts fastest are in
`concepts.mesh_2d_roofline`, re-exported here; the "sharding in types" examples are in
`concepts.sharding_in_types`). Its sweep of the shapes of one D also runs the transformer on a data × seq mesh
(`train.context`), for `sweep --meshes --mesh-axis seq`.

Sources, cited next to every figure they give:
- the Scaling Book: Austin et al. 2025, "How to Scale Your Model" (jax-ml/scaling-book), Part 5
  "How to Parallelize a Transformer for Training" (`training.md`: the per-layer table, C/W, Y < F/(C/W))
  and Part 12 "How to Think About GPUs" (`gpus.md`: the H100 figures);
- Megatron-LM: Shoeybi et al. 2019, §3 (the column/row split of an MLP);
- JAX's documentation (jax-ml/jax, `docs/new_docs/`, first shipped in JAX 0.11.0): "Distributed arrays and
  automatic parallelization" (`docs/new_docs/201/sharding.md`: the ambiguous `jnp.dot`, `auto_axes`/
  `explicit_axes`, `x.sharding` against `jax.typeof(x).sharding`) and "Autodiff and sharding"
  (`docs/new_docs/301/sharding-ad.md`: `reduced`/`unreduced`, accumulation with one all-reduce per step). Every
  example here runs on the installed JAX (verified on 0.12.0.1); what it prints is returned as it printed it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from pmap_core.concepts.mesh_2d_roofline import (  # noqa: F401 (re-exported: the lab reads them from here)
    BANDWIDTH_SIZES,
    BOOK_MACHINES,
    GRADIENT_OPERANDS,
    MATMUL_SIZE,
    SCALING_BOOK,
    SCALING_BOOK_GPUS,
    VALUE_BYTES,
    OwnBounds,
    Prediction,
    Roofline,
    ShapePrediction,
    allreduce_fit,
    matmul_flops_per_s,
    own_bounds,
    predicted_winner,
    roofline,
    step_flops,
    usable_flops_per_s,
)
from pmap_core.costs import analytic
from pmap_core.runtime import describe_runtime
from pmap_core.train import loop, models, programs, tensor
from pmap_core.train.config import TrainConfig
from pmap_core.train.footprint import collective_runs
from pmap_core.train.mesh import DATA_AXIS, MODEL_AXIS, SEQ_AXIS
from pmap_core.train.plan import validate
from pmap_core.train.settings import axis_settings
from pmap_core.validation import LabInputError, check_devices, check_int

DATA, MODEL = DATA_AXIS, MODEL_AXIS
# The axes a sweep of the shapes of one D can put beside data: the program that runs on it, the setting of its
# size (as the program declares it) and the error code of a shape of another D. The model axis splits the MLP's
# or the transformer's weights (train.tensor); the seq axis splits the transformer's positions (train.context).
SWEEP_AXES = {axis: (programs.impl_of_axis(axis), axis_settings()[axis], code)
              for axis, code in ((MODEL_AXIS, "mesh_devices"), (SEQ_AXIS, "seq_mesh_devices"))}


# --- the shapes of a mesh ------------------------------------------------------------------------


def mesh_shapes(devices: int, hidden: int) -> list[tuple[int, int]]:
    """Every (data, model) with data · model = devices and model dividing `hidden` (the MLP's hidden
    width is split into `model` equal column blocks), the model axis growing: 8 → (8,1) (4,2) (2,4) (1,8)."""
    devices = check_devices(devices)
    hidden = check_int("hidden", hidden, 1, 1 << 20)
    return [(devices // model, model) for model in range(1, devices + 1)
            if devices % model == 0 and hidden % model == 0]


def split_size(config: TrainConfig) -> int:
    """What the model axis splits into equal parts: the MLP's hidden width; the transformer's heads (which divide
    d_model, so a model axis dividing them divides its MLP width 4·d_model too)."""
    return config.heads if config.model == models.TRANSFORMER else config.hidden


def split_params(config: TrainConfig) -> tuple[int, int]:
    """(values split over `model`, values whole on every model device) of the parameters of `config`'s model
    under Megatron's split (`train.tensor.param_specs`, strategy dp)."""
    specs = tensor.param_specs("dp", config.model, config.layers)
    params = models.init_params(config.model, config.features, config.hidden, config.seed, config.layers, config.dims)
    split = sum(int(np.size(value)) for name, value in params.items() if MODEL in jax.tree.leaves(tuple(specs[name])))
    return split, sum(int(np.size(value)) for value in params.values()) - split


def comm_formula_bytes(config: TrainConfig) -> float:
    """The analytic bytes one device sends per step on `config`'s data × model mesh, float32, the loss left out:
    the MLP's (`analytic.tensor_comm_bytes_per_step`) or the transformer's
    (`analytic.transformer_tensor_comm_bytes_per_step`)."""
    data, model = config.mesh_data, config.mesh_model
    if config.model != models.TRANSFORMER:
        return analytic.tensor_comm_bytes_per_step(config.global_batch, config.features, config.hidden, data, model,
                                                   VALUE_BYTES)
    split, whole = split_params(config)
    return analytic.transformer_tensor_comm_bytes_per_step(config.global_batch, config.seq_len, config.d_model,
                                                           config.layers, split, whole, data, model, VALUE_BYTES)


# --- collectives of a compiled program, by mesh axis ----------------------------------------------


@dataclasses.dataclass(frozen=True)
class CollectiveRow:
    """One collective of a compiled training step, per device."""

    kind: str                       # all-reduce, all-gather, reduce-scatter, …
    shapes: tuple[str, ...]         # the arrays it carries (a tuple all-reduce carries several)
    bytes_per_step: float           # bytes one device sends per step, on a ring (see train.footprint)
    runs_per_step: float            # executions per training step
    group_size: int                 # devices in each of its groups
    groups: int                     # how many groups run it side by side
    axis: str                       # "data", "model", "data+model", or "none" (a group of one device)


def mesh_axis(groups: tuple[tuple[int, ...], ...] | None, data: int, model: int, second: str = MODEL) -> str:
    """The mesh axis a collective's groups run over. Device id k sits at (k // model, k % model) of the
    (data, model) mesh — the order of `mesh.devices.flat`, the program's device assignment; a group whose
    members differ only in their model position runs over "model" (or over `second`, the name of the axis beside
    data: "seq" on a data × seq mesh), and so on. () is every device."""
    if groups is None:
        return "unknown"
    members = groups or (tuple(range(data * model)),)
    varies = {axis for group in members
              for axis, coordinate in ((DATA, lambda k: k // model), (second, lambda k: k % model))
              if len({coordinate(k) for k in group}) > 1}
    return "+".join(axis for axis in (DATA, second) if axis in varies) or "none"


def collective_rows(program: Any, axis: str = MODEL) -> list[CollectiveRow]:
    """Each collective of `program`'s compiled HLO (a `ParallelProgram`; a tensor program's spec names
    its mesh, a context program's with `axis` "seq"): kind, bytes per device per step on a ring
    (`train.footprint.collective_runs`: a collective inside the loop of steps runs once a step), its group size,
    and the mesh axis its replica groups run over (`mesh_axis`)."""
    spec = program.spec
    model = getattr(spec, _sweep_axis(axis)[1])
    data = spec.devices // model
    rows = []
    for run in collective_runs(program.compiled.as_text(), (spec.steps, spec.accum_steps)):
        c = run.collective
        groups = c.groups or ()
        size = c.group_size or (len(groups[0]) if groups else spec.devices)
        rows.append(CollectiveRow(c.kind, c.shapes, run.ring_bytes * run.runs_per_call / spec.steps,
                                  run.runs_per_call / spec.steps, size, max(len(groups), 1),
                                  mesh_axis(c.groups, data, model, axis)))
    return rows


# --- the Scaling Book's table, for this MLP's sizes --------------------------------------------------

_BOOK_FORMULAS = {
    "dp": ("DP", "0 + 8DF", "In[B_X, D] · W_in[D, F] · W_out[F, D]: the weights' gradients all-reduced over X"),
    "fsdp": ("FSDP", "4DF + 8DF", "W_in[D_X, F], W_out[F, D_X]: gathered before use, gradients reduce-scattered"),
    "tp": ("TP", "4BD + 4BD", "In[B, D_Y], W_in[D, F_Y], W_out[F_Y, D]: In gathered, Out reduce-scattered over Y"),
    "fsdp_tp": ("FSDP+TP", "(4BD/X + 4DF/Y) + (8BD/X + 8DF/Y)", "both: B and the weights over X, F over Y"),
}
_HOW_THIS_MLP_DIFFERS = (
    "This lab's MLP is x[B, D] · w1[D, F] → tanh → · w2[F] → one output per sample, in float32 with biases: "
    "its second weight is F values, not F×D, and its output B values, not B×D. Its mesh is data × model "
    "(DP over X, Megatron's split over Y), not FSDP × TP: the weights are whole on every data device, so "
    "their gradient (1/Y of them) is all-reduced over data, and x is replicated over model, so nothing is "
    "gathered before the first product. The only model-axis collective is one all-reduce of the B/X "
    "partial outputs; the backward pass sends nothing over model because x is data (it needs no "
    "gradient). The lab counts the ring's 2(n−1)/n; the book drops it.")


def loss_bytes(data: int) -> float:
    """What a device sends for the loss, one float32 the gradient's all-reduce over `data` devices carries
    beside the weights (`GRADIENT_OPERANDS`): 2(X−1)/X·4; `analytic.tensor_comm_bytes_per_step` leaves it out."""
    return 2 * (data - 1) / data * VALUE_BYTES


def scaling_book_rows(batch: int, features: int, hidden: int, data: int, model: int,
                      measured_bytes: float | None = None) -> list[dict[str, Any]]:
    """The Scaling Book's per-layer communication (Part 5, the table of "Takeaways": DP, FSDP, TP,
    FSDP+TP), computed for this MLP's sizes in the book's notation — B = `batch`, D = `features`,
    F = `hidden`, X = `data`, Y = `model` — as the book counts it (bfloat16) and in float32, each with its
    formula text and source; then this lab's own formula for what its MLP sends
    (`costs.analytic.tensor_comm_bytes_per_step`), with `measured_bytes` (read from the compiled HLO,
    e.g. the sum of `collective_rows`) beside it when given. `note` says where the MLP differs."""
    batch = check_int("batch", batch, 1, 1 << 30)
    rows = _book_rows(batch, features, hidden, data, model, "the book's formula, this MLP's sizes")
    lab = analytic.tensor_comm_bytes_per_step(batch, features, hidden, data, model, VALUE_BYTES)
    rows.append({
        "strategy": "this lab: DP over X × TP over Y",
        "formula": "2(Y−1)/Y·(B/X)·4 + 2(X−1)/X·(IH/Y + 2H/Y + 1)·4",
        "sharding": "x[B_X, D], w1[D, F_Y], b1[F_Y], w2[F_Y], b2: one all-reduce of B/X outputs over Y, "
                    "the gradient of 1/Y of the weights over X",
        "source": "Shoeybi et al. 2019 §3 (Megatron's split); pmap_core.costs.analytic.tensor_comm_bytes_per_step",
        "bytes_bf16": lab * analytic.SCALING_BOOK_VALUE_BYTES / VALUE_BYTES, "bytes_float32": lab,
        "measured_bytes": measured_bytes, "whose": "this lab's formula; measured: the compiled HLO",
        "note": _HOW_THIS_MLP_DIFFERS,
    })
    return rows


def _book_rows(tokens: int, d_model: int, d_ff: int, data: int, model: int, whose: str) -> list[dict[str, Any]]:
    """The book's four rows (DP, FSDP, TP, FSDP+TP) for B = `tokens`, D = `d_model`, F = `d_ff`."""
    return [{"strategy": name, "formula": formula, "sharding": sharding, "source": SCALING_BOOK,
             "bytes_bf16": analytic.scaling_book_layer_bytes(strategy, tokens, d_model, d_ff, data, model),
             "bytes_float32": analytic.scaling_book_layer_bytes(strategy, tokens, d_model, d_ff, data, model,
                                                                VALUE_BYTES),
             "measured_bytes": None, "whose": whose,
             "note": "per layer of the book's transformer MLP (D → F → D); forward + backward bytes per device"}
            for strategy, (name, formula, sharding) in _BOOK_FORMULAS.items()]


def transformer_book_rows(config: TrainConfig, measured_bytes: float | None = None) -> list[dict[str, Any]]:
    """The Scaling Book's per-layer table for the transformer of `config` (a tensor config), in the book's own
    notation: B = global batch × seq_len tokens, D = d_model, F = 4·d_model (its MLP's hidden width), X = data,
    Y = model; then this lab's formula for the whole step (`comm_formula_bytes`: 4 all-reduces of the residual
    stream per block over Y, the gradient of this device's parameters over X), with `measured_bytes` beside it."""
    data, model = config.mesh_data, config.mesh_model
    rows = _book_rows(config.global_batch * config.seq_len, config.d_model,
                      models.transformer.MLP_RATIO * config.d_model, data, model,
                      "the book's formula, this transformer's sizes")
    lab = comm_formula_bytes(config)
    rows.append({
        "strategy": "this lab: DP over X × TP over Y",
        "formula": "4L·2(Y−1)/Y·(B/X)·S·d·4 + 2(X−1)/X·(Ψ_split/Y + Ψ_whole)·4",
        "sharding": "heads and the MLP's columns/rows over Y, the rest whole; rows of the batch over X",
        "source": "Shoeybi et al. 2019 §3 (Megatron's split); "
                  "pmap_core.costs.analytic.transformer_tensor_comm_bytes_per_step",
        "bytes_bf16": lab * analytic.SCALING_BOOK_VALUE_BYTES / VALUE_BYTES, "bytes_float32": lab,
        "measured_bytes": measured_bytes, "whose": "this lab's formula (the whole step, L blocks); measured: the "
                                                   "compiled HLO",
        "note": "the book counts one layer and no ring factor; TP over Y is Megatron's 2 all-reduces forward and 2 "
                "backward per block, the book's gather + reduce-scatter pair per matmul",
    })
    return rows


# --- every mesh shape of D devices, trained ------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class MeshRun:
    """One shape of the sweep: its run (a `TrainResult` with its footprint) and its collectives."""

    data: int
    model: int                      # the size of the axis beside data: model, or seq (`MeshSweep.axis`)
    point: loop.SweepPoint          # the run, with S(D) against one device on the same global batch
    collectives: tuple[CollectiveRow, ...]

    @property
    def result(self) -> loop.TrainResult:
        return self.point.result


@dataclasses.dataclass(frozen=True)
class MeshSweep:
    config: TrainConfig
    runs: tuple[MeshRun, ...]
    # Shapes of D the axis's program refuses (a model axis that does not divide the hidden width).
    skipped: tuple[tuple[int, int], ...]
    simulated: bool = True                # where it ran: simulated CPU devices sharing `cores`, or devices
    cores: int = 1
    axis: str = MODEL                     # the axis beside data: model (train.tensor) or seq (train.context)

    @property
    def sweep(self) -> loop.SweepResult:
        """The runs as the training loop's sweep result (what the tracking callback records)."""
        return loop.SweepResult(self.config, self.config.scaling, tuple(run.point for run in self.runs))

    @property
    def fastest(self) -> MeshRun:
        """The shape with the highest steady throughput on this machine."""
        return max(self.runs, key=lambda run: run.result.steady_throughput)


def _point(result: loop.TrainResult, first: loop.TrainResult) -> loop.SweepPoint:
    """The run with its S(D) against one device; in a multi-process group, which times no single device,
    against the sweep's first shape."""
    s = result.scaling
    if s is not None:
        return loop.SweepPoint(result, s.scaling_ratio, s.efficiency, s.hardware_ceiling, s.baseline_throughput)
    ratio = result.steady_throughput / first.steady_throughput
    return loop.SweepPoint(result, ratio, ratio, loop.hardware_ceiling(result.config.devices), first.steady_throughput)


def _sweep_axis(axis: str) -> tuple[str, str, str]:
    if axis not in SWEEP_AXES:
        raise LabInputError("unknown_sweep_axis", "a sweep of meshes puts {options} beside data, got {value!r}",
                            options=" or ".join(SWEEP_AXES), value=axis)
    return SWEEP_AXES[axis]


def fitting_shapes(base: TrainConfig, axis: str = MODEL) -> list[tuple[int, int]]:
    """The (data, size) shapes of `base.devices` whose `axis` the program accepts, the axis growing: on the model
    axis those of `mesh_shapes`; on the seq axis those the context program's own check passes (the axis divides
    the sequence, into 2P chunks for zig-zag, and Ulysses's heads)."""
    impl, field, _ = _sweep_axis(axis)
    if axis == MODEL:
        return mesh_shapes(base.devices, split_size(base))
    shapes = []
    for size in range(1, base.devices + 1):
        if base.devices % size == 0:
            try:
                validate(dataclasses.replace(base, impl=impl, **{field: size}))
            except LabInputError:
                continue
            shapes.append((base.devices // size, size))
    return shapes


def mesh_configs(config: TrainConfig, shapes: Sequence[tuple[int, int]] | None = None,
                 axis: str = MODEL) -> list[TrainConfig]:
    """One validated config per (data, size) shape of `config.devices`, `axis` (model or seq) of that size, run by
    the axis's program (`SWEEP_AXES`): the given `shapes` (each must use D devices, and the program accept it), or
    all of `fitting_shapes`."""
    impl, field, code = _sweep_axis(axis)
    base = validate(dataclasses.replace(config, impl=impl, **{field: 1}))
    for data, size in shapes or ():
        if data * size != base.devices:
            raise LabInputError(code, f"the mesh data={{data}},{axis}={{{axis}}} uses {{mesh}} devices, not "
                                "{devices}", data=data, mesh=data * size, devices=base.devices, **{axis: size})
    chosen = shapes or fitting_shapes(base, axis)
    return [validate(dataclasses.replace(base, **{field: size})) for _, size in dict.fromkeys(chosen)]


def sweep_meshes(config: TrainConfig, on_run: Callable[[loop.SweepPoint, int, int], None] | None = None,
                 callbacks: Sequence[loop.Callback] = (), shapes: Sequence[tuple[int, int]] | None = None,
                 axis: str = MODEL) -> MeshSweep:
    """Train `config` once per data × `axis` shape of `config.devices` that fits (`fitting_shapes`, the axis
    growing), or once per shape of `shapes`: on the model axis with impl tensor (the MLP or the transformer), on
    the seq axis with impl context (the transformer, its `context` scheme). Each run also times one device on the
    same global batch, so its point holds a real S(D). Callbacks hear it as a sweep (sweep_started, each run's
    hooks, point_done, sweep_ended; stopped on any interruption): a `tracking.callback.TrackingCallback` records a
    parent run with one child per shape. `on_run(point, index, total)` after each shape."""
    field = _sweep_axis(axis)[1]
    runs = mesh_configs(config, shapes, axis)
    fitting = {getattr(run, field) for run in runs}
    devices = runs[0].devices
    skipped = () if shapes else tuple((devices // m, m) for m in range(1, devices + 1)
                                      if devices % m == 0 and m not in fitting)
    watchers = [*callbacks, loop.Progress(on_point=on_run)]
    try:
        for callback in watchers:
            callback.sweep_started(runs[0], runs)
        done: list[MeshRun] = []
        for index, run in enumerate(runs):
            result = loop.train(run, watchers)
            point = _point(result, done[0].result if done else result)
            program = programs.build(run.program_spec(min(run.chunk, run.steps)))
            done.append(MeshRun(run.mesh_data, getattr(run, field), point, tuple(collective_rows(program, axis))))
            for callback in watchers:
                callback.point_done(point, index, len(runs))
        runtime = describe_runtime()
        outcome = MeshSweep(runs[0], tuple(done), skipped, runtime.simulated, runtime.physical_cores, axis)
        for callback in watchers:
            callback.sweep_ended(outcome.sweep)
        return outcome
    except BaseException as error:  # a Stop, Ctrl-C or an error: every watcher ends what it opened
        for callback in watchers:
            callback.stopped(error)
        raise


# --- the arrays of one shape's program -------------------------------------------------------------


def array_types(config: TrainConfig) -> dict[str, str]:
    """`jax.typeof` of every array the tensor program of `config` takes (`train.tensor.array_types`)."""
    config = validate(dataclasses.replace(config, impl=programs.impl_of_axis(MODEL_AXIS)))
    program = programs.build(config.program_spec(min(config.chunk, config.steps)))
    data = models.make_data(config.model, config.global_batch, config.features, config.seed, config.dims)
    initial = models.init_params(config.model, config.features, config.hidden, config.seed, config.layers,
                                 config.dims)
    carry, x, y, _ = program.place(initial, data, config.learning_rate)
    return tensor.array_types(program, carry, x, y)
