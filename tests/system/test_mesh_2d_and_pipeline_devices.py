"""The 2-D mesh lab and the pipeline lab on a runtime of one device and of three, each count in a child process
of its own (PMAP_LAB_DEVICES) that opens both labs, the 2-D mesh lab first.

- The 2-D mesh lab opens in English and 中文 with no exception and no error box, says what it needs at
  D = 1, trains the one shape there is, and at D = 3 measures both shapes after a prediction.
- The pipeline lab opens on its defaults in English and 中文 with no exception and no error box, says at
  D = 1 what a pipeline needs, and at D = 1 and 3 what a data axis beside it needs (D ≥ 2P, no button to train
  one), draws the schedule of P = D stages, and measures after a prediction — the peak bytes of both schedules
  always, the step time only where this machine has a core for each stage."""

import pytest


@pytest.fixture(scope="module")
def both():
    from harness.processes import json_at_device_counts

    return json_at_device_counts(["-m", "tests.children.mesh_2d_and_pipeline_pages"], (1, 3), timeout=600)


@pytest.fixture(scope="module")
def mesh_runs(both):
    return {devices: labs["mesh_2d"] for devices, labs in both.items()}


@pytest.fixture(scope="module")
def pipeline_runs(both):
    return {devices: labs["pipeline"] for devices, labs in both.items()}


def test_one_device_renders_says_what_it_needs_and_trains(mesh_runs):
    one = mesh_runs[1]
    assert one["devices"] == 1 and not one["problems"], one["problems"]
    assert "the only mesh is 1 × 1" in one["said"]["en"] and "唯一的网格是 1 × 1" in one["said"]["zh"]
    assert one["trained"] == ["1", "1"] and one["sweep_disabled"]


def test_three_devices_train_and_measure_both_shapes(mesh_runs):
    three = mesh_runs[3]
    assert three["devices"] == 3 and not three["problems"], three["problems"]
    assert "only the shapes 3x1, 1x3" in three["said"]["en"]
    assert three["trained"] == ["1", "3"]
    assert three["swept"] == ["3x1", "1x3"] and len(three["verdict"]) == 1
    # The regime is read from the compute and communication the prediction table shows on the same screen.
    (regime,), (compute_us, comm_us) = three["regime"], three["dp"]
    expected = "compute-bound" if compute_us > comm_us else "communication-bound"
    assert f"its communication takes {comm_us:.3g} µs — {expected}." in regime


def test_one_device_says_what_it_needs_and_measures_one_stage(pipeline_runs):
    one = pipeline_runs[1]
    assert one["devices"] == 1 and not one["problems"], one["problems"]
    assert "one stage holds every layer" in one["said"]["en"] and "一个阶段持有全部层" in one["said"]["zh"]
    assert "a second pipeline of P = 1 stage(s) needs 2 devices, and D is 1" in one["said"]["en"]
    assert not one["data_button"]
    assert one["stages"] == 1 and one["cells"] == 2 * 8  # 2(M + P − 1) slots, M = 8
    assert all(peak > 0 for peak in one["peaks"]) and one["timed"] == [1, 2, 4, 8]


def test_three_devices_run_three_stages_and_time_them_only_with_three_cores(pipeline_runs):
    three = pipeline_runs[3]
    assert three["devices"] == 3 and not three["problems"], three["problems"]
    assert three["stages"] == 3 and three["cells"] == 2 * (8 + 2)
    assert "a second pipeline of P = 3 stage(s) needs 6 devices, and D is 3" in three["said"]["en"]
    assert "第二条 P = 3 个阶段的流水线需要 6 台设备，而 D 为 3" in three["said"]["zh"]
    assert not three["data_button"]
    assert all(peak > 0 for peak in three["peaks"])
    if three["cores"] < 3:
        assert three["timed"] is None
        assert f"share {three['cores']} CPU core(s), fewer than the 3 stages" in three["said"]["en"]
    else:
        assert three["timed"] == [1, 2, 4, 8]
