"""What a page says, in both languages, without a browser: each page is drawn once in Chromium
(tests/browser/test_browser.py, in one language, alternating), and these AppTests make the checks whose
answer is the server's, for both languages and every page.

- Every page, in English and 中文, from a link in which every setting it can keep is markup: its own heading
  in that language, no exception, and a warning for each setting it keeps that names it and shows the link's
  value verbatim (the browser checks that no markup of it is drawn and nothing it names is fetched).
- Every lab: its first setting in the link with a widget, changed, is written into the link, and a new
  session opened from a link with that value shows the same setting (the browser checks the location bar).
- The pipeline lab at D = 4, its measurement after a prediction and its two pipelines trained side by side, and
  the 2-D mesh lab on its 2 × 2 shape, in both languages (the browser draws each in one).
"""

from __future__ import annotations

import pytest

from labs.registry import HOME, LABS
from labs.texts import table as text_table
from tests.apptest_support import assert_clean, open_lab, until_done

# A value that closes a code span and goes on as markdown and HTML (tests/browser/test_browser.py draws it).
POISON = "x` ![i](http://127.0.0.1:9/p.png) [l](http://127.0.0.1:9/) <img src=http://127.0.0.1:9/h.png> `"
PAGES = [HOME, *LABS]

# The experiments lab needs runs to show its filters: every test here tracks into a store that has some.
pytestmark = pytest.mark.usefixtures("tracked_runs")


def heading(script: str, lang: str) -> str:
    """The page's own heading: its `heading` text where it has one (home), else its title."""
    table = text_table(script)
    return table.get("heading", table["title"])[lang]


def settings_named_in_texts(script: str) -> set[str]:
    """Every name a setting of the page can keep in the link: a setting is labelled by its `w.<name>` text, in the
    page's table or the common one."""
    keys = {*text_table(script), *text_table("common")}
    return {key[2:] for key in keys if key.startswith("w.") and "." not in key[2:]}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("lab", PAGES, ids=[lab.script for lab in PAGES])
def test_every_page_shows_its_heading_and_refuses_a_markup_link_in_both_languages(lab, lang):
    candidates = settings_named_in_texts(lab.script)
    at = open_lab(lab.script if lab is not HOME else None, lang=lang, **dict.fromkeys(candidates, POISON))
    assert not at.exception, [e.value for e in at.exception]
    assert at.title and at.title[0].value == heading(lab.script, lang), [t.value for t in at.title]
    # The settings the page keeps now hold their defaults; a name it does not use keeps the poison.
    kept = {name for name, value in at.query_params.items() if name != "lang" and value != POISON}
    assert not kept - candidates, f"settings without a `w.<name>` text: {kept - candidates}"
    warnings = [w.value for w in at.warning]
    refused = [name for name in kept if not any(f"`{name}`" in text and POISON in text for text in warnings)]
    assert not refused, f"not refused with the value shown verbatim: {refused}: {warnings}"
    if lab.script == "experiments":
        assert kept, "the experiments lab kept no setting in its link (empty store?)"


def link_widget(at, script: str, name: str):
    """(kind, widget) of the slider, number box, radio or selectbox keyed `<script>.<name>`, or (None, None)."""
    key = f"{script}.{name}"
    for kind, widgets in (("slider", at.slider), ("number", at.number_input), ("radio", at.radio),
                          ("selectbox", at.selectbox)):
        found = [w for w in widgets if w.key == key]
        if found:
            return kind, found[0]
    return None, None


def change(kind: str, widget) -> None:
    """One step, as a reader's arrow key or step button makes it, or another option (url_choice takes its label)."""
    if kind == "slider":
        value = widget.value
        widget.set_value(value + widget.step if value + widget.step <= widget.max else value - widget.step)
    elif kind == "number":
        if widget.max is None or widget.value + widget.step <= widget.max:
            widget.increment()
        else:
            widget.decrement()
    else:
        shown = widget.format_func(widget.value)
        widget.set_value(next(option for option in widget.options if option != shown))


@pytest.mark.parametrize("lab", LABS, ids=[lab.script for lab in LABS])
def test_a_changed_setting_goes_into_the_link_and_the_link_brings_it_back(lab):
    at = open_lab(lab.script)
    assert_clean(at)
    named = [(name, *link_widget(at, lab.script, name)) for name in at.query_params if name != "lang"]
    named = [(name, kind, widget) for name, kind, widget in named if kind and not widget.disabled]
    if not named:
        pytest.skip(f"{lab.script}: no slider, number input, radio or selectbox keeps its value in the link")
    name, kind, widget = named[0]
    before = at.query_params[name]
    change(kind, widget)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    after, in_link = link_widget(at, lab.script, name)[1].value, at.query_params.get(name)
    assert in_link is not None and in_link != before, f"`{name}` {before} -> {in_link} in the link"

    fresh = open_lab(lab.script, **{name: in_link})
    assert not fresh.exception, [e.value for e in fresh.exception]
    assert link_widget(fresh, lab.script, name)[1].value == after
    assert fresh.query_params.get(name) == in_link


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_pipeline_lab_at_d4(lang):
    at = open_lab("pipeline", lang=lang, devices=4)
    assert_clean(at)
    texts = text_table("pipeline")
    assert at.title[0].value == texts["title"][lang]
    bubble = next(m.value for m in at.metric if m.label == texts["metric.bubble"][lang])
    assert bubble == f"{3 / (8 + 3):.4f}"  # (P − 1)/(M + P − 1) at the default P = min(4, D), M = 8
    assert at.get("vega_lite_chart")  # the timeline


def _subheaders(at) -> list[str]:
    return [h.value for h in at.subheader]


def _in_both_languages(at, check) -> None:
    """`check(lang)` on the page as drawn in English, then in 中文 (the session's language switched)."""
    for lang in ("en", "zh"):
        at.session_state["lang"] = lang
        at.run()
        assert_clean(at)
        check(lang)


def test_the_pipeline_labs_measurement_and_its_pipelines_side_by_side_in_both_languages():
    texts = text_table("pipeline")
    at = open_lab("pipeline", devices=2, microbatches=4, rows=4, hidden=16)
    assert_clean(at)
    assert at.button(key="pipeline.measure").disabled  # a prediction first
    at.radio(key="pipeline.guess").set_value("1f1b").run()
    at.button(key="pipeline.measure").click().run()

    def measured(lang: str) -> None:
        assert texts["memory.heading"][lang] in _subheaders(at)
        said = " ".join(m.value for m in at.markdown)
        assert "t_f" in said and "(M + P − 1)(t_f + t_b)" in said  # the fits, from what ran (P = 2)

    _in_both_languages(at, measured)

    at = open_lab("pipeline", devices=4, stages=2, layers=4, microbatches=4, rows=4, hidden=16)
    at.button(key="pipeline.train_data").click().run()

    def trained(lang: str) -> None:
        assert texts["scaling.heading"][lang] in _subheaders(at)

    _in_both_languages(at, trained)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_mesh_lab_on_its_two_by_two_shape(lang):
    at = until_done(open_lab("mesh_2d", lang=lang, devices=4, hidden=16, features=4, batch=32, steps=10))
    assert_clean(at)
    assert at.title[0].value == text_table("mesh_2d")["title"][lang]
    said = " ".join(m.value for m in [*at.markdown, *at.info, *at.caption])
    shape = "On 2 × 2: each device takes 16 rows" if lang == "en" else "在 2 × 2 上：每台设备处理批次中的 16 行"
    assert shape in said, said
    assert any("Contracting dimensions are sharded" in t.value for t in at.text)  # JAX's message, as plain text
