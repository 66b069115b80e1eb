"""From JAX 0.10.2 to 0.12: the steps a learner hits, each a small program run on the installed JAX.

Each step is a named function (the page shows its source) that returns its facts: a piece of code and
what it gave here, a value or the exception JAX raised (its type and message, verbatim), with the
warnings it raised. One process holds one JAX, so 0.10.2 cannot run beside it: `RECORDED` holds the
facts the same functions gave on JAX 0.10.2 (Python 3.11.7, CPU devices), dated history, and
`CHANGELOG` the words of JAX's changelog on each (its 0.11.0 section; the snapshot read ends before
0.11.1). A step has changed since 0.10.2 when a recorded fact differs from what ran here.

- `three_maps`: the same doubling with `jax.pmap`, `jax.smap` and `jax.shard_map` on D devices.
- `remat_now`: `jax.checkpoint_policies`, `jax.custom_remat`, the `jax_remat3` flag, and what two
  policies keep for the backward pass (`residuals_kept`).
- `empty_now`: the jaxpr of `jnp.empty`: zeros, or an uninitialized array.
- `cross_2d`: `jnp.cross` of two 2-element vectors, and the form that runs on both versions.
- `cloud_tpu_init`, `core_names`: a module and `jax.core` names removed in 0.11.0.
- `inline_enum`: `jax.Inline`, new for `jax.jit` in 0.11.0.
- `interpreter`: the Python the installed JAX asks for, and the one running.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import sys
from collections.abc import Callable
from typing import Any

import jax
import jax.core
import jax.extend.core
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.runtime import DATA_AXIS
from pmap_core.thread_warnings import warnings_of_this_thread
from pmap_core.validation import LabInputError, check_devices

# --- what one call gave -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one call gave: its value, or the exception it raised (type and message); and its warnings."""

    value: Any = None
    error_type: str | None = None
    error_message: str | None = None
    warnings: tuple[str, ...] = ()  # each `Category: message`

    @property
    def raised(self) -> bool:
        return self.error_type is not None

    def __str__(self) -> str:
        said = f"{self.error_type}: {self.error_message}" if self.raised else show(self.value)
        return "\n".join([said, *self.warnings])


def jax_message(error: BaseException) -> str:
    """An exception's message as JAX wrote it, without the note on JAX's removed frames it may end with."""
    return str(error).split("\n--------------------")[0].strip()


def attempt(call: Callable[[], Any], *expected: type[Exception]) -> Outcome:
    """`call()`: its value, or an exception of the `expected` types (any other propagates), with the
    warnings this thread raised meanwhile."""
    with warnings_of_this_thread() as caught:
        try:
            value = call()
        except expected as error:
            return Outcome(None, type(error).__name__, jax_message(error), _said(caught))
        return Outcome(value, warnings=_said(caught))


def _said(caught: list) -> tuple[str, ...]:
    return tuple(f"{w.category.__name__}: {w.message}" for w in caught)


def show(value: Any) -> str:
    """A value as text: arrays as NumPy prints them, anything else as `str` does."""
    if isinstance(value, np.ndarray):
        return np.array2string(value, separator=", ")
    return str(value)


# --- the steps ------------------------------------------------------------------------------------

MAPS = ("pmap", "smap", "shard_map")


def three_maps(devices: int) -> dict[str, Any]:
    """The same doubling of two values per device with jax.pmap, jax.smap and jax.shard_map."""
    mesh = jax.make_mesh((devices,), (DATA_AXIS,), devices=jax.devices()[:devices])
    x = np.arange(2.0 * devices, dtype=np.float32)

    def double(v):
        return v * 2

    def run_all() -> list[np.ndarray]:
        by_pmap = jax.pmap(double, axis_name=DATA_AXIS, devices=jax.devices()[:devices])(x.reshape(devices, 2))
        placed = jax.device_put(x, NamedSharding(mesh, P(DATA_AXIS)))  # as in_specs says: the mesh checks it
        with jax.set_mesh(mesh):  # smap takes its mesh from the context
            by_smap = jax.smap(double, in_axes=0, out_axes=0, axis_name=DATA_AXIS)(placed)
        by_shard_map = jax.shard_map(double, mesh=mesh, in_specs=P(DATA_AXIS), out_specs=P(DATA_AXIS))(placed)
        return [np.asarray(out).reshape(-1) for out in (by_pmap, by_smap, by_shard_map)]

    ran = attempt(run_all)  # no exception is expected: only the warnings are kept
    return {
        "[hasattr(jax, f) for f in ('pmap', 'smap', 'shard_map')]": [hasattr(jax, f) for f in MAPS],
        "jax.pmap.__doc__.strip().splitlines()[0]": jax.pmap.__doc__.strip().splitlines()[0],
        "mesh.axis_types": mesh.axis_types,
        "warnings": list(ran.warnings),
        "x": x,
        **dict(zip(MAPS, ran.value, strict=True)),
        "pmap == smap == shard_map == 2 * x": all(np.array_equal(out, 2 * x) for out in ran.value),
    }


def residuals_kept(f: Callable[..., Any], *args: Any) -> int:
    """How many values `f`'s backward pass keeps that are not its inputs: what the function `jax.vjp`
    returns holds, read off the jaxpr of the forward pass."""
    closed = jax.make_jaxpr(lambda *a: jax.vjp(f, *a))(*args)
    outputs = len(jax.tree.leaves(jax.eval_shape(f, *args)))
    kept = closed.jaxpr.outvars[outputs:]  # after f's own outputs: the residuals
    return sum(1 for v in kept if not any(v is i for i in closed.jaxpr.invars))


def remat_now() -> dict[str, Any]:
    """Rematerialization as the installed JAX has it, and what two policies keep of two matmuls."""
    policies = jax.checkpoint_policies

    def layer(w, x):  # two matmuls, each followed by sin
        return jnp.sum(jnp.sin(jnp.sin(x @ w) @ w))

    w, x = jnp.ones((4, 4)), jnp.ones((2, 4))
    jaxpr = jax.make_jaxpr(layer)(w, x)
    return {
        "type(jax.checkpoint_policies)": type(policies),
        "dir(jax.checkpoint_policies)": [name for name in dir(policies) if not name.startswith("_")],
        "callable(jax.custom_remat)": attempt(lambda: callable(jax.custom_remat), AttributeError),
        "jax.config.jax_remat3": attempt(lambda: jax.config.jax_remat3, AttributeError),
        "dot_general in make_jaxpr(layer)": sum(e.primitive.name == "dot_general" for e in jaxpr.eqns),
        "residuals_kept(checkpoint(layer, policy=dots_saveable))":
            residuals_kept(jax.checkpoint(layer, policy=policies.dots_saveable), w, x),
        "residuals_kept(checkpoint(layer, policy=nothing_saveable))":
            residuals_kept(jax.checkpoint(layer, policy=policies.nothing_saveable), w, x),
    }


def empty_now() -> dict[str, Any]:
    """What jnp.empty(4) traces to: a fill with 0.0, or an array left uninitialized."""
    jaxpr = jax.make_jaxpr(lambda: jnp.empty(4))()
    return {
        "jax.make_jaxpr(lambda: jnp.empty(4))()": str(jaxpr),
        "[e.primitive.name for e in jaxpr.eqns]": [e.primitive.name for e in jaxpr.eqns],
        "'broadcast_in_dim 0.0' in str(jaxpr)": "broadcast_in_dim 0.0" in str(jaxpr),
    }


def cross_2d() -> dict[str, Any]:
    """The cross product of two 2-element vectors: jnp.cross, and the form with 3-element vectors."""
    a, b = jnp.ones(2), jnp.array([0.0, 1.0])
    padded = jnp.cross(jnp.pad(a, (0, 1)), jnp.pad(b, (0, 1)))  # (0, 0, a0*b1 - a1*b0)
    na, nb = np.asarray(a), np.asarray(b)
    return {
        "jnp.cross(a, b)": attempt(lambda: float(jnp.cross(a, b)), ValueError),
        "jnp.cross(jnp.pad(a, (0, 1)), jnp.pad(b, (0, 1)))[2]": float(padded[2]),
        "a[0] * b[1] - a[1] * b[0]  # NumPy": float(na[0] * nb[1] - na[1] * nb[0]),
    }


def cloud_tpu_init() -> dict[str, Any]:
    """Importing jax.cloud_tpu_init."""
    imported = attempt(lambda: importlib.import_module("jax.cloud_tpu_init").__name__, ModuleNotFoundError)
    return {"importlib.import_module('jax.cloud_tpu_init').__name__": imported}


CORE_NAMES = ("new_jaxpr_eqn", "Effect", "check_jaxpr")


def core_names() -> dict[str, Any]:
    """Three of the jax.core names 0.11.0 removed: the lookup, and the same name in jax.extend.core."""
    facts: dict[str, Any] = {}
    for name in CORE_NAMES:
        moved = getattr(jax.extend.core, name, None)
        facts[f"hasattr(jax.extend.core, {name!r})"] = moved is not None
        facts[f"jax.core.{name} is jax.extend.core.{name}"] = attempt(
            lambda name=name, moved=moved: getattr(jax.core, name) is moved, AttributeError)
    return facts


def inline_enum() -> dict[str, Any]:
    """jax.Inline, the enum of inlining policies for jax.jit, and one jit that uses it."""
    return {
        "[m.name for m in jax.Inline]": attempt(lambda: [m.name for m in jax.Inline], AttributeError),
        "float(jax.jit(lambda v: v + 1, inline=jax.Inline.AUTO)(1.0))":
            attempt(lambda: float(jax.jit(lambda v: v + 1, inline=jax.Inline.AUTO)(1.0)), AttributeError),
    }


def interpreter() -> dict[str, Any]:
    """The Python the installed jax asks for, and the one running."""
    return {
        "importlib.metadata.metadata('jax')['Requires-Python']": importlib.metadata.metadata("jax")["Requires-Python"],
        "sys.version_info[:3]": tuple(sys.version_info[:3]),
        "jax.__version__": jax.__version__,
    }


# --- the registry, the record of 0.10.2, the changelog ----------------------------------------------


@dataclasses.dataclass(frozen=True)
class Step:
    name: str
    program: Callable[..., dict[str, Any]]
    headline: tuple[str, ...]  # the facts a summary shows
    per_device: bool = False  # the program runs on the first D devices, and takes D


STEPS = (
    Step("three_maps", three_maps, ("warnings", "pmap == smap == shard_map == 2 * x"), per_device=True),
    Step("remat", remat_now, ("type(jax.checkpoint_policies)", "callable(jax.custom_remat)", "jax.config.jax_remat3")),
    Step("empty", empty_now, ("[e.primitive.name for e in jaxpr.eqns]",)),
    Step("cross", cross_2d, ("jnp.cross(a, b)",)),
    Step("cloud_tpu_init", cloud_tpu_init, ("importlib.import_module('jax.cloud_tpu_init').__name__",)),
    Step("core", core_names, ("jax.core.new_jaxpr_eqn is jax.extend.core.new_jaxpr_eqn",)),
    Step("inline", inline_enum, ("[m.name for m in jax.Inline]",)),
    Step("python", interpreter,
         ("importlib.metadata.metadata('jax')['Requires-Python']", "sys.version_info[:3]")),
)
STEP_NAMES = tuple(step.name for step in STEPS)

RECORDED_ON = "0.10.2"
# What the same functions gave on JAX 0.10.2 (Python 3.11.7, in a fresh process: 0.10.2 warned of a
# deprecated module or name on its first use only), each value as `show` and `Outcome` wrote it there.
# three_maps gave these on 1 and on 3 CPU devices alike; what depends on D (the arrays) is not recorded,
# nor is jax.__version__.
_POLICIES_0_10_2 = (
    "['checkpoint_dots', 'checkpoint_dots_with_no_batch_dims', 'dots_saveable', 'dots_with_no_batch_dims_saveable', "
    "'everything_saveable', 'nothing_saveable', 'offload_dot_with_no_batch_dims', "
    "'save_and_offload_only_these_names', 'save_any_names_but_these', 'save_anything_except_these_names', "
    "'save_from_both_policies', 'save_only_these_names']"
)
RECORDED: dict[str, dict[str, str]] = {
    "three_maps": {
        "[hasattr(jax, f) for f in ('pmap', 'smap', 'shard_map')]": "[True, True, True]",
        "jax.pmap.__doc__.strip().splitlines()[0]":
            "Old way of doing parallel map. Use :py:func:`jax.shard_map` instead.",
        "mesh.axis_types": "(Explicit,)",
        "warnings": "[]",
        "pmap == smap == shard_map == 2 * x": "True",
    },
    "remat": {
        "type(jax.checkpoint_policies)": "<class 'types.SimpleNamespace'>",
        "dir(jax.checkpoint_policies)": _POLICIES_0_10_2,
        "callable(jax.custom_remat)": "AttributeError: module 'jax' has no attribute 'custom_remat'",
        "jax.config.jax_remat3": "False",
        "dot_general in make_jaxpr(layer)": "2",
        "residuals_kept(checkpoint(layer, policy=dots_saveable))": "2",
        "residuals_kept(checkpoint(layer, policy=nothing_saveable))": "0",
    },
    "empty": {
        "jax.make_jaxpr(lambda: jnp.empty(4))()": "{ lambda ; . let a:f32[4] = broadcast_in_dim 0.0:f32[] in (a,) }",
        "[e.primitive.name for e in jaxpr.eqns]": "['broadcast_in_dim']",
        "'broadcast_in_dim 0.0' in str(jaxpr)": "True",
    },
    "cross": {
        "jnp.cross(a, b)": "1.0",
        "jnp.cross(jnp.pad(a, (0, 1)), jnp.pad(b, (0, 1)))[2]": "1.0",
        "a[0] * b[1] - a[1] * b[0]  # NumPy": "1.0",
    },
    "cloud_tpu_init": {
        "importlib.import_module('jax.cloud_tpu_init').__name__":
            "jax.cloud_tpu_init\nDeprecationWarning: jax.cloud_tpu_init was deprecated in JAX v0.8.1. "
            "You should remove imports of this module.",
    },
    "core": {
        key: value
        for name in CORE_NAMES
        for key, value in (
            (f"hasattr(jax.extend.core, {name!r})", "True"),
            (f"jax.core.{name} is jax.extend.core.{name}",
             f"True\nDeprecationWarning: jax.core.{name} is deprecated. Use jax.extend.core.{name}."),
        )
    },
    "inline": {
        "[m.name for m in jax.Inline]": "AttributeError: module 'jax' has no attribute 'Inline'",
        "float(jax.jit(lambda v: v + 1, inline=jax.Inline.AUTO)(1.0))":
            "AttributeError: module 'jax' has no attribute 'Inline'",
    },
    "python": {
        "importlib.metadata.metadata('jax')['Requires-Python']": ">=3.11",
        "sys.version_info[:3]": "(3, 11, 7)",
    },
}

CHANGELOG_SECTION = "JAX 0.11.0 (July 16, 2026)"
# JAX's CHANGELOG.md, its 0.11.0 section, verbatim (each item's wrapped lines joined); None where it lists
# nothing for a step. The snapshot read ends before 0.11.1: what 0.11.1 to 0.12.0.1 list is not in it.
CHANGELOG: dict[str, str | None] = {
    "three_maps": None,
    "remat": (
        "Added {func}`jax.custom_remat` to the top-level `jax` namespace, for per-function control of "
        "rematerialization under the new `jax_remat3` implementation.\n"
        "`jax.checkpoint_policies` is now a submodule rather than a namespace object (so `from "
        "jax.checkpoint_policies import ...` now works; attribute access is unchanged), and it additionally "
        "exposes the name-based policy classes `SaveOnlyTheseNames`, `SaveAnyNamesButThese`, and "
        "`SaveAndOffloadOnlyTheseNames`."
    ),
    "empty": (
        "{func}`jax.numpy.empty` and {func}`jax.numpy.empty_like` now produce uninitialized arrays, similar to "
        "their NumPy counterparts. Prior to v0.11.0, they produced arrays initialized to zeros. To recover the "
        "previous behavior, use {func}`jax.numpy.zeros` or {func}`jax.numpy.zeros_like` instead."
    ),
    "cross": (
        "Passing 2-dimensional arrays (or mixed 2D and 3D arrays) to {func}`jax.numpy.cross` is deprecated and "
        "will be removed in JAX 0.12.0, aligning with NumPy 2.5 behavior."
    ),
    "cloud_tpu_init": (
        "The deprecated module jax.cloud_tpu_init was removed. This did nothing and references to it can be "
        "safely removed."
    ),
    "core": (
        "Several previously-deprecated APIs from {mod}`jax.core` have been removed, including `CallPrimitive`, "
        "`DebugInfo`, `DropVar`, `Effect`, `Effects`, `InconclusiveDimensionOperation`, `JaxprTypeError`, "
        "`abstract_token`, `check_jaxpr`, `concrete_or_error`, `find_top_trace`, `gensym`, "
        "`get_opaque_trace_state`, `is_concrete`, `is_constant_dim`, `is_constant_shape`, `jaxprs_in_params`, "
        "`new_jaxpr_eqn`, `no_effects`, `nonempty_axis_env_DO_NOT_USE`, `primal_dtype_to_tangent_dtype`, "
        "`unsafe_am_i_under_a_jit_DO_NOT_USE`, `unsafe_am_i_under_a_vmap_DO_NOT_USE`, "
        "`unsafe_get_axis_names_DO_NOT_USE`, `valid_jaxtype`, `JaxprPpContext`, `JaxprPpSettings`, `OutputType`, "
        "`aval_mapping_handlers`, `call`, `concretization_function_error`, `custom_typechecks`, "
        "`literalable_types`, `no_axis_name`, and `trace_ctx`."
    ),
    "inline": "Added {class}`jax.Inline` enum for specify inlining policies to {func}`jax.jit`.",
    "python": (
        "Support for Python 3.11, NumPy 2.0, and SciPy 1.14 has been dropped, per the [deprecation "
        "policy](https://docs.jax.dev/en/latest/deprecation.html)."
    ),
}


@dataclasses.dataclass(frozen=True)
class StepRun:
    """One step, run here: its facts (code → what it gave, as text) beside those recorded on 0.10.2."""

    name: str
    devices: int
    facts: dict[str, str]
    recorded: dict[str, str]
    headline: tuple[str, ...]

    @property
    def differs(self) -> tuple[str, ...]:
        """The recorded facts whose value here is another (or that did not run here)."""
        return tuple(key for key, value in self.recorded.items() if self.facts.get(key) != value)

    @property
    def changed(self) -> bool:
        return bool(self.differs)


def get_step(name: str) -> Step:
    for step in STEPS:
        if step.name == name:
            return step
    raise LabInputError("unknown_step", "no migration step called {name!r}", name=name)


def run_step(name: str, devices: int) -> StepRun:
    """Run one step on the installed JAX (on the first `devices` devices where it uses them)."""
    step, devices = get_step(name), check_devices(devices)
    values = step.program(devices) if step.per_device else step.program()
    return StepRun(name, devices, {key: show(value) for key, value in values.items()}, RECORDED[name], step.headline)


def run_steps(devices: int) -> list[StepRun]:
    return [run_step(name, devices) for name in STEP_NAMES]


def summary(facts: dict[str, str], keys: tuple[str, ...]) -> str:
    """`code → value` for each of `keys`, on one line (a value's lines joined by ` | `)."""
    return "; ".join(f"{key} → {' | '.join(facts[key].splitlines())}" for key in keys if key in facts)


def listing(facts: dict[str, str]) -> str:
    """Every fact as a Python prompt would show it: `>>> code`, then what it gave."""
    return "\n".join(f">>> {key}\n{value}" for key, value in facts.items())
