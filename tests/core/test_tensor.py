"""Tensor parallelism with data parallelism on a data × model mesh (impl tensor): the same training as
1-D data parallelism on every shape of 8 devices, 1/Y of the weights on each device, and the bytes the
compiled program sends against the formula for the MLP."""

import dataclasses

import jax
import numpy as np
import pytest

from pmap_core.costs import analytic
from pmap_core.train import models, programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import train
from pmap_core.train.plan import validate
from pmap_core.train.tensor import array_types
from pmap_core.validation import LabInputError

MLP = TrainConfig(model="mlp", devices=8, global_batch=256, hidden=32, features=8, steps=20, chunk=10,
                  learning_rate=0.1, seed=4)
SHAPES = [(8, 1), (4, 2), (2, 4), (1, 8)]


@pytest.fixture(scope="module")
def data_parallel():
    return train(validate(dataclasses.replace(MLP, impl="pmap")), measure_scaling=False)


@pytest.mark.parametrize("data, model", SHAPES)
def test_every_mesh_shape_trains_as_data_parallelism_does(data, model, data_parallel):
    result = train(validate(dataclasses.replace(MLP, impl="tensor", mesh_model=model)), measure_scaling=False)
    np.testing.assert_allclose(result.losses, data_parallel.losses, rtol=1e-5)
    for name, value in data_parallel.params.items():
        np.testing.assert_allclose(result.params[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
    assert result.replicas_identical  # every copy of every part, bit for bit
    f = result.footprint
    assert f.param_bytes_per_device <= 1.1 * data_parallel.footprint.param_bytes_per_device / model
    formula = analytic.tensor_comm_bytes_per_step(MLP.global_batch, MLP.features, MLP.hidden, data, model)
    assert f.comm_bytes_per_step == pytest.approx(formula, rel=0.05)
    assert set(f.comm_by_kind) == {"all-reduce"}


def test_every_array_says_its_sharding_in_its_type():
    config = validate(dataclasses.replace(MLP, impl="tensor", mesh_model=2))
    program = programs.build(config.program_spec(1))
    data = models.make_data(config.model, config.global_batch, config.features, config.seed)
    initial = models.init_params(config.model, config.features, config.hidden, config.seed)
    carry, x, y, _ = program.place(initial, data, config.learning_rate)
    assert array_types(program, carry, x, y) == {
        "w1": "float32[8,32@model]", "b1": "float32[32@model]", "w2": "float32[32@model]", "b2": "float32[]",
        "x": "float32[256@data,8]", "y": "float32[256@data]"}
    assert program.mesh.axis_types == (jax.sharding.AxisType.Explicit,) * 2


@pytest.mark.parametrize("changes, code", [
    (dict(impl="tensor", mesh_model=3), "mesh_not_divisible"),
    (dict(impl="tensor", mesh_model=2, model="linear"), "tensor_needs_mlp_sgd"),
    (dict(impl="tensor", mesh_model=2, optimizer="adam"), "tensor_needs_mlp_sgd"),
    (dict(impl="tensor", mesh_model=2, strategy="zero1"), "tensor_needs_mlp_sgd"),
    (dict(impl="tensor", mesh_model=1, strategy="zero3", features=6), "mesh_not_divisible"),
    (dict(impl="pmap", mesh_model=2), "mesh_needs_tensor"),
])
def test_a_mesh_that_cannot_run_is_refused_with_a_code(changes, code):
    with pytest.raises(LabInputError) as refused:
        validate(dataclasses.replace(MLP, **changes))
    assert refused.value.code == code


def test_the_cli_trains_on_a_mesh_and_records_its_shape(capsys, tmp_path):
    import json

    from mlflow.tracking import MlflowClient

    from harness.processes import new_tracking_store
    from pmap_core.cli.commands import main

    uri = new_tracking_store(tmp_path / "mlflow.db")
    common = ["train", "--model", "mlp", "--steps", "20", "--json"]
    assert main([*common, "--mesh", "data=4,model=2", "--tracking-uri", uri]) == 0
    mesh = json.loads(capsys.readouterr().out)
    assert main([*common, "--devices", "8", "--no-tracking"]) == 0
    flat = json.loads(capsys.readouterr().out)
    assert (mesh["mesh_data"], mesh["mesh_model"], mesh["devices"], mesh["impl"]) == (4, 2, 8, "tensor")
    assert mesh["final_loss"] == pytest.approx(flat["final_loss"], rel=1e-5)
    params = MlflowClient(uri).get_run(mesh["run_id"]).data.params
    assert (params["mesh_data"], params["mesh_model"]) == ("4", "2")
    # A mesh that does not match --devices, and one not written data=X,model=Y, are refused (status 2).
    assert main([*common, "--mesh", "data=4,model=2", "--devices", "4", "--no-tracking"]) == 2
    with pytest.raises(SystemExit) as refused:
        main([*common, "--mesh", "4x2", "--no-tracking"])
    assert refused.value.code == 2


@pytest.mark.parametrize("data, model", [(4, 2), (2, 4)])
def test_fsdp_times_tp_shards_w1_over_data_too_and_trains_the_same(data, model, data_parallel):
    tp = train(validate(dataclasses.replace(MLP, impl="tensor", mesh_model=model)), measure_scaling=False)
    both = train(validate(dataclasses.replace(MLP, impl="tensor", mesh_model=model, strategy="zero3")),
                 measure_scaling=False)
    np.testing.assert_allclose(both.losses, data_parallel.losses, rtol=1e-5)
    for name, value in data_parallel.params.items():
        np.testing.assert_allclose(both.params[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
    # w1 (8 × 32 of the 321 parameters) is split over all 8 devices; b1 and w2 over model only.
    assert both.footprint.param_bytes_per_device == 4 * (8 * 32 // 8 + 2 * 32 // model + 1)
    assert both.footprint.param_bytes_per_device < tp.footprint.param_bytes_per_device
    assert "all-gather" in both.footprint.comm_by_kind  # w1 gathered over data before use
