"""The CLI's help for --accum-steps and --grad-dtype says what the compiled programs do: zero2 reduce-scatters
every micro-batch's gradient (not one collective per K), and XLA:CPU compiles a bfloat16 gradient collective
back to float32 (the emitted program halves the bytes, the compiled one does not)."""

import argparse

import jax
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core import hlo
from pmap_core.cli import training as cli_training
from pmap_core.train import programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.footprint import collective_runs
from pmap_core.train.plan import validate


def _help(option: str) -> str:
    parser = argparse.ArgumentParser()
    cli_training._add_settings(parser)
    return " ".join(next(a.help for a in parser._actions if option in a.option_strings).split())


def test_accum_steps_help_says_zero2_reduce_scatters_each_micro_batch():
    config = validate(TrainConfig(model="mlp", impl="jit", strategy="zero2", optimizer="sgd", devices=2,
                                  accum_steps=2, global_batch=16, steps=1, chunk=1))
    runs = collective_runs(programs.build(config.program_spec(1)).compiled.as_text(), (1, 2))
    scatters = sum(r.runs_per_call for r in runs if r.collective.kind == "reduce-scatter")
    assert scatters == 2  # one per micro-batch, K = 2
    said = _help("--accum-steps")
    assert "zero2 reduce-scatters each micro-batch's gradient" in said and "one gradient collective per K" not in said


def test_grad_dtype_help_says_xla_cpu_sends_float32():
    mesh = jax.make_mesh((2,), ("d",), devices=jax.devices()[:2])
    x = jax.device_put(np.ones(8, jax.numpy.bfloat16), NamedSharding(mesh, P("d")))
    summed = jax.jit(jax.shard_map(lambda g: jax.lax.psum(g, "d"), mesh=mesh, in_specs=P("d"), out_specs=P("d")))
    (collective,) = hlo.collectives(summed.lower(x).compile().as_text())
    if jax.default_backend() == "cpu":
        assert collective.shapes[0].startswith("f32")  # widened back when compiled
        said = _help("--grad-dtype")
        assert "XLA:CPU compiles them back to float32" in said and "zero3" in said
