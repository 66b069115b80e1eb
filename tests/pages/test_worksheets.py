"""The worksheet page and the labs the steps open: every step opens a lab with settings it has; the
page checks a step (a refusal shown verbatim, a wrong answer, the computed one) and keeps progress; an
open step waits for a sweep, then checks against it. The sheets themselves: tests/core/test_worksheet_sheets.py."""

from __future__ import annotations

import pathlib
import re

import pytest

from labs.registry import LABS, script_path
from labs.texts import table as text_table
from pmap_core.tracking.callback import TrackedSweep
from tests.apptest_support import assert_clean, open_lab
from tests.core.test_worksheet_sheets import SHEETS, STEPS, answers, tiny_sweep_result, wrong_prediction

TEXTS = text_table("worksheet")

ROOT = pathlib.Path(__file__).resolve().parents[2]


def page_sources(script: pathlib.Path) -> str:
    """The page's source and that of the labs.ui modules it imports, where a page may read its link."""
    source = script.read_text()
    modules = set()
    for names in re.findall(r"^from labs\.ui import ([\w, ]+)$", source, flags=re.M):
        modules.update(name.strip() for name in names.split(","))
    modules.update(re.findall(r"^from labs\.ui\.(\w+) import", source, flags=re.M))
    return source + "".join((ROOT / "labs" / "ui" / f"{name}.py").read_text() for name in sorted(modules)
                            if (ROOT / "labs" / "ui" / f"{name}.py").exists())


def test_every_step_opens_a_lab_with_settings_it_has():
    labs = {lab.script: lab for lab in LABS}
    for sheet, step in STEPS:
        assert step.lab in labs, (sheet.id, step.id)
        source = page_sources(ROOT / script_path(labs[step.lab]))
        unknown = [name for name in step.settings if f'"{name}"' not in source and name != "devices"]
        assert not unknown, (sheet.id, step.id, unknown)
        assert step.query("zh")["lang"] == "zh"


POISON = "x` ![i](http://127.0.0.1:9/p.png) <b>b</b>"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_checks_a_step_and_keeps_progress(lang):
    at = open_lab("worksheet", lang=lang, sheet="2_collectives", step="all_gather_shape")
    assert_clean(at)
    computed = answers("2_collectives")["all_gather_shape"]

    at.text_input(key="worksheet.2_collectives.all_gather_shape.guess").set_value(POISON)
    at.button(key="worksheet.check").click().run()
    assert not at.exception and not at.success
    refusal = at.error[0].value
    assert POISON in refusal and "![" not in refusal.replace(POISON, "")  # shown inside a code span, verbatim

    at.text_input(key="worksheet.2_collectives.all_gather_shape.guess").set_value(wrong_prediction(
        SHEETS[1].step("all_gather_shape"), computed))
    at.button(key="worksheet.check").click().run()
    assert_clean(at)
    assert at.warning and computed in at.warning[0].value and not at.success

    at.text_input(key="worksheet.2_collectives.all_gather_shape.guess").set_value(computed)
    at.button(key="worksheet.check").click().run()
    assert_clean(at)
    assert computed in at.success[0].value
    progress = at.session_state["worksheet.results"]["2_collectives"]
    assert progress["all_gather_shape"]["correct"] and progress["all_gather_shape"]["answer"] == computed

    # A choice, then a number, on another sheet: the first sheet's progress stays.
    at.selectbox(key="worksheet.sheet").select("3_compiled").run()
    at.selectbox(key="worksheet.step").select("pmap_jit_same").run()
    at.radio(key="worksheet.3_compiled.pmap_jit_same.guess").set_value(answers("3_compiled")["pmap_jit_same"])
    at.button(key="worksheet.check").click().run()
    assert_clean(at)
    assert at.success
    assert set(at.session_state["worksheet.results"]) == {"2_collectives", "3_compiled"}


def test_an_open_step_waits_for_a_sweep_then_checks_against_it():
    at = open_lab("worksheet", sheet="4_scaling", step="fastest_d")
    assert_clean(at)
    assert at.info and at.button(key="worksheet.check").disabled
    # The sweep the training lab leaves in the session.
    at.session_state["training.last_sweep"] = TrackedSweep(tiny_sweep_result(), None, (), "", None, 0.0)
    at.run()
    at.number_input(key="worksheet.4_scaling.fastest_d.guess").set_value(answers("4_scaling")["fastest_d"])
    at.button(key="worksheet.check").click().run()
    assert_clean(at)
    assert at.success
    shown = at.dataframe[-1].value  # the sweep it was checked against
    assert list(shown["devices"]) == [1, 2, 4, 8]


@pytest.mark.parametrize("typed", ["²", "①"])
def test_a_shape_answer_of_digit_like_characters_is_not_a_shape_on_the_page(typed):
    at = open_lab("worksheet", sheet="2_collectives", step="all_gather_shape")
    at.text_input(key="worksheet.2_collectives.all_gather_shape.guess").set_value(typed)
    at.button(key="worksheet.check").click().run()
    assert not at.exception and not at.success
    assert [e.value for e in at.error] == [f"` {typed} ` is not a shape; write it like (4, 2)."]
    assert not at.session_state["worksheet.results"]["2_collectives"]


@pytest.fixture
def sheets_folder(tmp_path, monkeypatch):
    """The page reads its sheets from `tmp_path` (its cached sheets dropped before and after)."""
    import streamlit as st

    from pmap_core.practice import worksheets

    monkeypatch.setattr(worksheets, "WORKSHEETS_DIR", tmp_path)
    st.cache_resource.clear()
    yield tmp_path
    st.cache_resource.clear()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_broken_sheet_is_named_and_the_others_still_work(sheets_folder, lang):
    import shutil

    from pmap_core.practice import worksheets

    shutil.copy(ROOT / "worksheets" / "2_collectives.toml", sheets_folder)
    (sheets_folder / "1_bad.toml").write_text('title = { en = "t" \n', encoding="utf-8")
    braces = (ROOT / "worksheets" / "2_collectives.toml").read_text(encoding="utf-8").replace(
        "one row per device: {answer}", "one row {per device}: {answer}")
    (sheets_folder / "3_braces.toml").write_text(braces, encoding="utf-8")
    assert worksheets.load_sheets(sheets_folder).broken  # what the page is given

    at = open_lab("worksheet", lang=lang, sheet="2_collectives", step="all_gather_shape")
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 2, errors
    assert "worksheets/1_bad.toml" in errors[0] and "not valid TOML" in errors[0]
    assert "worksheets/3_braces.toml, step 3 (all_gather_shape), explain" in errors[1] and "{per device}" in errors[1]
    assert at.selectbox(key="worksheet.sheet").options == [SHEETS[1].title[lang]]
    computed = answers("2_collectives")["all_gather_shape"]
    at.text_input(key="worksheet.2_collectives.all_gather_shape.guess").set_value(computed)
    at.button(key="worksheet.check").click().run()
    assert computed in at.success[0].value


def test_no_sheet_that_loads_is_said_plainly(sheets_folder):
    (sheets_folder / "1_bad.toml").write_text("title = [", encoding="utf-8")
    at = open_lab("worksheet")
    assert not at.exception and len(at.error) == 1 and at.info
    assert "No worksheet could be loaded" in at.info[0].value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_step_reads_and_links_the_device_count_it_runs_on(lang):
    """At D = 8 a step of at most 4 devices runs on 4: its question, its link and its code say 4."""
    at = open_lab("worksheet", lang=lang, sheet="2_collectives", step="all_gather_shape")
    assert_clean(at)
    assert ("D = 4" if lang == "en" else "4 台设备") in at.subheader[0].value
    assert TEXTS["uses_devices"][lang].format(used=4, available=8) in [c.value for c in at.caption]
    link = next(e for e in at.get("link_button"))
    assert "devices=4" in link.proto.url and "op=all_gather" in link.proto.url
    at.text_input(key="worksheet.2_collectives.all_gather_shape.guess").set_value("(4, 2)")
    at.button(key="worksheet.check").click().run()
    assert_clean(at)
    assert at.success and any("run_collective(op='all_gather', devices=4, size=2" in c.value for c in at.code)
