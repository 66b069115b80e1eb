"""Logical axes: each parameter's dimensions named for what they are, and a strategy's small table that
says which mesh axis (`train.mesh`) each of those names is split over.

Why: a program that shards the MLP should not have to know its parameters' names. The model says what
each dimension of each parameter is (`param_axes`: w1 of the 2-layer MLP is ("embed", "mlp"), its input
features by its hidden width); a strategy says where those go (`TENSOR_PARALLEL` maps "mlp" to the
`model` axis: Megatron's split); `partition_specs` joins the two into the `PartitionSpec` of every
parameter. A new model declares its axes, a new strategy writes its table, and neither edits the other.

The split is MaxText's (`logical_axis_rules` from logical names to its `mesh_axes`) and Flax's logical
partitioning (`nn.with_logical_partitioning`, `nn.logical_to_mesh_axes`): a model names its
dimensions once; the rules of a run place them.

    embed   the features a layer reads: the MLP's input features
    mlp     the MLP's hidden width
    batch   the rows of a batch (data, not a parameter)
"""

from __future__ import annotations

from collections.abc import Mapping

from jax.sharding import PartitionSpec as P

from pmap_core.train import models
from pmap_core.train.mesh import AXES, DATA_AXIS, MODEL_AXIS
from pmap_core.validation import LabInputError

EMBED, MLP, BATCH = "embed", "mlp", "batch"
LOGICAL_AXES = (EMBED, MLP, BATCH)

# Megatron's split (train.tensor): the hidden width over `model`, the batch's rows over `data`.
TENSOR_PARALLEL = {MLP: MODEL_AXIS, BATCH: DATA_AXIS}
# FSDP × TP (train.tensor, strategy zero3): the first weight's rows (the input features) over `data` as
# well, gathered over `data` just before use.
FSDP_TENSOR_PARALLEL = {**TENSOR_PARALLEL, EMBED: DATA_AXIS}


def _mlp_axes(layers: int) -> dict[str, tuple[str, ...]]:
    """Each hidden layer's weight (embed, mlp) and bias (mlp,); the output layer's weight (mlp,), its
    bias () (a scalar). The residual layers' weights read the hidden width as their features: their rows
    are `embed` too."""
    axes: dict[str, tuple[str, ...]] = {}
    names = models.layer_names("mlp", layers)
    for k, (weight, bias) in enumerate(names):
        last = k == len(names) - 1
        axes[weight] = (MLP,) if last else (EMBED, MLP)
        axes[bias] = () if last else (MLP,)
    return axes


def param_axes(model: str, layers: int = 2) -> dict[str, tuple[str, ...]]:
    """Every parameter of `model` (`models.init_params`' names) -> its logical axis names, one per
    dimension. Linear regression's w and b are scalars: no axes."""
    if model == "linear":
        return {name: () for layer in models.layer_names("linear") for name in layer}
    return _mlp_axes(layers)


def spec(logical: tuple[str, ...], rules: Mapping[str, str]) -> P:
    """The PartitionSpec of one array whose dimensions are `logical`: each dimension split over the mesh
    axis its rule names, or whole (None) when no rule names it."""
    for name in logical:
        if name not in LOGICAL_AXES:
            raise LabInputError("unknown_logical_axis", "unknown logical axis {axis!r}; the logical axes are {axes}",
                                axis=name, axes=", ".join(LOGICAL_AXES))
    mesh_axes = [rules.get(name) for name in logical]
    for axis in mesh_axes:
        if axis is not None and axis not in AXES:
            raise LabInputError("unknown_mesh_axis", "unknown mesh axis {axis!r}; the mesh axes are {axes}",
                                axis=axis, axes=", ".join(AXES))
    used = [axis for axis in mesh_axes if axis is not None]
    if len(used) != len(set(used)):
        raise LabInputError("mesh_axis_twice", "the rules split two dimensions of {logical} over one mesh axis: "
                            "{axes}", logical=logical, axes=mesh_axes)
    return P(*mesh_axes)


def partition_specs(axes: Mapping[str, tuple[str, ...]], rules: Mapping[str, str]) -> dict[str, P]:
    """Every parameter's PartitionSpec under `rules` (logical axis -> mesh axis), from `param_axes`."""
    return {name: spec(logical, rules) for name, logical in axes.items()}
