"""Sheet 10 (pipeline parallelism) at D = 1, 2, 3, 5 and 8, bound inside this one process: the schedule steps
give GPipe's formulas at every D (the table needs no device), the steps on d = min(4, D) stages the bubble
(d − 1)/(M + d − 1) and the compiled peak saving of 1F1B, the activations it does not keep (none at d = 1).
tests/system/test_pages_at_each_device_count.py opens the lab each step links to, at each D."""

import pytest

from pmap_core.practice import worksheets
from pmap_core.train import pipeline
from tests.core.test_worksheet_devices import DEVICE_COUNTS

SHEET = next(sheet for sheet in worksheets.load_sheets().sheets if sheet.id == "10_pipeline")


def answers(devices: int) -> dict[str, object]:
    return {step.id: worksheets.compute_answer(step, None) for step in SHEET.at(devices).steps}


def test_the_sheet_has_at_least_four_steps_on_the_pipeline_lab():
    assert len(SHEET.steps) >= 4
    assert {step.lab for step in SHEET.steps} == {"pipeline"}


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
def test_the_answers_at_each_device_count_are_the_rules(devices):
    got, d, m, rows, hidden = answers(devices), min(4, devices), 8, 12, 32
    assert got["gpipe_bubble"] == pytest.approx(3 / 11)  # (P − 1)/(M + P − 1), P = 4, M = 8 (Huang et al. 2019)
    assert got["one_f_one_b_slots"] == 2 * (m + 4 - 1)
    assert got["one_f_one_b_kept"] == 4  # P − s + 1 on stage s = 1: PipeDream-Flush's warm-up plus one
    assert got["bubble_here"] == pytest.approx((d - 1) / (m + d - 1))
    assert got["peak_saved_here"] == 4 * rows * hidden * (m - min(m, d) if d > 1 else 0)


def test_the_saving_is_what_the_two_compiled_programs_differ_by():
    compared = pipeline.compiled_peaks(stages=2, layers=4, microbatches=6, rows=10, hidden=16)
    assert compared.saved == compared.gpipe - compared.one_f_one_b == compared.stash_saved == 4 * 10 * 16 * (6 - 2)


@pytest.mark.parametrize("devices", [1, 3, 8])
def test_the_saving_explained_is_the_answer_at_each_device_count(devices):
    # The explanation's G and K are the most inputs a stage keeps (the lab's one meaning of "kept"): at one
    # stage none under either schedule, so the formula gives the answer, 0, and not 4 × 12 × 32 × 7.
    step = SHEET.at(devices).step("peak_saved_here")
    d = step.values["devices"]
    gpipe, one = (pipeline.schedule_summary(d, 8, s).kept for s in ("gpipe", "1f1b"))
    said = step.say(step.explain, "en", answer="·")
    assert (gpipe, one) == ((0, 0) if d == 1 else (8, min(8, d)))
    assert "G = 8" in said and "K = min(8, P)" in said and "G = K = 0 and nothing is saved" in said
    assert "8 − min(8, P)" not in said
    assert worksheets.compute_answer(step, None) == 4 * 12 * 32 * (gpipe - one)
    kept = SHEET.at(devices).step("one_f_one_b_kept")
    assert "the first stage keeps none" in kept.say(kept.explain, "en", answer="4")
