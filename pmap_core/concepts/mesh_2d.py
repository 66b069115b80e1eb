"""Two axes: the MLP on a data × model mesh, measured — what the mesh_2d lab draws and says. Pure: trains
with `train.tensor` (impl "tensor"), reads each compiled program's collectives, sets them beside the JAX
Scaling Book's table and measures this machine's roofline (the "sharding in types" examples are in
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
import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pmap_core.costs import analytic, fit
from pmap_core.runtime import describe_runtime
from pmap_core.train import loop, models, programs, tensor
from pmap_core.train.config import TrainConfig
from pmap_core.train.footprint import collective_runs
from pmap_core.train.mesh import DATA_AXIS, MODEL_AXIS, SEQ_AXIS
from pmap_core.train.plan import validate
from pmap_core.train.programs import CONTEXT_IMPL, TENSOR_IMPL
from pmap_core.validation import LabInputError, check_devices, check_float, check_int

DATA, MODEL = DATA_AXIS, MODEL_AXIS
# The axes a sweep of the shapes of one D can put beside data: the program that runs on it, the TrainConfig
# field of its size and the error code of a shape of another D. The model axis splits the MLP's or the
# transformer's weights (train.tensor); the seq axis splits the transformer's positions (train.context).
SWEEP_AXES = {MODEL_AXIS: (TENSOR_IMPL, "mesh_model", "mesh_devices"),
              SEQ_AXIS: (CONTEXT_IMPL, "mesh_seq", "seq_mesh_devices")}
VALUE_BYTES = 4            # this lab's MLP trains and communicates in float32
MATMUL_SIZE = 512          # the roofline's matmul: n × n by n × n, float32 (2n³ FLOPs)
BANDWIDTH_SIZES = (64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024)  # the all-reduce sweep's messages
SCALING_BOOK = "Scaling Book (Austin et al. 2025), Part 5 \"Training\""
SCALING_BOOK_GPUS = "Scaling Book (Austin et al. 2025), Part 12 \"GPUs\""


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


# --- this machine's roofline ---------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Roofline:
    """This machine's C (matmul FLOP/s of one device) and W (collective bandwidth, the β of the ring
    model fitted to an all-reduce sweep), and what the Scaling Book derives from them."""

    flops_per_s: float              # C: FLOPs (from `compiled.cost_analysis()`) / median seconds
    matmul_size: int
    matmul_flops: float
    matmul_s: float
    beta_bytes_per_s: float | None  # W: None at D = 1 (no collective to time) unless given
    alpha_s: float | None           # per-hop latency of the same fit
    bandwidth_source: str           # how W was found, or what it needs
    devices: int
    physical_cores: int
    simulated: bool
    value_bytes: int = VALUE_BYTES

    @property
    def intensity(self) -> float | None:
        """C / W: FLOPs per byte sent at which compute and communication take equal time."""
        return self.flops_per_s / self.beta_bytes_per_s if self.beta_bytes_per_s else None

    @property
    def critical_batch_per_device(self) -> float | None:
        """The Scaling Book's rule, for its transformer MLP: the per-device batch below which data parallelism
        is communication-bound. The book's C/W counts 2-byte values; a value of `value_bytes` bytes costs
        value_bytes/2 times as much to send (float32: 2·C/W). This MLP's own: `own_bounds`."""
        return self.intensity * self.value_bytes / 2 if self.intensity else None

    def tp_bound(self, hidden: int) -> float | None:
        """The book's tensor-parallel rule, for its transformer MLP: compute-bound while Y < F / (C/W), F the
        hidden width, C/W in the values sent (float32: F / (2·C/W)). This MLP's own: `own_bounds`."""
        critical = self.critical_batch_per_device
        return hidden / critical if critical else None

    def table(self, hidden: int) -> list[dict[str, Any]]:
        """This machine beside the Scaling Book's TPU v5p and H100; `whose` says who measured or stated
        each figure."""
        rows = [{"machine": f"this machine ({'simulated CPU devices' if self.simulated else 'devices'}, "
                            f"{self.physical_cores} physical cores)",
                 "flops_per_s": self.flops_per_s, "bandwidth_bytes_per_s": self.beta_bytes_per_s,
                 "value_bytes": self.value_bytes, "critical_batch_per_device": self.critical_batch_per_device,
                 "tp_bound": self.tp_bound(hidden),
                 "whose": f"measured here: a {self.matmul_size}² float32 matmul on one device; W = "
                          f"{self.bandwidth_source}",
                 "source": "pmap_core.concepts.mesh_2d.roofline; pmap_core.commbench + costs.fit"}]
        for name, flops, bandwidth, source in BOOK_MACHINES:
            critical = flops / bandwidth
            rows.append({"machine": name, "flops_per_s": flops, "bandwidth_bytes_per_s": bandwidth,
                         "value_bytes": analytic.SCALING_BOOK_VALUE_BYTES, "critical_batch_per_device": critical,
                         "tp_bound": hidden / critical, "whose": "the book's figures (bfloat16)", "source": source})
        return rows


# The Scaling Book's figures: TPU v5p C = 4.6e14 bf16 FLOP/s and W = 2 × 9e10 B/s over one ICI axis
# (Part 5: C/W ≈ 2550); H100 C = 9.9e14 and 450e9 B/s of NVLink egress per GPU within a node (Part 12:
# C/W ≈ 2200), 400e9 B/s beyond the node (≈ 2475).
BOOK_MACHINES = (
    ("TPU v5p, one ICI axis", 4.6e14, 1.8e11, SCALING_BOOK),
    ("H100, within a node (NVLink)", 9.9e14, 4.5e11, SCALING_BOOK_GPUS),
    ("H100, beyond a node", 9.9e14, 4.0e11, SCALING_BOOK_GPUS),
)


def matmul_flops_per_s(size: int = MATMUL_SIZE, repeats: int = 5) -> tuple[float, float, float]:
    """(FLOP/s, FLOPs, median seconds) of a jitted float32 `size` × `size` matmul on one device; the FLOPs
    are the compiled program's own count (`compiled.cost_analysis()`)."""
    from pmap_core.timing import time_call

    size = check_int("size", size, 16, 2048)
    a = jax.device_put(np.ones((size, size), np.float32), jax.devices()[0])
    compiled = jax.jit(jnp.matmul).lower(a, a).compile()
    analysis = compiled.cost_analysis()
    flops = float((analysis[0] if isinstance(analysis, list) else analysis)["flops"])
    seconds = time_call(compiled, a, a, repeats=check_int("repeats", repeats, 1, 50)).median_s
    return flops / seconds, flops, seconds


def allreduce_fit(devices: int, sizes: Sequence[int] = BANDWIDTH_SIZES, repeats: int = 3) -> fit.RingFit:
    """α and β of the ring model fitted to all-reduces (psum) of `sizes` bytes on `devices` devices,
    timed as the communication benchmark times them (`commbench`: the slope of a chained loop)."""
    from pmap_core import commbench

    shard = 4 * max(devices, 1)  # each size rounded down to whole float32 shards for D devices (D = 3, 5, …)
    sizes = [max(shard, size // shard * shard) for size in sizes]
    plan = commbench.plan_sweep(["psum"], [devices], sizes, repeats)  # refuses D < 2 and sweeps over budget
    rows = [commbench.measure_collective("psum", devices, size, plan.repeats) for size in plan.sizes]
    return fit.fit_ring("psum", [r.devices for r in rows], [r.bytes for r in rows], [r.seconds for r in rows])


def roofline(devices: int, beta_bytes_per_s: float | None = None, alpha_s: float = 0.0,
             matmul_size: int = MATMUL_SIZE, repeats: int = 5) -> Roofline:
    """This machine's roofline on `devices` devices: C measured (`matmul_flops_per_s`), W either given
    (a β the communication benchmark fitted, with its α) or measured by a quick all-reduce sweep
    (`allreduce_fit`, a few seconds). At D = 1 no collective can be timed: W stays None unless given,
    and `bandwidth_source` says so."""
    devices = check_devices(devices)
    flops_per_s, flops, seconds = matmul_flops_per_s(matmul_size, repeats)
    runtime = describe_runtime()
    if beta_bytes_per_s is not None:
        beta = check_float("beta_bytes_per_s", beta_bytes_per_s, 1.0, 1e15)
        alpha = check_float("alpha_s", alpha_s, 0.0, 1.0)
        source = "the β given (a fit of the communication benchmark)"
    elif devices < 2:
        beta, alpha, source = None, None, "none: an all-reduce needs at least 2 devices (D = 1)"
    else:
        ring = allreduce_fit(devices)
        beta, alpha = ring.beta_bytes_per_s, ring.alpha_s
        source = (f"β of the α-β fit to all-reduces of {len(BANDWIDTH_SIZES)} sizes on {devices} devices "
                  f"(worst ratio {ring.worst_ratio:.2f})")
    return Roofline(flops_per_s, matmul_size, flops, seconds, beta, alpha, source, devices,
                    runtime.physical_cores, runtime.simulated)


@dataclasses.dataclass(frozen=True)
class ShapePrediction:
    data: int
    model: int
    compute_s: float      # the step's FLOPs / (C × the devices' usable cores): the same for every shape
    send_s: float         # bandwidth alone: Σ 2(g−1)/g·bytes/β (what the book's rules weigh against compute)
    ring_comm_s: float    # the ring model per collective: Σ 2(g−1)·α + 2(g−1)/g·bytes/β
    comm_s: float         # the same with one latency term per rendezvous (see `predicted_winner`)
    comm_bytes: float     # bytes one device sends per step (`analytic.tensor_comm_bytes_per_step`)
    collectives: int      # all-reduces per step: the model axis's, the data axis's
    rendezvous: int       # the devices meet this often per step: one per operand on XLA:CPU

    @property
    def step_s(self) -> float:
        """No overlap: on simulated CPU devices a collective blocks every device until all arrive."""
        return self.compute_s + self.comm_s

    @property
    def ring_step_s(self) -> float:
        return self.compute_s + self.ring_comm_s


@dataclasses.dataclass(frozen=True)
class Prediction:
    shapes: tuple[ShapePrediction, ...]
    per_operand: bool     # latency counted per operand (simulated CPU devices) or per collective

    @property
    def winner(self) -> tuple[int, int]:
        """The shape predicted fastest on this machine (ties: fewer bytes)."""
        best = min(self.shapes, key=lambda s: (s.step_s, s.comm_bytes))
        return best.data, best.model

    @property
    def ring_winner(self) -> tuple[int, int]:
        """The shape the plain ring model (one latency per collective, as the book prices it) picks."""
        best = min(self.shapes, key=lambda s: (s.ring_step_s, s.comm_bytes))
        return best.data, best.model


def usable_flops_per_s(roofline: Roofline, devices: int) -> float:
    """C of one device as a step on `devices` devices sees it: simulated devices share the machine's usable
    cores (C × min(D, cores) / D), real ones each have their own."""
    if not roofline.simulated:
        return roofline.flops_per_s
    return roofline.flops_per_s * describe_runtime().hardware_ceiling(devices) / devices


@dataclasses.dataclass(frozen=True)
class OwnBounds:
    """This MLP's bounds, derived the way the Scaling Book derives its own (a step's FLOPs on a device against
    the bytes its all-reduces send at W, no overlap), for the MLP x[B, I] · w1[I, H] → tanh → · w2[H]."""

    devices: int
    flops_per_sample: float        # 4(IH + H) + H: forward 2(IH + H), backward the same plus B·H; x needs none
    device_flops_per_s: float      # `usable_flops_per_s`
    critical_batch_per_device: float  # data parallelism over all D devices is compute-bound above it
    tp_bound: float                # a model axis of Y devices is compute-bound while Y < this


def own_bounds(roofline: Roofline, features: int, hidden: int) -> OwnBounds | None:
    """This MLP's critical batch and model-axis bound on `roofline.devices` devices (None without a W):
    data parallelism over X = D sends 2(X−1)/X·4·(IH + 2H + 1) bytes per step (the gradient) against
    (B/X)·f FLOPs per device, f = 4(IH + H) + H, so it is compute-bound while B/X > 8(X−1)/X·(IH + 2H + 1)/f ·
    C/W; a model axis of Y all-reduces the B/X outputs, 2(Y−1)/Y·4·B/X bytes, against (B/X)·f/Y FLOPs, so it is
    compute-bound while Y − 1 < f/(8·C/W). C is a device's usable share (`usable_flops_per_s`). Where the book
    differs: its weights are D×F twice and its input needs a gradient (6 FLOPs per weight and sample, the
    backward's 4 weighed against the all-reduce), its TP all-reduces B·D activations, not B values."""
    if roofline.beta_bytes_per_s is None:
        return None
    devices = roofline.devices
    f = step_flops(1, features, hidden)
    c = usable_flops_per_s(roofline, devices)
    intensity = c / roofline.beta_bytes_per_s
    weights = features * hidden + 2 * hidden + 1
    critical = 2 * (devices - 1) / devices * VALUE_BYTES * weights / f * intensity
    return OwnBounds(devices, f, c, critical, 1 + f / (2 * VALUE_BYTES * intensity))


def step_flops(batch: int, features: int, hidden: int) -> float:
    """FLOPs of one training step of the MLP (forward 2·B·(DF + F), backward the same for the weights'
    gradients, plus B·F for the hidden layer's; x needs no gradient)."""
    return 4.0 * batch * (features * hidden + hidden) + batch * hidden


GRADIENT_OPERANDS = len(tensor.PARAM_SPECS) + 1  # w1, b1, w2, b2 and the loss: one tuple all-reduce


def _shape_pair(shape: Any) -> tuple[int, int]:
    """(data, model) of a shape given as a pair of whole numbers, or a LabInputError."""
    if not isinstance(shape, (tuple, list)) or len(shape) != 2:
        raise LabInputError("unknown_mesh_shape", "a mesh shape is written data x model (4x2), got {shape!r}",
                            shape=shape)
    return check_int("data", shape[0], 1, 1 << 20), check_int("model", shape[1], 1, 1 << 20)


def predicted_winner(roofline: Roofline, shapes: Sequence[tuple[int, int]], sizes: tuple[int, int, int]
                     ) -> Prediction:
    """Which (data, model) shape the roofline predicts fastest for an MLP of `sizes` = (global batch,
    features, hidden). Every shape splits the same FLOPs over the same devices, so compute is equal and
    communication decides: per step, one all-reduce of the B/X partial outputs over the Y devices of
    `model` (2(Y−1) hops) and one of the gradient of 1/Y of the weights (with the loss) over the X devices
    of `data` (2(X−1) hops), priced at this machine's α and β. `ring_winner` counts one latency per
    collective, as the ring model (and the book) does; `winner` counts one per rendezvous, which on
    simulated CPU devices is one per operand: XLA:CPU runs each array of a tuple all-reduce as its own
    rendezvous (measured here: a pytree pmean of 4 arrays took 2.6× the time of one flat buffer), and
    the gradient's all-reduce carries GRADIENT_OPERANDS arrays. Ties go to fewer bytes. Check the winner
    against the measured sweep (`sweep_meshes`)."""
    if not shapes:
        raise LabInputError("no_mesh_shapes", "a prediction needs at least one (data, model) shape, got none")
    if roofline.beta_bytes_per_s is None:
        raise LabInputError("need_two_devices", "a collective needs at least 2 devices, got {devices}",
                            devices=[roofline.devices])
    if not isinstance(sizes, (tuple, list)) or len(sizes) != 3:
        raise LabInputError("mlp_sizes", "the MLP's sizes are (global batch, features, hidden), got {value!r}",
                            value=sizes)
    batch, features, hidden = (check_int(name, value, 1, 1 << 30)
                               for name, value in zip(("batch", "features", "hidden"), sizes, strict=True))
    check_float("flops_per_s", roofline.flops_per_s, 1e-30, math.inf)
    check_float("beta_bytes_per_s", roofline.beta_bytes_per_s, 1e-30, math.inf)
    alpha, beta = roofline.alpha_s or 0.0, roofline.beta_bytes_per_s
    rows = []
    for data, model in map(_shape_pair, shapes):
        devices = data * model
        ceiling = describe_runtime().hardware_ceiling(devices) if roofline.simulated else devices
        compute = step_flops(batch, features, hidden) / (roofline.flops_per_s * ceiling)
        weights = features * hidden / model + 2 * hidden / model + 1
        # (group, values all-reduced, operands) of the model axis's all-reduce, then the data axis's
        parts = [(g, values, operands) for g, values, operands in
                 ((model, batch / data, 1), (data, weights, GRADIENT_OPERANDS)) if g > 1]
        send = sum(2 * (g - 1) / g * values * VALUE_BYTES / beta for g, values, _ in parts)
        meets = [(g, operands if roofline.simulated else 1) for g, _, operands in parts]
        rows.append(ShapePrediction(
            data, model, compute, send, send + sum(2 * (g - 1) * alpha for g, _, _ in parts),
            send + sum(n * 2 * (g - 1) * alpha for g, n in meets),
            analytic.tensor_comm_bytes_per_step(batch, features, hidden, data, model), len(parts),
            sum(n for _, n in meets)))
    return Prediction(tuple(rows), roofline.simulated)


def array_types(config: TrainConfig) -> dict[str, str]:
    """`jax.typeof` of every array the tensor program of `config` takes (`train.tensor.array_types`)."""
    config = validate(dataclasses.replace(config, impl=TENSOR_IMPL))
    program = programs.build(config.program_spec(min(config.chunk, config.steps)))
    data = models.make_data(config.model, config.global_batch, config.features, config.seed, config.dims)
    initial = models.init_params(config.model, config.features, config.hidden, config.seed, config.layers,
                                 config.dims)
    carry, x, y, _ = program.place(initial, data, config.learning_rate)
    return tensor.array_types(program, carry, x, y)
