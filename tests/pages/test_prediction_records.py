"""What a class's records of predictions can be trusted to say, through the pages (AppTest on a real
sqlite store): an answer seen with no class code, under another code or another name, or a lab drawn with
a step's settings, marks every later record of that step; nothing is recorded before the student gives a
value, and choices start unselected, in an order of each browser's own; a name two browsers use at the same
time at one step is said so, to both students and to the teacher, and a student who goes on in another
browser is shown neutrally; the labs' guesses count again after a reset; every page that shows answers says
whether it records them; the Worksheet's link keeps its sheet and step, and a hold reaches a student on
another sheet."""

from __future__ import annotations

import jax
import pytest

from labs.ui import classroom as classroom_ui
from labs.ui import teacher
from pmap_core.practice import scoring, worksheets
from pmap_core.tracking import class_controls, classroom
from tests.apptest_support import assert_clean, class_store, open_lab, share_link, until_done

KEY = "correct horse battery staple"
CODE = "marks-class"
STEP = "pad_per_device"  # sheet 1_shards: b = 3 is right
GUESS_KEY = f"worksheet.1_shards.{STEP}.guess"
NO_CODE = "No class code: nothing is recorded for a class."


store = class_store(KEY)


def worksheet(**query):
    return open_lab("worksheet", **({"sheet": "1_shards", "step": STEP} | query))


def identify(at, name: str, code: str):
    at.text_input(key="worksheet.student").set_value(name)
    at.text_input(key="worksheet.class_code").set_value(code)
    return at.run()


def check(at, value: float):
    at.number_input(key=GUESS_KEY).set_value(value)
    at.button(key="worksheet.check").click().run()
    assert_clean(at)
    return at


def records(uri):
    return classroom.read_class(CODE, uri).predictions


def test_an_answer_seen_with_no_code_marks_the_later_record_of_that_step(store):
    at = check(worksheet(), 3.0)  # no class code: the answer shows, nothing is recorded
    assert any("the code computed" in s.value for s in at.success)
    assert any("Not recorded for a class" in c.value for c in at.caption)
    check(identify(at, "Ada", CODE), 3.0)  # then the code, and the answer as a prediction
    recorded = records(store)
    assert recorded[["student", "attempt", "first", "after_answer", "result"]].values.tolist() == [
        ["Ada", 1, False, True, 1.0]]
    assert any("made after seeing the answer" in c.value for c in at.caption)


def test_a_lab_shown_with_a_steps_settings_marks_later_predictions_at_that_step(store):
    """The basics lab drawn with the settings of sheet 1's first two steps (as their link opens it, or set by
    hand) shows the figures they ask for: this browser's later predictions at both are recorded as made after
    seeing the answer; a step of other settings stays unmarked."""
    at = open_lab("basics", batch=10, devices=min(4, jax.device_count()), policy="pad")
    assert_clean(at)
    at.switch_page("labs/worksheet.py")
    at.query_params["sheet"], at.query_params["step"] = "1_shards", STEP
    check(identify(at.run(), "Ada", CODE), 3.0)
    assert any("made after seeing the answer" in c.value for c in at.caption)
    for step, guess in (("pad_count", 2.0), ("drop_count", 2.0)):
        at.selectbox(key="worksheet.step").select(step).run()
        at.number_input(key=f"worksheet.1_shards.{step}.guess").set_value(guess)
        at.button(key="worksheet.check").click().run()
        assert_clean(at)
    assert records(store)[["step", "first", "after_answer"]].values.tolist() == [
        [STEP, False, True], ["pad_count", False, True], ["drop_count", True, False]]


def steps_seen(at) -> set:
    return set(at.session_state["classroom.seen"]) if "classroom.seen" in at.session_state else set()


def test_the_plan_page_in_predict_first_mode_counts_as_seeing_a_steps_answer_only_once_it_reveals(store):
    step = next(s for s in worksheets.load_sheets().sheets if s.id == "14_plan").step("fsdp_memory")
    query = {k: v for k, v in step.query("en").items() if k != "lang"}
    assert query["predict"] == "true"  # the step's link opens the page in its predict-first mode
    at = until_done(open_lab("plan", **query))  # its first run answers before its planning is done
    assert_clean(at)
    assert ("14_plan", "fsdp_memory") not in steps_seen(at)
    at.number_input(key="plan.guess.memory").set_value(30.0).run()
    at.button(key="plan.reveal").click().run()
    assert_clean(at)
    assert ("14_plan", "fsdp_memory") in steps_seen(at)
    shown = until_done(open_lab("plan", **{**query, "predict": "false"}))  # the figures show: seen at once
    assert ("14_plan", "fsdp_memory") in steps_seen(shown)
    sheet = open_lab("worksheet", sheet="14_plan", step="fsdp_memory")  # the step says what its link opens
    assert any("predict-first mode" in c.value for c in sheet.caption)


def test_an_answer_seen_under_a_throwaway_name_marks_the_renamed_record(store):
    at = check(identify(worksheet(), "zzz", CODE), 3.0)
    check(identify(at, "Ada", CODE), 3.0)
    recorded = records(store)
    assert recorded[["student", "first", "after_answer"]].values.tolist() == [["zzz", True, False],
                                                                             ["Ada", False, True]]


def test_an_untouched_box_checks_and_records_nothing(store):
    at = identify(worksheet(), "Ada", CODE)
    assert at.number_input(key=GUESS_KEY).value is None
    assert any("Give your prediction first" in c.value for c in at.caption)
    at.button(key="worksheet.check").click().run()  # pressed all the same
    assert_clean(at)
    assert any("Give your prediction first" in w.value for w in at.warning)
    assert records(store).empty and not at.session_state["worksheet.results"]["1_shards"]
    assert not at.success and not any("the code computed" in w.value for w in at.warning)


def test_choices_start_unselected_in_an_order_of_the_browsers_own(store):
    step = next(s for s in worksheets.load_sheets().sheets if s.id == "3_compiled").at(8).step("pmap_jit_same")
    labels = {c["id"]: step.say(c, "en") for c in step.choices}
    seeds = [f"b{n}" for n in range(20)]
    one, two = next((a, b) for a in seeds for b in seeds if scoring.choice_order(step.choice_ids(), f"{a}/3_compiled/"
                    "pmap_jit_same") != scoring.choice_order(step.choice_ids(), f"{b}/3_compiled/pmap_jit_same"))
    shown = []
    for browser in (one, two):
        at = open_lab("worksheet", sheet="3_compiled", step="pmap_jit_same")
        at.session_state["classroom.browser"] = browser
        radio = at.run().radio(key="worksheet.3_compiled.pmap_jit_same.guess")
        assert radio.value is None
        order = scoring.choice_order(step.choice_ids(), f"{browser}/3_compiled/pmap_jit_same")
        assert radio.options == [labels[c] for c in order]
        assert at.run().radio(key="worksheet.3_compiled.pmap_jit_same.guess").options == radio.options  # stable
        shown.append(radio.options)
    assert shown[0] != shown[1]


def name_notes_shown(code: str = CODE) -> dict[str, str]:
    """The Class page's name check column, without the key: name -> note."""
    page = open_lab("class_view")
    page.text_input(key="class_view.code").set_value(code).run()
    assert_clean(page)
    return {name: note for frame in page.dataframe if "name_note" in frame.value.columns
            for name, note in frame.value[["student", "name_note"]].values.tolist()}


def test_a_name_two_browsers_use_at_once_is_said_to_both_students_and_the_teacher(store):
    bob = check(identify(worksheet(), "Bob", CODE), 2.0)
    eve = identify(worksheet(), "\u0412ob", CODE)  # Cyrillic В: drawn as "Bob", from another browser
    assert not any("Another browser" in w.value for w in eve.warning)  # nothing at once yet
    check(eve, 3.0)
    check(bob, 3.0)  # Bob is still at the step: the two browsers used the name at the same time
    classroom_ui._browsers_at_once.clear()
    assert any("Another browser recorded under this name" in w.value for w in eve.run().warning)
    assert any("Another browser recorded under this name" in w.value for w in bob.run().warning)
    assert records(store)[["student", "browser", "first", "at_once"]].values.tolist() == [
        ["Bob", 1, True, True], ["\u0412ob", 2, True, True], ["Bob", 1, False, True]]
    notes = name_notes_shown()
    assert "at the same time" in notes["\u0412ob"] and "at the same time" in notes["Bob"], notes


def test_a_student_who_goes_on_in_another_browser_is_shown_neutrally(store):
    """Ada predicts on the Worksheet, then goes on to the Interview in a second browser (another device,
    a private window): neither page warns her, and the teacher reads "from 2 browsers", no more."""
    first = check(identify(worksheet(), "Ada", CODE), 2.0)
    second = identify(worksheet(), "Ada", CODE)
    second.switch_page("labs/interview.py").run()
    second.selectbox(key="interview.question").set_value("pmean_value").run()
    second.number_input(key="interview.pmean_value.guess").set_value(3.5).run()
    second.button(key="interview.check").click().run()
    assert_clean(second)
    classroom_ui._browsers_at_once.clear()
    for page in (first.run(), second.run()):
        assert not any("Another browser" in w.value for w in page.warning)
    assert records(store)[["student", "browser", "first", "at_once"]].values.tolist() == [
        ["Ada", 1, True, False], ["Ada", 2, True, False]]
    assert name_notes_shown() == {"Ada": "recorded from 2 browsers"}


def test_a_pipeline_guess_after_a_reset_is_a_first_attempt_and_counts_in_the_exercises(store):
    at = open_lab("pipeline", devices=3, stages=3, layers=3, microbatches=2, rows=3, hidden=8)
    at.text_input(key="pipeline.student").set_value("Ada")
    at.text_input(key="pipeline.class_code").set_value(CODE).run()
    at.radio(key="pipeline.guess").set_value("same").run()
    at.button(key="pipeline.measure").click().run()
    reset_ms = class_controls.reset(CODE, store)
    teacher.forget_controls()
    at.button(key="pipeline.measure").click().run()
    assert_clean(at)
    after = classroom.read_class(CODE, store, since_ms=reset_ms)
    assert after.predictions[["sheet", "attempt", "after_answer"]].values.tolist() == [["pipeline", 1, True]]
    assert after.runs[["sheet", "step"]].values.tolist() == [["pipeline", "peak_memory"]]


@pytest.mark.parametrize("script", ["interview", "mesh_2d", "pipeline", "activation_memory", "context_parallel",
                                    "expert_parallel", "plan"])
def test_every_page_that_shows_answers_says_whether_it_records_them(store, script):
    at = open_lab(script)
    assert_clean(at)
    assert any(NO_CODE in c.value for c in at.caption), script
    if script != "interview":  # the labs' guesses: why a teacher cannot withhold or hold them
        assert any("cannot withhold or hold this guess" in c.value for c in at.caption), script


def test_the_worksheets_share_link_keeps_its_sheet_and_step(store):
    at = worksheet(step="pad_count")
    link = share_link(at, "worksheet")
    assert "sheet=1_shards" in link and "step=pad_count" in link


def test_a_hold_reaches_a_student_on_another_sheet(store):
    at = identify(open_lab("worksheet", sheet="2_collectives"), "Ada", CODE)
    class_controls.hold(CODE, "1_shards", "pad_count", store)
    teacher.forget_controls()
    at.run()
    assert_clean(at)
    assert at.selectbox(key="worksheet.sheet").value == "1_shards" and at.selectbox(key="worksheet.sheet").disabled
    assert at.selectbox(key="worksheet.step").value == "pad_count"
