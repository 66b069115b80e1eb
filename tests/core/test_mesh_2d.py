"""The two-axis lab's core (`pmap_core.concepts.mesh_2d`): replica groups read in full from HLO, each
collective named by its mesh axis, the Scaling Book's table for the MLP's sizes, the mesh sweep, the
roofline and its prediction, and the "sharding in types" examples — each against a reference (NumPy,
the formula, counts in the compiled HLO), at D = 1, 2, 3 and 8."""

import dataclasses
import math

import jax
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

from pmap_core import hlo
from pmap_core.concepts import mesh_2d, sharding_in_types
from pmap_core.costs import analytic
from pmap_core.train import loop, programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError

MLP = TrainConfig(model="mlp", devices=8, global_batch=48, hidden=32, features=8, steps=6, chunk=3, seed=2)
COUNTS = [1, 2, 3, 8]


# --- replica groups -------------------------------------------------------------------------------


def _iota(groups: int, size: int, dims: tuple[int, ...], perm: tuple[int, ...] | None = None) -> list[list[int]]:
    ids = np.arange(math.prod(dims)).reshape(dims)
    return (ids.transpose(perm) if perm else ids).reshape(groups, size).tolist()


@pytest.mark.parametrize("text, expected", [
    ("replica_groups={{0,2},{1,3}}, use_global_device_ids=true", [[0, 2], [1, 3]]),
    ("replica_groups={}, to_apply=%add", []),
    ("replica_groups=[4,2]<=[8], use_global_device_ids=true", _iota(4, 2, (8,))),
    ("replica_groups=[2,4]<=[4,2]T(1,0), use_global_device_ids=true", _iota(2, 4, (4, 2), (1, 0))),
    ("replica_groups=[3,4]<=[2,2,3]T(2,0,1), x", _iota(3, 4, (2, 2, 3), (2, 0, 1))),
    # mesh axes: the ids on a (4, 2) grid; grouping axis_0 varies the row, axis_1 the column
    ("replica_groups=mesh['axis_0'=4,'axis_1'=2] {'axis_0'}, use", np.arange(8).reshape(4, 2).T.tolist()),
    ("replica_groups=mesh['axis_0'=4,'axis_1'=2] {'axis_1'}, use", np.arange(8).reshape(4, 2).tolist()),
    ("replica_groups=mesh['a'=2,'b'=2,'c'=2] {'a','c'}, x",
     np.arange(8).reshape(2, 2, 2).transpose(1, 0, 2).reshape(2, 4).tolist()),
    # a part of an axis: 'a':(2)2 of 8 = the middle factor of 8 = 2 × 2 × 2
    ("replica_groups=mesh['a'=8] {'a':(2)2}, x",
     np.arange(8).reshape(2, 2, 2).transpose(0, 2, 1).reshape(4, 2).tolist()),
    ("replica_groups=mesh['a'=2,'b'=2], device_ids=(0,2,1,3) {'b'}, x", [[0, 2], [1, 3]]),
    ("source_target_pairs={{0,1},{1,0}}", None),
])
def test_replica_groups_are_read_in_every_form_xla_prints(text, expected):
    groups = hlo.replica_groups(text)
    assert (None if groups is None else [list(g) for g in groups]) == expected


def test_a_collective_over_one_axis_of_a_compiled_program_is_named_by_that_axis():
    """shard_map on a 4 × 2 (data, model) mesh: a psum over one axis compiles to groups over that axis."""
    mesh = jax.make_mesh((4, 2), ("data", "model"), devices=jax.devices()[:8])
    x = jax.device_put(np.ones((8, 4), np.float32), jax.sharding.NamedSharding(mesh, P("data", "model")))
    for axis, expected in (("model", "model"), ("data", "data"), (("data", "model"), "data+model")):
        f = jax.jit(jax.shard_map(lambda b, axis=axis: jax.lax.psum(b, axis), mesh=mesh,
                                  in_specs=P("data", "model"), out_specs=P("data", "model")))
        (found,) = [c for c in hlo.collectives(f.lower(x).compile().as_text()) if c.kind == "all-reduce"]
        assert mesh_2d.mesh_axis(found.groups, 4, 2) == expected
        assert len(found.groups[0]) == {"model": 2, "data": 4, "data+model": 8}[expected] == found.group_size


# --- shapes and collectives of the tensor program -----------------------------------------------------


@pytest.mark.parametrize("devices, hidden", [(1, 32), (2, 32), (3, 32), (8, 32), (8, 12), (6, 9)])
def test_mesh_shapes_are_every_factorization_whose_model_axis_divides_the_hidden_width(devices, hidden):
    reference = [(x, y) for y in range(1, devices + 1) for x in range(1, devices + 1)
                 if x * y == devices and hidden % y == 0]
    assert mesh_2d.mesh_shapes(devices, hidden) == reference


@pytest.mark.parametrize("devices", COUNTS)
def test_every_collective_of_every_shape_is_read_with_its_bytes_and_axis(devices):
    for data, model in mesh_2d.mesh_shapes(devices, MLP.hidden):
        config = validate(dataclasses.replace(MLP, devices=devices, impl="tensor", mesh_model=model))
        rows = mesh_2d.collective_rows(programs.build(config.program_spec(config.chunk)))
        by_axis = {row.axis: row for row in rows}
        assert set(by_axis) == {axis for axis, size in (("data", data), ("model", model)) if size > 1}
        assert all(row.kind == "all-reduce" and row.runs_per_step == 1 for row in rows)
        if model > 1:  # the B/X partial outputs over the Y devices of model
            row = by_axis["model"]
            assert (row.group_size, row.groups) == (model, data)
            assert row.bytes_per_step == pytest.approx(2 * (model - 1) / model * MLP.global_batch / data * 4)
        if data > 1:  # the gradient of this device's 1/Y of the weights (and the loss) over data
            row = by_axis["data"]
            assert (row.group_size, row.groups) == (data, model)
            values = MLP.features * MLP.hidden / model + 2 * MLP.hidden / model + 1 + 1
            assert row.bytes_per_step == pytest.approx(2 * (data - 1) / data * values * 4)
        formula = analytic.tensor_comm_bytes_per_step(MLP.global_batch, MLP.features, MLP.hidden, data, model)
        assert sum(row.bytes_per_step for row in rows) == pytest.approx(formula, rel=0.05, abs=1e-9)


# --- the Scaling Book's table --------------------------------------------------------------------------


@pytest.mark.parametrize("b, d, f, x, y", [(256, 8, 32, 4, 2), (4096, 8192, 28672, 16, 8), (7, 3, 5, 1, 1)])
def test_the_book_rows_are_its_formulas_for_the_mlps_sizes(b, d, f, x, y):
    rows = {row["strategy"]: row for row in mesh_2d.scaling_book_rows(b, d, f, x, y, measured_bytes=123.0)}
    expected = {"DP": 8 * d * f, "FSDP": 12 * d * f, "TP": 8 * b * d,
                "FSDP+TP": 4 * b * d / x + 4 * d * f / y + 8 * b * d / x + 8 * d * f / y}
    for name, value in expected.items():
        assert rows[name]["bytes_bf16"] == pytest.approx(value)
        assert rows[name]["bytes_float32"] == pytest.approx(2 * value)
        assert "Scaling Book" in rows[name]["source"] and rows[name]["measured_bytes"] is None
    (lab,) = [row for name, row in rows.items() if name.startswith("this lab")]
    assert lab["bytes_float32"] == pytest.approx(analytic.tensor_comm_bytes_per_step(b, d, f, x, y))
    assert lab["measured_bytes"] == 123.0 and "x is data" in lab["note"]


def test_the_book_formula_refuses_a_strategy_it_does_not_have():
    with pytest.raises(LabInputError) as refused:
        analytic.scaling_book_layer_bytes("pipeline", 8, 8, 8)
    assert refused.value.code == "unknown_strategy"


# --- the sweep -------------------------------------------------------------------------------------


class Heard(loop.Callback):
    def __init__(self):
        self.events = []

    def sweep_started(self, config, runs):
        self.events.append(("started", tuple((r.mesh_data, r.mesh_model) for r in runs)))

    def point_done(self, point, index, total):
        self.events.append(("point", index, total))

    def sweep_ended(self, sweep):
        self.events.append(("ended", len(sweep.points)))


@pytest.mark.parametrize("devices", COUNTS)
def test_the_sweep_trains_every_shape_that_fits_and_each_equals_data_parallelism(devices):
    heard, seen = Heard(), []
    sweep = mesh_2d.sweep_meshes(dataclasses.replace(MLP, devices=devices), lambda p, i, n: seen.append(i), [heard])
    shapes = mesh_2d.mesh_shapes(devices, MLP.hidden)
    assert [(run.data, run.model) for run in sweep.runs] == shapes
    assert sweep.skipped == tuple((devices // m, m) for m in range(1, devices + 1)
                                  if devices % m == 0 and MLP.hidden % m)
    assert heard.events == [("started", tuple(shapes)), *[("point", i, len(shapes)) for i in range(len(shapes))],
                            ("ended", len(shapes))]
    assert seen == list(range(len(shapes)))
    flat = loop.train(validate(dataclasses.replace(MLP, devices=devices, impl="pmap")), measure_scaling=False)
    for run in sweep.runs:
        result = run.result
        assert (result.config.mesh_data, result.config.mesh_model) == (run.data, run.model)
        np.testing.assert_allclose(result.losses, flat.losses, rtol=1e-5)
        assert result.footprint.param_bytes_per_device <= 1.1 * flat.footprint.param_bytes_per_device / run.model
        assert result.footprint.comm_bytes_per_step == pytest.approx(sum(r.bytes_per_step for r in run.collectives))
        assert run.point.scaling_ratio == pytest.approx(result.steady_throughput / run.point.baseline_throughput)
    assert sweep.fastest.result.steady_throughput == max(r.result.steady_throughput for r in sweep.runs)


def test_a_shape_that_cannot_run_is_refused_with_a_code():
    for shapes, code in (([(4, 4)], "mesh_devices"), ([(8, 1), (2, 4)], None), ([(1, 8)], "mesh_not_divisible")):
        config = dataclasses.replace(MLP, hidden=12)
        if code is None:
            assert [c.mesh_model for c in mesh_2d.mesh_configs(config, shapes)] == [1, 4]
            continue
        with pytest.raises(LabInputError) as refused:
            mesh_2d.mesh_configs(config, shapes)
        assert refused.value.code == code
    with pytest.raises(LabInputError) as refused:
        mesh_2d.sweep_meshes(dataclasses.replace(MLP, model="linear"))
    assert refused.value.code == "tensor_needs_mlp_sgd"


def test_the_seq_axis_offers_the_shapes_its_scheme_accepts():
    """On the seq axis, a shape fits when the context program's own check passes: the axis divides the sequence
    (into 2P chunks for zig-zag) and, for Ulysses, the heads."""
    base = TrainConfig(model="transformer", devices=8, global_batch=16, d_model=16, heads=2, seq_len=8, steps=2)
    for scheme, layout, sizes in (("ring", "contiguous", [1, 2, 4, 8]), ("ring", "zigzag", [1, 2, 4]),
                                  ("ulysses", "contiguous", [1, 2])):
        config = dataclasses.replace(base, context=scheme, context_layout=layout)
        assert mesh_2d.fitting_shapes(config, "seq") == [(8 // size, size) for size in sizes], (scheme, layout)
        configs = mesh_2d.mesh_configs(config, axis="seq")
        assert [(c.impl, c.mesh_data, c.mesh_seq) for c in configs] == [("context", 8 // n, n) for n in sizes]
    for shapes, code in (([(4, 4)], "seq_mesh_devices"), ([(1, 8)], "ulysses_needs_heads")):
        with pytest.raises(LabInputError) as refused:
            mesh_2d.mesh_configs(dataclasses.replace(base, context="ulysses"), shapes, "seq")
        assert refused.value.code == code
    with pytest.raises(LabInputError) as refused:
        mesh_2d.mesh_configs(base, axis="expert")
    assert refused.value.code == "unknown_sweep_axis"


# --- the roofline and its prediction -------------------------------------------------------------------


def test_the_matmul_flops_are_the_compiled_programs_own_count():
    flops_per_s, flops, seconds = mesh_2d.matmul_flops_per_s(128, repeats=2)
    assert flops == 2 * 128**3 and seconds > 0 and flops_per_s == pytest.approx(flops / seconds)


def test_the_roofline_table_puts_this_machine_beside_the_books_figures():
    roof = mesh_2d.roofline(8, beta_bytes_per_s=2e9, alpha_s=5e-6, matmul_size=128, repeats=2)
    assert roof.intensity == pytest.approx(roof.flops_per_s / 2e9)
    assert roof.critical_batch_per_device == pytest.approx(2 * roof.flops_per_s / 2e9)  # float32: 2·C/W
    assert roof.tp_bound(32) == pytest.approx(32 / roof.critical_batch_per_device)
    table = roof.table(32)
    assert [row["whose"].startswith("the book") for row in table] == [False, True, True, True]
    books = {row["machine"]: row["critical_batch_per_device"] for row in table[1:]}
    # The book's own figures: C/W ≈ 2550 for TPU v5p over one ICI axis, 2200 and 2475 for H100.
    assert books == pytest.approx({"TPU v5p, one ICI axis": 4.6e14 / 1.8e11, "H100, within a node (NVLink)": 2200,
                                   "H100, beyond a node": 2475})


@pytest.mark.parametrize("devices", [3, 5])
def test_the_bandwidth_is_fitted_at_a_count_that_does_not_divide_a_power_of_two(devices):
    ring = mesh_2d.allreduce_fit(devices, sizes=(4096, 65536), repeats=1)  # sizes rounded to whole shards
    assert ring.beta_bytes_per_s > 0


def test_at_one_device_the_roofline_says_what_it_needs_for_a_bandwidth():
    roof = mesh_2d.roofline(1, matmul_size=64, repeats=1)
    assert roof.beta_bytes_per_s is None and roof.critical_batch_per_device is None and roof.tp_bound(32) is None
    assert "at least 2 devices" in roof.bandwidth_source
    with pytest.raises(LabInputError) as refused:
        mesh_2d.predicted_winner(roof, [(1, 1)], (64, 8, 32))
    assert refused.value.code == "need_two_devices"


def _roof(alpha: float, beta: float, simulated: bool) -> mesh_2d.Roofline:
    return mesh_2d.Roofline(1e11, 128, 1.0, 1.0, beta, alpha, "given", 8, 2, simulated)


def test_a_prediction_refuses_sizes_and_shapes_that_are_not_what_it_reads():
    roof = _roof(1e-6, 1e9, True)
    for shapes, sizes, code in (([(4, 2)], (), "mlp_sizes"), ([(4, 2, 1)], (64, 8, 32), "unknown_mesh_shape"),
                                ([(4, -2)], (64, 8, 32), "out_of_range")):
        with pytest.raises(LabInputError) as refused:
            mesh_2d.predicted_winner(roof, shapes, sizes)
        assert refused.value.code == code
    with pytest.raises(LabInputError) as refused:
        mesh_2d.predicted_winner(dataclasses.replace(roof, flops_per_s=float("inf")), [(4, 2)], (64, 8, 32))
    assert refused.value.code == "not_a_number"


def test_with_bandwidth_alone_the_prediction_is_the_shape_that_sends_fewest_bytes():
    shapes, sizes = mesh_2d.mesh_shapes(8, 32), (256, 8, 32)
    prediction = mesh_2d.predicted_winner(_roof(0.0, 1e9, False), shapes, sizes)
    fewest = min(shapes, key=lambda s: analytic.tensor_comm_bytes_per_step(*sizes, *s))
    assert prediction.winner == prediction.ring_winner == fewest == (2, 4)
    for shape in prediction.shapes:
        assert shape.comm_s == pytest.approx(shape.comm_bytes / 1e9, rel=0.01)  # the loss's 4 bytes aside


@pytest.mark.parametrize("devices", [3, 8])
def test_this_mlps_own_bounds_are_where_its_compute_meets_its_sending(devices):
    # The book's 2·C/W and F/(2·C/W) are for its transformer MLP; this MLP's are where its own predicted compute
    # equals its bytes sent at W: on D × 1 (the gradient over data) and on 1 × D (the B outputs over model).
    roof = mesh_2d.Roofline(1e10, 128, 1.0, 1.0, 2e9, 1e-6, "given", devices, 2, True)
    own = mesh_2d.own_bounds(roof, 8, 32)
    assert own.flops_per_sample == 4 * (8 * 32 + 32) + 32
    batch = 60 * devices
    dp, tp = mesh_2d.predicted_winner(roof, [(devices, 1), (1, devices)], (batch, 8, 32)).shapes
    assert dp.compute_s / dp.send_s == pytest.approx((batch / devices) / own.critical_batch_per_device)
    assert tp.compute_s / tp.send_s == pytest.approx((own.tp_bound - 1) / (devices - 1))
    assert own.critical_batch_per_device != pytest.approx(roof.critical_batch_per_device)
    assert own.tp_bound != pytest.approx(roof.tp_bound(32))


def test_with_latency_alone_the_prediction_counts_hops_or_rendezvous():
    shapes, sizes = mesh_2d.mesh_shapes(8, 32), (256, 8, 32)
    ring = mesh_2d.predicted_winner(_roof(1e-5, 1e30, False), shapes, sizes)
    hops = {(x, y): 2 * (x - 1) + 2 * (y - 1) for x, y in shapes}  # 14, 8, 8, 14
    for shape in ring.shapes:
        assert shape.comm_s == pytest.approx(hops[shape.data, shape.model] * 1e-5)
    assert ring.winner == (2, 4)  # 8 hops either way, then fewer bytes
    cpu = mesh_2d.predicted_winner(_roof(1e-5, 1e30, True), shapes, sizes)
    # XLA:CPU: one rendezvous per operand, and the gradient's all-reduce carries w1, b1, w2, b2 and the loss.
    assert {(s.data, s.model): s.rendezvous for s in cpu.shapes} == {(8, 1): 5, (4, 2): 6, (2, 4): 6, (1, 8): 1}
    assert {(s.data, s.model): s.comm_s / 1e-5 for s in cpu.shapes} == pytest.approx(
        {(8, 1): 5 * 14, (4, 2): 2 + 5 * 6, (2, 4): 6 + 5 * 2, (1, 8): 14})
    assert cpu.winner == (1, 8) and cpu.ring_winner == (2, 4)
    with pytest.raises(LabInputError) as refused:
        mesh_2d.predicted_winner(_roof(1e-5, 1e9, True), [], sizes)
    assert refused.value.code == "no_mesh_shapes"


# --- sharding in types -----------------------------------------------------------------------------


@pytest.mark.parametrize("devices", COUNTS)
def test_the_ambiguous_dot_raises_then_every_out_sharding_runs_with_its_collective(devices):
    dot = sharding_in_types.ambiguous_dot(devices)
    rows, inner, cols = math.lcm(8, devices), math.lcm(4, devices), math.lcm(16, devices)
    assert (dot.lhs_type, dot.rhs_type) == (f"float32[{rows},{inner}@X]", f"float32[{inner}@X,{cols}]")
    assert dot.error_type == "ShardingTypeError"
    assert dot.error_text.startswith("Contracting dimensions are sharded and it is ambiguous how the output should "
                                     "be sharded. Please specify the output sharding via the `out_sharding`")
    replicated, on_rows, on_cols, unreduced, deferred = dot.choices
    assert replicated.result_type == f"float32[{rows},{cols}]"
    assert (on_rows.result_type, on_rows.per_device_shape) == (f"float32[{rows}@X,{cols}]", (rows // devices, cols))
    assert (on_cols.result_type, on_cols.per_device_shape) == (f"float32[{rows},{cols}@X]", (rows, cols // devices))
    assert unreduced.result_type == f"float32[{rows},{cols}]{{U:X}}" and unreduced.collectives == ()
    for choice in (replicated, on_rows, on_cols, deferred, dot.silent_gather):
        assert choice.max_error < 1e-5, choice.label
    kinds = {choice.label: [(c.kind, c.sliced_after) for c in choice.collectives]
             for choice in (*dot.choices, dot.silent_gather)}
    if devices == 1:  # nothing to sum or gather: no collective anywhere
        assert all(found == [] for found in kinds.values())
        return
    assert kinds[replicated.label] == kinds[deferred.label] == [("all-reduce", False)]
    # For this dot the partitioner writes the reduce-scatter as an all-reduce each device then slices; XLA:CPU
    # itself compiles a reduce-scatter (test_psum_scatter_compiles_to_a_reduce_scatter_on_this_backend).
    assert kinds[on_rows.label] == kinds[on_cols.label] == [("all-reduce", True)]
    assert kinds[dot.silent_gather.label] == [("all-gather", False)]
    # JAX 0.10.2 raised "NotImplementedError: device_indices_map doesn't work with unreduced. Please file a
    # bug …"; 0.12 refuses to read an unreduced array with a runtime error that names the sharding.
    assert unreduced.error == ("JaxRuntimeError: INVALID_ARGUMENT: Unreduced sharding does not support "
                               "UniqueIndexDomains: sharding={unreduced}")


def test_psum_scatter_compiles_to_a_reduce_scatter_on_this_backend():
    from jax.sharding import NamedSharding

    mesh = jax.make_mesh((4,), ("X",), devices=jax.devices()[:4])
    x = jax.device_put(np.ones(16, np.float32), NamedSharding(mesh, P("X")))
    scatter = jax.jit(jax.shard_map(lambda v: jax.lax.psum_scatter(v, "X", tiled=True), mesh=mesh,
                                    in_specs=P("X"), out_specs=P("X")))
    kinds = [c.kind for c in hlo.collectives(scatter.lower(x).compile().as_text())]
    assert kinds == ["reduce-scatter"]


@pytest.mark.parametrize("devices", COUNTS)
def test_auto_and_explicit_axes_show_where_the_type_and_the_concrete_sharding_part(devices):
    rows = {row.label: row for row in sharding_in_types.axes_demo(devices)}
    top = rows["Explicit mesh, top level"]
    assert top.concrete == "P('X',)" and top.typed.endswith("(sharding P('X',))")
    assert "produces an illegally sharded result" in rows["a result that would name X twice"].concrete
    added = rows["the same addition under auto_axes"]
    assert added.concrete == "P('X', None)" and "@X" in added.typed and "(inside: float32[" in added.typed
    inside = rows["inside auto_axes: the type forgets"]
    assert inside.typed == "P(None,)" and inside.concrete == ("P()" if devices == 1 else "P('X',)")
    auto = rows["Auto mesh, top level"]
    assert auto.concrete == "P('X', None)" and auto.typed.endswith("(sharding P(None, None))") and "@" not in auto.typed
    explicit = rows["explicit_axes inside a jit on the Auto mesh"]
    assert "inside: float32[" in explicit.typed and "@X" in explicit.typed.split(";")[0]
    assert "@" not in explicit.typed.split(";")[1]


@pytest.mark.parametrize("devices", COUNTS)
def test_reduced_weights_make_one_all_reduce_per_step_instead_of_k(devices):
    acc = sharding_in_types.reduced_accumulation(devices, 3)
    assert acc.error is None
    assert (acc.weight_type, acc.gradient_type) == ("float32[4,4]{R:X}", "float32[4,4]{U:X}")
    expected = (0, 0) if devices == 1 else (3, 1)  # at D = 1 there is nothing to reduce
    assert (acc.replicated_all_reduces, acc.reduced_all_reduces) == expected
    assert acc.max_error < 1e-5 and acc.max_difference < 1e-5
    with pytest.raises(LabInputError) as refused:
        sharding_in_types.reduced_accumulation(devices, 0)
    assert refused.value.code == "out_of_range"


def test_the_page_can_show_every_arrays_type():
    types = mesh_2d.array_types(dataclasses.replace(MLP, mesh_model=4))
    assert types["w1"] == "float32[8,32@model]" and types["x"] == "float32[48@data,8]"
