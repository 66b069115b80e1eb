"""The 2-D mesh lab on a runtime of one device and of three, each in a child process of its own
(PMAP_LAB_DEVICES): it opens in English and 中文 with no exception and no error box, says what it needs at
D = 1, trains the one shape there is, and at D = 3 measures both shapes after a prediction."""

import pytest


@pytest.fixture(scope="module")
def runs():
    from harness.processes import json_at_device_counts

    return json_at_device_counts(["-m", "tests.children.mesh_2d_page"], (1, 3), timeout=600)


def test_one_device_renders_says_what_it_needs_and_trains(runs):
    one = runs[1]
    assert one["devices"] == 1 and not one["problems"], one["problems"]
    assert "the only mesh is 1 × 1" in one["said"]["en"] and "唯一的网格是 1 × 1" in one["said"]["zh"]
    assert one["trained"] == ["1", "1"] and one["sweep_disabled"]


def test_three_devices_train_and_measure_both_shapes(runs):
    three = runs[3]
    assert three["devices"] == 3 and not three["problems"], three["problems"]
    assert "only the shapes 3x1, 1x3" in three["said"]["en"]
    assert three["trained"] == ["1", "3"]
    assert three["swept"] == ["3x1", "1x3"] and len(three["verdict"]) == 1
    # The regime is read from the compute and communication the prediction table shows on the same screen.
    (regime,), (compute_us, comm_us) = three["regime"], three["dp"]
    expected = "compute-bound" if compute_us > comm_us else "communication-bound"
    assert f"its communication takes {comm_us:.3g} µs — {expected}." in regime
