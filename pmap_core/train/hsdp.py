"""Hybrid sharded data parallelism (HSDP): a `replica` axis of R groups beside `data`, every group holding the same
ZeRO/FSDP shards of the training state (`train.zero`'s strategies over the X = D/R devices of a group).

Sources: PyTorch FSDP's HYBRID_SHARD (Zhao et al. 2023, "PyTorch FSDP", §3.2.2: shard within a group, replicate
across groups); MaxText's dcn_data_parallelism × ici_fsdp_parallelism (FSDP inside a pod, replicas across pods).
One step: the gradient is reduce-scattered over `data`, as ZeRO does within one group, and each device's shard (the
whole gradient under dp) is then all-reduced over `replica`: 1/X of the gradient crosses the replica axis, which may
be the slow link (across processes under `launch`, where the replica axis is the outer one).

Everything the axis adds lives here: its setting (ZeRO's settings hold it), the mesh and the batch's split, the
all-reduce in the step, the refusal of another impl, and the bytes over the replica axis. `train.zero` calls these
hooks; with R = 1 each is ZeRO's own.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
from jax import lax
from jax.sharding import AxisType, Mesh
from jax.sharding import PartitionSpec as P

from pmap_core.costs.analytic import GRAD_DTYPE_BYTES, zero_model
from pmap_core.train.mesh import DATA_AXIS, REPLICA_AXIS, build_mesh
from pmap_core.train.settings import setting
from pmap_core.validation import LabInputError

MAX_MESH_REPLICA = 64  # groups on the replica axis

__all__ = ["MAX_MESH_REPLICA", "HsdpLayout", "all_reduce_over_groups", "batch_rows", "group_size", "hsdp_layouts",
           "mesh", "refusal", "replica_comm_bytes", "replica_setting"]


def replica_setting() -> Any:
    """The setting R, a field of the sharded state's settings (`--mesh replica=R,data=X` sets it)."""
    return setting(
        1, "groups R on the replica axis (--mesh replica=R,data=X): hybrid sharded data parallelism, the "
        "strategy's state sharded over the X devices of each group and replicated over the R groups; the gradient "
        "reduce-scattered within a group, then all-reduced over the groups ({low}–{high})", low=1,
        high=MAX_MESH_REPLICA, flag=False, reported=True, axis=REPLICA_AXIS)


def group_size(devices: int, replicas: int) -> int:
    """X: the devices of one data group, which share the state out."""
    return devices // replicas


def batch_rows(replicas: int) -> P:
    """The batch's rows over every device, the replica axis outermost."""
    return P((REPLICA_AXIS, DATA_AXIS)) if replicas > 1 else P(DATA_AXIS)


def mesh(devices: int, replicas: int) -> Mesh:
    """The first `devices` devices as replica × data (Auto: shard_map takes inputs as they come)."""
    if replicas == 1:
        return build_mesh({DATA_AXIS: devices}, AxisType.Auto)
    return build_mesh({REPLICA_AXIS: replicas, DATA_AXIS: group_size(devices, replicas)}, AxisType.Auto)


def all_reduce_over_groups(grad: jax.Array, replicas: int, comm_dtype: Any) -> jax.Array:
    """Inside shard_map: the gradient a device holds once reduced within its group, summed over the R groups."""
    return lax.psum(grad.astype(comm_dtype), REPLICA_AXIS) if replicas > 1 else grad


def refusal(config) -> LabInputError | None:
    """Why a replica axis cannot run under `config.impl` (only the sharded state's program has one), or None."""
    if config.mesh_replica == 1:
        return None
    return LabInputError("replica_needs_jit", "a replica axis ({replicas} groups) replicates the sharded training "
                         "state of impl jit; got impl {impl!r}", replicas=config.mesh_replica, impl=config.impl)


def replica_comm_bytes(params: float, group: int, replicas: int, strategy: str, precision: str = "float32",
                       grad_dtype: str = "float32") -> float:
    """Bytes each device sends per step over the replica axis: the gradient it holds once reduced within its data
    group of `group` devices (a 1/group shard under ZeRO, the whole Ψ under dp), all-reduced over the R groups by a
    ring, 2(R−1)/R of it (Zhao et al. 2023, §3.2.2)."""
    values = params if strategy == "dp" else params / group
    value_bytes = 2.0 if precision == "mixed" else float(GRAD_DTYPE_BYTES[grad_dtype])
    return 2 * (replicas - 1) / replicas * values * value_bytes


@dataclasses.dataclass(frozen=True)
class HsdpLayout:
    """One way of putting D devices in R replica groups of X = D/R, per parameter of the model: the bytes one device
    holds (its state over X) and sends per step over each axis."""

    replicas: int
    data: int
    held: float          # the state's bytes per parameter (ZeRO's, over the X devices of a group)
    data_sent: float     # the strategy's collectives within a group (`zero_comm_bytes_per_step` over X)
    replica_sent: float  # the gradient a device holds after them, all-reduced over the R groups


def hsdp_layouts(devices: int, strategy: str, precision: str = "float32", optimizer: str = "sgd",
                 grad_dtype: str = "float32") -> list[HsdpLayout]:
    """Every replica × data split of `devices`, R = 1 first (one ZeRO/FSDP group over every device), per parameter
    (`zero_model`, `replica_comm_bytes` of Ψ = 1)."""
    layouts = []
    for replicas in (r for r in range(1, devices + 1) if devices % r == 0):
        data = group_size(devices, replicas)
        memory, sent = zero_model(1.0, data, strategy, precision, optimizer, grad_dtype)
        layouts.append(HsdpLayout(replicas, data, memory.total, sent,
                                  replica_comm_bytes(1.0, data, replicas, strategy, precision, grad_dtype)))
    return layouts
