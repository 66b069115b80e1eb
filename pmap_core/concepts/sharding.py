"""Cutting a batch into D shards, and reading back which device holds what.

pmap splits its input along the leading axis: a global batch of B samples
becomes D shards of b = B / D samples, one per device. When D does not divide
B, the remainder needs an explicit policy:

- ``error``: refuse, and say which batch sizes would work;
- ``drop``: keep the first D * floor(B / D) samples, drop the tail;
- ``pad``: append zero samples up to D * ceil(B / D) and carry a mask, so the
  padded samples count for nothing in sums and means.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from pmap_core.runtime import DATA_AXIS
from pmap_core.validation import (
    MAX_BATCH,
    MAX_FEATURES,
    LabInputError,
    check_devices,
    check_elements,
    check_int,
    check_seed,
)

POLICIES = ("error", "drop", "pad")
MAX_SLICE = 64  # elements per device in the device-mapping demo


@dataclasses.dataclass(frozen=True)
class ShardPlan:
    """How B samples go to D devices. `owner[i]` is sample i's device, or -1 if dropped."""

    batch: int
    devices: int
    policy: str
    per_device: int  # b
    dropped: int
    padded: int
    owner: tuple[int, ...]

    @property
    def kept(self) -> int:
        return self.batch - self.dropped


def check_policy(policy: str) -> str:
    if policy not in POLICIES:
        raise LabInputError("unknown_policy", "policy must be one of {options}, got {value!r}",
                            options=", ".join(POLICIES), value=policy)
    return policy


def plan_shards(batch: int, devices: int, policy: str = "error") -> ShardPlan:
    """Decide b = B / D and the fate of the remainder under `policy`."""
    batch = check_int("batch", batch, 1, MAX_BATCH)
    devices = check_devices(devices)
    policy = check_policy(policy)
    remainder = batch % devices
    if remainder and policy == "error":
        lower, upper = batch - remainder, batch - remainder + devices
        raise LabInputError(
            "not_divisible",
            "batch {batch} does not split evenly over {devices} devices; nearest batch sizes that do: "
            "{nearest}; or choose the drop/pad policy",
            batch=batch, devices=devices, nearest=", ".join(str(n) for n in (lower, upper) if n > 0),
        )
    if remainder and policy == "drop":
        per_device = batch // devices
        if per_device == 0:
            raise LabInputError(
                "nothing_left", "dropping the remainder of {batch} over {devices} devices leaves no samples",
                batch=batch, devices=devices,
            )
        dropped, padded = remainder, 0
    elif remainder:  # pad
        per_device = -(-batch // devices)
        dropped, padded = 0, per_device * devices - batch
    else:
        per_device, dropped, padded = batch // devices, 0, 0
    kept = batch - dropped
    owner = tuple(i // per_device if i < kept else -1 for i in range(batch))
    return ShardPlan(batch, devices, policy, per_device, dropped, padded, owner)


def shard_batch(x: np.ndarray, plan: ShardPlan) -> tuple[np.ndarray, np.ndarray]:
    """Reshape x of shape (B, ...) to (D, b, ...) by `plan`, with a (D, b) mask of real samples."""
    if x.shape[0] != plan.batch:
        raise ValueError(f"x has {x.shape[0]} samples, the plan is for {plan.batch}")
    kept = x[: plan.kept]
    mask = np.ones(plan.kept, dtype=x.dtype)
    if plan.padded:
        kept = np.concatenate([kept, np.zeros((plan.padded, *x.shape[1:]), x.dtype)])
        mask = np.concatenate([mask, np.zeros(plan.padded, x.dtype)])
    shape = (plan.devices, plan.per_device)
    return kept.reshape(*shape, *x.shape[1:]), mask.reshape(shape)


# --- the parallel computation of the basics lab -------------------------------


def per_sample_loss(x: jax.Array) -> jax.Array:
    """A per-sample value: the mean square of the sample's features."""
    return jnp.mean(x**2, axis=-1)


@functools.lru_cache(maxsize=16)
def _masked_mean_fn(devices: int):
    """One compiled function per device count: each device sums its real samples, psum joins them."""

    def shard_step(x_shard, mask_shard):
        loss = per_sample_loss(x_shard) * mask_shard
        local_sum, local_count = jnp.sum(loss), jnp.sum(mask_shard)
        total = lax.psum(local_sum, DATA_AXIS)
        count = lax.psum(local_count, DATA_AXIS)
        return local_sum, local_count, total / count

    return jax.pmap(shard_step, axis_name=DATA_AXIS, devices=jax.devices()[:devices])


@jax.jit
def _single_device_mean(x: jax.Array) -> jax.Array:
    return jnp.mean(per_sample_loss(x))


@dataclasses.dataclass(frozen=True)
class ParallelMean:
    plan: ShardPlan
    sharded_shape: tuple[int, ...]
    device_sums: tuple[float, ...]  # each device's masked sum before psum
    device_counts: tuple[int, ...]  # real samples per device
    parallel_mean: float  # psum(sums) / psum(counts), read from device 0
    single_device_mean: float  # the same mean over the kept samples, no sharding
    max_abs_diff: float


def sample_batch(batch: int, features: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((batch, features)).astype(np.float32)


def parallel_mean(batch: int, devices: int, policy: str, features: int = 4, seed: int = 0) -> ParallelMean:
    """The mean per-sample loss computed over D shards with psum, and on one device."""
    plan = plan_shards(batch, devices, policy)
    features = check_int("features", features, 1, MAX_FEATURES)
    seed = check_seed(seed)
    check_elements("batch", plan.devices * plan.per_device * features)
    x = sample_batch(plan.batch, features, seed)
    shards, mask = shard_batch(x, plan)
    sums, counts, means = _masked_mean_fn(plan.devices)(shards, mask)
    reference = _single_device_mean(jnp.asarray(x[: plan.kept]))
    means = np.asarray(means)
    return ParallelMean(
        plan=plan,
        sharded_shape=tuple(shards.shape),
        device_sums=tuple(float(s) for s in np.asarray(sums)),
        device_counts=tuple(int(c) for c in np.asarray(counts)),
        parallel_mean=float(means[0]),
        single_device_mean=float(reference),
        max_abs_diff=float(np.max(np.abs(means - float(reference)))),
    )


# --- device mapping: the leading axis is the device axis ----------------------


@dataclasses.dataclass(frozen=True)
class DeviceRow:
    id: int
    platform: str
    device_kind: str
    process_index: int


@dataclasses.dataclass(frozen=True)
class DeviceInventory:
    rows: tuple[DeviceRow, ...]  # jax.devices(): every device of every process
    local_device_count: int  # jax.local_device_count(): this process's devices
    process_count: int


def device_inventory() -> DeviceInventory:
    rows = tuple(DeviceRow(d.id, d.platform, d.device_kind, d.process_index) for d in jax.devices())
    return DeviceInventory(rows, jax.local_device_count(), jax.process_count())


@dataclasses.dataclass(frozen=True)
class ShardOwner:
    """One addressable shard of a pmap output, as the array reports it."""

    device_id: int
    index: str  # the slice of the global array, e.g. "[2:3, :]"
    values: tuple[float, ...]


@dataclasses.dataclass(frozen=True)
class LeadingAxisMap:
    input_shape: tuple[int, ...]
    per_device_shape: tuple[int, ...]  # what f sees on each device
    output_shape: tuple[int, ...]
    sharding: str
    owners: tuple[ShardOwner, ...]
    in_device_order: bool  # slice d is held by jax.devices()[d], for every d


def mapped_fn(x: jax.Array) -> jax.Array:
    """What each device runs: add 1000 x its position on the device axis, so the result shows who ran it."""
    return x + 1000 * lax.axis_index(DATA_AXIS)


@functools.lru_cache(maxsize=16)
def _mapped(devices: int):
    return jax.pmap(mapped_fn, axis_name=DATA_AXIS, devices=jax.devices()[:devices])


def _format_index(index: tuple[slice, ...]) -> str:
    def one(s: slice) -> str:
        if s.start is None and s.stop is None:
            return ":"
        return f"{s.start or 0}:{s.stop}"
    return "[" + ", ".join(one(s) for s in index) + "]"


def map_leading_axis(devices: int, per_device: int) -> LeadingAxisMap:
    """Run `mapped_fn` on an input of shape (D, n) and read each output shard's device and slice."""
    devices = check_devices(devices)
    per_device = check_int("per_device", per_device, 1, MAX_SLICE)
    x = jnp.arange(devices * per_device, dtype=jnp.float32).reshape(devices, per_device)
    out = _mapped(devices)(x)
    owners = tuple(
        ShardOwner(shard.device.id, _format_index(shard.index), tuple(float(v) for v in np.asarray(shard.data).ravel()))
        for shard in sorted(out.addressable_shards, key=lambda s: s.index[0].start or 0)
    )
    return LeadingAxisMap(
        input_shape=tuple(x.shape),
        per_device_shape=tuple(x.shape[1:]),
        output_shape=tuple(out.shape),
        sharding=str(out.sharding),
        owners=owners,
        in_device_order=[o.device_id for o in owners] == [d.id for d in jax.devices()[:devices]],
    )
