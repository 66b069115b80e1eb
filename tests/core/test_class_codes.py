"""A class code is the class's only key: codes that differ only in case or width are one class, a code
shorter than CODE_MIN_CHARS records nothing, and runs recorded under a code before it was normalised
are still found. Names are not keys: lookalike and blank names are marked, never merged."""

from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from harness.processes import new_tracking_store
from pmap_core.tracking import classroom
from pmap_core.tracking.mlflow_backend import experiment_id


@pytest.mark.parametrize("typed", ["CS101", "cs101", " Cs101 ", "ＣＳ１０１", "ｃｓ１０１\u2028"])
def test_codes_that_differ_in_case_or_width_are_one_class(typed):
    assert classroom.sanitize_code(typed) == "cs101"
    assert classroom.class_tags("Ada", typed)[classroom.CLASS_KEY_TAG] == classroom.class_key("cs101")
    assert classroom.class_filter(typed) == classroom.class_filter("cs101")


def test_case_folding_is_unicodes_not_lower():
    assert classroom.sanitize_code("STRASSE") == classroom.sanitize_code("Straße") == "strasse"
    assert classroom.sanitize_code("ΣΊΣΥΦΟΣ") == classroom.sanitize_code("σίσυφος")


@pytest.mark.parametrize("typed", ["a", "AB", " ｘ ", "a\u2028b"])
def test_a_code_shorter_than_the_minimum_records_nothing(typed):
    assert len(classroom.sanitize_code(typed)) < classroom.CODE_MIN_CHARS
    assert classroom.class_tags("Ada", typed) == {}
    assert classroom.usable_code(typed) is None


def test_runs_recorded_before_codes_were_normalised_are_found(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    client = MlflowClient(uri)
    sheets = experiment_id(client, classroom.EXERCISE_EXPERIMENT)
    old_tags = {classroom.CLASS_TAG: "CS101", classroom.STUDENT_TAG: "Ada",
                classroom.CLASS_KEY_TAG: classroom.class_key("CS101")}  # as the lab tagged them then
    old = client.create_run(sheets, tags={**old_tags, "sheet": "s"}).info.run_id
    client.log_metric(old, "step.a", 1.0)
    new = classroom.record_exercise("s", {"b": True}, classroom.class_tags("Grace", "cs101"), uri=uri)
    for typed in ("CS101", "cs101", "ＣＳ１０１"):
        assert set(classroom.class_runs(typed, uri)["run_id"]) == {old, new}, typed
    assert set(classroom.class_runs("cs102", uri)["run_id"]) == set()


def test_lookalike_and_blank_names_are_marked():
    names = ["Anna", "\u0410nna", "\u0391nna", "Ｂob", "Bob", "Bo b", "Zoë", "Zoe", "", "Grace", "\u5f20\u4f1f"]
    notes = classroom.name_notes(names)
    assert notes[""] == classroom.NameNote(blank=True)
    assert notes["Anna"] == classroom.NameNote(lookalike=True)  # plain letters, beside two lookalikes
    cyrillic = ("\u0410 U+0410 CYRILLIC CAPITAL LETTER A",)
    assert notes["\u0410nna"] == classroom.NameNote(lookalike=True, letters=cyrillic)
    assert notes["\u0391nna"].letters == ("\u0391 U+0391 GREEK CAPITAL LETTER ALPHA",)
    assert notes["Ｂob"].letters == ("Ｂ U+FF22 FULLWIDTH LATIN CAPITAL LETTER B",)
    assert notes["Bob"].lookalike
    for plain in ("Bo b", "Zoë", "Zoe", "Grace", "\u5f20\u4f1f"):  # told apart by eye: no note
        assert notes[plain] == classroom.NameNote(), plain
    assert classroom.name_notes(["\u0410nna"])["\u0410nna"] == classroom.NameNote()  # no other name to mistake


def test_names_lose_invisible_code_points_and_compare_by_their_skeleton():
    for hidden in ("\u034f", "\ufe0f", "\u3164", "\u2800", "\u115f", "\U000e0100"):
        assert classroom.sanitize_name(f"Bob{hidden}") == "Bob", hex(ord(hidden))
        assert classroom.sanitize_name(hidden * 3) == "", hex(ord(hidden))  # made only of them: blank
    assert classroom.name_notes(["\u3164\u2800"])["\u3164\u2800"].blank  # stored so before: blank all the same
    bob = classroom.skeleton("Bob")
    assert classroom.skeleton("B\u0251b") == classroom.skeleton("Bab")  # U+0251 is drawn as "a", not "o"
    for alike in ("Bo\u0185", "\uff22ob", "\u0412\u043eb", "Bob\ufe0f", "\U0001d401ob"):
        assert classroom.skeleton(alike) == bob, alike
        assert classroom.student_key(alike) == classroom.student_key("Bob"), alike
    for apart in ("bob", "Bo b", "Bo\u0301b", "Rob"):
        assert classroom.skeleton(apart) != bob, apart
    notes = classroom.name_notes(["Bob", "Bab", "B\u0251b", "Bo\u0185", "Tim"])
    assert notes["B\u0251b"].letters == ("\u0251 U+0251 LATIN SMALL LETTER ALPHA",)
    assert notes["Bo\u0185"].letters == ("\u0185 U+0185 LATIN SMALL LETTER TONE SIX",)
    assert notes["Bob"] == notes["Bab"] == classroom.NameNote(lookalike=True) and notes["Tim"] == classroom.NameNote()
    assert classroom.class_tags("Bob\u034f", "cs101")["student"] == "Bob"


@pytest.mark.parametrize(("linked", "code"), [
    ("teach-a", "teach-a"), ("TEACH-A", "teach-a"), ("ＴＥＡＣＨ-Ａ", "teach-a"),
    ("x` ![i](http://127.0.0.1:9/p.png) `", None), ("ab", None), ("teach\u034fa", None)])
def test_a_link_names_a_class_only_as_a_code_is_typed(linked, code):
    assert classroom.code_from_link(linked) == code
