"""What the 2-D mesh lab draws: the shape it starts from at each D, settings that fit every shape of D, and
the sentence on which shape won, told from what ran (the fastest shape, and whether it sent the fewest bytes,
ran the fewest collectives, both or neither)."""

import types

import jax
import pytest

from pmap_core.concepts import mesh_2d
from pmap_core.concepts import mesh_2d_view as view


@pytest.mark.parametrize("devices, hidden, expected", [
    (1, 32, (1, 1)), (2, 32, (1, 2)), (3, 33, (1, 3)), (4, 32, (2, 2)), (5, 35, (1, 5)), (6, 36, (3, 2)),
    (8, 32, (4, 2)), (8, 2, (4, 2)), (8, 1, (8, 1)),
])
def test_the_lab_starts_on_the_squarest_shape_that_splits_the_weights(devices, hidden, expected):
    assert view.default_shape(mesh_2d.mesh_shapes(devices, hidden)) == expected


def test_defaults_rounded_up_to_d_fit_every_shape_of_d():
    for devices in range(1, jax.device_count() + 1):  # mesh_shapes refuses more devices than there are
        hidden, batch = view.round_up(view.HIDDEN, devices), view.round_up(view.BATCH, devices)
        assert hidden % devices == 0 and batch % devices == 0 and hidden >= view.HIDDEN and batch >= view.BATCH
        assert len(mesh_2d.mesh_shapes(devices, hidden)) == sum(devices % m == 0 for m in range(1, devices + 1))
    assert [d for d in range(1, 13) if view.two_axes_possible(d)] == [4, 6, 8, 9, 10, 12]


def test_a_shape_travels_in_a_link_as_data_x_model():
    assert view.shape_id(4, 2) == "4x2" and view.parse_shape("4x2") == (4, 2)
    with pytest.raises(view.LabInputError):
        view.parse_shape("4×2")


def _run(data, model, throughput, sent, operands):
    """A shape of a sweep as the lab reads it: its throughput, bytes per step and one collective per step
    carrying `operands` arrays (0: none)."""
    rows = (mesh_2d.CollectiveRow("all-reduce", ("f32[8]",) * operands, sent, 1.0, 2, 1, "data"),) if operands else ()
    result = types.SimpleNamespace(steady_throughput=throughput, steady_step_time_s=1 / throughput,
                                   final_loss=0.5, footprint=types.SimpleNamespace(
                                       comm_bytes_per_step=sent, param_bytes_per_device=100))
    return types.SimpleNamespace(data=data, model=model, result=result, collectives=rows)


def _sweep(*runs, simulated=True):
    return types.SimpleNamespace(runs=runs, simulated=simulated, cores=2, config=types.SimpleNamespace(devices=8))


def test_the_verdict_names_what_sets_the_winner_apart_from_the_slowest():
    # D = 8 as it ran here: 1x8 and 8x1 each run one all-reduce a step, but 8x1's carries w1, b1, w2, b2 and
    # the loss, five rendezvous on XLA:CPU, against one: that, not the count of collectives, sets them apart.
    runs = [_run(8, 1, 100.0, 2247.0, 5), _run(4, 2, 150.0, 2000.0, 5), _run(1, 8, 300.0, 1792.0, 1)]
    v = view.verdict(_sweep(*runs))
    assert (v.winner, v.slowest, v.runner_up, v.shapes) == ("1x8", "8x1", "4x2", 3)
    assert v.counts == {"rendezvous": (1, 5), "bytes": (1792, 2247), "collectives": (1, 1)}
    assert v.separates == ("rendezvous", "bytes") and v.simulated and not v.close
    assert v.speedup == pytest.approx(3.0) and v.lead == pytest.approx(1.0)
    # On real devices a tuple all-reduce is one meeting: only the bytes differ.
    real = view.verdict(_sweep(*runs, simulated=False))
    assert real.counts["rendezvous"] == (1, 1) and real.separates == ("bytes",)


def test_a_verdict_that_no_count_explains_or_a_close_race_says_so():
    v = view.verdict(_sweep(_run(8, 1, 100.0, 300.0, 1), _run(2, 4, 103.0, 900.0, 2)))
    assert v.separates == () and v.close and v.lead == pytest.approx(0.03)
