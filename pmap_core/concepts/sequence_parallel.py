"""Sequence parallelism on a data × model mesh: the bytes sent and the activations kept — the activation-memory
lab's comparison of tensor parallelism with sequence parallelism's two forms, for the lab's transformer at the
page's settings (`concepts.activation_memory.Settings`). Korthikanti et al. 2022, "Reducing Activation
Recomputation in Large Transformer Models" (arXiv 2205.05198), §4.2.2; `train.tensor`, `--sequence-parallel`.

Tensor parallelism leaves the LayerNorms, the residual adds and their inputs whole on every device of the model axis
(Table 2's 10sbh); splitting them by positions divides every term by t. `split_step` compiles one step on a data ×
model mesh and reads both claims off it: the bytes its collectives send (ring bytes from the HLO, `train.footprint`)
and the residuals one device keeps (JAX's list, each counted by its shard). Megatron-LM gathers each column-parallel
product's input again in the backward pass so that only its split part is kept ("on"): activations ÷t, and one more
all-gather per product (`regathered_bytes`) beside the ring's. Kept whole instead ("keep"), the activations'
collectives send tensor parallelism's bytes, and those inputs are not divided: it holds in memory exactly the bytes
Megatron-LM's form sends again (`regathered_bytes`), a small share where the attention's s² terms outweigh them.
Both forms also sum the gradients of the parameters that act on each device's positions
(`parameter_gradient_bytes`), which tensor parallelism computes on every position and needs no collective for:
parameter-sized, whatever b and s, and left out of the paper's count.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding

from pmap_core.concepts.activation_memory import LAB_BYTES, Settings, check_settings, example_batch
from pmap_core.train import tensor, transformer
from pmap_core.train.footprint import comm_per_step
from pmap_core.train.program import ProgramSpec
from pmap_core.validation import LabInputError, check_int

MAX_MODEL = 64  # devices on the model axis of the comparison: the most the app starts with


@dataclasses.dataclass(frozen=True)
class SplitStep:
    """One value-and-gradient step of the transformer on a data × model mesh, per device."""

    data: int
    model: int
    sequence_parallel: str             # train.tensor.SEQUENCE_PARALLEL_CHOICES
    comm_bytes: float                  # ring bytes sent, every collective of the compiled step
    comm_by_kind: dict[str, float]
    residual_bytes: int                # JAX's residuals, each by its shard, the loss's arguments left out
    loss: float
    grads: dict[str, np.ndarray]


def split_step(dims: transformer.Dims, layers: int, rows: int, data: int, model: int,
               sequence_parallel: str = "off") -> SplitStep:
    """`rows` sequences on each data group of a `data` × `model` mesh: tensor parallelism ("off") or sequence
    parallelism ("on": Megatron-LM's; "keep": each gathered input kept), compiled and run once."""
    mesh = tensor.tensor_mesh(data, model)
    spec = ProgramSpec("tensor", "transformer", data * model, rows // model, dims.seq_len, 0, 1, layers=layers,
                       mesh_model=model, d_model=dims.d_model, heads=dims.heads, seq_len=dims.seq_len,
                       vocab=dims.vocab, sequence_parallel=sequence_parallel)
    objective = tensor.objective_of(spec)
    specs = tensor.param_specs("dp", "transformer", layers)
    params, x, y = example_batch(dims, layers, rows * data)
    placed = ({name: jax.device_put(value, NamedSharding(mesh, specs[name])) for name, value in params.items()},
              jax.device_put(x, NamedSharding(mesh, tensor.BATCH_ROWS)),
              jax.device_put(y, NamedSharding(mesh, tensor.BATCH_ROWS)))
    with jax.set_mesh(mesh):
        compiled = jax.jit(jax.value_and_grad(lambda p, x_, y_: objective(p, x_, y_, mesh))).lower(*placed).compile()
        loss, grads = compiled(*placed)
    comm = comm_per_step(compiled.as_text(), 1)
    return SplitStep(data, model, sequence_parallel, comm.bytes_per_step, comm.by_kind,
                     tensor.residual_bytes_per_device(objective, mesh, *placed), float(loss),
                     {name: np.asarray(g) for name, g in grads.items()})


def gathered_input_bytes(dims: transformer.Dims, layers: int, rows: int) -> int:
    """Each block's two column-parallel inputs once gathered, (rows, seq_len, d_model) float32: whole on every device
    of the model axis."""
    return 2 * layers * rows * dims.seq_len * dims.d_model * LAB_BYTES


def regathered_bytes(dims: transformer.Dims, layers: int, rows: int, model: int) -> float:
    """Ring bytes of the all-gathers Megatron-LM's sequence parallelism adds in the backward pass: the gathered inputs
    gathered again, (t − 1)/t of them sent. The kept form keeps the same bytes more than Megatron-LM's, in memory: the
    other devices' parts of those inputs."""
    return gathered_input_bytes(dims, layers, rows) * (model - 1) / model


def parameter_gradient_bytes(dims: transformer.Dims, layers: int, model: int) -> float:
    """Ring bytes sequence parallelism sends for parameter gradients on a 1 × `model` mesh, which tensor parallelism
    does not: every parameter that is whole on each device but acts on its positions only gets a gradient from those
    positions, which the model axis sums — each block's two LayerNorms and the row-parallel products' biases (6h),
    the final LayerNorm (2h), the token embedding and the output layer (2·vocab·h + vocab), and the loss itself (1),
    all-reduced (2(t − 1)/t of them sent); the position table's rows each device used are gathered ((t − 1)/t).
    Float32. Their size is the parameters', whatever b and s: Korthikanti et al.'s count (§4.2.2) is of the
    activations' collectives only."""
    h, vocab, t = dims.d_model, dims.vocab, model
    summed = 6 * layers * h + 2 * h + 2 * vocab * h + vocab + 1
    return LAB_BYTES * (2 * summed + dims.seq_len * h) * (t - 1) / t


# The comparison's rows: one device on the model axis, then tensor parallelism and sequence parallelism's two forms.
COMPARED = ("one", "off", "keep", "on")
SPLITS = COMPARED[1:]


@dataclasses.dataclass(frozen=True)
class SplitComparison:
    """The page's settings on one data group of `model` devices: one device on the model axis (the reference
    the activations are divided from) and each of `SPLITS` on `model` devices."""

    settings: Settings
    model: int
    one_device: SplitStep
    splits: tuple[SplitStep, ...]   # in the order of SPLITS

    def of(self, sequence_parallel: str) -> SplitStep:
        return self.splits[SPLITS.index(sequence_parallel)]

    @property
    def parameter_gradients(self) -> float:
        """What both forms of sequence parallelism send for parameter gradients, by the formula
        (`parameter_gradient_bytes`)."""
        return parameter_gradient_bytes(self.settings.dims, self.settings.layers, self.model)

    @property
    def regathered(self) -> float:
        """What Megatron-LM's form adds by the formula (`regathered_bytes`)."""
        return regathered_bytes(self.settings.dims, self.settings.layers, self.settings.batch, self.model)

    @property
    def gathered_inputs(self) -> int:
        """The gathered inputs' bytes, whole (`gathered_input_bytes`)."""
        return gathered_input_bytes(self.settings.dims, self.settings.layers, self.settings.batch)


def compare_splits(settings: Settings, model: int, on_split: Any = None) -> SplitComparison:
    """`settings`' batch on a 1 × `model` mesh under each of `SPLITS`, and on one device (`on_split(name)` before
    each); a LabInputError where `model` does not divide the heads, the MLP's width or the sequence."""
    settings = check_settings(*settings.key)
    model = check_int("model", model, 1, MAX_MODEL)
    dims = settings.dims
    for name, size in (("heads", dims.heads), ("mlp width", transformer.MLP_RATIO * dims.d_model),
                       ("seq_len", dims.seq_len)):
        if size % model:
            raise LabInputError("mesh_not_divisible", "the {axis} axis ({count} devices) must divide {name} ({size})",
                                axis="model", count=model, name=name, size=size)
    steps = []
    for name in COMPARED:
        if on_split is not None:
            on_split(name)
        split_model, split = (1, "off") if name == "one" else (model, name)
        steps.append(split_step(dims, settings.layers, settings.batch, 1, split_model, split))
    return SplitComparison(settings, model, steps[0], tuple(steps[1:]))
