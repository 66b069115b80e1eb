"""The Class page and its teacher controls, through the page (AppTest on a real sqlite store): a
withheld sheet leaves nothing of its answers on a page without the key; a teacher's form saves only for
the class and the state it was drawn with; the key is trimmed, rate-limited per session and per
client, logged when wrong (never what was typed), and refused when short; a session's writes have a
budget; the class code is kept in the link; the dot plot keeps its scale whatever one student types."""

from __future__ import annotations

import logging

import pandas as pd

from labs.ui import class_charts, predicting, teacher
from pmap_core.practice import worksheets
from pmap_core.tracking import class_controls, classroom, predictions
from tests.apptest_support import assert_clean, class_store, open_lab

KEY = "a teacher key of thirty characters"
CODE, OTHER = "teach-a", "teach-b"
WITHHELD_STEP = "pad_per_device"  # sheet 1_shards


store = class_store(KEY)


def checked(uri, student, sheet, step, prediction, answer, code=CODE):
    tags = dict([predictions.prediction_tag(step, 1, prediction, answer, prediction == answer)])
    classroom.record_exercise(sheet, {step: prediction == answer}, classroom.class_tags(student, code), uri=uri,
                              attempts=tags)


def open_class(code: str = CODE, **query):
    at = open_lab("class_view", **query)
    at.text_input(key="class_view.code").set_value(code).run()
    return at


def try_key(at, key: str):
    at.text_input(key="class_view.teacher_key").set_value(key)
    return at.button(key="class_view.teacher_open").click().run()


def controls_shown(at) -> bool:
    return any(t.key == "class_view.reset_sure" for t in at.checkbox)


def shown_anywhere(at, text: str) -> list[str]:
    """Where `text` appears on the page: in a table's cells or column names, or in any text element."""
    found = [f"table {list(f.value.columns)}" for f in at.dataframe
             if text in " ".join(map(str, f.value.columns)) or f.value.astype(str).apply(
                 lambda column, t=text: column.str.contains(t, regex=False)).any().any()]
    return found + [e.value for kind in ("markdown", "caption", "text", "code", "info", "warning")
                    for e in getattr(at, kind) if text in str(e.value)]


def test_a_withheld_sheet_shows_nothing_of_its_answers_without_the_key(store):
    checked(store, "Ada", "1_shards", WITHHELD_STEP, 2.0, 3.0)
    checked(store, "Grace", "1_shards", WITHHELD_STEP, 3.0, 3.0)
    checked(store, "Ada", "2_collectives", "psum_value", 6.0, 6.0)
    class_controls.set_withheld(CODE, "1_shards", True, store)
    at = open_class()
    assert_clean(at)
    assert not shown_anywhere(at, "1_shards") and not shown_anywhere(at, WITHHELD_STEP)
    assert shown_anywhere(at, "2_collectives")  # a released sheet shows as before
    assert any("not in the CSV" in c.value for c in at.caption)
    teacher_view = try_key(open_class(), KEY)
    assert controls_shown(teacher_view) and shown_anywhere(teacher_view, WITHHELD_STEP)


def test_a_form_saves_only_for_the_class_and_the_state_it_was_drawn_with(store):
    class_controls.set_withheld(CODE, "1_shards", True, store)
    class_controls.hold(CODE, "1_shards", "pad_count", store)
    at = try_key(open_class(), KEY)
    assert at.toggle[0].value and at.selectbox[1].value == "pad_count"
    at.text_input(key="class_view.code").set_value(OTHER).run()  # the teacher turns to class B …
    assert not at.toggle[0].value and at.selectbox[1].value == ""  # … and sees B's controls
    next(b for b in at.button if b.label == "Save for the class").click().run()  # nothing touched
    assert_clean(at)
    assert class_controls.read_controls(OTHER, store) == class_controls.NO_CONTROLS

    # A stale tab: another teacher releases A's sheet after this page read it; Save here saves nothing.
    at.text_input(key="class_view.code").set_value(CODE).run()
    class_controls.set_withheld(CODE, "1_shards", False, store)
    next(b for b in at.button if b.label == "Save for the class").click().run()
    assert class_controls.read_controls(CODE, store).of_sheet("1_shards") == (False, "pad_count")
    assert any("changed since this page read them" in w.value for w in at.warning)
    assert not at.toggle[0].value  # shown again as it is now
    at.toggle[0].set_value(True)
    next(b for b in at.button if b.label == "Save for the class").click().run()  # drawn from what is stored: saved
    assert class_controls.read_controls(CODE, store).of_sheet("1_shards") == (True, "pad_count")


def test_the_key_is_trimmed_and_wrong_keys_wait_and_are_logged_without_the_guess(store, monkeypatch, caplog):
    assert controls_shown(try_key(open_class(), f"  {KEY}\n"))  # a pasted key's whitespace does not count
    monkeypatch.setattr(teacher, "SESSION_FREE_TRIES", 2)
    at = open_class()
    with caplog.at_level(logging.WARNING, logger="pmap_lab"):
        for guess in ("guess number one", "guess number two"):
            try_key(at, guess)
            assert any("not this server's teacher key" in w.value for w in at.warning)
    logged = [r.getMessage() for r in caplog.records if "wrong teacher key" in r.getMessage()]
    assert len(logged) == 2 and not [m for m in logged if "guess" in m]
    try_key(at, KEY)  # the right key, but in the wait: not even compared
    assert not controls_shown(at) and any("try again in" in w.value for w in at.warning)
    # Another session from the same client: its own tries are free, the client's are not.
    monkeypatch.setattr(teacher, "SESSION_FREE_TRIES", 100)
    monkeypatch.setattr(teacher, "CLIENT_FREE_TRIES", 3)
    teacher._client_tries.clear()
    for guess in ("guess three", "guess four", "guess five"):
        try_key(open_class(), guess)
    assert not controls_shown(try_key(open_class(), KEY))


def test_a_short_key_stops_the_app_with_one_line(store, monkeypatch):
    monkeypatch.setenv(teacher.TEACHER_KEY_ENV, "  short key  ")
    for lang, words in (("en", "cannot start with this teacher key"), ("zh", "无法以这个教师密钥启动")):
        at = open_lab("class_view", lang=lang)
        assert any(words in e.value for e in at.error) and not at.text_input and not at.exception
        assert not [c for c in at.code if "short key" in c.value]  # a length, never the key


def test_the_key_field_shows_no_length(store):
    """What Chromium draws of it: tests/browser/test_browser_class_withheld.py."""
    field = open_class().text_input(key="class_view.teacher_key")
    assert field.proto.type == field.proto.PASSWORD and not field.max_chars  # no "n/200" counter


def test_a_sessions_writes_have_a_budget(store, monkeypatch):
    monkeypatch.setattr(predicting, "WRITE_BURST", 2)
    monkeypatch.setattr(predicting, "WRITE_EVERY_S", 1e6)
    at = open_lab("worksheet", sheet="1_shards", step=WITHHELD_STEP)
    at.text_input(key="worksheet.student").set_value("Ada")
    at.text_input(key="worksheet.class_code").set_value(CODE).run()
    for guess in (1.0, 2.0, 3.0):
        at.number_input(key=f"worksheet.1_shards.{WITHHELD_STEP}.guess").set_value(guess)
        at.button(key="worksheet.check").click().run()
        assert_clean(at)
    assert any("many checks in a short time" in c.value for c in at.code)
    assert len(classroom.read_class(CODE, store).predictions) < 3


def test_the_class_code_is_kept_in_the_link_and_opens_the_class(store):
    checked(store, "Ada", "2_collectives", "psum_value", 6.0, 6.0)
    at = open_class()
    assert at.query_params["code"] == [CODE] or at.query_params["code"] == CODE
    linked = open_lab("class_view", code=CODE.upper())  # a reloaded page, or a shared link
    assert_clean(linked)
    assert linked.text_input(key="class_view.code").value == CODE
    assert any("1 students" in c.value for c in linked.caption)
    assert not [v for v in try_key(linked, KEY).query_params.values() if KEY in str(v)]


def test_the_dot_plot_keeps_its_scale_whatever_one_student_types():
    first = pd.DataFrame({"prediction": ["3", "3", "2", "4", "1e+12", "-1.7e+308"], "answer": ["3"] * 6,
                          "result": [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]})
    chart = class_charts.first_predictions_plot(
        first, x_title="x", y_title="y", outcome_title="o", right="r", wrong="w", answer_title="a",
        place_title="p", on_scale="on", below="below", above="above").to_dict()
    dots = next(layer for layer in chart["layer"] if layer["mark"]["type"] == "point")
    assert dots["encoding"]["x"]["scale"]["domain"] == [2.0, 4.0]
    data = pd.DataFrame(chart["datasets"][dots["data"]["name"]])
    assert data["value"].tolist() == [3.0, 3.0, 2.0, 4.0, 4.0, 2.0]  # drawn at the edges …
    assert data["place"].tolist() == ["on"] * 4 + ["above", "below"]  # … marked as off the scale
    assert data["prediction"].tolist()[-2:] == ["1e+12", "-1.7e+308"]  # the tooltip's value, as typed


def test_steps_are_named_by_their_number_and_question_not_their_id(store):
    checked(store, "Ada", "1_shards", "pad_count", 2.0, 3.0)
    at = try_key(open_class(), KEY)
    assert_clean(at)
    question = "2. Same batch and devices: how many padding slots are added?"
    title = next(s.title["en"] for s in worksheets.load_sheets().sheets if s.id == "1_shards")
    chooser = at.selectbox(key="class_view.prediction_step")
    assert chooser.options == [f"{title} · {question}"]
    (hold,) = [s for s in at.selectbox if s.key.startswith("class_view.hold.1_shards.")]
    assert question in hold.options
    summary = next(f.value for f in at.dataframe if "first_predictions" in f.value.columns)
    assert summary[["sheet", "step"]].values.tolist() == [[title, question]]
    assert not [o for o in [*hold.options, *chooser.options] if "pad_count" in o]
