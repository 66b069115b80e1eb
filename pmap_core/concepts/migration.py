"""pmap → shard_map → jit: one data-parallel SGD step written three ways, run on D devices.

The step fits y ≈ x·w + b on a global batch of B = D × b samples with F features: ḡ averaged over the
devices, w ← w − η ḡ. What each body sees is recorded while JAX traces it (`jax.typeof`), every
input's and output's sharding is read from the arrays, and the results are compared (and with NumPy).

- `pmap`: the batch carries a leading device axis (D, b, F); the body sees (b, F), one rank less.
- `shard_map`: the batch keeps its global shape (B, F), split by P('data'); the body sees (b, F),
  the same rank. Params are P(); cast to "varying" so that autodiff gives per-device gradients
  (the check_vma trap), and `pmean` averages them. `run_trap` runs that gradient without the cast too:
  D times the mean.
- `jit`: no body per device; the global loss on arrays placed with NamedSharding. The compiler
  inserts the all-reduce.

The HLO inspector compiles the lab's training program (`train.programs.build`) in each
implementation and lists its collectives with their bytes.

What worksheets 6 and 7 ask about, run the same way: `gradient_forms` (the trap's gradient in each
form, as a multiple of NumPy's), `out_specs_check` (out_specs=P() on a value that varies, with the
check and without it) and `jit_shardings` (jit with and without out_shardings: types, blocks, the
collectives compiled).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core import hlo
from pmap_core.runtime import DATA_AXIS
from pmap_core.train import models, programs, replicated
from pmap_core.train.footprint import collective_runs
from pmap_core.train.program import ProgramSpec
from pmap_core.validation import LabInputError, check_devices, check_int, check_seed

FEATURES = 3
LEARNING_RATE = 0.1
MAX_PER_DEVICE = 16
# What each way is told about its inputs (params, x, y) and outputs (params, loss); the table shows these.
PMAP_IN_AXES, PMAP_OUT_AXES = (None, 0, 0), None
SHARD_MAP_IN_SPECS, SHARD_MAP_OUT_SPECS = (P(), P(DATA_AXIS), P(DATA_AXIS)), (P(), P())
IMPLS = programs.IMPLEMENTATIONS  # ("pmap", "shard_map", "jit")


def loss_fn(params: dict[str, jax.Array], x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean squared error of y ≈ x·w + b over the rows the caller sees."""
    return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)


def sgd(params: Any, grads: Any) -> Any:
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)


def pmap_step(devices: list, seen: dict) -> Any:
    def body(params, x, y):  # x: (b, F) — pmap took the device axis away
        seen["x"] = jax.typeof(x)
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        grads = lax.pmean(grads, DATA_AXIS)  # ḡ on every device
        return sgd(params, grads), lax.pmean(loss, DATA_AXIS)

    return jax.pmap(body, axis_name=DATA_AXIS, in_axes=PMAP_IN_AXES, out_axes=PMAP_OUT_AXES, devices=devices)


def shard_map_step(mesh: jax.sharding.Mesh, seen: dict) -> Any:
    def body(params, x, y):  # x: (b, F) — the same rank as the global (B, F)
        seen["x"] = jax.typeof(x)
        varying = lax.pcast(params, DATA_AXIS, to="varying")  # per-device gradients, not their sum
        loss, grads = jax.value_and_grad(loss_fn)(varying, x, y)
        grads = lax.pmean(grads, DATA_AXIS)
        return sgd(params, grads), lax.pmean(loss, DATA_AXIS)

    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=SHARD_MAP_IN_SPECS, out_specs=SHARD_MAP_OUT_SPECS))


def shard_map_grads(mesh: jax.sharding.Mesh, pcast: bool) -> Any:
    """The gradient `shard_map_step` averages, written with `pcast` or without it (the check_vma trap)."""
    def body(params, x, y):
        if pcast:
            params = lax.pcast(params, DATA_AXIS, to="varying")  # each device's own gradient
        grads = jax.grad(loss_fn)(params, x, y)  # without pcast: params are P(), the same everywhere,
        return lax.pmean(grads, DATA_AXIS)  # and autodiff has already summed this over the devices

    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=SHARD_MAP_IN_SPECS, out_specs=P()))


def jit_step(seen: dict) -> Any:
    def step(params, x, y):  # x: (B, F), the global batch; its sharding says where rows live
        seen["x"] = jax.typeof(x)
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)  # the compiler adds the all-reduce
        return sgd(params, grads), loss

    return jax.jit(step)


def place(impl: str, mesh: jax.sharding.Mesh, params: dict, x: np.ndarray, y: np.ndarray) -> tuple:
    """Inputs on the mesh's devices with `jax.device_put` + NamedSharding (device_put_replicated and
    device_put_sharded are gone): params replicated, P(); the batch split by rows, P('data')."""
    d = mesh.size
    if impl == "pmap":  # a leading device axis of size D: the (D, b, …) layout pmap maps over
        x, y = x.reshape(d, -1, x.shape[-1]), y.reshape(d, -1)
    rows = NamedSharding(mesh, P(DATA_AXIS))
    return (jax.device_put(params, NamedSharding(mesh, P())), jax.device_put(x, rows), jax.device_put(y, rows))


def reference_grads(params: dict, x: np.ndarray, y: np.ndarray) -> tuple[dict, float]:
    """The gradient on the whole batch in NumPy, and the loss: ∂L/∂w = 2/B xᵀr, ∂L/∂b = 2/B Σr with r = xw + b − y."""
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    r = x64 @ params["w"] + params["b"] - y64
    return {"w": 2 * x64.T @ r / len(y), "b": 2 * r.sum() / len(y)}, float(np.mean(r**2))


def reference(params: dict, x: np.ndarray, y: np.ndarray) -> tuple[dict, float]:
    """The same step in NumPy on the whole batch."""
    grads, loss = reference_grads(params, x, y)
    return {k: params[k] - LEARNING_RATE * grads[k] for k in params}, loss


@dataclasses.dataclass(frozen=True)
class ArrayInfo:
    role: str  # "input" or "output"
    name: str  # params.w, x, loss, …
    typeof: str  # str(jax.typeof(array)) on the installed JAX
    spec: str  # str(array.sharding.spec)


@dataclasses.dataclass(frozen=True)
class Way:
    impl: str
    input_shape: tuple[int, ...]  # x as passed in
    body_view: str  # jax.typeof(x) where the code runs: per device for pmap/shard_map, global for jit
    body_shape: tuple[int, ...]
    arrays: tuple[ArrayInfo, ...]
    params: dict[str, np.ndarray]
    loss: float
    collectives: tuple[str, ...]  # kinds of the collectives in this step's compiled HLO

    @property
    def ranks(self) -> tuple[int, int]:
        return len(self.input_shape), len(self.body_shape)


@dataclasses.dataclass(frozen=True)
class Trap:
    """shard_map's gradient average with and without `pcast`, run on the same devices and batch."""

    devices: int
    without_pcast: np.ndarray  # w[0], …, b: what pmean gives when autodiff has already summed
    with_pcast: np.ndarray
    numpy: np.ndarray  # the gradient on the whole batch
    factor: float  # |without pcast| / |NumPy|

    @property
    def without_is_d_times(self) -> bool:
        return bool(np.allclose(self.without_pcast, self.devices * self.numpy, rtol=1e-4, atol=1e-6))

    @property
    def with_is_right(self) -> bool:
        return bool(np.allclose(self.with_pcast, self.numpy, rtol=1e-4, atol=1e-6))


def _grad_vector(grads: dict) -> np.ndarray:
    return np.concatenate([np.ravel(grads["w"]), np.ravel(grads["b"])]).astype(np.float64)


def run_trap(mesh: jax.sharding.Mesh, params: dict, x: np.ndarray, y: np.ndarray) -> Trap:
    """The gradient average of `shard_map_step`, without and with `pcast`, against NumPy's."""
    args = place("shard_map", mesh, params, x, y)
    without, with_ = (_grad_vector(shard_map_grads(mesh, pcast)(*args)) for pcast in (False, True))
    numpy = _grad_vector(reference_grads(params, x, y)[0])
    return Trap(mesh.size, without, with_, numpy, float(np.linalg.norm(without) / np.linalg.norm(numpy)))


@dataclasses.dataclass(frozen=True)
class ThreeWays:
    devices: int
    batch: int
    ways: tuple[Way, ...]
    reference_params: dict[str, np.ndarray]
    reference_loss: float
    max_diff_between: float  # largest |a − b| between any two ways, over every parameter and the loss
    max_diff_numpy: float  # largest |way − NumPy|
    put_replicated_exists: bool  # jax.device_put_replicated on the installed JAX
    put_sharded_exists: bool
    trap: Trap  # the shard_map gradient without pcast, beside the one the step uses

    @property
    def equal(self) -> bool:
        return self.max_diff_between <= 1e-5 and self.max_diff_numpy <= 1e-5


def _flat(params: Any, loss: Any) -> np.ndarray:  # every parameter and the loss, as one vector
    return np.concatenate([np.ravel(params["w"]), np.ravel(params["b"]), np.ravel(loss)]).astype(np.float64)


def _infos(role: str, names: tuple[str, ...], arrays: tuple) -> tuple[ArrayInfo, ...]:
    return tuple(ArrayInfo(role, n, str(jax.typeof(a)), str(a.sharding.spec))
                 for n, a in zip(names, arrays, strict=True))


def run_way(impl: str, mesh: jax.sharding.Mesh, params: dict, x: np.ndarray, y: np.ndarray) -> Way:
    """Compile and run one way; its body's view is recorded while tracing (at `lower`)."""
    seen: dict = {}
    if impl == "pmap":
        program = pmap_step(list(mesh.devices.flat), seen)
    elif impl == "shard_map":
        program = shard_map_step(mesh, seen)
    else:
        program = jit_step(seen)
    args = place(impl, mesh, params, x, y)
    compiled = program.lower(*args).compile()
    new_params, loss = compiled(*args)
    names = ("params.b", "params.w", "x", "y")
    inputs = _infos("input", names, (args[0]["b"], args[0]["w"], args[1], args[2]))
    outputs = _infos("output", ("params.b", "params.w", "loss"), (new_params["b"], new_params["w"], loss))
    return Way(impl, tuple(args[1].shape), str(seen["x"]), tuple(seen["x"].shape), inputs + outputs,
               {k: np.asarray(v) for k, v in new_params.items()}, float(loss),
               tuple(c.kind for c in hlo.collectives(compiled.as_text())))


def problem(batch: int, seed: int) -> tuple[dict, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, FEATURES)).astype(np.float32)
    y = (x @ np.array([2.0, -1.0, 0.5]) + 0.3 + 0.1 * rng.standard_normal(batch)).astype(np.float32)
    params = {"w": np.full(FEATURES, 0.5, np.float32), "b": np.float32(0.1)}
    return params, x, y


def run_three_ways(devices: int, per_device: int, seed: int = 0) -> ThreeWays:
    """The step in each way on the first `devices` devices, compared with each other and NumPy."""
    devices = check_devices(devices)
    per_device = check_int("per_device", per_device, 1, MAX_PER_DEVICE)
    seed = check_seed(seed)
    params, x, y = problem(devices * per_device, seed)
    mesh = replicated.data_mesh(devices)
    ways = tuple(run_way(impl, mesh, params, x, y) for impl in IMPLS)
    ref_params, ref_loss = reference(params, x, y)
    flats = [_flat(w.params, w.loss) for w in ways]
    ref = _flat(ref_params, ref_loss)
    return ThreeWays(
        devices=devices, batch=devices * per_device, ways=ways,
        reference_params={k: np.asarray(v) for k, v in ref_params.items()}, reference_loss=ref_loss,
        max_diff_between=max(float(np.max(np.abs(a - b))) for a in flats for b in flats),
        max_diff_numpy=max(float(np.max(np.abs(f - ref))) for f in flats),
        put_replicated_exists=hasattr(jax, "device_put_replicated"),
        put_sharded_exists=hasattr(jax, "device_put_sharded"),
        trap=run_trap(mesh, params, x, y),
    )


# --- what changes and what does not, from what ran ------------------------------


@dataclasses.dataclass(frozen=True)
class Change:
    topic: str  # a text key: change.<topic>
    cells: tuple[str, str, str]  # pmap, shard_map, jit: code as it ran
    same: bool  # the three cells say the same thing


def changes(result: ThreeWays) -> list[Change]:
    """The rows of the migration table; every cell is read from the programs or the arrays that ran."""
    pm, sm, jt = result.ways
    jit_in = tuple(a.spec for a in jt.arrays if a.role == "input")
    jit_out = tuple(a.spec for a in jt.arrays if a.role == "output")
    gone = {True: "exists", False: "gone"}
    return [
        Change("view", (pm.body_view, sm.body_view, jt.body_view), False),
        Change("rank", tuple(f"{w.input_shape} → {w.body_shape}" for w in result.ways),
               len({w.ranks[0] - w.ranks[1] for w in result.ways}) == 1),
        Change("axis", (f"axis_name={DATA_AXIS!r}", f"mesh axis {DATA_AXIS!r}", f"mesh axis {DATA_AXIS!r}"), False),
        Change("in", (f"in_axes={PMAP_IN_AXES}", f"in_specs={SHARD_MAP_IN_SPECS}",
                      f"shardings (b, w, x, y): {', '.join(jit_in)}"), False),
        Change("out", (f"out_axes={PMAP_OUT_AXES}", f"out_specs={SHARD_MAP_OUT_SPECS}",
                       f"shardings (b, w, loss): {', '.join(jit_out)}"), False),
        Change("place", (f"jax.device_put_replicated: {gone[result.put_replicated_exists]}; "
                         f"jax.device_put_sharded: {gone[result.put_sharded_exists]}",
                         "jax.device_put(x, NamedSharding(mesh, P('data')))",
                         "jax.device_put(x, NamedSharding(mesh, P('data')))"), False),
        Change("collective", ("lax.pmean(grads, 'data')", "lax.pcast(…, to='varying') + lax.pmean(grads, 'data')",
                              "— (compiler)"), False),
        Change("compiled", tuple(", ".join(w.collectives) or "—" for w in result.ways),
               len({w.collectives for w in result.ways}) == 1),
        Change("math", ("loss_fn, jax.value_and_grad, sgd",) * 3, True),
        Change("result", tuple(f"loss {w.loss:.6f}, b {float(w.params['b']):.6f}" for w in result.ways),
               result.max_diff_between <= 1e-5),
    ]


# --- the HLO inspector: the training program's collectives, compiled -----------------


HLO_PER_DEVICE_BATCH, HLO_FEATURES, HLO_HIDDEN = 4, 3, 8
_SOURCE_TABLE = re.compile(r"^(FileNames|FunctionNames|FileLocations|StackFrames)$")
_METADATA = re.compile(r",? metadata=\{[^}]*\}")


@dataclasses.dataclass(frozen=True)
class ImplHlo:
    impl: str
    collectives: tuple[hlo.Collective, ...]
    hlo_text: str  # compiled HLO without source tables and metadata

    @property
    def bytes_per_step(self) -> int:
        """Bytes each device puts into collectives in one step (the program runs one step); a
        collective over a group of one device moves nothing and counts 0."""
        return sum(c.operand_bytes for c in self.collectives if c.group_size != 1)

    def count(self, kind: str) -> int:
        return sum(c.kind == kind for c in self.collectives)


@dataclasses.dataclass(frozen=True)
class HloReport:
    devices: int
    model: str
    impls: tuple[ImplHlo, ...]

    @property
    def same_bytes(self) -> bool:
        return len({i.bytes_per_step for i in self.impls}) == 1


def readable_hlo(text: str) -> str:
    """Compiled HLO without the source-location tables and per-instruction metadata."""
    kept, skipping = [], False
    for line in text.splitlines():
        if _SOURCE_TABLE.match(line):
            skipping = True
        elif skipping:
            skipping = bool(line.strip())
        else:
            kept.append(_METADATA.sub("", line))
    return "\n".join(kept).strip()


def inspect_hlo(devices: int, model: str) -> HloReport:
    """The one-step training program of each implementation, compiled, and its collectives."""
    devices = check_devices(devices)
    if model not in models.MODELS:
        raise LabInputError("unknown_model", "model must be one of {options}, got {value!r}",
                            options=", ".join(models.MODELS), value=model)
    impls = []
    for impl in IMPLS:
        program = programs.build(ProgramSpec(impl, model, devices, HLO_PER_DEVICE_BATCH, HLO_FEATURES, HLO_HIDDEN, 1))
        text = program.compiled.as_text()
        impls.append(ImplHlo(impl, tuple(hlo.collectives(text)), readable_hlo(text)))
    return HloReport(devices, model, tuple(impls))


# --- the trap in every form, and jit with shardings: what the worksheet asks about -----------


# Each way of averaging the gradient in a shard_map (params P(), the batch P('data')), on the same batch:
# pmean, psum or no collective on the gradient autodiff gives for the P() params (default check_vma=True);
# pmean after `pcast(…, to="varying")`; pmean with check_vma=False (pmap's behaviour); and `grad` taken
# outside the shard_map of the pmean loss. JAX's shard_map docs ("check_vma") and docs/migrate_pmap.md.
GRADIENT_FORMS = ("pmean", "psum", "no_collective", "pcast_pmean", "no_check_pmean", "grad_outside")


@dataclasses.dataclass(frozen=True)
class GradientForms:
    devices: int
    factors: dict[str, float]  # per form: |its gradient| / |NumPy's gradient on the whole batch|


def _form(mesh: jax.sharding.Mesh, form: str) -> Any:
    def body(params, x, y):
        if form == "pcast_pmean":
            params = lax.pcast(params, DATA_AXIS, to="varying")
        grads = jax.grad(loss_fn)(params, x, y)
        if form == "psum":
            return lax.psum(grads, DATA_AXIS)
        return grads if form == "no_collective" else lax.pmean(grads, DATA_AXIS)

    if form == "grad_outside":
        def mean_loss(params, x, y):
            return lax.pmean(loss_fn(params, x, y), DATA_AXIS)

        loss = jax.shard_map(mean_loss, mesh=mesh, in_specs=SHARD_MAP_IN_SPECS, out_specs=P())
        return jax.jit(jax.grad(loss))
    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=SHARD_MAP_IN_SPECS, out_specs=P(),
                                 check_vma=form != "no_check_pmean"))


def gradient_forms(devices: int, per_device: int, seed: int = 0) -> GradientForms:
    """The gradient of the lab's step (`problem`) in each of GRADIENT_FORMS on the first `devices`
    devices, each as a multiple of NumPy's (the same measure as `Trap.factor`)."""
    devices = check_devices(devices)
    per_device = check_int("per_device", per_device, 1, MAX_PER_DEVICE)
    params, x, y = problem(devices * per_device, check_seed(seed))
    mesh = replicated.data_mesh(devices)
    args = place("shard_map", mesh, params, x, y)
    numpy = np.linalg.norm(_grad_vector(reference_grads(params, x, y)[0]))
    return GradientForms(devices, {form: float(np.linalg.norm(_grad_vector(_form(mesh, form)(*args))) / numpy)
                                   for form in GRADIENT_FORMS})


@dataclasses.dataclass(frozen=True)
class OutSpecsCheck:
    """A shard_map body that returns its own block (varying over 'data') with out_specs=P()."""

    devices: int
    error_type: str                     # what the default check_vma=True raises, or "none"
    error_text: str                     # verbatim (first line)
    unchecked_shape: tuple[int, ...]    # with check_vma=False: the shape it returns, unchecked
    unchecked_is_block_0: bool          # … and it is device 0's block


def out_specs_check(devices: int, per_device: int, seed: int = 0) -> OutSpecsCheck:
    """The lab's batch x (D·b, F), P('data'), through `lambda v: 2 * v` with out_specs=P(): refused by
    the check (a varying value cannot be declared replicated), and with check_vma=False returned as if
    every device held the same block."""
    devices = check_devices(devices)
    per_device = check_int("per_device", per_device, 1, MAX_PER_DEVICE)
    params, x, y = problem(devices * per_device, check_seed(seed))
    mesh = replicated.data_mesh(devices)
    _, placed, _ = place("shard_map", mesh, params, x, y)

    def program(check: bool) -> Any:
        return jax.jit(jax.shard_map(lambda v: 2 * v, mesh=mesh, in_specs=P(DATA_AXIS), out_specs=P(),
                                     check_vma=check))

    try:
        program(True)(placed)
        error_type, error_text = "none", ""
    except ValueError as error:  # what JAX raises is shown, never hidden
        error_type, error_text = type(error).__name__, str(error).splitlines()[0]
    out = np.asarray(program(False)(placed))
    return OutSpecsCheck(devices, error_type, error_text, tuple(out.shape),
                         bool(np.array_equal(out, 2 * x[:per_device])))


# jit with shardings: the batch placed P('data'), a function of it compiled with or without
# `out_shardings`; the compiler inserts the collective the placement asks for (JAX docs, "Distributed
# arrays and automatic parallelization").
JIT_OPS = {"double": lambda v: 2 * v, "col_sum": lambda v: v.sum(axis=0)}
JIT_OUTS = ("auto", "data", "replicated")
MAX_JIT_SIDE = 64


@dataclasses.dataclass(frozen=True)
class JitShardings:
    devices: int
    input_type: str                 # jax.typeof of the placed input
    input_block: tuple[int, ...]    # the block one device holds
    output_type: str
    output_block: tuple[int, ...]
    collectives: str                # kinds in the compiled HLO, "none" when there are none
    bytes_sent: float               # bytes one device sends per call, on a ring, read from the compiled HLO


def jit_shardings(devices: int, rows: int, cols: int, op: str, out: str) -> JitShardings:
    """A float32 (rows, cols) array placed with NamedSharding(mesh, P('data')) on the first `devices`
    devices, then `jax.jit(JIT_OPS[op], out_shardings=…)` (P('data'), P(), or none given: "auto"):
    the types `jax.typeof` prints, each device's block, and the collectives the compiled program runs."""
    devices = check_devices(devices)
    rows = check_int("rows", rows, 1, MAX_JIT_SIDE)
    cols = check_int("cols", cols, 1, MAX_JIT_SIDE)
    if op not in JIT_OPS or out not in JIT_OUTS:
        raise LabInputError("unknown_op", "op must be one of {ops} and out one of {outs}, got {op!r}, {out!r}",
                            ops=", ".join(JIT_OPS), outs=", ".join(JIT_OUTS), op=op, out=out)
    if rows % devices:
        raise LabInputError("batch_not_divisible", "{rows} rows do not split over {devices} devices",
                            rows=rows, devices=devices)
    mesh = replicated.data_mesh(devices)
    x = jax.device_put(np.arange(rows * cols, dtype=np.float32).reshape(rows, cols), NamedSharding(mesh, P(DATA_AXIS)))
    shardings = {"data": NamedSharding(mesh, P(DATA_AXIS)), "replicated": NamedSharding(mesh, P())}
    program = jax.jit(JIT_OPS[op], out_shardings=shardings[out]) if out in shardings else jax.jit(JIT_OPS[op])
    compiled = program.lower(x).compile()
    result = compiled(x)
    text = compiled.as_text()
    kinds = ", ".join(c.kind for c in hlo.collectives(text)) or "none"
    sent = sum(r.ring_bytes * r.runs_per_call for r in collective_runs(text))
    return JitShardings(devices, str(jax.typeof(x)), tuple(x.addressable_shards[0].data.shape),
                        str(jax.typeof(result)), tuple(result.addressable_shards[0].data.shape), kinds, float(sent))
