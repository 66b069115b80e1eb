"""The parallel-program interface: what the training loop, the measurements and the tracking know of a
way of running the step.

A way of running the data-parallel step (pmap, shard_map or jit with replicated parameters; ZeRO
stages 1–3 with a sharded training state) is one object that satisfies `ParallelProgram`. It is
compiled for one `ProgramSpec`, ahead of time, and then:

    carry, x, y, lr = program.place(params, data, learning_rate)   # state and batch on its devices
    carry, losses = program.run(carry, x, y, lr)                    # `spec.steps` steps, one call
    program.step_losses(losses)                                     # the loss curve of that call
    program.final_params(carry)                                     # host params, copies' max diff
    program.held_bytes(carry)                                       # bytes one device holds
    program.compiled.as_text()                                      # its collectives (train.footprint)

That is the whole surface, the size of optax's `GradientTransformation`: a new way of splitting the
model is one module with one such class and one `Program` entry (below) registered in `train.programs`;
the loop (`train.loop`) and the footprint (`train.footprint`) never name a program.

This module imports nothing above it: the programs and their users both depend on it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

import jax
import numpy as np
from jax.sharding import NamedSharding

from pmap_core.train.mesh import MODEL_AXIS
from pmap_core.train.settings import nests_settings

Dataset = Any  # train.models.Dataset: host arrays x (B, features) and y (B,), or (B, seq_len) tokens both


@nests_settings
@dataclasses.dataclass(frozen=True)
class ProgramSpec:
    """Everything that fixes a compiled training program: the way it runs (`impl`), the model's
    shapes, D, the chunk length and its program's settings. Equal specs share one program.

    Made from a run's config (`TrainConfig.program_spec`): the program's settings are the config's own nested value
    (`settings`), read by name as the config reads them (`spec.strategy`, `spec.mesh_model`; `train.settings`)."""

    impl: str
    model: str
    devices: int
    per_device_batch: int
    features: int
    hidden: int
    steps: int                 # training steps inside one call
    layers: int = 2              # the MLP's layers
    d_model: int = 32            # the transformer's width (model "transformer"; train.transformer.Dims)
    heads: int = 4               # its attention heads
    seq_len: int = 32            # tokens per sequence: x and y are (rows, seq_len)
    vocab: int = 32              # tokens of its vocabulary
    # The settings of a program registered from outside the lab, as (name, value) pairs (`TrainConfig.options`).
    options: tuple[tuple[str, Any], ...] = ()
    # The registry entry that runs it, where the run's plan chose it ("": `programs.resolve` chooses). Not part
    # of what the spec is: equal settings select the same entry.
    program: str = dataclasses.field(default="", compare=False)
    remat: str = "none"          # the transformer's blocks: what the backward recomputes (transformer.REMAT_POLICIES)
    # The lab programs' settings the run sets away from their defaults (`TrainConfig.settings`).
    settings: tuple[Any, ...] = ()

    def option(self, name: str) -> Any:
        return dict(self.options)[name]


@dataclasses.dataclass(frozen=True)
class HeldBytes:
    """Bytes one device holds, the most over this process's devices, read from real arrays."""

    params: int
    grads: int        # the gradient as the program keeps it through a step (its accumulator)
    opt: int          # the optimizer state (with mixed precision's fp32 master copy)
    padding: int = 0  # of `params`: zeros that make every layer split into D equal shards


class ParallelProgram(Protocol):
    """One compiled way of running `spec.steps` training steps on `spec.devices` devices."""

    spec: ProgramSpec
    devices: tuple[Any, ...]   # in the order the batch's blocks go to them: block k on devices[k]
    compile_s: float           # what lowering and compiling cost
    compiled: Any              # the `jax.stages.Compiled` program: HLO text, memory analysis
    emitted_hlo: str           # the program as JAX emitted it, before the backend's passes ("" if not kept)
    param_count: int           # Ψ: parameters of the model
    # Bytes of the activations one device's forward pass saves for its backward (JAX's residuals), where a
    # device runs the whole model's loss on its rows, or its shard of each where a program splits the model over
    # a mesh (train.tensor); None where the program does not say (the pipeline's stages, ZeRO).
    saved_activation_bytes: int | None

    def place(self, params: dict[str, np.ndarray], data: Dataset, learning_rate: float) -> tuple:
        """(carry, x, y, learning_rate) on the devices, as `run` takes them. In a multi-process run
        each process reads only its own devices' blocks of `data`."""

    def run(self, carry: Any, x: Any, y: Any, learning_rate: Any) -> tuple[Any, Any]:
        """`spec.steps` steps: (carry, raw losses); the carry stays on the devices between calls."""

    def step_losses(self, losses: Any) -> np.ndarray:
        """The loss over the global batch at each step of one call (all processes' devices)."""

    def local_losses(self, losses: Any) -> np.ndarray:
        """[this process's device, step]: what each local device reports, gathering nothing."""

    def final_params(self, carry: Any) -> tuple[dict[str, np.ndarray], float]:
        """(the parameters on the host, the largest difference between two devices' copies of one
        part of them)."""

    def held_bytes(self, carry: Any) -> HeldBytes: ...


@dataclasses.dataclass(frozen=True)
class CompiledChunk:
    """The part every program shares: what it was compiled for and from, and `run`, which calls it."""

    spec: ProgramSpec
    devices: tuple[Any, ...]
    compiled: Any
    compile_s: float
    param_count: int
    emitted_hlo: str
    saved_activation_bytes: int | None = dataclasses.field(default=None, kw_only=True)  # see ParallelProgram

    def run(self, carry: Any, x: Any, y: Any, learning_rate: Any) -> tuple[Any, Any]:
        return self.compiled(carry, x, y, learning_rate)


@dataclasses.dataclass(frozen=True)
class MeshProgram(CompiledChunk):
    """What the programs on a named mesh share (tensor, ZeRO, pipeline): placing host values by a
    PartitionSpec, and reading the losses each device returns (by default the global batch's loss, the
    same on every device, one per step)."""

    mesh: Any  # jax.sharding.Mesh, from train.mesh

    def put(self, value: Any, partition: Any) -> jax.Array:
        """Host `value` as a global array split by `partition` (a PartitionSpec) over this mesh."""
        return place_from_host(np.asarray(value), NamedSharding(self.mesh, partition))

    def step_losses(self, losses: Any) -> np.ndarray:
        return np.asarray(losses.addressable_shards[0].data, np.float64)

    def local_losses(self, losses: Any) -> np.ndarray:
        return np.stack([np.ravel(np.asarray(shard.data)) for shard in losses.addressable_shards])

    def gathered_params(self, carry: dict[str, jax.Array]) -> tuple[dict[str, np.ndarray], float]:
        """`final_params` of a program whose carry is the parameters, each split over the mesh its own way: each
        part's copies on the devices that hold it are compared, then each parameter is gathered whole."""
        diff = 0.0
        for leaf in carry.values():
            parts: dict[str, np.ndarray] = {}
            for shard in leaf.addressable_shards:
                first = parts.setdefault(str(shard.index), np.asarray(shard.data))
                diff = max(diff, float(np.max(np.abs(np.asarray(shard.data) - first), initial=0.0)))
        whole = jax.jit(lambda p: p, out_shardings=NamedSharding(self.mesh, jax.sharding.PartitionSpec()))(carry)
        return {name: np.asarray(leaf.addressable_shards[0].data) for name, leaf in whole.items()}, diff


def abstract(mesh: Any, shape: tuple[int, ...], partition: Any, dtype: Any = np.float32) -> jax.ShapeDtypeStruct:
    """The type of an argument a mesh program is compiled for: its shape, dtype and split over `mesh`."""
    return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, partition))


def compile_timed(program: Any, args: Sequence[Any]) -> tuple[Any, Any, float]:
    """(lowered, compiled, seconds): lower and compile `program` for `args` ahead of time."""
    start = time.perf_counter()
    lowered = program.lower(*args)
    compiled = lowered.compile()
    return lowered, compiled, time.perf_counter() - start


def local_indices(devices: Sequence[Any]) -> list[int]:
    """Positions (block indices) of this process's devices among `devices`."""
    return [i for i, d in enumerate(devices) if d.process_index == jax.process_index()]


def bytes_per_device(tree: Any) -> int:
    """The most bytes any of this process's devices holds of the arrays of `tree`."""
    held: dict[Any, int] = {}
    for leaf in jax.tree.leaves(tree):
        for shard in leaf.addressable_shards:
            held[shard.device] = held.get(shard.device, 0) + shard.data.nbytes
    return max(held.values(), default=0)


def param_count(params: dict[str, np.ndarray]) -> int:
    return sum(int(np.size(leaf)) for leaf in jax.tree.leaves(params))


def place_from_host(value: np.ndarray, sharding: Any) -> jax.Array:
    """A global array with `sharding` whose every device reads its own part of host `value`."""
    value = np.asarray(value)
    return jax.make_array_from_callback(value.shape, sharding, lambda index: value[index])


Builder = Callable[[ProgramSpec], ParallelProgram]

# A hook reads a run's `TrainConfig` (typed `Any`: this module sits below train.config's users).
Config = Any


def _no_labels(config: Config) -> Sequence[str]:
    return ()


def _no_metrics(config: Config) -> Mapping[str, float]:
    return {}


def _no_trained_metrics(config: Config, params: Mapping[str, np.ndarray]) -> Mapping[str, float]:
    return {}


@dataclasses.dataclass(frozen=True)
class RunExtras:
    """What a program adds to the record of its runs, beyond the settings and figures every run has."""

    # Labels a run's name shows after its named settings: "4x2" (a data × model mesh), "P4", "M8", "1f1b".
    setup: Callable[[Config], Sequence[str]] = _no_labels
    # Figures a finished run logs besides the loop's, known from its settings (a pipeline's bubble).
    metrics: Callable[[Config], Mapping[str, float]] = _no_metrics
    # Figures read from the trained parameters on the run's data (a mixture of experts' dropped fraction), logged
    # with the others when the run ends: (config, the final parameters on the host) -> figures.
    trained: Callable[[Config, Mapping[str, np.ndarray]], Mapping[str, float]] = _no_trained_metrics
    # The run's data × model mesh: its label ("4x2") and the model axis's size. A sweep of one D over
    # runs that have one compares meshes (curves against the model axis), not device counts.
    mesh: Callable[[Config], tuple[str, int]] | None = None
    # The axis beside data that `mesh` gives the size of: "model", or "seq" (a data × seq mesh).
    mesh_axis: str = MODEL_AXIS


@dataclasses.dataclass(frozen=True)
class AnalyticModel:
    """A program's textbook figures per device, beside what its run measures (`train.footprint`): the bytes
    held (a `costs.analytic.ZeroMemory`: params, grads, optimizer) and sent per step; None where the program's
    model does not say."""

    memory: Any = None
    comm_bytes_per_step: float | None = None


class PlannedLayout(NamedTuple):
    """A planner's layout as a program reads it (`Program.plans`): the one axis it splits over beside data (None:
    data alone) and that axis's size, its ZeRO stage, micro-batches per step, remat policy, whether sequence
    parallelism is on, and the model's experts (0: dense)."""

    axis: str | None
    size: int
    zero: int
    microbatches: int
    remat: str
    sequence_parallel: bool
    experts: int


def _no_check(config: Config) -> None:
    return None


def _plans_nothing(layout: PlannedLayout) -> Mapping[str, Any] | None:
    return None


def _unchanged(config: Config) -> Mapping[str, Any]:
    return {}


def _no_model(spec: ProgramSpec, param_count: int) -> AnalyticModel | None:
    return None


@dataclasses.dataclass(frozen=True)
class Program:
    """One entry of the registry (`train.programs`): a way of running the step and all it owns.

    `TrainConfig.impl` selects an entry (`config.select_program`): the one of that name, or an entry that answers
    that impl (`impl`) for the runs that set one of its settings away from its default (impl "jit" with a
    sharded training state runs "zero"). Such an entry shares the record of the impl's runs: the impl's entry
    says what it adds to them (`extras`) and what its one-device baseline is."""

    name: str
    build: Callable[[ProgramSpec], ParallelProgram]
    # The dataclass of the settings it owns (fields declared with `train.settings.setting`). A lab program's class is
    # `train.settings.declared`: a run holds it in `TrainConfig.settings` and reads it by name; another program's
    # live in `TrainConfig.options`.
    settings: type | None = None
    # Its settings against the run (devices, model, batch...): a LabInputError, or nothing.
    check: Callable[[Config], None] = _no_check
    # The error for a run of another program that sets one of its settings away from the default.
    refused_elsewhere: Callable[[Config], Exception] | None = None
    extras: RunExtras = RunExtras()
    # TrainConfig changes (beyond one device and the baseline's batch) that make its one-device baseline.
    baseline: Callable[[Config], Mapping[str, Any]] = _unchanged
    # Its textbook memory and communication, from its spec and Ψ (None: it has none).
    analytic: Callable[[ProgramSpec, int], AnalyticModel | None] = _no_model
    impl: str = ""  # the TrainConfig.impl that selects it when a run changes its settings ("": its name)
    shares: tuple[str, ...] = ()  # other programs' settings it reads too (theirs to describe and limit)
    rematerialises: bool = False  # it applies TrainConfig.remat (the other programs refuse a policy but "none")
    # Its settings that select it where a run names no impl and sets one away from its default (a sharded training
    # state's: impl jit; a mixture of experts: impl expert, its experts on every device).
    selects: tuple[str, ...] = ()
    # The settings that run a planner's layout (`concepts.planner.check.train_settings`), or None where it does not
    # run that layout: each program says which layouts it runs, so the planner names none.
    plans: Callable[[PlannedLayout], Mapping[str, Any] | None] = _plans_nothing

    @property
    def selected_by(self) -> str:
        return self.impl or self.name
