"""Predictions recorded before the reveal, and the teacher's controls, through the pages (AppTest on a
real sqlite store): a student's checks are recorded with their attempt numbers; the Class page shows
the first predictions against the computed answer; the teacher controls show only with the server's
key typed; withholding a sheet hides its answers from students, holding fixes their step, and a reset
starts the class again."""

from __future__ import annotations

import json

import jax
import pytest
from mlflow.tracking import MlflowClient
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from harness.processes import free_port
from labs.ui import teacher
from pmap_core.concepts import mesh_2d_view, pipeline
from pmap_core.practice import worksheets
from pmap_core.tracking import class_controls, classroom
from tests.apptest_support import assert_clean, class_store, open_lab

KEY = "correct horse battery staple"
CODE = "pred-class"
STEP = "pad_per_device"  # sheet 1_shards: b = 3 is right
GUESS_KEY = f"worksheet.1_shards.{STEP}.guess"


store = class_store(KEY)


def step_question(lang: str) -> str:
    """STEP as a student reads it here: its number on the sheet and its question."""
    sheet = next(s for s in worksheets.load_sheets().sheets if s.id == "1_shards")
    step = sheet.steps[0].at(jax.local_device_count())
    assert step.id == STEP
    return f"1. {step.say(step.question, lang)}"


def student(name: str, lang: str = "en"):
    at = open_lab("worksheet", lang=lang, sheet="1_shards", step=STEP)
    at.text_input(key="worksheet.student").set_value(name)
    at.text_input(key="worksheet.class_code").set_value(CODE)
    return at.run()


def check(at, value: float):
    at.number_input(key=GUESS_KEY).set_value(value)
    at.button(key="worksheet.check").click().run()
    assert_clean(at)
    return at


def class_page(key: str | None = None, lang: str = "en"):
    at = open_lab("class_view", lang=lang)
    at.text_input(key="class_view.code").set_value(CODE).run()
    if key is not None:
        at.text_input(key="class_view.teacher_key").set_value(key)
        at.button(key="class_view.teacher_open").click().run()
    assert_clean(at) if key in (None, KEY) else None
    return at


def charts_of(at) -> list[dict]:
    """Every Altair chart on the page: its Vega-Lite spec, with its datasets as pandas frames."""
    charts = []
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        spec["frames"] = [convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets]
        charts.append(spec)
    return charts


def controls_shown(at) -> bool:
    return any(t.key == "class_view.reset_sure" for t in at.checkbox)


def test_each_check_is_recorded_once_with_its_attempt_and_the_first_is_marked(store):
    ada = check(student("Ada"), 2.0)
    check(ada, 3.0)
    grace = check(student("Grace"), 3.0)
    assert any("Recorded for your class" in c.value for c in grace.caption)
    recorded = classroom.read_class(CODE, store).predictions
    rows = recorded[["student", "step", "attempt", "first", "prediction", "answer", "result"]].values.tolist()
    assert sorted(map(tuple, rows)) == [("Ada", STEP, 1, True, "2", "3", 0.0), ("Ada", STEP, 2, False, "3", "3", 1.0),
                                        ("Grace", STEP, 1, True, "3", "3", 1.0)]
    # One tag per attempt on the student's one run for the sheet, written with the step's result.
    run = MlflowClient(store).get_run(recorded[recorded["student"] == "Ada"]["run_id"].iloc[0])
    assert sorted(k for k in run.data.tags if k.startswith("prediction.")) == [f"prediction.{STEP}.1",
                                                                                f"prediction.{STEP}.2"]
    assert run.data.metrics[f"step.{STEP}"] == 1.0


def test_the_teacher_view_needs_the_servers_key(store, monkeypatch):
    check(student("Ada"), 3.0)
    assert not controls_shown(class_page())
    wrong = class_page("not the key")
    assert not controls_shown(wrong) and any("not this server's teacher key" in w.value for w in wrong.warning)
    assert controls_shown(class_page(KEY))
    monkeypatch.delenv(teacher.TEACHER_KEY_ENV)
    at = open_lab("class_view")
    at.text_input(key="class_view.code").set_value(CODE).run()
    assert not [t for t in at.text_input if t.key == "class_view.teacher_key"] and not controls_shown(at)


def test_the_class_page_shows_first_predictions_against_the_answer_in_both_languages(store):
    for name, value in (("Ada", 2.0), ("Grace", 3.0), ("Alan", 2.0)):
        check(student(name), value)
    for lang, words in (("en", "3 first predictions, 33% within"), ("zh", "共 3 个第一次预测，33% 落在")):
        at = class_page(lang=lang)
        summary = next(f.value for f in at.dataframe if "first_predictions" in f.value.columns)
        assert summary[["first_predictions", "common_wrong", "common_wrong_count", "answer"]].values.tolist() \
            == [[3, "2", 2, "3"]]
        (name,) = summary["step"].tolist()  # named by its number and the start of its question, not its id
        assert name.startswith(step_question(lang)[:40]) and STEP not in name
        assert summary["within_tolerance"].tolist() == pytest.approx([1 / 3])
        assert any(words in c.value for c in at.caption), [c.value for c in at.caption]
        dots, timeline = charts_of(at)
        frames = sorted(dots["frames"], key=len)  # the answer's rule, then one dot per first prediction
        assert frames[0]["value"].tolist() == [3.0]
        assert sorted(frames[1]["value"]) == [2.0, 2.0, 3.0] and sorted(frames[1]["n"]) == [1, 1, 2]
        assert sorted(timeline["frames"][0]["student"]) == ["Ada", "Alan", "Grace"]


def test_a_withheld_sheet_shows_students_no_answer_and_a_held_sheet_fixes_their_step(store):
    class_controls.set_withheld(CODE, "1_shards", True, store)
    class_controls.hold(CODE, "1_shards", STEP, store)
    teacher.forget_controls()
    at = open_lab("worksheet", sheet="1_shards", step="leading_axis_ok")
    at.text_input(key="worksheet.student").set_value("Ada")
    at.text_input(key="worksheet.class_code").set_value(CODE).run()
    assert at.selectbox(key="worksheet.step").value == STEP and at.selectbox(key="worksheet.step").disabled
    check(at, 3.0)
    assert not at.success and not any("the code computed" in w.value for w in at.warning)
    assert any("not revealed" in i.value for i in at.info)
    assert classroom.read_class(CODE, store).predictions["result"].tolist() == [1.0]  # recorded all the same
    # Students of the class see no predictions of a withheld sheet on the Class page; the teacher does.
    assert not any("first_predictions" in f.value.columns for f in class_page().dataframe)
    assert any("first_predictions" in f.value.columns for f in class_page(KEY).dataframe)

    class_controls.set_withheld(CODE, "1_shards", False, store)
    teacher.forget_controls()
    at.run()
    assert any("the code computed" in s.value for s in at.success)


def test_a_reset_starts_the_class_and_each_students_attempts_again(store):
    ada = check(student("Ada"), 2.0)
    teacher_view = class_page(KEY)
    teacher_view.checkbox(key="class_view.reset_sure").check().run()
    teacher_view.button(key="class_view.reset").click().run()
    assert_clean(teacher_view)
    assert class_controls.read_controls(CODE, store).reset_ms > 0
    assert not any("first_predictions" in f.value.columns for f in teacher_view.dataframe)

    ada.run()  # her next rerun sees the reset: her results are gone, and her next check is attempt 1 again
    assert not ada.session_state["worksheet.results"]["1_shards"]
    check(ada, 3.0)
    reset_ms = class_controls.read_controls(CODE, store).reset_ms
    after = classroom.read_class(CODE, store, since_ms=reset_ms).predictions
    # She saw the answer before the reset: her check says so, and is no first prediction.
    assert after[["attempt", "first", "after_answer", "prediction"]].values.tolist() == [[1, False, True, "3"]]
    grace = check(student("Grace"), 3.0)  # who never saw it predicts first after the reset
    assert_clean(grace)
    after = classroom.read_class(CODE, store, since_ms=reset_ms).predictions
    assert after[after["student"] == "Grace"][["attempt", "first"]].values.tolist() == [[1, True]]
    assert len(classroom.read_class(CODE, store).predictions) == 3  # nothing was deleted


def test_the_interview_questions_record_predictions_and_follow_the_teacher(store):
    at = student("Ada")  # the name and code are given once, on the Worksheet page
    at.switch_page("labs/interview.py").run()
    at.selectbox(key="interview.question").set_value("pmean_value").run()
    for guess in (4.0, 3.5):
        at.number_input(key="interview.pmean_value.guess").set_value(guess).run()
        at.button(key="interview.check").click().run()
        assert_clean(at)
    assert any("recorded for your class" in c.value for c in at.caption)
    recorded = classroom.read_class(CODE, store).predictions
    assert recorded[["sheet", "step", "attempt", "first", "prediction", "answer"]].values.tolist() == [
        ["interview", "pmean_value", 1, True, "4", "3.5"], ["interview", "pmean_value", 2, False, "3.5", "3.5"]]

    class_controls.set_withheld(CODE, "interview", True, store)
    class_controls.hold(CODE, "interview", "pmean_value", store)
    teacher.forget_controls()
    at.run()
    assert not at.success and any("not revealed" in i.value for i in at.info)
    assert at.metric[0].value == "— / 1" and any("holds the class" in i.value for i in at.info)


def test_the_mesh_guess_is_recorded_before_the_winner_shows(store):
    at = student("Ada")
    at.switch_page("labs/mesh_2d.py").run()
    for key, value in (("devices", 2), ("hidden", 8), ("batch", 8), ("steps", 10)):
        widget = next(w for kind in ("slider", "number_input") for w in getattr(at, kind) if w.key == f"mesh_2d.{key}")
        widget.set_value(value).run()
    at.radio(key="mesh_2d.guess").set_value("1x2").run()
    at.button(key="mesh_2d.sweep").click().run()
    assert_clean(at)
    winner = mesh_2d_view.verdict(at.session_state["mesh_2d.last_sweep"].sweep).winner
    recorded = classroom.read_class(CODE, store).predictions
    assert recorded[["sheet", "step", "attempt", "first", "prediction"]].values.tolist() == [
        ["mesh_2d", "fastest_mesh", 1, True, "1x2"]]
    assert recorded["answer"].tolist() == [winner]
    assert recorded["result"].tolist() == [1.0 if winner == "1x2" else 0.0]
    assert any("recorded for your class" in c.value for c in at.caption)


def test_an_attempt_the_store_did_not_take_goes_with_the_next_write(store, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    at = check(student("Ada"), 2.0)
    assert any("could not be recorded" in w.value for w in at.warning)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)  # the store answers again
    check(at, 3.0)
    recorded = classroom.read_class(CODE, store).predictions
    assert recorded[["attempt", "first", "prediction"]].values.tolist() == [[1, True, "2"], [2, False, "3"]]


def test_the_pipeline_guess_is_recorded_before_the_answer_shows(store):
    at = open_lab("pipeline", devices=3, stages=3, layers=3, microbatches=2, rows=3, hidden=8)
    at.text_input(key="pipeline.student").set_value("Ada")  # the page's own form: the lab says whether it records
    at.text_input(key="pipeline.class_code").set_value(CODE).run()
    at.radio(key="pipeline.guess").set_value("same").run()
    at.button(key="pipeline.measure").click().run()
    assert_clean(at)
    verdict = pipeline.memory_verdict(at.session_state["pipeline.last"].memory)
    recorded = classroom.read_class(CODE, store).predictions
    assert recorded[["sheet", "step", "attempt", "first", "prediction", "answer"]].values.tolist() == [
        ["pipeline", "peak_memory", 1, True, "same", verdict]]
    assert any("recorded for your class" in c.value for c in at.caption)


def test_the_key_is_never_taken_from_a_link_nor_put_in_one(store):
    for name in ("teacher_key", "key", "teacher"):
        at = open_lab("class_view", **{name: KEY})
        at.text_input(key="class_view.code").set_value(CODE).run()
        assert not controls_shown(at), name
    at = class_page(KEY)
    assert controls_shown(at)
    assert not [value for value in at.query_params.values() if KEY in str(value)]
    shown = [e.value for kind in ("markdown", "caption", "info", "success", "warning", "error", "text", "code")
             for e in getattr(at, kind)]
    assert not [text for text in shown if KEY in str(text)]


OTHER = "another-class"  # a class on the same server that withholds the sheet


def lab_links(at) -> list[str]:
    return [link.proto.url for link in at.get("link_button")]


@pytest.mark.parametrize("code", ["", CODE])
def test_a_sheet_any_class_withholds_shows_no_answer_without_the_key(store, code):
    """Another class withholds sheet 1: a visitor with no class code, or with the code of a class that does
    not, sees no computed answer, no right or wrong, and no link to the lab that shows the figure; the
    Class page of their class leaves the sheet out; the teacher key shows it all again."""
    class_controls.set_withheld(OTHER, "1_shards", True, store)
    teacher.forget_controls()
    at = open_lab("worksheet", sheet="1_shards", step=STEP)
    if code:
        at.text_input(key="worksheet.student").set_value("Ada")
        at.text_input(key="worksheet.class_code").set_value(code).run()
    assert not lab_links(at) and any("does not link to its lab" in c.value for c in at.caption)
    check(at, 1.0)
    assert not at.success and not any("the code computed" in w.value for w in at.warning)
    assert any("not revealed" in i.value for i in at.info)
    assert at.selectbox(key="worksheet.step").options[0] == "1. 📝"  # answered, neither right nor wrong
    if code:
        assert classroom.read_class(code, store).predictions["result"].tolist() == [0.0]  # recorded all the same
        assert not any("first_predictions" in f.value.columns for f in class_page().dataframe)
        assert any("first_predictions" in f.value.columns for f in class_page(KEY).dataframe)
    # A released sheet keeps its link, and says what opening it means.
    at.selectbox(key="worksheet.sheet").select("2_collectives").run()
    assert lab_links(at) and any("recorded as made after seeing the answer" in c.value for c in at.caption)

    class_controls.set_withheld(OTHER, "1_shards", False, store)
    teacher.forget_controls()
    at.selectbox(key="worksheet.sheet").select("1_shards").run()
    assert any("the code computed" in w.value for w in at.warning) and lab_links(at)


def test_the_teacher_key_shows_a_withheld_sheets_answers_on_the_worksheet(store):
    class_controls.set_withheld(OTHER, "1_shards", True, store)
    at = class_page(KEY)
    at.switch_page("labs/worksheet.py").run()
    at.selectbox(key="worksheet.sheet").select("1_shards").run()
    at.selectbox(key="worksheet.step").select(STEP).run()
    check(at, 3.0)
    assert any("the code computed" in s.value for s in at.success) and lab_links(at)


def test_the_interview_hides_what_another_class_withholds(store):
    class_controls.set_withheld(OTHER, "interview", True, store)
    teacher.forget_controls()
    at = open_lab("interview", question="pmean_value")
    at.number_input(key="interview.pmean_value.guess").set_value(3.5).run()
    at.button(key="interview.check").click().run()
    assert_clean(at)
    assert not at.success and any("not revealed" in i.value for i in at.info) and at.metric[0].value == "— / 1"


def test_the_class_page_shows_a_burst_of_first_predictions_under_names_drawn_alike(store):
    from pmap_core.tracking import predictions

    for i, name in enumerate(("Ada", "\u0410da", "Ad\u0430")):  # one person, three private windows
        tags = dict([predictions.prediction_tag(STEP, 1, 3.0, 3.0, True, 1_000 + 1_000 * i)])
        classroom.record_exercise("1_shards", {STEP: True}, {**classroom.class_tags(name, CODE),
                                                             classroom.BROWSER_TAG: f"window-{i}"},
                                  uri=store, attempts=tags)
    check(student("Grace"), 2.0)
    at = class_page()
    (burst,) = [f.value for f in at.dataframe if "names" in f.value.columns]
    assert burst[["names", "browsers", "seconds"]].values.tolist() == [["Ada, \u0410da, Ad\u0430", 3, 2.0]]
    assert burst["step"].tolist()[0].startswith(step_question("en")[:40])
    assert any("no record can tell which" in c.value for c in at.caption)
