"""Interview questions on sharded data parallelism (ZeRO / FSDP), mixed precision, gradient accumulation
and padded shards.

Like every question of the quiz, each answer is what a program returns here, on all this process's devices
(n): a formula of `costs.analytic` (the one home of the ZeRO formulas, checked against measured runs in
tests/pages/test_sharded_dp.py), or a real run read back from its values and compiled HLO. A question about
what a step sends answers from the bytes its collectives carry, not from their instructions: a collective
over one device is still an instruction, and it sends 0 bytes.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.concepts import sharded_dp
from pmap_core.costs import analytic
from pmap_core.practice.quiz.types import CHOICE, NUMBER, Question
from pmap_core.runtime import DATA_AXIS
from pmap_core.train import config as train_config
from pmap_core.train import footprint, loop
from pmap_core.train import plan as train_plan

PSI = 1e9  # the questions' model: one billion parameters, trained with Adam


def _n() -> int:
    return jax.local_device_count()


def _model_states_gb(strategy: str, precision: str = "float32") -> float:
    # float32: parameters and gradients 4 bytes each, Adam's two float32 moments 8. mixed (ZeRO §3):
    # bfloat16 parameters and gradients 2 bytes each, a float32 master copy and the moments 12.
    b = analytic.state_bytes(precision, "adam")
    return analytic.zero_memory_per_device(PSI, _n(), strategy, b.params, b.grads, b.optimizer).total / 1e9


# --- the programs -----------------------------------------------------------------

def zero1_memory_gb() -> float:
    return _model_states_gb("zero1")


def zero2_memory_gb() -> float:
    return _model_states_gb("zero2")


def zero3_memory_gb() -> float:
    return _model_states_gb("zero3")


def mixed_zero1_memory_gb() -> float:
    return _model_states_gb("zero1", "mixed")


SAME_BOTH, AR_FEWER, AR_MORE, DIFFERENT = ("same values, same bytes", "same values, all-reduce sends fewer bytes",
                                           "same values, all-reduce sends more bytes", "different values")


def scatter_gather_vs_all_reduce() -> str:
    n = _n()
    mesh = jax.make_mesh((n,), (DATA_AXIS,), devices=jax.local_devices())
    x = jax.device_put(np.arange(n * n * 4, dtype=np.float32).reshape(n, n * 4), NamedSharding(mesh, P(DATA_AXIS)))

    def run(body):
        f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P(DATA_AXIS), out_specs=P(DATA_AXIS)))
        text = f.lower(x).compile().as_text()  # bytes each device sends, read from the compiled collectives
        return np.asarray(f(x)), sum(r.ring_bytes * r.runs_per_call for r in footprint.collective_runs(text))

    summed, ar_bytes = run(lambda v: lax.psum(v, DATA_AXIS))
    two_step, rs_ag_bytes = run(lambda v: lax.all_gather(
        lax.psum_scatter(v, DATA_AXIS, scatter_dimension=1, tiled=True), DATA_AXIS, axis=1, tiled=True))
    if not np.array_equal(summed, two_step):
        return DIFFERENT
    return SAME_BOTH if np.isclose(ar_bytes, rs_ag_bytes) else AR_FEWER if ar_bytes < rs_ag_bytes else AR_MORE


MORE, SAME, FEWER, NOTHING = "more than dp", "the same as dp", "fewer than dp", "nothing: one device"


def _config(strategy: str, accum_steps: int = 1) -> train_config.TrainConfig:
    return train_plan.validate(train_config.TrainConfig(
        model="mlp", devices=_n(), global_batch=8 * _n(), steps=1, chunk=1, hidden=64, features=16, impl="jit",
        optimizer="adam", strategy=strategy, accum_steps=accum_steps, learning_rate=0.01))


def _comm_per_step(strategy: str, accum_steps: int = 1) -> footprint.Footprint:
    return loop.train(_config(strategy, accum_steps), measure_scaling=False).footprint


def fsdp_vs_dp_bytes() -> str:
    dp, fsdp = (_comm_per_step(s).comm_bytes_per_step for s in ("dp", "zero3"))  # from each compiled step
    if dp == 0 and fsdp == 0:
        return NOTHING
    ratio = fsdp / dp
    return MORE if ratio > 1.1 else FEWER if ratio < 0.9 else SAME


ONCE_PER_STEP, ONCE_PER_MICRO, NEVER = "once per step", "once per micro-batch", "never: one device"


def accumulation_collectives() -> str:
    one, four = (_comm_per_step("dp", k).comm_bytes_per_step for k in (1, 4))  # bytes sent per step
    if one == 0 and four == 0:
        return NEVER  # one device: the all-reduce is in the program and carries nothing
    ratio = four / one
    return ONCE_PER_MICRO if np.isclose(ratio, 4) else ONCE_PER_STEP if np.isclose(ratio, 1) else f"{ratio:g}× K = 1"


TWICE, ONCE, NOT_GATHERED = ("twice: before its forward and again before its backward",
                             "once: kept from the forward for the backward", "never: one device")


def zero3_layer_gathers() -> str:
    config = _config("zero3")
    f = loop.train(config, measure_scaling=False).footprint
    gathers = sharded_dp.layer_gathers(f, sharded_dp.step_comm(config), 1, "adam")
    if gathers is None:
        return NOT_GATHERED  # one device: its all-gathers carry 0 bytes
    # The parameters' values all-gathered per step, over the padded parameters: 2 means every layer twice.
    times = gathers.times_params
    return TWICE if np.isclose(times, 2) else ONCE if np.isclose(times, 1) else f"{times:.3g}× the parameters"


PSUM_SUMS, PMEAN_MEANS, BOTH = "psum of sums / B", "pmean of shard means", "both"


def padded_mean() -> str:
    n = _n()
    batch = 4 * n + 1  # B samples, 1 … B
    per = -(-batch // n)  # each device's slots after padding with zeros to a multiple of n
    x = np.zeros(n * per, np.float32)
    x[:batch] = np.arange(1, batch + 1)
    shards = jnp.asarray(x.reshape(n, per))
    means = jax.pmap(lambda v: lax.pmean(v.mean(), DATA_AXIS), axis_name=DATA_AXIS)(shards)[0]
    sums = jax.pmap(lambda v: lax.psum(v.sum(), DATA_AXIS), axis_name=DATA_AXIS)(shards)[0] / batch
    true = (batch + 1) / 2
    right = [name for name, v in ((PSUM_SUMS, sums), (PMEAN_MEANS, means)) if np.isclose(float(v), true)]
    return BOTH if len(right) == 2 else right[0] if right else "neither"


QUESTIONS = (
    Question("zero1_memory_gb", NUMBER, zero1_memory_gb, tolerance=0.01),
    Question("zero2_memory_gb", NUMBER, zero2_memory_gb, tolerance=0.01),
    Question("zero3_memory_gb", NUMBER, zero3_memory_gb, tolerance=0.01),
    Question("mixed_zero1_memory_gb", NUMBER, mixed_zero1_memory_gb, tolerance=0.01),
    Question("scatter_gather_vs_all_reduce", CHOICE, scatter_gather_vs_all_reduce,
             lambda n: [SAME_BOTH, AR_FEWER, AR_MORE, DIFFERENT]),
    Question("fsdp_vs_dp_bytes", CHOICE, fsdp_vs_dp_bytes, lambda n: [MORE, SAME, FEWER, NOTHING]),
    Question("accumulation_collectives", CHOICE, accumulation_collectives,
             lambda n: [ONCE_PER_STEP, ONCE_PER_MICRO, NEVER]),
    Question("zero3_layer_gathers", CHOICE, zero3_layer_gathers, lambda n: [TWICE, ONCE, NOT_GATHERED]),
    Question("padded_mean", CHOICE, padded_mean, lambda n: [PSUM_SUMS, PMEAN_MEANS, BOTH]),
)
