"""The tutorial's demo program, step by step, written for current JAX.

Five steps: count the devices, pmap a function over a batch, average across
devices with `pmean`, collect every shard with `all_gather(tiled=True)`, and
fit y = 3x + 1 with the lab's data-parallel SGD step (`pmap_core.train.steps`).
The tutorial's own version fails on current JAX in three places; `tutorial_*`
reproduce each failure on the devices the reader picked, so the error shown is
the one JAX raises here.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from pmap_core.practice.pitfalls.types import Captured, capture
from pmap_core.runtime import DATA_AXIS
from pmap_core.train.models import linear_loss
from pmap_core.train.steps import data_parallel_sgd_step, sgd_update
from pmap_core.validation import MAX_STEPS, LabInputError, check_devices, check_float, check_int

MAX_PER_DEVICE = 64


def _devices(devices: int) -> list:
    return jax.devices()[:devices]


def batch(devices: int, per_device: int) -> jnp.ndarray:
    """The demo's batch, already shaped (devices, per_device): one row per device."""
    return jnp.arange(float(devices * per_device)).reshape(devices, per_device)


# --- the corrected program, one step per function -------------------------------

def step_devices(devices: int) -> dict[str, Any]:
    return {"local_device_count": jax.local_device_count(),
            "devices": [str(d) for d in jax.devices()], "using": [str(d) for d in _devices(devices)]}


def double_plus_one(v):
    return v * 2 + 1


def average(v):
    return lax.pmean(v, DATA_AXIS)  # all-reduce: mean over devices, result on every device


def gather_all(v):
    return lax.all_gather(v, DATA_AXIS, tiled=True)  # concatenate every device's shard along axis 0


@functools.cache
def _compiled(fn, devices: int):
    """pmap of `fn` on the first `devices` devices, built once: reruns never recompile."""
    return jax.pmap(fn, axis_name=DATA_AXIS, devices=_devices(devices))


def step_map(devices: int, per_device: int) -> dict[str, Any]:
    x = batch(devices, per_device)
    out = _compiled(double_plus_one, devices)(x)
    return {"x": np.asarray(x), "output": np.asarray(out), "output_shape": out.shape}


def step_pmean(devices: int, per_device: int) -> dict[str, Any]:
    out = _compiled(average, devices)(batch(devices, per_device))
    return {"output": np.asarray(out), "output_shape": out.shape}


def step_all_gather(devices: int, per_device: int) -> dict[str, Any]:
    x = batch(devices, per_device)  # every device holds shape (per_device,): an axis to concatenate on
    out = _compiled(gather_all, devices)(x)
    return {"output": np.asarray(out), "output_shape": out.shape}


def train_step(params, x, y, learning_rate):
    """The shared data-parallel SGD step on the linear model, reporting the loss over the whole batch."""
    params, local_loss = data_parallel_sgd_step(linear_loss, params, x, y, learning_rate)
    return params, lax.pmean(local_loss, DATA_AXIS)  # every shard's loss averaged: the global loss


def train_loop(params, x, y, learning_rate, steps, fix_b, losses):
    """`steps` SGD steps in one compiled call (no host round trip between steps); step i's global
    loss lands in losses[i]. With `fix_b`, b is put back to 0 after every step (the tutorial's fit)."""
    def one_step(i, carry):
        params, losses = carry
        params, loss = train_step(params, x, y, learning_rate)
        params = {"w": params["w"], "b": jnp.where(fix_b, jnp.float32(0.0), params["b"])}
        return params, losses.at[i].set(loss)

    return lax.fori_loop(0, steps, one_step, (params, losses))


@functools.cache
def _train_step(devices: int):
    """The training loop compiled once per device count (the step count is a runtime value)."""
    # in_axes=None: one copy of params, learning rate and loop settings goes to every device.
    # out_axes=None: after pmean the new params (and losses) are equal everywhere, so one copy comes back.
    return jax.pmap(train_loop, axis_name=DATA_AXIS, in_axes=(None, 0, 0, None, None, None, None),
                    out_axes=(None, None), devices=_devices(devices))


def step_train(devices: int, per_device: int, steps: int, learning_rate: float) -> dict[str, Any]:
    x = batch(devices, per_device) / (devices * per_device)  # x in [0, 1): keeps the step size stable
    y = 3.0 * x + 1.0
    start = {"w": jnp.float32(0.0), "b": jnp.float32(0.0)}
    loop = _train_step(devices)
    buffer = jnp.zeros(1 << (steps - 1).bit_length(), jnp.float32)  # a power of two: few shapes, few compiles
    params, losses = loop(start, x, y, jnp.float32(learning_rate), steps, False, buffer)
    # The tutorial fits w alone: the same loop with b held at 0 cannot reach 3 while y has the +1.
    w_alone, _ = loop(start, x, y, jnp.float32(learning_rate), steps, True, buffer)
    # Gradient descent on this quadratic loss is stable only for η < 2 / (largest Hessian eigenvalue).
    xs = np.asarray(x).ravel()
    hessian = 2 * np.array([[np.mean(xs * xs), np.mean(xs)], [np.mean(xs), 1.0]])
    return {"x_shape": x.shape, "w": float(params["w"]), "b": float(params["b"]),
            "w_fitted_alone": float(w_alone["w"]), "largest_stable_lr": float(2 / np.linalg.eigvalsh(hessian)[-1]),
            "losses": np.asarray(losses, dtype=np.float64)[:steps]}


# --- the tutorial's three lines that fail on current JAX -------------------------

def tutorial_batch(devices: int) -> dict[str, Any]:
    x = jnp.arange(8.0)  # the tutorial's batch: shape (8,), written for a machine with 8 devices
    out = jax.pmap(lambda v: v * 2 + 1, devices=_devices(devices))(x)
    return {"output": np.asarray(out), "ran_on_devices": len(out.sharding.device_set)}


def doubled_batch(devices: int) -> dict[str, Any]:
    x = jnp.arange(2.0 * devices)  # twice as many samples as devices, still a flat (2D,) array
    return {"output": jax.pmap(lambda v: v * 2 + 1, devices=_devices(devices))(x)}


def tutorial_all_gather(devices: int) -> dict[str, Any]:
    x = jnp.arange(float(devices))  # flat: every device receives a scalar
    out = jax.pmap(lambda v: lax.all_gather(v, DATA_AXIS, tiled=True), axis_name=DATA_AXIS,
                   devices=_devices(devices))(x)
    return {"output": np.asarray(out)}


def tutorial_params(devices: int) -> dict[str, Any]:
    x = batch(devices, 2)
    w = jnp.array([0.0])  # one copy; pmap maps axis 0 of every argument unless told otherwise

    def train_step(w, x_local, y_local):
        g = jax.grad(lambda w: jnp.mean((w * x_local - y_local) ** 2))(w)
        return w - 0.01 * lax.pmean(g, DATA_AXIS)

    return {"w": np.asarray(jax.pmap(train_step, axis_name=DATA_AXIS, devices=_devices(devices))(w, x, 3 * x + 1))}


BROKEN = {"batch": tutorial_batch, "doubled_batch": doubled_batch,
          "all_gather": tutorial_all_gather, "params": tutorial_params}
TUTORIAL_ROWS = 8  # the leading axis of the tutorial's flat batch


def broken_note(name: str, devices: int, captured: Captured) -> tuple[str, dict[str, Any]]:
    """The text key and values that explain what one tutorial line did here, read from what ran.

    pmap maps a leading axis of length L onto L devices: it runs when L <= devices (on L of them)
    and fails when L > devices. The note says which happened, with the counts from this run.
    """
    rows = {"batch": TUTORIAL_ROWS, "doubled_batch": 2 * devices}.get(name, devices)
    values: dict[str, Any] = {"devices": devices, "rows": rows}
    if captured.raised:
        return f"broken.{name}.why", values
    if name == "batch":
        used = int(captured.values["ran_on_devices"])
        values["used"] = used
        return ("broken.batch.ran_all" if used == devices else "broken.batch.ran_fewer"), values
    return f"broken.{name}.ran", values


# --- everything the lab shows, in one call ------------------------------------------

@dataclasses.dataclass(frozen=True)
class DemoRun:
    devices: int
    per_device: int
    steps: dict[str, dict[str, Any]]  # step name -> its outputs
    broken: dict[str, Captured]  # tutorial line -> what JAX did with it here


def run_demo(devices: int, per_device: int, steps: int, learning_rate: float) -> DemoRun:
    devices = check_devices(devices)
    per_device = check_int("per_device", per_device, 1, MAX_PER_DEVICE)
    steps = check_int("steps", steps, 1, MAX_STEPS)
    learning_rate = check_float("learning_rate", learning_rate, 1e-4, 1.5)
    if devices * per_device < 2:
        raise LabInputError("demo_one_sample", "a line needs at least 2 samples, got {count}",
                            count=devices * per_device)
    outputs = {
        "devices": step_devices(devices),
        "map": step_map(devices, per_device),
        "pmean": step_pmean(devices, per_device),
        "all_gather": step_all_gather(devices, per_device),
        "train": step_train(devices, per_device, steps, learning_rate),
    }
    broken = {name: capture(functools.partial(fn, devices)) for name, fn in BROKEN.items()}
    return DemoRun(devices, per_device, outputs, broken)


STEP_FUNCTIONS = {"devices": (step_devices,), "map": (double_plus_one, step_map),
                  "pmean": (average, step_pmean), "all_gather": (gather_all, step_all_gather),
                  "train": (linear_loss, sgd_update, data_parallel_sgd_step, train_step, train_loop, _train_step,
                            step_train)}
