"""Sheet 13 (expert parallelism) against references worked out apart from the functions it names: the slots by
⌈c·T·k/E⌉, the drops between none and all, the all-to-all's (D − 1)/D² of the array, the step's all-to-alls by
4L · (Y − 1)/Y of the dispatched buffer, the critical batch by 240 · E/k. The two steps that run on devices are checked
bound to D = 1, 2, 3, 5 and 8 (d = 1, 2, 2, 4 and 4)."""

import math

import pytest

from pmap_core.practice import worksheets

SHEET = next(sheet for sheet in worksheets.load_sheets().sheets if sheet.id == "13_expert_parallel")


@pytest.fixture(scope="module")
def answers():
    return {step.id: worksheets.compute_answer(step, None) for step in SHEET.at(1).steps}


def test_the_sheet_has_at_least_five_steps_on_the_lab():
    assert len(SHEET.steps) >= 5 and {step.lab for step in SHEET.steps} == {"expert_parallel"}
    assert [step.id for step in SHEET.steps if step.devices is not None] == ["all_to_all_bytes", "step_bytes"]


def test_the_steps_that_need_no_more_than_one_device(answers):
    assert answers["slots"] == math.ceil(1.25 * 16 * 2 / 8) == 5
    assert 0.05 < answers["dropped_c1"] < 0.95
    assert answers["critical_batch"] == 240 * 8 / 2 == 960


@pytest.mark.parametrize(("runtime", "d"), [(1, 1), (2, 2), (3, 2), (5, 4), (8, 4)])
def test_the_steps_that_run_on_devices_at_each_d(runtime, d):
    steps = {step.id: step for step in SHEET.at(runtime).steps}
    for step_id in ("all_to_all_bytes", "step_bytes"):
        assert steps[step_id].values["devices"] == steps[step_id].settings["devices"] == d
    assert worksheets.compute_answer(steps["all_to_all_bytes"]) == pytest.approx(4096 * 4 * (d - 1) / d ** 2)
    buffer = (8 // d) * 8 * 5 * 16 * 4
    assert worksheets.compute_answer(steps["step_bytes"]) == pytest.approx(4 * 2 * (d - 1) / d * buffer)
    for step in steps.values():
        assert worksheets.is_correct(step, worksheets.compute_answer(step), worksheets.compute_answer(step))
