"""The demo program: corrected steps match NumPy, training reaches y = 3x + 1, the tutorial's lines fail as shown."""

import functools

import numpy as np
import pytest

from pmap_core import LabInputError
from pmap_core.practice import demo
from pmap_core.practice.pitfalls import Captured, capture


@functools.cache
def run(devices, per_device=1, steps=300, learning_rate=0.5):
    return demo.run_demo(devices, per_device, steps, learning_rate)


def numpy_gradient_descent(x, steps, learning_rate):
    """The same full-batch gradient descent on one device, in NumPy."""
    y = 3 * x + 1
    w = b = 0.0
    for _ in range(steps):
        error = w * x + b - y
        w, b = w - learning_rate * np.mean(2 * error * x), b - learning_rate * np.mean(2 * error)
    return w, b


@pytest.mark.parametrize("devices, per_device", [(8, 1), (4, 2)])
def test_steps_have_the_shapes_and_values_shown(devices, per_device):
    steps = run(devices, per_device).steps
    batch = np.arange(devices * per_device, dtype=np.float32).reshape(devices, per_device)
    assert steps["devices"]["local_device_count"] == 8 and len(steps["devices"]["using"]) == devices
    assert steps["map"]["output_shape"] == (devices, per_device)
    np.testing.assert_allclose(steps["map"]["output"], batch * 2 + 1)
    np.testing.assert_allclose(steps["pmean"]["output"], np.broadcast_to(batch.mean(axis=0), batch.shape))
    assert steps["all_gather"]["output_shape"] == (devices, devices * per_device)
    np.testing.assert_allclose(steps["all_gather"]["output"], np.tile(batch.ravel(), (devices, 1)))


@pytest.mark.parametrize("devices, per_device", [(8, 1), (4, 2), (1, 2)])
def test_training_reaches_w_3_and_b_1_like_single_device_numpy(devices, per_device):
    trained = run(devices, per_device).steps["train"]
    assert trained["w"] == pytest.approx(3.0, abs=1e-3) and trained["b"] == pytest.approx(1.0, abs=1e-3)
    batch = devices * per_device
    w, b = numpy_gradient_descent(np.arange(batch) / batch, 300, 0.5)
    assert trained["w"] == pytest.approx(w, abs=1e-4) and trained["b"] == pytest.approx(b, abs=1e-4)
    assert trained["losses"][-1] < 1e-6 < trained["losses"][0]


def test_short_training_matches_numpy_step_for_step():
    trained = demo.run_demo(4, 2, 5, 0.1).steps["train"]
    w, b = numpy_gradient_descent(np.arange(8) / 8, 5, 0.1)
    assert trained["w"] == pytest.approx(w, rel=1e-5) and trained["b"] == pytest.approx(b, rel=1e-5)


def test_tutorial_lines_fail_on_current_jax():
    broken = run(4, 2).broken
    assert broken["batch"].error_type == "ValueError"  # (8,) on 4 devices
    assert "squeeze" in broken["doubled_batch"].error_message
    assert broken["all_gather"].error_type == "ValueError" and "out of bounds" in broken["all_gather"].error_message
    assert broken["params"].error_type == "ValueError"


def test_the_tutorial_batch_runs_on_eight_of_eight_devices():
    broken = run(8).broken
    assert not broken["batch"].raised
    np.testing.assert_allclose(broken["batch"].values["output"], np.arange(8.0) * 2 + 1)
    assert broken["doubled_batch"].error_type == "ValueError"  # (16,) on 8 devices


def test_compiled_steps_are_built_once_per_device_count():
    assert demo._train_step(4) is demo._train_step(4)
    assert demo._compiled(demo.average, 4) is demo._compiled(demo.average, 4)


@pytest.mark.parametrize("args, code", [
    ((1, 1, 10, 0.5), "demo_one_sample"), ((9, 1, 10, 0.5), "too_many_devices"),
    ((2, 1, 0, 0.5), "out_of_range"), ((2, 1, 10, float("nan")), "not_a_number"),
])
def test_bad_inputs_are_refused_with_a_code(args, code):
    with pytest.raises(LabInputError) as error:
        demo.run_demo(*args)
    assert error.value.code == code


def test_fitting_w_alone_as_the_tutorial_does_misses_3():
    trained = run(8).steps["train"]
    x = np.arange(8) / 8
    least_squares_w = np.sum(x * (3 * x + 1)) / np.sum(x * x)  # best w with b = 0
    assert trained["w_fitted_alone"] == pytest.approx(least_squares_w, abs=1e-3)
    assert abs(trained["w_fitted_alone"] - 3) > 1


def test_the_stated_learning_rate_limit_separates_converging_from_diverging():
    limit = run(4, 2).steps["train"]["largest_stable_lr"]
    below = demo.run_demo(4, 2, 300, 0.95 * limit).steps["train"]["losses"]
    above = demo.run_demo(4, 2, 300, min(1.05 * limit, 1.5)).steps["train"]["losses"]
    assert below[-1] < below[0] and not above[-1] < above[0]


def test_broken_batch_note_is_read_from_what_ran_at_each_device_count_here():
    for devices in range(1, 9):
        captured = capture(functools.partial(demo.tutorial_batch, devices))
        note, values = demo.broken_note("batch", devices, captured)
        if devices < demo.TUTORIAL_ROWS:
            assert captured.raised and note == "broken.batch.why"
        else:
            assert captured.values["ran_on_devices"] == demo.TUTORIAL_ROWS
            assert note == "broken.batch.ran_all" and values["used"] == demo.TUTORIAL_ROWS


def _as_pmap_would_run(devices, rows):
    """What pmap does with a flat batch of `rows` on `devices` devices: runs on `rows` of them, or fails."""
    if rows > devices:
        return Captured(None, "ValueError", "cannot select an axis to squeeze out")
    return Captured({"output": np.arange(rows) * 2.0 + 1, "ran_on_devices": rows})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_broken_batch_sentence_states_what_ran_for_every_device_count_1_to_64(lang):
    import re

    from labs.texts import table as text_table

    TEXTS = text_table("demo")

    for devices in range(1, 65):
        note, values = demo.broken_note("batch", devices, _as_pmap_would_run(devices, demo.TUTORIAL_ROWS))
        sentence = TEXTS[note][lang].format(**values)
        numbers = [int(n) for n in re.findall(r"\d+", sentence)]
        assert devices in numbers, sentence
        if devices < 8:
            assert note == "broken.batch.why"
        elif devices == 8:
            assert note == "broken.batch.ran_all" and "exactly" in TEXTS[note]["en"]
        else:  # ran on 8 of the chosen devices, never "exactly 8 devices here"
            assert note == "broken.batch.ran_fewer" and values == {"devices": devices, "rows": 8, "used": 8}
            assert (f"8 of the {devices} devices" if lang == "en" else f"{devices} 台设备中的 8 台") in sentence
        for name in ("doubled_batch", "all_gather", "params"):  # every note has the values its text needs
            for outcome in (Captured(None, "ValueError", "x"), Captured({"output": 0})):
                note, values = demo.broken_note(name, devices, outcome)
                TEXTS[note][lang].format(**values)
