"""The transformer's remat policy in the training programs: the replicated ones apply it and report what a device
saves for its backward; a model without blocks, or a program that splits the model, refuses it in one line."""

import dataclasses

import pytest

from pmap_core.train import loop, models, programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError

SMALL = TrainConfig(model="transformer", devices=3, global_batch=12, steps=4, chunk=4, d_model=16, heads=2,
                    seq_len=8, vocab=16)


@pytest.mark.parametrize("impl", ["pmap", "shard_map", "jit"])
def test_a_replicated_program_applies_the_policy(impl):
    runs = {remat: loop.train(validate(dataclasses.replace(SMALL, impl=impl, remat=remat)))
            for remat in ("none", "full")}
    saved = {remat: run.footprint.residual_bytes_per_device for remat, run in runs.items()}
    rows = SMALL.global_batch // SMALL.devices
    for remat in runs:  # one device's rows through the model's own loss, traced
        assert saved[remat] == models.saved_activation_bytes("transformer", rows, SMALL.seq_len, SMALL.hidden,
                                                             SMALL.layers, SMALL.dims, remat)
    assert saved["full"] < saved["none"]
    assert runs["full"].footprint.flops_per_step > runs["none"].footprint.flops_per_step
    assert runs["full"].losses == pytest.approx(runs["none"].losses, rel=1e-6)


def test_flops_per_step_is_one_step_whatever_the_chunk():
    """XLA's cost analysis counts a loop's body once: a chunk of 4 steps reports what a chunk of 1 does."""
    config = validate(dataclasses.replace(SMALL, impl="jit"))
    one, four = (programs.build(config.program_spec(n)) for n in (1, 4))
    assert one.compiled.cost_analysis()["flops"] == pytest.approx(four.compiled.cost_analysis()["flops"], rel=0.01)


def test_a_model_without_blocks_refuses_a_policy():
    with pytest.raises(LabInputError) as refused:
        validate(TrainConfig(model="mlp", devices=2, remat="full"))
    assert refused.value.code == "remat_needs_transformer"


@pytest.mark.parametrize("split", [dict(impl="tensor", mesh_model=2), dict(impl="pipeline", pipeline_stages=2),
                                   dict(impl="jit", strategy="zero3")])
def test_a_program_that_splits_the_model_refuses_a_policy(split):
    config = dataclasses.replace(SMALL, devices=2, global_batch=16, remat="selective", **split)
    with pytest.raises(LabInputError) as refused:
        validate(config)
    assert refused.value.code == "remat_needs_replicated"
    assert set(refused.value.params["impls"].split(", ")) == {"pmap", "shard_map", "jit"}


def test_a_tensor_parallel_run_reports_one_devices_share_and_a_pipeline_none():
    """Under tensor parallelism a device keeps its shard of each residual (its heads, its columns of the MLP): JAX's
    list traced over the split arguments, each counted by its shard. A pipeline stage keeps its own layers' for each
    micro-batch in flight: not reported."""
    changes = dict(devices=2, global_batch=16)
    whole = loop.train(validate(dataclasses.replace(SMALL, impl="jit", **changes)), measure_scaling=False)
    split = loop.train(validate(dataclasses.replace(SMALL, impl="tensor", mesh_model=2, **changes)),
                       measure_scaling=False)
    # One data group of 16 rows on two model devices against two data groups of 8 rows each: the heads and the MLP's
    # columns halve, the LayerNorms and the residual stream do not.
    assert whole.footprint.residual_bytes_per_device < split.footprint.residual_bytes_per_device < (
        2 * whole.footprint.residual_bytes_per_device)
    staged = loop.train(validate(dataclasses.replace(SMALL, impl="pipeline", pipeline_stages=2, **changes)),
                        measure_scaling=False)
    assert staged.footprint.residual_bytes_per_device is None and "residual_bytes_per_device" not in staged.memory
