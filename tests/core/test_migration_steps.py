"""The migration lab's computations: one step three ways (against NumPy), the mesh/PartitionSpec picture
(against NumPy slicing), and the HLO inspector's collectives."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pmap_core import LabInputError
from pmap_core.concepts import mesh_view, migration
from pmap_core.train import models


def numpy_step(devices: int, per_device: int, seed: int = 0) -> tuple[np.ndarray, float]:
    """The same SGD step, written here from the formula: every parameter (w…, b) after it, and the loss."""
    params, x, y = migration.problem(devices * per_device, seed)
    w, b = params["w"].astype(np.float64), float(params["b"])
    residual = x.astype(np.float64) @ w + b - y
    grad_w = 2.0 / len(y) * x.T.astype(np.float64) @ residual
    grad_b = 2.0 / len(y) * residual.sum()
    lr = migration.LEARNING_RATE
    return np.concatenate([w - lr * grad_w, [b - lr * grad_b]]), float(np.mean(residual**2))


@pytest.mark.parametrize("devices", [1, 2, 8])
def test_three_ways_give_the_numpy_step(devices):
    result = migration.run_three_ways(devices, per_device=3)
    expected_params, expected_loss = numpy_step(devices, 3)
    assert [w.impl for w in result.ways] == ["pmap", "shard_map", "jit"]
    for way in result.ways:
        got = np.concatenate([way.params["w"], [way.params["b"]]])
        np.testing.assert_allclose(got, expected_params, rtol=1e-5, atol=1e-6, err_msg=way.impl)
        assert way.loss == pytest.approx(expected_loss, rel=1e-5), way.impl
    assert result.equal and result.max_diff_between <= 1e-5 and result.max_diff_numpy <= 1e-5


def test_pmap_drops_the_mapped_axis_and_shard_map_keeps_the_rank():
    result = migration.run_three_ways(8, per_device=2)
    pm, sm, jt = result.ways
    f = migration.FEATURES
    assert pm.input_shape == (8, 2, f) and pm.body_shape == (2, f)  # rank 3 → 2
    assert sm.input_shape == (16, f) and sm.body_shape == (2, f)  # rank 2 → 2
    assert jt.input_shape == (16, f) and jt.body_shape == (16, f)  # the global view
    assert "{V:data}" in sm.body_view and "@data" in jt.body_view and "@" not in pm.body_view


def test_every_input_and_output_reports_its_sharding():
    result = migration.run_three_ways(4, per_device=2)
    for way in result.ways:
        by_name = {(a.role, a.name): a for a in way.arrays}
        assert {name for role, name in by_name if role == "input"} == {"params.b", "params.w", "x", "y"}
        assert {name for role, name in by_name if role == "output"} == {"params.b", "params.w", "loss"}
        assert by_name["input", "x"].spec == "P('data',)" and by_name["input", "params.w"].spec == "P()"
        assert by_name["output", "loss"].spec == "P()"
        assert "@data" in by_name["input", "x"].typeof
    assert result.ways[1].arrays[2].typeof == "float32[8@data,3]"  # shard_map's x: the global batch, split


def test_the_change_table_is_read_from_what_ran():
    result = migration.run_three_ways(2, per_device=2)
    rows = {c.topic: c for c in migration.changes(result)}
    assert not rows["rank"].same and rows["result"].same and rows["math"].same
    assert rows["in"].cells[0] == "in_axes=(None, 0, 0)" and "P('data',)" in rows["in"].cells[1]
    assert rows["out"].cells[0] == "out_axes=None"
    assert "P()" in rows["out"].cells[2]  # jit's outputs, read from the arrays
    assert "device_put_replicated: gone" in rows["place"].cells[0]  # hasattr on the installed JAX
    assert rows["compiled"].cells == ("all-reduce",) * 3


@pytest.mark.parametrize("devices", [1, 2, 3, 8])
def test_the_gradient_without_pcast_is_d_times_numpy_and_with_it_is_numpy(devices):
    """The trap the page states, run: the shard_map gradient of the step, with and without pcast."""
    trap = migration.run_three_ways(devices, per_device=2).trap
    params, x, y = migration.problem(devices * 2, 0)
    residual = x.astype(np.float64) @ params["w"] + params["b"] - y
    numpy_grad = np.concatenate([2.0 / len(y) * x.T.astype(np.float64) @ residual, [2.0 / len(y) * residual.sum()]])
    np.testing.assert_allclose(trap.numpy, numpy_grad, rtol=1e-6)
    np.testing.assert_allclose(trap.with_pcast, numpy_grad, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(trap.without_pcast, devices * numpy_grad, rtol=1e-4, atol=1e-6)
    assert trap.devices == devices and trap.factor == pytest.approx(devices, rel=1e-5)
    assert trap.without_is_d_times and trap.with_is_right


def test_the_default_array_splits_over_the_default_mesh_at_every_device_count(monkeypatch):
    """The mesh section opens on a placement JAX accepts for every D from 1 to 64: P('x', 'y') on an array
    near 8×8 whose sides the mesh axes divide, P('x') where an axis is longer than MAX_SIDE (a prime D > 32)."""
    monkeypatch.setattr(mesh_view, "check_devices", lambda devices: devices)  # the shapes only: no device used
    for devices in range(1, 65):
        mesh = mesh_view.default_mesh(devices)
        spec = mesh_view.default_spec(mesh, devices)
        rows, cols = mesh_view.default_shape(mesh, spec, devices)
        axes = mesh_view.mesh_axes(mesh, devices)
        mesh_view.check_placement(axes, mesh_view.SPECS[spec], (rows, cols))  # raises where it does not split
        assert 1 <= rows <= mesh_view.MAX_SIDE and 1 <= cols <= mesh_view.MAX_SIDE, devices
        assert spec == ("x,y" if max(axes.values()) <= mesh_view.MAX_SIDE else "x"), devices
    assert [mesh_view.default_shape(mesh_view.default_mesh(d), "x,y", d) for d in (1, 3, 5, 8, 16)] == [
        (8, 8), (8, 9), (8, 10), (8, 8), (8, 8)]


def test_meshes_are_every_factorization():
    assert mesh_view.mesh_shapes(8) == ["8", "1x8", "2x4", "4x2", "8x1"]
    assert mesh_view.mesh_shapes(1) == ["1", "1x1"]
    assert mesh_view.default_mesh(8) == "2x4" and mesh_view.default_mesh(7) == "1x7"


def expected_blocks(mesh_id: str, spec_id: str, rows: int, cols: int) -> dict[int, tuple]:
    """{device: (row slice, col slice)} predicted by NumPy: np.array_split of each dimension's indices
    into as many blocks as the named mesh axes have devices, block number = ravel of the position."""
    sizes = [int(n) for n in mesh_id.split("x")]
    names = ["x", "y"][:len(sizes)]
    ids = np.arange(math.prod(sizes)).reshape(sizes)  # make_mesh on CPU keeps device order
    spec = mesh_view.SPECS[spec_id]
    found = {}
    for position in np.ndindex(*sizes):
        spans = []
        for dim, size in enumerate((rows, cols)):
            entry = spec[dim] if dim < len(spec) else None
            axes = () if entry is None else (entry if isinstance(entry, tuple) else (entry,))
            parts = [sizes[names.index(a)] for a in axes]
            block = int(np.ravel_multi_index([position[names.index(a)] for a in axes], parts)) if axes else 0
            chunk = np.array_split(np.arange(size), math.prod(parts))[block]
            spans.append((int(chunk[0]), int(chunk[-1]) + 1))
        found[int(ids[position])] = tuple(spans)
    return found


@pytest.mark.parametrize("devices,mesh,spec,rows,cols", [
    (8, "8", "x", 8, 4), (8, "2x4", "x,y", 8, 8), (8, "2x4", "none,y", 4, 8), (8, "2x4", "y,x", 8, 6),
    (8, "4x2", "xy", 16, 3), (8, "8x1", "x,y", 8, 5), (8, "2x4", "replicated", 3, 5), (6, "2x3", "y,x", 9, 4),
    (4, "1x4", "none,x", 2, 2), (1, "1", "x", 1, 1),
])
def test_block_ownership_is_what_numpy_slicing_predicts(devices, mesh, spec, rows, cols):
    placed = mesh_view.place(devices, mesh, spec, rows, cols)
    expected = expected_blocks(mesh, spec, rows, cols)
    assert {d: (r, c) for d, r, c in placed.shards} == expected
    assert placed.as_predicted and all(b.values_match for b in placed.blocks)
    held = sorted(d for b in placed.blocks for d in b.devices)
    assert held == list(range(devices))  # every device holds exactly one block
    assert placed.shape == (rows, cols)


def test_replicated_and_partly_replicated_blocks():
    full = mesh_view.place(8, "2x4", "replicated", 4, 4)
    assert full.copies == 8 and len(full.blocks) == 1 and full.typeof == "float32[4,4]"
    half = mesh_view.place(8, "2x4", "none,y", 4, 8)
    assert half.copies == 2 and half.blocks[0].devices == (0, 4)  # same column block, both rows of x
    assert half.typeof == "float32[4,8@y]"
    assert mesh_view.device_label((0, 1, 2, 3)) == "0–3" and mesh_view.device_label((0, 4)) == "0,4"


def test_a_spec_naming_y_on_a_1d_mesh_is_refused_with_jax_own_message():
    with pytest.raises(LabInputError) as refused:
        mesh_view.place(8, "8", "x,y", 8, 8)
    assert refused.value.code == "mesh_axis_missing" and refused.value.params["axis"] == "y"
    assert "'y'" in str(refused.value) and "only 'x'" in str(refused.value)
    assert "not found in mesh" in mesh_view.jax_refusal(8, "8", "x,y", 8, 8)


def test_a_dimension_that_does_not_split_is_refused():
    with pytest.raises(LabInputError) as refused:
        mesh_view.place(8, "2x4", "y,x", 6, 8)
    assert refused.value.code == "block_not_divisible"
    assert refused.value.params == {"spec": "P('y', 'x')", "dim": 0, "size": 6, "parts": 4, "nearest": "4, 8"}
    assert "evenly divide" in mesh_view.jax_refusal(8, "2x4", "y,x", 6, 8)
    with pytest.raises(LabInputError) as unknown:
        mesh_view.place(8, "3x3", "x", 8, 8)
    assert unknown.value.code == "unknown_mesh"
    with pytest.raises(LabInputError) as unknown:
        mesh_view.place(8, "2x4", "P('z')", 8, 8)
    assert unknown.value.code == "unknown_spec"


@pytest.mark.parametrize("devices", [2, 8])
@pytest.mark.parametrize("model", models.MODELS)
def test_the_data_parallel_step_all_reduces_and_never_gathers(devices, model):
    report = migration.inspect_hlo(devices, model)
    assert [i.impl for i in report.impls] == ["pmap", "shard_map", "jit"]
    params = models.init_params(model, migration.HLO_FEATURES, migration.HLO_HIDDEN, 0)
    gradient_bytes = 4 * sum(np.size(p) for p in params.values())
    for impl in report.impls:
        assert impl.count("all-reduce") >= 1, impl.impl
        assert impl.count("all-gather") == 0, impl.impl
        assert impl.bytes_per_step == gradient_bytes, impl.impl  # the mean gradient; the loss stays local
        assert "all-reduce" in impl.hlo_text and "metadata=" not in impl.hlo_text
    assert report.same_bytes


def test_one_device_moves_no_bytes():
    report = migration.inspect_hlo(1, "linear")
    assert report.same_bytes and {i.bytes_per_step for i in report.impls} == {0}
