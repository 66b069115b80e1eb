"""What the Class page reads and writes, without a page: a withheld sheet leaves nothing of its answers,
one name's flood of runs leaves every other student in view, a teacher's form saves only over the state
it read, one outlier stays off the dot plot's scale, the CSV leaves plain numbers plain, and the teacher
key and its limits."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from harness.processes import new_tracking_store
from pmap_core.cli import entry
from pmap_core.tracking import class_controls, classroom, predictions
from pmap_core.validation import TEACHER_KEY_ENV, Backoff, Budget, LabInputError, check_teacher_key

CODE = "page-data"


def checked(uri, student, sheet, step, prediction, answer, at_ms):
    tags = dict([predictions.prediction_tag(step, 1, prediction, answer, prediction == answer, at_ms)])
    return classroom.record_exercise(sheet, {step: prediction == answer}, classroom.class_tags(student, CODE),
                                     uri=uri, attempts=tags)


def test_a_withheld_sheet_leaves_nothing_of_its_answers(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    checked(uri, "Ada", "1_shards", "pad_per_device", 2.0, 3.0, 1_000)
    checked(uri, "Ada", "2_collectives", "psum_value", 6.0, 6.0, 2_000)
    record = classroom.read_class(CODE, uri)
    seen = classroom.without_sheets(record, {"1_shards"})
    assert set(record.runs["sheet"]) == set(record.predictions["sheet"]) == {"1_shards", "2_collectives"}
    assert set(seen.runs["sheet"]) == set(seen.predictions["sheet"]) == {"2_collectives"}
    every = classroom.to_csv(predictions.with_predictions(seen.runs, seen.predictions)).decode()
    assert "1_shards" not in every and "pad_per_device" not in every and "2_collectives" in every
    assert list(classroom.completion(seen.runs).columns) == ["student", "2_collectives/psum_value"]
    assert classroom.without_sheets(record, frozenset()) is record


def test_one_names_flood_of_runs_leaves_every_other_student_in_view(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    for name in ("Ada", "Grace"):
        checked(uri, name, "1_shards", "pad_per_device", 3.0, 3.0, 1_000)
    for i in range(8):  # newer than theirs: a whole-class cap of 6 would show only these
        checked(uri, "Junk", f"s{i}", "x", 1.0, 3.0, 2_000 + i)
    record = classroom.read_class(CODE, uri, limit=6, per_student=3)
    assert sorted(record.runs.drop_duplicates("run_id")["student"]) == ["Ada", "Grace", "Junk", "Junk", "Junk"]
    assert record.cut_students == ("Junk",) and record.capped == ()
    assert classroom.read_class(CODE, uri, limit=2, per_student=3).capped == ("exercise",)


def test_a_teachers_form_saves_only_over_the_state_it_read(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    read = class_controls.read_controls(CODE, uri).of_sheet("1_shards")
    assert read == (False, None)
    assert class_controls.save(CODE, "1_shards", read, True, "pad_count", uri)
    assert class_controls.read_controls(CODE, uri).of_sheet("1_shards") == (True, "pad_count")
    # A tab drawn before that change saves nothing over it, touched or not.
    assert not class_controls.save(CODE, "1_shards", read, False, None, uri)
    assert class_controls.read_controls(CODE, uri).of_sheet("1_shards") == (True, "pad_count")
    # Nor does a form read from another class: "other-class" still has nothing set.
    assert not class_controls.save("other-class", "1_shards", (True, "pad_count"), True, "pad_count", uri)
    assert class_controls.read_controls("other-class", uri) == class_controls.NO_CONTROLS


@pytest.mark.parametrize("outliers", [[1e12], [1.7e308, -1.7e308], [float("inf")]])
def test_one_outlier_stays_off_the_dot_plots_scale(outliers):
    values = pd.Series([2.0, 3.0, 3.0, 4.0, 3.0, *outliers])
    scale = predictions.plot_scale(values, pd.Series([3.0]))
    assert (scale.low, scale.high) == (2.0, 4.0)
    assert scale.below + scale.above == len(outliers)
    assert [scale.where(v) for v in values] == [0] * 5 + [1 if v > 0 else -1 for v in outliers]


def test_the_dot_plots_scale_keeps_the_answer_and_a_spread_class():
    scale = predictions.plot_scale(pd.Series([1_000.0, 4_000.0, 8_000.0, 32_000.0]), pd.Series([64_000.0]))
    assert (scale.low, scale.high, scale.below, scale.above) == (1_000.0, 64_000.0, 0, 0)
    agreed = predictions.plot_scale(pd.Series([5.0, 5.0]), pd.Series([5.0]))
    assert agreed.low < 5.0 < agreed.high  # one value: a range around it, never a zero-width axis


def test_the_csv_leaves_plain_numbers_plain_and_guards_formulas():
    frame = pd.DataFrame({"prediction": ["-5", "+2.5e3", "-0.75", "-inf", "-5+A1", "=1+2", "@SUM(A1)", "1,5"]})
    back = pd.read_csv(io.BytesIO(classroom.to_csv(frame)), dtype=str, keep_default_na=False)["prediction"]
    assert back.tolist() == ["-5", "+2.5e3", "-0.75", "'-inf", "'-5+A1", "'=1+2", "'@SUM(A1)", "1,5"]
    assert classroom.csv_safe("-\uff15") == "'-\uff15"  # a full-width digit is no plain number


def test_the_teacher_key_is_trimmed_and_a_short_one_refused(monkeypatch):
    assert check_teacher_key("  a pasted key of twenty-four \n") == "a pasted key of twenty-four"
    assert check_teacher_key("") == "" and check_teacher_key("   ") == ""
    for bad in ("short key", "k" * 19, "k" * 201):
        with pytest.raises(LabInputError, match=f"has {len(bad)} characters"):
            check_teacher_key(bad)
    monkeypatch.setenv(TEACHER_KEY_ENV, "  too short  ")
    assert entry.main(["app"]) == 2  # refused before the server starts


def test_wrong_keys_cost_a_growing_wait_per_client_and_writes_a_budget():
    now = [0.0]
    tries = Backoff(free=3, base_s=2.0, most_s=60.0, clock=lambda: now[0])
    assert [tries.failed("a") for _ in range(2)] == [1, 2] and tries.wait_s("a") == 0.0
    tries.failed("a")
    assert tries.wait_s("a") == 2.0 and tries.wait_s("b") == 0.0  # another client is not slowed
    tries.failed("a")
    assert tries.wait_s("a") == 4.0
    for _ in range(10):
        tries.failed("a")
    assert tries.wait_s("a") == 60.0  # at most most_s
    now[0] += 60.0
    assert tries.wait_s("a") == 0.0
    tries.succeeded("a")
    tries.failed("a")
    assert tries.wait_s("a") == 0.0  # a right key starts the count again

    budget = Budget(burst=3, every_s=10.0, clock=lambda: now[0])
    assert [budget.take() for _ in range(4)] == [True, True, True, False]
    now[0] += 10.0
    assert [budget.take(), budget.take()] == [True, False]
