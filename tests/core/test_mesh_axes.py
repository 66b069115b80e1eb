"""The mesh axes (train.mesh) and the logical axes (train.logical): one builder whose meshes are the ones
each program built before, rules that give the PartitionSpecs the tensor program used, every axis name
assigned once, and no program module that names a parameter."""

from __future__ import annotations

import ast
import pathlib
import re

import jax
import numpy as np
import pytest
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

from pmap_core import runtime
from pmap_core.train import hsdp, logical, mesh, models, pipeline, replicated, tensor
from pmap_core.validation import LabInputError

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "pmap_core"
PROGRAMS = ("tensor", "context", "experts", "zero", "hsdp", "pipeline", "replicated")


# --- the builder ----------------------------------------------------------------------------

def test_the_axes_are_named_once_in_their_order():
    assert mesh.AXES == ("data", "stage", "expert", "seq", "model")
    assert mesh.DATA_AXIS is runtime.DATA_AXIS
    assert (tensor.MODEL_AXIS, pipeline.STAGE_AXIS, pipeline.DATA_AXIS) == (mesh.MODEL_AXIS, mesh.STAGE_AXIS, "data")


@pytest.mark.parametrize("sizes, axes, shape", [
    ({"data": 8}, ("data",), (8,)),
    ({"model": 4, "data": 2}, ("data", "model"), (2, 4)),          # the mapping's order does not matter
    ({"stage": 3, "data": 1}, ("data", "stage"), (1, 3)),
    ({"model": 1, "expert": 2, "seq": 2, "stage": 1, "data": 2}, mesh.AXES, (2, 1, 2, 2, 1)),
    ({"seq": 5}, ("seq",), (5,)),
])
def test_build_mesh_lays_out_the_asked_axes_in_order_over_the_first_devices(sizes, axes, shape):
    built = mesh.build_mesh(sizes)
    assert built.axis_names == axes
    assert tuple(built.devices.shape) == shape
    n = int(np.prod(shape))
    assert list(built.devices.flat) == jax.devices()[:n]
    assert mesh.axis_sizes(built) == {axis: sizes.get(axis, 1) for axis in mesh.MESH_AXES}


def test_build_mesh_keeps_make_mesh_s_axis_types():
    assert mesh.build_mesh({"data": 2, "model": 2}).axis_types == (AxisType.Explicit,) * 2
    assert mesh.build_mesh({"data": 3}, axis_types=AxisType.Auto).axis_types == (AxisType.Auto,)


@pytest.mark.parametrize("sizes, code", [
    ({"tensor": 2}, "unknown_mesh_axis"),
    ({"data": 2, "fsdp": 2}, "unknown_mesh_axis"),
    ({}, "empty_mesh"),
    ({"data": 0}, "mesh_axis_size"),
    ({"data": 2.0}, "mesh_axis_size"),
    ({"data": True}, "mesh_axis_size"),
    ({"data": 4, "model": 4}, "mesh_too_large"),
    ({"data": 9}, "mesh_too_large"),
])
def test_build_mesh_refuses_unknown_axes_odd_sizes_and_too_many_devices(sizes, code):
    with pytest.raises(LabInputError) as refused:
        mesh.build_mesh(sizes)
    assert refused.value.code == code
    if code == "unknown_mesh_axis":
        assert "the mesh axes are replica, data, stage, expert, seq, model" in str(refused.value)
    if code == "mesh_too_large":
        assert "there are 8" in str(refused.value)


def _same_mesh(a, b) -> bool:
    return (a.axis_names == b.axis_names and a.axis_types == b.axis_types
            and a.devices.shape == b.devices.shape and list(a.devices.flat) == list(b.devices.flat))


@pytest.mark.parametrize("devices", [1, 3, 8])
def test_every_program_s_mesh_is_the_one_it_built_itself(devices):
    first = jax.devices()[:devices]
    assert _same_mesh(replicated.data_mesh(devices), jax.make_mesh((devices,), ("data",), devices=first))
    assert _same_mesh(hsdp.mesh(devices, 1),
                      jax.make_mesh((devices,), ("data",), axis_types=(AxisType.Auto,), devices=first))
    assert _same_mesh(tensor.tensor_mesh(1, devices), jax.make_mesh((1, devices), ("data", "model"), devices=first))
    assert _same_mesh(pipeline.stage_mesh(devices), jax.make_mesh((1, devices), ("data", "stage"), devices=first))
    assert _same_mesh(hsdp.mesh(8, 2), jax.make_mesh((2, 4), ("replica", "data"), axis_types=(AxisType.Auto,) * 2,
                                                     devices=jax.devices()))
    assert _same_mesh(tensor.tensor_mesh(2, 4), jax.make_mesh((2, 4), ("data", "model"), devices=jax.devices()))
    assert _same_mesh(pipeline.stage_mesh(2, 8), jax.make_mesh((4, 2), ("data", "stage"), devices=jax.devices()))


# --- the logical axes and the rules ---------------------------------------------------------

def test_the_rules_give_the_tensor_program_s_partition_specs_exactly():
    axes = logical.param_axes("mlp")
    assert axes == {"w1": ("embed", "mlp"), "b1": ("mlp",), "w2": ("mlp",), "b2": ()}
    tp = {"w1": P(None, "model"), "b1": P("model"), "w2": P("model"), "b2": P()}
    fsdp = {**tp, "w1": P("data", "model")}
    assert logical.partition_specs(axes, logical.TENSOR_PARALLEL) == tp
    assert logical.partition_specs(axes, logical.FSDP_TENSOR_PARALLEL) == fsdp
    assert tensor.param_specs("zero3") is tensor.FSDP_SPECS and tensor.param_specs("dp") is tensor.PARAM_SPECS
    assert tensor.param_specs("zero3") == fsdp and tensor.param_specs("dp") == tp
    batch_rows = tensor.BATCH_ROWS
    assert batch_rows == P("data")


@pytest.mark.parametrize("model, layers", [("linear", 2), ("mlp", 2), ("mlp", 3), ("mlp", 8)])
def test_every_parameter_has_one_logical_axis_per_dimension(model, layers):
    params = models.init_params(model, 5, 6, 0, layers)
    axes = logical.param_axes(model, layers)
    assert list(axes) == list(params)
    assert {name: len(axes[name]) for name in params} == {name: np.ndim(value) for name, value in params.items()}
    for rules in (logical.TENSOR_PARALLEL, logical.FSDP_TENSOR_PARALLEL):
        specs = logical.partition_specs(axes, rules)
        assert all(len(specs[name]) == np.ndim(params[name]) for name in params)


def test_rules_refuse_unknown_names_and_one_mesh_axis_twice():
    with pytest.raises(LabInputError) as refused:
        logical.spec(("vocabulary",), logical.TENSOR_PARALLEL)
    assert refused.value.code == "unknown_logical_axis"
    with pytest.raises(LabInputError) as refused:
        logical.spec(("mlp",), {"mlp": "tensor"})
    assert refused.value.code == "unknown_mesh_axis"
    with pytest.raises(LabInputError) as refused:
        logical.spec(("embed", "mlp"), {"embed": "model", "mlp": "model"})
    assert refused.value.code == "mesh_axis_twice"
    assert logical.spec(("embed", "mlp"), {}) == P(None, None)  # no rule: whole


# --- one definition per axis name; programs name no parameter -------------------------------

def _string_assignments(value: str) -> list[str]:
    """Every `NAME = "value"` and `A, NAME = ..., "value"` in the package's Python modules (the exported
    scripts' templates, which run without pmap_core, name their own axis)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            values = [node.value]
            if isinstance(node.value, ast.Tuple) and any(isinstance(t, ast.Tuple) for t in targets):
                values = node.value.elts  # A, B = "x", "y": each name its own value
            if any(isinstance(v, ast.Constant) and v.value == value for v in values):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


@pytest.mark.parametrize("axis", mesh.MESH_AXES)
def test_each_mesh_axis_name_is_assigned_once_in_the_package(axis):
    where = _string_assignments(axis)
    assert len(where) == 1, where
    assert where[0].startswith("runtime.py" if axis == "data" else "train/mesh.py")


@pytest.mark.parametrize("program", PROGRAMS)
def test_no_program_module_names_a_parameter_of_the_mlp(program):
    source = (PACKAGE / "train" / f"{program}.py").read_text()
    assert not re.findall(r"""["'][wb][0-9]""", source)


@pytest.mark.parametrize("program", PROGRAMS)
def test_no_program_module_builds_a_mesh_of_its_own(program):
    source = (PACKAGE / "train" / f"{program}.py").read_text()
    assert "make_mesh(" not in source and "Mesh(" not in source.replace("build_mesh(", "")


def test_the_cli_s_mesh_option_checks_its_axis_names():
    import argparse

    from pmap_core.cli.training import _mesh

    assert _mesh("data=4,model=2") == {"data": 4, "model": 2} and _mesh("model=2,data=4") == {"data": 4, "model": 2}
    assert _mesh("data=2,seq=4") == {"data": 2, "seq": 4}
    assert _mesh("data=4,stage=2") == {"data": 4, "stage": 2} and _mesh("replica=2,data=4") == {"replica": 2, "data": 4}
    with pytest.raises(argparse.ArgumentTypeError, match=r"axis 'tensor'.*replica, data, stage, expert, seq, model"):
        _mesh("data=4,tensor=2")
    for text in ("data=0", "data=x,model=2", "4x2", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="expected axis=size pairs"):
            _mesh(text)
