"""Interview questions on pmap: shapes in and out, the collectives, and what data parallelism computes.

Each answer is what the question's program returns here, on all this process's devices (n).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from pmap_core.practice.quiz.types import CHOICE, NUMBER, Question
from pmap_core.runtime import DATA_AXIS


def _n() -> int:
    return jax.local_device_count()


def _shape(shape: tuple[int, ...]) -> str:
    return str(tuple(shape))


# --- the programs -----------------------------------------------------------------

def output_shape() -> str:
    out = jax.pmap(lambda v: v.sum(axis=-1))(jnp.ones((_n(), 4, 3)))
    return _shape(out.shape)


def per_device_shape() -> str:
    seen = []

    def f(v):
        seen.append(v.shape)  # runs once, while tracing: the shape one device works on
        return v

    x = jnp.ones((_n() * 4, 3))
    jax.pmap(f)(x.reshape(_n(), 4, 3))
    return _shape(seen[0])


def pmean_value() -> float:
    out = jax.pmap(lambda v: lax.pmean(v, DATA_AXIS), axis_name=DATA_AXIS)(jnp.arange(float(_n())))
    return float(out[-1])  # the last device, n - 1: one that exists for every device count


def psum_of_one() -> float:
    out = jax.pmap(lambda v: lax.psum(1, DATA_AXIS), axis_name=DATA_AXIS)(jnp.zeros(_n()))
    return float(out[0])


def ppermute_value() -> float:
    n = _n()
    shift_right = [(i, (i + 1) % n) for i in range(n)]  # device i sends to device i+1
    out = jax.pmap(lambda v: lax.ppermute(v, DATA_AXIS, shift_right), axis_name=DATA_AXIS)(jnp.arange(float(n)) * 10)
    return float(out[0])


def all_gather_shape() -> str:
    out = jax.pmap(lambda v: lax.all_gather(v, DATA_AXIS), axis_name=DATA_AXIS)(jnp.ones((_n(), 2)))
    return _shape(out.shape)


def all_gather_tiled_shape() -> str:
    out = jax.pmap(lambda v: lax.all_gather(v, DATA_AXIS, tiled=True), axis_name=DATA_AXIS)(jnp.ones((_n(), 2)))
    return _shape(out.shape)


def psum_scatter_value() -> float:
    n = _n()
    out = jax.pmap(lambda v: lax.psum_scatter(v, DATA_AXIS), axis_name=DATA_AXIS)(jnp.ones((n, n)))
    return float(out[0])  # device 0's piece of the sum


def uneven_batch(rows: int | None = None) -> str:
    n = _n()
    rows = n + 4 if rows is None else rows  # the question: a flat batch of n + 4 samples
    try:
        jax.pmap(lambda v: v * 2)(jnp.ones(rows))
        return "runs"
    except Exception as error:  # noqa: BLE001 - the error type is the answer
        return type(error).__name__


def mean_of_means() -> str:
    n = _n()
    x = jnp.arange(4.0 * n).reshape(n, 4)
    y = 3 * x + 1
    loss = lambda w, x, y: jnp.mean((w * x - y) ** 2)  # noqa: E731
    per_device = jax.pmap(lambda x, y: lax.pmean(jax.grad(loss)(0.5, x, y), DATA_AXIS), axis_name=DATA_AXIS)(x, y)
    full_batch = jax.grad(loss)(0.5, x.ravel(), y.ravel())
    return "equal" if np.allclose(per_device[0], full_batch, rtol=1e-5) else "different"


def out_axes_none_value() -> float:
    out = jax.pmap(lambda v: v * 10, out_axes=None)(jnp.arange(float(_n())) + 1)
    return float(out)


def distinct_random() -> float:
    noise = jax.pmap(lambda k, v: jax.random.normal(k, ()), in_axes=(None, 0))(jax.random.key(0), jnp.zeros(_n()))
    return float(len(set(np.asarray(noise).tolist())))


def fused_all_reduces() -> float:
    from pmap_core.concepts.gradients import count_all_reduces

    # One layer: a weight and a bias, each gradient with its own pmean (gradients.mean_grad_step).
    counted = count_all_reduces(_n(), layers=1)
    return float(counted.compiled)  # all-reduce instructions left in the compiled HLO


def ring_bytes() -> float:
    from pmap_core.costs.analytic import ring_bytes_sent_per_device

    return ring_bytes_sent_per_device(100e6, 4) / 1e6  # MB each device sends for a 100 MB gradient


def measured_speedup() -> float:
    from pmap_core.timing import time_call

    n = _n()
    w = jnp.ones((256, 256)) / 256

    def work(x):
        for _ in range(4):
            x = jnp.tanh(x @ w)
        return x

    def throughput(devices: int) -> float:
        x = jnp.ones((devices, 2048 // devices, 256))  # same global batch of 2048 rows: strong scaling
        f = jax.pmap(work, devices=jax.devices()[:devices])
        return 2048 / time_call(f, x, repeats=5).median_s

    return throughput(n) / throughput(1)


# --- the questions ------------------------------------------------------------------

def _distinct(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))  # first occurrence kept: at small n two candidates can coincide


def _shapes(*shapes: Callable[[int], tuple[int, ...]]) -> Callable[[int], list[str]]:
    return lambda n: _distinct([_shape(make(n)) for make in shapes])


@functools.cache
def _uneven_batch_options(n: int) -> list[str]:
    # The same code as the answer, on batches that fit, that do not fit, and that do not divide: every
    # outcome pmap has for a flat batch on n devices (n + 4 among them, so the answer is always offered).
    outcomes = [uneven_batch(rows) for rows in (n + 4, n, max(n // 2, 1), n + 1, 2 * n)]
    return sorted(_distinct(outcomes))


QUESTIONS = (
    Question("output_shape", CHOICE, output_shape,
             _shapes(lambda n: (n,), lambda n: (n, 4), lambda n: (4,), lambda n: (n, 3))),
    Question("per_device_shape", CHOICE, per_device_shape,
             _shapes(lambda n: (4, 3), lambda n: (n, 4, 3), lambda n: (4 * n, 3), lambda n: (n, 3))),
    Question("pmean_value", NUMBER, pmean_value),
    Question("psum_of_one", NUMBER, psum_of_one),
    Question("ppermute_value", NUMBER, ppermute_value),
    Question("all_gather_shape", CHOICE, all_gather_shape,
             _shapes(lambda n: (n, 2), lambda n: (n, 2 * n), lambda n: (n, n, 2), lambda n: (2 * n,))),
    Question("all_gather_tiled_shape", CHOICE, all_gather_tiled_shape,
             _shapes(lambda n: (n, 2), lambda n: (n, 2 * n), lambda n: (n, n, 2), lambda n: (2 * n,))),
    Question("psum_scatter_value", NUMBER, psum_scatter_value),
    Question("uneven_batch", CHOICE, uneven_batch, lambda n: list(_uneven_batch_options(n))),
    Question("mean_of_means", CHOICE, mean_of_means, lambda n: ["equal", "different"]),
    Question("out_axes_none_value", NUMBER, out_axes_none_value),
    Question("distinct_random", NUMBER, distinct_random),
    Question("fused_all_reduces", NUMBER, fused_all_reduces),
    Question("ring_bytes", NUMBER, ring_bytes, tolerance=0.01),
    Question("measured_speedup", NUMBER, measured_speedup, tolerance=0.35, heavy=True),
)
