"""Migration mistakes: pmap code written for older JAX, run on the installed one.

Since JAX 0.8 `jax.pmap` is `jit(shard_map(...))`, and 0.10 removed the flag that brought the old
implementation back. Each pair below runs live: what older code does now (the real message, or the
real result), and the form the installed JAX wants.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.practice.pitfalls.runtime import run_in_fresh_python
from pmap_core.runtime import DATA_AXIS

# --- inputs are no longer resharded silently: pmap ----------------------------

def committed_input_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    batch = jax.device_put(jnp.arange(float(n)), jax.local_devices()[0])  # committed to device 0
    out = jax.pmap(lambda v: v * 2)(batch)  # the old pmap copied it to the other devices without a word
    return {"output": np.asarray(out), "output_devices": len(out.sharding.device_set)}


def committed_input_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    batch = jax.device_put(jnp.arange(float(n)), jax.local_devices()[0])
    mesh = jax.make_mesh((n,), (DATA_AXIS,), devices=jax.local_devices())
    placed = jax.device_put(batch, NamedSharding(mesh, P(DATA_AXIS)))  # reshard it yourself: one row per device
    out = jax.pmap(lambda v: v * 2, axis_name=DATA_AXIS)(placed)  # axis_name: the mesh's axis name
    return {"output": np.asarray(out), "output_devices": len(out.sharding.device_set),
            "numpy": np.arange(float(n)) * 2}


# --- inputs are no longer resharded silently: shard_map ------------------------

def in_specs_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    mesh = jax.make_mesh((n,), (DATA_AXIS,), devices=jax.local_devices())  # axes Explicit by default here
    batch = np.arange(2.0 * n)  # a host batch, as a data loader returns it
    double = jax.shard_map(lambda v: v * 2, mesh=mesh, in_specs=P(DATA_AXIS), out_specs=P(DATA_AXIS))
    return {"output": double(batch)}


def in_specs_fix() -> dict[str, Any]:
    from jax.sharding import AxisType

    n = jax.local_device_count()
    mesh = jax.make_mesh((n,), (DATA_AXIS,), devices=jax.local_devices())
    batch = np.arange(2.0 * n)
    double = jax.shard_map(lambda v: v * 2, mesh=mesh, in_specs=P(DATA_AXIS), out_specs=P(DATA_AXIS))
    placed = jax.device_put(batch, NamedSharding(mesh, P(DATA_AXIS)))  # place it as in_specs says, first
    out = double(placed)
    # What makes the difference: over a mesh whose axes are Auto, shard_map still reshards on its own.
    auto = jax.make_mesh((n,), (DATA_AXIS,), axis_types=(AxisType.Auto,), devices=jax.local_devices())
    resharded = jax.shard_map(lambda v: v * 2, mesh=auto, in_specs=P(DATA_AXIS), out_specs=P(DATA_AXIS))(batch)
    return {"mesh_axis_types": str(mesh.axis_types), "placed_type": str(jax.typeof(placed)),
            "output": np.asarray(out), "numpy": batch * 2, "output_spec": str(out.sharding.spec),
            "auto_axes_output": np.asarray(resharded)}


# --- two mesh constructors, two axis types ----------------------------------------------

def mesh_constructors_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    batch = np.arange(2.0 * n)  # a host batch, as a data loader returns it
    # This call ran over `jax.sharding.Mesh(np.array(jax.local_devices()), ('data',))`; only the mesh is new:
    mesh = jax.make_mesh((n,), (DATA_AXIS,), devices=jax.local_devices())
    double = jax.shard_map(lambda v: v * 2, mesh=mesh, in_specs=P(DATA_AXIS), out_specs=P(DATA_AXIS))
    return {"output": double(batch)}


def mesh_constructors_fix() -> dict[str, Any]:
    from jax.sharding import AxisType, Mesh

    n = jax.local_device_count()
    batch = np.arange(2.0 * n)
    old = Mesh(np.array(jax.local_devices()), (DATA_AXIS,))  # the constructor the call was written for
    new = jax.make_mesh((n,), (DATA_AXIS,), devices=jax.local_devices())
    # Ask make_mesh for the axis type the call was written for, instead of taking its default:
    auto = jax.make_mesh((n,), (DATA_AXIS,), axis_types=(AxisType.Auto,), devices=jax.local_devices())

    def double(mesh):
        return jax.shard_map(lambda v: v * 2, mesh=mesh, in_specs=P(DATA_AXIS), out_specs=P(DATA_AXIS))

    return {"Mesh_axis_types": str(old.axis_types), "make_mesh_axis_types": str(new.axis_types),
            "make_mesh_auto_axis_types": str(auto.axis_types), "output_over_Mesh": np.asarray(double(old)(batch)),
            "output_over_make_mesh_auto": np.asarray(double(auto)(batch)), "numpy": batch * 2}


# --- nested pmap ----------------------------------------------------------------

def grid(devices: int) -> tuple[int, int]:
    """(a, b) with a·b = devices and a the largest divisor at most √devices: 8 → (2, 4), 7 → (1, 7)."""
    a = max(d for d in range(1, math.isqrt(devices) + 1) if devices % d == 0)
    return a, devices // a


def nested_pmap_mistake() -> dict[str, Any]:
    outer, inner = grid(jax.local_device_count())
    x = jnp.arange(float(outer * inner)).reshape(outer, inner)
    # Sum over the inner axis, per outer group: two pmaps, one inside the other.
    f = jax.pmap(jax.pmap(lambda v: lax.psum(v, "inner"), axis_name="inner"), axis_name="outer")
    return {"output": f(x)}


def nested_pmap_fix() -> dict[str, Any]:
    outer, inner = grid(jax.local_device_count())
    x = jnp.arange(float(outer * inner)).reshape(outer, inner)
    mesh = jax.make_mesh((outer, inner), ("outer", "inner"), devices=jax.local_devices())  # one 2-D mesh
    placed = jax.device_put(x, NamedSharding(mesh, P("outer", "inner")))
    f = jax.shard_map(lambda v: lax.psum(v, "inner"), mesh=mesh, in_specs=P("outer", "inner"),
                      out_specs=P("outer", "inner"))  # one shard_map maps both axes
    out = f(placed)
    return {"mesh": dict(mesh.shape), "input_type": str(jax.typeof(placed)), "output": np.asarray(out),
            "numpy": np.broadcast_to(np.asarray(x).sum(axis=1, keepdims=True), x.shape)}


# --- the flag that brought the old pmap back is gone ----------------------------------

def merge_flag_mistake() -> dict[str, Any]:
    jax.config.update("jax_pmap_shmap_merge", False)  # "use the old pmap", as the migration guide once offered
    return {"output": jax.pmap(lambda v: v * 2)(jnp.arange(float(jax.local_device_count())))}


def merge_flag_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    out = jax.pmap(lambda v: v * 2)(jnp.arange(float(n)))  # no flag: this pmap is jit(shard_map(...))
    # The guide's other way back, the environment variable, in a fresh Python (read when JAX is imported):
    env = run_in_fresh_python(
        "import os, warnings\n"
        "os.environ['JAX_PMAP_SHMAP_MERGE'] = '0'\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    import jax, jax.numpy as jnp\n"
        "    out = jax.pmap(lambda v: v * 2)(jnp.arange(1.0))\n"
        "result['output_sharding'] = type(out.sharding).__name__\n"
        "result['warnings'] = len(caught)\n"
    )
    return {"output_sharding": type(out.sharding).__name__, "output": np.asarray(out),
            "with_JAX_PMAP_SHMAP_MERGE_0": env["output_sharding"], "warnings_about_it": env["warnings"]}


# --- jax.device_put_sharded is gone ------------------------------------------------------

def device_put_sharded_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    pieces = [np.full(2, float(d), np.float32) for d in range(n)]  # one piece per device, all different
    return {"stacked": jax.device_put_sharded(pieces, jax.local_devices())}


def device_put_sharded_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    pieces = [np.full(2, float(d), np.float32) for d in range(n)]
    mesh = jax.make_mesh((n,), (DATA_AXIS,), devices=jax.local_devices())
    stacked = jax.device_put(np.stack(pieces), NamedSharding(mesh, P(DATA_AXIS)))  # row d goes to device d
    shards = sorted(stacked.addressable_shards, key=lambda s: s.index[0].start or 0)
    return {"shape": stacked.shape, "type": str(jax.typeof(stacked)),
            "device_d_holds_piece_d": all(np.array_equal(s.data[0], p) for s, p in zip(shards, pieces, strict=True))
            and [s.device for s in shards] == list(mesh.devices.flat)}
