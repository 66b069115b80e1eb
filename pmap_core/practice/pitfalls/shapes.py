"""Mistakes with shapes, axes and replication: what goes in and out of pmap."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from pmap_core.runtime import DATA_AXIS

# --- the leading axis must be at most the device count ---------------------

def leading_axis_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(2.0 * n)  # shape (2n,): one flat batch, longer than the device count
    return {"output": jax.pmap(lambda v: v * 2 + 1)(x)}


def leading_axis_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(2.0 * n).reshape(n, 2)  # shape (n, 2): one row per device
    out = jax.pmap(lambda v: v * 2 + 1)(x)
    # A leading axis shorter than the device count runs too, on that many devices.
    rows = max(n // 2, 1)
    short = jax.pmap(lambda v: v * 2 + 1)(jnp.arange(float(rows)))
    return {"input_shape": x.shape, "output_shape": out.shape, "output": np.asarray(out),
            "devices_here": n, "short_axis_rows": rows, "short_axis_ran_on_devices": len(short.sharding.device_set)}


# --- the batch must divide evenly ---------------------------------------------

def indivisible_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(n + 1.0)  # one sample too many
    return {"output": jax.pmap(lambda v: v * 2)(x)}


def indivisible_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(n + 1.0)
    usable = x.shape[0] - x.shape[0] % n  # drop the remainder (or pad it up to a multiple of n)
    shards = x[:usable].reshape(n, usable // n)
    return {"dropped": x.shape[0] - usable, "shards_shape": shards.shape,
            "output": np.asarray(jax.pmap(lambda v: v * 2)(shards))}


# --- parameters must be replicated -------------------------------------------

def _linear_step(w, x, y):
    g = jax.grad(lambda w: jnp.mean((w * x - y) ** 2))(w)
    return w - 0.01 * lax.pmean(g, DATA_AXIS)


def unreplicated_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(2.0 * n).reshape(n, 2)
    w = jnp.array([0.0])  # one copy, but pmap maps axis 0 of every argument by default
    return {"w": jax.pmap(_linear_step, axis_name=DATA_AXIS)(w, x, 3 * x)}


def unreplicated_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(2.0 * n).reshape(n, 2)
    w = jnp.array([0.0])
    step = jax.pmap(_linear_step, axis_name=DATA_AXIS, in_axes=(None, 0, 0))  # None: same w on every device
    out = step(w, x, 3 * x)
    return {"output_shape": out.shape, "w_per_device": np.asarray(out).ravel()}


def device_put_replicated_mistake() -> dict[str, Any]:
    w = jnp.array([0.0])
    return {"w": jax.device_put_replicated(w, jax.local_devices())}


def device_put_replicated_fix() -> dict[str, Any]:
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    n = jax.local_device_count()
    w = jnp.array([0.0])
    mesh = Mesh(np.array(jax.local_devices()), (DATA_AXIS,))
    # For shard_map and jit: truly replicated, P() — every device holds the whole w, no device axis.
    replicated = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    # For a pmap that maps axis 0 of w: D stacked copies, one row per device.
    stacked = jax.device_put(jnp.broadcast_to(w, (n, *w.shape)), NamedSharding(mesh, PartitionSpec(DATA_AXIS)))
    return {"replicated_shape": replicated.shape,
            "devices_holding_all_of_w": sum(s.data.shape == w.shape for s in replicated.addressable_shards),
            "stacked_shape": stacked.shape, "devices_holding_a_copy": len(stacked.sharding.device_set)}


# --- all_gather(tiled=True) needs an axis to concatenate on -------------------

def gather_scalar_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(float(n))  # each device gets a scalar
    return {"output": jax.pmap(lambda v: lax.all_gather(v, DATA_AXIS, tiled=True), axis_name=DATA_AXIS)(x)}


def gather_scalar_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(float(n)).reshape(n, 1)  # each device gets shape (1,)
    tiled = jax.pmap(lambda v: lax.all_gather(v, DATA_AXIS, tiled=True), axis_name=DATA_AXIS)(x)
    stacked = jax.pmap(lambda v: lax.all_gather(v, DATA_AXIS), axis_name=DATA_AXIS)(jnp.arange(float(n)))
    return {"tiled_shape": tiled.shape, "untiled_on_scalars_shape": stacked.shape,
            "device_0_sees": np.asarray(tiled[0])}


# --- out_axes=None keeps one device's value -----------------------------------

def out_axes_none_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(float(n))
    per_device = jax.pmap(lambda v: v * 10)(x)
    returned = jax.pmap(lambda v: v * 10, out_axes=None)(x)  # the values differ per device
    return {"returned": float(returned), "per_device": np.asarray(per_device)}


def out_axes_none_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(float(n))
    # Make the value the same everywhere first; then one copy is the right answer.
    mean = jax.pmap(lambda v: lax.pmean(v * 10, DATA_AXIS), axis_name=DATA_AXIS, out_axes=None)(x)
    return {"returned": float(mean), "numpy_mean": float(np.mean(np.arange(n) * 10.0))}


# --- collectives need the pmap's axis name ------------------------------------

def unbound_axis_mistake() -> dict[str, Any]:
    x = jnp.arange(4.0)
    return {"output": lax.psum(x, DATA_AXIS)}  # no pmap around it: no axis of that name exists here


def unbound_axis_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(float(n))
    out = jax.pmap(lambda v: lax.psum(v, DATA_AXIS), axis_name=DATA_AXIS)(x)
    return {"output": np.asarray(out), "numpy_sum": float(np.arange(n).sum())}


def wrong_axis_name_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(float(n))
    return {"output": jax.pmap(lambda v: lax.pmean(v, "batch"), axis_name=DATA_AXIS)(x)}  # a name typed by hand


def wrong_axis_name_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(float(n))
    return {"output": np.asarray(jax.pmap(lambda v: lax.pmean(v, DATA_AXIS), axis_name=DATA_AXIS)(x))}


# --- one PRNG key everywhere means the same random numbers --------------------

def same_key_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    key = jax.random.key(0)
    noise = jax.pmap(lambda k, v: jax.random.normal(k, ()), in_axes=(None, 0))(key, jnp.zeros(n))
    return {"noise_per_device": np.asarray(noise), "distinct": len(set(np.asarray(noise).tolist()))}


def same_key_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    key = jax.random.key(0)
    split = jax.pmap(lambda k: jax.random.normal(k, ()))(jax.random.split(key, n))
    folded = jax.pmap(
        lambda k, v: jax.random.normal(jax.random.fold_in(k, lax.axis_index(DATA_AXIS)), ()),
        axis_name=DATA_AXIS, in_axes=(None, 0),
    )(key, jnp.zeros(n))
    return {"with_split": np.asarray(split), "with_fold_in": np.asarray(folded),
            "distinct": len(set(np.asarray(split).tolist()))}
