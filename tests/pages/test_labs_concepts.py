"""The four concept labs, driven through the app: defaults, a changed setting, bad input, 中文."""

import re

import pytest

from tests.apptest_support import assert_clean, open_lab


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


# --- parallel basics ----------------------------------------------------------


def test_basics_default_shows_equal_means():
    at = open_lab("basics")
    assert_clean(at)
    assert metric(at, "b per device") == "3"
    assert metric(at, "pmap + psum mean") == metric(at, "single-device mean")
    assert at.success and "equals the single-device mean" in at.success[0].value
    assert at.query_params["batch"] == "12" and at.query_params["policy"] == "error"


def test_basics_changing_devices_reshards():
    at = open_lab("basics")
    at.slider(key="basics.devices").set_value(6).run()
    assert_clean(at)
    assert metric(at, "b per device") == "2"
    assert metric(at, "sharded shape") == "(6, 2, 4)"
    assert at.query_params["devices"] == "6"


def test_basics_indivisible_batch_under_error_policy_is_explained():
    at = open_lab("basics", batch=13, devices=4, policy="error")
    assert not at.exception
    assert "does not split evenly" in at.error[0].value and "12, 16" in at.error[0].value


def test_basics_pad_policy_masks_the_tail():
    at = open_lab("basics", batch=13, devices=4, policy="pad")
    assert_clean(at)
    assert metric(at, "padded") == "3"
    assert metric(at, "pmap + psum mean") == metric(at, "single-device mean")


def test_basics_too_many_devices_in_the_link_is_refused():
    at = open_lab("basics", devices=99)
    assert not at.exception
    assert re.search(r"`\s*99\s*`", at.warning[0].value)  # shown as code, however padded
    assert metric(at, "b per device") == "3"  # default D = 4


def test_basics_in_chinese():
    at = open_lab("basics", lang="zh")
    assert_clean(at)
    assert at.title[0].value == "并行基础"
    assert "并行平均值等于单设备平均值" in at.success[0].value


# --- device mapping -----------------------------------------------------------


def test_device_mapping_default_reads_shards_back():
    at = open_lab("device_mapping")
    assert_clean(at)
    assert metric(at, "jax.local_device_count()") == "8"
    assert metric(at, "input on the host") == "(4, 4)" and metric(at, "output") == "(4, 4)"
    assert "slice d of the output is on the d-th device" in at.success[0].value
    assert len(at.dataframe[0].value) == 8  # one row per device


def test_device_mapping_changing_slice_size():
    at = open_lab("device_mapping")
    at.slider(key="device_mapping.per_device").set_value(7).run()
    assert_clean(at)
    assert metric(at, "what f sees on each device") == "(7,)"
    owners = at.dataframe[1].value
    assert list(owners.iloc[:, 1]) == ["[0:1, :]", "[1:2, :]", "[2:3, :]", "[3:4, :]"]
    assert owners.iloc[3, 2].startswith("3021")  # 21 + 1000 x device position 3


def test_device_mapping_bad_size_in_link_is_refused():
    at = open_lab("device_mapping", per_device=-3)
    assert not at.exception
    assert re.search(r"`\s*-3\s*`", at.warning[0].value)  # shown as code, however padded


def test_device_mapping_in_chinese():
    at = open_lab("device_mapping", lang="zh")
    assert_clean(at)
    assert at.title[0].value == "设备映射"


# --- collectives --------------------------------------------------------------


def test_collectives_default_is_checked_against_numpy():
    at = open_lab("collectives")
    assert_clean(at)
    assert "Matches NumPy on all 4 devices" in at.success[0].value


@pytest.mark.parametrize("op, devices", [("psum", 1), ("all_gather_tiled", 2), ("all_to_all", 8),
                                         ("ppermute", 5), ("psum_scatter", 4)])
def test_collectives_numpy_check_passes(op, devices):
    size = devices if op == "psum_scatter" else 8 if devices != 5 else 10
    at = open_lab("collectives", op=op, devices=devices, size=size)
    assert_clean(at)
    assert f"Matches NumPy on all {devices} devices" in at.success[0].value


def test_collectives_changing_the_op():
    at = open_lab("collectives")
    at.selectbox(key="collectives.op").set_value("all_gather").run()
    assert_clean(at)
    assert any("(8,) → output shape (4, 8)" in c.value for c in at.caption)
    assert at.query_params["op"] == "all_gather"


def test_collectives_indivisible_size_is_explained():
    at = open_lab("collectives", op="psum_scatter_tiled", devices=3, size=8)
    assert not at.exception
    assert "must be a multiple of 3" in at.error[0].value


@pytest.mark.parametrize(("op", "devices", "size"), [("psum_scatter_tiled", 3, 9), ("all_to_all", 5, 10),
                                                     ("all_to_all", 7, 7), ("all_to_all", 2, 8), ("pmean", 3, 8)])
def test_collectives_a_link_without_a_size_opens_on_one_the_op_accepts(op, devices, size):
    at = open_lab("collectives", op=op, devices=devices)
    assert_clean(at)
    assert at.query_params["size"] == str(size)
    assert f"Matches NumPy on all {devices} devices" in at.success[0].value


def test_collectives_untiled_psum_scatter_shows_its_requirement_and_jax_error():
    at = open_lab("collectives", op="psum_scatter", devices=4, size=8)
    assert_clean(at)
    assert "n = 8 on 4 devices does not" in at.warning[0].value
    assert any("scatter dimension size 8 must match shard count 4" in c.value for c in at.code)
    assert not at.success


def test_collectives_in_chinese():
    at = open_lab("collectives", lang="zh", op="pmax")
    assert_clean(at)
    assert "与 NumPy 一致" in at.success[0].value


# --- manual parallelism -------------------------------------------------------


def manual(**query):
    return open_lab("manual_parallelism", features=8, hidden=8, repeats=2, **query)


def press_measure(at):
    return at.button(key="manual_parallelism.measure").click().run()


def test_manual_parallelism_measures_every_device_count_on_request_and_shares_it():
    at = manual()
    assert_clean(at)
    assert len(at.dataframe) == 1 and any("Press **Measure**" in i.value for i in at.info)  # nothing timed yet
    press_measure(at)
    assert_clean(at)
    shapes, timings = at.dataframe[0].value, at.dataframe[1].value
    assert list(shapes.iloc[:, 4]) == ["(1, 840, 8)", "(2, 420, 8)", "(3, 280, 8)", "(4, 210, 8)"]
    assert list(timings.iloc[:, 0]) == [1, 2, 3, 4]
    assert (timings.iloc[:, 1] > 0).all()
    assert "simulated" in at.info[0].value  # the hardware note beside the figure
    other = manual()  # another visitor, same settings: the same rows at once
    assert_clean(other)
    assert other.dataframe[1].value.equals(timings)


def test_manual_parallelism_changing_max_devices_waits_for_measure():
    at = press_measure(manual(max_devices=2))
    assert list(at.dataframe[1].value.iloc[:, 0]) == [1, 2]
    at.slider(key="manual_parallelism.max_devices").set_value(3).run()
    assert_clean(at)
    assert len(at.dataframe) == 1 and "D = 1 … 3" in at.info[0].value  # shapes shown, timing waits
    at.button(key="manual_parallelism.measure").click().run()
    assert_clean(at)
    assert list(at.dataframe[1].value.iloc[:, 0]) == [1, 2, 3]
    at.button(key="manual_parallelism.measure").click().run()  # the same settings again: a new measurement
    assert_clean(at)
    assert len(at.dataframe[1].value) == 3


def test_manual_parallelism_refuses_sizes_past_the_limit():
    at = manual(max_devices=1, batch=10**6)
    assert not at.exception
    assert re.search(r"`\s*1000000\s*`", at.warning[0].value)  # shown as code, however padded


def test_manual_parallelism_in_chinese():
    at = manual(lang="zh", max_devices=1)
    assert_clean(at)
    assert at.title[0].value == "手动并行"
