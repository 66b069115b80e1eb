"""Sharding in types: what JAX's explicit mode does where an array's sharding is part of its type — the
ambiguous contraction it refuses and each `out_sharding` that settles it, `auto_axes`/`explicit_axes`,
`x.sharding` against `jax.typeof(x).sharding`, and gradient accumulation with `reduced` weights. Pure:
what the mesh_2d lab's "Sharding in types" section runs.

Sources: JAX's documentation (jax-ml/jax, `docs/new_docs/`, first shipped in JAX 0.11.0), "Distributed arrays
and automatic parallelization" (`docs/new_docs/201/sharding.md`: the ambiguous `jnp.dot`, `auto_axes`/
`explicit_axes`, `x.sharding` against `jax.typeof(x).sharding`) and "Autodiff and sharding"
(`docs/new_docs/301/sharding-ad.md`: `reduced`/`unreduced`, accumulation with one all-reduce per step). Every
example runs on the installed JAX (verified on 0.12.0.1); what it prints is returned as it printed it.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

from pmap_core import hlo
from pmap_core.train.footprint import collective_runs
from pmap_core.validation import check_devices, check_int

MAX_ACCUM = 16             # micro-batches of the accumulation example

ERROR_TYPES = (Exception,)  # what JAX raises is shown, never hidden


def _mesh(devices: int, axis_type: AxisType = AxisType.Explicit) -> jax.sharding.Mesh:
    devices = check_devices(devices)
    return jax.make_mesh((devices,), ("X",), (axis_type,), devices=jax.devices()[:devices])


@dataclasses.dataclass(frozen=True)
class HloCollective:
    kind: str
    shapes: tuple[str, ...]
    group_size: int | None
    sliced_after: bool              # its result is cut to this device's part right after (all-reduce + slice)


_REFERENCE = re.compile(r"%([\w.\-]+)")  # an instruction named in HLO text


def _collectives(text: str) -> tuple[HloCollective, ...]:
    lines = text.splitlines()
    found = []
    for c in hlo.collectives(text):
        sliced = any("dynamic-slice" in line and c.name in _REFERENCE.findall(line)
                     and not line.lstrip().startswith(f"%{c.name} ") for line in lines)
        found.append(HloCollective(c.kind, c.shapes, c.group_size, sliced))
    return tuple(found)


@dataclasses.dataclass(frozen=True)
class DotChoice:
    label: str
    out_sharding: str               # what was passed as `out_sharding=`
    result_type: str                # `jax.typeof` of the result
    per_device_shape: tuple[int, ...] | None
    collectives: tuple[HloCollective, ...]  # read from the compiled HLO
    max_error: float | None         # against NumPy's a @ b (None: the value cannot be read as it is)
    error: str | None = None        # what JAX said, verbatim, if this choice raised


@dataclasses.dataclass(frozen=True)
class AmbiguousDot:
    devices: int
    lhs_type: str                   # float32[8,4@X]
    rhs_type: str                   # float32[4@X,16]
    error_type: str                 # the exception's class: ShardingTypeError
    error_text: str                 # verbatim
    choices: tuple[DotChoice, ...]
    silent_gather: DotChoice        # f32[8,k] @ f32[k@X,16]: no error, an all-gather


def _shapes(devices: int) -> tuple[int, int, int]:
    """(rows, contraction, columns): the docs' 8, 4 and 16 where D divides them, else the least
    multiples D does (D = 8: 8, 8, 16; D = 3: 24, 12, 48)."""
    return math.lcm(8, devices), math.lcm(4, devices), math.lcm(16, devices)


def _choice(label: str, spec_text: str, function: Callable, args: Sequence[jax.Array], expected: np.ndarray
            ) -> DotChoice:
    try:
        compiled = jax.jit(function).lower(*args).compile()
        out = compiled(*args)
    except ERROR_TYPES as error:
        return DotChoice(label, spec_text, "", None, (), None, f"{type(error).__name__}: {error}")
    try:
        value = np.asarray(out)
        error_size = float(np.max(np.abs(value - expected)))
        shape = tuple(out.addressable_shards[0].data.shape)
        read_error = None
    except ERROR_TYPES as error:  # an unreduced array cannot be read as one value (JAX says why)
        error_size, shape, read_error = None, None, f"{type(error).__name__}: {error}"
    return DotChoice(label, spec_text, str(jax.typeof(out)), shape, _collectives(compiled.as_text()), error_size,
                     read_error)


def ambiguous_dot(devices: int) -> AmbiguousDot:
    """The docs' ambiguous contraction `f32[8,4@X] @ f32[4@X,16]` on a one-axis Explicit mesh of
    `devices` devices (shapes grown to multiples of D where needed, `_shapes`): the error JAX raises,
    verbatim, then each `out_sharding=` it asks for, run and read from its compiled HLO — P() (an
    all-reduce), P('X', None) and P(None, 'X') (a reduce-scatter on either axis, which the partitioner
    writes here as an all-reduce whose result each device slices, `sliced_after`: its choice for this dot, as
    `shard_map` with `psum_scatter` compiles to a reduce-scatter on XLA:CPU), P(unreduced={'X'}) (no
    collective at all; the sum waits, and reading it as one array is JAX's to refuse, `error`), and
    `jax.reshard` of that unreduced result to P() (the all-reduce, later).
    Also `f32[8,k] @ f32[k@X,16]`, which JAX accepts silently with an all-gather."""
    mesh = _mesh(devices)
    rows, inner, cols = _shapes(mesh.size)
    a_host = np.arange(rows * inner, dtype=np.float32).reshape(rows, inner) / (rows * inner)
    b_host = np.arange(inner * cols, dtype=np.float32).reshape(inner, cols) / (inner * cols)
    expected = a_host @ b_host
    with jax.set_mesh(mesh):
        a = jax.device_put(a_host, P(None, "X"))
        b = jax.device_put(b_host, P("X", None))
        try:
            jnp.matmul(a, b)
            error_type, error_text = "", "(no error)"
        except ERROR_TYPES as error:
            error_type, error_text = type(error).__name__, str(error)
        specs = (("all-reduce: a replicated result", "P()", P()),
                 ("reduce-scatter on the rows", "P('X', None)", P("X", None)),
                 ("reduce-scatter on the columns", "P(None, 'X')", P(None, "X")),
                 ("unreduced: partial sums, no collective yet", "P(None, None, unreduced={'X'})",
                  P(None, None, unreduced={"X"})))
        choices = [_choice(label, text, lambda a, b, spec=spec: jnp.matmul(a, b, out_sharding=spec), (a, b),
                           expected) for label, text, spec in specs]
        unreduced = jax.jit(lambda a, b: jnp.matmul(a, b, out_sharding=specs[-1][2]))(a, b)
        choices.append(_choice("the unreduced result resharded to P(): the all-reduce, deferred",
                               "jax.reshard(c, P())", lambda c: jax.reshard(c, P()), (unreduced,), expected))
        whole = jax.device_put(a_host, P())
        silent = _choice("f32[·,k] @ f32[k@X,·]: accepted, the sharded operand gathered", "(none needed)",
                         jnp.matmul, (whole, b), expected)
        return AmbiguousDot(mesh.size, str(jax.typeof(a)), str(jax.typeof(b)), error_type, error_text,
                            tuple(choices), silent)


@dataclasses.dataclass(frozen=True)
class AxesRow:
    label: str
    code: str                       # the call, as the page prints it
    concrete: str                   # `x.sharding.spec` (the compiler's choice), or what was raised
    typed: str                      # `jax.typeof(x)` / its sharding: what the type says


def axes_demo(devices: int) -> list[AxesRow]:
    """`auto_axes` / `explicit_axes`, and `x.sharding` against `jax.typeof(x).sharding` (JAX docs,
    "Distributed arrays and automatic parallelization"), on `devices` devices: an Explicit mesh where the
    two agree; an addition whose result would name X twice (the error, verbatim) and the same addition
    under `auto_axes` with an `out_sharding`; inside `auto_axes`, where the type forgets what the
    concrete sharding keeps; an Auto mesh, where the type never says it; and `explicit_axes` inside a
    jit on that Auto mesh, where the type says it again."""
    mesh = _mesh(devices)
    n = math.lcm(4, mesh.size)
    square = np.arange(n * n, dtype=np.float32).reshape(n, n)
    rows: list[AxesRow] = []
    seen: dict[str, str] = {}
    with jax.set_mesh(mesh):
        x = jnp.sin(jax.device_put(np.arange(2 * n, dtype=np.float32), P("X")))
        rows.append(AxesRow("Explicit mesh, top level", "x = jnp.sin(jax.device_put(v, P('X')))",
                            str(x.sharding.spec), f"{jax.typeof(x)}  (sharding {jax.typeof(x).sharding.spec})"))
        left = jax.device_put(square, P("X", None))
        right = jax.device_put(square, P(None, "X"))
        try:
            clash = str(jax.typeof(left + right))
        except ERROR_TYPES as error:
            clash = f"{type(error).__name__}: {error}"
        rows.append(AxesRow("a result that would name X twice", "left + right  # f32[n@X,n] + f32[n,n@X]",
                            clash, f"{jax.typeof(left)} + {jax.typeof(right)}"))

        @jax.sharding.auto_axes
        def add(u, v):
            seen["add"] = str(jax.typeof(u))
            return u + v

        added = add(left, right, out_sharding=P("X", None))
        rows.append(AxesRow("the same addition under auto_axes",
                            "auto_axes(add)(left, right, out_sharding=P('X', None))",
                            str(added.sharding.spec), f"{jax.typeof(added)}  (inside: {seen['add']})"))

        @jax.sharding.auto_axes
        def look(u):
            seen["concrete"] = str(u.sharding.spec)
            seen["typed"] = str(jax.typeof(u).sharding.spec)
            return u

        look(x, out_sharding=P("X"))
        rows.append(AxesRow("inside auto_axes: the type forgets", "auto_axes(look)(x, out_sharding=P('X'))",
                            seen["concrete"], seen["typed"]))
    auto = _mesh(devices, AxisType.Auto)
    with jax.set_mesh(auto):
        v = jax.device_put(square, P("X", None))
        rows.append(AxesRow("Auto mesh, top level", "jax.device_put(v, P('X', None))  # axis_types=(Auto,)",
                            str(v.sharding.spec), f"{jax.typeof(v)}  (sharding {jax.typeof(v).sharding.spec})"))

        @jax.sharding.explicit_axes
        def double(u):
            seen["explicit"] = str(jax.typeof(u))
            return u * 2

        out = jax.jit(lambda u: double(jnp.sin(u), in_sharding=P("X", None)) + 1)(v)
        rows.append(AxesRow("explicit_axes inside a jit on the Auto mesh",
                            "explicit_axes(double)(jnp.sin(u), in_sharding=P('X', None))",
                            str(out.sharding.spec), f"inside: {seen['explicit']}; outside: {jax.typeof(out)}"))
    return rows


@dataclasses.dataclass(frozen=True)
class Accumulation:
    """Gradient accumulation of K micro-batches, replicated weights against `reduced` ones."""

    devices: int
    micro_batches: int
    replicated_all_reduces: float | None   # all-reduces run per step, counted in the compiled HLO
    reduced_all_reduces: float | None
    weight_type: str                       # jax.typeof of the reduced weights: float32[n,n]{R:X}
    gradient_type: str                     # of one micro-batch's gradient: float32[n,n]{U:X}
    max_difference: float | None           # between the two updated weights
    max_error: float | None                # against NumPy's accumulated step
    error: str | None = None               # what JAX said, verbatim, if it could not


def reduced_accumulation(devices: int, k: int) -> Accumulation:
    """One SGD step of gradient accumulation over `k` micro-batches (JAX docs, "Autodiff and sharding",
    the micro-batch example): with replicated weights every micro-batch's gradient is all-reduced inside
    the scan (K all-reduces per step, counted in the compiled HLO); with the weights cast to
    `P(reduced={'X'})` each gradient comes out unreduced ({U:X}), the accumulator stays unreduced across
    the scan and one `jax.reshard(…, P())` all-reduces it once. Both updates are checked against NumPy.
    At D = 1 there is no other device: the compiler inserts no all-reduce in either. If JAX cannot run
    it, `error` holds what it said."""
    mesh = _mesh(devices)
    k = check_int("k", k, 1, MAX_ACCUM)
    n, rows = 4, math.lcm(8, mesh.size)
    rng = np.random.default_rng(0)
    w_host = (np.eye(n) / 2 + rng.normal(scale=0.1, size=(n, n))).astype(np.float32)
    xs_host = rng.normal(size=(k, rows, n)).astype(np.float32)
    seen: dict[str, str] = {}

    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    def replicated(w, xs):
        def micro(acc, x):
            return acc + jax.grad(loss)(w, x), None
        acc, _ = jax.lax.scan(micro, jnp.zeros_like(w), xs)
        return w - 0.01 * acc

    def reduced(w, xs):
        cast = jax.reshard(w, P(None, None, reduced={"X"}))
        seen["weights"] = str(jax.typeof(cast))

        def micro(acc, x):
            grad = jax.grad(loss)(cast, x)
            seen["gradient"] = str(jax.typeof(grad))
            return acc + grad, None
        acc = jax.reshard(jnp.zeros_like(w), P(None, None, unreduced={"X"}))
        acc, _ = jax.lax.scan(micro, acc, xs)
        return w - 0.01 * jax.reshard(acc, P())

    reference = w_host - 0.01 * sum(_numpy_grad(w_host, x) for x in xs_host)
    counts: dict[str, float] = {}
    results: dict[str, np.ndarray] = {}
    with jax.set_mesh(mesh):
        w = jax.device_put(w_host, P())
        xs = jax.device_put(xs_host, P(None, "X", None))
        for name, step in (("replicated", replicated), ("reduced", reduced)):
            try:
                compiled = jax.jit(step).lower(w, xs).compile()
                results[name] = np.asarray(compiled(w, xs))
            except ERROR_TYPES as error:
                return Accumulation(mesh.size, k, counts.get("replicated"), None, seen.get("weights", ""),
                                    seen.get("gradient", ""), None, None, f"{type(error).__name__}: {error}")
            counts[name] = float(sum(run.runs_per_call for run in collective_runs(compiled.as_text(), (k,))
                                     if run.collective.kind == "all-reduce"))
    return Accumulation(mesh.size, k, counts["replicated"], counts["reduced"], seen["weights"], seen["gradient"],
                        float(np.max(np.abs(results["replicated"] - results["reduced"]))),
                        float(max(np.max(np.abs(r - reference)) for r in results.values())))


def _numpy_grad(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d/dw of Σ tanh(x·w)², in float64: xᵀ · 2·tanh(xw)·(1 − tanh²(xw))."""
    t = np.tanh(x.astype(np.float64) @ w.astype(np.float64))
    return x.T.astype(np.float64) @ (2 * t * (1 - t ** 2))
