"""Predictions as a class records them, read back from a real sqlite MLflow store: every attempt once,
the first marked (the earliest a student made at a step, also across sessions), a retried write never
counted twice, a reset honoured; what a step's first predictions say; and the teacher's controls as
every server of the class reads them."""

from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from harness.processes import new_tracking_store
from pmap_core.tracking import class_controls, classroom, predictions

CODE = "pred-core"


def attempt(uri, student, step, n, prediction, answer, correct, at_ms, run_id=None, sheet="s"):
    tags = dict([predictions.prediction_tag(step, n, prediction, answer, correct, at_ms)])
    return classroom.record_exercise(sheet, {step: correct}, classroom.class_tags(student, CODE), run_id=run_id,
                                     uri=uri, attempts=tags)


def as_rows(frame):
    return sorted(map(tuple, frame[["student", "step", "attempt", "first", "prediction", "answer", "result"]]
                      .values.tolist()))


def test_every_attempt_is_read_back_once_and_the_earliest_is_first(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    ada = attempt(uri, "Ada", "a", 1, 2.0, 3.0, False, 1_000)
    assert attempt(uri, "Ada", "a", 2, 3.0, 3.0, True, 2_000, run_id=ada) == ada
    attempt(uri, "Ada", "a", 2, 3.0, 3.0, True, 2_000, run_id=ada)  # the same write again (a retried call)
    attempt(uri, "Ada", "b", 1, "(4, 2)", "(4, 2)", True, 3_000, run_id=ada)
    # Ada again from a new session (a reloaded page): a new run, whose attempt 1 is later than her first.
    attempt(uri, "Ada", "a", 1, 5.0, 3.0, False, 4_000)
    attempt(uri, "Grace", "a", 1, "true", "false", False, 1_500)
    recorded = classroom.read_class(CODE, uri).predictions
    assert as_rows(recorded) == sorted([
        ("Ada", "a", 1, True, "2", "3", 0.0), ("Ada", "a", 2, False, "3", "3", 1.0),
        ("Ada", "b", 1, True, "(4, 2)", "(4, 2)", 1.0), ("Ada", "a", 1, False, "5", "3", 0.0),
        ("Grace", "a", 1, True, "true", "false", 0.0)])
    assert recorded["start_time"].is_monotonic_increasing
    # The step's result is written in the same call: the exercise rows are what they were.
    assert sorted(classroom.read_class(CODE, uri).runs["result"]) == [0.0, 0.0, 1.0, 1.0]


def test_a_reset_counts_only_what_follows_it(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    run = attempt(uri, "Ada", "a", 1, 2.0, 3.0, False, 1_000)
    attempt(uri, "Ada", "a", 2, 3.0, 3.0, True, 5_000, run_id=run)
    after = classroom.read_class(CODE, uri, since_ms=3_000).predictions
    assert as_rows(after) == [("Ada", "a", 2, True, "3", "3", 1.0)]  # the first after the reset
    assert len(classroom.read_class(CODE, uri).predictions) == 2


def test_tags_the_lab_did_not_write_are_left_out(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    run = attempt(uri, "Ada", "a", 3, 1.5, 2.0, False, 7)
    client = MlflowClient(uri)  # tags written by hand into the student's run, as MLflow's UI or API can
    for key, value in {"prediction.a.1": "not json", "prediction.a.x": "{}", "prediction..1": "{}",
                       "prediction.a.2": '{"prediction": [1], "answer": 3, "correct": true, "time_ms": 5}'}.items():
        client.set_tag(run, key, value)
    recorded = classroom.read_class(CODE, uri).predictions
    assert recorded[["step", "attempt", "prediction"]].values.tolist() == [["a", 3, "1.5"]]


def test_a_steps_summary_counts_first_predictions_only():
    import pandas as pd

    frame = pd.DataFrame({
        "student": ["A", "B", "C", "D", "A"], "sheet": "s", "step": "a", "first": [True, True, True, True, False],
        "prediction": ["4", "2", "4", "3", "3"], "answer": "3", "result": [0.0, 0.0, 0.0, 1.0, 1.0]})
    [summary] = predictions.summaries(frame)
    assert (summary.count, summary.common_wrong, summary.common_wrong_count, summary.answers) == (4, "4", 2, ("3",))
    assert summary.within == pytest.approx(0.25)
    tie = frame.assign(prediction=["5", "2", "4", "3", "3"])
    assert predictions.summaries(tie)[0].common_wrong == "5"  # equal counts: the one predicted first
    assert predictions.summaries(frame.assign(result=1.0))[0].common_wrong is None


def test_controls_are_shared_through_the_store_and_default_to_none(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    assert class_controls.read_controls(CODE, uri) == class_controls.NO_CONTROLS
    assert class_controls.read_controls(CODE, uri).released("1_shards")
    class_controls.set_withheld("PRED-CORE", "1_shards", True, uri)  # the code folded: one class
    class_controls.hold(CODE, "1_shards", "pad_count", uri)
    moment = class_controls.reset(CODE, uri, at_ms=1234)
    read = class_controls.read_controls("ｐｒｅｄ-core", uri)
    assert (read.withheld, dict(read.held), read.reset_ms, moment) == (frozenset({"1_shards"}),
                                                                       {"1_shards": "pad_count"}, 1234, 1234)
    assert not read.released("1_shards") and read.held_step("1_shards") == "pad_count"
    class_controls.set_withheld(CODE, "1_shards", False, uri)
    class_controls.hold(CODE, "1_shards", None, uri)
    read = class_controls.read_controls(CODE, uri)
    assert read.released("1_shards") and read.held_step("1_shards") is None
    # Another class's controls are its own; the experiment's name holds no text a user typed.
    assert class_controls.read_controls("other-class", uri) == class_controls.NO_CONTROLS
    names = [e.name for e in MlflowClient(uri).search_experiments()]
    assert class_controls.experiment_name(CODE) in names and not [n for n in names if CODE in n]


def test_a_record_made_after_seeing_the_answer_is_marked_and_never_a_first(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    tags = dict([predictions.prediction_tag("a", 1, 3.0, 3.0, True, 1_000, after_answer=True)])
    run = classroom.record_exercise("s", {"a": True}, classroom.class_tags("Ada", CODE), uri=uri, attempts=tags)
    attempt(uri, "Ada", "a", 2, 3.0, 3.0, True, 2_000, run_id=run)  # written as before: no mark
    recorded = classroom.read_class(CODE, uri).predictions
    assert recorded[["attempt", "first", "after_answer", "result"]].values.tolist() == [[1, False, True, 1.0],
                                                                                    [2, False, False, 1.0]]
    assert predictions.summaries(recorded) == []  # no first prediction to summarise


def browser_attempt(uri, student, browser, n, prediction, at_ms, step="a", sheet="s"):
    tags = dict([predictions.prediction_tag(step, n, prediction, 3.0, prediction == 3.0, at_ms)])
    return classroom.record_exercise(sheet, {step: prediction == 3.0},
                                     {**classroom.class_tags(student, CODE), classroom.BROWSER_TAG: browser},
                                     uri=uri, attempts=tags)


def test_a_name_two_browsers_use_at_once_is_numbered_flagged_and_never_merges_two_firsts(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    browser_attempt(uri, "Bob", "eve", 1, 2.0, 1_000)  # Eve predicts first under Bob's name
    browser_attempt(uri, "Bob", "bob", 1, 3.0, 2_000)  # then Bob himself, while Eve is still at it
    browser_attempt(uri, "Bo\u0185", "mallory", 1, 5.0, 3_000)  # a name drawn like his: one name, a third browser
    browser_attempt(uri, "Bob", "eve", 2, 3.0, 4_000)
    recorded = classroom.read_class(CODE, uri).predictions
    assert recorded[["student", "browser", "attempt", "first", "at_once", "prediction"]].values.tolist() == [
        ["Bob", 1, 1, True, True, "2"], ["Bob", 2, 1, True, True, "3"], ["Bo\u0185", 3, 1, True, True, "5"],
        ["Bob", 1, 2, False, True, "3"]]
    assert predictions.browsers_per_name(recorded) == {"Bob": 2, "Bo\u0185": 3}
    assert predictions.names_at_once(recorded) == {"Bob", "Bo\u0185"}
    assert classroom.browsers_at_once(CODE, "Bob", uri) == {"eve", "bob", "mallory"}
    assert classroom.browsers_at_once(CODE, "\u0412ob", uri) == {"eve", "bob", "mallory"}  # drawn alike too
    assert classroom.browsers_at_once(CODE, "Grace", uri) == set()
    notes = classroom.name_notes(recorded["student"], predictions.browsers_per_name(recorded),
                                 predictions.names_at_once(recorded))
    assert notes["Bob"].browsers == 2 and notes["Bob"].at_once and notes["Bo\u0185"].lookalike


def test_a_student_who_goes_on_in_another_browser_is_never_at_once(tmp_path):
    """Each of three students predicts two steps in one browser, then goes on in a second one (a second
    device, a private window): at the next step, at a step of another sheet, or again at a step the first
    browser did. Their names are recorded from 2 browsers, and none is used at once."""
    uri = new_tracking_store(tmp_path / "mlflow.db")
    for i, name in enumerate(("Ada", "Grace", "Alan")):
        start = 10_000 * i
        browser_attempt(uri, name, f"{name}-laptop", 1, 2.0, start + 1_000, step="a")
        browser_attempt(uri, name, f"{name}-laptop", 1, 3.0, start + 2_000, step="b")
        second = {"Ada": ("c", "s"), "Grace": ("q", "interview"), "Alan": ("a", "s")}[name]
        browser_attempt(uri, name, f"{name}-phone", 1, 3.0, start + 3_000, step=second[0], sheet=second[1])
    recorded = classroom.read_class(CODE, uri).predictions
    assert not recorded["at_once"].any() and predictions.names_at_once(recorded) == set()
    assert predictions.browsers_per_name(recorded) == {"Ada": 2, "Grace": 2, "Alan": 2}
    assert classroom.browsers_at_once(CODE, "Ada", uri) == set()
    notes = classroom.name_notes(recorded["student"], predictions.browsers_per_name(recorded),
                                 predictions.names_at_once(recorded))
    assert {name: (note.browsers, note.at_once) for name, note in notes.items()} == {
        "Ada": (2, False), "Grace": (2, False), "Alan": (2, False)}
    # Alan's second browser predicted step a again: two first predictions under one name, shown as such.
    assert predictions.bursts(recorded) == [predictions.Burst("s", "a", ("Alan",), 2, 2.0)]


def test_first_predictions_from_several_browsers_under_names_drawn_alike_are_a_burst(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    for i, name in enumerate(("Ada", "\u0410da", "Ad\u0430", "Ada")):  # one person, four private windows
        browser_attempt(uri, name, f"window-{i}", 1, float(i), 1_000 + 500 * i)
    browser_attempt(uri, "Grace", "grace", 1, 3.0, 1_200)
    browser_attempt(uri, "Ada", "window-0", 2, 3.0, 9_000)  # a later attempt is no first prediction
    recorded = classroom.read_class(CODE, uri).predictions
    assert predictions.bursts(recorded, same_name=classroom.skeleton) == [
        predictions.Burst("s", "a", ("Ada", "\u0410da", "Ad\u0430"), 4, 1.5)]
    assert predictions.bursts(recorded) == [predictions.Burst("s", "a", ("Ada",), 2, 1.5)]  # one name alone
    assert predictions.bursts(recorded[recorded["student"] == "Grace"]) == []
    assert predictions.bursts(recorded.iloc[0:0]) == []


def test_the_sheets_any_class_withholds_are_read_from_the_store(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    assert class_controls.withheld_anywhere(uri) == frozenset()
    class_controls.set_withheld("class-a", "1_shards", True, uri)
    class_controls.set_withheld("class-b", "2_collectives", True, uri)
    class_controls.set_withheld("class-b", "3_compiled", False, uri)
    class_controls.hold("class-c", "4_scaling", "fastest_d", uri)
    assert class_controls.withheld_anywhere(uri) == {"1_shards", "2_collectives"}
    class_controls.set_withheld("class-a", "1_shards", False, uri)
    assert class_controls.withheld_anywhere(uri) == {"2_collectives"}


def test_answers_seen_are_kept_per_browser_and_bounded():
    seen = predictions.AnswersSeen(max_browsers=2)
    seen.saw("a", "s", "x")
    assert seen.has_seen("a", "s", "x") and not seen.has_seen("a", "s", "y") and not seen.has_seen("b", "s", "x")
    seen.saw("b", "s", "x")
    seen.saw("c", "s", "x")  # the browser longest unseen is forgotten first
    assert not seen.has_seen("a", "s", "x") and seen.has_seen("b", "s", "x") and seen.has_seen("c", "s", "x")
