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

    embed     the features a layer reads: the MLP's input features; the transformer's d_model (its
              residual stream's width)
    mlp       the MLP's hidden width; the transformer's MLP width (4·d_model)
    heads     the transformer's attention heads
    head_dim  the dimensions of one head (d_model / heads)
    vocab     the transformer's vocabulary (its token embedding's rows, its output projection's columns)
    length    the positions of a sequence (the position embedding's rows)
    batch     the rows of a batch (data, not a parameter)
    experts   the experts of a mixture-of-experts block (their stacked weights' leading axis)
    router    the router's columns, one logit per expert: never split (every device scores every expert for its own
              tokens), so not `experts` (MaxText's gate kernel is ("embed", None) beside its experts' "exp")

A rule maps a logical name to one mesh axis, or to a tuple of them: the dimension is split over their product,
outermost first (MaxText's `activation_batch: [data, fsdp, expert]`).
"""

from __future__ import annotations

from collections.abc import Mapping

from jax.sharding import PartitionSpec as P

from pmap_core.train import models
from pmap_core.train.mesh import AXES, DATA_AXIS, EXPERT_AXIS, MODEL_AXIS, SEQ_AXIS
from pmap_core.validation import LabInputError

EMBED, MLP, HEADS, HEAD_DIM, VOCAB, LENGTH, BATCH = "embed", "mlp", "heads", "head_dim", "vocab", "length", "batch"
EXPERT, ROUTER = "experts", "router"
LOGICAL_AXES = (EMBED, MLP, HEADS, HEAD_DIM, VOCAB, LENGTH, BATCH, EXPERT, ROUTER)
Rule = str | tuple[str, ...]  # one mesh axis, or several whose product splits the dimension

# Megatron's split (train.tensor): the MLP's hidden width and the attention's heads over `model`, the batch's
# rows over `data`. Everything else whole on every device: the transformer's embeddings, LayerNorms and output
# projection (a vocabulary-parallel head is not done here).
TENSOR_PARALLEL = {MLP: MODEL_AXIS, HEADS: MODEL_AXIS, BATCH: DATA_AXIS}
# FSDP × TP (train.tensor, strategy zero3): every weight's `embed` dimension over `data` as well (the MLP's
# first weight's rows; every transformer parameter that has one), gathered over `data` just before use.
FSDP_TENSOR_PARALLEL = {**TENSOR_PARALLEL, EMBED: DATA_AXIS}
# The transformer's residual stream, (batch, length, embed): the batch's rows over `data`, whole over `model`
# (where the sums over the split heads and MLP width go). Always the tensor-parallel rules: under FSDP the
# `embed` of the weights is split over `data`, not the activations'.
RESIDUAL = (BATCH, LENGTH, EMBED)
# A sequence's tokens, (batch, length): the transformer's inputs and targets.
TOKENS = (BATCH, LENGTH)
# Sequence parallelism (Megatron-SP: Korthikanti et al. 2022, §4.2.2; train.tensor with sequence_parallel on): the
# activations' positions over `model` as well, so the LayerNorms and residual adds run on each device's 1/t of
# them. For activations only (the residual stream, the tokens): the position embedding's rows stay whole.
SEQUENCE_PARALLEL = {**TENSOR_PARALLEL, LENGTH: MODEL_AXIS}
# Context parallelism (train.context): the activations' positions over `seq`, the batch's rows over `data`; every
# parameter whole (the position embedding's rows too: each device reads its own positions' rows).
CONTEXT_PARALLEL = {BATCH: DATA_AXIS, LENGTH: SEQ_AXIS}
# Expert parallelism (train.experts; GShard, Lepikhin et al. 2020, §3.2: attention split by the batch, the experts
# split over devices): the experts over `expert`; the batch's rows over data × expert, so that every device of the
# expert axis routes its own tokens (MaxText and GShard split the batch over the expert axis too). Everything else
# whole: attention, the router, the embeddings, each replicated over data × expert.
EXPERT_PARALLEL = {EXPERT: EXPERT_AXIS, BATCH: (DATA_AXIS, EXPERT_AXIS)}


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


# A transformer block's parameters (`transformer.block_names`' order): LayerNorms over the residual width, the
# attention's projections by heads (wq/wk/wv (d_model, heads, d_head), wo (heads, d_head, d_model)), the MLP's
# two weights.
_BLOCK_AXES = ((EMBED,), (EMBED,), (EMBED, HEADS, HEAD_DIM), (EMBED, HEADS, HEAD_DIM), (EMBED, HEADS, HEAD_DIM),
               (HEADS, HEAD_DIM, EMBED), (EMBED,), (EMBED,), (EMBED,), (EMBED, MLP), (MLP,), (MLP, EMBED), (EMBED,))
# A mixture-of-experts block's router (embed, router) and experts (`transformer.MOE_NAMES`' order) in place of the
# MLP's two weights and biases: each expert's weights and biases carry the expert axis first.
_MOE_AXES = ((EMBED, ROUTER), (EXPERT, EMBED, MLP), (EXPERT, MLP), (EXPERT, MLP, EMBED), (EXPERT, EMBED))
# The embedding (token table, position table) and the head (final LayerNorm, output projection, its bias).
_EMBED_AXES = ((VOCAB, EMBED), (LENGTH, EMBED))
_HEAD_AXES = ((EMBED,), (EMBED,), (EMBED, VOCAB), (VOCAB,))


def _transformer_axes(layers: int, experts: int = 0) -> dict[str, tuple[str, ...]]:
    """The transformer's parameters by layer (`models.layer_names`): the embedding, each block, the head."""
    names = models.layer_names(models.TRANSFORMER, layers, experts)
    block = _BLOCK_AXES[:-4] + _MOE_AXES if experts else _BLOCK_AXES
    kinds = (_EMBED_AXES, *([block] * layers), _HEAD_AXES)
    return {name: axes for layer, layer_axes in zip(names, kinds, strict=True)
            for name, axes in zip(layer, layer_axes, strict=True)}


def param_axes(model: str, layers: int = 2, experts: int = 0) -> dict[str, tuple[str, ...]]:
    """Every parameter of `model` (`models.init_params`' names) -> its logical axis names, one per
    dimension (`experts`: the transformer's, > 0 for a mixture of experts). Linear regression's w and b are
    scalars: no axes."""
    if model == "linear":
        return {name: () for layer in models.layer_names("linear") for name in layer}
    if model == models.TRANSFORMER:
        return _transformer_axes(layers, experts)
    return _mlp_axes(layers)


def spec(logical: tuple[str, ...], rules: Mapping[str, Rule]) -> P:
    """The PartitionSpec of one array whose dimensions are `logical`: each dimension split over the mesh
    axis (or axes) its rule names, or whole (None) when no rule names it."""
    for name in logical:
        if name not in LOGICAL_AXES:
            raise LabInputError("unknown_logical_axis", "unknown logical axis {axis!r}; the logical axes are {axes}",
                                axis=name, axes=", ".join(LOGICAL_AXES))
    mesh_axes = [rules.get(name) for name in logical]
    used = [axis for rule in mesh_axes if rule is not None for axis in ((rule,) if isinstance(rule, str) else rule)]
    for axis in used:
        if axis not in AXES:
            raise LabInputError("unknown_mesh_axis", "unknown mesh axis {axis!r}; the mesh axes are {axes}",
                                axis=axis, axes=", ".join(AXES))
    if len(used) != len(set(used)):
        raise LabInputError("mesh_axis_twice", "the rules split two dimensions of {logical} over one mesh axis: "
                            "{axes}", logical=logical, axes=mesh_axes)
    return P(*mesh_axes)


def partition_specs(axes: Mapping[str, tuple[str, ...]], rules: Mapping[str, Rule]) -> dict[str, P]:
    """Every parameter's PartitionSpec under `rules` (logical axis -> mesh axis), from `param_axes`."""
    return {name: spec(logical, rules) for name, logical in axes.items()}
