"""The mesh axes that the programs shard over, each named once here, and the one function that builds
their mesh.

Why: every parallelism the lab teaches is one named axis of one device mesh: data parallelism splits the
batch over `data`, tensor parallelism a layer's hidden width over `model`, pipeline parallelism the layers
over `stage`. When each program spelled its own axis names and built its own mesh, two programs could
disagree on a name or on which devices a mesh takes. Here an axis has one name, the axes one order, and a
mesh of some of them is always the first prod(sizes) devices, laid out in that order.

The idea is MaxText's: its config lists the mesh's axes once (`mesh_axes`) and maps a model's logical
axis names onto them (`logical_axis_rules`, here `train.logical`); Flax's logical partitioning
(`flax.linen.partitioning`, `nn.logical_to_mesh_axes`) is the same split between what a model names and
where a run puts it.

    replica hybrid sharded data parallelism (HSDP): groups of `data` devices, each holding the whole sharded
            state, side by side (`train.zero`)
    data    data parallelism: the batch's rows (also pmap's axis_name: `runtime.DATA_AXIS`)
    stage   pipeline parallelism: one pipeline stage per device (`train.pipeline`)
    expert  expert parallelism: a mixture of experts' experts (`train.experts`)
    seq     context parallelism: the transformer's positions (`train.context`)
    model   tensor parallelism: Megatron's split of the MLP's hidden width (`train.tensor`)

A run asks only for the axes it uses; an axis it does not ask for has size 1 (`axis_sizes`). The order
above is the mesh's, outermost first: the last axis varies fastest over the device list, so `model`, whose
collectives run inside every layer, spans neighbouring devices.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import jax
from jax.sharding import AxisType, Mesh

from pmap_core.runtime import DATA_AXIS
from pmap_core.validation import LabInputError

REPLICA_AXIS = "replica"
STAGE_AXIS = "stage"
EXPERT_AXIS = "expert"
SEQ_AXIS = "seq"
MODEL_AXIS = "model"
# The axes a layout spreads a model over, in the order a mesh lays them out (outermost first): the planner's.
AXES = (DATA_AXIS, STAGE_AXIS, EXPERT_AXIS, SEQ_AXIS, MODEL_AXIS)
# Every mesh axis: replica, outside data, copies what a data group holds (its link may be the slow one).
MESH_AXES = (REPLICA_AXIS, *AXES)

__all__ = ["AXES", "DATA_AXIS", "EXPERT_AXIS", "MESH_AXES", "MODEL_AXIS", "REPLICA_AXIS", "SEQ_AXIS", "STAGE_AXIS",
           "axis_sizes", "build_mesh", "check_axes"]


def check_axes(names: object) -> tuple[str, ...]:
    """`names` in the mesh's order, or a LabInputError that names the first unknown one."""
    names = tuple(names)
    for name in names:
        if name not in MESH_AXES:
            raise LabInputError("unknown_mesh_axis", "unknown mesh axis {axis!r}; the mesh axes are {axes}",
                                axis=name, axes=", ".join(MESH_AXES))
    return tuple(axis for axis in MESH_AXES if axis in names)


def build_mesh(sizes: Mapping[str, int], axis_types: AxisType | None = None) -> Mesh:
    """A mesh of the axes in `sizes` (axis name -> devices along it), in the order of `MESH_AXES` whatever the
    mapping's order, over the first prod(sizes) devices. `axis_types` applies to every axis; None keeps
    `jax.make_mesh`'s default (Explicit on this JAX: every array's type names its sharding), Auto lets
    `shard_map` and the compiler take inputs as they come."""
    axes = check_axes(sizes)
    if not axes:
        raise LabInputError("empty_mesh", "a mesh needs at least one axis, one of {axes}", axes=", ".join(MESH_AXES))
    for axis in axes:
        size = sizes[axis]
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise LabInputError("mesh_axis_size", "mesh axis {axis!r} needs a whole number of devices ≥ 1, "
                                "got {size!r}", axis=axis, size=size)
    shape = tuple(sizes[axis] for axis in axes)
    devices = jax.devices()
    needed = math.prod(shape)
    if needed > len(devices):
        raise LabInputError("mesh_too_large", "a {shape} mesh needs {needed} devices; there are {devices}",
                            shape=" × ".join(f"{axis}={sizes[axis]}" for axis in axes), needed=needed,
                            devices=len(devices))
    types = None if axis_types is None else (axis_types,) * len(axes)
    return jax.make_mesh(shape, axes, axis_types=types, devices=devices[:needed])


def axis_sizes(mesh: Mesh) -> dict[str, int]:
    """Every axis of `MESH_AXES` with its size in `mesh`: 1 for an axis the mesh does not have."""
    return {axis: int(mesh.shape.get(axis, 1)) for axis in MESH_AXES}
