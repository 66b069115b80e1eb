"""Mistakes with the runtime, compilation, timing and tracing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from pmap_core.hlo import collectives, normalize_hlo
from pmap_core.practice.pitfalls.types import RaisedInChild
from pmap_core.runtime import DATA_AXIS
from pmap_core.thread_warnings import warnings_of_this_thread
from pmap_core.timing import time_call

# --- the device count is fixed when JAX starts --------------------------------
# These run in a fresh Python process: the server's own runtime must stay untouched.

_CHILD = """
import json, sys
result = {}
try:
    exec(sys.argv[1])
    print(json.dumps({"values": result}))
except Exception as error:
    print(json.dumps({"error": [type(error).__name__, str(error)]}))
"""


def run_in_fresh_python(snippet: str) -> dict[str, Any]:
    """Run `snippet` in a new process with JAX unconfigured; return its `result` dict or re-raise its error."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_NUM_CPU_DEVICES", "XLA_FLAGS", "PMAP_LAB_DEVICES")}
    env["JAX_PLATFORMS"] = "cpu"
    done = subprocess.run([sys.executable, "-c", _CHILD, snippet], capture_output=True, text=True,
                          env=env, timeout=180)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"child Python failed: {done.stderr.strip()[-500:]}")
    report = json.loads(lines[-1])
    if "error" in report:
        raise RaisedInChild(*report["error"])
    return report["values"]


def late_config_mistake() -> dict[str, Any]:
    return run_in_fresh_python(
        "import jax, jax.numpy as jnp\n"
        "jnp.ones(3).block_until_ready()          # the first JAX operation starts the backend\n"
        "jax.config.update('jax_num_cpu_devices', 4)\n"
        "result['devices'] = jax.device_count()\n"
    )


def late_config_fix() -> dict[str, Any]:
    return run_in_fresh_python(
        "import jax\n"
        "jax.config.update('jax_num_cpu_devices', 4)  # right after import, before any operation\n"
        "result['devices'] = jax.device_count()\n"
    )


def late_xla_flags_mistake() -> dict[str, Any]:
    return run_in_fresh_python(
        "import os, jax\n"
        "result['devices_before'] = jax.device_count()  # starts the backend\n"
        "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=4'\n"
        "result['devices_after'] = jax.device_count()\n"
    )


def late_xla_flags_fix() -> dict[str, Any]:
    return run_in_fresh_python(
        "import os\n"
        "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=4'  # before JAX starts\n"
        "import jax\n"
        "result['devices'] = jax.device_count()\n"
    )


# --- pmap already compiles ----------------------------------------------------

def pmap_of_jit_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.ones((n, 256))
    f = lambda v: jnp.tanh(v) * 2  # noqa: E731
    plain, wrapped = jax.pmap(f), jax.pmap(jax.jit(f))  # the second is what the tutorial calls standard
    same_hlo = normalize_hlo(plain.lower(x).compile().as_text()) == \
        normalize_hlo(wrapped.lower(x).compile().as_text())
    return {"same_compiled_hlo": same_hlo,
            "pmap_f_median_s": time_call(plain, x, repeats=10).median_s,
            "pmap_jit_f_median_s": time_call(wrapped, x, repeats=10).median_s}


def pmap_of_jit_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    out = jax.pmap(lambda v: jnp.tanh(v) * 2)(jnp.ones((n, 256)))  # pmap traces and compiles f itself
    return {"output_shape": out.shape}


def jit_of_pmap_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.arange(float(n))
    traces = []

    def f(v):
        traces.append(1)  # runs once per trace, not per call
        return v * 2

    with warnings_of_this_thread() as caught:  # not catch_warnings: that one is process-wide
        outer = jax.jit(jax.pmap(f))
        results = [outer(x) for _ in range(3)]
    return {"warnings": [str(w.message)[:200] for w in caught], "traces_for_3_calls": len(traces),
            "output": np.asarray(results[-1]), "output_devices": len(results[-1].sharding.device_set)}


def jit_of_pmap_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    out = jax.pmap(lambda v: v * 2)(jnp.arange(float(n)))  # pmap is already jit(shard_map(...))
    return {"output": np.asarray(out), "output_devices": len(out.sharding.device_set)}


# --- y[0] on a pmap output is a cross-device operation -------------------------

def index_output_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    y = jax.pmap(lambda v: v * 2)(jnp.ones((n, 250_000)))
    row = y[0]  # a new computation over the whole sharded array
    # The same indexing compiled on its own, to read what it does in its HLO.
    compiled = jax.jit(lambda v: v[0]).lower(y).compile()
    found = collectives(compiled.as_text())
    return {"y0_shape": row.shape, "y0_devices": len(row.sharding.device_set),
            "compiled_like_y0": compiled.output_shardings == row.sharding,
            "y0_collectives": [f"{c.kind} {', '.join(c.shapes)}" for c in found],
            "y0_collective_bytes_per_device": sum(c.operand_bytes for c in found), "row_bytes": row.nbytes,
            "y0_median_s": time_call(lambda: y[0], repeats=10).median_s}


def index_output_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    y = jax.pmap(lambda v: v * 2)(jnp.ones((n, 250_000)))
    shard = y.addressable_shards[0]  # the piece already sitting on device 0: no computation
    return {"shard_shape": shard.data.shape, "shard_device": str(shard.device),
            "shard_median_s": time_call(lambda: y.addressable_shards[0].data, repeats=10).median_s}


# --- timing asynchronous, compiled code ---------------------------------------

def _heavy(a):
    return jnp.tanh(a @ a) @ a


def timing_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.ones((n, 256, 256)) / 256
    f = jax.pmap(lambda a: _heavy(a))
    start = time.perf_counter()
    f(x)  # first call: trace + compile are included, and the run itself is not waited for
    first = time.perf_counter() - start
    start = time.perf_counter()
    out = f(x)  # later call: returns as soon as the work is queued
    queued = time.perf_counter() - start
    out.block_until_ready()
    return {"first_call_unblocked_s": first, "later_call_unblocked_s": queued}


def timing_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    x = jnp.ones((n, 256, 256)) / 256
    timing = time_call(jax.pmap(lambda a: _heavy(a)), x, repeats=5)  # blocks on every result; compile timed apart
    return {"first_call_s": timing.first_call_s, "compile_s": timing.compile_s, "median_s": timing.median_s}


# --- the shard_map gradient trap ----------------------------------------------

def _loss(w, x, y):
    return jnp.mean((w * x - y) ** 2)


def _shard_map_grad(body, **options):
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    n = jax.local_device_count()
    mesh = Mesh(np.array(jax.local_devices()), (DATA_AXIS,))
    x = jnp.arange(2.0 * n)
    sharded = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P(), P(DATA_AXIS), P(DATA_AXIS)), out_specs=P(),
                                    **options))
    return float(sharded(jnp.array(0.5), x, 3 * x + 1)), float(jax.grad(_loss)(jnp.array(0.5), x, 3 * x + 1))


def shard_map_trap_mistake() -> dict[str, Any]:
    # Default check_vma=True: w is known to be the same on every device, so autodiff
    # already sums its gradient over devices. pmean on top multiplies by D.
    got, full_batch = _shard_map_grad(lambda w, x, y: lax.pmean(jax.grad(_loss)(w, x, y), DATA_AXIS))
    return {"gradient": got, "full_batch_gradient": full_batch, "ratio": got / full_batch,
            "devices": jax.local_device_count()}


def shard_map_trap_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    pmean_grad = lambda w, x, y: lax.pmean(jax.grad(_loss)(w, x, y), DATA_AXIS)  # noqa: E731
    no_check, full_batch = _shard_map_grad(pmean_grad, check_vma=False)  # pmap's behaviour
    pcast, _ = _shard_map_grad(
        lambda w, x, y: lax.pmean(jax.grad(_loss)(lax.pcast(w, DATA_AXIS, to="varying"), x, y), DATA_AXIS))
    divided, _ = _shard_map_grad(lambda w, x, y: jax.grad(_loss)(w, x, y) / n)
    return {"check_vma_false_plus_pmean": no_check, "pcast_plus_pmean": pcast,
            "no_collective_divide_by_D": divided, "full_batch_gradient": full_batch}


# --- Python side effects run at trace time only --------------------------------

def side_effects_mistake() -> dict[str, Any]:
    n = jax.local_device_count()
    seen = []

    def f(v):
        seen.append(repr(v))  # Python code: runs while tracing, with a tracer, once
        return v + 1

    step = jax.pmap(f)
    step(jnp.arange(float(n)))
    step(jnp.arange(float(n)))
    return {"calls_made": 2, "appends": len(seen), "what_was_seen": seen[0][:60]}


def side_effects_fix() -> dict[str, Any]:
    n = jax.local_device_count()
    seen = []

    def f(v):
        jax.debug.callback(lambda value: seen.append(float(value)), v)  # runs on every call, per device
        return v + 1

    step = jax.pmap(f)
    step(jnp.arange(float(n))).block_until_ready()
    step(jnp.arange(float(n))).block_until_ready()
    jax.effects_barrier()
    return {"calls_made": 2, "appends": len(seen), "values_seen": sorted(seen)}
