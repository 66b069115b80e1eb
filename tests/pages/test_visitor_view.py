"""What a visitor of a deployment sees: a link's values only as literal text, a short message
with an error id instead of a traceback, the experiments table's numbers formatted, and a fallback
store's path as literal text. (The lab's experiment in MLflow's view: tests/core/test_experiment_kind.py.)"""

from __future__ import annotations

import json
import logging
import re

import pytest
import streamlit as st
from hypothesis import given, settings
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

from harness.tracked_runs import store_with_runs
from labs.texts import table as text_table
from labs.ui.visitor import LITERAL_MAX_CHARS, literal
from tests.apptest_support import open_lab

COMMON = text_table("common")

POISON = "x` ![i](http://127.0.0.1:9/p.png) [l](http://127.0.0.1:9/) <img src=x> `"


def code_spans(markdown: str) -> tuple[list[str], str]:
    """(what each code span of one line of CommonMark shows, the text outside them).

    A run of n backticks opens a span that the next run of exactly n backticks closes; one
    space is stripped from each side of content that starts and ends with a space and is not
    only spaces. A run that nothing closes stays as text."""
    spans, outside, at = [], [], 0
    runs = [(m.start(), m.end()) for m in re.finditer("`+", markdown)]
    i = 0
    while i < len(runs):
        start, end = runs[i]
        close = next((j for j in range(i + 1, len(runs)) if runs[j][1] - runs[j][0] == end - start), None)
        if close is None:
            i += 1
            continue
        content = markdown[end:runs[close][0]]
        if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
            content = content[1:-1]
        outside.append(markdown[at:start])
        spans.append(content)
        at, i = runs[close][1], close + 1
    outside.append(markdown[at:])
    return spans, "".join(outside)


def shown(text: str) -> str:
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(hs.text(max_size=LITERAL_MAX_CHARS))
def test_literal_is_one_code_span_showing_every_character(text):
    markdown = literal(text)
    assert "\n" not in markdown and "\r" not in markdown
    assert code_spans(markdown) == ([shown(text) or " "], "")


def test_literal_of_markup_and_of_a_long_value():
    assert code_spans(literal(POISON)) == ([POISON], "")
    assert code_spans(literal("``a`")) == (["``a`"], "")
    assert code_spans(literal("a\nb\x00")) == (["a\\nb\\x00"], "")
    assert code_spans(literal("y" * 1000)) == (["y" * LITERAL_MAX_CHARS + "…"], "")


def test_a_link_value_reaches_markdown_only_as_a_code_span():
    """The warning about a refused link value: the value and the setting's name are its code
    spans, and nothing of the value is left outside them."""
    at = open_lab("collectives", devices=POISON)
    warnings = [w.value for w in at.warning if "devices" in w.value]
    assert warnings, [w.value for w in at.warning]
    for text in warnings:
        spans, outside = code_spans(text)
        assert sorted(spans) == sorted([POISON, "devices"]), text
        assert not set("[]()<>!") & set(outside), text


def test_the_unexpected_error_text_has_an_error_id_and_no_detail():
    for lang in ("en", "zh"):
        text = COMMON["error.unexpected"][lang]
        assert "{error_id}" in text and "{detail}" not in text, lang


@pytest.fixture
def missing_home_text(monkeypatch):
    """A fault outside any `guard`: the home page asks for a text that is not there."""
    monkeypatch.delitem(text_table("home"), "intro")  # the cached table every page reads


def test_an_error_outside_guard_shows_an_error_id_and_logs_the_traceback(missing_home_text, caplog):
    with caplog.at_level(logging.ERROR, logger="pmap_lab"):
        at = open_lab()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "KeyError" in errors[0] and "Traceback" not in errors[0], errors
    error_id = re.search(r"error id ([0-9a-f]{8})", errors[0])
    assert error_id, errors
    logged = [r for r in caplog.records if r.name == "pmap_lab" and error_id[1] in r.getMessage()]
    assert logged and logged[0].exc_info and logged[0].exc_info[0] is KeyError, caplog.text


def test_a_developer_sees_the_details_with_show_error_details_full(missing_home_text):
    before = st.get_option("client.showErrorDetails")
    st.set_option("client.showErrorDetails", "full")
    try:
        at = open_lab()
    finally:
        st.set_option("client.showErrorDetails", before)
    assert "error id" in at.error[0].value
    assert at.exception and "intro" in at.exception[0].value


def test_the_experiments_table_formats_every_float_column(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store_with_runs(tmp_path / "mlflow.db"))
    at = open_lab("experiments")
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0]
    columns = json.loads(table.proto.columns)
    floats = [name for name, dtype in table.value.dtypes.items() if dtype.kind == "f"]
    assert "throughput" in floats and "final_loss" in floats, floats
    unformatted = [name for name in floats if not columns.get(name, {}).get("type_config", {}).get("format")]
    assert not unformatted, f"columns shown as raw floats: {unformatted}"


def show_fell_back(page: str, store: str) -> None:
    """A script: where a run went that the fallback store `store` took, as `page` shows it."""
    from labs.ui.i18n import texts
    from labs.ui.tracking import show_tracking
    from pmap_core.tracking.callback import TrackedTraining

    tracked = TrackedTraining(result=None, run_id="0123abcd", tracking_uri=store, fell_back_to=store, logging_s=0.0)
    show_tracking(texts(page), tracked, dtype="float32")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", ["training", "sharded_dp"])
def test_a_fallback_store_reaches_markdown_only_as_a_code_span(page, lang):
    """Both pages that show where a run went: the fallback store's path is the warning's one code
    span, and nothing of it is left outside (no link, image or HTML)."""
    at = AppTest.from_function(show_fell_back, args=(page, POISON), default_timeout=60)
    at.session_state["lang"] = lang
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (warning,) = at.warning
    spans, outside = code_spans(warning.value)
    assert spans == [POISON], warning.value
    template = (text_table(page).get("tracking.fell_back") or text_table("common")["tracking.fell_back"])[lang]
    assert outside == template.replace("{store}", ""), warning.value
    assert at.code[0].value.startswith("0123abcd\n"), at.code[0].value
